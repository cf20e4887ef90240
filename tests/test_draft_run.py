"""`selfbench.draft.run`: the affected test files run at the base and with the gold patch.

The sandbox cases build real repositories with a real merged change and run them through the
local verifier (`node --test` needs no setup, so they are quick); the decision cases feed `decide`
hand-built samples.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from projects import git
from selfbench._sample_history import build_sample_history
from selfbench.artifacts.draft_record import (
    ALONE_KEY,
    DROPPED_FLAKY_KEY,
    AloneRerun,
    FlakyTest,
    dropped_flaky,
    reruns_alone,
)
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.artifacts.report import Reward, RunReport
from selfbench.bundle.evidence import REPORT_ARGUMENTS
from selfbench.bundle.render_scripts import F2P_LABEL
from selfbench.draft.api import DraftOptions, DraftResult, _run_record, draft_candidate
from selfbench.draft.coverage import LINES, CoverageSeen
from selfbench.draft.run import (
    Decision,
    FileRun,
    Observation,
    Plan,
    RunSample,
    Where,
    _collection_error,
    _flips,
    _names_one,
    _report_samples,
    _unreached,
    collection_error,
    decide,
    file_seconds,
    later_limits,
    observe,
    partial_runs,
    provisional_command,
    rejected_early,
    settled_alone,
)
from selfbench.mine import mine_repository, write_candidates
from selfbench.mine.candidate import CandidateModel, find_candidate
from selfbench.outcomes import Outcomes, parse_outcomes
from selfbench.runners.pytest import failed_plugins, is_node_id, without_plugins
from selfbench.validate.evidence import DraftProof

SANDBOX = pytest.mark.sandbox
TIMEOUTS = {"setupSeconds": 300, "agentSeconds": 600, "testsSeconds": 120}
RESOURCES: dict[str, int | float] = {"cpus": 2, "memoryMb": 4096, "storageMb": 10240}

NODE_HEAD = "const test = require('node:test');\nconst assert = require('node:assert');\n"
NODE_BASE = {
    "package.json": '{\n  "name": "strutil",\n  "version": "1.0.0",\n  "private": true\n}\n',
    "src/index.js": "exports.capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);\n",
    "test/core.test.js": (
        f"{NODE_HEAD}const {{ capitalize }} = require('../src/index.js');\n\n"
        "test('capitalize', () => assert.strictEqual(capitalize('ab'), 'Ab'));\n"
    ),
}
REVERSE = "exports.reverse = (s) => [...s].reverse().join('');\n"
REVERSE_TEST = (
    f"{NODE_HEAD}const {{ reverse }} = require('../src/index.js');\n\n"
    "test('reverse', () => assert.strictEqual(reverse('abc'), 'cba'));\n"
)


def _commit_change(
    root: Path, base: dict[str, str], gold: dict[str, str], tests: dict[str, str]
) -> tuple[Path, str, bytes, bytes]:
    """A repository with `base` committed and the change merged; (repo, base, test, gold)."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--initial-branch=main")
    for files in (base, {**gold, **tests}):
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "change")
    head = git(repo, "rev-parse", "HEAD").strip()
    sha = git(repo, "rev-parse", "HEAD~1").strip()
    test_patch = git(repo, "diff", "--binary", sha, head, "--", *sorted(tests)).encode()
    gold_patch = git(repo, "diff", "--binary", sha, head, "--", *sorted(gold)).encode()
    return repo, sha, test_patch, gold_patch


def _node_observe(
    tmp_path: Path,
    gold: dict[str, str],
    tests: dict[str, str],
    *,
    test_command: str = "node --test {tests}",
    setup: str = "node --version",
    early: bool = False,
) -> Observation:
    """`observe` on a node change; `early` stops the runs once they settle a rejection."""
    repo, sha, test_patch, gold_patch = _commit_change(tmp_path, NODE_BASE, gold, tests)
    plan = Plan(sha, ".", setup, test_command, ("node",), tuple(sorted(tests)), TIMEOUTS, RESOURCES)
    return observe(
        repo,
        plan,
        test_patch=test_patch,
        gold_patch=gold_patch,
        logs=tmp_path / "logs",
        settled=_node_settled if early else None,
    )


def _node_settled(observation: Observation) -> bool:
    return rejected_early(observation, selector_of=lambda name: name, by_file=True)


def _decide(observation: Observation, difficulty: str = "easy") -> Decision:
    return decide(
        observation,
        difficulty=difficulty,  # type: ignore[arg-type]
        selector_of=lambda name: name,
        by_file=True,
    )


# --- in the sandbox ----------------------------------------------------------------------------


@SANDBOX
def test_node_change_gives_file_selectors_from_observed_outcomes(tmp_path: Path) -> None:
    tests = {
        "test/reverse.test.js": REVERSE_TEST,
        "test/core.test.js": NODE_BASE["test/core.test.js"] + "// reviewed\n",
    }
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    observation = _node_observe(tmp_path, gold, tests)
    assert observation.reason is None
    assert [sample.name for sample in observation.base] == ["base", "base #2"]
    # twice in the first gold run's tree, once in each later run's fresh copy
    assert [sample.name for sample in observation.gold] == [
        "gold-1",
        "gold-1 #2",
        "gold-2",
        "gold-3",
    ]
    base = {run.file: run.exit_code for run in observation.base[0].files}
    assert base["test/core.test.js"] == 0
    assert base["test/reverse.test.js"] != 0
    assert dict(observation.gold[0].files[1].outcomes.tests) == {"reverse": "passed"}
    decision = _decide(observation, "medium")
    assert replace(decision, basis=None) == Decision(
        ("test/reverse.test.js",), ("test/core.test.js",), None, ("reverse",)
    )


@SANDBOX
def test_flaky_test_rejects_the_candidate_naming_it(tmp_path: Path) -> None:
    flaky = (
        (
            f"{NODE_HEAD}const fs = require('node:fs');\n"
            "const {{ reverse }} = require('../src/index.js');\n\n"
            "test('reverse once', () => {\n"
            "  const seen = fs.existsSync('.seen');\n"
            "  fs.writeFileSync('.seen', 'x');\n"
            "  assert.strictEqual(seen ? 'no' : reverse('ab'), 'ba');\n"
            "});\n"
        )
        .replace("{{", "{")
        .replace("}}", "}")
    )
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    observation = _node_observe(tmp_path, gold, {"test/flaky.test.js": flaky})
    reason = _decide(observation).reason
    assert reason is not None
    assert reason.startswith(
        "flaky: test/flaky.test.js: reverse once passed 3 of 4 runs with the gold patch (log "
    )
    # before it is called flaky it runs alone: twice in a row in each of two fresh copies, as
    # the verifier repeats it, so it changes there too (once per copy)
    assert observation.alone == (
        AloneRerun(
            test="test/flaky.test.js: reverse once",
            where="gold",
            passed=3,
            runs=4,
            alonePassed=2,
            aloneRuns=4,
        ),
    )
    logs = {path.name for path in (tmp_path / "logs").rglob("*.log")}
    assert {"alone-gold-0.log", "alone-gold-1.log", "agent-0.log"} <= logs
    assert len([name for name in logs if name == "prepare.log"]) == 1  # the parked tree


@SANDBOX
def test_regressing_candidate_is_rejected_naming_the_test(tmp_path: Path) -> None:
    broken = "exports.capitalize = (s) => s;\n" + REVERSE
    tests = {
        "test/reverse.test.js": REVERSE_TEST,
        "test/core.test.js": NODE_BASE["test/core.test.js"] + "// reviewed\n",
    }
    observation = _node_observe(tmp_path, {"src/index.js": broken}, tests)
    reason = _decide(observation).reason
    assert reason is not None
    assert reason.startswith(
        "regression: test/core.test.js: capitalize passes at the base and fails with the gold "
        "patch (log "
    )
    assert Path(reason.rsplit("(log ", 1)[1].rstrip(")")).is_file()  # the logs are kept


@SANDBOX
def test_unknown_runner_output_is_a_rejection(tmp_path: Path) -> None:
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    observation = _node_observe(
        tmp_path, gold, {"test/reverse.test.js": REVERSE_TEST}, test_command="node {tests}"
    )
    reason = _decide(observation).reason
    assert reason is not None
    assert reason.startswith(
        "cannot read the test runner's output (unknown runner in the test command; log "
    )


@SANDBOX
def test_failing_setup_is_a_rejection_with_its_log(tmp_path: Path) -> None:
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    setup = "echo 'npm ERR! 404 Not Found - GET https://registry.example/left-pad' >&2; exit 3"
    observation = _node_observe(tmp_path, gold, {"test/reverse.test.js": REVERSE_TEST}, setup=setup)
    assert observation.reason is not None
    said = "setup failed: npm ERR! 404 Not Found - GET https://registry.example/left-pad (log "
    assert observation.reason.startswith(said)
    log = Path(observation.reason.removeprefix(said).rstrip(")"))
    assert f"selfbench: setup: {setup}" in log.read_text(encoding="utf-8")


@SANDBOX
def test_no_fail_to_pass_when_the_tests_already_pass(tmp_path: Path) -> None:
    tests = {"test/core.test.js": NODE_BASE["test/core.test.js"] + "// reviewed\n"}
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    reason = _decide(_node_observe(tmp_path, gold, tests)).reason
    assert reason is not None
    assert reason.startswith(
        "no fail-to-pass test: every changed test file already passes at the base (log "
    )


SETUP_MARK = "echo setup-ran-$((40 + 2))"
"""A setup whose output (`setup-ran-42`) is not its command's text: it counts the setups."""


def _verifier_logs(tmp_path: Path) -> list[str]:
    return sorted(path.name for path in (tmp_path / "logs" / "draft-provisional").iterdir())


