"""One place per environment concern: the spec and its runners, the options every command
declares the same way, and the one module that starts child processes."""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

import pytest

from selfbench import _children
from selfbench.cli import main
from selfbench.environments.build import harbor_options, local_options
from selfbench.environments.harbor import HarborOptions
from selfbench.environments.process import run_captured, run_logged, run_phase
from selfbench.environments.spec import EnvironmentSpec
from selfbench.validate import HarborRunner, LocalRunner
from selfbench.validate.environment import build_runner

SRC = Path(__file__).resolve().parent.parent / "src" / "selfbench"

SUBPROCESS_ALLOWED = {
    "environments/process.py": "every child process of a task: sandbox, Harbor, agents",
    "environments/_forward.py": "the author's command, run by the forwarder inside its namespace",
    "_git.py": "git",
    "mine/git_history.py": "git's long-lived `cat-file --batch`",
    "toolchains/install.py": "toolchain installs (npm pack, pip download)",
    "toolchains/resolve.py": "toolchain version probes",
    "run/_names.py": "no process: the attribute names of `subprocess.CompletedProcess`",
}
_IMPORTS_SUBPROCESS = re.compile(r"^\s*(import subprocess|from subprocess import)", re.MULTILINE)


def test_only_the_named_modules_import_subprocess() -> None:
    found = sorted(
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if _IMPORTS_SUBPROCESS.search(path.read_text())
    )
    assert found == sorted(SUBPROCESS_ALLOWED)


# --- the spec and what it builds ----------------------------------------------------------------


def test_one_spec_builds_either_runner(tmp_path: Path) -> None:
    harbor = EnvironmentSpec(kind="harbor", harbor_env="modal", harbor="/opt/harbor")
    runner = build_runner(harbor, logs=tmp_path / "logs", jobs_dir=tmp_path / "jobs")
    assert isinstance(runner, HarborRunner)
    assert runner.options == HarborOptions(
        environment="modal",
        jobs_dir=tmp_path / "jobs",
        harbor="/opt/harbor",
        logs=tmp_path / "logs",
    )
    default = build_runner(harbor, logs=None)
    assert isinstance(default, HarborRunner)
    assert default.options == HarborOptions(environment="modal", harbor="/opt/harbor")
    local = EnvironmentSpec(setup_env=(("PROXY", "http://proxy"),))
    runner = build_runner(local, logs=tmp_path / "logs")
    assert isinstance(runner, LocalRunner)
    assert runner.options.setup_env == (("PROXY", "http://proxy"),)
    assert runner.options.logs == tmp_path / "logs"


def test_evaluation_takes_its_trial_options_from_the_same_spec(tmp_path: Path) -> None:
    spec = EnvironmentSpec(harbor_env="daytona", setup_env=(("A", "1"),))
    assert harbor_options(spec, jobs_dir=tmp_path, concurrency=3) == HarborOptions(
        environment="daytona", jobs_dir=tmp_path, concurrency=3
    )
    assert local_options(spec, logs=tmp_path).setup_env == (("A", "1"),)


# --- every command refuses an option its environment does not use -------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--harbor-env", "modal"], "--harbor-env is not used by --env local"),
        (["--env", "local", "--harbor", "harbor"], "--harbor is not used by --env local"),
        (["--env", "harbor", "--setup-env", "PROXY"], "--setup-env is not used by --env harbor"),
        (
            ["--env", "harbor", "--no-host-network-config"],
            "--no-host-network-config is not used by --env harbor",
        ),
    ],
)
def test_run_refuses_an_option_its_environment_does_not_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "bench.tar.gz"
    code = main(["run", "--repo", str(tmp_path / "repo"), "--easy", "1", "--out", str(out), *argv])
    assert code == 2
    assert capsys.readouterr() == ("", f"error: {message}\n")
    assert not out.with_name("bench.run").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env", "harbor", "--setup-env", "PROXY"], "--setup-env is not used by --env harbor"),
        (
            ["--env", "harbor", "--no-host-network-config"],
            "--no-host-network-config is not used by --env harbor",
        ),
    ],
)
def test_eval_refuses_an_option_its_environment_does_not_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    results = tmp_path / "results"
    code = main(["eval", str(tmp_path / "nowhere"), "--results", str(results), "--agent", "nop",
                 *argv])  # fmt: skip
    assert code == 2
    assert capsys.readouterr() == ("", f"error: {message}\n")
    assert not results.exists()


# --- the process module -------------------------------------------------------------------------


def test_a_short_command_runs_without_input() -> None:
    result = run_captured([sys.executable, "-c", "import sys; print(sys.stdin.read() == '')"])
    assert (result.returncode, result.stdout) == (0, b"True\n")


def test_a_phase_is_killed_at_its_limit_and_its_log_capped(tmp_path: Path) -> None:
    script = "import sys, time; sys.stdout.write('x' * 5000); sys.stdout.flush(); time.sleep(60)"
    with (tmp_path / "phase.log").open("wb") as log:
        code, timed_out = run_phase(
            [sys.executable, "-c", script], env={}, output=log, timeout=1.0, log_limit=100
        )
    assert timed_out
    assert code < 0
    assert (
        tmp_path / "phase.log"
    ).read_bytes() == b"x" * 100 + b"\nselfbench: log cut at 100 bytes\n"


def test_logged_commands_are_in_the_interrupt_registry(tmp_path: Path) -> None:
    _children.allow()
    argv = [sys.executable, "-c", "import time; print('started', flush=True); time.sleep(60)"]
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    codes: list[int] = []
    waiting = threading.Thread(target=lambda: codes.extend(run_logged(
        [(argv, logs[0]), (argv, logs[1])], grace=1.0)))  # fmt: skip
    waiting.start()
    deadline = time.monotonic() + 30
    while not all(log.is_file() and log.read_bytes() for log in logs):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    try:
        assert _children.stop_all(grace=1.0) == 2
    finally:
        _children.allow()
    waiting.join(timeout=30)
    assert len(codes) == 2
    assert all(code < 0 for code in codes)
