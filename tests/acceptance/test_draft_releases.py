"""Acceptance: `selfbench draft` on real published code nobody here wrote, then `validate`.

For each case two consecutive releases of a published package are fetched when the suite runs
(never committed): release A is committed as the base, release B lands on it as a squashed pull
request (`(#1)`), and the repository gets a GitHub remote so the candidate carries a URL. Then
the real pipeline runs with no hand-written selector or command: `mine` finds the candidate,
`draft` splits it, infers the environment, runs the tests in the sandbox and derives the
selectors, and the draft must be accepted by `validate` without edits.

Cases: pytest style (more-itertools), unittest style (tenacity's `unittest.TestCase` suite) from
PyPI sdists; `node --test` (@fastify/error) from npm. `SELFBENCH_ACCEPTANCE=all` runs every
case, `small` (what CI runs) the one marked fast. Needs root, bubblewrap and the registries.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from selfbench.cli import main

WANTED = os.environ.get("SELFBENCH_ACCEPTANCE", "")


@dataclass(frozen=True)
class Release:
    """Two consecutive releases of one published package."""

    registry: str  # "pypi" or "npm"
    package: str
    before: str
    after: str


RELEASES = {
    "pytest": Release("pypi", "more-itertools", "10.6.0", "10.7.0"),
    "unittest": Release("pypi", "tenacity", "8.3.0", "8.4.0"),
    "node-test": Release("npm", "@fastify/error", "4.1.0", "4.2.0"),
}
SMALL = ("unittest",)
CASES = [name for name in RELEASES if WANTED == "all" or name in SMALL]

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.skipif(not WANTED, reason="set SELFBENCH_ACCEPTANCE=small|all to run"),
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("bwrap") is None,
        reason="the local environment needs root and bubblewrap",
    ),
]

_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Release",
    "GIT_AUTHOR_EMAIL": "release@example.com",
    "GIT_COMMITTER_NAME": "Release",
    "GIT_COMMITTER_EMAIL": "release@example.com",
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
}
_GENERATED = ("PKG-INFO", "setup.cfg.orig")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=_GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


def _fetch(scratch: Path, release: Release, version: str) -> Path:
    """The unpacked source of one release, fetched from its registry now."""
    download = scratch / f"download-{version}"
    download.mkdir()
    if release.registry == "pypi":
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "--dest", str(download), f"{release.package}=={version}"],
            check=True, capture_output=True,
        )  # fmt: skip
    else:
        subprocess.run(
            ["npm", "pack", "--silent", f"{release.package}@{version}"],
            cwd=download, check=True, capture_output=True,
        )  # fmt: skip
    [archive] = [*download.glob("*.tar.gz"), *download.glob("*.tgz")]
    unpacked = scratch / f"unpacked-{version}"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    [root] = unpacked.iterdir()
    for name in _GENERATED:
        (root / name).unlink(missing_ok=True)
    for info in root.glob("*.egg-info"):
        shutil.rmtree(info)
    return root


def _replace_tree(repo: Path, source: Path) -> None:
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    shutil.copytree(source, repo, dirs_exist_ok=True)


def _history(scratch: Path, release: Release) -> Path:
    """A repository: release A, then release B squashed on it as pull request #1."""
    repo = scratch / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "--initial-branch=main")
    _git(repo, "remote", "add", "origin", "https://github.com/example/released.git")
    (repo / ".gitignore").write_text("node_modules/\n.venv/\n__pycache__/\n", encoding="utf-8")
    for version, message in (
        (release.before, f"Release {release.before}"),
        (release.after, f"Release {release.after} (#1)\n\nBring the library to {release.after}."),
    ):
        _replace_tree(repo, _fetch(scratch, release, version))
        (repo / ".gitignore").write_text("node_modules/\n.venv/\n__pycache__/\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
    return repo


def _json_main(argv: list[str], capture: Path) -> tuple[int, object]:
    with capture.open("w") as handle, contextlib.redirect_stdout(handle):
        code = main(argv)
    return code, json.loads(capture.read_text())


@pytest.mark.parametrize("case", CASES)
def test_a_real_release_is_drafted_and_validates_without_edits(case: str, tmp_path: Path) -> None:
    repo = _history(tmp_path, RELEASES[case])
    candidates = tmp_path / "candidates.jsonl"
    assert main(["mine", str(repo), "--no-sessions", "--out", str(candidates)]) == 0
    [line] = candidates.read_text().splitlines()
    assert json.loads(line)["id"] == "pr-1"
    out, logs = tmp_path / "tasks", tmp_path / "logs"
    argv = ["draft", "pr-1", "--repo", str(repo), "--out", str(out), "--candidates"]
    code, results = _json_main(
        [*argv, str(candidates), "--json", "--logs", str(logs)], tmp_path / "d"
    )
    assert isinstance(results, list)
    assert (code, results[0]["reason"]) == (0, None)
    definition = json.loads((out / "pr-1" / "definition.json").read_text())
    assert definition["failToPass"]
    argv = ["validate", str(out / "pr-1"), "--repo", str(repo), "--json"]
    code, reports = _json_main([*argv, "--logs", str(tmp_path / "vlogs")], tmp_path / "v")
    assert isinstance(reports, list)
    assert (code, reports[0]["reason"]) == (0, None)
