"""`check`, `audit` and `submit` start in milliseconds: what they load, not how long it takes.

Each command runs in a fresh interpreter that then lists its modules: none of the heavy ones
(a validation library, the terminal renderer for JSON output, the MCP and HTTP stacks, an
installed-package scan, the compiler, validation, evaluation, the other commands' modules) may be
among them, nor a runner's module the task does not need. The timings are
`benchmarks/startup.py`'s (docs/performance.md).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from selfbench import _runner_files
from selfbench.audit import AuditReport
from selfbench.cli import _GROUPS, _Parser, _parser, build_parser, main, report
from selfbench.contract import CheckReport
from selfbench.demo import build_sample_repository, sample_arguments
from selfbench.errors import Issue
from selfbench.submit import TaskCheck, submit_task

HEAVY = (
    "pydantic", "pydantic_core", "jsonschema", "hypothesis", "mcp", "anyio", "httpx",
    "importlib.metadata", "selfbench.compiler", "selfbench.validate", "selfbench.evaluate",
    "selfbench.mine", "selfbench.draft", "selfbench.run", "selfbench.export", "selfbench.quality",
    "selfbench.bundle.render", "selfbench.cli.bundle", "selfbench.cli.eval", "selfbench.cli.run",
    "selfbench.cli.mine", "selfbench.cli.export", "selfbench.cli.draft", "selfbench.cli.validate",
)  # fmt: skip
"""Module names (and their submodules) the start-up of these commands must not import."""

_PROBE = (
    "import sys; from selfbench.cli import main; code = main(sys.argv[1:]); "
    "print(code, *sorted(sys.modules), file=sys.stderr)"
)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo's sample task directory and a file of its `submit_task` arguments."""
    root = tmp_path_factory.mktemp("startup")
    arguments = sample_arguments(build_sample_repository(root))
    (root / "tasks").mkdir()
    submit_task(arguments, output_root=root / "tasks", preflight=False)
    (root / "arguments.json").write_text(json.dumps(arguments))
    return next((root / "tasks").iterdir()), root / "arguments.json"


def _loaded(argv: list[str]) -> tuple[int, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=False
    )
    code, *modules = result.stderr.split("\n")[-2].split(" ")
    return int(code), modules


def _heavy(modules: list[str], *, allowed: tuple[str, ...] = ()) -> list[str]:
    return [
        name
        for name in modules
        if any(name == heavy or name.startswith(f"{heavy}.") for heavy in HEAVY)
        and not name.startswith(allowed)
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--json", "{task}"],
        ["check", "--json", "{task}/definition.json"],
        ["audit", "--json", "{task}"],
        ["check", "{task}"],
        ["check", "{task}/definition.json"],
        ["audit", "{task}"],
        ["submit", "--args", "{arguments}", "--output-root", "{out}"],
    ],
)
def test_a_command_piped_loads_no_heavy_module_nor_rich(
    sample: tuple[Path, Path], tmp_path: Path, command: list[str]
) -> None:
    task, arguments = sample
    argv = [word.format(task=task, arguments=arguments, out=tmp_path) for word in command]
    code, modules = _loaded(argv)
    assert code == 0
    assert _heavy(modules) == []
    assert [name for name in modules if name.split(".")[0] == "rich"] == []


# --- each command loads only the runners it uses ----------------------------------------------

_RUNNERS = "selfbench.runners."
_SHARED = ("_command", "_index")
"""The registry's own modules every runner question may load: its table and the command reader."""


def _runner_modules(modules: list[str]) -> list[str]:
    """The runner modules loaded (`pytest`, `cargo`), and any other module of the package but
    the registry's table and command reader (the protocol comes with a runner module)."""
    names = [name.removeprefix(_RUNNERS) for name in modules if name.startswith(_RUNNERS)]
    return sorted(name for name in names if name not in _SHARED)


def _under(modules: list[str], *roots: str) -> list[str]:
    return [name for name in modules if name.split(".")[0] in roots]


