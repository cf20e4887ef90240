"""The red team: every hostile patch of `redteam_attacks.ATTACKS` scores 0, every solution 1.

Each runner's sample project (the ones `test_validate.py` proves; pytest's also holds out a
`unittest.TestCase`, which pytest runs) is built, compiled and prepared once; the gold patch,
the honest solutions and every attack for that runner are then scored with the bundle's own
`tests/test.sh`, each on a fresh copy, as `score_patch` does (the reward read from reward.json).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from redteam_attacks import ATTACKS, HONEST, Attack, Change
from redteam_projects import bun_project, go_project, js_project, rust_project

from projects import Project, build, git
from selfbench.artifacts.compiled import locate_task
from selfbench.bundle.render_scripts import canary_names
from selfbench.environments.local.scoring import score_patches
from selfbench.evaluate.tamper import scan_patch
from selfbench.validate.local import LocalOptions
from test_validate import PY_TEST_MUL, node_project, python_project

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs

_SANDBOX_PYTHON = "/usr/bin/python3"
"""The Python the sample's setup makes its venv with (the first `python3` on the sandbox PATH)."""

_UNITTEST_MUL = (
    "import unittest\n\nfrom calc import mul\n\n\n"
    "class MulTest(unittest.TestCase):\n"
    "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n"
)

RUNNERS = ("pytest", "node", "go", "cargo", "jest", "vitest", "bun")
"""The runners whose sample the red team attacks."""

_FULL_ONLY = frozenset({"jest", "vitest"})
"""Runners left out of the small configuration (`SELFBENCH_REDTEAM=small`, which CI's
`scripts/test.sh` sets): their setup installs from the npm registry and each attack starts node
three times, several minutes in all. Unset or `full` (by hand) runs them."""


def _project(runner: str) -> Project:
    """The runner's sample; pytest's holds out a pytest-style and a unittest-style test file."""
    if runner == "pytest":
        tests = {"tests/test_mul.py": PY_TEST_MUL, "tests/test_mul_unittest.py": _UNITTEST_MUL}
        return python_project("redteam-pytest", tests=tests)
    if runner == "go":
        return go_project("redteam-go")
    if runner == "cargo":
        return rust_project("redteam-cargo")
    if runner in {"jest", "vitest"}:
        return js_project(f"redteam-{runner}", runner)
    if runner == "bun":
        return bun_project("redteam-bun")
    return node_project("redteam-node")


def _python_facts() -> dict[str, str]:
    code = (
        "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}', "
        "sys.implementation.cache_tag)"
    )
    version, tag = subprocess.run(
        [_SANDBOX_PYTHON, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    return {"site": f".venv/lib/{version}/site-packages", "pyc": tag}


def _write(repo: Path, change: Change, facts: dict[str, str]) -> None:
    path = repo / change.path.format(**facts)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if change.link is not None:
        path.symlink_to(change.link)
    elif change.pyc:
        source = path.with_suffix(".src.py")
        source.write_text(change.text, encoding="utf-8")
        subprocess.run([_SANDBOX_PYTHON, "-c", _COMPILE, str(source), str(path)], check=True)
        source.unlink()
    else:
        path.write_text(change.text, encoding="utf-8")
        path.chmod(0o755 if change.executable else 0o644)


_COMPILE = (
    "import py_compile, sys; py_compile.compile(sys.argv[1], sys.argv[2], doraise=True, "
    "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)"
)


def _agent_patch(repo: Path, attack: Attack, facts: dict[str, str]) -> bytes:
    """The attack as the collect step would take it: everything staged, as one binary diff."""
    for change in attack.changes:
        _write(repo, change, facts)
    git(repo, "add", "-A", "--force")
    patch = subprocess.run(
        ["git", "diff", "--cached", "--binary", "--no-renames", "HEAD"],
        cwd=repo,
        check=True,
        capture_output=True,
    ).stdout
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-fdxq")
    return patch


@pytest.mark.parametrize("runner", RUNNERS)
def test_every_attack_scores_0_and_every_solution_1(
    runner: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if runner in _FULL_ONLY and os.environ.get("SELFBENCH_REDTEAM", "full") == "small":
        pytest.skip(f"{runner}: the full red team only (SELFBENCH_REDTEAM=full)")
    if runner in {"go", "cargo", "bun"}:  # the image's toolchain: cached, the host's, or installed
        monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)
    attacks = [attack for attack in ATTACKS if runner in attack.runners]
    honest = [solution for solution in HONEST if runner in solution.runners]
    out = build(_project(runner), tmp_path / "build")
    repo = tmp_path / "build" / "repo"
    facts = _python_facts()
    gold = (out / "harbor-task" / "solution" / "gold.patch").read_bytes()
    patches = [gold, b"", *(_agent_patch(repo, row, facts) for row in [*honest, *attacks])]
    options = LocalOptions(logs=tmp_path / "logs")
    reports = score_patches(locate_task(out), patches, options=options)
    rewards = [None if report.reward is None else report.reward.reward for report in reports]
    ids = ["gold", "nop", *(row.id for row in [*honest, *attacks])]
    expected = [1, 0] + [1] * len(honest) + [int(row.open is not None) for row in attacks]
    assert dict(zip(ids, rewards, strict=True)) == dict(zip(ids, expected, strict=True))
    # the canaries: the baselines and the honest solutions never trip one; the attacks only
    # they tell apart do, and each run planted them
    forged = [None if report.reward is None else report.reward.forged for report in reports]
    expected = [0, 0] + [0] * len(honest) + [int(row.forged) for row in attacks]
    assert dict(zip(ids, forged, strict=True)) == dict(zip(ids, expected, strict=True))
    for report in reports[:2]:
        assert canary_names(Path(report.log).read_text(encoding="utf-8")), report.log
    # the tamper scan: no baseline or honest solution is suspect; every attack the canaries
    # catch, and every open one, is
    held_out = locate_task(out).definition.testPaths
    suspect = [bool(scan_patch(patch, held_out=held_out, gold_patch=gold)) for patch in patches]
    suspected = [False, False] + [False] * len(honest)
    suspected += [row.forged or row.open is not None or found for row, found in
                 zip(attacks, suspect[2 + len(honest):], strict=True)]  # fmt: skip
    assert dict(zip(ids, suspect, strict=True)) == dict(zip(ids, suspected, strict=True))
