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

from selfbench._fs import open_file
from selfbench.artifacts.report import Check, Reward
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
from selfbench.outcomes import NO_MATCH, Outcomes, parse_outcomes

__all__ = [
    "VerifierRun",
    "beyond_checks",
    "command_segments",
    "flaky_check",
    "forged_reason",
    "network_hint",
    "outcome_counts",
    "phase_reason",
    "precise_reason",
    "run_outcomes",
    "run_phases",
    "verifier_commands",
    "verifier_timed_out",
]

_TIMEOUT_EXIT = 124  # timeout(1)
_NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ENETUNREACH|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Could not resolve host"
)
"""Name resolution or routing failing: what a test sees without a network (not a refused
connection, which a test may provoke on purpose)."""
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


def beyond_checks(
    definition: TaskDefinition,
    nop: VerifierRun,
    oracle: VerifierRun,
    reruns: Sequence[VerifierRun] | None,
) -> list[Check]:
    """The Beyond checks; `reruns` is None when the oracle did not score 1 (nothing to rerun).

    The flaky-test check comes before the rerun's own verdict: a test that changed outcome is
    the precise cause of a rerun that did not score 1.
    """
    return [
        _selector_check(nop, expect_pass=False),
        _selector_check(oracle, expect_pass=True),
        flaky_check(definition, nop, None if reruns is None else (oracle, *reruns)),
        _rerun_check(reruns),
        _suite_ran(definition, nop, oracle),
    ]


def _rerun_check(reruns: Sequence[VerifierRun] | None) -> Check:
    name = "independent rerun"
    if reruns is None:
        return Check(name, passed=False, detail="not run: the oracle did not score 1", ran=False)
    if not reruns:
        return Check(name, passed=False, detail="not run: --reruns 2 asks for none", ran=False)
    for rerun in reruns:
        if rerun.reward is not None and rerun.reward.reward == 1:
            continue
        reason = phase_reason(rerun)
        if reason is not None:
            return Check(name, passed=False, detail=f"oracle rerun from a fresh copy: {reason}")
        why = "did not score 1 (not deterministic"
        detail = f"oracle: the rerun from a fresh copy {why}; log {rerun.log})"
        return Check(name, passed=False, detail=detail)
    return Check(name, passed=True)


def _samples(
    definition: TaskDefinition, nop: VerifierRun, gold: Sequence[VerifierRun]
) -> dict[str, list[Outcomes]]:
    """Each verifier command's parsed runs: fail-to-pass with the gold patch (twice per run),
    pass-to-pass at the base and with the gold patch."""
    commands = verifier_commands(definition)
    samples: dict[str, list[Outcomes]] = {F2P_LABEL: [], P2P_LABEL: []}
    for run in (nop, *gold):
        if run.reward is None:
            continue
        text = run.log.read_text(errors="replace")
        segments, canaries = _segments(text), canary_names(text)
        codes = {
            F2P_LABEL: run.reward.fail_to_pass_exit_code,
            F2P_AGAIN_LABEL: run.reward.fail_to_pass_repeat_exit_code,
            P2P_LABEL: run.reward.pass_to_pass_exit_code,
        }
        labels = (P2P_LABEL,) if run is nop else tuple(codes)
        for label in labels:
            output, code = segments.get(label), codes[label]
            key = _command_label(label)
            if output is None or code < 0 or commands[key] == "true":
                continue
            samples[key].append(parse_outcomes(commands[key], output, code).without(canaries))
    return samples


def _outcome_of(test: str, run: Outcomes) -> str | None:
    """The test's outcome in one run: named, or passed when the run passed without naming it
    (pytest -q names only failures); None when the run says nothing of it."""
    named = dict(run.tests).get(test)
    if named is not None:
        return named
    return "passed" if run.failure is None else None


