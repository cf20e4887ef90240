"""The authored task module: its files, its reader, and the judge preflight and compile share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import GOLD, TESTS, added_file, definition, patch, write_task_files
from selfbench.artifacts.task_dir import (
    TASK_FILES,
    AuthoredTask,
    read_authored_task,
    read_definition,
)
from selfbench.compiler import check_authored_task, compile_task
from selfbench.contract import parse_definition
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.errors import CompileError, DefinitionError, Issue, PreflightError, TaskFileError
from selfbench.submit import preflight_blockers, submit_files
from selfbench.task import judge_task
from strategies import mutated_patches, patch_like

# --- the corpus: one broken patch per shape problem -----------------------------------------------

_TESTS_SECTION = "tests/test_slug_extra.py"


def _test_patch(path: str = _TESTS_SECTION, *, lines: int = 3) -> bytes:
    return patch(added_file(path, lines, tag="assert"))


def _truncated(data: bytes, lines: int = 1) -> bytes:
    """The patch with its last `lines` lines cut off: its last hunk ends early."""
    return b"".join(data.splitlines(keepends=True)[:-lines])


def _corpus() -> list[tuple[str, bytes | None, bytes | None, str | None]]:
    """(id, test patch or None for the sample's, gold patch or None, expected first blocker)."""
    bad_header = f"diff --git a/{_TESTS_SECTION} b/{_TESTS_SECTION}\n@@ not a hunk\n".encode()
    return [
        ("clean", None, None, None),
        (
            "truncated-hunk",
            _truncated(_test_patch(lines=1)),
            None,
            "test.patch: truncated hunk at line 6",
        ),
        ("bad-hunk-header", bad_header, None, "test.patch: malformed hunk header at line 2"),
        ("empty", b"", None, "test.patch is not a Git patch"),
        ("plain-diff", b"--- a/x\n+++ b/x\n", None, "test.patch is not a Git patch"),
        ("no-files", b"diff --git \n", None, "test.patch changes no files"),
        (
            "dot-git",
            _test_patch(".git/hooks/post-checkout"),
            None,
            "test patch path escapes repository: .git/hooks/post-checkout",
        ),
        (
            "dot-dot",
            _test_patch("../evil.py"),
            None,
            "test patch path escapes repository: ../evil.py",
        ),
        ("gold-not-a-patch", None, b"just text\n", "gold.patch is not a Git patch"),
        (
            "gold-truncated",
            None,
            _truncated(patch(added_file("src/slugkit/extra.py", 30))),
            "gold.patch: truncated hunk at line 35",
        ),
        (
            "no-prefix",
            _test_patch().replace(b"a/tests/", b"tests/").replace(b"b/tests/", b"tests/"),
            None,
            (
                f"test.patch names {_TESTS_SECTION} without a/ and b/ prefixes"
                " (made with --no-prefix?); make it with plain git diff"
            ),
        ),
        (
            "gold-escapes",
            None,
            patch(added_file("src/../../outside.py", 30)),
            "gold patch path escapes repository: src/../../outside.py",
        ),
    ]


CORPUS = _corpus()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def _preflight_verdict(root: Path, value: dict[str, Any], tests: bytes, gold: bytes) -> str | None:
    root.mkdir()
    try:
        submit_files(value, tests, gold, output_root=root)
    except PreflightError as exc:
        return exc.blockers[0]
    return None


def _compile_verdict(
    task_dir: Path, repo: Path, value: dict[str, Any], tests: bytes, gold: bytes
) -> str | None:
    write_task_files(task_dir, value, gold=gold, tests=tests)
    out = task_dir.parent / "bundle"
    try:
        compile_task(task_dir, repo=repo, out=out)
    except CompileError as exc:
        assert not out.exists()
        return str(exc)
    return None


@pytest.mark.parametrize(
    ("tests", "gold", "expected"),
    [pytest.param(tests, gold, expected, id=name) for name, tests, gold, expected in CORPUS],
)
def test_preflight_and_compile_give_the_same_verdict(
    tmp_path: Path,
    sample: SampleRepository,
    tests: bytes | None,
    gold: bytes | None,
    expected: str | None,
) -> None:
    arguments = sample_arguments(sample)
    value = arguments["definition"]
    test_patch = arguments["testPatch"].encode() if tests is None else tests
    gold_patch = arguments["goldPatch"].encode() if gold is None else gold

    preflight = _preflight_verdict(tmp_path / "tasks", value, test_patch, gold_patch)
    compiled = _compile_verdict(tmp_path / "task", sample.path, value, test_patch, gold_patch)

    assert preflight == compiled == expected


@given(
    tests=st.one_of(mutated_patches(), patch_like(), st.just(TESTS)),
    gold=st.one_of(mutated_patches(), patch_like(), st.just(GOLD)),
)
def test_compile_refuses_exactly_what_preflight_refuses_first(tests: bytes, gold: bytes) -> None:
    loaded = parse_definition(definition())
    inputs = judge_task(loaded, tests, gold).input_blockers
    try:
        check_authored_task(AuthoredTask(loaded, tests, gold))
    except CompileError as exc:
        compiled: str | None = str(exc)
    else:
        compiled = None

    assert compiled == (inputs[0] if inputs else None)
    assert preflight_blockers(definition(), tests, gold)[: len(inputs)] == inputs


# --- the judge -----------------------------------------------------------------------------------


def test_an_invalid_definition_still_has_its_patches_judged() -> None:
    verdict = judge_task(definition(sourcePr=0), b"", b"diff --git a/x b/x\n@@ -1 +1 @@\n")

    assert verdict.issues == (Issue("definition.sourcePr", "must be at least 1"),)
    assert verdict.report is None
    assert verdict.blockers == (
        "definition.sourcePr: must be at least 1",
        "test.patch is not a Git patch",
        "gold.patch: truncated hunk at line 3",
    )
    assert verdict.warnings == ()
    with pytest.raises(DefinitionError) as caught:
        _ = verdict.audit
    assert caught.value.issues == verdict.issues


def test_a_definition_is_judged_alike_raw_loaded_or_parsed() -> None:
    value = definition(prompt="Fix #42 in module_0.py.", testCommand='pytest "{tests}"')
    loaded = parse_definition(value)

    raw, read, parsed = (
        judge_task(given, TESTS, GOLD) for given in (value, loaded, loaded.definition)
    )

    assert raw == read == parsed
    assert raw.blockers == (
        'test command must expand "{tests}" as an unquoted shell argument list',
    )
    assert raw.warnings == (
        "prompt mentions the source PR number (42)",
        "prompt mentions a gold file name (module_0.py)",
    )


def test_the_order_of_blockers_is_the_spec_order() -> None:
    value = definition(taskId="a..b", workdir="../w")
    verdict = judge_task(value, patch(added_file(".git/x", 1)), b"nope")

    assert verdict.input_blockers == (
        "taskId a..b cannot name a Harbor task: it holds '..'",
        "task path escapes repository: ../w",
        "task path escapes repository: ../w/tests/test_new.py",
        "test patch path escapes repository: .git/x",
        "gold.patch is not a Git patch",
    )
    assert verdict.blockers[len(verdict.input_blockers) :] == verdict.audit.blockers


@given(tests=st.binary(max_size=300), gold=patch_like())
def test_judging_any_bytes_returns_a_verdict(tests: bytes, gold: bytes) -> None:
    verdict = judge_task(definition(), tests, gold)

    assert verdict.accepted == (not verdict.blockers)
    assert verdict.report is not None


# --- the reader ----------------------------------------------------------------------------------


def test_the_task_files() -> None:
    assert TASK_FILES == ("definition.json", "test.patch", "gold.patch")


def test_read_authored_task_keeps_the_patch_bytes(tmp_path: Path) -> None:
    tests, gold = b"diff --git a/t b/t\r\n\xff", b"\x00gold"
    write_task_files(tmp_path, definition(extra=1), gold=gold, tests=tests)

    task = read_authored_task(tmp_path)

    assert (task.test_patch, task.gold_patch) == (tests, gold)
    assert task.definition.taskId == "widgets-pr-42"
    assert task.loaded.warnings == ("dropped unknown key extra",)


@pytest.mark.parametrize("missing", TASK_FILES)
def test_an_unreadable_task_file_is_named(tmp_path: Path, missing: str) -> None:
    write_task_files(tmp_path)
    (tmp_path / missing).unlink()

    with pytest.raises(TaskFileError) as caught:
        read_authored_task(tmp_path)

    assert str(caught.value) == f"cannot read {tmp_path / missing}: No such file or directory"
    assert caught.value.exit_code == 2


def test_read_definition_in_either_mode(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere.json"
    path.write_text(json.dumps(definition(extra=1)), encoding="utf-8")

    assert read_definition(path).warnings == ("dropped unknown key extra",)
    with pytest.raises(DefinitionError) as caught:
        read_definition(path, mode="submission")
    assert caught.value.issues == (Issue("extra", "is not allowed (unknown key)"),)
