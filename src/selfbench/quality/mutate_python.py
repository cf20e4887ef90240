"""Mutants of a Python file's changed lines, found in its `ast` syntax tree (SPEC §13, Quality).

Each mutant changes one node, and only its smallest span (an operator token, a constant, a
returned value, one statement). Families, by `Mutant.operator`:

* `comparison`: `<` ↔ `<=`, `>` ↔ `>=`, `==` ↔ `!=`, `is` ↔ `is not`, `in` ↔ `not in`;
* `arithmetic`: `+` ↔ `-`, `*` → `/` and `//`, `/` → `*`, `//` → `*`, `%` → `*`, the same on
  augmented assignments (`+=` → `-=` …);
* `boolean`: each `and` ↔ `or`; a `not` removed;
* `constant`: `True` ↔ `False`; an int `n` → `n + 1` (`1` → `0`); a non-empty string or
  f-string → `""`. `None` is left alone: what a function returns is the `return` family's;
* `return`: `return X` → `return None`, unless X is `None` or the function is a generator;
* `always-equal`: the same `return X` → a return of an object equal to anything (`__eq__`
  always true, `__ne__` always false, hashable), built by `type(...)` on one line: tests that
  only compare the result with `==` cannot kill it;
* `delete`: an expression statement, an assignment (plain, augmented, annotated with a value) or
  a `raise` → `pass`, in the statement's place (its indentation stays).

`python_statements` finds the statements statement ablation removes (`quality.statements`).

Never mutated: type annotations, docstrings (any statement that is only a constant), the inside
of f-strings, decorators, and the body of `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterator
from typing import Final, NamedTuple

from selfbench.quality.mutants import Mutant

__all__ = ["python_mutants", "python_statements"]

_Swaps = dict[type[ast.AST], tuple[str, tuple[str, ...]]]
_COMPARISONS: Final[_Swaps] = {
    ast.Lt: ("<", ("<=",)),
    ast.LtE: ("<=", ("<",)),
    ast.Gt: (">", (">=",)),
    ast.GtE: (">=", (">",)),
    ast.Eq: ("==", ("!=",)),
    ast.NotEq: ("!=", ("==",)),
    ast.Is: ("is", ("is not",)),
    ast.IsNot: ("is not", ("is",)),
    ast.In: ("in", ("not in",)),
    ast.NotIn: ("not in", ("in",)),
}
_ARITHMETIC: Final[_Swaps] = {
    ast.Add: ("+", ("-",)),
    ast.Sub: ("-", ("+",)),
    ast.Mult: ("*", ("/", "//")),
    ast.Div: ("/", ("*",)),
    ast.FloorDiv: ("//", ("*",)),
    ast.Mod: ("%", ("*",)),
}
_CONNECTIVES: Final[_Swaps] = {ast.And: ("and", ("or",)), ast.Or: ("or", ("and",))}
_SKIPPED_FIELDS: Final[dict[type[ast.AST], frozenset[str]]] = {
    ast.FunctionDef: frozenset({"decorator_list", "returns", "type_params"}),
    ast.AsyncFunctionDef: frozenset({"decorator_list", "returns", "type_params"}),
    ast.ClassDef: frozenset({"decorator_list", "type_params"}),
    ast.AnnAssign: frozenset({"annotation"}),
    ast.arg: frozenset({"annotation"}),
    ast.JoinedStr: frozenset({"values"}),
}
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DELETABLE: Final = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise)
_KEPT_STATEMENTS: Final = (ast.Pass, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)
"""Never removed by `python_statements`: no behaviour of their own a test could need."""
_INDENT: Final = " \t\f"
_SEPARATORS: Final = " \t\f\r\n\\("
_ALWAYS_EQUAL: Final = (
    'type("AlwaysEqual", (), {"__eq__": lambda *_: True, "__ne__": lambda *_: False,'
    ' "__hash__": lambda _: 0})()'
)
"""An object equal to anything; `type` is the builtin unless the file binds the name (then
`().__class__.__class__`, the same builtin reached without a name)."""
_SHORT: Final = 60
"""A statement or string quoted in a description is cut to this many characters."""
_MAX_INT_BITS: Final = 4096
"""Larger int literals are left alone (their decimal text would exceed `int`'s string limit)."""


def python_mutants(path: str, text: str, lines: Collection[int]) -> list[Mutant]:
    """Every mutant of `text` (the file at `path`) that starts on one of `lines` (1-based).

    Each one parses and differs from `text`; they come sorted by start offset, operator and
    description. A file that does not parse has none.
    """
    tree = _parse(text)
    if tree is None or not lines:
        return []
    source = _Source(text)
    finder = _Finder(source, sorted(set(lines)), always_equal=_always_equal(tree))
    checker = _Checker(source)
    found = [
        Mutant(path, source.line_of(c.start), c.operator, c.description, c.start, c.end, c.new)
        for c in finder.candidates(tree)
        if source.line_of(c.start) in finder.wanted
        and text[c.start : c.end] != c.new
        and checker.parses(c)
    ]
    return sorted(found, key=lambda m: (m.start, m.operator, m.description, m.end, m.replacement))


def python_statements(path: str, text: str, lines: Collection[int]) -> list[Mutant]:
    """Each statement of `text` that may be removed for statement ablation: a simple statement
    that reaches one of `lines`, a compound one (`if`, `for`, `def` with its decorators …) whose
    every line is in `lines`; as a `Mutant` (operator `statement`) that puts `pass` in its
    place, as a `delete` mutant does, so that the same removal leaves the same text.

    Never removed: docstrings and lone constants, `pass`, imports, `global`, `nonlocal`, an
    annotation without a value, `__all__`, `if TYPE_CHECKING:` and its body. The description is the
    statement's first line; they come in the order of the file.
    """
    tree = _parse(text)
    wanted = frozenset(lines)
    if tree is None or not wanted:
        return []
    source = _Source(text)
    found = []
    for node in _statements(tree):
        own, end = source.span(node)
        first = min([node.lineno, *(d.lineno for d in _decorators(node))])
        # a decorator's `@` stands in its statement's column
        start = source.offset(first, node.col_offset) if first != node.lineno else own
        last = node.end_lineno or node.lineno
        if _compound(node):
            if not wanted.issuperset(range(first, last + 1)):
                continue
        elif wanted.isdisjoint(range(first, last + 1)):
            continue
        removed = text[:start] + "pass" + text[end:]
        if text.startswith("elif", start) or _parse(removed) is None:
            continue  # an `elif` is no statement alone
        written = _shorten(text[own:end].splitlines()[0])
        found.append(Mutant(path, node.lineno, "statement", written, start, end, "pass"))
    return found


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement `python_statements` may remove, in the order of the file."""
    stack: list[ast.AST] = [tree]
    found: list[ast.stmt] = []
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt) and _removable(node):
            found.append(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
        elif not isinstance(node, ast.expr):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _removable(node: ast.stmt) -> bool:
    if isinstance(node, _KEPT_STATEMENTS) or _skipped(node):
        return False
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        return False  # imports for the type checker
    if isinstance(node, ast.AnnAssign) and node.value is None:
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _compound(node: ast.stmt) -> bool:
    return any(isinstance(getattr(node, name, None), list) for name in ("body", "cases"))


def _decorators(node: ast.stmt) -> list[ast.expr]:
    decorators = getattr(node, "decorator_list", [])
    return decorators if isinstance(decorators, list) else []


class _Candidate(NamedTuple):
    start: int
    end: int
    new: str
    operator: str
    description: str
    anchor: _Anchor
    windows: tuple[tuple[int, int], ...]
    """Spans of expressions around it, innermost first, that may parse alone (see `_Checker`)."""


class _Anchor(NamedTuple):
    """The innermost statement around a candidate that begins its line: its first and last line,
    and whether it is an `elif` (its lines parse alone once that reads `if  `)."""

    first: int
    last: int
    elif_: bool = False


class _Scope(NamedTuple):
    generator: bool
    anchor: _Anchor
    element: tuple[int, int] | None = None
    """The offsets of the innermost element of a list, tuple, set, dict or call around it."""

    @property
    def windows(self) -> tuple[tuple[int, int], ...]:
        return (self.element,) if self.element else ()


class _Source:
    """A file's text with its line starts, as the parser counts lines (`\\n`, `\\r\\n`, `\\r`)."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Same length, so positions hold: a CR-LF pair becomes " \n", a lone CR "\n".
        flat = text.replace("\r\n", " \n").replace("\r", "\n")
        starts = [0]
        at = flat.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = flat.find("\n", at + 1)
        self.starts = starts

    def offset(self, line: int, col: int) -> int:
        """The character offset of the parser's (line, UTF-8 byte column)."""
        start = self.starts[line - 1]
        if self.text[start : start + col].isascii():
            return start + col
        return start + len(self.line_text(line).encode()[:col].decode())

    def line_text(self, line: int) -> str:
        """Line `line` (1-based) with its line break."""
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[self.starts[line - 1] : end]

    def line_of(self, offset: int) -> int:
        """The 1-based line holding the character at `offset`."""
        return bisect_right(self.starts, offset)

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int]:
        """The character offsets where `node` starts and ends."""
        end_line = node.end_lineno if node.end_lineno is not None else node.lineno
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_col)

    def chunk(self, anchor: _Anchor) -> tuple[int, int]:
        """The offsets of the whole lines `anchor` names, line breaks included."""
        first, last, _ = anchor
        end = self.starts[last] if last < len(self.starts) else len(self.text)
        return self.starts[first - 1], end


