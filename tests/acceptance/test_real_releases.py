"""Acceptance: tasks built from real published code nobody here wrote, validated end to end.

Two consecutive releases of a small project that ships its tests in its published archive are
fetched from the package index when the suite runs (never committed) and made into a git
repository: release A is the base commit, release B's source change the gold patch, its test
change the held-out tests. Fail-to-pass is observed, not guessed: B's changed tests are run on A's
source on the host, and those that fail are fail-to-pass; the test files B did not change (and the
changed ones that pass on A) are pass-to-pass, which validation proves pass at the base and with
the gold patch. The task is then compiled and validated locally, with the image's toolchains
provisioned as for any user (`--strict-toolchains`: a part not at the image's version rejects the
task), so `python` is 3.12, `uv` 0.13.8 and `node` 22.14.0 in the sandbox.

Cases, and their time here (authoring, then validation; two cores shared with other work at load
average 10 to 14, the toolchains cached; their first use adds installing them from the registries:
uv and Node with npm and Corepack took 86 s together at load average 16, `benchmarks/validate.py`):

* `python-venv-pip` — more-itertools 10.6.0 → 10.7.0 (PyPI sdists; pure Python, flit-built;
  `tests/test_more.py` and `tests/test_recipes.py` changed): `python -m venv .venv &&
  .venv/bin/python -m pip install -e . pytest`, the most common setup in the wild. 91 s + 144 s.
* `uv` — the same releases with `uv venv --allow-existing` and `uv pip install` (the release
  changes `pyproject.toml`, so the verifier runs setup a second time over the set-up tree, as
  the image does; plain `uv venv` refuses the `.venv` it finds there). 205 s + 193 s.
* `npm-jest` — card-validator 10.0.2 → 10.0.3 (npm tarballs; TypeScript, jest with ts-jest and
  jsdom; the release lowers the postal code's default minimum length and rewrites
  `src/__tests__/postal-code.ts` and `expiration-year.ts`): `npm ci`, tests by `npx jest --ci
  --json`. The published tarballs have no lockfile (npm leaves it out of every tarball), so one
  is generated when the suite runs with `npm install --package-lock-only --before <B's release
  date>` (the dependency versions of that day), for each release; and no `.gitignore`, so the
  base gets `node_modules/` ignored, as the project's repository does. 191 s + 505 s: every
  verifier run starts with a cold jest cache and ts-jest type-checks each test file, and the
  release's `package.json` change makes the verifier run `npm ci` again.

`SELFBENCH_ACCEPTANCE=small` (what CI runs) runs `python-venv-pip` only; the jest case is too
slow for CI's budget. `SELFBENCH_ACCEPTANCE=all` runs every case. Unset, the suite is skipped.
Needs root and bubblewrap, like the local environment; the npm case also the host's `npm` (to
fetch and lock the releases, and to observe fail-to-pass).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from published import (
    NPM_A,
    NPM_B,
    NPM_B_RELEASED,
    NPM_PROJECT,
    git,
    lock_npm,
    npm_tarball,
    replace_tree,
    run,
    unpack,
)

from selfbench.cli import main

WANTED = os.environ.get("SELFBENCH_ACCEPTANCE", "")
PYPI_PROJECT, PYPI_A, PYPI_B = "more-itertools", "10.6.0", "10.7.0"
"""Pure Python, no dependencies, flit-built, tests in the sdist (`tests/test_more.py`)."""
PYTEST = ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}"
JEST = "npx jest --ci --json {tests}"


@dataclass(frozen=True)
class Case:
    project: str
    setup: str
    test_command: str
    toolchains: tuple[str, ...]


CASES = {
    "python-venv-pip": Case(
        PYPI_PROJECT,
        "python -m venv .venv && .venv/bin/python -m pip install -q -e . pytest",
        PYTEST,
        ("python",),
    ),
    "uv": Case(
        PYPI_PROJECT,
        # --allow-existing: the verifier runs setup again over the set-up tree when the gold
        # patch changes a manifest (10.7.0 changes pyproject.toml), as the image does, and
        # `uv venv` refuses an existing .venv without it (or --clear).
        "uv venv -q --allow-existing .venv"
        " && uv pip install -q --python .venv/bin/python -e . pytest",
        PYTEST,
        ("python",),
    ),
    "npm-jest": Case(NPM_PROJECT, "npm ci --no-audit --no-fund", JEST, ("node",)),
}
SMALL = ("python-venv-pip",)

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.skipif(not WANTED, reason="set SELFBENCH_ACCEPTANCE=small|all to run"),
    pytest.mark.sandbox,
]


@pytest.fixture(autouse=True)
def _image_toolchains(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py turns provisioning off for the sample projects; these cases need it."""
    monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)