@pytest.fixture(scope="module")
def rust_task(sample: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample task run by cargo, a selector naming a unit test: its audit asks the runner."""
    task = tmp_path_factory.mktemp("rust") / "task"
    shutil.copytree(sample[0], task)
    definition = json.loads((task / "definition.json").read_text())
    definition |= {"testCommand": "cargo test {tests}", "toolchains": ["rust"]}
    definition["failToPass"] = ["parser::tests::parses"]
    (task / "definition.json").write_text(json.dumps(definition))
    return task


@pytest.mark.parametrize(
    ("command", "runners"),
    [
        (["--version"], None),
        (["mine", "--help"], None),
        (["audit", "{task}"], []),
        (["audit", "--json", "{task}"], []),
        (["check", "{task}"], []),
        (["check", "{task}/definition.json"], []),
        (["audit", "{rust}"], ["_log", "_protocol", "cargo"]),
        (["check", "{rust}"], ["_log", "_protocol", "cargo"]),
    ],
)
def test_a_command_loads_only_the_runner_its_task_names(
    sample: tuple[Path, Path], rust_task: Path, command: list[str], runners: list[str] | None
) -> None:
    """`--version` and `mine --help` load no runner module, no validation library and no MCP
    SDK; `audit` and `check` load the registry's table, and a runner's module only when the task
    needs its own rules (a cargo task's unit-test selector), that one only."""
    argv = [word.format(task=sample[0], rust=rust_task) for word in command]
    code, modules = _loaded(argv)
    assert code in (0, 1)
    assert _under(modules, "pydantic", "pydantic_core", "mcp") == []
    if runners is None:
        assert [name for name in modules if name.startswith("selfbench.runners")] == []
    else:
        assert _runner_modules(modules) == runners


# --- what only writing, a spinner or a bug report needs ----------------------------------------

LATE = (
    "ctypes", "hashlib", "threading", "traceback", "subprocess", "selfbench.progress",
    "selfbench.environments", "dataclasses", "inspect", "shutil",
)  # fmt: skip
"""Modules `check`, `audit` and `--version` do not load: a rename's libc call, a digest, a
spinner's lock, a bug report's traceback, a child process, the environment records, the
dataclass machinery (their records are NamedTuples and `contract`'s models), a terminal-width
lookup through `shutil` (argparse's own)."""

VERSION_ONLY = ("selfbench", "selfbench._text", "selfbench.cli", "selfbench.errors")
"""The package's modules `--version` loads: no command group, no reader, no shared options."""


def _among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(f"{name}.") for name in names)]


@pytest.mark.parametrize(
    "command",
    [
        ["audit", "{task}"],
        ["audit", "--json", "{task}"],
        ["check", "{task}"],
        ["check", "--json", "{task}/definition.json"],
    ],
)
def test_a_checker_loads_nothing_only_writing_or_a_bug_report_needs(
    sample: tuple[Path, Path], command: list[str]
) -> None:
    code, modules = _loaded([word.format(task=sample[0]) for word in command])
    assert code == 0
    assert _among(modules, LATE) == []


@pytest.mark.parametrize("flag", ["--version", "--vers"])
def test_version_loads_no_command_group_nor_typing_or_dataclasses(flag: str) -> None:
    code, modules = _loaded([flag])
    assert code == 0
    assert [name for name in modules if name.split(".")[0] == "selfbench"] == list(VERSION_ONLY)
    later = (*LATE, "pathlib", "json", "typing")
    assert _among(modules, later) == []


def test_a_run_as_the_program_leaves_what_is_left_to_the_exit() -> None:
    """Run as the program, `main` freezes what the command left for the cycle collector (the
    process ends with the command: its last passes need not look through it); called with
    arguments, as a library, it does not."""
    probe = (
        "import gc, sys; from selfbench.cli import main; "
        "main(['--version']); print(gc.get_freeze_count() > 0); "
        "sys.argv = ['selfbench', '--version']; main(); print(gc.get_freeze_count() > 0)"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    frozen = [line for line in ran.stdout.splitlines() if line in ("False", "True")]
    assert frozen == ["False", "True"]  # between them, `--version` printed its line


def test_the_runner_control_rule_compiles_no_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its matcher answers from the path's components (tests/test_runner_files.py holds it to
    `fnmatch`): compiling every pattern as one alternation cost each audit 5-25 ms."""
    for matcher in (_runner_files._control, _runner_files._packages):  # noqa: SLF001
        matcher.cache_clear()

    def compiled(*args: object) -> None:
        raise AssertionError(f"compiled {args[0]!r}")

    monkeypatch.setattr(re, "_compile", compiled)
    paths = ("src/app.py", "a/node_modules/b.js", "jest.config.ts", "x/tests/t.rs", "pluggy/x.py")
    found = [_runner_files.is_runner_control(path, build_cache=True) for path in paths]
    assert found == [False, True, True, True, True]


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        if isinstance(action.choices, dict):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def test_the_group_table_names_every_command_in_the_help_order() -> None:
    listed = [command for commands in _GROUPS.values() for command in commands]
    assert list(_commands(build_parser())) == listed


def test_one_command_s_own_parser_is_the_whole_parser_s() -> None:
    whole = _commands(build_parser())
    for name, parser in whole.items():
        alone = _commands(_parser(name))[name]
        assert alone.format_help() == parser.format_help(), name
        ran, runs = alone.get_default("run"), parser.get_default("run")
        assert ran.__qualname__ == runs.__qualname__, name


@pytest.mark.parametrize(
    ("argv", "usage_of"),
    [
        (["eval", "bench.tar.gz", "--out", "r"], None),  # an unknown option: the top level's
        (["check", "d.json", "--nope"], None),
        (["no-such-command"], None),
        (["check"], "check"),  # a missing argument: the command's own
    ],
)
def test_a_usage_error_prints_the_whole_parser_s_usage(
    argv: list[str], usage_of: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The top level's usage names every command, though a run builds only its own group."""
    assert main(argv) == 2
    whole = build_parser()
    parser = whole if usage_of is None else _commands(whole)[usage_of]
    assert capsys.readouterr().err.startswith(parser.format_usage())


