"""Every non-pass gets a class and a reason (pure).

* **agent**: the agent timed out or crashed, its patch did not apply, the tests ran and failed,
  or the report was forged (a canary test passed or went missing: `bundle/canaries.py`); or a
  phase the agent's code was in (the agent phase, the collect step over its workspace, the
  verifier with its patch) gave no verdict, and the oracle, run again on the same
  machine with the same limits, passed (the `Proof`): the cause named when a limit struck;
* **infrastructure**: setup or the harness broke with no agent code running, or such a phase gave
  no verdict and the oracle failed too; retried once, never counted against an agent;
* **task**: an agent failure on a task whose oracle no longer passes (the re-check decides; see
  `reclassify`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from selfbench.artifacts.report import Reward
from selfbench.environments.local.phases import Limit
from selfbench.evaluate.results import Classification, Recheck

__all__ = [
    "CAUSES",
    "KILLED_EXIT",
    "TIMEOUT_EXIT",
    "Proof",
    "Step",
    "TrialFacts",
    "Verdict",
    "classify",
    "named_cause",
    "oracle_proof",
    "reclassify",
]

TIMEOUT_EXIT = 124
"""timeout(1)'s own status when the limit struck."""
KILLED_EXIT = 137
"""SIGKILL: timeout(1)'s after its grace period, or the kernel's when memory ran out."""

Step = Literal["agent", "collect", "verifier"]
"""A step of a trial the agent's code runs in: its own phase, the collect step over its
workspace, the verifier with its patch."""

CAUSES: dict[Step, dict[Limit, str]] = {
    "agent": {
        "time": "the agent phase ran past the harness's time limit",
        "memory": "the agent exceeded the task's memory",
        "processes": "the agent hit the task's process limit",
        "user-processes": "the agent hit the per-user process limit",
        "disk": "the agent filled the disk",
    },
    "collect": {
        "time": "the collect step timed out on the agent's workspace",
        "memory": "the agent's workspace exceeded the task's memory in the collect step",
        "processes": "the agent's workspace hit the task's process limit in the collect step",
        "user-processes": (
            "the agent's workspace hit the per-user process limit in the collect step"
        ),
        "disk": "the agent's workspace filled the disk in the collect step",
    },
    "verifier": {
        "time": "the tests timed out with the agent's code",
        "memory": "the tests exceeded the task's memory with the agent's code",
        "processes": "the tests hit the task's process limit with the agent's code",
        "user-processes": "the tests hit the per-user process limit with the agent's code",
        "disk": "the tests filled the disk with the agent's code",
    },
}
"""How a cause reads, per step of a trial and limit struck, whatever environment ran it."""


@dataclass(frozen=True, slots=True)
class Proof:
    """The oracle run again on the machine of a trial that gave no verdict, with the same limits:
    when it passes, the machine can run the task, and the failure is the agent's."""

    passed: bool
    detail: str
    """What it showed, one line (`the oracle passed ...`, `the oracle failed too: ...`)."""


def oracle_proof(oracle: Verdict, log: str) -> Proof:
    """The proof the oracle's run again (its verdict, its log) gives for a trial that gave no
    verdict: the one rule of every environment."""
    if not oracle.passed:
        why = f"the oracle failed too, here with the same limits: {oracle.reason}"
        return Proof(passed=False, detail=why)
    return Proof(passed=True, detail=f"the oracle passed here with the same limits (log {log})")


def named_cause(step: Step, limits: tuple[Limit, ...]) -> str | None:
    """The limits a step ran into, as the report names them (None: none)."""
    return "; ".join(CAUSES[step][limit] for limit in limits) or None


