"""submit_task, SPEC §2: messages in order, the files written, exclusivity, preflight."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from helpers import (
    GOLD,
    TESTS,
    added_file,
    arguments,
    definition,
    implementation_patch,
    patch,
    submit_after_barrier,
    variant,
)
from selfbench import _fs
from selfbench._git import git
from selfbench.errors import DefinitionError, PatchError, PreflightError, SubmitError
from selfbench.patches import parse_patch
from selfbench.submit import OUTPUT_ENV, preflight_blockers, submit_files, submit_task

TASK_ID = "widgets-pr-42"
INCOMPLETE = "submit_task received an incomplete task"
NOT_CONFIGURED = "SELFBENCH_TASK_OUTPUT is not configured"
FILES = ["definition.json", "gold.patch", "test.patch"]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An existing output root, configured through the environment."""
    path = tmp_path / "tasks"
    path.mkdir()
    monkeypatch.setenv(OUTPUT_ENV, str(path))
    return path


def listing(path: Path) -> list[str]:
    return sorted(entry.name for entry in path.iterdir())


# --- 1. the output root ------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, ""])
def test_output_root_not_configured(value: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv(OUTPUT_ENV, raising=False)
    else:
        monkeypatch.setenv(OUTPUT_ENV, value)

    with pytest.raises(SubmitError) as err:
        submit_task(arguments())

    assert str(err.value) == NOT_CONFIGURED


def test_not_configured_comes_before_an_incomplete_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(OUTPUT_ENV, raising=False)

    with pytest.raises(SubmitError) as err:
        submit_task({"definition": {}})

    assert str(err.value) == NOT_CONFIGURED


def test_the_root_must_already_exist(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "tasks"

    with pytest.raises(SubmitError) as err:
        submit_task(arguments(), output_root=missing)

    assert str(err.value) == f"SELFBENCH_TASK_OUTPUT directory does not exist: {missing}"
    assert listing(tmp_path) == []


# --- 2. an incomplete task ---------------------------------------------------------------------


def _without_task_id() -> dict[str, Any]:
    value = arguments(difficulty="extreme")
    del value["definition"]["taskId"]
    return value


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"testPatch": "", "goldPatch": ""}, id="no definition"),
        pytest.param({**arguments(), "definition": ["taskId"]}, id="definition not an object"),
        pytest.param(_without_task_id(), id="no taskId"),
        pytest.param(arguments(taskId=""), id="empty taskId"),
        pytest.param({**arguments(), "testPatch": None}, id="testPatch null"),
        pytest.param({**arguments(), "goldPatch": b"diff"}, id="goldPatch bytes"),
        pytest.param({"definition": definition()}, id="no patches"),
        pytest.param([arguments()], id="arguments not an object"),
    ],
)
def test_incomplete_task(value: Any, root: Path) -> None:
    with pytest.raises(SubmitError) as err:
        submit_task(value)

    assert str(err.value) == INCOMPLETE
    assert listing(root) == []


def test_an_incomplete_task_is_reported_before_validation(root: Path) -> None:
    value = {**arguments(difficulty="extreme", bogus=1), "goldPatch": 7, "extra": True}

    with pytest.raises(SubmitError) as err:
        submit_task(value)

    assert str(err.value) == INCOMPLETE


# --- 3. validation -----------------------------------------------------------------------------


def test_every_validation_problem_with_its_path(root: Path) -> None:
    value = arguments(difficulty="extreme", bogus=1, sourcePr=True)
    value["definition"]["timeouts"]["setupSeconds"] = 0
    value["extra"] = 1

    with pytest.raises(DefinitionError) as err:
        submit_task(value)

    assert str(err.value).splitlines() == [
        "definition.difficulty: must be one of easy, medium, hard",
        "definition.sourcePr: must be an integer",
        "definition.timeouts.setupSeconds: must be at least 1",
        "definition.bogus: is not allowed (unknown key)",
        "extra: is not allowed (unknown key)",
    ]
    assert err.value.exit_code == 2
    assert listing(root) == []


def test_submit_files_validates_in_submission_mode(root: Path) -> None:
    with pytest.raises(DefinitionError) as err:
        submit_files(definition(toolchains=[], reviewer="me"), TESTS, GOLD)

    assert [str(issue) for issue in err.value.issues] == [
        "definition.toolchains: must have at least 1 item",
        "definition.reviewer: is not allowed (unknown key)",
    ]


def test_validation_comes_before_the_existing_task(root: Path) -> None:
    submit_task(arguments())

    with pytest.raises(DefinitionError):
        submit_task(arguments(difficulty="extreme"))


# --- 4. the three files ------------------------------------------------------------------------


