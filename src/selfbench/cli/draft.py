"""The `draft` command: candidates in, proven task directories out (issue 14).

`selfbench draft CANDIDATE_OR_ID… --repo REPO --out TASKS_DIR [--candidates FILE]
[--config FILE] [-j N] [--reruns N] [--json]`. Each argument is a candidate file (a JSON object
or a `candidates.jsonl` of one) or an id in `--candidates`. Exit 0 when every candidate was
drafted, 1 when one was rejected, 2 on bad input (nothing written).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from selfbench._text import markup_text, printable
from selfbench.cli.common import (
    add_ceiling_options,
    add_deps_option,
    add_jobs_option,
    add_json_option,
    add_quality_options,
    add_repo_option,
    add_setup_options,
    add_source_url_option,
    agent_dependencies,
    ceilings,
    jobs,
    print_json,
    setup_options,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED, DraftError
from selfbench.progress import choose_reporter, stage

if TYPE_CHECKING:
    from selfbench.draft.api import DraftOptions, DraftResult
    from selfbench.mine.candidate import CandidateModel

__all__ = ["add_draft_command", "render_draft_table"]

_REASON_CHARS = 120


def _candidates(arguments: Sequence[str], candidates_file: str | None) -> list[CandidateModel]:
    """Each argument as a candidate: a file holding one, else an id in `--candidates`.

    Raises:
        DraftError: an id without `--candidates`, or an unknown id.
        MineError: a file that does not hold candidates.
    """
    from selfbench.mine.candidate import find_candidate

    found = []
    for argument in arguments:
        path = Path(argument)
        if path.is_file():
            found.append(find_candidate(path, None))
        elif candidates_file is None:
            raise DraftError(f"{argument}: not a candidate file (name --candidates for ids)")
        else:
            found.append(find_candidate(Path(candidates_file), argument))
    return found


class _Request(NamedTuple):
    repo: Path
    candidates: list[CandidateModel]
    options: DraftOptions
    jobs: int


def _request(args: argparse.Namespace) -> _Request:
    """The command line checked (in this order) and read into what `draft_candidates` takes.

    Raises:
        SelfbenchError: a bad option, not a repository, an unknown candidate, no sandbox.
    """
    from selfbench.draft.api import DraftOptions
    from selfbench.draft.config import load_config
    from selfbench.environments.build import local_options
    from selfbench.environments.local.sandbox import require_sandbox
    from selfbench.environments.spec import EnvironmentSpec
    from selfbench.validate.local import MIN_RERUNS, LocalOptions

    workers = jobs(args)
    if args.reruns is not None and args.reruns < MIN_RERUNS:
        raise DraftError(f"--reruns must be at least {MIN_RERUNS}")
    host = ceilings(args, jobs=workers or 1, workspace=None)
    if args.reruns is not None and args.reruns > host.reruns:
        raise DraftError(f"--reruns must be at most {host.reruns} (--max-reruns)")
    repo = Path(args.repo)
    if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        raise DraftError(f"--repo {repo}: not a git repository")
    candidates = _candidates(args.candidates, args.candidates_file)
    config = load_config(Path(args.config)) if args.config else None
    require_sandbox()
    setup_env, host_network = setup_options(args)
    environment = EnvironmentSpec(setup_env=setup_env, host_network=host_network)
    options = DraftOptions(
        reruns=args.reruns,
        config=config,
        logs=Path(args.logs) if args.logs else None,
        local=local_options(
            environment, logs=None, local=LocalOptions(network=bool(args.network), ceilings=host)
        ),
        replace=args.replace,
        source_url_base=args.source_url,
        agent_dependencies=agent_dependencies(args),
        quality=not args.no_quality,
    )
    return _Request(repo, candidates, options, workers or 1)


def _draft(args: argparse.Namespace) -> int:
    from selfbench.draft.api import draft_candidates

    repo, candidates, options, workers = _request(args)
    reporter = choose_reporter(verdicts=("drafted", "rejected"))
    with stage(reporter, "drafting", total=len(candidates)):
        results = draft_candidates(
            repo, candidates, Path(args.out), options, jobs=workers, reporter=reporter
        )
    if args.json:
        print_json([result.to_json() for result in results])
    else:
        from rich.console import Console

        Console().print(render_draft_table(results))
    return EXIT_OK if all(result.drafted for result in results) else EXIT_REJECTED


def render_draft_table(results: Sequence[DraftResult]) -> Any:
    """A rich table: each candidate, drafted or rejected, and the task directory or reason."""
    from rich.table import Table

    drafted = sum(result.drafted for result in results)
    table = Table(title=f"{drafted} of {len(results)} candidates drafted")
    table.add_column("candidate")
    table.add_column("status")
    table.add_column("task directory or reason", overflow="fold")
    for result in results:
        if result.drafted:
            candidate, directory = (markup_text(result.candidate_id), str(result.task_dir))
            table.add_row(candidate, "[green]drafted[/]", markup_text(directory))
        else:
            reason = printable(result.reason or "")
            shown = reason if len(reason) <= _REASON_CHARS else reason[: _REASON_CHARS - 1] + "…"
            table.add_row(markup_text(result.candidate_id), "[red]rejected[/]", markup_text(shown))
    return table


def add_draft_command(commands: Any) -> None:
    """Register `draft` on the CLI's subcommands (importing nothing heavy: every command's
    parser is built on each call)."""
    draft = commands.add_parser(
        "draft", help="draft tasks from candidates by running their tests (selectors observed)"
    )
    draft.add_argument(
        "candidates", nargs="+", metavar="CANDIDATE_OR_ID", help="a candidate file, or an id"
    )
    add_repo_option(draft, required=True, help="the repository the candidates came from")
    draft.add_argument("--out", required=True, metavar="TASKS_DIR", help="where tasks are written")
    draft.add_argument(
        "--candidates", dest="candidates_file", metavar="FILE", help="candidates.jsonl for ids"
    )
    draft.add_argument("--config", metavar="FILE", help="a selfbench.toml to use instead")
    add_jobs_option(draft, what="candidates drafted")
    draft.add_argument(
        "--reruns",
        type=int,
        metavar="N",
        help="runs with the gold patch, each from a fresh copy (default: 3, at least 2)",
    )
    draft.add_argument("--logs", metavar="DIR", help="where each candidate's logs go")
    draft.add_argument(
        "--network", action="store_true", help="let the tests reach the network (setup always may)"
    )
    add_setup_options(draft)
    add_ceiling_options(draft)
    draft.add_argument("--replace", action="store_true", help="overwrite existing task dirs")
    add_source_url_option(draft, what="tasks of candidates without a pull request URL")
    add_deps_option(draft)
    add_quality_options(draft, gate=False)
    add_json_option(draft)
    draft.set_defaults(run=_draft)
