"""What held-out tests use, read from the lines a test patch adds: per test file, the modules it
imports, the keys it passes to calls (keyword arguments, dict and object literal keys), the
private attributes it reads, and each test function's name, documentation and timer use.

Python is read with `ast` (a file section whose added lines do not parse on their own, a change
inside an existing file, falls back to line patterns); JavaScript and TypeScript with
tree-sitter's grammars, which read what they can of a fragment. Pure.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from posixpath import dirname, normpath
from typing import Final

from tree_sitter import Node

from selfbench.patches import added_lines, new_side_hunks, parse_patch
from selfbench.quality._js_parser import is_js, parse
from selfbench.runners import test_globals

__all__ = [
    "TestFunction",
    "TestUsage",
    "asserted_errors",
    "asserted_messages",
    "comment_blocks",
    "comments_of_tests",
    "read_test_files",
    "read_test_usage",
    "split_test_name",
]

_PY_IMPORT_RE = re.compile(
    r"^\s*(?:from\s+([\w.]+)\s+import\s+(?:\(([\w\s,]+)\)|([\w \t,]+))"
    r"|import\s+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))",
    re.MULTILINE,
)
_PY_PRIVATE_RE = re.compile(r"(?<![\w.])((?:[A-Za-z]\w*\.)+_[A-Za-z]\w*)(?![\w(])")
_PY_TIMERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:time|asyncio|trio|anyio|gevent)\.sleep\(\s*(?!0(?:\.0*)?\s*\)|\))"),
    re.compile(r"(?<![\w.])sleep\(\s*(?!0(?:\.0*)?\s*\)|\))"),
    re.compile(r"\b(?:time\.(?:time|monotonic|perf_counter)|datetime\.now)\(\)"),
    re.compile(r"\bwait_for\([^)]*timeout\s*=|\.wait\(\s*(?:timeout\s*=\s*)?\d"),
)
"""A real clock: a non-zero sleep, a wall-clock read, a wait with a timeout."""
_JS_TIMERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bset(?:Timeout|Interval)\("),
    re.compile(r"\b(?:sleep|delay|wait)\(\s*[1-9]"),
    re.compile(r"\b(?:Date\.now|performance\.now)\(\)|\bnew Date\(\)\.getTime\(\)"),
)
_SEEDS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:random|np\.random|numpy\.random)\.seed\(|\bmanual_seed\("),
    re.compile(r"\b(?:Random|default_rng|RandomState)\(\s*\d"),
    re.compile(r"\b(?:faker|fake|Faker)\.seed(?:_instance)?\(|\bseedrandom\("),
)
"""A random generator seeded to a fixed sequence."""
_NAMED_CASES_RE = re.compile(r"\bids\s*=|\bpytest\.param\([^)]*\bid\s*=|\.each\b")
"""Case ids written in the test: pytest's `ids=` or `pytest.param(id=)`, a `.each` title."""
_FAKE_TIMERS_RE = re.compile(
    r"\.useFakeTimers\b|\bfreeze_?time\b|\bfreezegun\b|\btime_machine\b|\bmock\.timers\b"
)
"""A test file that fakes its clock: its timers run on the test's command, not the machine's."""


@dataclass(frozen=True, slots=True)
class TestFunction:
    """One test the added lines define: its name path (`Class`, `function`; or a JavaScript
    test's enclosing `describe` titles, then its own), its documentation and whether its body
    waits on a real clock."""

    __test__ = False  # not a pytest class, though its name starts with `Test`

    path: str
    names: tuple[str, ...]
    doc: str = ""
    timing: str = ""
    """The first real-clock pattern its body holds ("" for none)."""
    errors: tuple[str, ...] = ()
    """The error classes its body asserts are raised (`asserted_errors`)."""
    messages: tuple[tuple[str, ...], ...] = ()
    """The error messages its body asserts (`asserted_messages`)."""
    named_cases: bool = True
    """Its cases' ids are written in the test (`ids=`, `id=`), not made up from the values."""
    seeded: str = ""
    """The first seeding of a random generator its body holds (`random.seed(`; "" for none)."""

    @classmethod
    def read(
        cls, path: str, names: tuple[str, ...], body: str, doc: str, timing: str
    ) -> TestFunction:
        """The test at `path` named `names` whose source (decorators included) is `body`."""
        errors = tuple(dict.fromkeys(asserted_errors(body)))
        messages = tuple(dict.fromkeys(asserted_messages(body)))
        named = _NAMED_CASES_RE.search(body) is not None or not body.lstrip().startswith("@")
        seeded = _timing(body, _SEEDS)
        return cls(path, names, doc, timing, errors, messages, named, seeded)


