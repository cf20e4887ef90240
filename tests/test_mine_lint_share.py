"""Changes whose code is mostly layout and lint fixes: ranked last in their tier.

Each row commits a module and its tests, an older change of real work, then the row's change
(newer: it would rank first), and says whether the row's change is ranked last (its reason) or
keeps its place (KEPT): the counter-examples touch the same tokens as a linter does, but change
what the code does.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mine_history import Files, History, lines
from selfbench.mine import mine_repository
from selfbench.mine.chores import MOSTLY_LINT
from selfbench.mine.lint_share import lint_count
from selfbench.patches import Hunk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEPT = None
N = 40
MODULE = "src/app/describe.py"
TESTS = "tests/test_describe.py"


def before(i: int) -> str:
    return (
        f"class Item{i}(object):\n    pass\n\n\n"
        f"def describe_{i}(value, limit=None):\n"
        f"    list = [u'a{i}', 'b{i}', Item{i}()]\n"
        f"    if value and limit:\n        return 'large {i}: %s' % (value,)\n"
        f"    return ' '.join(str(item) for item in list)\n\n\n"
    )


def linted(i: int) -> str:
    return (
        f"class Item{i}:\n    pass\n\n\n"
        f"def describe_{i}(value, limit=None):\n"
        f'    list_values = [\n        "a{i}",\n        "b{i}",\n        Item{i}(),\n    ]\n'
        f"    if value and limit:\n"
        f'        return "large {i}: %s" % (value,)\n'
        f'    return " ".join(str(item) for item in list_values)\n\n\n'
    )


def module(shape: Callable[[int], str]) -> str:
    return "".join(shape(i) for i in range(N))


def changed(*edits: tuple[str, str]) -> Callable[[int], str]:
    """The module as it was, the edits made (`{i}`: the function's number)."""

    def shape(i: int) -> str:
        text = before(i)
        for old, new in edits:
            text = text.replace(old.format(i=i), new.format(i=i))
        return text

    return shape


QUOTES = ("u'a{i}', 'b{i}'", '"a{i}", "b{i}"')
"""A linter's part beside each counter-example's work: one line's quotes and prefix."""


SUITE = (
    "from app.describe import describe_0\n\n\n"
    "def test_describe():\n    assert describe_0(1) == u'a0 b0 ' + str(describe_0)\n"
)
LINTED_SUITE = SUITE.replace("u'a0 b0 '", '"a0 b0 "')
NEW_TESTS = LINTED_SUITE + "".join(
    f"\n\ndef test_large_{i}():\n    assert describe_0({i}, {i}) == 'large 0: {i}'\n"
    for i in range(12)
)

CASES = "tests/cases/describe.txt"
NEW_CASES = "".join(f"describe_0({i}, {i}) -> large 0: {i}\n" for i in range(12))
"""Work in the tests' files that are not Python: a linter writes none of it."""

ROWS: list[tuple[str, Files, str | None]] = [
    ("quotes-prefixes-commas-object-and-a-shadowing-renamed", {MODULE: module(linted)},
     MOSTLY_LINT.format(lint=640, tokens=640, tests=0)),
    ("quotes-and-prefixes", {MODULE: module(linted).replace("list_values", "list")},
     MOSTLY_LINT.format(lint=480, tokens=480, tests=0)),
    ("bytes-prefix", {MODULE: module(changed(
        ("u'a{i}', 'b{i}'", 'b"a{i}", b"b{i}"'), ("' '.join", '" ".join')))}, KEPT),
    ("f-string", {MODULE: module(changed(
        QUOTES, ("'large {i}: %s' % (value,)", "f'large {i}: {{value}}'")))}, KEPT),
    ("reordered-condition", {MODULE: module(changed(
        QUOTES, ("value and limit", "limit and value")))}, KEPT),
    ("renamed-to-another-variable", {MODULE: module(changed(
        (f"list = [{QUOTES[0]}", f"limit = [{QUOTES[1]}"), ("in list)", "in limit)")))}, KEPT),
    ("lint-and-tested-work", {MODULE: module(linted), TESTS: NEW_TESTS}, KEPT),
    ("lint-and-tested-work-in-other-test-files", {MODULE: module(linted), CASES: NEW_CASES},
     KEPT),
]  # fmt: skip


@needs_git
@pytest.mark.parametrize(
    ("after", "reason"), [pytest.param(after, reason, id=name) for name, after, reason in ROWS]
)
def test_mostly_lint_is_ranked_last(tmp_path: Path, after: Files, reason: str | None) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {MODULE: module(before), TESTS: SUITE})
    work = h.commit(
        "Parse dates (#1)", {"src/app/dates.py": lines(40, "d"), "tests/test_dates.py": lines(4)}
    )
    change = h.commit("Upgrade the linter (#2)", {TESTS: LINTED_SUITE, **after})
    found = {c.completed_commit: c for c in mine_repository(h.path).candidates}
    assert change in found
    order = [c for c in found if found[c].difficulty == found[change].difficulty]
    assert found[change].ranked_last == reason
    assert order == ([work, change] if reason is not None else [change, work])


def test_layout_is_normalised_away_token_by_token() -> None:
    """`(object)`, grouping parentheses, trailing commas before a closing bracket or at a
    line's end, a continuation and string prefixes and quotes go; a call's parenthesis, a
    one-line tuple's comma and adjacent strings (joined) stay."""
    old = (
        b"class C(object):",
        b"    v = f((a + b), [1, 2,], u'x' \"y\", {k: 1,}) + \\",
        b"    (c,)",
        b"    g(d,",
        b"    )",
    )
    [(removed, added)] = lint_count((Hunk(old, (b"class C:",)),)).hunks
    assert removed == [
        "class", "C", ":", "v", "=", "f", "(", "a", "+", "b", ",", "[", "1", ",", "2", "]",
        ",", '"xy"', ",", "{", "k", ":", "1", "}", ")", "+", "c", ",", "g", "(", "d", ")",
    ]  # fmt: skip
    assert added == ["class", "C", ":"]


def test_a_line_of_starred_parameters_is_code() -> None:
    """`*args,` opens no comment in Python (it would in C): a rewrapped signature's tokens all
    count."""
    old = (b"def f(", b"    value,", b"    *args,", b"    **kwargs,", b"):")
    new = (b"def f(value, *rest, **kwargs):",)
    found = lint_count((Hunk(old, new),))
    assert (found.changed, found.tokens) == (3, 27)  # the trailing comma too, as written
    assert [len(removed) + len(added) for removed, added in found.hunks] == [26]


@given(st.lists(st.tuples(st.lists(st.binary(max_size=60)), st.lists(st.binary(max_size=60)))))
def test_the_count_raises_nothing_on_any_input(
    sides: list[tuple[list[bytes], list[bytes]]],
) -> None:
    found = lint_count(tuple(Hunk(tuple(old), tuple(new)) for old, new in sides))
    assert 0 <= found.changed <= found.tokens
