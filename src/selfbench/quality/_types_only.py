"""Whether a change to a TypeScript file is to its types alone: the code that runs is the same.

A test runner that transpiles TypeScript (vitest, jest with a transformer, bun) erases types
before any test runs, so no fail-to-pass test can ever need a type-only change; ablation finds
it unneeded by construction, and that says nothing of the task. The file's runtime text is its
source without its type-level nodes (interfaces, type aliases, annotations, type arguments and
parameters, `declare` blocks, `import type` and `export type`, `as`/`satisfies` types, `!`),
compared token by token, comments aside: any other difference, an `enum` included, is a change
to what runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from posixpath import splitext

from tree_sitter import Node

from selfbench.quality._js_parser import parse

__all__ = ["types_only"]

_TYPESCRIPT = frozenset({".ts", ".mts", ".cts", ".tsx"})
_TYPE_NODES = frozenset(
    {
        "interface_declaration", "type_alias_declaration", "type_annotation", "type_arguments",
        "type_parameters", "ambient_declaration", "abstract_method_signature",
        "accessibility_modifier", "override_modifier", "readonly", "index_signature",
        "asserts_annotation", "type_predicate_annotation", "opting_type_annotation",
        "omitting_type_annotation", "adding_type_annotation", "implements_clause",
    }
)  # fmt: skip
"""Nodes that are types through and through: erased whole."""


def _erased(node: Node) -> bool:
    if node.type in _TYPE_NODES or node.type == "comment":
        return True
    if node.type in {"import_statement", "export_statement"}:
        words = [child.type for child in node.children[:2]]
        if "type" in words:  # `import type {…}`, `export type {…}`
            return True
        declaration = node.child_by_field_name("declaration")
        if declaration is not None and declaration.type in _TYPE_NODES:
            return True
    if node.type in {"import_specifier", "export_specifier"} and node.children:
        return node.children[0].type == "type"  # `import { type X }`
    return False


def _runtime_tokens(text: str, path: str) -> list[bytes] | None:
    """The source's bytes without its type-level nodes, split on whitespace; None when the
    file does not parse cleanly (nothing can then be said)."""
    source = text.encode("utf-8")
    root = parse(source, path=path).root_node
    if root.has_error:
        return None
    kept: list[bytes] = []
    position = 0
    for node in _type_nodes(root):
        kept.append(source[position : node.start_byte])
        position = node.end_byte
    kept.append(source[position:])
    joined = b" ".join(kept)
    for mark in (b"{", b"}", b"(", b")", b",", b";", b":", b"!"):
        joined = joined.replace(mark, b" " + mark + b" ")
    tokens = joined.split()
    return [token for token in tokens if token not in {b",", b";", b"!", b"as", b"satisfies"}]


def _type_nodes(node: Node) -> Iterator[Node]:
    """The outermost type-level nodes under `node`, in source order."""
    for index, child in enumerate(node.children):
        if _erased(child) or (
            node.type in {"as_expression", "satisfies_expression"}
            and index == len(node.children) - 1
        ):
            yield child
        else:
            yield from _type_nodes(child)


def types_only(path: str, base_text: str | None, gold_text: str | None) -> bool:
    """Whether `path`'s change from `base_text` to `gold_text` (None: absent on that side)
    leaves the TypeScript that runs as it was; False for any other language or a file that does
    not parse."""
    if splitext(path)[1].lower() not in _TYPESCRIPT and not path.endswith(".d.ts"):
        return False
    if path.endswith(".d.ts"):
        return True
    before = _runtime_tokens(base_text or "", path)
    after = _runtime_tokens(gold_text or "", path)
    return before is not None and after is not None and before == after
