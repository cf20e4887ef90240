"""Python mutants: one rule per family, the skip rules, and properties over generated programs."""

from __future__ import annotations

import ast
import io
import tokenize

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfbench.quality.mutants import Mutant
from selfbench.quality.mutate_python import python_mutants, python_statements

_Expected = set[tuple[str, str, str]]


def _observed(text: str, lines: set[int]) -> _Expected:
    return {(m.operator, m.description, m.apply(text)) for m in python_mutants("m.py", text, lines)}


_LONG = "configure(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota)\n"
_EQUAL = (
    'type("AlwaysEqual", (), {"__eq__": lambda *_: True, "__ne__": lambda *_: False,'
    ' "__hash__": lambda _: 0})()'
)
"""The always-equal object, as a mutant returns it."""
_NAMELESS_EQUAL = "().__class__.__class__" + _EQUAL.removeprefix("type")
"""The same when the file binds the name `type`."""


def _always_equal(text: str) -> tuple[str, str, str]:
    return ("always-equal", "return value → an always-equal object", text)


RULES = [
    # comparison
    ("if a < b: pass\n", {1}, {("comparison", "< → <=", "if a <= b: pass\n")}),
    ("if a <= b: pass\n", {1}, {("comparison", "<= → <", "if a < b: pass\n")}),
    ("if a > b: pass\n", {1}, {("comparison", "> → >=", "if a >= b: pass\n")}),
    ("if a >= b: pass\n", {1}, {("comparison", ">= → >", "if a > b: pass\n")}),
    ("if a == b: pass\n", {1}, {("comparison", "== → !=", "if a != b: pass\n")}),
    ("if a != b: pass\n", {1}, {("comparison", "!= → ==", "if a == b: pass\n")}),
    ("if a is b: pass\n", {1}, {("comparison", "is → is not", "if a is not b: pass\n")}),
    (
        "if (a)  is  not  (b): pass\n",
        {1},
        {("comparison", "is not → is", "if (a)  is  (b): pass\n")},
    ),
    ("if a in b: pass\n", {1}, {("comparison", "in → not in", "if a not in b: pass\n")}),
    ("if a not in b: pass\n", {1}, {("comparison", "not in → in", "if a in b: pass\n")}),
    (
        "if a < b <= c: pass\n",
        {1},
        {
            ("comparison", "< → <=", "if a <= b <= c: pass\n"),
            ("comparison", "<= → <", "if a < b < c: pass\n"),
        },
    ),
    (
        "if (a  # first\n    == b): pass\n",
        {2},
        {("comparison", "== → !=", "if (a  # first\n    != b): pass\n")},
    ),
    # arithmetic
    ("if a + b: pass\n", {1}, {("arithmetic", "+ → -", "if a - b: pass\n")}),
    ("if a - b: pass\n", {1}, {("arithmetic", "- → +", "if a + b: pass\n")}),
    (
        "if a * b: pass\n",
        {1},
        {
            ("arithmetic", "* → /", "if a / b: pass\n"),
            ("arithmetic", "* → //", "if a // b: pass\n"),
        },
    ),
    ("if a / b: pass\n", {1}, {("arithmetic", "/ → *", "if a * b: pass\n")}),
    ("if a // b: pass\n", {1}, {("arithmetic", "// → *", "if a * b: pass\n")}),
    ("if a % b: pass\n", {1}, {("arithmetic", "% → *", "if a * b: pass\n")}),
    ("if (a)+(b): pass\n", {1}, {("arithmetic", "+ → -", "if (a)-(b): pass\n")}),
    ("if a ** b | c: pass\n", {1}, set()),
    (
        "x += y\n",
        {1},
        {("arithmetic", "+= → -=", "x -= y\n"), ("delete", "deleted: x += y", "pass\n")},
    ),
    (
        "x -= y\n",
        {1},
        {("arithmetic", "-= → +=", "x += y\n"), ("delete", "deleted: x -= y", "pass\n")},
    ),
    (
        "x *= y\n",
        {1},
        {
            ("arithmetic", "*= → /=", "x /= y\n"),
            ("arithmetic", "*= → //=", "x //= y\n"),
            ("delete", "deleted: x *= y", "pass\n"),
        },
    ),
    (
        "x //= y\n",
        {1},
        {("arithmetic", "//= → *=", "x *= y\n"), ("delete", "deleted: x //= y", "pass\n")},
    ),
    (
        "x %= y\n",
        {1},
        {("arithmetic", "%= → *=", "x *= y\n"), ("delete", "deleted: x %= y", "pass\n")},
    ),
    ("x <<= y\n", {1}, {("delete", "deleted: x <<= y", "pass\n")}),
    # boolean
    ("if a and b: pass\n", {1}, {("boolean", "and → or", "if a or b: pass\n")}),
    (
        "if a or b or c: pass\n",
        {1},
        {
            ("boolean", "or → and", "if a and b or c: pass\n"),
            ("boolean", "or → and", "if a or b and c: pass\n"),
        },
    ),
    ("if not a: pass\n", {1}, {("boolean", "not → (removed)", "if a: pass\n")}),
    ("if not(a): pass\n", {1}, {("boolean", "not → (removed)", "if (a): pass\n")}),
    ("if -a: pass\n", {1}, set()),
    # constant
    ("if True: pass\n", {1}, {("constant", "True → False", "if False: pass\n")}),
    ("if False: pass\n", {1}, {("constant", "False → True", "if True: pass\n")}),
    ("if 0: pass\n", {1}, {("constant", "0 → 1", "if 1: pass\n")}),
    ("if 1: pass\n", {1}, {("constant", "1 → 0", "if 0: pass\n")}),
    ("if 41: pass\n", {1}, {("constant", "41 → 42", "if 42: pass\n")}),
    ("if 0x10: pass\n", {1}, {("constant", "0x10 → 17", "if 17: pass\n")}),
    ("if 'abc': pass\n", {1}, {("constant", "'abc' → \"\"", 'if "": pass\n')}),
    (
        'if "a" "b": pass\n',
        {1},
        {("constant", '"a" "b" → ""', 'if "": pass\n')},
    ),
    ('if "": pass\n', {1}, set()),
    ('if b"abc": pass\n', {1}, set()),
    (
        "if 1.5 or 2j or ...: pass\n",
        {1},
        {
            ("boolean", "or → and", "if 1.5 and 2j or ...: pass\n"),
            ("boolean", "or → and", "if 1.5 or 2j and ...: pass\n"),
        },
    ),
    ("if None: pass\n", {1}, set()),
    # f-strings: the string as a whole, never its inside
    (
        'if f"{a + 1} of {b < 2}": pass\n',
        {1},
        {("constant", 'f"{a + 1} of {b < 2}" → ""', 'if "": pass\n')},
    ),
    ('if f"": pass\n', {1}, set()),
    # returned values
    (
        "def f():\n    return a\n",
        {2},
        {
            ("return", "return → return None", "def f():\n    return None\n"),
            _always_equal(f"def f():\n    return {_EQUAL}\n"),
        },
    ),
    (
        "def f():\n    return a, b\n",
        {2},
        {
            ("return", "return → return None", "def f():\n    return None\n"),
            _always_equal(f"def f():\n    return {_EQUAL}\n"),
        },
    ),
    (
        "def f():\n    return True\n",
        {2},
        {
            ("constant", "True → False", "def f():\n    return False\n"),
            ("return", "return → return None", "def f():\n    return None\n"),
            _always_equal(f"def f():\n    return {_EQUAL}\n"),
        },
    ),
    (
        "def f(type):\n    return a\n",
        {2},
        {
            ("return", "return → return None", "def f(type):\n    return None\n"),
            _always_equal(f"def f(type):\n    return {_NAMELESS_EQUAL}\n"),
        },
    ),
    (
        "from x import type\ndef f():\n    return a\n",
        {3},
        {
            ("return", "return → return None", "from x import type\ndef f():\n    return None\n"),
            _always_equal(f"from x import type\ndef f():\n    return {_NAMELESS_EQUAL}\n"),
        },
    ),
    ("def f():\n    return None\n", {2}, set()),
    ("def f():\n    return\n", {2}, set()),
    ("def f():\n    yield a\n    return b\n", {3}, set()),
    ("async def f():\n    yield a\n    return b\n", {3}, set()),
    (
        "def f():\n    def g():\n        return a\n    yield g\n",
        {3},
        {
            (
                "return",
                "return → return None",
                "def f():\n    def g():\n        return None\n    yield g\n",
            ),
            _always_equal(f"def f():\n    def g():\n        return {_EQUAL}\n    yield g\n"),
        },
    ),
    (
        "def f():\n    return (yield)\n",
        {2},
        set(),
    ),
    # delete
    ("x = f(a)\n", {1}, {("delete", "deleted: x = f(a)", "pass\n")}),
    ("f(a)\n", {1}, {("delete", "deleted: f(a)", "pass\n")}),
    ("raise E\n", {1}, {("delete", "deleted: raise E", "pass\n")}),
    ("y: int = a\n", {1}, {("delete", "deleted: y: int = a", "pass\n")}),
    ("if a:\n    f(b)\n", {2}, {("delete", "deleted: f(b)", "if a:\n    pass\n")}),
    ("f(a,\n  b)  # why\nx\n", {1}, {("delete", "deleted: f(a, b)", "pass  # why\nx\n")}),
    (
        "x = a; y = b\n",
        {1},
        {
            ("delete", "deleted: x = a", "pass; y = b\n"),
            ("delete", "deleted: y = b", "x = a; pass\n"),
        },
    ),
    (_LONG, {1}, {("delete", "deleted: " + _LONG[:59] + "…", "pass\n")}),
    ("y: int\n", {1}, set()),
    ("import os\nfrom a import b\n", {1, 2}, set()),
    ("def f():\n    global x\n    nonlocal y\n    del z\n", {2, 3, 4}, set()),
    ("assert a\npass\nbreak\n", {1, 2, 3}, set()),
    ("def f(): pass\nclass C: pass\n", {1, 2}, set()),
    # skipped: docstrings and lone constants, annotations, decorators, TYPE_CHECKING
    ('"""Module."""\n', {1}, set()),
    ('def f():\n    """Doc."""\n    "Note."\n    ...\n    7\n', {2, 3, 4, 5}, set()),
    ('class C:\n    """Doc."""\n', {2}, set()),
    (
        'def f(a: Literal[3] = 1, *b: "x") -> "int": pass\n',
        {1},
        {("constant", "1 → 0", 'def f(a: Literal[3] = 0, *b: "x") -> "int": pass\n')},
    ),
    (
        "x: Literal[1] = 2\n",
        {1},
        {
            ("constant", "2 → 3", "x: Literal[1] = 3\n"),
            ("delete", "deleted: x: Literal[1] = 2", "pass\n"),
        },
    ),
    ("@cache(1 + 2)\ndef f(): pass\n", {1, 2}, set()),
    ("@dataclass(frozen=True)\nclass C: pass\n", {1, 2}, set()),
    ("if TYPE_CHECKING:\n    x = 1\n", {1, 2}, set()),
    (
        "if typing.TYPE_CHECKING:\n    x = 1\nelse:\n    x = a\n",
        {1, 2, 3, 4},
        {("delete", "deleted: x = a", "if typing.TYPE_CHECKING:\n    x = 1\nelse:\n    pass\n")},
    ),
    # only the changed lines
    ("x = a\ny = b\n", {2}, {("delete", "deleted: y = b", "x = a\npass\n")}),
    ("x = (a\n     + b)\n", {2}, {("arithmetic", "+ → -", "x = (a\n     - b)\n")}),
    ("x = a\n", set(), set()),
    ("x = a\n", {7}, set()),
    (
        'def f():\n    return"a"\n',
        {2},
        {
            ("constant", '"a" → ""', 'def f():\n    return""\n'),
            ("return", "return → return None", "def f():\n    return None\n"),
            _always_equal(f"def f():\n    return {_EQUAL}\n"),
        },
    ),
    (
        "def f():\n    return(a)\n",
        {2},
        {
            ("return", "return → return None", "def f():\n    return(None)\n"),
            _always_equal(f"def f():\n    return({_EQUAL})\n"),
        },
    ),
    # a mutant whose result would not parse is dropped: `2.real`
    ("x = 0x1.real\n", {1}, {("delete", "deleted: x = 0x1.real", "pass\n")}),
    (
        "x = a + b; \\\n  y = 0x1.real\n",
        {1, 2},
        {
            ("delete", "deleted: x = a + b", "pass; \\\n  y = 0x1.real\n"),
            ("arithmetic", "+ → -", "x = a - b; \\\n  y = 0x1.real\n"),
            ("delete", "deleted: y = 0x1.real", "x = a + b; \\\n  pass\n"),
        },
    ),
    # a file that does not parse has none
    ("def (:\n", {1}, set()),
    ("x = 1\0\n", {1}, set()),
]


