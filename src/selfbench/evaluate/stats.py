"""The report's statistics (pure): intervals, pass@k and pass^k, paired comparisons of agents.

Every function takes per-task counts, `(passes, trials)` for one agent on one task, where the
trials are the counted ones (passes and agent failures). Tasks are the unit of sampling: trials
of one task are not independent, so an interval over several trials per task resamples whole
tasks, and a comparison of two agents pairs them task by task on the tasks both have counted
trials on. Intervals are 95% and two-sided; p values are two-sided. Randomised methods draw
from `random.Random(SEED)`, so the same counts give the same figures.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from math import comb, lcm, sqrt

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "PERMUTATION_RESAMPLES",
    "SEED",
    "Comparison",
    "Interval",
    "bootstrap_interval",
    "compare",
    "describe_methods",
    "format_p",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "paired_bootstrap_interval",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate_interval",
    "permutation_test",
    "reading",
    "wilson_interval",
]

Counts = tuple[int, int]
"""(passes, trials) of one agent on one task."""

Z95 = 1.959963984540054
"""The standard normal's 97.5th percentile: a two-sided 95% interval."""
BOOTSTRAP_RESAMPLES = 4000
"""Resamples of a bootstrap interval; its bounds are the 101st smallest and largest of them."""
PERMUTATION_RESAMPLES = 10_000
"""Random sign flips of a permutation test whose exact distribution is too large to count."""
SEED = 26
"""The seed of every randomised method."""
_TAIL = BOOTSTRAP_RESAMPLES * 25 // 1000  # 2.5% of the resamples in each tail
_EXACT_STATES = 200_000  # above this many distinct sums, the permutation test samples


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided 95% interval, `low <= high`."""

    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two agents on the tasks both have counted trials on, `first` minus `second`."""

    first: str
    second: str
    tasks: int
    """Common tasks."""
    wins: int
    """Tasks on which `first`'s pass rate is higher than `second`'s."""
    losses: int
    """Tasks on which it is lower."""
    difference: float
    """Mean over the common tasks of `first`'s pass rate minus `second`'s (one trial per task:
    the difference of the two pass rates)."""
    interval: Interval
    p_value: float


def wilson_interval(passes: int, trials: int) -> Interval | None:
    """Wilson's score interval (Wilson, 1927) for a pass rate, `None` for no trial.

    Assumes independent trials with one pass probability: in a report, one trial per task.
    Unlike the normal approximation it stays within [0, 1] and is not empty at 0 or n passes.
    """
    if trials == 0:
        return None
    rate = passes / trials
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 / (1 + z2 / trials) * sqrt(rate * (1 - rate) / trials + z2 / (4 * trials * trials))
    # at 0 or n passes one bound is the rate itself; rounding must not move it past the rate
    return Interval(min(rate, max(0.0, centre - half)), max(rate, min(1.0, centre + half)))


def bootstrap_interval(per_task: Sequence[Counts]) -> Interval | None:
    """A task-level (cluster) percentile bootstrap interval for the pooled pass rate.

    Resamples whole tasks with replacement `BOOTSTRAP_RESAMPLES` times (seeded) and takes the
    2.5th and 97.5th percentiles of the pooled rate (passes over trials). Assumes tasks drawn
    independently from a population of tasks; the trials of one task may be correlated. Widened
    to hold the estimate when a percentile misses it. `None` without a counted trial.
    """
    tasks = [counts for counts in per_task if counts[1]]
    if not tasks:
        return None
    rate = sum(p for p, _ in tasks) / sum(n for _, n in tasks)
    passes, trials = [p for p, _ in tasks], [n for _, n in tasks]
    values = [
        sum(map(passes.__getitem__, sample)) / sum(map(trials.__getitem__, sample))
        for sample in _resamples(len(tasks))
    ]
    return _percentiles(values, rate)


@cache
def _resamples(size: int) -> tuple[tuple[int, ...], ...]:
    """`BOOTSTRAP_RESAMPLES` tuples of `size` indices drawn with replacement, seeded (kept:
    every interval over `size` tasks uses the same ones)."""
    rng = random.Random(SEED)  # noqa: S311 - a reproducible resampling, not a secret
    indices = range(size)
    return tuple(tuple(rng.choices(indices, k=size)) for _ in range(BOOTSTRAP_RESAMPLES))


def _percentiles(values: list[float], estimate: float) -> Interval:
    """The central 95% of `values` by order statistics, widened to hold `estimate`."""
    ordered = sorted(values)
    low, high = ordered[_TAIL], ordered[-_TAIL - 1]
    return Interval(min(low, estimate), max(high, estimate))


