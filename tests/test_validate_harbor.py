"""The `harbor` validation environment, against the real Harbor (harbor==0.25.0, its own venv).

There is no Docker engine here, and every other Harbor environment is a cloud service. Harbor
accepts a custom environment class as `--env package.module:ClassName`, so the end-to-end run
below is the real `harbor run` (its CLI, Job, Trial, the real `nop` and `oracle` agents, its
verifier and its result writing) with one stand-in: `HostDirEnvironment`, in which a host
directory plays the container. It runs only the task's own `solve.sh` and `test.sh` (with
`$FAKE_ROOT` for the container root) and answers every other command with success. The job
directories the parser tests read are the ones that run produced. The tasks are small
hand-written Harbor tasks in selfbench's bundle layout whose `test.sh` writes a chosen
reward.json: the compiled verifier needs a real container.

Failure is real too: `--env daytona` without credentials fails Harbor's own preflight.

Each task is located the way `validate` locates every task (a definition beside the bundle whose
digest, and the patches' digests, the manifest records), so the runner is only ever handed a
task whose definition is its own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harbor_env import harbor_venv
from helpers import definition
from selfbench.artifacts.report import TaskReport
from selfbench.bundle import build_bundle_manifest, render_bundle_manifest
from selfbench.cli import main
from selfbench.contract import parse_definition
from selfbench.errors import BundleError
from selfbench.validate import validate
from selfbench.validate.harbor import (
    TRIAL_ERROR_CHARS,
    HarborError,
    HarborOptions,
    HarborRunner,
    HarborTrial,
    build_harbor_argv,
    parse_harbor_job,
    validate_with_harbor,
)

pytestmark = pytest.mark.harbor

FAKE_ENVIRONMENT = '''
"""A Harbor environment where a host directory plays the container (test stand-in)."""
import os, re, shutil, subprocess, uuid
from pathlib import Path
from harbor.environments.base import BaseEnvironment, ExecResult

# Harbor runs scripts as `(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1`.
SCRIPT = re.compile(r"^\\(?'?(/(?:tests|solution)/[^' )]+)'?\\)?(?: > '?(/logs/[^' ]+)'? 2>&1)?$")

class HostDirEnvironment(BaseEnvironment):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._root = Path(os.environ["FAKE_ROOTS"]) / uuid.uuid4().hex
        (self._root / "app").mkdir(parents=True)

    @staticmethod
    def type():
        return "host-dir"

    def _validate_definition(self):
        pass

    def _host(self, path):
        return self._root / str(path).lstrip("/")

    async def start(self, force_build):
        if (self.environment_dir / "fail-build").exists():
            raise RuntimeError("image build failed: fake-build-error")

    async def stop(self, delete):
        pass

    async def upload_file(self, source_path, target_path):
        self._host(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source_path, self._host(target_path))

    async def upload_dir(self, source_dir, target_dir):
        shutil.copytree(source_dir, self._host(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path, target_path):
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(self._host(source_path), target_path)

    async def download_dir(self, source_dir, target_dir):
        if self._host(source_dir).is_dir():
            shutil.copytree(self._host(source_dir), target_dir, dirs_exist_ok=True)

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        match = SCRIPT.match(command.strip())
        if match is None:
            return ExecResult(stdout="", stderr="", return_code=0)
        done = subprocess.run(
            ["bash", str(self._host(match.group(1)))],
            env={"FAKE_ROOT": str(self._root), "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, check=False,
        )
        if match.group(2):
            self._host(match.group(2)).parent.mkdir(parents=True, exist_ok=True)
            self._host(match.group(2)).write_text(done.stdout + done.stderr)
        return ExecResult(stdout=done.stdout, stderr=done.stderr, return_code=done.returncode)
'''
FAKE_ENV = "selfbench_fake_env:HostDirEnvironment"

NOP_OK = {
    "reward": 0,
    "patch_applied": 1,
    "fail_to_pass": 0,
    "pass_to_pass": 1,
    "deterministic": 0,
    "setup_completed": 1,
    "fail_to_pass_exit_code": 1,
    "fail_to_pass_repeat_exit_code": -1,
    "pass_to_pass_exit_code": 0,
    "forged": 0,
}
ORACLE_OK = {
    "reward": 1,
    "patch_applied": 1,
    "fail_to_pass": 1,
    "pass_to_pass": 1,
    "deterministic": 1,
    "setup_completed": 1,
    "fail_to_pass_exit_code": 0,
    "fail_to_pass_repeat_exit_code": 0,
    "pass_to_pass_exit_code": 0,
    "forged": 0,
}
# task id → (reward.json nop writes, the one oracle writes; None: none); "broken-build" never
# starts. "good" lives under a directory whose name looks like options.
CASES: dict[str, tuple[Any, Any]] = {
    "good": (NOP_OK, ORACLE_OK),
    "weak": ({**NOP_OK, "fail_to_pass": 1, "fail_to_pass_exit_code": 0}, ORACLE_OK),
    "flaky": (NOP_OK, {**ORACLE_OK, "reward": 0, "deterministic": 0}),
    "silent": (None, ORACLE_OK),
    "oracle-silent": (NOP_OK, None),
    "partial": ({"reward": 0}, ORACLE_OK),
    "broken-build": (NOP_OK, ORACLE_OK),
}
TRIAL_NAME = re.compile(r"harbor-task__[A-Za-z0-9]{7}")


def reward_script(reward: Any) -> str:
    """Shell lines that write `reward` (or nothing) to the verifier's reward.json."""
    if reward is None:
        return "true"
    return f"cat > \"$FAKE_ROOT/logs/verifier/reward.json\" <<'EOF'\n{json.dumps(reward)}\nEOF"


