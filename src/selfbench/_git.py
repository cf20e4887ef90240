"""The one place that runs git. Arguments are lists, never shell text."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from selfbench._gzip import compress_stream
from selfbench.errors import SelfbenchError

__all__ = ["GitError", "archive_tar", "git"]

# A fixed identity and clock, and no user or system configuration, so the same inputs always give
# the same commits and nothing in ~/.gitconfig changes what a command prints.
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "selfbench",
    "GIT_AUTHOR_EMAIL": "selfbench@localhost",
    "GIT_COMMITTER_NAME": "selfbench",
    "GIT_COMMITTER_EMAIL": "selfbench@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


class GitError(SelfbenchError):
    """A git command failed."""


def git(
    repo: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> bytes:
    """Run `git -C repo args...` and return its standard output; `env` adds variables.

    Raises:
        GitError: git exited non-zero; the message carries its last line of stderr.
    """
    env = {**os.environ, **_ENV, **(env or {})}
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        last = detail[-1] if detail else f"exit code {result.returncode}"
        raise GitError(f"git {args[0]} failed: {last}")
    return result.stdout


def archive_tar(repo: Path, commit: str, target: Path) -> None:
    """Write `git archive --format=tar` of a commit to `target`, gzipped on several cores.

    Raises:
        GitError: git archive failed.
    """
    with (
        target.open("wb") as out,
        subprocess.Popen(
            ["git", "-C", str(repo), "archive", "--format=tar", commit],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **_ENV},
        ) as process,
    ):
        assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
        compress_stream(process.stdout, out)
        error = process.stderr.read() if process.stderr else b""
        if process.wait() != 0:
            lines = error.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git archive failed: {lines[-1] if lines else process.returncode}")