@SANDBOX
def test_tests_already_passing_at_the_base_skip_every_gold_run(tmp_path: Path) -> None:
    tests = {"test/core.test.js": NODE_BASE["test/core.test.js"] + "// reviewed\n"}
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    observation = _node_observe(tmp_path, gold, tests, setup=SETUP_MARK, early=True)

    assert observation.base
    assert observation.gold == ()
    assert _verifier_logs(tmp_path) == ["agent-0.log", "prepare.log"]  # one run: the base
    base_log = observation.base[0].log
    assert _decide(observation).reason == (
        f"no fail-to-pass test: every changed test file already passes at the base (log {base_log})"
    )
    assert Path(base_log).is_file()


@SANDBOX
@pytest.mark.fresh_setup  # it counts its own setup
def test_an_accepted_candidate_runs_the_base_and_each_gold_run_once_after_one_setup(
    tmp_path: Path,
) -> None:
    tests = {"test/reverse.test.js": REVERSE_TEST}
    gold = {"src/index.js": NODE_BASE["src/index.js"] + REVERSE}
    observation = _node_observe(tmp_path, gold, tests, setup=SETUP_MARK, early=True)

    assert _decide(observation).fail_to_pass == ("test/reverse.test.js",)
    runs = {sample.name.split()[0] for sample in observation.gold}
    assert runs == {"gold-1", "gold-2", "gold-3"}
    names = _verifier_logs(tmp_path)
    assert names == ["agent-0.log", "agent-1.log", "agent-2.log", "agent-3.log", "prepare.log"]
    logs = tmp_path / "logs" / "draft-provisional"
    setups = sum((logs / name).read_text(encoding="utf-8").count("setup-ran-42") for name in names)
    assert setups == 1


# --- the decision, from hand-built samples -------------------------------------------------------

PYTEST = "python -m pytest -rA {tests}"


def _pytest_run(file: str, lines: list[str], code: int) -> FileRun:
    command = PYTEST.replace("{tests}", file)
    text = "\n".join(["=== short test summary info ===", *lines]) + "\n"
    return FileRun(file, code, parse_outcomes(command, text, code))


def _sample(name: str, *runs: FileRun) -> RunSample:
    return RunSample(name, runs, f"/logs/{name}.log")


def _observation(base: RunSample, *gold: RunSample) -> Observation:
    return Observation((base,), gold, Path("/logs"), 1.0)


def _neighbour_decide(
    observation: Observation,
    neighbours: set[str],
    difficulty: str = "easy",
    *,
    by_file: bool = False,
) -> Decision:
    """`decide` with the unchanged test files `neighbours`, each test's name its selector."""
    return decide(
        observation,
        difficulty=difficulty,  # type: ignore[arg-type]
        selector_of=lambda name: name,
        by_file=by_file,
        neighbours=frozenset(neighbours),
    )


def _pytest_decide(observation: Observation, difficulty: str = "easy", cap: int = 20) -> Decision:
    return decide(
        observation,
        difficulty=difficulty,  # type: ignore[arg-type]
        selector_of=lambda name: name,
        by_file=False,
        cap=cap,
    )


A = "tests/test_a.py"
BASE_A = _pytest_run(
    A,
    [
        f"PASSED {A}::test_old",
        f"PASSED {A}::test_param[a b]",
        f"SKIPPED [1] {A}:3: no",
        f"FAILED {A}::test_new - assert 1 == 2",
        f"FAILED {A}::test_broken - boom",
        "==== 2 failed, 2 passed, 1 skipped in 0.1s ====",
    ],
    1,
)
GOLD_A = _pytest_run(
    A,
    [
        f"PASSED {A}::test_old",
        f"PASSED {A}::test_param[a b]",
        f"PASSED {A}::test_new",
        f"FAILED {A}::test_broken - boom",
        "==== 1 failed, 3 passed in 0.1s ====",
    ],
    1,
)


def test_decide_per_test_selectors_sorted_and_capped() -> None:
    observation = _observation(_sample("base", BASE_A), _sample("gold-1", GOLD_A))
    decision = _pytest_decide(observation)
    assert replace(decision, basis=None) == Decision(
        (f"{A}::test_new",),
        (f"{A}::test_old", f"{A}::test_param[a b]"),
        None,
        (f"{A}::test_new",),
    )
    assert decision.basis == PassToPassBasis(
        basis="changed test files",
        detail="no coverage measure for this runner; the changed test files' passing tests, sorted",
        selected=decision.pass_to_pass,
    )
    assert _pytest_decide(observation, cap=1).pass_to_pass == (f"{A}::test_old",)
    assert _pytest_decide(observation, "hard", cap=1).pass_to_pass == (
        f"{A}::test_old",
        f"{A}::test_param[a b]",
    )  # the tier's minimum wins over the cap


def test_decide_a_tier_without_enough_pass_to_pass_rejects() -> None:
    base = _pytest_run(A, [f"FAILED {A}::test_new - x", "== 1 failed in 0.1s =="], 1)
    gold = _pytest_run(A, [f"PASSED {A}::test_new", "== 1 passed in 0.1s =="], 0)
    observation = _observation(_sample("base", base), _sample("gold-1", gold))
    assert _pytest_decide(observation, "medium").reason == (
        "medium mode requires at least 1 pass-to-pass test; 0 of the test files' tests pass at "
        "the base and with the gold patch"
    )
    by_file = decide(
        observation, difficulty="hard", selector_of=lambda _name: A, by_file=True
    )  # a runner that selects files: the file holding the fail-to-pass test is no selector
    assert by_file.reason == (
        "hard mode requires at least 2 pass-to-pass test files: this runner selects whole files, "
        "and 0 pass entirely at the base and with the gold patch (a file that holds a "
        "fail-to-pass test fails at the base)"
    )


def test_decide_a_test_missing_at_the_base_is_fail_to_pass() -> None:
    base = _pytest_run(A, [f"ERROR {A} - ImportError", "== 1 error in 0.1s =="], 2)
    gold = _pytest_run(A, [f"PASSED {A}::test_new", "== 1 passed in 0.1s =="], 0)
    observation = _observation(_sample("base", base), _sample("gold-1", gold))
    assert _pytest_decide(observation).fail_to_pass == (f"{A}::test_new",)


def test_decide_outcome_changing_between_gold_runs_is_flaky() -> None:
    other = _pytest_run(
        A,
        [
            f"PASSED {A}::test_old",
            f"FAILED {A}::test_param[a b]",
            f"PASSED {A}::test_new",
            f"FAILED {A}::test_broken - boom",
        ],
        1,
    )
    observation = _observation(
        _sample("base", BASE_A), _sample("gold-1", GOLD_A), _sample("gold-2", other)
    )
    assert _pytest_decide(observation).reason == (
        f"flaky: {A}::test_param[a b] passed 1 of 2 runs with the gold patch (log /logs/gold-1.log)"
    )


def test_decide_no_names_from_the_runner_is_unreadable() -> None:
    quiet = _pytest_run(A, ["...", "3 passed in 0.01s"], 0)
    observation = _observation(_sample("base", BASE_A), _sample("gold-1", quiet))
    assert _pytest_decide(observation).reason == (
        "cannot read the test runner's output: gold-1: tests/test_a.py names no test "
        "(exit 0; log /logs/gold-1.log)"
    )


def test_decide_reason_from_observation_passes_through() -> None:
    observation = Observation((), (), Path("/logs"), 0.0, "setup failed (log /x)")
    assert _pytest_decide(observation).reason == "setup failed (log /x)"


def test_provisional_command_keeps_one_unquoted_placeholder() -> None:
    command = provisional_command("cd pkg && npx jest --ci {tests}", 1)
    assert command.count("{tests}") == 1
    assert '( cd pkg && npx jest --ci "$selfbench_file" )' in command