def _sdist(scratch: Path, version: str) -> Path:
    """The unpacked sdist of one PyPI release, fetched from the package index now."""
    download = scratch / f"download-{version}"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "--dest", str(download), f"{PYPI_PROJECT}=={version}"],
        check=True, capture_output=True,
    )  # fmt: skip
    [archive] = download.glob("*.tar.gz")
    root = unpack(archive, scratch / f"unpacked-{version}")
    (root / "PKG-INFO").unlink(missing_ok=True)  # generated metadata, not source
    return root


def _release_repo(scratch: Path, project: str) -> tuple[Path, str]:
    """A repository with release A as its base commit and release B on top; the base's id."""
    repo = scratch / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    versions = (PYPI_A, PYPI_B) if project == PYPI_PROJECT else (NPM_A, NPM_B)
    lock = b""
    for version in versions:
        if project == PYPI_PROJECT:
            replace_tree(repo, _sdist(scratch, version))
        else:
            replace_tree(repo, npm_tarball(scratch, NPM_PROJECT, version))
            (repo / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
            if lock:
                (repo / "package-lock.json").write_bytes(lock)
            lock_npm(repo, NPM_B_RELEASED)
            lock = (repo / "package-lock.json").read_bytes()
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"{project} {version}")
        if version == versions[0]:
            base = git(repo, "rev-parse", "HEAD").strip()
    return repo, base


def _observe_tree(repo: Path, base: str, test_patch: str, scratch: Path) -> Path:
    """A's source with B's tests, on the host."""
    tree = scratch / "observe"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", base], cwd=repo, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    subprocess.run(["git", "apply"], cwd=tree, input=test_patch.encode(), check=True)
    return tree


