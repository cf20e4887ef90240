"""Mutants of JavaScript and TypeScript source, read by tree-sitter's grammars (SPEC §13, Quality).

`js_mutants` makes the small changes mutation testing applies to the lines a gold patch added or
changed, one at a time: a comparison, arithmetic or boolean operator, a literal, a returned value
(`undefined`, or an always-equal object: `{ asymmetricMatch: () => true }`, which jest's and
vitest's `toEqual` take as equal to anything, cast `as any` in TypeScript), a whole statement.
Only code the program runs is mutated: TypeScript's types (annotations, interfaces, type
aliases, enums, `declare`), imports, export lists, module specifiers, object keys, directives,
JSX text and the text of template strings stay as they are.

`js_statements` finds the statements statement ablation removes (`quality.statements`).

Every mutant parses: its text is parsed again, and one with a syntax error, or whose new token
runs into a neighbour (`a+-b` → `a--b`), is dropped; so is `??` → `||` where that would mix `??`
with `||` without parentheses, which JavaScript refuses though the grammar reads it. A file that
does not parse cleanly gets no mutants: every mutant of it would carry its errors.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterator
from math import isfinite
from posixpath import splitext
from typing import Final, NamedTuple

from tree_sitter import Node, Tree

from selfbench.quality._js_parser import parse
from selfbench.quality.mutants import Mutant

__all__ = ["js_mutants", "js_statements"]

_BINARY: Final[dict[str, tuple[str, str]]] = {
    "<": ("comparison", "<="),
    "<=": ("comparison", "<"),
    ">": ("comparison", ">="),
    ">=": ("comparison", ">"),
    "===": ("comparison", "!=="),
    "!==": ("comparison", "==="),
    "==": ("comparison", "!="),
    "!=": ("comparison", "=="),
    "+": ("arithmetic", "-"),
    "-": ("arithmetic", "+"),
    "*": ("arithmetic", "/"),
    "/": ("arithmetic", "*"),
    "%": ("arithmetic", "*"),
    "&&": ("boolean", "||"),
    "||": ("boolean", "&&"),
    "??": ("boolean", "||"),
}
"""A binary operator → its mutation family and the operator that replaces it."""

_AUGMENTED: Final = {"+=": "-=", "-=": "+="}

_NOT_RUN: Final = frozenset(
    {
        # TypeScript's types, wherever they stand (`as T` and `satisfies T` included)
        "abstract_method_signature",
        "adding_type_annotation",
        "ambient_declaration",
        "array_type",
        "asserts_annotation",
        "call_signature",
        "conditional_type",
        "constraint",
        "construct_signature",
        "constructor_type",
        "default_type",
        "enum_declaration",
        "existential_type",
        "extends_type_clause",
        "flow_maybe_type",
        "function_signature",
        "function_type",
        "generic_type",
        "implements_clause",
        "index_signature",
        "index_type_query",
        "infer_type",
        "interface_declaration",
        "intersection_type",
        "literal_type",
        "lookup_type",
        "mapped_type_clause",
        "method_signature",
        "nested_type_identifier",
        "object_type",
        "omitting_type_annotation",
        "opting_type_annotation",
        "optional_type",
        "parenthesized_type",
        "predefined_type",
        "property_signature",
        "readonly_type",
        "rest_type",
        "template_literal_type",
        "template_type",
        "this_type",
        "tuple_type",
        "type_alias_declaration",
        "type_annotation",
        "type_arguments",
        "type_identifier",
        "type_parameter",
        "type_parameters",
        "type_predicate",
        "type_predicate_annotation",
        "type_query",
        "union_type",
        # what names modules and bindings, and text that is not code
        "import_statement",
        "export_clause",
        "jsx_text",
        "comment",
        "html_comment",
        "regex",
    }
)
"""Subtrees never mutated."""

_STATEMENT_LISTS: Final = frozenset(
    {
        "program",
        "statement_block",
        "switch_case",
        "switch_default",
        "else_clause",
        "labeled_statement",
    }
)
_STATEMENT_BODIES: Final = frozenset(
    {
        "if_statement",
        "while_statement",
        "do_statement",
        "for_statement",
        "for_in_statement",
        "with_statement",
    }
)
_SIMPLE_STATEMENTS: Final = frozenset(
    {
        "expression_statement",
        "lexical_declaration",
        "variable_declaration",
        "return_statement",
        "throw_statement",
        "export_statement",
    }
)
_COMPOUND_STATEMENTS: Final = _STATEMENT_BODIES | {
    "try_statement",
    "switch_statement",
    "labeled_statement",
    "function_declaration",
    "generator_function_declaration",
    "class_declaration",
}
"""What `js_statements` removes: a simple statement that reaches a changed line, a compound one
whose lines all changed (an `export` of a function or class is compound)."""
_KEY_FIELDS: Final = ("key", "name", "property")
_TEXTS: Final = frozenset({"string", "template_string"})
_DESCRIPTION_LIMIT: Final = 60
_ALWAYS_EQUAL: Final = "{ asymmetricMatch: () => true }"
"""An object jest's and vitest's `toEqual` (and `toStrictEqual`) take as equal to anything;
`toBe` compares identity and kills it."""
_TYPESCRIPT: Final = frozenset({".ts", ".mts", ".cts", ".tsx"})


class _Edit(NamedTuple):
    """A mutation in bytes of the source: `source[start:end]` becomes one of `replacements`.

    The first replacement that leaves the program parsing, token for token, is the mutant's.
    """

    start: int
    end: int
    row: int
    column: int
    end_row: int
    end_column: int
    operator: str
    description: str
    replacements: tuple[str, ...]


def js_mutants(path: str, text: str, lines: Collection[int]) -> list[Mutant]:
    """Every mutant of `text` (the file `path` as the gold leaves it) that starts on `lines`.

    `lines` are 1-based and end at `\n`. A mutant starts where the span it replaces starts (the
    operator token, the literal, the returned value, the statement). Ordered by start offset,
    operator and description; the same input always gives the same list.
    """
    source = text.encode("utf-8", "surrogatepass")
    tree = parse(source, path=path)
    if tree.root_node.has_error:
        return []
    rows = sorted({line - 1 for line in lines})
    wanted = frozenset(rows)
    to_char = _char_offsets(text)
    mutants: list[Mutant] = []
    typed = splitext(path)[1].lower() in _TYPESCRIPT
    for node in _nodes(tree.root_node, rows):
        for found in _RULES.get(node.type, _no_edits)(node, source):
            edit = _typed(found) if typed else found
            replacement = _checked(tree, source, path, edit) if edit.row in wanted else None
            if replacement is None:
                continue
            mutants.append(
                Mutant(
                    path=path,
                    line=edit.row + 1,
                    operator=edit.operator,
                    description=edit.description,
                    start=to_char(edit.start),
                    end=to_char(edit.end),
                    replacement=replacement,
                )
            )
    mutants.sort(key=lambda m: (m.start, m.operator, m.description, m.end, m.replacement))
    return mutants


def js_statements(path: str, text: str, lines: Collection[int]) -> list[Mutant]:
    """Each statement of `text` that may be removed for statement ablation (`_SIMPLE_STATEMENTS`,
    `_COMPOUND_STATEMENTS`), where any statement could stand; as a `Mutant` (operator
    `statement`) that puts `;` in its place, as a `delete` mutant does, so that the same removal
    leaves the same text. Never removed: directives, imports, export lists and re-exports,
    TypeScript's types. The description is the statement's first line; in the order of the
    file; none for a file that does not parse cleanly.
    """
    source = text.encode("utf-8", "surrogatepass")
    tree = parse(source, path=path)
    rows = sorted({line - 1 for line in lines})
    if tree.root_node.has_error or not rows:
        return []
    wanted = frozenset(rows)
    to_char = _char_offsets(text)
    found: list[Mutant] = []
    for node in _nodes(tree.root_node, rows):
        span = range(node.start_point.row, node.end_point.row + 1)
        if not _removable(node) or (_compound(node) and not wanted.issuperset(span)):
            continue
        written = _short(_text(source, node).splitlines()[0])
        edit = _edit(node, "statement", written, ";")
        if _checked(tree, source, path, edit) is None:
            continue
        start, end = to_char(node.start_byte), to_char(node.end_byte)
        found.append(Mutant(path, node.start_point.row + 1, "statement", written, start, end, ";"))
    return sorted(found, key=lambda m: (m.start, m.end))


def _removable(node: Node) -> bool:
    if node.type not in _SIMPLE_STATEMENTS | _COMPOUND_STATEMENTS:
        return False
    if not _in_statement_position(node):
        return False
    if node.type == "export_statement":  # of a value: never an export list, nor a type
        declaration = node.child_by_field_name("declaration")
        return declaration is not None and declaration.type not in _NOT_RUN
    expression = node.named_children[0] if node.named_children else None
    return node.type != "expression_statement" or (
        expression is not None and expression.type not in _TEXTS
    )


def _compound(node: Node) -> bool:
    if node.type == "export_statement":
        declaration = node.child_by_field_name("declaration")
        return declaration is not None and declaration.type in _COMPOUND_STATEMENTS
    return node.type in _COMPOUND_STATEMENTS


def _typed(edit: _Edit) -> _Edit:
    """`edit` as TypeScript needs it: the always-equal object cast to `any`, so that a type
    check (ts-jest's) does not kill it for its type alone."""
    if edit.operator != "always-equal":
        return edit
    return edit._replace(replacements=(f"({_ALWAYS_EQUAL}) as any",))


def _nodes(root: Node, rows: list[int]) -> Iterator[Node]:
    """The nodes that may be mutated and reach one of `rows` (0-based), in source order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _NOT_RUN:
            continue
        at = bisect_left(rows, node.start_point.row)
        if at == len(rows) or rows[at] > node.end_point.row:
            continue
        yield node
        stack.extend(reversed(node.children))


def _checked(tree: Tree, source: bytes, path: str, edit: _Edit) -> str | None:
    """The first of `edit`'s replacements whose result parses with its tokens intact."""
    for replacement in edit.replacements:
        new = replacement.encode("utf-8", "surrogatepass")
        mutated = source[: edit.start] + new + source[edit.end :]
        if mutated == source:
            continue
        new_end = edit.start + len(new)
        old = tree.copy()
        old.edit(
            edit.start,
            edit.end,
            new_end,
            (edit.row, edit.column),
            (edit.end_row, edit.end_column),
            (edit.row, edit.column + len(new)),
        )
        root = parse(mutated, path=path, old_tree=old).root_node
        if not root.has_error and _intact(root, mutated, edit.start, new_end):
            return replacement
    return None


def _intact(root: Node, source: bytes, start: int, end: int) -> bool:
    """Whether `source[start:end]`, spaces aside, is one node of the tree, and its neighbours
    end and start where it does (no token runs into another)."""
    span = source[start:end]
    token_start = start + len(span) - len(span.lstrip())
    token_end = end - len(span) + len(span.rstrip())
    if token_end > token_start:
        node = root.descendant_for_byte_range(token_start, token_end)
        if node is None or (node.start_byte, node.end_byte) != (token_start, token_end):
            return False
    if start > 0 and not source[start - 1 : start].isspace():
        before = root.descendant_for_byte_range(start - 1, start)
        if before is None or before.end_byte != start:
            return False
    if end < len(source) and not source[end : end + 1].isspace():
        after = root.descendant_for_byte_range(end, end + 1)
        if after is None or after.start_byte != end:
            return False
    return True


def _char_offsets(text: str) -> Callable[[int], int]:
    """Map a UTF-8 byte offset of `text` (at a character's start) to its character offset."""
    if text.isascii():
        return lambda offset: offset
    ends: list[int] = []  # the byte offset just after each character of more than one byte
    extra: list[int] = []  # how many bytes beyond one per character come before that offset
    offset = total = 0
    for character in text:
        code = ord(character)
        size = 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        offset += size
        if size > 1:
            total += size - 1
            ends.append(offset)
            extra.append(total)

    def to_char(byte: int) -> int:
        at = bisect_right(ends, byte)
        return byte - (extra[at - 1] if at else 0)

    return to_char


def _edit(node: Node, operator: str, description: str, *replacements: str) -> _Edit:
    return _Edit(
        node.start_byte,
        node.end_byte,
        node.start_point.row,
        node.start_point.column,
        node.end_point.row,
        node.end_point.column,
        operator,
        description,
        replacements,
    )


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


def _short(text: str) -> str:
    """`text` on one line, at most `_DESCRIPTION_LIMIT` characters."""
    line = " ".join(text.split())
    if len(line) <= _DESCRIPTION_LIMIT:
        return line
    return line[: _DESCRIPTION_LIMIT - 1] + "…"


def _no_edits(_node: Node, _source: bytes) -> Iterator[_Edit]:
    return iter(())


def _binary(node: Node, _source: bytes) -> Iterator[_Edit]:
    token = node.child_by_field_name("operator")
    if token is None or token.type not in _BINARY:
        return
    operator, new = _BINARY[token.type]
    if token.type == "+" and _concatenates(node):
        return
    if token.type == "??" and _mixes_nullish(node):
        return
    yield _edit(token, operator, f"{token.type} → {new}", new)


def _augmented(node: Node, _source: bytes) -> Iterator[_Edit]:
    token = node.child_by_field_name("operator")
    if token is None or token.type not in _AUGMENTED:
        return
    if token.type == "+=" and _concatenates(node):
        return
    new = _AUGMENTED[token.type]
    yield _edit(token, "arithmetic", f"{token.type} → {new}", new)


def _unary(node: Node, source: bytes) -> Iterator[_Edit]:
    token = node.child_by_field_name("operator")
    argument = node.child_by_field_name("argument")
    if token is None or argument is None or token.type != "!":
        return
    operand = _short(_text(source, argument))
    # Dropping `!` may join its neighbours (`return!x`): then a space stands in its place.
    yield _edit(token, "boolean", f"!{operand} → {operand}", "", " ")


def _boolean_literal(node: Node, _source: bytes) -> Iterator[_Edit]:
    new = "false" if node.type == "true" else "true"
    yield _edit(node, "constant", f"{node.type} → {new}", new)


def _number(node: Node, source: bytes) -> Iterator[_Edit]:
    if _is_key(node):
        return
    literal = _text(source, node)
    new = _successor(literal)
    if new is not None:
        yield _edit(node, "constant", f"{literal} → {new}", new)


def _string(node: Node, source: bytes) -> Iterator[_Edit]:
    if node.end_byte - node.start_byte <= 2 or _is_key(node) or _is_specifier(node):
        return
    parent = node.parent
    if parent is not None and parent.type == "expression_statement":
        return  # a directive ("use strict") or a statement that does nothing
    literal = _text(source, node)
    empty = literal[0] * 2
    yield _edit(node, "constant", f"{_short(literal)} → {empty}", empty)


def _return(node: Node, source: bytes) -> Iterator[_Edit]:
    values = [child for child in node.named_children if child.type != "comment"]
    if not values or values[0].type == "undefined" or _text(source, values[0]) == "undefined":
        return
    yield _edit(values[0], "return", "return → return undefined", "undefined", " undefined")
    yield _edit(values[0], "always-equal", "return value → an always-equal object", _ALWAYS_EQUAL)


def _statement(node: Node, source: bytes) -> Iterator[_Edit]:
    if not _in_statement_position(node):
        return
    expression = node.named_children[0] if node.named_children else None
    if expression is None or expression.type in _TEXTS:
        return
    statement = _text(source, node).rstrip().removesuffix(";")
    yield _edit(node, "delete", f"deleted: {_short(statement)}", ";")


_RULES: Final[dict[str, Callable[[Node, bytes], Iterator[_Edit]]]] = {
    "binary_expression": _binary,
    "augmented_assignment_expression": _augmented,
    "unary_expression": _unary,
    "true": _boolean_literal,
    "false": _boolean_literal,
    "number": _number,
    "string": _string,
    "return_statement": _return,
    "expression_statement": _statement,
    "throw_statement": _statement,
}
"""Node type → the mutations of a node of that type."""


def _successor(literal: str) -> str | None:
    """The literal of `literal`'s number plus one (0 → 1, 1 → 0); None if it cannot be read."""
    digits = literal.replace("_", "").lower()
    bigint = digits.endswith("n")  # `n` is no hexadecimal digit
    digits = digits.removesuffix("n")
    value: int | float
    try:
        if digits.startswith(("0x", "0o", "0b")):
            value = int(digits, 0)
        elif len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
            return None  # a legacy octal literal (`017`): its value depends on the mode
        elif bigint or not any(mark in digits for mark in ".e"):
            value = int(digits)
        else:
            value = float(digits)
    except ValueError:
        return None
    new = 0 if value == 1 else value + 1
    if isinstance(new, float):
        if not isfinite(new) or new == value:
            return None  # too large to tell from its successor (`1e21`)
        text = str(int(new)) if new.is_integer() and abs(new) < 1e21 else repr(new)
    else:
        text = str(new)
    return text + "n" if bigint else text


def _concatenates(node: Node) -> bool:
    """Whether a `+` or `+=` has a string or template string on either side."""
    sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
    return any(side is not None and side.type in _TEXTS for side in sides)


def _mixes_nullish(node: Node) -> bool:
    """Whether `??` here turned `||` would stand beside another `??` without parentheses."""
    neighbours = [node.child_by_field_name("left"), node.child_by_field_name("right"), node.parent]
    for neighbour in neighbours:
        if neighbour is None or neighbour.type != "binary_expression":
            continue
        token = neighbour.child_by_field_name("operator")
        if token is not None and token.type == "??":
            return True
    return False


def _is_key(node: Node) -> bool:
    """Whether `node` names a property (`{"a": 1}`, `class { 1() {} }`) rather than a value."""
    parent = node.parent
    if parent is None:
        return False
    return any(parent.child_by_field_name(field) == node for field in _KEY_FIELDS)


def _is_specifier(node: Node) -> bool:
    """Whether a string names a module: `export … from "m"`, `import("m")`, `require("m")`."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "export_statement":
        return True
    call = parent.parent
    if parent.type != "arguments" or call is None or call.type != "call_expression":
        return False
    function = call.child_by_field_name("function")
    if function is None:
        return False
    return function.type == "import" or (
        function.type == "identifier" and function.text == b"require"
    )


def _in_statement_position(node: Node) -> bool:
    """Whether `node` stands where any statement could, so that `;` can replace it."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in _STATEMENT_LISTS:
        return True
    if parent.type not in _STATEMENT_BODIES:
        return False
    return any(parent.child_by_field_name(field) == node for field in ("body", "consequence"))