class _Finder:
    """Candidate mutants of the nodes that touch the wanted lines; no parse check yet."""

    def __init__(self, source: _Source, changed: list[int], *, always_equal: str) -> None:
        self.source = source
        self.changed = changed
        self.wanted = frozenset(changed)
        self.always_equal = always_equal

    def candidates(self, tree: ast.Module) -> Iterator[_Candidate]:
        """Walk the tree (without recursion: expressions nest deeper than the stack allows)."""
        stack: list[tuple[ast.AST, _Scope]] = [
            (tree, _Scope(generator=False, anchor=_Anchor(1, len(self.source.starts))))
        ]
        while stack:
            node, scope = stack.pop()
            if not self._touches(node) or _skipped(node):
                continue
            if isinstance(node, ast.stmt):
                scope = self._anchored(node, scope)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                scope = scope._replace(generator=_is_generator(node))
            yield from self._mutants(node, scope)
            elements = {id(element): self.source.span(element) for element in _elements(node)}
            stack.extend(
                (
                    child,
                    scope._replace(element=elements.get(id(child), scope.element))
                    if elements
                    else scope,
                )
                for child in _children(node)
            )

    def _touches(self, node: ast.AST) -> bool:
        first = getattr(node, "lineno", None)
        last = getattr(node, "end_lineno", None)
        if first is None or last is None:
            return True
        at = bisect_left(self.changed, first)
        return at < len(self.changed) and self.changed[at] <= last

    def _anchored(self, node: ast.stmt, scope: _Scope) -> _Scope:
        text, line_start = self.source.text, self.source.starts[node.lineno - 1]
        start = self.source.offset(node.lineno, node.col_offset)
        if text[line_start:start].strip(_INDENT):
            return scope
        elif_ = isinstance(node, ast.If) and text.startswith("elif", start)
        return scope._replace(anchor=_Anchor(node.lineno, node.end_lineno or node.lineno, elif_))

    def _mutants(self, node: ast.AST, scope: _Scope) -> Iterator[_Candidate]:
        yield from self._operators(node, scope)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield from self._drop_not(node, scope)
        elif isinstance(node, ast.Constant | ast.JoinedStr):
            yield from self._constant(node, scope)
        elif isinstance(node, ast.Return):
            yield from self._return(node, scope)
        elif isinstance(node, _DELETABLE) and not (
            isinstance(node, ast.AnnAssign) and not node.value
        ):
            yield from self._delete(node, scope)

    def _operators(self, node: ast.AST, scope: _Scope) -> Iterator[_Candidate]:
        """Comparison, arithmetic and boolean operators swapped."""
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
                yield from self._swaps(left, right, _COMPARISONS.get(type(op)), "comparison", scope)
        elif isinstance(node, ast.BinOp):
            swaps = _ARITHMETIC.get(type(node.op))
            yield from self._swaps(node.left, node.right, swaps, "arithmetic", scope)
        elif isinstance(node, ast.AugAssign):
            swaps = _ARITHMETIC.get(type(node.op))
            yield from self._swaps(node.target, node.value, swaps, "arithmetic", scope, "=")
        elif isinstance(node, ast.BoolOp):
            for left, right in zip(node.values, node.values[1:], strict=False):
                yield from self._swaps(left, right, _CONNECTIVES[type(node.op)], "boolean", scope)

    def _swaps(
        self,
        left: ast.expr,
        right: ast.expr,
        swaps: tuple[str, tuple[str, ...]] | None,
        operator: str,
        scope: _Scope,
        suffix: str = "",
    ) -> Iterator[_Candidate]:
        """Each replacement of the operator token between `left` and `right` (then `suffix`)."""
        if swaps is None:
            return
        spelling, replacements = swaps
        text = self.source.text
        token = _token_between(text, self.source.span(left)[1], self.source.span(right)[0])
        if token is None or " ".join(text[token[0] : token[1]].split()) != spelling + suffix:
            return
        windows = scope.windows
        if not suffix:  # `left op right` is an expression: the smallest one around the token
            pair = (
                self.source.span(_last_operand(left))[0],
                self.source.span(_first_operand(right))[1],
            )
            windows = (pair, *windows)
        for new in replacements:
            description = f"{spelling}{suffix} → {new}{suffix}"
            yield _Candidate(*token, new + suffix, operator, description, scope.anchor, windows)

    def _drop_not(self, node: ast.UnaryOp, scope: _Scope) -> Iterator[_Candidate]:
        start, _ = self.source.span(node)
        text = self.source.text
        if text[start : start + 3] != "not":
            return
        end = start + 3
        while end < len(text) and text[end] in _INDENT:
            end += 1
        yield _Candidate(start, end, "", "boolean", "not → (removed)", scope.anchor, scope.windows)

    def _constant(self, node: ast.Constant | ast.JoinedStr, scope: _Scope) -> Iterator[_Candidate]:
        start, end = self.source.span(node)
        written = self.source.text[start:end]
        value = node.value if isinstance(node, ast.Constant) else node.values
        if isinstance(value, bool):
            new = str(not value)
        elif isinstance(value, int) and value.bit_length() <= _MAX_INT_BITS:
            new = "0" if value == 1 else str(value + 1)
        elif isinstance(value, str | list) and value:
            new, written = '""', _shorten(written)
        else:
            return
        yield _Candidate(
            start, end, new, "constant", f"{written} → {new}", scope.anchor, scope.windows
        )

    def _return(self, node: ast.Return, scope: _Scope) -> Iterator[_Candidate]:
        value = node.value
        if value is None or scope.generator:
            return
        if isinstance(value, ast.Constant) and value.value is None:
            return
        start, end = self.source.span(value)
        # `return"x"` and `return[x]` need a space: `returnNone` would be a name.
        space = "" if self.source.text[start - 1] in _SEPARATORS else " "
        yield _Candidate(
            start,
            end,
            space + "None",
            "return",
            "return → return None",
            scope.anchor,
            scope.windows,
        )
        yield _Candidate(
            start,
            end,
            space + self.always_equal,
            "always-equal",
            "return value → an always-equal object",
            scope.anchor,
            scope.windows,
        )

    def _delete(self, node: ast.stmt, scope: _Scope) -> Iterator[_Candidate]:
        start, end = self.source.span(node)
        written = _shorten(self.source.text[start:end])
        yield _Candidate(
            start, end, "pass", "delete", f"deleted: {written}", scope.anchor, scope.windows
        )


