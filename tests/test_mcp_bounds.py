"""`selfbench mcp` bounds what a client sends (issue 25): requests are size- and depth-limited
and answered with an error, and the files the tools read are regular files under a size cap.

Red-team findings, each a test here, against the real server over stdio:

* `list_candidates` with `path=/dev/zero` grew the server to 5.4 GB in 8 s;
* arguments nested 500 deep got no reply at all.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from selfbench._fs import read_bytes
from selfbench._mcp_stdio import DEPTH_LIMIT, LINE_LIMIT, refusal
from selfbench.errors import MineError
from selfbench.mine.mcp_tool import TOOL_FILE_LIMIT
from test_mcp import Scenario, text_of

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}


def run_with_server(scenario: Scenario, *, tmp_path: Path, repo: Path | None = None) -> None:
    """Start the server as a real subprocess, as `test_mcp.run_with_server` does, with this
    process's `PYTHONPATH` (the sources under test, when they are not the installed ones), for
    `repo` when given (`selfbench mcp --repo`)."""
    env = {name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}
    args = ["-m", "selfbench", "mcp", *(["--repo", str(repo)] if repo is not None else [])]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def main(errlog: TextIO) -> None:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await scenario(session)

    with (tmp_path / "server.stderr").open("w") as errlog:
        anyio.run(main, errlog)


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# --- the files the tools read --------------------------------------------------------------------


def test_list_candidates_refuses_what_is_not_a_small_regular_file(tmp_path: Path) -> None:
    """Red team: `list_candidates` with `path=/dev/zero` grew the server to 5.4 GB in 8 s."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    large = tmp_path / "large.jsonl"
    with large.open("wb") as handle:
        handle.truncate(TOOL_FILE_LIMIT + 1)
    expected = {
        "/dev/zero": "/dev/zero: not a regular file; not read",
        str(fifo): f"{fifo}: not a regular file; not read",
        str(tmp_path): f"{tmp_path}: not a regular file; not read",
        str(large): f"{large}: larger than {TOOL_FILE_LIMIT} bytes; not read",
    }

    async def scenario(session: ClientSession) -> None:
        for path, message in expected.items():
            result = await session.call_tool("list_candidates", {"path": path})
            assert result.is_error
            assert text_of(result) == message
        asked = {"candidate": "pr-1", "path": "/dev/zero", "repo": str(tmp_path)}
        drafted = await session.call_tool("draft_task", asked)
        assert drafted.is_error
        assert text_of(drafted) == "/dev/zero: not a regular file; not read"

    run_with_server(scenario, tmp_path=tmp_path, repo=tmp_path)


def test_draft_task_refuses_reruns_above_the_cap(tmp_path: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        asked = {"candidate": "pr-1", "path": "c.jsonl", "repo": ".", "reruns": 1000000}
        result = await session.call_tool("draft_task", asked)
        assert result.is_error
        assert text_of(result) == "reruns must be at most 10"

    run_with_server(scenario, tmp_path=tmp_path)


def test_read_bytes_with_a_limit_reads_a_regular_file_up_to_it(tmp_path: Path) -> None:
    path = tmp_path / "small"
    path.write_bytes(b"12345")

    assert read_bytes(path, error=MineError, limit=5) == b"12345"
    with pytest.raises(MineError) as caught:
        read_bytes(path, error=MineError, limit=4)
    assert str(caught.value) == f"{path}: larger than 4 bytes; not read"


# --- the requests --------------------------------------------------------------------------------


def test_arguments_nested_too_deep_get_an_error_reply_from_the_real_client(tmp_path: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        with pytest.raises(MCPError, match=f"request nested deeper than {DEPTH_LIMIT} levels"):
            await session.call_tool("check_task", {"definition": _nested(100)})
        result = await session.call_tool("check_task", {"definition": _nested(8)})
        assert result.structured_content is not None
        assert result.structured_content["accepted"] is False

    run_with_server(scenario, tmp_path=tmp_path)


class _Wire:
    """The server as a subprocess, spoken to in raw JSON-RPC lines (the real client cannot
    write what a hostile one can: it refuses to serialize 500 levels)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self, seconds: float = 30) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        return json.loads(self.process.stdout.readline()) if ready else None

    def resident_mb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="utf-8")
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) >> 10


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[_Wire]:
    with (tmp_path / "server.stderr").open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "selfbench", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        connection = _Wire(process)
        try:
            connection.send(json.dumps(_INITIALIZE).encode())
            assert connection.receive() is not None
            connection.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
            yield connection
        finally:
            process.kill()
            process.communicate()  # and closes the pipes


_TOO_DEEP = f"request nested deeper than {DEPTH_LIMIT} levels"


def _call(request_id: int, arguments: bytes) -> bytes:
    head = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", ' % request_id
    return head + b'"params": {"name": "check_task", "arguments": ' + arguments + b"}}"


def test_arguments_nested_500_deep_get_an_error_reply(wire: _Wire) -> None:
    """Red team: arguments nested 500 deep got no reply at all."""
    for request_id, depth in ((2, 500), (3, 100_000)):
        wire.send(_call(request_id, b'{"definition": ' + b"[" * depth + b"]" * depth + b"}"))
        assert wire.receive() == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": -32600,
                "message": f"request nested deeper than {DEPTH_LIMIT} levels",
            },
        }
    wire.send(_call(4, b'{"definition": {}}'))
    answer = wire.receive()
    assert answer is not None
    assert answer["id"] == 4
    assert answer["result"]["structuredContent"]["accepted"] is False


def test_a_request_larger_than_the_limit_is_answered_and_never_kept(wire: _Wire) -> None:
    before = wire.resident_mb()
    filler = b"x" * (LINE_LIMIT // 8)
    for request_id in (2, 3):
        assert wire.process.stdin is not None
        wire.process.stdin.write(_call(request_id, b'{"definition": "')[:-2])
        for _ in range(12):
            wire.process.stdin.write(filler)
        wire.send(b'"}}}')
        assert wire.receive() == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32600, "message": f"request larger than {LINE_LIMIT} bytes"},
        }
    assert wire.resident_mb() - before < 2 * (LINE_LIMIT >> 20) + 16
    wire.send(_call(4, b'{"definition": {}}'))
    answer = wire.receive()
    assert answer is not None
    assert answer["id"] == 4


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}', None),
        (b"[" * DEPTH_LIMIT + b"]" * DEPTH_LIMIT, None),
        (b"not json" + b"[" * 100, None),
        (
            b'{"id": "x", "params": ' + b"[" * 65 + b"]" * 65 + b"}",
            {"id": "x", "message": f"request nested deeper than {DEPTH_LIMIT} levels"},
        ),
        (
            b"[" * 65 + b"]" * 65,
            {"id": None, "message": f"request nested deeper than {DEPTH_LIMIT} levels"},
        ),
    ],
)
def test_refusal(line: bytes, answer: dict[str, Any] | None) -> None:
    refused = refusal(line)
    if answer is None:
        assert refused is None
        return
    assert refused is not None
    assert json.loads(refused) == {
        "jsonrpc": "2.0",
        "id": answer["id"],
        "error": {"code": -32600, "message": answer["message"]},
    }
