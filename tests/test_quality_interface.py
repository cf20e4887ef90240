"""The interface a task's tests use: the public names the gold adds or changes, with signatures;
and what an instruction leaves out of it."""

from __future__ import annotations

import ast
import json
import keyword
import re
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import new_files_patch
from selfbench._git import git
from selfbench.artifacts.quality_record import InterfaceItem
from selfbench.quality.interface import (
    INTERFACE_HEADING,
    changed_file_texts,
    check_instruction,
    interface_docs,
    interface_items,
    interface_section,
    spelled_names,
)


def _new(path: str, text: str) -> bytes:
    """A test patch that adds the file `path` holding `text`."""
    return new_files_patch({path: text})


class Change(NamedTuple):
    gold_patch: bytes
    test_patch: bytes
    base_files: dict[str, str]
    gold_files: dict[str, str]


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--allow-empty", "--message", message)
    return git(repo, "rev-parse", "HEAD").decode().strip()


def _repo(parent: Path) -> Path:
    repo = parent / "project"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    return repo


def _change(
    parent: Path, base: dict[str, str], gold: dict[str, str | None], tests: dict[str, str]
) -> Change:
    """A real repository: `base` committed, then `gold` and `tests` on top; the two patches as
    `git diff` writes them and the changed files' texts as `changed_file_texts` reads them."""
    repo = _repo(parent)
    start = _commit(repo, dict(base), "base")
    _commit(repo, {**gold, **tests}, "change")
    gold_patch = git(repo, "diff", "--binary", start, "HEAD", "--", *gold)
    test_patch = git(repo, "diff", "--binary", start, "HEAD", "--", *tests)
    return Change(gold_patch, test_patch, *changed_file_texts(repo, start, gold_patch))


def _items(change: Change) -> list[tuple[str, str, str]]:
    found = interface_items(
        change.gold_patch, change.test_patch, change.base_files, change.gold_files
    )
    return [(item.kind, item.name, item.signature) for item in found]


# --- reading the changed files -----------------------------------------------------------------