def _failing_pytest(tree: Path, changed: list[str]) -> list[str]:
    """The tests of the changed files that fail on A (pytest ids)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", *changed],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    failed = sorted(
        line.split()[1] for line in result.stdout.splitlines() if line.startswith("FAILED ")
    )
    assert failed, result.stdout[-2000:]
    return failed


def _failing_jest(tree: Path, changed: list[str]) -> list[str]:
    """The changed test files with a test that fails on A (jest takes files)."""
    run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], tree)
    result = subprocess.run(
        ["npx", "jest", "--ci", "--json", *changed],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    report = json.loads(result.stdout)
    failed = sorted(
        Path(suite["name"]).relative_to(tree.resolve()).as_posix()
        for suite in report["testResults"]
        if suite["status"] != "passed"
    )
    assert failed, result.stderr[-2000:]
    return failed


@dataclass(frozen=True)
class _Shape:
    test_dir: str
    pattern: str
    failing: Callable[[Path, list[str]], list[str]]


_SHAPES = {
    PYPI_PROJECT: _Shape("tests", "tests/test_*.py", _failing_pytest),
    NPM_PROJECT: _Shape("src/__tests__", "src/__tests__/**/*.ts", _failing_jest),
}


def _author(scratch: Path, case: Case) -> tuple[Path, Path]:
    """The repository (A, then B) and the authored task directory."""
    shape = _SHAPES[case.project]
    repo, base = _release_repo(scratch, case.project)
    test_patch = git(repo, "diff", "--binary", base, "HEAD", "--", shape.test_dir)
    gold_patch = git(repo, "diff", "--binary", base, "HEAD", "--", ".", f":!{shape.test_dir}")
    changed = sorted({line[6:] for line in test_patch.splitlines() if line.startswith("+++ b/")})
    tree = _observe_tree(repo, base, test_patch, scratch)
    fail_to_pass = shape.failing(tree, changed)
    files = sorted(path.relative_to(tree).as_posix() for path in tree.glob(shape.pattern))
    files = [name for name in files if not name.endswith(".d.ts")]
    pass_to_pass = [name for name in files if not any(f.startswith(name) for f in fail_to_pass)]
    version = PYPI_B if case.project == PYPI_PROJECT else NPM_B
    task = scratch / "tasks" / f"{case.project}-{version}"
    task.mkdir(parents=True)
    definition = {
        "schemaVersion": 1, "difficulty": "easy", "taskId": task.name,
        "repo": f"releases/{case.project}", "baseCommit": base, "workdir": ".",
        "setupCommand": case.setup, "testCommand": case.test_command,
        "failToPass": fail_to_pass, "passToPass": pass_to_pass,
        "testPaths": changed, "toolchains": list(case.toolchains),
        "sourcePr": 1, "sourceUrl": f"https://example.com/{case.project}/releases/{version}",
        "prompt": "Bring the library up to its next release's behaviour.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 600, "testsSeconds": 600},
        "resources": {"cpus": 2, "memoryMb": 4096, "storageMb": 10240},
    }  # fmt: skip
    (task / "definition.json").write_text(json.dumps(definition, indent=2), encoding="utf-8")
    (task / "test.patch").write_text(test_patch, encoding="utf-8")
    (task / "gold.patch").write_text(gold_patch, encoding="utf-8")
    return repo, task


_PROXIES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy")


def _network_settings(case: Case, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """This machine's network settings that setup needs, by name, for `--setup-env` (the
    documented way; never in `setupCommand`): its proxy, and the CA bundle a network that
    inspects TLS needs. pip reads the bundle from the system's pip configuration, which the
    sandbox shows; uv and npm do not read it there: uv takes `SSL_CERT_FILE`, npm
    `npm_config_cafile` (the host's npm has it in its own global npmrc, which the image's Node
    does not read)."""
    names = [name for name in _PROXIES if os.environ.get(name)]
    bundle = os.environ.get("SSL_CERT_FILE")
    if bundle:
        names.append("SSL_CERT_FILE")
        if "node" in case.toolchains:
            monkeypatch.setenv("npm_config_cafile", bundle)
            names.append("npm_config_cafile")
    return names


_PARAMS = [
    pytest.param(name, marks=pytest.mark.skipif(WANTED != "all", reason="SELFBENCH_ACCEPTANCE=all"))
    if name not in SMALL
    else name
    for name in CASES
]


@pytest.mark.parametrize("name", _PARAMS)
def test_two_releases_make_a_task_accepted_with_the_image_toolchains(
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = CASES[name]
    if case.project == NPM_PROJECT and shutil.which("npm") is None:
        pytest.skip("the npm case fetches and locks the releases with the host's npm")
    start = time.monotonic()
    repo, task = _author(tmp_path, case)
    authored = time.monotonic() - start
    logs = tmp_path / "logs"
    setup_env = [
        arg for name in _network_settings(case, monkeypatch) for arg in ("--setup-env", name)
    ]
    code = main(
        ["validate", str(task), "--repo", str(repo), "--json", "--logs", str(logs),
         "--strict-toolchains", *setup_env]
    )  # fmt: skip
    [report] = json.loads(capsys.readouterr().out)
    prepare = logs / task.name / "prepare.log"
    assert (code, report["reason"]) == (0, None), (
        prepare.read_text(errors="replace")[-3000:] if prepare.is_file() else report
    )
    counts = report["oracle"]["counts"]
    for phase in ("fail-to-pass", "pass-to-pass"):
        assert counts[phase]["passed"] > 0, counts
        assert counts[phase]["failed"] == 0, counts
    assert report["nop"]["counts"]["fail-to-pass"]["failed"] > 0
    assert [rerun["reward"] for rerun in report["reruns"]] == [1]  # --reruns 3: one beyond
    used = {use["name"]: use for use in report["toolchains"]}
    assert all(use["substitution"] is None for use in used.values()), used
    if "python" in case.toolchains:
        assert used["python3.12"]["found"].startswith("3.12."), used
        assert used["uv"]["found"] == "0.13.8", used
    if "node" in case.toolchains:
        assert used["node"]["found"] == "22.14.0", used
        assert "python3.12" not in used, used
    with capsys.disabled():  # what ran, for the CI log and the README's figures
        sys.stdout.write(
            f"\nacceptance {name}: {task.name} accepted; authored in {authored:.0f} s, "
            f"validated in {time.monotonic() - start - authored:.0f} s; toolchains: "
            + ", ".join(f"{use['name']} {use['found']} ({use['source']})" for use in used.values())
            + "\n"
        )
