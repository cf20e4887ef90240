"""Chores by what the code says: one rule table, each row a change mined from a real history.

Each row commits `before`, then a change (`after`, with a test file, as a candidate must have)
whose implementation meets the easy gate, and says what mining makes of it: a code-chore
reason, or KEPT (a candidate) — the counter-examples that change behaviour beside the chore.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mine_history import Files, History, lines
from selfbench.mine import mine_repository
from selfbench.mine._code_tokens import apart
from selfbench.mine.chores import (
    COMMENTS_ONLY,
    I18N_ONLY,
    PACKAGING_ONLY,
    RENAME_ONLY,
    TYPING_ONLY,
)
from selfbench.mine.code_chores import (
    BESIDES,
    CodeFile,
    ImplementationFile,
    Screen,
    code_files,
    file_hunks,
    judge,
    screen,
)
from selfbench.mine.python_chores import ModulePair, strip_docstrings, strip_typing
from selfbench.patches import Hunk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEPT = None
N = 24  # functions a module holds: enough changed lines for the easy gate


def module(shape: Callable[[int], str], header: str = "", count: int = N) -> str:
    return header + "".join(shape(index) for index in range(count))


def plain(i: int) -> str:
    return f'def f_{i}(value, limit=None):\n    """Return it."""\n    return value + {i}\n\n'


def typed(i: int) -> str:
    return (
        f"def f_{i}(value: int, limit: t.Optional[int] = None) -> int:\n"
        f'    """Return it."""\n    return t.cast(int, value + {i})\n\n'
    )


def documented(i: int) -> str:
    return (
        f"def f_{i}(value, limit=None):\n"
        f'    """Return the value plus {i}, whatever the limit says."""\n'
        f"    return value + {i}  # no check of the limit\n\n"
    )


def message(i: int) -> str:
    return f'def check_{i}(value):\n    if value:\n        raise ValueError("bad value {i}")\n\n'


def translated(i: int) -> str:
    return f'def check_{i}(value):\n    if value:\n        raise ValueError(_("bad value {i}"))\n\n'


def interpolated(i: int) -> str:
    return (
        f"def check_{i}(value):\n    if value:\n"
        f'        raise ValueError(f"bad value {{value!r}} {i}")\n\n'
    )


def filled(call: str) -> Callable[[int], str]:
    return lambda i: (
        f"def check_{i}(value):\n    if value:\n"
        f'        raise ValueError({call}("bad value {{v!r}} {i}").format(v=value))\n\n'
    )


def reworded(i: int) -> str:
    return (
        f'def check_{i}(value):\n    if value:\n        raise ValueError(_("Bad value {i}."))\n\n'
    )


def calls(name: str) -> Callable[[int], str]:
    return lambda i: f"def use_{i}(item):\n    return {name}(item)\n\n"


def defined(name: str) -> str:
    return module(calls(name)) + f"def {name}(item):\n    return item\n"


def importing(name: str) -> str:
    return f"from .core import {name}\n\nVALUE = {name}(1)\n"


def swapped(arguments: str) -> Callable[[int], str]:
    return lambda i: f"def g_{i}(a, b):\n    return h({arguments})\n\n"


TWO = "def a(x):\n    return x\n\ndef b(x):\n    return -x\n\n"
TYPING_HEADER = (
    "from __future__ import annotations\n\nimport typing as t\n\n"
    "if t.TYPE_CHECKING:\n    from .other import Thing\n\n"
)
DATACLASS = "import dataclasses\n\n@dataclasses.dataclass\nclass Point:\n    x: int\n"
FIELDS = "".join(f"    y_{i}: int\n" for i in range(N))
SETUP_CFG = "[metadata]\nname = app\n" + "".join(f"key_{i} = {i}\n" for i in range(24))
TESTS = "tests/test_app.py"
GO = "package app\n\n" + "".join(
    f"// Do{i} does {i}.\nfunc Do{i}() int {{ return {i} }}\n" for i in range(24)
)
GO_DOCUMENTED = GO.replace(" does ", " returns ")
JS = "".join(
    f"// add{i} adds {i}.\nexport function add{i}(x) {{ return x + {i}; }}\n" for i in range(24)
)

C_HEADER = "".join(f"#define N{i} 10\nint f{i}(int x) {{ return x + N{i}; }}\n" for i in range(N))
RUST = "".join(f'#[serde(rename = "a{i}")]\npub struct S{i} {{ pub x: u8 }}\n' for i in range(N))
TS = "".join(
    f"// check{i} checks.\nexport function check{i}(x: boolean): boolean {{\n"
    "  if (x) { return true; }\n  return false;\n}\n"
    for i in range(N)
)
PYDANTIC = "import pydantic\n\n@pydantic.dataclasses.dataclass\nclass Point:\n"
MODEL = "from .db import Base\n\nclass User(Base):\n"
CLICK = "import click\n\n"
FORM_FEED = 'A = "x\x0cy"\nB = f(1)\n\n'


def bare(i: int) -> str:
    return f"def f_{i}(value):\n    return value + COUNT\n\n"


def local(i: int) -> str:
    return f"def f_{i}(value):\n    COUNT: int\n    return value + COUNT\n\n"


def dispatched(kind: str) -> Callable[[int], str]:
    return lambda i: f"@f.register\ndef _(value: {kind}, n_{i}: {kind}):\n    return {i}\n\n"


def routed(kind: str) -> Callable[[int], str]:
    return lambda i: f'@app.get("/{i}")\ndef read_{i}(q: {kind}):\n    return q\n\n'


def command(text: str) -> Callable[[int], str]:
    return lambda i: f'@click.command()\ndef cli_{i}():\n    """{text} {i}."""\n\n'


def doctested(result: str) -> Callable[[int], str]:
    return lambda i: (
        f'def f_{i}(value):\n    """\n    >>> f_{i}(1)\n    {result}\n    """\n    return value\n\n'
    )


def indexed(key: str) -> Callable[[int], str]:
    return lambda i: f'def get_{i}(c):\n    return c["{key}"]\n\n'


ROWS: list[tuple[str, Files, Files, str | None]] = [
    # typing: annotations, a TYPE_CHECKING block, casts, `from __future__ import annotations`
    ("typing", {"src/app.py": module(plain)}, {"src/app.py": module(typed, TYPING_HEADER)},
     TYPING_ONLY),
    ("typing-and-behaviour", {"src/app.py": module(plain)},
     {"src/app.py": module(typed, TYPING_HEADER).replace(" + ", " - ")}, KEPT),
    ("typing-besides-a-line", {"src/app.py": module(plain, count=120)},
     {"src/app.py": module(typed, TYPING_HEADER, count=120).replace("value + 3)", "value - 3)")},
     BESIDES.format(reason=TYPING_ONLY, lines=2)),
    ("stubs", {"src/app.py": module(plain)},
     {"src/app.pyi": "".join(f"def f_{i}(value: int) -> int: ...\n" for i in range(N)),
      "src/py.typed": ""}, TYPING_ONLY),
    ("type-checker-configuration", {"mypy.ini": "[mypy]\n"},
     {"mypy.ini": "[mypy]\n" + "".join(f"[mypy-pkg{i}.*]\nstrict = True\n" for i in range(12))},
     TYPING_ONLY),
    ("typescript-declarations", {"src/types.d.ts": "export {};\n"},
     {"src/types.d.ts": "".join(f"export type T{i} = number;\n" for i in range(N))}, TYPING_ONLY),
    ("class-annotations", {"src/point.py": "class Point:\n    x = 0\n"},
     {"src/point.py": "class Point:\n    x: int = 0\n" + FIELDS}, TYPING_ONLY),
    ("dataclass-fields", {"src/point.py": DATACLASS}, {"src/point.py": DATACLASS + FIELDS}, KEPT),
    # packaging and build configuration
    ("packaging", {"setup.py": "from setuptools import setup\nsetup()\n", "setup.cfg": "[x]\n"},
     {"setup.py": None, "setup.cfg": SETUP_CFG, "MANIFEST.in": "include LICENSE\n",
      "pyproject.toml": "[build-system]\nrequires = ['flit_core']\n"}, PACKAGING_ONLY),
    ("devcontainer", {".devcontainer/on-create.sh": "uv sync\n", "setup.cfg": "[x]\n"},
     {".devcontainer/on-create.sh": "uv sync --all-extras\n", "setup.cfg": SETUP_CFG},
     PACKAGING_ONLY),
    ("devcontainer-python", {".devcontainer/on_create.py": "x = 1\n", "setup.cfg": "[x]\n"},
     {".devcontainer/on_create.py": "x = 2\n", "setup.cfg": SETUP_CFG}, PACKAGING_ONLY),
    ("packaging-and-code", {"setup.cfg": "[x]\n", "src/app.py": "x = 1\n"},
     {"setup.cfg": SETUP_CFG, "src/app.py": "x = 2\n"}, KEPT),
    # translation wrapping
    ("i18n", {"src/errors.py": module(message)},
     {"src/errors.py": module(translated, "from gettext import gettext as _\n\n")}, I18N_ONLY),
    ("i18n-f-strings-filled-by-name", {"src/errors.py": module(interpolated)},
     {"src/errors.py": module(filled("_"), "from gettext import gettext as _\n\n")}, I18N_ONLY),
    ("format-calls-without-translation", {"src/errors.py": module(interpolated)},
     {"src/errors.py": module(filled(""))}, KEPT),
    ("i18n-reworded", {"src/errors.py": module(message)},
     {"src/errors.py": module(reworded, "from gettext import gettext as _\n\n")}, KEPT),
    # docstrings and comments
    ("docstrings-and-comments", {"src/app.py": module(plain)}, {"src/app.py": module(documented)},
     COMMENTS_ONLY),
    ("docstrings-and-code", {"src/app.py": module(plain)},
     {"src/app.py": module(documented).replace("value + 5  #", "value * 5  #")}, KEPT),
    ("go-comments-unread", {"app/app.go": GO}, {"app/app.go": GO_DOCUMENTED}, KEPT),
    ("javascript-comments", {"src/add.js": JS},
     {"src/add.js": JS.replace(" adds ", " returns x + ")}, COMMENTS_ONLY),
    # identifier renames
    ("rename", {"src/core.py": defined("fetch_one"), "src/more.py": importing("fetch_one")},
     {"src/core.py": defined("load_one"), "src/more.py": importing("load_one")}, RENAME_ONLY),
    ("rename-that-keeps-the-old-name", {"src/core.py": defined("fetch_one")},
     {"src/core.py": defined("load_one") + "fetch_one = load_one\n"}, KEPT),
    ("another-existing-name", {"src/core.py": TWO + module(calls("a"))},
     {"src/core.py": TWO + module(calls("b"))}, KEPT),
    ("swapped-names", {"src/core.py": module(swapped("a, b"))},
     {"src/core.py": module(swapped("b, a"))}, KEPT),
    # what looks like a chore but changes behaviour: each stays a candidate
    ("c-define", {"src/n.c": C_HEADER}, {"src/n.c": C_HEADER.replace(" 10", " 20")}, KEPT),
    ("rust-attribute", {"src/s.rs": RUST}, {"src/s.rs": RUST.replace('"a', '"b')}, KEPT),
    ("constraints-folder-code", {"src/app/constraints/solver.py": module(plain)},
     {"src/app/constraints/solver.py": module(plain).replace(" + ", " - ")}, KEPT),
    ("setup-module-in-a-package", {"src/app/setup.py": module(plain)},
     {"src/app/setup.py": module(plain).replace(" + ", " - ")}, KEPT),
    ("form-feed-before-a-change", {"src/app.py": module(plain, FORM_FEED)},
     {"src/app.py": module(documented, FORM_FEED.replace("f(1)", "g(1)"))}, KEPT),
    ("builtin-swapped", {"src/core.py": module(swapped("min(a, b)"))},
     {"src/core.py": module(swapped("max(a, b)"))}, KEPT),
    ("string-key-renamed", {"src/core.py": module(indexed("timeout"))},
     {"src/core.py": module(indexed("deadline"))}, KEPT),
    ("imported-name-renamed", {"src/core.py": "from os import getcwd\n" + module(calls("getcwd"))},
     {"src/core.py": "from os import getcwdb\n" + module(calls("getcwdb"))}, KEPT),
    ("pydantic-dataclass", {"src/point.py": PYDANTIC + FIELDS},
     {"src/point.py": PYDANTIC + FIELDS.replace("int", "str")}, KEPT),
    ("sqlalchemy-model", {"src/user.py": MODEL + FIELDS.replace("int", "Mapped[int]")},
     {"src/user.py": MODEL + FIELDS.replace("int", "Mapped[str]")}, KEPT),
    ("singledispatch", {"src/f.py": module(dispatched("int"))},
     {"src/f.py": module(dispatched("str"))}, KEPT),
    ("route-parameters", {"src/api.py": module(routed("int"))},
     {"src/api.py": module(routed("str"))}, KEPT),
    ("local-bare-annotation", {"src/app.py": module(bare)}, {"src/app.py": module(local)}, KEPT),
    ("typescript-negation", {"src/check.ts": TS}, {"src/check.ts": TS.replace("(x)", "(!x)")},
     KEPT),
    ("typescript-comments", {"src/check.ts": TS},
     {"src/check.ts": TS.replace(" checks.", " says whether.")}, COMMENTS_ONLY),
    ("click-help", {"src/cli.py": module(command("Run"), CLICK)},
     {"src/cli.py": module(command("Start"), CLICK)}, KEPT),
    ("module-doc-read", {"src/cli.py": '"""Run it."""\nDESCRIPTION = __doc__\n' + module(plain)},
     {"src/cli.py": '"""Start it."""\nDESCRIPTION = __doc__\n' + module(documented)}, KEPT),
    ("doctest", {"src/app.py": module(doctested("1"))}, {"src/app.py": module(doctested("2"))},
     KEPT),
    ("typing-besides-four-lines", {"src/app.py": module(plain, count=200)},
     {"src/app.py": module(typed, TYPING_HEADER, count=200)
      .replace("value + 3)", "value - 3)").replace("value + 4)", "value - 4)")}, KEPT),
    ("packaging-and-reindented-code", {"setup.cfg": "[x]\n", "src/app.py": "if x:\n  y = 1\n"},
     {"setup.cfg": SETUP_CFG, "src/app.py": "if x:\n    y = 1\n"}, KEPT),
    ("module-added", {"src/app.py": module(plain)},
     {"src/app.py": module(documented), "src/new.py": '"""A module."""\n'}, KEPT),
    ("module-deleted", {"src/app.py": module(plain), "src/old.py": '"""A module."""\n'},
     {"src/app.py": module(documented), "src/old.py": None}, KEPT),
    ("module-moved", {"src/old.py": module(plain)},
     {"src/old.py": None, "src/new.py": module(documented)}, KEPT),
    ("unparsable", {"src/app.py": module(plain) + "def broken(:\n"},
     {"src/app.py": module(documented) + "def broken(:\n"}, KEPT),
]  # fmt: skip


@needs_git
@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [pytest.param(before, after, reason, id=name) for name, before, after, reason in ROWS],
)
def test_code_chores(tmp_path: Path, before: Files, after: Files, reason: str | None) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {**before, TESTS: lines(3, "t")})
    change = h.commit("Rework the module (#1)", {**after, TESTS: lines(9, "t")})
    result = mine_repository(h.path)
    excluded = [e.reason for e in result.excluded if e.commit == change]
    assert excluded == ([] if reason is None else [reason])
    assert [c.completed_commit for c in result.candidates] == ([change] if reason is None else [])


@needs_git
def test_a_chore_taken_out_moves_no_other_score(tmp_path: Path) -> None:
    """Recency runs over the changes before the code chores go: the oldest one is a chore."""
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {"src/app.py": module(plain), TESTS: lines(3, "t")})
    h.commit("Document (#1)", {"src/app.py": module(documented), TESTS: lines(6, "t")})
    h.commit("Work (#2)", {"src/work.py": lines(30, "w"), TESTS: lines(9, "t")})
    h.commit("More work (#3)", {"src/more.py": lines(30, "m"), TESTS: lines(12, "t")})
    scores = {c.id: c.score.recency for c in mine_repository(h.path).candidates}
    assert scores == {"pr-2": 15, "pr-3": 30}


def test_typing_strips_only_the_typing_modules_names() -> None:
    """A function of the module's own named `cast` is code, not a cast."""
    own = "def cast(kind, value):\n    return kind(value)\n\nx = cast(int, '1')\n"
    pair = ModulePair(own, own.replace("cast(int, '1')", "'1'"))
    assert pair.changed_lines((strip_docstrings, strip_typing)) == 2


