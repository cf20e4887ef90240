"""JavaScript and TypeScript syntax trees, by tree-sitter's own grammars (pinned in constraints).

One parser per file kind, chosen by the file's extension: `.ts`, `.mts`, `.cts` by the
TypeScript grammar, `.tsx` by TSX, everything else (`.js`, `.mjs`, `.cjs`, `.jsx`) by the
JavaScript grammar, which reads JSX too.
"""

from __future__ import annotations

from functools import cache
from posixpath import splitext
from typing import Final

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Parser, Tree

__all__ = ["JS_EXTENSIONS", "is_js", "parse"]

JS_EXTENSIONS: Final = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})


def is_js(path: str) -> bool:
    """Whether `path` names a JavaScript or TypeScript source file."""
    return splitext(path)[1].lower() in JS_EXTENSIONS


@cache
def _parser(kind: str) -> Parser:
    if kind == "typescript":
        return Parser(Language(tree_sitter_typescript.language_typescript()))
    if kind == "tsx":
        return Parser(Language(tree_sitter_typescript.language_tsx()))
    return Parser(Language(tree_sitter_javascript.language()))


def parse(source: bytes, *, path: str, old_tree: Tree | None = None) -> Tree:
    """The syntax tree of `source`, read by the grammar `path`'s extension names.

    Offsets in the tree (`start_byte`, `end_byte`) are into `source`'s UTF-8 bytes; a tree with
    syntax errors still comes back (`tree.root_node.has_error` says so). `old_tree`, the tree of
    an earlier text already told of the edit (`Tree.edit`), lets the parser reuse what did not
    change: the result is the same as without it, only faster.
    """
    extension = splitext(path)[1].lower()
    kind = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}
    parser = _parser(kind.get(extension, "javascript"))
    return parser.parse(source) if old_tree is None else parser.parse(source, old_tree)