def pass_rate_interval(
    per_task: Sequence[Counts], *, several_trials: bool | None = None
) -> Interval | None:
    """Wilson's interval for one trial per task, else the task bootstrap's. `several_trials`
    says which the evaluation ran (a report names one method for every agent); a task with
    several counted trials always means the bootstrap."""
    if not several_trials and all(n <= 1 for _, n in per_task):
        return wilson_interval(sum(p for p, _ in per_task), sum(n for _, n in per_task))
    return bootstrap_interval(per_task)


def pass_at_k(per_task: Sequence[Counts], k: int) -> float | None:
    """pass@k, the unbiased estimator (Chen et al., 2021): the chance that at least one of k
    trials passes, `1 - C(n-c, k) / C(n, k)` per task, averaged over tasks. A task with fewer
    than k trials uses n; tasks without a trial are left out (`None` when none is left)."""
    values = [1.0 - comb(n - c, min(k, n)) / comb(n, min(k, n)) for c, n in per_task if n]
    return sum(values) / len(values) if values else None


def pass_hat_k(per_task: Sequence[Counts], k: int) -> float | None:
    """pass^k (Yao et al., 2024, tau-bench): the chance that all of k trials pass,
    `C(c, k) / C(n, k)` per task, averaged over tasks; fewer than k trials use n, as pass@k."""
    values = [comb(c, min(k, n)) / comb(n, min(k, n)) for c, n in per_task if n]
    return sum(values) / len(values) if values else None


def mcnemar_exact(wins: int, losses: int) -> float:
    """McNemar's exact test: the two-sided binomial test of the discordant pairs.

    Under no difference, each task one agent passes and the other fails is either agent's with
    probability 1/2: p = min(1, 2 P(X <= min(wins, losses))), X ~ Binomial(wins + losses, 1/2).
    Assumes one trial per task and independent tasks.
    """
    discordant = wins + losses
    tail = sum(comb(discordant, i) for i in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / (1 << discordant))


def newcombe_paired_interval(both: int, first: int, second: int, neither: int) -> Interval:
    """Newcombe's hybrid score interval for a difference of paired proportions (Newcombe,
    1998, method 10), `first` minus `second`.

    The arguments count the tasks both agents pass, only the first, only the second, neither.
    It combines the two Wilson intervals with the pairs' correlation phi (a positive one reduced
    by n/2, as Newcombe does); assumes one trial per task and independent tasks. Within
    [-1, 1].
    """
    n = both + first + second + neither
    p1, p2 = (both + first) / n, (both + second) / n
    w1, w2 = wilson_interval(both + first, n), wilson_interval(both + second, n)
    assert w1 is not None  # noqa: S101 - n > 0 for a pair
    assert w2 is not None  # noqa: S101
    product = (both + first) * (second + neither) * (both + second) * (first + neither)
    cross: float = both * neither - first * second
    if cross > 0:  # Newcombe's correction of a positive correlation: ad - bc - n/2, at least 0
        cross = max(cross - n / 2, 0)
    phi = cross / sqrt(product) if product else 0.0
    d1, u2 = p1 - w1.low, w2.high - p2
    u1, d2 = w1.high - p1, p2 - w2.low
    below = sqrt(max(0.0, d1 * d1 - 2 * phi * d1 * u2 + u2 * u2))
    above = sqrt(max(0.0, u1 * u1 - 2 * phi * u1 * d2 + d2 * d2))
    difference = p1 - p2
    return Interval(max(-1.0, difference - below), min(1.0, difference + above))


def _differences(pairs: Sequence[tuple[Counts, Counts]]) -> list[Fraction]:
    """Per task, the first agent's pass rate minus the second's, exactly."""
    return [Fraction(a, n) - Fraction(b, m) for (a, n), (b, m) in pairs]


def paired_bootstrap_interval(differences: Sequence[Fraction]) -> Interval:
    """A paired task-level percentile bootstrap interval for the mean per-task difference.

    Resamples common tasks with replacement (the same seeded resamples for every pair, so
    swapping the agents flips the interval's sign exactly); widened to hold the estimate.
    """
    values = [float(d) for d in differences]
    estimate = sum(values) / len(values)
    size = len(values)
    means = [sum(map(values.__getitem__, sample)) / size for sample in _resamples(size)]
    return _percentiles(means, estimate)


