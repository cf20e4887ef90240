"""`selfbench eval` end to end in the local sandbox: real tasks, real agents, real verifier.

The sample benchmark is four calc tasks (two easy, two medium) compiled from real repositories
(tests/projects.py) and exported. `oracle` must score 1.0, `nop` 0.0, and a scripted agent that
solves `mul` and `power` (one task of each difficulty) exactly 0.5 per difficulty.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from projects import Project, build
from selfbench.cli import main
from selfbench.evaluate import RESULTS_FILE, build_summary, read_results
from selfbench.export import RunInfo, export_run

pytestmark = pytest.mark.sandbox

PYTEST = ".venv/bin/python -m pytest -rA -p no:cacheprovider {tests}"
SETUP = "python3 -m venv --system-site-packages --without-pip .venv"
BASE = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
TASKS = (
    ("calc-mul", "mul", "a * b", "easy"),
    ("calc-sub", "sub", "a - b", "easy"),
    ("calc-pow", "power", "a ** b", "medium"),
    ("calc-div", "div", "a // b", "medium"),
)
HALF = """case "$SELFBENCH_INSTRUCTION" in
  *" mul("*) printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py ;;
  *" power("*) printf '\\n\\ndef power(a, b):\\n    return a ** b\\n' >> calc/__init__.py ;;
esac
test "$(cat "$SELFBENCH_INSTRUCTION_FILE")" = "$SELFBENCH_INSTRUCTION"
echo "selfbench-usage: tokens=1000 cost_usd=0.25"
"""
HOSTILE = """ls /solution /tests 2>&1
cat /opt/selfbench/base.git/HEAD 2>&1
mkdir -p /logs/verifier 2>&1
touch /usr/local/pwned 2>&1
printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' > /tmp/calc.py
git -C /app status --short 2>&1 | head -3
"""


def project(task_id: str, name: str, expr: str, difficulty: str, **definition: Any) -> Project:
    """A calc task: the change adds `name(a, b) = expr`; its held-out test checks 6 and 3."""
    gold: dict[str, str | Path | None] = {
        "calc/__init__.py": f"{BASE['calc/__init__.py']}\n\ndef {name}(a, b):\n    return {expr}\n"
    }
    expected = definition.pop("expected", eval(expr, {"a": 6, "b": 3}))  # noqa: S307 - our text
    test = (
        f"from calc import {name}\n\n\ndef test_{name}():\n    assert {name}(6, 3) == {expected}\n"
    )
    tests = {f"tests/test_{name}.py": test}
    return Project(
        base=BASE,
        gold=gold,
        tests=tests,
        definition={
            "taskId": task_id,
            "difficulty": difficulty,
            "setupCommand": SETUP,
            "testCommand": PYTEST,
            "failToPass": sorted(tests),
            "passToPass": ["tests/test_core.py"],
            "toolchains": ["python"],
            "prompt": f"Add a function {name}(a, b) to the calc package that returns {expr}.",
            **definition,
        },
    )


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample benchmark: four tasks in one verified export."""
    root = tmp_path_factory.mktemp("bench")
    outs = [build(project(*task), root / task[0]) for task in TASKS]
    archive = root / "bench.tar.gz"
    export_run(outs, run=RunInfo("run-1", "https://example.com/calc.git", "a" * 40), out=archive)
    return archive


def _eval(bench: Path, results: Path, *agents: str, extra: tuple[str, ...] = ()) -> int:
    argv = ["eval", str(bench), "--results", str(results), *extra]
    for agent in agents:
        argv += ["--agent", agent]
    return main(argv)


