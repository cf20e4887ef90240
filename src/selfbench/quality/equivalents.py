"""Variants of the gold that behave as it does: the coupling check on the gold's source text.

A held-out test that reads the gold's source (its SHA-256, a comment, its layout) passes the
gold and fails every other implementation of the same behaviour: it judges one implementation,
not the behaviour asked for, and it kills every mutant, so the mutation score cannot see it.
Each changed implementation file the gold leaves (`variants.is_implementation`) is rewritten
in up to three ways that cannot change what it does, by `EquivalentVariant`:

* `comments`: its comments dropped. Python by `tokenize` (docstrings kept, and a shebang or an
  encoding declaration on the first two lines); JavaScript and TypeScript by tree-sitter's
  comment nodes (`_js_parser`), a comment that spans lines replaced by a line break (a line
  break can end a statement), one between two tokens by a space; a directive comment
  (`/// <reference …>`, `@ts-…`, `@jsx…`, `@flow`) is kept;
* `reformatted`: its layout changed. Python: `ast.unparse` of the module (which drops comments
  too); JavaScript and TypeScript: a blank line before each top-level statement or comment
  that starts a line (a place no string or template literal reaches), unless a comment on a
  line of its own comes just before it (a directive such as `@ts-expect-error` reads the line
  after it);
* `renamed` (Python only): in each function whose body holds a changed line, the locals that
  are only assigned and read as plain names in its own scope renamed (`name` → `name_local`).
  Never renamed: parameters, names declared `global` or `nonlocal`, names bound another way
  (import, `except … as`, `del`, a `match` pattern), names a nested function, lambda, class or
  comprehension mentions, and names starting `__`; a function that mentions `locals`, `vars`,
  `dir`, `eval`, `exec`, `globals`, `f_locals`, `_getframe` or `currentframe` is left alone.

Each variant is checked before use, else dropped: a Python variant compiles, and its syntax tree
is the gold's (for `renamed`, the gold's with the same names renamed); a JavaScript or
TypeScript one parses without errors to the gold's tokens (for `comments`, without the dropped
comments and with a line break between the same tokens). A variant equal to the gold's text,
or to an earlier variant's, is dropped; so is every variant of a file whose text holds U+FFFD
(bytes that are not UTF-8, replaced when read: rewritten, they would change).

Pure but for `task_equivalents` and `equivalent_patch`, which read the repository as
`variants.gold_texts` and `variants.mutant_patch` do (nothing written to it).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from posixpath import splitext
from typing import Final

from tree_sitter import Node

from selfbench.artifacts.quality_record import EquivalentVariant
from selfbench.patches import parse_patch
from selfbench.quality._js_parser import is_js, parse
from selfbench.quality.variants import changed_lines, gold_texts, is_implementation, mutant_patch

__all__ = [
    "VARIANTS",
    "Equivalent",
    "equivalent_patch",
    "file_equivalents",
    "task_equivalents",
]

VARIANTS: Final[tuple[EquivalentVariant, ...]] = ("comments", "reformatted", "renamed")
"""The ways a file is rewritten, in the order they are made and listed."""


@dataclass(frozen=True, slots=True)
class Equivalent:
    """One changed file, as the gold leaves it, rewritten one way."""

    path: str
    variant: EquivalentVariant
    text: str


def file_equivalents(path: str, text: str, changed: Collection[int]) -> list[Equivalent]:
    """The variants of `path`'s `text` (the gold applied) that are checked to behave as it
    does, in `VARIANTS` order; `changed` holds the 1-based lines the gold added or changed."""
    if "\ufffd" in text:
        return []
    if splitext(path)[1] == ".py":
        makers = _python_makers(text, changed)
    elif is_js(path):
        makers = _js_makers(path, text)
    else:
        return []
    found: list[Equivalent] = []
    seen = {text}
    for variant, make in makers:
        made = make()
        if made is not None and made not in seen:
            seen.add(made)
            found.append(Equivalent(path, variant, made))
    return found


_Maker = tuple[EquivalentVariant, Callable[[], str | None]]


# --- Python ---------------------------------------------------------------------------------------


def _python_makers(text: str, changed: Collection[int]) -> list[_Maker]:
    return [
        ("comments", lambda: _checked(text, _python_without_comments(text))),
        ("reformatted", lambda: _checked(text, _unparsed(text))),
        ("renamed", lambda: _renamed(text, changed)),
    ]


def _tree(text: str) -> ast.Module | None:
    """`text`'s syntax tree when it compiles (warnings silenced), else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<equivalent>", "exec", dont_inherit=True)
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=False)


