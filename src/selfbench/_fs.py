"""Filesystem primitives: the one atomic publish, its leftovers, and reads that name their file.

Every task, draft, bundle and export file selfbench reads (`definition.json`, the patches,
`draft.json`, `quality.json`, an export archive) is opened by `open_file`, or read by
`read_bytes` on top of it: never through a symbolic link at its name, and only a regular file.
A link an author, an agent or a copied tree leaves where a task file belongs is refused with a
one-line error naming it, so no one can make selfbench (which may run as root) read a host file
it points to into a task or an export.

What a sandboxed phase leaves in its workspace (a reward, a status, a log) is read by the host
with `read_beneath` only: no link is followed, at any depth, and only a regular file is read, so
a phase cannot make the host read one of its own files (nor block it on a pipe).

Everything selfbench writes beside an output is published the same way: built in a staging
entry in the output's own directory, then renamed over it. A staging entry is named
`.selfbench-stage-<pid>-<unix time>-<random>-<output name>`, so one left behind by a killed run
is recognisable, and is never taken for output: it is hidden, and no reader lists it. The next
publish into that directory removes every such entry whose process is gone, or which is older
than `STALE_AFTER_SECONDS` (its pid has been reused).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from contextlib import contextmanager
from functools import cache
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from selfbench.errors import SelfbenchError, os_reason, translating

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "STAGING_PREFIX",
    "STALE_AFTER_SECONDS",
    "atomic_directory",
    "atomic_file",
    "exchange",
    "link_refused",
    "open_beneath",
    "open_file",
    "read_beneath",
    "read_bytes",
    "read_given",
    "remove_leftovers",
    "rename_no_replace",
    "staging_directory",
    "staging_file",
    "staging_name",
    "write_atomic",
]

STAGING_PREFIX = ".selfbench-stage-"
STALE_AFTER_SECONDS = 6 * 60 * 60
_STAGING_RE = re.compile(re.escape(STAGING_PREFIX) + r"(?P<pid>[0-9]+)-(?P<time>[0-9]+)-[0-9a-f]+-")

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


# ctypes, shutil and hashlib are imported where they are used: `check` and `audit` only read
# files, and loading them (and libc through ctypes) cost every start-up milliseconds.
@cache
def _renameat2() -> Any:
    """libc's renameat2, or None where it is missing: looked up on the first rename."""
    import ctypes  # noqa: PLC0415 - see above

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return getattr(libc, "renameat2", None)


def _errno() -> int:
    import ctypes  # noqa: PLC0415 - see `_renameat2`

    return ctypes.get_errno()


def _remove_tree(path: Path) -> None:
    import shutil  # noqa: PLC0415 - see `_renameat2`

    shutil.rmtree(path, ignore_errors=True)


def rename_no_replace(source: Path, target: Path) -> None:
    """Rename `source` to `target`, failing with FileExistsError if `target` exists at all.

    `os.rename` silently replaces an empty directory; Linux's renameat2(RENAME_NOREPLACE)
    refuses atomically. Where that call is missing or unsupported, fall back to a check then
    rename, which still refuses a non-empty target atomically.

    Raises:
        FileExistsError: `target` exists.
        OSError: the rename failed otherwise.
    """
    renameat2 = _renameat2()
    if renameat2 is not None:
        result = renameat2(
            _AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE
        )
        if result == 0:
            return
        code = _errno()
        if code == errno.EEXIST:
            raise FileExistsError(code, os.strerror(code), str(target))
        if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), str(source))
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    try:
        source.rename(target)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from exc
        raise


_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def link_refused(path: Path) -> str:
    """The one message for a symbolic link found where a file to read belongs."""
    return f"{path}: a symbolic link; not read"