def test_changed_file_texts_reads_both_sides_without_touching_the_repository(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    base = _commit(repo, {"a.py": "A = 1\n", "gone.py": "B = 2\n", "same.py": "C = 3\n"}, "b")
    _commit(repo, {"a.py": "A = 10\n", "gone.py": None, "new.py": "D = 4\n"}, "gold")
    patch = git(repo, "diff", "--binary", base, "HEAD")
    git(repo, "reset", "--quiet", "--hard", base)
    head, objects = git(repo, "rev-parse", "HEAD"), git(repo, "count-objects")

    before, after = changed_file_texts(repo, base, patch)

    assert before == {"a.py": "A = 1\n", "gone.py": "B = 2\n"}
    assert after == {"a.py": "A = 10\n", "new.py": "D = 4\n"}
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == b""
    assert git(repo, "count-objects") == objects  # nothing was written into it
    assert changed_file_texts(repo, base, b"") == ({}, {})


# --- Python ------------------------------------------------------------------------------------

_PY = "pkg/core.py"
_PY_TEST = "tests/test_core.py"

# (case, base source, gold source, test source, expected (kind, name, signature) items)
PYTHON_CASES = [
    (
        "added function",
        "",
        "def tokenize(text: str, sep: str = ',', table=TABLE) -> list[str]:\n    return []\n",
        "assert tokenize('a,b') == ['a', 'b']\n",
        [("function", "tokenize", "tokenize(text: str, sep: str = ',', table=...) -> list[str]")],
    ),
    (
        "changed signature",
        "def render(value):\n    return str(value)\n",
        "def render(value: int, /) -> str:\n    return str(value)\n",
        "assert render(3) == '3'\n",
        [("function", "render", "render(value: int, /) -> str")],
    ),
    (
        "added positional parameter the tests do not name",
        "def render(value):\n    return str(value)\n",
        "def render(value, width=8):\n    return str(value).rjust(width)\n",
        "assert render(3, 2) == ' 3'\n",
        [("function", "render", "render(value, width=8)")],
    ),
    (
        "keyword option",
        "def parse(text):\n    return text\n",
        "def parse(text, *, strict: bool = False, **extra):\n    return text\n",
        "assert parse('x', strict=True) == 'x'\n",
        [("option", "strict", "parse(text, *, strict: bool = False, **extra)")],
    ),
    (
        "added method",
        "class Reader:\n    def read(self, path):\n        return path\n",
        (
            "class Reader:\n    def read(self, path):\n        return path\n\n"
            "    async def read_all(self, paths: list[str]) -> list[str]:\n        return paths\n\n"
            "    aread_all = read_all\n\n"
            "    @staticmethod\n    def of(name):\n        return Reader()\n"
        ),
        "Reader.of('x')\nawait Reader().read_all([])\nawait Reader().aread_all([])\n",
        [
            ("method", "Reader.read_all", "async Reader.read_all(paths: list[str]) -> list[str]"),
            ("method", "Reader.aread_all", "async Reader.aread_all(paths: list[str]) -> list[str]"),
            ("method", "Reader.of", "Reader.of(name)"),
        ],
    ),
    (
        "added class (its constructor's signature)",
        "",
        (
            'class Writer:\n    """Write."""\n\n'
            "    def __init__(self, target, *, mode='w', encoding=ENCODING):\n"
            "        self.target = target\n"
        ),
        "Writer('out.txt')\n",
        [("class", "Writer", "Writer(target, *, mode='w', encoding=...)")],
    ),
    (
        "added dataclass and plain class",
        "",
        (
            "@dataclass(frozen=True)\nclass Point:\n    x: int\n    y: int = 0\n"
            "    origin: ClassVar[int] = 0\n\n\nclass Marker(Base, metaclass=Meta):\n    pass\n"
        ),
        "Point(1, 2)\nassert isinstance(m, Marker)\n",
        [
            ("class", "Point", "Point(x: int, y: int = 0)"),
            ("class", "Marker", "class Marker(Base, metaclass=Meta)"),
        ],
    ),
    (
        "added constant",
        "LIMIT = 3\n",
        (
            "LIMIT = 3\nMAX_DEPTH: int = 8\nTABLE = {'a': 1, 'b': 2, 'c': 3, 'd': 4, 'e': 5}\n"
            "cache = {}\nUNITS = ('mg', 'g', 'oz', 'lb', 'kg', 'st', 't')\nPAIR = [1]\n"
        ),
        (
            "assert core.MAX_DEPTH == 8 and core.LIMIT == 3 and TABLE and cache == {}\n"
            "assert UNITS and PAIR\n"
        ),
        [
            ("constant", "MAX_DEPTH", "MAX_DEPTH: int = 8"),
            ("constant", "TABLE", "TABLE = {'a': ..., ...}"),  # a long table: its first key
            ("constant", "cache", "cache = {}"),
            ("constant", "UNITS", "UNITS = ('mg', ...)"),
            ("constant", "PAIR", "PAIR = [1]"),
        ],
    ),
    (
        "added module-level table (parse #103's dt_format_to_regex)",
        "def parse(text):\n    return text\n",
        (
            "dt_format_to_regex: dict[str, str] = {'%a': '(?:Sun|Mon)', '%d': '[0-9]{1,2}'}\n"
            "first, rest = 1, ()\nparse.cache = {}\n\n\ndef parse(text):\n    return text\n"
        ),
        "assert dt_format_to_regex['%d'] and first == 1 and rest == () and parse.cache == {}\n",
        [
            (
                "constant",
                "dt_format_to_regex",
                "dt_format_to_regex: dict[str, str] = {'%a': ..., ...}",
            )
        ],
    ),
    (
        "command-line flag (argparse)",
        "import argparse\n\n\ndef build():\n    p = argparse.ArgumentParser()\n    return p\n",
        (
            "import argparse\n\n\ndef build():\n    p = argparse.ArgumentParser()\n"
            '    p.add_argument("-d", "--depth", type=int, help="How deep to go.")\n'
            '    p.add_argument("--quiet", action="store_true")\n    return p\n'
        ),
        "build().parse_args(['--depth', '2'])\n",
        [("flag", "--depth", "-d, --depth")],
    ),
    (
        "command-line flag (click)",
        "import click\n\n\n@click.command()\ndef main():\n    pass\n",
        (
            "import click\n\n\n@click.command()\n"
            '@click.option("--dry-run", is_flag=True)\ndef main(dry_run):\n    pass\n'
        ),
        "runner.invoke(main, ['--dry-run'])\n",
        [("function", "main", "main(dry_run)"), ("flag", "--dry-run", "--dry-run")],
    ),
    (
        "private names",
        "class Shown:\n    pass\n",
        (
            "def _helper(x):\n    return x\n\n\nclass _Cache:\n    def get(self):\n"
            "        return 1\n\n\nclass Shown:\n    def _hidden(self):\n        return 2\n"
        ),
        "assert _helper(1) == 1 and _Cache().get() == 1 and Shown()._hidden() == 2\n",
        [],
    ),
    (
        "unchanged names",
        "def unchanged(a, b):\n    return a\n\n\nLIMIT = 3\n",
        "def unchanged(a, b):\n    # now commented\n    return a\n\n\nLIMIT = 4\n",
        "assert unchanged(1, 2) == 1 and LIMIT == 4\n",
        [],
    ),
    (
        "a name the tests do not use",
        "",
        "def tokenize(text):\n    return text.split()\n",
        "assert 'a b'.split() == ['a', 'b']\n",
        [],
    ),
    (
        "a record class made by NamedTuple's call (python-dotenv #180's Binding)",
        "",
        (
            "from typing import NamedTuple, Optional\n\n"
            "Binding = NamedTuple('Binding', [('key', Optional[str]), ('original', str)])\n"
        ),
        "assert Binding(key='a', original='a=b').key == 'a'\n",
        [("class", "Binding", "Binding(key: Optional[str], original: str)")],
    ),
    (
        "a record class made by namedtuple's and TypedDict's calls",
        "",
        (
            "from collections import namedtuple\nfrom typing import TypedDict\n\n"
            "Point = namedtuple('Point', 'x, y')\nMovie = TypedDict('Movie', {'name': str})\n"
        ),
        "assert Point(1, 2).x == 1 and Movie(name='a')\n",
        [("class", "Point", "Point(x, y)"), ("class", "Movie", "Movie(name: str)")],
    ),
    (
        "a call whose fields are no literal is no record",
        "",
        "from typing import NamedTuple\n\nFIELDS = []\nRow = NamedTuple('Row', FIELDS)\n",
        "assert Row\n",
        [],
    ),
]


@pytest.mark.parametrize(
    ("base", "gold", "tests", "expected"),
    [case[1:] for case in PYTHON_CASES],
    ids=[case[0] for case in PYTHON_CASES],
)
def test_python_interface(
    tmp_path: Path, base: str, gold: str, tests: str, expected: list[tuple[str, str, str]]
) -> None:
    change = _change(tmp_path, {_PY: base, _PY_TEST: ""}, {_PY: gold}, {_PY_TEST: tests})

    assert _items(change) == expected
    assert all(item.path == _PY for item in interface_items(*change))


def test_a_moved_function_is_not_new(tmp_path: Path) -> None:
    source = "def slug(text: str) -> str:\n    return text\n"
    base = {"pkg/a.py": source, "pkg/b.py": "", _PY_TEST: ""}
    change = _change(
        tmp_path, base, {"pkg/a.py": "", "pkg/b.py": source}, {_PY_TEST: "slug('x')\n"}
    )

    assert _items(change) == []


# --- JavaScript and TypeScript -----------------------------------------------------------------

_TS = "src/core.ts"
_TS_TEST = "test/core.test.ts"

JS_CASES = [
    (
        "added function",
        _TS,
        "",
        "export function add(a: number, b = 2): number {\n  return a + b;\n}\n",
        "expect(add(1)).toBe(3);\n",
        [("function", "add", "add(a: number, b = 2): number")],
    ),
    (
        "changed signature",
        _TS,
        "export function pad(text: string): string {\n  return text;\n}\n",
        "export function pad(text: string, width: number): string {\n  return text;\n}\n",
        "expect(pad('x', 3)).toBe('  x');\n",
        [("function", "pad", "pad(text: string, width: number): string")],
    ),
    (
        "added option",
        _TS,
        "export function pad(text: string): string {\n  return text;\n}\n",
        (
            "export function pad(text: string, { width = 8 }: Options = {}): string {\n"
            "  return text;\n}\n"
        ),
        "expect(pad('x', { width: 3 })).toBe('  x');\n",
        [("function", "pad", "pad(text: string, { width = 8 }: Options = {}): string")],
    ),
    (
        "added method, private one left out",
        _TS,
        "export class Box {\n  open(): void {}\n}\n",
        (
            "export class Box {\n  open(): void {}\n  close(force = false): void {}\n"
            "  private secret(): void {}\n  #inner(): void {}\n}\n"
        ),
        "box.close(true); box.secret();\n",
        [("method", "Box.close", "Box.close(force = false): void")],
    ),
    (
        "added class",
        _TS,
        "",
        (
            "export class Queue<T> extends Base {\n"
            "  constructor(size: number) {\n    super();\n  }\n"
            "  push(item: T): void {}\n}\n"
        ),
        "new Queue(3).push(1);\n",
        [
            ("method", "Queue.push", "Queue.push(item: T): void"),
            ("class", "Queue", "Queue(size: number)"),
        ],
    ),
    (
        "exported consts and arrow functions",
        _TS,
        "",
        (
            "export const DELIMITER = ':';\nexport const TABLE: Table = build();\n"
            "export const twice = (n: number): number => n * 2;\n"
        ),
        "expect(DELIMITER).toBe(':'); expect(TABLE).toBeDefined(); expect(twice(2)).toBe(4);\n",
        [
            ("constant", "DELIMITER", "const DELIMITER = ':'"),
            ("constant", "TABLE", "const TABLE: Table = ..."),
            ("function", "twice", "twice(n: number): number"),
        ],
    ),
    (
        "export list of a local declaration; unexported names left out",
        _TS,
        "",
        (
            "function local(a: string): string {\n  return a;\n}\n"
            "function helper(a) {\n  return a;\n}\nexport { local };\n"
        ),
        "local('x'); helper('y');\n",
        [("function", "local", "local(a: string): string")],
    ),
    (
        "CommonJS exports",
        "lib/path.js",
        "",
        (
            "function join(a, b) {\n  return a + b;\n}\n"
            "module.exports.normalize = function (p) {\n  return p;\n};\n"
            "module.exports = { join };\n"
        ),
        "assert.equal(join('a', 'b'), 'ab'); normalize('x');\n",
        [("function", "normalize", "normalize(p)"), ("function", "join", "join(a, b)")],
    ),
    (
        "command-line flag (commander)",
        "bin/cli.js",
        "program.option('-v, --verbose');\n",
        "program.option('-v, --verbose');\nprogram.option('-p, --port <number>', 'the port');\n",
        "run(['--port', '80', '--verbose']);\n",
        [("flag", "--port", "-p, --port <number>")],
    ),
]


@pytest.mark.parametrize(
    ("path", "base", "gold", "tests", "expected"),
    [case[1:] for case in JS_CASES],
    ids=[case[0] for case in JS_CASES],
)
def test_javascript_and_typescript_interface(
    tmp_path: Path, path: str, base: str, gold: str, tests: str, expected: list[tuple[str, ...]]
) -> None:
    change = _change(tmp_path, {path: base, _TS_TEST: ""}, {path: gold}, {_TS_TEST: tests})

    assert _items(change) == expected


# --- the section -------------------------------------------------------------------------------


def test_the_section_shows_signatures_and_documented_behaviour_never_bodies_or_paths(
    tmp_path: Path,
) -> None:
    gold = {
        _PY: (
            "def tokenize(text: str) -> list[str]:\n"
            '    """Split `text` at commas,\n    trimming each part.\n\n'
            '    Details follow.\n    """\n'
            "    return [part.strip() for part in text.split(',')]\n"
            'def cli(p):\n    p.add_argument("--sep", help="The separator.")\n'
        ),
        _TS: (
            "/**\n * Add two numbers.\n *\n * More.\n * @param a the first\n */\n"
            "export function add(a: number, b: number): number {\n  return a + b;\n}\n"
        ),
    }
    tests = {_PY_TEST: "tokenize('a') and cli(p) and ['--sep', ';']\n", _TS_TEST: "add(1, 2);\n"}
    change = _change(tmp_path, {_PY_TEST: "", _TS_TEST: ""}, dict(gold), tests)
    items = interface_items(*change)

    section = interface_section(items, interface_docs(items, change.gold_files))

    assert section == (
        f"{INTERFACE_HEADING}\n\n"
        "- function `tokenize(text: str) -> list[str]`\n"
        "  Split `text` at commas, trimming each part.\n"
        "- function `cli(p)`\n"
        "- command-line flag `--sep`\n"
        "  The separator.\n"
        "- function `add(a: number, b: number): number`\n"
        "  Add two numbers."
    )
    assert not any(word in section for word in ("strip", "return", "core", "test"))
    assert interface_section((), {}) == ""


# --- the check ---------------------------------------------------------------------------------


_TOKENIZE = InterfaceItem(name="tokenize", kind="function", signature="tokenize(text)", path=_PY)
_READ_ALL = InterfaceItem(
    name="Reader.read_all", kind="method", signature="Reader.read_all(paths)", path=_PY
)
_DEPTH = InterfaceItem(name="--depth", kind="flag", signature="-d, --depth", path=_PY)


def test_a_missing_name_is_listed_until_the_interface_section_names_it() -> None:
    items = (_TOKENIZE, _READ_ALL, _DEPTH)
    prompt = "Split text into tokens; `read_all` reads every path."

    before = check_instruction(prompt, items)
    after = check_instruction(f"{prompt}\n\n{interface_section(items, {})}", items)

    assert before.missing == ("tokenize", "--depth")
    assert before.interface == items
    assert after.missing == ()


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("with pytest.raises(ValueError):", ["raises ValueError"]),
        (
            'with pytest.raises(errors.ParseError, match=r"bad \\(token\\) at \\d+"):',
            ["raises ParseError", 'message "bad (token) at"'],
        ),
        ("with pytest.raises((KeyError, IndexError)):", ["raises KeyError", "raises IndexError"]),
        ("self.assertRaises(KeyError, lookup, 'x')", ["raises KeyError"]),
        (
            "self.assertRaisesRegex(TypeError, 'must be str')",
            ["raises TypeError", 'message "must be str"'],
        ),
        ("expect(() => f()).toThrow(RangeError);", ["raises RangeError"]),
        (
            "expect(() => f()).toThrowError('width must be positive');",
            ['message "width must be positive"'],
        ),
        ("await expect(p).rejects.toThrow(/value too big/i);", ['message "value too big"']),
        ("expect(() => f()).toThrow();", []),
    ],
)
def test_asserted_errors_and_messages_are_listed_unless_stated(
    line: str, missing: list[str]
) -> None:
    patch = _new("tests/test_x.py", line)

    assert check_instruction("Tokenize text.", (), patch).missing == tuple(missing)
    stated = " ".join(entry.split(" ", 1)[1].strip('"') for entry in missing)
    assert check_instruction(f"It raises {stated.upper()}.", (), patch).missing == (
        tuple(entry for entry in missing if entry.startswith("raises"))
    )
    assert check_instruction(f"It raises {stated}.", (), patch).missing == ()


