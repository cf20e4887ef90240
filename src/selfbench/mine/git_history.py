"""A repository's first-parent history, read once as a stream: commits with their numstat.

One `git log --first-parent --diff-merges=first-parent -M -z --numstat` of the range, parsed as
it arrives, so memory holds one commit at a time and the walk costs little more than git's own
diffing. The record format (`-z` puts a NUL after each message and after every numstat path)::

    record   := RS sha US parents US committed US author US email US message NUL LF? numstat*
    numstat  := added TAB deleted TAB path NUL                  (a file)
              | added TAB deleted TAB NUL old NUL new NUL       (a rename)
    added    := digits | "-"                                   ("-" marks a binary file)

With `-M`, `--numstat` counts the `+` and `-` lines of the very hunks `git diff` would print, so
a file's changed lines equal what `selfbench.patches.parse_patch` counts on that diff; a binary
file counts zero, as the audit counts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from selfbench._git import GitError, git, git_stream
from selfbench.mine.errors import MineError

__all__ = [
    "Commit",
    "FileStat",
    "RepositoryInfo",
    "diff_stats",
    "parse_numstat",
    "parse_record",
    "read_history",
    "read_repository",
]

_RS, _US = b"\x1e", b"\x1f"
_FORMAT = "--format=%x1e%H%x1f%P%x1f%ct%x1f%an%x1f%ae%x1f%B"
_CHUNK = 1 << 20
_COUNT_RE = re.compile(rb"-|[0-9]{1,18}")
_TIME_RE = re.compile(rb"[0-9]{1,18}")


@dataclass(frozen=True, slots=True)
class FileStat:
    """One file a commit changed: its path (and old path for a rename) and changed lines."""

    path: str
    old_path: str | None
    changed_lines: int
    binary: bool


@dataclass(frozen=True, slots=True)
class Commit:
    """One first-parent commit and what it changed against its first parent."""

    sha: str
    parents: tuple[str, ...]
    committed: int
    author_name: str
    author_email: str
    message: str
    files: tuple[FileStat, ...]

    @property
    def subject(self) -> str:
        """The message's first line."""
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        """The message after its first line, trimmed."""
        parts = self.message.split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""


@dataclass(frozen=True, slots=True)
class RepositoryInfo:
    """What mining needs to know about a repository before walking it."""

    path: Path
    head: str
    shallow: bool
    origin: str | None
    worktrees: tuple[str, ...]


def _decode(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def parse_numstat(data: bytes) -> tuple[FileStat, ...]:
    """The files of a `--numstat -z` block (see the module's grammar).

    Raises:
        MineError: the block does not follow the grammar.
    """
    tokens = data.lstrip(b"\n").split(b"\0")
    files = []
    index = 0
    while index < len(tokens):
        token = tokens[index].lstrip(b"\n")
        index += 1
        if not token:
            continue
        fields = token.split(b"\t", 2)
        if len(fields) != 3:
            raise MineError(f"unexpected git log output: {_decode(token)[:80]!r}")
        added, deleted, path = fields
        old: str | None = None
        if not path:
            if index + 1 >= len(tokens):
                raise MineError("unexpected git log output: a rename without its paths")
            old, path = _decode(tokens[index]), tokens[index + 1]
            index += 2
        if not all(_COUNT_RE.fullmatch(count) for count in (added, deleted)):
            raise MineError(f"unexpected git log output: {_decode(token)[:80]!r}")
        binary = added == b"-" or deleted == b"-"
        changed = 0 if binary else int(added) + int(deleted)
        files.append(FileStat(_decode(path), old, changed, binary))
    return tuple(files)


def parse_record(record: bytes) -> Commit:
    """One commit record (without its leading RS).

    Raises:
        MineError: the record does not follow the grammar.
    """
    head, _, numstat = record.partition(b"\0")
    fields = head.split(_US, 5)
    if len(fields) != 6:
        raise MineError(f"unexpected git log output: {_decode(head)[:80]!r}")
    sha, parents, committed, name, email, message = (_decode(field) for field in fields)
    if not _TIME_RE.fullmatch(fields[2]):
        raise MineError(f"unexpected git log output: {_decode(head)[:80]!r}")
    return Commit(
        sha=sha,
        parents=tuple(parents.split()),
        committed=int(committed),
        author_name=name,
        author_email=email,
        message=message.replace("\r\n", "\n"),
        files=parse_numstat(numstat),
    )


def _log_args(rev: str, since: str | None, max_commits: int | None) -> list[str]:
    args = ["log", "--first-parent", "--diff-merges=first-parent", "-M", "-z", "--numstat"]
    args.append(_FORMAT)
    if since is not None:
        args.append(f"--since={since}")
    if max_commits is not None:
        args.append(f"--max-count={max_commits}")
    return [*args, rev, "--"]


def read_history(
    repo: Path,
    *,
    rev: str,
    since: str | None = None,
    max_commits: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Commit]:
    """Walk the first-parent history of `rev`, newest first, one commit at a time.

    Raises:
        MineError: git failed or printed something unexpected.
    """
    count = 0
    try:
        with git_stream(repo, *_log_args(rev, since, max_commits)) as stream:
            buffer = b""
            while chunk := stream.read(_CHUNK):
                records = (buffer + chunk).split(_RS)
                buffer = records.pop()
                for record in records:
                    if record:
                        count += 1
                        yield parse_record(record)
                if progress is not None:
                    progress(count)
            if buffer:
                yield parse_record(buffer)
    except GitError as exc:
        raise MineError(str(exc)) from None


def diff_stats(repo: Path, base: str, commit: str) -> tuple[FileStat, ...]:
    """The numstat of `git diff base commit` (for a change made of several commits).

    Raises:
        MineError: git failed.
    """
    try:
        output = git(repo, "diff", "-M", "-z", "--numstat", base, commit, "--")
    except GitError as exc:
        raise MineError(str(exc)) from None
    return parse_numstat(output)


def _git_text(repo: Path, *args: str) -> str | None:
    try:
        return git(repo, *args).decode("utf-8", "surrogateescape").strip()
    except GitError:
        return None


def read_repository(repo: Path, rev: str) -> RepositoryInfo:
    """Check the repository and the revision, and read its origin, worktrees and shallowness.

    Raises:
        MineError: not a git repository, or the revision names no commit.
    """
    if not repo.is_dir() or _git_text(repo, "rev-parse", "--git-dir") is None:
        raise MineError(f"not a git repository: {repo}")
    head = _git_text(
        repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
    )
    if not head:
        raise MineError(f"unknown revision: {rev}")
    shallow = _git_text(repo, "rev-parse", "--is-shallow-repository") == "true"
    origin = _git_text(repo, "config", "--get", "remote.origin.url") or None
    listing = _git_text(repo, "worktree", "list", "--porcelain") or ""
    worktrees = tuple(
        line.removeprefix("worktree ")
        for line in listing.splitlines()
        if line.startswith("worktree ")
    )
    return RepositoryInfo(repo, head, shallow, origin, worktrees)