@dataclass(frozen=True, slots=True)
class TrialFacts:
    """What one trial observed, whatever ran it."""

    reward: Reward | None
    agent_exit: int | None = None
    agent_seconds: float | None = None
    agent_seconds_limit: float | None = None
    infrastructure: str | None = None
    """Why the harness (setup, collect, verifier, memory, its own timeout) broke, if it did."""
    agent_error: str | None = None
    """Why the agent itself failed when no reward was written (a Harbor agent's timeout)."""
    stopped: str | None = None
    """Why a phase with the agent's code in it gave no verdict (the collect step over its
    workspace, the verifier with its patch); the `proof` decides whose failure it is."""
    cause: str | None = None
    """The limit the agent's code ran into (`the tests timed out with the agent's code`), read
    from the control group, the exit statuses and the time limits, never from its output."""
    proof: Proof | None = None
    """The oracle's run that decided a `stopped` trial (None: none ran)."""
    forged: str | None = None
    """What the verifier's log says of a forged report (`the canary test … passed`), when its
    reward says `forged`."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A trial's outcome."""

    passed: bool
    classification: Classification | None
    reason: str | None
    forged: bool = False
    """The verifier found the report forged (a canary passed or went missing)."""


def _timed_out(facts: TrialFacts) -> bool:
    """The agent's time limit struck: timeout(1)'s status, or a SIGKILL at the limit."""
    if facts.agent_exit == TIMEOUT_EXIT:
        return True
    if facts.agent_exit != KILLED_EXIT:
        return False
    limit, seconds = facts.agent_seconds_limit, facts.agent_seconds
    return limit is None or seconds is None or seconds >= limit


def _agent_reason(facts: TrialFacts, reward: Reward) -> str:
    if _timed_out(facts):
        limit = f" after {facts.agent_seconds_limit:g} s" if facts.agent_seconds_limit else ""
        return f"the agent timed out{limit}"
    crashed = (
        f"the agent crashed (exit {facts.agent_exit}); "
        if facts.agent_exit not in (None, 0)
        else ""
    )
    if not reward.patch_applied:
        return f"{crashed}its patch did not apply"
    if not reward.setup_completed:
        return f"{crashed}the held-out tests could not be prepared"
    if not reward.fail_to_pass:
        return f"{crashed}tests ran and failed: fail-to-pass"
    if not reward.pass_to_pass:
        return f"{crashed}tests ran and failed: pass-to-pass (a regression)"
    return f"{crashed}tests ran and failed: fail-to-pass did not pass twice"


def _stopped(facts: TrialFacts, stopped: str) -> Verdict:
    """A trial whose phase with the agent's code gave no verdict: the agent's when the oracle
    passed on the same machine with the same limits, else the infrastructure's."""
    proof = facts.proof
    if proof is not None and proof.passed:
        cause = f"{facts.cause}: " if facts.cause else ""
        return Verdict(
            passed=False, classification="agent", reason=f"{cause}{stopped}; {proof.detail}"
        )
    reason = f"{stopped}; {proof.detail}" if proof else stopped
    return Verdict(passed=False, classification="infrastructure", reason=reason)


def classify(facts: TrialFacts) -> Verdict:
    """The trial's verdict before any oracle re-check."""
    if facts.infrastructure is not None:
        return Verdict(passed=False, classification="infrastructure", reason=facts.infrastructure)
    if facts.stopped is not None:
        return _stopped(facts, facts.stopped)
    if facts.reward is None:
        if facts.agent_error is not None:
            return Verdict(passed=False, classification="agent", reason=facts.agent_error)
        return Verdict(
            passed=False,
            classification="infrastructure",
            reason="the verifier wrote no reward.json",
        )
    return _scored(facts, facts.reward)


def _scored(facts: TrialFacts, reward: Reward) -> Verdict:
    """The verdict of a trial whose verifier wrote its reward."""
    if reward.forged:
        why = facts.forged or "a canary test did not fail as it must"
        return Verdict(passed=False, classification="agent", reason=f"forged: {why}", forged=True)
    if reward.reward == 1:
        return Verdict(passed=True, classification=None, reason=None)
    reason = _agent_reason(facts, reward)
    if facts.cause is not None:
        reason = f"{reason} ({facts.cause})"
    return Verdict(passed=False, classification="agent", reason=reason)


def reclassify(verdict: Verdict, recheck: Recheck | None) -> Verdict:
    """An agent failure on a task whose oracle no longer passes is the task's failure (a forged
    report too: canaries the task's own oracle trips say nothing of the agent)."""
    if verdict.classification != "agent" or recheck is None or recheck.passed:
        return verdict
    why = recheck.reason or "the oracle no longer passes"
    return Verdict(
        passed=False,
        classification="task",
        reason=f"the task is broken: {why} (was: {verdict.reason})",
    )
