"""Path rules for repository paths named by definitions and patches. Pure."""

from __future__ import annotations

import posixpath

__all__ = [
    "escapes_repository",
    "escaping_task_paths",
    "join_repository_path",
    "unsafe_patch_path",
]

_ROOT = "/repo"


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
    """Whether a patch path is absolute, has a `..` component, or names `.git` at any depth.

    The same rule `git apply` enforces; checking it first turns git's refusal into our message.
    """
    if not path or path.startswith("/") or "\0" in path:
        return True
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return not parts or any(part == ".." or part.lower() == ".git" for part in parts)


def escaping_task_paths(workdir: str, test_paths: tuple[str, ...]) -> tuple[str, ...]:
    """The task paths that leave the repository: `workdir`, then each `workdir/testPath`."""
    escaping = [workdir] if escapes_repository(workdir) else []
    for path in test_paths:
        joined = path if path.startswith("/") else join_repository_path(workdir, path)
        if path.startswith("/") or escapes_repository(joined):
            escaping.append(joined)
    return tuple(dict.fromkeys(escaping))
