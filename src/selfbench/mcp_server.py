"""`selfbench mcp`: the author's tools over the Model Context Protocol (stdio).

Tools: `submit_task` (SPEC §2, input schema = the submission JSON Schema), `check_task`, the
same arguments as a dry run that writes nothing, `list_candidates` (mined candidates) and
`draft_task` (a candidate drafted by running its tests: the arguments to finish and submit).
Prompt: `author_task`, the authoring brief. `check_task` is also a plain function; the server
only translates between MCP and it.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from selfbench import __version__
from selfbench._author_prompt import render_author_brief
from selfbench._json import JsonObject
from selfbench.contract import DIFFICULTIES, Difficulty, submission_json_schema
from selfbench.draft.mcp_tool import (
    DRAFT_TASK,
    DRAFT_TASK_DESCRIPTION,
    DRAFT_TASK_SCHEMA,
    draft_task,
    draft_task_text,
)
from selfbench.errors import PreflightError, SelfbenchError
from selfbench.mine.mcp_tool import (
    LIST_CANDIDATES,
    LIST_CANDIDATES_DESCRIPTION,
    LIST_CANDIDATES_SCHEMA,
    list_candidates,
    list_candidates_text,
)
from selfbench.submit import check_task, submit_task

if TYPE_CHECKING:
    import mcp_types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

__all__ = ["SERVER_NAME", "build_server", "serve_stdio"]

SERVER_NAME = "selfbench"
_INSTRUCTIONS = (
    "selfbench turns a merged pull request into a benchmark task for coding agents. Read the "
    "author_task prompt first. Call draft_task for your candidate: it returns the definition, "
    "testPatch and goldPatch with observed selectors and a draft instruction. Rewrite the "
    "instruction, call check_task with the full arguments until it reports accepted, then call "
    "submit_task once with the same arguments."
)
_SUBMIT_DESCRIPTION = (
    "Submit one authored task: the definition (schemaVersion 1), the held-out test patch and "
    "the gold patch. Validates, runs the preflight (Git patches, safe paths, static audit) and "
    "writes $SELFBENCH_TASK_OUTPUT/<taskId>/ atomically. Returns 'Submitted <taskId>.'; a "
    "refusal lists every blocker and writes nothing."
)
_CHECK_DESCRIPTION = (
    "Dry run of submit_task with the same arguments: schema validation, preflight, static audit "
    "(blockers, metrics) and the prompt's integrity warnings. Writes nothing."
)


# --- the MCP edge ------------------------------------------------------------------------------


def _text_result(
    text: str, *, error: bool, structured: JsonObject | None = None
) -> mcp_types.CallToolResult:
    import mcp_types  # noqa: PLC0415 - start-up: the MCP SDK costs 570 ms to import

    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=text)],
        structured_content=structured,
        is_error=error,
    )


def _submit_result(
    arguments: Mapping[str, object], output_root: str | None, *, preflight: bool
) -> mcp_types.CallToolResult:
    try:
        message = submit_task(arguments, output_root=output_root, preflight=preflight)
    except PreflightError as exc:
        lines = [f"submit_task refused {exc.task_id}; nothing was written. Blockers:"]
        lines.extend(f"- {blocker}" for blocker in exc.blockers)
        structured: JsonObject = {"submitted": False, "blockers": list(exc.blockers)}
        return _text_result("\n".join(lines), error=True, structured=structured)
    except SelfbenchError as exc:
        structured = {"submitted": False, "blockers": list(exc.lines)}
        return _text_result(str(exc), error=True, structured=structured)
    return _text_result(message, error=False, structured={"submitted": True})


def _check_result(
    arguments: Mapping[str, object], output_root: str | None, *, preflight: bool
) -> mcp_types.CallToolResult:
    report = check_task(arguments, output_root=output_root, preflight=preflight)
    return _text_result(report.to_text(), error=False, structured=report.to_json())


def _candidates_result(arguments: Mapping[str, object]) -> mcp_types.CallToolResult:
    try:
        listing = list_candidates(arguments)
    except SelfbenchError as exc:
        return _text_result(str(exc), error=True)
    return _text_result(list_candidates_text(listing), error=False, structured=listing.to_json())


def _draft_result(arguments: Mapping[str, object]) -> mcp_types.CallToolResult:
    try:
        draft = draft_task(arguments)
    except SelfbenchError as exc:
        return _text_result(str(exc), error=True)
    return _text_result(draft_task_text(draft), error=not draft["drafted"], structured=draft)


def _prompt_difficulty(arguments: Mapping[str, str] | None) -> Difficulty | None:
    from mcp import MCPError  # noqa: PLC0415 - start-up: the MCP SDK costs 570 ms to import
    from mcp_types import INVALID_PARAMS  # noqa: PLC0415

    value = (arguments or {}).get("difficulty") or None
    if value is None:
        return None
    if value not in DIFFICULTIES:
        message = f"difficulty must be one of {', '.join(DIFFICULTIES)}; got {value!r}"
        raise MCPError(INVALID_PARAMS, message)
    return value


def build_server(
    *, output_root: str | os.PathLike[str] | None = None, preflight: bool = True
) -> Server[Any]:
    """The MCP server: `submit_task`, `check_task` and the `author_task` prompt."""
    import anyio.to_thread  # noqa: PLC0415 - start-up: the MCP SDK costs 570 ms to import
    import mcp_types as types  # noqa: PLC0415
    from mcp import MCPError  # noqa: PLC0415
    from mcp.server.lowlevel import Server  # noqa: PLC0415

    root = os.fspath(output_root) if output_root is not None else None
    schema = submission_json_schema()
    tools = [
        types.Tool(name="submit_task", description=_SUBMIT_DESCRIPTION, input_schema=schema),
        types.Tool(name="check_task", description=_CHECK_DESCRIPTION, input_schema=schema),
        types.Tool(
            name=LIST_CANDIDATES,
            description=LIST_CANDIDATES_DESCRIPTION,
            input_schema=LIST_CANDIDATES_SCHEMA,
        ),
        types.Tool(
            name=DRAFT_TASK, description=DRAFT_TASK_DESCRIPTION, input_schema=DRAFT_TASK_SCHEMA
        ),
    ]
    prompt = types.Prompt(
        name="author_task",
        description="How to author one selfbench task from a merged pull request.",
        arguments=[
            types.PromptArgument(
                name="difficulty", description="easy, medium or hard", required=False
            ),
            types.PromptArgument(
                name="pullRequest", description="the PR to author (URL or number)", required=False
            ),
        ],
    )

    async def list_tools(
        _: ServerRequestContext[Any, Any], __: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        _: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments or {}
        # The work is synchronous file and patch handling; a worker thread keeps the
        # connection answering (pings, cancellations) while a large patch is judged.
        if params.name == "submit_task":
            return await anyio.to_thread.run_sync(
                functools.partial(_submit_result, arguments, root, preflight=preflight)
            )
        if params.name == "check_task":
            return await anyio.to_thread.run_sync(
                functools.partial(_check_result, arguments, root, preflight=preflight)
            )
        if params.name == LIST_CANDIDATES:
            return await anyio.to_thread.run_sync(_candidates_result, arguments)
        if params.name == DRAFT_TASK:
            return await anyio.to_thread.run_sync(_draft_result, arguments)
        raise MCPError(types.INVALID_PARAMS, f"unknown tool: {params.name}")

    async def list_prompts(
        _: ServerRequestContext[Any, Any], __: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(
        _: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != "author_task":
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt: {params.name}")
        text = render_author_brief(
            difficulty=_prompt_difficulty(params.arguments),
            pull_request=(params.arguments or {}).get("pullRequest"),
        )
        message = types.PromptMessage(role="user", content=types.TextContent(text=text))
        return types.GetPromptResult(description=prompt.description, messages=[message])

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=_INSTRUCTIONS,
        get_tool_input_schema=lambda name: (
            schema
            if name in {"submit_task", "check_task"}
            else LIST_CANDIDATES_SCHEMA
            if name == LIST_CANDIDATES
            else DRAFT_TASK_SCHEMA
            if name == DRAFT_TASK
            else None
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def serve_stdio(
    *, output_root: str | os.PathLike[str] | None = None, preflight: bool = True
) -> None:
    """Serve the MCP server on this process's stdin and stdout until the client disconnects;
    each request within `_mcp_stdio`'s limits, one over them answered with an error."""
    import anyio  # noqa: PLC0415 - start-up: the MCP SDK costs 570 ms to import
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    from selfbench._mcp_stdio import BoundedLines, LockedOutput, claim_stdio  # noqa: PLC0415

    server = build_server(output_root=output_root, preflight=preflight)

    async def run(source: BinaryIO, sink: BinaryIO) -> None:
        output = LockedOutput(anyio.wrap_file(sink))
        lines: Any = BoundedLines(source, output)  # what the SDK iterates
        async with stdio_server(stdin=lines, stdout=cast("Any", output)) as (reader, writer):
            await server.run(reader, writer, server.create_initialization_options())

    with claim_stdio() as (source, sink), contextlib.suppress(KeyboardInterrupt):
        anyio.run(run, source, sink)  # Ctrl-C is how a person stops it
