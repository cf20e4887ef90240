"""A quality record (SPEC §13): `quality.json`, its one writer and its one reader.

`selfbench quality` (and `draft`, `run`) writes it beside a task's `definition.json`; the review
page shows it first, `report` shows its verdict, and an export carries it (its digest is in the
export's verification). The verdict rule itself lives in `selfbench.quality.verdict`; this module
only owns the file's shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import dumps_pretty, loads_strict
from selfbench.errors import JsonError, QualityError, translating
from selfbench.rules import describe_error

__all__ = [
    "QUALITY_FILE",
    "QUALITY_SCHEMA_VERSION",
    "Ablation",
    "AddedDependency",
    "Dependencies",
    "EquivalentVariant",
    "Equivalents",
    "FailedEquivalent",
    "GoldPart",
    "InstructionCheck",
    "InterfaceItem",
    "Mutation",
    "PassToPassBasis",
    "QualityRecord",
    "StatementAblation",
    "SurvivingMutant",
    "TestsCheck",
    "UnneededStatement",
    "Verdict",
    "parse_quality",
    "read_quality",
    "render_quality",
    "write_quality",
]

QUALITY_FILE = "quality.json"
"""The quality record beside a task's `definition.json`."""
QUALITY_SCHEMA_VERSION = 1

Verdict = Literal["ship", "review", "reject"]


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


class GoldPart(_Record):
    """One part of the gold patch that ablation reverted: a whole file, or one of its hunks."""

    path: str
    hunk: int | None = None
    """The hunk's index in its file section (0-based); None for the whole file."""
    lines: str | None = None
    """`@@ -a,b +c,d @@` of the hunk, for a reader to find it."""
    implementation: bool
    """False for configuration, CI, docs, changelogs and examples (the parts draft moves out)."""
    needed: bool
    """Some fail-to-pass test failed with this part reverted."""


class Ablation(_Record):
    """Gold minimality: every gold file and hunk reverted on its own."""

    parts: tuple[GoldPart, ...] = ()
    moved: tuple[str, ...] = ()
    """Unneeded non-implementation files `draft` moved out of the gold patch."""
    unneeded: tuple[str, ...] = ()
    """Unneeded parts still in the gold (`path` or `path#hunk`), reported, not moved."""
    difficulty: Literal["easy", "medium", "hard"] | None = None
    """The tier recomputed from what is left, when a file was moved."""
    statements: StatementAblation | None = None
    """Each changed statement of the needed implementation removed on its own (None: not run,
    as in a record written before statement ablation was)."""


class UnneededStatement(_Record):
    """A changed statement every fail-to-pass test still passes without."""

    path: str
    line: int
    statement: str
    """Its first line, on one line, shortened."""


class StatementAblation(_Record):
    """Statement ablation: the changed statements of the implementation parts some test needs,
    each removed on its own (`pass` or `;` in its place), or judged by the deletion mutant that
    is the same removal."""

    found: int = 0
    """The changed statements that could be removed."""
    mutants: int = 0
    """Of those, the ones a deletion mutant that ran already judged (not run again)."""
    ran: int = 0
    """The ones removed and run here (at most the cap)."""
    capped: bool = False
    """Some were neither judged by a mutant nor run: more than the cap allows."""
    unneeded: tuple[UnneededStatement, ...] = ()
    """The ones no fail-to-pass test needs (one inside another listed is left out)."""
    skipped: bool = False
    """Not run: the verdict was review or reject without it (its row could add no more)."""


class SurvivingMutant(_Record):
    """A mutant no fail-to-pass test killed."""

    path: str
    line: int
    operator: str
    description: str


class Mutation(_Record):
    """Test strength: mutants of the gold's changed lines, applied on top of the gold."""

    generated: int
    killed: int
    score: float | None
    """killed / generated, None when nothing could be mutated."""
    capped: bool = False
    """More mutants could be made than the cap allows; a fixed-seed sample of them ran."""
    stopped_early: bool = Field(default=False, alias="stoppedEarly")
    """The run stopped once the verdict could not change; `generated` counts those that ran."""
    survivors: tuple[SurvivingMutant, ...] = ()
    """The mutants every fail-to-pass test passes and the pass-to-pass tests do not fail (or
    were not run on)."""
    caught_by_pass_to_pass: tuple[SurvivingMutant, ...] = Field(
        default=(), alias="caughtByPassToPass"
    )
    """The mutants every fail-to-pass test passes and a pass-to-pass test fails: the verifier
    scores them 0 all the same, so the verdict counts them killed (`score` does not)."""
    note: str = "equivalent mutants are not removed: a survivor may behave as the gold does"

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", populate_by_name=True)

    @property
    def verifier_score(self) -> float | None:
        """The share of the mutants the whole verifier scores 0: killed by fail-to-pass, or
        caught by pass-to-pass; None when nothing could be mutated."""
        if not self.generated:
            return None
        return (self.killed + len(self.caught_by_pass_to_pass)) / self.generated


