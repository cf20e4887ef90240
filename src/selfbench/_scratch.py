"""Short-lived scratch directories that leave nothing behind, even when selfbench is killed.

Every one is made inside one directory of the system's temporary directory that belongs to
the user (`selfbench-<uid>`, mode 0711: others may pass through it to an entry they are let
into, as they could in the temporary directory itself, but cannot list it). Each entry is
locked (`flock` on the directory itself) for as long as the process that made it lives: a
`kill -9` releases the lock with the process. The first scratch directory a process asks for
sweeps that home first: an entry whose lock can be taken (its owner is gone) is removed. A home
that is not such a directory of ours (another user made it first, or it is a link) is left
alone, and entries go straight into the temporary directory as before.

An entry may also stand for a directory mounted elsewhere (`note_mount`: a workspace's own disk):
it holds the directory's path in `mounted`, and a sweep that finds its owner gone unmounts that
directory and removes it too, so a killed run leaves no mount behind either.

Logs a run keeps on purpose (`kept_directory`: `draft`, `validate` and `eval` without a log
directory of the caller's) live in a second home beside it, `selfbench-<uid>-kept` (made and
checked the same way; apart, so that a selfbench sweeping the first home never takes them), in
one entry per process, `run-…`, locked the same way for as long as the process lives (one lock,
however many directories it keeps). A sweep removes a kept directory only when its process is
gone and it is older than `KEPT_DAYS` days, so a message that points to it stays true that long.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar, cast

__all__ = [
    "KEPT_DAYS",
    "MountNote",
    "drop_kept",
    "drop_note",
    "kept_directory",
    "kept_home",
    "note_mount",
    "process_scoped",
    "scratch_directory",
    "scratch_home",
    "sweep_once",
    "sweep_scratch",
]

_swept = False
_kept_entry: tuple[Path, int] | None = None
"""This process's entry of the kept home and the descriptor holding its lock, once made."""
_kept_lock = threading.Lock()

KEPT_DAYS = 7
"""How long a kept directory outlives its run: a sweep removes one older than this (by its
modification time) once the run that made it is gone."""

_MOUNTED = "mounted"
"""The file of an entry that names a directory mounted for its owner (`note_mount`)."""
_MOUNT_PREFIX = "selfbench-"
"""Only a directory of this name is unmounted by a sweep (a workspace selfbench made)."""

MountNote = tuple[Path, int]
"""A mount's entry in the scratch home and the descriptor that holds its lock."""


def scratch_home(*, make: bool = True) -> Path | None:
    """The user's private home for scratch directories, made if missing; None when the path
    is taken by something that is not a directory of this user that others cannot list or
    write (or, without `make`, when it does not exist)."""
    return _private_home(f"selfbench-{os.geteuid()}", make=make)


def kept_home(*, make: bool = True) -> Path | None:
    """The user's private home for kept directories (`kept_directory`), as `scratch_home`."""
    return _private_home(f"selfbench-{os.geteuid()}-kept", make=make)


def _private_home(name: str, *, make: bool = True) -> Path | None:
    home = Path(tempfile.gettempdir()) / name
    if make:
        with contextlib.suppress(FileExistsError):
            home.mkdir(mode=0o711)
    try:
        info = home.lstat()
    except FileNotFoundError:
        return None
    private = stat.S_ISDIR(info.st_mode) and info.st_mode & 0o066 == 0
    return home if private and info.st_uid == os.geteuid() else None


