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

import contextlib
import fcntl
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import pairwise
from pathlib import Path
from queue import Queue
from typing import IO, Generic, NamedTuple, Self, TypeVar

from selfbench._git import GitStream, blob_texts, git, git_stream, safe_command
from selfbench.errors import GitError, MineError
from selfbench.patches import parse_patch

__all__ = [
    "Commit",
    "FileStat",
    "RepositoryInfo",
    "Revision",
    "Section",
    "WhitespaceCheck",
    "diff_stats",
    "find_revision",
    "parse_check",
    "parse_numstat",
    "parse_record",
    "parse_substantive",
    "read_history",
    "read_repository",
    "read_texts",
    "start_history",
]

_RS = b"\x1e"
_MISSING_RE = re.compile(r"unable to read ([0-9a-f]{40,64})")
"""git's message for an object the repository lacks."""
_BLIND = ("-w", "--ignore-blank-lines")  # what a formatting-only change leaves unchanged
_CHECK_ARGS = (
    "diff-tree", "--stdin", "-r", "--always", *_BLIND, "-M", "-z", "-p", "-U0", "--no-color",
    "--no-ext-diff", "--no-textconv", "--format=%x1e%H",
)  # fmt: skip
"""The patch alone, no numstat: git would diff every file twice (a third more of its time)."""
_RECORD_START_RE = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?\0")
_RECORD_ENDS = frozenset(b"\0\n")
_SECTION_RE = re.compile(rb"^diff --git ", re.MULTILINE)
_CHANGED_MARKS = (b"\n@@ ", b"\nBinary files ", b"\nGIT binary patch")
"""What a section holds when its file changed: a hunk, or a binary file's line."""
_FORMAT = "--format=%x1e%H%x1f%P%x1f%ct%x1f%an%x1f%ae%x1f%B"
_CHUNK = 1 << 18
_LOG_CHUNK = 1 << 15  # the walk follows git closely: what it accepts is checked early
_AHEAD = 16
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux's, named from Python 3.10 on
_PIPE_BYTES = 1 << 20
_MAX_DIGITS = 18
# One numstat entry (see the grammar); counts of at most 18 digits keep int() cheap.
_NUMSTAT_RE = re.compile(
    r"\n?([0-9]{1,18}|-)\t([0-9]{1,18}|-)\t(?:\0([^\0]*)\0([^\0]*)|([^\0]+))\0"
)
# A whole block: entries only, then at most some newlines (matches the longest valid prefix).
_NUMSTAT_BLOCK_RE = re.compile(
    r"(?:\n?(?:[0-9]{1,18}|-)\t(?:[0-9]{1,18}|-)\t(?:\0[^\0]*\0[^\0]*|[^\0]+)\0)*\n*"
)


class FileStat(NamedTuple):
    """One file a commit changed: its path (and old path for a rename), changed lines, and
    of those the added ones."""

    path: str
    old_path: str | None
    changed_lines: int
    binary: bool
    added_lines: int = 0


class Commit(NamedTuple):
    """One first-parent commit and what it changed against its first parent.

    The numstat block is kept as git printed it and parsed by `files` only when asked: most
    commits a walk visits are excluded by their message alone, and never pay for it.
    """

    sha: str
    parents: tuple[str, ...]
    committed: int
    author_name: str
    author_email: str
    subject: str
    body: str
    numstat: bytes

    @property
    def files(self) -> tuple[FileStat, ...]:
        """The files this commit changed (parsed on each call: read it once).

        Raises:
            MineError: the numstat block does not follow the grammar.
        """
        return parse_numstat(self.numstat)


class RepositoryInfo(NamedTuple):
    """What mining needs to know about a repository before walking it (a NamedTuple: the
    dataclass machinery is not loaded before the walk's `git log` starts)."""

    path: Path
    head: str
    shallow: bool
    origin: str | None
    worktrees: tuple[str, ...]


def _decode(value: bytes) -> str:
    return value.decode("utf-8", "surrogateescape")


def _unexpected(text: str) -> MineError:
    return MineError(f"unexpected git log output: {text[:80]!r}")


