"""Run an evaluation: every task, agent and trial not yet finished, recorded as it finishes.

Local agents (`oracle`, `nop`, commands) run in the local sandbox, `jobs` tasks at a time (each
task prepared once, its trials one after another); Harbor agents run with `harbor run`, one job
per trial number, `jobs` trials at a time. An infrastructure failure is retried once at once,
and again on the next run. After a task's trials, an agent failure on it triggers one oracle
re-check (the `oracle` agent's own passing trial, or a passing proof, local or Harbor's, counts as
one): when the oracle no longer passes, the report counts those failures against the task, not
the agent.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from selfbench._shell import split_argv
from selfbench.environments.build import harbor_options, local_options
from selfbench.environments.egress import plan_for
from selfbench.environments.harbor import HarborOptions
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.phases import LocalOptions
from selfbench.environments.local.sandbox import CONTAINER_PATH
from selfbench.environments.process import run_captured
from selfbench.environments.spec import EnvironmentSpec
from selfbench.errors import EgressError, EvalError
from selfbench.evaluate.agents import (
    AgentSpec,
    BuiltinAgent,
    CommandAgent,
    HarborAgent,
    HarnessAgent,
)
from selfbench.evaluate.bench import Benchmark, BenchTask
from selfbench.evaluate.classify import classify
from selfbench.evaluate.harbor_trials import (
    HARBOR_NETWORK,
    HarborOutcome,
    HarborProofs,
    read_harbor_agents,
    run_harbor_trials,
)
from selfbench.evaluate.harnesses import HARNESSES, install_harness
from selfbench.evaluate.local_trials import LocalTrial, PreparedTask, prepared_task
from selfbench.evaluate.results import (
    RESULTS_FILE,
    QualityNote,
    Recheck,
    ResultsLog,
    ResultsStore,
    TrialKey,
    TrialRecord,
    open_results,
    read_results,
)
from selfbench.progress import Reporter, silent

__all__ = ["EvalOptions", "check_agents", "run_eval"]

_ORACLE = BuiltinAgent("oracle", "oracle")
_HARBOR_ORACLE = HarborAgent("oracle", "oracle")
_VISIBLE = ("/usr/", "/bin/", "/sbin/", "/lib/", "/opt/", "/etc/", "/var/")


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """How an evaluation runs."""

    results: Path
    trials: int = 1
    jobs: int = 1
    environment: EnvironmentSpec = field(default_factory=EnvironmentSpec)
    """Where trials run, and the setup environment local ones get, as validation takes it;
    Harbor agents use its Harbor options in either environment."""
    workspace: Path | None = None
    resume: bool = False
    """Insist on continuing an evaluation: refuse a results directory without results. Finished
    trials are skipped either way (re-running an evaluation always resumes it)."""
    ceilings: Ceilings | None = None
    """The most a local trial's task may use (None: this host's defaults for `jobs` tasks at
    once; see `environments/local/ceilings.py`). Harbor trials run with the task's own resources."""


OnRecord = Callable[[TrialRecord], None]


def _first_word(agent: CommandAgent) -> str:
    try:
        words = split_argv(agent.command)
    except ValueError as exc:
        raise EvalError(f"agent {agent.name}: cannot read its command: {exc}") from exc
    return words[0] if words else ""


def _check_command(agent: CommandAgent) -> None:
    word = _first_word(agent)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word) or not word:
        return  # an assignment first: the shell decides
    if word.startswith("/"):
        if not word.startswith(_VISIBLE) or not Path(word).is_file():
            raise EvalError(
                f"agent {agent.name}: cannot start: {word} is not a program the sandbox sees"
                " (only the system directories are visible)"
            )
        return
    if "/" in word:
        return  # relative to the workspace, which only the trial has
    found = run_captured(["bash", "-c", 'PATH="$1" type -t -- "$2"', "bash", CONTAINER_PATH, word])
    kind = found.stdout.decode(errors="replace").strip()
    if not kind:
        raise EvalError(
            f"agent {agent.name}: cannot start: {word}: command not found on the sandbox's PATH"
        )


