"""Validation repair and coupling repair (SPEC §7): the rules, their exact messages, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import TESTS, added_file, definition, modified_file, patch, task
from selfbench._paths import unsafe_patch_path
from selfbench.cli import main
from selfbench.contract import TaskDefinition
from selfbench.patches import display_path, parse_patch
from selfbench.repair import (
    IMMUTABLE_FIELDS,
    MUTABLE_FIELDS,
    RepairVerdict,
    check_coupling_repair,
    check_validation_repair,
)
from selfbench.rules import TEST_SEGMENTS, is_test_only_path

TEST_FILE = "tests/test_new.py"  # the one file helpers.TESTS adds
ORIGINAL = task()


def refusal(original: TaskDefinition, repaired: TaskDefinition, tests: bytes, *changed: str) -> str:
    reason = check_validation_repair(original, repaired, tests, changed).reason
    assert reason is not None
    return reason


def coupling_refusal(tests: bytes, *changed: str) -> str:
    reason = check_coupling_repair(tests, changed).reason
    assert reason is not None
    return reason


def renamed_file(old: str, new: str) -> str:
    """A `git diff -M` section that renames `old` to `new` and edits one line."""
    return (
        f"diff --git a/{old} b/{new}\n"
        "similarity index 90%\n"
        f"rename from {old}\nrename to {new}\n"
        f"--- a/{old}\n+++ b/{new}\n"
        "@@ -1 +1 @@\n-old\n+new\n"
    )


def deleted_file(path: str) -> str:
    """A `git diff` section that deletes `path`, a one-line file."""
    return (
        f"diff --git a/{path} b/{path}\n"
        "deleted file mode 100644\n"
        f"--- a/{path}\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-gone\n"
    )


# --- the field tables --------------------------------------------------------------------------


def test_the_field_tables_cover_the_definition_exactly_once() -> None:
    assert set(IMMUTABLE_FIELDS).isdisjoint(MUTABLE_FIELDS)
    fields = [*IMMUTABLE_FIELDS, *MUTABLE_FIELDS]
    assert len(fields) == len(set(fields))
    assert set(IMMUTABLE_FIELDS) | set(MUTABLE_FIELDS) == set(TaskDefinition.model_fields)


def test_a_refused_repair_is_a_verdict_not_an_error() -> None:
    verdict = check_coupling_repair(TESTS, ["README.md"])
    assert verdict == RepairVerdict("repair changed files outside the held-out tests: README.md")
    assert not verdict.allowed
    assert check_coupling_repair(TESTS, [TEST_FILE]) == RepairVerdict(None)
    assert check_coupling_repair(TESTS, [TEST_FILE]).allowed


IMMUTABLE_CHANGES: dict[str, Any] = {
    "difficulty": "hard",
    "taskId": "widgets-pr-43",
    "repo": "acme/gadgets",
    "baseCommit": "f" * 40,
    "workdir": "packages/widgets",
    "sourcePr": 43,
    "sourceUrl": "https://example.com/acme/widgets/pull/43",
    "prompt": "Let the widget parser accept a leading comma before the first field.",
    "agentDependencies": True,
}


@pytest.mark.parametrize(("field", "value"), IMMUTABLE_CHANGES.items())
def test_changing_an_immutable_field_is_refused(field: str, value: Any) -> None:
    repaired = task(**{field: value})

    assert refusal(ORIGINAL, repaired, TESTS) == (
        f"validation repair changed immutable definition field {field}"
    )


def test_changing_the_schema_version_is_refused() -> None:
    # No valid definition has another schemaVersion; a copy that skips validation stands in.
    repaired = ORIGINAL.model_copy(update={"schemaVersion": 2})

    assert refusal(ORIGINAL, repaired, TESTS) == (
        "validation repair changed immutable definition field schemaVersion"
    )


def test_every_immutable_field_has_a_case() -> None:
    assert {*IMMUTABLE_CHANGES, "schemaVersion"} == set(IMMUTABLE_FIELDS)


def test_the_first_changed_immutable_field_in_schema_order_is_named() -> None:
    repaired = task(prompt="Something else entirely.", repo="acme/gadgets", sourcePr=7)

    assert refusal(ORIGINAL, repaired, TESTS) == (
        "validation repair changed immutable definition field repo"
    )


def test_a_base_commit_in_another_case_is_a_change() -> None:
    # Compared as parsed values, and the parsed value keeps its case.
    repaired = task(baseCommit=ORIGINAL.baseCommit.upper())

    assert refusal(ORIGINAL, repaired, TESTS) == (
        "validation repair changed immutable definition field baseCommit"
    )


MUTABLE_CHANGES: dict[str, Any] = {
    "setupCommand": "uv sync --frozen",
    "testCommand": "python -m pytest -x -p no:cacheprovider {tests}",
    "failToPass": ["tests/test_new.py::test_trailing_comma"],
    "passToPass": ["tests/test_new.py::test_plain"],
    "testPaths": ["tests/test_new.py", "tests/conftest.py"],
    "toolchains": ["python", "uv"],
    "timeouts": {"setupSeconds": 1800, "agentSeconds": 2400, "testsSeconds": 600},
    "resources": {"cpus": 0.5, "memoryMb": 4096, "storageMb": 20480},
}


@pytest.mark.parametrize(("field", "value"), MUTABLE_CHANGES.items())
def test_changing_a_mutable_field_is_allowed(field: str, value: Any) -> None:
    repaired = task(**{field: value})

    assert getattr(repaired, field) != getattr(ORIGINAL, field)
    assert check_validation_repair(ORIGINAL, repaired, TESTS, [TEST_FILE]).allowed


def test_every_mutable_field_has_a_case() -> None:
    assert set(MUTABLE_CHANGES) == set(MUTABLE_FIELDS)


def test_every_mutable_field_changed_at_once_is_allowed() -> None:
    assert check_validation_repair(ORIGINAL, task(**MUTABLE_CHANGES), TESTS, [TEST_FILE]).allowed


@pytest.mark.parametrize(
    "changes",
    [
        {"sourcePr": 42.0},  # an integral number is the integer
        {"schemaVersion": 1.0},
        {"reviewer": "me"},  # unknown keys are dropped in persisted mode
        {"resources": {"cpus": 4.0, "memoryMb": 8192, "storageMb": 20480, "gpu": 1}},
    ],
    ids=["integral-float", "schema-version-float", "unknown-key", "nested-unknown-key"],
)
def test_definitions_are_compared_as_parsed_values(changes: dict[str, Any]) -> None:
    assert check_validation_repair(ORIGINAL, task(**changes), TESTS, []).allowed


# --- changed files -----------------------------------------------------------------------------


def test_a_repair_of_the_held_out_tests_and_mutable_fields_is_allowed() -> None:
    repaired = task(setupCommand="uv sync")
    assert check_validation_repair(ORIGINAL, repaired, TESTS, [TEST_FILE]).allowed
    assert check_validation_repair(ORIGINAL, ORIGINAL, TESTS, []).allowed


def test_a_changed_file_outside_the_held_out_tests_is_refused() -> None:
    assert refusal(ORIGINAL, ORIGINAL, TESTS, TEST_FILE, "src/widgets/parse.py") == (
        "validation repair changed files outside held-out tests: src/widgets/parse.py"
    )


def test_every_stray_path_is_listed_once_in_the_order_given() -> None:
    changed = ("b/z.py", TEST_FILE, "a/y.py", "b/z.py", "./a/y.py")

    assert refusal(ORIGINAL, ORIGINAL, TESTS, *changed) == (
        "validation repair changed files outside held-out tests: b/z.py, a/y.py"
    )


@pytest.mark.parametrize(
    "spelling", ["./tests/test_new.py", "tests//test_new.py", "tests/./test_new.py", TEST_FILE]
)
def test_a_changed_path_is_compared_in_its_normal_form(spelling: str) -> None:
    assert check_validation_repair(ORIGINAL, ORIGINAL, TESTS, [spelling]).allowed
    assert check_coupling_repair(TESTS, [spelling]).allowed


@pytest.mark.parametrize(
    "spelling",
    [
        "tests/../tests/test_new.py",  # `..` is never resolved
        "/tests/test_new.py",
        "Tests/test_new.py",  # Git's paths are case-sensitive
        "tests/test_new.py ",
        "tests\\test_new.py",
        "tests",
        "",
    ],
)
def test_near_misses_of_a_held_out_path_are_outside(spelling: str) -> None:
    message = f"validation repair changed files outside held-out tests: {spelling}"
    assert refusal(ORIGINAL, ORIGINAL, TESTS, spelling) == message


def test_both_sides_of_a_rename_and_a_deleted_file_are_held_out() -> None:
    tests = patch(
        renamed_file("tests/old_test.py", "tests/test_renamed.py"),
        deleted_file("tests/test_gone.py"),
    )
    changed = ["tests/old_test.py", "tests/test_renamed.py", "tests/test_gone.py"]

    assert check_validation_repair(ORIGINAL, ORIGINAL, tests, changed).allowed
    assert check_coupling_repair(tests, changed).allowed


def test_a_modified_test_file_is_held_out() -> None:
    tests = patch(modified_file("spec/widgets.spec.ts", 2, 3))

    assert check_validation_repair(ORIGINAL, ORIGINAL, tests, ["spec/widgets.spec.ts"]).allowed


def test_hostile_paths_are_shown_on_one_line() -> None:
    changed = ("tests/a\nb.py", "tests/\x1b[31mred.py", "tests/\udcff.py")

    message = refusal(ORIGINAL, ORIGINAL, TESTS, *changed)

    assert message == (
        "validation repair changed files outside held-out tests: "
        "tests/a\\x0ab.py, tests/\\x1b[31mred.py, tests/\\xff.py"
    )
    assert len(message.splitlines()) == 1


def test_a_quoted_path_of_the_test_patch_matches_its_decoded_name() -> None:
    name = "tests/test_ünï cöde.py"
    tests = (
        b'diff --git "a/tests/test_\\303\\274n\\303\\257 c\\303\\266de.py" '
        b'"b/tests/test_\\303\\274n\\303\\257 c\\303\\266de.py"\n'
        b"new file mode 100644\n--- /dev/null\n"
        b'+++ "b/tests/test_\\303\\274n\\303\\257 c\\303\\266de.py"\n'
        b"@@ -0,0 +1 @@\n+x\n"
    )
    assert parse_patch(tests).paths == (name,)

    assert check_validation_repair(ORIGINAL, ORIGINAL, tests, [name]).allowed


def test_changed_paths_must_not_be_one_string() -> None:
    with pytest.raises(TypeError):
        check_coupling_repair(TESTS, TEST_FILE)


# --- the original test patch -------------------------------------------------------------------


@pytest.mark.parametrize(
    "tests", [b"", b"not a patch\n", b"diff --git nonsense\n"], ids=["empty", "text", "broken"]
)
def test_an_original_test_patch_naming_no_files_is_refused(tests: bytes) -> None:
    assert refusal(ORIGINAL, ORIGINAL, tests) == "original held-out test patch changes no files"
    assert coupling_refusal(tests) == "original held-out test patch changes no files"


def test_non_test_only_paths_of_the_original_patch_are_refused() -> None:
    tests = patch(
        added_file("src/widgets/helpers.py", 3),
        added_file(TEST_FILE, 3),
        modified_file("docs/usage.md", 1, 1),
    )

    assert refusal(ORIGINAL, ORIGINAL, tests, TEST_FILE) == (
        "validation repair requires test-only patch paths: src/widgets/helpers.py, docs/usage.md"
    )


def test_a_rename_out_of_the_tests_is_not_test_only() -> None:
    tests = patch(renamed_file("tests/test_a.py", "src/a.py"))

    assert refusal(ORIGINAL, ORIGINAL, tests) == (
        "validation repair requires test-only patch paths: src/a.py"
    )


def test_an_escaping_path_of_the_original_patch_admits_nothing() -> None:
    escaping = "tests/../src/widgets/parse.py"
    tests = patch(added_file(escaping, 2))
    assert parse_patch(tests).paths == (escaping,)

    assert refusal(ORIGINAL, ORIGINAL, tests) == (
        f"validation repair requires test-only patch paths: {escaping}"
    )
    assert refusal(ORIGINAL, ORIGINAL, tests, escaping) == (
        f"validation repair changed files outside held-out tests: {escaping}"
    )
    assert coupling_refusal(tests, escaping) == (
        f"repair changed files outside the held-out tests: {escaping}"
    )


# --- check order -------------------------------------------------------------------------------


def test_an_immutable_field_is_checked_before_the_files() -> None:
    assert refusal(ORIGINAL, task(prompt="Other."), b"", "src/x.py") == (
        "validation repair changed immutable definition field prompt"
    )


def test_stray_files_are_checked_before_an_empty_original_patch() -> None:
    assert refusal(ORIGINAL, ORIGINAL, b"", "tests/test_x.py") == (
        "validation repair changed files outside held-out tests: tests/test_x.py"
    )
    assert coupling_refusal(b"", "tests/test_x.py") == (
        "repair changed files outside the held-out tests: tests/test_x.py"
    )


def test_stray_files_are_checked_before_test_only_paths() -> None:
    tests = patch(added_file("src/widgets/helpers.py", 3))

    assert refusal(ORIGINAL, ORIGINAL, tests, "src/other.py") == (
        "validation repair changed files outside held-out tests: src/other.py"
    )


# --- coupling repair ---------------------------------------------------------------------------


def test_a_coupling_repair_of_the_held_out_tests_is_allowed() -> None:
    assert check_coupling_repair(TESTS, [TEST_FILE]).allowed
    assert check_coupling_repair(TESTS, []).allowed


def test_a_coupling_repair_outside_the_held_out_tests_is_refused() -> None:
    assert coupling_refusal(TESTS, "src/widgets/parse.py", TEST_FILE, "README.md") == (
        "repair changed files outside the held-out tests: src/widgets/parse.py, README.md"
    )


def test_a_coupling_repair_does_not_require_test_only_paths() -> None:
    tests = patch(added_file("src/widgets/helpers.py", 3))

    assert check_coupling_repair(tests, ["src/widgets/helpers.py"]).allowed


# --- test-only paths ---------------------------------------------------------------------------

TEST_ONLY = [
    *(f"{segment}/x.py" for segment in sorted(TEST_SEGMENTS)),
    *(f"pkg/{segment}/deep/x.go" for segment in sorted(TEST_SEGMENTS)),
    "TESTS/x.py",
    "pkg/Tests/x.py",
    "src/__TESTS__/x.ts",
    "E2E/login.ts",
    "Integration/db.py",
    "FIXTURES/data.json",
    "pkg/SelfBench/x.sh",
    "Selfbench-Tests/x.sh",
    ".SELFBENCH-TESTS/x.sh",
    "src/test",  # a file named like a segment is a segment too
    "foo.test.ts",
    "src/foo.test.ts",
    "src/foo.spec.js",
    "a.b.test.tsx",
    "test.js",
    "spec.rb",
    ".test.js",
    "src/Widget.test.jsx",
    "test_parse.py",
    "src/test_.py",
    "src/parse_test.py",
    "conftest.py",
    "src/widgets/conftest.py",
    "pkg/parse_test.go",
    "_test.go",
]

NOT_TEST_ONLY = [
    "src/parse.py",
    "testing/x.py",  # a segment must be exactly a listed one
    "tests2/x.py",
    "my-tests/x.py",
    "test-utils/x.ts",
    "src/latest.js",  # the dots of `(^|.)(test|spec).<ext>` are literal
    "src/contest.ts",
    "src/inspect.py",
    "src/footest.js",
    "src/foo_spec.ts",
    "src/foo.tests.ts",
    "src/foo.test",  # no extension
    "src/foo.test.",
    "src/foo.test.d.ts",  # exactly one extension after test/spec
    "src/test.config.js",
    "src/foo.Test.ts",  # file name patterns keep their runners' case
    "src/Test_parse.py",
    "src/parse_Test.py",
    "src/test_parse.pyc",
    "src/parse_test.rs",
    "src/Conftest.py",
    "src/conftest.pyi",
    "src/parse_test.Go",
    "tests\\x.py",  # a backslash is part of a name in Git, not a separator
    "",
    "/tests/x.py",  # a path `git apply` refuses is never test-only
    "tests/../src/x.py",
    "tests/./x.py",
    "tests//x.py",
    "tests/.git/hooks/pre-commit",
    "tests/.GIT/config",
    ".git/tests/x.py",
    "tests/x.py\0",
]


@pytest.mark.parametrize("path", TEST_ONLY)
def test_test_only_paths(path: str) -> None:
    assert is_test_only_path(path)


@pytest.mark.parametrize("path", NOT_TEST_ONLY)
def test_not_test_only_paths(path: str) -> None:
    assert not is_test_only_path(path)


@pytest.mark.parametrize("path", TEST_ONLY)
def test_a_test_only_path_passes_the_validation_rule(path: str) -> None:
    assert check_validation_repair(ORIGINAL, ORIGINAL, patch(added_file(path, 1)), [path]).allowed


# --- properties --------------------------------------------------------------------------------

_COMPONENT_CHARS = st.sampled_from([*"abcxyzABCXYZ019_.-~ ", "\\", "\t", "\n", "ä", "\x00"])
COMPONENTS = st.text(_COMPONENT_CHARS, min_size=1, max_size=8)
SAFE_COMPONENTS = COMPONENTS.filter(lambda part: not unsafe_patch_path(part))
# Lone surrogates too: a patch path holds one for each byte that is not UTF-8.
ANY_CHARACTER = st.characters(exclude_categories=())


@st.composite
def segment_spellings(draw: st.DrawFn) -> str:
    """A test segment in a random mix of cases."""
    segment = draw(st.sampled_from(sorted(TEST_SEGMENTS)))
    flips = draw(st.lists(st.booleans(), min_size=len(segment), max_size=len(segment)))
    return "".join(c.upper() if flip else c for c, flip in zip(segment, flips, strict=True))


@settings(max_examples=500, deadline=None)
@given(st.text(ANY_CHARACTER, max_size=40) | st.lists(COMPONENTS, max_size=5).map("/".join))
def test_is_test_only_path_never_crashes(path: str) -> None:
    assert isinstance(is_test_only_path(path), bool)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(SAFE_COMPONENTS, max_size=3),
    segment_spellings(),
    st.lists(SAFE_COMPONENTS, max_size=3),
)
def test_a_safe_path_through_a_test_segment_is_test_only(
    before: list[str], segment: str, after: list[str]
) -> None:
    assert is_test_only_path("/".join([*before, segment, *after]))


@settings(max_examples=300, deadline=None)
@given(st.lists(SAFE_COMPONENTS, min_size=1, max_size=4))
def test_the_case_of_directory_names_does_not_matter(parts: list[str]) -> None:
    directories, name = parts[:-1], parts[-1]
    lowered = "/".join([*(part.lower() for part in directories), name])
    uppered = "/".join([*(part.upper() for part in directories), name])
    assert is_test_only_path(lowered) == is_test_only_path(uppered)


@settings(max_examples=300, deadline=None)
@given(st.lists(COMPONENTS, min_size=1, max_size=4).map("/".join), segment_spellings())
def test_a_path_git_refuses_is_never_test_only(path: str, segment: str) -> None:
    for hostile in (f"/{segment}/{path}", f"{segment}/../{path}", f"{segment}/.git/{path}"):
        assert unsafe_patch_path(hostile)
        assert not is_test_only_path(hostile)


_PLAIN_PATHS = st.lists(
    st.text(st.sampled_from("abcxyz019_-"), min_size=1, max_size=6), min_size=1, max_size=3
).map("/".join)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_PLAIN_PATHS, min_size=1, max_size=4, unique=True),
    st.lists(_PLAIN_PATHS, max_size=4),
    st.data(),
)
def test_a_repair_is_allowed_exactly_when_it_stays_inside_the_test_patch(
    held_out: list[str], others: list[str], data: st.DataObject
) -> None:
    tests = patch(*(added_file(path, 1) for path in held_out))
    inside = data.draw(st.lists(st.sampled_from(held_out), max_size=4))
    changed = data.draw(st.permutations([*inside, *others]))
    strays = list(dict.fromkeys(path for path in changed if path not in held_out))
    if strays:
        listed = ", ".join(display_path(path) for path in strays)
        assert coupling_refusal(tests, *changed) == (
            f"repair changed files outside the held-out tests: {listed}"
        )
    else:
        assert check_coupling_repair(tests, changed).allowed


# --- the command line --------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["repair-check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """An original definition, a repaired one changing a mutable field, and the test patch."""
    paths = {
        "original": tmp_path / "original.json",
        "repaired": tmp_path / "repaired.json",
        "prompt": tmp_path / "prompt.json",
        "tests": tmp_path / "test.patch",
    }
    paths["original"].write_text(json.dumps(definition()), encoding="utf-8")
    repaired = definition(testCommand="python -m pytest -x {tests}")
    paths["repaired"].write_text(json.dumps(repaired), encoding="utf-8")
    paths["prompt"].write_text(json.dumps(definition(prompt="Other.")), encoding="utf-8")
    paths["tests"].write_bytes(TESTS)
    return {name: str(path) for name, path in paths.items()}


def test_cli_validation_repair_allowed(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = (files["original"], files["repaired"], "--test-patch", files["tests"])

    assert run(capsys, *argv) == (0, "validation repair allowed\n", "")
    assert run(capsys, *argv, "--changed", TEST_FILE) == (0, "validation repair allowed\n", "")


def test_cli_validation_repair_refused(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = (files["original"], files["prompt"], "--test-patch", files["tests"])

    assert run(capsys, *argv) == (
        1,
        "",
        "error: validation repair changed immutable definition field prompt\n",
    )


def test_cli_changed_paths_extend_and_repeat(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = (files["original"], files["repaired"], "--test-patch", files["tests"])
    changed = ("--changed", "a.py", TEST_FILE, "--changed", "b.py", "--changed=-c.py")

    assert run(capsys, *argv, *changed) == (
        1,
        "",
        "error: validation repair changed files outside held-out tests: a.py, b.py, -c.py\n",
    )


def test_cli_json_verdicts(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    tests = ("--test-patch", files["tests"], "--json")

    assert run(capsys, files["original"], files["repaired"], *tests) == (
        0,
        '{\n  "allowed": true,\n  "reason": null\n}\n',
        "",
    )
    code, out, err = run(capsys, files["original"], files["prompt"], *tests)
    assert (code, json.loads(out), err) == (
        1,
        {"allowed": False, "reason": "validation repair changed immutable definition field prompt"},
        "",
    )


def test_cli_hostile_changed_path_is_one_line(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("--coupling", "--test-patch", files["tests"], "--changed", "tests/a\nb.py\x1b")

    assert run(capsys, *argv) == (
        1,
        "",
        "error: repair changed files outside the held-out tests: tests/a\\x0ab.py\\x1b\n",
    )


def test_cli_coupling_repair(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    tests = ("--coupling", "--test-patch", files["tests"])

    assert run(capsys, *tests, "--changed", TEST_FILE) == (0, "coupling repair allowed\n", "")
    assert run(capsys, *tests, "--changed", TEST_FILE, "src/x.py") == (
        1,
        "",
        "error: repair changed files outside the held-out tests: src/x.py\n",
    )
    code, out, err = run(capsys, *tests, "--changed", "src/x.py", "--json")
    assert (code, json.loads(out), err) == (
        1,
        {"allowed": False, "reason": "repair changed files outside the held-out tests: src/x.py"},
        "",
    )


def test_cli_empty_original_patch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "test.patch"
    empty.write_bytes(b"")

    assert run(capsys, "--coupling", "--test-patch", str(empty)) == (
        1,
        "",
        "error: original held-out test patch changes no files\n",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--coupling", "{original}"], "--coupling takes no definitions"),
        (["--coupling", "{original}", "{repaired}"], "--coupling takes no definitions"),
        ([], "repair-check needs ORIGINAL.json and REPAIRED.json (or --coupling)"),
        (["{original}"], "repair-check needs ORIGINAL.json and REPAIRED.json (or --coupling)"),
    ],
)
def test_cli_definitions_and_coupling_are_exclusive(
    argv: list[str], message: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    filled = [arg.format(**files) for arg in argv]

    assert run(capsys, *filled, "--test-patch", files["tests"]) == (2, "", f"error: {message}\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["{original}", "{repaired}"],  # no --test-patch
        ["{original}", "{repaired}", "{prompt}", "--test-patch", "{tests}"],
        ["--coupling", "--test-patch", "{tests}", "--changed"],
    ],
)
def test_cli_usage_errors(
    argv: list[str], files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *(arg.format(**files) for arg in argv))

    assert (code, out) == (2, "")
    assert err.startswith("usage: selfbench")
    assert err.splitlines()[-1].startswith("error: ")


def test_cli_unreadable_files(
    tmp_path: Path, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing")

    assert run(capsys, files["original"], missing, "--test-patch", files["tests"]) == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )
    assert run(capsys, "--coupling", "--test-patch", missing) == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )


def test_cli_invalid_definitions_name_their_file(
    tmp_path: Path, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps(definition(sourcePr=0, difficulty="x")), encoding="utf-8")
    malformed = tmp_path / "malformed.json"
    malformed.write_text("{", encoding="utf-8")

    assert run(capsys, files["original"], str(invalid), "--test-patch", files["tests"]) == (
        2,
        "",
        (
            f"error: {invalid}: difficulty: must be one of easy, medium, hard\n"
            f"error: {invalid}: sourcePr: must be at least 1\n"
        ),
    )
    code, out, err = run(capsys, str(malformed), files["repaired"], "--test-patch", files["tests"])
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {malformed}: ")
    assert len(err.splitlines()) == 1