@pytest.mark.parametrize("runner", sorted(REPORT_ARGUMENTS))
def test_provisional_command_runs_only_the_files_not_the_report_arguments(
    runner: str, tmp_path: Path
) -> None:
    """The verifier adds jest's and vitest's report arguments after the selectors: the loop
    must not run them as test files (it did, and every jest or vitest draft was unreadable)."""
    command = provisional_command("printf 'ran %s\\n' {tests}", 2)
    verifier = command.replace("{tests}", f"'a b.test.ts' c.test.ts {REPORT_ARGUMENTS[runner]}")
    result = subprocess.run(
        ["sh", "-c", verifier], env={"SELFBENCH_EVIDENCE": str(tmp_path / "report.json")},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    ran = [line for line in result.stdout.splitlines() if line.startswith("ran ")]
    assert ran == ["ran a b.test.ts", "ran a b.test.ts", "ran c.test.ts", "ran c.test.ts"]
    ends = [line for line in result.stdout.splitlines() if line.startswith("selfbench-draft: end")]
    assert [line.rstrip() for line in ends] == [
        f"selfbench-draft: end {i} {r} 0" for i in (0, 1) for r in (1, 2)
    ]  # sh has no EPOCHSECONDS: no time, the marker still reads


def _provisional_log(tmp_path: Path, command: str, files: str) -> RunReport:
    """A verifier run's report whose log holds `command` run by bash on `files`, as the
    verifier's test.sh logs it."""
    verifier = command.replace("{tests}", files)
    result = subprocess.run(
        ["bash", "-c", verifier], capture_output=True, text=True, check=False, timeout=60
    )
    log = tmp_path / "base.log"
    log.write_text(f"selfbench: {F2P_LABEL}: {command}\n{result.stdout}")
    reward = Reward(
        reward=0, patch_applied=1, fail_to_pass=0, pass_to_pass=1, deterministic=1,
        setup_completed=1, fail_to_pass_exit_code=result.returncode,
        fail_to_pass_repeat_exit_code=0, pass_to_pass_exit_code=0,
    )  # fmt: skip
    return RunReport(reward, str(log))


def test_each_file_s_run_is_timed_and_the_later_runs_limited_by_it(tmp_path: Path) -> None:
    """The markers carry bash's time: a file that sleeps 2 s is measured at 2 s or so (the
    slowest of its two runs), and its later limit, an unchanged file's, is 4 times that plus a
    minute."""
    files = ("2", "0")
    plan = Plan(
        "0" * 40,
        ".",
        "true",
        "sleep {tests}",
        (),
        files,
        TIMEOUTS,
        RESOURCES,
        neighbours=frozenset(files),
    )
    report = _provisional_log(tmp_path, provisional_command("sleep {tests}", 2, 1), "2 0")
    seconds = file_seconds(plan, report)
    assert 1 <= seconds["2"] <= 4
    assert seconds["0"] <= 1
    limits = later_limits(plan, seconds, ceiling=900)
    assert limits == (int(4 * seconds["2"]) + 60, int(4 * seconds["0"]) + 60)


@pytest.mark.parametrize(
    ("seconds", "ceiling", "limits"),
    [
        ({"a": 0.0, "b": 10.0, "c": 1.0}, 900, (60, 100, 900)),
        ({"a": 300.0, "b": 1.0, "c": 1.0}, 900, (900, 64, 900)),  # never above the limit
        ({"a": 5.0, "c": 1.0}, 600, (80, 600, 600)),  # not measured: the per-command limit
    ],
)
def test_an_unchanged_file_s_later_limit_is_four_times_its_base_time_plus_a_minute(
    seconds: dict[str, float], ceiling: int, limits: tuple[int, ...]
) -> None:
    """`c` is a changed test file: it may fail at once at the base (its new tests' import) and
    run long with the gold, so it keeps the per-command limit."""
    neighbours = frozenset({"a", "b"})
    files = ("a", "b", "c")
    plan = Plan(
        "0" * 40, ".", "true", "t {tests}", (), files, TIMEOUTS, RESOURCES, neighbours=neighbours
    )
    assert later_limits(plan, seconds, ceiling) == limits


def test_a_file_past_its_limit_is_stopped_and_named(tmp_path: Path) -> None:
    """A file that hangs (here sleeps 30 s under a 1 s limit) is stopped at its limit, and the
    draft says which file and that it did not finish, instead of waiting out the hour."""
    plan = Plan("0" * 40, ".", "true", "sleep {tests}", (), ("30",), TIMEOUTS, RESOURCES)
    command = provisional_command("sleep {tests}", 1, 1, limits=[1])
    started = time.monotonic()
    report = _provisional_log(tmp_path, command, "30")
    assert time.monotonic() - started < 10
    assert _report_samples(plan, report, "gold-2") == (
        f"gold-2: 30 did not finish within its time limit (exit 124) (log {report.log})"
    )


def test_outcomes_type_is_the_parsers() -> None:
    assert isinstance(BASE_A.outcomes, Outcomes)


@pytest.mark.parametrize(
    ("coverage", "pass_to_pass"),
    [
        # without a measure, the neighbour's tests after the changed file's
        (None, (f"{A}::test_old", f"{A}::test_param[a b]", "tests/test_n.py::test_kept")),
        # coverage that ran and saw the neighbour execute nothing guarded: never its tests
        (
            CoverageSeen(LINES, {}, 7),
            (f"{A}::test_old", f"{A}::test_param[a b]"),
        ),
        # its test executes the change: chosen first
        (
            CoverageSeen(LINES, {"tests/test_n.py::test_kept": 2}, 7),
            ("tests/test_n.py::test_kept", f"{A}::test_old", f"{A}::test_param[a b]"),
        ),
    ],
)
def test_decide_an_unchanged_neighbour_gives_only_pass_to_pass_and_never_when_not_covered(
    coverage: CoverageSeen | None, pass_to_pass: tuple[str, ...]
) -> None:
    n = "tests/test_n.py"
    base_n = _pytest_run(
        n, [f"PASSED {n}::test_kept", f"FAILED {n}::test_fixed - x", "== 1 failed, 1 passed =="], 1
    )
    gold_n = _pytest_run(
        n, [f"PASSED {n}::test_kept", f"PASSED {n}::test_fixed", "== 2 passed in 0.1s =="], 0
    )
    observation = _observation(_sample("base", BASE_A, base_n), _sample("gold-1", GOLD_A, gold_n))
    decision = _neighbour_decide(replace(observation, coverage=coverage), {n}, "hard")
    assert decision.fail_to_pass == (f"{A}::test_new",)
    assert decision.pass_to_pass == pass_to_pass


# --- flaky tests the change does not reach are left out; volatile ids are one test ------------

N = "tests/test_n.py"


def _n_run(*lines: str, code: int = 0) -> FileRun:
    return _pytest_run(N, [*lines, "== 2 passed in 0.1s =="], code)


N_STEADY = _n_run(f"PASSED {N}::test_kept", f"PASSED {N}::test_slow")
N_SLOW_FAILS = _n_run(f"PASSED {N}::test_kept", f"FAILED {N}::test_slow - Timeout", code=1)
N_TEARDOWN = _n_run(f"PASSED {N}::test_kept", f"PASSED {N}::test_slow", code=1)
A_OLD_FAILS = _pytest_run(
    A,
    [
        f"FAILED {A}::test_old - Timeout",
        f"PASSED {A}::test_param[a b]",
        f"SKIPPED [1] {A}:3: no",
        f"FAILED {A}::test_new - assert 1 == 2",
        f"FAILED {A}::test_broken - boom",
    ],
    1,
)
CHANGED_P2P = (f"{A}::test_old", f"{A}::test_param[a b]")


def _runs(
    base: tuple[tuple[FileRun, ...], ...], gold: tuple[tuple[FileRun, ...], ...]
) -> Observation:
    """Two samples at the base and three with the gold patch, as `observe` reads them."""
    names = ("gold-1", "gold-1 again", "gold-2")
    return Observation(
        tuple(_sample(name, *runs) for name, runs in zip(("base", "base #2"), base, strict=True)),
        tuple(_sample(name, *runs) for name, runs in zip(names, gold, strict=True)),
        Path("/logs"),
        1.0,
    )


STEADY_BASE = ((BASE_A, N_STEADY),) * 2
STEADY_GOLD = ((GOLD_A, N_STEADY),) * 3
N_CARRIED = replace(N_STEADY, carried=True)  # a later gold run left the file out
TOUCHING_SLOW = CoverageSeen(LINES, {f"{N}::test_slow": 1}, 7)


@pytest.mark.parametrize(
    ("observation", "coverage", "pass_to_pass", "dropped", "reason"),
    [
        pytest.param(
            _runs(((BASE_A, N_STEADY), (BASE_A, N_SLOW_FAILS)), STEADY_GOLD),
            None,
            (*CHANGED_P2P, f"{N}::test_kept"),
            (FlakyTest(test=f"{N}::test_slow", where="base", passed=1, runs=2),),
            None,
            id="an unchanged file's test flipping at the base is left out",
        ),
        pytest.param(
            _runs(STEADY_BASE, ((GOLD_A, N_STEADY), (GOLD_A, N_SLOW_FAILS), (GOLD_A, N_STEADY))),
            None,
            (*CHANGED_P2P, f"{N}::test_kept"),
            (FlakyTest(test=f"{N}::test_slow", where="gold", passed=2, runs=3),),
            None,
            id="an unchanged file's test flipping with the gold patch is left out",
        ),
        pytest.param(
            _runs(STEADY_BASE, ((GOLD_A, N_STEADY), (GOLD_A, N_SLOW_FAILS), (GOLD_A, N_CARRIED))),
            None,
            (*CHANGED_P2P, f"{N}::test_kept"),
            (FlakyTest(test=f"{N}::test_slow", where="gold", passed=1, runs=2),),
            None,
            id="a carried run is not counted among the runs of a flaky test",
        ),
        pytest.param(
            _runs(STEADY_BASE, ((GOLD_A, N_TEARDOWN), (GOLD_A, N_STEADY), (GOLD_A, N_CARRIED))),
            None,
            CHANGED_P2P,
            (FlakyTest(test=N, where="gold", passed=1, runs=2),),
            None,
            id="nor among a flipping file's runs",
        ),
        pytest.param(
            _runs(((BASE_A, N_STEADY), (BASE_A, N_TEARDOWN)), STEADY_GOLD),
            None,
            CHANGED_P2P,
            (FlakyTest(test=N, where="base", passed=1, runs=2),),
            None,
            id="an unchanged file whose exit status flips is left out whole",
        ),
        pytest.param(
            _runs(((BASE_A, N_STEADY), (BASE_A, N_SLOW_FAILS)), STEADY_GOLD),
            TOUCHING_SLOW,
            None,
            (),
            f"flaky: {N}::test_slow passed 1 of 2 runs at the base (log /logs/base.log)",
            id="one the coverage run saw execute the change rejects",
        ),
        pytest.param(
            _runs(((BASE_A, N_STEADY), (A_OLD_FAILS, N_STEADY)), STEADY_GOLD),
            None,
            None,
            (),
            f"flaky: {A}::test_old passed 1 of 2 runs at the base (log /logs/base.log)",
            id="a changed test file's flaky test rejects",
        ),
        pytest.param(
            _runs(STEADY_BASE, ((GOLD_A, N_STEADY), (GOLD_A, N_STEADY), (BASE_A, N_STEADY))),
            None,
            None,
            (),
            f"flaky: {A}::test_new passed 2 of 3 runs with the gold patch (log /logs/gold-1.log)",
            id="a flaky fail-to-pass test rejects",
        ),
    ],
)
def test_a_flaky_test_the_change_does_not_reach_is_left_out_of_pass_to_pass(
    observation: Observation,
    coverage: CoverageSeen | None,
    pass_to_pass: tuple[str, ...] | None,
    dropped: tuple[FlakyTest, ...],
    reason: str | None,
) -> None:
    decision = _neighbour_decide(replace(observation, coverage=coverage), {N})
    assert (decision.reason, decision.dropped_flaky) == (reason, dropped)
    if pass_to_pass is not None:
        assert decision.fail_to_pass == (f"{A}::test_new",)
        assert decision.pass_to_pass == pass_to_pass


def _node_run(file: str, code: int, *lines: str) -> FileRun:
    return FileRun(file, code, parse_outcomes("node --test {tests}", "\n".join(lines) + "\n", code))


def test_a_flaky_unchanged_file_selected_by_file_is_left_out_whole() -> None:
    changed, slow = "test/reverse.test.js", "test/slow.test.js"
    failing, passing = _node_run(changed, 1, "✖ reverse (1ms)"), _node_run(changed, 0, "✔ reverse")
    steady = _node_run(slow, 0, "✔ spawns (5.1ms)", "✔ reads (1ms)")
    flipped = _node_run(slow, 1, "✖ spawns (5001ms)", "✔ reads (1ms)")
    observation = _runs(((failing, steady), (failing, flipped)), ((passing, steady),) * 3)
    decision = _neighbour_decide(observation, {slow}, by_file=True)
    assert (decision.reason, decision.fail_to_pass, decision.pass_to_pass) == (None, (changed,), ())
    assert decision.dropped_flaky == (
        FlakyTest(test=f"{slow}: spawns", where="base", passed=1, runs=2),
    )
    at_base = _runs(((failing, steady), (failing, steady)), ((passing, steady),) * 3)
    assert decide(
        at_base, difficulty="easy", selector_of=lambda name: name, by_file=True,
        neighbours=frozenset({slow}),
    ).pass_to_pass == (slow,)  # fmt: skip


def test_a_flaky_file_selected_by_file_is_matched_to_coverage_by_its_marked_name() -> None:
    """V8 coverage scores files by their names with volatile parts marked (`match_key`); a
    neighbour whose name holds such a part (`regress-1a2b3c4d`) and executes the change is
    reached: its flakiness rejects, not left out."""
    changed, regress = "test/reverse.test.js", "test/regress-1a2b3c4d.test.js"
    failing, passing = _node_run(changed, 1, "✖ reverse (1ms)"), _node_run(changed, 0, "✔ reverse")
    steady = _node_run(regress, 0, "✔ spawns (5.1ms)")
    flipped = _node_run(regress, 1, "✖ spawns (5001ms)")
    observation = _runs(((failing, steady), (failing, flipped)), ((passing, steady),) * 3)
    covered = replace(observation, coverage=CoverageSeen(LINES, {regress: 5}, 7))
    decision = _neighbour_decide(covered, {regress}, by_file=True)
    assert decision.reason == (
        f"flaky: {regress}: spawns passed 1 of 2 runs at the base (log /logs/base.log)"
    )


def test_pass_to_pass_left_empty_by_the_flaky_keeps_the_tiers_minimum() -> None:
    base = _pytest_run(A, [f"FAILED {A}::test_new - x", "== 1 failed in 0.1s =="], 1)
    gold = _pytest_run(A, [f"PASSED {A}::test_new", "== 1 passed in 0.1s =="], 0)
    steady = _n_run(f"PASSED {N}::test_slow")
    flipped = _n_run(f"FAILED {N}::test_slow - Timeout", code=1)
    observation = _runs(((base, steady), (base, flipped)), ((gold, steady),) * 3)
    decision = _neighbour_decide(observation, {N}, "medium")
    assert decision.reason == (
        "medium mode requires at least 1 pass-to-pass test; 0 of the test files' tests pass at "
        "the base and with the gold patch"
    )
    assert decision.dropped_flaky == (
        FlakyTest(test=f"{N}::test_slow", where="base", passed=1, runs=2),
    )


@pytest.mark.parametrize(
    "base",
    [
        pytest.param(((BASE_A, N_STEADY), (BASE_A, N_SLOW_FAILS)), id="unchanged file"),
        pytest.param(((BASE_A, N_STEADY), (A_OLD_FAILS, N_STEADY)), id="changed file"),
    ],
)
def test_no_flaky_test_settles_at_the_base(base: tuple[tuple[FileRun, ...], ...]) -> None:
    """An unchanged file's until the coverage run says whether the change reaches it; a changed
    file's until every run is made and it has run alone (`settled_alone`)."""
    at_base = replace(_runs(base, STEADY_GOLD), gold=())
    assert not rejected_early(
        at_base, selector_of=lambda name: name, by_file=False, neighbours=frozenset({N})
    )


OLD_FLIPS = _runs(((BASE_A, N_STEADY), (A_OLD_FAILS, N_STEADY)), STEADY_GOLD)
NEW_FLIPS = _runs(STEADY_BASE, ((GOLD_A, N_STEADY), (GOLD_A, N_STEADY), (BASE_A, N_STEADY)))
SLOW_FLIPS = _runs(((BASE_A, N_STEADY), (BASE_A, N_SLOW_FAILS)), STEADY_GOLD)


def _alone(*runs: FileRun) -> list[RunSample]:
    """The samples of the runs alone: the changed file's run given, the neighbour carried."""
    carried = replace(N_STEADY, carried=True)
    return [_sample(f"alone-{n}", run, carried) for n, run in enumerate(runs)]


def _alone_four(test: str, where: Where, passed: int, runs: int, alone: int) -> AloneRerun:
    """A changed test's record: `passed` of `runs` beside others, `alone` of 4 runs alone."""
    return AloneRerun(
        test=test, where=where, passed=passed, runs=runs, alonePassed=alone, aloneRuns=4
    )


@pytest.mark.parametrize(
    ("observation", "alone", "asked", "record", "reason"),
    [
        pytest.param(
            OLD_FLIPS,
            _alone(BASE_A, BASE_A, BASE_A, BASE_A),
            ("base", [A]),
            _alone_four(f"{A}::test_old", "base", 1, 2, 4),
            None,
            id="a changed file's test steady alone at the base is decided on its runs alone",
        ),
        pytest.param(
            OLD_FLIPS,
            _alone(BASE_A, A_OLD_FAILS, BASE_A, BASE_A),
            ("base", [A]),
            _alone_four(f"{A}::test_old", "base", 1, 2, 3),
            f"flaky: {A}::test_old passed 1 of 2 runs at the base (log /logs/base.log)",
            id="one that still changes alone rejects on its runs as they were",
        ),
        pytest.param(
            OLD_FLIPS,
            _alone(A_OLD_FAILS, A_OLD_FAILS, A_OLD_FAILS, A_OLD_FAILS),
            ("base", [A]),
            _alone_four(f"{A}::test_old", "base", 1, 2, 0),
            f"flaky: {A}::test_old passed 1 of 2 runs at the base (log /logs/base.log)",
            id="so does one failing in every run alone: load cannot make a test pass",
        ),
        pytest.param(
            NEW_FLIPS,
            _alone(GOLD_A, GOLD_A, GOLD_A, GOLD_A),
            ("gold", [A]),
            _alone_four(f"{A}::test_new", "gold", 2, 3, 4),
            None,
            id="a fail-to-pass test steady alone with the gold patch is fail-to-pass",
        ),
        pytest.param(
            NEW_FLIPS,
            "the test command's output is garbled",
            ("gold", [A]),
            None,
            f"flaky: {A}::test_new passed 2 of 3 runs with the gold patch (log /logs/gold-1.log)",
            id="runs alone that cannot be read leave the changes standing",
        ),
        pytest.param(
            SLOW_FLIPS,
            None,
            None,
            None,
            None,
            id="an unchanged file's test the change does not reach is not run alone",
        ),
    ],
)  # fmt: skip
def test_a_test_that_changes_outcome_runs_alone_before_it_is_called_flaky(
    observation: Observation,
    alone: list[RunSample] | str | None,
    asked: tuple[str, list[str]] | None,
    record: AloneRerun | None,
    reason: str | None,
) -> None:
    calls: list[tuple[str, list[str]]] = []

    def runs(where: str, files: Sequence[str], first: RunSample) -> list[RunSample] | str:
        calls.append((where, list(files)))
        assert alone is not None
        return alone

    settled = settled_alone(observation, frozenset({N}), runs)
    decision = _neighbour_decide(settled, {N})

    assert calls == ([asked] if asked else [])
    assert settled.alone == ((record,) if record else ())
    assert decision.reason == reason
    if reason is None:
        assert decision.fail_to_pass == (f"{A}::test_new",)
    if record is not None and reason is None:
        place = settled.base if record.where == "base" else settled.gold
        assert all(sample.files[0].alone for sample in place)
        assert not any(sample.files[1].alone for sample in place)  # the neighbour's stand


@pytest.mark.parametrize(
    ("gold", "reason", "dropped"),
    [
        pytest.param(
            ((GOLD_A, N_SLOW_FAILS), (GOLD_A, N_STEADY), (GOLD_A, N_STEADY)),
            None,
            (FlakyTest(test=f"{N}::test_slow", where="gold", passed=2, runs=3),),
            id="failing once then passing: flaky, left out",
        ),
        pytest.param(
            ((GOLD_A, N_SLOW_FAILS), (GOLD_A, N_SLOW_FAILS), (GOLD_A, N_SLOW_FAILS)),
            f"regression: {N}::test_slow passes at the base and fails with the gold patch "
            "(log /logs/gold-1.log)",
            (),
            id="failing in every gold run: a regression",
        ),
    ],
)
def test_a_neighbour_run_once_in_the_first_gold_run_is_run_again_before_it_regresses(
    gold: tuple[tuple[FileRun, ...], ...], reason: str | None, dropped: tuple[FlakyTest, ...]
) -> None:
    """The first gold run runs the neighbours once (`_run_once`): its second sample carries the
    first. A neighbour's test failing there settles nothing until a later gold run has run its
    file again; then a failure once is a flaky test (left out: the change does not reach it),
    and a failure in both a regression."""
    once = tuple((changed, replace(neighbour, carried=True)) for changed, neighbour in gold[:1])
    observation = Observation(
        tuple(
            _sample(name, *runs)
            for name, runs in zip(("base", "base #2"), STEADY_BASE, strict=True)
        ),
        (
            _sample("gold-1", *gold[0]),
            _sample("gold-1 #2", *once[0]),
            *(_sample(f"gold-{n}", *runs) for n, runs in enumerate(gold[1:], start=2)),
        ),
        Path("/logs"),
        1.0,
        coverage=CoverageSeen(LINES, {f"{A}::test_old": 1}, 7),
    )
    early = partial(
        rejected_early, selector_of=lambda name: name, by_file=False, neighbours=frozenset({N})
    )
    assert not early(replace(observation, gold=observation.gold[:2]))  # one live run: waits
    assert early(replace(observation, gold=observation.gold[:3])) == (reason is not None)
    decision = _neighbour_decide(observation, {N})
    assert (decision.reason, decision.dropped_flaky) == (reason, dropped)


def test_a_neighbour_failing_in_the_first_gold_run_is_not_left_out_of_the_later_ones(
    tmp_path: Path,
) -> None:
    """`_unreached`: an unchanged file none of whose tests the coverage run saw reach the change
    is left out of the later gold runs, unless one of its tests passed at the base and failed
    in the first gold run (run once there: a later run tells a failure once from a
    regression)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_a.py").write_text("def test_a():\n    assert True\n")
    command = f"cd {project} && {sys.executable} -m pytest -rA -p no:cacheprovider {{tests}}"
    plan = Plan("0" * 40, ".", "true", command, (), ("test_a.py", "test_b.py"), TIMEOUTS,
                RESOURCES, neighbours=frozenset({"test_b.py"}))  # fmt: skip
    nothing = CoverageSeen(LINES, {"test_a.py::test_a": 1}, 7)
    reports = []
    for name, body in (("base", "True"), ("gold-1", "True"), ("gold-1-fails", "False")):
        (tmp_path / name).mkdir()
        (project / "test_b.py").write_text(f"def test_b():\n    assert {body}\n")
        command_once = provisional_command(command, 2, 2, once=[1])
        reports.append(_provisional_log(tmp_path / name, command_once, "test_a.py test_b.py"))
    base, steady, failing = reports

    assert _unreached(plan, nothing, [base, steady]) == frozenset({"test_b.py"})
    assert _unreached(plan, nothing, [base, failing]) == frozenset()


def test_the_neighbours_run_once_in_a_run_that_repeats_the_changed_files(tmp_path: Path) -> None:
    """`once`: a file's later repeat is a `skip` marker, and its first run stands for it,
    carried (no sample of its own: it can show no flaky test)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_a.py").write_text("def test_a():\n    assert True\n")
    (project / "test_b.py").write_text("def test_b():\n    assert True\n")
    command = f"cd {project} && {sys.executable} -m pytest -rA -p no:cacheprovider {{tests}}"
    files = ("test_a.py", "test_b.py")
    plan = Plan("0" * 40, ".", "true", command, (), files, TIMEOUTS, RESOURCES,
                neighbours=frozenset({"test_b.py"}))  # fmt: skip
    report = _provisional_log(
        tmp_path, provisional_command(command, 2, 2, once=[1]), "test_a.py test_b.py"
    )
    log = Path(report.log).read_text()
    marks = [
        " ".join(line.split()[1:4])  # the mark, the file's index, the repeat
        for line in log.splitlines()
        if line.startswith("selfbench-draft: ")
    ]
    assert marks == [
        *(f"{mark} 0 {repeat}" for repeat in (1, 2) for mark in ("begin", "end")),
        "begin 1 1",
        "end 1 1",
        "skip 1 2",
    ]
    samples = _report_samples(plan, report, "base")
    assert not isinstance(samples, str)
    assert [sample.name for sample in samples] == ["base", "base #2"]
    assert [run.carried for run in samples[1].files] == [False, True]
    assert samples[1].files[1].outcomes == samples[0].files[1].outcomes
    # a later repeat's skip with no first run to stand for it is garbled output
    garbled = _provisional_log(
        tmp_path, provisional_command(command, 2, 2, skipped=[1]), "test_a.py"
    )
    assert _report_samples(plan, garbled, "base") == (
        f"base: the test command's output is garbled (log {garbled.log})"
    )


def test_the_draft_record_reads_back_the_tests_run_alone() -> None:
    steady = AloneRerun(test="t", where="gold", passed=2, runs=3, alonePassed=4, aloneRuns=4)
    flaky = AloneRerun(test="u", where="base", passed=1, runs=2, alonePassed=1, aloneRuns=4)
    evidence = json.loads(json.dumps({ALONE_KEY: [steady.model_dump(mode="json")]}))
    assert evidence[ALONE_KEY] == [
        {"test": "t", "where": "gold", "passed": 2, "runs": 3, "alonePassed": 4, "aloneRuns": 4}
    ]
    assert reruns_alone(evidence) == (steady,)
    assert reruns_alone({}) == ()
    failing = AloneRerun(test="v", where="base", passed=1, runs=2, alonePassed=0, aloneRuns=4)
    assert (steady.steady, flaky.steady, failing.steady) == (True, False, False)


def test_the_draft_record_reads_back_the_flaky_tests_left_out() -> None:
    left_out = FlakyTest(test=f"{N}::test_slow", where="gold", passed=2, runs=3)
    evidence = {DROPPED_FLAKY_KEY: [left_out.model_dump(mode="json")]}
    assert json.loads(json.dumps(evidence))[DROPPED_FLAKY_KEY] == [
        {"test": f"{N}::test_slow", "where": "gold", "passed": 2, "runs": 3}
    ]
    assert dropped_flaky(evidence) == (left_out,)
    assert dropped_flaky({}) == ()  # drafted before the list was kept


@pytest.mark.parametrize(
    ("dropped", "detail"),
    [
        (0, "and no outcome changed in the draft's 8 samples (draft.json)"),
        (
            2,
            (
                "and no selected test's outcome changed in the draft's 8 samples (draft.json; "
                "2 flaky tests the change does not reach left out)"
            ),
        ),
    ],
)
def test_validation_says_when_the_draft_left_flaky_tests_out(dropped: int, detail: str) -> None:
    proof = DraftProof(Path("draft.json"), 2, 3, 6, dropped)
    assert proof.flaky_detail() == detail


def _stamped(stamp: str, *, at_base: bool) -> RunSample:
    """The changed file in one sample: a test whose id holds the time it ran, one whose id holds
    a fixed time, and `test_new`, failing at the base."""
    lines = [
        f"PASSED {A}::test_old",
        f"PASSED {A}::test_now[{stamp}]",
        f"PASSED {A}::test_parse[2020-01-01T00:00:00]",
        f"FAILED {A}::test_new - x" if at_base else f"PASSED {A}::test_new",
    ]
    return _sample(stamp, _pytest_run(A, lines, 1 if at_base else 0))


def test_tests_whose_ids_differ_only_by_the_time_are_one_test_never_a_selector() -> None:
    base = ("2026-12-06T07:33:01.123456", "2026-12-06T07:33:02.5")
    gold = ("2026-12-06T07:33:04.000001", "2026-12-06T07:33:05.2", "2026-12-06 07:33:06")
    observation = Observation(
        tuple(_stamped(stamp, at_base=True) for stamp in base),
        tuple(_stamped(stamp, at_base=False) for stamp in gold),
        Path("/logs"),
        1.0,
    )
    decision = _pytest_decide(observation)
    assert decision.reason is None
    assert decision.fail_to_pass == (f"{A}::test_new",)
    assert decision.pass_to_pass == (f"{A}::test_old", f"{A}::test_parse[2020-01-01T00:00:00]")
    assert decision.dropped_flaky == ()


def test_a_fail_to_pass_test_whose_id_changes_between_runs_cannot_be_selected() -> None:
    base = _pytest_run(A, [f"PASSED {A}::test_old", "== 1 passed in 0.1s =="], 0)
    gold = [
        _pytest_run(A, [f"PASSED {A}::test_old", f"PASSED {A}::test_new[{suffix}]"], 0)
        for suffix in ("tmp-3f2a9c1b", "tmp-a81b22c0")
    ]
    observation = _observation(
        _sample("base", base), *(_sample(f"gold-{n}", run) for n, run in enumerate(gold, start=1))
    )
    assert _pytest_decide(observation).reason == (
        f"no fail-to-pass test: {A}::test_new[tmp-3f2a9c1b] fails at the base and passes with "
        "the gold patch, but its name changes between runs, so no selector names it "
        "(log /logs/gold-1.log)"
    )


# --- a collection error under one Python, retried under the next older one ------------------

IMPORT_FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/project/.venv/lib/python3.12/site-packages/_pytest/config/__init__.py", line 9\n'
    "    import pkg_resources\n"
    "ModuleNotFoundError: No module named 'pkg_resources'\n"
)