@pytest.mark.parametrize(("text", "lines", "expected"), RULES)
def test_rule(text: str, lines: set[int], expected: _Expected) -> None:
    assert _observed(text, lines) == expected


NON_ASCII = [
    ('if "日本" < naïve: pass\n', "<", "<="),
    ("if café and 'ü' + x: pass\n", "+", "-"),
    ("x = ('é', 'ü')  # ça\ny = a > é\n", ">", ">="),
    ("x = 'é'\r\ny = a // b\r\n", "//", "*"),
    ("x = 'é'\ry = a % b\r", "%", "*"),
    ('x = """é\nü日""" + y\n', "+", "-"),
    ("x = ('é' +\n     'ü' < 'ß')\n", "<", "<="),
]


@pytest.mark.parametrize(("text", "token", "new"), NON_ASCII)
def test_offsets_are_characters_on_non_ascii_lines(text: str, token: str, new: str) -> None:
    mutant = next(
        m for m in python_mutants("m.py", text, {1, 2}) if m.description.startswith(token)
    )
    assert text[mutant.start : mutant.end] == token
    assert mutant.apply(text) == text.replace(f" {token} ", f" {new} ")


def test_line_is_where_the_change_starts() -> None:
    text = "x = 'é'\r\ny = (a\r\n     + b)\rz = 1\n"
    found = python_mutants("m.py", text, {1, 2, 3, 4})
    assert [(m.line, m.description) for m in found] == [
        (1, "deleted: x = 'é'"),
        (1, "'é' → \"\""),
        (2, "deleted: y = (a + b)"),
        (3, "+ → -"),
        (4, "deleted: z = 1"),
        (4, "1 → 0"),
    ]
    assert {m.path for m in found} == {"m.py"}


