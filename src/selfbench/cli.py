"""The `selfbench` command line: parse arguments, call the library, format, exit.

Each command imports what it needs when it runs, so `selfbench audit --json` on a large patch
does not pay for the terminal renderer or modules it never uses.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from selfbench.errors import EXIT_INPUT, EXIT_OK, EXIT_REJECTED, SelfbenchError

__all__ = ["main"]


class InputError(SelfbenchError):
    """A file named on the command line cannot be read."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"error: {message}\n")


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


@contextmanager
def _working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs, for a person at a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich

    with Console(stderr=True).status(message):
        yield


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# --- commands ----------------------------------------------------------------------------------


def _schema(_: argparse.Namespace) -> int:
    from selfbench.contract import submission_json_schema  # noqa: PLC0415 - lazy by design

    _print_json(submission_json_schema())
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from selfbench.contract import check_definition  # noqa: PLC0415

    report = check_definition(_read(args.definition), mode=args.mode, source=args.definition)
    if args.json:
        _print_json(report.to_json())
    else:
        from selfbench import _report  # noqa: PLC0415

        _report.print_check(args.definition, report)
    return EXIT_OK if report.valid else EXIT_REJECTED


def _audit(args: argparse.Namespace) -> int:
    from selfbench._json import loads_strict  # noqa: PLC0415
    from selfbench.audit import audit  # noqa: PLC0415
    from selfbench.contract import parse_definition  # noqa: PLC0415
    from selfbench.patches import parse_patch  # noqa: PLC0415

    task_dir = Path(args.task_dir)
    source = str(task_dir / "definition.json")
    loaded = parse_definition(loads_strict(_read(source), source=source))
    gold = parse_patch(_read(str(task_dir / "gold.patch")), lenient=True)
    tests = parse_patch(_read(str(task_dir / "test.patch")), lenient=True)
    report = audit(loaded.definition, gold, tests, loading_warnings=loaded.warnings)
    if args.json:
        _print_json(report.to_json())
    else:
        from selfbench import _report  # noqa: PLC0415

        _report.print_audit(loaded.definition.taskId, report)
    return EXIT_OK if report.accepted else EXIT_REJECTED


def _submit(args: argparse.Namespace) -> int:
    from selfbench._json import loads_strict  # noqa: PLC0415
    from selfbench.submit import submit_files, submit_task  # noqa: PLC0415

    options = {"output_root": args.output_root, "preflight": args.preflight}
    if args.args is not None:
        if any((args.definition, args.test_patch, args.gold_patch)):
            raise InputError("--args replaces --definition, --test-patch and --gold-patch")
        arguments = loads_strict(_read(args.args), source=args.args)
        message = submit_task(arguments, **options)
    else:
        missing = [
            flag
            for flag, value in (
                ("--definition", args.definition),
                ("--test-patch", args.test_patch),
                ("--gold-patch", args.gold_patch),
            )
            if value is None
        ]
        if missing:
            raise InputError(f"missing {', '.join(missing)} (or give --args)")
        definition = loads_strict(_read(args.definition), source=args.definition)
        message = submit_files(
            definition, _read(args.test_patch), _read(args.gold_patch), **options
        )
    sys.stdout.write(message + "\n")
    return EXIT_OK


def _hosts(args: argparse.Namespace) -> tuple[str, ...] | None:
    return tuple(args.agent_allowed_host) if args.agent_allowed_host else None


def _compile(args: argparse.Namespace) -> int:
    from selfbench.compiler import compile_task  # noqa: PLC0415

    out = Path(args.out)
    with _working(f"compiling {args.task_dir}"):
        task = compile_task(
            Path(args.task_dir), repo=Path(args.repo), out=out, allowed_hosts=_hosts(args)
        )
    sys.stdout.write(f"Compiled {task.definition.taskId} into {out}\n")
    return EXIT_OK


def _refresh(args: argparse.Namespace) -> int:
    from selfbench.compiler import refresh_bundle  # noqa: PLC0415

    bundle = Path(args.bundle)
    definition = refresh_bundle(
        bundle, definition=Path(args.definition), allowed_hosts=_hosts(args)
    )
    sys.stdout.write(f"Refreshed {definition.taskId} in {bundle}\n")
    return EXIT_OK


