"""Changes whose code is mostly typing: ranked last in their tier, the reason on the candidate.

Each row commits a module and its tests, an older change of real work, then the row's change
(newer: it would rank first), and says whether the row's change is ranked last (its reason)
or keeps its place (KEPT): the counter-examples do work their tests check besides the typing.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mine_history import Files, History, lines
from selfbench.mine import CandidateModel, mine_repository
from selfbench.mine._code_tokens import _PIECE_RE, count_pieces, misfits
from selfbench.mine.chores import MOSTLY_TYPING
from selfbench.patches import Hunk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEPT = None
N = 28
HEADER = (
    "from __future__ import annotations\n\nimport typing as t\n\n"
    "if t.TYPE_CHECKING:\n    from .datastructures import Headers\n\n"
)
TESTS = "tests/test_http.py"


def getter(typed: bool, *, default: str = "None") -> Callable[[int], str]:
    head = (
        "(headers: Headers, key: str, default: str | None = {d}) -> str | None:"
        if typed
        else "(headers, key, default={d}):"
    )
    return lambda i: (
        f"def get_{i}" + head.format(d=default) + "\n"
        f'    """Return the header {i}, or the default."""\n'
        f"    rv = headers.get(key)\n    if rv is None:\n        return default\n"
        "    return rv\n\n"
    )


def module(shape: Callable[[int], str], header: str = "", cast: int = 0, n: int = N) -> str:
    """`cast` functions return `str(rv)`, as mypy wants of an `Any` (work, a little); the
    first `n` functions are typed, the others as `PLAIN` has them."""
    text = (
        header
        + "".join(shape(i) for i in range(n))
        + "".join(getter(typed=False)(i) for i in range(n, N))
    )
    return text.replace("    return rv\n", "    return str(rv)\n", cast)


def suite(typed: bool, extra: str = "") -> str:
    arrow = " -> None" if typed else ""
    return (
        "from app.http import get_0\n\n\n"
        f"def test_get(){arrow}:\n    assert get_0({{'a': 'b'}}, 'a') == 'b'\n" + extra
    )


PLAIN = module(getter(typed=False))
SWEEP = module(getter(typed=True), HEADER, cast=6)
NEW_PARAMETER = SWEEP.replace(
    "def get_0(headers: Headers, key: str, default: str | None = None)",
    "def get_0(headers: Headers, key: str, default: str | None = None, *, strip: bool = False)",
).replace("    return str(rv)\n", "    return str(rv).strip() if strip else str(rv)\n", 1)
STRIP_TESTS = "".join(
    f"\n\ndef test_strip_{i}() -> None:\n    headers = {{'a': ' b{i} '}}\n"
    f"    assert get_0(headers, 'a', strip=True) == 'b{i}'\n"
    f"    assert get_0(headers, 'a') == ' b{i} '\n"
    for i in range(4)
)
NEW_DEFAULT = module(getter(typed=True, default='""'), HEADER, cast=6)
DEFAULT_TESTS = "".join(
    f"\n\ndef test_default_{i}() -> None:\n    assert get_0({{}}, 'missing') == ''\n"
    f"    assert get_0({{'x': '{i}'}}, 'x') == '{i}'\n"
    for i in range(6)
)

ROWS: list[tuple[str, Files, str | None]] = [
    ("annotations-and-casts", {"src/app/http.py": SWEEP, TESTS: suite(typed=True)},
     MOSTLY_TYPING.format(typing=369, tokens=391, tests=0)),
    ("a-sweep-too-small-to-judge",
     {"src/app/http.py": module(getter(typed=True), HEADER, cast=6, n=N // 2),
      TESTS: suite(typed=True)}, KEPT),
    ("annotations-and-a-tested-new-parameter",
     {"src/app/http.py": NEW_PARAMETER, TESTS: suite(typed=True, extra=STRIP_TESTS)}, KEPT),
    ("annotations-and-a-tested-new-default",
     {"src/app/http.py": NEW_DEFAULT, TESTS: suite(typed=True, extra=DEFAULT_TESTS)}, KEPT),
    ("stubs-and-py-typed",
     {"src/app/http.py": module(getter(typed=True), HEADER), "src/app/py.typed": "",
      "src/app/http.pyi": "".join(f"def get_{i}(h: Headers, key: str) -> str: ...\n"
                                  for i in range(N)),
      TESTS: suite(typed=True)}, None),
]  # fmt: skip
"""The last row is out already (typing alone, `TYPING_ONLY`): no candidate to rank."""


@needs_git
@pytest.mark.parametrize(
    ("after", "reason"), [pytest.param(after, reason, id=name) for name, after, reason in ROWS]
)
def test_mostly_typing_is_ranked_last(tmp_path: Path, after: Files, reason: str | None) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {"src/app/http.py": PLAIN, TESTS: suite(typed=False)})
    work = h.commit(
        "Parse dates (#1)", {"src/app/dates.py": lines(40, "d"), "tests/test_dates.py": lines(4)}
    )
    change = h.commit("Add type annotations (#2)", after)
    found = {c.completed_commit: c for c in mine_repository(h.path).candidates}
    if change not in found:
        assert reason is None
        return
    order = [c for c in found if found[c].difficulty == found[change].difficulty]
    assert found[change].ranked_last == reason
    line = found[change].to_json()  # the key only where there is a reason, read back as written
    assert line.get("rankedLast", None) == reason
    assert CandidateModel.model_validate(line).model_dump(mode="json", exclude_unset=True) == line
    assert order == ([work, change] if reason is not None else [change, work])


_PIECE_BYTES = st.binary(max_size=80) | st.text(
    "ab_9 \t\n\v\f\r\x1c\x85:>-.,\xe9", max_size=40
).map(str.encode)


@given(_PIECE_BYTES)
def test_pieces_are_counted_as_the_pattern_finds_them(data: bytes) -> None:
    """The count at C speed is the pattern's, whatever the bytes (word, space, other, runs)."""
    assert count_pieces(data) == len(_PIECE_RE.findall(data))


_HUNK_LINES = st.lists(
    st.sampled_from(
        [
            b"def f(x: int) -> str:",
            b'    return _("name {n}").format(n=x)',
            b"from typing import cast",
            b"y = cast(int, z)  # why",
            b'msg = f"{a}"',
            b"if TYPE_CHECKING:",
            b"    pass",
            b"# a comment",
        ]
    ),
    max_size=6,
)


@given(_HUNK_LINES, _HUNK_LINES)
def test_the_typing_share_counts_what_misfits_counts_without_translation(
    removed: list[bytes], added: list[bytes]
) -> None:
    """Without `i18n`, `misfits` counts the rest alike and leaves translation's count out."""
    hunks = [Hunk(tuple(removed), tuple(added))]
    whole = misfits("python", hunks)
    assert misfits("python", hunks, i18n=False) == whole._replace(i18n=None)