_FILE = '''\
"""Prices."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from decimal import Decimal


def total(prices: list[Decimal], discount: int = 0) -> Decimal:
    """The sum of `prices`, less `discount` percent."""
    if not prices or discount >= 100:
        raise ValueError(f"nothing to sum: {prices!r}")
    amount = sum(prices)
    amount -= amount * discount / 100
    return amount
'''


def test_order_is_by_start_then_operator_then_description() -> None:
    found = python_mutants("prices.py", _FILE, range(1, 16))
    assert found == python_mutants("prices.py", _FILE, range(15, 0, -1))
    assert [(m.line, m.operator, m.description) for m in found] == [
        (9, "constant", "0 → 1"),
        (11, "boolean", "not → (removed)"),
        (11, "boolean", "or → and"),
        (11, "comparison", ">= → >"),
        (11, "constant", "100 → 101"),
        (12, "delete", 'deleted: raise ValueError(f"nothing to sum: {prices!r}")'),
        (12, "constant", 'f"nothing to sum: {prices!r}" → ""'),
        (13, "delete", "deleted: amount = sum(prices)"),
        (14, "delete", "deleted: amount -= amount * discount / 100"),
        (14, "arithmetic", "-= → +="),
        (14, "arithmetic", "* → /"),
        (14, "arithmetic", "* → //"),
        (14, "arithmetic", "/ → *"),
        (14, "constant", "100 → 101"),
        (15, "always-equal", "return value → an always-equal object"),
        (15, "return", "return → return None"),
    ]
    assert found == sorted(found, key=lambda m: (m.start, m.operator, m.description))


