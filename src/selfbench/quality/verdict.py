"""The one rule from a task's quality observations to `ship | review | reject`. Pure.

`RULES` is the rule, one row per condition, judged in order: every row whose condition holds
adds its one-line reason; the verdict is the worst row's (`reject` over `review`), `ship` when
no row holds. The mutation score the rows read is the verifier's (`Mutation.verifier_score`): a
mutant fail-to-pass passes and a pass-to-pass test fails scores 0 like a killed one.

| condition                                                       | verdict |
|-----------------------------------------------------------------|---------|
| mutation score under `REJECT_SCORE` (30%)                       | reject  |
| no implementation part of the gold is needed by the tests       | reject  |
| the tests fail the gold rewritten to behave the same (coupled)  | reject  |
| mutation score under `WEAK_SCORE` (60%)                         | review  |
| an implementation part is unneeded                              | review  |
| a changed statement is unneeded (statement ablation)            | review  |
| the instruction misses interface items or asserted behaviour    | review  |
| the tests read private state the gold's files define            | review  |
| a fail-to-pass test waits on a real clock (sleep, wall time)    | review  |
| a fail-to-pass test seeds a random generator the gold draws from | review  |
| a fail-to-pass file selector holds tests passing at the base    | review  |
| a dependency is added without `--deps agent`                    | review  |
| pass-to-pass not chosen by coverage though its runner supports it | review |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from selfbench.artifacts.quality_record import (
    Ablation,
    Dependencies,
    Equivalents,
    InstructionCheck,
    Mutation,
    PassToPassBasis,
    TestsCheck,
    Verdict,
)

__all__ = [
    "MIN_MUTANTS",
    "REJECT_SCORE",
    "RULES",
    "WEAK_SCORE",
    "Observations",
    "Rule",
    "judge",
]

REJECT_SCORE: Final = 0.30
"""A mutation score under this rejects the task: its tests accept most wrong solutions."""
WEAK_SCORE: Final = 0.60
"""A mutation score under this sends the task to review ("weak tests")."""
MIN_MUTANTS: Final = 5
"""Fewer mutants than this say too little of the tests to judge them: the score is recorded, no
row reads it (two mutants, one survivor, is no evidence of weak tests)."""
_LISTED = 5
"""At most this many names in one reason; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Observations:
    """What `judge` reads: the quality record's parts (None: not observed)."""

    ablation: Ablation | None
    mutation: Mutation | None
    pass_to_pass: PassToPassBasis | None
    instruction: InstructionCheck | None
    dependencies: Dependencies
    coverage_supported: bool = False
    """The task's runner can report coverage (so pass-to-pass could have been chosen by it)."""
    equivalents: Equivalents | None = None
    tests: TestsCheck | None = None


def _score_in(low: float, high: float) -> Callable[[Observations], bool]:
    """The mutation score was measured and is in [low, high)."""

    def holds(seen: Observations) -> bool:
        mutation = seen.mutation
        if mutation is None or mutation.generated < MIN_MUTANTS:
            return False
        score = mutation.verifier_score
        return score is not None and low <= score < high

    return holds


def _survivors(seen: Observations) -> str:
    mutation = seen.mutation
    assert mutation is not None  # noqa: S101 - the condition checked it
    caught = len(mutation.caught_by_pass_to_pass)
    left = mutation.generated - mutation.killed - caught
    survive = f"{left} of {mutation.generated} mutants survive"
    return f"{survive} ({caught} more caught by pass-to-pass only)" if caught else survive


def _nothing_needed(seen: Observations) -> bool:
    ablation = seen.ablation
    if ablation is None or not ablation.parts:
        return False
    return not any(part.needed for part in ablation.parts if part.implementation)


def _unneeded_implementation(seen: Observations) -> tuple[str, ...]:
    ablation = seen.ablation
    if ablation is None:
        return ()
    return tuple(
        part.path if part.hunk is None else f"{part.path}#{part.hunk}"
        for part in ablation.parts
        if part.implementation and not part.needed
    )


def _unneeded_statements(seen: Observations) -> tuple[str, ...]:
    statements = seen.ablation.statements if seen.ablation is not None else None
    if statements is None:
        return ()
    return tuple(f"{item.path}:{item.line} `{item.statement}`" for item in statements.unneeded)


def _listed(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:_LISTED])
    more = len(names) - _LISTED
    return f"{shown} and {more} more" if more > 0 else shown


_REWRITTEN: Final = {
    "comments": "with its comments dropped",
    "reformatted": "reformatted",
    "renamed": "with its locals renamed",
}


def _coupled(seen: Observations) -> tuple[str, ...]:
    """The rewritings of the gold that behave as it does, yet fail a test, by path."""
    failed = seen.equivalents.failed if seen.equivalents is not None else ()
    return tuple(f"{_REWRITTEN[item.variant]} ({item.path})" for item in failed)


def _missing(seen: Observations) -> tuple[str, ...]:
    return seen.instruction.missing if seen.instruction is not None else ()


def _strays(seen: Observations) -> tuple[str, ...]:
    return seen.instruction.strays if seen.instruction is not None else ()


def _tests(seen: Observations) -> TestsCheck:
    return seen.tests if seen.tests is not None else TestsCheck()


