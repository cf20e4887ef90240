"""Validation's Beyond checks of the local runs (SPEC §7, Beyond), and a rejection's precise cause.

The local environment runs the phases and reads each verifier run and its log
(`environments/local/verifier.py`); these checks say what the runs prove: each fail-to-pass
selector on its own, no test that changed outcome, the independent rerun, and that the suite
really ran. Nothing here starts a process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.artifacts.report import Check
from selfbench.bundle.render_scripts import (
    F2P_AGAIN_LABEL,
    F2P_LABEL,
    P2P_LABEL,
    canary_names,
    fail_to_pass_command,
    pass_to_pass_command,
)
from selfbench.contract import TaskDefinition
from selfbench.environments.local.verifier import (
    VerifierRun,
    command_label,
    command_segments,
    phase_reason,
    verifier_commands,
)
from selfbench.outcomes import NO_MATCH, Outcomes, parse_outcomes

__all__ = ["beyond_checks", "flaky_check", "network_hint", "precise_reason"]

_NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ENETUNREACH|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Could not resolve host"
)
"""Name resolution or routing failing: what a test sees without a network (not a refused
connection, which a test may provoke on purpose)."""


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
        segments, canaries = command_segments(text), canary_names(text)
        codes = {
            F2P_LABEL: run.reward.fail_to_pass_exit_code,
            F2P_AGAIN_LABEL: run.reward.fail_to_pass_repeat_exit_code,
            P2P_LABEL: run.reward.pass_to_pass_exit_code,
        }
        labels = (P2P_LABEL,) if run is nop else tuple(codes)
        for label in labels:
            output, code = segments.get(label), codes[label]
            key = command_label(label)
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
        segments, canaries = command_segments(log), canary_names(log)
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
    text = command_segments(log).get(F2P_LABEL)
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
