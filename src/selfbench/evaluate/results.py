"""The results store: one JSON-lines file per evaluation, appended as trials finish.

`RESULTS_DIR/results.jsonl` starts with a header line naming the benchmark
(`{"kind": "benchmark", "benchmark": ID, "tasks": N}`), then one line per finished trial
(`"kind": "trial"`) or oracle re-check (`"kind": "recheck"`), and one line per task whose
`quality.json` the benchmark carries (`"kind": "quality"`: its verdict and reasons). A trial
whose patch the tamper scan found suspect carries the findings (`suspect`). A trial is keyed
by task digest, agent and trial number; a later line for a key replaces an earlier one (an
infrastructure failure retried on resume). Each line is written with one `write` and
flushed to disk, so a killed run loses at most the trials that were running.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import JsonObject, JsonValue
from selfbench.errors import EvalError, translating
from selfbench.evaluate.tamper import Finding, parse_finding

__all__ = [
    "RESULTS_FILE",
    "Classification",
    "QualityNote",
    "Recheck",
    "ResultsLog",
    "ResultsStore",
    "TrialKey",
    "TrialRecord",
    "open_results",
    "read_results",
]

RESULTS_FILE = "results.jsonl"

Classification = Literal["agent", "infrastructure", "task"]


@dataclass(frozen=True, slots=True)
class TrialKey:
    """What identifies a trial across runs."""

    digest: str
    agent: str
    trial: int


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """One finished trial."""

    task: str
    digest: str
    difficulty: str
    agent: str
    trial: int
    passed: bool
    classification: Classification | None
    """None when the trial passed."""
    reason: str | None
    reward: int | None = None
    tests: dict[str, str] = field(default_factory=dict)
    agent_exit: int | None = None
    agent_seconds: float | None = None
    verifier_seconds: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    attempts: int = 1
    environment: str = "local"
    network: str = "none"
    log: str = ""
    cause: str | None = None
    """The limit the agent's code ran into, when one struck (`TrialFacts.cause`)."""
    proof: str | None = None
    """The oracle's run that decided a trial with no verdict (`Proof.detail`)."""
    suspect: tuple[Finding, ...] = ()
    """The tamper scan's findings on the agent's patch (`evaluate.tamper`); they never change
    the verdict. Written only when there are some, so a clean trial's line is as it was."""

    @property
    def key(self) -> TrialKey:
        return TrialKey(self.digest, self.agent, self.trial)

    def to_json(self) -> JsonObject:
        value = {"kind": "trial", **asdict(self)}
        del value["suspect"]
        if self.suspect:
            value["suspect"] = [finding.to_json() for finding in self.suspect]
        return value


@dataclass(frozen=True, slots=True)
class Recheck:
    """The oracle run again on a task some agent failed: does the task still hold?"""

    task: str
    digest: str
    passed: bool
    reason: str | None

    def to_json(self) -> JsonObject:
        return {"kind": "recheck", **asdict(self)}


@dataclass(frozen=True, slots=True)
class QualityNote:
    """A task's quality verdict and its reasons, as the benchmark's `quality.json` gives them."""

    task: str
    digest: str
    verdict: str
    reasons: tuple[str, ...] = ()

    def to_json(self) -> JsonObject:
        return {"kind": "quality", **asdict(self), "reasons": list(self.reasons)}


@dataclass(frozen=True, slots=True)
class ResultsLog:
    """What a results file holds: the benchmark, the trials and re-checks, the lines skipped."""

    benchmark: str
    tasks: int
    trials: dict[TrialKey, TrialRecord]
    rechecks: dict[str, Recheck]
    corrupt: tuple[str, ...]
    """One line per line that was skipped: `FILE:LINE: why`."""
    quality: dict[str, QualityNote] = field(default_factory=dict)
    """The tasks' quality verdicts, by task digest (none for a benchmark without records)."""


_TRIAL_FIELDS = frozenset(TrialRecord.__dataclass_fields__)
_LATER_FIELDS = frozenset({"cause", "proof", "suspect"})
"""Fields a results file written before them does not have (their defaults apply); `suspect`
is left out of a trial without findings too."""
_RECHECK_FIELDS = frozenset(Recheck.__dataclass_fields__)


def _trial(value: dict[str, Any]) -> TrialRecord:
    fields = {key: item for key, item in value.items() if key != "kind"}
    if not _TRIAL_FIELDS - _LATER_FIELDS <= set(fields) <= _TRIAL_FIELDS:
        raise ValueError("not a trial record (its fields differ)")
    suspect = fields.pop("suspect", [])
    if not isinstance(suspect, list):
        raise TypeError("not a trial record (a field has the wrong type)")
    record = TrialRecord(**fields, suspect=tuple(parse_finding(item) for item in suspect))
    checks = (
        isinstance(record.task, str),
        isinstance(record.digest, str),
        isinstance(record.agent, str),
        isinstance(record.trial, int),
        isinstance(record.passed, bool),
        record.classification in (None, "agent", "infrastructure", "task"),
        isinstance(record.tests, dict),
        all(isinstance(item, str | None) for item in (record.cause, record.proof)),
    )
    if not all(checks):
        raise ValueError("not a trial record (a field has the wrong type)")
    return record