def _collect(args: argparse.Namespace) -> int:
    from selfbench.collect import StoreTarget, collect_authoring, read_candidate  # noqa: PLC0415
    from selfbench.store import LocalArtifactStore  # noqa: PLC0415

    store_args = (args.store, args.run_id, args.candidate_id)
    if any(store_args) and not all(store_args):
        raise InputError("--store, --run-id and --candidate-id go together")
    store = (
        StoreTarget(LocalArtifactStore(Path(args.store)), args.run_id, args.candidate_id)
        if args.store
        else None
    )
    with _working(f"collecting {args.authoring_root}"):
        result = collect_authoring(
            Path(args.authoring_root),
            repo=Path(args.repo),
            out=Path(args.out),
            candidate=read_candidate(Path(args.candidate)) if args.candidate else None,
            store=store,
            allowed_hosts=_hosts(args),
        )
    _print_json(
        {
            "bundle": str(result.bundle),
            "archive": str(result.archive),
            "definition": str(result.definition),
            "stored": [ref.to_json() for ref in result.stored],
        }
    )
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from selfbench.demo import run_demo  # noqa: PLC0415

    return run_demo(keep=args.keep)


# --- the parser --------------------------------------------------------------------------------

_Command = Callable[[argparse.Namespace], int]


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="selfbench",
        description="Turn merged pull requests into proven benchmark tasks for coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    schema = commands.add_parser("schema", help="print the submit_task JSON Schema")
    schema.set_defaults(run=_schema)

    check = commands.add_parser("check", help="validate a definition.json")
    check.add_argument("definition", metavar="DEFINITION.json")
    check.add_argument("--mode", choices=("submission", "persisted"), default="persisted")
    check.add_argument("--json", action="store_true", help="print the JSON report")
    check.set_defaults(run=_check)

    audit = commands.add_parser("audit", help="statically audit an authored task directory")
    audit.add_argument("task_dir", metavar="TASK_DIR")
    audit.add_argument("--json", action="store_true", help="print the JSON report")
    audit.set_defaults(run=_audit)

    submit = commands.add_parser("submit", help="submit_task from files")
    submit.add_argument("--definition", metavar="FILE")
    submit.add_argument("--test-patch", metavar="FILE")
    submit.add_argument("--gold-patch", metavar="FILE")
    submit.add_argument("--args", metavar="FILE", help="the tool's whole argument object (JSON)")
    submit.add_argument("--output-root", metavar="DIR", help="instead of $SELFBENCH_TASK_OUTPUT")
    submit.add_argument(
        "--no-preflight",
        dest="preflight",
        action="store_false",
        help="skip the preflight checks (strict compatibility with the original tool)",
    )
    submit.set_defaults(run=_submit)

    compile_ = commands.add_parser("compile", help="compile an authored task into a Harbor bundle")
    compile_.add_argument("task_dir", metavar="TASK_DIR")
    compile_.add_argument("--repo", required=True, help="git repository holding baseCommit")
    compile_.add_argument("--out", required=True, metavar="OUT_DIR")
    _add_hosts(compile_)
    compile_.set_defaults(run=_compile)

    refresh = commands.add_parser("refresh", help="re-render a bundle from a repaired definition")
    refresh.add_argument("bundle", metavar="BUNDLE")
    refresh.add_argument("--definition", required=True, metavar="FILE")
    _add_hosts(refresh)
    refresh.set_defaults(run=_refresh)

    collect = commands.add_parser("collect", help="compile and pack an authoring run's task")
    collect.add_argument("authoring_root", metavar="AUTHORING_ROOT")
    collect.add_argument("--repo", required=True)
    collect.add_argument("--out", required=True, metavar="DIR")
    collect.add_argument("--candidate", metavar="CANDIDATE.json")
    collect.add_argument("--store", metavar="DIR", help="a local artifact store")
    collect.add_argument("--run-id")
    collect.add_argument("--candidate-id")
    _add_hosts(collect)
    collect.set_defaults(run=_collect)

    demo = commands.add_parser("demo", help="author and audit a task from a built-in sample")
    demo.add_argument("--keep", action="store_true", help="keep the sample's temp directory")
    demo.set_defaults(run=_demo)
    return parser


def _add_hosts(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent-allowed-host",
        action="append",
        metavar="HOST",
        help="a host the agent may reach (repeatable; replaces the default list)",
    )


def _version() -> str:
    from selfbench import __version__  # noqa: PLC0415

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 checked and failed, 2 input rejected)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # usage errors, --help and --version end here, not in the caller
        return exit_.code if isinstance(exit_.code, int) else EXIT_INPUT
    command: _Command = args.run
    try:
        return command(args)
    except SelfbenchError as exc:
        for line in exc.lines:
            sys.stderr.write(f"error: {line}\n")
        return exc.exit_code