def _local_only(agent: CommandAgent | HarnessAgent) -> EvalError:
    """The error for an agent that runs only locally, asked to run under `--env harbor`."""
    what = "a command agent" if isinstance(agent, CommandAgent) else "a ready-made harness"
    return EvalError(f"agent {agent.name}: {what} needs --env local")


def _check_harness(agent: HarnessAgent, options: EvalOptions) -> None:
    """A harness runs locally, with its model's host known (and the host's proxy for it an HTTP
    one); it is installed here, once."""
    if options.environment.kind == "harbor":
        raise _local_only(agent)
    harness = HARNESSES[agent.harness]
    try:
        plan_for(harness.endpoints(agent.model, os.environ), os.environ)
        install_harness(harness)
    except (EvalError, EgressError) as exc:
        raise EvalError(f"agent {agent.name}: cannot start: {exc}") from exc


def check_agents(agents: Sequence[AgentSpec], *, options: EvalOptions) -> None:
    """Refuse agents that cannot start here, before any trial runs.

    Raises:
        EvalError: a command agent with `--env harbor`, a command whose program is not found,
            or Harbor agents without a `harbor` executable.
    """
    environment = options.environment
    for agent in agents:
        if isinstance(agent, CommandAgent):
            if environment.kind == "harbor":
                raise _local_only(agent)
            _check_command(agent)
        if isinstance(agent, HarnessAgent):
            _check_harness(agent, options)
        uses_harbor = isinstance(agent, HarborAgent) or environment.kind == "harbor"
        if uses_harbor and shutil.which(environment.harbor) is None:
            raise EvalError(
                f"agent {agent.name}: cannot start: harbor executable {environment.harbor!r}"
                " not found"
            )
    _check_harbor_agents(agents, harbor=environment.harbor)


def _check_harbor_agents(agents: Sequence[AgentSpec], *, harbor: str) -> None:
    """Refuse a Harbor agent the installed Harbor does not know (asked once, when one is given).

    Raises:
        EvalError: an unknown agent (the known ones named), or Harbor cannot list them.
    """
    wanted = [agent for agent in agents if isinstance(agent, HarborAgent)]
    if not wanted:
        return
    known = read_harbor_agents(harbor)
    for agent in wanted:
        if agent.agent not in known:
            raise EvalError(
                f"agent {agent.name}: harbor has no agent {agent.agent!r}"
                f" (known: {', '.join(sorted(known))})"
            )


@dataclass
class _Run:
    """One evaluation in progress."""

    bench: Benchmark
    agents: tuple[AgentSpec, ...]
    options: EvalOptions
    store: ResultsStore
    log: ResultsLog
    on_record: OnRecord | None
    proofs: HarborProofs = field(default_factory=HarborProofs)
    """Harbor's oracle runs that decided trials without a verdict (the passing ones kept)."""

    def pending(self, task: BenchTask, agent: AgentSpec) -> list[int]:
        done = self.log.trials
        return [
            trial
            for trial in range(1, self.options.trials + 1)
            if (found := done.get(TrialKey(task.digest, agent.name, trial))) is None
            or found.classification == "infrastructure"
        ]

    def record(self, record: TrialRecord) -> None:
        self.store.append(record)
        self.log.trials[record.key] = record
        if self.on_record is not None:
            self.on_record(record)

    def recheck_wanted(self, task: BenchTask) -> bool:
        if task.digest in self.log.rechecks:
            return False
        return any(
            record.digest == task.digest and record.classification == "agent"
            for record in self.log.trials.values()
        )

    def oracle_passed(self, task: BenchTask) -> bool:
        return any(
            record.digest == task.digest and record.agent == "oracle" and record.passed
            for record in self.log.trials.values()
        )

    def save_recheck(self, task: BenchTask, *, passed: bool, reason: str | None) -> None:
        check = Recheck(task.task_id, task.digest, passed, reason)
        self.store.append(check)
        self.log.rechecks[task.digest] = check


