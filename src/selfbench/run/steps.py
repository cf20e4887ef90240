"""One step of one candidate: run its next stage and say what state it leads to. The state
machine of a run lives here; the stages themselves in `stages`, the bookkeeping in `state`.

    draft → author → audit → compile → validate ──ok──→ coupling ──clean──→ quality ──→ accepted
                       ↑                  │ failed           │ coupled
                       │                  ↓ (once, a command  ↓ (once, a command author)
                       ├──────────── repair               coupling-repair
                       └─────────────────────────────────────┘

Every other failure rejects the candidate with the stage's one-line reason. `--author draft` has
no one to repair a task, so a failed validation or a coupled task is a rejection. The quality
stage (none with `--no-quality`) records the final task's `quality.json` and rejects a task
whose verdict is below `--min-quality`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from selfbench.artifacts.quality_record import Verdict
from selfbench.draft.config import DraftConfig
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.host_network import HostNetwork
from selfbench.errors import RunError
from selfbench.mine.candidate import CandidateModel
from selfbench.run import stages
from selfbench.run.state import CandidateState, RunDirectory, Stage

__all__ = ["StepContext", "run_step"]


@dataclass(frozen=True, slots=True)
class StepContext:
    """What every step needs: the run, the repository, how to author, review and validate."""

    run: RunDirectory
    repo: Path
    author: stages.AuthorSettings
    reviewer: str | None
    runner: Any
    """Makes the validation runner, given the directory its logs go to."""
    source_url: str | None = None
    """Where pull requests live, for candidates mined without a URL (`<base>/pull/<n>`)."""
    setup_env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs for the local sandbox's setup, in drafting and validation alike."""
    host_network: HostNetwork = field(default_factory=HostNetwork)
    """The host's CA certificates and proxies for that setup (`environments.local.host_network`)."""
    agent_allowed_hosts: tuple[str, ...] = ()
    """The hosts a compiled task's agent may reach; empty: the compiler's default list."""
    agent_dependencies: bool = False
    """`--deps agent`: drafted tasks set `agentDependencies`."""
    quality: stages.QualityCheck | None = None
    """Checks a task's quality when the draft's record does not hold; None: no quality stage
    (`--no-quality`), a clean coupling check accepts."""
    min_quality: Verdict = "review"
    """`--min-quality`: the lowest verdict accepted."""
    ceilings: Ceilings | None = None
    """The host's ceilings on drafting's sandbox (None: `Ceilings.for_host()`)."""
    config: DraftConfig | None = None
    """`run --config`: the `selfbench.toml` each draft uses over the repository's own."""
    candidate_seconds: Callable[[str], float] = lambda _tier: float("inf")
    """The time a candidate of a tier has for its sandbox stages (`--candidate-time`)."""

    @property
    def can_repair(self) -> bool:
        """Whether there is an author command to call in repair mode."""
        return self.author.command != stages.AUTHOR_DRAFT


@dataclass(frozen=True, slots=True)
class _Step:
    """One stage about to run: the run, the candidate's state and record, its work directory."""

    context: StepContext
    state: CandidateState
    candidate: CandidateModel
    work: Path

    @property
    def task(self) -> Path:
        return _recorded(self.context, self.state.task_dir, self.state, "taskDir")

    @property
    def draft(self) -> Path:
        """The drafted task, which a repair's author is given as the draft."""
        recorded = self.state.draft_dir or self.state.task_dir
        return _recorded(self.context, recorded, self.state, "draftDir")

    def log(self, name: str) -> Path:
        return self.context.run.logs(self.state.id) / f"{self.work.name}-{name}.log"


def _recorded(context: StepContext, value: str | None, state: CandidateState, key: str) -> Path:
    if value is None:
        raise RunError(f"{context.run.state_path(state.id)}: {key} is missing at {state.next}")
    return context.run.resolve(value)


def run_step(
    context: StepContext, state: CandidateState, candidate: CandidateModel
) -> CandidateState:
    """Run the candidate's next stage; return its new state (not yet saved).

    Raises:
        RunError: the candidate is finished, or its state file lacks what the stage needs.
    """
    stage = state.next
    if stage is None:
        raise RunError(f"candidate {state.id} is {state.status}: it has no next stage")
    work = context.run.work(state.id, len(state.history), stage)
    if work.exists():  # a step a kill interrupted: start it again from nothing
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    result = _STAGES[stage](_Step(context, state, candidate, work))
    seconds = time.monotonic() - started
    return _next_state(context, state, stage, result, seconds)


def _draft(step: _Step) -> stages.StageResult:
    context = step.context
    logs = context.run.logs(step.state.id) / step.work.name
    return stages.draft_stage(
        context.repo,
        step.candidate,
        step.work,
        logs=logs,
        source_url=context.source_url,
        setup_env=context.setup_env,
        host_network=context.host_network,
        ceilings=context.ceilings,
        agent_dependencies=context.agent_dependencies,
        quality=context.quality is not None,
        config=context.config,
        # the draft author keeps the drafted task: its quality record is the final one
        gate=context.min_quality
        if context.quality is not None and context.author.command == stages.AUTHOR_DRAFT
        else None,
        # no one repairs the draft author's coupled task: settled before its quality runs
        coupling=context.author.command == stages.AUTHOR_DRAFT,
    )