def write_task(root: Path, task_id: str, nop: Any, oracle: Any) -> Path:
    """A small Harbor task in selfbench's bundle layout: `root/<task_id>/harbor-task`, with its
    definition beside it and a manifest recording the three digests."""
    parent = root / ("--env=docker --yes" if task_id == "good" else task_id)
    bundle = parent / "harbor-task"
    for directory in ("environment", "tests", "solution"):
        (bundle / directory).mkdir(parents=True)
    (bundle / "task.toml").write_text(
        f'schema_version = "1.4"\n[task]\nname = "selfbench/{task_id}"\n'
        "[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 60.0\n"
    )
    (bundle / "instruction.md").write_text("Make it work.\n")
    (bundle / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\n")
    if task_id == "broken-build":
        (bundle / "environment" / "fail-build").write_text("")
    (bundle / "solution" / "solve.sh").write_text('#!/bin/bash\ntouch "$FAKE_ROOT/app/solved"\n')
    (bundle / "tests" / "test.sh").write_text(
        '#!/bin/bash\nmkdir -p "$FAKE_ROOT/logs/verifier"\necho "verifier ran"\n'
        f'if [ -f "$FAKE_ROOT/app/solved" ]; then\n{reward_script(oracle)}\n'
        f"else\n{reward_script(nop)}\nfi\n"
    )
    (bundle / "tests" / "test.patch").write_bytes(b"test patch\n")
    (bundle / "solution" / "gold.patch").write_bytes(b"gold patch\n")
    value = definition(taskId=task_id)
    (parent / "definition.json").write_text(json.dumps(value, indent=2) + "\n")
    parsed = parse_definition(value).definition
    manifest = build_bundle_manifest(
        parsed, b"test patch\n", b"gold patch\n", snapshot_sha256="d" * 64
    )
    (bundle / ".selfbench-manifest.json").write_bytes(render_bundle_manifest(manifest))
    return parent if task_id == "good" else bundle


def runner(jobs_dir: Path, **options: Any) -> HarborRunner:
    """A Harbor runner over `jobs_dir` with `options`."""
    return HarborRunner(HarborOptions(jobs_dir=jobs_dir, **options))


@pytest.fixture(scope="module")
def harbor() -> str:
    """The real `harbor` executable."""
    return str(harbor_venv() / "bin" / "harbor")


@pytest.fixture(scope="module")
def harbor_run(
    tmp_path_factory: pytest.TempPathFactory, harbor: str
) -> tuple[list[TaskReport], Path]:
    """One real harbor validation over every case, logs copied; the reports and the run dir."""
    root = tmp_path_factory.mktemp("harbor-run")
    (root / "python").mkdir()
    (root / "python" / "selfbench_fake_env.py").write_text(FAKE_ENVIRONMENT)
    (root / "fake-roots").mkdir()
    bundles = [write_task(root / "bundles", name, *rewards) for name, rewards in CASES.items()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(root / "python"))
        patch.setenv("FAKE_ROOTS", str(root / "fake-roots"))
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
        harbor_runner = runner(
            root / "jobs", environment=FAKE_ENV, harbor=harbor, logs=root / "logs"
        )
        reports = validate(bundles, runner=harbor_runner, jobs=4)
    (run_dir,) = (root / "jobs").iterdir()
    return reports, run_dir


@pytest.fixture(scope="module")
def trials(harbor_run: tuple[list[TaskReport], Path]) -> dict[str, dict[str, HarborTrial]]:
    """Both jobs parsed: agent → task id → trial."""
    run_dir = harbor_run[1]
    return {agent: parse_harbor_job(run_dir / agent) for agent in ("nop", "oracle")}


# --- the argument list --------------------------------------------------------------------------


def test_argv_is_exact(tmp_path: Path) -> None:
    argv = build_harbor_argv(
        tmp_path / "tasks",
        agent="nop",
        environment="modal",
        jobs_dir=tmp_path / "jobs",
        job_name="nop",
        harbor="/opt/harbor/bin/harbor",
        concurrency=8,
    )
    assert argv == [
        "/opt/harbor/bin/harbor",
        "run",
        f"--path={tmp_path}/tasks",
        "--agent=nop",
        "--env=modal",
        f"--jobs-dir={tmp_path}/jobs",
        "--job-name=nop",
        "--n-concurrent=8",
        "--n-attempts=1",
        "--max-retries=0",
        "--yes",
        "--quiet",
    ]


def test_argv_of_an_agent_with_a_model(tmp_path: Path) -> None:
    """`selfbench eval`'s Harbor agents use the same argument list, with `--model`."""
    argv = build_harbor_argv(
        tmp_path / "tasks",
        agent="claude-code",
        model="anthropic/claude-sonnet-4-5",
        environment="docker",
        jobs_dir=tmp_path / "jobs",
        job_name="job",
    )
    assert argv[3:6] == [
        "--agent=claude-code",
        "--model=anthropic/claude-sonnet-4-5",
        "--env=docker",
    ]
    assert len(argv) == 13


def test_hostile_paths_stay_values_for_the_real_harbor(
    tmp_path: Path, harbor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-p").mkdir()
    argv = build_harbor_argv(
        Path("-p"),
        agent="nop",
        environment="daytona",
        jobs_dir=Path("--yes --env=docker"),
        job_name="nop",
        harbor=harbor,
        concurrency=3,
    )
    assert argv[2:6] == [
        f"--path={tmp_path}/-p",
        "--agent=nop",
        "--env=daytona",
        f"--jobs-dir={tmp_path}/--yes --env=docker",
    ]
    # Harbor prints the job configuration it parsed (fields left at their defaults omitted).
    result = subprocess.run([*argv, "--print-config"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "job_name": "nop",
        "jobs_dir": f"{tmp_path}/--yes --env=docker",
        "n_concurrent_trials": 3,
        "quiet": True,
        "environment": {"type": "daytona"},
        "agents": [{"name": "nop"}],
        "datasets": [{"path": f"{tmp_path}/-p"}],
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"agent": "terminus-2"}, "unknown harbor agent 'terminus-2': expected nop or oracle"),
        ({"environment": "-e"}, "invalid harbor environment '-e'"),
        ({"environment": "modal --yes"}, "invalid harbor environment 'modal --yes'"),
        (
            {"job_name": "--yes"},
            "invalid harbor job name '--yes': must match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
        ),
        ({"concurrency": 0}, "concurrency must be at least 1, not 0"),
        ({"agent": "-x", "model": "m"}, "invalid harbor agent '-x'"),
        ({"agent": "codex", "model": "--yes"}, "invalid harbor model '--yes'"),
    ],
)
def test_argv_refuses_values_that_are_not_plain_names(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {
        "agent": "nop",
        "environment": "docker",
        "jobs_dir": tmp_path,
        "job_name": "nop",
        **options,
    }
    with pytest.raises(HarborError) as error:
        build_harbor_argv(tmp_path, **arguments)
    assert str(error.value) == message


# --- end to end with the real harbor ------------------------------------------------------------


def test_run_directory_layout(harbor_run: tuple[list[TaskReport], Path]) -> None:
    run_dir = harbor_run[1]
    assert run_dir.name.startswith("selfbench-")
    names = sorted(path.name for path in run_dir.iterdir())
    assert names == ["harbor-nop.log", "harbor-oracle.log", "nop", "oracle", "tasks"]
    assert sorted(path.name for path in (run_dir / "tasks").iterdir()) == sorted(CASES)
    assert (run_dir / "tasks" / "good").resolve().name == "harbor-task"
    for agent in ("nop", "oracle"):
        job = run_dir / agent
        assert {"config.json", "result.json", "job.log"} <= {path.name for path in job.iterdir()}


def test_reports_hold_the_verdicts(
    harbor_run: tuple[list[TaskReport], Path], trials: dict[str, dict[str, HarborTrial]]
) -> None:
    reports = harbor_run[0]
    nop, oracle = trials["nop"], trials["oracle"]

    def trial_dir(agent: str, task_id: str) -> Path:
        return harbor_run[1] / agent / trials[agent][task_id].trial_name

    def no_reward(agent: str, task_id: str) -> str:
        where = trial_dir(agent, task_id) / "verifier"
        detail = f"No reward file found at {where}/reward.txt or {where}/reward.json"
        if len(detail) > TRIAL_ERROR_CHARS:  # a long temporary directory's path is cut
            detail = detail[: TRIAL_ERROR_CHARS - 3] + "..."
        name = trials[agent][task_id].trial_name
        return f"{agent}: harbor trial {name} failed: RewardFileNotFoundError: {detail}"

    partial = trial_dir("nop", "partial") / "verifier" / "reward.json"
    assert {report.task_id: report.reason for report in reports} == {
        "good": None,
        "weak": "nop: fail-to-pass passed without the solution",
        "flaky": "oracle: fail-to-pass failed on the repeat run (not deterministic)",
        "silent": no_reward("nop", "silent"),
        "oracle-silent": no_reward("oracle", "oracle-silent"),
        "partial": f"nop: {partial}: not a selfbench reward.json: patch_applied: Field required",
        "broken-build": (
            f"nop: harbor trial {nop['broken-build'].trial_name} failed: "
            "RuntimeError: image build failed: fake-build-error"
        ),
    }
    assert [report.task_id for report in reports] == list(CASES)
    assert [report.accepted for report in reports] == [True] + [False] * 6
    assert {report.environment for report in reports} == {"harbor"}
    good = reports[0].to_json()
    logs = harbor_run[1].parents[1] / "logs"
    assert good["nop"] == {**NOP_OK, "log": str(logs / "good" / "nop.log")}
    assert good["oracle"] == {**ORACLE_OK, "log": str(logs / "good" / "oracle.log")}
    assert Path(oracle["good"].log) == trial_dir("oracle", "good") / "verifier" / "test-stdout.txt"
    assert Path(reports[0].oracle.log).read_text() == "verifier ran\n"
    # Without the verifier's output, the log copied is Harbor's own trial.log.
    assert nop["broken-build"].log == str(trial_dir("nop", "broken-build"))
    assert reports[-1].nop.log == str(logs / "broken-build" / "nop.log")
    assert Path(reports[-1].nop.log).read_text().splitlines()[0] == (
        f"Trial {nop['broken-build'].trial_name} failed: image build failed: fake-build-error"
    )


def test_parser_reads_every_trial(trials: dict[str, dict[str, HarborTrial]]) -> None:
    for agent, by_task in trials.items():
        assert list(by_task) == sorted(CASES)
        assert {trial.agent for trial in by_task.values()} == {agent}
        assert all(TRIAL_NAME.fullmatch(trial.trial_name) for trial in by_task.values())
    assert trials["oracle"]["good"].reward is not None
    assert trials["oracle"]["good"].reward.model_dump() == ORACLE_OK
    assert trials["oracle"]["good"].error is None
    assert trials["nop"]["silent"].reward is None


def test_real_harbor_failing_its_preflight_is_one_line(
    tmp_path: Path, harbor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DAYTONA_API_KEY", "DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    with pytest.raises(HarborError) as error:
        validate([bundle], runner=runner(tmp_path, environment="daytona", harbor=harbor))
    assert str(error.value) == (
        "harbor run failed (exit 1): Daytona requires either DAYTONA_API_KEY, or both "
        "DAYTONA_JWT_TOKEN and DAYTONA_ORGANIZATION_ID, to be set. Please set the required "
        "environment variables and try again."
    )


def test_missing_harbor_executable(tmp_path: Path) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    missing = tmp_path / "no-harbor"
    with pytest.raises(HarborError) as error:
        validate([bundle], runner=runner(tmp_path, harbor=str(missing)))
    assert str(error.value) == f"cannot run harbor: {missing}: No such file or directory"


# --- bad input: refused before Harbor is called -------------------------------------------------


@pytest.fixture
def spy(tmp_path: Path) -> tuple[str, Path]:
    """A `harbor` executable that only records that it was called, and the record's path."""
    record = tmp_path / "harbor-was-called"
    script = tmp_path / "spy-harbor"
    script.write_text(f"#!/bin/sh\ntouch '{record}'\n")
    script.chmod(0o755)
    return str(script), record


def refused(paths: list[Path], spy: tuple[str, Path], jobs: Path, **options: Any) -> str:
    """The one-line refusal of validating `paths` with Harbor; Harbor never ran."""
    with pytest.raises(BundleError) as error:
        validate(paths, runner=runner(jobs, harbor=spy[0]), **options)
    assert not spy[1].exists()
    assert not jobs.exists()
    return str(error.value)


def test_not_a_bundle(tmp_path: Path, spy: tuple[str, Path]) -> None:
    message = refused([tmp_path], spy, tmp_path / "jobs")
    assert message == f"{tmp_path}: not a bundle (no task.toml) or a collect directory"


def test_task_given_twice(tmp_path: Path, spy: tuple[str, Path]) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    message = refused([bundle, bundle.parent], spy, tmp_path / "jobs")
    assert message == f"task weak given twice: {bundle}, {bundle}"


BAD_MANIFESTS: dict[str, tuple[dict[str, Any] | None, str]] = {
    "escaping-task-id": (
        {"taskId": "../x"},
        "taskId '../x' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    ),
    "not-an-object": (None, "not a selfbench manifest (a JSON object)"),
    "numeric-task-id": ({"taskId": 3}, "taskId must be a string"),
}


@pytest.mark.parametrize("case", BAD_MANIFESTS)
def test_a_bad_manifest_is_refused(tmp_path: Path, spy: tuple[str, Path], case: str) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    path = bundle / ".selfbench-manifest.json"
    changes, message = BAD_MANIFESTS[case]
    value = [] if changes is None else {**json.loads(path.read_bytes()), **changes}
    path.write_text(json.dumps(value))
    assert refused([bundle], spy, tmp_path / "jobs") == f"{path}: {message}"


def test_a_definition_that_is_not_the_bundles_own_is_refused(
    tmp_path: Path, spy: tuple[str, Path]
) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    other = tmp_path / "repaired.json"
    other.write_text(json.dumps(definition(taskId="weak", testCommand="pytest -x {tests}")))
    message = refused([bundle], spy, tmp_path / "jobs", definition=other)
    assert message == (
        f"{other}: not the definition bundle weak was compiled from"
        " (refresh the bundle after a repair)"
    )


def test_a_changed_gold_patch_is_refused(tmp_path: Path, spy: tuple[str, Path]) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    (bundle / "solution" / "gold.patch").write_bytes(b"another patch\n")
    assert refused([bundle], spy, tmp_path / "jobs") == (
        f"{bundle}/solution/gold.patch: changed since the bundle was compiled"
        " (goldPatchSha256 differs; recompile or refresh it)"
    )


def test_the_cli_locates_a_named_definition_for_harbor(
    tmp_path: Path, spy: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    other = tmp_path / "repaired.json"
    other.write_text(json.dumps(definition(taskId="weak", testCommand="pytest -x {tests}")))
    argv = ["validate", str(bundle), "--env", "harbor", "--harbor", spy[0]]
    jobs = ["--jobs-dir", str(tmp_path / "jobs"), "--definition", str(other)]
    assert main([*argv, *jobs]) == 2
    assert capsys.readouterr().err == (
        f"error: {other}: not the definition bundle weak was compiled from"
        " (refresh the bundle after a repair)\n"
    )
    assert not spy[1].exists()
    assert not (tmp_path / "jobs").exists()


def test_an_environment_that_is_not_a_plain_name_is_refused_first(tmp_path: Path) -> None:
    with pytest.raises(HarborError) as error:
        validate([tmp_path / "nowhere"], runner=runner(tmp_path / "jobs", environment="-e"))
    assert str(error.value) == "invalid harbor environment '-e'"
    assert not (tmp_path / "jobs").exists()


def test_no_bundles(tmp_path: Path) -> None:
    with pytest.raises(HarborError) as error:
        validate_with_harbor([], options=HarborOptions(jobs_dir=tmp_path))
    assert str(error.value) == "no bundles to validate"


# --- a damaged job directory: one line naming the file ------------------------------------------


@pytest.fixture
def job_copy(harbor_run: tuple[list[TaskReport], Path], tmp_path: Path) -> Path:
    """A copy of the real nop job directory, to damage."""
    return Path(shutil.copytree(harbor_run[1] / "nop", tmp_path / "nop"))


def result_of(job: Path, task_id: str) -> Path:
    """The result.json of the task's trial in a job directory."""
    return next(
        path
        for path in sorted(job.glob("*/result.json"))
        if json.loads(path.read_text())["task_name"] == f"selfbench/{task_id}"
    )


def test_result_json_not_json(job_copy: Path) -> None:
    path = result_of(job_copy, "good")
    path.write_text("{")
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job_copy)
    message = "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2"
    assert str(error.value) == f"{path}: {message}"


def test_result_json_without_task_name(job_copy: Path) -> None:
    path = result_of(job_copy, "good")
    result = json.loads(path.read_text())
    del result["task_name"]
    path.write_text(json.dumps(result))
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job_copy)
    assert str(error.value) == f"{path}: not a harbor trial result: task_name: missing"


def test_result_json_of_another_task(job_copy: Path) -> None:
    path = result_of(job_copy, "good")
    result = json.loads(path.read_text())
    result["task_name"] = "terminal-bench/hello"
    path.write_text(json.dumps(result))
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job_copy)
    assert str(error.value) == f"{path}: task 'terminal-bench/hello' is not a selfbench task"


def test_unfinished_trial(job_copy: Path) -> None:
    path = result_of(job_copy, "good")
    path.unlink()
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job_copy)
    assert str(error.value) == f"{path}: missing: the trial did not finish"


