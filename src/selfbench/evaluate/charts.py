"""The report's charts, drawn by matplotlib as inline SVG with text kept as text (pure).

Each chart lays out for 1 to 20 agents: one row per agent, the figure as tall as its rows, every
label in a column of its own so none can run into another. Units are chosen to fit the values
(`selfbench.evaluate.units`), and the report's tables show the same numbers in the same unit.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from selfbench.evaluate.units import Unit, cost_unit, seconds_unit, tokens_unit

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "MATRIX_STATES",
    "AgentBar",
    "MatrixState",
    "Unit",
    "cost_unit",
    "matrix_chart",
    "pass_rate_chart",
    "seconds_unit",
    "tokens_unit",
    "usage_chart",
]

MatrixState = Literal["pass", "partial", "fail", "infra", "task", "not run"]
MATRIX_STATES: dict[MatrixState, str] = {
    "pass": "#32d583",
    "partial": "#fdb022",
    "fail": "#f04438",
    "infra": "#98a2b3",
    "task": "#475467",
    "not run": "#ffffff",
}
"""Each state of a matrix cell and its colour, in the legend's order."""
_MATRIX_LABELS: dict[MatrixState, str] = {
    "pass": "pass",
    "partial": "some trials pass",
    "fail": "fail",
    "infra": "infrastructure",
    "task": "task broken",
    "not run": "not run",
}

_ROW = 0.3
"""Inches per agent row."""
_FONT = 8
_BAR = "#528bff"


@dataclass(frozen=True, slots=True)
class AgentBar:
    """One agent's row of the pass-rate chart."""

    name: str
    passes: int
    counted: int
    interval: tuple[float, float] | None = None
    """A 95% interval of the pass rate (fractions), drawn as a whisker when given."""

    @property
    def rate(self) -> float | None:
        return self.passes / self.counted if self.counted else None


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure  # noqa: PLC0415 - start-up: matplotlib costs 370 ms

    return Figure(figsize=(width, height))


def svg(figure: Figure) -> str:
    """The figure as an `<svg>` element: text as text, no date, the same bytes every time."""
    import matplotlib as mpl  # noqa: PLC0415 - start-up: matplotlib costs 370 ms

    out = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "selfbench", "svg.fonttype": "none"}):
        figure.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = out.getvalue()
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    return text[text.index("<svg") :]


def _rows(axes: Axes, names: Sequence[str]) -> None:
    """One row per agent, the first at the top, its name in the left margin."""
    axes.set_yticks(range(len(names)), names, fontsize=_FONT)
    axes.set_ylim(len(names) - 0.5, -0.5)
    axes.spines[["top", "right"]].set_visible(False)
    axes.tick_params(axis="x", labelsize=_FONT)


def _value_labels(axes: Axes, labels: Sequence[str]) -> None:
    """Each row's value in a column right of the axes, where no bar or whisker reaches."""
    from matplotlib.transforms import blended_transform_factory  # noqa: PLC0415

    where = blended_transform_factory(axes.transAxes, axes.transData)
    for row, label in enumerate(labels):
        axes.text(1.03, row, label, transform=where, va="center", fontsize=_FONT)


def pass_rate_chart(bars: Sequence[AgentBar]) -> str:
    """Horizontal bars of pass rate, best first (a whisker for each given interval), each
    labelled `rate% (passes/trials)`."""
    ordered = sorted(bars, key=lambda bar: -(bar.rate if bar.rate is not None else -1.0))
    figure = _figure(5.0, 0.7 + _ROW * len(ordered))
    axes = figure.add_subplot()
    rates = [(bar.rate or 0.0) * 100 for bar in ordered]
    axes.barh(range(len(ordered)), rates, 0.6, color=_BAR)
    for row, bar in enumerate(ordered):
        if bar.interval is not None and bar.rate is not None:
            low, high = bar.interval
            error = [[max(0.0, bar.rate - low) * 100], [max(0.0, high - bar.rate) * 100]]
            axes.errorbar([bar.rate * 100], [row], xerr=error, fmt="none", ecolor="#1d2330",
                          capsize=3, linewidth=1)  # fmt: skip
    _rows(axes, [bar.name for bar in ordered])
    axes.set_xlim(0, 100)
    axes.set_xlabel("pass rate (%)", fontsize=_FONT)
    labels = [
        "—" if bar.rate is None else f"{bar.rate * 100:.0f}% ({bar.passes}/{bar.counted})"
        for bar in ordered
    ]
    _value_labels(axes, labels)
    return svg(figure)


def usage_chart(
    names: Sequence[str],
    columns: Sequence[tuple[str, Unit, Sequence[float | None]]],
) -> str:
    """One panel per column (`title`, unit, one value per agent): horizontal bars on an axis
    in the column's unit, each labelled with its value in that unit (`—` when unknown)."""
    figure = _figure(3.2 * len(columns) + 1.0, 0.9 + _ROW * len(names))
    panels = figure.subplots(1, len(columns), squeeze=False)[0]
    for index, (axes, (title, unit, values)) in enumerate(zip(panels, columns, strict=True)):
        scaled = [0.0 if v is None else v / unit.scale for v in values]
        axes.barh(range(len(names)), scaled, 0.6, color=_BAR)
        _rows(axes, names)
        if index:
            axes.set_yticks(range(len(names)), [""] * len(names))
        axes.set_xlim(0, max(scaled, default=0.0) * 1.05 or 1.0)
        axes.xaxis.get_major_locator().set_params(nbins=3)
        axes.set_xlabel(f"{title} ({unit.name or unit.prefix})", fontsize=_FONT)
        _value_labels(axes, [unit.text(v) for v in values])
    figure.subplots_adjust(wspace=0.9)
    return svg(figure)


def matrix_chart(
    tasks: Sequence[str], agents: Sequence[str], states: Sequence[Sequence[MatrixState]]
) -> str:
    """A heatmap, one row per task and one column per agent (`states[task][agent]`), with a
    legend of the states it shows; the figure grows with the counts."""
    from matplotlib.colors import ListedColormap  # noqa: PLC0415
    from matplotlib.patches import Patch  # noqa: PLC0415

    order = list(MATRIX_STATES)
    cells = [[order.index(state) for state in row] for row in states]
    longest = max((len(name) for name in agents), default=1)
    width = 1.2 + 0.05 * max((len(t) for t in tasks), default=1) + _ROW * len(agents)
    figure = _figure(max(width, 4.0), 0.6 + 0.055 * longest + _ROW * len(tasks))
    axes = figure.add_subplot()
    colours = ListedColormap(list(MATRIX_STATES.values()))
    axes.pcolormesh(cells, cmap=colours, vmin=-0.5, vmax=len(order) - 0.5,
                    edgecolors="#d0d5dd", linewidth=0.5)  # fmt: skip
    axes.set_xticks([i + 0.5 for i in range(len(agents))], agents, rotation=90, fontsize=_FONT)
    axes.set_yticks([i + 0.5 for i in range(len(tasks))], tasks, fontsize=_FONT)
    axes.set_ylim(len(tasks), 0)
    axes.set_xlim(0, len(agents))
    axes.xaxis.tick_top()
    axes.tick_params(length=0)
    shown = [state for state in order if any(state in row for row in states)]
    handles = [
        Patch(facecolor=MATRIX_STATES[s], edgecolor="#98a2b3", label=_MATRIX_LABELS[s])
        for s in shown
    ]
    axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False,
                fontsize=_FONT)  # fmt: skip
    return svg(figure)