def _unavailable(seen: Observations) -> tuple[str, ...]:
    if seen.dependencies.agent:
        return ()
    return tuple(f"{item.name} ({item.manifest})" for item in seen.dependencies.added)


def _no_coverage_basis(seen: Observations) -> bool:
    """The runner reports coverage, yet nothing says how pass-to-pass was chosen (a task
    drafted before the basis was recorded, or written by hand with no draft record). A
    recorded fallback (`changed test files`, with its reason) or an author's choice is not
    flagged: coverage was tried, or a person chose."""
    basis = seen.pass_to_pass
    return seen.coverage_supported and basis is not None and basis.basis in {"none", "neighbours"}


def _unguarded_reason(seen: Observations) -> str:
    basis = seen.pass_to_pass
    if basis is not None and basis.basis == "neighbours":
        return "pass-to-pass holds tests of unchanged files no coverage measure tied to the change"
    return "pass-to-pass was not chosen by coverage (no record says how it was chosen)"


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the rule: when it holds, its verdict, and its one-line reason."""

    holds: Callable[[Observations], bool]
    verdict: Verdict
    reason: Callable[[Observations], str]


RULES: Final[tuple[Rule, ...]] = (
    Rule(
        _score_in(0.0, REJECT_SCORE),
        "reject",
        lambda seen: f"weak tests: {_survivors(seen)} (a score under {REJECT_SCORE:.0%})",
    ),
    Rule(
        _nothing_needed,
        "reject",
        lambda _: "no implementation part of the gold patch is needed by a fail-to-pass test",
    ),
    Rule(
        lambda seen: bool(_coupled(seen)),
        "reject",
        lambda seen: f"coupled: the tests fail the gold {_listed(_coupled(seen))}",
    ),
    Rule(
        _score_in(REJECT_SCORE, WEAK_SCORE),
        "review",
        lambda seen: f"weak tests: {_survivors(seen)}",
    ),
    Rule(
        lambda seen: bool(_unneeded_implementation(seen)),
        "review",
        lambda seen: (
            f"implementation no fail-to-pass test needs: {_listed(_unneeded_implementation(seen))}"
        ),
    ),
    Rule(
        lambda seen: bool(_unneeded_statements(seen)),
        "review",
        lambda seen: (
            f"a changed statement no fail-to-pass test needs: {_listed(_unneeded_statements(seen))}"
        ),
    ),
    Rule(
        lambda seen: bool(_missing(seen)),
        "review",
        lambda seen: f"the instruction does not state: {_listed(_missing(seen))}",
    ),
    Rule(
        lambda seen: bool(_strays(seen)),
        "review",
        lambda seen: (
            f"the instruction's first line names what the change leaves as it was: "
            f"{_listed(_strays(seen))}"
        ),
    ),
    Rule(
        lambda seen: bool(_tests(seen).privateState),
        "review",
        lambda seen: f"tests read private state: {_listed(_tests(seen).privateState)}",
    ),
    Rule(
        lambda seen: bool(_tests(seen).timing),
        "review",
        lambda seen: f"timing-sensitive fail-to-pass tests: {_listed(_tests(seen).timing)}",
    ),
    Rule(
        lambda seen: bool(_tests(seen).seeded),
        "review",
        lambda seen: (
            f"the tests pin a seeded random sequence the gold draws from: "
            f"{_listed(_tests(seen).seeded)}"
        ),
    ),
    Rule(
        lambda seen: bool(_tests(seen).wholeFiles),
        "review",
        lambda seen: (
            "a fail-to-pass selector is a whole file holding tests the change does not touch: "
            f"{_listed(_tests(seen).wholeFiles)}"
        ),
    ),
    Rule(
        lambda seen: bool(_unavailable(seen)),
        "review",
        lambda seen: (
            f"the gold adds a dependency the agent cannot install: {_listed(_unavailable(seen))}"
            " (--deps agent installs it)"
        ),
    ),
    Rule(
        _no_coverage_basis,
        "review",
        _unguarded_reason,
    ),
)
"""The rule, in the order its reasons are listed."""

_SEVERITY: Final[dict[Verdict, int]] = {"ship": 0, "review": 1, "reject": 2}


def judge(  # noqa: PLR0913 - one argument per observation
    ablation: Ablation | None,
    mutation: Mutation | None,
    pass_to_pass: PassToPassBasis | None,
    instruction: InstructionCheck | None,
    dependencies: Dependencies,
    *,
    coverage_supported: bool = False,
    equivalents: Equivalents | None = None,
    tests: TestsCheck | None = None,
) -> tuple[Verdict, tuple[str, ...]]:
    """The verdict and the reasons of every row of `RULES` that holds, in the rule's order."""
    seen = Observations(
        ablation,
        mutation,
        pass_to_pass,
        instruction,
        dependencies,
        coverage_supported,
        equivalents,
        tests,
    )
    verdict: Verdict = "ship"
    reasons: list[str] = []
    for rule in RULES:
        if rule.holds(seen):
            reasons.append(rule.reason(seen))
            if _SEVERITY[rule.verdict] > _SEVERITY[verdict]:
                verdict = rule.verdict
    return verdict, tuple(reasons)