def _checked(text: str, variant: str | None) -> str | None:
    """`variant` when it compiles to the syntax tree `text` does, else None."""
    if variant is None:
        return None
    before, after = _tree(text), _tree(variant)
    if before is None or after is None or _dump(before) != _dump(after):
        return None
    return variant


_CODING_RE: Final = re.compile(r"[ \t\f]*#.*?coding[:=]")


def _kept_comment(row: int, comment: str, line: str) -> bool:
    """A shebang, or an encoding declaration (PEP 263): they are read before the code."""
    if row == 1 and comment.startswith("#!"):
        return True
    return row <= 2 and _CODING_RE.match(line) is not None  # PEP 263: the first two lines


def _python_without_comments(text: str) -> str | None:
    lines = io.StringIO(text).readlines()  # split as `tokenize` reads them
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    cuts = {
        token.start[0]: token.start[1]
        for token in tokens
        if token.type == tokenize.COMMENT
        and not _kept_comment(token.start[0], token.string, lines[token.start[0] - 1])
    }
    out: list[str] = []
    for row, line in enumerate(lines, 1):
        column = cuts.get(row)
        if column is None:
            out.append(line)
            continue
        code = line[:column].rstrip(" \t\f")
        if code:  # else the line was only the comment: it goes
            out.append(code + line[len(line.rstrip("\r\n")) :])
    return "".join(out)


def _unparsed(text: str) -> str | None:
    tree = _tree(text)
    if tree is None:
        return None
    try:
        return ast.unparse(tree) + "\n"
    except (ValueError, RecursionError):
        return None


# --- Python: locals renamed -----------------------------------------------------------------------

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
           ast.GeneratorExp)  # fmt: skip
_INTROSPECTION: Final = frozenset(
    {"locals", "vars", "dir", "eval", "exec", "globals", "f_locals", "_getframe", "currentframe"}
)
_SUFFIX = "_local"


def _renamed(text: str, changed: Collection[int]) -> str | None:
    """`text` with the locals of each function holding a changed line renamed, when it compiles
    to the gold's tree with the same names renamed."""
    tree = _tree(text)
    if tree is None:
        return None
    taken = set(re.findall(r"\w+", text))
    edits: list[tuple[int, int, int, str]] = []  # line, start byte, end byte, new name
    for function in ast.walk(tree):
        if isinstance(function, _FUNCTIONS) and _holds_changed(function, changed):
            for name, nodes in _renamable(function).items():
                new = _fresh(name, taken)
                for node in nodes:
                    node.id = new
                    edits.append((node.lineno, node.col_offset, node.end_col_offset or 0, new))
    if not edits:
        return None
    renamed = _edited(text, edits)
    after = _tree(renamed) if renamed is not None else None
    if after is None or _dump(after) != _dump(tree):
        return None
    return renamed


def _holds_changed(
    function: ast.FunctionDef | ast.AsyncFunctionDef, changed: Collection[int]
) -> bool:
    first, last = function.body[0].lineno, function.end_lineno or function.body[-1].lineno
    return any(first <= line <= last for line in changed)


def _fresh(name: str, taken: set[str]) -> str:
    new, count = f"{name}{_SUFFIX}", 1
    while new in taken:
        count += 1
        new = f"{name}{_SUFFIX}{count}"
    taken.add(new)
    return new


