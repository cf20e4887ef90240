"""Mutants of JavaScript and TypeScript's changed lines (SPEC §13, Quality: test strength)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter import Node

from selfbench.quality._js_parser import parse
from selfbench.quality.mutants import Mutant
from selfbench.quality.mutate_js import js_mutants, js_statements

OPERATORS = {"comparison", "arithmetic", "boolean", "constant", "return", "always-equal", "delete"}
EQUAL = "{ asymmetricMatch: () => true }"
"""The always-equal object (jest's and vitest's `toEqual` take it as equal to anything)."""


def always_equal(snippet: str) -> tuple[str, str, str]:
    return ("always-equal", "return value → an always-equal object", snippet)


COMPARISONS = {"<", "<=", ">", ">=", "===", "!==", "==", "!="}

Expected = set[tuple[str, str, str]]
"""(operator, description, the snippet with the mutant applied)"""


def outcomes(path: str, text: str, lines: set[int]) -> Expected:
    return {(m.operator, m.description, m.apply(text)) for m in js_mutants(path, text, lines)}


# (case, file, snippet, changed lines, expected mutants)
RULES: list[tuple[str, str, str, set[int], Expected]] = [
    # comparison: each operator and its neighbour
    ("lt", "a.js", "const x = a < b;", {1}, {("comparison", "< → <=", "const x = a <= b;")}),
    ("le", "a.js", "const x = a <= b;", {1}, {("comparison", "<= → <", "const x = a < b;")}),
    ("gt", "a.js", "const x = a > b;", {1}, {("comparison", "> → >=", "const x = a >= b;")}),
    ("ge", "a.js", "const x = a >= b;", {1}, {("comparison", ">= → >", "const x = a > b;")}),
    ("seq", "a.js", "const x = a === b;", {1}, {("comparison", "=== → !==", "const x = a !== b;")}),
    ("sne", "a.js", "const x = a !== b;", {1}, {("comparison", "!== → ===", "const x = a === b;")}),
    ("eq", "a.js", "const x = a == b;", {1}, {("comparison", "== → !=", "const x = a != b;")}),
    ("ne", "a.js", "const x = a != b;", {1}, {("comparison", "!= → ==", "const x = a == b;")}),
    # arithmetic
    ("plus", "a.js", "const x = a + b;", {1}, {("arithmetic", "+ → -", "const x = a - b;")}),
    ("minus", "a.js", "const x = a - b;", {1}, {("arithmetic", "- → +", "const x = a + b;")}),
    ("times", "a.js", "const x = a * b;", {1}, {("arithmetic", "* → /", "const x = a / b;")}),
    ("divide", "a.js", "const x = a / b;", {1}, {("arithmetic", "/ → *", "const x = a * b;")}),
    ("modulo", "a.js", "const x = a % b;", {1}, {("arithmetic", "% → *", "const x = a * b;")}),
    (
        "add-assign",
        "a.js",
        "count += n;",
        {1},
        {("arithmetic", "+= → -=", "count -= n;"), ("delete", "deleted: count += n", ";")},
    ),
    (
        "subtract-assign",
        "a.js",
        "count -= n;",
        {1},
        {("arithmetic", "-= → +=", "count += n;"), ("delete", "deleted: count -= n", ";")},
    ),
    # boolean
    ("and", "a.js", "const x = a && b;", {1}, {("boolean", "&& → ||", "const x = a || b;")}),
    ("or", "a.js", "const x = a || b;", {1}, {("boolean", "|| → &&", "const x = a && b;")}),
    ("nullish", "a.js", "const x = a ?? b;", {1}, {("boolean", "?? → ||", "const x = a || b;")}),
    ("not", "a.js", "const x = !ok(a);", {1}, {("boolean", "!ok(a) → ok(a)", "const x = ok(a);")}),
    (
        "not glued to a keyword",
        "a.js",
        "function f() { return!a; }",
        {1},
        {
            ("boolean", "!a → a", "function f() { return a; }"),
            ("return", "return → return undefined", "function f() { return undefined; }"),
            always_equal(f"function f() {{ return{EQUAL}; }}"),
        },
    ),
    # constant
    ("true", "a.js", "const x = true;", {1}, {("constant", "true → false", "const x = false;")}),
    ("false", "a.js", "const x = false;", {1}, {("constant", "false → true", "const x = true;")}),
    ("zero", "a.js", "const x = 0;", {1}, {("constant", "0 → 1", "const x = 1;")}),
    ("one", "a.js", "const x = 1;", {1}, {("constant", "1 → 0", "const x = 0;")}),
    ("integer", "a.js", "const x = 41;", {1}, {("constant", "41 → 42", "const x = 42;")}),
    ("decimal", "a.js", "const x = 1.5;", {1}, {("constant", "1.5 → 2.5", "const x = 2.5;")}),
    ("hex", "a.js", "const x = 0x1f;", {1}, {("constant", "0x1f → 32", "const x = 32;")}),
    (
        "separators",
        "a.js",
        "const x = 1_000;",
        {1},
        {("constant", "1_000 → 1001", "const x = 1001;")},
    ),
    ("bigint", "a.js", "const x = 10n;", {1}, {("constant", "10n → 11n", "const x = 11n;")}),
    ("beyond precision", "a.js", "const x = 1e21;", {1}, set()),
    ("string", "a.js", "const x = 'abc';", {1}, {("constant", "'abc' → ''", "const x = '';")}),
    ("empty string", "a.js", 'const x = "";', {1}, set()),
    # return: the value returned becomes undefined, or an object equal to anything
    (
        "return",
        "a.js",
        "function f() { return a; }",
        {1},
        {
            ("return", "return → return undefined", "function f() { return undefined; }"),
            always_equal(f"function f() {{ return {EQUAL}; }}"),
        },
    ),
    (
        "return in typescript",
        "a.ts",
        "function f(): number { return(a); }",
        {1},
        {
            ("return", "return → return undefined", "function f(): number { return undefined; }"),
            always_equal(f"function f(): number {{ return({EQUAL}) as any; }}"),
        },
    ),
    (
        "return null",
        "a.jsx",
        "function f() { return null; }",
        {1},
        {
            ("return", "return → return undefined", "function f() { return undefined; }"),
            always_equal(f"function f() {{ return {EQUAL}; }}"),
        },
    ),
    ("return nothing", "a.js", "function f() { return; }", {1}, set()),
    ("return undefined", "a.js", "function f() { return undefined; }", {1}, set()),
    # delete
    ("call", "a.js", "save(item);", {1}, {("delete", "deleted: save(item)", ";")}),
    ("assignment", "a.js", "this.n = m;", {1}, {("delete", "deleted: this.n = m", ";")}),
    (
        "throw",
        "a.js",
        "if (bad) throw new Error(`no`);",
        {1},
        {("delete", "deleted: throw new Error(`no`)", "if (bad) ;")},
    ),
    (
        "long statement",
        "a.js",
        "register(alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota);",
        {1},
        {("delete", "deleted: register(alpha, beta, gamma, delta, epsilon, zeta, eta, the…", ";")},
    ),
    (
        "statement over lines",
        "a.js",
        "save(\n  item\n)",
        {1},
        {("delete", "deleted: save( item )", ";")},
    ),
    (
        "loop header kept",
        "a.js",
        "for (i = 0; i < n; i++) step(i);",
        {1},
        {
            ("constant", "0 → 1", "for (i = 1; i < n; i++) step(i);"),
            ("comparison", "< → <=", "for (i = 0; i <= n; i++) step(i);"),
            ("delete", "deleted: step(i)", "for (i = 0; i < n; i++) ;"),
        },
    ),
    # never deleted: declarations; never mutated: imports, exports' names, module names
    ("declarations", "a.js", "let x = f(); function g() {} class K {}", {1}, set()),
    ("import", "a.js", 'import a, { b } from "m";', {1}, set()),
    ("export list", "a.js", 'export { a as b } from "m"; export * from "n";', {1}, set()),
    ("require", "a.js", 'const m = require("m"); const n = import("n");', {1}, set()),
    ("directive", "a.js", '"use strict";', {1}, set()),
    (
        "object key",
        "a.js",
        'const o = {"k": 1};',
        {1},
        {("constant", "1 → 0", 'const o = {"k": 0};')},
    ),
    # string concatenation
    (
        "concatenation",
        "a.js",
        'const s = "a" + b;',
        {1},
        {("constant", '"a" → ""', 'const s = "" + b;')},
    ),
    ("template concatenation", "a.js", "const s = a + `t`;", {1}, set()),
    (
        "string append",
        "a.js",
        's += "x";',
        {1},
        {("constant", '"x" → ""', 's += "";'), ("delete", 'deleted: s += "x"', ";")},
    ),
    (
        "template substitution",
        "a.js",
        "const s = `n=${n - 1}`;",
        {1},
        {
            ("arithmetic", "- → +", "const s = `n=${n + 1}`;"),
            ("constant", "1 → 0", "const s = `n=${n - 0}`;"),
        },
    ),
    # JavaScript refuses `??` beside `||`; a token that would run into its neighbour
    ("nullish chain", "a.js", "const x = a ?? b ?? c;", {1}, set()),
    ("glued tokens", "a.js", "const x = a+-b;", {1}, set()),
    # TypeScript: types are never mutated
    (
        "type annotation",
        "a.ts",
        'let x: 1 | "a" | true = 2;',
        {1},
        {("constant", "2 → 3", 'let x: 1 | "a" | true = 3;')},
    ),
    ("interface", "a.ts", "interface I { a: 1; b: true; c(x: 0): 2 }", {1}, set()),
    ("type alias", "a.ts", 'type T = 1 | "a" | false;', {1}, set()),
    ("enum", "a.ts", "enum E { A = 1, B = 2 }", {1}, set()),
    ("declare", "a.ts", "declare const d: 7;", {1}, set()),
    ("as", "a.ts", "const x = 1 as 1;", {1}, {("constant", "1 → 0", "const x = 0 as 1;")}),
    (
        "generic call",
        "a.ts",
        "const x = f<1>(2);",
        {1},
        {("constant", "2 → 3", "const x = f<1>(3);")},
    ),
    (
        "signature",
        "a.ts",
        "function f(n: 1 = 2): n is 3 { return n; }",
        {1},
        {
            ("constant", "2 → 3", "function f(n: 1 = 3): n is 3 { return n; }"),
            (
                "return",
                "return → return undefined",
                "function f(n: 1 = 2): n is 3 { return undefined; }",
            ),
            always_equal(f"function f(n: 1 = 2): n is 3 {{ return ({EQUAL}) as any; }}"),
        },
    ),
    # JSX: the text is not code; attributes and expressions are
    (
        "jsx text",
        "a.tsx",
        'const e = <p title="t">true 1 "s" &amp; {n + 1}</p>;',
        {1},
        {
            ("constant", '"t" → ""', 'const e = <p title="">true 1 "s" &amp; {n + 1}</p>;'),
            ("arithmetic", "+ → -", 'const e = <p title="t">true 1 "s" &amp; {n - 1}</p>;'),
            ("constant", "1 → 0", 'const e = <p title="t">true 1 "s" &amp; {n + 0}</p>;'),
        },
    ),
    (
        "jsx in .js",
        "a.jsx",
        "const e = <b>{a > 0}</b>;",
        {1},
        {
            ("comparison", "> → >=", "const e = <b>{a >= 0}</b>;"),
            ("constant", "0 → 1", "const e = <b>{a > 1}</b>;"),
        },
    ),
    # only the changed lines
    (
        "changed lines only",
        "a.js",
        "const x = a < b;\nconst y = c > d;\nconst z = e === f;",
        {2},
        {("comparison", "> → >=", "const x = a < b;\nconst y = c >= d;\nconst z = e === f;")},
    ),
    (
        "windows line ends and a byte order mark",
        "a.js",
        "\ufeffconst x = 1;\r\nconst y = a < b;\r\n",
        {2},
        {("comparison", "< → <=", "\ufeffconst x = 1;\r\nconst y = a <= b;\r\n")},
    ),
    ("no changed lines", "a.js", "const x = a < b;", set(), set()),
    # a file with syntax errors gets no mutants
    ("syntax error", "a.js", "const x = a < ;\nconst y = 1;", {1, 2}, set()),
]


@pytest.mark.parametrize(
    ("path", "snippet", "lines", "expected"),
    [pytest.param(*rule[1:], id=rule[0]) for rule in RULES],
)
def test_rule(path: str, snippet: str, lines: set[int], expected: Expected) -> None:
    assert outcomes(path, snippet, lines) == expected


@pytest.mark.parametrize(
    "prefix",
    ['const s = "é"; ', 'const s = "😀日本"; ', "const é = 1 /* ü */; "],
)
def test_offsets_count_characters_not_bytes(prefix: str) -> None:
    text = f"{prefix}if (a < b) f();"
    mutants = js_mutants("a.js", text, {1})
    comparison = next(m for m in mutants if m.operator == "comparison")
    assert text[comparison.start : comparison.end] == "<"
    assert comparison.apply(text) == f"{prefix}if (a <= b) f();"
    deletion = next(m for m in mutants if m.description == "deleted: f()")
    assert deletion.apply(text) == f"{prefix}if (a < b) ;"


def test_mutant_fields() -> None:
    text = "const a = 1;\nif (a < b) {\n  go();\n}\n"
    mutants = js_mutants("src/x.js", text, {2, 3})
    assert mutants == [
        Mutant("src/x.js", 2, "comparison", "< → <=", 19, 20, "<="),
        Mutant("src/x.js", 3, "delete", "deleted: go()", 28, 33, ";"),
    ]


def test_order_is_by_offset_then_operator_then_description() -> None:
    text = "function f() { return a < 1 ? true : 'x'; }"
    mutants = js_mutants("a.js", text, [1])
    keys = [(m.start, m.operator, m.description) for m in mutants]
    assert keys == sorted(keys)
    assert [m.operator for m in mutants if m.start == text.index("a < 1")] == [
        "always-equal",
        "return",
    ]


def test_deterministic() -> None:
    text = "\n".join(f"if (a{i} <= {i}) {{ n += {i}; g(!x, 'é'); }}" for i in range(40))
    first = js_mutants("a.js", text, range(1, 41))
    assert first == js_mutants("a.js", text, list(reversed(range(1, 41))))
    assert first == js_mutants("a.js", text, set(range(1, 41)))
    assert len(first) == 40 * 8


# Small JavaScript programs, built from a grammar; all names are declared parameters.
NAMES = st.sampled_from(["a", "b", "count", "é", "$x", "_y"])
NUMBERS = st.one_of(st.integers(0, 120).map(str), st.sampled_from(["1.5", "0x1f", "1e3", ".5"]))
STRINGS = st.text(st.sampled_from([*"ab é😀'\"\\"]), max_size=4).map(json.dumps)
ATOMS = st.one_of(
    NAMES,
    NUMBERS,
    STRINGS,
    st.sampled_from(["true", "false", "null", "undefined", "`plain`"]),
)
BINARY = st.sampled_from(
    ["<", "<=", ">", ">=", "===", "!==", "==", "!=", "+", "-", "*", "/", "%", "&&", "||", "??"]
)


def _compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, BINARY, inner, st.sampled_from([" ", ""])).map(
            lambda t: f"({t[0]}{t[3]}{t[1]}{t[3]}{t[2]})"
        ),
        inner.map(lambda e: f"!{e}"),
        inner.map(lambda e: f"-{e}"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        st.tuples(NAMES, st.lists(inner, max_size=2)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        inner.map(lambda e: f"`t${{{e}}}é`"),
    )


EXPRESSIONS = st.recursive(ATOMS, _compound, max_leaves=6)


def _simple_statements(typed: bool) -> st.SearchStrategy[str]:
    annotation = (
        st.sampled_from([": number", ': 1 | "s" | true', ": Array<2>"]) if typed else st.just("")
    )
    return st.one_of(
        st.tuples(NAMES, st.sampled_from(["=", "+=", "-="]), EXPRESSIONS).map(
            lambda t: f"{t[0]} {t[1]} {t[2]};"
        ),
        st.tuples(st.integers(0, 9), annotation, EXPRESSIONS).map(
            lambda t: f"let v{t[0]}{t[1]} = {t[2]};"
        ),
        EXPRESSIONS.map(lambda e: f"f({e});"),
        STRINGS.map(lambda s: f"throw new Error({s});"),
        st.one_of(EXPRESSIONS, st.just("")).map(lambda e: f"return {e};".replace(" ;", ";")),
    )


def _statements(typed: bool) -> st.SearchStrategy[list[str]]:
    def blocks(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
        return st.one_of(
            st.tuples(EXPRESSIONS, inner, inner).map(
                lambda t: [f"if ({t[0]}) {{", *t[1], "} else {", *t[2], "}"]
            ),
            st.tuples(EXPRESSIONS, inner).map(lambda t: [f"while ({t[0]}) {{", *t[1], "}"]),
            st.tuples(EXPRESSIONS, inner).map(
                lambda t: [f"for (let i = 0; i < {t[0]}; i++) {{", *t[1], "}"]
            ),
        )

    one = _simple_statements(typed).map(lambda s: [s])
    return st.lists(st.recursive(one, blocks, max_leaves=4), max_size=5).map(
        lambda parts: [line for part in parts for line in part]
    )


def _program(typed: bool) -> st.SearchStrategy[str]:
    signature = (
        "(a: any, b: any, count: any, é: any, $x: any, _y: any): any"
        if typed
        else ("(a, b, count, é, $x, _y)")
    )
    return _statements(typed).map(
        lambda body: "\n".join([f"function main{signature} {{", *body, "}", ""])
    )


def _nodes(node: Node) -> list[Node]:
    found = [node]
    for child in node.children:
        found.extend(_nodes(child))
    return found


def _check_mutants(path: str, text: str, lines: set[int]) -> list[Mutant]:
    mutants = js_mutants(path, text, lines)
    for mutant in mutants:
        mutated = mutant.apply(text)
        assert mutated != text
        assert not parse(mutated.encode(), path=path).root_node.has_error, mutant
        assert mutant.line in lines
        assert mutant.line == text.count("\n", 0, mutant.start) + 1
        assert 0 <= mutant.start <= mutant.end <= len(text)
        assert mutated[: mutant.start] == text[: mutant.start]
        assert mutated[mutant.start + len(mutant.replacement) :] == text[mutant.end :]
        assert mutant.operator in OPERATORS
        if mutant.operator in {"comparison", "arithmetic"}:
            before, after = mutant.description.split(" → ")
            assert (text[mutant.start : mutant.end], mutant.replacement) == (before, after)
    keys = [(m.start, m.operator, m.description) for m in mutants]
    assert keys == sorted(keys)
    assert js_mutants(path, text, lines) == mutants
    return mutants


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_javascript(data: st.DataObject) -> None:
    text = data.draw(_program(typed=False))
    tree = parse(text.encode(), path="p.js")
    lines = data.draw(st.sets(st.integers(1, text.count("\n") + 1)))
    mutants = _check_mutants("p.js", text, lines)
    if tree.root_node.has_error:  # only the grammar's separators can make one: `a--b`
        assert mutants == []
        return
    # every comparison on a changed line has its mutant (none is lost on the way)
    source = text.encode()
    comparisons = {
        len(source[: node.start_byte].decode())
        for node in _nodes(tree.root_node)
        if node.type in COMPARISONS
        and node.parent is not None
        and node.parent.type == "binary_expression"
        and node.start_point.row + 1 in lines
    }
    assert comparisons == {m.start for m in mutants if m.operator == "comparison"}


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_property_typescript_types_untouched(data: st.DataObject) -> None:
    text = data.draw(_program(typed=True))
    lines = set(range(1, text.count("\n") + 2))
    mutants = _check_mutants("p.ts", text, lines)
    source = text.encode()
    types = [
        (len(source[: node.start_byte].decode()), len(source[: node.end_byte].decode()))
        for node in _nodes(parse(source, path="p.ts").root_node)
        if node.type == "type_annotation"
    ]
    for mutant in mutants:
        assert not any(start <= mutant.start < end for start, end in types), mutant


# --- statements statement ablation removes ------------------------------------------------------

_FUNCTION = "function f(x) {\n  const y = x.trim();\n  if (y) { g(); }\n  return y;\n}\n"

# (case, file, snippet, changed lines, [(line, description, the snippet with it removed)])
STATEMENTS: list[tuple[str, str, str, set[int], list[tuple[int, str, str]]]] = [
    ("call", "a.js", "go();\nsave(item);", {2}, [(2, "save(item);", "go();\n;")]),
    ("declaration", "a.ts", "const y: number = f();", {1}, [(1, "const y: number = f();", ";")]),
    (
        "a body of one statement",
        "a.js",
        "if (a) throw e;",
        {1},
        [(1, "if (a) throw e;", ";"), (1, "throw e;", "if (a) ;")],
    ),
    (
        "inner only",
        "a.js",
        _FUNCTION,
        {2, 3, 4},
        [
            (2, "const y = x.trim();", _FUNCTION.replace("const y = x.trim();", ";")),
            (3, "if (y) { g(); }", _FUNCTION.replace("if (y) { g(); }", ";")),
            (3, "g();", _FUNCTION.replace("g();", ";")),
            (4, "return y;", _FUNCTION.replace("return y;", ";")),
        ],
    ),
    (
        "a compound statement whose lines all changed",
        "a.js",
        "export function f() {\n  go();\n}\n",
        {1, 2, 3},
        [(1, "export function f() {", ";\n"), (2, "go();", "export function f() {\n  ;\n}\n")],
    ),
    (
        "never removed",
        "a.ts",
        (
            "'use strict';\nimport a from 'a';\nexport { a };\ninterface I { x: 1 }\n"
            "export type T = 1;\nexport interface J {}\n"
        ),
        {1, 2, 3, 4, 5, 6},
        [],
    ),
    ("a file with errors", "a.js", "if (", {1}, []),
]


@pytest.mark.parametrize(
    ("path", "snippet", "lines", "removed"),
    [case[1:] for case in STATEMENTS],
    ids=[case[0] for case in STATEMENTS],
)
def test_statements_ablation_removes(
    path: str, snippet: str, lines: set[int], removed: list[tuple[int, str, str]]
) -> None:
    found = js_statements(path, snippet, lines)
    assert [(m.line, m.description, m.apply(snippet)) for m in found] == removed
    assert {(m.operator, m.replacement) for m in found} <= {("statement", ";")}
    deletions = {
        m.apply(snippet) for m in js_mutants(path, snippet, lines) if m.operator == "delete"
    }
    assert deletions <= {m.apply(snippet) for m in found}  # the same removal, the same text