def test_a_binary_or_unknown_file_is_work() -> None:
    hunk = Hunk((b"x = 1",), (b"x = 1  # one",))
    found = screen(
        [CodeFile("src/app.py", "src/app.py", present=True, binary=False, hunks=(hunk,))]
    )
    assert isinstance(found, Screen)
    assert (found.rules, found.renames, found.closest) == (
        ("comments", "typing", "i18n"),
        (),
        "comments",
    )
    assert (
        screen([CodeFile("web/app.css", "web/app.css", present=True, binary=False, hunks=())])
        is None
    )
    assert (
        screen([CodeFile("src/app.py", "src/app.py", present=True, binary=True, hunks=())]) is None
    )


_ORDERED = {
    "src/a.py": (module(plain), module(documented)),
    "src/b.py": (module(plain, count=120), module(typed, TYPING_HEADER, count=120)),
    "src/c.py": (module(plain), module(plain).replace("value + 3\n", "value - 3\n", 1)),
    "src/d.py": (module(plain), module(typed).replace(" + ", " - ")),
}
"""Python files changed in their comments, their typing, a line of code, much code."""


@pytest.mark.parametrize(
    ("paths", "reason"),
    [
        (("src/a.py",), COMMENTS_ONLY),
        (("src/a.py", "src/b.py"), TYPING_ONLY),
        (("src/a.py", "src/b.py", "src/c.py"), BESIDES.format(reason=TYPING_ONLY, lines=2)),
        (("src/a.py", "src/b.py", "src/c.py", "src/d.py"), KEPT),
    ],
)
def test_judging_does_not_depend_on_the_files_order(
    paths: tuple[str, ...], reason: str | None
) -> None:
    """The files are judged smallest first (the cheapest to fail first): the same answer."""
    hunks = (Hunk((), (b"x = 1",) * 100),)  # the changed lines the leftover is weighed against
    files = [CodeFile(path, path, present=True, binary=False, hunks=hunks) for path in paths]
    texts = {path: _ORDERED[path] for path in paths}
    for order in itertools.permutations(files):
        found = Screen(("comments", "typing"), order, (), "typing")
        assert judge(found, texts) == reason


