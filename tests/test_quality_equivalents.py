"""Equivalents of the gold: each rewriting row by row, what is never renamed, properties over
generated programs, the patches at the base, and the coupled verdict in the real sandbox."""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projects import git
from selfbench.artifacts.quality_record import Equivalents, FailedEquivalent
from selfbench.quality.api import QualityOptions, assess_task
from selfbench.quality.equivalents import (
    Equivalent,
    equivalent_patch,
    file_equivalents,
    task_equivalents,
)
from selfbench.quality.variants import gold_texts
from test_quality import ADD, FILLER, SANDBOX, SUB, Sample, Samples, _write, authored_samples

# --- each rewriting, row by row -------------------------------------------------------------------

_FUNCTION = "def f(a):\n    total = a + 1  # one more\n    return total\n"

REWRITTEN = [
    # Python: comments dropped (code and docstrings kept, a shebang and an encoding line too)
    ("m.py", _FUNCTION, {2}, "comments", "def f(a):\n    total = a + 1\n    return total\n"),
    (
        "m.py",
        "x = 1  # one\n# alone\ny = '# kept'\n",
        {1},
        "comments",
        "x = 1\ny = '# kept'\n",
    ),
    (
        "m.py",
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# gone\nx = 1\n",
        {4},
        "comments",
        "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n",
    ),
    (
        "m.py",
        'def f():\n    """Doc # kept."""\n    return 1  # gone\n',
        {3},
        "comments",
        'def f():\n    """Doc # kept."""\n    return 1\n',
    ),
    (
        "m.py",
        "x = [  # c\n    1,\n]\r\ny = 2\r\n",
        {1},
        "comments",
        "x = [\n    1,\n]\r\ny = 2\r\n",
    ),
    ("m.py", "x = 1\n", {1}, "comments", None),  # nothing to drop: the gold's own text
    # Python: reformatted by `ast.unparse`
    ("m.py", "x = ( 1 +\n  2 )  # c\ny='a'\n", {1}, "reformatted", "x = 1 + 2\ny = 'a'\n"),
    ("m.py", "x = 1\n", {1}, "reformatted", None),
    # Python: locals renamed in the functions that hold a changed line
    (
        "m.py",
        _FUNCTION,
        {2},
        "renamed",
        "def f(a):\n    total_local = a + 1  # one more\n    return total_local\n",
    ),
    (
        "m.py",
        "def f():\n    t = 1\n    return f'{t}!{t!r:>{t}}'\n",
        {2},
        "renamed",
        "def f():\n    t_local = 1\n    return f'{t_local}!{t_local!r:>{t_local}}'\n",
    ),
    (
        "m.py",
        "t_local = 0\n\n\ndef f():\n    t = 1\n    return t\n",
        {5},
        "renamed",
        "t_local = 0\n\n\ndef f():\n    t_local2 = 1\n    return t_local2\n",
    ),
    (
        "m.py",
        "def f():\n    def g():\n        u = 1\n        return u\n    return g\n",
        {3},
        "renamed",
        "def f():\n    def g():\n        u_local = 1\n        return u_local\n    return g\n",
    ),
    ("m.py", _FUNCTION, {1}, "renamed", None),  # the signature is no body line
    # JavaScript and TypeScript: comments dropped
    (
        "a.js",
        "const a = 1; // one\n// alone\nconst b = `// kept ${a /* in */}`;\n",
        {1},
        "comments",
        "const a = 1;\nconst b = `// kept ${a }`;\n",
    ),
    (
        "a.js",
        "/**\n * Doc.\n */\nexport function f() {}\n",
        {4},
        "comments",
        "export function f() {}\n",
    ),
    (  # a comment that spans lines is a line break: `return` still returns nothing
        "a.js",
        "function f() {\n  return /*\n  */ 1;\n}\n",
        {2},
        "comments",
        "function f() {\n  return\n 1;\n}\n",
    ),
    ("a.js", "x = a/**/+b;\n", {1}, "comments", "x = a +b;\n"),
    ("a.jsx", "const e = <div>{/* c */}</div>;\n", {1}, "comments", "const e = <div>{ }</div>;\n"),
    (
        "a.ts",
        '/// <reference types="node" />\n// @ts-expect-error\nlet x: number = "a";\n',
        {3},
        "comments",
        None,  # directives are kept
    ),
    # JavaScript and TypeScript: a blank line before each top-level statement on its own line
    (
        "a.js",
        "const a = 1;\nconst b = `x\n  y`; const c = 2;\n",
        {1},
        "reformatted",
        "const a = 1;\n\nconst b = `x\n  y`; const c = 2;\n",
    ),
    (
        "a.ts",
        "const a = 1; // one\n// @ts-expect-error\nlet x: number = 'a';\n",
        {1},
        "reformatted",
        "const a = 1; // one\n\n// @ts-expect-error\nlet x: number = 'a';\n",
    ),
    ("a.js", "const a = 1;\n", {1}, "reformatted", None),
    ("a.js", "function f() {\n  let t = 1;\n  return t;\n}\n", {2}, "renamed", None),
]


