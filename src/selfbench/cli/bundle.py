"""The `compile`, `refresh`, `collect` and `repair-check` commands of the `selfbench` command line.

`compile`, `refresh` and `collect` write bundles: exit 0 written, 2 on bad input; `collect` exits
1 when the authoring run's task is rejected. `repair-check` is a checker: 0 allowed, 1 refused.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench.cli.common import (
    add_json_option,
    add_repo_option,
    print_json,
    read_input,
    rejected,
    working,
)
from selfbench.errors import EXIT_OK, EXIT_REJECTED, DefinitionError, InputError

if TYPE_CHECKING:
    from selfbench.contract import TaskDefinition

__all__ = [
    "add_agent_hosts_option",
    "add_bundle_commands",
    "add_repair_check_command",
    "agent_hosts",
]


_HOST_RE = re.compile(r"^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")


def agent_hosts(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The `--agent-allowed-host` values, or None for the default list.

    Raises:
        InputError: a value is not a host name (`example.com`, `*.example.com`).
    """
    hosts: list[str] = args.agent_allowed_host or []
    for host in hosts:
        if not _HOST_RE.match(host):
            raise InputError(
                f"--agent-allowed-host {host}: expected a host name (example.com or *.example.com)"
            )
    return tuple(hosts) if hosts else None


def add_agent_hosts_option(parser: argparse.ArgumentParser) -> None:
    """`--agent-allowed-host HOST`, repeatable, read back by `agent_hosts`."""
    from selfbench.bundle.layout import DEFAULT_ALLOWED_HOSTS

    parser.add_argument(
        "--agent-allowed-host",
        action="append",
        metavar="HOST",
        help="a host the agent may reach (repeatable; replaces the default list: "
        f"{', '.join(DEFAULT_ALLOWED_HOSTS)})",
    )


def _compile(args: argparse.Namespace) -> int:
    from selfbench.artifacts.compiled import BUNDLE_DIR
    from selfbench.compiler import compile_task

    if args.out is not None and len(args.task_dirs) != 1:
        raise InputError("--out names the bundle of exactly one TASK_DIR")
    for task_dir in map(Path, args.task_dirs):
        out = Path(args.out) if args.out is not None else task_dir / BUNDLE_DIR
        with working(f"compiling {task_dir}"):
            task = compile_task(
                task_dir, repo=Path(args.repo), out=out, allowed_hosts=agent_hosts(args)
            )
        sys.stdout.write(f"Compiled {task.definition.taskId} into {out}\n")
    return EXIT_OK


def _refresh(args: argparse.Namespace) -> int:
    from selfbench.compiler import refresh_bundle

    bundle = Path(args.bundle)
    definition = refresh_bundle(
        bundle, definition=Path(args.definition), allowed_hosts=agent_hosts(args)
    )
    sys.stdout.write(f"Refreshed {definition.taskId} in {bundle}\n")
    return EXIT_OK


def _collect(args: argparse.Namespace) -> int:
    from selfbench.collect import (
        CollectRejection,
        StoreTarget,
        collect_authoring,
        read_candidate,
    )
    from selfbench.store import LocalArtifactStore

    store_args = (args.store, args.run_id, args.candidate_id)
    if (args.store or args.run_id) and not all(store_args):
        raise InputError("--store, --run-id and --candidate-id go together")
    store = (
        StoreTarget(LocalArtifactStore(Path(args.store)), args.run_id, args.candidate_id)
        if args.store
        else None
    )
    with working(f"collecting {args.authoring_root}"):
        result = collect_authoring(
            Path(args.authoring_root),
            repo=Path(args.repo),
            out=Path(args.out),
            candidate=(
                read_candidate(Path(args.candidate), args.candidate_id) if args.candidate else None
            ),
            store=store,
            allowed_hosts=agent_hosts(args),
        )
    if isinstance(result, CollectRejection):
        return rejected(result.reason)
    print_json(
        {
            "bundle": str(result.bundle),
            "archive": str(result.archive),
            "definition": str(result.definition),
            "stored": [ref.to_json() for ref in result.stored],
        }
    )
    return EXIT_OK


