"""The HTML report: one self-contained page, charts drawn by matplotlib as inline SVG.

No script, no external asset, no web font: the page reads in any browser, offline, and under a
Content-Security-Policy that allows nothing but inline style. The same summary gives the same
bytes (matplotlib's SVG ids are salted with a fixed value and carry no date).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from selfbench.evaluate.charts import (
    AgentBar,
    MatrixState,
    Unit,
    cost_unit,
    matrix_chart,
    pass_rate_chart,
    tokens_unit,
    usage_chart,
)
from selfbench.evaluate.report_rows import (
    agent_rows,
    comparison_rows,
    failure_rows,
    matrix_rows,
    method_lines,
    network_lines,
    passed_by_lines,
    quality_rows,
    suspect_rows,
    time_unit,
)
from selfbench.evaluate.summary import AgentSummary, Cell, Summary
from selfbench.evaluate.trial_files import TrialFiles

__all__ = ["render_html"]

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;
color:#1d2330}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
th,td{border:1px solid #d0d5dd;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f2f4f7}td:first-child{white-space:nowrap}
td.pass{background:#d1fadf}td.fail{background:#fee4e2}td.part{background:#fef0c7}
td.note{background:#eaecf0;color:#475467}td.suspect{background:#fef0c7}
.charts{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}.charts figure{margin:0}
.charts svg{max-width:none;height:auto}
figcaption{color:#475467;font-size:.9rem}.wide{overflow-x:auto}
details pre{white-space:pre-wrap;overflow-wrap:anywhere;max-height:20rem;overflow:auto;
margin:.2rem 0}
details li{margin:.3rem 0}.who{font-weight:600}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _bars(summary: Summary, intervals: Mapping[str, tuple[float, float]] | None) -> list[AgentBar]:
    """Each agent's bar; its whisker the interval given for it, else the summary's own."""
    given = dict(intervals) if intervals is not None else _intervals(summary)
    return [AgentBar(a.name, a.passes, a.counted, given.get(a.name)) for a in summary.agents]


def _intervals(summary: Summary) -> dict[str, tuple[float, float]]:
    """The summary's 95% interval of each agent's pass rate (`stats.pass_rate_interval`)."""
    return {a.name: (a.interval.low, a.interval.high) for a in summary.agents if a.interval}


def _ranked(summary: Summary) -> list[AgentSummary]:
    """The agents best pass rate first, as the pass-rate chart shows them."""
    return sorted(summary.agents, key=lambda a: -(a.pass_rate if a.pass_rate is not None else -1))


def _units(summary: Summary) -> tuple[Unit, Unit, Unit]:
    """The units of time, tokens and cost, shared by the charts and the table."""
    agents = summary.agents
    return (
        time_unit(summary),
        tokens_unit([a.tokens for a in agents]),
        cost_unit([a.cost_usd for a in agents]),
    )


def _usage_chart(summary: Summary) -> str:
    agents = _ranked(summary)
    time, tokens, cost = _units(summary)
    columns: list[tuple[str, Unit, Sequence[float | None]]] = [
        ("mean agent time per trial", time, [a.mean_seconds for a in agents])
    ]
    if any(a.tokens is not None for a in agents):
        columns.append(("tokens", tokens, [a.tokens for a in agents]))
    if any(a.cost_usd is not None for a in agents):
        columns.append(("cost", cost, [a.cost_usd for a in agents]))
    return usage_chart([a.name for a in agents], columns)


def _state(cell: Cell) -> MatrixState:
    if cell.note == "—":
        return "not run"
    if cell.note in ("infra", "task"):
        return "infra" if cell.note == "infra" else "task"
    if cell.counted and cell.passes == cell.counted:
        return "pass"
    return "fail" if cell.passes == 0 else "partial"


def _matrix_chart(summary: Summary) -> str:
    tasks = [task for task, _, _ in summary.matrix]
    states = [[_state(cell) for cell in cells] for _, _, cells in summary.matrix]
    return matrix_chart(tasks, [a.name for a in summary.agents], states)


def _charts(summary: Summary, intervals: Mapping[str, tuple[float, float]] | None) -> list[str]:
    whiskers = ", with 95% intervals" if (intervals or _intervals(summary)) else ""
    figures = [
        (pass_rate_chart(_bars(summary, intervals)), f"Pass rate per agent, best first{whiskers}"),
        (_usage_chart(summary), "Agent time, tokens and cost per agent, in the same order"),
        (_matrix_chart(summary), "Tasks by agent"),
    ]
    return [
        '<div class="charts">',
        *(f"<figure>{svg}<figcaption>{html.escape(text)}</figcaption></figure>"
          for svg, text in figures),
        "</div>",
    ]  # fmt: skip


def _agent_table(summary: Summary) -> str:
    """The agents table, its time (as every format's), token and cost cells in the charts'
    units."""
    header, rows = agent_rows(summary)
    _, tokens, cost = _units(summary)
    columns = {name: index for index, name in enumerate(header)}
    for row, agent in zip(rows, summary.agents, strict=True):
        usage = [cost.text(agent.cost_usd)] if agent.cost_usd is not None else []
        usage += [tokens.text(agent.tokens)] if agent.tokens is not None else []
        row[columns["cost"]] = " / ".join(usage) or "—"
    return _table(header, rows)


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


def _steps(files: TrialFiles) -> str:
    """The trajectory as a collapsed list of steps, every text escaped."""
    items = "".join(
        f'<li><span class="who">{html.escape(step.source)}</span>'
        f"<pre>{html.escape(step.text)}</pre></li>"
        for step in files.steps
    )
    more = f"<p>{files.omitted} more not shown</p>" if files.omitted else ""
    count = f"{len(files.steps)} step{'s' if len(files.steps) != 1 else ''}"
    return f"<details><summary>trajectory ({count})</summary><ol>{items}</ol>{more}</details>"


def _failure_table(summary: Summary, trials: Mapping[tuple[str, str, int], TrialFiles]) -> str:
    """The non-passes, each with links to its logs and its trajectory's steps when known."""
    header, rows = failure_rows(summary)
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in [*header, "logs"])
    body = []
    for failure, row in zip(summary.failures, rows, strict=True):
        files = trials.get((failure.task, failure.agent, failure.trial), TrialFiles())
        links = " ".join(
            f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in files.links
        )
        shown = (links or "—") + (_steps(files) if files.steps else "")
        cells = "".join(f"<td>{html.escape(cell)}</td>" for cell in row)
        body.append(f"<tr>{cells}<td>{shown}</td></tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _suspect_table(summary: Summary) -> str:
    """The suspect trials, each finding's reason and line under its marks."""
    header, rows = suspect_rows(summary)
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = []
    for suspect, row in zip(summary.suspects, rows, strict=True):
        cells = "".join(f"<td>{html.escape(cell)}</td>" for cell in row[:-1])
        items = "".join(
            f"<li>{html.escape(f'{finding.mark}: {finding.reason}')}"
            f"<pre>{html.escape(finding.text)}</pre></li>"
            for finding in suspect.findings
        )
        shown = f"{html.escape(row[-1])}<details><summary>why</summary><ul>{items}</ul></details>"
        body.append(f'<tr>{cells}<td class="suspect">{shown}</td></tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(
    summary: Summary,
    *,
    trials: Mapping[tuple[str, str, int], TrialFiles] | None = None,
    intervals: Mapping[str, tuple[float, float]] | None = None,
) -> str:
    """The report page; with `trials` (`read_trial_files`), each non-pass links to its logs and
    shows its trajectory; with `intervals` (per agent name, a 95% interval of its pass rate as
    fractions), the pass-rate chart draws them as whiskers."""
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
        parts += _charts(summary, intervals)
    parts += ["<h2>Agents</h2>", _agent_table(summary)]
    if summary.comparisons:
        parts += ["<h2>Pairs</h2>", _table(*comparison_rows(summary))]
    header, rows = matrix_rows(summary, passed_by=True)
    agents_from = 3 if summary.quality else 2  # task, difficulty, the quality verdict
    matrix = _table(header, rows, cells_from=agents_from)
    parts += ["<h2>Tasks by agent</h2>", f'<div class="wide">{matrix}</div>']
    parts += [f"<p>{html.escape(line)}.</p>" for line in passed_by_lines(summary)]
    if summary.quality:
        parts += ["<h2>Quality</h2>", _table(*quality_rows(summary))]
    if summary.failures:
        parts += ["<h2>Non-passes</h2>", _failure_table(summary, trials or {})]
    if summary.suspects:
        parts += [
            "<h2>Suspect trials</h2>",
            "<p>The tamper scan's findings on each trial's patch; they change no reward.</p>",
            _suspect_table(summary),
        ]
    if summary.skipped_lines:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in summary.skipped_lines)
        parts += ["<h2>Skipped results lines</h2>", f"<ul>{items}</ul>"]
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in method_lines(summary))
    if notes:
        parts += [f'<ul class="methods">{notes}</ul>']
    parts.append("</body></html>\n")
    return "\n".join(parts)
