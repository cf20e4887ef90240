"""pytest: its command, and its log's `-v`, xdist and short-summary lines, final summary and
progress lines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from selfbench.runners._index import PYTEST
from selfbench.runners._log import INDEX, Outcome, Result, Run, table
from selfbench.runners._protocol import (
    KEY_DESCRIPTOR,
    REPORT_DESCRIPTOR,
    CanaryParts,
    CoverageParts,
    Part,
    PythonProject,
    Runner,
    VerifierParts,
    readonly,
)

__all__ = [
    "REPORTER",
    "REPORTER_MODULE",
    "RUNNER",
    "SIGNED_RECORDS",
    "SUMMARY_AGREES",
    "is_node_id",
    "parse_pytest",
]


_PYTEST_STATUS = table("PASSED XPASS", "FAILED ERROR", "SKIPPED XFAIL")
_RUN_SECTIONS = ("", "test session starts")  # before any header (`-q`), or the session's own
_SHORT_SECTION = "short test summary info"
_SUBTEST = "SUB"  # pytest 9's subtests: SUBPASSED, SUBFAILED, SUBSKIPPED
_CLOSE = {"(": ")", "[": "]"}
_XDIST_RE = re.compile(r"\[gw\d{1,6}\] \[ {0,2}\d{1,3}%\] ")
_PROGRESS_RE = re.compile(r"(?:[^ ]++ )?([.FEsxX]++) *+\[ *+\d{1,9}(?:%|/ *+\d{1,9})\]")
_PROGRESS_OUTCOMES = table(". X", "F E", "s x")
_DURATION_RE = re.compile(r"\d{1,12}(?:\.\d{1,12})?s(?:econds)?(?: \(\d{1,9}:\d\d:\d\d\))?")
_ITEM_RE = re.compile(r"(\d{1,9}) ([a-z]++(?: [a-z]++)*+)")
_PYTEST_WORDS = table("passed xpassed", "failed error errors", "skipped xfailed")


def parse_pytest(run: Run) -> Result:
    result = Result(zero="exit 5" if run.exit_code == 5 else "no tests ran")
    summary: dict[str, int] | None = None
    progress = [0, 0, 0]
    section = ""
    for line in run.lines:
        if line.startswith("=") and line.endswith("="):
            section = line.strip("=").strip()  # FAILURES, PASSES hold captured output: not read
        result.selector_miss |= line.startswith("ERROR: not found: ")  # a node id, no test
        found = _pytest_test(line, section)
        if found is not None:
            result.record(*found)
        parsed = _pytest_summary(line) if " in " in line else None
        if parsed is not None:
            summary = parsed  # the last summary is pytest's own; earlier ones are test output
        elif section in _RUN_SECTIONS and (match := _PROGRESS_RE.fullmatch(line)) is not None:
            for char in match[1]:
                progress[INDEX[_PROGRESS_OUTCOMES[char]]] += 1
    if summary is not None:
        result.counts = _pytest_counts(summary)
        deselected = summary.get("deselected", 0) > 0 or result.selector_miss
        result.selector_miss = deselected and not any(result.counts)
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
    """`FAILED tests/a.py::test_x - message` (short summary, `-rA`); a subtest's line,
    `SUBFAILED(i=1) tests/a.py::test_x - message`, is its test's."""
    if line.startswith(_SUBTEST):
        return _pytest_subtest(line)
    word, _, rest = line.partition(" ")
    outcome = _PYTEST_STATUS.get(word)
    if outcome is None or not rest or rest[0] in " [":
        return None
    nodeid = rest.partition(" - ")[0]
    if "::" not in nodeid and not nodeid.endswith(".py"):
        return None
    return nodeid, outcome


def _pytest_subtest(line: str) -> tuple[str, Outcome] | None:
    """pytest 9's `SUBFAILED(i=1, j=2) tests/a.py::test_x - message` (or `[...]` after the word):
    the subtest's outcome, recorded on its test, so one failed subtest fails the test."""
    word = line[len(_SUBTEST) :]
    for status in _PYTEST_STATUS:
        if word.startswith(status):
            rest = _skip_brackets(word[len(status) :])
            return None if rest is None else _pytest_short(f"{status} {rest}")
    return None


