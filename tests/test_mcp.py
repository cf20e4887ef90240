"""`selfbench mcp`: the SDK's own client talks to the real server process over stdio.

Each scenario starts `python -m selfbench mcp` as a subprocess through `stdio_client`, so the
protocol, the transport and the tool/prompt wiring are all the real thing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import anyio
import mcp_types
import pytest
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from helpers import added_file, arguments, implementation_patch, patch, sources_path
from selfbench._author_prompt import render_author_brief
from selfbench.contract import submission_json_schema
from selfbench.demo import audit_task_dir, build_sample_repository, sample_arguments
from selfbench.submit import OUTPUT_ENV, check_task

TASK_ID = "widgets-pr-42"
FILES = ["definition.json", "gold.patch", "test.patch"]

Scenario = Callable[[ClientSession], Awaitable[None]]


def run_with_server(
    scenario: Scenario, *, output_root: Path | None, tmp_path: Path, args: tuple[str, ...] = ()
) -> None:
    """Start the server as a real subprocess, initialize a session, and run `scenario` on it."""
    env = {"PYTHONPATH": sources_path()}
    if output_root is not None:
        env[OUTPUT_ENV] = str(output_root)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "selfbench", "mcp", *args], env=env
    )

    async def main(errlog: TextIO) -> None:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await scenario(session)

    with (tmp_path / "server.stderr").open("w") as errlog:
        anyio.run(main, errlog)


def entries(directory: Path) -> list[str]:
    """The names in a directory, sorted."""
    return sorted(path.name for path in directory.iterdir())


def text_of(result: mcp_types.CallToolResult) -> str:
    """The single text block of a tool result."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


def refused_arguments() -> dict[str, Any]:
    """Arguments with three blockers: overlap, too few gold lines, a quoted placeholder."""
    value = arguments(testCommand='python -m pytest -q "{tests}"')
    gold = implementation_patch(1, 5)
    tests = patch(
        added_file("tests/test_new.py", 5, tag="assert"),
        added_file("src/widgets/module_0.py", 1, tag="clash"),
    )
    value["goldPatch"], value["testPatch"] = gold.decode(), tests.decode()
    return value


