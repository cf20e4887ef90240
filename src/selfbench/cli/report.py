"""Readable terminal reports (rich). Imported only when a command prints for a person.

`check` and `audit` style their lines with rich at a terminal; piped, they write the same text
without styles and never load rich, the dearest import of a quick command (as `mine` prints its
table and `progress` its reporter). `console` is made on first use.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._text import printable

if TYPE_CHECKING:  # `check` and `audit` print without loading validation's modules
    from rich.console import Console

    from selfbench.artifacts.report import TaskReport
    from selfbench.audit import AuditReport
    from selfbench.contract import CheckReport
    from selfbench.submit import TaskCheck

    console: Console

__all__ = ["console", "print_audit", "print_check", "print_task_check", "print_validation"]

_Segment = str | tuple[str, str]
"""Part of a line: plain text, or text and its rich style."""


@cache
def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def __getattr__(name: str) -> Any:
    if name == "console":
        return _console()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _line(*segments: _Segment) -> None:
    """Print one line: styled at a terminal, its plain text when piped."""
    if sys.stdout.isatty():
        from rich.text import Text

        _console().print(Text.assemble(*segments))
    else:
        text = "".join(part if isinstance(part, str) else part[0] for part in segments)
        sys.stdout.write(f"{text}\n")


def _rows(rows: list[tuple[str, str]]) -> None:
    """Print label-value rows as a borderless table, two spaces either side of each cell."""
    if sys.stdout.isatty():
        from rich.table import Table

        table = Table(show_header=False, box=None, padding=(0, 2))
        for row in rows:
            table.add_row(*row)
        _console().print(table)
    else:
        widths = [max(len(row[column]) for row in rows) for column in range(2)]
        for row in rows:
            cells = (f"  {cell.ljust(width)}  " for cell, width in zip(row, widths, strict=True))
            sys.stdout.write("".join(cells) + "\n")


def print_check(source: str, report: CheckReport) -> None:
    """Print `selfbench check`'s verdict, issues and warnings."""
    if report.valid:
        _line(("valid", "bold green"), f"  {printable(source)}")
    else:
        _line(("invalid", "bold red"), f"  {printable(source)}")
        for issue in report.issues:
            _line("  ", (printable(issue.path), "bold"), f": {printable(issue.message)}")
    for warning in report.warnings:
        _line(("  warning: ", "yellow"), printable(warning))


def print_task_check(source: str, report: TaskCheck) -> None:
    """Print `selfbench check` given patches: verdict, issues, blockers and warnings."""
    if report.accepted:
        _line(("valid", "bold green"), f"  {printable(source)}")
    else:
        _line(("invalid", "bold red"), f"  {printable(source)}")
    for issue in report.issues:
        _line("  ", (printable(issue.path), "bold"), f": {printable(issue.message)}")
    for blocker in report.blockers:
        _line(("  blocker: ", "red"), printable(blocker))
    for warning in report.warnings:
        _line(("  warning: ", "yellow"), printable(warning))


def print_audit(task_id: str, report: AuditReport) -> None:
    """Print `selfbench audit`'s verdict, metrics, blockers and warnings."""
    verdict = ("accepted", "bold green") if report.accepted else ("rejected", "bold red")
    _line(verdict, f"  {printable(task_id)}")
    _rows(
        [
            ("implementation files", str(report.implementation_files)),
            ("implementation changed lines", str(report.implementation_changed_lines)),
            ("held-out test files", str(report.test_files)),
        ]
    )
    for blocker in report.blockers:
        _line(("  blocker: ", "red"), printable(blocker))
    for warning in report.warnings:
        _line(("  warning: ", "yellow"), printable(warning))


def print_validation(reports: list[TaskReport]) -> None:
    """Print `selfbench validate`'s verdicts: one row per task, then each rejection's reason."""
    from rich.table import Table
    from rich.text import Text

    console = _console()
    table = Table(box=None, padding=(0, 2))
    columns = ("task", "verdict", "nop f2p/p2p", "oracle reward", "gold runs", "tests", "checks")
    for column in columns:
        table.add_column(column)
    for report in reports:
        verdict = (
            Text("accepted", "bold green") if report.accepted else Text("rejected", "bold red")
        )
        nop, oracle = report.nop.reward, report.oracle.reward
        nop_cell = f"{nop.fail_to_pass}/{nop.pass_to_pass}" if nop else "-"
        oracle_cell = str(oracle.reward) if oracle else "-"
        runs = str(1 + len(report.reruns)) if oracle else "0"
        tests = _tests_cell(report)
        table.add_row(
            Text(printable(report.task_id)),
            verdict,
            nop_cell,
            oracle_cell,
            runs,
            tests,
            _checks_cell(report),
        )
    console.print(table)
    for report in reports:
        if report.reason:
            console.print(
                Text.assemble((f"{printable(report.task_id)}: ", "bold"), printable(report.reason))
            )
    for report in reports:
        if report.toolchains:
            used = ", ".join(use.describe() for use in report.toolchains)
            console.print(
                Text.assemble(
                    (f"{printable(report.task_id)}: ", "bold"), printable(f"toolchains: {used}")
                )
            )
    logs = {Path(report.oracle.log).parent for report in reports if report.oracle.log}
    for directory in sorted(logs):
        console.print(Text.assemble(("logs: ", "dim"), printable(str(directory))))


def _tests_cell(report: TaskReport) -> str:
    """The oracle's per-phase counts (`f2p 1 passed; p2p 4 passed 1 skipped`), else `-`."""
    from selfbench.bundle.render_scripts import F2P_LABEL, P2P_LABEL

    parts = []
    for label, abbreviation in ((F2P_LABEL, "f2p"), (P2P_LABEL, "p2p")):
        counts = report.oracle.counts.get(label)
        if counts is None:
            continue
        shown = " ".join(f"{count} {outcome}" for outcome, count in counts.items() if count)
        parts.append(f"{abbreviation} {shown or 'no test'}")
    return "; ".join(parts) or "-"


def _checks_cell(report: TaskReport) -> str:
    """Passed of the checks that ran, and how many did not run (`2/3, 2 not run`)."""
    if not report.checks:
        return "-"
    ran = [check for check in report.checks if check.ran]
    cell = f"{sum(check.passed for check in ran)}/{len(ran)}"
    skipped = len(report.checks) - len(ran)
    return f"{cell}, {skipped} not run" if skipped else cell