def _read_definition(path: str) -> TaskDefinition:
    """A definition file in persisted mode; its problems name the file, as two are read."""
    from selfbench.artifacts.task_dir import read_definition

    try:
        return read_definition(Path(path)).definition
    except DefinitionError as exc:
        raise InputError("\n".join(f"{path}: {line}" for line in exc.lines)) from exc


def _repair_check(args: argparse.Namespace) -> int:
    from selfbench.repair import check_coupling_repair, check_validation_repair

    definitions = [path for path in (args.original, args.repaired) if path is not None]
    if args.coupling and definitions:
        raise InputError("--coupling takes no definitions")
    if not args.coupling and len(definitions) != 2:
        raise InputError("repair-check needs ORIGINAL.json and REPAIRED.json (or --coupling)")
    loaded = [_read_definition(path) for path in definitions]
    test_patch = read_input(args.test_patch)
    if args.coupling:
        verdict = check_coupling_repair(test_patch, args.changed)
    else:
        verdict = check_validation_repair(loaded[0], loaded[1], test_patch, args.changed)
    if args.json:
        print_json({"allowed": verdict.allowed, "reason": verdict.reason})
    elif verdict.reason is not None:
        return rejected(verdict.reason)
    else:
        sys.stdout.write(f"{'coupling' if args.coupling else 'validation'} repair allowed\n")
    return EXIT_OK if verdict.allowed else EXIT_REJECTED


def add_bundle_commands(commands: Any) -> None:
    """Register `compile`, `refresh` and `collect` on the CLI's subcommands."""
    compile_ = commands.add_parser("compile", help="compile an authored task into a Harbor bundle")
    compile_.add_argument("task_dirs", nargs="+", metavar="TASK_DIR")
    add_repo_option(compile_, required=True, help="git repository holding baseCommit")
    compile_.add_argument(
        "--out", metavar="OUT_DIR", help="one TASK_DIR's bundle (default: TASK_DIR/harbor-task)"
    )
    add_agent_hosts_option(compile_)
    compile_.set_defaults(run=_compile)

    refresh = commands.add_parser("refresh", help="re-render a bundle from a repaired definition")
    refresh.add_argument("bundle", metavar="BUNDLE")
    refresh.add_argument("--definition", required=True, metavar="FILE")
    add_agent_hosts_option(refresh)
    refresh.set_defaults(run=_refresh)

    collect = commands.add_parser("collect", help="compile and pack an authoring run's task")
    collect.add_argument("authoring_root", metavar="AUTHORING_ROOT")
    add_repo_option(collect, required=True, help="git repository holding baseCommit")
    collect.add_argument("--out", required=True, metavar="DIR")
    collect.add_argument(
        "--candidate", metavar="CANDIDATE.json", help="or a mined candidates.jsonl"
    )
    collect.add_argument("--store", metavar="DIR", help="a local artifact store")
    collect.add_argument("--run-id")
    collect.add_argument("--candidate-id", help="the store key; picks the mined candidate")
    add_agent_hosts_option(collect)
    collect.set_defaults(run=_collect)


def add_repair_check_command(commands: Any) -> None:
    """Register `repair-check` on the CLI's subcommands."""
    parser = commands.add_parser("repair-check", help="check what a repair changed")
    parser.add_argument("original", nargs="?", metavar="ORIGINAL.json")
    parser.add_argument("repaired", nargs="?", metavar="REPAIRED.json")
    parser.add_argument("--coupling", action="store_true", help="a coupling repair: no definitions")
    parser.add_argument(
        "--test-patch", required=True, metavar="FILE", help="the original held-out test patch"
    )
    parser.add_argument(
        "--changed",
        action="extend",
        nargs="+",
        default=[],
        metavar="PATH",
        help="repository paths of the files the repair changed (repeatable)",
    )
    add_json_option(parser)
    parser.set_defaults(run=_repair_check)