@given(st.binary(max_size=400), st.text(max_size=200), st.text(max_size=200))
def test_the_code_rules_raise_nothing_on_any_input(patch: bytes, old: str, new: str) -> None:
    files = code_files(
        [ImplementationFile("src/app.py", None, binary=False)], {"src/app.py": patch}
    )
    screen(files)
    ModulePair(old, new).changed_lines((strip_docstrings, strip_typing))


_SECTION_LINES = (
    b"diff --git a/x.py b/x.py", b"--- a/x.py", b"+++ b/x.py", b"@@ -1 +1 @@", b"@@ -1,2 +0,0 @@",
    b"-a: int = 1", b"+a = 1", b"+", b"-", b" x", b"\\ No newline", b"new file mode 100644",
    b"deleted file mode 100644", b"diff --git a/x b/y", b"@@ -0,0 +1 @@", b"\r",
)  # fmt: skip
_SECTION = st.lists(st.sampled_from(_SECTION_LINES), max_size=12).map(b"\n".join)


@given(st.none() | _SECTION | st.binary(max_size=200))
def test_a_sections_hunks_alone_are_those_of_its_code_file(section: bytes | None) -> None:
    """`file_hunks` (the typing share's) parses a section only when it has hunks, and gives
    what `code_files` gives."""
    patch = {} if section is None else {"x.py": section}
    [whole] = code_files([ImplementationFile("x.py", None, binary=False)], patch)
    assert file_hunks(section) == whole.hunks