def _broken(file: str) -> FileRun:
    outcomes = parse_outcomes(PYTEST.replace("{tests}", file), IMPORT_FAILURE, 1)
    return FileRun(file, 1, outcomes, _collection_error(file, outcomes, IMPORT_FAILURE))


def test_the_failing_import_is_read_from_a_run_that_names_no_test() -> None:
    assert _broken(A).error == "ModuleNotFoundError: No module named 'pkg_resources'"
    summary = (
        '==== ERRORS ====\nE   TypeError: required field "lineno" missing from alias\n'
        f"=== short test summary info ===\nERROR {A} - TypeError: boom\n==== 1 error in 0.1s ====\n"
    )
    outcomes = parse_outcomes(PYTEST.replace("{tests}", A), summary, 2)
    assert _collection_error(A, outcomes, summary) == "TypeError: boom"
    assert BASE_A.error is None


_COV = "unrecognized arguments: --cov=parse --cov-report=term-missing"
_BANNER = "usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]"


@pytest.mark.parametrize(
    ("output", "error"),
    [
        pytest.param(
            "Plugin: helpconfig, Hook: pytest_cmdline_parse\n"
            f"UsageError: {_BANNER}\n__main__.py: error: {_COV}\n  inifile: /app/.pytest.ini\n"
            "  config = pluginmanager.hook.pytest_cmdline_parse(\n"
            f"ERROR: {_BANNER}\n__main__.py: error: {_COV}\n  rootdir: /app\n",
            f"UsageError: {_COV}",
            id="under-a-plugin-warning",
        ),
        pytest.param(
            f"ERROR: {_BANNER}\n__main__.py: error: {_COV}\n  inifile: /app/.pytest.ini\n",
            f"UsageError: {_COV}",
            id="pytest-alone",
        ),
        pytest.param(
            f"UsageError: {_BANNER}\n", f"UsageError: {_BANNER}", id="no-cause-keeps-the-banner"
        ),
        pytest.param(
            f"pkg: error: {_COV}\nValueError: bad\n", "ValueError: bad", id="no-banner-no-cause"
        ),
    ],
)
def test_a_usage_error_is_read_as_its_cause_not_its_banner(output: str, error: str) -> None:
    """An ini file's `addopts` naming a plugin's option the environment lacks: the reason says
    which arguments were refused, not pytest's usage line."""
    outcomes = parse_outcomes(PYTEST.replace("{tests}", A), output, 4)
    assert _collection_error(A, outcomes, output) == error


