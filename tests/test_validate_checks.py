"""The flaky-test check on recorded verifier logs: per test where the runner's output is read,
per command where it is not. Pure: no sandbox runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import task
from selfbench.validate.checks import VerifierRun, flaky_check
from selfbench.validate.report import REWARD_FIELDS, Reward
from selfbench.validate.sandbox import PhaseResult

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
