"""Failures the agent's code causes are the agent's (issue 25): real tasks, real sandbox.

An agent that hits a limit (memory, disk, time, processes) in the collect step or the verifier
used to make its trial "infrastructure", so it left the pass rate. Each attack here is a real
agent in the local sandbox; the trial must count against it, with the cause named and the
oracle's run on the same workspace, with the same limits, recorded as the proof.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from projects import build
from selfbench.environments.local import cgroup
from selfbench.environments.local.phases import FULL_BYTES, AgentPatch, AgentPhase, limits_struck
from selfbench.environments.local.sandbox import (
    Mounts,
    PhaseResult,
    Sandbox,
    Users,
    require_sandbox,
)
from selfbench.evaluate import build_summary, read_results
from selfbench.evaluate.local_trials import _agent_cause
from selfbench.evaluate.results import TrialRecord
from test_eval import _eval, project

pytestmark = pytest.mark.sandbox

SOLVE_MUL = """case "$SELFBENCH_INSTRUCTION" in
  *" mul("*) printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py; exit 0 ;;
esac
"""
"""Both agents solve `mul`; neither can solve `sub`."""
HOG = SOLVE_MUL + "head -c 120M /dev/urandom > calc/blob.bin\n"
"""What an agent that cannot solve a task does to leave the pass rate: a workspace the collect
step cannot diff in the task's memory."""
HANG = SOLVE_MUL + "printf '\\nimport time\\ntime.sleep(3600)\\n' >> calc/__init__.py\n"
"""Code the tests import that never returns."""
FLOOD = (
    SOLVE_MUL
    + """cat >> calc/__init__.py <<'END'

import os as _os
import time as _time

while True:
    try:
        _pid = _os.fork()
    except OSError:
        break
    if _pid == 0:
        _time.sleep(120)
        _os._exit(0)
END
"""
)
"""Code the tests import that forks until the phase's process cap refuses."""
FILL = SOLVE_MUL + "dd if=/dev/zero of=calc/fill.bin bs=1M >/dev/null 2>&1 || true\n"
"""An agent that fills its workspace's disk."""
AGENT_MEMORY = "the agent exceeded the task's memory"
AGENT_PROCESSES = "the agent hit the task's process limit"
COLLECT_MEMORY = "the agent's workspace exceeded the task's memory in the collect step"
COLLECT_TIME = "the collect step timed out on the agent's workspace"


