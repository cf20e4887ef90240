"""The report's statistics: hand-computed small cases, properties, and scipy as an oracle.

scipy is a test dependency only (the `dev` extra); selfbench computes every figure itself.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from eval_helpers import failed, record, write_results
from selfbench.evaluate import build_summary, read_results, render_report, stats
from selfbench.evaluate.stats import (
    Comparison,
    Interval,
    bootstrap_interval,
    compare,
    format_p,
    mcnemar_exact,
    newcombe_paired_interval,
    pass_at_k,
    pass_hat_k,
    pass_rate_interval,
    permutation_test,
    reading,
    wilson_interval,
)

# --- hand-computed cases ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passes", "trials", "low", "high"),
    [
        # z = 1.95996, z^2 = 3.84146. 5/10: centre (0.5 + 0.19207) / 1.38415 = 0.5,
        # half 1.95996 / 1.38415 * sqrt(0.025 + 0.0096037) = 1.41600 * 0.186021 = 0.26341
        (5, 10, 0.23659, 0.76341),
        # 0/10: centre 0.19207 / 1.38415 = 0.138764 = half, so [0, 2 * 0.138764]
        (0, 10, 0.0, 0.27753),
        # 10/10: the mirror image of 0/10
        (10, 10, 0.72247, 1.0),
        # 1/1: centre (1 + 1.92073) / 4.84146 = 0.603270,
        # half 1.95996 / 4.84146 * sqrt(3.84146 / 4) = 0.404827 * 0.979985 = 0.396724
        (1, 1, 0.20655, 1.0),
        # 48/50 and 38/50, the two margins of Newcombe's (1998) example below
        (48, 50, 0.86540, 0.98896),
        (38, 50, 0.62587, 0.85703),
    ],
)
def test_wilson_interval(passes: int, trials: int, low: float, high: float) -> None:
    interval = wilson_interval(passes, trials)
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=5e-6)


def test_no_trial_has_no_interval() -> None:
    assert wilson_interval(0, 0) is None
    assert bootstrap_interval([(0, 0)]) is None
    assert pass_rate_interval([]) is None


@pytest.mark.parametrize(
    ("per_task", "low", "high"),
    [
        # every task 1 of 2: every resample pools to 0.5
        ([(1, 2), (1, 2), (1, 2)], 0.5, 0.5),
        # two tasks, 2/2 and 0/2: a resample is both (1.0, 1/4), neither (0.0, 1/4) or one of
        # each (0.5, 1/2); a quarter of resamples in each tail is far more than 2.5%
        ([(2, 2), (0, 2)], 0.0, 1.0),
    ],
)
def test_the_task_bootstrap_interval(
    per_task: list[tuple[int, int]], low: float, high: float
) -> None:
    assert bootstrap_interval(per_task) == Interval(low, high)
    assert pass_rate_interval(per_task) == Interval(low, high)


def test_one_trial_per_task_is_wilson_several_the_task_bootstrap() -> None:
    # 1 + 0 + 1 passes of 3 single trials: Wilson's 2/3
    assert pass_rate_interval([(1, 1), (0, 1), (1, 1)]) == wilson_interval(2, 3)
    several = [(1, 2), (0, 1), (2, 2)]
    assert pass_rate_interval(several) == bootstrap_interval(several)
    assert bootstrap_interval(several) == bootstrap_interval(several)  # seeded
    # an evaluation of several trials whose agent kept one counted trial per task (the others
    # were infrastructure) still reports the method the report names: the bootstrap
    single = [(1, 1), (0, 1), (1, 1)]
    assert pass_rate_interval(single, several_trials=True) == bootstrap_interval(single)
    pairs = [((1, 1), (0, 1)), ((1, 1), (1, 1))]
    assert compare("A", "B", pairs, several_trials=True).interval == (
        stats.paired_bootstrap_interval([Fraction(1), Fraction(0)])
    )
    assert compare("A", "B", pairs).interval == newcombe_paired_interval(1, 1, 0, 0)


# t1 1 of 3, t2 0 of 3, t3 2 of 3
TRIALS = [(1, 3), (0, 3), (2, 3)]


@pytest.mark.parametrize(
    ("k", "at_k", "hat_k"),
    [
        # k = 1: both are the mean rate, (1/3 + 0 + 2/3) / 3 = 1/3
        (1, 1 / 3, 1 / 3),
        # pass@2: t1 1 - C(2,2)/C(3,2) = 2/3, t2 0, t3 1 - C(1,2)/C(3,2) = 1: mean 5/9
        # pass^2: t1 C(1,2)/C(3,2) = 0, t2 0, t3 C(2,2)/C(3,2) = 1/3: mean 1/9
        (2, 5 / 9, 1 / 9),
        # pass@3: t1 and t3 pass at 3 trials, t2 never: 2/3; pass^3: no task passes all three
        (3, 2 / 3, 0.0),
    ],
)
def test_pass_at_k_and_pass_hat_k(k: int, at_k: float, hat_k: float) -> None:
    assert pass_at_k(TRIALS, k) == pytest.approx(at_k)
    assert pass_hat_k(TRIALS, k) == pytest.approx(hat_k)


def test_a_task_with_fewer_trials_than_k_uses_its_own() -> None:
    # 1 of 2 trials at k = 3: k becomes 2, pass@2 = 1 - C(1,2)/C(2,2) = 1, pass^2 = C(1,2) = 0
    assert (pass_at_k([(1, 2)], 3), pass_hat_k([(1, 2)], 3)) == (1.0, 0.0)
    assert pass_at_k([(0, 0)], 2) is None
    assert pass_hat_k([], 2) is None


@pytest.mark.parametrize(
    ("wins", "losses", "p"),
    [
        (7, 1, 18 / 256),  # 8 discordant: 2 (C(8,0) + C(8,1)) / 2^8 = 2 * 9 / 256
        (12, 2, 212 / 16384),  # 14: 2 (1 + 14 + 91) / 2^14
        (5, 0, 2 / 32),  # 2 C(5,0) / 2^5
        (10, 0, 2 / 1024),
        (3, 3, 1.0),  # 2 (1 + 6 + 15 + 20) / 64 = 84/64, capped at 1
        (0, 0, 1.0),  # no discordant pair: nothing to test
    ],
)
def test_mcnemar_exact(wins: int, losses: int, p: float) -> None:
    assert mcnemar_exact(wins, losses) == pytest.approx(p)
    assert mcnemar_exact(losses, wins) == pytest.approx(p)


@pytest.mark.parametrize(
    ("counts", "low", "high"),
    [
        # Newcombe (1998), example (a): a, b, c, d = 36, 12, 2, 0; n = 50, D = 0.96 - 0.76 = 0.2.
        # Wilson: 48/50 [0.86540, 0.98896], 38/50 [0.62587, 0.85703].
        # ad - bc = -24, A = 48 * 2 * 38 * 12 = 43776, phi = -24 / 209.227 = -0.114707.
        # below^2 = 0.09460^2 + 2 * 0.114707 * 0.09460 * 0.09703 + 0.09703^2 = 0.0204698,
        # below = 0.143073, so low = 0.056927 (his 0.0569);
        # above^2 = 0.02896^2 + 2 * 0.114707 * 0.02896 * 0.13413 + 0.13413^2 = 0.0199212,
        # above = 0.140425 ... high = 0.340428 (his 0.3404)
        ((36, 12, 2, 0), 0.056930, 0.340428),
        # ad - bc = 40 - 5 = 35 > n/2 = 10: phi = (35 - 10) / sqrt(15 * 5 * 11 * 9) = 0.290129.
        # D = 0.75 - 0.55 = 0.2; Wilson 15/20 [0.531299, 0.888138], 11/20 [0.342085, 0.741802].
        # below^2 = 0.218701^2 - 2 * 0.290129 * 0.218701 * 0.191802 + 0.191802^2 = 0.060249,
        # below = 0.245457, low = -0.045457 ... (-0.045515 unrounded)
        ((10, 5, 1, 4), -0.045515, 0.413647),
        # the issue's example with 7 wins, 1 loss, 2 ties where both pass: D = 0.9 - 0.3 = 0.6
        ((2, 7, 1, 0), 0.072394, 0.844465),
    ],
)
def test_newcombe_paired_interval(
    counts: tuple[int, int, int, int], low: float, high: float
) -> None:
    interval = newcombe_paired_interval(*counts)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=5e-6)


@pytest.mark.parametrize(
    ("differences", "p"),
    [
        # one trial per task, three wins: all-plus or all-minus of 2^3 flips reach |3|: 2/8
        ([1, 1, 1], 2 / 8),
        # thirds: steps 2 and 1, observed 3; sums +-2 +-1 are 3, 1, -1, -3: 2 of 4 reach 3
        ([Fraction(2, 3), Fraction(1, 3), 0], 2 / 4),
        # steps 2, 2, 1, 1, observed 2 + 2 + 1 - 1 = 4: |S| = 6 twice, = 4 four times of 16
        ([Fraction(2, 3), Fraction(2, 3), Fraction(1, 3), Fraction(-1, 3)], 6 / 16),
        ([0, 0], 1.0),
    ],
)
def test_the_paired_permutation_test(differences: list[Fraction | int], p: float) -> None:
    assert permutation_test([Fraction(d) for d in differences]) == pytest.approx(p)


def test_the_sampled_permutation_test_is_near_the_exact_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    differences = [Fraction(n % 4, 3) - Fraction(n % 3, 4) for n in range(14)]
    exact = permutation_test(differences)
    monkeypatch.setattr(stats, "_EXACT_STATES", 1)
    sampled = permutation_test(differences)
    assert sampled != exact  # the other path ran
    assert sampled == pytest.approx(exact, abs=0.02)  # 10,000 flips: standard error <= 0.005


def test_the_issues_example_one_trial_per_task() -> None:
    # 7 tasks A only, 1 task B only, 2 tasks both: D = (7 - 1) / 10
    pairs = [((1, 1), (0, 1))] * 7 + [((0, 1), (1, 1))] + [((1, 1), (1, 1))] * 2
    result = compare("A", "B", pairs)
    assert (result.tasks, result.wins, result.losses) == (10, 7, 1)
    assert result.difference == pytest.approx(0.6)
    assert result.interval == newcombe_paired_interval(2, 7, 1, 0)
    assert result.p_value == pytest.approx(18 / 256)
    assert reading(result) == (
        "A beats B on 7 tasks, loses on 1, ties on 2; difference 60 pp [7, 84]; p = 0.07"
    )


def test_several_trials_compare_by_task_bootstrap_and_permutation() -> None:
    # per task A - B: 2/3, 2/3, 1/3 - 2/3 = -1/3, 0 (a task where B has no trial is left out)
    pairs = [((2, 3), (0, 3)), ((3, 3), (1, 3)), ((1, 3), (2, 3)), ((1, 2), (1, 2))]
    pairs.append(((3, 3), (0, 0)))
    result = compare("A", "B", pairs)
    assert (result.tasks, result.wins, result.losses) == (4, 2, 1)
    assert result.difference == pytest.approx((2 / 3 + 2 / 3 - 1 / 3) / 4)
    # steps 2, 2, 1 (thirds), observed 3: |+-2 +-2 +-1| >= 3 for 2+2+1, 2+2-1 and negations
    assert result.p_value == pytest.approx(4 / 8)
    assert result.interval.low <= result.difference <= result.interval.high


def test_no_common_task() -> None:
    result = compare("A", "B", [((1, 1), (0, 0))])
    assert (result.tasks, result.p_value) == (0, 1.0)
    assert reading(result) == "A and B have no task in common"


@pytest.mark.parametrize(
    ("p", "shown"),
    [(0.0004, "p < 0.001"), (0.0042, "p = 0.004"), (0.0391, "p = 0.04"), (1.0, "p = 1.00")],
)
def test_format_p(p: float, shown: str) -> None:
    assert format_p(p) == shown


def test_the_reading_of_the_issue() -> None:
    result = Comparison("A", "B", 10, 7, 1, 0.3, Interval(0.08, 0.52), 0.04)
    assert reading(result) == (
        "A beats B on 7 tasks, loses on 1, ties on 2; difference 30 pp [8, 52]; p = 0.04"
    )


# --- properties ------------------------------------------------------------------------------

counts = st.integers(0, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
single = st.tuples(st.integers(0, 1), st.just(1))
several = st.integers(1, 4).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts)
def test_wilson_holds_the_rate_within_0_and_1(value: tuple[int, int]) -> None:
    passes, trials = value
    interval = wilson_interval(passes, trials)
    if trials == 0:
        assert interval is None
        return
    assert interval is not None
    assert 0.0 <= interval.low <= passes / trials <= interval.high <= 1.0


@settings(max_examples=25, deadline=None)
@given(st.lists(several, min_size=1, max_size=8))
def test_the_bootstrap_holds_the_rate_within_0_and_1(per_task: list[tuple[int, int]]) -> None:
    interval = bootstrap_interval(per_task)
    assert interval is not None
    rate = sum(p for p, _ in per_task) / sum(n for _, n in per_task)
    assert 0.0 <= interval.low <= rate <= interval.high <= 1.0


@given(st.lists(several, min_size=1, max_size=8), st.integers(1, 5))
def test_pass_hat_k_is_at_most_the_rate_and_pass_at_k_at_least(
    per_task: list[tuple[int, int]], k: int
) -> None:
    mean_rate = sum(p / n for p, n in per_task) / len(per_task)
    at_k, hat_k = pass_at_k(per_task, k), pass_hat_k(per_task, k)
    assert at_k is not None
    assert hat_k is not None
    assert 0.0 <= hat_k <= mean_rate + 1e-12
    assert mean_rate <= at_k + 1e-12
    assert at_k <= 1.0


def _swapped(
    pairs: list[tuple[tuple[int, int], tuple[int, int]]],
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    return [(b, a) for a, b in pairs]


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.lists(st.tuples(single, single), min_size=1, max_size=12),
        st.lists(st.tuples(several, several), min_size=1, max_size=8),
    )
)
def test_a_comparison_is_symmetric_and_bounded(
    pairs: list[tuple[tuple[int, int], tuple[int, int]]],
) -> None:
    forward, backward = compare("A", "B", pairs), compare("B", "A", _swapped(pairs))
    assert (backward.wins, backward.losses, backward.tasks) == (
        forward.losses,
        forward.wins,
        forward.tasks,
    )
    assert backward.difference == pytest.approx(-forward.difference, abs=1e-12)
    assert backward.interval.low == pytest.approx(-forward.interval.high, abs=1e-12)
    assert backward.interval.high == pytest.approx(-forward.interval.low, abs=1e-12)
    assert backward.p_value == pytest.approx(forward.p_value)
    assert 0.0 <= forward.p_value <= 1.0
    interval = forward.interval
    assert -1.0 <= interval.low <= forward.difference <= interval.high <= 1.0


@given(st.integers(0, 30), st.integers(0, 30))
def test_one_trial_per_task_the_permutation_test_is_mcnemars(wins: int, losses: int) -> None:
    differences = [Fraction(1)] * wins + [Fraction(-1)] * losses
    assert permutation_test(differences) == pytest.approx(mcnemar_exact(wins, losses))


# --- scipy as an oracle ----------------------------------------------------------------------


@given(counts.filter(lambda value: value[1] > 0))
def test_wilson_agrees_with_scipy(value: tuple[int, int]) -> None:
    passes, trials = value
    theirs = binomtest(passes, trials).proportion_ci(confidence_level=0.95, method="wilson")
    ours = wilson_interval(passes, trials)
    assert ours is not None
    assert (ours.low, ours.high) == pytest.approx((float(theirs.low), float(theirs.high)))


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_agrees_with_scipys_binomial_test(wins: int, losses: int) -> None:
    expected = 1.0 if wins + losses == 0 else float(binomtest(wins, wins + losses, 0.5).pvalue)
    assert mcnemar_exact(wins, losses) == pytest.approx(expected, rel=1e-9)


# --- in the report -----------------------------------------------------------------------------


def test_the_summary_carries_the_statistics(tmp_path: Path) -> None:
    """Four tasks, one trial: a passes 3, b passes 1 (t1, which a passes too), c none."""
    records = [record("t1", "oracle"), failed("t1", "nop")]
    for task in ("t1", "t2", "t3", "t4"):
        records.append(record(task, "a") if task != "t4" else failed(task, "a"))
        records.append(record(task, "b") if task == "t1" else failed(task, "b"))
        records.append(failed(task, "c"))
    summary = build_summary(read_results(write_results(tmp_path / "r", records)))
    intervals = {agent.name: agent.interval for agent in summary.agents}
    assert intervals["a"] == wilson_interval(3, 4)
    assert intervals["oracle"] == wilson_interval(1, 1)
    assert [(c.first, c.second) for c in summary.comparisons] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]
    a_b = summary.comparisons[0]
    # a only: t2, t3; both: t1; neither: t4
    assert (a_b.wins, a_b.losses, a_b.difference) == (2, 0, 0.5)
    assert a_b.interval == newcombe_paired_interval(1, 2, 0, 1)
    assert a_b.p_value == pytest.approx(0.5)  # 2 / 2^2
    assert summary.passed_by == ((2, 3), (1, 3), (1, 3), (0, 3))
    text = render_report(summary, "text")
    assert "Passed by no agent: t4" in text
    assert "Passed by every agent: no task" in text
    assert "a beats b on 2 tasks, loses on 0, ties on 2; difference 50 pp" in text
    assert text.count("Wilson score interval") == 1
    assert text.count("exact McNemar test") == 1
    json_text = render_report(summary, "json")
    assert json_text.count("Wilson score interval") == 1
    assert '"pValue": 0.5' in json_text