_MOST_BLOCKS = 3
_BLOCK_LENGTH = 240
_MIN_BLOCK_WORDS = 4
_NOT_SAID_RE = re.compile(
    r"^(?:noqa|type:|pragma|fmt:|pylint:|mypy:|TODO|FIXME|XXX|HACK|NOTE:)", re.IGNORECASE
)
"""Comments that say nothing of the behaviour: tools' pragmas and notes to the maintainers."""


def comment_blocks(source: str) -> tuple[str, ...]:
    """The blocks of whole-line comments in a Python test's source (its comment tokens, so a
    `#` inside a string is none), each one text, in order: at most `_MOST_BLOCKS`, each cut at a
    word to `_BLOCK_LENGTH` characters. Pragmas and notes (`noqa`, `type:`, `TODO`), code set
    aside (a comment that compiles as Python: `# if url is not None:`), and blocks of fewer than
    `_MIN_BLOCK_WORDS` words say no behaviour and are left out; a source that does not tokenize
    says nothing."""
    blocks: list[list[str]] = []
    last = -2
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return ()
    for token in tokens:
        if token.type != tokenize.COMMENT or token.line.strip()[:1] != "#":
            if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
                last = -2  # code between comments ends a block
            continue
        text = token.string.lstrip("#").strip()
        row = token.start[0]
        if not text or token.string.startswith("#!") or _NOT_SAID_RE.match(text) or _is_code(text):
            last = -2
            continue
        if row != last + 1 or not blocks:
            blocks.append([])
        blocks[-1].append(text)
        last = row
    said = [" ".join(block) for block in blocks]
    kept = [text for text in said if len(text.split()) >= _MIN_BLOCK_WORDS]
    return tuple(_cut(text.rstrip(" .;:,")) for text in kept[:_MOST_BLOCKS])


def _is_code(text: str) -> bool:
    """A comment that parses as Python (`x = [1, 2]`, `if url is not None:`) is code set aside,
    unless all it is is one word; prose rarely parses (`see RFC 3986 (section 3.4)` does not)."""
    for candidate in (text, f"{text}\n    pass"):
        try:
            tree = ast.parse(candidate)
        except (SyntaxError, ValueError, RecursionError):
            continue
        [*rest, last] = tree.body or [ast.Pass()]
        # a word of a sentence split over lines (`# five`) parses as a name, and is prose
        word = isinstance(last, ast.Expr) and isinstance(last.value, ast.Name | ast.Constant)
        return bool(rest) or not word
    return False


def _cut(text: str) -> str:
    if len(text) <= _BLOCK_LENGTH:
        return text
    return text[:_BLOCK_LENGTH].rsplit(" ", 1)[0] + " …"


