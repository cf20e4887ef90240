"""The values every runner's log parser shares: an outcome, a run's log, a parser's findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "INDEX",
    "NO_MATCH",
    "OUTCOMES",
    "SEVERITY",
    "Outcome",
    "Result",
    "Run",
    "table",
]

Outcome = Literal["passed", "failed", "skipped"]

NO_MATCH = "no test matched the selector"
OUTCOMES: tuple[Outcome, Outcome, Outcome] = ("passed", "failed", "skipped")  # counts' order
INDEX = {outcome: at for at, outcome in enumerate(OUTCOMES)}
SEVERITY: dict[Outcome, int] = {"skipped": 0, "passed": 1, "failed": 2}


@dataclass(frozen=True, slots=True)
class Run:
    """One run's log lines (ANSI removed), its command's words and its exit code."""

    lines: list[str]
    words: list[str]
    exit_code: int


@dataclass(slots=True)
class Result:
    """What one runner's parser found; `_finish` turns it into `Outcomes`."""

    tests: dict[str, Outcome] = field(default_factory=dict)
    counts: tuple[int, int, int] | None = None  # passed, failed, skipped from the runner's summary
    no_tests: str | None = None  # a reason the parser could decide on its own
    selector_miss: bool = False  # the log shows the selector matched nothing
    zero: str = "0 tests"  # the log's own words when every count is zero

    def record(self, name: str, outcome: Outcome) -> None:
        known = self.tests.get(name)
        if known is None or SEVERITY[outcome] > SEVERITY[known]:
            self.tests[name] = outcome


def table(passed: str, failed: str, skipped: str) -> dict[str, Outcome]:
    """A runner's words for each outcome (space-separated), as {word: outcome}."""
    groups = zip((passed, failed, skipped), OUTCOMES, strict=True)
    return {word: outcome for words, outcome in groups for word in words.split()}
