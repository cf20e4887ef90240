"""pytest's reporter as the verifier runs it: its report on a descriptor no test can name or
reopen, the runner's machinery checked, and the runner's own summary line compared with it.

Real pytest runs (Debian's, and this environment's own when it is another version) as an
unprivileged user, with the report opened by root on `REPORT_DESCRIPTOR` as `tests/test.sh`
opens it; the report is then judged by the verifier's jq program and its summary program.
"""

from __future__ import annotations

import hmac
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_evidence import judge

from selfbench.runners import pytest as pytest_runner
from selfbench.runners._protocol import KEY_DESCRIPTOR, REPORT_DESCRIPTOR

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.fresh_setup,  # every setup really runs
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("runuser") is None or shutil.which("jq") is None,
        reason="the tests run as another user (root and runuser; CI runs as root) and need jq",
    ),
]

_USER = "nobody"
_DEBIAN = ("/usr/bin/python3", _USER)
_PYTHONS = tuple(dict.fromkeys((_DEBIAN, (sys.executable, "root"))))
"""Debian's pytest 7 as an unprivileged user, and this environment's (pytest 9) as root, whose
Python the unprivileged user may not reach (the report then belongs to that user): the reporter
runs on both."""

_CALC = "def mul(a, b):\n    return a * b\n"
_SPIES = '''\
import os

from calc import mul

REPORT_DIRECTORY = @DIRECTORY@


def _everything_visible():
    """This process's first environment and every command line it can read."""
    seen = [open("/proc/self/environ", "rb").read(), repr(dict(os.environ)).encode()]
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                seen.append(handle.read())
        except OSError:
            pass
    return b"\\n".join(seen)


def test_mul():
    assert mul(2, 3) == 6


def test_no_argument_or_environment_names_the_report():
    assert REPORT_DIRECTORY.encode() not in _everything_visible()


def test_the_inherited_descriptor_is_closed_and_no_descriptor_reopens_the_report():
    try:
        inherited = os.readlink("/proc/self/fd/@DESCRIPTOR@")
    except OSError:
        inherited = ""
    assert not inherited.startswith(REPORT_DIRECTORY)
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed since
            continue
        if target.startswith(REPORT_DIRECTORY):
            try:
                open(f"/proc/self/fd/{fd}", "a").close()
            except PermissionError:
                continue
            raise AssertionError(f"descriptor {fd} reopens the report")
        found.append(fd)
    assert found, "the reporter holds the report on no descriptor"
'''
_REPLACES_RUNTEST = (
    "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n\n" + _CALC
)
_REPLACES_TESTCASE_RUN = (
    "import unittest\n\nunittest.TestCase.run = lambda self, result=None: None\n\n" + _CALC
)
_UNITTEST = (
    "import unittest\n\nfrom calc import mul\n\n\n"
    "class MulTest(unittest.TestCase):\n"
    "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 7)\n"
)


