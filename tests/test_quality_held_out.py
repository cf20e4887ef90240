"""What a reviewer sees in the held-out tests themselves: private state, real clocks, whole-file
selectors; and the verdict's rows that read them."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import new_files_patch
from selfbench.artifacts.quality_record import (
    Ablation,
    Dependencies,
    GoldPart,
    Mutation,
    TestsCheck,
)
from selfbench.quality.held_out import check_tests
from selfbench.quality.verdict import judge

_LOCK_TESTS = """\
import sys
import time

def test_release_wakes_a_waiter():
    lock = Lock()
    assert lock._waiters == []
    assert sys._getframe() is not None

def test_release_is_fast():
    started = time.monotonic()
    Lock().release()
    assert time.monotonic() - started < 0.1

def test_other():
    time.sleep(1)
"""
_GOLD = {"pkg/lock.py": "class Lock:\n    def __init__(self):\n        self._waiters = []\n"}


def test_private_state_the_gold_defines_is_found() -> None:
    check = check_tests(new_files_patch({"tests/test_lock.py": _LOCK_TESTS}), [], _GOLD)

    # `sys._getframe` is private to Python, not to the change
    assert check.privateState == ("lock._waiters",)


def test_only_fail_to_pass_tests_on_a_real_clock_are_found() -> None:
    selected = [
        "tests/test_lock.py::test_release_wakes_a_waiter",
        "tests/test_lock.py::test_release_is_fast",
    ]

    check = check_tests(new_files_patch({"tests/test_lock.py": _LOCK_TESTS}), selected, _GOLD)

    assert check.timing == ("tests/test_lock.py > test_release_is_fast (time.monotonic())",)


def _evidence(tests: dict[str, str]) -> dict[str, Any]:
    run = {"file": "test/a.test.ts", "exitCode": 1, "tests": tests}
    return {"runs": [{"name": "base", "files": [run]}, {"name": "gold-1", "files": []}]}


@pytest.mark.parametrize(
    ("selectors", "tests", "found"),
    [
        (
            ["test/a.test.ts"],
            {"a > new": "failed", "a > old": "passed", "a > older": "passed"},
            ("test/a.test.ts (2 pass at the base)",),
        ),
        (["test/a.test.ts"], {"a > new": "failed", "a > skipped": "skipped"}, ()),
        (["test/a.test.ts > a > new"], {"a > new": "failed", "a > old": "passed"}, ()),
        (["tests/t.py::test_new"], {"test_old": "passed"}, ()),
    ],
    ids=["file-with-passing-tests", "file-all-new", "a-test", "a-pytest-id"],
)  # fmt: skip
def test_a_whole_file_selector_holding_tests_that_pass_at_the_base(
    selectors: list[str], tests: dict[str, str], found: tuple[str, ...]
) -> None:
    assert check_tests(b"", selectors, {}, _evidence(tests)).wholeFiles == found


def test_whole_files_need_the_draft_s_runs() -> None:
    assert check_tests(b"", ["test/a.test.ts"], {}, None).wholeFiles == ()


_NEEDED = Ablation(parts=(GoldPart(path="a.py", implementation=True, needed=True),))
_STRONG = Mutation(generated=10, killed=9, score=0.9)


@pytest.mark.parametrize(
    ("tests", "verdict", "reasons"),
    [
        (None, "ship", ()),
        (TestsCheck(), "ship", ()),
        (
            TestsCheck(privateState=("lock._waiters", "lock._hold")),
            "review",
            ("tests read private state: lock._waiters, lock._hold",),
        ),
        (
            TestsCheck(timing=("t.py > test_fast (time.monotonic())",)),
            "review",
            ("timing-sensitive fail-to-pass tests: t.py > test_fast (time.monotonic())",),
        ),
        (
            TestsCheck(wholeFiles=("test/a.test.ts (2 pass at the base)",)),
            "review",
            (
                (
                    "a fail-to-pass selector is a whole file holding tests the change does not"
                    " touch: test/a.test.ts (2 pass at the base)"
                ),
            ),
        ),
    ],
    ids=["not-observed", "nothing-found", "private-state", "timing", "whole-file"],
)
def test_the_verdict_rows_of_the_tests_check(
    tests: TestsCheck | None, verdict: str, reasons: tuple[str, ...]
) -> None:
    seen = judge(_NEEDED, _STRONG, None, None, Dependencies(), tests=tests)

    assert seen == (verdict, reasons)
