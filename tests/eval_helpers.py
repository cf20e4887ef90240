"""Results files for the report tests, written by hand: records as `selfbench eval` appends them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from selfbench.evaluate.results import Recheck, TrialRecord, open_results

__all__ = ["BENCHMARK", "failed", "record", "write_results"]

BENCHMARK = "f" * 64


def record(task: str, agent: str, trial: int = 1, **changes: object) -> TrialRecord:
    """A passing local trial of `agent` on `task` (digest `d-<task>`), changed as given."""
    base = TrialRecord(
        task=task,
        digest=f"d-{task}",
        difficulty="easy",
        agent=agent,
        trial=trial,
        passed=True,
        classification=None,
        reason=None,
        reward=1,
        agent_exit=0,
        agent_seconds=10.0,
        verifier_seconds=5.0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def failed(task: str, agent: str, trial: int = 1, **changes: object) -> TrialRecord:
    """An agent failure: the tests ran and failed."""
    reason = "tests ran and failed: fail-to-pass"
    return record(task, agent, trial, passed=False, classification="agent", reason=reason,
                  reward=0, **changes)  # fmt: skip


def write_results(
    directory: Path,
    records: list[TrialRecord],
    rechecks: Sequence[Recheck] = (),
    tasks: int = 0,
) -> Path:
    """A results directory holding `records` and `rechecks`."""
    count = tasks or len({item.task for item in records})
    store, _ = open_results(directory, benchmark=BENCHMARK, tasks=count)
    for item in records:
        store.append(item)
    for check in rechecks:
        store.append(check)
    return directory
