"""Units that fit a column's values (pure): the report's charts and tables show time, tokens
and cost in them, so a table and its chart say the same numbers the same way."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Unit", "cost_unit", "seconds_unit", "tokens_unit"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit the values of one column are shown in: value / `scale`, `decimals` places."""

    name: str
    scale: float
    decimals: int
    prefix: str = ""

    def text(self, value: float | None) -> str:
        """`value` in this unit with its name (`—` for None; `< 0.01` and the like for a value
        above zero too small for the places, never a zero that was not measured)."""
        if value is None:
            return "—"
        smallest = 10.0**-self.decimals
        if 0 < value / self.scale < smallest / 2:
            number = f"< {self.prefix}{smallest:.{self.decimals}f}"
        else:
            number = f"{self.prefix}{value / self.scale:,.{self.decimals}f}"
        return f"{number} {self.name}" if self.name else number


def _decimals(largest: float) -> int:
    """Enough places for three significant digits of the largest value (at most 2)."""
    if largest <= 0:
        return 0
    return max(0, min(2, 2 - math.floor(math.log10(largest))))


def seconds_unit(values: Sequence[float | None]) -> Unit:
    """ms below a second, s below two minutes, min above."""
    largest = max((v for v in values if v is not None), default=0.0)
    if largest < 1.0:
        scale, name = 0.001, "ms"
    elif largest < 120.0:
        scale, name = 1.0, "s"
    else:
        scale, name = 60.0, "min"
    return Unit(name, scale, _decimals(largest / scale))


def tokens_unit(values: Sequence[int | None]) -> Unit:
    """Plain below ten thousand tokens, k below a million, M above."""
    largest = float(max((v for v in values if v is not None), default=0))
    if largest < 10_000:
        return Unit("tokens", 1.0, 0)
    scale, name = (1e3, "k tokens") if largest < 1_000_000 else (1e6, "M tokens")
    return Unit(name, scale, _decimals(largest / scale))


def cost_unit(values: Sequence[float | None]) -> Unit:
    """Dollars with two places, more when the smallest non-zero cost needs them to show two
    significant digits (at most six)."""
    small = min((v for v in values if v), default=1.0)
    places = 2 if small >= 0.1 else min(6, 1 - math.floor(math.log10(small)))
    return Unit("", 1.0, places, prefix="$")
