"""The `harbor` validation environment: hand bundles to `harbor run`, read the verdicts back.

Harbor (0.25) loads a local dataset from one directory holding one task directory per entry
(`harbor run --path DIR`; harbor's `cli/jobs.py` and `models/job/config.py`) and runs one agent
per invocation (`--agent` takes a single name). So each validation runs Harbor twice, once with
its `nop` agent and once with `oracle`, over a tasks directory of symbolic links built under the
jobs dir, so no snapshot is copied.

A finished job directory (harbor's `job.py`, `models/trial/paths.py`, `trial/trial.py`):

    <jobs-dir>/<job-name>/        config.json  lock.json  result.json  job.log
      <trial-name>/               one per trial: `<task dir name>[:32]__<7 random chars>`
        config.json  lock.json  trial.log
        result.json               TrialResult: task_name (task.toml's `[task] name`, here
                                  `selfbench/<taskId>`), trial_name, agent_info.name,
                                  exception_info {exception_type, exception_message, ...} or null
        exception.txt             the traceback, when the trial raised
        agent/  artifacts/
        verifier/reward.json      what `tests/test.sh` wrote to /logs/verifier/reward.json
        verifier/test-stdout.txt  the verifier's output

A trial that raises (image build failure, timeout, no reward file) still writes `result.json`
with `exception_info`, and `harbor run` exits 0; it exits non-zero when the job itself cannot run
(a missing Docker daemon or cloud credentials fail its preflight).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from selfbench._fs import read_beneath, read_bytes
from selfbench._json import loads_strict
from selfbench.artifacts.compiled import LocatedTask, refuse_duplicates
from selfbench.artifacts.report import (
    Reward,
    RewardError,
    RunReport,
    TaskReport,
    parity_reason,
    read_reward,
)
from selfbench.environments.harbor import HarborOptions, launch_harbor
from selfbench.errors import HarborError, JsonError, translating
from selfbench.progress import Reporter, silent
from selfbench.rules import TASK_ID_PATTERN, describe_error, is_task_id

__all__ = [
    "AGENTS",
    "HARBOR_NAME",
    "HARBOR_TASK_PREFIX",
    "TRIAL_ERROR_CHARS",
    "Agent",
    "HarborError",
    "HarborOptions",
    "HarborRunner",
    "HarborTrial",
    "build_harbor_argv",
    "parse_harbor_job",
    "validate_with_harbor",
]

AGENTS = ("nop", "oracle")
"""Harbor's built-in agents that validation runs, in order."""
HARBOR_TASK_PREFIX = "selfbench/"
"""`[task] name` in task.toml is this prefix plus the task id (SPEC §5)."""

Agent = Literal["nop", "oracle"]

# A Harbor environment type (`modal`) or a custom import path (`package.module:ClassName`);
# never starts with `-`, so it cannot be read as an option.
_ENVIRONMENT_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")
HARBOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/@+-]*")
"""A Harbor agent or model name (`claude-code`, `anthropic/claude-sonnet-4-5`): never starts
with `-`, so it cannot be read as an option."""
TRIAL_ERROR_CHARS = 300
"""The most characters of a trial's exception a report keeps (one line, cut with `...`)."""
_REWARD = Path("verifier", "reward.json")
_VERIFIER_LOG = Path("verifier", "test-stdout.txt")
_RESULT = "result.json"
_TRIAL_LOG = "trial.log"


@dataclass(frozen=True, slots=True)
class HarborTrial:
    """One trial of a finished job: its reward, or why there is none."""

    task_id: str
    trial_name: str
    agent: str
    reward: Reward | None
    error: str | None
    """One line when `reward` is None: the trial's exception, or a bad or missing reward.json."""
    log: str
    """The verifier's output when it wrote any, else the trial directory."""


class _Exception(BaseModel):
    model_config = ConfigDict(frozen=True)

    exception_type: str
    exception_message: str


class _AgentInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str


class _TrialResult(BaseModel):
    """The fields of harbor's `TrialResult` (`models/trial/result.py`) that validation reads."""

    model_config = ConfigDict(frozen=True)

    task_name: str
    trial_name: str
    agent_info: _AgentInfo
    exception_info: _Exception | None = None


# --- the invocation -----------------------------------------------------------------------------