# --- properties --------------------------------------------------------------------------------

_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
)
_DEFAULTS = st.sampled_from(["1", "'x'", "None", "True", "-2.5", "()", "make()", "[1, 2]", "A.B"])


@settings(max_examples=60, deadline=None)
@given(
    name=_NAMES,
    params=st.lists(st.tuples(_NAMES, st.none() | _DEFAULTS), unique_by=lambda p: p[0]),
    keywords=st.lists(st.tuples(_NAMES, _DEFAULTS), max_size=3, unique_by=lambda p: p[0]),
)
def test_a_rendered_python_signature_is_a_valid_def_without_its_body(
    name: str, params: list[tuple[str, str | None]], keywords: list[tuple[str, str]]
) -> None:
    positional = sorted(params, key=lambda p: p[1] is not None)  # defaults last
    if {p for p, _ in positional} & {k for k, _ in keywords}:
        return
    shown = [p if d is None else f"{p}={d}" for p, d in positional]
    if keywords:
        shown += ["*", *(f"{k}={d}" for k, d in keywords)]
    source = f"def {name}({', '.join(shown)}):\n    return SECRET_BODY\n"
    gold = _new(_PY, source)

    items = interface_items(gold, _new(_PY_TEST, f"{name}()"), {}, {_PY: source})

    assert [item.name for item in items] == [name]
    signature = items[0].signature
    tree = ast.parse(f"def {signature}: pass")
    assert "SECRET_BODY" not in signature
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [a.arg for a in (*function.args.args, *function.args.kwonlyargs)] == [
        *(p for p, _ in positional),
        *(k for k, _ in keywords),
    ]