def test_the_three_files_are_written_exactly(root: Path) -> None:
    value = arguments(prompt="Grüße aus Köln — 日本語 too: let the parser accept trailing commas.")
    value["definition"] = {"prompt": value["definition"].pop("prompt"), **value["definition"]}
    value["definition"]["resources"]["cpus"] = 1.5

    assert submit_task(value) == f"Submitted {TASK_ID}."

    task_dir = root / TASK_ID
    assert listing(root) == [TASK_ID]
    assert listing(task_dir) == FILES
    written = (task_dir / "definition.json").read_bytes()
    assert (
        written == (json.dumps(value["definition"], indent=2, ensure_ascii=False) + "\n").encode()
    )
    assert written.startswith(b'{\n  "prompt": "Gr\xc3\xbc\xc3\x9fe aus K\xc3\xb6ln')
    assert written.endswith(b'    "storageMb": 20480\n  }\n}\n')
    assert b'"cpus": 1.5,' in written
    assert (task_dir / "test.patch").read_bytes() == TESTS
    assert (task_dir / "gold.patch").read_bytes() == GOLD


def test_patches_are_kept_byte_exact(root: Path) -> None:
    crlf_latin1 = (
        b"diff --git a/src/x.c b/src/x.c\r\n--- a/src/x.c\r\n+++ b/src/x.c\r\n"
        b"@@ -1 +1 @@\r\n-caf\xe9\r\n+caf\xc3\xa9 \xff\xfe\r\n"
    )
    gold = implementation_patch(1, 19) + crlf_latin1
    tests = TESTS + b"\n"

    assert submit_files(definition(), tests, gold) == f"Submitted {TASK_ID}."

    assert (root / TASK_ID / "gold.patch").read_bytes() == gold
    assert (root / TASK_ID / "test.patch").read_bytes() == tests