def _parse_numstat_text(text: str) -> tuple[FileStat, ...]:
    """Two passes in C: the block must be entries only, then their fields, one tuple each."""
    valid = _NUMSTAT_BLOCK_RE.match(text)  # always matches: every part of it is optional
    end = valid.end() if valid is not None else 0
    if end != len(text):
        raise _unexpected(text[end:])
    return tuple(
        FileStat(path or new, old or None, 0, binary=True)
        if added == "-" or deleted == "-"
        else FileStat(
            path or new,
            old or None,
            int(added) + int(deleted),
            binary=False,
            added_lines=int(added),
        )
        for added, deleted, old, new, path in _NUMSTAT_RE.findall(text)
    )


def parse_numstat(data: bytes) -> tuple[FileStat, ...]:
    """The files of a `--numstat -z` block (see the module's grammar).

    Raises:
        MineError: the block does not follow the grammar.
    """
    return _parse_numstat_text(_decode(data))


def parse_record(record: bytes) -> Commit:
    """One commit record (without its leading RS); its numstat is parsed by `Commit.files`.

    Raises:
        MineError: the record's header does not follow the grammar.
    """
    raw_head, _, numstat = record.partition(b"\0")
    head = _decode(raw_head)
    fields = head.split("\x1f", 5)
    if len(fields) != 6:
        raise _unexpected(head)
    sha, parents, committed, name, email, message = fields
    if not (committed.isascii() and committed.isdigit() and len(committed) <= _MAX_DIGITS):
        raise _unexpected(head)
    message = message.replace("\r\n", "\n")
    subject, _, body = message.partition("\n")
    return Commit(
        sha=sha,
        parents=tuple(parents.split()),
        committed=int(committed),
        author_name=name,
        author_email=email,
        subject=subject.strip(),
        body=body.strip(),
        numstat=numstat,
    )


def _log_args(rev: str, since: str | None, max_commits: int | None) -> list[str]:
    args = ["log", "--first-parent", "--diff-merges=first-parent", "-M", "-z", "--numstat"]
    args.append(_FORMAT)
    if since is not None:
        args.append(f"--since={since}")
    if max_commits is not None:
        args.append(f"--max-count={max_commits}")
    return [*args, rev, "--"]


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    """The stream's bytes, read by a thread so git never waits while a chunk is parsed.

    At most `_AHEAD` chunks wait in the queue, so memory stays bounded however far git runs
    ahead; a consumer that stops early drains the queue so the reader can finish.
    """
    queue: Queue[bytes | None] = Queue(maxsize=_AHEAD)
    stop = threading.Event()

    def pump() -> None:
        try:
            while not stop.is_set() and (chunk := stream.read(_LOG_CHUNK)):
                queue.put(chunk)
        except (OSError, ValueError):  # the stream was closed under us: the consumer is gone
            pass
        finally:
            queue.put(None)

    reader = threading.Thread(target=pump, name="git-log-reader", daemon=True)
    reader.start()
    try:
        while (chunk := queue.get()) is not None:
            yield chunk
    finally:
        stop.set()
        while reader.is_alive() or not queue.empty():
            if queue.get() is None:
                break
        reader.join()


def _widen_pipe(stream: IO[bytes]) -> None:
    """Let git write 1 MiB ahead, not 64 KiB: fewer switches between git and the reader."""
    with contextlib.suppress(OSError, ValueError):  # not Linux, not a pipe, above the limit
        fcntl.fcntl(stream.fileno(), _F_SETPIPE_SZ, _PIPE_BYTES)


def start_history(
    repo: Path, *, rev: str, since: str | None = None, max_commits: int | None = None
) -> GitStream:
    """The walk's `git log` started now, for `read_history(started=...)` with the same
    arguments: git walks while the caller prepares (imports, reads its other inputs). The
    caller closes it.
    """
    stream = git_stream(repo, *_log_args(rev, since, max_commits))
    _widen_pipe(stream.stdout)  # before git fills the pipe: it runs ahead while nobody reads
    return stream