def test_a_deep_expression_is_walked_without_recursion() -> None:
    text = "x = " + " + ".join(["a"] * 1500) + "\n"
    found = python_mutants("m.py", text, {1})
    assert len(found) == 1500
    assert found[0].operator == "delete"


# Programs from a small grammar: every operator the mutator knows and some it does not, odd
# spacing inside parentheses (line breaks, comments, continuations), non-ASCII names and strings.
_GAPS = st.sampled_from([" ", "", "  ", "\n    ", "  # note é\n", " \\\n  "])
_ATOMS = st.one_of(
    st.sampled_from(["a", "b", "naïve", "日本", "x.y", "f(a)", "None", "True", "False", "..."]),
    st.integers(0, 300).map(str),
    st.sampled_from(["0x1f", "1_000", "0o7", "1.5", "2j"]),
    st.text(alphabet="aé日 '\"\\", max_size=4).map(repr),
    st.sampled_from(['f"{a}é"', 'f"{a + 1!r:>{b}}"', 'b"x"', '"a" "b"']),
)
_OPERATORS = st.sampled_from(
    [
        "<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in",
        "+", "-", "*", "/", "//", "%", "**", "@", "|", "&", "<<",
        "and", "or",
    ]
)  # fmt: skip


def _operation(parts: tuple[str, str, str, str, str]) -> str:
    left, before, operator, after, right = parts
    if operator[0].isalpha():  # a keyword needs a space or a line break around it
        before, after = before or " ", after or " "
    return f"({left}{before}{operator}{after}{right})"


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, _GAPS, _OPERATORS, _GAPS, inner).map(_operation),
        inner.map(lambda e: f"(not {e})"),
        inner.map(lambda e: f"(-{e})"),
        st.lists(inner, min_size=1, max_size=3).map(lambda es: f"[{', '.join(es)}]"),
        st.tuples(inner, inner).map(lambda p: f"{{{p[0]}: {p[1]}}}"),
        st.tuples(inner, inner).map(lambda p: f"g({p[0]}, key={p[1]})"),
        st.tuples(inner, inner, inner).map(lambda p: f"({p[0]} if {p[1]} else {p[2]})"),
        inner.map(lambda e: f"(lambda: {e})"),
    )


