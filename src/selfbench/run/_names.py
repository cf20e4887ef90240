"""The names a held-out test file asserts, read from its source. Pure: text in, names out.

A test *asserts* a name when its verdict depends on it: the identifiers it imports, calls,
reads as attributes or passes as keywords, and the strings it compares, matches or looks up
(error messages, field and header names, endpoint paths). Locally bound names (its own
functions, variables, parameters) are not the code under test and are left out.

Python is read with `ast`. JavaScript and TypeScript are read with a small tokenizer written
here: no JavaScript parser ships with Python, and the ones on PyPI are unmaintained and refuse
modern syntax (TypeScript types, JSX, decorators), while all this needs is tokens (identifiers,
strings, template-literal text, punctuation) with comments and regular-expression literals
skipped, and bracket nesting to know what sits inside an `expect(...)` or `assert(...)`.
Any other language yields no names.
"""

from __future__ import annotations

import ast
import builtins
import datetime as dt
import io
import json
import keyword
import pathlib
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from posixpath import splitext
from unittest import TestCase

from selfbench.runners import test_globals

__all__ = ["AssertedNames", "asserted_names", "code_names", "js_tokens"]

PYTHON_SUFFIXES = (".py",)
JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_HTTP_METHODS = frozenset(
    {"get", "post", "put", "patch", "delete", "head", "options", "request", "fetch", "set",
     "header", "getHeader", "query", "send"}
)  # fmt: skip


@dataclass
class AssertedNames:
    """Identifiers and strings a test file asserts (strings include paths and messages)."""

    identifiers: set[str] = field(default_factory=set)
    strings: set[str] = field(default_factory=set)
    api: set[str] = field(default_factory=set)
    """Identifiers that can only name the code under test (attributes, keywords, imports):
    a local binding of the same spelling does not hide them."""

    def named(self, ignored: frozenset[str], bound: set[str]) -> AssertedNames:
        """The identifiers without framework names, and without locally bound ones."""
        identifiers = ((self.identifiers - bound) | self.api) - ignored
        return AssertedNames(identifiers, self.strings)


def asserted_names(path: str, source: str) -> AssertedNames:
    """The names the test file at `path` asserts; none for a language not read here."""
    suffix = splitext(path)[1].lower()
    if suffix in PYTHON_SUFFIXES:
        return _python_names(source)
    if suffix in JS_SUFFIXES:
        return _js_names(source)
    return AssertedNames()


# --- Python ------------------------------------------------------------------------------------

_PY_FRAMEWORK = frozenset({"self", "cls", "mock", "mocker", "monkeypatch"}) | test_globals("python")