def read_history(
    repo: Path,
    *,
    rev: str,
    since: str | None = None,
    max_commits: int | None = None,
    progress: Callable[[int], None] | None = None,
    unreadable: Callable[[Commit, str], None] | None = None,
    started: GitStream | None = None,
) -> Iterator[Commit]:
    """Walk the first-parent history of `rev`, newest first, one commit at a time; from
    `started`'s output when `start_history` started it with these arguments.

    A commit whose change git cannot read (an object missing from a damaged or partial clone)
    goes to `unreadable` with the reason, and the walk goes on from its first parent; without
    `unreadable` it is an error like any other.

    Raises:
        MineError: git failed or printed something unexpected.
    """
    if started is not None and started.args != tuple(_log_args(rev, since, max_commits)):
        started.close()  # another walk's: not this one's output
        started = None
    count, start = 0, rev
    cap = max_commits if max_commits is not None else float("inf")
    while True:
        left = None if max_commits is None else max_commits - count
        told = (lambda n, at=count: progress(at + n)) if progress is not None else None
        try:
            stream, started = started or git_stream(repo, *_log_args(start, since, left)), None
            for commit in _walk(stream, told):
                count += 1
                yield commit
        except _Unreadable as stop:
            if unreadable is None:
                raise MineError(str(stop.cause)) from stop
            whole, culprit = _past_unreadable(repo, start, stop)
            if whole is not None:
                count += 1
                yield whole
            if count >= cap:
                return
            count += 1
            unreadable(culprit, f"git cannot read its change: object {stop.missing} is missing")
            if not culprit.parents or count >= cap:
                return
            start = culprit.parents[0]
        else:
            return


class _Unreadable(Exception):  # noqa: N818 - a stop of the walk, caught in this module
    """git stopped at an object the repository lacks; `last` is its output's last record."""

    def __init__(self, cause: GitError, missing: str, last: bytes) -> None:
        super().__init__(str(cause))
        self.cause, self.missing, self.last = cause, missing, last


def _walk(started: GitStream, progress: Callable[[int], None] | None) -> Iterator[Commit]:
    """One `git log`'s commits; `_Unreadable` when git meets a missing object."""
    count, buffer = 0, b""
    try:
        with started as stream:
            _widen_pipe(stream)
            for chunk in _chunks(stream):
                records = (buffer + chunk).split(_RS)
                buffer = records.pop()
                for record in records:
                    if record:
                        count += 1
                        yield parse_record(record)
                if progress is not None:
                    progress(count)
    except GitError as exc:
        missing = _MISSING_RE.search(str(exc))
        if missing is None:
            raise MineError(str(exc)) from exc
        raise _Unreadable(exc, missing[1], buffer) from exc
    if buffer:  # only once git has ended well: a failed run's last record is cut short
        yield parse_record(buffer)


def _past_unreadable(repo: Path, start: str, stop: _Unreadable) -> tuple[Commit | None, Commit]:
    """The commit git could not read, and the one before it when that one is whole but was not
    yet yielded. git may die before printing the header of the commit it could not read (its
    rename detection reads blobs first): the last record is that commit's, or the one before."""
    last = parse_record(stop.last) if stop.last else None
    whole = None if last is None else _one_commit(repo, last.sha)
    if whole is None:
        return None, _header(repo, start if last is None else last.sha, stop.cause)
    if not whole.parents:  # git read every commit there is: not the failure it reported
        raise MineError(str(stop.cause))
    return whole, _header(repo, whole.parents[0], stop.cause)


def _one_commit(repo: Path, sha: str) -> Commit | None:
    """The commit's record as the walk reads it, or None when git cannot read its change."""
    try:
        output = git(repo, *_log_args(sha, None, 1))
    except GitError as exc:
        if _MISSING_RE.search(str(exc)) is None:
            raise MineError(str(exc)) from exc
        return None
    return parse_record(output.split(_RS, 1)[-1])


def _header(repo: Path, rev: str, cause: GitError) -> Commit:
    """The commit's header alone (no change read, so no blob), or `cause` as the error."""
    try:
        output = git(repo, "log", "-1", "--no-patch", "-z", _FORMAT, rev, "--")
    except GitError:
        raise MineError(str(cause)) from None
    return parse_record(output.split(_RS, 1)[-1])


def diff_stats(repo: Path, base: str, commit: str) -> tuple[FileStat, ...]:
    """The numstat of `git diff base commit` (for a change made of several commits).

    Raises:
        MineError: git failed.
    """
    try:
        output = git(repo, "diff", "-M", "-z", "--numstat", base, commit, "--")
    except GitError as exc:
        raise MineError(str(exc)) from exc
    return parse_numstat(output)


