"""Which test runner a shell command runs, read from its words (never from its output).

The command is split into simple commands with the project's one shell lexer; wrappers (`env`,
`timeout 60`, `uv run`, `poetry run`, …) are unwrapped and `sh -c SCRIPT` is read (three levels
deep at most). A command that runs two different runners has none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench._shell import split_words

__all__ = ["RUNNERS", "commands", "detect_runner"]

RUNNERS = ("pytest", "node", "bun", "go", "cargo", "jest", "vitest")
_JS_RUNNERS = frozenset({"jest", "vitest"})

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
_PYTEST_NAMES = ("pytest", "py.test")
# name -> (runner, its subcommands, options before the subcommand that take a separate value)
_SUBCOMMAND_RUNNERS: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {
    "bun": ("bun", ("test",), frozenset({"--cwd"})),
    "go": ("go", ("test",), frozenset({"-C"})),
    "cargo": ("cargo", ("test", "t"), frozenset({"-Z", "--config", "-C", "--color"})),
}
_MAX_SHELL_DEPTH = 3


def detect_runner(command: str) -> str | None:
    """The test runner a shell command runs: one of `RUNNERS`, or None when unknown or mixed."""
    return _detect(command, 0)


def _detect(command: str, depth: int) -> str | None:
    found = {_runner_of(argv, depth) for argv in commands(command)} - {None}
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


def _runner_of(argv: Sequence[str], depth: int) -> str | None:
    if not argv:
        return None
    name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name in _WRAPPERS:
        return _runner_of(_unwrap(name, args), depth)
    if name in _SHELLS:
        script = _shell_script(args)
        return None if script is None or depth >= _MAX_SHELL_DEPTH else _detect(script, depth + 1)
    return _direct_runner(name, args)


def _direct_runner(name: str, args: Sequence[str]) -> str | None:
    if name in _PYTEST_NAMES:
        return "pytest"
    if _PYTHON_RE.fullmatch(name):
        module = _python_module(args, _PYTHON_VALUE_OPTIONS)
    elif name == "coverage" and args[:1] == ["run"]:
        module = _python_module(args[1:], _COVERAGE_VALUE_OPTIONS)
    elif name in ("node", "nodejs"):
        return "node" if "--test" in args else _js_runner(args)
    elif name in _JS_RUNNERS:
        return name
    elif name == "npx":
        return _js_runner(args)
    else:
        return _subcommand_runner(name, args)
    return "pytest" if module in _PYTEST_NAMES else None


def _js_runner(args: Sequence[str]) -> str | None:
    """jest or vitest run by `npx` or `node` (`npx vitest run`, `node node_modules/.bin/jest`)."""
    first = next((arg for arg in args if not arg.startswith("-")), "")
    name = first.rsplit("/", 1)[-1]
    return name if name in _JS_RUNNERS else None


def _subcommand_runner(name: str, args: Sequence[str]) -> str | None:
    """`go test`, `bun test`, `cargo +nightly test`: a runner named by its subcommand."""
    known = _SUBCOMMAND_RUNNERS.get(name)
    if known is None:
        return None
    runner, subcommands, value_options = known
    return runner if _subcommand(args, value_options) in subcommands else None


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