def _require_environment(environment: str) -> None:
    if not _ENVIRONMENT_RE.fullmatch(environment):
        raise HarborError(f"invalid harbor environment {environment!r}")


def build_harbor_argv(  # noqa: PLR0913 - harbor run's options, each a keyword
    tasks_dir: Path,
    *,
    agent: str,
    model: str | None = None,
    environment: str,
    jobs_dir: Path,
    job_name: str,
    harbor: str = "harbor",
    concurrency: int = 1,
) -> list[str]:
    """The `harbor run` argument list for one agent over a directory of tasks: validation's
    `nop` or `oracle` (no model), or any Harbor agent with its model (`selfbench eval`).

    Every value is passed as `--option=value` and every path is absolute, so no value can be
    taken for an option whatever it holds.

    Raises:
        HarborError: an unknown agent (without a model), an agent, model, environment or job
            name that is not a plain name, or a concurrency below 1.
    """
    if model is None and agent not in AGENTS:
        raise HarborError(f"unknown harbor agent {agent!r}: expected nop or oracle")
    for label, name in (("agent", agent), ("model", model)):
        if name is not None and not HARBOR_NAME.fullmatch(name):
            raise HarborError(f"invalid harbor {label} {name!r}")
    _require_environment(environment)
    if not is_task_id(job_name):
        raise HarborError(f"invalid harbor job name {job_name!r}: must match {TASK_ID_PATTERN}")
    if concurrency < 1:
        raise HarborError(f"concurrency must be at least 1, not {concurrency}")
    return [
        harbor,
        "run",
        f"--path={tasks_dir.absolute()}",
        f"--agent={agent}",
        *([f"--model={model}"] if model is not None else []),
        f"--env={environment}",
        f"--jobs-dir={jobs_dir.absolute()}",
        f"--job-name={job_name}",
        f"--n-concurrent={concurrency}",
        "--n-attempts=1",  # one trial per task, so a task's verdict is one reward.json
        "--max-retries=0",
        "--yes",  # never prompt: stdin is closed
        "--quiet",
    ]


# --- the job directory --------------------------------------------------------------------------


def _read_json(path: Path) -> object:
    data = read_bytes(path, error=HarborError)
    try:
        return loads_strict(data, source=str(path))
    except JsonError as exc:
        raise HarborError(str(exc)) from exc


def _trial_result(path: Path) -> _TrialResult:
    try:
        return _TrialResult.model_validate(_read_json(path))
    except ValidationError as exc:
        error = exc.errors()[0]
        problem = describe_error(error, root="(root)", what=error["type"])
        raise HarborError(f"{path}: not a harbor trial result: {problem}") from exc


def _one_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= TRIAL_ERROR_CHARS else line[: TRIAL_ERROR_CHARS - 3] + "..."


def _reward_or_error(trial_dir: Path, result: _TrialResult) -> tuple[Reward | None, str | None]:
    path = trial_dir / _REWARD
    # A complete reward.json is the verdict even if the trial raised afterwards (say, while
    # stopping its environment); only without one does the exception explain the failure.
    # The verifier's directory is the container's: never follow a link it holds.
    try:
        data = read_beneath(trial_dir, _REWARD.as_posix(), error=RewardError, limit=1 << 16)
        if data is not None:
            return read_reward(data, str(path)), None
    except RewardError as exc:
        return None, str(exc)
    if result.exception_info is not None:
        info = result.exception_info
        detail = _one_line(info.exception_message)
        message = f"{info.exception_type}: {detail}" if detail else info.exception_type
        return None, f"harbor trial {result.trial_name} failed: {message}"
    return None, "the verifier wrote no reward.json"


def _read_trial(trial_dir: Path) -> HarborTrial:
    path = trial_dir / _RESULT
    if not path.is_file():
        raise HarborError(f"{path}: missing: the trial did not finish")
    result = _trial_result(path)
    task_id = result.task_name.removeprefix(HARBOR_TASK_PREFIX)
    if task_id == result.task_name or not is_task_id(task_id):
        raise HarborError(f"{path}: task {result.task_name!r} is not a selfbench task")
    reward, error = _reward_or_error(trial_dir, result)
    log = trial_dir / _VERIFIER_LOG
    return HarborTrial(
        task_id=task_id,
        trial_name=result.trial_name,
        agent=result.agent_info.name,
        reward=reward,
        error=error,
        log=str(log if log.is_file() else trial_dir),
    )


