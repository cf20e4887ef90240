"""Every non-pass gets a class and a reason (pure).

* **agent**: the agent timed out or crashed, its patch did not apply, or the tests ran and
  failed;
* **infrastructure**: setup, the collect step or the verifier broke, a phase ran out of memory,
  or the harness's own time limit struck; retried once, never counted against an agent;
* **task**: an agent failure on a task whose oracle no longer passes (the re-check decides; see
  `reclassify`).
"""

from __future__ import annotations

from dataclasses import dataclass

from selfbench.evaluate.results import Classification, Recheck
from selfbench.validate.report import Reward

__all__ = ["TrialFacts", "Verdict", "classify", "reclassify"]

_TIMEOUT_EXIT = 124
"""timeout(1)'s own status when the limit struck."""
_KILLED_EXIT = 137
"""SIGKILL: timeout(1)'s after its grace period, or the kernel's when memory ran out."""


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


@dataclass(frozen=True, slots=True)
class Verdict:
    """A trial's outcome."""

    passed: bool
    classification: Classification | None
    reason: str | None


def _timed_out(facts: TrialFacts) -> bool:
    """The agent's time limit struck: timeout(1)'s status, or a SIGKILL at the limit."""
    if facts.agent_exit == _TIMEOUT_EXIT:
        return True
    if facts.agent_exit != _KILLED_EXIT:
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


def classify(facts: TrialFacts) -> Verdict:
    """The trial's verdict before any oracle re-check."""
    if facts.infrastructure is not None:
        return Verdict(passed=False, classification="infrastructure", reason=facts.infrastructure)
    if facts.reward is None:
        if facts.agent_error is not None:
            return Verdict(passed=False, classification="agent", reason=facts.agent_error)
        return Verdict(
            passed=False,
            classification="infrastructure",
            reason="the verifier wrote no reward.json",
        )
    if facts.reward.reward == 1:
        return Verdict(passed=True, classification=None, reason=None)
    return Verdict(passed=False, classification="agent", reason=_agent_reason(facts, facts.reward))


def reclassify(verdict: Verdict, recheck: Recheck | None) -> Verdict:
    """An agent failure on a task whose oracle no longer passes is the task's failure."""
    if verdict.classification != "agent" or recheck is None or recheck.passed:
        return verdict
    why = recheck.reason or "the oracle no longer passes"
    return Verdict(
        passed=False,
        classification="task",
        reason=f"the task is broken: {why} (was: {verdict.reason})",
    )