def _skip_brackets(text: str) -> str | None:
    """`text` after one leading bracketed group (`(i=1) rest` or `[p] rest`) and its space."""
    if text[:1] not in _CLOSE:
        return text[1:] if text[:1] == " " else None
    depth, close, opening, quote = 0, _CLOSE[text[0]], text[0], ""
    for at, char in enumerate(text):
        if quote:  # a bracket inside a quoted parameter value (`j='a) b'`) does not count
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            depth += (char == opening) - (char == close)
            if depth == 0:
                return text[at + 2 :] if text[at + 1 : at + 2] == " " else None
    return None


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
            counts[INDEX[_PYTEST_WORDS[word]]] += number
    return counts[0], counts[1], counts[2]


# A node id or path: `dir/test_x.py`, `dir/`, `dir/test_x.py::Class::test_y[params]`.
_PATH_RE = re.compile(r"[^\s:\[\]]+(?:\.py|/)")
_NAME_RE = re.compile(r"[^\s:\[\]]+")


def is_node_id(selector: str) -> bool:
    """Whether a selector is a pytest path or node id (`path.py::Class::test[params]`)."""
    head, bracket, params = selector.partition("[")
    path, *names = head.split("::")
    if bracket and (not names or not params.endswith("]")):
        return False
    return _PATH_RE.fullmatch(path) is not None and all(_NAME_RE.fullmatch(name) for name in names)


PACKAGE = "pytest"
"""The distribution a draft installs to run pytest (or unittest's tests, through it)."""
PACKAGE_MAJORS = (
    (7, "2022-02-03T00:00:00Z"),
    (8, "2024-01-27T00:00:00Z"),
    (9, "2025-11-08T17:25:33Z"),
)
"""pytest's major releases and the dates they were published (pytest 7.0.0, 8.0.0, 9.0.0)."""
PYTHON_ARGUMENTS = "-m pytest -rA {tests}"
"""What a draft's test command passes the project's Python to run pytest."""
_ENTRY_POINTS = "load_setuptools_entrypoints"
"""The call in pytest's start-up that imports each installed package's `pytest11` plugin."""
_FRAME_RE = re.compile(r'File "[^"\n]*/site-packages/([A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*)\.py"')
_PYTEST_OWN = ("_pytest", "pytest", "pluggy", "importlib_metadata")
_EXCEPTION_RE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception)\b", re.MULTILINE)
_TRACEBACK = 65536
"""The most of a log read after the entry-point call for its traceback."""
_MOST_PLUGINS = 8
"""At most this many failed plugins are read from one log."""
BUILTIN_PLUGINS = frozenset(
    {"mark", "main", "runner", "fixtures", "helpconfig", "python", "terminal", "debugging",
     "unittest", "capture", "skipping", "legacypath", "tmpdir", "monkeypatch", "recwarn",
     "pastebin", "assertion", "junitxml", "doctest", "cacheprovider", "freeze_support",
     "setuponly", "setupplan", "stepwise", "warnings", "logging", "reports", "python_path",
     "unraisableexception", "threadexception", "faulthandler", "pytester",
     "pytester_assertions", "nose", "tmp_path", "compat", "pytest", "_pytest", "pluggy"}
)  # fmt: skip
"""pytest's own plugins (its `default_plugins` across releases) and packages: a failed
plugin's name never blocks one of them (a `pytest_warnings` package is not pytest's
`warnings`)."""


def failed_plugins(log: str) -> tuple[str, ...]:
    """The names to block (`-p no:NAME`) each plugin that pytest failed to import from an
    installed package's entry point as it started: a package of today beside an older pytest
    (anyio 4's plugin imports `_pytest.scope`, which pytest 6 lacks, when a project's old
    development extra pulls anyio in unpinned). pytest blocks an entry point by its own name,
    which the log does not show: the plugin's module (`anyio.pytest_plugin`), its package
    (`anyio`), and the package without a `pytest_` prefix (`pytest_asyncio` is `asyncio`) stand
    for it; a name no plugin has blocks nothing."""
    names: dict[str, None] = {}
    start = 0
    for _ in range(_MOST_PLUGINS):  # each traceback read once, a few at most
        found = log.find(_ENTRY_POINTS, start)
        if found < 0:
            break
        tail = log[found : found + _TRACEBACK]
        end = _EXCEPTION_RE.search(tail)
        start = found + (end.end() if end is not None else len(tail))
        frames = _FRAME_RE.findall(tail[: end.start()] if end is not None else tail)
        plugin = next((f for f in frames if f.split("/", 1)[0] not in _PYTEST_OWN), None)
        if plugin is None:
            continue
        module = plugin.removesuffix("/__init__").replace("/", ".")
        package = module.split(".", 1)[0]
        for name in (module, package, package.removeprefix("pytest_")):
            if name not in BUILTIN_PLUGINS:
                names[name] = None
    return tuple(names)


