"""The `run` and `status` commands of the `selfbench` command line.

`run` exits 0 when every tier's budget was filled, 1 when a tier fell short (the export still
holds what was accepted), 2 on bad input, and 130 when Ctrl-C stopped it (it says how to resume).
`status` reads a run directory, even while a run is using it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple

from selfbench._text import markup_text
from selfbench.cli.bundle import add_agent_hosts_option, agent_hosts
from selfbench.cli.common import (
    add_ceiling_options,
    add_deps_option,
    add_environment_options,
    add_jobs_option,
    add_json_option,
    add_quality_options,
    add_repo_option,
    add_resume_option,
    add_setup_options,
    add_source_url_option,
    agent_dependencies,
    given_ceilings,
    print_json,
    refuse_unused,
    resume_dir,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED, RunError
from selfbench.progress import Reporter

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from selfbench.run import RunOptions, RunSummary
    from selfbench.run.status import RunStatus

__all__ = ["AUTHOR_NETWORK_CHOICES", "EXIT_INTERRUPTED", "add_run_commands"]

EXIT_INTERRUPTED = 130
_TIERS = ("easy", "medium", "hard")
_ENVIRONMENT_FLAGS = {
    "local": ("--setup-env", "--no-host-network-config"),
    "harbor": ("--harbor-env", "--harbor"),
}
"""The environment options each `--env` uses; any other is refused (with `--resume`, only when
`--env` is given again: the run's own environment is not known here)."""
AUTHOR_NETWORK_CHOICES = ("allow-list", "host")
"""`--author-network`'s values (`selfbench.run.confine.AUTHOR_NETWORKS`, checked equal by a
test; that module is too heavy to load for a parser)."""


def _resume_hint(run_dir: Path) -> str:
    from selfbench.run.driver import resume_command

    return resume_command(run_dir)


# --- progress ----------------------------------------------------------------------------------


def _tier_minutes() -> str:
    from selfbench.rules import CANDIDATE_SECONDS

    return ", ".join(f"{tier} {seconds / 60:g} min" for tier, seconds in CANDIDATE_SECONDS.items())


class _Candidate(NamedTuple):
    """A candidate as the run's bars count it: its tier, and its stage or its verdict."""

    tier: str
    doing: str | None = None
    """The stage it is in (`drafting`), while it runs."""
    status: str = "active"
    """`accepted` or `rejected` once finished."""


class _RunReporter(Reporter):
    """Progress per tier (accepted of budget, each stage's running count, elapsed) and one line
    per candidate's stage and per finished candidate. The bars are drawn only at a terminal."""

    def __init__(self, console: Console, progress: Progress | None) -> None:
        super().__init__()
        self.console = console
        self.progress = progress
        self.bars: dict[str, TaskID] = {}
        self.candidates: dict[str, _Candidate] = {}
        self.budgets: dict[str, int] = {}
        self.lock = threading.Lock()

    def start(self, options: RunOptions) -> None:
        """Say how long each candidate may take, and draw a bar for each tier with a budget."""
        self.budgets = {tier: options.budgets.get(tier, 0) for tier in _TIERS}
        times = ", ".join(
            f"{tier} {options.candidate_seconds(tier) / 60:g} min"
            for tier in _TIERS
            if self.budgets[tier]
        )
        if times:
            self.console.print(
                f"each candidate's sandbox stages may take: {times} (--candidate-time)"
            )
        if self.progress is None:
            return
        for tier in reversed(_TIERS):
            if self.budgets[tier]:
                self.bars[tier] = self.progress.add_task(tier, total=self.budgets[tier])

    def stage_started(self, stage: str, *, total: int | None = None) -> None:  # noqa: ARG002
        with self.lock:
            self.console.print(f"{stage}…")

    def candidate_started(self, name: str, stage: str, *, tier: str = "") -> None:
        # each stage of each candidate is named as it starts: drafting alone runs setup and
        # the tests several times, a minute or two of a real project's time
        with self.lock:
            self.candidates[name] = _Candidate(tier, doing=stage)
            self.console.print(f"{stage} {markup_text(f'{name} ({tier})')}…")
            self._refresh(tier)

    def candidate_accepted(self, name: str, *, tier: str = "") -> None:
        with self.lock:
            self.candidates[name] = _Candidate(tier, status="accepted")
            self.console.print(f"[green]accepted[/] {markup_text(f'{name} ({tier})')}")
            self._refresh(tier)

    def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:
        with self.lock:
            self.candidates[name] = _Candidate(tier, status="rejected")
            self.console.print(f"[red]rejected[/] {markup_text(f'{name} ({tier}): {reason}')}")
            self._refresh(tier)

    def candidate_progress(self, line: str) -> None:
        self.console.print(markup_text(line), highlight=False)

    def note(self, line: str) -> None:
        self.console.print(markup_text(line), highlight=False)

    def _refresh(self, tier: str) -> None:
        if self.progress is None or tier not in self.bars:
            return
        candidates = [c for c in self.candidates.values() if c.tier == tier]
        accepted = sum(c.status == "accepted" for c in candidates)
        rejected = sum(c.status == "rejected" for c in candidates)
        doing: dict[str, int] = {}
        for c in candidates:
            if c.doing is not None:
                doing[c.doing] = doing.get(c.doing, 0) + 1
        busy = ", ".join(f"{name} {n}" for name, n in doing.items())
        label = f"{tier:<6} {accepted}/{self.budgets[tier]} accepted, {rejected} rejected"
        self.progress.update(
            self.bars[tier],
            completed=accepted,
            description=f"{label}{'; ' + busy if busy else ''}",
        )


def _clean_up(console: Console) -> None:
    """Remove the prepared workspaces and the process's seeds and caches before the summary,
    saying so: they can take seconds to remove, which the exit would spend in silence."""
    from selfbench import _scratch
    from selfbench.environments.local.workspaces import workspace_pool

    pool = workspace_pool()
    if len(pool) or _scratch.process_scoped_count():
        console.print("removing the prepared workspaces, dependency seeds and download caches…")
        pool.clear()
        _scratch.release_process_scoped()


@contextmanager
def _progress(console: Console) -> Iterator[Progress | None]:
    if not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        yield progress


@contextmanager
def _stop_on_interrupt(stop: threading.Event, console: Console, run_dir: Path) -> Iterator[None]:
    """The first Ctrl-C stops the run: the running stages' processes (sandbox phases, author and
    reviewer commands, each in its own session, so the terminal's signal does not reach them)
    get SIGTERM, then SIGKILL after 2 s, and the stages they cut short are not recorded. A second
    Ctrl-C kills them at once and ends the process, as a kill would. The run directory stays
    consistent either way: every state file is written atomically."""
    from selfbench import _children

    def stopping() -> None:
        console.print("stopping the running stages (Ctrl-C again: stop at once)")
        _children.stop_all()

    # The handler runs in the main thread between two of its bytecodes, possibly in the middle
    # of a write to stdout: a write of its own there raises "reentrant call" and the run would
    # then wait for its stages instead of stopping them. So it only sets the flag and leaves the
    # printing and the stopping to a thread; the second Ctrl-C writes with os.write alone.
    def handle(_signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            _children.stop_all(grace=0)
            with contextlib.suppress(RuntimeError, OSError):  # a write the signal cut into
                sys.stdout.flush()
            os.write(2, f"stopped at once; resume with: {_resume_hint(run_dir)}\n".encode())
            os._exit(EXIT_INTERRUPTED)
        stop.set()
        threading.Thread(target=stopping, name="selfbench-stop", daemon=True).start()

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        # Once stopping, a second Ctrl-C that comes after the stages have already ended (bwrap
        # ends with its namespace on the first) is ignored: the run is exiting 130 anyway. A
        # Python handler would not do, since the interpreter's shutdown puts SIGINT's default
        # (death by the signal) back in place of every Python handler, but not of SIG_IGN.
        signal.signal(signal.SIGINT, signal.SIG_IGN if stop.is_set() else previous)
        _children.allow()


# --- run ---------------------------------------------------------------------------------------


def _options(args: argparse.Namespace) -> RunOptions:
    from selfbench.draft.config import load_config
    from selfbench.errors import DraftError
    from selfbench.run import RunOptions

    if args.repo is None or args.out is None:
        raise RunError("selfbench run needs --repo and --out (or --resume DIR)")
    try:
        config = load_config(Path(args.config)) if args.config else None
    except DraftError as exc:
        raise RunError(str(exc)) from exc  # it names the file
    return RunOptions(
        repo=Path(args.repo),
        out=Path(args.out),
        budgets={tier: getattr(args, tier) or 0 for tier in _TIERS},
        author="draft" if args.author is None else args.author,
        reviewer=args.reviewer,
        jobs=1 if args.jobs is None else args.jobs,  # checked with the rest: options.check()
        env=args.env or "local",
        harbor_env=args.harbor_env or "docker",
        harbor="harbor" if args.harbor is None else args.harbor,
        **({} if args.over_fetch is None else {"over_fetch": args.over_fetch}),
        **({} if args.author_time_limit is None else {"author_time_limit": args.author_time_limit}),
        **({} if args.inactivity is None else {"inactivity": args.inactivity}),
        source_url=args.source_url,
        author_env=tuple(args.author_env or ()),
        author_home=None if args.author_home is None else Path(args.author_home).absolute(),
        author_allow=tuple(args.author_allow or ()),
        author_network=args.author_network or "allow-list",
        setup_env=tuple(args.setup_env or ()),
        host_network_config=not args.no_host_network_config,
        agent_allowed_hosts=agent_hosts(args) or (),
        agent_dependencies=agent_dependencies(args),
        quality=not args.no_quality,
        min_quality=args.min_quality or "review",
        ceilings=given_ceilings(args),
        config=config,
        candidate_time=args.candidate_time,
    )


def _resume_changes(args: argparse.Namespace) -> dict[str, object]:
    """The options given again with `--resume`, by `RunOptions` field."""
    given = {
        "setup_env": tuple(args.setup_env) if args.setup_env else None,
        "host_network_config": False if args.no_host_network_config else None,
        "source_url": args.source_url,
        "jobs": args.jobs,
        "env": args.env,
        "harbor_env": args.harbor_env,
        "harbor": args.harbor,
        "agent_allowed_hosts": agent_hosts(args),
        "author_env": tuple(args.author_env) if args.author_env else None,
        "author_home": None if args.author_home is None else Path(args.author_home).absolute(),
        "author_allow": tuple(args.author_allow) if args.author_allow else None,
        "author_network": args.author_network,
        "agent_dependencies": None if args.deps is None else agent_dependencies(args),
        "min_quality": args.min_quality,
        "quality": False if args.no_quality else None,
        "ceilings": given_ceilings(args) or None,
        "candidate_time": args.candidate_time,
    }
    return {name: value for name, value in given.items() if value is not None}


def _run_dir(args: argparse.Namespace) -> Path:
    if args.run_dir is not None:
        return Path(args.run_dir)
    out = Path(args.out)
    return out.with_name(out.name.removesuffix(".tar.gz") + ".run")


def _print_summary(console: Console, summary: RunSummary) -> None:
    from selfbench.export import next_steps

    for tier in summary.tiers:
        if tier.budget:
            console.print(
                f"{tier.tier:<6} {tier.accepted} of {tier.budget} accepted, "
                f"{tier.rejected} rejected, {tier.pool} mined"
            )
    if any(summary.quality.values()):
        counts = ", ".join(f"{n} {verdict}" for verdict, n in summary.quality.items())
        console.print(f"quality {counts}")
    for line in summary.blocked:
        console.print(f"[yellow]{markup_text(line)}[/]")
    if summary.export is None:
        return
    if not any(tier.accepted for tier in summary.tiers):
        _print_empty(console, summary)
        return
    console.print(f"export  {summary.export}  (verified)")
    console.print("next")
    for command in next_steps(summary.export):
        console.print(f"   {command}")
    agents = "--agent codex:openai/gpt-5 --agent claude-code:anthropic/claude-sonnet-4-5"
    console.print(f"   selfbench eval {summary.export} {agents}    # compare agents")


def _print_empty(console: Console, summary: RunSummary) -> None:
    """An export that holds no task: not announced as a benchmark; why, and what to try."""
    console.print(f"export  {summary.export}  holds no task: no candidate was accepted")
    console.print("next")
    console.print(f"   selfbench status {summary.run_dir}    # why each candidate was rejected")
    console.print(
        "   a larger budget or --over-fetch tries more candidates; "
        "selfbench mine REPO lists them all"
    )


_KEPT_ON_RESUME: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("budgets and --over-fetch", (*(f"--{tier}" for tier in _TIERS), "--over-fetch")),
    ("author and reviewer", ("--author", "--reviewer", "--author-time-limit", "--inactivity")),
)
"""What a resumed run keeps of its own (`driver.RESUME_CHANGES` names what it may change): the
options that size its mined pool and those of who authors and reviews its tasks. Their defaults
are None, so that one given with `--resume` is refused, naming it, not ignored."""


def _refuse_kept(args: argparse.Namespace) -> None:
    """Refuse an option a resumed run keeps (`_KEPT_ON_RESUME`), naming the first given.

    Raises:
        RunError: such an option was given.
    """
    for what, flags in _KEPT_ON_RESUME:
        for flag in flags:
            if getattr(args, flag[2:].replace("-", "_")) is not None:
                raise RunError(f"--resume keeps the run's {what}; give no {flag}")


def _plan(args: argparse.Namespace) -> tuple[Path, RunOptions | None, dict[str, object]]:
    """The run directory, a new run's options (None to resume) and the options given again.

    Raises:
        RunError: an option no run can use, or `--resume` with `--repo`, `--out`, `--config`
            or an option the run keeps (`_KEPT_ON_RESUME`).
        InputError: an option the chosen environment does not use.
    """
    resumed = resume_dir(args)
    if args.env is not None or resumed is None:
        refuse_unused(args, args.env or "local", _ENVIRONMENT_FLAGS)
    if resumed is not None:
        if args.repo is not None or args.out is not None or args.config is not None:
            raise RunError(
                "--resume takes the run's own options; give no --repo, --out or --config"
            )
        _refuse_kept(args)
        return resumed, None, _resume_changes(args)
    options = _options(args)
    options.check()
    return _run_dir(args), options, {}


def _run(args: argparse.Namespace) -> int:
    from selfbench.cli.report import console
    from selfbench.run import run_benchmark

    run_dir, options, changes = _plan(args)
    stop = threading.Event()
    started = time.monotonic()
    interrupt = _stop_on_interrupt(stop, console, run_dir.absolute())
    with interrupt:  # a second Ctrl-C while cleaning up still stops at once
        with _progress(console) as progress:
            reporter = _RunReporter(console, progress)
            if options is not None:
                reporter.start(options)
            else:
                from selfbench.run.status import read_status

                reporter.start(read_status(run_dir).options)
            summary = run_benchmark(run_dir, options, stop=stop, reporter=reporter, changes=changes)
        _clean_up(console)
    if summary.interrupted:
        console.print(f"interrupted; resume with: {_resume_hint(summary.run_dir)}")
        return EXIT_INTERRUPTED
    console.print(f"run {summary.run_dir} finished in {time.monotonic() - started:.1f}s")
    _print_summary(console, summary)
    return EXIT_REJECTED if summary.blocked else EXIT_OK


# --- status ------------------------------------------------------------------------------------


def _status_table(status: RunStatus) -> Any:
    """Stages down, tiers across: how many candidates stand at each stage of each tier."""
    from rich.table import Table

    from selfbench.run.status import COLUMNS

    table = Table(title=f"run {status.run_dir}")
    table.add_column("stage")
    for tier in status.tiers:
        table.add_column(tier.tier, justify="right")
    table.add_row("budget", *(str(tier.budget) for tier in status.tiers), end_section=True)
    for column in COLUMNS:
        table.add_row(column, *(str(status.table[tier.tier][column]) for tier in status.tiers))
    return table


def _status(args: argparse.Namespace) -> int:
    from selfbench.run.status import read_status

    status = read_status(Path(args.run_dir))
    if args.json:
        print_json(status.to_json())
        return EXIT_OK
    from selfbench.cli.report import console

    console.print(_status_table(status))
    state = "exported" if status.finished else "running" if status.running else "not finished"
    elapsed = f", {status.elapsed:.1f}s elapsed" if status.elapsed is not None else ""
    console.print(f"{state}{elapsed}")
    for line in status.doing:
        console.print(markup_text(f"now: {line}"), highlight=False)
    for tier in status.tiers:
        if tier.blocked:
            console.print(markup_text(f"{tier.tier}: {tier.blocked}"))
    for rejected in status.rejections:
        console.print(markup_text(f"rejected {rejected.id} ({rejected.tier}): {rejected.reason}"))
        console.print(markup_text(f"   {' → '.join(rejected.history)}"), highlight=False)
    if status.stopped:
        console.print(markup_text(f"stopped: {status.stopped}"))
    if not status.finished and not status.running:
        console.print(f"resume with: {_resume_hint(status.run_dir)}")
    return EXIT_OK


# --- the parsers -------------------------------------------------------------------------------


def _add_run(commands: Any) -> None:
    # Nothing heavy here: every command's parser is built on each call (`selfbench audit` too).
    run = commands.add_parser("run", help="mine, draft, author, prove and export, resumable")
    add_repo_option(run, required=False, help="the git repository to mine")
    for tier in _TIERS:
        # default None, read as 0, so that one given with --resume can be refused
        run.add_argument(f"--{tier}", type=int, metavar="N", help=f"{tier} tasks")
    run.add_argument("--out", metavar="BENCH.tar.gz", help="where the export goes")
    run.add_argument("--run-dir", metavar="DIR", help="the run's state (default: OUT's .run)")
    run.add_argument(
        "--author",
        metavar="draft|COMMAND",
        help="draft (the default): the drafted instruction as it is; else an agent command (MCP)",
    )
    run.add_argument("--reviewer", metavar="COMMAND", help="a coupling reviewer command")
    run.add_argument(
        "--config",
        metavar="FILE",
        help="a selfbench.toml every candidate's draft uses over the repository's own "
        "(setupCommand, testCommand, runner, toolchains, ...)",
    )
    run.add_argument(
        "--author-env",
        action="append",
        metavar="NAME",
        help="pass this variable to the author and reviewer commands, which run in a sandbox "
        "with none of selfbench's environment but PATH, LANG and TERM (a model's API key)",
    )
    # --author-env, --author-home, --author-allow and --author-network given again with
    # --resume replace the run's own
    run.add_argument(
        "--author-home",
        metavar="DIR",
        help="a private copy of DIR is the author and reviewer commands' HOME (an agent CLI's "
        "login; DIR itself is never written)",
    )
    run.add_argument(
        "--author-allow",
        action="append",
        metavar="URL",
        help="a host the author and reviewer commands may reach, as a base URL's host and port "
        "(https://api.anthropic.com, http://127.0.0.1:8080; repeatable); the model APIs their "
        "--author-env variables name are allowed too, nothing else",
    )
    run.add_argument(
        "--author-network",
        choices=AUTHOR_NETWORK_CHOICES,
        help="allow-list (default): only those hosts, never the host's loopback unless allowed; "
        "host: the host's network",
    )
    # -j, --env, --harbor-env, --source-url, --setup-env and --no-host-network-config may be
    # given again with --resume (their defaults are None so that a change can be told)
    add_jobs_option(run, what="candidates", default=None)
    add_environment_options(run)
    run.add_argument(
        "--over-fetch", type=float, metavar="X", help="budget multiplier (default: mining's, 1.5)"
    )
    run.add_argument(
        "--author-time-limit", type=float, metavar="SECONDS", help="the author's limit (2400)"
    )
    run.add_argument(
        "--inactivity", type=float, metavar="SECONDS", help="the author's quiet limit (600)"
    )
    run.add_argument(
        "--candidate-time",
        type=float,
        metavar="SECONDS",
        help="the time each candidate's drafting, validation and quality may take in all "
        f"(default by tier: {_tier_minutes()}); past it, it is rejected",
    )
    add_source_url_option(run, what="tasks")
    add_setup_options(
        run,
        setup_env_help="pass this variable to the sandbox's setup (names stored, values read "
        "at each start)",
    )
    add_agent_hosts_option(run)
    add_deps_option(run)
    add_quality_options(run, gate=True)
    # the local sandbox's ceilings (drafting and quality run in it under either --env); stored
    # in the run, and each given again with --resume changes that one
    add_ceiling_options(run)
    add_resume_option(run, what="run")
    run.set_defaults(run=_run)


def add_run_commands(commands: Any) -> None:
    """Register `run` and `status` on the CLI's subparsers."""
    _add_run(commands)
    status = commands.add_parser("status", help="a run directory's stages, tiers, rejections")
    status.add_argument("run_dir", metavar="DIR")
    add_json_option(status)
    status.set_defaults(run=_status)
