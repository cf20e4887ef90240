"""`Outcomes`: what a test command's log says, once its runner's parser has read it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from selfbench.runners._log import Outcome

__all__ = ["Outcomes"]


@dataclass(frozen=True, slots=True)
class Outcomes:
    """What a test command's log says: the runner, each test's outcome, counts, and whether any ran.

    `tests` holds `(name, outcome)` pairs in the order first reported; it is empty when the log
    names no test (pytest `-q` with every test passing). `passed` includes pytest's xpassed,
    `failed` errors and node's cancelled, `skipped` pytest's xfailed, todo tests and cargo's
    ignored. `no_tests` is why the run counts as "ran no test", else None: `NO_MATCH`, or
    `<runner> ran no test (<evidence>)` with evidence `exit 5`, `no tests ran`, `N skipped`,
    `tests 0`, `0 pass`, `no test files`, `matched no packages` or `running 0 tests`.
    """

    runner: str | None
    tests: tuple[tuple[str, Outcome], ...]
    passed: int
    failed: int
    skipped: int
    no_tests: str | None
    exit_code: int

    def without(self, names: Sequence[str]) -> Outcomes:
        """These outcomes without the tests whose name holds one of `names` (the verifier's
        canaries, which must fail): their failures leave the count of failed tests too."""
        if not names:
            return self
        kept: list[tuple[str, Outcome]] = []
        dropped = 0
        for test, outcome in self.tests:
            if any(name in test for name in names):
                dropped += outcome == "failed"
            else:
                kept.append((test, outcome))
        return replace(self, tests=tuple(kept), failed=max(0, self.failed - dropped))

    @property
    def failure(self) -> str | None:
        """Why the run counts as failed (no test ran, or a non-zero exit); None when it passed."""
        if self.no_tests is not None:
            return self.no_tests
        if self.exit_code == 0:
            return None
        failed = f" ({self.failed} failed)" if self.failed else ""
        return f"exited {self.exit_code}{failed}"