def open_file(path: Path, *, error: type[SelfbenchError]) -> BinaryIO:
    """The regular file `path`, opened for reading without following a link at its name.

    A symbolic link is refused (`<path>: a symbolic link; not read`), and so is a device, a
    pipe or a directory (`<path>: not a regular file; not read`), without waiting on it.
    Otherwise an unopenable file is `error("cannot read <path>: <reason>")`.

    Raises:
        SelfbenchError: the `error` class, when the file cannot be opened or is refused.
    """
    try:
        descriptor = os.open(path, _OPEN_FILE)
    except OSError as exc:
        if exc.errno == errno.ELOOP and path.is_symlink():
            raise error(link_refused(path)) from exc
        raise error(f"cannot read {path}: {os_reason(exc)}") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise error(f"{path}: not a regular file; not read")
    return os.fdopen(descriptor, "rb")


def read_bytes(path: Path, *, error: type[SelfbenchError], limit: int | None = None) -> bytes:
    """A regular file's bytes, opened as `open_file` opens it: never through a link.

    With a `limit`, a larger file is refused after reading no more than `limit + 1` bytes.

    Raises:
        SelfbenchError: the `error` class, when the file cannot be read or is refused.
    """
    with open_file(path, error=error) as handle, translating(error, f"read {path}"):
        data = handle.read() if limit is None else handle.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise error(f"{path}: larger than {limit} bytes; not read")
    return data


def read_given(path: Path, *, error: type[SelfbenchError]) -> bytes:
    """A file the user named on the command line (`--config`, `--prs`, an input file), read as
    named: through a link (a configuration a dotfiles manager links in place) and from a pipe
    (`/dev/stdin`, `<(gh pr list …)`), which the user chose. Never a file a task, a draft, a
    bundle or an export holds, nor a path an agent gives (`read_bytes`).

    Raises:
        SelfbenchError: the `error` class, when the file cannot be read.
    """
    with translating(error, f"read {path}"):
        return path.read_bytes()