@pytest.fixture(scope="module")
def compared(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One evaluation of the baselines, the scripted half and a hostile agent; its JSON."""
    results = tmp_path_factory.mktemp("compared") / "results"
    capture = results.parent / "out.json"
    with pytest.MonkeyPatch.context() as patch:
        stdout = capture.open("w")
        patch.setattr(sys, "stdout", stdout)
        code = _eval(bench, results, "oracle", "nop", f"half={HALF}", f"hostile={HOSTILE}",
                     extra=("-j", "2", "--json"))  # fmt: skip
        stdout.close()
    assert code == 0
    return {"summary": json.loads(capture.read_text()), "results": results}


def test_baselines_and_a_scripted_half_score_exactly(compared: dict[str, Any]) -> None:
    agents = {agent["agent"]: agent for agent in compared["summary"]["agents"]}
    rates = {
        name: (agent["passRate"], {k: v["passRate"] for k, v in agent["byDifficulty"].items()})
        for name, agent in agents.items()
    }
    assert rates == {
        "oracle": (1.0, {"easy": 1.0, "medium": 1.0}),
        "nop": (0.0, {"easy": 0.0, "medium": 0.0}),
        "half": (0.5, {"easy": 0.5, "medium": 0.5}),
        "hostile": (0.0, {"easy": 0.0, "medium": 0.0}),
    }
    assert (agents["half"]["tokens"], agents["half"]["costUsd"]) == (4000, 1.0)
    assert compared["summary"]["agentNetwork"] == [
        "local: none (only a ready-made harness reaches a host: its model's API)"
    ]
    assert compared["summary"]["matrix"][1] == {
        "task": "calc-mul",
        "difficulty": "easy",
        "cells": {"oracle": "1/1", "nop": "0/1", "half": "1/1", "hostile": "0/1"},
        "passedBy": 1,  # half; the baselines are not counted
        "agentsCounted": 2,
    }


def test_every_non_pass_is_classified_and_recorded(compared: dict[str, Any]) -> None:
    failures = compared["summary"]["failures"]
    assert len(failures) == 10
    assert {(f["class"], f["reason"]) for f in failures} == {
        ("agent", "tests ran and failed: fail-to-pass")
    }
    log = read_results(compared["results"])
    assert log.corrupt == ()
    assert len(log.trials) == 16
    assert {check.task: check.passed for check in log.rechecks.values()} == {
        task[0]: True for task in TASKS
    }
    oracle = next(r for r in log.trials.values() if r.agent == "oracle" and r.task == "calc-mul")
    assert oracle.tests == {
        "tests/test_mul.py::test_mul": "passed",
        "tests/test_core.py::test_add": "passed",
    }
    assert oracle.network == "none (only a ready-made harness reaches a host: its model's API)"
    assert oracle.verifier_seconds is not None
    assert oracle.attempts == 1


def test_an_agent_changes_only_its_workspace(compared: dict[str, Any]) -> None:
    log = read_results(compared["results"])
    hostile = next(r for r in log.trials.values() if r.agent == "hostile" and r.task == "calc-mul")
    output = Path(hostile.log).read_text()
    assert "ls: cannot access '/solution': No such file or directory" in output
    assert "ls: cannot access '/tests': No such file or directory" in output
    assert "cat: /opt/selfbench/base.git/HEAD: Permission denied" in output
    assert "mkdir: cannot create directory \u2018/logs\u2019: Read-only file system" in output
    assert "touch: cannot touch '/usr/local/pwned': Read-only file system" in output
    assert not Path("/usr/local/pwned").exists()
    assert not hostile.passed


def test_rerunning_skips_finished_trials(
    bench: Path, compared: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    results = compared["results"]
    before = (results / RESULTS_FILE).read_bytes()
    assert _eval(bench, results, "oracle", "nop", extra=("--resume",)) == 0
    assert (results / RESULTS_FILE).read_bytes() == before
    assert capsys.readouterr().err == ""


def _trial_lines(results: Path) -> list[dict[str, Any]]:
    if not (results / RESULTS_FILE).is_file():
        return []
    lines = (results / RESULTS_FILE).read_text().splitlines()[1:]
    return [json.loads(line) for line in lines if '"kind": "trial"' in line]


TRIAL_LINE = re.compile(r"(\S+) (\S+) #(\d+): ")


def _outcomes(results: Path) -> tuple[dict[tuple[str, str, int], Any], dict[str, bool]]:
    """Each trial's reward and verdict by (task, agent, trial); each re-check's verdict."""
    log = read_results(results)
    trials = {
        (r.task, r.agent, r.trial): (r.reward, r.passed, r.classification, r.reason)
        for r in log.trials.values()
    }
    return trials, {check.task: check.passed for check in log.rechecks.values()}


def test_a_killed_run_resumes_losing_only_its_running_trials(bench: Path, tmp_path: Path) -> None:
    assert main(["extract", str(bench), "--out", str(tmp_path / "tasks")]) == 0
    results, workspace = tmp_path / "results", tmp_path / "ws"
    workspace.mkdir()
    argv = [sys.executable, "-m", "selfbench", "eval", str(tmp_path / "tasks"), "--agent", "nop"]
    argv += ["--agent", f"slow=sleep 1\n{HALF}", "--workspace", str(workspace)]
    process = subprocess.Popen(
        [*argv, "--results", str(results)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while len(_trial_lines(results)) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    first = _trial_lines(results)
    assert 3 <= len(first) < 8
    done = subprocess.run(
        [*argv, "--results", str(results), "--resume"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = _trial_lines(results)
    assert lines[: len(first)] == first
    keys = [(line["task"], line["agent"], line["trial"]) for line in lines]
    assert len(keys) == len(set(keys)) == 8
    # the resumed run ran exactly the trials the killed one had not finished
    ran = {
        (match[1], match[2], int(match[3]))
        for line in done.stderr.splitlines()
        if (match := TRIAL_LINE.match(line))
    }
    finished = {(line["task"], line["agent"], line["trial"]) for line in first}
    assert ran == set(keys) - finished
    # and the results are an uninterrupted run's, reward for reward
    whole = tmp_path / "whole"
    again = subprocess.run(
        [*argv, "--results", str(whole)], capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    assert _outcomes(results) == _outcomes(whole)
    trials, rechecks = _outcomes(whole)
    assert {key: value[0] for key, value in trials.items() if key[1] == "slow"} == {
        ("calc-mul", "slow", 1): 1,
        ("calc-sub", "slow", 1): 0,
        ("calc-pow", "slow", 1): 1,
        ("calc-div", "slow", 1): 0,
    }
    assert rechecks == {task[0]: True for task in TASKS}


def test_resume_refuses_a_directory_without_results(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(bench, tmp_path / "typo", "nop", extra=("--resume",)) == 2
    assert capsys.readouterr().err == f"error: --resume: no results to resume in {tmp_path}/typo\n"
    assert not (tmp_path / "typo").exists()


FAILURES = {
    # the limit strikes (3 s) before it writes anything; what it used so far is reported
    "sleeper": "echo 'selfbench-usage: tokens=70 cost_usd=0.01'; sleep 30",
    # exits non-zero having changed nothing, its usage on stderr (the last line counts)
    "crasher": "echo 'selfbench-usage: tokens=1' >&2; echo ' selfbench-usage: tokens=12"
    " cost_usd=0.5 model=x' >&2; echo giving up >&2; exit 3",
    # commits what setup built: its patch adds a file the verifier's tree already has
    "unignorer": "printf '.venv/\\n' > .gitignore; echo mine > built.txt",
    # solves the task, then crashes: the patch counts, the exit status does not
    "solver": "printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py; exit 5",
}


def test_each_kind_of_agent_failure_from_real_runs(tmp_path: Path) -> None:
    timeouts = {"setupSeconds": 900, "agentSeconds": 3, "testsSeconds": 900}
    task = project("calc-mul", "mul", "a * b", "easy", timeouts=timeouts,
                   setupCommand=f"{SETUP} && echo built > built.txt")  # fmt: skip
    task = replace(task, base={**BASE, ".gitignore": f"{BASE['.gitignore']}built.txt\n"})
    out = build(task, tmp_path / "b")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.move(out, tasks / out.name)
    agents = [f"{name}={command}" for name, command in FAILURES.items()]
    assert _eval(tasks, tmp_path / "results", *agents) == 0
    log = read_results(tmp_path / "results")
    verdicts = {
        r.agent: (r.passed, r.classification, r.reason, r.agent_exit) for r in log.trials.values()
    }
    assert verdicts == {
        "sleeper": (False, "agent", "the agent timed out after 3 s", 124),
        "crasher": (
            False,
            "agent",
            "the agent crashed (exit 3); tests ran and failed: fail-to-pass",
            3,
        ),
        "unignorer": (False, "agent", "its patch did not apply", 0),
        "solver": (True, None, None, 5),
    }
    usage = {r.agent: (r.tokens, r.cost_usd) for r in log.trials.values()}
    assert usage == {
        "sleeper": (70, 0.01),
        "crasher": (12, 0.5),
        "unignorer": (None, None),
        "solver": (None, None),
    }
    sleeper = next(r for r in log.trials.values() if r.agent == "sleeper")
    assert sleeper.agent_seconds is not None
    assert 3 <= sleeper.agent_seconds < 10
    unignorer = next(r for r in log.trials.values() if r.agent == "unignorer")
    assert (
        "the agent patch does not apply"
        in Path(unignorer.log).with_name("unignorer-t1-a1.log").read_text()
    )
    # the agent failures asked for a re-check of the task: the oracle still passes
    assert [(c.task, c.passed) for c in log.rechecks.values()] == [("calc-mul", True)]


def test_a_broken_task_and_a_broken_setup_are_not_the_agents(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    wrong = project("calc-wrong", "mul", "a * b", "easy", expected=19)
    no_setup = project("calc-nosetup", "sub", "a - b", "easy", setupCommand="exit 3")
    tasks.mkdir()
    for item in (wrong, no_setup):
        out = build(item, tmp_path / str(item.definition["taskId"]))
        shutil.move(out, tasks / out.name)
    assert _eval(tasks, tmp_path / "results", "nop") == 0
    log = read_results(tmp_path / "results")
    by_task = {record.task: record for record in log.trials.values()}
    assert by_task["calc-nosetup"].classification == "infrastructure"
    assert by_task["calc-nosetup"].attempts == 2
    assert by_task["calc-nosetup"].reason is not None
    assert by_task["calc-nosetup"].reason.startswith("setup: setupCommand failed (exit 3; log ")
    # the setup was really tried again, in a fresh workspace
    prepare = (tmp_path / "results" / "logs" / "calc-nosetup" / "prepare.log").read_text()
    assert prepare.count("; trying once more in a fresh workspace\n") == 1
    assert prepare.count("exit 3") >= 2
    assert log.rechecks[by_task["calc-wrong"].digest].passed is False
    summary = build_summary(log)
    failures = {f.task: f.classification for f in summary.failures}
    assert failures == {"calc-nosetup": "infrastructure", "calc-wrong": "task"}
    # neither counts against the agent: no trial of nop is counted, none failed as its own
    [nop] = summary.agents
    assert (nop.counted, nop.agent_failures, nop.task_failures, nop.infrastructure) == (0, 0, 1, 1)


SLY = """printf '\\n\\nclass _Any:\\n    def __eq__(self, other):\\n' >> calc/__init__.py
printf '        return True\\n\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py
"""
"""Solves calc-mul, and adds an `__eq__` that ignores what it is compared with."""


def test_a_suspect_patch_is_marked_and_its_reward_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(project("calc-mul", "mul", "a * b", "easy"), tmp_path / "b")
    tasks, results = tmp_path / "tasks", tmp_path / "results"
    tasks.mkdir()
    shutil.move(out, tasks / out.name)
    honest = "printf '\\n\\ndef mul(a, b):\\n    return a * b\\n' >> calc/__init__.py"
    assert _eval(tasks, results, f"sly={SLY}", f"honest={honest}", extra=("--json",)) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert {agent["agent"]: agent["passRate"] for agent in summary["agents"]} == {
        "sly": 1.0,
        "honest": 1.0,
    }
    [suspect] = summary["suspect"]
    assert suspect == {
        "task": "calc-mul",
        "agent": "sly",
        "trial": 1,
        "outcome": "pass",
        "reward": 1,
        "findings": [
            {
                "rule": "always-equal",
                "path": "calc/__init__.py",
                "line": 6,
                "text": "def __eq__(self, other):",
                "reason": "__eq__ never reads its other argument",
            }
        ],
    }
    assert "calc-mul sly #1: pass [suspect: 1 finding]\n" in captured.err
    assert "calc-mul honest #1: pass\n" in captured.err
    log = read_results(results)
    rewards = {r.agent: (r.reward, r.passed, len(r.suspect)) for r in log.trials.values()}
    assert rewards == {"sly": (1, True, 1), "honest": (1, True, 0)}
    assert main(["report", str(results), "--format", "md"]) == 0
    assert capsys.readouterr().out.endswith(
        "## Suspect trials\n\n| task | agent | trial | outcome | reward | suspect |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| calc-mul | sly | 1 | pass | 1 | calc/__init__.py:6 always-equal |\n"
    )


MARK = "selfbench-probe-4f2c"
PLACES = ("/tmp", "/dev/shm", "/var/tmp", "/run", "/home/agent", "/opt/uv-cache", "/app/.venv")
"""Where an agent can write outside its diff: its own tmp, shm, run and home, the shared tool
state, an ignored directory of its workspace."""
LEAK_CHECK = f"""
import os as _os

_PLACES = {PLACES!r}
if any(_os.path.exists(_os.path.join(place, {MARK!r})) for place in _PLACES):
    def mul(a, b):
        return a * b
"""
"""Appended to calc/__init__.py: `mul` exists, so the verifier passes, only where the code that
runs in the verifier sees one of the marks."""


def _probe(results: Path, workspace: Path, *, control: bool) -> str:
    writes = " ".join(f"{place}/{MARK}" for place in PLACES)
    check = LEAK_CHECK.replace("_PLACES = (", '_PLACES = ("/app/calc", ') if control else LEAK_CHECK
    script = f"""for place in {" ".join(PLACES)}; do
  test -e "$place/{MARK}" && echo "LEAK: $place/{MARK} was there before"
done
touch {writes} 2>&1
echo pwned >> {results}/{RESULTS_FILE} 2>&1
touch {workspace}/{MARK} {results}/{MARK} 2>&1
mkdir -p /logs/verifier 2>&1
echo junk > /opt/selfbench/agent.patch 2>&1
rm -rf /opt/selfbench/base.git 2>&1
echo '{{"reward": 1}}' > /run/selfbench-status/collect 2>&1
cat >> calc/__init__.py <<'END'
{check}
END
"""
    if control:  # the same check, with a mark in the workspace's own tree: it reaches the diff
        script += f"touch calc/{MARK}\n"
    return script


def test_nothing_but_the_collected_diff_reaches_the_verifier(tmp_path: Path) -> None:
    out = build(project("calc-mul", "mul", "a * b", "easy"), tmp_path / "b")
    tasks, results, workspace = tmp_path / "tasks", tmp_path / "results", tmp_path / "ws"
    tasks.mkdir()
    workspace.mkdir()
    shutil.move(out, tasks / out.name)
    probe = _probe(results, workspace, control=False)
    control = _probe(results, workspace, control=True)
    extra = ("--trials", "2", "--workspace", str(workspace))
    assert _eval(tasks, results, f"probe={probe}", f"control={control}", extra=extra) == 0
    log = read_results(results)
    assert log.corrupt == ()
    verdicts = {(r.agent, r.trial): (r.passed, r.reason) for r in log.trials.values()}
    assert verdicts == {
        ("probe", 1): (False, "tests ran and failed: fail-to-pass"),
        ("probe", 2): (False, "tests ran and failed: fail-to-pass"),
        ("control", 1): (True, None),
        ("control", 2): (True, None),
    }
    for record in log.trials.values():
        output = Path(record.log).read_text()
        assert "LEAK" not in output  # not even the agent's next trial sees its marks
        assert f"{results}/{RESULTS_FILE}: No such file or directory" in output
        assert f"touch: cannot touch '{workspace}/{MARK}': No such file or directory" in output
        assert "mkdir: cannot create directory \u2018/logs\u2019: Read-only file system" in output
        assert "/opt/selfbench/agent.patch: Permission denied" in output
        assert "rm: cannot remove '/opt/selfbench/base.git': Permission denied" in output
        assert "/run/selfbench-status/collect: Permission denied" in output
    assert "pwned" not in (results / RESULTS_FILE).read_text()
    assert not any(path.name == MARK for path in workspace.rglob("*"))
    assert not (results / MARK).exists()
    assert not Path("/tmp", MARK).exists()  # the host's /tmp, which the agent wrote
    assert not Path("/dev/shm", MARK).exists()


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (["a=true", "a=false"], "two agents are named a"),
        (
            ["x=no-such-agent-program --go"],
            "agent x: cannot start: no-such-agent-program: command not found on the sandbox's PATH",
        ),
        (
            ["x=/home/me/agent.sh"],
            (
                "agent x: cannot start: /home/me/agent.sh is not a program the sandbox sees"
                " (only the system directories are visible)"
            ),
        ),
        (["x=harbor:codex:gpt"], "agent x: cannot start: harbor executable 'no-harbor' not found"),
    ],
    ids=["duplicate", "not-found", "invisible", "no-harbor"],
)
def test_agents_that_cannot_start_are_refused(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], agents: list[str], message: str
) -> None:
    code = _eval(bench, tmp_path / "results", *agents, extra=("--harbor", "no-harbor"))
    assert code == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "results").exists()


def test_an_export_that_does_not_verify_is_refused(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(bench.read_bytes()[:-200])
    assert _eval(broken, tmp_path / "results", "nop") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {broken}: the export does not verify: ")
    assert err.count("\n") == 1


def test_an_export_without_tasks_is_named_in_the_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.tar.gz"  # what a run that accepted nothing exports
    export_run([], run=RunInfo("run-1", "https://example.com/calc.git", "a" * 40), out=empty)
    assert _eval(empty, tmp_path / "results", "nop") == 2
    assert capsys.readouterr().err == f"error: {empty}: no tasks\n"
    assert not (tmp_path / "results").exists()


def test_results_of_another_benchmark_are_refused(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / RESULTS_FILE).write_text(
        '{"benchmark": "' + "e" * 64 + '", "kind": "benchmark", "tasks": 1}\n'
    )
    assert _eval(bench, results, "nop") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: {results / RESULTS_FILE}: results of another benchmark (eeeeeeeeeeee, not "
    )
    assert err.endswith("); use another --results directory\n")


def test_a_command_agent_needs_the_local_environment(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(bench, tmp_path / "results", "x=true", extra=("--env", "harbor")) == 2
    assert capsys.readouterr().err == "error: agent x: a command agent needs --env local\n"


def test_trials_must_be_at_least_one(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _eval(bench, tmp_path / "results", "nop", extra=("--trials", "0")) == 2
    assert capsys.readouterr().err == "error: --trials and -j must be at least 1\n"
