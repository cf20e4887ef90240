"""Path rules for repository paths named by definitions and patches. Pure."""

from __future__ import annotations

import posixpath
import re

__all__ = [
    "escapes_repository",
    "escaping_task_paths",
    "join_repository_path",
    "unsafe_patch_path",
]

_ROOT = "/repo"
_DOTGIT_RE = re.compile(r"(?:\.git|git~1)[. ]*(?::.*)?", re.IGNORECASE | re.ASCII | re.DOTALL)
_SEPARATORS_RE = re.compile(r"[/\\]")


def escapes_repository(path: str) -> bool:
    """Whether a task path, resolved against a virtual repository root, leaves it.

    An absolute path is an escape; `a/../b` is not, `a/../../b` is.
    """
    if path.startswith("/") or "\0" in path:
        return True
    resolved = posixpath.normpath(posixpath.join(_ROOT, path))
    return resolved != _ROOT and not resolved.startswith(_ROOT + "/")


def join_repository_path(workdir: str, path: str) -> str:
    """`workdir/path` as a normalized repository-relative path (`.` for the root)."""
    return posixpath.normpath(posixpath.join(workdir, path))


def unsafe_patch_path(path: str) -> bool:
    """Whether `git apply` would refuse a patch path (its `verify_path`, with NTFS protection).

    Refused: an absolute path, an empty, `.` or `..` component, and `.git` at any depth in any
    case, with the spellings Windows reads as `.git` (`git~1`, trailing dots or spaces, a `:`
    stream suffix; a backslash separates there too). Checking first turns git's refusal into
    our message.
    """
    if not path or "\0" in path:
        return True
    if any(part in {"", ".", ".."} for part in path.split("/")):
        return True
    return any(_DOTGIT_RE.fullmatch(part) for part in _SEPARATORS_RE.split(path))


def escaping_task_paths(workdir: str, test_paths: tuple[str, ...]) -> tuple[str, ...]:
    """The task paths that leave the repository: `workdir`, then each `workdir/testPath`."""
    escaping = [workdir] if escapes_repository(workdir) else []
    for path in test_paths:
        joined = path if path.startswith("/") else join_repository_path(workdir, path)
        if path.startswith("/") or escapes_repository(joined):
            escaping.append(joined)
    return tuple(dict.fromkeys(escaping))