@given(
    st.lists(st.sampled_from("ab:-()"), max_size=30), st.lists(st.sampled_from("abc:"), max_size=30)
)
def test_tokens_apart_are_the_counters_difference(removed: list[str], added: list[str]) -> None:
    """The count at C speed is the size of the two sides' symmetric difference."""
    left, right = Counter(removed), Counter(added)
    assert apart(left, right) == ((left - right) + (right - left)).total()


def test_only_a_small_section_s_parse_is_kept() -> None:
    """The code chores and the shares read a file section once; a large one is read again
    each time instead of held for the life of the process."""
    from selfbench.mine import code_chores  # noqa: PLC0415 - its private cache

    def section(count: int) -> bytes:
        added = b"".join(b"+value_%d = %d\n" % (i, i) for i in range(count))
        header = b"diff --git a/m.py b/m.py\nnew file mode 100644\n--- /dev/null\n+++ b/m.py\n"
        return header + b"@@ -0,0 +1,%d @@\n" % count + added

    code_chores._kept_section.cache_clear()  # noqa: SLF001
    assert code_chores.file_hunks(section(20_000))
    assert code_chores._kept_section.cache_info().currsize == 0  # noqa: SLF001
    assert code_chores.file_hunks(section(20))
    assert code_chores._kept_section.cache_info().currsize == 1  # noqa: SLF001
