"""Deterministic, streaming tar.gz packing of a directory tree.

Same tree in, same bytes out: entries sorted, owners and times fixed, gzip header without a
name or time, regular files only (a hard-linked file is stored as a file in its own right, so
the archive never holds a link member for `verify` to refuse).
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
from pathlib import Path

from selfbench._fs import atomic_file, open_file
from selfbench.errors import PackError

__all__ = ["pack_tree"]

_CHUNK = 1 << 20


def _entries(root: Path) -> list[tuple[str, Path]]:
    """Every directory and file under root as (posix relative path, path), sorted."""
    found: list[tuple[str, Path]] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(directory)
        for name in [*dirnames, *filenames]:
            path = base / name
            found.append((path.relative_to(root).as_posix(), path))
    return sorted(found)


def _info(name: str, path: Path) -> tarfile.TarInfo:
    status = path.lstat()
    info = tarfile.TarInfo(name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    if stat.S_ISDIR(status.st_mode):
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    elif stat.S_ISREG(status.st_mode):
        info.type = tarfile.REGTYPE
        info.size = status.st_size
        info.mode = 0o755 if status.st_mode & 0o111 else 0o644
    else:
        raise PackError(f"cannot pack {name}: not a regular file or directory")
    return info


def pack_tree(root: Path, archive: Path, *, prefix: str, compresslevel: int = 6) -> None:
    """Pack `root` as `prefix/...` into a gzip tar at `archive`, written atomically.

    Raises:
        PackError: the tree holds a symlink, device or other special file.
        OSError: reading or writing failed.
    """
    archive.parent.mkdir(parents=True, exist_ok=True)
    with (
        atomic_file(archive) as raw,
        gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0
        ) as zipped,
        tarfile.open(fileobj=zipped, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.addfile(_info(prefix, root))
        for name, path in _entries(root):
            info = _info(f"{prefix}/{name}", path)
            if info.isreg():
                with open_file(path, error=PackError) as content:
                    tar.addfile(info, content)
            else:
                tar.addfile(info)