class PassToPassBasis(_Record):
    """How the pass-to-pass tests were chosen."""

    basis: Literal["coverage", "changed test files", "neighbours", "none", "authored"]
    detail: str = ""
    selected: tuple[str, ...] = ()


class InterfaceItem(_Record):
    """A public name the fail-to-pass tests use and the gold adds or changes."""

    name: str
    kind: str
    """function, method, class, option, flag, constant."""
    signature: str
    path: str


class InstructionCheck(_Record):
    """What the instruction says of what the tests check."""

    interface: tuple[InterfaceItem, ...] = ()
    missing: tuple[str, ...] = ()
    """Interface items (by `name`) and asserted behaviours the instruction does not state."""
    strays: tuple[str, ...] = ()
    """Names its first line gives as code that the gold leaves as they were and no test uses,
    while it names nothing the gold changes: a title about something else."""


class TestsCheck(_Record):
    """What the fail-to-pass tests show a reviewer of themselves, beside their runs."""

    __test__ = False  # not a pytest class, though its name starts with `Test`

    privateState: tuple[str, ...] = ()  # noqa: N815 - the file's own field name
    """Attribute reads of private names the gold's files define (`lock._waiters`): the tests
    pin an implementation detail no instruction can ask for."""
    timing: tuple[str, ...] = ()
    """Fail-to-pass tests that wait on a real clock, each with what it calls (`time.sleep(`)."""
    seeded: tuple[str, ...] = ()
    """Fail-to-pass tests that seed a random generator the gold draws from (`random.seed(`)."""
    wholeFiles: tuple[str, ...] = ()  # noqa: N815
    """Fail-to-pass selectors that are whole files holding tests that pass without the change,
    each with how many (`test/a.test.ts (12 pass at the base)`)."""


class AddedDependency(_Record):
    """A package the gold adds to a dependency manifest."""

    manifest: str
    name: str


class Dependencies(_Record):
    added: tuple[AddedDependency, ...] = ()
    agent: bool = False
    """`--deps agent`: the new dependencies are installed in the agent's tree too."""


EquivalentVariant = Literal["comments", "reformatted", "renamed"]
"""How a file was rewritten without changing what it does (`selfbench.quality.equivalents`)."""


class FailedEquivalent(_Record):
    """A changed implementation file rewritten one way that fails a fail-to-pass test."""

    path: str
    variant: EquivalentVariant


class Equivalents(_Record):
    """Coupling to the source text: the gold's changed implementation files rewritten without
    changing what they do (comments dropped, reformatted, locals renamed)."""

    run: int = 0
    """The variants (a file rewritten one way) that ran."""
    unjudged: int = 0
    """Of those, the ones whose run could not be judged (a timeout, no reward)."""
    failed: tuple[FailedEquivalent, ...] = ()
    """The ones a fail-to-pass test failed: the tests pin the gold's text, not its behaviour."""


class QualityRecord(_Record):
    """`quality.json`."""

    schemaVersion: Literal[1] = 1  # noqa: N815 - the file's own field name
    taskId: str  # noqa: N815
    verdict: Verdict
    reasons: tuple[str, ...] = ()
    ablation: Ablation | None = None
    mutation: Mutation | None = None
    passToPass: PassToPassBasis | None = None  # noqa: N815
    instruction: InstructionCheck | None = None
    tests: TestsCheck | None = None
    dependencies: Dependencies = Dependencies()
    equivalents: Equivalents | None = None
    seconds: float = 0.0


def render_quality(record: QualityRecord) -> bytes:
    """The bytes of `quality.json`: two-space indented JSON with a trailing newline."""
    return dumps_pretty(record.model_dump(mode="json", by_alias=True)).encode("utf-8")


def write_quality(directory: Path, record: QualityRecord) -> Path:
    """Write `directory/quality.json` atomically.

    Raises:
        QualityError: the file cannot be written.
    """
    path = directory / QUALITY_FILE
    with translating(QualityError, f"write {path}"):
        write_atomic(path, render_quality(record))
    return path


def parse_quality(data: bytes, *, source: str) -> QualityRecord:
    """Check the bytes of a `quality.json` (JSON arrays are the record's tuples).

    Raises:
        QualityError: not JSON, or not a quality record (one line, naming `source` and the
            field).
    """
    try:
        loads_strict(data, source=source)
        return QualityRecord.model_validate_json(data)
    except JsonError as exc:
        raise QualityError(str(exc)) from exc
    except ValidationError as exc:
        error = exc.errors()[0]
        where = describe_error(error, root="(root)", what=error["msg"])
        raise QualityError(f"{source}: not a quality record: {where}") from exc


def read_quality(path: Path) -> QualityRecord:
    """Read and check a `quality.json`.

    Raises:
        QualityError: unreadable, not JSON, or not a quality record (one line, naming the file
            and the field).
    """
    return parse_quality(read_bytes(path, error=QualityError), source=str(path))