def without_plugins(command: str, names: Sequence[str]) -> str | None:
    """`command` with `-p no:NAME` for each of `names` right after each `-m pytest` the draft
    wrote; None when the command does not run pytest that way."""
    prefix = PYTHON_ARGUMENTS.split(" -", 2)[0] + " "  # `-m pytest `
    if prefix not in command:
        return None
    blocked = "".join(f"-p no:{name} " for name in names)
    return command.replace(prefix, prefix + blocked)


PACKAGE_FLOOR = "2021-11-13T00:00:00Z"
"""The earliest date the pytest a draft adds beside `uv sync` resolves as of: pytest 6.2.5 with
py 1.11.0 (published 2021-11-12) is the first pair that runs on every image Python (with py 1.10,
`AttributeError: __spec__` on 3.12)."""
PACKAGE_TOO_OLD = (((6, 2, 5), (3, 10)),)
"""pytest before 6.2.5 does not run on 3.10 or newer (its assertion rewriting fails, `TypeError:
required field "lineno" missing from alias`, pytest-dev/pytest#8539; 6.2.5's changelog adds
Python 3.10)."""

# The verifier's evidence for pytest (`Runner`'s `report_*` and `verifier_*` parts, text that
# `bundle/evidence.py` puts together into `tests/test.sh`).
REPORTER_MODULE = "_selfbench_evidence"
"""The module name of the verifier's pytest reporter (a runner-control name: no patch may
shadow it)."""

COVERAGE_MODULE = "_selfbench_coverage"
"""The pytest plugin a draft's coverage run loads (`-p`)."""
_COVERAGE_PLUGIN = """\
\"\"\"Which pytest test executes which line of the measured files: a set of lines per node id,
written as JSON. Loaded by selfbench draft; a failure is written to the data directory, never
raised. It runs on the project's own Python, whatever its version, and imports nothing but the
standard library: on 3.12 and later through `sys.monitoring` (line events for the measured
files' code only, each line once per test, then disabled until the next test), before through
`sys.settrace` (a trace function only in the measured files' frames).\"\"\"

import json
import os
import sys
import threading

import pytest

_DATA = os.environ.get("SELFBENCH_COVERAGE_DATA", ".")
_monitoring = getattr(sys, "monitoring", None)
_files = frozenset()
_by_test = {}
_current = None
_tool = None


def _failed(error):
    try:
        with open(os.path.join(_DATA, "error.txt"), "a") as handle:
            handle.write(f"{type(error).__name__}: {error}\\n")
    except OSError:
        pass


def _line(code, line):
    if _current is not None:
        _current.setdefault(code.co_filename, set()).add(line)
    return _monitoring.DISABLE


def _started(code, offset):
    if code.co_filename in _files:
        _monitoring.set_local_events(_tool, code, _monitoring.events.LINE)
    return _monitoring.DISABLE


def _local(frame, event, arg):
    if event == "line" and _current is not None:
        _current.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
    return _local


def _global(frame, event, arg):
    return _local if frame.f_code.co_filename in _files else None


def _start():
    global _tool
    if _monitoring is None:
        threading.settrace(_global)
        sys.settrace(_global)
        return
    for tool in (3, 4, _monitoring.COVERAGE_ID, _monitoring.PROFILER_ID):
        try:
            _monitoring.use_tool_id(tool, "selfbench")
        except ValueError:
            continue
        _tool = tool
        break
    else:
        raise RuntimeError("every sys.monitoring tool id is taken")
    _monitoring.register_callback(_tool, _monitoring.events.LINE, _line)
    _monitoring.register_callback(_tool, _monitoring.events.PY_START, _started)
    _monitoring.set_events(_tool, _monitoring.events.PY_START)


def _stop():
    if _monitoring is None:
        sys.settrace(None)
        threading.settrace(None)
    elif _tool is not None:
        _monitoring.set_events(_tool, 0)
        _monitoring.free_tool_id(_tool)


def pytest_configure(config):
    global _files
    try:
        with open(os.environ["SELFBENCH_COVERAGE_INCLUDE"]) as handle:
            _files = frozenset(json.load(handle))
        _start()
    except Exception as error:
        _files = frozenset()
        _failed(error)


def _name(item):
    # the id the run's report prints: relative to the working directory, not to pytest's
    # rootdir (they differ where the configuration sits above the workdir); computed here,
    # since Config.cwd_relative_nodeid takes a str before pytest 9.2 and a NodeId from it
    try:
        config = item.config
        root = str(getattr(config, "rootpath", None) or config.rootdir)
        here = str(config.invocation_params.dir)
        if os.path.realpath(root) == os.path.realpath(here):
            return item.nodeid
        path, separator, rest = item.nodeid.partition("::")
        if not path:
            return item.nodeid
        relative = os.path.relpath(os.path.join(root, path), here).replace(os.sep, "/")
        return relative + separator + rest
    except Exception:
        return item.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _current
    _current = _by_test.setdefault(_name(item), {})
    if _tool is not None:
        _monitoring.restart_events()
    yield
    _current = None


def pytest_unconfigure(config):
    try:
        _stop()
        found = {
            test: {name: sorted(lines) for name, lines in files.items()}
            for test, files in _by_test.items()
            if files
        }
        path = os.path.join(_DATA, f"lines-{os.getpid()}.json")
        with open(path, "w") as handle:
            json.dump(found, handle)
    except Exception as error:
        _failed(error)
"""
COVERAGE = CoverageParts(
    tool="lines",
    environment=(
        'export PYTHONPATH="$selfbench_coverage_lib${PYTHONPATH:+:$PYTHONPATH}" '
        f'PYTEST_ADDOPTS="${{PYTEST_ADDOPTS:+$PYTEST_ADDOPTS }}-p {COVERAGE_MODULE}"; '
    ),
    plugin_module=COVERAGE_MODULE,
    plugin=_COVERAGE_PLUGIN,
)
"""Python's own line events through a plugin of selfbench's (see `selfbench.draft.coverage`),
on the project's Python: no coverage.py in the sandbox, no pure-Python tracer of every call."""

