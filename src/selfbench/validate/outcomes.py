"""Per-test outcomes read from a test runner's log, and whether the suite really ran. Pure.

SPEC §7, Beyond, *the suite really ran*: for pytest, node's test runner, bun test, go test and
cargo test the report carries per-test outcomes parsed from the log, and a command that exits 0
while running no test counts as a failure, with that reason.

The runner comes from the command (`detect_runner`), never from the log. The log is hostile
text: ANSI escapes are removed, it is read one line at a time (`str.splitlines`, trailing blanks
dropped), every pattern is anchored and linear, and a line that fits no pattern is noise. Lines:

* pytest: `<nodeid> STATUS [ NN%]` (`-v`), `[gwN] [ NN%] STATUS <nodeid>` (xdist `-v`),
  `STATUS <nodeid>[ - message]` (`-rA`, short summary), the final summary
  `[=== ]N word, N word in 1.23s[ ===]` or `no tests ran in …` (the last one counts), and
  progress lines `[file ].Fsx [ NN%]`, counted only when there is no summary (`-qq`).
* node: TAP (`# Subtest: name`, `[indent](not )ok N - name[ # SKIP|TODO …]`, YAML blocks from
  `---` to `...` skipped, `# tests|pass|fail|cancelled|skipped|todo N`) or the spec reporter
  (`▶ suite`, `✔|✖|﹣ name (1.2ms)[ # …]`, an info sign then `tests N`, `pass N`, …; the
  `✖ failing tests:` recap is skipped). The kind of the last summary line decides which: test
  output is `# `-prefixed in TAP but raw in spec.
* bun: `(pass|fail|skip|todo) name [1.2ms]` or `✓ ✗ » ✎ name`, ` N pass|fail|skip|todo|error`,
  `error: regex … matched 0 tests`, `The following filters did not match any test files`,
  `No tests found!`.
* go: `[indent]--- PASS|FAIL|SKIP: Name (0.00s)`, `ok  ⇥pkg⇥…[ [no tests to run]]`,
  `FAIL⇥pkg…`, `?   ⇥pkg⇥[no test files]`, `testing: warning: no tests to run`,
  `go: warning: "…" matched no packages`.
* cargo: `test name ... ok|FAILED|ignored[, reason]`, `name --- FAILED` (`-q`),
  `test result: ok. N passed; N failed; N ignored; N measured; N filtered out…` (summed over
  test binaries); the `failures:` section up to `test result:` is captured output, skipped.

Nested node tests are named `suite > test`. A name reported twice keeps its worst outcome
(failed over passed over skipped). Counts are the runner's own summary when it prints one (pytest,
node, bun, cargo), else counted from the names (go `-v`); zero counts without a "ran no test"
reason mean the log did not say (go without `-v`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from selfbench._shell import split_words

__all__ = ["NO_MATCH", "RUNNERS", "Outcome", "Outcomes", "detect_runner", "parse_outcomes"]

Outcome = Literal["passed", "failed", "skipped"]

RUNNERS = ("pytest", "node", "bun", "go", "cargo")
NO_MATCH = "no test matched the selector"

_LABELS = {
    "pytest": "pytest",
    "node": "node --test",
    "bun": "bun test",
    "go": "go test",
    "cargo": "cargo test",
}
_OUTCOMES: tuple[Outcome, Outcome, Outcome] = ("passed", "failed", "skipped")  # counts' order
_INDEX = {outcome: at for at, outcome in enumerate(_OUTCOMES)}
_SEVERITY: dict[Outcome, int] = {"skipped": 0, "passed": 1, "failed": 2}
# CSI sequences, other escapes (`ESC ( B`, `ESC =`), a lone ESC; possessive, so linear on any input.
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*+[ -/]*+[@-~]|[ -/]*+[0-~]|)")


@dataclass(frozen=True, slots=True)
class Outcomes:
    """What a test command's log says: the runner, each test's outcome, counts, and whether any ran.

    `tests` holds `(name, outcome)` pairs in the order first reported; it is empty when the log
    names no test (pytest `-q` with every test passing). `passed` includes pytest's xpassed,
    `failed` errors and node's cancelled, `skipped` pytest's xfailed, todo tests and cargo's
    ignored. `no_tests` is why the run counts as "ran no test", else None: `NO_MATCH`, or
    `<runner> ran no test (<evidence>)` with evidence `exit 5`, `no tests ran`, `N skipped`,
    `tests 0`, `0 pass`, `no test files`, `matched no packages` or `running 0 tests`.
    """

    runner: str | None
    tests: tuple[tuple[str, Outcome], ...]
    passed: int
    failed: int
    skipped: int
    no_tests: str | None
    exit_code: int

    @property
    def failure(self) -> str | None:
        """Why the run counts as failed (no test ran, or a non-zero exit); None when it passed."""
        if self.no_tests is not None:
            return self.no_tests
        if self.exit_code == 0:
            return None
        failed = f" ({self.failed} failed)" if self.failed else ""
        return f"exited {self.exit_code}{failed}"


@dataclass(frozen=True, slots=True)
class _Run:
    """One run's log lines (ANSI removed), its command's words and its exit code."""

    lines: list[str]
    words: list[str]
    exit_code: int


@dataclass(slots=True)
class _Result:
    """What one runner's parser found; `_finish` turns it into `Outcomes`."""

    tests: dict[str, Outcome] = field(default_factory=dict)
    counts: tuple[int, int, int] | None = None  # passed, failed, skipped from the runner's summary
    no_tests: str | None = None  # a reason the parser could decide on its own
    selector_miss: bool = False  # the log shows the selector matched nothing
    zero: str = "0 tests"  # the log's own words when every count is zero

    def record(self, name: str, outcome: Outcome) -> None:
        known = self.tests.get(name)
        if known is None or _SEVERITY[outcome] > _SEVERITY[known]:
            self.tests[name] = outcome


