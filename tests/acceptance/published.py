"""Published releases made into git history for the acceptance suites: one home for fetching,
unpacking, locking and committing them (test_real_releases.py, test_draft_releases.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

NPM_PROJECT, NPM_A, NPM_B = "card-validator", "10.0.2", "10.0.3"
"""TypeScript, jest (ts-jest, jsdom), tests in the tarball (`src/__tests__/`)."""
NPM_B_RELEASED = "2025-08-11T14:32:21Z"
"""When NPM_B was published: the lockfiles take the dependency versions of that moment."""

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Release",
    "GIT_AUTHOR_EMAIL": "release@example.com",
    "GIT_COMMITTER_NAME": "Release",
    "GIT_COMMITTER_EMAIL": "release@example.com",
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


def run(argv: list[str], cwd: Path) -> str:
    return subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True).stdout


def unpack(archive: Path, into: Path) -> Path:
    """The single top directory of a release archive, extracted into `into`."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    [root] = into.iterdir()
    return root


def npm_tarball(scratch: Path, package: str, version: str) -> Path:
    """The unpacked tarball of one npm release, fetched from the registry now."""
    download = scratch / f"download-{version}"
    download.mkdir()
    run(["npm", "pack", "--silent", f"{package}@{version}"], download)
    [archive] = download.glob("*.tgz")
    return unpack(archive, scratch / f"unpacked-{version}")


def replace_tree(repo: Path, source: Path) -> None:
    """The work tree of `repo` becomes a copy of `source` (its .git kept)."""
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    shutil.copytree(source, repo, dirs_exist_ok=True)


def lock_npm(repo: Path, before: str) -> None:
    """The lockfile `npm ci` needs, which no published tarball has: resolved as of `before`
    (an existing lockfile's pins are kept)."""
    run(
        ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund",
         "--before", before],
        repo,
    )  # fmt: skip