def _renamable(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.Name]]:
    """The function's plain locals (see the module) and their every occurrence."""
    if any(_INTROSPECTION.intersection(_read(node)) for node in ast.walk(function)):
        return {}
    own, nested = _scope_nodes(function)
    plain: dict[str, list[ast.Name]] = {}
    blocked = {argument.arg for argument in _arguments(function.args)}
    blocked.update(name for scope in nested for node in ast.walk(scope) for name in _names(node))
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load | ast.Store):
            plain.setdefault(node.id, []).append(node)
        else:
            blocked.update(_names(node))
    return {
        name: nodes
        for name, nodes in plain.items()
        if name not in blocked
        and not name.startswith("__")
        and any(isinstance(node.ctx, ast.Store) for node in nodes)
    }


def _scope_nodes(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[list[ast.AST], list[ast.AST]]:
    """The nodes of the function's body in its own scope, and the nested scopes in it (their
    decorators and defaults too, though they run in this one: their names are left alone)."""
    own: list[ast.AST] = []
    nested: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            nested.append(node)
        else:
            own.append(node)
            stack.extend(ast.iter_child_nodes(node))
    return own, nested


def _arguments(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    yield from (a for a in (arguments.vararg, arguments.kwarg) if a is not None)


def _names(node: ast.AST) -> Iterator[str]:
    """Every name `node` itself binds, declares or reads (not those of its children)."""
    match node:
        case ast.Name(id=name) | ast.arg(arg=name):
            yield name
        case ast.Global(names=names) | ast.Nonlocal(names=names):
            yield from names
        case ast.alias(name=name, asname=asname):
            yield (asname or name).split(".")[0]
        case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
            yield name
        case ast.ExceptHandler(name=str(name)) | ast.MatchAs(name=str(name)):
            yield name
        case ast.MatchStar(name=str(name)) | ast.MatchMapping(rest=str(name)):
            yield name
        case _:
            pass


def _read(node: ast.AST) -> Iterator[str]:
    """The name or attribute `node` reads (to find introspection)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr


def _edited(text: str, edits: Sequence[tuple[int, int, int, str]]) -> str | None:
    """`text` with each (line, start byte, end byte) span replaced, when every span holds a
    name (the AST's offsets are UTF-8 bytes of the line); None when one does not."""
    lines = [line.encode("utf-8", "surrogatepass") for line in io.StringIO(text).readlines()]
    for row, start, end, new in sorted(edits, key=lambda edit: (edit[0], -edit[1])):
        line = lines[row - 1]
        if not re.fullmatch(rb"\w+", line[start:end]):
            return None
        lines[row - 1] = line[:start] + new.encode() + line[end:]
    return b"".join(lines).decode("utf-8", "surrogatepass")


# --- JavaScript and TypeScript --------------------------------------------------------------------

_COMMENTS: Final = frozenset({"comment", "html_comment"})
_DIRECTIVE_RE: Final = re.compile(rb"^///|@(?:ts-|jsx|flow)")


def _js_makers(path: str, text: str) -> list[_Maker]:
    source = text.encode("utf-8", "surrogatepass")
    return [
        ("comments", lambda: _js_without_comments(path, source)),
        ("reformatted", lambda: _js_spaced(path, source)),
    ]


def _leaves(root: Node) -> Iterator[Node]:
    """Every leaf under `root` in source order, a comment as one leaf; no recursion."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0 or node.type in _COMMENTS:
            yield node
        else:
            stack.extend(reversed(node.children))


def _js_tokens(path: str, source: bytes, *, comments: bool) -> list[tuple[str, bytes, bool]] | None:
    """The leaves' kinds and texts, each with whether a line break comes before it since the
    last leaf kept (comments kept or not); None when the source has syntax errors."""
    tree = parse(source, path=path)
    if tree.root_node.has_error:
        return None
    tokens: list[tuple[str, bytes, bool]] = []
    at = 0
    for leaf in _leaves(tree.root_node):
        if leaf.type in _COMMENTS and not comments:
            continue
        broken = bool(tokens) and b"\n" in source[at : leaf.start_byte]  # none before the first
        tokens.append((leaf.type, source[leaf.start_byte : leaf.end_byte], broken))
        at = leaf.end_byte
    return tokens


def _js_without_comments(path: str, source: bytes) -> str | None:
    tree = parse(source, path=path)
    if tree.root_node.has_error:
        return None
    out, at = bytearray(), 0
    for leaf in _leaves(tree.root_node):
        text = source[leaf.start_byte : leaf.end_byte]
        if leaf.type not in _COMMENTS or _DIRECTIVE_RE.search(text):
            continue
        start, end = leaf.start_byte, leaf.end_byte
        while start > at and source[start - 1 : start] in {b" ", b"\t"}:
            start -= 1
        ending = _ending(source[end : end + 2])
        if ending is not None and (start == 0 or source[start - 1 : start] == b"\n"):
            filler, end = b"", end + ending  # the comment was its lines: they go
        elif b"\n" in text:
            filler = b"\n"  # a line break may end a statement: it stays
        else:  # two tokens must not run together
            filler = (
                b" "
                if start > at and ending is None and source[end : end + 1] not in _SPACE
                else b""
            )
        out += source[at:start] + filler
        at = end
    out += source[at:]
    return _same_js(path, source, bytes(out), comments=False)


_SPACE: Final = frozenset({b" ", b"\t"})


def _ending(after: bytes) -> int | None:
    """The length of the line ending `after` starts with (0 at the end), None if none."""
    if after[:1] in {b"", b"\n"}:
        return len(after[:1])
    return 2 if after == b"\r\n" else None


def _js_spaced(path: str, source: bytes) -> str | None:
    tree = parse(source, path=path)
    if tree.root_node.has_error:
        return None
    newline = b"\r\n" if b"\r\n" in source else b"\n"
    out, at = bytearray(), 0
    for before, statement in pairwise(tree.root_node.named_children):
        line = _line_start(source, statement)
        attached = before.type in _COMMENTS and _line_start(source, before) is not None
        if line is not None and not attached:
            out += source[at:line] + newline
            at = line
    out += source[at:]
    return _same_js(path, source, bytes(out), comments=True)


def _line_start(source: bytes, node: Node) -> int | None:
    """Where `node`'s line starts, when only spaces come before it on that line."""
    line = source.rfind(b"\n", 0, node.start_byte) + 1
    return line if not source[line : node.start_byte].strip(b" \t") else None


def _same_js(path: str, before: bytes, after: bytes, *, comments: bool) -> str | None:
    """`after` as text when it has `before`'s tokens (see `_js_tokens`; the line breaks
    compared only without comments, where they may end a statement), else None."""
    old = _js_tokens(path, before, comments=comments)
    new = _js_tokens(path, after, comments=comments)
    if old is None or new is None:
        return None
    if comments:
        old = [(kind, text, False) for kind, text, _ in old]
        new = [(kind, text, False) for kind, text, _ in new]
    return after.decode("utf-8", "surrogatepass") if old == new else None


# --- the task -------------------------------------------------------------------------------------


def task_equivalents(repo: Path, base: str, gold_patch: bytes) -> list[Equivalent]:
    """The variants of every changed implementation file the gold leaves, by path, each
    path's in `VARIANTS` order.

    Raises:
        PatchError: the gold patch does not parse.
        GitError: the gold patch does not apply at `base`.
    """
    paths = sorted(
        change.new_path
        for change in parse_patch(gold_patch).files
        if change.new_path is not None
        and change.status != "deleted"
        and not change.binary
        and is_implementation(change.new_path)
    )
    if not paths:
        return []
    texts = gold_texts(repo, base, gold_patch, paths)
    lines = changed_lines(gold_patch)
    return [
        equivalent
        for path in paths
        if path in texts
        for equivalent in file_equivalents(path, texts[path], lines.get(path, frozenset()))
    ]


def equivalent_patch(
    repo: Path, base: str, gold_patch: bytes, chosen: Sequence[Equivalent]
) -> bytes:
    """The gold patch with each of `chosen`'s files (one variant each) replaced by its text.

    Raises:
        GitError: the base commit is missing, the gold does not apply, or a path is not in it.
    """
    patch = gold_patch
    for equivalent in chosen:
        patch = mutant_patch(repo, base, patch, equivalent.path, equivalent.text)
    return patch
