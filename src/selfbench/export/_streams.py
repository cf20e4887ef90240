"""Streams under the export: a parallel deterministic gzip writer and a strict tar reader.

The writer cuts the byte stream into 4 MiB blocks and compresses each as its own gzip member on
a thread pool (concatenated members are one gzip stream for `tar`, `gzip` and Python's
`gzip`). A caller may switch the level between files: data that is already compressed (the
repository snapshots) is stored, not deflated a second time. Blocks are cut at fixed points of
the same byte sequence, so the same input always gives the same bytes.

The reader parses ustar headers itself (with `tarfile.TarInfo.frombuf`), so every size is
known and checked before a byte of content is read, and nothing hostile (a pax header claiming
gigabytes, a link, a device) is ever interpreted: it is refused.
"""

from __future__ import annotations

import hashlib
import tarfile
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "BLOCK",
    "GzipMembersWriter",
    "HashingReader",
    "MemberReader",
    "Readable",
    "StreamError",
    "TarReader",
    "Writable",
    "one_line",
    "shown",
    "tar_header",
]

BLOCK = 4 << 20
_GZIP_WBITS = 31
_TAR_BLOCK = 512
_TRAILER_LIMIT = 1 << 20
_SHOWN_NAME = 120
_SHOWN_MESSAGE = 300
_SIZE_FIELD = 124
"""Offset of the size field in a tar header; a set high bit there means GNU base-256."""


class Readable(Protocol):
    """Anything with `read(size)`."""

    def read(self, size: int = -1, /) -> bytes: ...


class Writable(Protocol):
    """Anything with `write(bytes)`."""

    def write(self, data: bytes, /) -> int: ...


class StreamError(Exception):
    """Raised by the tar reader; the caller names the archive and member."""


def one_line(text: str, limit: int = _SHOWN_MESSAGE) -> str:
    """`text` fit for a one-line message: control characters escaped, cut after `limit`.

    Only a bounded prefix is ever looked at, so even a message carrying a gigabyte of
    archive bytes costs nothing to show.
    """
    head = text[: limit + 1]
    if not head.isprintable():
        head = repr(head)[1:-1]
    return head if len(head) <= limit and len(text) <= limit else f"{head[:limit]}..."


def shown(name: str) -> str:
    """A member name fit for a one-line message: control characters escaped, long names cut."""
    return one_line(name, _SHOWN_NAME)


def _member(block: bytes, level: int) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
    return compressor.compress(block) + compressor.flush()


