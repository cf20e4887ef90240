"""The host's ceilings on every command that runs the local sandbox (issue 25): `eval`, `quality`
and `run` take the `--max-*` options `validate` and `draft` take, from one declaration
(`cli/common.py`), and a task asking for more than one of them runs capped, its phase log saying
what was lowered. `run` stores them with the run, so a resumed run keeps them.

The sandbox tests run as root, as CI does.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from projects import Project, build
from run_history import generate
from selfbench.cli import build_parser, main
from selfbench.cli.common import CEILING_FLAGS
from selfbench.environments.local.ceilings import Ceilings
from selfbench.export import RunInfo, export_run
from selfbench.run import RunDirectory, RunOptions
from selfbench.run.driver import _apply_changes, load_options

pytestmark = pytest.mark.fresh_setup  # bounds on setups that really run

needs_root = pytest.mark.sandbox

SOURCE = "https://example.com/example/genkit"
CAPS = ["--max-cpus", "1", "--max-memory", "1024", "--max-seconds", "200"]
"""Below what the sample task asks for: 2 CPUs, 4096 MB, 300 s of setup, 600 s of agent."""
LOWERED = (
    "selfbench: the task's cpus 2 is above this host's ceiling: using 1",
    "selfbench: the task's memoryMb 4096 MB is above this host's ceiling: using 1024 MB",
    "selfbench: the task's setupSeconds 300 s is above this host's ceiling: using 200 s",
    "selfbench: the task's agentSeconds 600 s is above this host's ceiling: using 200 s",
)
"""What each phase's log says of those (`ceilings.lowered`, as the sandbox prints it)."""
BASE = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
MUL = "\n\ndef mul(a, b):\n    return a * b\n"


def _project() -> Project:
    """A calc task adding `mul`, with the test projects' resources and timeouts."""
    test = "from calc import mul\n\n\ndef test_mul():\n    assert mul(6, 3) == 18\n"
    return Project(
        base=BASE,
        gold={"calc/__init__.py": BASE["calc/__init__.py"] + MUL},
        tests={"tests/test_mul.py": test},
        definition={
            "taskId": "calc-mul",
            "setupCommand": "python3 -m venv --system-site-packages --without-pip .venv",
            "testCommand": ".venv/bin/python -m pytest -rA -p no:cacheprovider {tests}",
            "failToPass": ["tests/test_mul.py"],
            "passToPass": ["tests/test_core.py"],
            "toolchains": ["python"],
            "prompt": "Add a function mul(a, b) to the calc package that returns a * b.",
        },
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample task built under a root holding `repo`, `authored/calc-mul` and
    `collected/calc-mul`."""
    root = tmp_path_factory.mktemp("built")
    build(_project(), root)
    return root


def _lowered_in(logs: Path) -> set[str]:
    """The lines of every log under `logs` that say a task's value was lowered."""
    return {
        line
        for log in logs.rglob("*.log")
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
        if "above this host's ceiling" in line
    }


# --- one declaration, one meaning ----------------------------------------------------------------


def _helps(command: str) -> dict[str, str | None]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(getattr(a, "choices", None), dict))  # noqa: SLF001
    chosen = sub.choices[command]  # type: ignore[index]
    return {
        flag: action.help
        for action in chosen._actions  # noqa: SLF001
        for flag in action.option_strings
        if flag in CEILING_FLAGS
    }


def test_each_command_that_runs_the_sandbox_takes_the_same_ceiling_options() -> None:
    validate = _helps("validate")
    assert set(validate) == set(CEILING_FLAGS)
    for command in ("draft", "run"):
        assert _helps(command) == validate
    # a trial, and a quality variant, runs its verifier once: nothing to rerun
    resources = {flag: text for flag, text in validate.items() if flag != "--max-reruns"}
    for command in ("eval", "quality"):
        assert _helps(command) == resources


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "B", "--agent", "nop", "--max-memory", "0"], "--max-memory must be more than 0"),
        (["eval", "B", "--agent", "nop", "--env", "harbor", "--max-cpus", "1"], None),
        (["quality", "T", "--repo", "R", "--max-cpus", "-1"], "--max-cpus must be more than 0"),
        (["run", "--repo", "R", "--out", "o.tar.gz", "--easy", "1", "--max-seconds", "0"], None),
        (
            ["run", "--repo", "R", "--out", "o.tar.gz", "--easy", "1", "--max-reruns", "1"],
            "--max-reruns must be at least 2 (the verifier runs fail-to-pass twice)",
        ),
        (["run", "--resume", "D", "--max-storage", "-5"], "--max-storage must be more than 0"),
    ],
)
def test_a_bad_ceiling_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str | None
) -> None:
    if message is None:
        message = (
            "--max-cpus is not used by --env harbor"
            if "harbor" in argv
            else "--max-seconds must be more than 0"
        )
    named = [str(tmp_path / word) if word in ("B", "T", "R", "D") else word for word in argv]
    assert main(named) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []


# --- run: stored with the run, changed one by one on --resume ------------------------------------


def _options(tmp_path: Path, **changes: Any) -> RunOptions:
    return RunOptions(
        repo=tmp_path / "repo", out=tmp_path / "b.tar.gz", budgets={"easy": 1}, **changes
    )