_EXPRESSIONS = st.recursive(_ATOMS, _extend, max_leaves=6)
_AUGMENTED = st.sampled_from(["+=", "-=", "*=", "/=", "//=", "%=", "**=", "|="])
_SIMPLE = st.one_of(
    _EXPRESSIONS.map(lambda e: f"x = {e}"),
    st.tuples(_AUGMENTED, _EXPRESSIONS).map(lambda p: f"x.y {p[0]} {p[1]}"),
    _EXPRESSIONS.map(lambda e: f"g({e})"),
    _EXPRESSIONS.map(lambda e: f"return {e}"),
    _EXPRESSIONS.filter(lambda e: not e[0].isalnum()).map(lambda e: f"return{e}"),
    _EXPRESSIONS.map(lambda e: f"yield {e}"),
    _EXPRESSIONS.map(lambda e: f"raise E({e})"),
    _EXPRESSIONS.map(lambda e: f"y: Literal[1, 'é'] = {e}"),
    st.tuples(_EXPRESSIONS, _EXPRESSIONS).map(lambda p: f"a = {p[0]}; b = {p[1]}"),
    st.sampled_from(['"""Doc é."""', "pass", "import os", "global x", "return", "y: int"]),
).map(lambda line: [line])
_HEADERS = st.one_of(
    _EXPRESSIONS.map(lambda e: [f"if {e}:"]),
    _EXPRESSIONS.map(lambda e: [f"while {e}:"]),
    _EXPRESSIONS.map(lambda e: [f"def h(p: 'é' = {e}) -> int:"]),
    _EXPRESSIONS.map(lambda e: [f"@deco({e})", "def h():"]),
    st.sampled_from(["if TYPE_CHECKING:", "class C:", "async def h():"]).map(lambda h: [h]),
)


