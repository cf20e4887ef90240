"""Trajectories in each ready-made harness's own format, rendered as readable steps.

The inputs in `tests/data/trajectories/` are what the real harnesses wrote in
tests/test_eval_harness.py for the scripted wrong fix (mini-swe-agent's messages document,
Codex's `--json` events, Claude Code's `stream-json` lines, OpenCode's `--format json` events,
Gemini CLI's `stream-json` events) and in tests/test_eval_harness_aider.py (aider's chat
history), trimmed of what the steps do not show (mini-swe-agent's configuration, Claude Code's
tool list).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eval_helpers import failed, write_results
from selfbench.cli import main
from selfbench.evaluate.trial_files import STEP_LIMIT, STEPS_LIMIT, Step, parse_trajectory

DATA = Path(__file__).with_name("data") / "trajectories"
READ = 'cat "$SELFBENCH_INSTRUCTION_FILE" && cat calc/__init__.py && '
WRITE = "printf '\\n\\ndef mul(a, b):\\n    return a + b\\n' >> calc/__init__.py && git diff --stat"
SEEN = (
    "Add a function mul(a, b) to the calc package that returns a * b.\n"
    "def add(a, b):\n    return a + b\nforbidden-refused\nname-unresolved\n"
    "install-read-only\nrelays-closed"
)
DIFF = " calc/__init__.py | 4 ++++\n 1 file changed, 4 insertions(+)"


def _steps(name: str) -> tuple[Step, ...]:
    steps, omitted = parse_trajectory((DATA / name).read_bytes())
    assert omitted == 0
    return steps


def test_mini_swe_agent_messages_are_steps() -> None:
    steps = _steps("mini-swe-agent.json")
    assert [step.source for step in steps] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "exit",
    ]  # fmt: skip
    assert steps[1].text.startswith("Please solve this issue: Add a function mul(a, b)")
    assert steps[2].text.startswith(f"Next step.\n→ bash({READ}")
    assert steps[3].text == f"← {SEEN}\n"
    assert steps[4].text == f"Next step.\n→ bash({WRITE})"
    assert steps[5].text == f"← {DIFF}\n"
    assert steps[6].text == "Next step.\n→ bash(echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT)"
    assert steps[8].text == "exit: Submitted"


def test_codex_events_are_steps_one_per_completed_item() -> None:
    steps = _steps("codex.jsonl")
    assert [step.source for step in steps] == ["error", "agent", "agent", "agent"]
    assert steps[0].text.startswith("Model metadata for `gpt-5-nano` not found.")
    assert steps[1].text.startswith(f"→ command(/bin/bash -lc '{READ}")
    assert steps[1].text.endswith(f"\n← {SEEN}\n")
    wrapped = WRITE.replace("\\", "\\\\")
    assert steps[2].text == f'→ command(/bin/bash -lc "{wrapped}")\n← {DIFF}\n'
    assert steps[3] == Step("agent", "Done.")


def test_claude_code_stream_is_steps() -> None:
    steps = _steps("claude-code.jsonl")
    assert [step.source for step in steps] == [
        "assistant", "tool", "assistant", "tool", "assistant", "result",
    ]  # fmt: skip
    assert steps[0].text.startswith(f"→ Bash({READ}")
    assert steps[1].text == f"← {SEEN}"
    assert steps[2].text == f"→ Bash({WRITE})"
    assert steps[3].text == f"← {DIFF}"
    assert steps[4:] == (Step("assistant", "Done."), Step("result", "Done."))


def test_opencode_events_are_steps_one_per_part() -> None:
    steps = _steps("opencode.jsonl")
    assert [step.source for step in steps] == [
        "assistant", "tool", "step", "assistant", "tool", "step", "assistant", "step",
    ]  # fmt: skip
    assert steps[0] == Step("assistant", "Next step.")
    assert steps[1].text.startswith(f"→ bash({READ}")
    assert steps[1].text.endswith(f"\n← {SEEN}\n")
    assert steps[2] == Step("step", "end: tool-calls (3214 tokens)")
    assert steps[4].text == f"→ bash({WRITE})\n← {DIFF}\n"
    assert steps[6:] == (Step("assistant", "Done."), Step("step", "end: stop (3427 tokens)"))


def test_gemini_cli_events_are_steps() -> None:
    steps = _steps("gemini-cli.jsonl")
    assert [step.source for step in steps] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "result",
    ]  # fmt: skip
    assert steps[0].text == "Add a function mul(a, b) to the calc package that returns a * b."
    assert steps[1].text.startswith(f"→ run_shell_command({READ}")
    assert steps[2].text == f"← {SEEN}"
    assert steps[3].text == f"→ run_shell_command({WRITE})"
    assert steps[4].text == f"← {DIFF.lstrip()}"
    assert steps[5:] == (Step("assistant", "Done."), Step("result", "success"))


def test_aider_chat_history_is_steps() -> None:
    steps = _steps("aider.md")
    assert [step.source for step in steps] == [
        "aider", "user", "assistant", "aider", "assistant", "aider",
    ]  # fmt: skip
    assert steps[0].text.startswith("Detected dumb terminal, disabling fancy input")
    assert steps[0].text.endswith("\nRepo-map: using 4096 tokens, auto refresh")
    assert steps[1] == Step(
        "user", "Add a function mul(a, b) to the calc package that returns a * b."
    )
    assert steps[2] == Step(
        "assistant", "Please add calc/__init__.py to the chat so I can edit it."
    )
    assert steps[3].text.endswith("\ncalc/__init__.py\nAdd file to the chat? (Y)es/(N)o/(D)on't "
                                  "ask again [Yes]: y")  # fmt: skip
    assert steps[4].text == (
        "Adding it.\n\ncalc/__init__.py\n```python\n<<<<<<< SEARCH\n=======\n\n\n"
        "def mul(a, b):\n    return a + b\n>>>>>>> REPLACE\n```"
    )
    assert steps[5].text.endswith("\nApplied edit to calc/__init__.py")


def test_aider_sessions_and_multi_line_messages() -> None:
    history = (
        "\n# aider chat started at 2026-01-01 10:00:00\n\n#### first line  \n#### second line\n\n"
        "> Tokens: 1 sent  \n\nreply\n\n> quoted reply line\n"
        "# aider chat started at 2026-01-01 11:00:00\n\n#### again\n"
    )
    assert parse_trajectory(history.encode()) == (
        (
            Step("user", "first line\nsecond line"),
            Step("aider", "Tokens: 1 sent"),
            Step("assistant", "reply"),
            Step("aider", "quoted reply line"),
            Step("user", "again"),
        ),
        0,
    )
    long = "# aider chat started at 2026-01-01\n#### " + "y" * (STEP_LIMIT + 5) + "\n"
    long += "\n".join(f"> {n}\n\nreply {n}" for n in range(STEPS_LIMIT))
    steps, omitted = parse_trajectory(long.encode())
    assert (len(steps), omitted) == (STEPS_LIMIT, STEPS_LIMIT + 1)
    assert steps[0] == Step("user", f"{'y' * STEP_LIMIT}… ({STEP_LIMIT + 5} characters)")
    assert steps[-1] == Step("aider", f"{STEPS_LIMIT // 2 - 1}")


def test_gemini_streamed_pieces_are_one_message_and_failures_show() -> None:
    events = [
        {"type": "init", "timestamp": "t", "session_id": "s", "model": "m"},
        {"type": "message", "timestamp": "t", "role": "assistant", "content": "Let me ",
         "delta": True},
        {"type": "message", "timestamp": "t", "role": "assistant", "content": "look.",
         "delta": True},
        {"type": "tool_use", "timestamp": "t", "tool_name": "read_file", "tool_id": "1",
         "parameters": {"file_path": "a.py"}},
        {"type": "tool_result", "timestamp": "t", "tool_id": "1", "status": "error",
         "error": {"type": "file_not_found", "message": "no such file"}},
        {"type": "message", "timestamp": "t", "role": "assistant", "content": "Gone",
         "delta": True},
        {"type": "error", "timestamp": "t", "severity": "warning", "message": "loop detected"},
        {"type": "result", "timestamp": "t", "status": "error",
         "error": {"type": "FatalTurnLimitedError", "message": "too many turns"}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(event) for event in events).encode()
    assert parse_trajectory(data) == (
        (
            Step("assistant", "Let me look."),
            Step("assistant", '→ read_file({"file_path": "a.py"})'),
            Step("tool", "← no such file (error)"),
            Step("assistant", "Gone"),
            Step("error", "loop detected"),
            Step("result", "too many turns"),
        ),
        0,
    )


def test_opencode_failures_and_reasoning() -> None:
    def event(kind: str, part: dict[str, object]) -> dict[str, object]:
        return {"type": kind, "timestamp": 1, "sessionID": "s", "part": part}

    events = [
        event("step_start", {"type": "step-start"}),
        event("reasoning", {"type": "reasoning", "text": "hmm"}),
        event("tool_use", {"type": "tool", "tool": "bash", "state": {
            "status": "completed", "input": {"command": "false"}, "output": "",
            "metadata": {"exit": 1}}}),
        event("tool_use", {"type": "tool", "tool": "edit", "state": {
            "status": "error", "input": {"filePath": "a.py"}, "error": "no such file"}}),
        {"type": "error", "timestamp": 1, "sessionID": "s",
         "error": {"name": "APIError", "data": {"message": "rate limited"}}},
        {"type": "error", "timestamp": 1, "sessionID": "s", "error": {"name": "AbortedError"}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(e) for e in events).encode()
    assert parse_trajectory(data) == (
        (
            Step("reasoning", "hmm"),
            Step("tool", "→ bash(false)\n←  (exit 1)"),
            Step("tool", '→ edit({"filePath": "a.py"})\n← no such file (error)'),
            Step("error", "rate limited"),
            Step("error", "AbortedError"),
        ),
        0,
    )


def test_other_codex_items_and_failures() -> None:
    events = [
        {"type": "item.started", "item": {"id": "1", "type": "command_execution"}},
        {"type": "item.completed", "item": {"id": "2", "type": "reasoning", "text": "look"}},
        {
            "type": "item.completed",
            "item": {
                "id": "3",
                "type": "command_execution",
                "command": "false",
                "aggregated_output": "",
                "exit_code": 1,
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "4",
                "type": "file_change",
                "status": "completed",
                "changes": [{"path": "calc/__init__.py", "kind": "update"}],
            },
        },
        {"type": "item.completed", "item": {"id": "5", "type": "todo_list", "items": []}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 2}},
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
    ]
    data = "\n".join(json.dumps(event) for event in events).encode()
    assert parse_trajectory(data) == (
        (
            Step("reasoning", "look"),
            Step("agent", "→ command(false)\n←  (exit 1)"),
            Step("agent", "→ update calc/__init__.py"),
            Step("todo_list", '{"items": []}'),
            Step("error", "stream disconnected"),
        ),
        0,
    )


def test_claude_thinking_errors_and_other_blocks() -> None:
    lines = [
        {
            "type": "assistant",
            "session_id": "s",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "tool_use", "name": "Edit", "input": {"file_path": "a.py"}},
                    {"type": "image"},
                ],
            },
        },
        {
            "type": "user",
            "session_id": "s",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "content": [{"type": "text", "text": "no such file"}],
                        "is_error": True,
                    },
                ],
            },
        },
        {"type": "user", "session_id": "s", "message": {"role": "user", "content": "go on"}},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode()
    assert parse_trajectory(data)[0] == (
        Step("assistant", 'hmm\n→ Edit({"file_path": "a.py"})\n[image]'),
        Step("tool", "← no such file (error)"),
        Step("user", "go on"),
    )


def test_steps_and_texts_are_capped() -> None:
    events = [
        {"type": "item.completed", "item": {"type": "agent_message", "text": str(n)}}
        for n in range(STEPS_LIMIT + 5)
    ]
    steps, omitted = parse_trajectory("\n".join(json.dumps(e) for e in events).encode())
    assert (len(steps), omitted, steps[-1].text) == (STEPS_LIMIT, 5, str(STEPS_LIMIT - 1))
    long = {
        "messages": [{"role": "tool", "content": "", "extra": {"raw_output": "y" * STEP_LIMIT}}]
    }
    [step], _ = parse_trajectory(json.dumps(long).encode())
    assert step.text == f"← {'y' * (STEP_LIMIT - 2)}… ({STEP_LIMIT + 2} characters)"


def test_the_page_shows_a_harness_trajectory_escaped(tmp_path: Path) -> None:
    results = tmp_path / "results"
    logs = results / "logs" / "t1"
    logs.mkdir(parents=True)
    (logs / "cc-t1-a1.log").write_text("selfbench: verifier\n")
    (logs / "cc-t1-a1-agent.log").write_text("selfbench: agent exited 1\n")
    stream = (
        (DATA / "claude-code.jsonl")
        .read_text()
        .replace("git diff --stat", "echo '</pre><script>alert(1)</script>'")
    )
    (logs / "cc-t1-a1-trajectory.jsonl").write_text(stream)
    write_results(results, [failed("t1", "cc", log=str(logs / "cc-t1-a1-agent.log"))])
    out = tmp_path / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert "<summary>trajectory (6 steps)</summary>" in page
    assert '<span class="who">tool</span>' in page
    assert "<script" not in page
    assert re.search(r"→ Bash\(printf .* &gt;&gt; calc/__init__.py &amp;&amp; echo", page)
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_page_shows_aiders_chat_history_escaped(tmp_path: Path) -> None:
    results = tmp_path / "results"
    logs = results / "logs" / "t1"
    logs.mkdir(parents=True)
    (logs / "ai-t1-a1-agent.log").write_text("selfbench: agent exited 0\n")
    history = (DATA / "aider.md").read_text().replace("Adding it.", "</pre><script>x()</script>")
    (logs / "ai-t1-a1-trajectory.md").write_text(history)
    write_results(results, [failed("t1", "ai", log=str(logs / "ai-t1-a1-agent.log"))])
    out = tmp_path / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert 'href="results/logs/t1/ai-t1-a1-trajectory.md">trajectory</a>' in page
    assert "<summary>trajectory (6 steps)</summary>" in page
    assert '<span class="who">aider</span><pre>Tokens: 2.3k sent, 42 received.' in page
    assert "<script" not in page
    assert "&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;\n\ncalc/__init__.py" in page
    assert "    return a + b\n&gt;&gt;&gt;&gt;&gt;&gt;&gt; REPLACE\n```</pre>" in page


@pytest.mark.parametrize(
    "wrap",
    [
        '{"steps": [{"source": "agent", "message": %s}]}',
        '{"messages": [{"role": "assistant", "content": %s}]}',
        '{"type": "item.completed", "item": {"type": "other", "x": %s}}',
        '{"type": "assistant", "session_id": "s", "message": {"content": [%s]}}',
        '{"role": "assistant", "content": %s}',
        '{"type": "tool_use", "sessionID": "s", "part": {"tool": "bash", "state": {"input": %s}}}',
        '{"type": "tool_use", "timestamp": "t", "tool_name": "x", "parameters": %s}',
        '{"type": "message", "timestamp": "t", "role": "user", "content": %s, "delta": true}',
    ],
    ids=["atif", "mini-swe-agent", "codex", "claude", "lines", "opencode", "gemini", "delta"],
)
def test_a_trajectory_nested_too_deeply_is_no_crash(wrap: str) -> None:
    """An agent writes its trajectory: JSON nested past what Python's parser or encoder can
    recurse through shows as a step or none, never as a crash of the report."""
    for depth in range(940, 1040, 4):
        nested = "[" * depth + "]" * depth
        data = (wrap % nested).encode()
        steps, _ = parse_trajectory(data + b"\n" + data)
        assert all(len(step.text) <= STEP_LIMIT + 30 for step in steps)
    assert parse_trajectory(b"[" * 100_000) == ((), 0)
    assert parse_trajectory((wrap % ("[" * 100_000)).encode()) == ((), 0)