# --- the runner, from the command -----------------------------------------------------------------

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


def _table(passed: str, failed: str, skipped: str) -> dict[str, Outcome]:
    """A runner's words for each outcome (space-separated), as {word: outcome}."""
    groups = zip((passed, failed, skipped), _OUTCOMES, strict=True)
    return {word: outcome for words, outcome in groups for word in words.split()}


def detect_runner(command: str) -> str | None:
    """The test runner a shell command runs: one of `RUNNERS`, or None when unknown or mixed."""
    return _detect(command, 0)


def _detect(command: str, depth: int) -> str | None:
    found = {_runner_of(argv, depth) for argv in _commands(command)} - {None}
    return found.pop() if len(found) == 1 else None


def _commands(source: str) -> list[list[str]]:
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
        return "node" if "--test" in args else None
    else:
        return _subcommand_runner(name, args)
    return "pytest" if module in _PYTEST_NAMES else None


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


# --- pytest ---------------------------------------------------------------------------------------

_PYTEST_STATUS = _table("PASSED XPASS", "FAILED ERROR", "SKIPPED XFAIL")
_RUN_SECTIONS = ("", "test session starts")  # before any header (`-q`), or the session's own
_SHORT_SECTION = "short test summary info"
_XDIST_RE = re.compile(r"\[gw\d{1,6}\] \[ {0,2}\d{1,3}%\] ")
_PROGRESS_RE = re.compile(r"(?:[^ ]++ )?([.FEsxX]++) *+\[ *+\d{1,9}(?:%|/ *+\d{1,9})\]")
_PROGRESS_OUTCOMES = _table(". X", "F E", "s x")
_DURATION_RE = re.compile(r"\d{1,12}(?:\.\d{1,12})?s(?:econds)?(?: \(\d{1,9}:\d\d:\d\d\))?")
_ITEM_RE = re.compile(r"(\d{1,9}) ([a-z]++(?: [a-z]++)*+)")
_PYTEST_WORDS = _table("passed xpassed", "failed error errors", "skipped xfailed")


