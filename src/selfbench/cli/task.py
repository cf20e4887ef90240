"""The `schema`, `check`, `audit` and `submit` commands of the `selfbench` command line.

`check` and `audit` are checkers: exit 0 accepted, 1 rejected, 2 when the input cannot be read.
`submit` writes a task directory as the submit_task tool would.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._text import printable
from selfbench.cli.common import add_json_option, print_json, read_input
from selfbench.errors import EXIT_OK, EXIT_REJECTED, InputError

if TYPE_CHECKING:
    from selfbench.contract import Mode
    from selfbench.submit import TaskCheck

__all__ = ["add_task_commands"]


def _schema(_: argparse.Namespace) -> int:
    from selfbench.contract import submission_json_schema

    print_json(submission_json_schema())
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
        test_patch, gold_patch = (read_input(path) for path in patches)
        found = _check_files(
            args.definition,
            read_input(args.definition),
            test_patch,
            gold_patch,
            mode=args.mode or "submission",
        )
        return _print_task_check(args.definition, found, json_out=args.json)
    from selfbench.contract import check_definition

    mode: Mode = args.mode or "persisted"
    report = check_definition(read_input(args.definition), mode=mode, source=args.definition)
    if args.json:
        print_json(report.to_json())
    else:
        from selfbench.cli import report as _report

        _report.print_check(args.definition, report)
    return EXIT_OK if report.valid else EXIT_REJECTED


def _check_task_dir(task_dir: Path, *, mode: Mode, json_out: bool) -> int:
    from selfbench.artifacts.task_dir import read_task_files

    files = read_task_files(task_dir)
    source = str(files.definition_path)
    found = _check_files(source, files.definition, files.test_patch, files.gold_patch, mode=mode)
    return _print_task_check(source, found, json_out=json_out)


def _check_files(
    source: str, definition: bytes, test_patch: bytes, gold_patch: bytes, *, mode: Mode
) -> TaskCheck:
    from selfbench.submit import check_definition_files

    return check_definition_files(definition, test_patch, gold_patch, mode=mode, source=source)


def _print_task_check(source: str, found: TaskCheck, *, json_out: bool) -> int:
    """`check` as submit would judge the files: issues, blockers and warnings."""
    if json_out:
        print_json(found.to_check_json())
    else:
        from selfbench.cli import report as _report

        _report.print_task_check(source, found)
    return EXIT_OK if found.accepted else EXIT_REJECTED


def _audit(args: argparse.Namespace) -> int:
    from selfbench.artifacts.task_dir import read_authored_task
    from selfbench.task import judge_task

    task = read_authored_task(Path(args.task_dir))
    report = judge_task(task.loaded, task.test_patch, task.gold_patch).audit
    if args.json:
        print_json(report.to_json())
    else:
        from selfbench.cli import report as _report

        _report.print_audit(task.definition.taskId, report)
    return EXIT_OK if report.accepted else EXIT_REJECTED


def _submit(args: argparse.Namespace) -> int:
    from selfbench._json import loads_strict
    from selfbench.submit import write_submission, write_submission_files

    options = {"output_root": args.output_root, "preflight": args.preflight}
    if args.args is not None:
        if any((args.definition, args.test_patch, args.gold_patch)):
            raise InputError("--args replaces --definition, --test-patch and --gold-patch")
        arguments = loads_strict(read_input(args.args), source=args.args)
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
        definition = loads_strict(read_input(args.definition), source=args.definition)
        submission = write_submission_files(
            definition, read_input(args.test_patch), read_input(args.gold_patch), **options
        )
    for warning in submission.warnings:
        sys.stderr.write(f"warning: {printable(warning)}\n")
    sys.stdout.write(submission.message + "\n")
    return EXIT_OK


def add_task_commands(commands: Any) -> None:
    """Register `schema`, `check`, `audit` and `submit` on the CLI's subcommands."""
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
    add_json_option(check)
    check.set_defaults(run=_check)

    audit = commands.add_parser("audit", help="statically audit an authored task directory")
    audit.add_argument("task_dir", metavar="TASK_DIR")
    add_json_option(audit)
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
