"""The `eval` and `report` commands of the `selfbench` command line.

`eval` exits 0 when every trial ran (whatever the agents scored), 1 when every trial of an agent
failed on the infrastructure (nothing of it was measured), 2 on bad input; `report` exits 0, or
2 when the results cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._text import printable
from selfbench.cli.common import (
    CEILING_FLAGS,
    RERUNS_CEILING,
    add_ceiling_options,
    add_environment_option,
    add_harbor_options,
    add_jobs_option,
    add_json_option,
    add_model_option,
    add_resume_option,
    add_setup_options,
    ceilings,
    environment_spec,
    jobs,
    resume_dir,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED, InputError
from selfbench.progress import Reporter, RichReporter, choose_reporter

if TYPE_CHECKING:
    from rich.table import Table

    from selfbench.evaluate import TrialRecord
    from selfbench.evaluate.results import ResultsLog
    from selfbench.evaluate.summary import Summary

__all__ = ["add_eval_commands"]

_RESULTS = Path("results")
_CEILINGS = tuple(flag for flag in CEILING_FLAGS if flag != RERUNS_CEILING)
"""The `--max-*` options of `eval`: a trial runs its verifier once, so no `--max-reruns`."""
_ENVIRONMENT_FLAGS = {
    "local": ("--harbor-env", "--harbor", "--setup-env", "--no-host-network-config", *_CEILINGS),
    "harbor": ("--harbor-env", "--harbor"),
}
"""The environment options each `--env` uses; Harbor agents (`harbor:AGENT:MODEL`) use the
Harbor options under either, so only setup's options and the ceilings of the local sandbox can
be refused (under harbor)."""


def _trial_line(record: TrialRecord) -> str:
    verdict = "pass" if record.passed else f"{record.classification}: {record.reason}"
    count = len(record.suspect)
    suspect = f" [suspect: {count} finding{'s' if count != 1 else ''}]" if count else ""
    return printable(f"{record.task} {record.agent} #{record.trial}: {verdict}{suspect}") + "\n"


def _print_trial(record: TrialRecord) -> None:
    sys.stderr.write(_trial_line(record))
    sys.stderr.flush()


class _LiveTable:
    """The terminal's live table: per agent, trials done, passes and failures by class."""

    def __init__(self, agents: list[str], total: int) -> None:
        self.agents = agents
        self.total = total
        self.counts = {name: [0, 0, 0, 0, 0] for name in agents}  # done, pass, agent, task, infra
        self.lock = threading.Lock()

    def add(self, record: TrialRecord) -> None:
        with self.lock:
            counts = self.counts[record.agent]
            counts[0] += 1
            column = {None: 1, "agent": 2, "task": 3, "infrastructure": 4}[record.classification]
            counts[column] += 1

    def render(self) -> Table:
        from rich.table import Table

        table = Table(title="selfbench eval")
        for column in ("agent", "trials done", "passed", "agent failures", "infrastructure"):
            table.add_column(column)
        with self.lock:
            for name in self.agents:
                done, passed, failed, _, infra = self.counts[name]
                table.add_row(name, f"{done}/{self.total}", str(passed), str(failed), str(infra))
        return table


@contextmanager
def _trials_shown(
    reporter: Reporter, agents: list[str], total: int
) -> Iterator[Callable[[TrialRecord], None]]:
    """Each finished trial: a line in a log; the live table at a terminal."""
    if not isinstance(reporter, RichReporter):
        yield _print_trial
        return
    from rich.console import Console
    from rich.live import Live

    live = _LiveTable(agents, total)
    with Live(live.render(), console=Console(stderr=True)) as screen:

        def on_record(record: TrialRecord) -> None:
            live.add(record)
            screen.update(live.render())

        yield on_record


def _warn(line: str) -> None:
    sys.stderr.write(f"warning: {printable(line)}\n")


def _eval(args: argparse.Namespace) -> int:
    from selfbench.evaluate import (
        EvalOptions,
        build_summary,
        open_benchmark,
        parse_agent_specs,
        render_report,
        run_eval,
    )

    agents = parse_agent_specs(args.agent or [], model=args.model)
    results, resume = _results(args)
    workers = jobs(args) or 1
    workspace = Path(args.workspace) if args.workspace else None
    environment = environment_spec(args, _ENVIRONMENT_FLAGS)
    options = EvalOptions(
        results=results,
        trials=args.trials,
        jobs=workers,
        environment=environment,
        workspace=workspace,
        resume=resume,
        ceilings=ceilings(args, jobs=workers, workspace=workspace),
    )
    reporter = choose_reporter()
    with open_benchmark(Path(args.bench), workspace=options.workspace) as bench:
        total = len(bench.tasks) * args.trials
        with _trials_shown(reporter, [agent.name for agent in agents], total) as on_record:
            log = run_eval(bench, agents, options=options, on_record=on_record, reporter=reporter)
    summary = build_summary(log)
    sys.stdout.write(render_report(summary, "json" if args.json else "text"))
    unmeasured = _unmeasured(summary)
    for line in unmeasured:
        sys.stderr.write(f"error: {printable(line)}\n")
    return EXIT_REJECTED if unmeasured else EXIT_OK