def _parse_pytest(run: _Run) -> _Result:
    result = _Result(zero="exit 5" if run.exit_code == 5 else "no tests ran")
    summary: dict[str, int] | None = None
    progress = [0, 0, 0]
    section = ""
    for line in run.lines:
        if line.startswith("=") and line.endswith("="):
            section = line.strip("=").strip()  # FAILURES, PASSES hold captured output: not read
        found = _pytest_test(line, section)
        if found is not None:
            result.record(*found)
        parsed = _pytest_summary(line) if " in " in line else None
        if parsed is not None:
            summary = parsed  # the last summary is pytest's own; earlier ones are test output
        elif section in _RUN_SECTIONS and (match := _PROGRESS_RE.fullmatch(line)) is not None:
            for char in match[1]:
                progress[_INDEX[_PROGRESS_OUTCOMES[char]]] += 1
    if summary is not None:
        result.counts = _pytest_counts(summary)
        result.selector_miss = summary.get("deselected", 0) > 0 and not any(result.counts)
    elif any(progress):
        result.counts = (progress[0], progress[1], progress[2])
    elif run.exit_code == 5:
        result.no_tests = "pytest ran no test (exit 5)"
    return result


def _pytest_test(line: str, section: str) -> tuple[str, Outcome] | None:
    """A test's outcome on a `-v`, xdist or short-summary line, each read in its own section."""
    if section == _SHORT_SECTION:
        return _pytest_short(line)
    if section not in _RUN_SECTIONS:
        return None
    if line.startswith("[gw"):
        match = _XDIST_RE.match(line)
        return None if match is None else _pytest_short(line[match.end() :])
    return _pytest_verbose(line)


def _pytest_verbose(line: str) -> tuple[str, Outcome] | None:
    """`tests/a.py::test_x[p] PASSED  [ 50%]`: a node id, then the first status word after it."""
    first = line.find("::")
    if first <= 0 or any(char.isspace() for char in line[:first]):
        return None
    best: tuple[int, Outcome] | None = None
    for word, outcome in _PYTEST_STATUS.items():
        at = _find_word(line, " " + word, first)
        if at != -1 and (best is None or at < best[0]):
            best = (at, outcome)
    return None if best is None else (line[: best[0]], best[1])


def _find_word(line: str, needle: str, start: int) -> int:
    """Where `needle` occurs followed by a space or the end of the line, or -1."""
    at = line.find(needle, start)
    while at != -1:
        end = at + len(needle)
        if end == len(line) or line[end] == " ":
            return at
        at = line.find(needle, at + 1)
    return -1


def _pytest_short(line: str) -> tuple[str, Outcome] | None:
    """`FAILED tests/a.py::test_x - message` (short summary, `-rA`)."""
    word, _, rest = line.partition(" ")
    outcome = _PYTEST_STATUS.get(word)
    if outcome is None or not rest or rest[0] in " [":
        return None
    nodeid = rest.partition(" - ")[0]
    if "::" not in nodeid and not nodeid.endswith(".py"):
        return None
    return nodeid, outcome


def _pytest_summary(line: str) -> dict[str, int] | None:
    """`=== 1 failed, 3 passed in 0.12s ===` as {word: count}; {} for `no tests ran`."""
    head, sep, tail = line.strip().strip("=").strip().rpartition(" in ")
    if not sep or _DURATION_RE.fullmatch(tail) is None:
        return None
    if head == "no tests ran":
        return {}
    counts: dict[str, int] = {}
    for item in head.split(", "):
        match = _ITEM_RE.fullmatch(item)
        if match is None:
            return None
        counts[match[2]] = counts.get(match[2], 0) + int(match[1])
    return counts


def _pytest_counts(summary: dict[str, int]) -> tuple[int, int, int]:
    counts = [0, 0, 0]
    for word, number in summary.items():
        if word in _PYTEST_WORDS:
            counts[_INDEX[_PYTEST_WORDS[word]]] += number
    return counts[0], counts[1], counts[2]


# --- node --test ----------------------------------------------------------------------------------

_NODE_SUMMARY_RE = re.compile(r"(?:#|\u2139) (tests|pass|fail|cancelled|skipped|todo) (\d{1,9})")
_TAP_RE = re.compile(r"(not )?ok \d++(?: - (.*))?")
_SPEC_MARKS = _table("✔", "✖", "﹣")
_SPEC_RE = re.compile(r"(.*?) \(\d++(?:\.\d++)?ms\)(?: # (.*))?")
_TAP_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_TAP_ESCAPE_RE = re.compile(r"\\(.)")
_PATTERN_SKIP = "test name does not match pattern"