def present_paths(repo: Path, commit: str, paths: Iterable[str]) -> frozenset[str]:
    """Those of `paths` that `commit`'s tree holds.

    Raises:
        MineError: git failed.
    """
    try:
        output = git(repo, "ls-tree", "-z", "--name-only", commit, "--", *paths)
    except GitError as exc:
        raise MineError(str(exc)) from exc
    return frozenset(output.decode("utf-8", errors="surrogateescape").split("\0")) - {""}


_K = TypeVar("_K")
_R = TypeVar("_R")


def read_texts(repo: Path, names: Mapping[_K, str], *, limit: int) -> dict[_K, str | None]:
    """The text of each blob named `<commit>:<path>`, None where there is none or it is larger
    than `limit` bytes (one `git cat-file --batch`).

    Raises:
        MineError: git failed.
    """
    try:
        return blob_texts(repo, names, limit=limit)
    except GitError as exc:
        raise MineError(str(exc)) from None


class Section(NamedTuple):
    """One file's part of a change's patch: the path it names (the new one, else the old) and
    its bytes, from its `diff --git` line on."""

    path: str
    data: bytes


def parse_substantive(output: bytes) -> dict[str, frozenset[str]]:
    """Per commit of `git diff-tree -p --format=%x1e%H` output (`-z` ending each commit's id
    with a NUL), the paths that changed: a file with a hunk, or a binary file.

    Raises:
        MineError: the output does not start with a commit.
    """
    return {sha: _changed(sections) for sha, sections in parse_check(output).items()}


def _changed(sections: tuple[Section, ...]) -> frozenset[str]:
    return frozenset(
        section.path for section in sections if any(mark in section.data for mark in _CHANGED_MARKS)
    )


def parse_check(output: bytes) -> dict[str, tuple[Section, ...]]:
    """Per commit of `git diff-tree -p --format=%x1e%H` output (see `parse_substantive`), its
    patch's file sections (each one copy of its bytes, nothing else kept).

    Raises:
        MineError: the output does not start with a commit.
    """
    records = _Records()
    return dict([*records.feed(output), *records.end()])


class _Records:
    """`git diff-tree -p --format=%x1e%H -z` output read as it arrives: each commit's record, cut
    into file sections, once it is whole (the next one has started, or the output ended).

    A record starts at an RS that begins the output or follows the NUL or LF ending the record
    before, then a commit's id and a NUL (another RS, in a changed line of a patch, is no
    start). Pure: the bytes are fed in, the records come out.
    """

    _LONGEST_START = 1 + 64 + 1
    """An RS, the longest commit id (SHA-256's) and its NUL: what tells a start."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        """The bytes of the record not yet whole (from its RS on), or of the head before one."""
        self._open = False
        self._at = 0  # where the next start may be

    def feed(self, chunk: bytes) -> list[tuple[str, tuple[Section, ...]]]:
        """The records `chunk` completes.

        Raises:
            MineError: the output does not start with a commit.
        """
        self._buffer += chunk
        return self._take(final=False)

    def end(self) -> list[tuple[str, tuple[Section, ...]]]:
        """The last record, once the output has ended.

        Raises:
            MineError: the output does not start with a commit.
        """
        found = self._take(final=True)
        if self._open:
            found.append(_record(bytes(self._buffer)))
        elif self._buffer:  # diff-tree echoes a line it cannot read as commits
            raise _unexpected_check(bytes(self._buffer))
        self._buffer, self._open = bytearray(), False
        return found

    def _take(self, *, final: bool) -> list[tuple[str, tuple[Section, ...]]]:
        buffer, found = self._buffer, []
        at = buffer.find(_RS, self._at)
        while at >= 0:
            if not final and len(buffer) - at < self._LONGEST_START:
                break  # too few bytes yet to tell whether it starts a record
            follows = at == 0 or buffer[at - 1] in _RECORD_ENDS
            if follows and _RECORD_START_RE.match(buffer, at + 1):
                if self._open:
                    found.append(_record(bytes(buffer[:at])))
                elif at:
                    raise _unexpected_check(bytes(buffer[:at]))
                del buffer[:at]
                self._open, at = True, 0
            at = buffer.find(_RS, at + 1)
        self._at = len(buffer) if at < 0 else at
        return found


def _unexpected_check(head: bytes) -> MineError:
    return MineError(f"unexpected git diff-tree output: {_decode(head)[:80]!r}")


def _record(data: bytes) -> tuple[str, tuple[Section, ...]]:
    """One record's commit and its file sections (`data` from its RS on)."""
    nul = data.find(b"\0")
    nul = len(data) if nul < 0 else nul
    marks = [m.start() for m in _SECTION_RE.finditer(data, nul)]
    sections = tuple(_section(data[mark:stop]) for mark, stop in pairwise([*marks, len(data)]))
    return _decode(data[1:nul]), sections