def test_a_file_collected_nowhere_is_a_collection_error_one_missing_at_the_base_only_is_not() -> (
    None
):
    nowhere = _observation(_sample("base", _broken(A)), _sample("gold-1", _broken(A)))
    at_base = _observation(_sample("base", _broken(A)), _sample("gold-1", GOLD_A))

    assert collection_error(nowhere) == (
        A,
        "ModuleNotFoundError: No module named 'pkg_resources'",
        "/logs/base.log",
    )
    assert collection_error(at_base) is None


def _unitkit_candidate(tmp_path: Path) -> tuple[Path, CandidateModel]:
    repo = build_sample_history(tmp_path)
    git(repo, "remote", "add", "origin", "https://github.com/example/unitkit.git")
    candidates = tmp_path / "candidates.jsonl"
    write_candidates(mine_repository(repo), candidates)
    return repo, find_candidate(candidates, "pr-1")


IMAGE = {"python3": "3.12", "python3.11": "3.11", "python3.12": "3.12", "python3.13": "3.13"}


def _draft_observed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    observed: Callable[[Plan], Observation],
    pythons: dict[str, str],
) -> tuple[DraftResult, list[str]]:
    """Draft the sample's pr-1 with `observe` replaced; the result and each run's interpreter."""
    repo, candidate = _unitkit_candidate(tmp_path)
    setups: list[str] = []

    def fake(repo: Path, plan: Plan, **_: object) -> Observation:
        setups.append(plan.setup_command.split(" -m venv", 1)[0])
        return observed(plan)

    monkeypatch.setattr("selfbench.draft.api.observe", fake)
    # the observations are made up: no quality run could prove them
    options = DraftOptions(logs=tmp_path / "logs", pythons=pythons, quality=False)
    return draft_candidate(repo, candidate, tmp_path / "out", options), setups


