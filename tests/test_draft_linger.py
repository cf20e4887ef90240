"""A file's run that printed its runner's final summary and does not exit is stopped.

python-dotenv #586 (reading `.env` from a FIFO): at the base, the new test's writer thread stays
blocked opening the FIFO, so pytest prints `1 failed` and the interpreter never exits; the
draft's first run of that file held its whole limit (900 s) and the candidate ran out of time.
`provisional_command` now stops such a run `linger` seconds after the summary (`_linger.WATCH`).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfbench.draft._linger import LINGER_SECONDS
from selfbench.draft.coverage import coverage_command
from selfbench.draft.run import Plan, _file_runs, provisional_command
from selfbench.runners import V8_COVERAGE, Runner, runner_named


def by_name(name: str) -> Runner:
    runner = runner_named(name)
    assert runner is not None, name
    return runner


PYTEST_LINE = by_name("pytest").finished_line
JEST_LINE = by_name("jest").finished_line


def _run(command: str, files: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        ["bash", "-c", command.replace("{tests}", files)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream, as the verifier's log has it
        text=True,
        check=False,
        timeout=120,
        cwd=cwd,
    )
    return result, time.monotonic() - started


def _matches(pattern: str, line: str) -> bool:
    """Whether `grep -E` (the watch's matcher) matches the line."""
    grep = ["grep", "-Eq", "--", pattern]
    found = subprocess.run(grep, input=line + "\n", text=True, check=False)
    return found.returncode == 0


@pytest.mark.parametrize(
    ("pattern", "line", "final"),
    [
        (PYTEST_LINE, "============================== 1 failed in 4.73s ===============", True),
        (PYTEST_LINE, "1 failed, 2 passed in 0.12s", True),
        (PYTEST_LINE, "===== 2 failed, 3 passed, 1 warning in 61.20s (0:01:01) =====", True),
        (PYTEST_LINE, "==== 1 passed, 4 deselected in 0.50s ====", True),
        (PYTEST_LINE, "=== no tests ran in 0.01s ===", True),
        (PYTEST_LINE, "=== 1 error in 0.10s ===", True),
        (PYTEST_LINE, "=== 3 passed in 0.05 seconds ===", True),  # pytest before 5
        (PYTEST_LINE, "=== 1 failed, 1 rerun in 1.00s ===", True),  # pytest-rerunfailures
        (PYTEST_LINE, "tests/test_a.py::test_x PASSED", False),
        (PYTEST_LINE, "=================== short test summary info ===================", False),
        (PYTEST_LINE, "FAILED tests/test_a.py::test_x - assert 1 passed in 2s", False),
        (PYTEST_LINE, "collected 3 items", False),
        (PYTEST_LINE, "1 passed", False),
        (PYTEST_LINE, "=== 1 passed, 3 subtests passed in 0.20s ===", True),  # pytest-subtests
        (PYTEST_LINE, "all checks passed in 2s", False),  # a test's own line, under -s
        (PYTEST_LINE, "download failed in 3.5s", False),
        (PYTEST_LINE, "=== 1 failed,2 passed in 0.1s ===", False),
        (JEST_LINE, "Ran all test suites matching /test_a.test.js/i.", True),
        (JEST_LINE, "Jest did not exit one second after the test run has completed.", True),
        (
            JEST_LINE,
            (
                "asynchronous operations that weren't stopped in your tests. Consider running "
                "Jest with `--detectOpenHandles` to troubleshoot this issue."
            ),
            True,
        ),
        (JEST_LINE, "Tests:       1 failed, 1 total", False),
    ],
)
def test_a_runner_s_final_line_is_told_from_its_other_lines(
    pattern: str, line: str, final: bool
) -> None:
    assert _matches(pattern, line) is final


def test_runners_that_end_on_their_own_name_no_final_line() -> None:
    """go's and cargo's test binaries exit after their tests; node's runner prints its summary
    only once every file's process ended, so a lingering file never reaches it."""
    assert [name for name in ("go", "cargo", "node") if by_name(name).finished_line] == []


SUMMARY = "printf '%s\\n' '=== 1 failed in 0.01s ==='"


def test_a_run_that_lingers_after_its_summary_is_stopped(tmp_path: Path) -> None:
    command = provisional_command(
        f"{SUMMARY}; sleep {{tests}}", 1, 1, limits=[100], finished=PYTEST_LINE, linger=1
    )
    result, seconds = _run(command, "90", tmp_path)
    assert seconds < 15
    assert "=== 1 failed in 0.01s ===" in result.stdout
    assert "did not exit within 1 s: stopped" in result.stdout
    assert "selfbench-draft: end 0 1 143 " in result.stdout
    assert result.returncode == 1


def test_a_run_that_goes_on_after_a_summary_like_line_is_not_stopped(tmp_path: Path) -> None:
    """A line like the summary that more output follows (an inner session's, a test's print)
    arms nothing: only a last line that stays the last for `linger` seconds does."""
    inner = f"{SUMMARY}; sleep 0.3; echo 'still running'; sleep {{tests}}; echo done"
    # the summary-like line is the last for 0.3 s: a linger of 3 s leaves a loaded machine room
    command = provisional_command(inner, 1, 1, limits=[100], finished=PYTEST_LINE, linger=3)
    result, _ = _run(command, "3", tmp_path)
    assert "stopped" not in result.stdout
    assert "still running\ndone\n" in result.stdout
    assert "selfbench-draft: end 0 1 0 " in result.stdout


def test_the_watch_leaves_a_run_s_output_and_status_as_they_were(tmp_path: Path) -> None:
    """Output on both streams, in order, and a failing status: the same bytes with the watch
    as without it (only printed once the run ended)."""
    inner = "echo out; echo err >&2; echo out2; printf 'no newline'; exit {tests}"
    plain = provisional_command(inner, 1, 1, limits=[100])
    watched = provisional_command(inner, 1, 1, limits=[100], finished=PYTEST_LINE)
    without, _ = _run(plain, "3", tmp_path)
    with_watch, _ = _run(watched, "3", tmp_path)

    def body(output: str) -> list[str]:
        return [line for line in output.splitlines() if not line.startswith("selfbench-draft:")]

    assert body(with_watch.stdout) == body(without.stdout)
    assert "out\nerr\nout2\nno newline" in with_watch.stdout
    assert "selfbench-draft: end 0 1 3 " in with_watch.stdout
    assert with_watch.returncode == without.returncode == 1


def test_the_watch_needs_a_limit_and_a_final_line() -> None:
    assert "selfbench_watch" not in provisional_command("t {tests}", 1, 1, finished=PYTEST_LINE)
    assert "selfbench_watch" not in provisional_command("t {tests}", 1, 1, limits=[9])


def test_a_real_pytest_run_whose_thread_keeps_the_interpreter_alive(tmp_path: Path) -> None:
    """The case as python-dotenv #586 has it at the base: a test fails, its thread stays blocked
    opening a FIFO nobody reads, and the interpreter waits for it at exit. The run is stopped
    after the summary, and its outcome is read from its output as any failed run's."""
    (tmp_path / "test_fifo.py").write_text(
        "import os, threading\n\n\n"
        "def test_reads_the_fifo(tmp_path):\n"
        "    fifo = tmp_path / 'env'\n"
        "    os.mkfifo(fifo)\n"
        "    threading.Thread(target=lambda: open(fifo, 'w').close()).start()\n"
        "    assert False, 'the FIFO was never read'\n"
    )
    test_command = f"{sys.executable} -m pytest -rA -p no:cacheprovider {{tests}}"
    command = provisional_command(test_command, 1, 1, limits=[100], finished=PYTEST_LINE, linger=2)
    result, seconds = _run(command, "test_fifo.py", tmp_path)
    assert seconds < 60
    assert "FAILED test_fifo.py::test_reads_the_fifo" in result.stdout
    assert "did not exit within 2 s: stopped" in result.stdout
    assert "selfbench-draft: end 0 1 143 " in result.stdout

    # read as the draft reads it: at the base, the file's run failed and its test with it;
    # with the gold, a run the watch stopped is no run (the verifier, without one, would hang)
    plan = Plan("0" * 40, ".", "true", test_command, (), ("test_fifo.py",))
    runs = _file_runs(plan, result.stdout)
    assert not isinstance(runs, str), runs
    [[base]] = runs
    assert base.exit_code == 143
    assert dict(base.outcomes.tests) == {"test_fifo.py::test_reads_the_fifo": "failed"}
    assert _file_runs(plan, result.stdout, gold=True) == (
        f"test_fifo.py printed its summary and did not exit within {LINGER_SECONDS} s with the "
        "gold patch (a thread or handle its tests leave keeps it running)"
    )


def test_the_coverage_run_stops_a_lingering_file_too(tmp_path: Path) -> None:
    """The coverage run is at the base too (the test patch, no gold): each file's run has the
    per-command limit and the watch, and the next file still runs."""
    data = tmp_path / "data"
    data.mkdir()
    inner = f"{SUMMARY}; sleep {{tests}}"
    command = coverage_command(
        inner, 2, V8_COVERAGE, limit=100, finished=PYTEST_LINE, linger=1
    ).replace("/run/selfbench-coverage", str(data))
    result, seconds = _run(command, "90 0", tmp_path)
    assert seconds < 20
    assert result.stdout.count("=== 1 failed in 0.01s ===") == 2
    assert result.stdout.count("did not exit within 1 s: stopped") == 1
    assert result.returncode == 1


def test_a_coverage_run_without_a_limit_is_as_it_was() -> None:
    command = coverage_command("t {tests}", 1, V8_COVERAGE, finished=PYTEST_LINE)
    assert "timeout" not in command
    assert "selfbench_watch" not in command


def test_the_watch_adds_nothing_of_its_own_to_a_run_s_output(tmp_path: Path) -> None:
    """A run whose output holds a NUL byte (grep calls it binary) and a temporary directory
    that cannot be written: the watch's own tools print nothing into the file's output, and
    the summary after the NUL byte still stops a lingering run."""
    inner = f"printf 'a\\000b\\n'; {SUMMARY}; sleep {{tests}}"
    command = provisional_command(inner, 1, 1, limits=[100], finished=PYTEST_LINE, linger=1)
    result, seconds = _run(command, "90", tmp_path)
    assert seconds < 15
    assert "grep" not in result.stdout
    assert "a\0b\n=== 1 failed in 0.01s ===\n" in result.stdout
    assert "selfbench-draft: end 0 1 143 " in result.stdout
    unwritable = provisional_command(
        "echo ran {tests}", 1, 1, limits=[100], finished=PYTEST_LINE, linger=1
    )
    result, _ = _run(f"export TMPDIR={tmp_path}/missing; {unwritable}", "x", tmp_path)
    assert "mktemp" not in result.stdout
    assert "ran x\n" in result.stdout
    assert "selfbench-draft: end 0 1 0 " in result.stdout


def test_what_a_stopped_run_prints_as_it_ends_follows_the_watch_s_line(tmp_path: Path) -> None:
    """A run that says something when it is stopped (a handler of SIGTERM) writes after the
    watch's line, not over it."""
    inner = f"{SUMMARY}; trap 'echo stopping now; exit 3' TERM; sleep {{tests}} & wait"
    command = provisional_command(inner, 1, 1, limits=[100], finished=PYTEST_LINE, linger=1)
    result, seconds = _run(command, "90", tmp_path)
    assert seconds < 15
    stopped = "\nselfbench: the run printed its summary and did not exit within 1 s: stopped\n"
    assert f"=== 1 failed in 0.01s ===\n{stopped}stopping now\n" in result.stdout
    assert "selfbench-draft: end 0 1 3 " in result.stdout
