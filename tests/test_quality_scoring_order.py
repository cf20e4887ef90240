"""The scorer stops at a point in the variants' order, whichever variant finishes first."""

from __future__ import annotations

import time

import pytest

from selfbench.quality.scoring import Scorer, VariantRun


class _Timed(Scorer):
    """A scorer whose variant `b"N:S"` passes after S seconds (no sandbox: the order only)."""

    def __init__(self) -> None:
        super().__init__(task=None, test_sh="", with_pass_to_pass=None)  # type: ignore[arg-type]

    def _one(self, patch: bytes, pass_to_pass: bool) -> VariantRun:
        _, seconds = patch.decode().split(":")
        time.sleep(float(seconds))
        return VariantRun(result=True, ran=True)


@pytest.mark.parametrize(
    "delays",
    [(0.0, 0.3, 0.0, 0.0), (0.3, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)],
    ids=["second-finishes-last", "first-finishes-last", "together"],
)
def test_the_stop_point_is_in_the_variants_order(delays: tuple[float, ...]) -> None:
    variants = [f"{n}:{d}".encode() for n, d in enumerate(delays)]

    runs = _Timed().score(variants, jobs=2, stop=lambda results: len(results) >= 2)

    # stop holds once the first two are in: the rest count as skipped, even one that ran
    assert [run.ran for run in runs] == [True, True, False, False]