def _tasks(tmp_path: Path, **definition: Any) -> Path:
    """`calc-mul` (both agents solve it) and `calc-sub` (neither does), changed as given."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for task in (("calc-mul", "mul", "a * b", "easy"), ("calc-sub", "sub", "a - b", "easy")):
        out = build(project(*task, **definition), tmp_path / task[0])
        shutil.move(out, tasks / out.name)
    return tasks


def _trial(results: Path, agent: str, task: str) -> TrialRecord:
    [found] = [
        r for r in read_results(results).trials.values() if r.agent == agent and r.task == task
    ]
    return found


def _assert_counted(results: Path, agent: str, cause: str) -> None:
    """`agent` failed `calc-sub` as the agent, for `cause`, proved by the oracle; it scores what
    the honest agent does: 1 of 2."""
    record = _trial(results, agent, "calc-sub")
    assert (record.passed, record.classification) == (False, "agent"), record.reason
    assert record.cause == cause
    assert record.attempts == 1
    assert record.reason is not None
    assert record.reason.startswith(f"{cause}: ")
    assert record.proof is not None
    assert record.proof.startswith("the oracle passed here with the same limits (log ")
    assert record.proof in record.reason
    log = read_results(results)
    agents = {a.name: a for a in build_summary(log).agents}
    assert (agents[agent].passes, agents[agent].counted, agents[agent].infrastructure) == (1, 2, 0)
    assert (agents["honest"].passes, agents["honest"].counted) == (1, 2)
    # the proof stands for the task's re-check: the oracle passes
    assert [(c.task, c.passed) for c in log.rechecks.values()] == [("calc-sub", True)]


def test_a_workspace_too_big_for_the_memory_counts_against_the_agent(tmp_path: Path) -> None:
    resources = {"cpus": 2, "memoryMb": 160, "storageMb": 20480}
    tasks = _tasks(tmp_path, resources=resources)
    results = tmp_path / "results"
    assert _eval(tasks, results, f"hog={HOG}", f"honest={SOLVE_MUL}") == 0
    cause = "the agent's workspace exceeded the task's memory in the collect step"
    _assert_counted(results, "hog", cause)
    assert "the collect step failed (exit 137; log " in str(
        _trial(results, "hog", "calc-sub").reason
    )


def test_a_test_that_hangs_at_import_counts_against_the_agent(tmp_path: Path) -> None:
    timeouts = {"setupSeconds": 60, "agentSeconds": 60, "testsSeconds": 10}
    tasks = _tasks(tmp_path, timeouts=timeouts)
    results = tmp_path / "results"
    assert _eval(tasks, results, f"hanger={HANG}", f"honest={SOLVE_MUL}") == 0
    _assert_counted(results, "hanger", "the tests timed out with the agent's code")
    assert ": the verifier timed out (log " in str(_trial(results, "hanger", "calc-sub").reason)


def test_a_process_flood_in_the_verifier_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a phase's process cap below the per-user one, so the flood meets the control group's
    monkeypatch.setattr(cgroup, "MAX_TASKS", 300)
    tasks = _tasks(tmp_path)
    results = tmp_path / "results"
    assert _eval(tasks, results, f"flooder={FLOOD}", f"honest={SOLVE_MUL}") == 0
    record = _trial(results, "flooder", "calc-sub")
    cause = "the tests hit the task's process limit with the agent's code"
    assert (record.classification, record.cause) == ("agent", cause)
    # the verifier outlived the flood and gave its verdict: the cause is named beside it
    assert record.reason == f"tests ran and failed: fail-to-pass ({cause})"
    assert record.proof is None
    honest = _trial(results, "honest", "calc-sub")
    assert (honest.classification, honest.cause) == ("agent", None)


def test_a_process_flood_at_the_per_user_cap_in_the_verifier_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each user's cap (`ulimit -u`) far below the phase's: the flood meets the user's, which
    # leaves no trace in the control group (`pids.events`); the host counts the uid's tasks
    monkeypatch.setattr(cgroup, "USER_PROCESSES", 100)
    tasks = _tasks(tmp_path)
    results = tmp_path / "results"
    assert _eval(tasks, results, f"flooder={FLOOD}", f"honest={SOLVE_MUL}") == 0
    record = _trial(results, "flooder", "calc-sub")
    cause = "the tests hit the per-user process limit with the agent's code"
    assert (record.classification, record.cause) == ("agent", cause), record.reason
    assert record.reason is not None
    assert record.reason.endswith(f"({cause})")
    honest = _trial(results, "honest", "calc-sub")
    assert (honest.classification, honest.cause) == ("agent", None)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 96 MB filesystem for the workspaces."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(disk)], check=True)
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_workspace_that_fills_the_disk_counts_against_the_agent(
    tmp_path: Path, small_disk: Path
) -> None:
    tasks = _tasks(tmp_path)
    results = tmp_path / "results"
    extra = ("--workspace", str(small_disk))
    assert _eval(tasks, results, f"filler={FILL}", f"honest={SOLVE_MUL}", extra=extra) == 0
    _assert_counted(results, "filler", "the agent's workspace filled the disk in the collect step")


def test_a_phase_that_meets_its_process_cap_says_so(tmp_path: Path, sandbox_users: Users) -> None:
    group, why = cgroup.PhaseCgroup.create(cgroup.Limits(cpus=1, memory_mb=256, pids=32))
    if group is None:
        pytest.skip(why)
    group.close()
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), cgroup.Limits(1, 256, 32))
    flood = "for i in $(seq 64); do sleep 5 & done 2>/dev/null; wait"
    result = sandbox.run(flood, (), mounts=Mounts(), log=tmp_path / "flood.log", timeout=30)
    calm = sandbox.run(
        "sleep 0.1 & wait", (), mounts=Mounts(), log=tmp_path / "calm.log", timeout=30
    )
    assert (result.process_limit, calm.process_limit) == (True, False)
    assert limits_struck(result, free_bytes=None) == ("processes",)


def test_a_user_that_meets_its_own_process_cap_says_so(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """The kernel refuses the user's forks at `ulimit -u` and tells no one; the host's count of
    the uid's tasks does, and a calm phase's does not."""
    limits = cgroup.Limits(cpus=1, memory_mb=512, pids=1024, user_pids=64)
    group, why = cgroup.PhaseCgroup.create(limits)
    if group is None:
        pytest.skip(why)
    group.close()
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), limits)
    flood = "for i in $(seq 200); do sleep 3 & done 2>/dev/null; wait"
    run = 'runuser -u verifier -- bash -c "$1"'
    result = sandbox.run(run, (flood,), mounts=Mounts(), log=tmp_path / "flood.log", timeout=30)
    calm = sandbox.run(
        run, ("sleep 0.5 & wait",), mounts=Mounts(), log=tmp_path / "calm.log", timeout=30
    )
    assert (result.user_process_limit, calm.user_process_limit) == (True, False)
    assert (result.process_limit, calm.process_limit) == (False, False)
    assert limits_struck(result, free_bytes=None) == ("user-processes",)


def test_without_a_peak_count_each_users_tasks_are_sampled(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """A kernel without `pids.peak`: a directory stands for the group (its `pids.current` and
    `tasks`), holding real processes of a sandbox uid and of root; the watch counts the uid's
    tasks against its cap, root's never."""
    sleepers = [
        subprocess.Popen(["sleep", "30"], user=uid)
        for uid in [sandbox_users.verifier] * 8 + [0] * 8
    ]
    try:
        group = tmp_path / "pids"
        group.mkdir()
        (group / "pids.current").write_text(f"{len(sleepers)}\n")
        (group / "tasks").write_text("".join(f"{p.pid}\n" for p in sleepers))
        found = []
        for cap in (8, 9, 64):
            with cgroup.UserWatch(group, "tasks", cap) as watch:
                time.sleep(0.5)
            found.append(watch.reached)
        assert found == [True, True, False]  # 8 of 8; 8 within 1 of 9; 8 of 64
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


