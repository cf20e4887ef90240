"""A mutant of one changed source file: the record every mutator (Python, JavaScript) returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_CAP", "DEFAULT_SEED", "Mutant"]

DEFAULT_CAP: Final = 24
"""At most this many mutants per task; more are sampled down with `DEFAULT_SEED`."""
DEFAULT_SEED: Final = 20261205
"""The fixed seed of that sample, so the same task always gets the same mutants."""


@dataclass(frozen=True, slots=True)
class Mutant:
    """One small change to one line of a file as the gold leaves it.

    `start` and `end` are character offsets into the file's text; `replacement` replaces that
    span. Applying it: `text[:start] + replacement + text[end:]`.
    """

    path: str
    line: int
    """1-based line of the file with the gold applied where the change starts."""
    operator: str
    """The mutation's family: `comparison`, `arithmetic`, `boolean`, `constant`, `return`,
    `delete`."""
    description: str
    """What changed, as a reader would say it: `<= → <`, `True → False`, `deleted statement`."""
    start: int
    end: int
    replacement: str

    def apply(self, text: str) -> str:
        """The file's text with this mutant applied."""
        return text[: self.start] + self.replacement + text[self.end :]
