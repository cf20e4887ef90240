"""What one ecosystem's inference found, and the shell helpers every ecosystem shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from posixpath import relpath

from selfbench._shell import quote

__all__ = ["Inferred", "in_directory", "shell_words"]


@dataclass(frozen=True, slots=True)
class Inferred:
    """The environment one ecosystem's rules give, with where each value came from."""

    toolchains: tuple[str, ...]
    setup_command: str
    test_command: str
    runner: str
    sources: dict[str, str] = field(default_factory=dict)
    pythons: tuple[str, ...] = ()
    """The image's Pythons (`3.12`) the setup may create its venv with, the chosen one first,
    then the older ones a draft retries under; empty when the interpreter is not the draft's
    choice (uv's projects)."""


def shell_words(words: tuple[str, ...] | list[str]) -> str:
    """Words joined for a POSIX shell, each quoted only when it needs to be."""
    return " ".join(word if _plain(word) else quote(word) for word in words)


def _plain(word: str) -> bool:
    return bool(word) and all(ch.isalnum() or ch in "@%+=:,./_-" for ch in word)


def in_directory(command: str, directory: str, workdir: str) -> str:
    """`command` run in `directory` (repository-relative) from `workdir`, in a subshell."""
    if directory == workdir:
        return command
    return f"(cd {shell_words([relpath(directory, workdir)])} && {command})"
