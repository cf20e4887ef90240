"""Render a `Summary` as text (a rich table), Markdown, CSV or JSON (pure: strings out)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from selfbench._text import printable
from selfbench.evaluate.report_html import render_html
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
)
from selfbench.evaluate.summary import Summary

__all__ = [
    "FORMATS",
    "render_csv",
    "render_json",
    "render_markdown",
    "render_report",
    "render_text",
]

FORMATS = ("text", "md", "csv", "json", "html")


def _title(summary: Summary) -> str:
    return (
        f"Benchmark {summary.benchmark[:12]}: {summary.tasks} tasks, "
        f"{summary.trials_per_task} trial(s) per task and agent"
    )


def render_text(summary: Summary, *, width: int = 120) -> str:
    """The terminal report: rich tables (agents, tasks, pairs), rendered without colour, the
    methods' footnote and the non-passes, then the suspect trials when there are any."""
    from rich.console import Console  # noqa: PLC0415 - start-up: rich costs 40 ms; only text pays
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(_title(summary))
    for line in network_lines(summary):
        console.print(printable(line), markup=False, highlight=False)
    sections = [
        ("Agents", agent_rows(summary), []),
        ("Tasks", matrix_rows(summary, passed_by=True), passed_by_lines(summary)),
        ("Pairs", comparison_rows(summary), method_lines(summary) + _failure_lines(summary)),
        ("Suspect trials", suspect_rows(summary), []),
    ]
    for title, (header, rows), lines in sections:
        if rows or title in ("Agents", "Tasks"):  # the others only when they have a row
            table = Table(title=title)
            for column in header:
                table.add_column(column)
            for row in rows:
                table.add_row(*(Text(printable(cell)) for cell in row))
            console.print(table)
        for line in lines:
            console.print(printable(line), markup=False, highlight=False)
    output = console.file
    assert isinstance(output, io.StringIO)  # noqa: S101 - the file given above
    return output.getvalue()


def _failure_lines(summary: Summary) -> list[str]:
    lines = [f"skipped: {line}" for line in summary.skipped_lines]
    if summary.failures:
        lines.append("Non-passes:")
    lines += [
        f"  {f.task} {f.agent} #{f.trial}: {f.classification}: {f.reason}"
        + (f" [cause: {f.cause}]" if f.cause else "")
        for f in summary.failures
    ]
    return lines


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), line(["---"] * len(header)), *(line(row) for row in rows)]


def render_markdown(summary: Summary) -> str:
    """The report as Markdown: the agents and tasks tables, the tasks' quality verdicts and
    reasons (when the benchmark carries them), the pairs of agents, the methods' footnote, the
    non-passes and the suspect trials (when there are any)."""
    lines = [f"# {_title(summary)}", ""]
    lines += [f"{line}." for line in network_lines(summary)]
    lines += ["", "## Agents", ""] if summary.networks else ["## Agents", ""]
    lines += _markdown_table(*agent_rows(summary))
    lines += ["", "## Tasks", ""]
    lines += _markdown_table(*matrix_rows(summary, passed_by=True))
    passed_by = passed_by_lines(summary)
    if passed_by:
        lines += ["", *(f"{line}." for line in passed_by)]
    if summary.quality:
        lines += ["", "## Quality", ""]
        lines += _markdown_table(*quality_rows(summary))
    if summary.comparisons:
        lines += ["", "## Pairs", ""]
        lines += _markdown_table(*comparison_rows(summary))
    lines += ["", *(f"*{line}*" for line in method_lines(summary))]
    if summary.failures:
        lines += ["", "## Non-passes", ""]
        lines += _markdown_table(*failure_rows(summary))
    if summary.suspects:
        lines += ["", "## Suspect trials", ""]
        lines += _markdown_table(*suspect_rows(summary))
    return "\n".join(lines) + "\n"


def render_csv(summary: Summary) -> str:
    """One row per agent and difficulty (`all` first): trials, passes, rate and the rest; the
    pass rate's 95% interval, its method and pass^k on the `all` row, after the columns
    before them."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    method = "task bootstrap" if summary.trials_per_task > 1 else "wilson"
    writer.writerow(
        ["agent", "difficulty", "trials", "passes", "pass_rate", "pass_at_k", "mean_agent_seconds",
         "median_agent_seconds", "tokens", "cost_usd", "agent_failures", "task_failures",
         "infrastructure_failures", "pass_rate_low", "pass_rate_high", "interval_method",
         "pass_hat_k"]
    )  # fmt: skip
    for agent in summary.agents:
        rows = [("all", agent.passes, agent.counted), *agent.by_difficulty]
        for difficulty, passes, counted in rows:
            whole = difficulty == "all"
            writer.writerow(
                [
                    agent.name,
                    difficulty,
                    counted,
                    passes,
                    _number(passes / counted if counted else None),
                    _number(agent.pass_at_k) if whole else "",
                    _number(agent.mean_seconds) if whole else "",
                    _number(agent.median_seconds) if whole else "",
                    "" if agent.tokens is None or not whole else agent.tokens,
                    _number(agent.cost_usd) if whole else "",
                    agent.agent_failures if whole else "",
                    agent.task_failures if whole else "",
                    agent.infrastructure if whole else "",
                    _number(agent.interval.low) if whole and agent.interval else "",
                    _number(agent.interval.high) if whole and agent.interval else "",
                    method if whole and agent.interval else "",
                    _number(agent.pass_hat_k) if whole else "",
                ]
            )
    return out.getvalue()


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def render_json(summary: Summary) -> str:
    """The whole summary as JSON."""
    return json.dumps(summary.to_json(), ensure_ascii=False, indent=2) + "\n"


def render_report(summary: Summary, output_format: str) -> str:
    """Render in one of `FORMATS`."""
    if output_format == "html":
        return render_html(summary)
    renderers = {"text": render_text, "md": render_markdown, "csv": render_csv, "json": render_json}
    return renderers[output_format](summary)