@dataclass(frozen=True, slots=True)
class TestUsage:
    """What one test patch's added lines use."""

    __test__ = False

    imports: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per test file, the modules it imports: dotted names (Python; `from a import b` gives
    both `a` and `a.b`), or import specifiers resolved against the file's directory when
    relative (JavaScript, without extension)."""
    keys: frozenset[str] = frozenset()
    """Keyword argument names and literal keys the tests pass."""
    private: tuple[str, ...] = ()
    """Attribute chains that end on a private name (`lock._waiters`), as written."""
    attributes: frozenset[str] = frozenset()
    """The public attribute names the tests read (`result.count`, `err.code`)."""
    functions: tuple[TestFunction, ...] = ()

    def function(self, path: str, names: Iterable[str]) -> TestFunction | None:
        """The test defined in `path` whose name path ends with `names` (a pytest id's parts,
        a JavaScript test's titles); None when the added lines do not define it."""
        wanted = tuple(names)
        for found in self.functions:
            if found.path == path and found.names[-len(wanted) :] == wanted:
                return found
        return None


_PARAMETERS_RE = re.compile(r"\[(.*)\]$")
_JS_SEPARATORS = (" > ", " \u203a ")


def split_test_name(test_name: str) -> tuple[str, tuple[str, ...], str] | None:
    """(file, name path, case id) of a pytest-style (`file::Class::test[id]`) or jest-style
    (`file > suite > test`) name; None for another shape."""
    if "::" in test_name:
        path, *names = test_name.split("::")
        case = ""
        found = _PARAMETERS_RE.search(names[-1]) if names else None
        if found is not None:
            case = found.group(1)
            names[-1] = names[-1][: found.start()]
        return path, tuple(names), case
    for separator in _JS_SEPARATORS:
        if separator in test_name:
            path, *titles = test_name.split(separator)
            return path, tuple(titles), ""
    return None


def read_test_files(texts: Mapping[str, str]) -> TestUsage:
    """What whole test files use (their text with the test patch applied): each test's whole
    body, where the added lines may hold only a changed assertion."""
    return _merged(_read(path, text) for path, text in texts.items())


_PY_TEST_DEF_RE = re.compile(r"^([ \t]*)(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE)


def _python_test_sources(text: str) -> Iterator[tuple[str, str]]:
    """(name, source) of each `test*` function in Python text read by its lines: from its
    `def` to the first non-blank line, comments too, at or left of the `def`'s indentation."""
    for match in _PY_TEST_DEF_RE.finditer(text):
        indent = len(match.group(1))
        end = re.compile(rf"^[ \t]{{0,{indent}}}\S", re.MULTILINE).search(text, match.end())
        yield match.group(2), text[match.start() : end.start() if end else len(text)]


def comments_of_tests(test_patch: bytes) -> dict[tuple[str, str], tuple[str, ...]]:
    """What the authors of the Python tests the patch adds wrote of them in their bodies'
    comments (`comment_blocks`), by (file, function name): the behaviour a test's assertions
    pin, where it has no documentation. Read hunk by hunk from the lines each adds, comments
    kept; a name two tests of one file share is said by neither (which class is whose is not
    read)."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    named: dict[tuple[str, str], int] = {}
    patch = parse_patch(test_patch, lenient=True)
    for change in patch.files:
        path = change.new_path
        if change.binary or path is None or not path.endswith(".py"):
            continue
        for hunk in new_side_hunks(patch.section(change)):
            text = "\n".join(
                line.text.decode("utf-8", "replace") for line in hunk.lines if line.added
            )
            for name, source in _python_test_sources(text):
                named[(path, name)] = named.get((path, name), 0) + 1
                if blocks := comment_blocks(source):
                    found.setdefault((path, name), blocks)
    return {key: blocks for key, blocks in found.items() if named[key] == 1}


def read_test_usage(test_patch: bytes) -> TestUsage:
    """What the added lines of `test_patch` use (see the module)."""
    patch = parse_patch(test_patch, lenient=True)
    return _merged(
        _read(change.new_path, added_lines(patch.section(change)))
        for change in patch.files
        if not change.binary and change.new_path is not None
    )


def _read(path: str, text: str) -> TestUsage | None:
    """What one test file's `text` uses; None for a language this module does not read."""
    if path.endswith(".py"):
        return _python(path, text)
    return _javascript(path, text) if is_js(path) else None


def _merged(found: Iterable[TestUsage | None]) -> TestUsage:
    read = [usage for usage in found if usage is not None]
    return TestUsage(
        imports={path: names for usage in read for path, names in usage.imports.items()},
        keys=frozenset(key for usage in read for key in usage.keys),
        private=tuple(dict.fromkeys(chain for usage in read for chain in usage.private)),
        attributes=frozenset(name for usage in read for name in usage.attributes),
        functions=tuple(function for usage in read for function in usage.functions),
    )


def _timing(body: str, patterns: tuple[re.Pattern[str], ...]) -> str:
    """The first of `patterns` that `body` holds, as written (`time.sleep`, without its `(`)."""
    for pattern in patterns:
        match = pattern.search(body)
        if match is not None:
            return " ".join(match.group(0).split()).rstrip("( ")
    return ""


# --- asserted errors and messages ---------------------------------------------------------------

_RAISES_RE = re.compile(
    r"(?:\b\w+\.raises|assertRaises(?:Regexp?|Regex)?)\(\s*\(?\s*([\w.]+(?:\s*,\s*[\w.]+)*)"
    r"|\.toThrow(?:Error)?\(\s*([A-Z][\w.]*)\s*\)"
)
_PY_STRING = r"""[rRbBuU]{0,2}(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')"""
_JS_STRING = r"""(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`([^`$]*)`)"""
_PATTERN_RES = (
    re.compile(rf"\bmatch\s*=\s*{_PY_STRING}"),
    re.compile(rf"assertRaisesRegexp?\(\s*[\w.]+\s*,\s*{_PY_STRING}"),
    re.compile(r"\.toThrow(?:Error)?\(\s*/((?:[^/\\\n]|\\.)+)/[a-z]*\s*\)"),
)
"""Messages asserted by a regular expression (`match=`, `assertRaisesRegex`, `toThrow(/…/)`)."""
_LITERAL_RE = re.compile(rf"\.toThrow(?:Error)?\(\s*{_JS_STRING}\s*\)")
"""Messages asserted as text (`toThrow("…")`: a substring)."""
_PATTERN_TOKEN_RE = re.compile(r"\\([A-Za-z])|\\(.)|([\[\](){}|^$*+?.])|([^\\\[\](){}|^$*+?.]+)")
_MIN_PIECE = 3


def asserted_errors(text: str) -> list[str]:
    """The error classes `text` asserts are raised (`pytest.raises(X)`, `assertRaises(X)`,
    `expect(...).toThrow(X)`), by their last name."""
    names: list[str] = []
    for match in _RAISES_RE.finditer(text):
        for name in (match.group(1) or match.group(2) or "").split(","):
            leaf = name.strip().rsplit(".", 1)[-1]
            if leaf[:1].isupper():
                names.append(leaf)
    return names


def _pattern_pieces(pattern: str) -> list[str]:
    """The runs of literal text a regular expression holds (escaped characters are literal)."""
    pieces, current = [], ""
    for match in _PATTERN_TOKEN_RE.finditer(pattern):
        klass, escaped, syntax, text = match.groups()
        if klass is not None or syntax is not None:
            pieces.append(current)
            current = ""
        else:
            current += escaped if escaped is not None else text
    return [*pieces, current]


def _meaningful(pieces: Sequence[str]) -> tuple[str, ...]:
    stripped = (piece.strip() for piece in pieces)
    return tuple(p for p in stripped if len(p) >= _MIN_PIECE and any(c.isalpha() for c in p))


def asserted_messages(text: str) -> list[tuple[str, ...]]:
    """Each error message `text` asserts (`match="..."`, `assertRaisesRegex(X, "...")`,
    `toThrow("...")` or `toThrow(/.../)`) as the literal pieces a statement of it must hold."""
    found = []
    for pattern in _PATTERN_RES:
        for match in pattern.finditer(text):
            written = next(group for group in match.groups() if group is not None)
            found.append(_meaningful(_pattern_pieces(written)))
    for match in _LITERAL_RE.finditer(text):
        written = next(group for group in match.groups() if group is not None)
        found.append(_meaningful([written]))
    return [pieces for pieces in found if pieces]


# --- Python ------------------------------------------------------------------------------------


def _python(path: str, text: str) -> TestUsage:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return _python_by_lines(path, text)
    imports: list[str] = []
    keys: set[str] = set()
    private: list[str] = []
    attributes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.append(node.module)
            imports.extend(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and not _tooling_call(node):
            keys.update(keyword.arg for keyword in node.keywords if keyword.arg)
        elif isinstance(node, ast.Dict):
            keys.update(
                key.value
                for key in node.keys
                if isinstance(key, ast.Constant) and isinstance(key.value, str)
            )
        elif isinstance(node, ast.Attribute) and _is_private(node.attr) and not _own(node):
            private.append(ast.unparse(node))
        elif isinstance(node, ast.Attribute) and not node.attr.startswith("_"):
            attributes.add(node.attr)
    fake = _FAKE_TIMERS_RE.search(text) is not None
    functions = list(_python_tests(path, tree.body, (), text, fake=fake))
    return _one_file(path, imports, keys, private, attributes, functions)


def _one_file(
    path: str,
    imports: Iterable[str],
    keys: Iterable[str],
    private: Iterable[str],
    attributes: Iterable[str],
    functions: Iterable[TestFunction],
) -> TestUsage:
    """What one test file's added lines use."""
    return TestUsage(
        imports={path: tuple(dict.fromkeys(imports))},
        keys=frozenset(keys),
        private=tuple(private),
        attributes=frozenset(attributes),
        functions=tuple(functions),
    )


_PY_TOOLING: Final = test_globals("python") | frozenset(
    {"mock", "patch", "Mock", "MagicMock", "monkeypatch", "mocker", "given", "freeze_time",
     "freezegun"}
)  # fmt: skip
"""The names of test tooling (the Python runners' own, and the names mocking, hypothesis and
freezegun are usually bound to): the keyword
arguments of a call rooted at one (`pytest.param(..., id=...)`, `pytest.raises(match=...)`,
`given(x=st.integers())`) are the tooling's, no key of the code under test."""
_PY_PASSED_ON: Final = frozenset({"dict", "builds"})
"""Tooling calls whose keyword arguments are the code's own keys (`patch.dict(CONFIG,
retries=3)`)."""


def _tooling_call(node: ast.Call) -> bool:
    """Whether a call's function is test tooling's (`pytest.mark.parametrize`, `patch.object`),
    and its keyword arguments none the tooling passes on."""
    function = node.func
    while isinstance(function, ast.Attribute | ast.Call):
        if isinstance(function, ast.Attribute) and function.attr in _PY_PASSED_ON:
            return False
        function = function.value if isinstance(function, ast.Attribute) else function.func
    return isinstance(function, ast.Name) and function.id in _PY_TOOLING


def _own(node: ast.Attribute) -> bool:
    """`self._x` or `cls._x`: a test class's own state, not the code's."""
    return isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _python_tests(
    path: str, body: list[ast.stmt], outer: tuple[str, ...], text: str, *, fake: bool
) -> Iterator[TestFunction]:
    """The `test*` functions of a module or `Test*` class, with their documentation and timer
    use (none when the file fakes its clock)."""
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from _python_tests(path, node.body, (*outer, node.name), text, fake=fake)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            decorators = [ast.get_source_segment(text, d) or "" for d in node.decorator_list]
            source = "".join(f"@{d}\n" for d in decorators) + (
                ast.get_source_segment(text, node) or ""
            )
            found = "" if fake else _timing(source, _PY_TIMERS)
            doc = ast.get_docstring(node) or ""
            yield TestFunction.read(path, (*outer, node.name), source, doc, found)


def _python_by_lines(path: str, text: str) -> TestUsage:
    imports: list[str] = []
    for match in _PY_IMPORT_RE.finditer(text):
        module, grouped, listed, plain = match.groups()
        names = grouped or listed or ""
        if plain:
            imports.extend(name.strip() for name in plain.split(","))
            continue
        imports.append(module)
        imports.extend(
            f"{module}.{name.strip()}" for name in names.split(",") if name.strip().isidentifier()
        )
    keys = set(re.findall(r"\b([A-Za-z_]\w*)\s*=(?!=)", text))
    keys.update(re.findall(r"""["']([\w-]+)["']\s*:""", text))
    private = [
        match.group(1)
        for match in _PY_PRIVATE_RE.finditer(text)
        if not match.group(1).startswith(("self.", "cls."))
        and not match.group(1).rsplit(".", 1)[1].startswith("__")
    ]
    attributes = set(re.findall(r"(?<=[\w)\]])\.([A-Za-z]\w*)\b(?!\s*\()", text))
    fake = _FAKE_TIMERS_RE.search(text) is not None
    functions = []
    for name, source in _python_test_sources(text):
        timing = "" if fake else _timing(source, _PY_TIMERS)
        functions.append(TestFunction.read(path, (name,), source, "", timing))
    return _one_file(path, imports, keys, private, attributes, functions)


# --- JavaScript and TypeScript -----------------------------------------------------------------

_TEST_CALLS = frozenset({"it", "test"})
_SUITE_CALLS = frozenset({"describe", "suite", "context"})
_JS_EXTENSIONS_RE = re.compile(r"\.(?:[cm]?[jt]sx?)$")


def _node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _string_value(node: Node | None) -> str | None:
    """A string or template literal without substitutions, unquoted; None for anything else."""
    if node is None or node.type not in {"string", "template_string"}:
        return None
    if any(child.type == "template_substitution" for child in node.named_children):
        return None
    return _node_text(node)[1:-1]


def _callee(node: Node) -> str:
    """`it`, `test`, `describe` for `it(...)`, `it.each(...)(...)`, `test.only(...)`."""
    function = node.child_by_field_name("function")
    while function is not None and function.type in {"member_expression", "call_expression"}:
        function = function.child_by_field_name(
            "object" if function.type == "member_expression" else "function"
        )
    return _node_text(function)


def _resolved(path: str, specifier: str) -> str:
    """A relative specifier resolved against the test file's directory, without extension (and
    without a trailing `/index`); any other specifier as written."""
    if not specifier.startswith("."):
        return specifier
    joined = normpath(f"{dirname(path)}/{specifier}") if dirname(path) else normpath(specifier)
    return _JS_EXTENSIONS_RE.sub("", joined).removesuffix("/index")


def _javascript(path: str, text: str) -> TestUsage:
    root = parse(text.encode("utf-8"), path=path).root_node
    imports: list[str] = []
    keys: set[str] = set()
    private: list[str] = []
    attributes: set[str] = set()
    functions: list[TestFunction] = []
    fake = _FAKE_TIMERS_RE.search(text) is not None
    stack: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, titles = stack.pop()
        inner = titles
        if node.type in {"import_statement", "export_statement"}:
            source = _string_value(node.child_by_field_name("source"))
            if source is not None:
                imports.append(_resolved(path, source))
        elif node.type == "call_expression":
            inner = _js_call(node, path, titles, fake, imports, functions)
        elif node.type == "pair":
            key = node.child_by_field_name("key")
            name = _string_value(key) if key is not None and key.type == "string" else None
            keys.add(name if name is not None else _node_text(key))
        elif node.type == "shorthand_property_identifier":
            keys.add(_node_text(node))
        elif node.type == "member_expression":
            prop = _node_text(node.child_by_field_name("property"))
            if _is_private(prop):
                private.append(" ".join(_node_text(node).split()))
            elif prop and not prop.startswith(("_", "#")):
                attributes.add(prop)
        stack.extend((child, inner) for child in reversed(node.named_children))
    return _one_file(path, imports, (k for k in keys if k), private, attributes, functions)


def _js_call(
    node: Node,
    path: str,
    titles: tuple[str, ...],
    fake: bool,
    imports: list[str],
    functions: list[TestFunction],
) -> tuple[str, ...]:
    """Record what one call expression is (an import, a test, a suite); the titles inside it."""
    callee = _callee(node)
    arguments = node.child_by_field_name("arguments")
    given = arguments.named_children if arguments is not None else []
    first = given[0] if given else None
    if callee in {"require", "import"}:
        specifier = _string_value(first)
        if specifier is not None:
            imports.append(_resolved(path, specifier))
        return titles
    title = _string_value(first)
    if title is None:
        return titles
    if callee in _SUITE_CALLS:
        return (*titles, title)
    if callee in _TEST_CALLS:
        body = _node_text(arguments)
        timing = "" if fake else _timing(body, _JS_TIMERS)
        functions.append(TestFunction.read(path, (*titles, title), body, "", timing))
        return (*titles, title)
    return titles
