"""Which test runner a shell command runs, read from its words (never from its output).

The command is split into simple commands with the project's one shell lexer; wrappers (`env`,
`timeout 60`, `uv run`, `poetry run`, …) are unwrapped and `sh -c SCRIPT` is read (three levels
deep at most); each runner's `matches` then says whether a simple command is its own. A command
that runs two different runners has none. The helpers below read the shapes runners share
(`python -m MODULE`, `npx NAME`, `NAME [options] SUBCOMMAND`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from selfbench._shell import split_words

if TYPE_CHECKING:
    from selfbench.runners._index import Entry

__all__ = ["commands", "installed", "js_bin", "python_module", "runner_of", "subcommand"]

_ENV_VALUE_OPTIONS = frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
# The common `uv run` options that take a value; an unknown one makes the runner unknown, no worse.
_UV_VALUE_OPTIONS = frozenset(
    {"--with", "--with-requirements", "--python", "-p", "--package", "--extra", "--group"}
    | {"--only-group", "--directory", "--project", "--env-file", "--index", "--index-url"}
)
# name -> (leading subcommand, options that take a separate value, positionals to skip)
_WRAPPERS: dict[str, tuple[tuple[str, ...], frozenset[str], int]] = {
    "env": ((), _ENV_VALUE_OPTIONS, 0),
    "time": ((), frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nohup": ((), frozenset(), 0),
    "exec": ((), frozenset({"-a"}), 0),
    "command": ((), frozenset(), 0),
    "nice": ((), frozenset({"-n", "--adjustment"}), 0),
    "timeout": ((), frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": ((), frozenset({"-i", "-o", "-e"}), 0),
    "xvfb-run": ((), frozenset({"-n", "--server-num", "-s", "--server-args", "-f"}), 0),
    "uv": (("run",), _UV_VALUE_OPTIONS, 0),
    "uvx": ((), _UV_VALUE_OPTIONS, 0),
    "poetry": (("run",), frozenset(), 0),
    "pdm": (("run",), frozenset(), 0),
    "pipenv": (("run",), frozenset(), 0),
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_PYTHON_RE = re.compile(r"python(?:\d+(?:\.\d+)?)?")
_PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_COVERAGE_VALUE_OPTIONS = frozenset(
    {"--source", "--omit", "--include", "--rcfile", "--data-file", "--context", "--concurrency"}
)
_MAX_SHELL_DEPTH = 3


def runner_of(command: str, runners: Sequence[Entry]) -> Entry | None:
    """The entry of the one runner of `runners` a shell command runs, or None when unknown or
    mixed."""
    return _detect(command, runners, 0)


def _detect(command: str, runners: Sequence[Entry], depth: int) -> Entry | None:
    found = {_argv_runner(argv, runners, depth) for argv in commands(command)} - {None}
    return found.pop() if len(found) == 1 else None


def commands(source: str) -> list[list[str]]:
    """Each simple command's name and arguments; assignments and redirections left out."""
    commands: list[list[str]] = []
    for word in split_words(source):
        if word.assignment or word.redirect or word.index < 0:
            continue
        if word.index == 0:
            commands.append([word.text])
        elif commands:
            commands[-1].append(word.text)
    return commands


def _argv_runner(argv: Sequence[str], runners: Sequence[Entry], depth: int) -> Entry | None:
    if not argv:
        return None
    name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name in _WRAPPERS:
        return _argv_runner(_unwrap(name, args), runners, depth)
    if name in _SHELLS:
        script = _shell_script(args)
        if script is None or depth >= _MAX_SHELL_DEPTH:
            return None
        return _detect(script, runners, depth + 1)
    return next((runner for runner in runners if runner.matches(name, args)), None)


def python_module(name: str, args: Sequence[str]) -> str | None:
    """The module a command runs as `python [options] -m MODULE` or `coverage run -m MODULE`."""
    if _PYTHON_RE.fullmatch(name):
        return _python_module(args, _PYTHON_VALUE_OPTIONS)
    if name == "coverage" and args[:1] == ["run"]:
        return _python_module(args[1:], _COVERAGE_VALUE_OPTIONS)
    return None


def js_bin(name: str, args: Sequence[str]) -> str | None:
    """The program `npx` or `node` runs (`npx vitest run`, `node node_modules/.bin/jest`), or
    the command's own name otherwise."""
    if name not in ("npx", "node", "nodejs"):
        return name
    first = next((arg for arg in args if not arg.startswith("-")), "")
    return first.rsplit("/", 1)[-1]


def installed(name: str, local: bool) -> list[str]:
    """How to start a Node package's program: the project's own copy, else found up the tree
    when hoisted (`npx --no`)."""
    return [f"node_modules/.bin/{name}"] if local else ["npx", "--no", name]


def subcommand(args: Sequence[str], value_options: frozenset[str]) -> str | None:
    """The first argument that is no option (nor a `+toolchain`), skipping `value_options`'
    values: the subcommand of `go test`, `bun test`, `cargo +nightly test`."""
    return _subcommand(args, value_options)


def _unwrap(name: str, args: Sequence[str]) -> list[str]:
    """The command a wrapper (`env`, `timeout 60`, `uv run`, …) runs, or [] when there is none."""
    subcommand, value_options, positionals = _WRAPPERS[name]
    if tuple(args[: len(subcommand)]) != subcommand:
        return []
    rest = list(args[len(subcommand) :])
    at = 0
    while at < len(rest):
        arg = rest[at]
        if name == "uv" and arg in ("-m", "--module"):
            return ["python", "-m", *rest[at + 1 :]]
        if arg == "--":
            return rest[at + 1 :]
        if arg in value_options:
            at += 2
        elif arg.startswith("-") or (name == "env" and "=" in arg):
            at += 1
        elif positionals:
            positionals -= 1
            at += 1
        else:
            return rest[at:]
    return []


def _shell_script(args: Sequence[str]) -> str | None:
    """The script of `sh -c SCRIPT` (also `bash -lc`, `sh -ec`); None for a script file."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg in ("-o", "+o", "-O", "+O"):
            at += 2
        elif not arg.startswith(("-", "+")) or arg == "--":
            return None
        elif not arg.startswith("--") and "c" in arg:
            return args[at + 1] if at + 1 < len(args) else None
        else:
            at += 1
    return None


def _python_module(args: Sequence[str], value_options: frozenset[str]) -> str | None:
    """The module of `python [options] -m MODULE`, or None."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg in ("-m", "--module"):
            return args[at + 1] if at + 1 < len(args) else None
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:]
        if arg == "-c" or not arg.startswith("-"):
            return None
        at += 2 if arg in value_options else 1
    return None


def _subcommand(args: Sequence[str], value_options: frozenset[str]) -> str | None:
    """The first argument that is no option (nor a `+toolchain`)."""
    at = 0
    while at < len(args):
        arg = args[at]
        if arg in value_options:
            at += 2
        elif arg.startswith(("-", "+")):
            at += 1
        else:
            return arg
    return None