def _blocks(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    nested = st.tuples(_HEADERS, inner).map(lambda p: [*p[0], *(f"    {line}" for line in p[1])])
    statements = st.lists(st.one_of(nested, _SIMPLE), min_size=1, max_size=3)
    return statements.map(lambda blocks: [line for block in blocks for line in block])


_PROGRAMS = st.builds(
    lambda lines, ending: ending.join(lines) + ending,
    st.recursive(_SIMPLE, _blocks, max_leaves=8),
    st.sampled_from(["\n", "\r\n"]),
)


def _line_of(text: str, offset: int) -> int:
    return text[:offset].replace("\r\n", "\n").count("\n") + 1


_LAYOUT = {
    tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
    tokenize.ENDMARKER,
}  # fmt: skip


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """The tokens of `text` that are not layout: character offsets and text."""
    starts = [0]
    for line in io.StringIO(text):
        starts.append(starts[-1] + len(line))
    return [
        (starts[token.start[0] - 1] + token.start[1], starts[token.end[0] - 1] + token.end[1],
         token.string)
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type not in _LAYOUT
    ]  # fmt: skip


def _changes_only_its_tokens(text: str, mutant: Mutant) -> bool:
    """Whether the mutated text's tokens are the original's, with those of the replaced span
    replaced by the replacement's own: nothing merges with a neighbour."""
    before = [t for t in _tokens(text) if t[1] <= mutant.start]
    after = [t for t in _tokens(text) if t[0] >= mutant.end]
    new = [string for _, _, string in _tokens(mutant.replacement)]
    strings = [string for _, _, string in _tokens(mutant.apply(text))]
    return strings == [t[2] for t in before] + new + [t[2] for t in after]


def _statements(text: str) -> list[str]:
    return [type(node).__name__ for node in ast.walk(ast.parse(text)) if isinstance(node, ast.stmt)]


def _check(text: str, mutant: Mutant, lines: set[int]) -> None:
    mutated = mutant.apply(text)
    assert mutated != text
    # It parses, and as the same statements: one became `pass`, or none changed.
    changed = [
        (before, after)
        for before, after in zip(_statements(text), _statements(mutated), strict=True)
        if before != after
    ]
    assert [after for _, after in changed] == (["Pass"] if mutant.operator == "delete" else [])
    assert _changes_only_its_tokens(text, mutant)
    assert mutant.line == _line_of(text, mutant.start) in lines
    assert 0 <= mutant.start <= mutant.end <= len(text)
    assert mutated[: mutant.start] == text[: mutant.start]
    assert mutated[mutant.start + len(mutant.replacement) :] == text[mutant.end :]
    replaced = " ".join(text[mutant.start : mutant.end].split())
    if mutant.operator in {"comparison", "arithmetic"} or mutant.description in {
        "and → or",
        "or → and",
    }:
        assert f"{replaced} → {mutant.replacement}" == mutant.description
    elif mutant.operator == "boolean":
        assert replaced == "not"
    elif mutant.operator == "delete":
        assert isinstance(ast.parse(text[mutant.start : mutant.end]).body[0], ast.stmt)
    else:
        assert isinstance(ast.parse(f"({text[mutant.start : mutant.end]})", mode="eval"), ast.AST)


@settings(max_examples=150, deadline=None)
@given(_PROGRAMS, st.data())
def test_every_mutant_parses_differs_and_stays_on_a_changed_line(
    text: str, data: st.DataObject
) -> None:
    ast.parse(text)
    every = python_mutants("m.py", text, range(1, text.count("\n") + 2))
    lines = data.draw(st.sets(st.integers(1, text.count("\n") + 1)))
    found = python_mutants("m.py", text, lines)
    assert found == [mutant for mutant in every if mutant.line in lines]
    assert found == sorted(found, key=lambda m: (m.start, m.operator, m.description))
    for mutant in every:
        _check(text, mutant, set(range(1, text.count("\n") + 2)))


# --- statements statement ablation removes ------------------------------------------------------

_Removed = list[tuple[int, str, str]]
"""(line, description, the text with the statement removed)"""

STATEMENTS: list[tuple[str, set[int], _Removed]] = [
    # simple statements that reach a changed line
    ("x = a\ny = b\n", {2}, [(2, "y = b", "x = a\npass\n")]),
    ("f(a,\n  b)\n", {2}, [(1, "f(a,", "pass\n")]),
    ("x = a; y = b\n", {1}, [(1, "x = a", "pass; y = b\n"), (1, "y = b", "x = a; pass\n")]),
    ("def f():\n    return a\n", {2}, [(2, "return a", "def f():\n    pass\n")]),
    (
        "assert a\ndel b\nraise E\n",
        {1, 2, 3},
        [
            (1, "assert a", "pass\ndel b\nraise E\n"),
            (2, "del b", "assert a\npass\nraise E\n"),
            (3, "raise E", "assert a\ndel b\npass\n"),
        ],
    ),
    # a compound statement only when all its lines changed; then its inner ones too
    ("if a:\n    x = 1\n", {2}, [(2, "x = 1", "if a:\n    pass\n")]),
    (
        "if a:\n    x = 1\n",
        {1, 2},
        [
            (1, "if a:", "pass\n"),
            (2, "x = 1", "if a:\n    pass\n"),
        ],
    ),
    (
        "for i in a:\n    f(i)\nelse:\n    g()\n",
        {1, 2, 3},
        [(2, "f(i)", "for i in a:\n    pass\nelse:\n    g()\n")],
    ),
    (
        "@cache\ndef f():\n    return 1\n",
        {1, 2, 3},
        [
            (2, "def f():", "pass\n"),
            (3, "return 1", "@cache\ndef f():\n    pass\n"),
        ],
    ),
    ("@cache\ndef f():\n    return 1\n", {2, 3}, [(3, "return 1", "@cache\ndef f():\n    pass\n")]),
    (
        "class C:\n    x = 1\n",
        {1, 2},
        [(1, "class C:", "pass\n"), (2, "x = 1", "class C:\n    pass\n")],
    ),
    # an `elif` is no statement alone
    (
        "if a:\n    x\nelif b:\n    y = 1\n",
        {3, 4},
        [(4, "y = 1", "if a:\n    x\nelif b:\n    pass\n")],
    ),
    # never removed
    ('"""Doc."""\nimport os\nfrom a import b\npass\n', {1, 2, 3, 4}, []),
    ("def f():\n    global x\n    nonlocal y\n    z: int\n", {2, 3, 4}, []),
    ("if TYPE_CHECKING:\n    x = 1\n", {1, 2}, []),
    ("__all__ = ['f']\n__all__ += ['g']\n", {1, 2}, []),
    ("x = a\n", set(), []),
    ("def (:\n", {1}, []),
    # the first line, shortened
    (_LONG, {1}, [(1, _LONG[:59] + "…", "pass\n")]),
]


@pytest.mark.parametrize(("text", "lines", "removed"), STATEMENTS)
def test_statements_ablation_removes(text: str, lines: set[int], removed: _Removed) -> None:
    found = python_statements("m.py", text, lines)
    assert [(m.line, m.description, m.apply(text)) for m in found] == removed
    assert {(m.operator, m.replacement) for m in found} <= {("statement", "pass")}


def test_a_removed_statement_leaves_the_text_its_deletion_mutant_does() -> None:
    removals = {m.apply(_FILE) for m in python_statements("prices.py", _FILE, range(1, 16))}
    deletions = {
        m.apply(_FILE) for m in python_mutants("prices.py", _FILE, range(1, 16))
        if m.operator == "delete"
    }  # fmt: skip
    assert deletions
    assert deletions <= removals