class _PythonReader(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found = AssertedNames()
        self.bound: set[str] = set()
        self.stdlib: set[str] = set()  # names bound to standard-library modules
        self.asserting = 0

    # bindings
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bound.add(node.name)
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if arg is not None:
                self.bound.add(arg.arg)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring asserts nothing
        for child in (*node.decorator_list, *body):
            self.visit(child)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.bound.add(node.id)
        else:
            self.found.identifiers.add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    # what the code under test is called (the standard library's names are not)
    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if _is_stdlib(module) and not node.level:
            self.bound.update(alias.asname or alias.name for alias in node.names)
            return
        self.found.api.update(part for part in module.split(".") if part)
        for alias in node.names:
            self.found.api.add(alias.name)
            if alias.asname:
                self.bound.add(alias.asname)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _is_stdlib(alias.name):
                local = alias.asname or alias.name.split(".", maxsplit=1)[0]
                self.stdlib.add(local)
                self.bound.add(local)
                continue
            self.found.api.update(alias.name.split("."))
            if alias.asname:
                self.bound.add(alias.asname)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not (isinstance(node.value, ast.Name) and node.value.id in self.stdlib):
            self.found.api.add(node.attr)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _called_name(node.func)
        asserting = name.startswith("assert") or name in {"raises", "warns", "approx"}
        for kw in node.keywords:
            if kw.arg:
                self.found.api.add(kw.arg)
            if kw.arg == "match":
                self._strings(kw.value)
        if name in _HTTP_METHODS and node.args:
            self._first_string(node.args[0])
        self.asserting += asserting
        self.generic_visit(node)
        self.asserting -= asserting

    # what is compared
    def visit_Assert(self, node: ast.Assert) -> None:
        self.asserting += 1
        self.visit(node.test)
        self.asserting -= 1

    def visit_Compare(self, node: ast.Compare) -> None:
        self.asserting += 1
        self.generic_visit(node)
        self.asserting -= 1

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._first_string(node.slice)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and (self.asserting or node.value.startswith("/")):
            self.found.strings.add(node.value)

    def _first_string(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.found.strings.add(node.value)

    def _strings(self, node: ast.expr) -> None:
        for child in ast.walk(node):
            if isinstance(child, ast.expr):
                self._first_string(child)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _is_stdlib(module: str) -> bool:
    return module.split(".", maxsplit=1)[0] in sys.stdlib_module_names


def _public_attributes(*types: type) -> frozenset[str]:
    return frozenset(name for kind in types for name in dir(kind) if not name.startswith("_"))


# The attributes of the values every test handles (strings, containers, paths, files, errors,
# patterns, dates, async generators, test cases): a test calling `.read_bytes()`, reading
# `.lineno` or awaiting `.asend(…)` names the language's API, not the gold patch's, even when the
# gold patch uses it too (loguru #1303's wrapper defines `asend` and `athrow` again). Not a
# generator's `send` and `throw`: an application's `Mailer.send` is a name of its own.
WELL_KNOWN = _public_attributes(
    str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, complex,
    types.AsyncGeneratorType,
    BaseException, OSError, SyntaxError, UnicodeDecodeError, json.JSONDecodeError,
    pathlib.Path, io.TextIOWrapper, io.BytesIO, io.StringIO, re.Pattern, re.Match,
    dt.datetime, dt.timedelta, subprocess.CompletedProcess, TestCase,
) | frozenset(
    {"length", "map", "filter", "reduce", "push", "pop", "slice", "splice", "includes",
     "indexOf", "forEach", "some", "every", "find", "findIndex", "concat", "flat", "keys",
     "values", "entries", "toString", "toFixed", "toLowerCase", "toUpperCase", "trim",
     "startsWith", "endsWith", "padStart", "padEnd", "then", "catch", "finally", "message",
     "stack", "json", "text", "status", "statusCode", "headers", "body", "ok", "assign",
     "freeze", "stringify", "parse", "now", "getTime", "toISOString", "log", "error", "warn"}
)  # fmt: skip
_PY_IGNORED = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | _PY_FRAMEWORK | WELL_KNOWN


def _python_names(source: str) -> AssertedNames:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return AssertedNames()  # not Python this interpreter reads: no evidence either way
    reader = _PythonReader()
    reader.visit(tree)
    return reader.found.named(_PY_IGNORED, reader.bound)


# --- JavaScript and TypeScript -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Token:
    """One token: `kind` is `name`, `string` (its text, unquoted), `number` or `punct`."""

    kind: str
    text: str


_NAME_START = re.compile(r"[A-Za-z_$\u0080-\uffff]")
_NAME = re.compile(r"[A-Za-z0-9_$\u0080-\uffff]+")
_NUMBER = re.compile(r"(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)n?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}
# After these, a `/` starts a regular expression; after a name, a number or a closing bracket
# it divides (keywords such as `return` are the exception, listed here).
_REGEX_AFTER_NAMES = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
     "do", "else", "yield", "await"}
)  # fmt: skip


def _read_quoted(source: str, start: int, quote: str) -> tuple[str, int]:
    """A string literal's value and the index after its closing quote (or the line's end)."""
    out: list[str] = []
    index = start + 1
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            nxt = source[index + 1]
            out.append(_ESCAPES.get(nxt, "" if nxt == "\n" else nxt))
            index += 2
            continue
        if char == quote:
            return "".join(out), index + 1
        if char == "\n":  # unterminated: stop at the line's end, as an engine would refuse
            break
        out.append(char)
        index += 1
    return "".join(out), index


def _read_template(source: str, start: int) -> tuple[list[str], list[str], int]:
    """A template literal's text parts, its `${...}` expressions' source, and its end."""
    parts: list[str] = []
    expressions: list[str] = []
    text: list[str] = []
    index = start + 1
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            text.append(_ESCAPES.get(source[index + 1], source[index + 1]))
            index += 2
        elif char == "`":
            parts.append("".join(text))
            return parts, expressions, index + 1
        elif source.startswith("${", index):
            parts.append("".join(text))
            text = []
            depth, end = 1, index + 2
            while end < len(source) and depth:
                depth += {"{": 1, "}": -1}.get(source[end], 0)
                end += 1
            expressions.append(source[index + 2 : end - 1])
            index = end
        else:
            text.append(char)
            index += 1
    parts.append("".join(text))
    return parts, expressions, index


def _regex_allowed(previous: Token | None) -> bool:
    if previous is None:
        return True
    if previous.kind == "name":
        return previous.text in _REGEX_AFTER_NAMES
    return previous.kind == "punct" and previous.text not in {")", "]", "}"}


def _skip_regex(source: str, index: int) -> int:
    in_class = False
    index += 1
    while index < len(source) and source[index] != "\n":
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            flags = _NAME.match(source, index + 1)
            return flags.end() if flags else index + 1
        index += 1
    return index


def js_tokens(source: str) -> Iterator[Token]:  # noqa: C901 - one branch per token kind
    """The tokens of JavaScript or TypeScript source, comments and regex literals dropped.

    Grammar (enough of ECMAScript's lexical grammar): whitespace; `//` and `/* */` comments;
    names (`[A-Za-z_$]` and non-ASCII, then also digits); numbers; `'...'` and `"..."` strings
    with escapes; template literals, whose text parts are strings and whose `${...}` parts are
    tokenized in turn; a `/` where an expression may start is a regex literal; anything else
    is one punctuation character.
    """
    index, previous = 0, None
    length = len(source)
    while index < length:
        char = source[index]
        if char.isspace():
            index += 1
            continue
        if source.startswith("//", index):
            end = source.find("\n", index)
            index = length if end < 0 else end
            continue
        if source.startswith("/*", index):
            end = source.find("*/", index + 2)
            index = length if end < 0 else end + 2
            continue
        token: Token | None = None
        if _NAME_START.match(char):
            match = _NAME.match(source, index)
            assert match is not None  # noqa: S101 - the start matched
            token, index = Token("name", match.group()), match.end()
        elif char.isdigit() or (char == "." and source[index + 1 : index + 2].isdigit()):
            match = _NUMBER.match(source, index)
            end = match.end() if match and match.end() > index else index + 1
            token, index = Token("number", source[index:end]), end
        elif char in "'\"":
            text, index = _read_quoted(source, index, char)
            token = Token("string", text)
        elif char == "`":
            parts, expressions, index = _read_template(source, index)
            yield from (Token("string", part) for part in parts if part)
            for expression in expressions:
                yield from js_tokens(expression)
            previous = Token("punct", ")")
            continue
        elif char == "/" and _regex_allowed(previous):
            index = _skip_regex(source, index)
            previous = Token("punct", ")")
            continue
        else:
            token, index = Token("punct", char), index + 1
        previous = token
        yield token


_JS_DECLARE = frozenset({"const", "let", "var", "function", "class"})
_JS_IGNORED = frozenset(
    {"describe", "it", "test", "expect", "assert", "beforeEach", "afterEach", "beforeAll",
     "afterAll", "require", "module", "exports", "async", "await", "function", "return",
     "const", "let", "var", "new", "this", "true", "false", "null", "undefined", "import",
     "from", "export", "default", "typeof", "instanceof", "console", "Promise", "Error",
     "JSON", "Object", "Array", "String", "Number", "Boolean", "Map", "Set", "Date", "Math",
     "toBe", "toEqual", "toStrictEqual", "toThrow", "toMatch", "not", "resolves",
     "rejects", "deepEqual", "strictEqual", "equal", "ok", "throws", "toHaveProperty",
     "toContain", "toHaveLength", "toBeTruthy", "toBeFalsy", "toBeDefined", "toBeNull",
     "toBeUndefined", "toMatchObject", "toThrowError", "deepStrictEqual", "match", "length"}
) | test_globals("node")  # fmt: skip


def _js_names(source: str) -> AssertedNames:  # noqa: C901, PLR0912 - one pass, a rule a branch
    tokens = list(js_tokens(source))
    found = AssertedNames()
    bound: set[str] = set()
    depth_stack: list[int] = []  # bracket depths at which an assertion call opened
    depth = 0
    in_import = False
    for position, token in enumerate(tokens):
        before = tokens[position - 1] if position else None
        after = tokens[position + 1] if position + 1 < len(tokens) else None
        if token.kind == "punct":
            if token.text in "([{":
                if (
                    token.text == "("
                    and before is not None
                    and before.kind == "name"
                    and (before.text in {"expect", "assert"} or _is_assertion(tokens, position))
                ):
                    depth_stack.append(depth)
                depth += 1
            elif token.text in ")]}":
                depth -= 1
                while depth_stack and depth_stack[-1] >= depth:
                    depth_stack.pop()
            elif token.text == ";":
                in_import = False
            continue
        asserting = bool(depth_stack)
        if token.kind == "name":
            if token.text == "import":
                in_import = True
            elif before is not None and before.kind == "name" and before.text in _JS_DECLARE:
                bound.add(token.text)
            elif in_import or (before is not None and before.text == "."):
                if token.text != "as" and (before is None or before.text != "as"):
                    found.api.add(token.text)  # an imported name or a property
            elif asserting:
                found.identifiers.add(token.text)
            if in_import and token.text == "from":
                in_import = False
        elif token.kind == "string":
            subscript = before is not None and before.text == "[" and after and after.text == "]"
            called = _http_argument(tokens, position)
            if asserting or subscript or called or token.text.startswith("/"):
                found.strings.add(token.text)
    return found.named(_JS_IGNORED | WELL_KNOWN, bound)


def _is_assertion(tokens: list[Token], position: int) -> bool:
    """Whether the call opening at `position` is a matcher (`.toBe(`), an `assert.*(` method or
    an assertion of ava's or tap's test object (`t.is(`)."""
    name = tokens[position - 1].text
    owner = tokens[position - 3] if position >= 3 and tokens[position - 2].text == "." else None
    if owner is None:
        return False
    return name.startswith("to") or owner.text in {"assert", "t"}


def _http_argument(tokens: list[Token], position: int) -> bool:
    """Whether the string at `position` is the first argument of a request-like method."""
    if position < 3 or tokens[position - 1].text != "(":
        return False
    return tokens[position - 2].text in _HTTP_METHODS and tokens[position - 3].text == "."


# --- what code defines (the gold side) ---------------------------------------------------------


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _node_name(node: ast.AST) -> str | None:
    """The identifier a node names, if any."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.arg | ast.keyword):
        return node.arg
    return None


def _python_code_names(source: str) -> AssertedNames | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    skipped = _docstrings(tree)
    found = AssertedNames()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in skipped:
                found.strings.add(node.value)
        elif isinstance(node, ast.alias):
            found.identifiers.update((node.asname or node.name).split("."))
        elif (name := _node_name(node)) is not None:
            found.identifiers.add(name)
    return found


def code_names(path: str, source: str) -> AssertedNames | None:
    """Every identifier and string literal of a source file, comments and docstrings left out
    (their examples are not code); None for a language not read here, or unreadable source."""
    suffix = splitext(path)[1].lower()
    if suffix in PYTHON_SUFFIXES:
        return _python_code_names(source)
    if suffix in JS_SUFFIXES:
        found = AssertedNames()
        for token in js_tokens(source):
            if token.kind == "name":
                found.identifiers.add(token.text)
            elif token.kind == "string":
                found.strings.add(token.text)
        return found
    return None
