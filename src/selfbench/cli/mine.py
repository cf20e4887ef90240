"""The `mine` command of the `selfbench` command line, and `schema candidate`.

`mine` exits 0 when it ran (whatever it found), 2 on bad input: not a repository, an unknown
revision, malformed `--prs`, a negative budget. Skipped session files are reported on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._text import printable
from selfbench.cli.common import add_json_option, add_source_url_option, print_json
from selfbench.errors import EXIT_OK, MineError, translating
from selfbench.progress import choose_reporter, stage

if TYPE_CHECKING:
    from rich.console import Console

    from selfbench.contract import Difficulty
    from selfbench.mine import MineOptions, MineResult
    from selfbench.mine.git_history import RepositoryInfo, Revision
    from selfbench.progress import Reporter

__all__ = ["add_mine_commands", "render_table"]

_TITLE_CHARS = 60
_TABLE_ROWS = 50  # a person reads the best; --out and --json carry them all


def _budgets(args: argparse.Namespace) -> dict[Difficulty, int] | None:
    from selfbench.contract import DIFFICULTIES

    given = {tier: getattr(args, tier) for tier in DIFFICULTIES}
    given = {tier: value for tier, value in given.items() if value is not None}
    for tier, value in given.items():
        if value < 0:
            raise MineError(f"--{tier} must be at least 0")
    return given or None


def _session_dirs(args: argparse.Namespace) -> list[Path]:
    from selfbench.mine.sessions import DEFAULT_SESSION_DIRS

    if args.sessions is not None:
        return [Path(item) for item in args.sessions]
    if args.no_sessions:
        return []
    return [Path.home() / folder for folder in DEFAULT_SESSION_DIRS]


def _checked(args: argparse.Namespace) -> Revision:
    """The command line's options checked, and the revision found (light modules only and one
    git run: the walk starts before the rest of mining loads and the rest of the repository is
    read).

    Raises:
        MineError: a bad budget or option, not a repository, an unknown revision.
    """
    from selfbench.mine.git_history import find_revision

    if args.max is not None and args.max < 1:
        raise MineError("--max must be at least 1")
    if not args.over_fetch >= 1:  # also refuses nan
        raise MineError("--over-fetch must be at least 1")
    _budgets(args)
    if args.source_url is not None:
        from selfbench.mine.source import check_source_url

        if problem := check_source_url(args.source_url):
            raise MineError(problem)
    return find_revision(Path(args.repo), args.rev)


def _options(args: argparse.Namespace, info: RepositoryInfo) -> MineOptions:
    """The command line read into `MineOptions` (pull requests, sessions: read).

    Raises:
        MineError: malformed `--prs`, or gh failed.
    """
    from selfbench.mine import MineOptions
    from selfbench.mine.prs import read_pull_requests, run_gh
    from selfbench.mine.sessions import read_sessions

    prs = read_pull_requests(Path(args.prs)) if args.prs else ()
    if args.github:
        prs = (*prs, *run_gh(Path(args.repo)))
    requests, skipped = read_sessions(_session_dirs(args), worktrees=info.worktrees)
    for line in skipped:
        sys.stderr.write(f"warning: {printable(line)}\n")
    return MineOptions(
        rev=args.rev,
        since=args.since,
        max_commits=args.max,
        plain=args.plain,
        pull_requests=prs,
        requests=requests,
        budgets=_budgets(args),
        over_fetch=args.over_fetch,
        source_url=args.source_url,
    )


def _mine(args: argparse.Namespace) -> int:
    from selfbench._git import configuration_listed_once

    with configuration_listed_once():  # mining runs no agent and changes no configuration
        result, reporter = _mined(args)
    for warning in result.warnings:
        reporter.warning(warning)
    if args.out:
        _write(result, Path(args.out))
    if args.json:
        print_json(result.to_json())
    else:
        _print_table(result)
    return EXIT_OK


def _mined(args: argparse.Namespace) -> tuple[MineResult, Reporter]:
    """The repository of the command line mined, as its options say, and the reporter its walk
    was told to (chosen once git walks: it may load rich).

    Raises:
        MineError: a bad option, not a repository, an unknown revision, or git failed.
    """
    from selfbench.mine.git_history import read_repository, start_history

    found = _checked(args)
    # git walks while the rest of mining loads and the repository, pull requests and sessions
    # are read
    started = start_history(found.path, rev=found.head, since=args.since, max_commits=args.max)
    try:
        info = read_repository(found.path, args.rev, found=found)
        options = _options(args, info)
        from selfbench.mine import mine_repository

        reporter = choose_reporter()
        with stage(reporter, "walking history"):
            result = mine_repository(
                info.path, options, reporter=reporter, info=info, started=started
            )
    finally:
        started.close()
    return result, reporter


def _write(result: MineResult, out: Path) -> None:
    from selfbench.mine import write_candidates

    with translating(MineError, f"write {out}"):
        candidates, excluded = write_candidates(result, out)
    sys.stderr.write(f"wrote {len(result.candidates)} candidates to {candidates}\n")
    sys.stderr.write(f"wrote {len(result.excluded)} excluded changes to {excluded}\n")


_COLUMNS = ("id", "tier", "score", "impl files", "impl lines", "tests", "requests", "title")


def _rows(result: MineResult) -> Iterator[tuple[str, ...]]:
    for candidate in result.candidates:
        implementation = candidate.totals["implementation"]
        yield (
            candidate.id,
            candidate.difficulty,
            str(candidate.score.total),
            str(implementation.files),
            str(implementation.changed_lines),
            "yes" if candidate.tests_changed else "no",
            str(len(candidate.requests)),
            printable(candidate.title)[:_TITLE_CHARS],
        )


def _summary(result: MineResult) -> str:
    counts = result.counts()
    return (
        f"easy {counts['easy']}, medium {counts['medium']}, hard {counts['hard']}; "
        f"{len(result.excluded)} excluded"
    )


def render_table(result: MineResult, console: Console) -> None:
    """The best candidates as a rich table, then the counts (what a person at a terminal sees)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{len(result.candidates)} candidates from {result.walked} commits")
    for column in _COLUMNS:
        table.add_column(column, overflow="fold")
    for row in islice(_rows(result), _TABLE_ROWS):
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    if len(result.candidates) > _TABLE_ROWS:
        total = len(result.candidates)
        console.print(f"(the best {_TABLE_ROWS} of {total}; --out or --json lists all)")
    console.print(_summary(result), highlight=False)