REPORTER = r'''import fcntl
import hmac
import importlib
import json
import os
import stat
import sys

import pytest

_DESCRIPTOR = @DESCRIPTOR@
_KEY_DESCRIPTOR = @KEY@
_dumps = json.dumps
_os_write = os.write
_sign = hmac.new


def _channel():
    """The report, taken from the descriptor root opened for it (a write-only, appending file
    of another user's) onto a descriptor the tests' processes do not inherit; -1 elsewhere."""
    try:
        info = os.fstat(_DESCRIPTOR)
        flags = fcntl.fcntl(_DESCRIPTOR, fcntl.F_GETFL)
    except OSError:
        return -1
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_uid == os.geteuid()
        or flags & (os.O_ACCMODE | os.O_APPEND) != os.O_WRONLY | os.O_APPEND
    ):
        return -1
    report = os.dup(_DESCRIPTOR)
    os.close(_DESCRIPTOR)
    return report


def _key():
    """The key root handed over read-only (a file of another user's), its descriptor closed;
    b"" elsewhere."""
    try:
        info = os.fstat(_KEY_DESCRIPTOR)
        flags = fcntl.fcntl(_KEY_DESCRIPTOR, fcntl.F_GETFL)
    except OSError:
        return b""
    if (
        not stat.S_ISREG(info.st_mode)
        or info.st_uid == os.geteuid()
        or flags & os.O_ACCMODE != os.O_RDONLY
    ):
        return b""
    try:
        return os.pread(_KEY_DESCRIPTOR, 64, 0)
    finally:
        os.close(_KEY_DESCRIPTOR)


# Loaded by -p before any conftest or project module: the descriptors move out of sight first.
_KEY = _key()
_REPORT = _channel()
_RUN = os.urandom(8).hex()
_SEQUENCE = [0]


def _write(record):
    if _REPORT < 0:
        return
    if _KEY:  # each record signed, numbered within this process's run
        record = {**record, "run": _RUN, "seq": _SEQUENCE[0]}
        _SEQUENCE[0] += 1
        body = _dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")
        record["mac"] = _sign(_KEY, body, "sha256").hexdigest()
    data = (_dumps(record) + "\n").encode("utf-8")
    try:
        while data:
            data = data[_os_write(_REPORT, data):]
    except OSError:
        pass


_MACHINERY = (
    ("_pytest.python", "Function.runtest"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.unittest", "TestCaseFunction.runtest"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "call_runtest_hook"),
    ("_pytest.runner", "pytest_runtest_call"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.reports", "TestReport.__init__"),
    ("_pytest.main", "pytest_runtestloop"),
    ("unittest.case", "TestCase.run"),
    ("unittest.case", "TestCase.__call__"),
    ("pluggy._callers", "_multicall"),
    ("pluggy._hooks", "_HookCaller.__call__"),
    ("pluggy._hooks", "HookCaller.__call__"),
    ("pluggy._caller", "HookCaller.__call__"),
    ("pluggy._manager", "PluginManager._hookexec"),
)
_OWN = (
    "pytest_sessionstart",
    "pytest_collectreport",
    "pytest_runtest_setup",
    "pytest_runtest_logreport",
    "pytest_sessionfinish",
    "_write",
    "_changed",
    "_reason",
    "_state",
    "_sign",
    "_dumps",
    "_os_write",
)


def _code(value):
    value = getattr(value, "__func__", value)
    return getattr(value, "__code__", None)


def _state(module, path):
    """Each object on `path` from `module` and the code of the last, or None if absent."""
    found = [module]
    for name in path.split("."):
        value = vars(found[-1]).get(name) if hasattr(found[-1], "__dict__") else None
        if value is None:
            return None
        found.append(value)
    return (*found, _code(found[-1]))


def _recorded():
    recorded = {}
    for module_name, path in _MACHINERY:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        state = _state(module, path)
        if state is not None:
            recorded[path] = (module, state)
    own = sys.modules[__name__]
    for name in _OWN:
        recorded[name] = (own, _state(own, name))
    return recorded


_RECORDED = {}


def _changed():
    """The names of the recorded callables that are no longer the ones the runner loaded."""
    changed = []
    for path, (module, state) in _RECORDED.items():
        now = _state(module, path)
        if now is None or len(now) != len(state) or any(a is not b for a, b in zip(now, state)):
            changed.append(path)
    return changed


def _reason():
    changed = _changed()
    return "the runner's machinery was changed: " + ", ".join(changed) if changed else ""


# The session the reporter was loaded for; a session a test starts in this process (its own
# `pytest.main`, which reads the same PYTEST_ADDOPTS) is counted, and none of its events is
# recorded: its tests are the test's subject, not the verdict's.
_SESSION = []
_NESTED = [0]
# The test whose setup began last, and the reason its machinery was already changed then.
_STARTED = ["", ""]


def pytest_sessionstart(session):
    if _SESSION:
        _NESTED[0] += 1
        return
    _SESSION.append(session)
    config = session.config
    terminal = config.pluginmanager.get_plugin("terminalreporter") is not None
    summary = terminal and getattr(config.option, "verbose", 0) >= -1
    _write({"event": "start", "rootdir": str(config.rootpath), "summary": summary})


def pytest_collectreport(report):
    if report.failed and not _NESTED[0]:
        _write({"event": "collect-error", "nodeid": report.nodeid})


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before any fixture of the test is set up: what changed outside the test itself."""
    if not _NESTED[0]:
        _STARTED[:] = [item.nodeid, _reason()]


def pytest_runtest_logreport(report):
    if _NESTED[0]:
        return
    record = {"event": "test", "nodeid": report.nodeid, "when": report.when,
              "outcome": report.outcome}
    if type(report).__name__ != "TestReport":
        record["kind"] = type(report).__name__
    # A test may change the machinery for itself (its monkeypatch fixture) if its teardown
    # undoes it: its setup and call are judged by the machinery as the test began, its
    # teardown by the machinery as it is.
    ours = report.when != "teardown" and report.nodeid == _STARTED[0]
    reason = _STARTED[1] if ours else _reason()
    if reason:
        record.update(outcome="failed", reason=reason)
    _write(record)


def pytest_sessionfinish(session, exitstatus):
    if not _SESSION or session is not _SESSION[0]:
        _NESTED[0] = max(_NESTED[0] - 1, 0)
        return
    reason = _reason()
    if _NESTED[0]:  # the records after its start were not written
        reason = reason or "a session started inside a test did not finish"
    if reason:
        _write({"event": "test", "nodeid": "", "when": "finish", "outcome": "failed",
                "reason": reason})
    _write({"event": "finish", "exitstatus": int(exitstatus)})


_RECORDED.update(_recorded())  # after the hooks: the reporter's own functions are all defined
'''.replace("@DESCRIPTOR@", str(REPORT_DESCRIPTOR)).replace("@KEY@", str(KEY_DESCRIPTOR))
"""The reporter: one JSON line per event on the descriptor the verifier opened, each signed with
the key handed over on another (`SIGNED_RECORDS` checks them), each test failed with the reason
when a callable the verdict rests on (`_MACHINERY`, its own hooks) is no longer the one loaded:
as the test's setup begins (for its setup and call reports) and as its teardown report is logged,
so a change the test makes for itself and its teardown undoes (its monkeypatch fixture) does not
count. Only the session it was loaded for is recorded: one a test runs in the same process
(`pytest.main`, as pytest's and pluggy's own suites do) is not."""

