"""Per-test outcomes parsed from real runner output, and the "ran no test" verdict.

Real runs: pytest (this venv's interpreter), node's test runner (TAP and the spec reporter) and
cargo test run here in temp dirs, and their actual output is parsed. go and bun are not installed
on the development machine: their cases are *recorded* outputs under `tests/data/outcomes/`,
written by hand to match the formats the runners document and print; when `go` or `bun` is on
PATH, a real run is checked too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfbench._shell import quote
from selfbench.outcomes import (
    NO_MATCH,
    RUNNERS,
    Outcomes,
    detect_runner,
    parse_outcomes,
)

DATA = Path(__file__).parent / "data" / "outcomes"

# (tests by name, (passed, failed, skipped), no_tests)
Expected = tuple[dict[str, str], tuple[int, int, int], str | None]
# (command, combined output, exit code)
Run = tuple[str, str, int]


def shell(command: str, cwd: Path, env: dict[str, str] | None = None) -> Run:
    """Run a command the way a task's test command runs: `sh -c`, stdout and stderr together."""
    result = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
        timeout=300,
    )
    return command, result.stdout.decode("utf-8", errors="replace"), result.returncode


def shell_all(commands: dict[str, tuple[str, Path, dict[str, str]]]) -> dict[str, Run]:
    """Run independent commands side by side (each runner's start-up dominates), keyed as given."""
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = {key: pool.submit(shell, *job) for key, job in commands.items()}
        return {key: future.result() for key, future in futures.items()}


def parsed(run: Run) -> Outcomes:
    return parse_outcomes(*run)


def summary(outcomes: Outcomes) -> Expected:
    counts = (outcomes.passed, outcomes.failed, outcomes.skipped)
    return dict(outcomes.tests), counts, outcomes.no_tests


# --- detect_runner -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("pytest {tests}", "pytest"),
        ("pytest -q 'tests/test_a.py::test_x'", "pytest"),
        ("py.test tests", "pytest"),
        (".venv/bin/pytest -x tests", "pytest"),
        ("python -m pytest tests", "pytest"),
        ("python3.12 -X dev -W error -m pytest tests", "pytest"),
        ("python -mpytest tests", "pytest"),
        ("uv run pytest {tests}", "pytest"),
        ("uv run --with pytest-xdist --frozen pytest -n 2 {tests}", "pytest"),
        ("uv run -m pytest tests", "pytest"),
        ("uvx pytest tests", "pytest"),
        ("poetry run pytest tests", "pytest"),
        ("coverage run --source src -m pytest tests", "pytest"),
        ("cd pkg && PYTHONPATH=src python -m pytest {tests} 2>&1", "pytest"),
        ("env -u HOME CI=1 pytest tests", "pytest"),
        ("timeout -s KILL 600 pytest tests", "pytest"),
        ("bash -lc 'cd pkg && pytest {tests}'", "pytest"),
        ("sh -o pipefail -c 'pytest tests | tee log'", "pytest"),
        ("node --test {tests}", "node"),
        ("node --test-reporter=spec --test --test-name-pattern {tests}", "node"),
        ("node --experimental-strip-types --test test/", "node"),
        ("bun test {tests}", "bun"),
        ("bun test --timeout 5000 -t {tests}", "bun"),
        ("go test ./...", "go"),
        ("cd pkg && go test -run {tests} ./...", "go"),
        ("go -C pkg test -v ./...", "go"),
        ("cargo test {tests}", "cargo"),
        ("cargo +nightly test --workspace -- --exact {tests}", "cargo"),
        ("cargo --locked t", "cargo"),
        ("go vet ./... && go test ./...", "go"),
        # Unknown or ambiguous: no runner.
        ("npm test -- {tests}", None),
        ("npx vitest run {tests}", "vitest"),
        ("npx jest --ci {tests}", "jest"),
        ("node node_modules/.bin/jest {tests}", "jest"),
        ("npx eslint {tests}", None),
        ("bun run test", None),
        ("node script.js", None),
        ("python script.py -m pytest", None),
        ("python -c 'import pytest'", None),
        ("go build ./...", None),
        ("cargo nextest run", None),
        ("make test", None),
        ("sh run-tests.sh", None),
        ("pytest tests && node --test", None),
        ("echo pytest", None),
        ("", None),
        ("uv run", None),
        ("bash -c", None),
    ],
)
def test_detect_runner(command: str, runner: str | None) -> None:
    assert detect_runner(command) == runner


def test_detect_runner_nested_shells_stop() -> None:
    command = "pytest"
    for _ in range(6):
        command = f"sh -c {quote(command)}"
    assert detect_runner(command) is None
    assert detect_runner("sh -c 'sh -c pytest'") == "pytest"