def _print_table(result: MineResult) -> None:
    """A rich table at a terminal; piped, one tab-separated line per candidate, for scripts."""
    if sys.stdout.isatty():
        from rich.console import Console

        render_table(result, Console())
        return
    lines = ["\t".join(_COLUMNS)]
    lines.extend("\t".join(row) for row in _rows(result))
    lines.append(_summary(result))
    sys.stdout.write("\n".join(lines) + "\n")


def _schema_with_candidate(previous: Callable[[argparse.Namespace], int]) -> Callable[..., int]:
    def run(args: argparse.Namespace) -> int:
        if args.schema != "candidate" and not args.candidate_schema:
            return previous(args)
        from selfbench.mine import candidate_json_schema

        print_json(candidate_json_schema())
        return EXIT_OK

    return run


def add_mine_commands(commands: Any) -> None:
    """Register `mine`, and `candidate` on the existing `schema` command."""
    schema: argparse.ArgumentParser = commands.choices["schema"]
    schema.add_argument(
        "schema",
        nargs="?",
        choices=("submission", "candidate"),
        default="submission",
        help="whose JSON Schema: submit_task's (default) or a mined candidate's",
    )
    # `schema --candidate`, the former spelling, kept: `--candidate` names a file elsewhere
    schema.add_argument(
        "--candidate",
        dest="candidate_schema",
        action="store_true",
        help="the former spelling of `schema candidate`",
    )
    schema.set_defaults(run=_schema_with_candidate(schema.get_default("run")))

    mine = commands.add_parser("mine", help="find candidate tasks in a repository's history")
    mine.add_argument("repo", metavar="REPO")
    mine.add_argument("--rev", default="HEAD", help="the history to walk (default: HEAD)")
    mine.add_argument("--since", metavar="DATE", help="only changes completed after DATE")
    mine.add_argument("--max", type=int, metavar="N", help="walk at most N first-parent commits")
    mine.add_argument("--plain", action="store_true", help="plain commits are candidates too")
    mine.add_argument("--prs", metavar="FILE", help="what `gh pr list --json …` printed")
    mine.add_argument("--github", action="store_true", help="run gh for pull-request metadata")
    mine.add_argument(
        "--sessions",
        nargs="+",
        metavar="DIR",
        help="session folders to read (default: Claude Code's, Codex's and pi's in $HOME)",
    )
    mine.add_argument("--no-sessions", action="store_true", help="read no session folders")
    for tier in ("easy", "medium", "hard"):
        mine.add_argument(f"--{tier}", type=int, metavar="N", help=f"budget of {tier} tasks")
    mine.add_argument(
        "--over-fetch", type=float, default=1.5, metavar="X", help="budget multiplier (1.5)"
    )
    add_source_url_option(mine, what="candidates")
    mine.add_argument("--out", metavar="FILE", help="write candidates.jsonl (and .excluded)")
    add_json_option(mine)
    mine.set_defaults(run=_mine)