def permutation_test(differences: Sequence[Fraction]) -> float:
    """A paired permutation (sign-flip) test of the mean per-task difference, two-sided.

    Under no difference the two agents' labels are exchangeable within a task, so each task's
    difference is as likely negated: p = P(|sum of flipped| >= |observed sum|). Counted exactly
    over all 2^n flips (by the distribution of sums) while it has at most `_EXACT_STATES`
    distinct sums, else from `PERMUTATION_RESAMPLES` seeded random flips, (1 + hits) / (1 + R).
    With one trial per task this is McNemar's exact test.
    """
    scale = lcm(*(d.denominator for d in differences)) if differences else 1
    steps = [abs(int(d * scale)) for d in differences if d]
    observed = abs(sum(int(d * scale) for d in differences))
    sums: dict[int, int] = {0: 1}
    for step in steps:
        grown: dict[int, int] = {}
        for total, count in sums.items():
            for signed in (total + step, total - step):
                grown[signed] = grown.get(signed, 0) + count
        sums = grown
        if len(sums) > _EXACT_STATES:
            return _sampled_permutation(steps, observed)
    hits = sum(count for total, count in sums.items() if abs(total) >= observed)
    return min(1.0, hits / (1 << len(steps)))


def _sampled_permutation(steps: Sequence[int], observed: int) -> float:
    rng = random.Random(SEED)  # noqa: S311 - a reproducible resampling, not a secret
    hits = 0
    for _ in range(PERMUTATION_RESAMPLES):
        flips = rng.getrandbits(len(steps))
        total = sum(-step if flips >> i & 1 else step for i, step in enumerate(steps))
        hits += abs(total) >= observed
    return (1 + hits) / (1 + PERMUTATION_RESAMPLES)


def compare(
    first: str,
    second: str,
    pairs: Sequence[tuple[Counts, Counts]],
    *,
    several_trials: bool | None = None,
) -> Comparison:
    """Compare two agents on their common tasks, given as (first's, second's) counts per task.

    One trial per task: Newcombe's paired interval and McNemar's exact test. Several: a paired
    task bootstrap interval and a paired permutation test. `several_trials` says which the
    evaluation ran; a common task with several counted trials of either agent always means
    several. Each task weighs the same. Tasks where either agent has no counted trial are left
    out.
    """
    common = [(a, b) for a, b in pairs if a[1] and b[1]]
    differences = _differences(common)
    wins = sum(1 for d in differences if d > 0)
    losses = sum(1 for d in differences if d < 0)
    if not common:
        return Comparison(first, second, 0, 0, 0, 0.0, Interval(-1.0, 1.0), 1.0)
    difference = float(sum(differences) / len(differences))
    if not several_trials and all(a[1] == 1 and b[1] == 1 for a, b in common):
        both = sum(1 for a, b in common if a[0] and b[0])
        neither = len(common) - both - wins - losses
        interval = newcombe_paired_interval(both, wins, losses, neither)
        p_value = mcnemar_exact(wins, losses)
    else:
        interval = paired_bootstrap_interval(differences)
        p_value = permutation_test(differences)
    return Comparison(first, second, len(common), wins, losses, difference, interval, p_value)


def reading(comparison: Comparison) -> str:
    """One line a person reads: `A beats B on 7 tasks, loses on 1, ties on 2; difference 30 pp
    [8, 52]; p = 0.04` (whole percentage points)."""
    c = comparison
    if not c.tasks:
        return f"{c.first} and {c.second} have no task in common"
    interval = f"[{_points(c.interval.low)}, {_points(c.interval.high)}]"
    return (
        f"{c.first} beats {c.second} on {_tasks(c.wins)}, loses on {c.losses}, "
        f"ties on {c.tasks - c.wins - c.losses}; difference {_points(c.difference)} pp "
        f"{interval}; {format_p(c.p_value)}"
    )


def _tasks(count: int) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"


def _points(value: float) -> str:
    return str(round(value * 100))


def format_p(value: float) -> str:
    """A p value as a report shows it: `p = 0.04` (two decimals, three under 0.01), or
    `p < 0.001`."""
    if value < 0.001:
        return "p < 0.001"
    return f"p = {value:.3f}" if value < 0.01 else f"p = {value:.2f}"


def describe_methods(*, several_trials: bool) -> tuple[str, str]:
    """The methods a report used, named once (its footnote): the pass rate's, the pairs'."""
    if several_trials:
        rate = (
            f"Pass rate: 95% task bootstrap interval ({BOOTSTRAP_RESAMPLES} resamples of the "
            f"tasks, seed {SEED}); pass@k and pass^k: means over tasks."
        )
        pairs = (
            "Pairs, on common tasks: mean per-task difference, paired task bootstrap interval, "
            "paired permutation test (two-sided)."
        )
        return rate, pairs
    return (
        "Pass rate: 95% Wilson score interval.",
        "Pairs, on common tasks: Newcombe's paired interval, exact McNemar test (two-sided).",
    )
