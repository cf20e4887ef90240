"""One verifier run as the host sees it, and what its `tests/test.sh` log says.

The phases (`phases.py`) record each verifier run as a `VerifierRun`; this module reads those
records and their logs: why a run gave no verdict, each verifier command's output, the tests'
outcomes (`selfbench.outcomes` reads the runners' output), a forged report. Validation's Beyond
checks (`selfbench.validate.checks`) and evaluation's trials judge from what it reads. Nothing
here starts a process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import open_file
from selfbench.artifacts.report import Reward
from selfbench.bundle.render_scripts import (
    F2P_AGAIN_LABEL,
    F2P_LABEL,
    LOG_PREFIX,
    P2P_LABEL,
    RERUN_LABEL,
    RETRY_LABEL,
    REWARD_LABEL,
    VERIFIER_LABELS,
    canary_names,
    fail_to_pass_command,
    forged_evidence,
    pass_to_pass_command,
)
from selfbench.contract import TaskDefinition
from selfbench.environments.local.sandbox import PhaseResult
from selfbench.errors import ValidateError
from selfbench.outcomes import Outcomes, parse_outcomes

__all__ = [
    "VerifierRun",
    "command_label",
    "command_segments",
    "forged_reason",
    "outcome_counts",
    "phase_reason",
    "run_outcomes",
    "run_phases",
    "verifier_commands",
    "verifier_timed_out",
]

_TIMEOUT_EXIT = 124  # timeout(1)
_LABELS = "|".join(re.escape(label) for label in sorted(VERIFIER_LABELS, key=len, reverse=True))
_MARKER = re.compile(f"^{re.escape(LOG_PREFIX)}({_LABELS})\\b", re.MULTILINE)
"""Where each verifier command's output starts in a `test.sh` log (the longest label first)."""
_AGAIN = f"(?:{re.escape(RETRY_LABEL)} \\(exit \\d+\\)|{re.escape(RERUN_LABEL)}:)"
_RETRY = re.compile(f"^{re.escape(LOG_PREFIX)}{_AGAIN}.*\n?", re.MULTILINE)
"""A retry after an infrastructure error, or the rerun after a disagreement (its whole line): the
command's output starts again after it."""
_REWARD = f"\n{LOG_PREFIX}{REWARD_LABEL} "


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
    free_bytes: int | None = None
    """The free space on the workspace's filesystem as the run ended (None: unknown)."""


def verifier_commands(definition: TaskDefinition) -> dict[str, str]:
    """The verifier's commands by their `test.sh` log label."""
    return {
        F2P_LABEL: fail_to_pass_command(definition),
        P2P_LABEL: pass_to_pass_command(definition),
    }


def verifier_timed_out(run: VerifierRun) -> bool:
    """Whether a time limit ended the run: the sandbox's, or `tests/test.sh`'s own."""
    return run.phase.timed_out or run.test_sh_code == _TIMEOUT_EXIT


def phase_reason(run: VerifierRun) -> str | None:
    """Why the run gave no verdict (agent phase, timeout, no reward.json); None when it did."""
    if run.agent_reason is not None:
        return run.agent_reason
    if verifier_timed_out(run):
        return f"{run.name}: the verifier timed out (log {run.log})"
    if run.reward is None:
        return f"{run.name}: the verifier wrote no reward.json (log {run.log})"
    return None


def _segments(log: str) -> dict[str, str]:
    """Each verifier command's output (its last attempt) in a `test.sh` log, by label."""
    result: dict[str, str] = {}
    matches = list(_MARKER.finditer(log))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(log)
        text = log[match.end() : end]
        reward = text.find(_REWARD)
        if reward >= 0:
            text = text[:reward]
        retries = list(_RETRY.finditer(text))
        if retries:
            text = text[retries[-1].end() :]
        result[match.group(1)] = text
    return result


def command_label(label: str) -> str:
    """The command a log label's output is of (the repeat is fail-to-pass's)."""
    return F2P_LABEL if label == F2P_AGAIN_LABEL else label


def command_segments(log: str) -> dict[str, str]:
    """Each verifier command's output (its last attempt) in a `test.sh` log, by its label
    (`fail-to-pass`, `fail-to-pass again`, `pass-to-pass`)."""
    return _segments(log)


def run_phases(log: Path, commands: dict[str, str]) -> dict[str, Outcomes]:
    """Each verifier command's parsed output in a run's log, by its `test.sh` label."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return {}
    phases: dict[str, Outcomes] = {}
    canaries = canary_names(text)
    for label, output in _segments(text).items():
        command = commands.get(command_label(label))
        if command is not None and command != "true":
            phases[label] = parse_outcomes(command, output, 0).without(canaries)
    return phases


_LOG_LIMIT = 1 << 26
"""How much of a verifier's log `forged_reason` reads (its first 64 MiB)."""


def forged_reason(log: Path) -> str | None:
    """What a verifier's log says of its forged report (None: nothing, or the log cannot be
    read; never through a link)."""
    try:
        with open_file(log, error=ValidateError) as handle:
            text = handle.read(_LOG_LIMIT).decode(errors="replace")
    except (ValidateError, OSError):
        return None
    return forged_evidence(text)


def run_outcomes(log: Path, commands: dict[str, str]) -> dict[str, str]:
    """Per-test outcomes of the run's fail-to-pass and pass-to-pass output, when parseable."""
    tests: dict[str, str] = {}
    for label, outcomes in run_phases(log, commands).items():
        if label in commands:
            tests.update(outcomes.tests)
    return tests


def outcome_counts(log: Path, commands: dict[str, str]) -> dict[str, dict[str, int]]:
    """Per phase of a run (its `test.sh` label): how many tests passed, failed, were skipped.

    Only phases whose runner is known and whose log gives counts; a phase that ran no test has
    all three at zero.
    """
    return {
        label: {"passed": found.passed, "failed": found.failed, "skipped": found.skipped}
        for label, found in run_phases(log, commands).items()
        if found.runner is not None
    }