def _broken_everywhere(plan: Plan) -> Observation:
    files = [_broken(file) for file in plan.test_files]
    return _observation(_sample("base", *files), _sample("gold-1", *files))


def test_a_collection_error_is_retried_under_each_older_python_then_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, setups = _draft_observed(tmp_path, monkeypatch, _broken_everywhere, IMAGE)

    assert setups == ["python3", "python3.11"]
    assert result.reason is not None
    first, second = result.reason.split("; under ")
    assert first.startswith(
        "under Python 3.12 (python3): ModuleNotFoundError: No module named 'pkg_resources' in "
        "the collection of tests/"
    )
    assert second.startswith("Python 3.11 (python3.11): ModuleNotFoundError: No module named ")
    assert result.evidence is not None
    assert list(result.evidence.python_retries) == result.reason.split("; ")
    assert (tmp_path / "logs" / "pr-1" / "python3.11").is_dir()


def test_no_retry_under_the_same_interpreter_and_the_reason_names_the_one_that_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = {"python3": "3.11", "python3.11": "3.11"}  # the host's python3 is its 3.11
    result, setups = _draft_observed(tmp_path, monkeypatch, _broken_everywhere, host)

    assert setups == ["python3"]
    assert result.reason is not None
    assert result.reason.startswith("under Python 3.11 (python3): ModuleNotFoundError: ")
    assert "; " not in result.reason


def test_an_ordinary_fail_to_pass_file_does_not_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def new_module(plan: Plan) -> Observation:
        """The new test file imports what only the gold patch adds: no collection at the base."""
        base = [_broken(file) for file in plan.test_files]
        gold = [
            _pytest_run(file, [f"PASSED {file}::test_new", "=== 1 passed in 0.1s ==="], 0)
            for file in plan.test_files
        ]
        return _observation(_sample("base", *base), _sample("gold-1", *gold))

    result, setups = _draft_observed(tmp_path, monkeypatch, new_module, IMAGE)

    assert setups == ["python3"]
    assert result.drafted, result.reason
    assert result.evidence is not None
    assert "pythonRetries" not in result.evidence.to_json()


def _plugin_failure(plugin: str, deeper: str = "") -> str:
    """pytest's start-up log when an installed package's `pytest11` plugin fails to import (as
    loguru's old development extra with anyio 4 beside pytest 6), shortened."""
    site = "/app/.venv/lib/python3.12/site-packages"
    frames = [
        f'  File "{site}/_pytest/config/__init__.py", line 1172, in _preparse',
        '    self.pluginmanager.load_setuptools_entrypoints("pytest11")',
        f'  File "{site}/pluggy/_manager.py", line 521, in load_setuptools_entrypoints',
        '  File "/usr/local/lib/python3.12/importlib/__init__.py", line 90, in import_module',
        f'  File "{site}/_pytest/assertion/rewrite.py", line 170, in exec_module',
        f'  File "{site}/{plugin}.py", line 14, in <module>',
    ]
    if deeper:
        frames.append(f'  File "{site}/{deeper}.py", line 3, in <module>')
    return "\n".join(
        [
            "Traceback (most recent call last):",
            *frames,
            "ModuleNotFoundError: No module named '_pytest.scope'",
            f'  File "{site}/later/thing.py", line 1',
        ]
    )


@pytest.mark.parametrize(
    ("log", "names"),
    [
        (_plugin_failure("anyio/pytest_plugin"), ("anyio.pytest_plugin", "anyio")),
        (
            _plugin_failure("pytest_asyncio/plugin", deeper="other/module"),
            ("pytest_asyncio.plugin", "pytest_asyncio", "asyncio"),
        ),
        (_plugin_failure("pytest_timeout"), ("pytest_timeout", "timeout")),
        (_plugin_failure("xdist/plugin/__init__"), ("xdist.plugin", "xdist")),
        (_plugin_failure("pytest_warnings"), ("pytest_warnings",)),  # never pytest's own
        (IMPORT_FAILURE, ()),  # pytest's own import failed: no plugin to block
        ("", ()),
    ],
    ids=[
        "anyio",
        "first-frame-is-the-plugin",
        "prefix",
        "package",
        "a-builtin-name",
        "pytest-itself",
        "empty",
    ],
)
def test_a_plugin_that_failed_to_load_is_named_every_way_pytest_may_block_it(
    log: str, names: tuple[str, ...]
) -> None:
    assert failed_plugins(log) == names


@pytest.mark.parametrize(
    ("command", "blocked"),
    [
        (
            ".venv/bin/python -m pytest -rA {tests}",
            ".venv/bin/python -m pytest -p no:anyio -p no:x.y -rA {tests}",
        ),
        (
            "uv run --frozen --no-sync python -m pytest -rA {tests}",
            "uv run --frozen --no-sync python -m pytest -p no:anyio -p no:x.y -rA {tests}",
        ),
        (
            "python -m pytest --co -q && python -m pytest -rA {tests}",
            (
                "python -m pytest -p no:anyio -p no:x.y --co -q && python -m pytest -p no:anyio"
                " -p no:x.y -rA {tests}"
            ),
        ),
        ("npx vitest run {tests}", None),
    ],
)
def test_plugins_are_blocked_right_after_the_runner(command: str, blocked: str | None) -> None:
    assert without_plugins(command, ["anyio", "x.y"]) == blocked


def test_a_plugin_that_failed_to_load_is_blocked_and_the_draft_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "base.log"
    log.write_text(_plugin_failure("anyio/pytest_plugin"), encoding="utf-8")
    commands: list[str] = []

    def plugin_broken_until_blocked(plan: Plan) -> Observation:
        commands.append(plan.test_command)
        if "-p no:anyio " not in plan.test_command:
            broken = [
                replace(_broken(file), error="ModuleNotFoundError: No module named '_pytest.scope'")
                for file in plan.test_files
            ]
            base = RunSample("base", tuple(broken), str(log))
            return _observation(base, _sample("gold-1", *broken))
        return _broken_everywhere(plan)  # then another error: the older Pythons' retries

    result, setups = _draft_observed(tmp_path, monkeypatch, plugin_broken_until_blocked, IMAGE)

    assert setups == ["python3", "python3", "python3.11"]
    assert "-p no:anyio" not in commands[0]
    assert "-m pytest -p no:anyio.pytest_plugin -p no:anyio -rA" in commands[1]
    assert all("-p no:anyio " in c and "-p no:anyio.pytest_plugin " in c for c in commands[2:])
    assert result.reason is not None
    assert "_pytest.scope" not in result.reason  # blocking is no failure of its own
    assert (tmp_path / "logs" / "pr-1" / "plugins-blocked").is_dir()


