"""A deterministic score for each candidate and its tier under per-tier budgets. Pure.

**Score** (0-100, integers only) of a change at a tier:

* tests, 40: the change touched test files (a held-out test patch can be cut from it);
* size, 30: its changed implementation lines `L` lie inside the tier's range, from the audit's
  gate `g` (`selfbench.rules.THRESHOLDS`) up to `10 * g`; above that the term falls as
  `30 * 10g / L` (a huge change makes a poor task);
* recency, 30: `30 * (t - oldest) / (newest - oldest)` over the completed commits' times in the
  walk (30 for all when they are equal).

Ties break by newer completed commit, then by id. A change ranked last (`Rankable.last`: its
code mostly typing, `selfbench.mine.typing_share`) comes after every other of its tier.

**Tiers.** Without budgets each candidate takes the highest tier whose gates it meets. With
budgets (`--easy N --medium N --hard N`; a tier without one gets none), tiers are filled hardest
first, each with the best `ceil(N * over_fetch)` candidates still unassigned that meet its gates,
so a hard-eligible change left over can still serve as a medium one. Over-fetch leaves room for
candidates that fail later (authoring, audit, validation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from selfbench.contract import DIFFICULTIES, Difficulty
from selfbench.rules import THRESHOLDS

__all__ = [
    "DEFAULT_OVER_FETCH",
    "Assignment",
    "Rankable",
    "assign_tiers",
    "eligible_tiers",
    "recency_span",
    "score",
]

DEFAULT_OVER_FETCH = 1.5
_TESTS, _SIZE, _RECENCY = 40, 30, 30
_RANGE = 10


@dataclass(frozen=True, slots=True)
class Rankable:
    """What ranking needs to know of a candidate."""

    id: str
    merged: int
    implementation_files: int
    implementation_lines: int
    tests_changed: bool
    last: bool = False


@dataclass(frozen=True, slots=True)
class Assignment:
    """A candidate's tier and its score there."""

    id: str
    difficulty: Difficulty
    tests: int
    size: int
    recency: int

    @property
    def score(self) -> int:
        """The sum of the three terms."""
        return self.tests + self.size + self.recency


# The audit's gates, unpacked once: eligible_tiers runs for every change a walk measures.
_GATES = tuple(
    (tier, THRESHOLDS[tier].files, THRESHOLDS[tier].changed_lines) for tier in DIFFICULTIES
)


def recency_span(times: Iterable[int]) -> tuple[int, int]:
    """The oldest and newest of the completed times, (0, 0) for none."""
    every = tuple(times)
    return (min(every), max(every)) if every else (0, 0)


@lru_cache(maxsize=1 << 12)  # a few hundred distinct sizes, asked once per change and tier
def eligible_tiers(files: int, lines: int) -> tuple[Difficulty, ...]:
    """The tiers whose file and changed-line gates an implementation part meets."""
    return tuple(
        tier
        for tier, least_files, least_lines in _GATES
        if files >= least_files and lines >= least_lines
    )


def score(item: Rankable, tier: Difficulty, span: tuple[int, int]) -> Assignment:
    """The item's score at a tier, given the oldest and newest completed times of the walk."""
    ceiling = THRESHOLDS[tier].changed_lines * _RANGE
    lines = item.implementation_lines
    size = _SIZE if lines <= ceiling else _SIZE * ceiling // lines
    oldest, newest = span
    recency = (
        _RECENCY if newest <= oldest else _RECENCY * (item.merged - oldest) // (newest - oldest)
    )
    return Assignment(item.id, tier, _TESTS if item.tests_changed else 0, size, recency)


def _order(item: Rankable, assignment: Assignment) -> tuple[bool, int, int, str]:
    return (item.last, -assignment.score, -item.merged, item.id)


def assign_tiers(
    items: tuple[Rankable, ...],
    *,
    budgets: Mapping[Difficulty, int] | None = None,
    over_fetch: float = DEFAULT_OVER_FETCH,
    span: tuple[int, int] | None = None,
) -> tuple[Assignment, ...]:
    """Each item's tier and score; without budgets every eligible item, else the budgets' picks.
    `span`: the oldest and newest completed times recency runs over, by default the items'.

    Ordered hardest tier first, then by score (best first). Items meeting no gate are left out.
    """
    if span is None:
        span = recency_span(item.merged for item in items)
    chosen: list[tuple[Rankable, Assignment]] = []
    taken: set[str] = set()
    for tier in reversed(DIFFICULTIES):
        pool = [
            (item, score(item, tier, span))
            for item in items
            if item.id not in taken
            and tier in eligible_tiers(item.implementation_files, item.implementation_lines)
        ]
        pool.sort(key=lambda pair: _order(*pair))
        if budgets is not None:
            quota = math.ceil(budgets.get(tier, 0) * over_fetch - 1e-9)
            pool = pool[: max(quota, 0)]
        chosen.extend(pool)
        taken.update(item.id for item, _ in pool)
    return tuple(assignment for _, assignment in chosen)
