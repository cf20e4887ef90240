"""Write deterministic tar.gz files: fixed owners and times, sorted entries, atomic publish."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path
from typing import IO

from selfbench._fs import open_file
from selfbench.errors import ExportError
from selfbench.export._streams import BLOCK, GzipMembersWriter, Readable, tar_header

__all__ = ["TarWriter", "directory_info", "file_info"]

_GZIP_MAGIC = b"\x1f\x8b"
_STORED = 0


def _info(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def directory_info(name: str) -> tarfile.TarInfo:
    """A directory entry, mode 0755."""
    info = _info(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info


def file_info(name: str, size: int, *, executable: bool = False) -> tarfile.TarInfo:
    """A regular file entry, mode 0755 or 0644."""
    info = _info(name)
    info.type = tarfile.REGTYPE
    info.size = size
    info.mode = 0o755 if executable else 0o644
    return info


class TarWriter:
    """A ustar stream into a parallel gzip writer; already-compressed files are stored."""

    def __init__(self, raw: IO[bytes], *, level: int, workers: int = 2) -> None:
        self._level = level
        self.gzip = GzipMembersWriter(raw, level=level, workers=workers)

    def add_directory(self, name: str) -> None:
        """Write a directory entry."""
        self.gzip.write(tar_header(directory_info(name)))

    def add_bytes(self, name: str, content: bytes, *, executable: bool = False) -> None:
        """Write a file held in memory."""
        self.gzip.write(tar_header(file_info(name, len(content), executable=executable)))
        self.gzip.write(content)
        self._pad(len(content))

    def add_stream(
        self, name: str, source: Readable, size: int, *, executable: bool = False
    ) -> None:
        """Write a file of `size` bytes read from `source` in blocks.

        Raises:
            OSError: the source ends early or cannot be read.
        """
        self.gzip.write(tar_header(file_info(name, size, executable=executable)))
        first = source.read(min(size, BLOCK))
        self.gzip.set_level(_STORED if first.startswith(_GZIP_MAGIC) else self._level)
        remaining = size
        chunk = first
        while remaining:
            if not chunk:
                raise OSError(f"{name} changed while it was packed")
            chunk = chunk[:remaining]
            self.gzip.write(chunk)
            remaining -= len(chunk)
            chunk = source.read(min(remaining, BLOCK)) if remaining else b""
        self._pad(size)
        self.gzip.set_level(self._level)

    def add_file(self, name: str, path: Path) -> None:
        """Write a regular file from disk, never read through a link (its mode decides 0755 or
        0644).

        Raises:
            ExportError: `path` is a link or not a regular file, or cannot be opened.
            OSError: it cannot be read.
        """
        with open_file(path, error=ExportError) as source:
            status = os.fstat(source.fileno())
            self.add_stream(name, source, status.st_size, executable=bool(status.st_mode & 0o111))

    def finish(self) -> None:
        """The end-of-archive marker, padded to a 10 KiB record, and the last members."""
        written = self.gzip.tell() + 2 * 512
        self.gzip.write(bytes(2 * 512 + (-written % tarfile.RECORDSIZE)))
        self.gzip.close()

    def _pad(self, size: int) -> None:
        if size % 512:
            self.gzip.write(bytes(512 - size % 512))