def test_plugins_are_blocked_once_however_many_a_log_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds: list[str] = []

    def a_new_plugin_every_run(plan: Plan) -> Observation:
        rounds.append(plan.test_command)
        log = tmp_path / f"base-{len(rounds)}.log"
        log.write_text(_plugin_failure(f"plugin{len(rounds)}/pytest_plugin"), encoding="utf-8")
        broken = [
            replace(_broken(file), error="ModuleNotFoundError: No module named '_pytest.scope'")
            for file in plan.test_files
        ]
        return _observation(RunSample("base", tuple(broken), str(log)), _sample("gold-1", *broken))

    result, setups = _draft_observed(tmp_path, monkeypatch, a_new_plugin_every_run, IMAGE)

    assert setups == ["python3", "python3", "python3.11"]  # one blocking round, then retries
    assert "-p no:plugin1 " in rounds[-1]
    assert "plugin2" not in rounds[-1]
    assert result.reason is not None


def test_a_task_drafted_with_a_plugin_blocked_keeps_it_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "base.log"
    log.write_text(_plugin_failure("anyio/pytest_plugin"), encoding="utf-8")

    def plugin_broken_until_blocked(plan: Plan) -> Observation:
        base = [
            replace(_broken(file), error="ModuleNotFoundError: No module named '_pytest.scope'")
            for file in plan.test_files
        ]
        if "-p no:anyio " not in plan.test_command:
            return _observation(RunSample("base", tuple(base), str(log)), _sample("gold-1", *base))
        gold = [
            _pytest_run(file, [f"PASSED {file}::test_new", "=== 1 passed in 0.1s ==="], 0)
            for file in plan.test_files
        ]
        return _observation(_sample("base", *base), _sample("gold-1", *gold))

    result, setups = _draft_observed(tmp_path, monkeypatch, plugin_broken_until_blocked, IMAGE)

    assert result.drafted, result.reason
    assert setups == ["python3", "python3"]
    assert result.task_dir is not None
    definition = json.loads((result.task_dir / "definition.json").read_text(encoding="utf-8"))
    assert "-m pytest -p no:anyio.pytest_plugin -p no:anyio -rA" in definition["testCommand"]
    assert result.evidence is not None
    said = json.dumps(result.evidence.to_json())
    assert "anyio.pytest_plugin, anyio blocked: a plugin failed to load at start" in said


# --- what settles a rejection early (pure) -------------------------------------------------------

PASS_A = _pytest_run(A, [f"PASSED {A}::test_old", "== 1 passed in 0.1s =="], 0)
NEW_AT_GOLD = _pytest_run(
    A, [f"PASSED {A}::test_old", f"PASSED {A}::test_new", "== 2 passed in 0.1s =="], 0
)


def _early(observation: Observation, *, by_file: bool = False) -> bool:
    return rejected_early(observation, selector_of=lambda name: name, by_file=by_file)


def test_per_test_runners_need_one_gold_run_even_when_every_test_passes_at_the_base() -> None:
    at_base = Observation((_sample("base", PASS_A),), (), Path("/logs"), 1.0)
    assert not _early(at_base)
    # a test only the gold patch names (missing at the base) is fail-to-pass
    new = _observation(_sample("base", PASS_A), _sample("gold-1", NEW_AT_GOLD))
    assert not _early(new)
    assert _pytest_decide(new).fail_to_pass == (f"{A}::test_new",)


def test_the_first_gold_run_settles_no_fail_to_pass_with_the_full_runs_reason() -> None:
    first = _observation(_sample("base", PASS_A), _sample("gold-1", PASS_A))
    every = _observation(
        _sample("base", PASS_A), *(_sample(f"gold-{n}", PASS_A) for n in (1, 2, 3))
    )
    assert _early(first)
    reason = _pytest_decide(first).reason
    assert reason == _pytest_decide(every).reason
    assert reason == (
        "no fail-to-pass test: every changed test file already passes at the base "
        "(log /logs/gold-1.log)"
    )


def test_file_selectors_passing_at_the_base_settle_before_any_gold_run() -> None:
    failing = _pytest_run(A, [f"FAILED {A}::test_old - x", "== 1 failed in 0.1s =="], 1)
    at_base = Observation((_sample("base", PASS_A),), (), Path("/logs"), 1.0)
    assert _early(at_base, by_file=True)
    assert decide(
        at_base, difficulty="easy", selector_of=lambda name: name, by_file=True
    ).reason == (
        "no fail-to-pass test: every changed test file already passes at the base "
        "(log /logs/base.log)"
    )
    assert not _early(
        Observation((_sample("base", failing),), (), Path("/logs"), 1.0), by_file=True
    )


def test_a_collection_error_at_the_base_settles_nothing_before_a_gold_run() -> None:
    broken = Observation((_sample("base", _broken(A)),), (), Path("/logs"), 1.0)
    assert not _early(broken)  # the gold may fix it, or drafting tries another Python
    assert not _early(broken, by_file=True)


def test_too_few_pass_to_pass_tests_settle_only_once_the_coverage_run_is_read() -> None:
    """Before the coverage run, its scores may still find a guard among the neighbours; after
    it, a further gold run can only leave tests out, so the tier's minimum settles."""
    base = _pytest_run(A, [f"FAILED {A}::test_new - x", "== 1 failed in 0.1s =="], 1)
    gold = _pytest_run(A, [f"PASSED {A}::test_new", "== 1 passed in 0.1s =="], 0)
    observation = _observation(_sample("base", base), _sample("gold-1", gold))
    assert _pytest_decide(observation, "medium").reason is not None
    early = partial(rejected_early, selector_of=lambda name: name, by_file=False)
    assert not early(observation, minimum=1)
    covered = replace(observation, coverage=CoverageSeen(LINES, {}, 7))
    assert early(covered, minimum=1)
    assert not early(covered, minimum=0)  # the easy tier needs none
    # a runner without a measure knows all it will know of coverage from the start
    assert early(replace(observation, coverage=CoverageSeen("")), minimum=1)
    guarded = _observation(_sample("base", BASE_A), _sample("gold-1", GOLD_A))
    assert not early(replace(guarded, coverage=CoverageSeen(LINES, {}, 7)), minimum=1)


def test_a_change_the_audit_blocks_is_rejected_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, candidate = _unitkit_candidate(tmp_path)
    hard = candidate.model_copy(update={"difficulty": "hard"})  # mined easy: too small for hard
    runs: list[Plan] = []

    def observed(repo: Path, plan: Plan, **_: object) -> Observation:
        runs.append(plan)
        raise AssertionError("the tests ran for a change the audit blocks")

    monkeypatch.setattr("selfbench.draft.api.observe", observed)
    options = DraftOptions(logs=tmp_path / "logs", pythons=IMAGE)
    result = draft_candidate(repo, hard, tmp_path / "out", options)

    assert runs == []
    assert result.reason == (
        "audit: hard mode requires at least 3 implementation files; found 1; hard mode requires "
        "at least 100 changed implementation lines; found 35"
    )


def test_a_file_a_later_gold_run_leaves_out_keeps_the_first_gold_run_s_outcomes(
    tmp_path: Path,
) -> None:
    """A later gold run skips the files at `skipped` (a `skip` marker each, nothing run): the
    sample reads the first gold run's outcomes for them. Without that run to carry from, a skip
    marker is garbled output, never a pass."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_a.py").write_text("def test_a():\n    assert True\n")
    (project / "test_b.py").write_text("def test_b():\n    assert True\n")
    command = f"cd {project} && {sys.executable} -m pytest -rA -p no:cacheprovider {{tests}}"
    files = ("test_a.py", "test_b.py")
    plan = Plan("0" * 40, ".", "true", command, (), files, TIMEOUTS, RESOURCES,
                neighbours=frozenset({"test_b.py"}))  # fmt: skip
    (tmp_path / "first").mkdir()
    first = _provisional_log(
        tmp_path / "first", provisional_command(command, 2, 1), "test_a.py test_b.py"
    )
    gold_1 = _report_samples(plan, first, "gold-1")
    assert not isinstance(gold_1, str)
    (project / "test_b.py").write_text("def test_b():\n    assert False\n")  # never runs again
    (tmp_path / "later").mkdir()
    later = _provisional_log(
        tmp_path / "later", provisional_command(command, 2, 1, skipped=[1]), "test_a.py"
    )
    log = Path(later.log).read_text()
    assert "selfbench-draft: skip 1 1" in log
    assert "selfbench-draft: begin 1 1" not in log
    gold_2 = _report_samples(plan, later, "gold-2", gold_1[0])
    assert not isinstance(gold_2, str)
    assert [run.outcomes.tests for run in gold_2[0].files] == [
        (("test_a.py::test_a", "passed"),),
        (("test_b.py::test_b", "passed"),),  # carried from the first gold run
    ]
    assert _report_samples(plan, later, "gold-2") == (
        f"gold-2: the test command's output is garbled (log {later.log})"
    )


# --- later gold runs of some tests of an unchanged file (`partial_runs`) -------------------------

NEIGHBOUR = (
    "def test_hit():\n    assert {hit}\n\ndef test_miss():\n    assert {miss}\n\n"
    "def test_other():\n    assert True\n"
)


def _two_files(tmp_path: Path) -> tuple[Path, Plan]:
    """A project with a changed test file `test_a.py` and an unchanged `test_b.py` of three tests,
    and the plan that runs them with real pytest, its tests given by name."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_a.py").write_text("def test_a():\n    assert True\n")
    (project / "test_b.py").write_text(NEIGHBOUR.format(hit=True, miss=True))
    command = f"cd {project} && {sys.executable} -m pytest -rA -p no:cacheprovider {{tests}}"
    plan = Plan("0" * 40, ".", "true", command, (), ("test_a.py", "test_b.py"), TIMEOUTS,
                RESOURCES, neighbours=frozenset({"test_b.py"}), named_tests=is_node_id)  # fmt: skip
    return project, plan


