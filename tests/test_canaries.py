"""Where the verifier plants a task's must-fail canaries, and what it adds to the command."""

from __future__ import annotations

from typing import Any

import pytest

from selfbench.artifacts.report import Reward
from selfbench.bundle.canaries import canary_plan
from selfbench.bundle.render_scripts import render_test_sh
from selfbench.contract import TaskDefinition
from selfbench.evaluate.classify import TrialFacts, classify, reclassify
from selfbench.evaluate.results import Recheck
from selfbench.runners import CANARY_NAMES, runner_named
from test_render import make_definition

A, B = CANARY_NAMES
_GO_WRAPPER = runner_named("go").compiled.test_command  # type: ignore[union-attr]
"""The draft's go command: its selectors' patterns become one `-run` alternation."""


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
     (f"tests/test_x.py::test_{A}", f"tests/test_x.py::test_{B}", "--maxfail=0")),
    ("pytest-whole-file", {"failToPass": ["tests/test_x.py"]}, ["tests/test_x.py"],
     "tests/test_x.py", ("--maxfail=0",)),
    ("pytest-in-a-workdir", {"workdir": "pkg", "failToPass": ["tests/test_x.py::t"]},
     ["pkg/tests/test_x.py"], "pkg/tests/test_x.py",
     (f"tests/test_x.py::test_{A}", f"tests/test_x.py::test_{B}", "--maxfail=0")),
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
    ("go-patterns", {"testCommand": _GO_WRAPPER, "failToPass": ["^TestMul$/^neg$"]},
     ["calc/mul_test.go"], "calc/mul_test.go", (f"^Test_{A}$", f"^Test_{B}$")),
    ("cargo-integration-test", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["mul_works"]}, ["tests/mul.rs"], "tests/mul.rs", (A, B)),
    ("cargo-module", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["calc::tests::mul_works"]}, ["src/calc/mod.rs"], "src/calc/mod.rs",
     (f"calc::{A}", f"calc::{B}")),
    ("cargo-unknown-layout", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["mul_works"]}, ["tests/common/mod.rs"], None, ()),
    ("unknown-runner", {"testCommand": "make check {tests}"}, ["tests/test_x.py"], None, ()),
    # a command that stops at its first failure, or selects tests by name: no canary
    ("pytest-exitfirst", {"testCommand": "python -m pytest -x {tests}"}, ["tests/test_x.py"],
     None, ()),
    ("pytest-maxfail", {"testCommand": "uv run pytest --maxfail=1 {tests}"}, ["tests/test_x.py"],
     None, ()),
    ("pytest-keyword", {"testCommand": "python -m pytest -k 'not slow' {tests}"},
     ["tests/test_x.py"], None, ()),
    ("pytest-grouped-flags", {"testCommand": "python -m pytest -sx {tests}"},
     ["tests/test_x.py"], None, ()),
    ("pytest-in-a-shell-script", {"testCommand": "bash -c 'cd . && pytest -x \"$@\"' t {tests}"},
     ["tests/test_x.py"], None, ()),
    ("py-test-spelling", {"testCommand": "py.test --maxfail=2 {tests}"}, ["tests/test_x.py"],
     None, ()),
    ("jest-dashed-name-pattern", {"testCommand": "npx jest --test-name-pattern=x {tests}",
     "failToPass": ["test/r.test.ts"]}, ["test/r.test.ts"], None, ()),
    ("python-module-flag-is-not-pytests", {"testCommand": "python -m pytest -q {tests}"},
     ["tests/test_x.py"], "tests/test_x.py",
     (f"tests/test_x.py::test_{A}", f"tests/test_x.py::test_{B}", "--maxfail=0")),
    ("jest-bail", {"testCommand": "npx jest --bail {tests}", "failToPass": ["test/r.test.ts"]},
     ["test/r.test.ts"], None, ()),
    ("vitest-name-filter", {"testCommand": "npx vitest run -t reverse {tests}",
     "failToPass": ["test/r.test.ts"]}, ["test/r.test.ts"], None, ()),
    ("node-name-pattern", {"testCommand": "node --test --test-name-pattern=x {tests}",
     "failToPass": ["test/r.test.js"]}, ["test/r.test.js"], None, ()),
    ("go-failfast", {"testCommand": "go test -failfast {tests}", "failToPass": ["./calc"]},
     ["calc/mul_test.go"], None, ()),
    ("go-run-in-the-command", {"testCommand": "go test -run TestMul {tests}",
     "failToPass": ["./calc"]}, ["calc/mul_test.go"], None, ()),
    ("go-testdata-is-not-built", {"testCommand": "go test {tests}", "failToPass": ["./..."]},
     ["calc/testdata/x_test.go", "calc/mul_test.go"], "calc/mul_test.go", ()),
    ("go-another-system", {"testCommand": "go test {tests}", "failToPass": ["./calc"]},
     ["calc/mul_windows_test.go"], None, ()),
    ("go-system-and-architecture", {"testCommand": "go test {tests}", "failToPass": ["./calc"]},
     ["calc/mul_windows_amd64_test.go", "calc/_old_test.go"], None, ()),
    ("cargo-name-before-the-separator", {"testCommand": "cargo test {tests}",
     "failToPass": ["mul_works"]}, ["tests/mul.rs"], None, ()),
    ("cargo-binary-target", {"testCommand": "cargo test -- {tests}",
     "failToPass": ["mul_works"]}, ["src/bin/tool.rs"], None, ()),
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


def test_go_canary_patterns_go_before_a_subtests_slash() -> None:
    definition = _definition(
        testCommand=_GO_WRAPPER, failToPass=["^TestMul$/^neg$"], testPaths=["calc/mul_test.go"]
    )
    script = render_test_sh(definition, ("calc/mul_test.go",))
    [line] = [ln for ln in script.splitlines() if ln.startswith("readonly fail_to_pass_canary")]
    assert line.index(f"^Test_{A}$") < line.index(f"^Test_{B}$") < line.index("^TestMul$/^neg$")


def _reward(**fields: int) -> Reward:
    values = dict.fromkeys(("patch_applied", "fail_to_pass", "pass_to_pass", "deterministic"), 1)
    values |= {"reward": 0, "setup_completed": 1, "fail_to_pass_exit_code": 1}
    values |= {"fail_to_pass_repeat_exit_code": -1, "pass_to_pass_exit_code": 0}
    return Reward.model_validate(values | fields)


def test_a_forged_trial_is_the_agents_with_its_evidence_unless_the_oracle_fails_too() -> None:
    why = "the canary test tests/test_x.py::test_q1 passed"
    verdict = classify(TrialFacts(_reward(forged=1, fail_to_pass=0), forged=why))
    assert (verdict.passed, verdict.classification) == (False, "agent")
    assert verdict.reason == f"forged: {why}"
    broken = Recheck("t", "d", passed=False, reason="oracle: fail-to-pass failed")
    assert reclassify(verdict, broken).classification == "task"
    assert reclassify(verdict, Recheck("t", "d", passed=True, reason=None)) == verdict
    unforged = classify(TrialFacts(_reward(fail_to_pass=0)))
    assert reclassify(unforged, broken).classification == "task"


def test_a_reward_json_without_the_forged_key_is_not_forged() -> None:
    assert _reward().forged == 0
