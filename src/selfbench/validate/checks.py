"""The local environment's judgement of its runs: why a phase failed, and the Beyond checks.

`local.py` runs the phases and records each verifier run as a `VerifierRun`; this module reads
those records and their logs and says what they prove (SPEC §7, Beyond): each fail-to-pass
selector on its own, the independent rerun, and that the suite really ran (`selfbench.outcomes`
reads the runners' output). Nothing here starts a process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench.bundle.render_scripts import fail_to_pass_command, pass_to_pass_command
from selfbench.contract import TaskDefinition
from selfbench.outcomes import parse_outcomes
from selfbench.validate.report import Check, Reward
from selfbench.validate.sandbox import PhaseResult

__all__ = [
    "VerifierRun",
    "beyond_checks",
    "network_hint",
    "phase_reason",
    "run_outcomes",
    "verifier_commands",
]

_TIMEOUT_EXIT = 124  # timeout(1)
_NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ENETUNREACH|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Could not resolve host"
)
"""Name resolution or routing failing: what a test sees without a network (not a refused
connection, which a test may provoke on purpose)."""
_MARKER = re.compile(r"^selfbench: (fail-to-pass|fail-to-pass again|pass-to-pass)\b", re.MULTILINE)
_RETRY = re.compile(r"^selfbench: infrastructure error \(exit (\d+)\)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class VerifierRun:
    """One verifier run as seen from the host."""

    name: str
    reward: Reward | None
    log: Path
    phase: PhaseResult
    selectors: tuple[tuple[str, str, int, str], ...] = ()
    """(selector, command, exit code, output) of each per-selector command, in order."""
    agent_reason: str | None = None
    """Why the agent phase before this run went wrong, or why its reward.json is unreadable."""
    test_sh_code: int = 0
    """`tests/test.sh`'s exit status (124: killed by its timeout)."""


def verifier_commands(definition: TaskDefinition) -> dict[str, str]:
    """The verifier's commands by their `test.sh` log label."""
    return {
        "fail-to-pass": fail_to_pass_command(definition),
        "pass-to-pass": pass_to_pass_command(definition),
    }


def phase_reason(run: VerifierRun) -> str | None:
    """Why the run gave no verdict (agent phase, timeout, no reward.json); None when it did."""
    if run.agent_reason is not None:
        return run.agent_reason
    if run.phase.timed_out or run.test_sh_code == _TIMEOUT_EXIT:
        return f"{run.name}: the verifier timed out (log {run.log})"
    if run.reward is None:
        return f"{run.name}: the verifier wrote no reward.json (log {run.log})"
    return None


def beyond_checks(
    definition: TaskDefinition,
    nop: VerifierRun,
    oracle: VerifierRun,
    rerun: VerifierRun | None,
) -> list[Check]:
    """The Beyond checks; `rerun` is None when the oracle did not score 1 (nothing to rerun)."""
    return [
        _selector_check(nop, expect_pass=False),
        _selector_check(oracle, expect_pass=True),
        _rerun_check(rerun),
        _suite_ran(definition, nop, oracle),
    ]


def _rerun_check(rerun: VerifierRun | None) -> Check:
    name = "independent rerun"
    if rerun is None:
        return Check(name, passed=True, detail="not run")
    if rerun.reward is not None and rerun.reward.reward == 1:
        return Check(name, passed=True)
    reason = phase_reason(rerun)
    if reason is not None:
        return Check(name, passed=False, detail=f"oracle rerun from a fresh copy: {reason}")
    detail = (
        f"oracle: the rerun from a fresh copy did not score 1 (not deterministic; log {rerun.log})"
    )
    return Check(name, passed=False, detail=detail)


def _suite_ran(definition: TaskDefinition, nop: VerifierRun, oracle: VerifierRun) -> Check:
    """The fail-to-pass command with the gold patch and pass-to-pass really ran tests."""
    f2p = fail_to_pass_command(definition)
    p2p = pass_to_pass_command(definition)
    problems: list[str] = []
    for run in (oracle, nop):
        if run.reward is None:
            continue
        segments = _segments(run.log.read_text(errors="replace"))
        wanted = [("pass-to-pass", p2p, run.reward.pass_to_pass_exit_code)]
        if run is oracle:
            wanted.insert(0, ("fail-to-pass", f2p, run.reward.fail_to_pass_exit_code))
        for label, command, code in wanted:
            text = segments.get(label)
            if text is None or command == "true" or code != 0:
                continue
            outcome = parse_outcomes(command, text, code)
            if outcome.no_tests is not None:
                problems.append(f"{run.name}: {label} ran no test: {outcome.no_tests}")
    return Check("suite ran", not problems, "; ".join(problems))


def _selector_check(run: VerifierRun, *, expect_pass: bool) -> Check:
    name = "per selector with the gold patch" if expect_pass else "per selector at the base"
    if run.reward is None or not run.reward.setup_completed:
        return Check(name, passed=True, detail="not run: the held-out tests were not prepared")
    command_of = run.name
    for selector, command, code, output in run.selectors:
        outcome = parse_outcomes(command, output, code)
        passed = code == 0 and outcome.no_tests is None
        if expect_pass and not passed:
            why = outcome.no_tests or f"exit {code}"
            return Check(
                name, passed=False, detail=f"{command_of}: selector {selector} fails alone ({why})"
            )
        if not expect_pass and passed:
            return Check(
                name,
                passed=False,
                detail=f"{command_of}: selector {selector} already passes without the solution",
            )
    return Check(name, passed=True)


def _segments(log: str) -> dict[str, str]:
    """Each verifier command's output (its last attempt) in a `test.sh` log, by label."""
    result: dict[str, str] = {}
    matches = list(_MARKER.finditer(log))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(log)
        text = log[match.end() : end]
        reward = text.find("\nselfbench: reward ")
        if reward >= 0:
            text = text[:reward]
        retries = list(_RETRY.finditer(text))
        if retries:
            text = text[retries[-1].end() :]
        result[match.group(1)] = text
    return result


def run_outcomes(log: Path, commands: dict[str, str]) -> dict[str, str]:
    """Per-test outcomes of the run's fail-to-pass and pass-to-pass output, when parseable."""
    tests: dict[str, str] = {}
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return tests
    for label, output in _segments(text).items():
        if label in commands:
            tests.update(parse_outcomes(commands[label], output, 0).tests)
    return tests


def network_hint(reason: str, runs: Sequence[VerifierRun], *, network: bool) -> str:
    """`reason`, plus a hint when a run's log shows the tests needed the withheld network."""
    if network:
        return reason
    for run in runs:
        try:
            text = run.log.read_text(errors="replace")
        except OSError:
            continue
        match = _NETWORK_ERRORS.search(text)
        if match:
            return (
                f"{reason}; the tests needed the network ({match.group(0)} in {run.log}), "
                "which the local environment withholds (--network allows it)"
            )
    return reason