class _Checker:
    """Whether a candidate's result parses.

    Only the smallest part around the candidate that parses alone is parsed again: its window (in
    parentheses: the two operands around an operator, the element of a list, tuple, set, dict
    or call), else the lines of its anchor statement (under `if 1:` when indented); else the
    whole file. Each parses alone exactly when the whole file does: a replacement is a token of
    the same kind as the one it replaces (never a bracket, a string's end or a block), and a
    window holds the replaced token's neighbours (an element's own are delimiters no token
    merges with).
    """

    def __init__(self, source: _Source) -> None:
        self.source = source
        self._alone: dict[_Anchor, bool] = {}
        self._windows: dict[tuple[int, int], bool] = {}

    def parses(self, candidate: _Candidate) -> bool:
        """Whether the file with `candidate` applied parses."""
        text = self.source.text
        for lo, hi in candidate.windows:
            if lo <= candidate.start <= candidate.end <= hi and self._window_alone(lo, hi):
                changed = text[lo : candidate.start] + candidate.new + text[candidate.end : hi]
                return _parse(f"({changed})") is not None
        lo, hi = self.source.chunk(candidate.anchor)
        if self._parses_alone(candidate.anchor) and lo <= candidate.start <= candidate.end <= hi:
            changed = text[lo : candidate.start] + candidate.new + text[candidate.end : hi]
            return _parse(_block(changed, candidate.anchor)) is not None
        changed = text[: candidate.start] + candidate.new + text[candidate.end :]
        return _parse(changed) is not None

    def _parses_alone(self, anchor: _Anchor) -> bool:
        if anchor not in self._alone:
            lo, hi = self.source.chunk(anchor)
            self._alone[anchor] = _parse(_block(self.source.text[lo:hi], anchor)) is not None
        return self._alone[anchor]

    def _window_alone(self, lo: int, hi: int) -> bool:
        if (lo, hi) not in self._windows:
            self._windows[lo, hi] = _parse(f"({self.source.text[lo:hi]})") is not None
        return self._windows[lo, hi]