def _lock(entry: Path, *, wait: bool) -> int | None:
    """A descriptor of `entry` holding its lock; None when another process holds it (or the
    entry is gone, or is not a directory)."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def sweep_scratch() -> int:
    """Remove every entry of the scratch home whose owner is gone (its lock is free), and every
    kept directory whose owner is gone that is older than `KEPT_DAYS` days; return how many.
    Each is removed while the sweep holds its lock."""
    removed = _sweep_kept()
    home = scratch_home(make=False)  # none made just to be swept
    if home is None:
        return removed
    for entry in sorted(home.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            entry.unlink(missing_ok=True)
            removed += 1
            continue
        fd = _lock(entry, wait=False)
        if fd is not None:
            _release_mount(entry)
            shutil.rmtree(entry, ignore_errors=True)
            os.close(fd)
            removed += 1
    return removed


def _sweep_kept() -> int:
    """Remove the kept directories older than `KEPT_DAYS` days whose process is gone (its entry's
    lock is free); return how many. An entry goes when nothing is left in it, and the home too."""
    kept = kept_home(make=False)
    if kept is None:
        return 0
    oldest = time.time() - KEPT_DAYS * 86400
    removed = 0
    for entry in sorted(kept.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            entry.unlink(missing_ok=True)
            continue
        fd = _lock(entry, wait=False)
        if fd is None:  # its process is alive
            continue
        for directory in sorted(entry.iterdir()):
            with contextlib.suppress(FileNotFoundError):
                if directory.lstat().st_mtime < oldest:
                    shutil.rmtree(directory, ignore_errors=True)
                    removed += 1
        with contextlib.suppress(OSError):  # not empty: kept directories younger than the limit
            entry.rmdir()
        os.close(fd)
    with contextlib.suppress(OSError):  # not empty
        kept.rmdir()
    return removed


def _release_mount(entry: Path) -> None:
    """Unmount and remove the directory an entry's owner mounted, when it names one."""
    note = entry / _MOUNTED
    try:
        if note.is_symlink() or not note.is_file() or note.stat().st_size > 4096:
            return
        target = Path(note.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return
    if not (target.is_absolute() and target.name.startswith(_MOUNT_PREFIX)):
        return
    if target.is_mount():
        from selfbench.environments.process import run_captured  # noqa: PLC0415 - a rare path

        with contextlib.suppress(OSError):
            run_captured(["umount", "--lazy", str(target)])
    if not target.is_mount():
        shutil.rmtree(target, ignore_errors=True)


def sweep_once() -> None:
    """`sweep_scratch`, the first time a process asks."""
    global _swept  # noqa: PLW0603 - one sweep per process
    if not _swept:
        _swept = True
        sweep_scratch()


def note_mount(target: Path) -> MountNote | None:
    """Record that this process mounted `target` (a directory named `selfbench-…`): a sweep after
    this process is gone unmounts and removes it. None when there is no scratch home of ours."""
    sweep_once()
    path, fd = _new_entry("selfbench-mount-")
    if fd < 0:
        shutil.rmtree(path, ignore_errors=True)
        return None
    (path / _MOUNTED).write_text(f"{target}\n", encoding="utf-8")
    return path, fd


def drop_note(note: MountNote | None) -> None:
    """Forget a mount's note (it was unmounted, or is kept on purpose)."""
    if note is None:
        return
    path, fd = note
    shutil.rmtree(path, ignore_errors=True)
    os.close(fd)
    with contextlib.suppress(OSError):  # not empty: another entry is in use
        path.parent.rmdir()


def _new_entry(prefix: str) -> tuple[Path, int]:
    """A new entry of the home, locked (its descriptor), or a plain temporary directory (-1)
    when there is no home of ours. Made, then locked, then checked to be still there: a sweep
    may have taken it in between, as the lock of an owner that is gone."""
    while True:
        home = scratch_home()
        if home is None:
            return Path(tempfile.mkdtemp(prefix=prefix)), -1
        try:
            path = Path(tempfile.mkdtemp(prefix=prefix, dir=home))
        except FileNotFoundError:  # another selfbench removed the empty home just now
            continue
        fd = _lock(path, wait=True)
        if fd is not None and os.fstat(fd).st_nlink > 0:
            return path, fd
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A new empty private directory named `prefix...`, removed when the block ends (and the
    home with it when nothing else is in it). While it exists it is locked to this process, so
    a later selfbench removes it if this one is killed.

    The first call in a process sweeps the home of entries left by processes that are gone.
    """
    sweep_once()
    path, fd = _new_entry(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        if fd >= 0:
            os.close(fd)
            with contextlib.suppress(OSError):  # not empty: another entry is in use
                path.parent.rmdir()


_PROCESS_OBJECTS: dict[str, object] = {}
_PROCESS_LOCK = threading.Lock()
_PROCESS_STACK = contextlib.ExitStack()

_T = TypeVar("_T")


def process_scoped(prefix: str, make: Callable[[Path], _T]) -> _T:
    """This process's one `make(directory)` over its one scratch directory named `prefix...`
    (`scratch_directory`): made on the first call with that prefix, from any thread, and the
    directory removed when the process ends."""
    with _PROCESS_LOCK:
        if prefix not in _PROCESS_OBJECTS:
            if not _PROCESS_OBJECTS:
                atexit.register(_PROCESS_STACK.close)
            directory = _PROCESS_STACK.enter_context(scratch_directory(prefix))
            _PROCESS_OBJECTS[prefix] = make(directory)
        return cast("_T", _PROCESS_OBJECTS[prefix])


def process_scoped_count() -> int:
    """How many `process_scoped` directories this process holds now."""
    with _PROCESS_LOCK:
        return len(_PROCESS_OBJECTS)


def release_process_scoped() -> int:
    """Remove every `process_scoped` directory now (a command that says so before it ends,
    instead of leaving it to the exit); how many there were. A later call makes them anew."""
    with _PROCESS_LOCK:
        count = len(_PROCESS_OBJECTS)
        _PROCESS_OBJECTS.clear()
        _PROCESS_STACK.close()
    return count


def kept_directory(prefix: str) -> Path:
    """A new empty private directory named `prefix...` for logs kept after this process ends,
    in this process's entry of the kept home (`kept_home`), which is locked while the process
    lives; a later selfbench's sweep removes it once it is older than `KEPT_DAYS` days. A plain
    directory of the temporary directory when there is no home of ours.

    Like `scratch_directory`, the first call in a process sweeps both homes first.
    """
    sweep_once()
    while True:
        entry = _process_entry()
        if entry is None:
            return Path(tempfile.mkdtemp(prefix=prefix))
        with contextlib.suppress(FileNotFoundError):  # dropped by another thread just now
            return Path(tempfile.mkdtemp(prefix=prefix, dir=entry))


def _process_entry() -> Path | None:
    """This process's entry of the kept home, made and locked on first use; None when there is
    no home of ours."""
    global _kept_entry  # noqa: PLW0603 - one entry per process
    with _kept_lock:
        if _kept_entry is not None:
            return _kept_entry[0]
        while True:
            home = kept_home()
            if home is None:
                return None
            try:
                path = Path(tempfile.mkdtemp(prefix="run-", dir=home))
            except FileNotFoundError:  # another selfbench removed the empty home just now
                continue
            fd = _lock(path, wait=True)
            if fd is not None and os.fstat(fd).st_nlink > 0:
                _kept_entry = path, fd
                return path
            if fd is not None:
                os.close(fd)


def drop_kept(path: Path) -> None:
    """Remove a kept directory of this process that nothing was written to, with this process's
    entry and the kept home when that leaves them empty; a directory that holds something
    stays, kept."""
    global _kept_entry  # noqa: PLW0603 - one entry per process
    with contextlib.suppress(OSError):  # not empty: it is kept after all
        path.rmdir()
    with _kept_lock:
        if _kept_entry is None or path.parent != _kept_entry[0]:
            return  # a plain temporary directory
        entry, fd = _kept_entry
        try:
            entry.rmdir()
        except OSError:  # not empty: the process's other kept directories
            return
        _kept_entry = None
        os.close(fd)
        with contextlib.suppress(OSError):  # not empty: other processes' entries
            entry.parent.rmdir()
