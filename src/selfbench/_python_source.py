"""Python source as the quality check and mining both read it: docstrings, lines. Pure."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

__all__ = ["is_docstring", "remove_docstrings", "source_lines"]

_BODIES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)
"""What holds statements: a statement, an `except` clause, a `case`."""
_LINE_END_RE = re.compile(r"\r\n|\r|\n")


def source_lines(text: str) -> list[str]:
    """The text's lines as `ast` numbers them: split at `\\r\\n`, `\\r` and `\\n` only
    (`str.splitlines` also splits at a form feed, `\\x1c`, `\\u2028` …, which `ast` does not)."""
    return _LINE_END_RE.split(text)


def is_docstring(statement: ast.stmt) -> bool:
    """Whether a statement is a string literal standing alone."""
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def remove_docstrings(
    tree: ast.AST, *, keep: Callable[[ast.AST, ast.stmt], bool] | None = None
) -> None:
    """Remove the docstring of every module, class and function under `tree`, in place (a body
    left empty gets `pass`, where the docstring was), but those `keep(holder, docstring)`
    keeps. Only statements are walked: no expression holds a module, class or function."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _BODIES) and _removable(node.body, node, keep):
            node.body = node.body[1:] or [ast.copy_location(ast.Pass(), node.body[0])]
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                stack.extend(item for item in inner if isinstance(item, _HOLDERS))


def _removable(
    body: list[ast.stmt], holder: ast.AST, keep: Callable[[ast.AST, ast.stmt], bool] | None
) -> bool:
    return bool(body) and is_docstring(body[0]) and (keep is None or not keep(holder, body[0]))
