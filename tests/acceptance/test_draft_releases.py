"""Acceptance: `selfbench draft` on real published code nobody here wrote, then `validate`.

For each case two consecutive releases of a published package are fetched when the suite runs
(never committed): release A is committed as the base, release B lands on it as a squashed pull
request (`(#1)`), and the repository gets a GitHub remote so the candidate carries a URL. Then
the real pipeline runs with no hand-written selector or command: `mine` finds the candidate,
`draft` splits it, infers the environment, runs the tests in the sandbox and derives the
selectors, and the draft must be accepted by `validate` without edits.

Cases: pytest style (more-itertools 10.6.0 to 10.7.0, a hard task), unittest style (tenacity
8.4.1 to 8.4.2, a new `unittest.TestCase` file) from PyPI sdists; `node --test` (@fastify/error
4.2.1 to 4.3.0, a medium task whose pass-to-pass files are the unchanged ones beside the new
test) and vitest (@braintree/sanitize-url 7.0.4 to 7.1.0, TypeScript, an easy task: `npm ci` and
`vitest run` inferred, fail-to-pass the rewritten test file) from npm. npm tarballs carry no
lockfile, so that case commits one with each release, generated with `npm install
--package-lock-only --before <7.1.0's release date>`. No jest case: the jest pair of
test_real_releases.py (card-validator 10.0.2 to 10.0.3) changes 2 implementation lines, below
the easy gate, so `mine` rightly excludes it. `SELFBENCH_ACCEPTANCE=all` runs every case,
`small` (what CI runs) the unittest one (about two minutes). Needs root, bubblewrap and the
registries (the npm cases also the host's `npm`, to fetch and lock).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from published import (
    git,
    lock_npm,
    npm_tarball,
    replace_tree,
    unpack,
)

from selfbench.artifacts.quality_record import QualityRecord, read_quality
from selfbench.cli import main

WANTED = os.environ.get("SELFBENCH_ACCEPTANCE", "")
LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Release:
    """Two consecutive releases of one published package."""

    registry: str  # "pypi" or "npm"
    package: str
    before: str
    after: str
    config: str = ""
    """A `--config` selfbench.toml, when inference cannot tell (none: everything inferred)."""
    locked_before: str = ""
    """npm: commit a lockfile resolved as of this moment with each release (tarballs have none)."""


RELEASES = {
    "pytest": Release("pypi", "more-itertools", "10.6.0", "10.7.0"),
    "unittest": Release("pypi", "tenacity", "8.4.1", "8.4.2"),
    # Its `npm test` also runs tstyche, which inference does not know: the config names the rest.
    "node-test": Release(
        "npm",
        "@fastify/error",
        "4.2.1",
        "4.3.0",
        'toolchains = ["node"]\nsetupCommand = "npm install"\n'
        'testCommand = "node --test {tests}"\n',
    ),
    # Everything inferred: `npm ci` from the generated lockfile, vitest from `scripts.test`;
    # the lockfiles take the dependency versions of 7.1.0's release.
    "npm-vitest": Release(
        "npm", "@braintree/sanitize-url", "7.0.4", "7.1.0", locked_before="2024-12-11T17:12:33Z"
    ),
}
SMALL = ("unittest",)
CASES = [name for name in RELEASES if WANTED == "all" or name in SMALL]

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.skipif(not WANTED, reason="set SELFBENCH_ACCEPTANCE=small|all to run"),
    pytest.mark.sandbox,
]

_GENERATED = ("PKG-INFO", "setup.cfg.orig")


def _fetch(scratch: Path, release: Release, version: str) -> Path:
    """The unpacked source of one release, fetched from its registry now."""
    if release.registry == "npm":
        return npm_tarball(scratch, release.package, version)
    download = scratch / f"download-{version}"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "--dest", str(download), f"{release.package}=={version}"],
        check=True, capture_output=True,
    )  # fmt: skip
    [archive] = download.glob("*.tar.gz")
    root = unpack(archive, scratch / f"unpacked-{version}")
    for name in _GENERATED:
        (root / name).unlink(missing_ok=True)
    for info in root.glob("*.egg-info"):
        shutil.rmtree(info)
    return root


def _history(scratch: Path, release: Release) -> Path:
    """A repository: release A, then release B squashed on it as pull request #1."""
    repo = scratch / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "remote", "add", "origin", "https://github.com/example/released.git")
    lock = b""
    for version, message in (
        (release.before, f"Release {release.before}"),
        (
            release.after,
            (
                f"Changes from {release.before} to {release.after} (#1)\n\n"
                f"Bring the library to {release.after}."
            ),
        ),
    ):
        replace_tree(repo, _fetch(scratch, release, version))
        (repo / ".gitignore").write_text("node_modules/\n.venv/\n__pycache__/\n")
        if release.locked_before:
            if lock:
                (repo / "package-lock.json").write_bytes(lock)
            lock_npm(repo, release.locked_before)
            lock = (repo / "package-lock.json").read_bytes()
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message)
    return repo