def test_an_explicit_root_overrides_the_environment(tmp_path: Path, root: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()

    submit_task(arguments(), output_root=other)

    assert listing(other) == [TASK_ID]
    assert listing(root) == []


# --- 5. one task per taskId --------------------------------------------------------------------


def test_a_second_submission_fails_and_leaves_the_first(root: Path) -> None:
    first_definition, first_tests, first_gold = variant(1)
    submit_files(first_definition, first_tests, first_gold)
    before = {name: (root / TASK_ID / name).read_bytes() for name in FILES}
    second_definition, second_tests, second_gold = variant(2)

    with pytest.raises(SubmitError) as err:
        submit_files(second_definition, second_tests, second_gold)

    assert str(err.value) == f"task {TASK_ID} already exists: {root / TASK_ID}"
    assert {name: (root / TASK_ID / name).read_bytes() for name in FILES} == before
    assert listing(root) == [TASK_ID]


def test_an_empty_directory_in_the_way_is_not_replaced(root: Path) -> None:
    (root / TASK_ID).mkdir()

    with pytest.raises(SubmitError) as err:
        submit_task(arguments())

    assert str(err.value) == f"task {TASK_ID} already exists: {root / TASK_ID}"
    assert listing(root / TASK_ID) == []


def test_a_failed_write_leaves_nothing_behind(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(source: Path, target: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(_fs, "rename_no_replace", no_space)

    with pytest.raises(SubmitError) as err:
        submit_task(arguments())

    assert str(err.value) == f"cannot write task {TASK_ID}: {os.strerror(errno.ENOSPC)}"
    assert listing(root) == []


def test_concurrent_submits_have_exactly_one_winner(root: Path) -> None:
    count = 16
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(count)
    results: Any = context.Queue()
    workers = [
        context.Process(target=submit_after_barrier, args=(barrier, str(root), index, results))
        for index in range(count)
    ]
    for worker in workers:
        worker.start()
    outcomes = dict(results.get(timeout=60) for _ in workers)
    for worker in workers:
        worker.join(timeout=60)

    assert [worker.exitcode for worker in workers] == [0] * count
    winners = [index for index, outcome in outcomes.items() if outcome == f"Submitted {TASK_ID}."]
    assert len(winners) == 1
    losers = {outcome for index, outcome in outcomes.items() if index not in winners}
    assert losers == {f"error: task {TASK_ID} already exists: {root / TASK_ID}"}
    assert listing(root) == [TASK_ID]
    assert listing(root / TASK_ID) == FILES
    value, tests, gold = variant(winners[0])
    task_dir = root / TASK_ID
    assert json.loads((task_dir / "definition.json").read_bytes()) == value
    assert (task_dir / "test.patch").read_bytes() == tests
    assert (task_dir / "gold.patch").read_bytes() == gold


# --- preflight ---------------------------------------------------------------------------------


def test_preflight_lists_every_blocker_and_writes_nothing(root: Path) -> None:
    value = definition(testPaths=["../outside.py"], testCommand='pytest "{tests}"')
    tests = patch(added_file("../evil.py", 2))

    with pytest.raises(PreflightError) as err:
        submit_files(value, tests, b"just text\n")

    assert err.value.blockers == (
        "task path escapes repository: ../outside.py",
        "test patch path escapes repository: ../evil.py",
        "gold.patch is not a Git patch",
        "easy mode requires at least 1 implementation files; found 0",
        "easy mode requires at least 20 changed implementation lines; found 0",
        'test command must expand "{tests}" as an unquoted shell argument list',
    )
    assert str(err.value) == "\n".join(err.value.blockers)
    assert err.value.exit_code == 1
    assert listing(root) == []


def test_preflight_reads_the_definition_as_it_will_be_read_back(root: Path) -> None:
    value = definition(sourceUrl="see the PR", testCommand="pytest tests")
    gold = patch(added_file("src/a.py", 20), added_file("src/.git/hooks/post-checkout", 1))

    with pytest.raises(PreflightError) as err:
        submit_files(value, b"not a patch", gold)

    assert err.value.blockers == (
        'definition.testCommand: testCommand must contain "{tests}"',
        "definition.sourceUrl: must be an absolute URL (scheme and host)",
        "test.patch is not a Git patch",
        "gold patch path escapes repository: src/.git/hooks/post-checkout",
    )


def test_a_malformed_test_patch_is_refused_with_the_parser_message() -> None:
    malformed = b"diff --git a/tests/x.py b/tests/x.py\n@@ not a hunk\n"
    with pytest.raises(PatchError) as parse_error:
        parse_patch(malformed)

    assert preflight_blockers(definition(), malformed, GOLD) == (
        f"test.patch: {parse_error.value}",
    )


def test_a_clean_task_has_no_preflight_blockers() -> None:
    assert preflight_blockers(definition(), TESTS, GOLD) == ()


def test_without_preflight_a_rejected_task_is_written(root: Path) -> None:
    value = arguments(difficulty="hard", sourceUrl="see the PR")
    value["goldPatch"] = value["testPatch"] = ""

    assert submit_task(value, preflight=False) == f"Submitted {TASK_ID}."

    assert listing(root / TASK_ID) == FILES
    assert (root / TASK_ID / "gold.patch").read_bytes() == b""


# --- the helpers' patches are real -------------------------------------------------------------


def test_the_sample_patches_apply_with_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "--quiet")
    for data in (GOLD, TESTS, implementation_patch(3, 100)):
        result = subprocess.run(
            ["git", "-C", str(tmp_path), "apply", "--check", "-"],
            input=data,
            capture_output=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr


# --- the filesystem primitives -----------------------------------------------------------------


@pytest.mark.parametrize("native", [True, False], ids=["renameat2", "fallback"])
def test_rename_no_replace(native: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not native:
        monkeypatch.setattr(_fs, "_renameat2", lambda: None)
    source, full, empty = tmp_path / "source", tmp_path / "full", tmp_path / "empty"
    for directory in (source, full, empty):
        directory.mkdir()
    (source / "a").write_bytes(b"new")
    (full / "a").write_bytes(b"old")

    for target in (full, empty):
        with pytest.raises(FileExistsError):
            _fs.rename_no_replace(source, target)
    _fs.rename_no_replace(source, tmp_path / "fresh")

    assert (tmp_path / "fresh" / "a").read_bytes() == b"new"
    assert (full / "a").read_bytes() == b"old"
    assert listing(empty) == []
    assert listing(tmp_path) == ["empty", "fresh", "full"]


def test_write_atomic_replaces_a_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_bytes(b"old")

    _fs.write_atomic(target, b"new", mode=0o600)

    assert target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o600
    assert listing(tmp_path) == ["out.txt"]


def test_exchange_swaps_two_directories(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "name").write_bytes(b"first")
    (second / "name").write_bytes(b"second")

    if not _fs.exchange(first, second):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not supported here")

    assert (first / "name").read_bytes() == b"second"
    assert (second / "name").read_bytes() == b"first"


def test_exchange_says_when_unsupported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fs, "_renameat2", lambda: None)

    assert _fs.exchange(tmp_path, tmp_path) is False


def test_exchange_of_a_missing_path_raises(tmp_path: Path) -> None:
    if _fs._renameat2() is None:  # noqa: SLF001 - the probe is what decides support
        pytest.skip("renameat2 is not available here")

    with pytest.raises(FileNotFoundError):
        _fs.exchange(tmp_path / "missing", tmp_path)


def test_write_atomic_from_many_threads_at_once(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    contents = [f"writer {index}\n".encode() * 1000 for index in range(8)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda content: _fs.write_atomic(target, content), contents))

    assert target.read_bytes() in contents
    assert listing(tmp_path) == ["out.txt"]