# --- the verdict ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcomes", "failure"),
    [
        (Outcomes("pytest", (), 1, 0, 0, None, 0), None),
        (Outcomes("pytest", (), 1, 2, 0, None, 1), "exited 1 (2 failed)"),
        (Outcomes("cargo", (), 0, 0, 0, None, 101), "exited 101"),
        (Outcomes(None, (), 0, 0, 0, None, -9), "exited -9"),
        (
            Outcomes("pytest", (), 0, 0, 0, "pytest ran no test (exit 5)", 5),
            "pytest ran no test (exit 5)",
        ),
        (Outcomes("go", (), 0, 0, 0, NO_MATCH, 0), "no test matched the selector"),
    ],
)
def test_failure(outcomes: Outcomes, failure: str | None) -> None:
    assert outcomes.failure == failure


def test_unknown_runner_parses_nothing() -> None:
    output = "tests/a.py::t PASSED\n=== 1 passed in 0.1s ===\n"
    assert parse_outcomes("make test", output, 0) == Outcomes(None, (), 0, 0, 0, None, 0)


# --- pytest, real runs ---------------------------------------------------------------------------

PYTEST_FILE = """\
import pytest

def test_pass():
    assert True

def test_fail():
    print("tests/test_a.py::test_pass FAILED")  # hostile output in the captured log
    assert 1 == 2

@pytest.mark.skip(reason="not yet")
def test_skip():
    pass

@pytest.mark.parametrize("value", ["a b", "c"])
def test_param(value):
    assert value

@pytest.mark.xfail
def test_xfail():
    assert False
"""
A = "tests/test_a.py::"
PYTEST_ALL = {
    A + "test_pass": "passed",
    A + "test_fail": "failed",
    A + "test_skip": "skipped",
    A + "test_param[a b]": "passed",
    A + "test_param[c]": "passed",
    A + "test_xfail": "skipped",
}
PYTEST_CASES: dict[str, tuple[str, int, Expected]] = {
    "mixed -v": ("-v tests", 1, (PYTEST_ALL, (3, 1, 2), None)),
    "mixed -q": ("-q tests", 1, ({A + "test_fail": "failed"}, (3, 1, 2), None)),
    "mixed -rA": (
        "-rA -q tests",
        1,
        ({k: v for k, v in PYTEST_ALL.items() if k != A + "test_skip"}, (3, 1, 2), None),
    ),
    "mixed -qq": ("-qq tests", 1, ({A + "test_fail": "failed"}, (3, 1, 2), None)),
    "ansi colours": ("-v --color=yes tests", 1, (PYTEST_ALL, (3, 1, 2), None)),
    "pass": ("-v 'tests/test_a.py::test_pass'", 0, ({A + "test_pass": "passed"}, (1, 0, 0), None)),
    "fail": ("-q 'tests/test_a.py::test_fail'", 1, ({A + "test_fail": "failed"}, (0, 1, 0), None)),
    "skip": (
        "-v 'tests/test_a.py::test_skip'",
        0,
        ({A + "test_skip": "skipped"}, (0, 0, 1), "pytest ran no test (1 skipped)"),
    ),
    "selector matches nothing": ("-q tests -k nothing", 5, ({}, (0, 0, 0), NO_MATCH)),
    "no test files": ("-q empty", 5, ({}, (0, 0, 0), "pytest ran no test (exit 5)")),
    "no test files -qq": ("-qq empty", 5, ({}, (0, 0, 0), "pytest ran no test (exit 5)")),
}


@pytest.fixture(scope="module")
def pytest_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("pytest-project")
    (root / "tests").mkdir()
    (root / "tests" / "test_a.py").write_text(PYTEST_FILE)
    (root / "empty").mkdir()
    env = {"PYTEST_ADDOPTS": "", "PYTHONDONTWRITEBYTECODE": "1"}
    python = f"{quote(sys.executable)} -m pytest -p no:cacheprovider"
    return shell_all(
        {case: (f"{python} {args}", root, env) for case, (args, _, _) in PYTEST_CASES.items()}
    )


@pytest.mark.parametrize("case", PYTEST_CASES)
def test_pytest_real(case: str, pytest_runs: dict[str, Run]) -> None:
    run = pytest_runs[case]
    _, exit_code, expected = PYTEST_CASES[case]
    assert run[2] == exit_code, run[1]
    assert summary(parsed(run)) == expected
    assert parsed(run).runner == "pytest"
    if case == "ansi colours":
        assert "\x1b[" in run[1]


SUBTESTS_FILE = """\
import unittest

class TestData(unittest.TestCase):
    def test_valid(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_ok(self):
        pass
"""