_SAME_PYTEST_TABLE = r"""
import configparser
import sys
import tomllib


def pytest_part(path, kind):
    try:
        if kind == "pyproject.toml":
            with open(path, "rb") as handle:
                tool = tomllib.load(handle).get("tool", {})
            return tool.get("pytest") if isinstance(tool, dict) else "unreadable"
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        with open(path, encoding="utf-8") as handle:
            parser.read_file(handle)
        section = "tool:pytest" if kind == "setup.cfg" else "pytest"
        return dict(parser[section]) if parser.has_section(section) else None
    except (OSError, UnicodeDecodeError, ValueError, configparser.Error):
        return "unreadable"


kind = sys.argv[3].rsplit("/", 1)[-1]
sys.exit(0 if pytest_part(sys.argv[1], kind) == pytest_part(sys.argv[2], kind) else 1)
"""

_SHADOWING_MODULES = r"""
import sys

names = (set(sys.stdlib_module_names) - {"test"}) | {
    "pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "_selfbench_evidence",
}
workdir = sys.argv[1].strip("/")
bases = [""] if workdir in ("", ".") else ["", workdir + "/"]


def paths(data):
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


with open(sys.argv[2], "rb") as handle:
    tracked = set()
    for path in paths(handle.read()):
        parts = path.split("/")
        tracked.update("/".join(parts[: at + 1]) for at in range(len(parts)))
for path in paths(sys.stdin.buffer.read()):
    for base in bases:
        rest = path[len(base):] if path.startswith(base) else ""
        first, _, inner = rest.partition("/")
        stem = first if inner else first.split(".")[0]
        new = base + first not in tracked
        if new and stem in names and (inner or first.endswith((".py", ".pyc", ".so", ".pth"))):
            sys.stdout.buffer.write(path.encode("utf-8", "surrogateescape") + b"\0")
            break
"""

