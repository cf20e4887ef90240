"""What a run directory says about its run, read without taking its lock (`selfbench status`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from selfbench._json import JsonObject, JsonValue
from selfbench.contract import DIFFICULTIES
from selfbench.errors import RunError
from selfbench.mine.candidate import CandidateModel
from selfbench.run.driver import (
    RunOptions,
    TierSummary,
    load_options,
    no_valid_run,
    tier_summaries,
)
from selfbench.run.state import STAGES, CandidateState, RunDirectory

__all__ = ["COLUMNS", "RunStatus", "read_status"]

COLUMNS = ("waiting", *STAGES, "accepted", "rejected", "unused")
"""The status table's columns: not started, at each stage (its next one), finished, and not
needed (not started when the run exported: its tier's budget was filled first)."""


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A run's options, per tier its counts at each stage, and every candidate's state."""

    run_dir: Path
    options: RunOptions
    mined: bool
    tiers: tuple[TierSummary, ...]
    table: dict[str, dict[str, int]]
    """tier → column (`COLUMNS`) → candidates."""
    states: tuple[CandidateState, ...]
    elapsed: float | None
    """Seconds from the run's start to its last event, or to now while it runs."""
    finished: bool
    """The run exported (its last event)."""
    running: bool = False
    """A process is running it now."""
    stopped: str | None = None
    """Why the run stopped, when its last event is a stop on the machine's fault (no sandbox, a
    Harbor that gives no verdict)."""
    doing: tuple[str, ...] = ()
    """While the run runs: the last heartbeat line (`selfbench.activity`) of each candidate
    whose stage has not moved on since."""

    @property
    def rejections(self) -> tuple[CandidateState, ...]:
        """The rejected candidates, by rank."""
        return tuple(state for state in self.states if state.status == "rejected")

    def to_json(self) -> JsonObject:
        """`selfbench status --json`."""
        return {
            "runDir": str(self.run_dir),
            "options": self.options.to_json(),
            "mined": self.mined,
            "finished": self.finished,
            "running": self.running,
            "stopped": self.stopped,
            "elapsedSeconds": self.elapsed,
            "doing": list(self.doing),
            "tiers": [
                {
                    "tier": tier.tier,
                    "budget": tier.budget,
                    "pool": tier.pool,
                    "accepted": tier.accepted,
                    "rejected": tier.rejected,
                    "blocked": tier.blocked,
                    "stages": self.table[tier.tier],
                }
                for tier in self.tiers
            ],
            "candidates": [state.to_json() for state in self.states],
        }


def _table(
    candidates: dict[str, CandidateModel], states: dict[str, CandidateState], *, finished: bool
) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {tier: dict.fromkeys(COLUMNS, 0) for tier in DIFFICULTIES}
    for cid, model in candidates.items():
        state = states.get(cid)
        if state is None or state.status == "pending":
            column = "unused" if finished else "waiting"
        elif state.finished:
            column = state.status
        else:
            column = state.next or "waiting"
        table[model.difficulty][column] += 1
    return table


@dataclass(frozen=True, slots=True)
class _Events:
    elapsed: float | None
    finished: bool
    stopped: str | None
    doing: tuple[str, ...]


def _events(run: RunDirectory, *, running: bool) -> _Events:
    """Seconds from the first event to the last (to now while the run is `running`), whether
    the last is the export, the error of a last event that is a stop, and (while `running`)
    each candidate's heartbeat line not followed by a step of its."""
    first: float | None = None
    last: float | None = None
    event: dict[str, JsonValue] = {}
    doing: dict[str, str] = {}
    for event in run.events():
        moment = event.get("time")
        if isinstance(moment, (int, float)):
            first = moment if first is None else first
            last = moment
        candidate, line = event.get("candidate"), event.get("line")
        if event.get("event") in ("started", "resumed"):
            doing.clear()  # a new process: the last one's lines are not of it
        elif event.get("event") == "doing" and isinstance(line, str):
            doing[str(candidate)] = line
        elif isinstance(candidate, str):
            doing.pop(candidate, None)
    if running and first is not None:
        last = max(last or first, time.time())
    elapsed = None if first is None or last is None else round(last - first, 1)
    stopped = event.get("error") if event.get("event") == "stopped" else None
    finished = event.get("event") == "exported"
    now = tuple(doing.values()) if running else ()
    return _Events(elapsed, finished, str(stopped) if stopped else None, now)


def read_status(run_dir: Path) -> RunStatus:
    """Read the run in `run_dir` as it stands (another process may be running it).

    Raises:
        RunError: `run_dir` holds no run, or its files are not a run's.
    """
    run = RunDirectory(run_dir)
    run.require_run()
    try:
        options = load_options(run.read_json(run.inputs_path), str(run.inputs_path))
    except RunError as exc:
        raise no_valid_run(run, str(exc)) from exc
    mined = run.pool_path.is_file()
    candidates: dict[str, CandidateModel] = {}
    if mined:
        for value in run.read_pool().candidates:
            model = CandidateModel.model_validate(value)
            candidates[model.id] = model
    states = {state.id: state for state in run.states()}
    running = run.in_use()
    events = _events(run, running=running)
    return RunStatus(
        run_dir=run.path,
        options=options,
        mined=mined,
        tiers=tier_summaries(options, candidates, states),
        table=_table(candidates, states, finished=events.finished),
        states=tuple(sorted(states.values(), key=lambda state: state.rank)),
        elapsed=events.elapsed,
        finished=events.finished,
        running=running,
        stopped=events.stopped,
        doing=events.doing,
    )
