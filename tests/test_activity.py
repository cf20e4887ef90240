"""A long stage is never silent: `selfbench.activity`'s stages, steps and heartbeat, and a real
`selfbench run` (not at a terminal) that says where each candidate stands at least every
heartbeat."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from run_history import generate
from selfbench import activity

FILES = ("tests/test_a.py", "tests/test_b.py")


@pytest.mark.parametrize(
    ("log", "shown"),
    [
        ("", "log phase.log"),
        ("selfbench-draft: begin 0 1\n....", "tests/test_a.py"),
        ("selfbench-draft: begin 0 1\nselfbench-draft: end 0 1 0\n", "log phase.log"),
        (
            "selfbench-draft: begin 0 1\nselfbench-draft: end 0 1 0\n"
            "selfbench-draft: begin 1 1\ncollecting",
            "tests/test_b.py",
        ),
        ("selfbench-draft: begin 7 1\n", "log phase.log"),  # no such file: the log, no guess
    ],
    ids=["nothing yet", "in the first", "between", "in the second", "out of range"],
)
def test_a_line_names_the_file_a_provisional_run_is_in_from_its_log(
    tmp_path: Path, log: str, shown: str
) -> None:
    path = tmp_path / "phase.log"
    path.write_text(log)
    with activity.doing("pr-3 (easy)", "drafting") as entry:
        activity.step("test run 2 of 5")
        activity.files(FILES)
        with activity.phase(path):
            line = activity.describe(entry, now=entry.started + 65)
        after = activity.describe(entry, now=entry.started + 65)

    assert line == f"pr-3 (easy): drafting for 1 min 05 s; test run 2 of 5; {shown}"
    assert after == "pr-3 (easy): drafting for 1 min 05 s; test run 2 of 5"


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


@pytest.mark.parametrize(
    ("value", "every"), [("", 15.0), ("2.5", 2.5), ("0", 15.0), ("nan", 15.0), ("soon", 15.0)]
)
def test_the_heartbeat_s_interval_is_the_variable_s_when_it_is_a_positive_number(
    monkeypatch: pytest.MonkeyPatch, value: str, every: float
) -> None:
    monkeypatch.setenv("SELFBENCH_HEARTBEAT_SECONDS", value)
    assert activity._every() == every


_BEAT = 2.0
_LONGEST_SILENCE = 15.0


def test_a_run_not_at_a_terminal_is_never_silent_and_status_reads_its_lines(
    tmp_path: Path,
) -> None:
    """A real `selfbench run` with its output piped (a log, CI): every candidate's stage says
    where it stands each heartbeat (here 2 s), so no gap between lines reaches 15 s, and the
    run's events hold the same lines for `status`."""
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
    moments = [started, *(moment for moment, _ in stamped)]
    silences = [later - earlier for earlier, later in zip(moments, moments[1:], strict=False)]
    assert max(silences) < _LONGEST_SILENCE, output
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    recorded = [event["line"] for event in events if event["event"] == "doing"]
    assert [line.rstrip("\n") for line in beats] == recorded
