"""Parallel, deterministic gzip of a byte stream (what pigz does, with no extra install).

The stream is cut into fixed-size blocks and each block becomes its own gzip member,
compressed on a thread pool (zlib releases the GIL). Concatenated members are one valid gzip
file (RFC 1952 §2.2) that gzip, Python, Go (Docker's ADD) and tar all read as one stream.
The same input always gives the same bytes: blocks are cut at fixed offsets and written in
order, and every member header carries no name and a zero time.
"""

from __future__ import annotations

import os
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

__all__ = ["compress_stream"]

_BLOCK = 4 << 20
_GZIP_WBITS = 31


def _member(block: bytes, level: int) -> bytes:
    compressor = zlib.compressobj(level, zlib.DEFLATED, _GZIP_WBITS)
    return compressor.compress(block) + compressor.flush()


def compress_stream(
    source: IO[bytes], target: IO[bytes], *, level: int = 1, workers: int | None = None
) -> None:
    """Gzip everything readable from `source` into `target`, using several cores."""
    threads = workers or max(1, min(4, os.cpu_count() or 1))
    pending: deque[Future[bytes]] = deque()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        while block := source.read(_BLOCK):
            pending.append(pool.submit(_member, block, level))
            while len(pending) > threads * 2:
                target.write(pending.popleft().result())
        while pending:
            target.write(pending.popleft().result())
