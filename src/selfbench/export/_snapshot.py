"""Scan a repository snapshot (`repo.tar.gz`) as its bytes stream by: each file's Git blob id.

Push-fed, so it can ride along while the export reader hands the same bytes to extract's
writer: `feed` takes the gzip bytes in whatever pieces they come, inflates at most `BLOCK` at a
time, and parses the tar inside with a generator that asks for bytes as it needs them. Nothing
is held but a block and the index: per member its path and, for a regular file, its blob id.

`git archive` writes ustar with pax headers (long names, and a global `comment` holding the
commit it archived); GNU long names are read too. A problem is recorded, never raised: the
first one ends the scan and the reader reports it once the task has been read.
"""

from __future__ import annotations

import hashlib
import posixpath
import tarfile
import zlib
from collections.abc import Callable, Generator

from selfbench.bundle.snapshot import git_blob_header, git_blob_id
from selfbench.export._streams import BLOCK, one_line
from selfbench.patches import display_path

__all__ = ["SnapshotScan"]

_GZIP_WBITS = 31
_TAR_BLOCK = 512
_HEADER_LIMIT = 1 << 20
"""The largest pax or GNU long-name header read."""
_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)
_PAX = (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE)
_NO_CONTENT = (
    tarfile.DIRTYPE,
    tarfile.SYMTYPE,
    tarfile.LNKTYPE,
    tarfile.CHRTYPE,
    tarfile.BLKTYPE,
    tarfile.FIFOTYPE,
)

_REGULAR_FILE, _EXECUTABLE, _SYMLINK = "100644", "100755", "120000"
"""The modes Git gives a file, an executable file and a symbolic link."""

_Parser = Generator[None, bytes, None]


class _ScanError(Exception):
    """Ends the scan with a message."""


class _Buffer:
    """The piece of inflated data being parsed, and where in it the parser stands."""

    def __init__(self) -> None:
        self.data = b""
        self.position = 0

    def take(self, size: int) -> Generator[None, bytes, bytes]:
        """Exactly `size` bytes, waiting for as many pieces as that takes."""
        parts: list[bytes] = []
        while size:
            if self.position == len(self.data):
                self.data, self.position = (yield), 0
            part = self.data[self.position : self.position + size]
            self.position += len(part)
            size -= len(part)
            parts.append(part)
        return b"".join(parts)

    def stream(self, size: int, consume: Callable[[memoryview], object]) -> _Parser:
        """Hand the next `size` bytes to `consume`, piece by piece, holding none of them."""
        while size:
            if self.position == len(self.data):
                self.data, self.position = (yield), 0
            part = memoryview(self.data)[self.position : self.position + size]
            consume(part)
            self.position += len(part)
            size -= len(part)


