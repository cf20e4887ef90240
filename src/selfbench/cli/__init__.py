"""The `selfbench` command line: parse arguments, call the library, format, exit.

One module per command group (`task`, `bundle`, `validate`, `export`, `mine`, `draft`, `run`,
`eval`, `quality`, `toolchains`, `demo`), the option groups they share (`common`), their
terminal reports (`report`) and the command reference rendered from this parser (`reference`).

Each command imports what it needs when it runs, so `selfbench audit --json` on a large patch
does not pay for the terminal renderer or modules it never uses: `selfbench --version` takes
0.05 s this way and 0.47 s with every command's imports at the top. A run of one command imports
and builds only its own group's parser (`_GROUPS`); `--help`, an unknown command and
`build_parser` build them all.
"""

from __future__ import annotations

import argparse
import gettext
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from selfbench._text import printable
from selfbench.errors import (
    DEBUG_VARIABLE,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_REJECTED,
    SelfbenchError,
)

TYPE_CHECKING = False  # typing is not loaded at run time: see `selfbench.errors`
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["build_parser", "main"]

# What a command of this module needs (`pathlib`, the shared options and JSON printing) is
# imported in it: `--version` needs none of it, and pathlib and json cost its start-up.


def _untranslated_argparse() -> None:
    """argparse passes each of its words through `gettext.gettext`, which looks for the current
    domain's catalog on disk on every call: 15 lookups, about 5 ms of `audit`'s start-up. Where
    one lookup finds no catalog, argparse's words are its own, so they are used as they are.
    It changes argparse for the whole process: `main` does it only when it runs as the program.
    """
    domain = gettext.textdomain()
    if gettext.find(domain, gettext.bindtextdomain(domain)) is None:
        argparse._ = str  # type: ignore[attr-defined]