_MESSAGE = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"\\'),
    min_size=3,
    max_size=40,
).filter(lambda text: any(c.isalpha() for c in text))


@settings(max_examples=80, deadline=None)
@given(message=_MESSAGE)
def test_an_escaped_message_is_stated_by_the_message_itself(message: str) -> None:
    """`match=re.escape(message)` as a test writes it: an instruction quoting the message states
    it; one that does not lists it."""
    escaped = re.escape(message).replace("\\ ", " ")
    patch = _new("tests/test_x.py", f'with pytest.raises(ValueError, match=r"{escaped}"):')

    stated = check_instruction(f"Raises ValueError: {message}", (), patch)
    unstated = check_instruction("Raises ValueError.", (), patch)

    assert stated.missing == ()
    piece = " ".join(message.split())
    said = piece.casefold() in "raises valueerror."
    expected = () if len(piece) < 3 or said else (f"message {json.dumps(piece)}",)
    assert unstated.missing == expected


# --- modules, environment variables and option keys the tests use -----------------------------

# (case, base files, gold files, test files, expected (kind, name, signature) items)
BEYOND_NAMES_CASES = [
    (
        "a new Python module the tests import",
        {"pkg/__init__.py": ""},
        {"pkg/parser.py": '"""Parse rules."""\n\ndef _lex(text):\n    return text\n'},
        {"tests/test_parser.py": "from pkg.parser import _lex\n\ndef test_a():\n    _lex('')\n"},
        [("module", "pkg.parser", "pkg.parser")],
    ),
    (
        "a new src-layout module imported as a module",
        {"src/pkg/__init__.py": ""},
        {"src/pkg/rules/__init__.py": "", "src/pkg/rules/strict.py": "X = 1\n"},
        {"tests/test_rules.py": "import pkg.rules.strict as strict\n"},
        [("module", "pkg.rules.strict", "pkg.rules.strict")],
    ),
    (
        "a function re-exported under a new module's name is the function",
        {"pkg/__init__.py": ""},
        {
            "pkg/__init__.py": "from pkg.convert import convert\n",
            "pkg/convert.py": "def convert(x):\n    return x\n",
        },
        {"tests/test_convert.py": "from pkg import convert\n\nconvert(1)\n"},
        [("function", "convert", "convert(x)")],
    ),
    (
        "a new TypeScript module the tests import by a relative path",
        {"src/index.ts": "export const a = 1\n"},
        {"src/parser.ts": "function lex(s: string) { return s }\nexport default lex\n"},
        {"test/parser.test.ts": "import lex from '../src/parser.js'\nlex('')\n"},
        [("module", "src/parser", "src/parser")],
    ),
    (
        "an environment variable the gold reads and the tests set",
        {"pkg/config.py": "import os\n\ndef level():\n    return os.environ.get('PKG_A')\n"},
        {
            "pkg/config.py": (
                "import os\n\ndef level():\n    if os.getenv('PKG_DEBUG'):\n        return 9\n"
                "    return os.environ.get('PKG_A')\n"
            )
        },
        {
            "tests/test_config.py": (
                "def test_a(monkeypatch):\n    monkeypatch.setenv('PKG_DEBUG', '1')\n"
                "    monkeypatch.setenv('PKG_A', '1')\n"
            )
        },
        [("variable", "PKG_DEBUG", "PKG_DEBUG")],
    ),
    (
        "a process.env variable",
        {"src/log.js": "export const log = () => 1\n"},
        {"src/log.js": "export const log = () => (process.env.LOG_QUIET ? 0 : 1)\n"},
        {"test/log.test.js": "process.env.LOG_QUIET = '1'\n"},
        [("variable", "LOG_QUIET", "LOG_QUIET")],
    ),
    (
        "an option key with its declared TypeScript type",
        {
            "src/args.ts": (
                "export interface Options {\n  name?: string\n}\n"
                "export function parse(o: Options) { return o.name }\n"
            )
        },
        {
            "src/args.ts": (
                "export interface Options {\n  name?: string\n  kind?: StringConstructor[]\n}\n"
                "export function parse(o: Options) {\n"
                "  return o.kind ? o.kind.map(String) : o.name\n}\n"
            )
        },
        {"test/args.test.ts": "expect(parse({ name: 'a', kind: [String] })).toEqual(['a'])\n"},
        [("key", "kind", "kind?: StringConstructor[]")],
    ),
    (
        "an attribute the gold newly sets on an instance and the tests read",
        {"pkg/run.py": "class Result:\n    def __init__(self):\n        self.ok = True\n"},
        {
            "pkg/run.py": (
                "class Result:\n    def __init__(self):\n        self.ok = True\n"
                "        self.retries: int = 0\n"
            )
        },
        {"tests/test_run.py": "def test_a():\n    assert Result().retries == 0 and Result().ok\n"},
        [("attribute", "retries", "retries")],
    ),
    (
        "a configuration key read from a mapping",
        {"pkg/load.py": "def load(config):\n    return config['name']\n"},
        {
            "pkg/load.py": (
                "def load(config):\n    return config.get('strict_mode') or config['name']\n"
            )
        },
        {"tests/test_load.py": "assert load({'name': 'a', 'strict_mode': True})\n"},
        [("key", "strict_mode", "strict_mode")],
    ),
]


