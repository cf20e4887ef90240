"""The `selfbench` command line: parse arguments, call the library, format, exit.

Each command imports what it needs when it runs, so `selfbench audit --json` on a large patch
does not pay for the terminal renderer or modules it never uses.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from selfbench._cli_eval import add_eval_commands
from selfbench._cli_export import add_export_commands
from selfbench._cli_mine import add_mine_commands
from selfbench._cli_toolchains import add_toolchains_command
from selfbench._fs import read_bytes
from selfbench.errors import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_REJECTED,
    DefinitionError,
    InputError,
    SelfbenchError,
)

if TYPE_CHECKING:
    from selfbench.contract import Mode, TaskDefinition
    from selfbench.submit import TaskCheck
    from selfbench.validate.report import TaskReport
    from selfbench.validate.runner import Runner

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"error: {message}\n")


def _read(path: str) -> bytes:
    return read_bytes(Path(path), error=InputError)


@contextmanager
def _working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs, for a person at a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich

    with Console(stderr=True).status(message):
        yield


def _rejected(reason: str) -> int:
    """Report a failed check the way an error is reported, with the exit code of a rejection."""
    sys.stderr.write(f"error: {reason}\n")
    return EXIT_REJECTED


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# --- commands ----------------------------------------------------------------------------------


def _schema(_: argparse.Namespace) -> int:
    from selfbench.contract import submission_json_schema  # noqa: PLC0415 - lazy by design

    _print_json(submission_json_schema())
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    source = Path(args.definition)
    patches = (args.test_patch, args.gold_patch)
    if source.is_dir():
        if any(patches):
            raise InputError(f"{source} is a task directory: it holds its own patches")
        return _check_task_dir(source, mode=args.mode or "persisted", json_out=args.json)
    if any(patches):
        if not all(patches):
            raise InputError("--test-patch and --gold-patch go together")
        test_patch, gold_patch = (_read(path) for path in patches)
        found = _check_files(
            args.definition,
            _read(args.definition),
            test_patch,
            gold_patch,
            mode=args.mode or "submission",
        )
        return _print_task_check(args.definition, found, json_out=args.json)
    from selfbench.contract import check_definition  # noqa: PLC0415 - lazy by design

    mode: Mode = args.mode or "persisted"
    report = check_definition(_read(args.definition), mode=mode, source=args.definition)
    if args.json:
        _print_json(report.to_json())
    else:
        from selfbench import _report  # noqa: PLC0415

        _report.print_check(args.definition, report)
    return EXIT_OK if report.valid else EXIT_REJECTED


def _check_task_dir(task_dir: Path, *, mode: Mode, json_out: bool) -> int:
    from selfbench.task import read_task_files  # noqa: PLC0415

    files = read_task_files(task_dir)
    source = str(files.definition_path)
    found = _check_files(source, files.definition, files.test_patch, files.gold_patch, mode=mode)
    return _print_task_check(source, found, json_out=json_out)


def _check_files(
    source: str, definition: bytes, test_patch: bytes, gold_patch: bytes, *, mode: Mode
) -> TaskCheck:
    from selfbench.submit import check_definition_files  # noqa: PLC0415

    return check_definition_files(definition, test_patch, gold_patch, mode=mode, source=source)


def _print_task_check(source: str, found: TaskCheck, *, json_out: bool) -> int:
    """`check` as submit would judge the files: issues, blockers and warnings."""
    if json_out:
        _print_json(found.to_check_json())
    else:
        from selfbench import _report  # noqa: PLC0415

        _report.print_task_check(source, found)
    return EXIT_OK if found.accepted else EXIT_REJECTED


def _audit(args: argparse.Namespace) -> int:
    from selfbench.task import judge_task, read_authored_task  # noqa: PLC0415

    task = read_authored_task(Path(args.task_dir))
    report = judge_task(task.loaded, task.test_patch, task.gold_patch).audit
    if args.json:
        _print_json(report.to_json())
    else:
        from selfbench import _report  # noqa: PLC0415

        _report.print_audit(task.definition.taskId, report)
    return EXIT_OK if report.accepted else EXIT_REJECTED


def _submit(args: argparse.Namespace) -> int:
    from selfbench._json import loads_strict  # noqa: PLC0415
    from selfbench.submit import write_submission, write_submission_files  # noqa: PLC0415

    options = {"output_root": args.output_root, "preflight": args.preflight}
    if args.args is not None:
        if any((args.definition, args.test_patch, args.gold_patch)):
            raise InputError("--args replaces --definition, --test-patch and --gold-patch")
        arguments = loads_strict(_read(args.args), source=args.args)
        submission = write_submission(arguments, **options)
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
        submission = write_submission_files(
            definition, _read(args.test_patch), _read(args.gold_patch), **options
        )
    for warning in submission.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    sys.stdout.write(submission.message + "\n")
    return EXIT_OK


def _hosts(args: argparse.Namespace) -> tuple[str, ...] | None:
    return tuple(args.agent_allowed_host) if args.agent_allowed_host else None


def _compile(args: argparse.Namespace) -> int:
    from selfbench.bundle.locate import BUNDLE_DIR  # noqa: PLC0415
    from selfbench.compiler import compile_task  # noqa: PLC0415

    if args.out is not None and len(args.task_dirs) != 1:
        raise InputError("--out names the bundle of exactly one TASK_DIR")
    for task_dir in map(Path, args.task_dirs):
        out = Path(args.out) if args.out is not None else task_dir / BUNDLE_DIR
        with _working(f"compiling {task_dir}"):
            task = compile_task(task_dir, repo=Path(args.repo), out=out, allowed_hosts=_hosts(args))
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
    from selfbench.collect import (  # noqa: PLC0415
        CollectRejection,
        StoreTarget,
        collect_authoring,
        read_candidate,
    )
    from selfbench.store import LocalArtifactStore  # noqa: PLC0415

    store_args = (args.store, args.run_id, args.candidate_id)
    if (args.store or args.run_id) and not all(store_args):
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
            candidate=(
                read_candidate(Path(args.candidate), args.candidate_id) if args.candidate else None
            ),
            store=store,
            allowed_hosts=_hosts(args),
        )
    if isinstance(result, CollectRejection):
        return _rejected(result.reason)
    _print_json(
        {
            "bundle": str(result.bundle),
            "archive": str(result.archive),
            "definition": str(result.definition),
            "stored": [ref.to_json() for ref in result.stored],
        }
    )
    return EXIT_OK


_RUNNER_FLAGS = {
    "local": (
        "--logs",
        "--parity",
        "--network",
        "--keep",
        "--workspace",
        "--reruns",
        "--setup-env",
        "--strict-toolchains",
    ),
    "harbor": ("--logs", "--harbor-env", "--jobs-dir", "--harbor"),
}
"""The options each `--env` uses; any other runner option is refused."""


def _refuse_unused(args: argparse.Namespace) -> None:
    """One line for the first runner option given that `--env` does not use."""
    used = _RUNNER_FLAGS[args.env]
    for flags in _RUNNER_FLAGS.values():
        for flag in flags:
            if flag not in used and getattr(args, flag[2:].replace("-", "_")) is not None:
                raise InputError(f"{flag} is not used by --env {args.env}")


def _runner(args: argparse.Namespace) -> Runner:
    """The runner `--env` names, with the options given for it."""
    _refuse_unused(args)
    logs = Path(args.logs) if args.logs else None
    if args.env == "harbor":
        from selfbench.validate.harbor import HarborOptions, HarborRunner  # noqa: PLC0415

        default = HarborOptions()
        options = HarborOptions(
            environment=default.environment if args.harbor_env is None else args.harbor_env,
            jobs_dir=default.jobs_dir if args.jobs_dir is None else Path(args.jobs_dir),
            harbor=default.harbor if args.harbor is None else args.harbor,
            logs=logs,
        )
        return HarborRunner(options)
    from selfbench.validate.local import (  # noqa: PLC0415
        DEFAULT_RERUNS,
        LocalOptions,
        LocalRunner,
    )

    return LocalRunner(
        LocalOptions(
            logs=logs,
            parity=bool(args.parity),
            network=bool(args.network),
            keep=bool(args.keep),
            workspace=Path(args.workspace) if args.workspace else None,
            strict_toolchains=bool(args.strict_toolchains),
            setup_env=_setup_env(args.setup_env or ()),
            reruns=DEFAULT_RERUNS if args.reruns is None else args.reruns,
        )
    )


def _setup_env(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """`--setup-env NAME`s with their values from this process's environment.

    Raises:
        InputError: a name that is not a variable name, or a variable that is not set.
    """
    pairs: dict[str, str] = {}
    for name in names:
        if not name.isidentifier() or not name.isascii():
            raise InputError(f"--setup-env {name}: not an environment variable name")
        if name not in os.environ:
            raise InputError(f"--setup-env {name}: not set in this environment")
        pairs[name] = os.environ[name]
    return tuple(pairs.items())


def _validate(args: argparse.Namespace) -> int:
    from selfbench.validate import validate  # noqa: PLC0415

    if args.jobs < 1:
        raise InputError("-j must be at least 1")
    runner = _runner(args)
    paths = [Path(path) for path in args.bundles]
    with _validation_progress(len(paths)) as on_done:
        reports = validate(
            paths,
            runner=runner,
            definition=Path(args.definition) if args.definition else None,
            jobs=args.jobs,
            on_done=on_done,
            repo=Path(args.repo) if args.repo else None,
        )
    if args.json:
        _print_json([report.to_json() for report in reports])
    else:
        from selfbench._report import print_validation  # noqa: PLC0415

        print_validation(reports)
    return EXIT_OK if all(report.accepted for report in reports) else EXIT_REJECTED


@contextmanager
def _validation_progress(total: int) -> Iterator[Callable[[TaskReport], None]]:
    """Live progress on stderr: a bar at a terminal, one line per finished task otherwise."""
    if not sys.stderr.isatty():

        def line(report: TaskReport) -> None:
            verdict = "accepted" if report.accepted else f"rejected: {report.reason}"
            sys.stderr.write(f"{report.task_id}: {verdict}\n")

        yield line
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    columns = (SpinnerColumn(), TextColumn("validating"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as progress:
        bar = progress.add_task("validate", total=total)

        def advance(report: TaskReport) -> None:
            mark = "[green]accepted[/]" if report.accepted else "[red]rejected[/]"
            progress.console.print(f"{mark} {report.task_id}")
            progress.advance(bar)

        yield advance


def _read_definition(path: str) -> TaskDefinition:
    """A definition file in persisted mode; its problems name the file, as two are read."""
    from selfbench.task import read_definition  # noqa: PLC0415

    try:
        return read_definition(Path(path)).definition
    except DefinitionError as exc:
        raise InputError("\n".join(f"{path}: {line}" for line in exc.lines)) from None


def _repair_check(args: argparse.Namespace) -> int:
    from selfbench.repair import check_coupling_repair, check_validation_repair  # noqa: PLC0415

    definitions = [path for path in (args.original, args.repaired) if path is not None]
    if args.coupling and definitions:
        raise InputError("--coupling takes no definitions")
    if not args.coupling and len(definitions) != 2:
        raise InputError("repair-check needs ORIGINAL.json and REPAIRED.json (or --coupling)")
    loaded = [_read_definition(path) for path in definitions]
    test_patch = _read(args.test_patch)
    if args.coupling:
        verdict = check_coupling_repair(test_patch, args.changed)
    else:
        verdict = check_validation_repair(loaded[0], loaded[1], test_patch, args.changed)
    if args.json:
        _print_json({"allowed": verdict.allowed, "reason": verdict.reason})
    elif verdict.reason is not None:
        return _rejected(verdict.reason)
    else:
        sys.stdout.write(f"{'coupling' if args.coupling else 'validation'} repair allowed\n")
    return EXIT_OK if verdict.allowed else EXIT_REJECTED


def _mcp(args: argparse.Namespace) -> int:
    from selfbench.mcp_server import serve_stdio  # noqa: PLC0415

    serve_stdio(output_root=args.output_root, preflight=args.preflight)
    return EXIT_OK


def _import_swebench(args: argparse.Namespace) -> int:
    from selfbench.swebench import import_swebench  # noqa: PLC0415

    report = import_swebench(
        Path(args.instances),
        out=Path(args.out),
        setup_command=args.setup_command,
        test_command=args.test_command,
    )
    if args.json:
        _print_json(report.to_json())
    else:
        for task in report.imported:
            sys.stdout.write(f"imported {task.instance_id} ({task.difficulty}) into {task.path}\n")
        for skipped in report.skipped:
            sys.stdout.write(f"skipped {skipped.instance_id}: {'; '.join(skipped.reasons)}\n")
    return EXIT_REJECTED if report.skipped else EXIT_OK


def _export_swebench(args: argparse.Namespace) -> int:
    from selfbench.swebench import export_swebench  # noqa: PLC0415

    count = export_swebench([Path(path) for path in args.task_dirs], out=Path(args.out))
    sys.stdout.write(f"Exported {count} instances to {args.out}\n")
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from selfbench.demo import run_demo  # noqa: PLC0415

    return run_demo(keep=args.keep, out=Path(args.out) if args.out else None)


# --- the parser --------------------------------------------------------------------------------

_Command = Callable[[argparse.Namespace], int]


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="selfbench",
        description="Turn merged pull requests into proven benchmark tasks for coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    _add_authoring_commands(commands)  # schema, check, audit, submit

    compile_ = commands.add_parser("compile", help="compile an authored task into a Harbor bundle")
    compile_.add_argument("task_dirs", nargs="+", metavar="TASK_DIR")
    compile_.add_argument("--repo", required=True, help="git repository holding baseCommit")
    compile_.add_argument(
        "--out", metavar="OUT_DIR", help="one TASK_DIR's bundle (default: TASK_DIR/harbor-task)"
    )
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
    collect.add_argument(
        "--candidate", metavar="CANDIDATE.json", help="or a mined candidates.jsonl"
    )
    collect.add_argument("--store", metavar="DIR", help="a local artifact store")
    collect.add_argument("--run-id")
    collect.add_argument("--candidate-id", help="the store key; picks the mined candidate")
    _add_hosts(collect)
    collect.set_defaults(run=_collect)

    _add_validate(commands.add_parser("validate", help="prove bundles: nop fails, oracle passes"))

    _add_repair_check(commands.add_parser("repair-check", help="check what a repair changed"))

    _add_agent_commands(commands)  # mcp, import-swebench, export-swebench

    add_export_commands(commands)
    add_toolchains_command(commands)
    add_mine_commands(commands)
    add_eval_commands(commands)

    demo = commands.add_parser("demo", help="author, prove and export a sample task")
    demo.add_argument("--keep", action="store_true", help="keep the sample's temp directory")
    demo.add_argument("--out", metavar="DIR", help="where the export goes (default: a temp dir)")
    demo.set_defaults(run=_demo)
    return parser


def _add_repair_check(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument("--json", action="store_true", help="print the JSON verdict")
    parser.set_defaults(run=_repair_check)


def _add_agent_commands(commands: Any) -> None:
    _add_mcp(commands.add_parser("mcp", help="serve submit_task and check_task over MCP (stdio)"))
    _add_swebench(commands)


def _add_mcp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-root", metavar="DIR", help="instead of $SELFBENCH_TASK_OUTPUT")
    parser.add_argument(
        "--no-preflight",
        dest="preflight",
        action="store_false",
        help="submit_task skips the preflight checks (strict compatibility)",
    )
    parser.set_defaults(run=_mcp)


def _add_swebench(commands: Any) -> None:
    importer = commands.add_parser("import-swebench", help="SWE-bench instances to task dirs")
    importer.add_argument("instances", metavar="INSTANCES.jsonl")
    importer.add_argument("--out", required=True, metavar="DIR")
    importer.add_argument("--setup-command", metavar="CMD", help="needed without swebench specs")
    importer.add_argument("--test-command", metavar="CMD", help='holds "{tests}" once')
    importer.add_argument("--json", action="store_true", help="print the JSON report")
    importer.set_defaults(run=_import_swebench)

    exporter = commands.add_parser("export-swebench", help="task dirs to SWE-bench instances")
    exporter.add_argument("task_dirs", nargs="+", metavar="TASK_DIR")
    exporter.add_argument("--out", required=True, metavar="FILE.jsonl")
    exporter.set_defaults(run=_export_swebench)


def _add_authoring_commands(commands: Any) -> None:
    schema = commands.add_parser("schema", help="print the submit_task JSON Schema")
    schema.set_defaults(run=_schema)

    check = commands.add_parser(
        "check", help="validate a definition.json; with patches, judge it as submit would"
    )
    check.add_argument(
        "definition", metavar="DEFINITION.json|TASK_DIR", help="a definition or a task directory"
    )
    check.add_argument("--test-patch", metavar="FILE", help="judge with this held-out test patch")
    check.add_argument("--gold-patch", metavar="FILE", help="judge with this gold patch")
    check.add_argument(
        "--mode",
        choices=("submission", "persisted"),
        help="how to read the definition (default: submission with patches, else persisted)",
    )
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


def _add_validate(validate: argparse.ArgumentParser) -> None:
    # Runner options default to None, so that one the chosen --env does not use is refused.
    validate.add_argument("bundles", nargs="+", metavar="BUNDLE_OR_TASK_DIR")
    validate.add_argument(
        "--repo", help="each path is an authored TASK_DIR: compile it from this repository first"
    )
    validate.add_argument(
        "--env",
        choices=("local", "harbor"),
        default="local",
        help="local: this machine's sandbox (root); harbor: `harbor run` (default: local)",
    )
    validate.add_argument("-j", "--jobs", type=int, default=1, help="tasks validated at once")
    validate.add_argument("--json", action="store_true", help="print the JSON reports")
    validate.add_argument(
        "--definition", metavar="FILE", help="the definition of a bundle with none beside it"
    )
    validate.add_argument("--logs", metavar="DIR", help="where each task's run logs go")
    local = validate.add_argument_group("local environment")
    local.add_argument(
        "--parity",
        action="store_true",
        default=None,
        help="the original's verdict: no Beyond checks",
    )
    local.add_argument(
        "--network", action="store_true", default=None, help="let the tests reach the network"
    )
    local.add_argument("--keep", action="store_true", default=None, help="keep the workspaces")
    local.add_argument(
        "--strict-toolchains",
        action="store_true",
        default=None,
        help="reject a task whose toolchains are not the image's versions",
    )
    local.add_argument("--workspace", metavar="DIR", help="where workspaces go (default: temp dir)")
    local.add_argument(
        "--reruns",
        type=int,
        metavar="N",
        help="how many times fail-to-pass and pass-to-pass run in all (default: 3, at least 2)",
    )
    local.add_argument(
        "--setup-env",
        action="append",
        metavar="NAME",
        help="pass this variable (its value here) into setup only: a proxy, CA certificates",
    )
    harbor = validate.add_argument_group("harbor environment")
    harbor.add_argument(
        "--harbor-env",
        metavar="NAME",
        help="Harbor's environment: docker, modal, daytona, … (default: docker)",
    )
    harbor.add_argument("--jobs-dir", metavar="DIR", help="Harbor's jobs directory (default: jobs)")
    harbor.add_argument("--harbor", metavar="PATH", help="the harbor executable (default: harbor)")
    validate.set_defaults(run=_validate)


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
