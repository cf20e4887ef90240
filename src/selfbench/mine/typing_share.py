"""Changes whose code is mostly typing: ranked last in their tier, with the reason. Pure.

The code chores (`selfbench.mine.code_chores`) take out a change whose code is typing alone,
or typing besides a few lines. A larger typing sweep does some work besides (`while 1` becomes
`while True`, a `None` check is added for the checker, an `__init__` calls `super()`), and its
size ranks it among the hardest candidates though no instruction asks for it and no test
checks it (werkzeug's "redo type annotations", "enable more mypy checks"). Such a change stays
a candidate, ranked after every other of its tier (`selfbench.mine.rank`), when

1. typing is at least two thirds (`MOSTLY`) of its implementation's changed lines of code: in
   Python, the changed lines of the two versions written out (`ast.unparse`, every docstring
   removed: a docstring is neither typing nor work here) that `strip_typing` takes away are
   typing, those it leaves are work; stubs (`*.pyi`, `py.typed`, `*.d.ts`) and type-checker
   configuration are typing (their changed lines), other configuration counts as neither, any
   other file is work;
2. and its tests, read alike, change no more lines of code besides typing than its
   implementation does: tests that check something of their own (a new parameter, a changed
   default) make it work whatever its typing share (werkzeug's "Fix CacheControl issues": two
   thirds stub types, and tests of its new defaults).

A file that cannot be read or parsed keeps the change's rank. Only the changes whose patch
(`-U0`, the code chores' own) lets typing explain at least half of the code tokens it changes
(`_code_tokens.misfits`; a stub's tokens are all typing) are read whole and parsed.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from selfbench._python_source import remove_docstrings, source_lines
from selfbench.mine._code_tokens import misfits
from selfbench.mine.chores import MOSTLY_TYPING
from selfbench.mine.code_chores import (
    CodeFile,
    ImplementationFile,
    Reader,
    code_files,
    file_kind,
)
from selfbench.mine.python_chores import ModulePair, Strip, _changed_count, strip_typing

__all__ = ["MOSTLY", "MeasuredChange", "MeasuredFile", "judge_typing", "typing_last_reasons"]

MOSTLY: Final = (2, 3)
"""The least share of typing (numerator, denominator) among the changed lines of code."""
_MOST_FILES: Final = 200
"""A change with more Python files than this is not read: it keeps its rank."""


class MeasuredFile(NamedTuple):
    """A changed file as the walk measured it: path, old path (a rename's), binary, changed
    lines, and whether it is a test file."""

    path: str
    old_path: str | None
    binary: bool
    lines: int
    test: bool


class MeasuredChange(NamedTuple):
    """A change's base and completed commits and its implementation and test files."""

    base: str
    commit: str
    files: tuple[MeasuredFile, ...]


def _strip_every_docstring(tree: ast.Module, _: str) -> None:
    remove_docstrings(tree)


_CODE: Final[tuple[Strip, ...]] = (_strip_every_docstring,)
_WORK: Final[tuple[Strip, ...]] = (_strip_every_docstring, strip_typing)

_Key = tuple[int, str, bool]
Texts = Mapping[str, tuple[str, str]]


def _screened(pairs: Sequence[tuple[MeasuredFile, CodeFile]]) -> bool:
    """Whether typing may explain half the code tokens the implementation's hunks change."""
    changed = unexplained = 0
    for measured, code in pairs:
        kind = file_kind(measured.path)
        if measured.test or measured.binary:
            continue
        found = misfits("python", code.hunks)
        if kind == "stub":
            changed += found.tokens
        elif kind == "python":
            changed += found.comments or 0
            unexplained += found.typing or 0
    return changed > 0 and unexplained * 2 <= changed


def _python(file: MeasuredFile) -> bool:
    return not file.binary and file_kind(file.path) == "python"


def _lines(old: str, new: str) -> tuple[int, int] | None:
    """A Python file's changed lines of code that are typing, and those that are not."""
    pair = ModulePair(old, new)
    code = _changed(pair, _CODE)
    work = None if code is None else _changed(pair, _WORK)
    if code is None or work is None:
        return None
    return max(code - work, 0), work


def _changed(pair: ModulePair, strips: tuple[Strip, ...]) -> int | None:
    """`ModulePair.changed_lines`, but a statement (at the top, or a class's) whose source is
    the same on the other side is one line, not written out: only what changed is unparsed."""
    same = pair.same(strips)
    if same is None or same:
        return None if same is None else 0
    trees = pair.trees
    if trees is None:
        return None
    sides = [source_lines(text) for text in pair.texts]
    sources = [_sources(tree, lines) for tree, lines in zip(trees, sides, strict=True)]
    try:
        before, after = (
            _rendered(tree.body, lines, sources[1 - side], pair.context_free)
            for side, (tree, lines) in enumerate(zip(trees, sides, strict=True))
        )
        return _changed_count(list(before), list(after))
    except (ValueError, RecursionError, MemoryError):
        return None


def _source(node: ast.stmt, lines: list[str]) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return "\n".join(lines[first - 1 : node.end_lineno or node.lineno])


def _sources(tree: ast.Module, lines: list[str]) -> set[str]:
    found = set()
    for node in tree.body:
        found.add(_source(node, lines))
        if isinstance(node, ast.ClassDef):
            found.update(_source(member, lines) for member in node.body)
    return found


def _rendered(
    body: list[ast.stmt], lines: list[str], other: set[str], context_free: bool
) -> list[str]:
    out: list[str] = []
    for node in body:
        text = _source(node, lines)
        if context_free and text in other and not isinstance(node, ast.Import | ast.ImportFrom):
            out.append(text)
        elif isinstance(node, ast.ClassDef):
            out.append(f"class {node.name}")
            out.extend(_rendered(node.body, lines, other, context_free))
        else:
            out.extend(ast.unparse(node).split("\n"))
    return out


def judge_typing(files: Sequence[MeasuredFile], texts: Texts) -> str | None:
    """The reason a change is ranked last (see the module), or None; `texts`: each Python
    file's old and new text by path."""
    typing = work = tests = 0
    for file in files:
        kind = file_kind(file.path)
        if _python(file):
            if file.path not in texts:
                return None
            counted = _lines(*texts[file.path])
            if counted is None:
                return None
            if file.test:
                tests += counted[1]
            else:
                typing, work = typing + counted[0], work + counted[1]
        elif file.test:
            tests += file.lines
        elif kind in ("stub", "type-checker"):
            typing += file.lines
        elif kind != "configuration":
            work += file.lines
    least, of = MOSTLY
    if typing == 0 or typing * of < (typing + work) * least or tests > work:
        return None
    return MOSTLY_TYPING.format(typing=typing, lines=typing + work, tests=tests)


def typing_last_reasons(
    changes: Sequence[MeasuredChange], patches: Sequence[Mapping[str, bytes]], read: Reader
) -> list[str | None]:
    """Each change's reason to be ranked last, or None; `patches[i]`: change i's patch without
    context, by file section. The files of the changes screened in are read in one call."""
    pairs = [
        list(zip(change.files, _code_files(change, sections), strict=True))
        for change, sections in zip(changes, patches, strict=True)
    ]
    chosen = [
        index
        for index, found in enumerate(pairs)
        if sum(_python(file) for file, _ in found) <= _MOST_FILES and _screened(found)
    ]
    names: dict[_Key, str] = {}
    for index in chosen:
        change = changes[index]
        for file, code in pairs[index]:
            if not _python(file):
                continue
            if code.old_path is not None:
                names[index, file.path, False] = f"{change.base}:{code.old_path}"
            if code.present:
                names[index, file.path, True] = f"{change.commit}:{file.path}"
    texts = read(names) if names else {}
    reasons: list[str | None] = [None] * len(changes)
    for index in chosen:
        mine = _texts_of(index, pairs[index], texts)
        if mine is not None:
            reasons[index] = judge_typing(changes[index].files, mine)
    return reasons


def _code_files(change: MeasuredChange, sections: Mapping[str, bytes]) -> tuple[CodeFile, ...]:
    files = [ImplementationFile(f.path, f.old_path, f.binary) for f in change.files]
    return code_files(files, sections)


def _texts_of(
    index: int, pairs: Sequence[tuple[MeasuredFile, CodeFile]], texts: Mapping[_Key, str | None]
) -> dict[str, tuple[str, str]] | None:
    mine = {}
    for file, code in pairs:
        if not _python(file):
            continue
        old = texts.get((index, file.path, False)) if code.old_path is not None else ""
        new = texts.get((index, file.path, True)) if code.present else ""
        if old is None or new is None:
            return None
        mine[file.path] = (old, new)
    return mine
