"""Harbor agents (`NAME=harbor:AGENT:MODEL`): `harbor run` over the tasks, one job per trial
number, and each trial's result read back from the job directory.

The job layout is the one `selfbench.validate.harbor` documents and parses; beyond the reward
this reads, leniently, the agent's run time (`agent_execution`) and its token and cost counts
(`agent_result.n_input_tokens`, `n_output_tokens`, `cost_usd`) from the trial's `result.json`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from selfbench.environments.harbor import HarborOptions, launch_harbor
from selfbench.errors import os_reason
from selfbench.evaluate.agents import AgentSpec, Usage
from selfbench.evaluate.bench import BenchTask
from selfbench.evaluate.classify import TrialFacts
from selfbench.validate.harbor import (
    HarborError,
    HarborTrial,
    build_harbor_argv,
    parse_harbor_job,
)

__all__ = [
    "HARBOR_NETWORK",
    "HarborOutcome",
    "harbor_usage",
    "run_harbor_trials",
]

HARBOR_NETWORK = "the Harbor environment's (the task's allow-list where it enforces one)"
_TIMEOUT_ERRORS = ("AgentTimeoutError",)


@dataclass(frozen=True, slots=True)
class HarborOutcome:
    """One Harbor trial as an evaluation records it."""

    facts: TrialFacts
    agent_seconds: float | None
    usage: Usage
    log: str


def _seconds(timing: Any) -> float | None:
    if not isinstance(timing, dict):
        return None
    try:
        started = datetime.fromisoformat(str(timing["started_at"]))
        finished = datetime.fromisoformat(str(timing["finished_at"]))
    except (KeyError, ValueError):
        return None
    return (finished - started).total_seconds()


def harbor_usage(result: Any) -> Usage:
    """The token and cost counts of a Harbor trial's `result.json` (parsed): the sum of
    `agent_result.n_input_tokens` and `n_output_tokens`, and `cost_usd`; None where absent."""
    agent = result.get("agent_result") if isinstance(result, dict) else None
    if not isinstance(agent, dict):
        return Usage()
    counts = [agent.get("n_input_tokens"), agent.get("n_output_tokens")]
    known = [c for c in counts if isinstance(c, int) and not isinstance(c, bool) and c >= 0]
    cost = agent.get("cost_usd")
    return Usage(
        sum(known) if known else None,
        float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def _outcome(trial: HarborTrial, job_dir: Path) -> HarborOutcome:
    try:
        result = json.loads((job_dir / trial.trial_name / "result.json").read_text())
    except (OSError, ValueError):
        result = {}
    seconds = _seconds(result.get("agent_execution")) if isinstance(result, dict) else None
    infrastructure = agent_error = None
    if trial.reward is None:
        error = trial.error or "the verifier wrote no reward.json"
        if any(name in error for name in _TIMEOUT_ERRORS):
            agent_error = f"the agent timed out ({error})"
        else:
            infrastructure = error
    facts = TrialFacts(trial.reward, infrastructure=infrastructure, agent_error=agent_error)
    return HarborOutcome(facts, seconds, harbor_usage(result), trial.log)


def _failed(reason: str, log: str) -> HarborOutcome:
    return HarborOutcome(TrialFacts(None, infrastructure=reason), None, Usage(), log)


def run_harbor_trials(
    tasks: Sequence[BenchTask], agent: AgentSpec, *, options: HarborOptions, label: str
) -> dict[str, HarborOutcome]:
    """Run one trial of `agent` on each task in one Harbor job; outcomes by task digest.

    A Harbor that cannot start or exits non-zero fails every trial as infrastructure.
    """
    job_name = f"{label}-{secrets.token_hex(4)}"
    run_dir = options.jobs_dir / job_name
    tasks_dir = run_dir / "tasks"
    log = run_dir / "harbor.log"
    try:
        tasks_dir.mkdir(parents=True)
        for task in tasks:
            (tasks_dir / task.task_id).symlink_to(
                task.located.bundle.resolve(), target_is_directory=True
            )
        argv = build_harbor_argv(
            tasks_dir,
            agent=agent.harbor_agent,
            model=agent.harbor_model or None,
            environment=options.environment,
            jobs_dir=run_dir,
            job_name="job",
            harbor=options.harbor,
            concurrency=options.concurrency,
        )
        [code] = launch_harbor([(argv, log)])
    except OSError as exc:
        reason = f"harbor could not run: {os_reason(exc)}"
        return {task.digest: _failed(reason, str(log)) for task in tasks}
    except HarborError as exc:
        return {task.digest: _failed(str(exc), str(log)) for task in tasks}
    if code != 0:
        lines = log.read_text(errors="replace").strip().splitlines() or ["no output"]
        reason = f"harbor run failed (exit {code}): {lines[-1].strip()}"
        return {task.digest: _failed(reason, str(log)) for task in tasks}
    try:
        trials = parse_harbor_job(run_dir / "job")
    except HarborError as exc:
        return {task.digest: _failed(str(exc), str(log)) for task in tasks}
    outcomes: dict[str, HarborOutcome] = {}
    for task in tasks:
        trial = trials.get(task.task_id)
        outcomes[task.digest] = (
            _outcome(trial, run_dir / "job")
            if trial is not None
            else _failed("harbor ran no trial for this task", str(log))
        )
    return outcomes
