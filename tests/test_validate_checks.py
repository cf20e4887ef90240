"""The local environment's checks on recorded verifier logs: the flaky-test check (per test where
the runner's output is read, per command where it is not), the log's segments and their labels,
the per-selector and rerun checks' messages. Pure: no sandbox runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import task
from selfbench.artifacts.report import REWARD_FIELDS, Reward
from selfbench.bundle.render_scripts import (
    F2P_AGAIN_LABEL,
    F2P_LABEL,
    P2P_LABEL,
    VERIFIER_LABELS,
    canary_names,
    forged_evidence,
    render_test_sh,
)
from selfbench.contract import TaskDefinition
from selfbench.environments.local.sandbox import PhaseResult
from selfbench.environments.local.verifier import (
    VerifierRun,
    command_segments,
    run_phases,
    verifier_commands,
)
from selfbench.runners import CANARY_NAMES, CANARY_VALUES
from selfbench.validate.checks import beyond_checks, flaky_check

PHASE = PhaseResult(exit_code=0, timed_out=False, seconds=1.0)


def _run(
    tmp_path: Path, name: str, p2p: tuple[int, str], f2p: tuple[int, str] = (0, "")
) -> VerifierRun:
    log = tmp_path / f"{name}.log"
    log.write_text(
        f"selfbench: fail-to-pass\n{f2p[1]}\nselfbench: fail-to-pass again\n{f2p[1]}\n"
        f"selfbench: pass-to-pass\n{p2p[1]}\nselfbench: reward 1\n"
    )
    values = {field: 1 for field in REWARD_FIELDS if not field.endswith("exit_code")}
    values |= {"forged": 0}
    values |= {"fail_to_pass_exit_code": f2p[0], "fail_to_pass_repeat_exit_code": f2p[0]}
    values |= {"pass_to_pass_exit_code": p2p[0]}
    return VerifierRun(name, Reward.model_validate(values), log, PHASE)


FAILED = (
    "F...\n=== short test summary info ===\n"
    "FAILED tests/test_a.py::test_x - assert 0\n1 failed, 3 passed in 0.01s"
)
PASSED = "4 passed in 0.01s"


@pytest.mark.parametrize(
    ("command", "outputs", "detail"),
    [
        (".venv/bin/python -m pytest -q {tests}", [(0, PASSED)] * 3, ""),
        (
            ".venv/bin/python -m pytest -q {tests}",
            [(0, PASSED), (1, FAILED), (0, PASSED)],
            "flaky: tests/test_a.py::test_x passed 2 of 3 runs",
        ),
        (
            "make check TESTS={tests}",
            [(0, "ok"), (0, "ok"), (2, "boom")],
            "flaky: the pass-to-pass command passed 2 of 3 runs",
        ),
    ],
    ids=["steady", "pytest-test-named", "unknown-runner-by-command"],
)
def test_a_test_that_changes_outcome_is_named(
    tmp_path: Path, command: str, outputs: list[tuple[int, str]], detail: str
) -> None:
    definition = task(testCommand=command, passToPass=["tests/test_a.py"])
    nop, oracle, rerun = (
        _run(tmp_path, name, out)
        for name, out in zip(("nop", "oracle", "rerun"), outputs, strict=True)
    )
    check = flaky_check(definition, nop, (oracle, rerun))
    assert (check.ran, check.passed, check.detail) == (True, not detail, detail)


def test_without_gold_runs_the_check_is_not_run(tmp_path: Path) -> None:
    definition = task(passToPass=["tests/test_a.py"])
    check = flaky_check(definition, _run(tmp_path, "nop", (0, PASSED)), None)
    assert (check.ran, check.passed) == (False, False)
    assert check.detail == "not run: the oracle did not score 1"


RECORDED = Path(__file__).parent / "data" / "verifier" / "infrastructure-retry.log"
"""A real oracle log of `tests/test.sh` (recorded from `selfbench validate`): its fail-to-pass
command printed `npm ERR! code ECONNRESET` and failed on the first attempt, so test.sh logged
`selfbench: infrastructure error (exit 1); retrying in 10 s` and ran it again, which passed."""
RECORDED_COMMAND = (
    "if [ ! -e /tmp/selfbench-once ]; then touch /tmp/selfbench-once; "
    "echo 'npm ERR! code ECONNRESET'; echo 'F [100%]'; exit 1; fi; "
    "python3 -m pytest -q -p no:cacheprovider {tests}"
)


def _recorded_definition() -> TaskDefinition:
    return task(
        testCommand=RECORDED_COMMAND,
        failToPass=["tests/test_mul.py"],
        passToPass=["tests/test_add.py"],
    )


def test_a_retried_command_is_read_from_its_last_attempt() -> None:
    text = RECORDED.read_text(encoding="utf-8")
    assert "selfbench: infrastructure error (exit 1); retrying in 10 s" in text
    segments = command_segments(text)
    assert sorted(segments) == sorted(VERIFIER_LABELS)
    assert "ECONNRESET" not in segments[F2P_LABEL]
    assert "F [100%]" not in segments[F2P_LABEL]
    assert segments[F2P_LABEL].split() == [".", "[100%]", "1", "passed", "in", "0.03s"]
    assert "reward" not in segments[P2P_LABEL]  # the reward line closes the last segment
    definition = _recorded_definition()
    phases = run_phases(RECORDED, verifier_commands(definition))
    counts = {label: (found.passed, found.failed) for label, found in phases.items()}
    assert counts == {F2P_LABEL: (1, 0), F2P_AGAIN_LABEL: (1, 0), P2P_LABEL: (1, 0)}


RERUN = Path(__file__).parent / "data" / "verifier" / "summary-rerun.log"
"""A real log of `tests/test.sh` (`tests/redteam/test_rerun.py`'s project whose first run prints
a summary line that disagrees with its report): fail-to-pass ran twice, the rerun decided."""


def test_a_command_run_again_after_a_disagreement_is_read_from_its_rerun() -> None:
    segments = command_segments(RERUN.read_text(encoding="utf-8"))
    assert segments[F2P_LABEL].split()[:5] == [".", "[100%]", "1", "passed", "in"]
    assert "0.02s" in segments[F2P_LABEL]
    assert "7 passed" not in segments[F2P_LABEL]
    assert "disagree" not in segments[F2P_LABEL]


def test_the_log_labels_are_the_ones_test_sh_logs() -> None:
    """checks.py reads the labels render_scripts.py spells once; test.sh logs each of them."""
    script = render_test_sh(task(), ("tests/test_x.py",))
    placeholders = set(re.findall(r"@[A-Z_]+@", script))
    assert placeholders <= {*CANARY_NAMES, *CANARY_VALUES}  # the canaries', replaced as it runs
    assert "log() { printf 'selfbench: %s\\n' \"$*\"; }" in script
    for label in VERIFIER_LABELS:
        assert re.search(rf'^\s*log "{label}[ :]', script, re.MULTILINE), label
    assert 'log "infrastructure error (exit $status); retrying' in script
    assert 'log "rerun: running the command once more, fresh"' in script
    assert 'log "reward $reward"' in script
    assert 'log "canaries: $a $b"' in script


def test_the_canaries_named_in_a_log_are_read_back() -> None:
    log = "selfbench: canaries: qa1b2c3d4e5f zy9x8w7v6u5t\nselfbench: fail-to-pass: x\n"
    assert canary_names(log) == ("qa1b2c3d4e5f", "zy9x8w7v6u5t")
    assert canary_names("selfbench: fail-to-pass: x\n") == ()
    assert canary_names("selfbench: canaries: a;b $(x)\n") == ()  # not names it draws
    forged = "selfbench: forged: the canary test x passed\n"
    assert forged_evidence(forged) == "the canary test x passed"
    assert forged_evidence(log) is None


def _selector_runs(
    tmp_path: Path, outputs: list[tuple[str, int, str]]
) -> tuple[TaskDefinition, VerifierRun, VerifierRun]:
    definition = task(failToPass=[selector for selector, _, _ in outputs])
    nop = _run(tmp_path, "nop", (0, PASSED), (1, FAILED))
    oracle = _run(tmp_path, "oracle", (0, PASSED), (0, PASSED))
    selectors = tuple(
        (selector, verifier_commands(task(failToPass=[selector]))[F2P_LABEL], code, out)
        for selector, code, out in outputs
    )
    nop_alone = tuple((s, c, 1, FAILED) for s, c, _, _ in selectors)
    return (
        definition,
        VerifierRun("nop", nop.reward, nop.log, PHASE, nop_alone),
        VerifierRun("oracle", oracle.reward, oracle.log, PHASE, selectors),
    )


def test_a_selector_that_fails_alone_is_named(tmp_path: Path) -> None:
    definition, nop, oracle = _selector_runs(
        tmp_path,
        [("tests/test_a.py", 0, PASSED), ("tests/test_b.py", 1, "F\n1 failed in 0.01s")],
    )
    checks = {check.name: check for check in beyond_checks(definition, nop, oracle, [])}
    check = checks["per selector with the gold patch"]
    assert (check.ran, check.passed) == (True, False)
    assert check.detail == "oracle: selector tests/test_b.py fails alone (exit 1)"
    assert checks["per selector at the base"].passed


def test_reruns_2_leaves_the_independent_rerun_not_run(tmp_path: Path) -> None:
    definition, nop, oracle = _selector_runs(
        tmp_path, [("tests/test_a.py", 0, PASSED), ("tests/test_b.py", 0, PASSED)]
    )
    checks = {check.name: check for check in beyond_checks(definition, nop, oracle, [])}
    rerun = checks["independent rerun"]
    assert (rerun.ran, rerun.passed, rerun.detail) == (
        False,
        False,
        "not run: --reruns 2 asks for none",
    )
    assert checks["per selector with the gold patch"].passed