def _pax_records(data: bytes) -> dict[str, str]:
    """`LEN KEY=VALUE\\n` records (POSIX pax); refused when malformed."""
    records: dict[str, str] = {}
    position = 0
    while position < len(data):
        length, space, _ = data[position : position + 20].partition(b" ")
        if not space or not length.isdigit() or int(length) <= len(length) + 1:
            raise _ScanError("malformed pax header")
        record = data[position : position + int(length)]
        key, equals, value = record[len(length) + 1 : -1].partition(b"=")
        if not equals or not record.endswith(b"\n"):
            raise _ScanError("malformed pax header")
        records[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        position += int(length)
    return records


def _size(pax: dict[str, str], info: tarfile.TarInfo) -> int:
    """A member's content size: its pax `size` record, else its header's."""
    text = pax.get("size")
    if text is None:
        return info.size
    if not (text.isascii() and text.isdigit()):
        raise _ScanError("malformed pax header")
    return int(text)


def _normalized(name: str) -> str:
    return posixpath.normpath(name).lstrip("/")


class SnapshotScan:
    """Inflate and index a snapshot fed in pieces: `files` maps each path to its blob id."""

    def __init__(self, *, unpack_limit: int) -> None:
        self.files: dict[str, str | None] = {}
        """Every member's path: a regular file's Git blob id, None for anything else."""
        self.entries: dict[str, tuple[str, str]] = {}
        """What Git's tree holds for each file and symbolic link: its mode and object id."""
        self.directories: set[str] = set()
        """Every directory member (`git archive` writes a submodule as an empty one)."""
        self.commit: str | None = None
        """The commit `git archive` recorded (its pax `comment`), if any."""
        self.problem: str | None = None
        self._limit = unpack_limit
        self._unpacked = 0
        self._inflater: zlib._Decompress | None = None
        self._started = False
        self._ended = False
        self._parser = self._parse(_Buffer())
        next(self._parser)

    def feed(self, data: bytes) -> None:
        """Take the next piece of the snapshot's gzip bytes."""
        if self.problem is not None:
            return
        try:
            self._inflate(data)
        except zlib.error as exc:
            self.problem = f"not a valid gzip stream ({one_line(str(exc))})"
        except _ScanError as exc:
            self.problem = str(exc)

    def finish(self) -> None:
        """The snapshot has ended: record a problem if it ended early."""
        if self.problem is not None:
            return
        try:
            if self._inflater is not None:
                self._push(self._inflater.flush())
        except _ScanError as exc:
            self.problem = str(exc)
            return
        if not self._started or (self._inflater is not None and not self._inflater.eof):
            self.problem = "not a valid gzip stream (truncated)"
        elif not self._ended:
            self.problem = "not a tar archive (it ends without an end-of-archive marker)"

    def _inflate(self, data: bytes) -> None:
        while data:
            if self._inflater is None:
                data = data.lstrip(b"\x00") if self._started else data
                if not data:
                    return
                self._inflater = zlib.decompressobj(_GZIP_WBITS)
                self._started = True
            self._push(self._inflater.decompress(data, BLOCK))
            if self._inflater.eof:
                data = self._inflater.unused_data
                self._inflater = None
            else:
                data = self._inflater.unconsumed_tail

    def _push(self, data: bytes) -> None:
        if not data or self._ended:
            return
        self._unpacked += len(data)
        if self._unpacked > self._limit:
            raise _ScanError(f"the snapshot unpacks to more than {self._limit} bytes")
        try:
            self._parser.send(data)
        except StopIteration:
            self._ended = True

    def _parse(self, buffer: _Buffer) -> _Parser:
        """The tar parser: asks for bytes with `yield`, returns at the end-of-archive marker."""
        pax: dict[str, str] = {}
        while (header := (yield from buffer.take(_TAR_BLOCK))) != bytes(_TAR_BLOCK):
            try:
                info = tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")
            except tarfile.HeaderError as exc:
                raise _ScanError(f"malformed tar header ({one_line(str(exc))})") from exc
            size = _size(pax, info) if info.type not in _NO_CONTENT else 0
            if size < 0:
                raise _ScanError("a member claims a negative size")
            if info.type in (*_PAX, tarfile.XGLTYPE, *tarfile.GNU_TYPES[:2]):
                pax = yield from self._extended(buffer, info, size, pax)
                continue
            name = _normalized(pax.get("path", info.name))
            target = pax.get("linkpath", info.linkname)
            pax = {}
            if name in self.files:  # git archive names each path once; tar keeps the last
                raise _ScanError(f"holds {display_path(name)} twice")
            if info.type in _REGULAR:
                blob = hashlib.sha1(git_blob_header(size), usedforsecurity=False)
                yield from buffer.stream(size, blob.update)
                self.files.setdefault(name, blob.hexdigest())
                mode = _EXECUTABLE if info.mode & 0o100 else _REGULAR_FILE
                self.entries.setdefault(name, (mode, blob.hexdigest()))
            else:
                yield from buffer.stream(size, lambda _: None)
                self.files.setdefault(name, None)
                self._other(info, name, target)
            yield from buffer.take(-size % _TAR_BLOCK)

    def _other(self, info: tarfile.TarInfo, name: str, target: str) -> None:
        """Index a member that is not a regular file: a link's target is its blob."""
        if info.type == tarfile.SYMTYPE:
            blob = git_blob_id(target.encode("utf-8", "surrogateescape"))
            self.entries.setdefault(name, (_SYMLINK, blob))
        elif info.type == tarfile.DIRTYPE:
            self.directories.add(name)

    def _extended(
        self, buffer: _Buffer, info: tarfile.TarInfo, size: int, pax: dict[str, str]
    ) -> Generator[None, bytes, dict[str, str]]:
        """Read a pax or GNU long-name header; return the records for the next member."""
        if size > _HEADER_LIMIT:
            raise _ScanError(f"an extended header claims {size} bytes (limit {_HEADER_LIMIT})")
        data = yield from buffer.take(size + (-size % _TAR_BLOCK))
        data = data[:size]
        if info.type == tarfile.XGLTYPE:
            self.commit = _pax_records(data).get("comment", self.commit)
            return pax
        if info.type in _PAX:
            return {**pax, **_pax_records(data)}
        if info.type == tarfile.GNUTYPE_LONGNAME:
            return {**pax, "path": data.rstrip(b"\x00").decode("utf-8", "surrogateescape")}
        return pax