_MUL_TEST = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def _read(report: Path) -> list[dict[str, Any]]:
    """The report's records as the verifier reads them (`SIGNED_RECORDS`, the key beside it)."""
    shown = subprocess.run(
        ["python3", "-I", "-c", pytest_runner.SIGNED_RECORDS, str(report),
         str(report.parent / "key")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [json.loads(line) for line in shown.splitlines()]


class _Run:
    """One pytest run as the verifier makes it: its records, its output and its report file."""

    def __init__(self, report: Path, output: str, status: int) -> None:
        self.report = report
        self.output = output
        self.status = status
        self.records = _read(report)
        assert all("mac" in record for record in self.records), self.records


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A directory the unprivileged user can reach (the test's own tmp_path is root's alone)."""
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        root.chmod(0o755)
        yield root


def _run(root: Path, python: tuple[str, str], tests: dict[str, str], *options: str) -> _Run:
    project, tools, reports = root / "project", root / "tools", root / "reports"
    for name, text in {"calc/__init__.py": _CALC, **tests}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(
            text.replace("@DIRECTORY@", repr(str(reports))).replace(
                "@DESCRIPTOR@", str(REPORT_DESCRIPTOR)
            ),
            encoding="utf-8",
        )
    user = pwd.getpwnam(_USER)
    for path in [project, *project.rglob("*")]:
        os.chown(path, user.pw_uid, user.pw_gid)
    tools.mkdir(mode=0o755)
    (tools / f"{pytest_runner.REPORTER_MODULE}.py").write_text(
        pytest_runner.REPORTER, encoding="utf-8"
    )
    reports.mkdir(mode=0o700)
    report, key = reports / "report.jsonl", reports / "key"
    report.touch(mode=0o200)
    key.write_text(os.urandom(32).hex(), encoding="utf-8")
    key.chmod(0o400)
    if python[1] == "root":  # the report and key are another user's, as the verifier's are
        for path in (report, key):
            os.chown(path, user.pw_uid, user.pw_gid)
    command = [
        "runuser", "-u", python[1], "--", "env", f"PYTHONPATH={tools}",
        f"PYTEST_ADDOPTS=-p {pytest_runner.REPORTER_MODULE}", python[0], "-m", "pytest",
        "-p", "no:cacheprovider", *options, "tests",
    ]  # fmt: skip
    # As tests/test.sh hands them over: bash opens the report and the key on their descriptors
    # and is replaced by the command, so no argument names them.
    opens = (
        f'report="$1" key="$2"; shift 2; '
        f'exec "$@" {REPORT_DESCRIPTOR}>>"$report" {KEY_DESCRIPTOR}<"$key"'
    )
    done = subprocess.run(
        ["bash", "-c", opens, "bash", str(report), str(key), *command],
        cwd=project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, check=False,
    )  # fmt: skip
    return _Run(report, done.stdout, done.returncode)


def _disagreement(report: Path, output: str) -> str:
    """What the verifier's summary program prints for a report and the runner's output."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".log") as handle:
        handle.write(output)
        handle.flush()
        return subprocess.run(
            ["python3", "-I", "-c", pytest_runner.SUMMARY_AGREES, str(report), handle.name],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip


_WANTED = [{"path": "/x/tests/test_spies.py", "file": "tests/test_spies.py", "name": ""}]


def test_the_report_arrives_on_a_descriptor_that_nothing_names_and_no_test_reopens(
    workspace: Path,
) -> None:
    run = _run(workspace, _DEBIAN, {"tests/test_spies.py": _SPIES}, "-q")
    assert run.status == 0, run.output
    passed = [r["nodeid"] for r in run.records if r.get("when") == "call"]
    assert passed == [
        "tests/test_spies.py::test_mul",
        "tests/test_spies.py::test_no_argument_or_environment_names_the_report",
        "tests/test_spies.py::test_the_inherited_descriptor_is_closed_and_no_descriptor_reopens_the_report",
    ]
    assert judge("pytest", run.records, _WANTED) == ""
    assert _disagreement(run.report, run.output) == ""


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_a_runtest_replaced_at_import_fails_every_test_with_the_reason(
    workspace: Path, python: tuple[str, str]
) -> None:
    tests = {
        "calc/__init__.py": _REPLACES_RUNTEST,
        "tests/test_mul.py": _UNITTEST.replace("7", "6"),
    }
    tests["tests/test_core.py"] = (
        "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 7\n"
    )
    run = _run(workspace, python, tests, "-q")
    assert "2 passed" in run.output  # pytest itself sees nothing wrong
    problem = judge("pytest", run.records, _WANTED)
    assert problem.startswith("a test failed: tests/")
    assert problem.endswith(": the runner's machinery was changed: Function.runtest")
    assert run.records[-2]["reason"] == "the runner's machinery was changed: Function.runtest"


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_a_testcase_run_replaced_at_import_fails_the_unittest_tests(
    workspace: Path, python: tuple[str, str]
) -> None:
    tests = {"calc/__init__.py": _REPLACES_TESTCASE_RUN, "tests/test_mul.py": _UNITTEST}
    run = _run(workspace, python, tests, "-q")
    assert "1 passed" in run.output
    assert judge("pytest", run.records, _WANTED) == (
        "a test failed: tests/test_mul.py::MulTest::test_mul: "
        "the runner's machinery was changed: TestCase.run"
    )


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_the_summary_line_is_compared_with_the_report(
    workspace: Path, python: tuple[str, str]
) -> None:
    tests = {"tests/test_mul.py": _MUL_TEST}
    run = _run(workspace, python, tests, "-q")
    assert _disagreement(run.report, run.output) == ""
    assert _disagreement(run.report, "") == "the runner printed no summary line"
    # A forger who has read the key out of the reporter's memory signs its record; pytest's own
    # summary line still disagrees.
    forged: dict[str, Any] = {
        "event": "test", "nodeid": "tests/test_x.py::t", "when": "call", "outcome": "passed",
        "run": run.records[-1]["run"], "seq": run.records[-1]["seq"] + 1,
    }  # fmt: skip
    body = json.dumps(forged, sort_keys=True, separators=(",", ":")).encode()
    key = (run.report.parent / "key").read_bytes()
    forged["mac"] = hmac.new(key, body, "sha256").hexdigest()
    with run.report.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(forged) + "\n")
    assert _read(run.report)[-1] == forged
    assert _disagreement(run.report, run.output) == (
        "the runner's summary line (1 passed, 0 failed) disagrees with its report "
        "(2 passed, 0 failed)"
    )


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_no_summary_line_is_asked_of_a_run_that_prints_none(
    workspace: Path, python: tuple[str, str]
) -> None:
    tests = {"tests/test_mul.py": _MUL_TEST}
    run = _run(workspace, python, tests, "-qq")
    assert " passed" not in run.output
    assert run.records[0]["summary"] is False
    assert _disagreement(run.report, run.output) == ""


def test_a_record_the_reporter_did_not_sign_or_a_removed_one_ends_the_report(
    workspace: Path,
) -> None:
    run = _run(workspace, _DEBIAN, {"tests/test_mul.py": _MUL_TEST}, "-q")
    lines = run.report.read_text(encoding="utf-8").splitlines()
    forged = {"event": "test", "nodeid": "tests/test_x.py::t", "when": "call", "outcome": "passed"}
    run.report.write_text("\n".join([*lines, json.dumps(forged)]) + "\n", encoding="utf-8")
    last = _read(run.report)[-1]
    assert last["event"] == "forged"
    assert judge("pytest", _read(run.report), _WANTED) == (
        f"a test failed: the report holds a record its reporter did not write "
        f"(line {len(lines) + 1})"
    )
    run.report.write_text("\n".join([lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    assert _read(run.report)[1]["reason"].endswith("(line 2)")


# A runner's own project tests the runner in its own process: pytest's and pluggy's suites patch
# its machinery for one test, or run a whole session inside a test.
_PATCHES_FOR_ITSELF = """\
import _pytest.runner

_from_call = _pytest.runner.CallInfo.from_call.__func__


def test_patches_the_machinery_for_itself(monkeypatch):
    seen = []

    def counted(cls, *args, **kwargs):
        seen.append(1)
        return _from_call(cls, *args, **kwargs)

    monkeypatch.setattr(_pytest.runner.CallInfo, "from_call", classmethod(counted))
    monkeypatch.setattr(_pytest.runner, "call_and_report", _pytest.runner.call_and_report)
"""
_RUNS_SESSIONS = """\
import pytest


def test_runs_a_session_of_its_own(tmp_path):
    (tmp_path / "test_inner.py").write_text("def test_inner():\\n    assert 0\\n")
    assert pytest.main([str(tmp_path), "-p", "no:cacheprovider"]) == 1


def test_runs_a_pytester_session(pytester):
    pytester.makepyfile("def test_a():\\n    pass\\n\\n\\ndef test_b():\\n    assert 0\\n")
    pytester.inline_run().assertoutcome(passed=1, failed=1)
"""
_SELF_WANTED = [{"path": "/x/tests/test_self.py", "file": "tests/test_self.py", "name": ""}]


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
@pytest.mark.parametrize("suite", [_PATCHES_FOR_ITSELF, _RUNS_SESSIONS], ids=["patch", "session"])
def test_a_runners_own_suite_is_judged_by_its_tests(
    workspace: Path, python: tuple[str, str], suite: str
) -> None:
    run = _run(workspace, python, {"tests/test_self.py": suite}, "-q", "-p", "pytester")
    assert run.status == 0, run.output
    assert judge("pytest", run.records, _SELF_WANTED) == ""
    assert _disagreement(run.report, run.output) == ""
    assert [r["event"] for r in run.records].count("start") == 1
    assert not any("inner" in r.get("nodeid", "") for r in run.records)


_LEAVES_A_PATCH = """\
import _pytest.runner

_call_and_report = _pytest.runner.call_and_report


def test_patches_and_leaves_it():
    _pytest.runner.call_and_report = lambda *args, **kwargs: _call_and_report(*args, **kwargs)


def test_after():
    pass
"""


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_a_change_a_test_does_not_undo_fails_it_and_the_tests_after(
    workspace: Path, python: tuple[str, str]
) -> None:
    run = _run(workspace, python, {"tests/test_self.py": _LEAVES_A_PATCH}, "-q")
    failed = {(r["nodeid"], r["when"]) for r in run.records if r.get("outcome") == "failed"}
    assert failed == {
        ("tests/test_self.py::test_patches_and_leaves_it", "teardown"),
        ("tests/test_self.py::test_after", "setup"),
        ("tests/test_self.py::test_after", "call"),
        ("tests/test_self.py::test_after", "teardown"),
        ("", "finish"),
    }
    assert judge("pytest", run.records, _SELF_WANTED).endswith(
        "the runner's machinery was changed: call_and_report"
    )


# Replaced at import, the report's maker forges the call's report and puts the original back
# before that report is logged: the test began with the machinery changed.
_FORGES_AND_HIDES = (
    """\
import _pytest.reports

_original = _pytest.reports.TestReport.__dict__["from_item_and_call"]


def _forged(cls, item, call):
    report = _original.__func__(cls, item, call)
    if call.when == "call":
        report.outcome, report.longrepr = "passed", None
        _pytest.reports.TestReport.from_item_and_call = _original
    return report


_pytest.reports.TestReport.from_item_and_call = classmethod(_forged)

"""
    + _CALC
)


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_a_replacement_that_removes_itself_after_forging_is_seen_as_the_test_began(
    workspace: Path, python: tuple[str, str]
) -> None:
    tests = {
        "calc/__init__.py": _FORGES_AND_HIDES,
        "tests/test_core.py": _MUL_TEST.replace("6", "7"),
    }
    run = _run(workspace, python, tests, "-q")
    assert "1 passed" in run.output  # pytest itself sees nothing wrong
    assert judge("pytest", run.records, _WANTED) == (
        "a test failed: tests/test_core.py::test_mul: "
        "the runner's machinery was changed: TestReport.from_item_and_call"
    )


_NEVER_FINISHES = """\
import importlib

from calc import mul


def test_starts_a_session_that_never_finishes():
    importlib.import_module("_selfbench_" + "evidence").pytest_sessionstart(object())


def test_mul():
    assert mul(2, 3) == 6
"""


@pytest.mark.parametrize("python", _PYTHONS, ids=[user for _, user in _PYTHONS])
def test_a_session_started_inside_a_test_that_never_finishes_fails_the_run(
    workspace: Path, python: tuple[str, str]
) -> None:
    run = _run(workspace, python, {"tests/test_self.py": _NEVER_FINISHES}, "-q")
    assert not any(r.get("nodeid") == "tests/test_self.py::test_mul" for r in run.records)
    assert judge("pytest", run.records, _SELF_WANTED) == (
        "a test failed: a session started inside a test did not finish"
    )