def test_a_run_s_ceilings_survive_a_resume_and_one_given_again_changes_only_it(
    tmp_path: Path,
) -> None:
    options = _options(tmp_path, jobs=2, ceilings={"cpus": 1.5, "memory_mb": 1024})
    stored = options.to_json()
    assert stored["ceilings"] == {"cpus": 1.5, "memoryMb": 1024}
    back = load_options(json.loads(json.dumps(stored)), "inputs.json")
    assert back.ceilings == options.ceilings
    host = back.host_ceilings()
    assert (host.cpus, host.memory_mb) == (1.5, 1024)
    assert (host.seconds, host.reruns) == (Ceilings.for_host().seconds, Ceilings.for_host().reruns)

    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    changed = _apply_changes(run, back, {"ceilings": {"memory_mb": 512}})
    assert changed.ceilings == {"cpus": 1.5, "memory_mb": 512}
    assert json.loads(run.inputs_path.read_text())["ceilings"] == {"cpus": 1.5, "memoryMb": 512}
    [event] = run.events()
    assert (event["event"], event["option"]) == ("changed", "ceilings")


def test_a_run_without_ceilings_stores_none_and_reads_an_older_run(tmp_path: Path) -> None:
    stored = _options(tmp_path).to_json()
    assert "ceilings" not in stored
    assert load_options(stored, "inputs.json").ceilings == {}
    for bad in ({"memoryMb": 0}, {"gpus": 1}, {"cpus": "many"}):
        with pytest.raises(Exception, match="not a run's inputs"):
            load_options({**stored, "ceilings": bad}, "inputs.json")


# --- each command runs the task capped ------------------------------------------------------------


@needs_root
def test_eval_runs_a_task_capped_by_the_options_and_its_logs_say_so(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = tmp_path / "bench.tar.gz"
    run = RunInfo("run-1", "https://example.com/calc.git", "a" * 40)
    export_run([built / "collected" / "calc-mul"], run=run, out=bench)
    results = tmp_path / "results"
    argv = ["eval", str(bench), "--agent", "oracle", "--results", str(results), "--json"]
    assert main([*argv, *CAPS]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["agents"][0]["passes"] == 1, summary
    assert _lowered_in(results / "logs" / "calc-mul") == set(LOWERED)


@needs_root
def test_quality_runs_a_task_capped_by_the_options_and_its_logs_say_so(
    built: Path, tmp_path: Path
) -> None:
    task = tmp_path / "calc-mul"
    shutil.copytree(built / "authored" / "calc-mul", task)
    logs = tmp_path / "logs"
    argv = ["quality", str(task), "--repo", str(built / "repo"), "--logs", str(logs)]
    assert main([*argv, *CAPS]) in (0, 1)  # a verdict, whichever it is
    assert (task / "quality.json").is_file()
    assert _lowered_in(logs / "calc-mul") == set(LOWERED)


@needs_root
def test_run_drafts_validates_and_checks_quality_capped_and_stores_the_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = generate(tmp_path, 1)
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(history), "--easy", "1", "--over-fetch", "1"]
    argv += ["--source-url", SOURCE, "--out", str(out), "--max-memory", "1024", "--max-cpus", "1"]
    assert main(argv) == 0, capsys.readouterr()
    run_dir = tmp_path / "bench.run"
    stored = json.loads((run_dir / "inputs.json").read_text())
    assert stored["ceilings"] == {"cpus": 1.0, "memoryMb": 1024}
    lowered = _lowered_in(run_dir)
    assert any(line.endswith("ceiling: using 1024 MB") for line in lowered), lowered
    assert any(line.endswith("ceiling: using 1") for line in lowered), lowered
    # logs/<candidate>/<step>-<stage>/…: drafting's sandbox and validation's both capped
    logged = {
        log.relative_to(run_dir / "logs").parts[1].split("-", 1)[-1]
        for log in (run_dir / "logs").rglob("*.log")
        if "above this host's ceiling" in log.read_text(errors="replace")
    }
    assert {"draft", "validate"} <= logged, logged


@needs_root
def test_eval_s_max_seconds_ends_an_agent_the_task_gives_ten_minutes(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The task gives its agent 600 s; `--max-seconds 15` ends a sleeping agent after 15."""
    bench = tmp_path / "bench.tar.gz"
    run = RunInfo("run-1", "https://example.com/calc.git", "a" * 40)
    export_run([built / "collected" / "calc-mul"], run=run, out=bench)
    results = tmp_path / "results"
    argv = ["eval", str(bench), "--agent", "sleeper=sleep 300", "--results", str(results)]
    started = time.monotonic()
    assert main([*argv, "--max-seconds", "15", "--json"]) == 0
    assert time.monotonic() - started < 200  # two attempts at most, each cut at 15 s
    summary = json.loads(capsys.readouterr().out)
    assert summary["agents"][0]["passes"] == 0
    logs = "\n".join(log.read_text(errors="replace") for log in results.rglob("*.log"))
    assert "the task's agentSeconds 600 s is above this host's ceiling: using 15 s" in logs
    assert "selfbench: phase killed after 15 s" in logs
