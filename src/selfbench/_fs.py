"""Filesystem primitives the rest of the package builds its atomic writes on."""

from __future__ import annotations

import ctypes
import errno
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["exchange", "rename_no_replace", "write_atomic"]

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _renameat2() -> Any:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return getattr(libc, "renameat2", None)


_RENAMEAT2 = _renameat2()


def rename_no_replace(source: Path, target: Path) -> None:
    """Rename `source` to `target`, failing with FileExistsError if `target` exists at all.

    `os.rename` silently replaces an empty directory; Linux's renameat2(RENAME_NOREPLACE)
    refuses atomically. Where that call is missing or unsupported, fall back to a check then
    rename, which still refuses a non-empty target atomically.

    Raises:
        FileExistsError: `target` exists.
        OSError: the rename failed otherwise.
    """
    if _RENAMEAT2 is not None:
        result = _RENAMEAT2(
            _AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE
        )
        if result == 0:
            return
        code = ctypes.get_errno()
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
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from None
        raise


def write_atomic(path: Path, content: bytes, *, mode: int = 0o644) -> None:
    """Write a file by writing a temp file beside it and renaming it over the target."""
    # A unique temp name: two writers of one path (threads share a pid) must not share it.
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        temp.chmod(mode)
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically (renameat2 RENAME_EXCHANGE); False where unsupported.

    Raises:
        OSError: the swap failed for a reason other than missing support.
    """
    if _RENAMEAT2 is None:
        return False
    result = _RENAMEAT2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(first))