class _Nest:
    """The suites enclosing a line, by indentation, to give a nested test its full name."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []

    def open(self, indent: int, name: str) -> None:
        self.close(indent)
        self.stack.append((indent, name))

    def close(self, indent: int) -> None:
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()

    def name(self, indent: int, name: str) -> str:
        self.close(indent)
        return " > ".join([*(parent for _, parent in self.stack), name])


@dataclass(slots=True)
class _NodeState:
    result: _Result = field(default_factory=_Result)
    nest: _Nest = field(default_factory=_Nest)
    summary: dict[str, int] = field(default_factory=dict)
    pattern_skips: int = 0
    other_skips: int = 0

    def record(self, indent: int, name: str, outcome: Outcome, directive: str) -> None:
        self.result.record(self.nest.name(indent, name), outcome)
        if directive.lower().endswith(_PATTERN_SKIP):
            self.pattern_skips += 1
        elif outcome == "skipped":
            self.other_skips += 1


def _parse_node(run: _Run) -> _Result:
    state = _NodeState()
    if _node_is_tap(run.lines):
        _read_tap(run.lines, state)
    else:
        _read_spec(run.lines, state)
    result, summary = state.result, state.summary
    empty_files = _node_empty_files(result, run.words)
    if summary:
        result.counts = (
            summary.get("pass", 0) - empty_files,
            summary.get("fail", 0) + summary.get("cancelled", 0),
            summary.get("skipped", 0) + summary.get("todo", 0),
        )
    by_pattern = any(w.startswith("--test-name-pattern") for w in run.words) and not result.tests
    result.selector_miss = (state.pattern_skips > 0 and state.other_skips == 0) or by_pattern
    result.zero = "a selected file holds no test" if empty_files else "tests 0"
    return result


_NODE_FILE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def _node_empty_files(result: _Result, words: Sequence[str]) -> int:
    """Drop the entries Node 20 reports for a selected file that holds no test; their number.

    Node 20 runs each file as a subtest named by its absolute path; a file with tests reports
    them instead, so a passing entry named after a selected file is a file that ran no test.
    """
    files = [word.lstrip("./") for word in words if word.endswith(_NODE_FILE_SUFFIXES)]
    empty = [
        name
        for name, outcome in result.tests.items()
        if outcome == "passed"
        and name.startswith("/")
        and any(name.endswith(f"/{file}") for file in files if file)
    ]
    for name in empty:
        del result.tests[name]
    return len(empty)


def _node_is_tap(lines: list[str]) -> bool:
    """Whether the log is TAP: the kind of its last summary line, else a `TAP version` line."""
    for line in reversed(lines):
        if _NODE_SUMMARY_RE.fullmatch(line):
            return line.startswith("#")
    return "TAP version 13" in lines


def _node_summary(line: str, summary: dict[str, int]) -> None:
    match = _NODE_SUMMARY_RE.fullmatch(line)
    if match is not None:
        summary[match[1]] = int(match[2])


def _read_tap(lines: list[str], state: _NodeState) -> None:
    yaml_end: str | None = None
    for line in lines:
        if yaml_end is not None:
            yaml_end = None if line == yaml_end else yaml_end
            continue
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        if text == "---" and indent:
            yaml_end = line[:indent] + "..."
        elif text.startswith("# Subtest: "):
            state.nest.open(indent, _tap_unescape(text[len("# Subtest: ") :]))
        elif (match := _TAP_RE.fullmatch(text)) is not None:
            name, _, directive = (match[2] or "").partition(" # ")
            skipped = directive[:4].upper() in ("SKIP", "TODO")
            outcome: Outcome = "skipped" if skipped else "failed" if match[1] else "passed"
            state.record(indent, _tap_unescape(name), outcome, directive)
        elif indent == 0:
            _node_summary(line, state.summary)


def _tap_unescape(text: str) -> str:
    return _TAP_ESCAPE_RE.sub(lambda match: _TAP_ESCAPES.get(match[1], match[1]), text)


def _read_spec(lines: list[str], state: _NodeState) -> None:
    recap = False
    for line in lines:
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        if line == "✖ failing tests:":
            recap = True  # the reporter repeats each failure, without its suite
        elif text.startswith("▶ ") and not recap:
            state.nest.open(indent, _spec_name(text[2:])[0])
        elif text[:1] in _SPEC_MARKS and text[1:2] == " " and not recap:
            name, directive = _spec_name(text[2:])
            outcome = _SPEC_MARKS[text[0]]
            if directive[:4].upper() in ("SKIP", "TODO"):
                outcome = "skipped"
            state.record(indent, name, outcome, directive)
        elif indent == 0:
            _node_summary(line, state.summary)


def _spec_name(text: str) -> tuple[str, str]:
    """`name (1.2ms) # directive` as (name, directive)."""
    match = _SPEC_RE.fullmatch(text)
    return (text, "") if match is None else (match[1], match[2] or "")


# --- bun test -------------------------------------------------------------------------------------

_BUN_MARKS = _table("(pass) ✓", "(fail) ✗", "(skip) (todo) » ✎")
_BUN_DURATION_RE = re.compile(r"(.*) \[\d++(?:\.\d++)?(?:ns|µs|us|ms|s)\]")
_BUN_COUNT_RE = re.compile(r" *+(\d{1,9}) (pass|fail|skip|todo|error)s?")
_BUN_NO_FILES = "No tests found!"
_BUN_FILTER_MISS = "The following filters did not match any test files"


def _parse_bun(run: _Run) -> _Result:
    result = _Result(zero="0 pass")
    summary: dict[str, int] = {}
    for line in run.lines:
        found = _bun_test(line)
        if found is not None:
            result.record(*found)
        elif (match := _BUN_COUNT_RE.fullmatch(line)) is not None:
            summary[match[2]] = int(match[1])
        elif line.startswith(_BUN_FILTER_MISS) or (
            line.startswith("error: regex ") and " matched 0 tests" in line
        ):
            result.selector_miss = True
        elif line.startswith(_BUN_NO_FILES):
            result.no_tests = "bun test ran no test (no test files)"
    if summary:
        passed, failed = summary.get("pass", 0), summary.get("fail", 0) + summary.get("error", 0)
        result.counts = (passed, failed, summary.get("skip", 0) + summary.get("todo", 0))
    elif result.selector_miss and result.no_tests is None:
        result.no_tests = NO_MATCH
    return result


def _bun_test(line: str) -> tuple[str, Outcome] | None:
    mark, _, rest = line.partition(" ")
    outcome = _BUN_MARKS.get(mark)
    if outcome is None or not rest:
        return None
    match = _BUN_DURATION_RE.fullmatch(rest)
    return (rest if match is None else match[1]), outcome


# --- go test --------------------------------------------------------------------------------------

_GO_RESULTS = _table("PASS", "FAIL", "SKIP")


@dataclass(slots=True)
class _GoPackages:
    ran: int = 0
    no_tests_to_run: int = 0
    no_test_files: int = 0
    no_packages: bool = False


def _parse_go(run: _Run) -> _Result:
    result = _Result()
    packages = _GoPackages()
    for line in run.lines:
        found = _go_test(line)
        if found is not None:
            result.record(*found)
        else:
            _go_package(line, packages)
    if not result.tests and not packages.ran:
        if packages.no_tests_to_run:
            result.no_tests = NO_MATCH
        elif packages.no_test_files:
            result.no_tests = "go test ran no test (no test files)"
        elif packages.no_packages:
            result.no_tests = "go test ran no test (matched no packages)"
    return result


def _go_test(line: str) -> tuple[str, Outcome] | None:
    """`--- PASS: TestX/sub (0.00s)`, indented for a subtest."""
    text = line.lstrip()
    if not text.startswith("--- "):
        return None
    word, _, rest = text[4:].partition(": ")
    outcome, name = _GO_RESULTS.get(word), rest.partition(" ")[0]
    return None if outcome is None or not name else (name, outcome)


def _go_package(line: str, packages: _GoPackages) -> None:
    if line.startswith("ok") and line[2:3] in (" ", "\t") and "\t" in line:
        if line.endswith("[no tests to run]"):
            packages.no_tests_to_run += 1
        else:
            packages.ran += 1
    elif line.startswith(("FAIL\t", "FAIL ")):
        packages.ran += 1  # a failing package: a build failure or failing tests, not "no test"
    elif line.startswith("?") and line.endswith("[no test files]"):
        packages.no_test_files += 1
    elif line == "testing: warning: no tests to run":
        packages.no_tests_to_run += 1
    elif line.startswith("go: warning: ") and line.endswith("matched no packages"):
        packages.no_packages = True


# --- cargo test -----------------------------------------------------------------------------------

_CARGO_TEST_RE = re.compile(r"test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?")
_CARGO_OUTCOMES = _table("ok", "FAILED", "ignored")
_CARGO_RESULT_RE = re.compile(
    r"test result: (?:ok|FAILED)\. (\d{1,9}) passed; (\d{1,9}) failed; (\d{1,9}) ignored; "
    r"\d{1,9} measured; (\d{1,9}) filtered out"
)
_CARGO_TERSE_FAILED = " --- FAILED"
# A test path (`tests::it_works`) or a doc test (`src/lib.rs - add (line 3)`).
_CARGO_NAME_RE = re.compile(r"[^\s]++(?: - .+ \(line \d++\))?")


def _parse_cargo(run: _Run) -> _Result:
    result = _Result(zero="running 0 tests")
    totals = [0, 0, 0, 0]  # passed, failed, ignored, filtered out
    seen = in_failures = False
    for line in run.lines:
        if line.startswith("test result: "):
            in_failures = False
            match = _CARGO_RESULT_RE.match(line)
            if match is not None:
                seen = True
                for at in range(4):
                    totals[at] += int(match[at + 1])
        elif line == "failures:":
            in_failures = True  # captured output and the list of failures, up to the result
        elif not in_failures:
            found = _cargo_test(line)
            if found is not None:
                result.record(*found)
    if seen:
        result.counts = (totals[0], totals[1], totals[2])
        result.selector_miss = totals[3] > 0 and not any(result.counts)
    return result


def _cargo_test(line: str) -> tuple[str, Outcome] | None:
    match = _CARGO_TEST_RE.fullmatch(line)
    if match is not None:
        return match[1], _CARGO_OUTCOMES[match[2]]
    name = line.removesuffix(_CARGO_TERSE_FAILED)
    if name != line and _CARGO_NAME_RE.fullmatch(name):
        return name, "failed"
    return None


# --- putting it together --------------------------------------------------------------------------

_Parser = Callable[[_Run], _Result]
_PARSERS: dict[str, _Parser] = {
    "pytest": _parse_pytest,
    "node": _parse_node,
    "bun": _parse_bun,
    "go": _parse_go,
    "cargo": _parse_cargo,
}


def parse_outcomes(command: str, output: str, exit_code: int) -> Outcomes:
    """Read per-test outcomes, counts and the "ran no test" reason from a test command's log.

    `output` is the command's stdout and stderr together; `exit_code` is its exit status.
    """
    runner = detect_runner(command)
    if runner is None:
        return Outcomes(None, (), 0, 0, 0, None, exit_code)
    lines = [line.rstrip() for line in _ANSI_RE.sub("", output).splitlines()]
    words = [word for argv in _commands(command) for word in argv]
    return _finish(runner, _PARSERS[runner](_Run(lines, words, exit_code)), exit_code)


def _finish(runner: str, result: _Result, exit_code: int) -> Outcomes:
    counts = result.counts
    if counts is None and result.tests:
        tally = [0, 0, 0]
        for outcome in result.tests.values():
            tally[_INDEX[outcome]] += 1
        counts = (tally[0], tally[1], tally[2])
    no_tests = result.no_tests or _zero_reason(runner, counts, result)
    passed, failed, skipped = counts or (0, 0, 0)
    tests = tuple(result.tests.items())
    return Outcomes(runner, tests, passed, failed, skipped, no_tests, exit_code)


def _zero_reason(runner: str, counts: tuple[int, int, int] | None, result: _Result) -> str | None:
    """Why counts with no passed and no failed test mean "ran no test"; None otherwise."""
    if counts is None or counts[0] or counts[1]:
        return None
    if result.selector_miss:
        return NO_MATCH
    evidence = f"{counts[2]} skipped" if counts[2] else result.zero
    return f"{_LABELS[runner]} ran no test ({evidence})"
