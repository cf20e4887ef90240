"""The HTML report: one self-contained page, charts drawn by matplotlib as inline SVG.

No script, no external asset, no web font: the page reads in any browser, offline, and under a
Content-Security-Policy that allows nothing but inline style. The same summary gives the same
bytes (matplotlib's SVG ids are salted with a fixed value and carry no date).
"""

from __future__ import annotations

import html
import io
import re

from selfbench.evaluate.report_rows import (
    agent_rows,
    failure_rows,
    matrix_rows,
    network_lines,
    quality_rows,
)
from selfbench.evaluate.summary import Summary

__all__ = ["render_html"]

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;
color:#1d2330}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d5dd;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f2f4f7}td:first-child{white-space:nowrap}
td.pass{background:#d1fadf}td.fail{background:#fee4e2}td.part{background:#fef0c7}
td.note{background:#eaecf0;color:#475467}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-end}.charts figure{margin:0}
figcaption{color:#475467;font-size:.9rem}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_COLORS = {"all": "#344054", "easy": "#32d583", "medium": "#fdb022", "hard": "#f04438"}


def _svg(figure: object) -> str:
    import matplotlib as mpl  # noqa: PLC0415 - start-up: matplotlib costs 370 ms; only HTML pays

    out = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "selfbench", "svg.fonttype": "none"}):
        figure.savefig(out, format="svg", metadata={"Date": None}, bbox_inches="tight")  # type: ignore[attr-defined]
    text = out.getvalue()
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    return text[text.index("<svg") :]


def _pass_rate_chart(summary: Summary) -> str:
    from matplotlib.figure import Figure  # noqa: PLC0415 - start-up: matplotlib costs 370 ms

    figure = Figure(figsize=(6.2, 3.1))
    axes = figure.add_subplot()
    names = [agent.name for agent in summary.agents]
    levels = ["all", *(name for name, _, _ in summary.agents[0].by_difficulty)]
    width = 0.8 / len(levels)
    for index, level in enumerate(levels):
        values = []
        for agent in summary.agents:
            if level == "all":
                values.append((agent.pass_rate or 0.0) * 100)
                continue
            passes, counted = next((p, c) for n, p, c in agent.by_difficulty if n == level)
            values.append(passes / counted * 100 if counted else 0.0)
        positions = [i + (index - (len(levels) - 1) / 2) * width for i in range(len(names))]
        bars = axes.bar(positions, values, width, label=level, color=_COLORS.get(level, "#667085"))
        axes.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    axes.set_xticks(range(len(names)), names)
    axes.set_ylabel("pass rate (%)")
    axes.set_ylim(0, 100)
    axes.legend(ncols=len(levels), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure)


def _time_chart(summary: Summary) -> str:
    from matplotlib.figure import Figure  # noqa: PLC0415 - start-up: matplotlib costs 370 ms

    figure = Figure(figsize=(4.4, 3.1))
    axes = figure.add_subplot()
    names = [agent.name for agent in summary.agents]
    means = [agent.mean_seconds or 0.0 for agent in summary.agents]
    medians = [agent.median_seconds or 0.0 for agent in summary.agents]
    positions = range(len(names))
    axes.barh([p - 0.2 for p in positions], means, 0.4, label="mean", color="#528bff")
    axes.barh([p + 0.2 for p in positions], medians, 0.4, label="median", color="#b2ccff")
    axes.set_yticks(list(positions), names)
    axes.invert_yaxis()  # the table's order, top to bottom
    axes.set_xlabel("agent time per trial (s)")
    axes.legend(ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure)


def _table(header: list[str], rows: list[list[str]], *, cells_from: int | None = None) -> str:
    """A table; with `cells_from`, the columns from that one on are pass cells, coloured."""
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = []
    for row in rows:
        cells = []
        for index, cell in enumerate(row):
            css = _cell_class(cell) if cells_from is not None and index >= cells_from else ""
            attribute = f' class="{css}"' if css else ""
            cells.append(f"<td{attribute}>{html.escape(cell)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _cell_class(text: str) -> str:
    passes, slash, counted = text.partition("/")
    if not slash:
        return "note"
    if passes == counted and counted != "0":
        return "pass"
    return "fail" if passes == "0" else "part"


def render_html(summary: Summary) -> str:
    """The report page."""
    title = f"selfbench evaluation: {summary.tasks} tasks"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        (
            f"<p>Benchmark <code>{html.escape(summary.benchmark[:16])}</code>, "
            f"{summary.trials_per_task} trial(s) per task and agent. Infrastructure failures and "
            "failures of a task whose oracle no longer passes are not counted against an agent.</p>"
        ),
    ]
    parts += [f"<p>{html.escape(line)}.</p>" for line in network_lines(summary)]
    if summary.agents:
        parts += [
            '<div class="charts">',
            (
                f"<figure>{_pass_rate_chart(summary)}<figcaption>Pass rate per agent, overall and "
                "per difficulty</figcaption></figure>"
            ),
            f"<figure>{_time_chart(summary)}<figcaption>Agent time per trial</figcaption></figure>",
            "</div>",
        ]
    parts += ["<h2>Agents</h2>", _table(*agent_rows(summary))]
    header, rows = matrix_rows(summary)
    agents_from = len(header) - len(summary.agents)
    parts += ["<h2>Tasks by agent</h2>", _table(header, rows, cells_from=agents_from)]
    if summary.quality:
        parts += ["<h2>Quality</h2>", _table(*quality_rows(summary))]
    if summary.failures:
        parts += ["<h2>Non-passes</h2>", _table(*failure_rows(summary))]
    if summary.skipped_lines:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in summary.skipped_lines)
        parts += ["<h2>Skipped results lines</h2>", f"<ul>{items}</ul>"]
    parts.append("</body></html>\n")
    return "\n".join(parts)