SUMMARY_AGREES = r'''import json
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
DURATION = re.compile(r"\d{1,12}(?:\.\d{1,12})?s(?:econds)?(?: \(\d{1,9}:\d\d:\d\d\))?")
ITEM = re.compile(r"(\d{1,9}) ([a-z]+(?: [a-z]+)*)")
PASSED = ("passed", "xpassed")
FAILED = ("failed", "error", "errors")


def summary(line):
    """(passed, failed) on pytest's final line, `=== 1 failed, 3 passed in 0.12s ===`."""
    head, sep, tail = line.strip().strip("=").strip().rpartition(" in ")
    if not sep or DURATION.fullmatch(tail) is None:
        return None
    if head == "no tests ran":
        return 0, 0
    counts = [0, 0]
    for item in head.split(", "):
        match = ITEM.fullmatch(item)
        if match is None:
            return None
        if match[2] in PASSED or match[2] in FAILED:
            counts[match[2] in FAILED] += int(match[1])
    return counts[0], counts[1]


def records(path):
    found = []
    with open(path, "rb") as handle:
        for line in handle.read(67108864).splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found.append(record)
    return found


report = records(sys.argv[1])
starts = [at for at, record in enumerate(report) if record.get("event") == "start"]
if starts:
    session = report[starts[-1]:]  # the last session's, as the last summary line is
    passed = sum(
        1
        for record in session
        if record.get("event") == "test" and record.get("when") == "call"
        and record.get("outcome") == "passed" and "kind" not in record
    )
    failed = sum(
        1
        for record in session
        if record.get("event") == "collect-error"
        or (record.get("event") == "test" and record.get("outcome") == "failed")
    )
    said = None
    with open(sys.argv[2], "rb") as handle:
        for line in handle.read(67108864).decode("utf-8", "replace").splitlines():
            said = summary(ANSI.sub("", line)) or said
    if said is None and report[starts[0]].get("summary") is not False:
        print("the runner printed no summary line")
    elif said is not None and said != (passed, failed):
        print(
            f"the runner's summary line ({said[0]} passed, {said[1]} failed) disagrees with "
            f"its report ({passed} passed, {failed} failed)"
        )
'''
"""Prints where pytest's own final summary line, in the output root captured, disagrees with
the report's last session (tests passed; tests failed or errors), or that the line is missing
where the report's first `start` says pytest prints one; nothing when they agree."""