def _section(data: bytes) -> Section:
    """A section and its path: read from its first line when that names one path twice
    (`a/x b/x`, unquoted), else by the patch parser (a rename, a quoted name)."""
    line = data[len(b"diff --git ") : data.find(b"\n")]
    middle = len(line) // 2
    left, right = line[:middle], line[middle + 1 :]
    simple = len(line) % 2 == 1 and line[middle : middle + 1] == b" " and b'"' not in line
    simple = simple and left[:2] == b"a/" and right[:2] == b"b/" and left[2:] == right[2:]
    if simple and b"\nrename to " not in data and b"\ncopy to " not in data:
        return Section(_decode(left[2:]), data)
    parsed = parse_patch(data, lenient=True).files
    return Section(parsed[0].path if parsed else _decode(line), data)


class WhitespaceCheck(Generic[_R]):
    """Which paths of each change differ by more than whitespace and blank lines, and how
    (the patch without context), told to `judge` as git prints them.

    One `git diff-tree --stdin -w --ignore-blank-lines` runs beside the walk: each change the
    walk accepts is written to it as `<newest commit> <base>` (the commit diffed against that
    base as its one parent, so a rebase group is one line too) and a thread reads its output,
    so git's second look overlaps the walk instead of following it. The same thread hands each
    change's record to `judge` once it is whole — its commit, the paths that changed beyond
    whitespace, its file sections — so what is judged from the patch (the code chores, which
    parse files) is done while the walk goes on too: the walk's own thread mostly waits for
    `git log`. One process for them all: each new one would map the pack and fill its delta
    cache again (a third more CPU in batches of 256).
    """

    def __init__(
        self, repo: Path, judge: Callable[[str, frozenset[str], tuple[Section, ...]], _R]
    ) -> None:
        self._repo = repo
        self._judge: Callable[[str, frozenset[str], tuple[Section, ...]], _R] | None = judge
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._errors: IO[bytes] | None = None
        self._commits: list[str] = []
        self._broken = False
        self._stopped = False
        self._printed: set[str] = set()
        self._judged: dict[str, _R] = {}
        self._unexpected: MineError | None = None
        self._failure: Exception | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def add(self, commit: str, base: str) -> None:
        """Check the change from `base` to `commit` (git starts with the first one)."""
        process = self._process or self._start()
        self._commits.append(commit)
        if self._broken or process.stdin is None:
            return
        try:
            process.stdin.write(f"{commit} {base}\n".encode())
        except OSError:  # git is gone; `result` says why
            self._broken = True

    def _start(self) -> subprocess.Popen[bytes]:
        self._errors = errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by `close`
        args, env = safe_command(self._repo, _CHECK_ARGS)
        # Unbuffered both ways: each change reaches git as the walk accepts it, and each record
        # the reader as git prints it (buffered, the first hundred changes waited for the
        # hundred-and-first: a history of 1,400 commits was checked only once walked).
        self._process = process = subprocess.Popen(
            args, bufsize=0, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env
        )
        assert process.stdin is not None  # noqa: S101 - guaranteed by stdin=PIPE
        assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
        _widen_pipe(process.stdin)  # the walk writes ahead instead of waiting on git
        _widen_pipe(process.stdout)  # git writes ahead while a change is judged
        self._reader = threading.Thread(
            target=self._drain, args=(process.stdout,), name="git-diff-tree-reader", daemon=True
        )
        self._reader.start()
        return process

    def _drain(self, stream: IO[bytes]) -> None:
        """Read git's output to its end, judging each record as it is whole (the reader thread).

        git never waits on this thread for long: whatever a record's judging raises is kept for
        `result`, and the output is read on without judging.
        """
        records: _Records | None = _Records()
        with contextlib.suppress(OSError, ValueError):  # closed under us: the walk failed
            while chunk := stream.read(_CHUNK):
                records = self._read(records, chunk)
        self._read(records, None)

    def _read(self, records: _Records | None, chunk: bytes | None) -> _Records | None:
        """Judge the records `chunk` completes (the last one when None); the records to read on,
        or None once the output is unexpected or the check was closed."""
        if records is None or self._stopped:
            return None
        try:
            found = records.feed(chunk) if chunk is not None else records.end()
        except MineError as exc:
            self._unexpected = exc
            return None
        judge = self._judge
        for commit, sections in found:
            self._printed.add(commit)
            if judge is None or self._failure is not None or self._stopped:
                continue
            try:
                self._judged[commit] = judge(commit, _changed(sections), sections)
            except Exception as exc:  # noqa: BLE001 - raised by `result`, in the walk's thread
                self._failure = exc
        return records

    def result(self) -> dict[str, _R]:
        """What `judge` said of every change, once git has checked them all.

        Raises:
            MineError: git failed or printed something unexpected.
            Exception: what `judge` raised (the first).
        """
        process = self._process
        if process is None:
            return {}
        with contextlib.suppress(OSError):  # git is gone: its exit code says why
            if process.stdin is not None:
                process.stdin.close()
        if self._reader is not None:
            self._reader.join()
        code = process.wait()
        if code != 0:
            raise MineError(f"git diff-tree failed: {self._last_error() or f'exit code {code}'}")
        if self._unexpected is not None:
            raise self._unexpected
        missing = next((commit for commit in self._commits if commit not in self._printed), None)
        if missing is not None:  # diff-tree skips a commit it cannot read, silently
            raise MineError(f"git diff-tree printed nothing for {missing}")
        if self._failure is not None:
            raise self._failure
        return self._judged

    def _last_error(self) -> str:
        if self._errors is None:
            return ""
        self._errors.seek(0)
        lines = self._errors.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    def close(self) -> None:
        """Stop git if it still runs (the walk failed) and release its pipes."""
        process, self._process = self._process, None
        if process is not None:
            self._stopped = True  # what is left of the output is read, not judged
            if process.poll() is None:
                process.kill()
            with contextlib.suppress(OSError):
                if process.stdin is not None:
                    process.stdin.close()
            if self._reader is not None:
                self._reader.join()
            if process.stdout is not None:
                process.stdout.close()
            process.wait()
        if self._errors is not None:
            self._errors.close()
        # `judge` is most often a method of what holds this check: a cycle that kept all the
        # walk read alive until the cycle collector's next full pass (at exit, 50 ms for
        # 20,000 commits); without it, the walk is freed when its holder is
        self._judge = None