@pytest.mark.parametrize(
    ("base", "gold", "tests", "expected"),
    [case[1:] for case in BEYOND_NAMES_CASES],
    ids=[case[0] for case in BEYOND_NAMES_CASES],
)
def test_modules_variables_and_keys(
    tmp_path: Path,
    base: dict[str, str],
    gold: dict[str, str | None],
    tests: dict[str, str],
    expected: list[tuple[str, str, str]],
) -> None:
    assert _items(_change(tmp_path, base, gold, tests)) == expected


@pytest.mark.parametrize(
    ("prompt", "missing"),
    [
        ("Add a parser module.", ("pkg.parser",)),
        ("Add `parser`.", ("pkg.parser",)),
        ("Add the module `pkg.parser`.", ()),
        ("Add `pkg.parser.rules`.", ("pkg.parser",)),
    ],
)
def test_a_module_is_stated_only_by_its_whole_name(prompt: str, missing: tuple[str, ...]) -> None:
    item = InterfaceItem(name="pkg.parser", kind="module", signature="pkg.parser", path="p.py")

    assert check_instruction(prompt, [item]).missing == missing


def test_the_section_shows_modules_variables_and_keys() -> None:
    items = [
        InterfaceItem(name="pkg.parser", kind="module", signature="pkg.parser", path="p.py"),
        InterfaceItem(name="PKG_DEBUG", kind="variable", signature="PKG_DEBUG", path="c.py"),
        InterfaceItem(name="kind", kind="key", signature="kind?: string[]", path="a.ts"),
    ]

    section = interface_section(items, {"pkg.parser": "Parse rules."})

    assert section == (
        f"{INTERFACE_HEADING}\n\n"
        "- module `pkg.parser` (new)\n  Parse rules.\n"
        "- environment variable `PKG_DEBUG`\n"
        "- option key `kind?: string[]`"
    )
    assert check_instruction(section, items).missing == ()