def _recheck(value: dict[str, Any]) -> Recheck:
    fields = {key: item for key, item in value.items() if key != "kind"}
    if set(fields) != _RECHECK_FIELDS or not isinstance(fields.get("passed"), bool):
        raise ValueError("not a recheck record")
    return Recheck(**fields)


def _header(line: str, where: str) -> tuple[str, int]:
    try:
        value = json.loads(line)
    except ValueError:
        value = None
    if (
        not isinstance(value, dict)
        or value.get("kind") != "benchmark"
        or not isinstance(value.get("benchmark"), str)
        or not isinstance(value.get("tasks"), int)
    ):
        raise EvalError(f"{where}:1: not a selfbench results file (no benchmark header)")
    return value["benchmark"], value["tasks"]


_VERDICTS = ("ship", "review", "reject")


def _quality(value: dict[str, JsonValue]) -> QualityNote:
    fields = {key: item for key, item in value.items() if key != "kind"}
    if set(fields) != {"task", "digest", "verdict", "reasons"}:
        raise ValueError("not a quality line (its fields differ)")
    task, digest, verdict, reasons = (fields[k] for k in ("task", "digest", "verdict", "reasons"))
    texts = [item for item in reasons if isinstance(item, str)] if isinstance(reasons, list) else []
    if not (
        isinstance(task, str)
        and isinstance(digest, str)
        and isinstance(verdict, str)
        and verdict in _VERDICTS
        and isinstance(reasons, list)
        and len(texts) == len(reasons)
    ):
        raise ValueError("not a quality line (a field has the wrong type)")
    return QualityNote(task, digest, verdict, tuple(texts))


def _record(line: str) -> TrialRecord | Recheck | QualityNote:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON (column {exc.colno})") from exc
    if not isinstance(value, dict):
        raise TypeError("not a JSON object")
    if value.get("kind") == "trial":
        return _trial(value)
    if value.get("kind") == "recheck":
        return _recheck(value)
    if value.get("kind") == "quality":
        return _quality(value)
    raise ValueError("unknown kind")


def read_results(results_dir: Path) -> ResultsLog:
    """Read `RESULTS_DIR/results.jsonl`; corrupt lines are listed and skipped, never merged.

    Raises:
        EvalError: the file cannot be read or has no benchmark header.
    """
    path = results_dir / RESULTS_FILE
    text = read_bytes(path, error=EvalError).decode("utf-8", errors="replace")
    lines = text.split("\n")
    benchmark, tasks = _header(lines[0], str(path))
    trials: dict[TrialKey, TrialRecord] = {}
    rechecks: dict[str, Recheck] = {}
    quality: dict[str, QualityNote] = {}
    corrupt: list[str] = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            record = _record(line)
        except (ValueError, TypeError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            corrupt.append(f"{path}:{number}: corrupt line skipped: {why[:120]}")
            continue
        if isinstance(record, TrialRecord):
            trials[record.key] = record
        elif isinstance(record, QualityNote):
            quality[record.digest] = record
        else:
            rechecks[record.digest] = record
    return ResultsLog(benchmark, tasks, trials, rechecks, tuple(corrupt), quality)


class ResultsStore:
    """Appends records to a results file, one flushed line each, from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, record: TrialRecord | Recheck | QualityNote) -> None:
        line = json.dumps(record.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(descriptor, line.encode("utf-8"))
                os.fsync(descriptor)
            finally:
                os.close(descriptor)


def open_results(
    results_dir: Path, *, benchmark: str, tasks: int
) -> tuple[ResultsStore, ResultsLog]:
    """Open (or start) the results of `benchmark` in `results_dir`; what it already holds.

    A file whose last line was cut by a kill is ended with a newline first, so the next line
    starts clean and the cut one is reported as corrupt.

    Raises:
        EvalError: the directory cannot be created, or holds results of another benchmark.
    """
    path = results_dir / RESULTS_FILE
    with translating(EvalError, f"write results to {results_dir}"):
        results_dir.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            header = {"benchmark": benchmark, "kind": "benchmark", "tasks": tasks}
            write_atomic(path, (json.dumps(header, sort_keys=True) + "\n").encode())
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            with path.open("ab") as handle:
                handle.write(b"\n")
    log = read_results(results_dir)
    if log.benchmark != benchmark:
        raise EvalError(
            f"{path}: results of another benchmark ({log.benchmark[:12]}, not {benchmark[:12]});"
            " use another --results directory"
        )
    return ResultsStore(path), log