def _author(step: _Step) -> stages.StageResult:
    context = step.context
    return stages.author_task(
        context.repo, step.candidate, step.task, step.work, step.log("author"), context.author
    )


def _audit(step: _Step) -> stages.StageResult:
    return stages.audit_task(step.task)


def _compile(step: _Step) -> stages.StageResult:
    context = step.context
    return stages.compile_stage(
        step.task,
        context.repo,
        step.work,
        allowed_hosts=context.agent_allowed_hosts,
        draft_dir=step.draft,
    )


def _validate(step: _Step) -> stages.StageResult:
    context = step.context
    home = _recorded(context, step.state.bundle_home, step.state, "bundleHome")
    logs = context.run.logs(step.state.id) / step.work.name
    return stages.validate_stage(home, context.runner(logs))


def _repair(step: _Step) -> stages.StageResult:
    context = step.context
    tail = stages.log_tail(step.state.failing_log)
    return stages.repair_stage(
        context.repo,
        step.candidate,
        step.task,
        step.work,
        step.log("repair"),
        context.author,
        tail,
        draft_dir=step.draft,
    )


def _coupling(step: _Step) -> stages.StageResult:
    context = step.context
    return stages.coupling_stage(
        step.task, context.repo, context.reviewer, step.log("reviewer"), context.author
    )


def _coupling_repair(step: _Step) -> stages.StageResult:
    context = step.context
    return stages.coupling_repair_stage(
        context.repo,
        step.candidate,
        step.task,
        step.work,
        step.log("coupling-repair"),
        context.author,
        step.state.findings,
        draft_dir=step.draft,
    )


def _quality(step: _Step) -> stages.StageResult:
    context = step.context
    if context.quality is None:
        raise RunError(f"{context.run.state_path(step.state.id)}: quality in a run without it")
    return stages.quality_stage(
        step.task, step.draft, step.work, minimum=context.min_quality, check=context.quality
    )


_STAGES: dict[Stage, Callable[[_Step], stages.StageResult]] = {
    "draft": _draft,
    "author": _author,
    "audit": _audit,
    "compile": _compile,
    "validate": _validate,
    "repair": _repair,
    "coupling": _coupling,
    "coupling-repair": _coupling_repair,
    "quality": _quality,
}


def _next_state(
    context: StepContext,
    state: CandidateState,
    stage: Stage,
    result: stages.StageResult,
    seconds: float,
) -> CandidateState:
    run = context.run
    if result.ok:
        path = run.relative(result.path) if result.path is not None else None
        return _on_success(state, stage, path, seconds, quality=context.quality is not None)
    reason = result.reason or "rejected"
    if stage in ("quality", "draft") and result.quality is not None:
        state = replace(state, quality=run.relative(result.quality))
    if stage == "validate" and context.can_repair and state.repairs == 0:
        return replace(
            state.advanced(stage, seconds, next="repair", label="validation-failed"),
            failing_log=result.log,
            reason=None,
        )
    if stage == "coupling" and context.can_repair and state.coupling_repairs == 0:
        return state.advanced(
            stage, seconds, next="coupling-repair", label="coupled", findings=result.findings
        )
    return state.rejected(stage, seconds, reason, label=_FOUND.get(stage))


_FOUND: dict[Stage, str] = {"coupling": "coupled"}
"""How the history names what a rejecting stage found, when the bare `rejected` would hide the
stage (a coupling rejection follows `validated`)."""

_AFTER: dict[Stage, Stage | None] = {
    "draft": "author",
    "author": "audit",
    "repair": "audit",
    "coupling-repair": "audit",
    "audit": "compile",
    "compile": "validate",
    "validate": "coupling",
    "coupling": "quality",
    "quality": None,
}
"""The stage that follows each one when it succeeds (None: accepted)."""


_AUTHORED = ("draft", "author", "repair", "coupling-repair")
"""The stages that write the candidate's task directory."""


def _on_success(
    state: CandidateState, stage: Stage, path: str | None, seconds: float, *, quality: bool
) -> CandidateState:
    after_stage = _AFTER[stage] if quality or stage != "coupling" else None
    recoupled = stage == "coupling-repair"
    after = state.advanced(
        stage,
        seconds,
        next=after_stage,
        task_dir=path if stage in _AUTHORED else state.task_dir,
        draft_dir=path if stage == "draft" else state.draft_dir,
        repairs=state.repairs + 1 if stage == "repair" else state.repairs,
        coupling_repairs=state.coupling_repairs + 1 if recoupled else state.coupling_repairs,
        findings=() if recoupled else state.findings,
        bundle_home=path if stage == "compile" else state.bundle_home,
        validation=path if stage == "validate" else state.validation,
        quality=path if stage == "quality" else state.quality,
    )
    if after.next is None:
        return replace(after, status="accepted", history=(*after.history, "accepted"))
    return after