def test_a_new_module_s_docstring_documents_it(tmp_path: Path) -> None:
    change = _change(
        tmp_path,
        {"pkg/__init__.py": ""},
        {"pkg/parser.py": '"""Parse rules.\n\nMore detail."""\n'},
        {"tests/test_p.py": "import pkg.parser\n"},
    )
    items = interface_items(
        change.gold_patch, change.test_patch, change.base_files, change.gold_files
    )

    assert interface_docs(items, change.gold_files) == {"pkg.parser": "Parse rules."}


@pytest.mark.parametrize(
    ("path", "source", "name", "doc"),
    [
        (
            "src/utils.ts",
            (
                "/**\n * Removes the query section of the URL.\n *\n * @example\n * ```js\n"
                ' * filterQuery("/foo?a=1&b=2", (key) => key !== "a"); // "/foo?b=2"\n * ```\n'
                " *\n * @group utils\n */\nexport function filterQuery(input: string): string {\n"
                "  return input\n}\n"
            ),
            "filterQuery",
            (
                "Removes the query section of the URL. Example: "
                '`filterQuery("/foo?a=1&b=2", (key) => key !== "a"); // "/foo?b=2"`'
            ),
        ),
        (
            "pkg/stats.py",
            (
                'def mode(data):\n    """The most common value.\n\n    >>> mode([1, 1, 2])\n    1\n'
                '    """\n'
            ),
            "mode",
            "The most common value. Example: `mode([1, 1, 2])` gives `1`",
        ),
        (
            "pkg/stats.py",
            'def mean(data):\n    """The mean.\n\n    Longer text.\n    """\n',
            "mean",
            "The mean. Longer text.",  # a terse first paragraph is followed by the second
        ),
        (
            "pkg/stats.py",
            (
                'def median(data):\n    """The middle value.\n\n    Parameters\n'
                '    ----------\n    data : list\n    """\n'
            ),
            "median",
            "The middle value.",  # a section header is no prose
        ),
        (
            "pkg/log.py",
            (
                'def reinstall():\n    """Reinstall the core.\n\n    >>> def sub(logger):\n'
                '    ...     logger.reinstall()\n\n    >>> reinstall()\n    """\n'
            ),
            "reinstall",
            "Reinstall the core. Example: `reinstall()`",  # a block's header shows nothing
        ),
    ],
    ids=["jsdoc-example", "doctest", "terse", "numpy-section", "doctest-block"],
)
def test_the_documentation_shown_keeps_the_first_example(
    path: str, source: str, name: str, doc: str
) -> None:
    """A summary can be wrong where its example is exact: both are shown."""
    item = InterfaceItem(name=name, kind="function", signature=name, path=path)

    assert interface_docs([item], {path: source}) == {name: doc}