# --- piped, a report is rich's own text without rich ------------------------------------------

_NAMES = ("implementation files", "src/a\x1b[31m.py", "näme", "x" * 120)
_CASES: list[tuple[str, Any]] = [
    ("check", CheckReport(valid=True, issues=(), warnings=())),
    ("check", CheckReport(valid=True, issues=(), warnings=("dropped unknown key x", *_NAMES))),
    (
        "check",
        CheckReport(
            valid=False,
            issues=tuple(Issue(name, f"must not be {name}") for name in _NAMES),
            warnings=("w",),
        ),
    ),
    ("task", TaskCheck("t-1", (), (), (), None)),
    ("task", TaskCheck(None, (Issue("$", "must be an object"),), _NAMES, _NAMES, None)),
    ("audit", AuditReport((), 3, 72, 2, ())),
    ("audit", AuditReport(_NAMES, 12345678, 0, 1, _NAMES)),
    ("audit", AuditReport(("gold patch is empty",), 0, 0, 0, ("a warning",))),
]


@pytest.mark.parametrize(("kind", "found"), _CASES)
def test_a_piped_report_is_what_rich_prints_piped(
    kind: str, found: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def show() -> None:
        if kind == "check":
            report.print_check("task/definition.json", found)
        elif kind == "task":
            report.print_task_check("task/definition.json", found)
        else:
            report.print_audit("t-1", found)

    show()
    piped = capsys.readouterr().out
    buffer = io.StringIO()  # what rich writes when its output is not a terminal
    monkeypatch.setattr(
        report, "_console", lambda: Console(file=buffer, highlight=False, soft_wrap=True)
    )
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # take the styled path
    show()
    assert piped == buffer.getvalue()
    assert "\x1b[1m" not in piped


@pytest.mark.parametrize("columns", ["40", "132", "0", "-3", "wide", None])
def test_help_is_as_wide_as_argparse_s_own_formatter_makes_it(
    monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    """The parser reads the terminal's width itself, not through `shutil`, and prints the same
    help at every width argparse's own formatter would."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    commands = ["audit", "eval", "run"]
    ours = [build_parser().format_help(), *(_parser(name).format_help() for name in commands)]
    stock_formatter = argparse.ArgumentParser._get_formatter  # noqa: SLF001 - what it replaces
    monkeypatch.setattr(_Parser, "_get_formatter", stock_formatter)
    stock = [build_parser().format_help(), *(_parser(name).format_help() for name in commands)]
    assert ours == stock


@pytest.mark.parametrize(
    ("run", "untranslated"),
    [
        ("", False),  # imported: argparse is the importer's
        ("main(['--version'])", False),  # called with words, as a library or a test calls it
        ("sys.argv = ['selfbench', '--version']\nmain()", True),  # the program
    ],
)
def test_argparse_goes_untranslated_only_in_a_run_as_the_program(
    run: str, untranslated: bool
) -> None:
    """Without a catalog for the current domain, argparse's words are its own: the program
    skips its lookups; an importer's argparse is left as it is."""
    probe = f"import argparse, sys\nfrom selfbench.cli import main\n{run}\nprint(argparse._ is str)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines()[-1] == str(untranslated)


def test_argparse_keeps_its_translation_where_the_domain_has_a_catalog(tmp_path: Path) -> None:
    """A catalog for the domain argparse reads (an empty one will do): the program leaves
    argparse's lookups as they are."""
    catalog = tmp_path / "de" / "LC_MESSAGES" / "messages.mo"
    catalog.parent.mkdir(parents=True)
    # a GNU catalog of no message: magic, revision, count, both tables' offsets, no hash table
    catalog.write_bytes(struct.pack("<7I", 0x950412DE, 0, 0, 28, 28, 0, 28))
    probe = (
        f"import argparse, gettext, sys\ngettext.bindtextdomain('messages', {str(tmp_path)!r})\n"
        "from selfbench.cli import main\nsys.argv = ['selfbench', '--version']\nmain()\n"
        "print(argparse._ is str)"
    )
    env = {**os.environ, "LANGUAGE": "de"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    )
    assert result.stdout.splitlines()[-1] == "False"
