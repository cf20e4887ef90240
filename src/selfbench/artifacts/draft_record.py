"""A draft record: `draft.json`, the evidence `selfbench draft` keeps beside the task it wrote.

It records what the draft observed (the runs, the decision, where the logs are), so that an
author or a reviewer can see why the task came out as it did. One writer, one reader.

Three of its members have a shape of their own, read back here: `passToPassBasis` (how the
pass-to-pass tests were chosen, a `PassToPassBasis`), `droppedFlaky` (each test the change
does not reach whose outcome changed between runs, left out of pass-to-pass: a `FlakyTest`) and
`rerunAlone` (each test the change may reach whose outcome changed between runs, and how it
fared when run again with the machine alone: an `AloneRerun`).

What a draft hands on is a `DraftEvidence`, built of small records; its `to_json` is the one
place their keys are spelled. A record read back from disk is JSON the readers here check.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from selfbench._fs import read_bytes
from selfbench._json import JsonObject, dumps_pretty, iterated
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.errors import TaskFileError
from selfbench.patches import parse_patch

__all__ = [
    "ALONE_KEY",
    "BASIS_KEY",
    "DRAFT_FILE",
    "DRAFT_SCHEMA_VERSION",
    "DROPPED_FLAKY_KEY",
    "OBSERVED_KEY",
    "AloneRerun",
    "DraftCommands",
    "DraftEvidence",
    "FileRunRecord",
    "FlakyTest",
    "ObservedInputs",
    "QualityNote",
    "RunRecord",
    "TaskInputs",
    "TierChange",
    "dropped_flaky",
    "observed_inputs",
    "pass_to_pass_basis",
    "read_draft_record",
    "render_draft_record",
    "reruns_alone",
]

DRAFT_FILE = "draft.json"
"""The sidecar beside a drafted task's files: the evidence and the draft marker."""


DRAFT_SCHEMA_VERSION = 1
_NOTE = "drafted by selfbench: the instruction is a draft for the author to rewrite"


def render_draft_record(evidence: DraftEvidence) -> bytes:
    """The bytes of `draft.json`: two-space indented JSON with a trailing newline."""
    return dumps_pretty(evidence.to_json()).encode("utf-8")


def read_draft_record(task_dir: Path) -> Any:
    """The decoded `draft.json` of a drafted task directory, read as the task's own files are
    (`_fs.read_bytes`: a symbolic link in its place is refused).

    Raises:
        TaskFileError: the file cannot be read, or is a link or not a regular file.
        ValueError: it is not JSON (or not UTF-8).
    """
    return json.loads(read_bytes(task_dir / DRAFT_FILE, error=TaskFileError).decode("utf-8"))


BASIS_KEY = "passToPassBasis"
"""The evidence's record of how pass-to-pass was chosen (a `PassToPassBasis`)."""


def pass_to_pass_basis(evidence: Mapping[str, object]) -> PassToPassBasis:
    """How a draft chose its pass-to-pass tests, from its evidence (`draft.json`'s content);
    basis `none` when the draft recorded none (rejected first, or drafted before it was kept).

    Raises:
        pydantic.ValidationError: the recorded basis is not one.
    """
    recorded = evidence.get(BASIS_KEY)
    if recorded is None:
        return PassToPassBasis(basis="none", detail="the draft recorded no basis")
    return PassToPassBasis.model_validate(recorded, strict=False)  # JSON arrays for tuples


DROPPED_FLAKY_KEY = "droppedFlaky"
"""The evidence's list of flaky tests left out of pass-to-pass (each a `FlakyTest`)."""


class FlakyTest(BaseModel):
    """A test (or a test file, when its exit status changed) whose outcome changed between
    the runs at one place, and how often it passed there."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    test: str
    """The test as a rejection names it: `<file>: <name>` (or the runner's id when it holds
    its file, `tests/test_a.py::test_x`), or the file alone."""
    where: Literal["base", "gold"]
    """Where it flipped: in the runs at the base, or in those with the gold patch."""
    passed: int
    runs: int


def dropped_flaky(evidence: Mapping[str, object]) -> tuple[FlakyTest, ...]:
    """The flaky tests a draft left out of pass-to-pass, from its evidence (none when it
    recorded none).

    Raises:
        pydantic.ValidationError: a recorded entry is not one.
    """
    entries = iterated(evidence.get(DROPPED_FLAKY_KEY))
    return tuple(FlakyTest.model_validate(entry) for entry in entries)


ALONE_KEY = "rerunAlone"
"""The evidence's list of tests run again alone (each an `AloneRerun`)."""