@pytest.mark.parametrize("flags", ["-rA -v", "-rA -q", "-v"])
def test_pytest_a_failed_subtest_fails_its_test(tmp_path: Path, flags: str) -> None:
    """pytest 9 reports a failed subtest as `SUBFAILED(i=1) …::test_valid` beside
    `PASSED …::test_valid`; earlier releases as `FAILED …::test_valid`. Either way it failed."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_sub.py").write_text(SUBTESTS_FILE)
    python = f"{quote(sys.executable)} -m pytest -p no:cacheprovider"
    run = shell(f"{python} {flags} tests", tmp_path, {"PYTEST_ADDOPTS": ""})
    assert run[2] == 1, run[1]
    tests = dict(parsed(run).tests)
    assert tests["tests/test_sub.py::TestData::test_valid"] == "failed"
    assert tests.get("tests/test_sub.py::TestData::test_ok", "passed") == "passed"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("SUBFAILED(i=1) t.py::T::t - AssertionError", ("t.py::T::t", "failed")),
        (
            "SUBFAILED[datetimes] tests/test_data.py::T::t - x",
            ("tests/test_data.py::T::t", "failed"),
        ),
        ("SUBPASSED(i=0) t.py::T::t", ("t.py::T::t", "passed")),
        ("SUBSKIPPED(i=2) t.py::T::t - not yet", ("t.py::T::t", "skipped")),
        ("SUBFAILED(i=1, j='a) b') t.py::T::t - m", ("t.py::T::t", "failed")),
        ('SUBFAILED(msg="x(y") t.py::T::t - m', ("t.py::T::t", "failed")),
        ("SUBFAILED t.py::T::t - m", ("t.py::T::t", "failed")),
        ("SUBFAILED(i=1 t.py::T::t", None),
        ("SUBTOTAL 3 t.py::T::t", None),
    ],
)
def test_pytest_subtest_summary_lines(line: str, expected: tuple[str, str] | None) -> None:
    output = (
        f"=== short test summary info ===\nPASSED t.py::T::t\n{line}\n=== 1 passed in 0.1s ===\n"
    )
    tests = dict(parse_outcomes("pytest -rA", output, 1).tests)
    if expected is None:
        assert tests == {"t.py::T::t": "passed"}
    else:
        name, outcome = expected
        assert tests[name] == ("passed" if outcome == "skipped" else outcome)


# --- node --test, real runs ----------------------------------------------------------------------

NODE_FILES = {
    "nothing.test.js": "// the tests for this module are still to be written\n",
    "mixed.test.js": """\
        const test = require('node:test');
        const assert = require('node:assert');
        test('adds', () => { assert.strictEqual(1 + 1, 2); });
        test('fails', () => {
          console.log('ok 99 - printed by a test');
          assert.strictEqual(1, 2, 'line one\\nok 5 - inside an error message');
        });
        test('skipped', { skip: 'not yet' }, () => {});
        test('todo #1', { todo: true }, () => {});
        test.describe('suite', () => {
          test.it('inner pass', () => {});
          test.it('inner fail', () => { throw new Error('boom'); });
        });
        test('parent', async (t) => { await t.test('child', () => {}); });
        """,
    "pass.test.js": """\
        const test = require('node:test');
        test('one', () => {});
        test.describe('group', () => { test.it('two', () => {}); });
        """,
    "skip.test.js": """\
        const test = require('node:test');
        test('later', { skip: true }, () => {});
        """,
}
NODE_MIXED = {
    "adds": "passed",
    "fails": "failed",
    "skipped": "skipped",
    "todo #1": "skipped",
    "suite > inner pass": "passed",
    "suite > inner fail": "failed",
    "suite": "failed",
    "parent > child": "passed",
    "parent": "passed",
}
NODE_CASES: dict[str, tuple[str, str, int, Expected | None]] = {
    "mixed": (".", "mixed.test.js", 1, (NODE_MIXED, (4, 2, 2), None)),
    "pass": (
        ".",
        "pass.test.js",
        0,
        ({"one": "passed", "group > two": "passed", "group": "passed"}, (2, 0, 0), None),
    ),
    "skip": (
        ".",
        "skip.test.js",
        0,
        ({"later": "skipped"}, (0, 0, 1), "node --test ran no test (1 skipped)"),
    ),
    # What node reports for tests a name pattern excludes changed across versions; only the
    # verdict is pinned.
    "selector matches nothing": (".", "--test-name-pattern=zzz pass.test.js", 0, None),
    "no test files": ("empty", "", 0, ({}, (0, 0, 0), "node --test ran no test (tests 0)")),
    # Node 20 reports a selected file without tests as a passing test named by its path; newer
    # releases report no test. Either way it ran no test; only the verdict is pinned.
    "file with no test": (".", "nothing.test.js", 0, None),
}
NODE_REPORTERS = {"default": "", "spec": "--test-reporter=spec "}


@pytest.fixture(scope="module")
def node_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    root = tmp_path_factory.mktemp("node-project")
    for name, text in NODE_FILES.items():
        (root / name).write_text(textwrap.dedent(text))
    (root / "empty").mkdir()
    return shell_all(
        {
            f"{case} {reporter}": (f"node --test {flag}{args}".rstrip(), root / where, {})
            for case, (where, args, _, _) in NODE_CASES.items()
            for reporter, flag in NODE_REPORTERS.items()
        }
    )


@pytest.mark.parametrize("reporter", NODE_REPORTERS)
@pytest.mark.parametrize("case", NODE_CASES)
def test_node_real(case: str, reporter: str, node_runs: dict[str, Run]) -> None:
    run = node_runs[f"{case} {reporter}"]
    _, _, exit_code, expected = NODE_CASES[case]
    assert run[2] == exit_code, run[1]
    outcomes = parsed(run)
    assert outcomes.runner == "node"
    if case == "file with no test":
        assert (outcomes.passed, outcomes.failed, outcomes.tests) == (0, 0, ())
        assert outcomes.failure is not None
        assert outcomes.failure.startswith("node --test ran no test (")
    elif expected is None:
        assert (outcomes.passed, outcomes.failed, outcomes.no_tests) == (0, 0, NO_MATCH)
        assert outcomes.failure == NO_MATCH
    else:
        assert summary(outcomes) == expected


# --- cargo test, real runs -----------------------------------------------------------------------

CARGO_FILES = {
    "Cargo.toml": """\
        [package]
        name = "tiny"
        version = "0.1.0"
        edition = "2021"
        """,
    "src/lib.rs": """\
        /// Adds.
        ///
        /// ```
        /// assert_eq!(tiny::add(1, 2), 3);
        /// ```
        pub fn add(a: i32, b: i32) -> i32 {
            a + b
        }

        #[cfg(test)]
        mod tests {
            #[test]
            fn adds() {
                assert_eq!(super::add(1, 1), 2);
            }

            #[test]
            fn fails() {
                println!("test printed::by_a_test ... ok");
                assert_eq!(super::add(1, 1), 3);
            }

            #[test]
            #[ignore]
            fn ignored() {}

            #[test]
            #[ignore = "slow"]
            fn ignored_reason() {}
        }
        """,
    "tests/it.rs": """\
        #[test]
        fn integration() {
            assert_eq!(tiny::add(2, 2), 4);
        }
        """,
    "tests/empty.rs": "",
}
CARGO_ALL = {
    "tests::adds": "passed",
    "tests::fails": "failed",
    "tests::ignored": "skipped",
    "tests::ignored_reason": "skipped",
    "integration": "passed",
    "src/lib.rs - add (line 3)": "passed",
}
CARGO_CASES: dict[str, tuple[str, int, Expected]] = {
    "mixed": ("--no-fail-fast", 101, (CARGO_ALL, (3, 1, 2), None)),
    "mixed -q": ("-q --no-fail-fast", 101, ({"tests::fails": "failed"}, (3, 1, 2), None)),
    "ansi colours": ("--no-fail-fast -- --color always", 101, (CARGO_ALL, (3, 1, 2), None)),
    "pass": ("--lib adds", 0, ({"tests::adds": "passed"}, (1, 0, 0), None)),
    "fail": ("--lib fails", 101, ({"tests::fails": "failed"}, (0, 1, 0), None)),
    "skip": (
        "--lib tests::ignored -- --exact",
        0,
        ({"tests::ignored": "skipped"}, (0, 0, 1), "cargo test ran no test (1 skipped)"),
    ),
    "selector matches nothing": ("zzz", 0, ({}, (0, 0, 0), NO_MATCH)),
    "no tests": ("--test empty", 0, ({}, (0, 0, 0), "cargo test ran no test (running 0 tests)")),
}


@pytest.fixture(scope="module")
def cargo_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    root = tmp_path_factory.mktemp("cargo-project")
    for name, text in CARGO_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    env = {
        "CARGO_TARGET_DIR": str(root / "target"),
        "CARGO_NET_OFFLINE": "true",
        "CARGO_TERM_COLOR": "never",
        "RUST_BACKTRACE": "0",
    }
    build = shell("cargo test --no-run", root, env)
    assert build[2] == 0, build[1]
    runs = {}
    for case, (args, _, _) in CARGO_CASES.items():
        colour = {"CARGO_TERM_COLOR": "always"} if case == "ansi colours" else {}
        runs[case] = shell(f"cargo test {args}", root, {**env, **colour})
    return runs


@pytest.mark.parametrize("case", CARGO_CASES)
def test_cargo_real(case: str, cargo_runs: dict[str, Run]) -> None:
    run = cargo_runs[case]
    _, exit_code, expected = CARGO_CASES[case]
    assert run[2] == exit_code, run[1]
    assert summary(parsed(run)) == expected
    if case == "ansi colours":
        assert "\x1b[" in run[1]


# --- go and bun: recorded outputs ----------------------------------------------------------------

GO_TABLE = {"TestAdd": "passed", "TestSub": "failed", "TestDiv": "skipped"}
GO_SUBTESTS = {"TestTable": "passed", "TestTable/small": "passed", "TestTable/large": "passed"}
BUN_MIXED = {
    "add": "passed",
    "subtract": "failed",
    "divide": "skipped",
    "modulo": "skipped",
    "suite > nested add": "passed",
}
JEST = "\u203a"  # jest joins a test's describe names with this sign
JEST_ALL = {"top level": "passed", f"math {JEST} adds": "passed"}
JEST_VERBOSE = {**JEST_ALL, f"math {JEST} fails": "failed", f"math {JEST} skipped": "skipped"}
JSON_REPORT = {"math adds": "passed", "math fails": "failed", "math skipped": "skipped"}
VITEST_MIXED = {
    "math > adds": "passed",
    "math > fails": "failed",
    "math > skipped": "skipped",
    "top level": "passed",
}
JS_RECORDED: dict[str, tuple[str, int, Expected]] = {
    "jest-mixed": (
        "npx jest 'test/a.test.js' 'test/b.test.js'",
        1,
        ({f"math {JEST} fails": "failed"}, (5, 1, 2), None),
    ),
    "jest-pass": (
        "npx jest 'test/b.test.js'",
        0,
        (
            {**JEST_ALL, f"math {JEST} also passes": "passed", f"math {JEST} skipped": "skipped"},
            (3, 0, 1),
            None,
        ),
    ),
    "jest-nomatch": ("npx jest 'test/nope.test.js'", 1, ({}, (0, 0, 0), NO_MATCH)),
    "jest-verbose": ("npx jest --verbose 'test/a.test.js'", 1, (JEST_VERBOSE, (2, 1, 1), None)),
    "jest-json": (
        "npx jest --json 'test/a.test.js'",
        1,
        ({**JSON_REPORT, "top level": "passed"}, (2, 1, 1), None),
    ),
    "vitest-mixed": (
        "npx vitest run 'vt/a.test.mjs' 'vt/b.test.mjs'",
        1,
        (VITEST_MIXED, (5, 1, 2), None),
    ),
    "vitest-pass": ("npx vitest run 'vt/b.test.mjs'", 0, ({}, (3, 0, 1), None)),
    "vitest-nomatch": ("npx vitest run 'vt/nope.test.mjs'", 1, ({}, (0, 0, 0), NO_MATCH)),
    "vitest-verbose": (
        "npx vitest run --reporter=verbose 'vt/a.test.mjs'",
        1,
        (
            {f"vt/a.test.mjs > {name}": outcome for name, outcome in VITEST_MIXED.items()},
            (2, 1, 1),
            None,
        ),
    ),
    "vitest-json": (
        "npx vitest run --reporter=json 'vt/a.test.mjs'",
        1,
        ({**JSON_REPORT, "top level": "passed"}, (2, 1, 1), None),
    ),
}
"""jest 29 and vitest 3, recorded from npm packages on a two-file project (a failing, a skipped
and passing tests); paths under /project."""
RECORDED: dict[str, tuple[str, int, Expected]] = {
    **JS_RECORDED,
    "go-verbose-mixed": ("go test -v ./...", 1, ({**GO_TABLE, **GO_SUBTESTS}, (4, 1, 1), None)),
    "go-pass": ("go test ./...", 0, ({}, (0, 0, 0), None)),
    "go-fail": ("go test ./...", 1, ({"TestSub": "failed"}, (0, 1, 0), None)),
    "go-skip": (
        "go test -v -run 'TestDiv' ./...",
        0,
        ({"TestDiv": "skipped"}, (0, 0, 1), "go test ran no test (1 skipped)"),
    ),
    "go-no-match-verbose": ("go test -v -run 'TestNope' ./...", 0, ({}, (0, 0, 0), NO_MATCH)),
    "go-no-match": ("cd calc && go test -run 'TestNope' ./...", 0, ({}, (0, 0, 0), NO_MATCH)),
    "go-no-test-files": (
        "go test ./...",
        0,
        ({}, (0, 0, 0), "go test ran no test (no test files)"),
    ),
    "go-build-failed": ("go test ./...", 1, ({}, (0, 0, 0), None)),
    "go-noise-before": ("go test -v ./...", 0, ({"TestAdd": "passed"}, (1, 0, 0), None)),
    "bun-mixed": ("bun test", 1, (BUN_MIXED, (2, 1, 2), None)),
    "bun-pass": (
        "bun test",
        0,
        ({"add": "passed", "suite > nested add": "passed"}, (2, 0, 0), None),
    ),
    "bun-skip": (
        "bun test",
        0,
        ({"divide": "skipped"}, (0, 0, 1), "bun test ran no test (1 skipped)"),
    ),
    "bun-no-match": ("bun test -t 'nope'", 1, ({}, (0, 0, 0), NO_MATCH)),
    "bun-filter-no-files": ("bun test 'nope'", 1, ({}, (0, 0, 0), NO_MATCH)),
    "bun-no-test-files": ("bun test", 1, ({}, (0, 0, 0), "bun test ran no test (no test files)")),
    "bun-zero": ("bun test", 0, ({}, (0, 0, 0), "bun test ran no test (0 pass)")),
    "bun-ansi": (
        "bun test",
        1,
        (
            {
                "add": "passed",
                "suite > subtract": "failed",
                "divide": "skipped",
                "modulo": "skipped",
            },
            (1, 1, 2),
            None,
        ),
    ),
}


def recorded(name: str) -> Run:
    command, exit_code, _ = RECORDED[name]
    return command, (DATA / f"{name}.txt").read_text(encoding="utf-8"), exit_code


def test_every_recorded_output_has_a_case() -> None:
    assert sorted(path.stem for path in DATA.glob("*.txt")) == sorted(RECORDED)


@pytest.mark.parametrize("name", RECORDED)
def test_recorded(name: str) -> None:
    assert summary(parsed(recorded(name))) == RECORDED[name][2]


# --- small logs, written inline ------------------------------------------------------------------

INLINE: dict[str, tuple[str, str, int, Expected]] = {
    "pytest xdist -v": (
        "pytest -n 2 -v tests",
        (
            "[gw0] [ 50%] PASSED tests/a.py::t\n[gw1] [100%] FAILED tests/a.py::u\n"
            "=== 1 failed, 1 passed in 0.50s ===\n"
        ),
        1,
        ({"tests/a.py::t": "passed", "tests/a.py::u": "failed"}, (1, 1, 0), None),
    ),
    "pytest collection error": (
        "pytest tests",
        (
            "=== ERRORS ===\n___ ERROR collecting tests/test_b.py ___\nE   ImportError: x\n"
            "=== short test summary info ===\nERROR tests/test_b.py - ImportError: x\n"
            "!!! Interrupted: 1 error during collection !!!\n=== 1 error in 0.12s ===\n"
        ),
        2,
        ({"tests/test_b.py": "failed"}, (0, 1, 0), None),
    ),
    "pytest long run": ("pytest", "=== 2 passed in 65.20s (0:01:05) ===", 0, ({}, (2, 0, 0), None)),
    "pytest exit 5, noise only": (
        "pytest",
        "selfbench: setup\n",
        5,
        ({}, (0, 0, 0), "pytest ran no test (exit 5)"),
    ),
    "pytest no tests ran, exit 0": (
        "pytest",
        "no tests ran in 0.01s\n",
        0,
        ({}, (0, 0, 0), "pytest ran no test (no tests ran)"),
    ),
    "node TAP escapes and a failing todo": (
        "node --test",
        (
            "TAP version 13\n# Subtest: a \\#1 \\\\ b\nok 1 - a \\#1 \\\\ b\n  ---\n  ...\n"
            "# Subtest: later\nnot ok 2 - later # TODO\n1..2\n# tests 2\n# pass 1\n# todo 1\n"
        ),
        0,
        ({"a #1 \\ b": "passed", "later": "skipped"}, (1, 0, 1), None),
    ),
    "go: one package ran, others matched nothing": (
        "go test -run 'TestAdd' ./...",
        "ok  \tcalc\t0.01s\nok  \tcalc/parse\t0.01s [no tests to run]\n",
        0,
        ({}, (0, 0, 0), None),
    ),
    "cargo: captured output is not a result": (
        "cargo test",
        (
            "running 1 test\ntest a ... FAILED\n\nfailures:\n\n---- a stdout ----\n"
            "test fake ... ok\nb --- FAILED\n\nfailures:\n    a\n\n"
            "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
        ),
        101,
        ({"a": "failed"}, (0, 1, 0), None),
    ),
}


@pytest.mark.parametrize("case", INLINE)
def test_inline(case: str) -> None:
    command, output, exit_code, expected = INLINE[case]
    assert summary(parse_outcomes(command, output, exit_code)) == expected


# --- go and bun: real runs, where installed -------------------------------------------------------

GO_FILES = {
    "go.mod": "module example.com/calc\n\ngo 1.21\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "calc_test.go": """\
        package calc

        import "testing"

        func TestAdd(t *testing.T) { if Add(1, 1) != 2 { t.Fatal("bad") } }

        func TestSub(t *testing.T) { t.Errorf("Sub(3, 1) = 1, want 2") }

        func TestDiv(t *testing.T) { t.Skip("division is not implemented yet") }
        """,
}


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_go_real(tmp_path: Path) -> None:
    for name, text in GO_FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(tmp_path / "cache")}
    assert summary(parsed(shell("go test -v ./...", tmp_path, env))) == (GO_TABLE, (1, 1, 1), None)
    nothing = shell("go test -run 'TestNope' ./...", tmp_path, env)
    assert summary(parsed(nothing)) == ({}, (0, 0, 0), NO_MATCH)


@pytest.mark.skipif(shutil.which("bun") is None, reason="bun is not installed")
def test_bun_real(tmp_path: Path) -> None:
    (tmp_path / "math.test.ts").write_text(
        'import { expect, test } from "bun:test";\n'
        'test("add", () => { expect(1 + 1).toBe(2); });\n'
        'test("subtract", () => { expect(3 - 1).toBe(1); });\n'
        'test.skip("divide", () => {});\n'
    )
    mixed = ({"add": "passed", "subtract": "failed", "divide": "skipped"}, (1, 1, 1), None)
    assert summary(parsed(shell("bun test", tmp_path, {"NO_COLOR": "1"}))) == mixed
    nothing = parsed(shell("bun test -t 'nope'", tmp_path, {"NO_COLOR": "1"}))
    assert nothing.failure == NO_MATCH


# --- every output, transformed -------------------------------------------------------------------


@pytest.fixture(scope="module")
def every_run(
    pytest_runs: dict[str, Run], node_runs: dict[str, Run], cargo_runs: dict[str, Run]
) -> dict[str, Run]:
    runs = {f"pytest {case}": run for case, run in pytest_runs.items()}
    runs |= {f"node {case}": run for case, run in node_runs.items()}
    runs |= {f"cargo {case}": run for case, run in cargo_runs.items()}
    return runs | {name: recorded(name) for name in RECORDED}


NOISE = (
    "selfbench: note: preparing the workspace",
    "+ echo setup done",
    "npm warn config production Use `--omit=dev` instead.",
    "   Compiling crate v0.1.0",
    "go: downloading example.com/dep v1.2.3",
    "Collecting pytest (from -r requirements.txt (line 1))",
    "",
    "    ",
)


def with_noise_before(output: str) -> str:
    return "\n".join(NOISE) + "\n" + output


def with_ansi(output: str) -> str:
    return "".join(f"\x1b[1;32m{line}\x1b[0m\x1b[K" for line in output.splitlines(keepends=True))


def with_crlf(output: str) -> str:
    return output.replace("\n", "\r\n")


TRANSFORMS: dict[str, Callable[[str], str]] = {
    "noise before": with_noise_before,
    "ansi colours": with_ansi,
    "crlf": with_crlf,
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_transformed_outputs_parse_the_same(transform: str, every_run: dict[str, Run]) -> None:
    for name, (command, output, exit_code) in every_run.items():
        expected = parse_outcomes(command, output, exit_code)
        changed = parse_outcomes(command, TRANSFORMS[transform](output), exit_code)
        assert changed == expected, name


# --- properties ----------------------------------------------------------------------------------

COMMANDS = (
    "pytest -v {tests}",
    "node --test",
    "node --test --test-name-pattern x",
    "bun test",
    "go test ./...",
    "cargo test",
    "make test",
)
FRAGMENTS = (
    "tests/a.py::t PASSED",
    "FAILED tests/a.py::t - boom",
    "=== 1 passed, 2 skipped in 0.1s ===",
    "no tests ran in 0.01s",
    ".Fsx [100%]",
    "[gw0] [ 50%] PASSED tests/a.py::t",
    "TAP version 13",
    "# Subtest: s",
    "    # Subtest: t",
    "    ok 1 - t # SKIP test name does not match pattern",
    "not ok 1 - s",
    "  ---",
    "  ...",
    "# tests 0",
    "# pass 1",
    "▶ suite",
    "  ✔ t (1.0ms)",
    "✖ s (2ms) # TODO",
    "﹣ x (0.1ms) # test name does not match pattern",
    "\u2139 tests 3",
    "✖ failing tests:",
    "(pass) a > b [1.00ms]",
    "✗ c",
    " 0 pass",
    " 2 fail",
    'error: regex "x" matched 0 tests. Searched 1 file',
    "No tests found!",
    "=== RUN   TestX",
    "--- PASS: TestX (0.00s)",
    "    --- SKIP: TestX/y (0.00s)",
    "ok  \tpkg\t0.1s [no tests to run]",
    "FAIL\tpkg\t0.1s",
    "?   \tpkg\t[no test files]",
    "testing: warning: no tests to run",
    "running 2 tests",
    "test a::b ... ok",
    "test c ... ignored, slow",
    "x --- FAILED",
    "failures:",
    "test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 3 filtered out; finished",
    "\x1b[31m",
    "\x1b[",
)
# Lines no runner prints at the start of a line; text without line breaks after them.
NOISE_PREFIXES = ("selfbench: note: ", "+ echo setup ", "npm warn config ", "   Compiling crate ")
LINE_TEXT = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=40)


def log_like() -> st.SearchStrategy[str]:
    line = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=30))
    return st.lists(line, max_size=30).map("\n".join)


@settings(max_examples=400, deadline=None)
@given(
    command=st.one_of(st.sampled_from(COMMANDS), st.text(max_size=40)),
    output=st.one_of(st.text(), log_like()),
    exit_code=st.integers(),
)
def test_parse_never_raises(command: str, output: str, exit_code: int) -> None:
    outcomes = parse_outcomes(command, output, exit_code)
    assert outcomes.runner in (*RUNNERS, None)
    assert min(outcomes.passed, outcomes.failed, outcomes.skipped) >= 0
    assert {outcome for _, outcome in outcomes.tests} <= {"passed", "failed", "skipped"}
    assert outcomes.exit_code == exit_code
    assert outcomes.failure is None or outcomes.failure


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(RECORDED)),
    inserts=st.lists(
        st.tuples(st.integers(min_value=0), st.sampled_from(NOISE_PREFIXES), LINE_TEXT),
        max_size=8,
    ),
)
def test_noise_lines_change_nothing(name: str, inserts: list[tuple[int, str, str]]) -> None:
    command, output, exit_code = recorded(name)
    lines = output.splitlines()
    for position, prefix, text in inserts:
        lines.insert(position % (len(lines) + 1), prefix + text)
    noisy = "\n".join(lines) + "\n"
    assert parse_outcomes(command, noisy, exit_code) == parse_outcomes(command, output, exit_code)


def test_noise_lines_change_nothing_in_real_output(every_run: dict[str, Run]) -> None:
    for name, (command, output, exit_code) in every_run.items():
        lines = output.splitlines()
        noisy = [line for original in lines for line in (NOISE_PREFIXES[0] + original, original)]
        expected = parse_outcomes(command, output, exit_code)
        assert parse_outcomes(command, "\n".join(noisy), exit_code) == expected, name


FIVE_MB = 5 * 1024 * 1024
PATHOLOGICAL = (
    "a::" * 20_000 + " PASSED" * 20_000,
    "FAILED " + "x::" * 30_000 + " - " * 10_000,
    "=" * 60_000 + " in " * 10_000,
    "1 passed, " * 10_000 + "in 1s",
    "." * 50_000 + " [" + " " * 50_000,
    "test " + " ... ok," * 20_000,
    "test " + " ... okay" * 20_000,
    "x" * 50_000 + " --- FAILED",
    "  ✔ " + " (1" * 30_000,
    "✖ " + " (1.1ms) #" * 20_000,
    "ok 1 - " + "\\#" * 30_000 + " # SKIP",
    " " * 50_000 + "---",
    "(pass) " + " [1" * 30_000,
    "--- PASS: " + "T" * 50_000,
    "ok  \t" + "\t" * 50_000,
    "\x1b[" + "0;" * 30_000,
    "\x1b" * 50_000,
    "# Subtest: x\n" * 2_000,
    "".join(" " * depth + "▶ s\n" for depth in range(300)),
)


def five_megabytes(chunk: str) -> str:
    return (chunk + "\n") * (FIVE_MB // (len(chunk) + 1) + 1)


@pytest.mark.parametrize("command", COMMANDS[:-1])
def test_five_megabytes_of_pathological_lines(command: str) -> None:
    output = five_megabytes("\n".join(PATHOLOGICAL))
    outcomes = parse_outcomes(command, output, 0)
    assert outcomes.runner == detect_runner(command)


@settings(max_examples=5, deadline=None)
@given(command=st.sampled_from(COMMANDS[:-1]), chunk=st.text(min_size=1, max_size=200))
def test_five_megabytes_of_anything(command: str, chunk: str) -> None:
    outcomes = parse_outcomes(command, five_megabytes(chunk), 1)
    assert min(outcomes.passed, outcomes.failed, outcomes.skipped) >= 0