def _json_main(argv: list[str], capture: Path) -> tuple[int, object]:
    with capture.open("w") as handle, contextlib.redirect_stdout(handle):
        code = main(argv)
    return code, json.loads(capture.read_text())


def _quality_line(record: QualityRecord) -> str:
    """The record's figures on one line, as README reports them (`--log-cli-level=INFO`)."""
    mutation, ablation = record.mutation, record.ablation
    score = "-" if mutation is None else f"{mutation.killed}/{mutation.generated}"
    unneeded = ", ".join(ablation.unneeded + ablation.moved) if ablation else ""
    basis = record.passToPass.basis if record.passToPass else "-"
    return (
        f"{record.verdict}; mutants killed {score}; unneeded {unneeded or 'none'}; "
        f"pass-to-pass {basis}; reasons: {'; '.join(record.reasons) or 'none'}"
    )


@pytest.mark.parametrize("case", CASES)
def test_a_real_release_is_drafted_and_validates_without_edits(case: str, tmp_path: Path) -> None:
    repo = _history(tmp_path, RELEASES[case])
    candidates = tmp_path / "candidates.jsonl"
    assert main(["mine", str(repo), "--no-sessions", "--out", str(candidates)]) == 0
    [line] = candidates.read_text().splitlines()
    assert json.loads(line)["id"] == "pr-1"
    out, logs = tmp_path / "tasks", tmp_path / "logs"
    argv = ["draft", "pr-1", "--repo", str(repo), "--out", str(out)]
    argv += ["--candidates", str(candidates)]
    if RELEASES[case].config:
        (tmp_path / "selfbench.toml").write_text(RELEASES[case].config, encoding="utf-8")
        argv += ["--config", str(tmp_path / "selfbench.toml")]
    code, results = _json_main([*argv, "--json", "--logs", str(logs)], tmp_path / "d")
    assert isinstance(results, list)
    assert (code, results[0]["reason"]) == (0, None)
    definition = json.loads((out / "pr-1" / "definition.json").read_text())
    assert definition["failToPass"]
    # the draft judged the task's quality by running it: mutants of the gold's changed lines
    # ran against fail-to-pass, every gold part was reverted once, and the basis is recorded
    quality = read_quality(out / "pr-1" / "quality.json")
    assert quality.taskId == "pr-1"
    assert quality.mutation is not None
    assert quality.mutation.generated > 0
    assert quality.ablation is not None
    assert quality.ablation.parts
    assert quality.passToPass is not None
    LOG.info("%s: %s", case, _quality_line(quality))
    argv = ["validate", str(out / "pr-1"), "--repo", str(repo), "--json"]
    code, reports = _json_main([*argv, "--logs", str(tmp_path / "vlogs")], tmp_path / "v")
    assert isinstance(reports, list)
    assert (code, reports[0]["reason"]) == (0, None)