# --- a first line about something else ----------------------------------------------------------

_CASES_BASE = (
    "export function trainCase(s: string) {\n  return s.split(' ').join('-');\n}\n\n"
    "export function upperFirst(s: string) {\n  return s[0].toUpperCase() + s.slice(1);\n}\n"
)
_CASES_GOLD = _CASES_BASE + (
    "\nexport function titleCase(s: string) {\n"
    "  return s.split('-').map(upperFirst).join(' ');\n}\n"
)
_CASES_TEST = (
    "import { titleCase } from '../src/index';\n"
    "test('title', () => { expect(titleCase('a-b')).toBe('A B'); });\n"
)
_PARSE_BASE = (
    "def tokenize(text):\n    return text.split()\n\n\n"
    "def parse(text):\n    words = tokenize(text)\n    return words\n"
)
_PARSE_GOLD = _PARSE_BASE.replace("    return words\n", "    return [w for w in words if w]\n")
_PARSE_TEST = "from pkg.core import parse\n\ndef test_parse():\n    assert parse('') == []\n"


_HEADER_BASE = (
    "def parse_header(value):\n    return _split_value(value)\n\n\n"
    "def _split_value(value):\n    return value.split(';')\n"
)
_HEADER_GOLD = _HEADER_BASE.replace("split(';')", "split(';') if value else []")
_HEADER_TEST = (
    "import pytest\nfrom pkg.core import parse_header\n\n\n"
    "@pytest.mark.parametrize(('value', 'parts'), [('a;b', ['a', 'b'])])\n"
    "def test_parse_header(value, parts):\n    assert parse_header(value) == parts\n"
)
_CLIENT_BASE = (
    "class Client:\n    def send(self, request):\n        return self._retry(request)\n\n"
    "    def request(self, url):\n        return self.send(url)\n\n"
    "    def _retry(self, request):\n        return request\n"
)
_CLIENT_GOLD = _CLIENT_BASE.replace("        return request\n", "        return request or None\n")
_CLIENT_TEST = (
    "from pkg.core import Client\n\ndef test_request():\n    assert Client().request('u')\n"
)
_FLAGS = (
    "import argparse\n\nPARSER = argparse.ArgumentParser()\nPARSER.add_argument('--verbose')\n\n\n"
)
_API_BASE = "def old_api():\n    return 1\n\n\ndef new_api():\n    return 2\n"
_API_GOLD = "def new_api():\n    return 2\n"
_API_TEST = "from pkg.core import new_api\n\ndef test_new():\n    assert new_api() == 2\n"