class GzipMembersWriter:
    """A write-only gzip stream compressed in parallel; also hashes and counts what it emits."""

    def __init__(self, target: Writable, *, level: int = 6, workers: int = 2) -> None:
        self._target = target
        self._level = level
        self._pool = ThreadPoolExecutor(max_workers=workers)
        self._limit = workers * 2
        self._pending: deque[Future[bytes]] = deque()
        self._buffer = bytearray()
        self._written = 0
        self._emitted_any = False
        self.sha256 = hashlib.sha256()
        self.size = 0

    def set_level(self, level: int) -> None:
        """Compress what follows at `level`; what came before is cut into its own member."""
        if level != self._level:
            self._cut()
            self._level = level

    def write(self, data: bytes, /) -> int:
        """Take `data`; compress every full block."""
        self._buffer += data
        self._written += len(data)
        while len(self._buffer) >= BLOCK:
            self._submit(bytes(self._buffer[:BLOCK]))
            del self._buffer[:BLOCK]
        return len(data)

    def tell(self) -> int:
        """Uncompressed bytes taken so far (tarfile asks)."""
        return self._written

    def close(self) -> None:
        """Compress the rest and write every member out, in order."""
        self._cut()
        if not self._emitted_any:
            self._submit(b"")
        while self._pending:
            self._emit(self._pending.popleft())
        self._pool.shutdown()

    def abort(self) -> None:
        """Stop without writing more (after a failure)."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown()

    def _cut(self) -> None:
        if self._buffer:
            self._submit(bytes(self._buffer))
            self._buffer.clear()

    def _submit(self, block: bytes) -> None:
        self._emitted_any = True
        self._pending.append(self._pool.submit(_member, block, self._level))
        while len(self._pending) > self._limit:
            self._emit(self._pending.popleft())

    def _emit(self, future: Future[bytes]) -> None:
        member = future.result()
        self._target.write(member)
        self.sha256.update(member)
        self.size += len(member)


def tar_header(info: tarfile.TarInfo) -> bytes:
    """One ustar header block (no pax, no GNU extensions: the reader refuses those)."""
    return info.tobuf(format=tarfile.USTAR_FORMAT, encoding="utf-8", errors="strict")


class HashingReader:
    """Reads through to `source`, hashing every byte; `drain` reads the rest."""

    def __init__(self, source: Readable) -> None:
        self._source = source
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1, /) -> bytes:
        data = self._source.read(size)
        self.sha256.update(data)
        return data

    def seek(self, offset: int, /) -> int:
        """Not seekable (gzip asks for the method, never calls it while reading forward)."""
        raise OSError(f"cannot seek to {offset}: a hashed stream is read once, forward")

    def drain(self) -> None:
        """Read (and hash) everything left."""
        while self.read(BLOCK):
            pass


@dataclass(slots=True)
class MemberReader:
    """A member's content: exactly `remaining` bytes of the archive stream."""

    _stream: Readable
    remaining: int

    def read(self, size: int = -1, /) -> bytes:
        left = max(self.remaining, 0)  # never ask the stream for "everything" (read(-1))
        if size < 0 or size > left:
            size = left
        if size == 0:
            return b""
        data = self._stream.read(size)
        if len(data) < size:
            raise StreamError("archive ends inside a member (truncated)")
        self.remaining -= len(data)
        return data


def _read_exact(stream: Readable, size: int) -> bytes:
    chunks = []
    while size:
        data = stream.read(min(size, BLOCK))
        if not data:
            break
        chunks.append(data)
        size -= len(data)
    return b"".join(chunks)


class TarReader:
    """Headers and contents of a tar stream, one member at a time, nothing interpreted."""

    def __init__(self, stream: Readable) -> None:
        self._stream = stream
        self._current: MemberReader | None = None
        self._padding = 0

    def next(self) -> tarfile.TarInfo | None:
        """The next member's header, or None at the end (after checking the end is clean).

        Raises:
            StreamError: a malformed header, a truncated archive or data after its end.
        """
        self._skip_current()
        block = _read_exact(self._stream, _TAR_BLOCK)
        if len(block) < _TAR_BLOCK:
            raise StreamError("archive ends without an end-of-archive marker (truncated)")
        if block == bytes(_TAR_BLOCK):
            self._check_end()
            return None
        try:
            info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        except tarfile.HeaderError as exc:
            raise StreamError(f"malformed tar header ({one_line(str(exc))})") from exc
        if block[_SIZE_FIELD] & 0x80:
            raise StreamError(
                f"{shown(info.name)}: size field in base-256 (a GNU extension); "
                "exports use plain ustar"
            )
        if info.size < 0:
            raise StreamError(f"{shown(info.name)}: member claims a negative size ({info.size})")
        content = info.size if info.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
        self._current = MemberReader(self._stream, content)
        self._padding = -content % _TAR_BLOCK
        return info

    def content(self) -> MemberReader:
        """The current member's content reader."""
        if self._current is None:
            raise StreamError("no current member")
        return self._current

    def _skip_current(self) -> None:
        if self._current is not None:
            while self._current.read(BLOCK):
                pass
            if len(_read_exact(self._stream, self._padding)) < self._padding:
                raise StreamError("archive ends inside a member (truncated)")
            self._current = None

    def _check_end(self) -> None:
        rest = _read_exact(self._stream, _TRAILER_LIMIT + 1)
        if len(rest) > _TRAILER_LIMIT or rest.strip(b"\0"):
            raise StreamError("data after the end of the archive")
