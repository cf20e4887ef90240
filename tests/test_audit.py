"""The static audit, SPEC §4: thresholds, the eight blockers in order, metrics, warnings."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import (
    GOLD,
    SOURCE_URL,
    TESTS,
    added_file,
    definition,
    implementation_patch,
    modified_file,
    patch,
    run_audit,
    selectors,
    task,
)
from projects import git
from selfbench._runner_files import changes_build_control, is_runner_control
from selfbench.audit import RUNNER_CONTROL, RUNNER_PROJECT, audit
from selfbench.contract import parse_definition
from selfbench.patches import parse_patch
from selfbench.rules import THRESHOLDS, Threshold
from selfbench.runners.pytest import REPORTER_MODULE

OVERLAP = "gold and held-out test patches overlap: {}"
NO_TEST_FILES = "held-out test patch changes no files"
HARD_CODED = 'test command must not hard-code fail-to-pass or pass-to-pass paths outside "{tests}"'
NOT_ONCE = 'test command must contain "{tests}" exactly once'
QUOTED = 'test command must expand "{tests}" as an unquoted shell argument list'

# The table of SPEC §4: difficulty, gold files ≥, gold changed lines ≥, passToPass ≥.
TABLE = [("easy", 1, 20, 0), ("medium", 2, 50, 1), ("hard", 3, 100, 2)]


def test_thresholds_are_the_spec_table() -> None:
    assert {
        level: Threshold(files=files, changed_lines=lines, pass_to_pass=regressions)
        for level, files, lines, regressions in TABLE
    } == THRESHOLDS


# --- the threshold table -----------------------------------------------------------------------


@pytest.mark.parametrize(("level", "files", "lines", "regressions"), TABLE)
def test_a_task_at_every_minimum_is_accepted(
    level: str, files: int, lines: int, regressions: int
) -> None:
    definition = task(difficulty=level, passToPass=selectors("regress", regressions))

    report = run_audit(definition, gold=implementation_patch(files, lines))

    assert report.blockers == ()
    assert report.accepted
    assert report.reason == ""
    assert (report.implementation_files, report.implementation_changed_lines) == (files, lines)


@pytest.mark.parametrize(("level", "files", "lines", "regressions"), TABLE)
def test_one_implementation_file_too_few(
    level: str, files: int, lines: int, regressions: int
) -> None:
    definition = task(difficulty=level, passToPass=selectors("regress", regressions))

    report = run_audit(definition, gold=implementation_patch(files - 1, lines))

    too_few_files = (
        f"{level} mode requires at least {files} implementation files; found {files - 1}"
    )
    if files == 1:  # no file at all: no changed line either
        no_lines = f"{level} mode requires at least {lines} changed implementation lines; found 0"
        assert report.blockers == (too_few_files, no_lines)
    else:
        assert report.blockers == (too_few_files,)
    assert not report.accepted


@pytest.mark.parametrize(("level", "files", "lines", "regressions"), TABLE)
def test_one_changed_line_too_few(level: str, files: int, lines: int, regressions: int) -> None:
    definition = task(difficulty=level, passToPass=selectors("regress", regressions))

    report = run_audit(definition, gold=implementation_patch(files, lines - 1))

    assert report.blockers == (
        f"{level} mode requires at least {lines} changed implementation lines; found {lines - 1}",
    )


@pytest.mark.parametrize(
    ("level", "files", "lines", "regressions"), [row for row in TABLE if row[3] > 0]
)
def test_one_pass_to_pass_test_too_few(
    level: str, files: int, lines: int, regressions: int
) -> None:
    definition = task(difficulty=level, passToPass=selectors("regress", regressions - 1))

    report = run_audit(definition, gold=implementation_patch(files, lines))

    assert report.blockers == (
        f"{level} mode requires at least {regressions} pass-to-pass regression tests",
    )


def test_the_exact_message_of_a_medium_task_one_line_short() -> None:
    definition = task(difficulty="medium", passToPass=["tests/test_old.py"])

    report = run_audit(definition, gold=implementation_patch(2, 49))

    assert (
        report.reason == "medium mode requires at least 50 changed implementation lines; found 49"
    )


# --- blockers in the spec's order --------------------------------------------------------------


def test_every_blocker_but_the_empty_test_patch_in_order() -> None:
    definition = task(
        difficulty="hard",
        testCommand='pytest tests/test_new.py "{tests}" {tests}',
        passToPass=["tests/test_old.py"],
    )
    gold = patch(added_file("src/widgets/parse.py", 10), added_file("tests/test_new.py", 3))

    report = run_audit(definition, gold=gold)

    assert report.blockers == (
        OVERLAP.format("tests/test_new.py"),
        "hard mode requires at least 3 implementation files; found 2",
        "hard mode requires at least 100 changed implementation lines; found 13",
        "hard mode requires at least 2 pass-to-pass regression tests",
        HARD_CODED,
        NOT_ONCE,
        QUOTED,
    )
    assert report.reason == "; ".join(report.blockers)
    assert not report.accepted


def test_every_blocker_but_the_overlap_in_order() -> None:
    definition = task(difficulty="medium", testCommand="pytest tests/test_new.py 'a {tests}' x")

    report = run_audit(definition, gold=b"", tests=b"")

    assert report.blockers == (
        "medium mode requires at least 2 implementation files; found 0",
        "medium mode requires at least 50 changed implementation lines; found 0",
        NO_TEST_FILES,
        "medium mode requires at least 1 pass-to-pass regression tests",
        HARD_CODED,
        QUOTED,
    )
    assert report.reason == (
        "medium mode requires at least 2 implementation files; found 0; "
        "medium mode requires at least 50 changed implementation lines; found 0; "
        f"{NO_TEST_FILES}; "
        "medium mode requires at least 1 pass-to-pass regression tests; "
        f"{HARD_CODED}; {QUOTED}"
    )


def test_overlap_lists_every_shared_path_in_gold_order() -> None:
    gold = patch(added_file("a", 10), added_file("src/widgets/x.py", 10), modified_file("b", 1, 1))
    tests = patch(added_file("b", 1), added_file("tests/test_new.py", 1), added_file("a", 1))

    report = run_audit(task(), gold=gold, tests=tests)

    assert report.blockers == ("gold and held-out test patches overlap: a, b",)


def test_overlap_counts_old_paths_and_shows_undecodable_bytes() -> None:
    rename = (
        'diff --git "a/tests/caf\\303\\251.py" "b/tests/bad\\377.py"\n'
        "similarity index 100%\n"
        'rename from "tests/caf\\303\\251.py"\n'
        'rename to "tests/bad\\377.py"\n'
    )
    gold = patch(rename, added_file("src/widgets/x.py", 20))
    tests = patch(
        'diff --git "a/tests/bad\\377.py" "b/tests/bad\\377.py"\n', "deleted file mode 100644\n"
    )
    tests += patch(added_file("tests/café.py", 1))

    report = run_audit(task(), gold=gold, tests=tests)

    assert report.blockers == (OVERLAP.format("tests/café.py, tests/bad\\xff.py"),)


# --- metrics -----------------------------------------------------------------------------------


def test_metrics_count_sections_and_changed_lines() -> None:
    binary = (
        "diff --git a/assets/logo.png b/assets/logo.png\n"
        "new file mode 100644\n"
        "index 0000000..3f4e1a2\n"
        "GIT binary patch\n"
        "literal 3\n"
        "Kc${NkU|;|M00aO5\n"
        "\n"
        "literal 0\n"
        "HcmV?d00001\n"
        "\n"
    )
    gold = patch(added_file("src/widgets/a.py", 7), modified_file("src/widgets/b.py", 3, 5), binary)
    tests = patch(added_file("tests/test_new.py", 4), modified_file("tests/test_old.py", 1, 2))

    report = run_audit(task(), gold=gold, tests=tests)

    assert report.to_json() == {
        "accepted": False,
        "blockers": ["easy mode requires at least 20 changed implementation lines; found 15"],
        "metrics": {"implementationFiles": 3, "implementationChangedLines": 15, "testFiles": 2},
        "warnings": [],
    }


def test_report_json_of_an_accepted_task() -> None:
    assert run_audit(task()).to_json() == {
        "accepted": True,
        "blockers": [],
        "metrics": {"implementationFiles": 1, "implementationChangedLines": 20, "testFiles": 1},
        "warnings": [],
    }


# --- rule 6: hard-coded selectors --------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "fail_to_pass", "pass_to_pass"),
    [
        ("test {tests} && test tests/new.ts", ["tests/new.ts"], []),
        ("pytest ./tests/a.py {tests}", ["tests/a.py"], []),
        ("pytest --file=tests/a.py {tests}", ["tests/a.py"], []),
        ("pytest x:tests/a.py {tests}", ["tests/a.py"], []),
        ("pytest tests/a.py::test_one {tests}", ["tests/a.py"], []),
        ("pytest tests/a.py {tests}", ["tests/a.py"], []),
        ("pytest 'tests/a b.py' {tests}", ["tests/a b.py"], []),
        ("pytest {tests} tests/old.py", ["tests/a.py"], ["tests/old.py"]),
        ("bun test test {tests}", ["test"], []),
        ("cd web && npx vitest run {tests} --dir src", ["src"], []),
    ],
)
def test_hard_coded_selector(
    command: str, fail_to_pass: list[str], pass_to_pass: list[str]
) -> None:
    definition = task(testCommand=command, failToPass=fail_to_pass, passToPass=pass_to_pass)

    assert run_audit(definition).blockers == (HARD_CODED,)


@pytest.mark.parametrize(
    ("command", "selector"),
    [
        ("bun test {tests}", "test"),
        ("npm test -- {tests}", "test"),
        ("cargo test {tests}", "test"),
        ("pytest tests/a.pyc {tests}", "tests/a.py"),
        ("pytest mytests/a.py {tests}", "tests/a.py"),
        ("pytest -k test_a {tests}", "tests/a.py"),
        ("pytest {tests} # tests/a.py", "tests/a.py"),
        ("pytest {tests}", "tests/a.py"),
    ],
)
def test_not_a_hard_coded_selector(command: str, selector: str) -> None:
    definition = task(testCommand=command, failToPass=[selector])

    assert run_audit(definition).blockers == ()


# --- rule 7: exactly once ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "blockers"),
    [
        ("pytest", (NOT_ONCE,)),
        ("pytest {tests} {tests}", (NOT_ONCE,)),
        ('pytest {tests} "{tests}"', (NOT_ONCE, QUOTED)),
    ],
)
def test_placeholder_exactly_once(command: str, blockers: tuple[str, ...]) -> None:
    # Submission mode: a persisted definition could not even omit the placeholder.
    definition = task(mode="submission", testCommand=command)

    assert run_audit(definition).blockers == blockers


# --- rule 8: an unquoted argument list ---------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        'pytest "{tests}"',
        "pytest '{tests}'",
        'pytest "--files={tests}"',
        "pytest 'a {tests}'",
        "FILES={tests} pytest",
        "export T={tests}; pytest $T",
        "pytest --files={tests}",
        "env T={tests} pytest",
        "pytest {tests}x",
        "pytest \\{tests}",
        "pytest $'{tests}'",
        "pytest $(echo {tests})",
        "pytest `echo {tests}`",
        "pytest ${T:-{tests}}",
        "pytest # {tests}",
        "pytest >{tests}",
        "pytest <<EOF\n{tests}\nEOF",
    ],
)
def test_placeholder_not_an_argument_list(command: str) -> None:
    assert run_audit(task(testCommand=command)).blockers == (QUOTED,)


@pytest.mark.parametrize(
    "command",
    [
        "pytest {tests}",
        "npm test -- {tests}",
        "cd sub && pytest -x {tests} | tee log",
        "CI=1 pytest {tests} 2>&1 | tee log",
        "python -m pytest -q \\\n  {tests}",
        'for t in {tests}; do pytest "$t"; done',
        "cat <<'EOF' >conf.ini\n[x]\nEOF\npytest {tests}",
    ],
)
def test_placeholder_as_an_argument_list(command: str) -> None:
    assert run_audit(task(testCommand=command)).blockers == ()


# --- warnings ----------------------------------------------------------------------------------

PR = "prompt mentions the source PR number (42)"
URL = "prompt mentions the source PR URL"


@pytest.mark.parametrize(
    ("prompt", "warnings"),
    [
        ("Fix the parser so that trailing commas work.", ()),
        ("Finish what #42 started.", (PR,)),
        ("As discussed in PR 42, accept trailing commas.", (PR,)),
        ("See pull request #42 for context.", (PR,)),
        ("See #420 and PR 4200 for unrelated work.", ()),
        (f"Background: {SOURCE_URL}", (URL,)),
        (f"Background: {SOURCE_URL}0", ()),
        (
            "Start from 0123456 and fix the parser.",
            ("prompt mentions a commit hash prefix of baseCommit (0123456)",),
        ),
        (
            "Start from 0123456789ABCDEF.",
            ("prompt mentions a commit hash prefix of baseCommit (0123456789ABCDEF)",),
        ),
        ("Use the 012345 build.", ()),
        (
            "Make tests/test_new.py pass.",
            (
                "prompt mentions a selector (tests/test_new.py)",
                "prompt mentions a held-out path (tests/test_new.py)",
            ),
        ),
        (
            "Keep tests/conftest.py working.",
            ("prompt mentions a held-out path (tests/conftest.py)",),
        ),
        (
            "The bug is in module_0.py, I think.",
            ("prompt mentions a gold file name (module_0.py)",),
        ),
        ("The bug is in module_0.pyc, I think.", ()),
    ],
)
def test_prompt_warnings(prompt: str, warnings: tuple[str, ...]) -> None:
    tests = patch(added_file("tests/test_new.py", 3), added_file("tests/conftest.py", 1))

    report = run_audit(task(prompt=prompt), tests=tests)

    assert report.warnings == warnings
    assert report.accepted


def _gold_names(prompt: str) -> tuple[str, ...]:
    gold = patch(
        added_file("tenacity/after.py", 10),
        added_file("src/utils.ts", 10),
        added_file("README", 1),
    )
    return run_audit(task(prompt=prompt), gold=gold).warnings


@pytest.mark.parametrize(
    ("prompt", "names"),
    [
        ("Change tenacity/after.py to log the delay.", ("tenacity/after.py",)),
        ("Change after.py to log the delay.", ("after.py",)),
        ("Edit `src/utils.ts` and src/utils.ts again.", ("src/utils.ts",)),
        ("Edit utils.ts.", ("utils.ts",)),
        ("Look at ./src/utils.ts first.", ("utils.ts",)),
        ("Look at lib/src/utils.ts first.", ("utils.ts",)),
        ("Both tenacity/after.py and utils.ts.", ("tenacity/after.py", "utils.ts")),
        ("SRC/UTILS.TS, loudly.", ("src/utils.ts",)),
        ("Nothing about thereafter.py or utils.tsx or src/utils.ts.bak.", ()),
        ("Read the README, then README.md.", ("README",)),
        ("Read myREADME only.", ()),
    ],
)
def test_prompt_names_a_gold_file_by_its_full_path_or_its_name(
    prompt: str, names: tuple[str, ...]
) -> None:
    expected = tuple(f"prompt mentions a gold file name ({name})" for name in names)
    assert _gold_names(prompt) == expected


def test_warnings_never_block_and_dropped_keys_come_first() -> None:
    raw = {**definition(prompt="Fix #42."), "reviewer": "x"}
    raw["timeouts"] = {**raw["timeouts"], "idleSeconds": 5}
    loaded = parse_definition(raw)
    gold, tests = parse_patch(GOLD), parse_patch(TESTS)

    report = audit(loaded.definition, gold, tests, loading_warnings=loaded.warnings)

    assert report.warnings == (
        "dropped unknown key timeouts.idleSeconds",
        "dropped unknown key reviewer",
        PR,
    )
    assert report.blockers == ()


# --- any bytes ---------------------------------------------------------------------------------

PLAIN_DIFF = b"--- a/tests/test_new.py\n+++ b/tests/test_new.py\n@@ -1 +1 @@\n-old\n+new\n"


def test_empty_patches_are_judged_not_refused() -> None:
    report = run_audit(task(), gold=b"", tests=b"")

    assert report.blockers == (
        "easy mode requires at least 1 implementation files; found 0",
        "easy mode requires at least 20 changed implementation lines; found 0",
        NO_TEST_FILES,
    )


def test_a_test_patch_that_is_not_a_git_patch_changes_no_files() -> None:
    assert run_audit(task(), tests=PLAIN_DIFF).blockers == (NO_TEST_FILES,)


def test_a_gold_patch_that_is_not_a_git_patch_changes_no_files() -> None:
    assert run_audit(task(), gold=PLAIN_DIFF * 20).blockers == (
        "easy mode requires at least 1 implementation files; found 0",
        "easy mode requires at least 20 changed implementation lines; found 0",
    )


@given(gold=st.binary(max_size=300), tests=st.binary(max_size=300))
def test_the_audit_judges_any_bytes(gold: bytes, tests: bytes) -> None:
    report = run_audit(task(), gold=b"diff --git " + gold, tests=tests)

    assert report.accepted == (report.blockers == ())


# --- runner configuration in the gold patch ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "runner_control"),
    [
        ("conftest.py", True),
        ("pkg/tests/conftest.py", True),
        ("pytest.ini", True),
        ("pytest.py", True),
        ("pytest/__main__.py", True),
        ("lib/__pycache__/x.cpython-311.pyc", True),
        (".venv/lib/python3.11/site-packages/x.pth", True),
        ("web/node_modules/jest/index.js", True),
        ("jest.config.js", True),
        ("packages/a/vitest.config.ts", True),
        (".cargo/config.toml", True),
        ("target/debug/app", True),
        ("go.work", True),
        ("calc/mul_test.go", True),
        ("vendor/modules.txt", True),
        ("build.rs", True),
        ("crates/core/tests/parser.rs", True),
        ("go.mod", False),
        ("calc/mul.go", False),
        ("crates/core/src/tests.rs", False),
        ("_selfbench_evidence.py", True),
        ("pyproject.toml", False),
        ("setup.cfg", False),
        ("package.json", False),
        ("Cargo.toml", False),
        ("src/conftest_helpers.py", False),
        ("src/targets.py", False),
        ("docs/pytest-notes.md", False),
    ],
)
def test_runner_control_paths(path: str, *, runner_control: bool) -> None:
    assert is_runner_control(path) is runner_control


def test_a_gold_patch_changing_runner_configuration_cannot_be_graded() -> None:
    gold = patch(
        added_file("src/widgets/x.py", 20),
        added_file("conftest.py", 1),
        added_file("pytest.ini", 1),
    )

    report = run_audit(task(), gold=gold)

    assert report.blockers == (f"{RUNNER_CONTROL}: conftest.py, pytest.ini",)
    assert RUNNER_CONTROL == "gold patch changes runner configuration, so the task cannot be graded"


def test_a_gold_patch_changing_a_tracked_runner_named_package_is_the_projects_code() -> None:
    # pluggy's own repository: the gold patch changes src/pluggy/_hooks.py, so the base tracks
    # src/pluggy/, and a new module beside it is the project's code too.
    gold = patch(modified_file("src/pluggy/_hooks.py", 10, 10), added_file("src/pluggy/_new.py", 5))

    report = run_audit(task(), gold=gold)

    assert report.blockers == ()
    assert report.warnings == (RUNNER_PROJECT.format(project="pluggy"),)
    assert RUNNER_PROJECT == (
        "gold patch changes {project}'s own code, which runs inside the test runner's process, "
        "so the verdict relies on the runner's in-process report"
    )


@pytest.mark.parametrize(
    ("sections", "toolchains", "blocked"),
    [
        # a new runner-named package or module would shadow the runner
        ((added_file("src/pluggy/_hooks.py", 20),), ["python"], "src/pluggy/_hooks.py"),
        ((modified_file("src/app.py", 10, 10), added_file("pytest.py", 1)), ["python"],
         "pytest.py"),
        # tracked or not, configuration stays protected
        ((modified_file("src/pluggy/_hooks.py", 10, 10), added_file("src/pluggy/conftest.py", 1)),
         ["python"], "src/pluggy/conftest.py"),
        # a Cargo project's target/ is its build cache
        ((modified_file("target/x.rs", 10, 10),), ["rust"], "target/x.rs"),
    ],
)  # fmt: skip
def test_a_gold_patch_adding_a_runner_named_package_cannot_be_graded(
    sections: tuple[str, ...], toolchains: list[str], blocked: str
) -> None:
    report = run_audit(task(toolchains=toolchains), gold=patch(*sections))

    assert f"{RUNNER_CONTROL}: {blocked}" in report.blockers


def test_a_tracked_target_directory_outside_a_cargo_project_is_the_projects_code() -> None:
    gold = patch(modified_file("src/target/resolve.py", 10, 10), added_file("src/target/x.py", 5))

    assert run_audit(task(toolchains=["python"]), gold=gold).blockers == ()


def test_the_evidence_plugin_name_is_a_runner_control_path() -> None:
    assert is_runner_control(f"{REPORTER_MODULE}.py")


def _modified(path: str, old: str, new: str) -> str:
    return (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,2 +1,2 @@\n context\n-{old}\n+{new}\n"
    )


COMMANDS = {
    "go": "go test {tests}",
    "cargo": "cargo test {tests}",
    "jest": "npx jest {tests}",
    "vitest": "npx vitest run {tests}",
    "pytest": "python -m pytest -q {tests}",
}


@pytest.mark.parametrize(
    ("path", "old", "new", "blocked"),
    [
        ("go.mod", "replace a.b/c => ./c", "replace a.b/c => ./fake", True),
        ("go.mod", "\ta.b/c => ./c", "\ta.b/c => ./fake", True),
        ("go.mod", "go 1.22", "toolchain go1.99.0", True),
        ("go.mod", "require a.b/c v1.0.0", "require a.b/c v1.1.0", False),
        ("Cargo.toml", 'version = "0.1.0"', 'version = "0.2.0"', False),
        ("Cargo.toml", 'serde = "1"', 'serde = "1.0.200"', False),
        ("crates/x/Cargo.toml", 'name = "x"', "harness = false", True),
        ("Cargo.toml", "[dependencies]", "[[test]]", True),
        ("Cargo.toml", 'c = "1"', 'c = { path = "../fake" }', True),
        ("Cargo.toml", "edition = '2021'", "autotests = false", True),
    ],
)
def test_a_gold_patch_changing_what_builds_the_tests_cannot_be_graded(
    path: str, old: str, new: str, *, blocked: bool
) -> None:
    # The verifier restores these lines of a go.mod or Cargo.toml to the base (bundle/evidence.py).
    gold = patch(added_file("src/widgets/x.py", 20), _modified(path, old, new))
    runner = "go" if path.endswith("go.mod") else "cargo"
    report = run_audit(task(testCommand=COMMANDS[runner]), gold=gold)
    assert (f"{RUNNER_CONTROL}: {path}" in report.blockers) is blocked


@pytest.mark.parametrize("runner", ["pytest", "jest", "cargo"])
def test_a_go_mod_the_verifier_does_not_restore_for_the_runner_stays_fine(runner: str) -> None:
    # Only go's verifier restores go.mod (RESTORED_MANIFESTS); for another runner it stays.
    gold = patch(added_file("src/widgets/x.py", 20), _modified("go.mod", "go 1.22", "toolchain x"))
    report = run_audit(task(testCommand=COMMANDS[runner]), gold=gold)
    assert report.blockers == ()


def _package(**keys: object) -> str:
    return json.dumps({"name": "widgets", "version": "1.0.0", **keys}, indent=2) + "\n"


_MANY = {f"dep-{index:02}": f"^{index}.0.0" for index in range(30)}
_JEST = {f"option{index:02}": index for index in range(20)}
_SCRIPTS = {f"s{index:02}": f"node scripts/{index}.js" for index in range(20)}

# (case, the base's package.json, the gold's, runner, blocked): each diffed by the real git.
PACKAGE_JSON_CASES = [
    ("test script", _package(scripts={"test": "jest"}), _package(scripts={"test": "jest -i"}),
     "jest", True),
    ("script added", _package(scripts={"test": "jest"}),
     _package(scripts={"test": "jest", "pretest": "node fake.js"}), "vitest", True),
    ("jest key deep in a long table", _package(jest=_JEST),
     _package(jest={**_JEST, "option10": "changed"}), "jest", True),
    ("jest table added", _package(), _package(jest={"testEnvironment": "node"}), "jest", True),
    ("babel preset", _package(babel={"presets": ["a"]}), _package(babel={"presets": ["b"]}),
     "jest", True),
    ("new package.json with scripts", None, _package(scripts={"test": "jest"}), "jest", True),
    ("scripts beside a dependency", _package(scripts={"a": "x"}, dependencies={"b": "^1.0.0"}),
     _package(scripts={"a": "y"}, dependencies={"b": "^2.0.0"}), "jest", True),
    ("tab-indented script", _package(scripts={"t": "a"}).replace("  ", "\t"),
     _package(scripts={"t": "b"}).replace("  ", "\t"), "jest", True),
    ("version", _package(scripts={"test": "jest"}), _package(scripts={"test": "jest"}) .replace(
        "1.0.0", "1.1.0"), "jest", False),
    ("dependency deep in a long table", _package(dependencies=_MANY),
     _package(dependencies={**_MANY, "dep-15": "^99.1.0"}), "jest", False),
    ("dependency added", _package(dependencies=_MANY),
     _package(dependencies={**_MANY, "dep-15a": "workspace:*"}), "vitest", False),
    ("dev dependency after scripts", _package(scripts={"t": "jest"}, devDependencies={"j": "29"}),
     _package(scripts={"t": "jest"}, devDependencies={"j": "30"}), "jest", False),
    ("new package.json without runner keys", None, _package(dependencies={"a": "^1.0.0"}),
     "jest", False),
    ("scripts for a runner that does not read them", _package(scripts={"test": "jest"}),
     _package(scripts={"test": "jest -i"}), "pytest", False),
    ("one-line package.json", '{"name":"w","scripts":{"test":"jest"}}\n',
     '{"name":"w","scripts":{"test":"jest -i"}}\n', "jest", True),
    ("script deep in a long table", _package(scripts={**_SCRIPTS, "s10": "next"}),
     _package(scripts={**_SCRIPTS, "s10": "vitest"}), "vitest", True),
    ("jest module mapper deep in a long table", _package(jest={**_JEST, "option10": "<rootDir>/a"}),
     _package(jest={**_JEST, "option10": "<rootDir>/b"}), "jest", True),
    ("jest itself bumped in devDependencies", _package(devDependencies={**_MANY, "jest": "29"}),
     _package(devDependencies={**_MANY, "jest": "^30.0.0 || >=31 <32"}), "jest", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("base", "gold", "runner", "blocked"),
    [case[1:] for case in PACKAGE_JSON_CASES],
    ids=[case[0] for case in PACKAGE_JSON_CASES],
)
@pytest.mark.parametrize("where", ["package.json", "web/package.json"])
def test_a_gold_patch_changing_package_json_runner_keys_cannot_be_graded(
    tmp_path: Path, where: str, base: str | None, gold: str, runner: str, *, blocked: bool
) -> None:
    # The jest and vitest verifiers restore a package.json whose jest, babel or scripts changed
    # (bundle/evidence.py): graded against the base's, the gold patch's keys would be lost.
    repo = tmp_path / "repo"
    (repo / "web").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "web" / "index.js").write_text("module.exports = 1;\n")
    if base is not None:
        (repo / where).write_text(base)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / where).write_text(gold)
    (repo / "web" / "index.js").write_text("".join(f"exports.f{i} = {i};\n" for i in range(20)))
    git(repo, "add", "-A")
    gold_patch = git(repo, "diff", "--cached", "--binary").encode()

    report = run_audit(task(testCommand=COMMANDS[runner]), gold=gold_patch)

    expected = (f"{RUNNER_CONTROL}: {where}",) if blocked else ()
    assert report.blockers == expected


# --- Rust unit tests the verifier cannot protect --------------------------------------------------

UNIT = "{} selector {} names a Rust unit test inside src/, in a file the agent may change, so the agent can rewrite it"  # noqa: E501

# (case, fail-to-pass, pass-to-pass, held-out file, warnings): a cargo task's selectors.
UNIT_TEST_CASES = [
    ("pass-to-pass unit test", ["mul_works"], ["parser::tests::keeps_spaces"], "tests/mul.rs",
     [UNIT.format("pass-to-pass", "parser::tests::keeps_spaces")]),
    ("fail-to-pass unit test in a file the agent changes", ["lexer::tests::reads"], [],
     "src/parser.rs", [UNIT.format("fail-to-pass", "lexer::tests::reads")]),
    ("both, in the crate root", ["tests::mul"], ["tests::add"], "tests/mul.rs",
     [UNIT.format("fail-to-pass", "tests::mul"), UNIT.format("pass-to-pass", "tests::add")]),
    ("held-out crate root", ["tests::mul_works"], [], "src/lib.rs", []),
    ("held-out binary crate root", ["tests::mul_works"], [], "src/main.rs", []),
    ("held-out module", ["parser::tests::reads"], [], "crates/core/src/parser.rs", []),
    ("held-out module directory", ["parser::tests::reads"], [], "src/parser/mod.rs", []),
    ("held-out tests file", ["a::b::tests::reads"], [], "src/a/b/tests.rs", []),
    ("another module is held out", ["a::b::tests::reads"], [], "src/a.rs",
     [UNIT.format("fail-to-pass", "a::b::tests::reads")]),
    ("integration tests", ["mul_works"], ["add_works", "tests/add.rs", "cli::help"],
     "tests/mul.rs", []),
    ("a tests module as the filter", ["tests"], ["parser::tests"], "tests/mul.rs",
     [UNIT.format("fail-to-pass", "tests"), UNIT.format("pass-to-pass", "parser::tests")]),
    ("a selector given twice is named once", ["x"], ["parser::tests::a", "parser::tests::a"],
     "tests/mul.rs", [UNIT.format("pass-to-pass", "parser::tests::a")]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("fail_to_pass", "pass_to_pass", "held_out", "warnings"),
    [case[1:] for case in UNIT_TEST_CASES],
    ids=[case[0] for case in UNIT_TEST_CASES],
)
def test_a_rust_unit_test_in_a_file_the_agent_may_change_is_named(
    fail_to_pass: list[str], pass_to_pass: list[str], held_out: str, warnings: list[str]
) -> None:
    definition = task(
        testCommand=COMMANDS["cargo"],
        failToPass=fail_to_pass,
        passToPass=pass_to_pass,
        testPaths=[held_out],
        prompt="Make the crate do what the linked request asks.",
    )
    tests = patch(added_file(held_out, 5, tag="assert"))

    report = run_audit(definition, tests=tests)

    assert report.accepted
    assert list(report.warnings) == warnings


@pytest.mark.parametrize("runner", ["pytest", "go", "jest"])
def test_only_cargo_selectors_are_read_as_rust_unit_tests(runner: str) -> None:
    definition = task(testCommand=COMMANDS[runner], passToPass=["parser::tests::keeps_spaces"])
    assert run_audit(definition).warnings == ()


# --- package.json's diff reader, over generated files ---------------------------------------------

_RANGES = st.sampled_from(
    ["^1.2.3", "~0.4.0", "1.x", ">=2 <3", "^1 || ^2", "*", "latest", "workspace:*", "npm:a@^1",
     "4.0.0-beta.1", "git+https://example.com/a.git", "file:../a", "1 - 2"]
)  # fmt: skip
_SETTINGS = st.sampled_from(
    ["jest --ci", "tsc -p .", "next", "node scripts/build.js", "vitest run", "node", "50%",
     "<rootDir>/src/$1", "http://localhost/", "babel-jest", "@babel/preset-env", "ts-jest"]
)  # fmt: skip
_NAMES = st.from_regex(r"@?[a-z][a-z0-9-]{0,10}", fullmatch=True)
_CAMEL = st.from_regex(r"[a-z]{1,6}[A-Z][a-z]{1,6}", fullmatch=True)


@st.composite
def _package_change(draw: st.DrawFn) -> tuple[str, str, bool]:
    """A package.json, a copy with one value changed, and whether that value is runner control."""
    tables: dict[str, dict[str, str]] = {
        "dependencies": draw(st.dictionaries(_NAMES, _RANGES, max_size=30)),
        "devDependencies": draw(st.dictionaries(_NAMES, _RANGES, max_size=30)),
        "scripts": draw(st.dictionaries(_NAMES, _SETTINGS, max_size=15)),
        "jest": draw(st.dictionaries(_CAMEL, _SETTINGS, max_size=15)),
        "babel": draw(st.dictionaries(_CAMEL, _SETTINGS, max_size=3)),
    }
    scalars = {"name": "widgets", "version": "1.0.0", "description": "Widgets for all."}
    keys = draw(st.permutations([*scalars, *tables]))
    base: dict[str, object] = {key: scalars.get(key, tables.get(key)) for key in keys}
    changeable = [name for name, table in tables.items() if table] + ["version"]
    where = draw(st.sampled_from(changeable))
    gold = json.loads(json.dumps(base))
    if where == "version":
        gold["version"] = "1.0.1"
    else:
        entry = draw(st.sampled_from(sorted(tables[where])))
        values = _SETTINGS if where in ("scripts", "jest", "babel") else _RANGES
        gold[where][entry] = draw(values.filter(lambda value: value != tables[where][entry]))
    indent = draw(st.sampled_from(["  ", "    ", "\t"]))
    return (
        json.dumps(base, indent=indent) + "\n",
        json.dumps(gold, indent=indent) + "\n",
        where in ("scripts", "jest", "babel"),
    )


@settings(max_examples=60, deadline=None)
@given(_package_change())
def test_every_change_of_a_runner_key_counts_and_no_dependency_or_version_change_does(
    change: tuple[str, str, bool],
) -> None:
    base, gold, control = change
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in (("a", base), ("b", gold)):
            (Path(scratch) / name).mkdir()
            (Path(scratch) / name / "package.json").write_text(text)
        diff = subprocess.run(
            ["git", "diff", "--no-index", "--", "a/package.json", "b/package.json"],
            cwd=scratch,
            capture_output=True,
            check=False,
        ).stdout
    assert diff.startswith(b"diff --git")
    assert changes_build_control("package.json", diff, "jest") is control


# The `mod tests` convention, as the real cargo names a crate's tests: each test's file.
CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub mod lexer;\npub mod parser;\npub fn add(a: i64, b: i64) -> i64 {\n"
    "    a + b\n}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n"
    "        assert_eq!(super::add(1, 2), 3);\n    }\n}\n",
    "src/lexer.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn lexes() {}\n}\n",
    "src/parser/mod.rs": "#[cfg(test)]\nmod tests;\n",
    "src/parser/tests.rs": "#[test]\nfn parses() {}\n",
    "tests/add.rs": "#[test]\nfn add_works() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n",
}
CRATE_TESTS = {
    "tests::adds": "src/lib.rs",
    "lexer::tests::lexes": "src/lexer.rs",
    "parser::tests::parses": "src/parser/tests.rs",
    "add_works": "tests/add.rs",
}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
def test_the_unit_test_convention_matches_the_names_cargo_gives(tmp_path: Path) -> None:
    for name, text in CRATE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    listed = subprocess.run(
        ["cargo", "test", "--offline", "-q", "--", "--list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {line.removesuffix(": test") for line in listed.splitlines() if line.endswith(": test")}
    assert names == set(CRATE_TESTS)
    for name, path in CRATE_TESTS.items():
        unit = path.startswith("src/")
        elsewhere = task(testCommand=COMMANDS["cargo"], passToPass=[name])
        assert bool(run_audit(elsewhere).warnings) is unit, name
        held_out = task(testCommand=COMMANDS["cargo"], passToPass=[name], testPaths=[path])
        tests = patch(added_file(path, 3, tag="assert"))
        assert run_audit(held_out, tests=tests).warnings == (), name
