"""What the report links from each non-pass: the trial's logs and its trajectory, found in the
results directory `selfbench eval` wrote.

A local trial's logs are `logs/<task>/<agent>-t<trial>-a<attempt>-agent.log` (the agent phase and
the agent's own output) and `…-a<attempt>.log` beside it (the verifier); its trajectory, when the
harness leaves one, is `…-a<attempt>-trajectory.json` (ATIF), `.jsonl` (the harness's own
lines) or `.md` (aider's chat history). A Harbor trial's log is in its trial directory under
`jobs/`, whose `agent/trajectory.json` is its trajectory. Links are relative to the page, so
the results directory and the page can move together; a trajectory is read without following a
link, at most `TRAJECTORY_LIMIT` bytes of it, and parsed as untrusted text (`parse_trajectory`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from selfbench._fs import read_beneath
from selfbench._json import JsonValue
from selfbench.errors import EvalError
from selfbench.evaluate.results import ResultsLog, TrialRecord

__all__ = [
    "STEPS_LIMIT",
    "STEP_LIMIT",
    "TRAJECTORY_LIMIT",
    "TRAJECTORY_SUFFIXES",
    "Step",
    "TrialFiles",
    "parse_trajectory",
    "read_trial_files",
]

TRAJECTORY_LIMIT = 2 << 20
"""Bytes of a trajectory file read at most."""
TRAJECTORY_SUFFIXES = (".json", ".jsonl", ".md")
"""A trajectory's file names end `trajectory` and one of these (ATIF, the harness's lines,
aider's chat history)."""
STEPS_LIMIT = 200
"""Steps of a trajectory shown at most."""
STEP_LIMIT = 2000
"""Characters of one step's text shown at most."""

_CODEX_EVENTS = ("thread", "turn", "item", "error")
"""The first word of a Codex `--json` event's type (`item.completed`, `turn.failed`, …)."""
_GEMINI_EVENTS = ("init", "message", "tool_use", "tool_result", "error", "result")
"""The types of Gemini CLI's `stream-json` events."""
_AIDER_HEADING = "# aider chat started at "
"""How each session of aider's chat history begins."""
_ROOTS = ("logs", "jobs")
"""The results directory's subdirectories a trial's log lies in."""


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a trajectory: who spoke and what, as plain (unescaped) text."""

    source: str
    text: str


@dataclass(frozen=True, slots=True)
class TrialFiles:
    """A trial's links (label, href relative to the page) and its trajectory's steps."""

    links: tuple[tuple[str, str], ...] = ()
    steps: tuple[Step, ...] = ()
    omitted: int = 0
    """Steps past `STEPS_LIMIT`, or 1 when the file was cut at `TRAJECTORY_LIMIT`."""


def _cap(text: str) -> str:
    return text if len(text) <= STEP_LIMIT else f"{text[:STEP_LIMIT]}… ({len(text)} characters)"


def _part_text(part: dict[str, JsonValue]) -> str:
    """A content part's text, or `[image]` and the like for a part without one."""
    text = part.get("text")
    return text if isinstance(text, str) else f"[{part.get('type', 'part')}]"


def _text(value: JsonValue) -> str:
    """Readable text of a JSON value: a string as it is, a list of content parts as their
    texts (`[image]` and the like for the others), anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        parts = [part for part in value if isinstance(part, dict)]
        if len(parts) == len(value):
            return "\n".join(_part_text(part) for part in parts)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except RecursionError:
        return "[nested too deeply]"


def _atif_step(step: dict[str, JsonValue]) -> Step:
    """An ATIF step: its message, each tool call (`name(arguments)`) and each observation."""
    parts = [_text(step[key]) for key in ("reasoning_content", "message") if step.get(key)]
    calls = step.get("tool_calls")
    parts += [
        f"→ {_text(call.get('function_name'))}({_text(call.get('arguments'))})"
        for call in (calls if isinstance(calls, list) else [])
        if isinstance(call, dict)
    ]
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    parts += [
        f"← {_text(result['content'])}"
        for result in (results if isinstance(results, list) else [])
        if isinstance(result, dict) and result.get("content") is not None
    ]
    return Step(_text(step.get("source", "step")), _cap("\n".join(parts)))


def _loads(text: str) -> JsonValue:
    """The JSON value of `text`; None when it is not JSON or nests too deeply to parse."""
    try:
        value: JsonValue = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value


def _call(name: JsonValue, arguments: JsonValue) -> str:
    """A tool call as `→ name(arguments)`: a shell tool's `command` alone (its arguments given
    as an object or as JSON text), any other arguments as they are."""
    if isinstance(arguments, str):
        arguments = _loads(arguments) or arguments
    if isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        arguments = arguments["command"]
    return f"→ {_text(name)}({_text(arguments)})"


def _message_step(message: dict[str, JsonValue]) -> Step | None:
    """A chat message of mini-swe-agent's trajectory (OpenAI's shape): its text, each tool call
    and, for a tool's reply, its raw output; its exit status at the end. None: an empty one."""
    found = message.get("extra")
    extra: dict[str, JsonValue] = found if isinstance(found, dict) else {}
    role = _text(message.get("role", "message"))
    content = extra.get("raw_output") if role == "tool" and "raw_output" in extra else None
    parts = [f"← {_text(content)}"] if content is not None else []
    if not parts and message.get("content"):
        parts.append(_text(message["content"]))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(_call(function.get("name"), function.get("arguments")))
    if extra.get("exit_status"):
        parts.append(f"exit: {_text(extra['exit_status'])}")
    return Step(role, _cap("\n".join(parts))) if parts else None