def _block(lines: str, anchor: _Anchor) -> str:
    """The lines of `anchor` as a module: an `elif` read as `if`, under `if 1:` when indented."""
    indent = len(lines) - len(lines.lstrip(_INDENT))
    if anchor.elif_ and lines.startswith("elif", indent):
        lines = f"{lines[:indent]}if  {lines[indent + 4 :]}"
    return f"if 1:\n{lines}" if indent else lines


def _parse(text: str) -> ast.Module | None:
    """The syntax tree of `text`, or None when it does not parse; the parser's warnings (invalid
    escapes, say) are the file's business, not ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _token_between(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The span of the operator between two operands: what is left of `text[lo:hi]` without
    white space, line continuations, comments and parentheses."""
    first = last = -1
    at = lo
    while at < hi:
        char = text[at]
        if char == "#":
            while at < hi and text[at] not in "\r\n":
                at += 1
            continue
        if char not in " \t\f\r\n\\()":
            first = at if first < 0 else first
            last = at
        at += 1
    return None if first < 0 else (first, last + 1)


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The child nodes a mutant may be found under."""
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        yield from node.orelse
        return
    skipped = _SKIPPED_FIELDS.get(type(node), frozenset())
    for name, value in ast.iter_fields(node):
        if name in skipped:
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, ast.AST))


def _last_operand(node: ast.expr) -> ast.expr:
    """The rightmost operand of a chain of operators (`c` of `a + b * c`), else `node`."""
    while True:
        if isinstance(node, ast.BinOp):
            node = node.right
        elif isinstance(node, ast.BoolOp):
            node = node.values[-1]
        elif isinstance(node, ast.Compare):
            node = node.comparators[-1]
        else:
            return node


def _first_operand(node: ast.expr) -> ast.expr:
    """The leftmost operand of a chain of operators (`a` of `a * b + c`), else `node`."""
    while isinstance(node, ast.BinOp | ast.BoolOp | ast.Compare):
        node = node.values[0] if isinstance(node, ast.BoolOp) else node.left
    return node


def _elements(node: ast.AST) -> list[ast.expr]:
    """The elements of a list, tuple, set, dict or call's arguments (not `*x`, nor `**x`'s key)."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        found = node.elts
    elif isinstance(node, ast.Dict):
        found = [key for key in node.keys if key is not None] + node.values
    elif isinstance(node, ast.Call):
        found = node.args + [keyword.value for keyword in node.keywords]
    else:
        return []
    return [element for element in found if not isinstance(element, ast.Starred)]


def _always_equal(tree: ast.Module) -> str:
    """`_ALWAYS_EQUAL`, through a name-free `type` when the file binds the name `type`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound = node.id
        elif isinstance(node, ast.arg):
            bound = node.arg
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound = node.name
        elif isinstance(node, ast.alias):
            bound = node.asname or node.name
        else:
            continue
        if bound == "type":
            return "().__class__.__class__" + _ALWAYS_EQUAL.removeprefix("type")
    return _ALWAYS_EQUAL


def _skipped(node: ast.AST) -> bool:
    """Docstrings and other lone constants; type aliases (`type X = ...`)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True
    return type(node).__name__ == "TypeAlias"


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _is_generator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `function`'s own body yields (nested functions and classes are theirs)."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _shorten(written: str) -> str:
    """`written` on one line, cut to `_SHORT` characters."""
    line = " ".join(written.split())
    return line if len(line) <= _SHORT else line[: _SHORT - 1] + "…"
