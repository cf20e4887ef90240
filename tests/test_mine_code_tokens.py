"""The hunks' token screens (`selfbench.mine._code_tokens`, `lint_share`) read faster, and say
the same.

Each fast path is held to the plain reading it replaced, kept here as the reference: a line's
mark of code (`CODE_RE`), the changed lines of code the numbers are read from
(`_CHANGEDCODE_RE`, whose marks are skipped to), and a side's tokens (`_side`, each line read
once and kept), a section's pieces (`section_pieces`, counted once), the lint share's side
(each line read once and kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench.mine import _code_tokens
from selfbench.mine._code_tokens import (
    _CHANGEDCODE_RE,
    _COMMENT_TAIL_RE,
    _LINE_KEPT_BYTES,
    _TOKEN_RE,
    CODE_RE,
    Language,
    _read_lines,
    _side,
    _unannotated,
    _uncast,
    count_pieces,
    is_code,
    numbers_kept,
    section_pieces,
)
from selfbench.mine.lint_share import _COMMENT_TAIL_RE as _LINT_COMMENT_TAIL_RE
from selfbench.mine.lint_share import _TOKEN_RE as _LINT_TOKEN_RE
from selfbench.mine.lint_share import _UNQUOTED_TOKEN_RE, _normalised
from selfbench.mine.lint_share import _read_lines as _lint_lines
from selfbench.mine.lint_share import _side as _lint_side
from selfbench.patches import is_comment

_PLAIN_CHANGEDCODE_RE = re.compile(
    rb"^([-+])(?!-- |\+\+ )(?![ \t]*(?:#|//|/?\*))([ \t]*(?:(?:return|raise|yield|if|elif|else"
    rb"|for|while|with|try|except|finally|assert|del|import|from|def|class|lambda|await|async"
    rb"|pass|break|continue)\b[^\n]*|[^\n]*?(?:\w[(\[]|[^=!<>\n]=[^=])[^\n]*))",
    re.MULTILINE,
)
"""`_CHANGEDCODE_RE` as it was first written: a lazy scan for the marks."""


def _plain_side(
    language: Language, lines: Iterable[bytes]
) -> tuple[int, list[str], list[str], list[str]]:
    """`_side` as it was first written: each line read in turn, none kept."""
    every = 0
    code: list[str] = []
    unannotated: list[str] = []
    unimported: list[str] = []
    for raw in lines:
        if not raw.strip() or is_comment(raw):
            continue
        if b"#" in raw or b"//" in raw:
            raw = _COMMENT_TAIL_RE.sub(b"", raw)  # noqa: PLW2901 - the line's code
        text = raw.decode("utf-8", "replace").strip()
        tokens = _TOKEN_RE.findall(text)
        every += len(tokens)
        importing = text.startswith(("import ", "from "))
        if language != "python" or CODE_RE.search(text) is not None:
            code += tokens
            if not importing:
                unannotated += _unannotated(_uncast(tokens))
        if not importing:
            unimported += tokens
    return every, code, unannotated, unimported


_LINE_TEXT = st.lists(
    st.sampled_from(
        [*" \t=!<>()[]{}:,.-#/*'\"\\_x1f\xa0\x1c\u2028é", "if ", "for ", "else", "return ",
         "import ", "from ", "cast(", "t.cast", "->", "==", "//", "/*", ">>>", "def ", "class "]
    ),
    max_size=16,
).map("".join)  # fmt: skip
_LINE_BYTES = st.one_of(
    _LINE_TEXT.map(lambda text: text.encode()),
    st.binary(max_size=12),  # undecodable bytes too: replaced alike
)


@given(_LINE_TEXT)
def test_is_code_is_code_re(text: str) -> None:
    assert is_code(text) == (CODE_RE.search(text) is not None)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("x = 1", True),
        ("=x", True),
        ("x == 1", False),
        ("x <= 1", False),
        ("x => 1", False),
        ("f(x)", True),
        ("(x)", False),
        ("a[0](x)", True),
        (") + 1", True),
        ("return", True),
        ("returns the value", False),
        ("if x:", True),
        ("if x: y", False),
        ("else:  ", False),
        ("a docstring's line.", False),
    ],
)
def test_is_code_rows(text: str, code: bool) -> None:
    assert is_code(text) is code
    assert (CODE_RE.search(text) is not None) is code


_PATCH_TEXT = st.lists(
    st.tuples(
        st.sampled_from(["+", "-", " ", "@@ ", "+++ ", "--- ", "++", ""]),
        _LINE_TEXT,
    ),
    max_size=12,
).map(lambda lines: "\n".join(sign + text for sign, text in lines))


@given(_PATCH_TEXT, st.booleans())
def test_changed_code_is_the_plain_reading(text: str, ended: bool) -> None:
    data = (text + "\n" if ended else text).encode()
    assert _CHANGEDCODE_RE.findall(data) == _PLAIN_CHANGEDCODE_RE.findall(data)


@pytest.mark.parametrize(
    ("data", "found"),
    [
        (b"+x = 1\n", [(b"+", b"x = 1")]),
        (b"+=x\n", []),  # the mark follows something: the sign is not it
        (b"+ =x\n", [(b"+", b" =x")]),
        (b"+x =\n+y\n", [(b"+", b"x =\n+y")]),  # ends assigning: takes the next line
        (b"+x =\n", [(b"+", b"x =\n")]),
        (b"+x =", []),  # nothing after its `=`
        (b"+f(x) =\n+y\n", [(b"+", b"f(x) =")]),  # an earlier mark: its own line only
        (b"+a==\n+b\n", []),
        (b"+a != b\n", []),
        (b"+f (x)\n", []),
        (b"+a[0]\n", [(b"+", b"a[0]")]),
        (b"-    return\n", [(b"-", b"    return")]),
        (b"+# x = 1\n", []),
        (b"+++ b/x.py\n", []),
    ],
)
def test_changed_code_rows(data: bytes, found: list[tuple[bytes, bytes]]) -> None:
    assert _CHANGEDCODE_RE.findall(data) == found
    assert _PLAIN_CHANGEDCODE_RE.findall(data) == found


def test_numbers_kept_reads_the_marked_lines() -> None:
    assert numbers_kept([b"@@ -1 +1 @@\n-x = 1\n+x = 2\n"]) is False
    assert numbers_kept([b"@@ -1 +1 @@\n-x = 1\n+y = 1\n"]) is True
    assert numbers_kept([b"@@ -1 +1 @@\n-x == 1\n+x == 2\n"]) is True  # no code's mark


def _forget() -> None:
    for kept in _read_lines.values():
        kept.clear()


@given(st.lists(_LINE_BYTES, max_size=10), st.sampled_from(["python", "js", "ts"]))
def test_side_is_the_plain_reading(lines: list[bytes], language: Language) -> None:
    expected = _plain_side(language, lines)
    _forget()
    assert tuple(_side(language, iter(lines))) == expected  # each line read anew (any iterable)
    assert tuple(_side(language, lines)) == expected  # each line kept from the first time


def test_side_keeps_short_lines_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_code_tokens, "_LINES_KEPT", 2)
    _forget()
    long = b"x = " + b"1" * _LINE_KEPT_BYTES
    assert _side("python", [long])[0] == 3
    assert long not in _read_lines[True]
    _side("python", [b"a = 1", b"b = 2", b"c = 3"])
    assert len(_read_lines[True]) <= 2  # full: forgotten, then kept anew
    kept = ["c", "=", "3"]
    assert _side("python", [b"c = 3", b"import os"]) == (5, [*kept, "import", "os"], kept, kept)


@given(st.lists(_LINE_BYTES, max_size=6).map(b"\n".join))
def test_section_pieces_is_count_pieces(section: bytes) -> None:
    assert section_pieces(section) == count_pieces(section)
    assert section_pieces(section) == count_pieces(section)  # counted once, then kept


_LINT_LINES = st.lists(
    st.one_of(
        _LINE_TEXT.map(lambda text: text.encode()),
        st.sampled_from([b"import os", b"from a import (", b"    b,", b")", b"x = 'a' # c"]),
    ),
    max_size=8,
)


def _plain_lint_side(lines: list[bytes]) -> tuple[list[str], list[str], str]:
    """`_lint_side` as it was first written: each line read in turn, none kept."""
    raw: list[str] = []
    ends: list[bool] = []
    kept: list[str] = []
    importing = False
    for line in lines:
        if not line.strip() or line.lstrip().startswith(b"#"):
            continue
        text = line.decode("utf-8", "replace")
        if "#" in text:
            text = _LINT_COMMENT_TAIL_RE.sub("", text)
        text = text.strip()
        if importing or text.startswith(("import ", "from ")):
            opened = text.count("(") > text.count(")") or (importing and ")" not in text)
            importing = opened or text.endswith("\\")
            continue
        quoted = '"' in text or "'" in text
        pattern = _LINT_TOKEN_RE if quoted else _UNQUOTED_TOKEN_RE
        tokens = pattern.findall(text)
        if tokens:
            raw += tokens
            ends += [False] * (len(tokens) - 1)
            ends.append(True)
        kept.append(text)
    normal = _normalised([*raw, ""], [*ends, True])
    return raw, normal, "\n".join(kept)


@given(_LINT_LINES)
def test_lint_side_is_the_plain_reading(lines: list[bytes]) -> None:
    expected = _plain_lint_side(lines)
    _lint_lines.clear()
    assert _lint_side(lines) == expected  # each line read anew
    assert _lint_side(lines) == expected  # each line kept from the first time