def _codex_item(item: dict[str, JsonValue]) -> tuple[str, str]:
    """A completed Codex item as (source, text): its message or reasoning, a command with its
    output, file changes, a tool call, an error; another kind as its fields."""
    what = _text(item.get("type", "item"))
    if what in ("agent_message", "reasoning"):
        return ("agent" if what == "agent_message" else what), _text(item.get("text", ""))
    if what == "command_execution":
        code = item.get("exit_code")
        status = f" (exit {code})" if code not in (0, None) else ""
        output = _text(item.get("aggregated_output", ""))
        return "agent", f"{_call('command', item.get('command'))}\n← {output}{status}"
    if what == "file_change":
        changes = item.get("changes")
        return "agent", "\n".join(
            f"→ {_text(change.get('kind'))} {_text(change.get('path'))}"
            for change in (changes if isinstance(changes, list) else [])
            if isinstance(change, dict)
        )
    if what == "mcp_tool_call":
        return "agent", _call(item.get("tool"), item.get("arguments"))
    if what == "error":
        return "error", _text(item.get("message", ""))
    return what, _text({key: value for key, value in item.items() if key not in ("id", "type")})


def _codex_step(event: dict[str, JsonValue]) -> Step | None:
    """A Codex `--json` event: each completed item (`_codex_item`) and each failure; None for
    the rest (starts, usage)."""
    kind = event.get("type")
    if kind in ("turn.failed", "error"):
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else event.get("message")
        return Step("error", _cap(_text(message)))
    item = event.get("item")
    if kind != "item.completed" or not isinstance(item, dict):
        return None
    source, text = _codex_item(item)
    return Step(source, _cap(text))


def _block(block: JsonValue) -> str:
    """A content block of a Claude message: text, thinking, a tool use or a tool's result."""
    if not isinstance(block, dict):
        return _text(block)
    kind = block.get("type")
    if kind == "tool_use":
        return _call(block.get("name"), block.get("input"))
    if kind == "tool_result":
        failed = " (error)" if block.get("is_error") is True else ""
        return f"← {_text(block.get('content', ''))}{failed}"
    if isinstance(kind, str) and isinstance(block.get(kind), str):  # text, thinking
        return str(block[kind])
    return f"[{_text(kind)}]"