def open_beneath(root: Path, relative: str, *, error: type[SelfbenchError]) -> BinaryIO | None:
    """The regular file `root/relative`, opened for reading without following any link.

    `root` is the host's own directory (its path is trusted); below it, each directory and the
    file itself are opened with `O_NOFOLLOW` one by one, the file without blocking, and only a
    regular file is opened. None when there is no such file.

    Raises:
        SelfbenchError: the `error` class, when a link or a non-regular file stands on the way,
            or the file cannot be opened.
        ValueError: `relative` is not a plain relative path.
    """
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise ValueError(f"not a relative path: {relative!r}")
    path = root.joinpath(*parts)
    refused = f"{path}: not a regular file (a link, or below one); not read"
    descriptor = -1
    try:
        directory = os.open(root, _OPEN_DIRECTORY)
        try:
            for part in parts[:-1]:
                below = os.open(part, _OPEN_DIRECTORY, dir_fd=directory)
                os.close(directory)
                directory = below
            descriptor = os.open(parts[-1], _OPEN_FILE, dir_fd=directory)
        finally:
            os.close(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise error(refused) from exc
        raise error(f"cannot read {path}: {os_reason(exc)}") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise error(refused)
    return os.fdopen(descriptor, "rb")


def read_beneath(
    root: Path, relative: str, *, error: type[SelfbenchError], limit: int | None = None
) -> bytes | None:
    """The bytes of the regular file `root/relative` (at most `limit`), reached as
    `open_beneath` reaches it: no link followed. None when there is no such file.

    Raises:
        SelfbenchError: the `error` class, when a link or a non-regular file stands on the way,
            or the file cannot be read.
        ValueError: `relative` is not a plain relative path.
    """
    handle = open_beneath(root, relative, error=error)
    if handle is None:
        return None
    with handle, translating(error, f"read {root.joinpath(relative)}"):
        return handle.read() if limit is None else handle.read(limit)


def staging_name(target: Path) -> str:
    """A fresh staging name for `target`: the prefix, this pid, the time, a random part."""
    # The random part keeps two writers of one target apart: threads share a pid.
    return f"{STAGING_PREFIX}{os.getpid()}-{int(time.time())}-{os.urandom(4).hex()}-{target.name}"


def _is_leftover(name: str, now: float) -> bool:
    """Whether a staging entry was left by a process that is gone, or is too old to be live."""
    match = _STAGING_RE.match(name)
    if match is None:
        return False
    pid, started = int(match["pid"]), int(match["time"])
    if now - started > STALE_AFTER_SECONDS:
        return True
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # alive, another user's; or no pid at all
        return False
    return False


def remove_leftovers(directory: Path) -> tuple[str, ...]:
    """Remove the staging entries in `directory` that a killed run left; their names, sorted."""
    now = time.time()
    try:
        names = sorted(
            entry.name for entry in os.scandir(directory) if _is_leftover(entry.name, now)
        )
    except OSError:  # no directory yet: nothing is left in it
        return ()
    for name in names:
        path = directory / name
        if path.is_dir() and not path.is_symlink():
            _remove_tree(path)
        else:
            path.unlink(missing_ok=True)
    return tuple(names)


@contextmanager
def staging_directory(target: Path) -> Iterator[Path]:
    """A new staging directory beside `target`, removed on exit whatever is left in it.

    Creates `target`'s parent, and first removes the leftovers of killed runs from it.

    Raises:
        OSError: the directory cannot be created.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target.parent)
    staging = target.parent / staging_name(target)
    staging.mkdir(mode=0o700)
    try:
        yield staging
    finally:
        if staging.is_dir() and not staging.is_symlink():
            _remove_tree(staging)


@contextmanager
def atomic_directory(target: Path, *, replace: bool = False) -> Iterator[Path]:
    """Build a directory in staging beside `target`; publish it there only if the block ends.

    Without `replace`, an existing `target` is never touched (FileExistsError). With it, the
    old tree is swapped out atomically where the kernel can: a reader sees one tree or the other.

    Raises:
        FileExistsError: `target` exists and `replace` is false.
        OSError: staging or renaming failed.
    """
    with staging_directory(target) as staging:
        yield staging
        staging.chmod(0o755)
        if not replace or not os.path.lexists(target):
            rename_no_replace(staging, target)
        elif not exchange(staging, target):  # the old tree, now at `staging`, goes with it
            retired = target.parent / staging_name(target)
            target.rename(retired)
            staging.rename(target)
            _remove_tree(retired)


@contextmanager
def staging_file(target: Path) -> Iterator[Path]:
    """The path of a new, empty staging file beside `target`, removed on exit.

    First removes the leftovers of killed runs from `target`'s directory.

    Raises:
        OSError: the file cannot be created.
    """
    remove_leftovers(target.parent)
    temp = target.parent / staging_name(target)
    temp.touch(mode=0o600, exist_ok=False)
    try:
        yield temp
    finally:
        temp.unlink(missing_ok=True)


@contextmanager
def atomic_file(target: Path, *, mode: int = 0o644) -> Iterator[IO[bytes]]:
    """A staging file beside `target`, synced and renamed over it only if the block ends.

    Raises:
        OSError: the file cannot be created, written or renamed.
    """
    with staging_file(target) as temp:
        with temp.open("wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        temp.chmod(mode)
        temp.replace(target)


def write_atomic(path: Path, content: bytes, *, mode: int = 0o644) -> None:
    """Write a file by writing a staging file beside it and renaming it over the target.

    Raises:
        OSError: the file cannot be written.
    """
    with atomic_file(path, mode=mode) as handle:
        handle.write(content)


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically (renameat2 RENAME_EXCHANGE); False where unsupported.

    Raises:
        OSError: the swap failed for a reason other than missing support.
    """
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = _errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(first))


_DIGEST_CHUNK = 1 << 20


def file_sha256(path: Path) -> tuple[str, int]:
    """The SHA-256 (hex) of a file's bytes, and their count, read in chunks.

    Raises:
        OSError: the file cannot be read.
    """
    import hashlib  # noqa: PLC0415 - see `_renameat2`

    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_DIGEST_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size