class AloneRerun(BaseModel):
    """A test the change may reach (or its file, when its exit status changed) whose outcome
    changed between the runs at one place while other runs shared the machine, and how often
    it passed when its file ran again with the machine alone. Steady alone (passed in every one
    of those runs: the machine's load can make a test fail, never pass), its file's runs alone
    stand for the others; otherwise it is flaky and rejects the candidate."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    test: str
    """As `FlakyTest.test`."""
    where: Literal["base", "gold"]
    passed: int
    runs: int
    alonePassed: int  # noqa: N815 - the record's camelCase, as its other members
    aloneRuns: int  # noqa: N815

    @property
    def steady(self) -> bool:
        """Whether it passed in every run alone."""
        return 0 < self.alonePassed == self.aloneRuns


def reruns_alone(evidence: Mapping[str, object]) -> tuple[AloneRerun, ...]:
    """The tests a draft ran again alone, from its evidence (none when it recorded none).

    Raises:
        pydantic.ValidationError: a recorded entry is not one.
    """
    return tuple(AloneRerun.model_validate(entry) for entry in iterated(evidence.get(ALONE_KEY)))


OBSERVED_KEY = "observed"
"""The evidence's record of the inputs the draft's runs were made with (`ObservedInputs`)."""


@dataclass(frozen=True, slots=True)
class TaskInputs:
    """The task's fields a draft's runs depend on."""

    base_commit: str
    workdir: str
    setup_command: str
    test_command: str
    toolchains: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ObservedInputs:
    """What a draft's runs were made with: validation compares them with the task it validates
    (`validate.evidence`), and counts the runs only for the very same task."""

    task: TaskInputs
    test_patch: str
    """The test patch's SHA-256."""
    gold_files: tuple[tuple[str, str], ...]
    """Each file's section of the gold patch, by its path, as a SHA-256 (in the patch's order)."""
    gold_runs: int
    """How many runs with the gold patch the draft made, each from a fresh copy."""

    def to_json(self) -> JsonObject:
        """The record's JSON form."""
        task = self.task
        return {
            "baseCommit": task.base_commit,
            "workdir": task.workdir,
            "setupCommand": task.setup_command,
            "testCommand": task.test_command,
            "toolchains": list(task.toolchains),
            "testPatch": self.test_patch,
            "goldFiles": dict(self.gold_files),
            "goldRuns": self.gold_runs,
        }


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def observed_inputs(
    task: TaskInputs, test_patch: bytes, gold_patch: bytes, *, gold_runs: int
) -> ObservedInputs:
    """What a draft's runs were made with (the task's fields as drafted, its patches), for its
    record; `gold_runs` is how many runs with the gold patch it made."""
    parsed = parse_patch(gold_patch, lenient=True)
    gold_files = {
        str(change.new_path or change.old_path): _sha256(gold_patch[change.start : change.end])
        for change in parsed.files
    }
    return ObservedInputs(
        task=task,
        test_patch=_sha256(test_patch),
        gold_files=tuple(gold_files.items()),
        gold_runs=gold_runs,
    )


@dataclass(frozen=True, slots=True)
class DraftCommands:
    """The commands a draft inferred (or was configured with), and where each came from."""

    setup_command: str
    test_command: str
    toolchains: tuple[str, ...]
    runner: str
    sources: tuple[tuple[str, str], ...]
    """Where each value came from, by definition key (`setupCommand`, …), in order."""

    def to_json(self) -> JsonObject:
        """The record's JSON form."""
        return {
            "setupCommand": self.setup_command,
            "testCommand": self.test_command,
            "toolchains": list(self.toolchains),
            "runner": self.runner,
            "sources": dict(self.sources),
        }