def _trial_dirs(job_dir: Path) -> Iterator[Path]:
    with translating(HarborError, f"read the harbor job {job_dir}"):
        entries = sorted(job_dir.iterdir())
    # Harbor keeps its own caches in hidden directories (`.sources` for regrades).
    return (entry for entry in entries if entry.is_dir() and not entry.name.startswith("."))


def parse_harbor_job(job_dir: Path, *, agent: Agent | None = None) -> dict[str, HarborTrial]:
    """Read a finished job directory: each task id's one trial, sorted by task id.

    Raises:
        HarborError: the directory or a trial's `result.json` cannot be read, a trial is not a
            selfbench task or ran another agent than `agent` (when given), or a task has more
            than one trial.
    """
    trials: dict[str, HarborTrial] = {}
    seen: dict[str, str] = {}
    for trial_dir in _trial_dirs(job_dir):
        trial = _read_trial(trial_dir)
        if agent is not None and trial.agent != agent:
            path = trial_dir / _RESULT
            raise HarborError(f"{path}: the trial ran agent {trial.agent!r}, not {agent!r}")
        if trial.task_id in trials:
            names = f"{seen[trial.task_id]}, {trial_dir.name}"
            raise HarborError(f"{job_dir}: task {trial.task_id} has more than one trial: {names}")
        trials[trial.task_id], seen[trial.task_id] = trial, trial_dir.name
    return dict(sorted(trials.items()))


# --- running it ---------------------------------------------------------------------------------


def _link_tasks(tasks: Sequence[LocatedTask], tasks_dir: Path) -> None:
    """Link each bundle into `tasks_dir/<taskId>`, the local dataset `harbor run --path` reads."""
    tasks_dir.mkdir()
    for task in tasks:
        # Harbor resolves a task path before it builds, so its build context is the real bundle.
        link = tasks_dir / task.definition.taskId
        link.symlink_to(task.bundle.resolve(), target_is_directory=True)


def _new_run_dir(jobs_dir: Path, tasks: Sequence[LocatedTask]) -> Path:
    """`jobs_dir/selfbench-<UTC time>-<random>/` with its `tasks/` linked."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    with translating(HarborError, f"prepare the harbor run in {jobs_dir}"):
        jobs_dir.mkdir(parents=True, exist_ok=True)
        run_dir = Path(tempfile.mkdtemp(prefix=f"selfbench-{stamp}-", dir=jobs_dir)).absolute()
        _link_tasks(tasks, run_dir / "tasks")
    return run_dir


def _last_line(log: Path) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _run_both(commands: dict[Agent, list[str]], run_dir: Path) -> None:
    """Run both jobs at once; both are waited for, then the first failure is raised."""
    harbor = next(iter(commands.values()))[0]
    logged = [(argv, run_dir / f"harbor-{agent}.log") for agent, argv in commands.items()]
    with translating(HarborError, f"run harbor: {harbor}"):
        codes = dict(zip(commands, launch_harbor(logged), strict=True))
    for agent, code in codes.items():
        if code != 0:
            last = _last_line(run_dir / f"harbor-{agent}.log") or "no output"
            raise HarborError(f"harbor run failed (exit {code}): {last}")


def _missing(agent: str, trial: HarborTrial | None) -> str | None:
    if trial is None:
        return f"{agent}: harbor ran no trial for this task"
    return None if trial.reward is not None else f"{agent}: {trial.error}"


def _reason(nop: HarborTrial | None, oracle: HarborTrial | None) -> str | None:
    """parity_reason's verdict, naming Harbor's own failure where a reward is missing."""
    if problem := _missing("nop", nop):
        return problem
    reason = parity_reason(nop.reward if nop else None, oracle.reward if oracle else None)
    if reason is not None and reason.startswith("oracle:"):
        return _missing("oracle", oracle) or reason
    return reason


def _run_report(trial: HarborTrial | None, job_dir: Path) -> RunReport:
    if trial is None:
        return RunReport(reward=None, log=str(job_dir))
    return RunReport(reward=trial.reward, log=trial.log)


def _task_report(
    task_id: str, jobs: dict[Agent, dict[str, HarborTrial]], run_dir: Path
) -> TaskReport:
    nop, oracle = jobs["nop"].get(task_id), jobs["oracle"].get(task_id)
    reason = _reason(nop, oracle)
    return TaskReport(
        task_id=task_id,
        accepted=reason is None,
        reason=reason,
        nop=_run_report(nop, run_dir / "nop"),
        oracle=_run_report(oracle, run_dir / "oracle"),
        environment="harbor",
    )


def _copy_log(source: str, target: Path) -> str:
    """Copy a trial's log (the verifier's output, else Harbor's `trial.log`) to `target`.

    Returns the copy's path, or `source` when the trial left no log file.
    """
    path = Path(source)
    if path.is_dir():
        path /= _TRIAL_LOG
    try:  # the verifier's log is the container's: never through a link
        data = read_beneath(path.parent, path.name, error=HarborError)
    except HarborError as exc:
        data = f"selfbench: {exc}\n".encode()
    if data is None:
        return source
    with translating(HarborError, f"copy the harbor log to {target}"):
        target.write_bytes(data)
    return str(target)


def _copy_logs(report: TaskReport, logs: Path) -> TaskReport:
    """The report with each run's log copied to `<logs>/<taskId>/<agent>.log`."""
    directory = logs / report.task_id
    shutil.rmtree(directory, ignore_errors=True)
    with translating(HarborError, f"create {directory}"):
        directory.mkdir(parents=True)
    nop, oracle = report.nop, report.oracle
    return replace(
        report,
        nop=replace(nop, log=_copy_log(nop.log, directory / "nop.log")),
        oracle=replace(oracle, log=_copy_log(oracle.log, directory / "oracle.log")),
    )