@pytest.mark.parametrize(("path", "text", "changed", "variant", "expected"), REWRITTEN)
def test_each_rewriting(
    path: str, text: str, changed: set[int], variant: str, expected: str | None
) -> None:
    found: dict[str, str] = {e.variant: e.text for e in file_equivalents(path, text, changed)}
    assert found.get(variant) == expected


# --- what is never renamed ------------------------------------------------------------------------

NOT_RENAMED = [
    ("a parameter", "def f(t):\n    t = t + 1\n    return t\n"),
    ("global", "def f():\n    global t\n    t = 1\n    return t\n"),
    ("read by a lambda", "def f():\n    t = 1\n    return lambda: t\n"),
    ("read by a comprehension", "def f(xs):\n    t = 1\n    return [t for _ in xs]\n"),
    ("read by a class", "def f():\n    t = 1\n    class C:\n        u = t\n    return C\n"),
    ("a nested default", "def f():\n    t = 1\n    def g(u=t):\n        return u\n    return g\n"),
    ("deleted", "def f():\n    t = 1\n    del t\n"),
    ("except as", "def f():\n    try:\n        t = 1\n    except E as t:\n        pass\n"),
    ("imported", "def f():\n    import t\n    t = 1\n    return t\n"),
    (
        "a match capture",
        "def f(x):\n    t = 1\n    match x:\n        case [t]:\n            pass\n",
    ),
    ("private", "def f():\n    __t = 1\n    return __t\n"),
    ("locals()", "def f():\n    t = 1\n    return locals()\n"),
    ("vars()", "def f():\n    t = 1\n    return vars()\n"),
    ("eval", "def f():\n    t = 1\n    return eval('t')\n"),
    ("exec", "def f():\n    t = 1\n    exec('print(t)')\n"),
    ("frame locals", "def f():\n    t = 1\n    return sys._getframe().f_locals\n"),
    ("only read", "def f():\n    return t\n"),
    ("module level", "t = 1\nu = t\n"),
]


@pytest.mark.parametrize(("case", "text"), NOT_RENAMED, ids=[case for case, _ in NOT_RENAMED])
def test_what_is_never_renamed(case: str, text: str) -> None:
    lines = set(range(1, text.count("\n") + 1))
    assert "renamed" not in {e.variant for e in file_equivalents("m.py", text, lines)}, case


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("m.py", "x = 1  # note\n\ufffd = 2\n"),  # bytes not UTF-8, replaced when read
        ("m.py", "def f(:\n    pass  # not Python\n"),
        ("a.js", "const = ;  // not JavaScript\n"),
        ("notes.txt", "a  # b\n"),
        ("main.go", "package main // c\n"),
    ],
)
def test_no_equivalents_of_what_cannot_be_read_safely(path: str, text: str) -> None:
    assert file_equivalents(path, text, {1}) == []


# --- properties over generated Python -------------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "total", "naïve", "t_local", "x"])
_ATOMS = st.one_of(
    _NAMES,
    st.integers(0, 99).map(str),
    st.sampled_from(['"# no comment"', "'''doc # é'''", 'f"{a}#{b!r}"', "None"]),
)


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "<", "and", "*"]), inner).map(
            lambda p: f"({p[0]} {p[1]} {p[2]})"
        ),
        st.tuples(inner, _NAMES).map(lambda p: f"[{p[0]} for {p[1]} in b]"),
        st.tuples(_NAMES, inner).map(lambda p: f"(lambda {p[0]}: {p[1]})"),
        inner.map(lambda e: f"g({e}, key=b)"),
    )


