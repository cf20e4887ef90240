"""Harbor agents (`NAME=harbor:AGENT:MODEL`): `harbor run` over the tasks, one job per trial
number, and each trial's result read back from the job directory.

The job layout is the one `selfbench.validate.harbor` documents and parses; beyond the reward
this reads, leniently, the agent's and the verifier's run times (`agent_execution`, `verifier`),
the agent's token and cost counts (`agent_result.n_input_tokens`, `n_output_tokens`,
`cost_usd`) and the type of the exception the trial raised (`exception_info.exception_type`)
from the trial's `result.json`, and scans the agent's patch Harbor collected
(`AGENT_PATCH_ARTIFACT`) for tampering (`evaluate.tamper`).

A trial without a verdict after the agent ran (its work is in the environment the verifier
runs in) is not excused: as in the local environment (`selfbench.evaluate.classify`), Harbor's
oracle runs the task again in the same Harbor environment, with the task's own limits
(`HarborProofs`). When it passes, the failure is the agent's, its cause named from the
exception type Harbor recorded (its `VerifierTimeoutError`: the tests timed out), never from
the exception's message or a log; when it fails too, the infrastructure's.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from selfbench._json import loads_strict
from selfbench.bundle import layout
from selfbench.environments.harbor import HarborOptions, launch_harbor
from selfbench.environments.local.verifier import forged_reason
from selfbench.environments.process import run_captured
from selfbench.errors import EvalError, JsonError, os_reason, translating
from selfbench.evaluate.agents import HarborAgent, Usage
from selfbench.evaluate.bench import BenchTask
from selfbench.evaluate.classify import Proof, TrialFacts, classify, named_cause, oracle_proof
from selfbench.evaluate.tamper import Finding, read_suspect
from selfbench.validate.harbor import (
    HarborError,
    HarborTrial,
    build_harbor_argv,
    parse_harbor_job,
)

__all__ = [
    "AGENT_PATCH_ARTIFACT",
    "HARBOR_NETWORK",
    "HarborOutcome",
    "HarborProofs",
    "harbor_usage",
    "read_harbor_agents",
    "run_harbor_trials",
]

HARBOR_NETWORK = "the Harbor environment's (the task's allow-list where it enforces one)"
_AGENT_TIMEOUT = "AgentTimeoutError"
_VERIFIER_TIMEOUT = "VerifierTimeoutError"
_EXCEPTION_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}")
"""An exception type as Harbor records it (a class name); anything else is not read."""
_ORACLE = HarborAgent("oracle", "oracle")
AGENT_PATCH_ARTIFACT = "artifacts" + layout.CONTAINER_AGENT_PATCH
"""Where a trial's directory holds the agent's patch: Harbor keeps each artifact of the task
(`task.toml`'s `artifacts`) at its container path under `artifacts/`."""


def read_harbor_agents(harbor: str) -> frozenset[str]:
    """The agents the installed Harbor runs by name, as it lists them
    (`harbor agent list --json`).

    Raises:
        EvalError: Harbor cannot start, fails, or prints no list of names.
    """
    argv = [harbor, "agent", "list", "--json"]
    with translating(EvalError, "list harbor's agents"):
        done = run_captured(argv)
    try:
        names = loads_strict(done.stdout, source="harbor agent list --json")
    except JsonError:
        names = None
    if done.returncode != 0 or not (
        isinstance(names, list) and names and all(isinstance(name, str) for name in names)
    ):
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no list"])[-1]
        raise EvalError(f"cannot list harbor's agents (exit {done.returncode}): {last.strip()}")
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class HarborOutcome:
    """One Harbor trial as an evaluation records it."""

    facts: TrialFacts
    agent_seconds: float | None
    usage: Usage
    log: str
    suspect: tuple[Finding, ...] = ()
    """The tamper scan's findings on the agent's patch, as Harbor collected it."""
    verifier_seconds: float | None = None
    """Harbor's `verifier` phase: with the task's separate verifier environment, its build and
    start too."""


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


def _exception_type(result: Any) -> str | None:
    """The type of the exception a trial raised, as Harbor recorded it (None: none, or not a
    plain class name)."""
    info = result.get("exception_info") if isinstance(result, dict) else None
    kind = info.get("exception_type") if isinstance(info, dict) else None
    return kind if isinstance(kind, str) and _EXCEPTION_TYPE.fullmatch(kind) else None


def _agent_ran(result: Any) -> bool:
    """Whether Harbor started the agent (`agent_execution.started_at`)."""
    timing = result.get("agent_execution") if isinstance(result, dict) else None
    return isinstance(timing, dict) and timing.get("started_at") is not None


def _stopped_cause(kind: str | None) -> str | None:
    """The cause of a trial that gave no verdict after the agent ran, from the exception type
    Harbor recorded: its verifier's timeout is the tests' time limit."""
    if kind == _VERIFIER_TIMEOUT:
        return named_cause("verifier", ("time",))
    return f"the trial raised {kind} after the agent ran" if kind else None


def _facts(trial: HarborTrial, result: Any, agent: HarborAgent) -> TrialFacts:
    """What a trial observed: its reward; or, without one, the agent's timeout, a failure with
    the agent's work in the environment (`stopped`, for the proof to decide; Harbor's `nop`
    leaves none), or the infrastructure's (the agent never ran)."""
    if trial.reward is not None:
        forged = forged_reason(Path(trial.log)) if trial.reward.forged else None
        return TrialFacts(trial.reward, forged=forged)
    error = trial.error or "the verifier wrote no reward.json"
    kind = _exception_type(result)
    if kind == _AGENT_TIMEOUT:
        return TrialFacts(None, agent_error=f"the agent timed out ({error})")
    if agent.agent == "nop" or not _agent_ran(result):
        return TrialFacts(None, infrastructure=error)
    return TrialFacts(None, stopped=error, cause=_stopped_cause(kind))


def _outcome(
    trial: HarborTrial, job_dir: Path, agent: HarborAgent, task: BenchTask
) -> HarborOutcome:
    try:
        result = json.loads((job_dir / trial.trial_name / "result.json").read_text())
    except (OSError, ValueError):
        result = {}
    timings = result if isinstance(result, dict) else {}
    facts = _facts(trial, result, agent)
    suspect = read_suspect(
        job_dir / trial.trial_name,
        AGENT_PATCH_ARTIFACT,
        held_out=task.held_out_paths(),
        gold_patch=task.gold_patch(),
    )
    return HarborOutcome(
        facts,
        _seconds(timings.get("agent_execution")),
        harbor_usage(result),
        trial.log,
        suspect,
        verifier_seconds=_seconds(timings.get("verifier")),
    )


def _failed(reason: str, log: str) -> HarborOutcome:
    return HarborOutcome(TrialFacts(None, infrastructure=reason), None, Usage(), log)


@dataclass
class HarborProofs:
    """The oracle's Harbor runs that decide the trials of one evaluation which gave no verdict
    after the agent ran, as `PreparedTask.prove` does locally: run when a trial of the task
    needs one; a passing one is kept and answers for the task's later trials (and stands for its
    re-check), a failing one is run again when needed."""

    passed: dict[str, Proof] = field(default_factory=dict)
    """The passing proofs, by task digest."""

    def prove(
        self, tasks: Sequence[BenchTask], *, options: HarborOptions, label: str
    ) -> dict[str, Proof]:
        """Each task's proof, by digest: the kept passing one, else Harbor's `oracle` run now,
        in one job (`label`) with the same options (the same Harbor environment, the task's own
        limits) as the trials it decides."""
        proofs = {t.digest: self.passed[t.digest] for t in tasks if t.digest in self.passed}
        wanted = [task for task in tasks if task.digest not in self.passed]
        if not wanted:
            return proofs
        outcomes = run_harbor_trials(wanted, _ORACLE, options=options, label=label)
        for task in wanted:
            outcome = outcomes[task.digest]
            proofs[task.digest] = oracle_proof(classify(outcome.facts), outcome.log)
            if proofs[task.digest].passed:
                self.passed[task.digest] = proofs[task.digest]
        return proofs


def _proved(
    outcomes: dict[str, HarborOutcome],
    tasks: Sequence[BenchTask],
    proofs: HarborProofs,
    *,
    options: HarborOptions,
    label: str,
) -> dict[str, HarborOutcome]:
    """The outcomes, each trial that gave no verdict after the agent ran with its proof."""
    stopped = [task for task in tasks if outcomes[task.digest].facts.stopped is not None]
    if not stopped:
        return outcomes
    found = proofs.prove(stopped, options=options, label=f"{label}-proof")
    proved = dict(outcomes)
    for task in stopped:
        outcome = outcomes[task.digest]
        facts = replace(outcome.facts, proof=found[task.digest])
        proved[task.digest] = replace(outcome, facts=facts)
    return proved


def run_harbor_trials(
    tasks: Sequence[BenchTask],
    agent: HarborAgent,
    *,
    options: HarborOptions,
    label: str,
    proofs: HarborProofs | None = None,
) -> dict[str, HarborOutcome]:
    """Run one trial of `agent` on each task in one Harbor job; outcomes by task digest.

    With `proofs`, a trial that gave no verdict after the agent ran carries the oracle's proof
    (`HarborProofs.prove`); without, it is the infrastructure's. A Harbor that cannot start or
    exits non-zero fails every trial as infrastructure.
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
            agent=agent.agent,
            model=agent.model or None,
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
            _outcome(trial, run_dir / "job", agent, task)
            if trial is not None
            else _failed("harbor ran no trial for this task", str(log))
        )
    if proofs is None:
        return outcomes
    return _proved(outcomes, tasks, proofs, options=options, label=label)