def _record(
    task: BenchTask,
    agent: AgentSpec,
    trial: int,
    outcome: LocalTrial | HarborOutcome,
    **extra: object,
) -> TrialRecord:
    verdict = classify(outcome.facts)
    reward = outcome.facts.reward.reward if outcome.facts.reward else None
    record = TrialRecord(
        task=task.task_id,
        digest=task.digest,
        difficulty=task.difficulty,
        agent=agent.name,
        trial=trial,
        passed=verdict.passed,
        classification=verdict.classification,
        reason=verdict.reason,
        reward=reward,
        agent_exit=outcome.facts.agent_exit,
        agent_seconds=outcome.agent_seconds,
        tokens=outcome.usage.tokens,
        cost_usd=outcome.usage.cost_usd,
        log=outcome.log,
        cause=outcome.facts.cause,
        proof=outcome.facts.proof.detail if outcome.facts.proof else None,
        suspect=outcome.suspect,
    )
    return replace(record, **extra)  # type: ignore[arg-type]


def _local_trial(run: _Run, prepared: PreparedTask, agent: AgentSpec, trial: int) -> None:
    task = prepared.task
    outcome = prepared.run(agent, f"{agent.name}-t{trial}-a1")
    attempts = 1
    if classify(outcome.facts).classification == "infrastructure":
        outcome = prepared.run(agent, f"{agent.name}-t{trial}-a2")
        attempts = 2
    run.record(
        _record(
            task, agent, trial, outcome,
            tests=outcome.tests, verifier_seconds=outcome.verifier_seconds,
            attempts=attempts, environment="local", network=outcome.network,
        )
    )  # fmt: skip


def _local_recheck(run: _Run, prepared: PreparedTask) -> None:
    task = prepared.task
    if not run.recheck_wanted(task):
        return
    if run.oracle_passed(task) or prepared.proof is not None:
        run.save_recheck(task, passed=True, reason=None)
        return
    outcome = prepared.run(_ORACLE, "recheck-a1")
    if classify(outcome.facts).classification == "infrastructure":
        outcome = prepared.run(_ORACLE, "recheck-a2")
    _save_recheck(run, task, outcome)


def _local_task(run: _Run, task: BenchTask, agents: Sequence[AgentSpec]) -> None:
    work = [(agent, trial) for agent in agents for trial in run.pending(task, agent)]
    if not work and not run.recheck_wanted(task):
        return
    options = run.options
    ceilings = options.ceilings or Ceilings.for_host(jobs=options.jobs, workspace=options.workspace)
    setup = local_options(
        options.environment, logs=options.results / "logs", local=LocalOptions(ceilings=ceilings)
    )
    with prepared_task(task, setup=setup, workspace=run.options.workspace) as prepared:
        for agent, trial in work:
            _local_trial(run, prepared, agent, trial)
        _local_recheck(run, prepared)


def _harbor_options(run: _Run) -> HarborOptions:
    options = run.options
    return harbor_options(
        options.environment, jobs_dir=options.results / "jobs", concurrency=options.jobs
    )


def _harbor_spec(agent: AgentSpec) -> HarborAgent:
    """Under `--env harbor` the baselines are Harbor's own `oracle` and `nop` agents (a command
    or a harness never runs there: `check_agents` refused it).

    Raises:
        EvalError: a command or a harness.
    """
    if isinstance(agent, BuiltinAgent):
        return HarborAgent(agent.name, agent.kind)
    if isinstance(agent, HarborAgent):
        return agent
    raise _local_only(agent)