class _Parser(argparse.ArgumentParser):
    partial = False
    """A top level holding only one command's group (`_parser`)."""

    def error(self, message: str) -> NoReturn:
        # the usage names every command, as the whole parser's does
        sys.stderr.write((_parser() if self.partial else self).format_usage())
        self.exit(EXIT_INPUT, f"error: {message}\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse's formatter imports `shutil` for the terminal's width, and `add_argument`
        # makes one for every option: 3-6 ms of `check`'s start-up. The width is read here as
        # `shutil.get_terminal_size` reads it, less the 2 argparse takes off. No parser here
        # sets another formatter class.
        return argparse.HelpFormatter(self.prog, width=_terminal_columns() - 2)


def _terminal_columns() -> int:
    """`$COLUMNS` when it is a positive number, else the terminal's width, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno() if sys.__stdout__ else 1).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


# --- commands ----------------------------------------------------------------------------------


def _mcp(args: argparse.Namespace) -> int:
    from selfbench.draft.mcp_tool import REPO_ENV
    from selfbench.mcp_server import serve_stdio

    if args.repo is not None:  # the one repository `draft_task` may draft from
        os.environ[REPO_ENV] = args.repo
    serve_stdio(output_root=args.output_root, preflight=args.preflight)
    return EXIT_OK


def _import_swebench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from selfbench.cli.common import print_json
    from selfbench.swebench import import_swebench

    report = import_swebench(
        Path(args.instances),
        out=Path(args.out),
        setup_command=args.setup_command,
        test_command=args.test_command,
    )
    if args.json:
        print_json(report.to_json())
    else:
        for task in report.imported:
            sys.stdout.write(f"imported {task.instance_id} ({task.difficulty}) into {task.path}\n")
        for skipped in report.skipped:
            sys.stdout.write(f"skipped {skipped.instance_id}: {'; '.join(skipped.reasons)}\n")
    return EXIT_REJECTED if report.skipped else EXIT_OK


def _export_swebench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from selfbench.swebench import export_swebench

    count = export_swebench([Path(path) for path in args.task_dirs], out=Path(args.out))
    sys.stdout.write(f"Exported {count} instances to {args.out}\n")
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from pathlib import Path

    from selfbench.cli.demo import run_demo

    return run_demo(main, keep=args.keep, out=Path(args.out) if args.out else None)


# --- the parser --------------------------------------------------------------------------------

_Command = Callable[[argparse.Namespace], int]

# The functions that register the commands, in the order `--help` lists them, and the commands
# each registers: `selfbench check ...` imports `cli/task.py` and builds its group only.
# tests/test_startup.py holds this table to what the registrars do.
_GROUPS: dict[str, tuple[str, ...]] = {
    "task:add_task_commands": ("schema", "check", "audit", "submit"),
    "bundle:add_bundle_commands": ("compile", "refresh", "collect"),
    "validate:add_validate_command": ("validate",),
    "bundle:add_repair_check_command": ("repair-check",),
    ":_add_agent_commands": ("mcp", "import-swebench", "export-swebench"),
    "export:add_export_commands": ("export", "verify", "extract", "review"),
    "toolchains:add_toolchains_command": ("toolchains",),
    "mine:add_mine_commands": ("mine",),
    "draft:add_draft_command": ("draft",),
    "run:add_run_commands": ("run", "status"),
    "eval:add_eval_commands": ("eval", "report"),
    "quality:add_quality_command": ("quality",),
    ":_add_demo": ("demo",),
}
_GROUP_OF = {command: group for group, commands in _GROUPS.items() for command in commands}

_SANDBOXED = frozenset({"run", "draft", "quality", "validate", "eval", "demo"})
"""The commands that start sandboxes as one run: their sandboxes share one walk of the host's
private entries (`environments/local/_one_walk.py`). A server (`mcp`, `review`) is no one run."""

# `mine` adds `schema candidate` to task's `schema`: either command builds both groups.
_TOGETHER = ("task:add_task_commands", "mine:add_mine_commands")
_SHARED = {"schema": _TOGETHER, "mine": _TOGETHER}


def _registrar(group: str) -> Callable[[Any], None]:
    """The function named `module:function` (a module of this package; none: this module)."""
    module, _, function = group.partition(":")
    owner = import_module(f"selfbench.cli.{module}") if module else sys.modules[__name__]
    registrar: Callable[[Any], None] = getattr(owner, function)
    return registrar


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command, or only `command`'s group when it names a command."""
    parser = _Parser(
        prog="selfbench",
        description="Turn merged pull requests into proven benchmark tasks for coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    needed = _needed(command)
    for registrar in _GROUPS if needed is None else [name for name in _GROUPS if name in needed]:
        _registrar(registrar)(commands)
    parser.partial = needed is not None
    return parser


def _needed(command: str | None) -> tuple[str, ...] | None:
    """The groups a run whose first word is `command` needs: the command's own; none for
    `--version` (or its abbreviation), which argparse answers before it reads a command; None
    for every group (`--help`, an unknown command, no words)."""
    group = _GROUP_OF.get(command or "")
    if group is not None:
        return _SHARED.get(command or "", (group,))
    if command is not None and len(command) > len("--") and "--version".startswith(command):
        return ()
    return None


def build_parser() -> argparse.ArgumentParser:
    """The CLI's whole parser, every command registered (the command reference reads it)."""
    return _parser()


def _add_demo(commands: Any) -> None:
    demo = commands.add_parser("demo", help="author, prove and export a sample task")
    demo.add_argument("--keep", action="store_true", help="keep the sample's temp directory")
    demo.add_argument("--out", metavar="DIR", help="where the export goes (default: a temp dir)")
    demo.set_defaults(run=_demo)


def _add_agent_commands(commands: Any) -> None:
    _add_mcp(commands.add_parser("mcp", help="serve submit_task and check_task over MCP (stdio)"))
    _add_swebench(commands)


def _add_mcp(parser: argparse.ArgumentParser) -> None:
    from selfbench.cli.common import add_repo_option

    parser.add_argument("--output-root", metavar="DIR", help="instead of $SELFBENCH_TASK_OUTPUT")
    add_repo_option(
        parser,
        required=False,
        help="the only repository draft_task drafts from (default $SELFBENCH_REPO; without "
        "either, a repository inside the working directory)",
    )
    parser.add_argument(
        "--no-preflight",
        dest="preflight",
        action="store_false",
        help="submit_task skips the preflight checks (strict compatibility)",
    )
    parser.set_defaults(run=_mcp)


def _add_swebench(commands: Any) -> None:
    from selfbench.cli.common import add_json_option

    importer = commands.add_parser("import-swebench", help="SWE-bench instances to task dirs")
    importer.add_argument("instances", metavar="INSTANCES.jsonl")
    importer.add_argument("--out", required=True, metavar="DIR")
    importer.add_argument("--setup-command", metavar="CMD", help="needed without swebench specs")
    importer.add_argument("--test-command", metavar="CMD", help='holds "{tests}" once')
    add_json_option(importer)
    importer.set_defaults(run=_import_swebench)

    exporter = commands.add_parser("export-swebench", help="task dirs to SWE-bench instances")
    exporter.add_argument("task_dirs", nargs="+", metavar="TASK_DIR")
    exporter.add_argument("--out", required=True, metavar="FILE.jsonl")
    exporter.set_defaults(run=_export_swebench)


def _version() -> str:
    from selfbench import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 checked and failed, 2 input rejected).
    Without `argv` it runs as the program, on `sys.argv`."""
    if argv is None:
        _untranslated_argparse()
    code = _run(sys.argv[1:] if argv is None else list(argv))
    if argv is None:
        # The program ends once the command returns: what it leaves is freed with the process,
        # not looked through again by the cycle collector's last passes (15 ms after `mine`).
        import gc  # a run as the program alone

        gc.freeze()
    return code


def _run(words: list[str]) -> int:
    try:
        args = _parser(words[0] if words else None).parse_args(words)
    except SystemExit as exit_:  # usage errors, --help and --version end here, not in the caller
        return exit_.code if isinstance(exit_.code, int) else EXIT_INPUT
    command: _Command = args.run
    try:
        if words[0] not in _SANDBOXED:
            return command(args)
        from selfbench.environments.local import _one_walk  # those commands' alone

        with _one_walk.scope():  # one command is one run: its sandboxes share one walk
            return command(args)
    except SelfbenchError as exc:
        for line in exc.lines:
            sys.stderr.write(f"error: {printable(line)}\n")
        if os.environ.get(DEBUG_VARIABLE):  # the chain of causes, for a bug report
            import traceback  # only here: it loads textwrap and its patterns

            for line in "".join(traceback.format_exception(exc)).splitlines():
                sys.stderr.write(f"{printable(line)}\n")
        return exc.exit_code
