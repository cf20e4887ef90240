"""A mutant of one changed source file: the record every mutator (Python, JavaScript) returns."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["DEFAULT_CAP", "DEFAULT_SEED", "Mutant", "distinct"]

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
    `always-equal`, `delete`."""
    description: str
    """What changed, as a reader would say it: `<= → <`, `True → False`, `deleted statement`,
    `return value → an always-equal object`."""
    start: int
    end: int
    replacement: str

    def apply(self, text: str) -> str:
        """The file's text with this mutant applied."""
        return text[: self.start] + self.replacement + text[self.end :]


def distinct(mutants: Iterable[Mutant], texts: Mapping[str, str]) -> list[Mutant]:
    """`mutants` without those that leave the same file text as one before them (the same
    path, the same result): one change, however many rules reach it, runs and counts once.
    `texts` holds each path's text as the gold leaves it."""
    seen: set[tuple[str, bytes]] = set()
    kept: list[Mutant] = []
    for mutant in mutants:
        result = mutant.apply(texts[mutant.path]).encode("utf-8", "surrogatepass")
        key = (mutant.path, hashlib.sha256(result).digest())
        if key not in seen:
            seen.add(key)
            kept.append(mutant)
    return kept