def _harbor_agent(run: _Run, agent: AgentSpec) -> None:
    spec = _harbor_spec(agent)
    for trial in range(1, run.options.trials + 1):
        tasks = [task for task in run.bench.tasks if trial in run.pending(task, agent)]
        if not tasks:
            continue
        label = f"{agent.name}-t{trial}"
        outcomes = run_harbor_trials(
            tasks, spec, options=_harbor_options(run), label=label, proofs=run.proofs
        )
        retry = [
            t
            for t in tasks
            if classify(outcomes[t.digest].facts).classification == "infrastructure"
        ]
        again = (
            run_harbor_trials(
                retry, spec, options=_harbor_options(run), label=f"{label}-retry", proofs=run.proofs
            )
            if retry
            else {}
        )
        for task in tasks:
            outcome = again.get(task.digest, outcomes[task.digest])
            attempts = 2 if task.digest in again else 1
            run.record(
                _record(task, agent, trial, outcome, attempts=attempts, environment="harbor",
                        network=HARBOR_NETWORK, verifier_seconds=outcome.verifier_seconds)
            )  # fmt: skip


def _save_recheck(run: _Run, task: BenchTask, outcome: LocalTrial | HarborOutcome) -> None:
    """Record a re-check's verdict; one the infrastructure broke decides nothing."""
    verdict = classify(outcome.facts)
    if verdict.classification == "infrastructure":
        return
    reason = None if verdict.passed else f"the oracle no longer passes: {verdict.reason}"
    run.save_recheck(task, passed=verdict.passed, reason=reason)


def _remaining_rechecks(run: _Run) -> None:
    """Re-check the tasks Harbor agents failed: with Harbor's oracle, where they ran (a passing
    trial of the `oracle` agent, or a passing proof, counts as one)."""
    tasks = [task for task in run.bench.tasks if run.recheck_wanted(task)]
    for task in [t for t in tasks if run.oracle_passed(t) or t.digest in run.proofs.passed]:
        run.save_recheck(task, passed=True, reason=None)
    tasks = [task for task in tasks if run.recheck_wanted(task)]
    if not tasks:
        return
    outcomes = run_harbor_trials(
        tasks, _HARBOR_ORACLE, options=_harbor_options(run), label="recheck"
    )
    for task in tasks:
        _save_recheck(run, task, outcomes[task.digest])


def _note_quality(store: ResultsStore, log: ResultsLog, bench: Benchmark) -> None:
    """Record each task's quality verdict and reasons for the report (once: a resumed
    evaluation adds none it already holds)."""
    for task in bench.tasks:
        if task.quality is None:
            continue
        note = QualityNote(task.task_id, task.digest, task.quality.verdict, task.quality.reasons)
        if log.quality.get(task.digest) != note:
            store.append(note)


def run_eval(
    bench: Benchmark,
    agents: Sequence[AgentSpec],
    *,
    options: EvalOptions,
    on_record: OnRecord | None = None,
    reporter: Reporter = silent,
) -> ResultsLog:
    """Run every unfinished trial of `agents` on `bench`; the results file as it ends. Each
    finished trial's record goes to `on_record`; warnings (corrupt result lines) to `reporter`.

    Raises:
        EvalError: an agent cannot start, the results directory holds another benchmark's
            results or cannot be written, or `options.resume` and it holds none.
        SandboxError: local trials are wanted and this machine cannot run the sandbox.
    """
    if options.trials < 1 or options.jobs < 1:
        raise EvalError("--trials and -j must be at least 1")
    if options.resume and not (options.results / RESULTS_FILE).is_file():
        raise EvalError(f"--resume: no results to resume in {options.results}")
    check_agents(agents, options=options)
    store, log = open_results(options.results, benchmark=bench.benchmark_id, tasks=len(bench.tasks))
    for line in log.corrupt:
        reporter.warning(line)
    _note_quality(store, log, bench)
    run = _Run(bench, tuple(agents), options, store, log, on_record)
    local = [
        a for a in agents if not isinstance(a, HarborAgent) and options.environment.kind == "local"
    ]
    if local:
        with ThreadPoolExecutor(max_workers=options.jobs) as pool:
            list(pool.map(lambda task: _local_task(run, task, local), bench.tasks))
    harbor = [
        a for a in agents if isinstance(a, HarborAgent) or options.environment.kind == "harbor"
    ]
    for agent in harbor:
        _harbor_agent(run, agent)
    if harbor:
        _remaining_rechecks(run)
    return read_results(options.results)
