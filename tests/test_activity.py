"""A long stage is never silent: `selfbench.activity`'s stages, steps and heartbeat, and a real
`selfbench run` (not at a terminal) that says where each candidate stands at least every
heartbeat."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from run_history import generate
from selfbench import _children, activity

FILES = ("tests/test_a.py", "tests/test_b.py")


@pytest.mark.parametrize(
    ("argument", "shown"),
    [
        ("tests/test_b.py", "tests/test_b.py"),
        ("/app/tests/test_a.py", "tests/test_a.py"),
        ("tests/test_c.py", "log phase.log"),  # not the stage's: the log, no guess
    ],
    ids=["as given", "an absolute path", "another file"],
)
def test_a_line_names_the_test_file_a_process_of_the_running_phase_names(
    tmp_path: Path, argument: str, shown: str
) -> None:
    """The phase's own process (a shell) runs the test command, whose arguments name the file
    (as the sandbox's bwrap, its shell and the runner's process are)."""
    sleeper = f"{sys.executable} -c 'import time; time.sleep(30)' {argument}"
    shell = subprocess.Popen(["sh", "-c", f"{sleeper}; true"], start_new_session=True)
    try:
        with activity.doing("pr-3 (easy)", "drafting") as entry:
            activity.step("test run 2 of 5")
            activity.files(FILES)
            with activity.phase(tmp_path / "phase.log"):
                activity.process(shell.pid)
                deadline = time.monotonic() + 10
                line = activity.describe(entry, now=entry.started + 65)
                while not line.endswith(shown) and time.monotonic() < deadline:
                    time.sleep(0.05)  # until the shell has started its child
                    line = activity.describe(entry, now=entry.started + 65)
            after = activity.describe(entry, now=entry.started + 65)
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()

    assert line == f"pr-3 (easy): drafting for 1 min 05 s; test run 2 of 5; {shown}"
    assert after == "pr-3 (easy): drafting for 1 min 05 s; test run 2 of 5"


def test_a_stage_past_its_deadline_has_every_running_phase_killed() -> None:
    """Two phases of one stage at once (quality's variants run in parallel): past the stage's
    deadline the heartbeat kills both groups, and a phase started after is killed at once."""
    deadline = time.monotonic() + 1.0
    sleepers = [subprocess.Popen(["sleep", "60"], start_new_session=True) for _ in range(3)]
    try:
        with (
            activity.heartbeat(lambda _line: None, every=60.0),
            activity.doing("pr-7 (hard)", "quality check", deadline=deadline) as entry,
        ):

            def run_phase(process: subprocess.Popen[bytes]) -> int:
                with _children.tracked(process.pid), activity.phase(Path("variant.log")):
                    activity.process(process.pid)
                    return process.wait(timeout=30)

            with ThreadPoolExecutor(max_workers=2) as pool:
                codes = list(pool.map(activity.carried(run_phase), sleepers[:2]))
            assert entry.expired
            assert run_phase(sleepers[2]) == -signal.SIGKILL  # started after: at once
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    assert codes == [-signal.SIGKILL, -signal.SIGKILL]
    assert entry.pids == set()


def test_a_stage_inside_a_stage_is_the_outer_one_and_ends_with_it() -> None:
    with activity.doing("pr-1 (hard)", "validating", key="pr-1") as outer:
        with activity.doing("pr-1", "validating") as inner:
            assert inner is outer
            assert activity.running() == [outer]
        assert activity.running() == [outer]
    assert activity.running() == []


def test_a_pool_s_steps_reach_the_stage_that_started_it() -> None:
    with activity.doing("pr-2 (medium)", "quality check") as entry:

        def work(index: int) -> None:
            activity.step(f"quality run {index} of 3")

        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(activity.carried(work), [1]))
            list(pool.map(work, [2]))  # not carried: no stage in that thread
    assert entry.step == "quality run 1 of 3"


def test_the_heartbeat_writes_each_quiet_stage_and_stops_with_its_block() -> None:
    lines: list[str] = []
    told: list[str] = []
    with (
        activity.heartbeat(lines.append, every=0.2, on_line=lambda e, _: told.append(e.key)),
        activity.doing("pr-4 (easy)", "drafting", key="pr-4"),
    ):
        activity.step("setting up")
        time.sleep(1.5)
    count = len(lines)
    time.sleep(0.5)

    assert count >= 2
    assert len(lines) == count  # nothing after the block
    assert all(re.fullmatch(r"pr-4 \(easy\): drafting for \d+ s; setting up", x) for x in lines)
    assert told == ["pr-4"] * count


def test_no_quiet_stage_waits_longer_than_the_interval_for_its_line() -> None:
    """The heartbeat wakes each second: a stage whose line would be due between two wakes gets
    it at the earlier one, so no gap (from the stage's start, or between its lines) exceeds
    `every` by more than the scheduler's slack (gaps of 16 and 18 s were seen with 15 before)."""
    said: list[float] = []
    with activity.heartbeat(lambda _line: said.append(time.monotonic()), every=2.0):
        time.sleep(0.5)  # the stage starts between two wakes
        with activity.doing("pr-5 (easy)", "drafting", key="pr-5"):
            started = time.monotonic()
            time.sleep(6.6)
    gaps = [later - earlier for earlier, later in itertools.pairwise([started, *said])]

    assert len(said) >= 3
    assert max(gaps) <= 2.0 + 0.3, gaps


@pytest.mark.parametrize(
    ("value", "every"), [("", 15.0), ("2.5", 2.5), ("0", 15.0), ("nan", 15.0), ("soon", 15.0)]
)
def test_the_heartbeat_s_interval_is_the_variable_s_when_it_is_a_positive_number(
    monkeypatch: pytest.MonkeyPatch, value: str, every: float
) -> None:
    monkeypatch.setenv("SELFBENCH_HEARTBEAT_SECONDS", value)
    assert activity.heartbeat_seconds() == every


_BEAT = 0.5
_LONGEST_SILENCE = 15.0


@pytest.mark.sandbox
def test_a_run_not_at_a_terminal_is_never_silent_and_status_reads_its_lines(
    tmp_path: Path,
) -> None:
    """A real `selfbench run` with its output piped (a log, CI): every candidate's stage says
    where it stands each heartbeat (here 0.5 s), naming the test file a run is in, so no gap
    between lines reaches 15 s, and the run's events hold the same lines for `status`."""
    history = generate(tmp_path, 1)
    run_dir, out = tmp_path / "bench.run", tmp_path / "bench.tar.gz"
    argv = [sys.executable, "-m", "selfbench", "run", "--repo", str(history), "--easy", "1"]
    argv += ["--over-fetch", "1", "--source-url", "https://example.com/example/genkit"]
    argv += ["--out", str(out), "--run-dir", str(run_dir)]
    env = {**os.environ, "SELFBENCH_HEARTBEAT_SECONDS": str(_BEAT), "COLUMNS": "200"}
    stamped: list[tuple[float, str]] = []
    started = time.monotonic()
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as process:
        reader = threading.Thread(
            target=lambda: stamped.extend((time.monotonic(), x) for x in process.stdout or ())
        )
        reader.start()
        process.wait(timeout=600)
        reader.join()
    output = "".join(line for _, line in stamped)

    assert process.returncode == 0, output
    beats = [line for _, line in stamped if re.match(r"pr-1 \(easy\): \w[\w ]* for \d+", line)]
    assert any("drafting for" in line for line in beats), output
    assert any("test run" in line or "setting up" in line for line in beats), output
    assert any(re.search(r"; tests/test_\w+\.py$", line) for line in beats), output
    moments = [started, *(moment for moment, _ in stamped)]
    silences = [later - earlier for earlier, later in itertools.pairwise(moments)]
    assert max(silences) < _LONGEST_SILENCE, output
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    recorded = [event["line"] for event in events if event["event"] == "doing"]
    assert [line.rstrip("\n") for line in beats] == recorded