@dataclass(frozen=True, slots=True)
class FileRunRecord:
    """One test file's run in a sample: its exit status and each test's outcome."""

    file: str
    exit_code: int
    tests: tuple[tuple[str, str], ...]
    """`(name, outcome)` pairs as the runner reported them."""
    no_tests: str | None
    carried: bool = False
    carried_tests: int = 0
    alone: bool = False

    def to_json(self) -> JsonObject:
        """The record's JSON form (`carried`, `carriedTests` and `alone` only when set)."""
        return {
            "file": self.file,
            "exitCode": self.exit_code,
            "tests": dict(self.tests),
            "noTests": self.no_tests,
            **({"carried": True} if self.carried else {}),
            **({"carriedTests": self.carried_tests} if self.carried_tests else {}),
            **({"alone": True} if self.alone else {}),
        }


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One sample of a draft's runs (`base`, `gold-1 …`): each file's run."""

    name: str
    files: tuple[FileRunRecord, ...]

    def to_json(self) -> JsonObject:
        """The record's JSON form."""
        return {"name": self.name, "files": [run.to_json() for run in self.files]}


@dataclass(frozen=True, slots=True)
class TierChange:
    """The tier before and after a draft moved unneeded gold files out (None: no tier)."""

    before: str
    after: str | None


@dataclass(frozen=True, slots=True)
class QualityNote:
    """What a draft's quality check decided: its verdict, the files it moved out of the gold
    patch, and the tier change that made (only when it moved some)."""

    verdict: str
    moved: tuple[str, ...]
    difficulty: TierChange | None = None

    def to_json(self) -> JsonObject:
        """The record's JSON form."""
        note: JsonObject = {"verdict": self.verdict, "moved": list(self.moved)}
        if (change := self.difficulty) is not None:
            note["difficulty"] = {"before": change.before, "after": change.after}
        return note


@dataclass(frozen=True, slots=True)
class DraftEvidence:
    """A draft's evidence (`draft.json`): the commands, the selectors chosen, every run, and
    what the later steps added. A member None (or empty, for `python_retries`) is left out of
    the file, except `reason`, which is always written (null for a draft that succeeded)."""

    candidate: str
    commands: DraftCommands
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    runs: tuple[RunRecord, ...]
    reason: str | None
    dropped_flaky: tuple[FlakyTest, ...]
    rerun_alone: tuple[AloneRerun, ...]
    logs: str
    run_seconds: float
    basis: PassToPassBasis | None = None
    python_retries: tuple[str, ...] = ()
    """The Pythons tried before the one kept, each with why it was left (`_python`)."""
    observed: ObservedInputs | None = None
    quality: QualityNote | None = None
    total_seconds: float | None = None
    audit_warnings: tuple[str, ...] | None = None

    def to_json(self) -> JsonObject:
        """The record's JSON form, `draft.json`'s content: its keys in the file's order."""
        timings: dict[str, float] = {"runSeconds": self.run_seconds}
        if self.total_seconds is not None:
            timings["totalSeconds"] = self.total_seconds
        evidence: JsonObject = {
            "schemaVersion": DRAFT_SCHEMA_VERSION,
            "draft": True,
            "note": _NOTE,
            "candidate": self.candidate,
            "commands": self.commands.to_json(),
            "selectors": {
                "failToPass": list(self.fail_to_pass),
                "passToPass": list(self.pass_to_pass),
            },
            "runs": [run.to_json() for run in self.runs],
            "reason": self.reason,
            DROPPED_FLAKY_KEY: [test.model_dump(mode="json") for test in self.dropped_flaky],
            ALONE_KEY: [test.model_dump(mode="json") for test in self.rerun_alone],
            "logs": self.logs,
            "timings": timings,
        }
        if self.basis is not None:
            evidence[BASIS_KEY] = self.basis.model_dump(mode="json")
        if self.python_retries:
            evidence["pythonRetries"] = list(self.python_retries)
        if self.observed is not None:
            evidence[OBSERVED_KEY] = self.observed.to_json()
        if self.quality is not None:
            evidence["quality"] = self.quality.to_json()
        if self.audit_warnings is not None:
            evidence["auditWarnings"] = list(self.audit_warnings)
        return evidence