def validate_with_harbor(
    tasks: Sequence[LocatedTask],
    *,
    options: HarborOptions,
    concurrency: int = 1,
) -> list[TaskReport]:
    """Validate located tasks with Harbor's `nop` and `oracle` agents; one report each, in order.

    Both jobs run at once, each with up to `concurrency` trials, in a new directory
    `jobs_dir/selfbench-<UTC time>-<random>/` holding `tasks/` (links to the bundles), the job
    directories `nop/` and `oracle/`, and Harbor's console output `harbor-<agent>.log`.

    Raises:
        HarborError: no tasks, Harbor cannot be started or exits non-zero (preflight: no Docker
            daemon, no credentials), a job directory cannot be read, or a log cannot be copied.
        BundleError: a task is given twice.
    """
    if not tasks:
        raise HarborError("no bundles to validate")
    _require_environment(options.environment)  # before the run directory is made
    refuse_duplicates(tasks)
    run_dir = _new_run_dir(options.jobs_dir, tasks)
    commands: dict[Agent, list[str]] = {
        agent: build_harbor_argv(
            run_dir / "tasks",
            agent=agent,
            environment=options.environment,
            jobs_dir=run_dir,
            job_name=agent,
            harbor=options.harbor,
            concurrency=concurrency,
        )
        for agent in ("nop", "oracle")
    }
    _run_both(commands, run_dir)
    jobs = {agent: parse_harbor_job(run_dir / agent, agent=agent) for agent in commands}
    reports = [_task_report(task.definition.taskId, jobs, run_dir) for task in tasks]
    if options.logs is not None:
        reports = [_copy_logs(report, options.logs) for report in reports]
    return reports


@dataclass(frozen=True, slots=True)
class HarborRunner:
    """The `harbor` environment as a `Runner`: `harbor run`, with its own options."""

    options: HarborOptions = field(default_factory=HarborOptions)

    @property
    def environment(self) -> str:
        return "harbor"

    def check(self) -> None:
        """Refuse an environment that is not a plain name; Harbor runs its own preflight.

        Raises:
            HarborError: `options.environment` could be read as an option.
        """
        _require_environment(self.options.environment)

    def run(
        self, tasks: Sequence[LocatedTask], *, jobs: int = 1, reporter: Reporter = silent
    ) -> list[TaskReport]:
        """Validate located tasks with Harbor, `jobs` trials at a time; see `validate_with_harbor`.

        Raises:
            HarborError: see `validate_with_harbor`.
        """
        reports = validate_with_harbor(tasks, options=self.options, concurrency=jobs)
        for report in reports:
            reporter.candidate_finished(
                report.task_id, accepted=report.accepted, reason=report.reason
            )
        return reports