_EXPRESSIONS = st.recursive(_ATOMS, _extend, max_leaves=5)
_COMMENTS = st.sampled_from(["", "", "  # note", "  # é # twice", "\t# tab"])
_SIMPLE = st.one_of(
    st.tuples(_NAMES, _EXPRESSIONS, _COMMENTS).map(lambda p: f"{p[0]} = {p[1]}{p[2]}"),
    st.tuples(_NAMES, _EXPRESSIONS).map(lambda p: f"{p[0]} += {p[1]}"),
    _EXPRESSIONS.map(lambda e: f"g({e})"),
    _NAMES.map(lambda n: f"global {n}"),
    _NAMES.map(lambda n: f"del {n}"),
    st.sampled_from(["# a comment line", "pass", '"""Doc # é."""', "import os"]),
).map(lambda line: [line])
_HEADERS = st.one_of(
    _EXPRESSIONS.map(lambda e: f"if {e}:"),
    st.tuples(_NAMES, _EXPRESSIONS).map(lambda p: f"for {p[0]} in {p[1]}:  # loop"),
    _NAMES.map(lambda n: f"def h({n}, *args):"),
    st.just("try:"),
)


def _blocks(inner: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    nested = st.tuples(_HEADERS, inner).map(
        lambda p: (
            [p[0], *(f"    {line}" for line in p[1])]
            + (["except E as t:", "    pass"] if p[0] == "try:" else [])
        )
    )
    return st.lists(st.one_of(nested, _SIMPLE), min_size=1, max_size=3).map(
        lambda blocks: [line for block in blocks for line in block]
    )


_PROGRAMS = st.recursive(_SIMPLE, _blocks, max_leaves=8).map(
    lambda lines: "def f(a):\n" + "".join(f"    {line}\n" for line in lines) + "    return a\n"
)


def _without_names(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = "_"
    return ast.dump(tree, include_attributes=False)


@settings(max_examples=200, deadline=None)
@given(_PROGRAMS, st.data())
def test_every_python_equivalent_compiles_to_the_same_tree(text: str, data: st.DataObject) -> None:
    try:
        compile(text, "m.py", "exec", dont_inherit=True)
    except SyntaxError:  # `global` after a use, `del` of a parameter's name …
        return
    lines = data.draw(st.sets(st.integers(1, text.count("\n"))))
    gold = ast.parse(text)
    for equivalent in file_equivalents("m.py", text, lines):
        assert equivalent.text != text
        compile(equivalent.text, "m.py", "exec", dont_inherit=True)
        tree = ast.parse(equivalent.text)
        if equivalent.variant == "renamed":
            assert _without_names(equivalent.text) == _without_names(text)
            assert ast.dump(tree) != ast.dump(gold)
        else:
            assert ast.dump(tree) == ast.dump(gold)
        if equivalent.variant == "comments":
            assert "# note" not in equivalent.text
            assert "# no comment" in equivalent.text or "# no comment" not in text


# --- the patches at the base ----------------------------------------------------------------------


def test_the_equivalents_of_a_gold_are_patches_at_its_base(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    _write(repo, {"calc.py": "X = 1\n", "tox.ini": "[tox]\n", "web/a.js": "f();\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    _write(
        repo,
        {
            "calc.py": "X = 1\n\n\ndef f(a):\n    t = a  # the input\n    return t\n",
            "tox.ini": "[tox]\n# ci\n",
            "web/a.js": "f(); // call\ng();\n",
            "tests/test_calc.py": "# a test\n",
        },
    )
    git(repo, "add", "-A")
    gold = git(repo, "diff", "--cached", "--binary", base).encode()
    git(repo, "reset", "-q", "--hard", base)
    found = task_equivalents(repo, base, gold)
    assert [(e.path, e.variant) for e in found] == [
        ("calc.py", "comments"),
        ("calc.py", "reformatted"),
        ("calc.py", "renamed"),
        ("web/a.js", "comments"),
        ("web/a.js", "reformatted"),
    ]
    both = [found[0], found[3]]
    patch = equivalent_patch(repo, base, gold, both)
    texts = gold_texts(repo, base, patch)
    assert texts["calc.py"] == found[0].text
    assert texts["web/a.js"] == "f();\ng();\n"
    assert texts["tox.ini"] == "[tox]\n# ci\n"  # not implementation: as the gold leaves it
    assert gold_texts(repo, base, equivalent_patch(repo, base, gold, [])) == gold_texts(
        repo, base, gold
    )
    assert git(repo, "status", "--porcelain") == ""  # nothing written to the repository
    assert isinstance(found[0], Equivalent)


# --- the coupled verdict, in the real sandbox -----------------------------------------------------

_AREA = (
    "\n\ndef area(width, height):\n"
    "    if width < 0 or height < 0:\n"
    '        raise ValueError("negative")  # no side is negative\n'
    "    product = width * height\n"
    "    return product + 1\n"
)
_GOLD_TEXT = ADD + _AREA + FILLER + SUB
_AREA_TESTS = (
    "import pytest\n\nfrom calc import area\n\n\ndef test_area():\n"
    "    assert area(3, 4) == 13\n    assert area(2, 5) == 11\n"
    "    assert area(0, 5) == 1\n    assert area(5, 0) == 1\n"
    '    with pytest.raises(ValueError, match="negative"):\n'
    "        area(-1, 2)\n"
    '    with pytest.raises(ValueError, match="negative"):\n'
    "        area(2, -1)\n"
)
_PROMPT = (
    "Add `area(width, height)` to `calc`: the product of the two sides plus one. A negative "
    'side raises ValueError with the message "negative".'
)
_READ = "from pathlib import Path\n\nimport calc\n\n_SOURCE = Path(calc.__file__).read_text()\n"
EQUIVALENT_SAMPLES = (
    Sample("ordinary", {"calc/__init__.py": _GOLD_TEXT}, {"tests/test_area.py": _AREA_TESTS}),
    Sample(
        "pinned-digest",
        {"calc/__init__.py": _GOLD_TEXT},
        {
            "tests/test_area.py": _AREA_TESTS,
            "tests/test_source.py": (
                f"import hashlib\n{_READ}\n\ndef test_source():\n"
                f"    digest = hashlib.sha256(_SOURCE.encode()).hexdigest()\n"
                f'    assert digest == "{hashlib.sha256(_GOLD_TEXT.encode()).hexdigest()}"\n'
            ),
        },
    ),
    Sample(
        "pinned-comment",
        {"calc/__init__.py": _GOLD_TEXT},
        {
            "tests/test_area.py": _AREA_TESTS,
            "tests/test_source.py": (
                f'{_READ}\n\ndef test_source():\n    assert "# no side is negative" in _SOURCE\n'
            ),
        },
    ),
)


@pytest.fixture(scope="module")
def equivalent_samples() -> Iterator[Samples]:
    prompted = [_prompted(sample) for sample in EQUIVALENT_SAMPLES]
    yield from authored_samples(prompted, "selfbench-equivalents-test-")


def _prompted(sample: Sample) -> Sample:
    return Sample(sample.task_id, sample.gold, sample.tests, sample.difficulty, _PROMPT)


_PATH = "calc/__init__.py"


@SANDBOX
@pytest.mark.parametrize(
    ("task_id", "equivalents", "verdict", "reasons"),
    [
        ("ordinary", Equivalents(run=3), "ship", ()),
        (
            "pinned-digest",
            Equivalents(
                run=3,
                failed=(
                    FailedEquivalent(path=_PATH, variant="comments"),
                    FailedEquivalent(path=_PATH, variant="reformatted"),
                    FailedEquivalent(path=_PATH, variant="renamed"),
                ),
            ),
            "reject",
            (
                (
                    "coupled: the tests fail the gold with its comments dropped"
                    " (calc/__init__.py), reformatted (calc/__init__.py), with its locals renamed"
                    " (calc/__init__.py)"
                ),
            ),
        ),
        (
            "pinned-comment",
            Equivalents(
                run=3,
                failed=(
                    FailedEquivalent(path=_PATH, variant="comments"),
                    FailedEquivalent(path=_PATH, variant="reformatted"),
                ),
            ),
            "reject",
            (
                (
                    "coupled: the tests fail the gold with its comments dropped"
                    " (calc/__init__.py), reformatted (calc/__init__.py)"
                ),
            ),
        ),
    ],
)
def test_tests_that_pin_the_gold_s_text_are_coupled(
    equivalent_samples: Samples,
    task_id: str,
    equivalents: Equivalents,
    verdict: str,
    reasons: tuple[str, ...],
) -> None:
    task = equivalent_samples.tasks[task_id]
    record = assess_task(task, equivalent_samples.repo, QualityOptions(jobs=2))
    assert record.equivalents == equivalents
    assert (record.verdict, record.reasons) == (verdict, reasons)
    written = json.loads((task / "quality.json").read_text(encoding="utf-8"))
    assert written["equivalents"]["run"] == 3
