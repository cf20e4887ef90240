"""A scripted author: a real process that authors, repairs or couples a task over MCP.

It does what a coding agent run by `selfbench.run.author` does, without a model: it reads its
inputs from the `SELFBENCH_*` environment, starts the `selfbench mcp` server declared in
`$SELFBENCH_MCP_CONFIG` and talks to it over stdio with the official MCP SDK client, calls
`check_task`, then `submit_task`. What it submits depends on `$SELFBENCH_AUTHOR_MODE`:

* `author`: the draft with a rewritten instruction (`--prompt`); with `--break`, a fail-to-pass
  selector that runs no test, so the task's validation fails;
* `repair`: the task under repair with its mutable fields taken back from the draft (undoing
  `--break`);
* `coupling-repair`: the task with `--replace OLD NEW` applied to its held-out test patch.

`--set FIELD JSON` overrides a definition field in any mode (to test what the rules refuse),
`--replace-gold OLD NEW` edits the gold patch, and the misbehaviours `--silent SECONDS` (no
output, then carry on), `--chatter` (print forever), `--no-submit` and `--exit CODE` exist to
test the limits.

Usage: python scripted_author.py [options]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp import StdioServerParameters

BROKEN_SELECTOR = "tests/test_does_not_exist.py"


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripted_author")
    parser.add_argument("--prompt", help="the instruction to submit (author mode)")
    parser.add_argument("--break", dest="broken", action="store_true")
    parser.add_argument("--set", nargs=2, action="append", default=[], metavar=("FIELD", "JSON"))
    parser.add_argument("--replace", nargs=2, action="append", default=[], metavar=("OLD", "NEW"))
    parser.add_argument("--replace-gold", nargs=2, action="append", default=[])
    parser.add_argument("--silent", type=float, default=0.0)
    parser.add_argument("--chatter", action="store_true")
    parser.add_argument("--no-submit", action="store_true")
    parser.add_argument("--exit", type=int, default=0)
    return parser.parse_args(argv)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _read_task(directory: Path) -> dict[str, Any]:
    return {
        "definition": json.loads((directory / "definition.json").read_text(encoding="utf-8")),
        "testPatch": (directory / "test.patch").read_text(encoding="utf-8"),
        "goldPatch": (directory / "gold.patch").read_text(encoding="utf-8"),
    }


MUTABLE = ("setupCommand", "testCommand", "failToPass", "passToPass", "testPaths", "toolchains")


def _arguments(mode: str, options: argparse.Namespace) -> dict[str, Any]:
    draft = _read_task(Path(os.environ["SELFBENCH_DRAFT"]))
    if mode == "author":
        task = draft
        task["definition"]["prompt"] = options.prompt or task["definition"]["prompt"]
        if options.broken:
            task["definition"]["failToPass"] = [BROKEN_SELECTOR]
    else:
        task = _read_task(Path(os.environ["SELFBENCH_TASK"]))
        if mode == "repair":
            for name in MUTABLE:
                task["definition"][name] = draft["definition"][name]
    for old, new in options.replace if mode == "coupling-repair" else ():
        task["testPatch"] = task["testPatch"].replace(old, new)
    for old, new in options.replace_gold:
        task["goldPatch"] = task["goldPatch"].replace(old, new)
    for name, value in options.set:
        task["definition"][name] = json.loads(value)
    return task


def _server() -> StdioServerParameters:
    from mcp import StdioServerParameters  # noqa: PLC0415 - the misbehaviours start at once

    config = json.loads(Path(os.environ["SELFBENCH_MCP_CONFIG"]).read_text(encoding="utf-8"))
    entry = config["mcpServers"]["selfbench"]
    return StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**os.environ, **entry["env"]}
    )


async def _submit(arguments: dict[str, Any]) -> None:
    from mcp import ClientSession  # noqa: PLC0415
    from mcp.client.stdio import stdio_client  # noqa: PLC0415

    async with (
        stdio_client(_server(), errlog=sys.stderr) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        checked = await session.call_tool("check_task", arguments)
        _say(f"check_task: {json.dumps(checked.structured_content)}")
        submitted = await session.call_tool("submit_task", arguments)
        for block in submitted.content:
            _say(f"submit_task: {getattr(block, 'text', block)}")


def main(argv: list[str]) -> int:
    options = _options(argv)
    mode = os.environ["SELFBENCH_AUTHOR_MODE"]
    prompt = sys.stdin.read()
    _say(f"scripted author, {mode} mode, prompt of {len(prompt)} characters")
    if "SELFBENCH_FAILING_LOG" in os.environ:
        tail = Path(os.environ["SELFBENCH_FAILING_LOG"]).read_bytes()
        ending = tail.splitlines()[-1].decode() if tail else ""
        _say(f"failing log: {len(tail)} bytes, ending {ending!r}")
    if options.silent:
        time.sleep(options.silent)
    while options.chatter:
        _say("still thinking")
        time.sleep(0.1)
    if not options.no_submit:
        import anyio  # noqa: PLC0415

        anyio.run(_submit, _arguments(mode, options))
    return int(options.exit)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
