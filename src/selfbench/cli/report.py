"""Readable terminal reports (rich). Imported only when a command prints for a person."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from selfbench._text import printable

if TYPE_CHECKING:  # `check` and `audit` print without loading validation's modules
    from selfbench.audit import AuditReport
    from selfbench.contract import CheckReport
    from selfbench.submit import TaskCheck
    from selfbench.validate.report import TaskReport

__all__ = ["console", "print_audit", "print_check", "print_task_check", "print_validation"]

console = Console(highlight=False, soft_wrap=True)


def print_check(source: str, report: CheckReport) -> None:
    """Print `selfbench check`'s verdict, issues and warnings."""
    if report.valid:
        console.print(Text.assemble(("valid", "bold green"), f"  {printable(source)}"))
    else:
        console.print(Text.assemble(("invalid", "bold red"), f"  {printable(source)}"))
        for issue in report.issues:
            console.print(
                Text.assemble(
                    "  ", (printable(issue.path), "bold"), f": {printable(issue.message)}"
                )
            )
    for warning in report.warnings:
        console.print(Text.assemble(("  warning: ", "yellow"), printable(warning)))


def print_task_check(source: str, report: TaskCheck) -> None:
    """Print `selfbench check` given patches: verdict, issues, blockers and warnings."""
    if report.accepted:
        console.print(Text.assemble(("valid", "bold green"), f"  {printable(source)}"))
    else:
        console.print(Text.assemble(("invalid", "bold red"), f"  {printable(source)}"))
    for issue in report.issues:
        console.print(
            Text.assemble("  ", (printable(issue.path), "bold"), f": {printable(issue.message)}")
        )
    for blocker in report.blockers:
        console.print(Text.assemble(("  blocker: ", "red"), printable(blocker)))
    for warning in report.warnings:
        console.print(Text.assemble(("  warning: ", "yellow"), printable(warning)))


def print_audit(task_id: str, report: AuditReport) -> None:
    """Print `selfbench audit`'s verdict, metrics, blockers and warnings."""
    verdict = ("accepted", "bold green") if report.accepted else ("rejected", "bold red")
    console.print(Text.assemble(verdict, f"  {printable(task_id)}"))
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("implementation files", str(report.implementation_files))
    table.add_row("implementation changed lines", str(report.implementation_changed_lines))
    table.add_row("held-out test files", str(report.test_files))
    console.print(table)
    for blocker in report.blockers:
        console.print(Text.assemble(("  blocker: ", "red"), printable(blocker)))
    for warning in report.warnings:
        console.print(Text.assemble(("  warning: ", "yellow"), printable(warning)))


def print_validation(reports: list[TaskReport]) -> None:
    """Print `selfbench validate`'s verdicts: one row per task, then each rejection's reason."""
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