@pytest.mark.parametrize(
    ("changes", "free", "timed_out", "limits"),
    [
        ({}, None, False, ()),
        ({}, FULL_BYTES, False, ()),
        ({}, FULL_BYTES - 1, False, ("disk",)),
        ({}, None, True, ("time",)),
        ({"timed_out": True, "out_of_memory": True}, 0, False, ("time", "memory", "disk")),
        ({"process_limit": True}, None, False, ("processes",)),
        ({"user_process_limit": True}, None, False, ("user-processes",)),
    ],
)
def test_the_limits_a_phase_struck(
    changes: dict[str, bool], free: int | None, timed_out: bool, limits: tuple[str, ...]
) -> None:
    result = replace(PhaseResult(exit_code=1, timed_out=False, seconds=1.0), **changes)
    assert limits_struck(result, free_bytes=free, timed_out=timed_out) == limits


@pytest.mark.parametrize(
    ("statuses", "changes", "free", "cause"),
    [
        ({"agent": "0", "collect": "0"}, {}, None, None),
        ({"agent": "0", "collect": "0"}, {"process_limit": True}, None, AGENT_PROCESSES),
        (
            {"agent": "0", "collect": "0"},
            {"user_process_limit": True},
            None,
            "the agent hit the per-user process limit",
        ),
        ({}, {"out_of_memory": True}, None, AGENT_MEMORY),
        ({"agent": "137", "collect": "0"}, {"out_of_memory": True}, None, AGENT_MEMORY),
        (
            {"agent": "0"},
            {"timed_out": True},
            None,
            "the agent phase ran past the harness's time limit",
        ),
        ({"agent": "0", "collect": "137"}, {"out_of_memory": True}, None, COLLECT_MEMORY),
        ({"agent": "0", "collect": "124"}, {}, None, COLLECT_TIME),
        ({"agent": "0", "collect": "137"}, {}, None, COLLECT_TIME),
        ({"agent": "0"}, {}, 0, "the agent's workspace filled the disk in the collect step"),
        ({"agent": "0", "collect": "1"}, {}, 1 << 30, None),
    ],
)
def test_the_cause_of_an_agent_phase_comes_from_its_statuses_and_group(
    tmp_path: Path,
    statuses: dict[str, str],
    changes: dict[str, bool],
    free: int | None,
    cause: str | None,
) -> None:
    for name, value in statuses.items():
        (tmp_path / name).write_text(f"{value}\n")
    result = replace(PhaseResult(exit_code=0, timed_out=False, seconds=1.0), **changes)
    phase = AgentPhase(AgentPatch(tmp_path), tmp_path, result, tmp_path / "log", free)
    assert _agent_cause(phase) == cause
