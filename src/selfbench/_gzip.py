"""Parallel, deterministic gzip of a byte stream (what pigz does, with no extra install).

The stream is cut into fixed-size blocks and each block becomes its own gzip member,
compressed on a thread pool (zlib releases the GIL). Concatenated members are one valid gzip
file (RFC 1952 §2.2) that gzip, Python, Go (Docker's ADD) and tar all read as one stream.
The same input always gives the same bytes: blocks are cut at fixed offsets and written in
order, and every member header carries no name and a zero time.
"""

from __future__ import annotations

import os
import queue
import threading
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Protocol

__all__ = ["Writable", "compress_stream"]


class Writable(Protocol):
    """Anything with `write(bytes)`: a file, or a writer that hashes on the way."""

    def write(self, data: bytes, /) -> int: ...


_BLOCK = 4 << 20
_GZIP_WBITS = 31


def _member(block: bytes, level: int) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
    return compressor.compress(block) + compressor.flush()


def compress_stream(
    source: IO[bytes], target: Writable, *, level: int = 1, workers: int | None = None
) -> None:
    """Gzip everything readable from `source` into `target`, using several cores.

    The calling thread only reads, so a pipe feeding `source` never stalls while blocks are
    compressed; a writer thread puts finished members out in order. At most a few blocks are
    in flight, so memory stays flat however long the stream.
    """
    threads = workers or max(1, min(4, os.cpu_count() or 1))
    in_flight: queue.Queue[Future[bytes] | None] = queue.Queue(maxsize=threads * 2)
    failure: list[BaseException] = []

    def write_members() -> None:
        while (member := in_flight.get()) is not None:
            try:
                target.write(member.result())
            except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
                failure.append(exc)

    writer = threading.Thread(target=write_members, name="selfbench-gzip-writer")
    with ThreadPoolExecutor(max_workers=threads) as pool:
        writer.start()
        try:
            while not failure and (block := source.read(_BLOCK)):
                in_flight.put(pool.submit(_member, block, level))
        finally:
            in_flight.put(None)
            writer.join()
    if failure:
        raise failure[0]
