"""A draft's runs as validation's evidence: which Beyond checks they already prove, and when.

`draft` runs the changed test files in the sandbox from one prepared tree: once at the base and
`--reruns` times with the gold patch, each run from a fresh copy, each file on its own and twice
in a row, and reads every test's outcome (`draft.run`). It keeps fail-to-pass only the tests
that failed (or were missing) at the base in every sample and passed in every gold sample, and
pass-to-pass only tests that passed in every sample, and it rejects any selected test whose
outcome changed (one the change does not reach is left out instead: `droppedFlaky`, which the
check's detail counts). That is what three of validation's Beyond checks ask, so when the
draft's record (`draft.json`, beside the definition) is of this very task, validation does not
run them again:

* *per selector at the base* and *with the gold patch*: each fail-to-pass test's own outcome in
  every sample (its file run on its own; selected one by one again only when there is no record);
* *independent rerun*: the draft's gold runs, each from a fresh copy of the prepared tree;
* *no flaky test*: the draft's samples, and the bundle's own runs below.

What it cannot show is run: the compiled bundle's `tests/test.sh` end to end, once at the base
(nop) and once with the gold (oracle, which repeats fail-to-pass itself), so the verdict, and
*the suite really ran*, still come from the bundle.

"Of this very task" (`observed_inputs`, written by `draft`, compared here): the same base
commit, workdir, setup and test commands and toolchains, the same test patch, every file of the
gold patch as the draft ran it (the quality step may leave files out, never change one), and
every selector one the draft chose. Anything else, and validation runs every check itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import read_bytes
from selfbench._json import JsonValue, iterated
from selfbench.artifacts.compiled import LocatedTask
from selfbench.artifacts.draft_record import (
    DRAFT_FILE,
    OBSERVED_KEY,
    TaskInputs,
    dropped_flaky,
    observed_inputs,
    read_draft_record,
)
from selfbench.artifacts.report import Check
from selfbench.bundle import layout
from selfbench.contract import TaskDefinition
from selfbench.errors import BundleError, TaskFileError

__all__ = ["DraftProof", "draft_proof"]


@dataclass(frozen=True, slots=True)
class DraftProof:
    """A draft's record that proves three Beyond checks for the task validated (see above)."""

    record: Path
    """The draft record (`draft.json` beside the definition): the details name it by its file
    name alone, so a report reads the same wherever the task was validated."""
    base_samples: int
    gold_runs: int
    gold_samples: int
    dropped_flaky: int = 0
    """Flaky tests the draft left out of pass-to-pass (none of them a selector)."""

    def selector_checks(self) -> tuple[Check, Check]:
        """Per selector at the base and with the gold patch, from the draft's samples."""
        seen = f"in its file's own run, as the draft saw it ({DRAFT_FILE})"
        return (
            Check(
                "per selector at the base",
                passed=True,
                detail=f"each selector's test failed in {self.base_samples} of "
                f"{self.base_samples} samples at the base {seen}",
            ),
            Check(
                "per selector with the gold patch",
                passed=True,
                detail=f"each selector's test passed in {self.gold_samples} of "
                f"{self.gold_samples} samples with the gold patch {seen}",
            ),
        )

    def rerun_check(self) -> Check:
        """The independent rerun: the draft's gold runs, each from a fresh copy."""
        return Check(
            "independent rerun",
            passed=True,
            detail=f"the draft's {self.gold_runs} runs with the gold patch, each from a fresh "
            f"copy of the prepared tree ({DRAFT_FILE})",
        )

    def flaky_detail(self) -> str:
        """What the no-flaky-test check saw besides the bundle's own runs."""
        samples = self.base_samples + self.gold_samples
        if self.dropped_flaky:
            return (
                f"and no selected test's outcome changed in the draft's {samples} samples "
                f"({DRAFT_FILE}; {self.dropped_flaky} flaky tests the change does not reach "
                "left out)"
            )
        return f"and no outcome changed in the draft's {samples} samples ({DRAFT_FILE})"


def draft_proof(located: LocatedTask, *, reruns: int) -> DraftProof | None:
    """The draft record beside the task's definition when it proves the checks above for this
    very task with at least the runs `--reruns` asks for (`reruns - 1` with the gold patch);
    None otherwise (no record, another task's, fewer runs, runs alone that stand for others,
    or one that does not parse)."""
    path = located.definition_path.parent / DRAFT_FILE
    try:
        record = read_draft_record(path.parent) if path.is_file() else None
        if not isinstance(record, dict) or record.get("reason") is not None:
            return None
        parts = _parts(record)
        if parts is None:
            return None
        observed, selectors, runs = parts
        same = _same_task(located, observed, selectors)
        names = [str(run.get("name", "")) for run in runs if isinstance(run, dict)]
        dropped = len(dropped_flaky(record))
    except (TaskFileError, BundleError, OSError, ValueError, KeyError, TypeError):
        return None
    base = sum(name.startswith("base") for name in names)
    gold = sum(name.startswith("gold-") for name in names)
    gold_runs = observed.get("goldRuns")
    if not isinstance(gold_runs, int) or not (same and base and gold):
        return None
    if gold_runs < max(1, reruns - 1):
        return None
    return DraftProof(path, base, gold_runs, gold, dropped)


_Parts = tuple[dict[str, JsonValue], dict[str, JsonValue], list[JsonValue]]


def _parts(record: Mapping[str, JsonValue]) -> _Parts | None:
    """The record's observed inputs, selectors and runs; None when one is not of its type, or
    when a file's runs were run alone (`draft.run.settled_alone`): they stand for runs whose
    outcomes changed, from fewer fresh copies than the draft's gold runs, so they prove none of
    the checks above, which validation then runs itself."""
    observed, selectors, runs = (
        record.get(OBSERVED_KEY),
        record.get("selectors"),
        record.get("runs"),
    )
    if not isinstance(observed, dict) or not isinstance(selectors, dict):
        return None
    if not isinstance(runs, list):
        return None
    alone = any(
        isinstance(run, dict)
        and any(isinstance(file, dict) and file.get("alone") for file in iterated(run.get("files")))
        for run in runs
    )
    return None if alone else (observed, selectors, runs)


def _same_task(
    located: LocatedTask, observed: Mapping[str, JsonValue], selectors: Mapping[str, JsonValue]
) -> bool:
    definition: TaskDefinition = located.definition
    test_patch = read_bytes(located.bundle / layout.TEST_PATCH, error=BundleError)
    gold_patch = read_bytes(located.bundle / layout.GOLD_PATCH, error=BundleError)
    task = TaskInputs(
        definition.baseCommit,
        definition.workdir,
        definition.setupCommand,
        definition.testCommand,
        definition.toolchains,
    )
    inputs = observed_inputs(task, test_patch, gold_patch, gold_runs=0)
    now = inputs.to_json()
    ran_gold = observed.get("goldFiles")
    if not isinstance(ran_gold, dict):
        return False
    same = all(observed.get(key) == now[key] for key in now if key not in ("goldFiles", "goldRuns"))
    gold_kept = all(ran_gold.get(path) == digest for path, digest in inputs.gold_files)
    fail = set(definition.failToPass) <= set(iterated(selectors.get("failToPass")))
    passing = set(definition.passToPass) <= set(iterated(selectors.get("passToPass")))
    return same and gold_kept and fail and passing
