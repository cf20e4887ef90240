"""Readable terminal reports (rich). Imported only when a command prints for a person."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from selfbench.audit import AuditReport
from selfbench.contract import CheckReport

__all__ = ["console", "print_audit", "print_check"]

console = Console(highlight=False, soft_wrap=True)


def print_check(source: str, report: CheckReport) -> None:
    """Print `selfbench check`'s verdict, issues and warnings."""
    if report.valid:
        console.print(Text.assemble(("valid", "bold green"), f"  {source}"))
    else:
        console.print(Text.assemble(("invalid", "bold red"), f"  {source}"))
        for issue in report.issues:
            console.print(Text.assemble("  ", (issue.path, "bold"), f": {issue.message}"))
    for warning in report.warnings:
        console.print(Text.assemble(("  warning: ", "yellow"), warning))


def print_audit(task_id: str, report: AuditReport) -> None:
    """Print `selfbench audit`'s verdict, metrics, blockers and warnings."""
    verdict = ("accepted", "bold green") if report.accepted else ("rejected", "bold red")
    console.print(Text.assemble(verdict, f"  {task_id}"))
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_row("implementation files", str(report.implementation_files))
    table.add_row("implementation changed lines", str(report.implementation_changed_lines))
    table.add_row("held-out test files", str(report.test_files))
    console.print(table)
    for blocker in report.blockers:
        console.print(Text.assemble(("  blocker: ", "red"), blocker))
    for warning in report.warnings:
        console.print(Text.assemble(("  warning: ", "yellow"), warning))
