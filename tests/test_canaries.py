"""Where the verifier plants a task's must-fail canaries, and what it adds to the command."""

from __future__ import annotations

from typing import Any

import pytest

from selfbench.bundle.canaries import canary_plan
from selfbench.contract import TaskDefinition
from selfbench.evaluate.classify import TrialFacts, classify, reclassify
from selfbench.evaluate.results import Recheck
from selfbench.runners import CANARY_NAMES
from selfbench.validate.report import Reward
from test_render import make_definition

A, B = CANARY_NAMES
_GO_WRAPPER = "sh -c 'exec go test \"$@\"' go-test {tests}"


def _definition(**fields: Any) -> TaskDefinition:
    base = {
        "testCommand": "python -m pytest {tests}",
        "failToPass": ["tests/test_x.py::test_new"],
        "passToPass": [],
        "testPaths": ["tests/test_x.py"],
        "workdir": ".",
    }
    return make_definition(**(base | fields))


PLANS = [
    # (id, definition fields, held-out paths, the host file, the selectors added)
    ("pytest-node-id", {}, ["tests/test_x.py"], "tests/test_x.py",
     (f"tests/test_x.py::test_{A}", f"tests/test_x.py::test_{B}")),
    ("pytest-whole-file", {"failToPass": ["tests/test_x.py"]}, ["tests/test_x.py"],
     "tests/test_x.py", ()),
    ("pytest-in-a-workdir", {"workdir": "pkg", "failToPass": ["tests/test_x.py::t"]},
     ["pkg/tests/test_x.py"], "pkg/tests/test_x.py",
     (f"tests/test_x.py::test_{A}", f"tests/test_x.py::test_{B}")),
    ("pytest-selector-not-held-out", {"failToPass": ["tests/test_old.py::t"]},
     ["tests/test_x.py"], None, ()),
    ("pytest-held-out-data-only", {}, ["tests/data.json"], None, ()),
    ("node-file", {"testCommand": "node --test {tests}", "failToPass": ["test/r.test.mjs"]},
     ["test/r.test.mjs"], "test/r.test.mjs", ()),
    ("jest-second-selector", {"testCommand": "npx jest {tests}",
     "failToPass": ["test/fixture.json", "test/r.test.ts"]},
     ["test/fixture.json", "test/r.test.ts"], "test/r.test.ts", ()),
    ("vitest-not-a-test-file", {"testCommand": "npx vitest run {tests}",
     "failToPass": ["test"]}, ["test/r.test.ts"], None, ()),
    ("bun-file", {"testCommand": "bun test {tests}", "failToPass": ["test/r.test.ts"]},
     ["test/r.test.ts"], "test/r.test.ts", ()),
    ("go-package", {"testCommand": "go test {tests}", "failToPass": ["./calc"]},
     ["calc/mul_test.go", "core/x_test.go"], "calc/mul_test.go", ()),
    ("go-other-package-only", {"testCommand": "go test {tests}", "failToPass": ["./calc"]},
     ["core/x_test.go"], None, ()),
    ("go-recursive", {"testCommand": "go test {tests}", "failToPass": ["./..."]},
     ["core/x_test.go"], "core/x_test.go", ()),
    ("go-patterns", {"testCommand": _GO_WRAPPER, "failToPass": ["^TestMul$"]},
     ["calc/mul_test.go"], "calc/mul_test.go", (f"^Test_{A}$", f"^Test_{B}$")),
    ("cargo-integration-test", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["mul_works"]}, ["tests/mul.rs"], "tests/mul.rs", (A, B)),
    ("cargo-module", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["calc::tests::mul_works"]}, ["src/calc/mod.rs"], "src/calc/mod.rs",
     (f"calc::{A}", f"calc::{B}")),
    ("cargo-unknown-layout", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["mul_works"]}, ["tests/common/mod.rs"], None, ()),
    ("unknown-runner", {"testCommand": "make check {tests}"}, ["tests/test_x.py"], None, ()),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fields", "held_out", "host", "selectors"),
    [case[1:] for case in PLANS],
    ids=[case[0] for case in PLANS],
)
def test_the_canaries_go_into_a_held_out_file_the_fail_to_pass_command_runs(
    fields: dict[str, Any], held_out: list[str], host: str | None, selectors: tuple[str, ...]
) -> None:
    plan = canary_plan(_definition(**fields), held_out)
    if host is None:
        assert plan is None
        return
    assert plan is not None
    assert (plan.file, plan.selectors) == (host, selectors)
    assert A in plan.text
    assert B in plan.text


def _reward(**fields: int) -> Reward:
    values = dict.fromkeys(("patch_applied", "fail_to_pass", "pass_to_pass", "deterministic"), 1)
    values |= {"reward": 0, "setup_completed": 1, "fail_to_pass_exit_code": 1}
    values |= {"fail_to_pass_repeat_exit_code": -1, "pass_to_pass_exit_code": 0}
    return Reward.model_validate(values | fields)


def test_a_forged_trial_is_the_agents_with_its_evidence_whatever_the_recheck() -> None:
    why = "the canary test tests/test_x.py::test_q1 passed"
    verdict = classify(TrialFacts(_reward(forged=1, fail_to_pass=0), forged=why))
    assert (verdict.passed, verdict.classification) == (False, "agent")
    assert verdict.reason == f"forged: {why}"
    broken = Recheck("t", "d", passed=False, reason="oracle: fail-to-pass failed")
    assert reclassify(verdict, broken) == verdict
    unforged = classify(TrialFacts(_reward(fail_to_pass=0)))
    assert reclassify(unforged, broken).classification == "task"


def test_a_reward_json_without_the_forged_key_is_not_forged() -> None:
    assert _reward().forged == 0