def _results(args: argparse.Namespace) -> tuple[Path, bool]:
    """The results directory and whether it must already hold an evaluation: `--resume DIR`,
    or `--results DIR` (default `results`) that a bare `--resume` continues."""
    given = Path(args.results) if args.results is not None else None
    resumed = resume_dir(args, default=given or _RESULTS)
    if resumed is not None and given is not None and resumed != given:
        raise InputError("--resume DIR names the results directory: give no other --results")
    return (resumed, True) if resumed is not None else (given or _RESULTS, False)


def _unmeasured(summary: Summary) -> list[str]:
    """A line for each agent none of whose trials counted because the infrastructure failed
    them all (a setup that cannot reach its registry, say): nothing was measured."""
    lines = []
    for agent in summary.agents:
        if agent.counted == agent.task_failures == 0 and agent.infrastructure > 0:
            first = next(
                (f.reason for f in summary.failures if f.agent == agent.name), "no reason given"
            )
            lines.append(
                f"every trial of {agent.name} failed on the infrastructure, so nothing was "
                f"measured (first: {first})"
            )
    return lines


def _write_atomic(path: Path, text: str) -> None:
    from selfbench import _fs
    from selfbench.errors import EvalError, translating

    with translating(EvalError, f"write {path}"):
        _fs.write_atomic(path, text.encode())


def _html(log: ResultsLog, results: Path, page_dir: Path) -> str:
    """The HTML page, each non-pass linked to its logs relative to `page_dir`."""
    from selfbench.evaluate import build_summary
    from selfbench.evaluate.report_html import render_html
    from selfbench.evaluate.trial_files import read_trial_files

    trials = read_trial_files(log, results, page_dir=page_dir)
    return render_html(build_summary(log), trials=trials)


def _report(args: argparse.Namespace) -> int:
    from selfbench.evaluate import build_summary, read_results, render_report

    log = read_results(Path(args.results))
    for line in log.corrupt:
        _warn(line)
    if args.format == "html":
        text = _html(log, Path(args.results), Path(args.out).parent if args.out else Path())
    else:
        text = render_report(build_summary(log), args.format)
    if args.out:
        _write_atomic(Path(args.out), text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def add_eval_commands(commands: Any) -> None:
    """Register `eval` and `report` on the CLI's subparsers."""
    evaluate = commands.add_parser("eval", help="compare agents on a benchmark, resumably")
    evaluate.add_argument(
        "bench", metavar="BENCH", help="an export archive, a tasks directory or a run directory"
    )
    evaluate.add_argument(
        "--agent",
        action="append",
        metavar="NAME=COMMAND",
        help=(
            "oracle, nop, NAME=COMMAND, [NAME=]HARNESS:MODEL (a ready-made harness, such as "
            "mini-swe-agent:openai/MODEL) or [NAME=]harbor:AGENT:MODEL (Harbor's own agent, "
            "such as harbor:claude-code); MODEL may come from --model (repeatable)"
        ),
    )
    add_model_option(evaluate)
    evaluate.add_argument("--trials", type=int, default=1, help="trials per task and agent")
    add_jobs_option(evaluate, what="tasks (or trials)")
    add_environment_option(evaluate)
    evaluate.add_argument("--results", metavar="DIR", help="default: results")
    # a bare --resume, the former spelling, continues in --results; finished trials are always
    # skipped, --resume only refuses a directory without an evaluation
    add_resume_option(evaluate, what="evaluation", bare="the --results directory")
    add_json_option(evaluate)
    add_harbor_options(evaluate)
    evaluate.add_argument("--workspace", metavar="DIR", help="where local workspaces go")
    add_setup_options(evaluate)
    # the local sandbox's ceilings, on local trials only (Harbor sizes its own containers)
    add_ceiling_options(evaluate, reruns=False)
    evaluate.set_defaults(run=_eval)

    report = commands.add_parser("report", help="render an evaluation's results")
    report.add_argument("results", metavar="RESULTS_DIR")
    report.add_argument("--format", choices=("text", "md", "csv", "json", "html"), default="text")
    report.add_argument("--out", metavar="FILE", help="write here (atomically) instead of stdout")
    report.set_defaults(run=_report)