@pytest.mark.parametrize("limits", [(), (60, 60)], ids=["no limit", "limited"])
def test_a_later_gold_run_runs_only_the_named_tests_of_a_file_and_carries_the_others(
    tmp_path: Path, limits: tuple[int, ...]
) -> None:
    """`parts`: the file's run gets its tests' names in the file's place, after a `part`
    marker; the sample holds that run's outcomes for them and the first gold run's for the
    others, carried (no sample of their own). A test asked for and not reported is missing,
    never carried; without a first gold run to carry from, a part is garbled output."""
    project, plan = _two_files(tmp_path)
    (tmp_path / "first").mkdir()
    first = _provisional_log(
        tmp_path / "first", provisional_command(plan.test_command, 2, 1), "test_a.py test_b.py"
    )
    gold_1 = _report_samples(plan, first, "gold-1")
    assert not isinstance(gold_1, str)
    # were test_miss run again, it would fail: it is not, so the first run's pass stands
    (project / "test_b.py").write_text(NEIGHBOUR.format(hit=False, miss=False))
    parts = {1: ("test_b.py::test_hit",)}
    (tmp_path / "later").mkdir()
    command = provisional_command(plan.test_command, 2, 1, limits, parts=parts)
    later = _provisional_log(tmp_path / "later", command, "test_a.py test_b.py")
    log = Path(later.log).read_text()
    assert "selfbench-draft: part 1 1" in log
    assert "FAILED test_b.py::test_hit" in log
    assert "test_miss" not in log
    gold_2 = _report_samples(plan, later, "gold-2", gold_1[0], parts)
    assert not isinstance(gold_2, str)
    run = gold_2[0].files[1]
    assert run.outcomes.tests == (
        ("test_b.py::test_hit", "failed"),
        ("test_b.py::test_miss", "passed"),  # carried from the first gold run
        ("test_b.py::test_other", "passed"),
    )
    assert run.carried_tests == frozenset({"test_b.py::test_miss", "test_b.py::test_other"})
    assert (run.exit_code, run.carried) == (1, False)
    assert _report_samples(plan, later, "gold-2", None, parts) == (
        f"gold-2: the test command's output is garbled (log {later.log})"
    )
    # a name the run does not report failed: never carried, nor missing (a flaky test's mark)
    gone = {1: ("test_b.py::test_gone",)}
    (tmp_path / "gone").mkdir()
    command = provisional_command(plan.test_command, 2, 1, limits, parts=gone)
    missing = _report_samples(
        plan,
        _provisional_log(tmp_path / "gone", command, "test_a.py test_b.py"),
        "gold-2",
        gold_1[0],
        gone,
    )
    assert not isinstance(missing, str)
    assert dict(missing[0].files[1].outcomes.tests) == {
        "test_b.py::test_gone": "failed",  # asked for, reported nothing
        "test_b.py::test_hit": "passed",  # carried: not asked for
        "test_b.py::test_miss": "passed",
        "test_b.py::test_other": "passed",
    }


def test_a_quoted_name_reaches_the_runner_as_one_word(tmp_path: Path) -> None:
    """A parameter id with spaces and shell syntax is one quoted word: printed, never run."""
    name = "test_b.py::test_p[a b; touch pwned $(touch pwned2) `x`]"
    command = provisional_command("printf 'word=%s\\n' {tests}", 1, 1, parts={0: (name,)})
    result = subprocess.run(
        ["bash", "-c", command.replace("{tests}", "test_b.py")],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"word={name}" in result.stdout.splitlines()
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def _first_runs(tmp_path: Path, plan: Plan, neighbour: str) -> list[RunReport]:
    """The base run (test_b.py's tests all pass) and a first gold run with `neighbour` as
    test_b.py."""
    project = tmp_path / "project"
    reports = []
    for name, text in (("base", NEIGHBOUR.format(hit=True, miss=True)), ("gold-1", neighbour)):
        (tmp_path / name).mkdir()
        (project / "test_b.py").write_text(text)
        command = provisional_command(plan.test_command, 2, 1)
        reports.append(_provisional_log(tmp_path / name, command, "test_a.py test_b.py"))
    return reports


HIT = CoverageSeen(LINES, {"test_a.py::test_a": 2, "test_b.py::test_hit": 1}, 3)


@pytest.mark.parametrize(
    ("case", "seen", "gold_1", "named", "skipped", "parts"),
    [
        ("the test the change reaches", HIT, (True, True), True, (),
         {1: ("test_b.py::test_hit",)}),
        ("and one that regressed", HIT, (True, False), True, (),
         {1: ("test_b.py::test_hit", "test_b.py::test_miss")}),
        ("none where the runner runs whole files", HIT, (True, True), False, (), {}),
        ("none where the coverage run failed", replace(HIT, problem="no data"), (True, True),
         True, (), {}),
        ("none where every test matters", replace(HIT, scores={"test_b.py::test_hit": 1,
         "test_b.py::test_miss": 1, "test_b.py::test_other": 1}), (True, True), True, (), {}),
        ("none for a file left out", HIT, (True, True), True, ("test_b.py",), {}),
    ],
)  # fmt: skip
def test_the_later_gold_runs_run_the_tests_of_an_unchanged_file_that_matter(
    tmp_path: Path,
    case: str,
    seen: CoverageSeen,
    gold_1: tuple[bool, bool],
    named: bool,
    skipped: tuple[str, ...],
    parts: dict[int, tuple[str, ...]],
) -> None:
    _, plan = _two_files(tmp_path)
    plan = plan if named else replace(plan, named_tests=None)
    first = _first_runs(tmp_path, plan, NEIGHBOUR.format(hit=gold_1[0], miss=gold_1[1]))
    assert partial_runs(plan, seen, first, skipped) == parts, case


@pytest.mark.parametrize(
    ("name", "runs"),
    [
        ("test_b.py::test_p[a b]", True),
        ("test_b.py::Class::test_p", True),
        ("test_b.py::test_p[2026-12-06T07:33:01]", False),  # the next run's id is another
        ("test_b.py::test_p[a\nb]", False),
        ("test_c.py::test_p", False),  # another file's
        ("test_b.py", False),  # the file, not a test of it
        ("test_b.py::", False),  # no selector pytest takes
        ("test_b.py::test_p[{tests}]", False),  # the verifier fills `{tests}` in the command
        ("test_b.py::test_p[::1]", False),  # pytest before 7.1 cannot select it
        ("test_b.py::test_p[a/b.py::c]", False),
    ],
)
def test_a_test_whose_name_would_not_select_it_keeps_its_file_whole(name: str, runs: bool) -> None:
    assert _names_one(is_node_id, "test_b.py", name) is runs


def test_names_too_long_for_one_command_keep_their_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command is one argument of `bash -c` (128 KiB on Linux): the quoted names of all
    files together stay under `PART_NAMES_LIMIT`."""
    _, plan = _two_files(tmp_path)
    first = _first_runs(tmp_path, plan, NEIGHBOUR.format(hit=True, miss=True))
    quoted = len("'test_b.py::test_hit' ")
    monkeypatch.setattr("selfbench.draft.run.PART_NAMES_LIMIT", quoted - 1)
    assert partial_runs(plan, HIT, first, ()) == {}
    monkeypatch.setattr("selfbench.draft.run.PART_NAMES_LIMIT", quoted)
    assert partial_runs(plan, HIT, first, ()) == {1: ("test_b.py::test_hit",)}


def test_a_name_that_reads_as_an_option_keeps_its_file_whole() -> None:
    assert not _names_one(lambda _: True, "-p.py", "-p.py::test_p")


def test_a_run_of_some_tests_shows_no_flip_of_the_tests_it_carried_or_of_its_file() -> None:
    """The first gold run fails test_other, so its file exits 1; a later run of test_hit alone
    exits 0. Neither the carried test nor the file's exit status changed outcome: no flip.
    A later run that asked for test_hit and does not report it flips it."""
    whole = _pytest_run(
        "test_b.py",
        ["PASSED test_b.py::test_hit", "FAILED test_b.py::test_other - assert False"],
        1,
    )
    carried = frozenset({"test_b.py::test_other"})
    part = _pytest_run("test_b.py", ["PASSED test_b.py::test_hit"], 0)
    part = replace(part, outcomes=replace(part.outcomes, tests=whole.outcomes.tests))
    part = replace(part, carried_tests=carried)
    lost = replace(
        _pytest_run("test_b.py", [], 4),
        outcomes=replace(whole.outcomes, tests=whole.outcomes.tests[1:]),
        carried_tests=carried,
    )
    steady = [_sample("gold-1", whole), _sample("gold-2", part), _sample("gold-3", part)]
    assert _flips(steady, "gold") == []
    flipped = _flips([*steady[:2], _sample("gold-3", lost)], "gold")
    assert [(flip.name, flip.passed, flip.runs) for flip in flipped] == [
        ("test_b.py::test_hit", 2, 3)
    ]


def test_the_draft_record_counts_the_tests_a_run_carried() -> None:
    """`draft.json` says how many of a file's tests a part run carried, and marks none else."""
    whole = _pytest_run("test_b.py", ["PASSED test_b.py::test_hit", "PASSED test_b.py::t"], 0)
    part = replace(whole, carried_tests=frozenset({"test_b.py::t"}))
    files = [file.to_json() for file in _run_record(_sample("gold-2", part, whole)).files]
    assert [file.get("carriedTests") for file in files] == [1, None]
    assert files[0]["tests"] == {"test_b.py::test_hit": "passed", "test_b.py::t": "passed"}