def test_two_trials_of_one_task(job_copy: Path) -> None:
    trial = result_of(job_copy, "good").parent
    shutil.copytree(trial, job_copy / "zz-copy")
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job_copy)
    message = f"{job_copy}: task good has more than one trial: {trial.name}, zz-copy"
    assert str(error.value) == message


def test_missing_job_directory(tmp_path: Path) -> None:
    with pytest.raises(HarborError) as error:
        parse_harbor_job(tmp_path / "nope")
    message = f"cannot read the harbor job {tmp_path}/nope: No such file or directory"
    assert str(error.value) == message


def test_hidden_directories_are_not_trials(job_copy: Path) -> None:
    (job_copy / ".sources" / "x").mkdir(parents=True)
    assert list(parse_harbor_job(job_copy)) == sorted(CASES)


def test_trial_of_another_agent(harbor_run: tuple[list[TaskReport], Path]) -> None:
    job = harbor_run[1] / "oracle"
    with pytest.raises(HarborError) as error:
        parse_harbor_job(job, agent="nop")
    path = min(job.glob("*/result.json"))
    assert str(error.value) == f"{path}: the trial ran agent 'oracle', not 'nop'"


def test_jobs_dir_that_cannot_be_created(tmp_path: Path) -> None:
    bundle = write_task(tmp_path / "bundles", "weak", NOP_OK, ORACLE_OK)
    (tmp_path / "file").write_text("")
    with pytest.raises(HarborError) as error:
        validate([bundle], runner=runner(tmp_path / "file" / "jobs"))
    message = f"cannot prepare the harbor run in {tmp_path}/file/jobs: Not a directory"
    assert str(error.value) == message
