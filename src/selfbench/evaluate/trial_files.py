"""What the report links from each non-pass: the trial's logs and its trajectory, found in the
results directory `selfbench eval` wrote.

A local trial's logs are `logs/<task>/<agent>-t<trial>-a<attempt>-agent.log` (the agent phase and
the agent's own output) and `…-a<attempt>.log` beside it (the verifier); its trajectory, when the
harness leaves one, is `…-a<attempt>-trajectory.json` (ATIF) or `.jsonl` (the harness's own
lines). A Harbor trial's log is in its trial directory under `jobs/`, whose
`agent/trajectory.json` is its trajectory. Links are relative to the page, so the results
directory and the page can move together; a trajectory is read without following a link, at
most `TRAJECTORY_LIMIT` bytes of it, and parsed as untrusted text (`parse_trajectory`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from selfbench._fs import read_beneath
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
TRAJECTORY_SUFFIXES = (".json", ".jsonl")
"""A trajectory's file names end `trajectory` and one of these (ATIF, the harness's lines)."""
STEPS_LIMIT = 200
"""Steps of a trajectory shown at most."""
STEP_LIMIT = 2000
"""Characters of one step's text shown at most."""

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


def _text(value: Any) -> str:
    """Readable text of a JSON value: a string as it is, a list of content parts as their
    texts (`[image]` and the like for the others), anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(part, dict) for part in value):
        return "\n".join(
            part["text"] if isinstance(part.get("text"), str) else f"[{part.get('type', 'part')}]"
            for part in value
        )
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _atif_step(step: dict[str, Any]) -> Step:
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


def _line_step(value: dict[str, Any]) -> Step:
    """A line of a harness's own JSON lines: its role or type, and its content."""
    source = value.get("role") or value.get("type") or "event"
    body = next((value[k] for k in ("content", "message", "text") if k in value), value)
    return Step(_text(source), _cap(_text(body)))


def parse_trajectory(data: bytes) -> tuple[tuple[Step, ...], int]:
    """The steps of a trajectory (pure), and how many more were left out (`STEPS_LIMIT`).

    An ATIF document (one JSON object with a `steps` list) gives one step per entry; anything
    else is read as JSON lines, one step per object line (other lines are skipped). Texts are
    cut at `STEP_LIMIT` characters; nothing in the file is trusted or interpreted.
    """
    text = data.decode("utf-8", errors="replace")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict) and isinstance(document.get("steps"), list):
        steps = [_atif_step(step) for step in document["steps"] if isinstance(step, dict)]
    else:
        steps = []
        for line in text.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                steps.append(_line_step(value))
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