SIGNED_RECORDS = r"""import hmac
import json
import sys

with open(sys.argv[2], "rb") as handle:
    key = handle.read(64)
following = {}
with open(sys.argv[1], "rb") as handle:
    for number, line in enumerate(handle.read(67108864).splitlines(), 1):
        try:
            record = json.loads(line)
            mac = record.pop("mac")
            run, seq = record["run"], record["seq"]
            body = json.dumps(record, sort_keys=True, separators=(",", ":")).encode("utf-8")
            signed = hmac.compare_digest(mac, hmac.new(key, body, "sha256").hexdigest())
        except (ValueError, TypeError, KeyError, AttributeError):
            signed = False
        if not signed or seq != following.get(run, 0):
            reason = f"the report holds a record its reporter did not write (line {number})"
            print(json.dumps({"event": "forged", "reason": reason}))
            break
        following[run] = seq + 1
        sys.stdout.write(line.decode("utf-8", "replace") + "\n")
"""
"""Prints the report's records (`$1`) up to the first one not signed with the key (`$2`), or out
of its run's order (a record removed), and then a `forged` record saying which line."""

_PASSED = r"""
    map(select(.event == "test" and .when == "call" and .outcome == "passed")
      | {file: ($root + "/" + (.nodeid | split("::")[0])),
         name: (.nodeid | split("::")[1:] | join("::"))})"""
_FAILED = r"""
    map(select((.event == "test" and .outcome == "failed" and (.nodeid | canary | not))
        or .event == "collect-error" or .event == "forged")
      | [.nodeid, .reason] | map(select(. != null and . != "")) | join(": "))"""
_TESTS = r"""
    map(select(.event == "test")
      | {name: .nodeid,
         outcome: (if .outcome == "failed" then "failed"
                   elif .outcome == "passed" and .when == "call" then "passed"
                   else "other" end)})"""
# A report that ends in a record its reporter did not write is judged by that record (`failed`
# names it), not as unfinished.
_FINISHED = r"""
    any(.[]; (.event == "finish"
              and (.exitstatus == 0 or (.exitstatus == 1 and ($canaries | length) > 0)))
             or .event == "forged")"""
# With canaries planted, pytest ends as when tests failed (1): whether only the canaries did is
# the judgement's (`failed` leaves them out).
CANARY = CanaryParts(
    text=(
        "\n\n\ndef test_@SELFBENCH_CANARY_A@():\n"
        '    assert "@SELFBENCH_VALUE_A@" == "@SELFBENCH_VALUE_B@"\n'
        "\n\ndef test_@SELFBENCH_CANARY_B@():\n"
        "    import unittest\n\n"
        '    unittest.TestCase().assertEqual("@SELFBENCH_VALUE_A@", "@SELFBENCH_VALUE_B@")\n'
    ),
    suffixes=(".py",),
    selector=lambda file, name, selectors: None if file in selectors else f"{file}::test_{name}",
    names="test_{}",
    programs=("pytest", "py.test"),
    arguments=("--maxfail=0",),
    refused_options=(
        "-x",
        "--exitfirst",
        "--maxfail",
        "--sw",
        "--stepwise",
        "-k",
        "-m",
        "--lf",
        "--last-failed",
        "--deselect",
    ),
)
"""pytest's canaries (unittest's too, as its tests run through pytest): a plain `assert`, and
`unittest`'s `assertEqual`; selected by node id unless the file itself is a selector."""

_PROGRAMS = (
    readonly("same_pytest_table", _SAME_PYTEST_TABLE)
    + readonly("shadowing_modules", _SHADOWING_MODULES, expands=False)
    + readonly("pytest_summary_agrees", SUMMARY_AGREES)
    + readonly("pytest_signed_records", SIGNED_RECORDS, expands=False)
)

_TOOLS = (
    f"  cat >\"$evidence_tools/{REPORTER_MODULE}.py\" <<'PYTEST_REPORTER'\n"
    + REPORTER
    + "PYTEST_REPORTER\n"
)

_ENV = (
    '\n    open_report_channel "$1" root signed'
    '\n    evidence_env=("PYTHONPATH=$evidence_tools" "PYTEST_ADDOPTS=-p '
    + REPORTER_MODULE
    + '")\n    ;;\n'
)

_READER = """
    python3 -I -c "$pytest_signed_records" "$1" "${1%/*}/key" 2>/dev/null
    ;;
"""

_CROSS_CHECK = """
    python3 -I -c "$pytest_summary_agrees" "$1" "$2" 2>/dev/null ||
      echo "its summary line could not be read"
    ;;
"""

_RESTORE = """
    restore_pytest_configuration "$changed"
    restore_shadowing_modules "$changed"
    ;;
"""

