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
    check = check_tests(new_files_patch({"tests/test_lock.py": _LOCK_TESTS}), [], b"", _GOLD)

    # `sys._getframe` is private to Python, not to the change
    assert check.privateState == ("lock._waiters",)


def test_only_fail_to_pass_tests_on_a_real_clock_are_found() -> None:
    selected = [
        "tests/test_lock.py::test_release_wakes_a_waiter",
        "tests/test_lock.py::test_release_is_fast",
    ]

    check = check_tests(new_files_patch({"tests/test_lock.py": _LOCK_TESTS}), selected, b"", _GOLD)

    assert check.timing == ("tests/test_lock.py > test_release_is_fast (time.monotonic())",)


_STYLE_TESTS = """\
import random

class TestStyle:
    def test_style(self):
        random.seed(1234)
        table = make_table()
        table.set_style(RANDOM)
        assert table.get_string() == EXPECTED
"""
_DRAWING_GOLD = (
    b"diff --git a/p.py b/p.py\n--- a/p.py\n+++ b/p.py\n@@ -1 +1 @@\n"
    b"-    h = random.choice((ALL, FRAME))\n+    h = random.choice(list(HRuleStyle))\n"
)


@pytest.mark.parametrize(
    ("gold", "found"),
    [
        (_DRAWING_GOLD, ("tests/test_style.py > TestStyle > test_style (random.seed)",)),
        (_DRAWING_GOLD.replace(b"random.choice", b"pick"), ()),
    ],
    ids=["the-gold-draws", "the-gold-does-not-draw"],
)
def test_a_test_that_pins_a_seeded_sequence_the_gold_draws_from(
    gold: bytes, found: tuple[str, ...]
) -> None:
    """The test's body is read whole: the test patch changed only its expected table."""
    changed = (
        b"diff --git a/tests/test_style.py b/tests/test_style.py\n--- a/tests/test_style.py\n"
        b"+++ b/tests/test_style.py\n@@ -9 +9 @@\n-EXPECTED = 1\n+EXPECTED = 2\n"
    )
    selected = ["tests/test_style.py::TestStyle::test_style[RANDOM]"]

    check = check_tests(
        changed, selected, gold, {}, test_files={"tests/test_style.py": _STYLE_TESTS}
    )

    assert check.seeded == found
    assert check_tests(changed, selected, gold, {}).seeded == ()  # the added lines alone


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
    assert check_tests(b"", selectors, b"", {}, _evidence(tests)).wholeFiles == found


def test_whole_files_need_the_draft_s_runs() -> None:
    assert check_tests(b"", ["test/a.test.ts"], b"", {}, None).wholeFiles == ()


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
            TestsCheck(seeded=("t.py > test_style (random.seed)",)),
            "review",
            (
                (
                    "the tests pin a seeded random sequence the gold draws from:"
                    " t.py > test_style (random.seed)"
                ),
            ),
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
    ids=["not-observed", "nothing-found", "private-state", "timing", "seeded", "whole-file"],
)
def test_the_verdict_rows_of_the_tests_check(
    tests: TestsCheck | None, verdict: str, reasons: tuple[str, ...]
) -> None:
    seen = judge(_NEEDED, _STRONG, None, None, Dependencies(), tests=tests)

    assert seen == (verdict, reasons)