@pytest.mark.parametrize(
    ("base", "gold", "before", "after", "first_line"),
    [
        # a private helper fixed, a case added to a test whose body (unchanged) calls the name
        (
            _HEADER_BASE,
            _HEADER_GOLD,
            _HEADER_TEST,
            _HEADER_TEST.replace("('a;b', ['a', 'b'])", "('a;b', ['a', 'b']), ('', [])"),
            "Fix `parse_header` on an empty value",
        ),
        # the method named is reached through its class, which the change touches
        (_CLIENT_BASE, _CLIENT_GOLD, "", _CLIENT_TEST, "Make `Client.send` retry"),
        # what the title names removed is touched
        (_API_BASE, _API_GOLD, "", _API_TEST, "Remove `old_api` in favour of `new_api`"),
        # a flag the file declares is no public change of the gold's
        (
            _FLAGS + _HEADER_BASE,
            _FLAGS + _HEADER_GOLD,
            _HEADER_TEST,
            _HEADER_TEST.replace("('a;b', ['a', 'b'])", "('a;b', ['a', 'b']), ('', [])"),
            "Fix `parse_header` on an empty value",
        ),
    ],
    ids=["private-helper", "method-of-a-changed-class", "removal", "a-file-with-flags"],
)
def test_an_ordinary_fix_title_is_no_stray(
    tmp_path: Path, base: str, gold: str, before: str, after: str, first_line: str
) -> None:
    test_path = "tests/test_core.py"
    base_files = {"pkg/core.py": base, **({test_path: before} if before else {})}
    change = _change(tmp_path, base_files, {"pkg/core.py": gold}, {test_path: after})
    items = interface_items(
        change.gold_patch, change.test_patch, change.base_files, change.gold_files
    )

    files = (change.base_files, change.gold_files)
    checked = check_instruction(first_line, items, change.test_patch, files, {test_path: after})

    assert checked.strays == ()


@pytest.mark.parametrize(
    ("files", "first_line", "strays"),
    [
        # scule #74: the title names the function beside the one the change adds
        (
            ("src/index.ts", _CASES_BASE, _CASES_GOLD, _CASES_TEST),
            "feat: `trainCase` util",
            ["trainCase"],
        ),
        (
            ("src/index.ts", _CASES_BASE, _CASES_GOLD, _CASES_TEST),
            "feat: trainCase util",
            ["trainCase"],
        ),
        (
            ("src/index.ts", _CASES_BASE, _CASES_GOLD, _CASES_TEST),
            "Add trainCase() twin",
            ["trainCase"],
        ),
        # naming what the change adds beside it is context, not a wrong title
        (
            ("src/index.ts", _CASES_BASE, _CASES_GOLD, _CASES_TEST),
            "feat: `titleCase`, like `trainCase`",
            [],
        ),
        # a plain word is prose, not a name; no code named at all says nothing wrong
        (("src/index.ts", _CASES_BASE, _CASES_GOLD, _CASES_TEST), "feat: title case util", []),
        # the body of `parse` changes: naming it is right, though its signature is the same
        (("pkg/core.py", _PARSE_BASE, _PARSE_GOLD, _PARSE_TEST), "Fix `parse` on empty text", []),
        (
            ("pkg/core.py", _PARSE_BASE, _PARSE_GOLD, _PARSE_TEST),
            "Fix `tokenize` on empty text",
            ["tokenize"],
        ),
        # a name the tests use is what they check, whatever the gold leaves
        (
            ("pkg/core.py", _PARSE_BASE, _PARSE_GOLD, _PARSE_TEST.replace("parse", "tokenize")),
            "Fix `tokenize` on empty text",
            [],
        ),
    ],
)
def test_a_first_line_naming_only_what_the_change_leaves_is_a_stray(
    tmp_path: Path, files: tuple[str, str, str, str], first_line: str, strays: list[str]
) -> None:
    path, base, gold, test = files
    test_path = "test/index.test.ts" if path.endswith(".ts") else "tests/test_core.py"
    change = _change(tmp_path, {path: base}, {path: gold}, {test_path: test})
    items = interface_items(
        change.gold_patch, change.test_patch, change.base_files, change.gold_files
    )
    prompt = f"{first_line}\n\nThe body may name `trainCase` and `tokenize` freely.\n"

    checked = check_instruction(
        prompt, items, change.test_patch, (change.base_files, change.gold_files)
    )

    assert list(checked.strays) == strays
    assert check_instruction(prompt, items, change.test_patch).strays == ()


def test_the_names_spelled_are_the_items_and_the_callables_their_signatures_belong_to() -> None:
    items = (
        InterfaceItem(
            name="separator",
            kind="option",
            signature="url_query_parameter(url: str, *, separator: str = '&') -> str | None",
            path="w3lib/url.py",
        ),
        _READ_ALL,
        InterfaceItem(name="Parser", kind="class", signature="class Parser(Base)", path=_PY),
        _DEPTH,
        InterfaceItem(name="fetch", kind="function", signature="async fetch(url)", path=_PY),
    )
    assert spelled_names(items) == {
        "separator",
        "url_query_parameter",
        "read_all",
        "Parser",
        "--depth",
        "fetch",
    }
    gold = {"w3lib/encoding.py": "def html_body_declared_encoding(body):\n    return None\n"}
    assert spelled_names((), gold) == {"html_body_declared_encoding"}