def _git_text(repo: Path, *args: str) -> str | None:
    try:
        return git(repo, *args).decode("utf-8", "surrogateescape").strip()
    except GitError:
        return None


class Revision(NamedTuple):
    """A repository checked, the commit a revision names in it, and whether it is shallow: what
    the walk's `git log` needs to start (`find_revision`)."""

    path: Path
    head: str
    shallow: bool


def find_revision(repo: Path, rev: str) -> Revision:
    """Check the repository and the revision with one git run (a second only to tell which of
    the two is wrong).

    Raises:
        MineError: not a git repository, or the revision names no commit.
    """
    if not repo.is_dir():
        raise MineError(f"not a git repository: {repo}")
    found = _git_text(
        repo,
        "rev-parse",
        "--is-shallow-repository",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
    )
    shallow, _, head = (found or "").partition("\n")
    if not head.strip():
        if _git_text(repo, "rev-parse", "--git-dir") is None:
            raise MineError(f"not a git repository: {repo}")
        raise MineError(f"unknown revision: {rev}")
    return Revision(repo, head.strip(), shallow.strip() == "true")


def read_repository(repo: Path, rev: str, *, found: Revision | None = None) -> RepositoryInfo:
    """Check the repository and the revision (unless `find_revision` has: `found`), and read
    its origin, worktrees and shallowness.

    Raises:
        MineError: not a git repository, or the revision names no commit.
    """
    found = found if found is not None else find_revision(repo, rev)
    origin = _git_text(repo, "config", "--get", "remote.origin.url") or None
    listing = _git_text(repo, "worktree", "list", "--porcelain") or ""
    worktrees = tuple(
        line.removeprefix("worktree ")
        for line in listing.splitlines()
        if line.startswith("worktree ")
    )
    return RepositoryInfo(repo, found.head, found.shallow, origin, worktrees)
