"""Whether two versions of a source file differ in documentation only: docstrings and comments.

Python is compared by its syntax tree (`ast`) with every docstring removed; JavaScript and
TypeScript by their tokens (tree-sitter's leaves, with their text) with comments left out. A
file of any other kind, or one that does not parse, is never documentation only.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from posixpath import splitext

from tree_sitter import Node

from selfbench._python_source import remove_docstrings
from selfbench.quality._js_parser import is_js, parse

__all__ = ["documentation_only"]


def documentation_only(path: str, before: str, after: str) -> bool:
    """True when `before` and `after` (two texts of `path`) differ, and only in docstrings or
    comments: code that behaves the same, whatever its documentation says."""
    if before == after:
        return False
    if splitext(path)[1] == ".py":
        code = _python_code(before)
        return code is not None and code == _python_code(after)
    if is_js(path):
        tokens = _js_code(before, path)
        return tokens is not None and tokens == _js_code(after, path)
    return False


def _python_code(text: str) -> str | None:
    """The syntax tree without docstrings (and without positions), or None if it does not
    parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an invalid escape in a docstring is no error here
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    remove_docstrings(tree)
    return ast.dump(tree, include_attributes=False)


def _js_code(text: str, path: str) -> tuple[tuple[str, bytes], ...] | None:
    """The leaves' kinds and texts, comments left out, or None if the file has syntax
    errors."""
    source = text.encode("utf-8", "surrogatepass")
    tree = parse(source, path=path)
    if tree.root_node.has_error:
        return None
    return tuple(
        (leaf.type, source[leaf.start_byte : leaf.end_byte]) for leaf in _leaves(tree.root_node)
    )


def _leaves(root: Node) -> Iterator[Node]:
    """Every leaf under `root` in source order, comments (and what they hold) left out; no
    recursion, so a deep file cannot exhaust the stack."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in {"comment", "html_comment"}:
            continue
        if node.child_count == 0:
            yield node
        else:
            stack.extend(reversed(node.children))