REFUSED_BLOCKERS = [
    "gold and held-out test patches overlap: src/widgets/module_0.py",
    "easy mode requires at least 20 changed implementation lines; found 5",
    'test command must expand "{tests}" as an unquoted shell argument list',
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "tasks"
    path.mkdir()
    return path


# --- over the wire ------------------------------------------------------------------------------


def test_lists_both_tools_with_the_submission_schema_and_the_prompt(
    root: Path, tmp_path: Path
) -> None:
    async def scenario(session: ClientSession) -> None:
        assert session.server_info is not None
        assert session.server_info.name == "selfbench"
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert sorted(tools) == ["check_task", "draft_task", "list_candidates", "submit_task"]
        for tool in (tools["check_task"], tools["submit_task"]):
            assert tool.input_schema == submission_json_schema()
            assert tool.description
        prompts = (await session.list_prompts()).prompts
        assert [prompt.name for prompt in prompts] == ["author_task"]
        assert [argument.name for argument in prompts[0].arguments or []] == [
            "difficulty",
            "pullRequest",
        ]

    run_with_server(scenario, output_root=root, tmp_path=tmp_path)


def test_check_then_submit_then_resubmit(root: Path, tmp_path: Path) -> None:
    first = arguments()
    second = arguments(prompt="A different instruction for the same task id, long enough.")

    async def scenario(session: ClientSession) -> None:
        checked = await session.call_tool("check_task", first)
        assert not checked.is_error
        assert text_of(checked) == f"{TASK_ID} would be accepted."
        assert checked.structured_content == {
            "taskId": TASK_ID,
            "accepted": True,
            "issues": [],
            "blockers": [],
            "warnings": [],
            "metrics": {"implementationFiles": 1, "implementationChangedLines": 20, "testFiles": 1},
        }
        assert entries(root) == []  # the dry run wrote nothing

        submitted = await session.call_tool("submit_task", first)
        assert not submitted.is_error
        assert text_of(submitted) == f"Submitted {TASK_ID}."
        assert entries(root / TASK_ID) == FILES

        again = await session.call_tool("submit_task", second)
        assert again.is_error
        assert text_of(again) == f"task {TASK_ID} already exists: {root / TASK_ID}"

        rechecked = await session.call_tool("check_task", second)
        assert rechecked.structured_content is not None
        assert rechecked.structured_content["blockers"] == [
            f"task {TASK_ID} already exists: {root / TASK_ID}"
        ]

    run_with_server(scenario, output_root=root, tmp_path=tmp_path)
    written = (root / TASK_ID / "definition.json").read_text(encoding="utf-8")
    assert first["definition"]["prompt"] in written  # the first submission is untouched
    assert (root / TASK_ID / "gold.patch").read_text() == first["goldPatch"]


def test_a_refused_preflight_lists_every_blocker_and_writes_nothing(
    root: Path, tmp_path: Path
) -> None:
    refused = refused_arguments()

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("submit_task", refused)
        assert result.is_error
        assert text_of(result).splitlines() == [
            f"submit_task refused {TASK_ID}; nothing was written. Blockers:",
            *(f"- {blocker}" for blocker in REFUSED_BLOCKERS),
        ]
        assert result.structured_content == {"submitted": False, "blockers": REFUSED_BLOCKERS}

        checked = await session.call_tool("check_task", refused)
        assert not checked.is_error
        assert text_of(checked).splitlines() == [
            f"{TASK_ID} would be refused:",
            *(f"- {blocker}" for blocker in REFUSED_BLOCKERS),
        ]

    run_with_server(scenario, output_root=root, tmp_path=tmp_path)
    assert list(root.iterdir()) == []


def test_schema_errors_and_a_missing_output_root_are_tool_errors(tmp_path: Path) -> None:
    bad = arguments()
    bad["definition"]["timeouts"]["setupSeconds"] = True
    bad["extra"] = 1

    async def scenario(session: ClientSession) -> None:
        result = await session.call_tool("submit_task", bad)
        assert result.is_error
        assert text_of(result) == "SELFBENCH_TASK_OUTPUT is not configured"

        checked = await session.call_tool("check_task", bad)
        assert checked.structured_content is not None
        assert checked.structured_content["accepted"] is False
        assert [issue["path"] for issue in checked.structured_content["issues"]] == [
            "definition.timeouts.setupSeconds",
            "extra",
        ]

        fine = await session.call_tool("check_task", arguments())
        assert fine.structured_content is not None
        assert fine.structured_content["blockers"] == ["SELFBENCH_TASK_OUTPUT is not configured"]

        with pytest.raises(MCPError, match="unknown tool: nope"):
            await session.call_tool("nope", {})

    run_with_server(scenario, output_root=None, tmp_path=tmp_path)


def test_the_author_task_prompt(root: Path, tmp_path: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        result = await session.get_prompt(
            "author_task", {"difficulty": "medium", "pullRequest": "#7"}
        )
        assert len(result.messages) == 1
        content = result.messages[0].content
        assert isinstance(content, mcp_types.TextContent)
        assert content.text == render_author_brief(difficulty="medium", pull_request="#7")
        with pytest.raises(MCPError, match="difficulty must be one of easy, medium, hard"):
            await session.get_prompt("author_task", {"difficulty": "extreme"})

    run_with_server(scenario, output_root=root, tmp_path=tmp_path)


def test_an_agent_authors_a_real_task_end_to_end(root: Path, tmp_path: Path) -> None:
    repo = build_sample_repository(tmp_path)
    authored: dict[str, Any] = json.loads(json.dumps(sample_arguments(repo)))  # as sent
    task_id = authored["definition"]["taskId"]

    async def scenario(session: ClientSession) -> None:
        brief = await session.get_prompt("author_task")
        assert brief.messages
        checked = await session.call_tool("check_task", authored)
        assert checked.structured_content is not None
        assert checked.structured_content["accepted"] is True
        submitted = await session.call_tool("submit_task", authored)
        assert text_of(submitted) == f"Submitted {task_id}."

    run_with_server(scenario, output_root=root, tmp_path=tmp_path)
    report = audit_task_dir(root / task_id)
    assert report.accepted
    assert (root / task_id / "test.patch").read_text(encoding="utf-8") == authored["testPatch"]


def test_no_preflight_submits_what_the_preflight_refuses(root: Path, tmp_path: Path) -> None:
    refused = refused_arguments()
    not_blocking = [f"not blocking (preflight is off): {b}" for b in REFUSED_BLOCKERS]

    async def scenario(session: ClientSession) -> None:
        # check_task answers for this server: without the preflight, submit would write.
        checked = await session.call_tool("check_task", refused)
        assert not checked.is_error
        assert checked.structured_content is not None
        assert checked.structured_content["accepted"] is True
        assert checked.structured_content["blockers"] == []
        assert checked.structured_content["warnings"][:3] == not_blocking
        assert text_of(checked).splitlines()[:4] == [
            f"{TASK_ID} would be accepted.",
            *(f"warning: {line}" for line in not_blocking),
        ]
        assert entries(root) == []

        result = await session.call_tool("submit_task", refused)
        assert text_of(result) == f"Submitted {TASK_ID}."

        # What still stops submit stops the check too: the task now exists.
        again = await session.call_tool("check_task", refused)
        assert again.structured_content is not None
        assert again.structured_content["accepted"] is False
        assert again.structured_content["blockers"] == [
            f"task {TASK_ID} already exists: {root / TASK_ID}"
        ]

    run_with_server(scenario, output_root=root, tmp_path=tmp_path, args=("--no-preflight",))
    assert sorted(p.name for p in (root / TASK_ID).iterdir()) == FILES


def test_check_task_without_the_preflight_still_reports_schema_issues(root: Path) -> None:
    bad = refused_arguments()
    bad["definition"]["timeouts"]["setupSeconds"] = True
    report = check_task(bad, output_root=root, preflight=False)
    assert not report.accepted
    assert [issue.path for issue in report.issues] == ["definition.timeouts.setupSeconds"]
    assert report.blockers == ()


# --- the pure parts -----------------------------------------------------------------------------


def test_check_task_reports_prompt_warnings(root: Path) -> None:
    value = arguments(prompt="Fix PR #42: make tests/test_new.py pass.")
    report = check_task(value, output_root=root)
    assert report.accepted
    assert report.warnings == (
        "prompt mentions the source PR number (42)",
        "prompt mentions a selector (tests/test_new.py)",
        "prompt mentions a held-out path (tests/test_new.py)",
    )
    assert list(root.iterdir()) == []


@pytest.mark.parametrize(
    "value",
    [None, [], "x", {}, {"definition": "x", "testPatch": 1, "goldPatch": None}],
    ids=["null", "list", "string", "empty", "wrong-types"],
)
def test_check_task_never_raises_on_hostile_arguments(value: Any, root: Path) -> None:
    report = check_task(value, output_root=root)
    assert not report.accepted
    assert report.issues
    assert list(root.iterdir()) == []


def test_check_task_does_not_probe_paths_from_an_invalid_task_id(root: Path) -> None:
    (root.parent / "escape").mkdir()
    report = check_task(arguments(taskId="../escape"), output_root=root)
    assert [issue.path for issue in report.issues] == ["definition.taskId"]
    assert not any("already exists" in blocker for blocker in report.blockers)


def test_the_brief_states_the_gates_and_the_integrity_boundary() -> None:
    brief = render_author_brief(difficulty="hard")
    for row in (
        "| easy | 1 | 20 | 0 |",
        "| medium | 2 | 50 | 1 |",
        "| hard (this task) | 3 | 100 | 2 |",
    ):
        assert row in brief
    topics = ("never reveal", "held-out", "{tests}", "failToPass", "passToPass", "check_task")
    for topic in (*topics, "draft_task", "submit_task"):
        assert topic in brief
    assert "Your assigned difficulty: hard." in brief
    assert render_author_brief(pull_request="a\nb") != render_author_brief()
    assert "Your assigned pull request: a b." in render_author_brief(pull_request="a\nb")


def test_the_server_module_keeps_the_sdk_out_of_plain_imports() -> None:
    probe = "import sys, selfbench.mcp_server; print('mcp' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": sources_path()},
    )
    assert result.stdout.strip() == "False"
