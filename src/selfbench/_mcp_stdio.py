"""The MCP server's stdio transport with bounded requests (`selfbench mcp`).

The SDK's stdio transport reads a line of any length and hands it to its parser, which drops a
message nested deeper than it parses without an answer: a client could grow the server without
bound, or wait forever. Here each line is checked first: at most `LINE_LIMIT` bytes (the rest of
a longer line is read and thrown away, never kept) and at most `DEPTH_LIMIT` arrays and objects
deep. A request over either is answered at once with a JSON-RPC error naming the limit
(`INVALID_REQUEST`), under the request's id when it can be read, and never reaches the server.

As the SDK's transport does, standard input and output are moved off the wire while serving
(fd 0 reads the null device, fd 1 writes to stderr), so nothing a tool starts can read the
client's requests or write into the replies; both are put back at the end.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
import anyio.to_thread

__all__ = ["DEPTH_LIMIT", "LINE_LIMIT", "BoundedLines", "LockedOutput", "claim_stdio", "refusal"]

LINE_LIMIT = 32 << 20
"""The most bytes one request may have (a task's patches travel in one)."""
DEPTH_LIMIT = 64
"""The deepest a request may nest arrays and objects (a submission needs about 6)."""
INVALID_REQUEST = -32600
_CHUNK = 1 << 16
_HEAD = 4096
_HEAD_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")')


def refusal(line: bytes, *, complete: bool = True) -> bytes | None:
    """The JSON-RPC error line that answers a request over the limits, else None.

    `complete` is false for a line cut at `LINE_LIMIT`. Malformed JSON is left to the SDK.
    """
    if not complete or len(line.rstrip(b"\n")) > LINE_LIMIT:
        return _error(_head_id(line), f"request larger than {LINE_LIMIT} bytes")
    if line.count(b"[") + line.count(b"{") <= DEPTH_LIMIT:
        return None  # cannot be deeper: the common case, decided without parsing
    try:
        message = json.loads(line)
    except RecursionError:
        return _error(_head_id(line), _too_deep())
    except ValueError:
        return None
    if not _deeper_than(message, DEPTH_LIMIT):
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    return _error(request_id if isinstance(request_id, int | str) else None, _too_deep())


def _too_deep() -> str:
    return f"request nested deeper than {DEPTH_LIMIT} levels"


def _error(request_id: int | str | None, message: str) -> bytes:
    error = {"code": INVALID_REQUEST, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


def _head_id(line: bytes) -> int | str | None:
    """The request's id when its first bytes name one (clients write it before the params)."""
    found = _HEAD_ID.search(line[:_HEAD])
    if found is None:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and dicts more than `limit` deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


class LockedOutput:
    """The wire's output, one whole line at a time (the SDK's replies and the refusals)."""

    def __init__(self, wire: anyio.AsyncFile[bytes]) -> None:
        self._wire = wire
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        await self.write_bytes(text.encode("utf-8"))

    async def write_bytes(self, data: bytes) -> None:
        async with self._lock:
            await self._wire.write(data)
            await self._wire.flush()

    async def flush(self) -> None:
        """Each write is flushed already."""


class BoundedLines:
    """The wire's input as the SDK's reader takes it (`async for line`): each line within the
    limits, decoded; a line over them is answered on `output` and skipped."""

    def __init__(self, wire: BinaryIO, output: LockedOutput) -> None:
        self._wire = wire
        self._output = output

    async def _readline(self, size: int) -> bytes:
        return await anyio.to_thread.run_sync(self._wire.readline, size)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line = await self._readline(LINE_LIMIT + 1)
            if not line:
                return
            complete = line.endswith(b"\n") or len(line) <= LINE_LIMIT
            if not complete:
                await self._discard_rest()
            answer = refusal(line, complete=complete)
            if answer is not None:
                await self._output.write_bytes(answer)
                continue
            yield line.decode("utf-8", errors="replace")

    async def _discard_rest(self) -> None:
        while True:
            chunk = await self._readline(_CHUNK)
            if not chunk or chunk.endswith(b"\n"):
                return


@contextmanager
def claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The wire's input and output on private descriptors; fd 0 reads the null device and fd 1
    writes to stderr meanwhile, and both are put back at the end."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    with os.fdopen(wire_in, "rb") as source, os.fdopen(wire_out, "wb") as sink:
        try:
            yield source, sink
        finally:
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