_RESTORE_CONFIGURATION = r"""
# An agent may change pyproject.toml, setup.cfg and tox.ini, but not pytest's part of them.
restore_pytest_configuration() {
  local path base
  base="$(mktemp /tmp/selfbench-base.XXXXXX)" || return 1
  while IFS= read -r -d '' path; do
    case "${path##*/}" in
    @FILES@) ;;
    *) continue ;;
    esac
    app_git --literal-pathspecs show "HEAD:$path" >"$base" 2>/dev/null || : >"$base"
    if [ -L "$app/$path" ] ||
      ! python3 -I -c "$same_pytest_table" "$base" "$app/$path" "$path" 2>/dev/null; then
      restore_file "$path" "pytest's configuration"
    fi
  done <"$1"
  rm -f -- "$base"
}
""".replace("@FILES@", "|".join(PYTEST.shared_configuration_files))

_RESTORE_SHADOWING_MODULES = r"""
# A module the agent adds at the top of the repository or the workdir, named like one of the
# standard library or of pytest, would be imported instead of it (the working directory comes
# first on `sys.path`): it is removed. Modules the base already has are left alone.
restore_shadowing_modules() {
  local path tracked
  tracked="$(mktemp /tmp/selfbench-tracked.XXXXXX)" || return 1
  app_git ls-files -z >"$tracked"
  while IFS= read -r -d '' path; do
    log "the agent patch shadows a module of Python or pytest: $path; removed"
    rm -rf -- "${app:?}/$path"
  done < <(python3 -I -c "$shadowing_modules" "${workdir#"$app"}" "$tracked" <"$1" 2>/dev/null)
  rm -f -- "$tracked"
}
"""


FINISHED_LINE: Final = (
    r"^(=+ )?(no tests ran|[0-9]+ [a-z]+( [a-z]+)*(, [0-9]+ [a-z]+( [a-z]+)*)*)"
    r" in [0-9]+(\.[0-9]+)?(s| seconds)( \([0-9:]+\))?( =+)?$"
)
"""pytest's final summary line, in `-q` form too ("1 failed, 2 passed in 0.12s"), as an
extended regular expression (`Runner.finished_line`): "no tests ran", or counts each before its
words (a plugin's too: "3 subtests passed"), so a test's own line ("all passed in 2s", under
`-s`) is not taken for it."""

RUNNER = Runner(
    entry=PYTEST,
    label="pytest",
    parse=parse_pytest,
    selector=lambda test_name: test_name,  # the node id itself
    accepts_selector=is_node_id,
    runs_named_tests=True,
    finished_line=FINISHED_LINE,
    names_carry_file=False,
    python=PythonProject(
        package=PACKAGE,
        package_floor=PACKAGE_FLOOR,
        package_too_old=PACKAGE_TOO_OLD,
        package_majors=PACKAGE_MAJORS,
        python_arguments=PYTHON_ARGUMENTS,
        tool_table="pytest",
        mentions=(("pytest.ini", ""), ("setup.cfg", "[tool:pytest]"), ("tox.ini", "[pytest]")),
        marker_files=("conftest.py",),
        failed_plugins=failed_plugins,
        without_plugins=without_plugins,
    ),
    test_globals=("pytest",),
    evidence=True,
    selects_files=True,
    package_projects=("pytest", "pluggy"),
    reporter_module=REPORTER_MODULE,
    tamper_names=(
        "_pytest",
        "pluggy",
        "TerminalReporter",
        "pytest.TestReport",
        "CallInfo",
        "runtest",
        "pytest_runtest_",
        "hookwrapper",
        "pytest_report_teststatus",
        "pytest_terminal_summary",
        "pytest_sessionfinish",
    ),
    coverage=COVERAGE,
    canary=CANARY,
    verifier=VerifierParts(
        report_passed=Part(0, _PASSED),
        report_failed=Part(0, _FAILED),
        report_finished=Part(0, _FINISHED),
        report_tests=Part(0, _TESTS),
        verifier_programs=_PROGRAMS,
        verifier_tools=Part(0, _TOOLS),
        verifier_env=Part(0, _ENV),
        verifier_reader=Part(0, _READER),
        verifier_cross_check=Part(0, _CROSS_CHECK),
        verifier_restore=Part(0, _RESTORE),
        verifier_functions=(
            ("restore_file", _RESTORE_CONFIGURATION),
            ("agent_changed_paths", _RESTORE_SHADOWING_MODULES),
        ),
    ),
)