def _claude_step(event: dict[str, JsonValue]) -> Step | None:
    """A Claude Code `stream-json` line: an assistant message (text, tool uses), a user message
    (the tools' results: source `tool`), the final result; None for the rest (init)."""
    kind = event.get("type")
    if kind == "result":
        return Step("result", _cap(_text(event.get("result") or event.get("subtype", ""))))
    message = event.get("message")
    if kind not in ("assistant", "user") or not isinstance(message, dict):
        return None
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content]
    results = all(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
    source = "tool" if kind == "user" and results else _text(kind)
    return Step(source, _cap("\n".join(_block(block) for block in blocks)))


def _opencode_step(event: dict[str, JsonValue]) -> Step | None:
    """An OpenCode `--format json` event: a text or reasoning part, a tool use (the call, its
    output, a non-zero exit or its error), the end of a model step (why, its tokens), an error
    (its message, else its name); None for the rest (a step's start)."""
    kind = event.get("type")
    found = event.get("part")
    part: dict[str, JsonValue] = found if isinstance(found, dict) else {}
    if kind in ("text", "reasoning"):
        return Step("assistant" if kind == "text" else "reasoning", _cap(_text(part.get("text"))))
    if kind == "tool_use":
        found = part.get("state")
        state: dict[str, JsonValue] = found if isinstance(found, dict) else {}
        metadata = state.get("metadata")
        code = metadata.get("exit") if isinstance(metadata, dict) else None
        status = f" (exit {_text(code)})" if code not in (0, None) else ""
        if state.get("status") == "error":
            result, status = state.get("error", ""), " (error)"
        else:
            result = state.get("output", "")
        call = _call(part.get("tool"), state.get("input"))
        return Step("tool", _cap(f"{call}\n← {_text(result)}{status}"))
    if kind == "step_finish":
        tokens = part.get("tokens")
        total = tokens.get("total") if isinstance(tokens, dict) else None
        counted = f" ({_text(total)} tokens)" if total is not None else ""
        return Step("step", _cap(f"end: {_text(part.get('reason', ''))}{counted}"))
    if kind == "error":
        error = event.get("error")
        data = error.get("data") if isinstance(error, dict) else None
        message = data.get("message") if isinstance(data, dict) else None
        if message is None and isinstance(error, dict):
            message = error.get("name")
        return Step("error", _cap(_text(error if message is None else message)))
    return None


def _gemini_step(event: dict[str, JsonValue]) -> Step | None:
    """A Gemini CLI `stream-json` event: a message (its role, its text), a tool use (the call),
    a tool's result (its output or error: source `tool`), the final result (its status or
    error); None for the rest (init). Its `error` events read as Codex's do (`_codex_step`)."""
    kind = event.get("type")
    error = event.get("error")
    problem = _text(error.get("message", error) if isinstance(error, dict) else error)
    if kind == "message":
        source, text = _text(event.get("role", "message")), _text(event.get("content", ""))
    elif kind == "tool_use":
        source, text = "assistant", _call(event.get("tool_name"), event.get("parameters"))
    elif kind == "tool_result":
        failed = event.get("status") == "error" or error is not None
        output = f"{problem} (error)" if failed else _text(event.get("output", ""))
        source, text = "tool", f"← {output}"
    elif kind == "result":
        source, text = "result", problem if error is not None else _text(event.get("status"))
    else:
        return None
    return Step(source, _cap(text))


def _line_step(value: dict[str, JsonValue]) -> Step | None:
    """A line of a harness's own JSON lines: Codex's events, Claude Code's stream, OpenCode's
    and Gemini CLI's events, else its role or type and its content. None: a line that shows
    nothing (a start, a usage count)."""
    kind = value.get("type")
    if "sessionID" in value and (isinstance(value.get("part"), dict) or kind == "error"):
        return _opencode_step(value)
    if isinstance(kind, str) and kind.split(".")[0] in _CODEX_EVENTS:
        return _codex_step(value)
    if kind in ("system", "assistant", "user", "result") and "session_id" in value:
        return _claude_step(value)
    if kind in _GEMINI_EVENTS and "timestamp" in value:
        return _gemini_step(value)
    source = value.get("role") or kind or "event"
    body = next((value[k] for k in ("content", "message", "text") if k in value), value)
    return Step(_text(source), _cap(_text(body)))


def _document_steps(document: JsonValue) -> list[Step] | None:
    """The steps of a one-document trajectory: ATIF's `steps` or mini-swe-agent's `messages`;
    None for any other document."""
    if not isinstance(document, dict):
        return None
    steps, messages = document.get("steps"), document.get("messages")
    if isinstance(steps, list):
        return [_atif_step(step) for step in steps if isinstance(step, dict)]
    if isinstance(messages, list):
        found = [_message_step(m) for m in messages if isinstance(m, dict)]
        return [step for step in found if step is not None]
    return None


def _joined_deltas(values: list[dict[str, JsonValue]]) -> list[dict[str, JsonValue]]:
    """The lines with each run of Gemini CLI's streamed pieces of one message (`delta`, one
    role) joined into one message."""
    joined: list[dict[str, JsonValue]] = []
    pieces: list[str] = []
    for value in values:
        delta = value.get("type") == "message" and value.get("delta") is True
        content = value.get("content")
        if delta and isinstance(content, str):
            previous = joined[-1] if joined and pieces else None
            if previous is not None and previous.get("role") == value.get("role"):
                pieces.append(content)
                continue
            if previous is not None:
                previous["content"] = "".join(pieces)
            pieces = [content]
            joined.append(dict(value))
            continue
        if pieces:
            joined[-1]["content"] = "".join(pieces)
            pieces = []
        joined.append(value)
    if pieces:
        joined[-1]["content"] = "".join(pieces)
    return joined


def _aider_steps(text: str) -> list[Step]:
    """The steps of aider's chat history: each run of `#### ` lines a `user` step, of `> ` lines
    (aider's own output: its notices, the edits it applied) an `aider` step, of other lines (the
    model's replies, their edit blocks) an `assistant` step; its sessions' headings skipped."""
    runs: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(_AIDER_HEADING):
            runs.append(("", []))
            continue
        body = line
        if line.startswith("#### "):
            source, body = "user", line[5:].rstrip()
        elif line.startswith("> "):
            source, body = "aider", line[2:].rstrip()
        elif line.strip() or not runs:
            source = "assistant" if line.strip() else ""
        else:
            source = runs[-1][0]  # a blank line belongs to the run it is in
        if not runs or runs[-1][0] != source:
            runs.append((source, []))
        runs[-1][1].append(body)
    steps = [Step(source, _cap("\n".join(lines).strip("\n"))) for source, lines in runs if source]
    return [step for step in steps if step.text]


def parse_trajectory(data: bytes) -> tuple[tuple[Step, ...], int]:
    """The steps of a trajectory (pure), and how many more were left out (`STEPS_LIMIT`).

    One JSON document is ATIF (a `steps` list: one step per entry) or mini-swe-agent's (a
    `messages` list: one step per message); anything else is read as JSON lines, one step per
    object line that shows something (other lines are skipped): Codex's `--json` events (one
    per completed item), Claude Code's `stream-json` messages, OpenCode's `--format json`
    events (one per part: text, tool use, a step's end), Gemini CLI's `stream-json` events (one
    per message, its streamed pieces joined, tool use, tool result), or any harness's lines
    (role or type, content). Text whose first line is aider's `# aider chat started at` heading
    is aider's chat history (`_aider_steps`). A step reads as text, `→ tool(arguments)` for a
    call (a shell command alone) and `← output` for its result. Texts are cut at `STEP_LIMIT`
    characters; nothing in the file is trusted or interpreted.
    """
    text = data.decode("utf-8", errors="replace")
    steps = _document_steps(_loads(text))
    if steps is None and text.lstrip().startswith(_AIDER_HEADING):
        steps = _aider_steps(text)
    if steps is None:
        values = [value for value in map(_loads, text.splitlines()) if isinstance(value, dict)]
        found = (_line_step(value) for value in _joined_deltas(values))
        steps = [step for step in found if step is not None]
    return tuple(steps[:STEPS_LIMIT]), max(0, len(steps) - STEPS_LIMIT)


def _relative(results_dir: Path, log: str) -> PurePosixPath | None:
    """The log's path inside the results directory, wherever eval ran: from the last `logs` or
    `jobs` component on, when that file or directory is there."""
    parts = PurePosixPath(log).parts
    if ".." in parts:
        return None  # a link that climbs out of the results directory is no trial's log
    for index in range(len(parts) - 1, -1, -1):
        if parts[index] in _ROOTS:
            inside = PurePosixPath(*parts[index:])
            if (results_dir / inside).exists():
                return inside
    return None


def _href(results_dir: Path, inside: PurePosixPath, page_dir: Path) -> str:
    path = os.path.relpath(results_dir.resolve() / inside, page_dir.resolve())
    return quote(PurePosixPath(Path(path).as_posix()).as_posix())


def _candidates(inside: PurePosixPath) -> tuple[list[tuple[str, PurePosixPath]], list[str]]:
    """The trial's logs besides the recorded one (label, path) and its trajectory's paths."""
    name = inside.name
    if inside.parts[0] == "logs" and name.endswith("-agent.log"):
        stem = name.removesuffix("-agent.log")
        logs = [("verifier log", inside.with_name(f"{stem}.log"))]
        names = [f"{stem}-trajectory{suffix}" for suffix in TRAJECTORY_SUFFIXES]
        return logs, [str(inside.with_name(name)) for name in names]
    trial = inside.parent.parent if inside.parent.name == "verifier" else inside
    return [], [str(trial / "agent" / "trajectory.json")]


def _files(record: TrialRecord, results_dir: Path, page_dir: Path) -> TrialFiles:
    inside = _relative(results_dir, record.log)
    if inside is None:
        return TrialFiles()
    label = "agent log" if inside.name.endswith("-agent.log") else "log"
    extra, trajectories = _candidates(inside)
    links = [(label, _href(results_dir, inside, page_dir))]
    links += [
        (what, _href(results_dir, p, page_dir)) for what, p in extra if (results_dir / p).is_file()
    ]
    for candidate in trajectories:
        try:
            data = read_beneath(results_dir, candidate, error=EvalError, limit=TRAJECTORY_LIMIT + 1)
        except (EvalError, ValueError):
            continue
        if data is None:
            continue
        steps, omitted = parse_trajectory(data[:TRAJECTORY_LIMIT])
        cut = 1 if len(data) > TRAJECTORY_LIMIT else 0
        href = _href(results_dir, PurePosixPath(candidate), page_dir)
        return TrialFiles((*links, ("trajectory", href)), steps, omitted + cut)
    return TrialFiles(tuple(links))


def read_trial_files(
    log: ResultsLog, results_dir: Path, *, page_dir: Path
) -> dict[tuple[str, str, int], TrialFiles]:
    """For each trial that did not pass, keyed by (task, agent, trial): its logs, linked
    relative to `page_dir`, and its trajectory's steps when the harness wrote one."""
    return {
        (record.task, record.agent, record.trial): _files(record, results_dir, page_dir)
        for record in log.trials.values()
        if not record.passed
    }