def flaky_check(
    definition: TaskDefinition, nop: VerifierRun, gold: Sequence[VerifierRun] | None
) -> Check:
    """No test changed outcome across the runs: `flaky: <test> passed <n> of <m> runs`.

    `gold` are the verifier runs with the gold patch (None: the oracle did not score 1, and
    comparing its runs would only repeat its reason). Where the runner's tests cannot be read,
    the commands' own verdicts are compared.
    """
    name = "no flaky test"
    if gold is None:
        return Check(name, passed=False, detail="not run: the oracle did not score 1", ran=False)
    problems: list[str] = []
    for label, runs in sorted(_samples(definition, nop, gold).items()):
        if len(runs) < 2:
            continue
        names = sorted({test for run in runs for test, _ in run.tests})
        for test in names:
            seen = [outcome for run in runs if (outcome := _outcome_of(test, run)) is not None]
            if len(set(seen)) > 1:
                problems.append(f"{test} passed {seen.count('passed')} of {len(seen)} runs")
        if not names and len({run.failure is None for run in runs}) > 1:
            passed = sum(run.failure is None for run in runs)
            problems.append(f"the {label} command passed {passed} of {len(runs)} runs")
    if problems:
        return Check(name, passed=False, detail="flaky: " + "; ".join(problems))
    return Check(name, passed=True)


def _suite_ran(definition: TaskDefinition, nop: VerifierRun, oracle: VerifierRun) -> Check:
    """The fail-to-pass command with the gold patch and pass-to-pass really ran tests."""
    f2p = fail_to_pass_command(definition)
    p2p = pass_to_pass_command(definition)
    problems: list[str] = []
    judged = 0
    for run in (oracle, nop):
        if run.reward is None:
            continue
        log = run.log.read_text(errors="replace")
        segments, canaries = _segments(log), canary_names(log)
        wanted = [(P2P_LABEL, p2p, run.reward.pass_to_pass_exit_code)]
        if run is oracle:
            wanted.insert(0, (F2P_LABEL, f2p, run.reward.fail_to_pass_exit_code))
        for label, command, code in wanted:
            text = segments.get(label)
            if text is None or command == "true" or code != 0:
                continue
            outcome = parse_outcomes(command, text, code).without(canaries)
            judged += outcome.runner is not None
            if outcome.no_tests is not None:
                problems.append(f"{run.name}: {label} ran no test: {outcome.no_tests}")
    if not judged:
        why = "not run: no passing test command whose runner's output selfbench reads"
        return Check("suite ran", passed=False, detail=why, ran=False)
    return Check("suite ran", not problems, "; ".join(problems))


def precise_reason(definition: TaskDefinition, oracle: VerifierRun, reason: str) -> str:
    """`reason`, or its precise cause when the oracle's fail-to-pass log shows it: a selector
    that names no test (`oracle: tests/x.py::test_y: no such test`) or a suite that ran none."""
    if not reason.startswith("oracle: fail-to-pass failed") or oracle.reward is None:
        return reason
    log = oracle.log.read_text(errors="replace")
    text = _segments(log).get(F2P_LABEL)
    if text is None:
        return reason
    command = fail_to_pass_command(definition)
    found = parse_outcomes(command, text, oracle.reward.fail_to_pass_exit_code)
    found = found.without(canary_names(log))
    if found.no_tests == NO_MATCH:
        alone = [(s, parse_outcomes(c, out, code)) for s, c, code, out in oracle.selectors]
        missing = [s for s, one in alone if one.no_tests == NO_MATCH]
        if len(definition.failToPass) == 1:
            missing = list(definition.failToPass)
        if missing:
            return f"oracle: {missing[0]}: no such test"
    if found.no_tests is not None:
        return f"oracle: fail-to-pass ran no test: {found.no_tests}"
    return reason


def _selector_check(run: VerifierRun, *, expect_pass: bool) -> Check:
    name = "per selector with the gold patch" if expect_pass else "per selector at the base"
    if run.reward is None or not run.reward.setup_completed:
        why = "not run: the held-out tests were not prepared"
        return Check(name, passed=False, detail=why, ran=False)
    if not run.selectors:
        why = "not run: one fail-to-pass selector, proven by the fail-to-pass command itself"
        return Check(name, passed=False, detail=why, ran=False)
    command_of = run.name
    for selector, command, code, output in run.selectors:
        outcome = parse_outcomes(command, output, code)
        passed = code == 0 and outcome.no_tests is None
        if expect_pass and outcome.no_tests == NO_MATCH:
            return Check(name, passed=False, detail=f"{command_of}: {selector}: no such test")
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
        reward = text.find(_REWARD)
        if reward >= 0:
            text = text[:reward]
        retries = list(_RETRY.finditer(text))
        if retries:
            text = text[retries[-1].end() :]
        result[match.group(1)] = text
    return result


def _command_label(label: str) -> str:
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
        command = commands.get(_command_label(label))
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
