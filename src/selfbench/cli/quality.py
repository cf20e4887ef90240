"""The `quality` command: run each task's gold variants in the sandbox and write `quality.json`.

A checker: exit 0 when every verdict is `ship` or `review`, 1 when one is `reject`, 2 on bad
input (a task directory that cannot be read, a repository that is not one), found before any
task runs, so nothing is half-written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench import activity
from selfbench._text import printable
from selfbench.cli.common import (
    add_ceiling_options,
    add_jobs_option,
    add_json_option,
    add_repo_option,
    add_setup_options,
    ceilings,
    jobs,
    print_json,
    setup_options,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED, InputError
from selfbench.progress import choose_reporter, stage

if TYPE_CHECKING:
    from selfbench.artifacts.quality_record import QualityRecord

__all__ = ["add_quality_command"]


def _check_inputs(task_dirs: list[Path], repo: Path) -> None:
    """Read every task directory and the repository before anything runs.

    Raises:
        InputError: the repository is not a directory.
        SelfbenchError: a task directory cannot be read (its own error, one line).
    """
    from selfbench.artifacts.task_dir import read_authored_task

    if not repo.is_dir():
        raise InputError(f"--repo {repo}: not a directory")
    for task_dir in task_dirs:
        if not task_dir.is_dir():
            raise InputError(f"{task_dir}: not a task directory")
        read_authored_task(task_dir)


def _quality(args: argparse.Namespace) -> int:
    from selfbench.environments.build import local_options
    from selfbench.environments.local.phases import LocalOptions
    from selfbench.environments.spec import EnvironmentSpec
    from selfbench.quality.api import QualityOptions, assess_task

    workers = jobs(args) or 1
    host = ceilings(args, jobs=workers, workspace=None)
    task_dirs = [Path(path) for path in args.task_dirs]
    repo = Path(args.repo)
    _check_inputs(task_dirs, repo)
    setup_env, host_network = setup_options(args)
    environment = EnvironmentSpec(setup_env=setup_env, host_network=host_network)
    logs = Path(args.logs) if args.logs else None
    local = local_options(environment, logs=logs, local=LocalOptions(ceilings=host))
    options = QualityOptions(local=local, jobs=workers)
    reporter = choose_reporter(verdicts=("ship or review", "reject"))
    records: list[QualityRecord] = []
    items = stage(reporter, "assessing", total=len(task_dirs))
    with items, activity.heartbeat(reporter.candidate_progress):
        for task_dir in task_dirs:
            with activity.doing(task_dir.name, "checking quality"):
                record = assess_task(task_dir, repo, options)
            accepted = record.verdict != "reject"
            reporter.candidate_finished(record.taskId, accepted=accepted, reason=_reason(record))
            records.append(record)
    if args.json:
        print_json([record.model_dump(mode="json", by_alias=True) for record in records])
    else:
        _print_table(records)
    return EXIT_REJECTED if any(record.verdict == "reject" for record in records) else EXIT_OK


def _reason(record: QualityRecord) -> str | None:
    return "; ".join(record.reasons) or None


def _score_cell(record: QualityRecord) -> str:
    mutation = record.mutation
    if mutation is None or mutation.score is None:
        return "-"
    cell = f"{mutation.score:.0%} ({mutation.killed}/{mutation.generated})"
    caught = len(mutation.caught_by_pass_to_pass)
    return f"{cell} +{caught} by pass-to-pass" if caught else cell


def _print_table(records: list[QualityRecord]) -> None:
    """One row per task: verdict, mutation score, unneeded parts, moved files, reasons."""
    from rich.table import Table
    from rich.text import Text

    from selfbench.cli.report import console

    styles = {"ship": "bold green", "review": "bold yellow", "reject": "bold red"}
    table = Table(box=None, padding=(0, 2))
    for column in ("task", "verdict", "mutation score", "unneeded", "moved", "reasons"):
        table.add_column(column, overflow="fold")  # a path is shown whole, over several lines
    for record in records:
        ablation = record.ablation
        table.add_row(
            Text(printable(record.taskId)),
            Text(record.verdict, styles[record.verdict]),
            _score_cell(record),
            Text(
                printable(", ".join(ablation.unneeded) if ablation and ablation.unneeded else "-")
            ),
            Text(printable(", ".join(ablation.moved) if ablation and ablation.moved else "-")),
            Text(printable("; ".join(record.reasons) or "-")),
        )
    console.print(table)


def add_quality_command(commands: Any) -> None:
    """Register `quality` on the CLI's subcommands."""
    quality = commands.add_parser(
        "quality", help="judge tasks by running them: gold minimality, test strength, verdict"
    )
    quality.add_argument("task_dirs", nargs="+", metavar="TASK_DIR")
    add_repo_option(quality, required=True, help="the repository the tasks were authored from")
    add_jobs_option(quality, what="variants run")
    quality.add_argument(
        "--logs", metavar="DIR", help="where each task's phase logs go (default: removed)"
    )
    add_setup_options(quality)
    # each variant's verifier runs once: no --max-reruns
    add_ceiling_options(quality, reruns=False)
    add_json_option(quality)
    quality.set_defaults(run=_quality)
