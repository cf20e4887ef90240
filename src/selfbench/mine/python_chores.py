"""What a Python module's syntax tree is without its docstrings, typing or translation calls.
Pure.

Two versions of a module whose trees are equal once the same strips ran on both differ only in
what the strips removed (`selfbench.mine.code_chores`). `strip_typing` removes, in place:

* every annotation: of parameters, returns and variables (`x: int = 1` becomes `x = 1`, a bare
  `x: int` goes) — except where something may read them at run time: a class with any base,
  keyword or decorator (a dataclass, a pydantic model, an SQLAlchemy model's `Mapped[…]`, a
  named tuple …) keeps its own annotations whole; a function with a decorator other than
  `_PLAIN_DECORATORS` (`staticmethod`, `property` …: `@app.get`, `@f.register` read them)
  keeps its parameters' and return's; and a bare `x: int` in a function's body stays (it
  makes `x` local);
* `from __future__ import annotations`, every import from `typing`, `typing_extensions`,
  `mypy_extensions` or `_typeshed`, and any other import whose name only the removed typing
  mentioned (`from .core import Context` kept for an annotation);
* `if TYPE_CHECKING:` blocks (their `else:` stays), functions decorated `@overload`, the
  decorators `@final`, `@override` and `@type_check_only`, `Generic[…]` among a class's bases
  and the type arguments of the others (`Base[T]` is `Base`);
* `cast(T, value)` (`value` stays), and the assignments of `TypeVar(…)`, `ParamSpec(…)`,
  `TypeVarTuple(…)`, `NewType(…)` or of a subscripted typing name (`Json = t.Dict[str, t.Any]`).

Typing names are those the module imports from the typing modules (`import typing as t` then
`t.cast`, `from typing import cast` then `cast`): a function of its own named `cast` stays.
`# type:` comments are no part of a tree.

`strip_translation` replaces each call `_("…")`, `gettext("…")`, `gettext_lazy("…")`,
`pgettext(context, "…")` … of string literals by its string, each such call of one string
filled by name (`_("No such option: {name}").format(name=option)`) by the f-string it wraps
(`f"No such option: {option}"`, every argument a field's), and drops the imports and the
assignments of those names (`from gettext import gettext as _`, `_ = translation.gettext`).

Trees are compared by their dumps, positions aside (`_same`), and the strips walk only the
statements in Python, not every expression.
"""

from __future__ import annotations

import ast
import difflib
import io
import re
import string
import tokenize
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, Literal

from selfbench._python_source import remove_docstrings, source_lines

__all__ = [
    "TRANSLATION_CALLS",
    "TRANSLATION_NAMES",
    "ModulePair",
    "Strip",
    "defined_names",
    "name_mapping",
    "strip_docstrings",
    "strip_translation",
    "strip_typing",
]

_TYPING_MODULES: Final = frozenset({"typing", "typing_extensions", "mypy_extensions", "_typeshed"})
_TYPE_FACTORIES: Final = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})
_TYPING_DECORATORS: Final = frozenset({"final", "override", "type_check_only"})
_PLAIN_DECORATORS: Final = _TYPING_DECORATORS | frozenset(
    {"staticmethod", "classmethod", "property", "setter", "getter", "deleter", "abstractmethod"}
)
"""Decorators that read no annotation: a function with another keeps its annotations."""
TRANSLATION_CALLS: Final = frozenset(
    {
        "_", "gettext", "ugettext", "pgettext", "gettext_lazy", "ugettext_lazy",
        "pgettext_lazy", "lazy_gettext", "lazy_pgettext", "gettext_noop", "N_",
    }
)  # fmt: skip
"""Calls that wrap one string literal (after a context string, for the `pgettext` ones)."""
TRANSLATION_NAMES: Final = TRANSLATION_CALLS | {"ngettext", "npgettext", "ngettext_lazy"}
"""Every translation function's name, the plural ones too."""

Reading = Literal["none", "types", "local"]
"""How a block's annotations may be read: not at all (stripped), at run time (kept whole), or
as a function body's (a bare annotation makes a name local: kept)."""
Strip = Callable[[ast.Module, str], None]
"""Removes something from a module's tree in place, given its source text."""
_BODIES: Final = ("body", "orelse", "finalbody")


def _final_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement lists directly under a statement (its bodies, its handlers' and cases')."""
    for field in _BODIES:
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body


def _statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement of the module, nested ones too, no expression visited."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        statement = stack.pop()
        yield statement
        for block in _blocks(statement):
            stack.extend(reversed(block))


def _names(nodes: Iterable[ast.AST | None]) -> Counter[str]:
    """Every name the nodes mention, as often as they do, string annotations (`"Context"`) read
    too."""
    found: Counter[str] = Counter()
    for node in nodes:
        if node is None:
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name):
                found[inner.id] += 1
            elif isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                found.update(_quoted_names(inner.value))
    return found


def _quoted_names(text: str) -> list[str]:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [node.id for node in ast.walk(tree) if isinstance(node, ast.Name)]


def strip_docstrings(tree: ast.Module, text: str = "") -> None:
    """Remove the module's docstrings, in place (the quality check's rule,
    `selfbench._python_source`: the first string statement of each module, class and
    function) — but those that may be behaviour: none when the module reads `__doc__`
    (`description=__doc__`), not the docstring of a function or class decorated otherwise than
    `_PLAIN_DECORATORS` (a click command's is its `--help`), not one holding a doctest
    (`>>>`)."""
    if "__doc__" in text:
        return
    remove_docstrings(tree, keep=_behaviour)


def _behaviour(holder: ast.AST, docstring: ast.stmt) -> bool:
    if not all(_plain(d) for d in getattr(holder, "decorator_list", ())):
        return True
    value = docstring.value if isinstance(docstring, ast.Expr) else None
    return isinstance(value, ast.Constant) and ">>>" in str(value.value)


# --- typing ---------------------------------------------------------------------------------------


class _Module:
    """What the strip needs to know of the whole module, read from its statements."""

    def __init__(self, tree: ast.Module) -> None:
        self.modules: set[str] = set()  # names bound to a typing module (`t`)
        self.imported: set[str] = set()  # names imported from one (`cast`)
        self.bound: Counter[str] = Counter()  # names imports bind, and how often
        self.readers: dict[str, Reading] = {}
        for node in _statements(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.partition(".")[0]
                    self.bound[name] += 1
                    if alias.name in _TYPING_MODULES:
                        self.modules.add(name)
            elif isinstance(node, ast.ImportFrom):
                names = [alias.asname or alias.name for alias in node.names]
                self.bound.update(names)
                if node.module in _TYPING_MODULES:
                    self.imported.update(names)
            elif isinstance(node, ast.ClassDef):
                self.readers[node.name] = _reading(node)

    def context(self) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, Reading], ...]]:
        """What a statement's strip reads of the rest of the module: typing names, classes."""
        readers = tuple(sorted(self.readers.items()))
        return frozenset(self.modules), frozenset(self.imported), readers

    def names(self, node: ast.expr, wanted: frozenset[str]) -> bool:
        """Whether `node` is one of the `wanted` typing names (`cast`, `t.cast`)."""
        if isinstance(node, ast.Name):
            return node.id in wanted and node.id in self.imported
        return (
            isinstance(node, ast.Attribute)
            and node.attr in wanted
            and isinstance(node.value, ast.Name)
            and node.value.id in self.modules
        )

    def is_type_expression(self, node: ast.expr) -> bool:
        """A subscripted typing name (`t.Dict[str, t.Any]`, `Optional[int]`), or a union."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.is_type_expression(node.left) and self.is_type_expression(node.right)
        if not isinstance(node, ast.Subscript):
            return False
        value = node.value
        while isinstance(value, ast.Attribute):
            value = value.value
        if not isinstance(value, ast.Name):
            return False
        return value.id in (self.imported if value is node.value else self.modules)


_MODULES: weakref.WeakKeyDictionary[ast.Module, _Module] = weakref.WeakKeyDictionary()


def _module_of(tree: ast.Module) -> _Module:
    """The module's `_Module`, read once per tree (before its typing is stripped)."""
    found = _MODULES.get(tree)
    if found is None:
        found = _MODULES[tree] = _Module(tree)
    return found


def _reading(node: ast.ClassDef) -> Reading:
    """A class with any base, keyword or decorator may read its annotations (see the module)."""
    return "types" if node.bases or node.keywords or node.decorator_list else "none"


def _plain(decorator: ast.expr) -> bool:
    return _final_name(decorator) in _PLAIN_DECORATORS


class _TypingStrip:
    """Strips one module's statements (see the module), noting the names what it removes
    mentions."""

    def __init__(self, module: _Module) -> None:
        self.module = module
        self.removed: Counter[str] = Counter()

    def drop(self, *nodes: ast.AST | None) -> None:
        self.removed.update(_names(nodes))

    def block(self, statements: list[ast.stmt], reading: Reading) -> list[ast.stmt]:
        kept: list[ast.stmt] = []
        for statement in statements:
            kept.extend(self.statement(statement, reading))
        return kept

    def statement(self, node: ast.stmt, reading: Reading) -> list[ast.stmt]:
        module = self.module
        if isinstance(node, ast.Import | ast.ImportFrom):
            return _without_typing_imports(node)
        if isinstance(node, ast.If) and _is_type_checking(node.test, module):
            self.drop(*node.body)
            return self.block(node.orelse, reading)
        if isinstance(node, ast.AnnAssign):
            return self.annotated(node, reading)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = node.value
            made = isinstance(value, ast.Call) and module.names(value.func, _TYPE_FACTORIES)
            if made or module.is_type_expression(value):
                self.drop(value)
                return []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return self.function(node)
        if isinstance(node, ast.ClassDef):
            self.bases(node)
            reading = module.readers.get(node.name, "none")
        self.inner(node, reading)
        return [node]

    def inner(self, node: ast.stmt, reading: Reading) -> None:
        """Strip the blocks under a compound statement; an emptied block gets `pass`."""
        for field in _BODIES:
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                kept = self.block(block, reading)
                setattr(node, field, kept or ([] if field != "body" else [_pass(node)]))
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            part.body = self.block(part.body, reading) or [_pass(node)]

    def annotated(self, node: ast.AnnAssign, reading: Reading) -> list[ast.stmt]:
        if reading == "types" or (reading == "local" and node.value is None):
            return [node]
        self.drop(node.annotation)
        if node.value is None:
            return []
        assign = ast.Assign(targets=[node.target], value=node.value, type_comment=None)
        return [ast.copy_location(assign, node)]

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
        module = self.module
        if any(module.names(d, frozenset({"overload"})) for d in node.decorator_list):
            self.drop(node)
            return []
        if all(_plain(d) for d in node.decorator_list):
            self.unannotate(node)
        node.decorator_list = [
            d for d in node.decorator_list if not module.names(d, _TYPING_DECORATORS)
        ]
        self.inner(node, "local")
        return [node]

    def unannotate(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
        self.drop(node.returns, *(arg.annotation for arg in every))
        node.returns = None
        for arg in every:
            arg.annotation = None

    def bases(self, node: ast.ClassDef) -> None:
        kept = []
        for base in node.bases:
            if isinstance(base, ast.Subscript):
                self.drop(base.slice)
                if self.module.names(base.value, frozenset({"Generic"})):
                    continue
                kept.append(base.value)
            else:
                kept.append(base)
        node.bases = kept


def _pass(near: ast.AST) -> ast.Pass:
    return ast.copy_location(ast.Pass(), near)


def _is_type_checking(test: ast.expr, module: _Module) -> bool:
    named = isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
    return named or module.names(test, frozenset({"TYPE_CHECKING"}))


def _without_typing_imports(node: ast.Import | ast.ImportFrom) -> list[ast.stmt]:
    if isinstance(node, ast.Import):
        node.names = [alias for alias in node.names if alias.name not in _TYPING_MODULES]
    elif node.module in _TYPING_MODULES:
        return []
    elif node.module == "__future__":
        node.names = [alias for alias in node.names if alias.name != "annotations"]
    return [node] if node.names else []


class _Casts(ast.NodeTransformer):
    """`cast(T, value)` becomes `value` (the typing module's `cast` only)."""

    def __init__(self, module: _Module, strip: _TypingStrip) -> None:
        self.module, self.strip = module, strip

    def visit_Call(self, node: ast.Call) -> ast.AST:
        cast = frozenset({"cast"})
        if self.module.names(node.func, cast) and len(node.args) == 2:
            self.strip.drop(node.args[0])
            value: ast.AST = self.visit(node.args[1])
            return value
        return self.generic_visit(node)


def strip_typing(tree: ast.Module, text: str) -> None:
    """Remove the module's typing, in place (see the module)."""
    module = _module_of(tree)
    strip = _TypingStrip(module)
    tree.body = strip.block(tree.body, "none")
    if module.modules or "cast" in module.imported:
        casts = _Casts(module, strip)
        for node in _holding(tree, text, "cast("):
            casts.visit(node)
    named = strip.removed.keys() & module.bound.keys()
    if not named:
        return
    mentions = _mentions(text)
    unused = {name for name in named if mentions[name] <= strip.removed[name] + module.bound[name]}
    if unused:
        _prune_imports(tree, unused)


_NAME_RE = re.compile(r"(?<![\w.])[^\W\d]\w*")


def _mentions(text: str) -> Counter[str]:
    """How often the source names each name (not as an attribute): in code, strings and
    comments alike, so a name a comment or an `__all__` mentions counts as used."""
    return Counter(_NAME_RE.findall(text))


def _holding(tree: ast.Module, text: str, needle: str) -> Iterator[ast.stmt]:
    """The module's statements, and its classes' (one level down), whose lines hold `needle`:
    what an expression pass must visit (the rest it would only walk through)."""
    if needle not in text:
        return
    lines = source_lines(text)

    def holds(node: ast.stmt) -> bool:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        return needle in "\n".join(lines[first - 1 : node.end_lineno or node.lineno])

    for node in tree.body:
        if not holds(node):
            continue
        if isinstance(node, ast.ClassDef):  # no call in a class's own line worth stripping
            yield from (member for member in node.body if holds(member))
        else:
            yield node


def _prune_imports(tree: ast.Module, unused: set[str]) -> None:
    for node in _statements(tree):
        for block in _blocks(node):
            block[:] = [s for s in block if not _pruned(s, unused)] or [_pass(node)]
    tree.body = [node for node in tree.body if not _pruned(node, unused)]


def _pruned(node: ast.stmt, unused: set[str]) -> bool:
    """Drop the names in `unused` from an import; whether none is left."""
    if isinstance(node, ast.Import):
        node.names = [a for a in node.names if (a.asname or a.name.partition(".")[0]) not in unused]
    elif isinstance(node, ast.ImportFrom):
        node.names = [a for a in node.names if (a.asname or a.name) not in unused]
    else:
        return False
    return not node.names


# --- translation ----------------------------------------------------------------------------------


class _Translations(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        filled = self.filled(node)
        if filled is not None:
            return filled
        self.generic_visit(node)
        name = _final_name(node.func) or ""
        if name not in TRANSLATION_CALLS or node.keywords or not node.args:
            return node
        if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            return node
        if len(node.args) == 1 or (len(node.args) == 2 and "pgettext" in name):
            return node.args[-1]
        return node

    def filled(self, node: ast.Call) -> ast.JoinedStr | None:
        """`_("… {name!r} …").format(name=value)` as the f-string `f"… {value!r} …"`; None
        for any other call (a positional or unused argument, an index or attribute in a
        field, a nested format spec)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "format") or node.args:
            return None
        template = _translated_literal(func.value)
        if template is None or not node.keywords:
            return None
        values: dict[str, ast.expr] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return None
            values[keyword.arg] = self.visit(keyword.value)
        return _joined(template, values, node)


def _joined(template: str, values: dict[str, ast.expr], near: ast.AST) -> ast.JoinedStr | None:
    """The f-string a template filled by name is (see `_Translations.filled`), or None."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return None
    parts: list[ast.expr] = []
    used: set[str] = set()
    for literal, name, spec, conversion in fields:
        if literal:
            parts.append(ast.Constant(literal))
        if name is None:
            continue
        if name not in values or (spec and "{" in spec) or conversion not in _CONVERSIONS:
            return None
        used.add(name)
        formatted = ast.FormattedValue(
            value=values[name],
            conversion=-1 if conversion is None else ord(conversion),
            format_spec=ast.JoinedStr(values=[ast.Constant(spec)]) if spec else None,
        )
        parts.append(formatted)
    if used != values.keys():
        return None
    return ast.copy_location(ast.JoinedStr(values=parts), near)


_CONVERSIONS: Final = frozenset({None, "r", "s", "a"})


def _translated_literal(node: ast.expr) -> str | None:
    """The string a translation call of one string literal wraps (`_("…")`), else None."""
    if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 1:
        return None
    if (_final_name(node.func) or "") not in TRANSLATION_CALLS:
        return None
    literal = node.args[0]
    if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
        return literal.value
    return None


def strip_translation(tree: ast.Module, text: str) -> None:
    """Replace the module's translation calls of string literals by their strings, and drop the
    imports and assignments of those names, in place (see the module)."""
    translations = _Translations()
    for needle in ("_(", "gettext"):
        for node in _holding(tree, text, needle):
            translations.visit(node)
    tree.body = [node for node in tree.body if not _translation_binding(node)]
    for node in _statements(tree):
        for block in _blocks(node):
            block[:] = [s for s in block if not _translation_binding(s)] or [_pass(node)]


def _translation_binding(node: ast.stmt) -> bool:
    """Drop the translation names from an import; whether it binds nothing else, or is an
    assignment of one (`_ = translation.gettext`)."""
    if isinstance(node, ast.Import):
        node.names = [alias for alias in node.names if alias.name != "gettext"]
        return not node.names
    if isinstance(node, ast.ImportFrom):
        node.names = [a for a in node.names if (a.asname or a.name) not in TRANSLATION_NAMES]
        return not node.names
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return isinstance(target, ast.Name) and target.id in TRANSLATION_NAMES
    return False


# --- comparing ------------------------------------------------------------------------------------


def _same(before: ast.AST, after: ast.AST) -> bool:
    """Whether the two trees are equal, positions aside: `ast.dump`'s equality, stopping at the
    first difference and building no text. (What they compile to would not do: the compiler
    keeps a `NOP` where a statement's lines leave no code, so layout shows.)"""
    pending: list[tuple[object, object]] = [(before, after)]
    while pending:
        left, right = pending.pop()
        if type(left) is not type(right):  # `1`, `1.0` and `True` are equal, but no same
            return False
        if isinstance(left, ast.AST):
            pending.extend((getattr(left, f, None), getattr(right, f, None)) for f in left._fields)
        elif isinstance(left, list):
            if len(left) != len(right):  # type: ignore[arg-type]  # a list, as `left` is
                return False
            pending.extend(zip(left, right, strict=True))  # type: ignore[call-overload]
        elif left != right:
            return False
    return True


class _Sources:
    """The two versions' lines: a statement whose source is the same on both sides, and whose
    strip depends on nothing else, is the same stripped (`_same_block`)."""

    def __init__(self, texts: tuple[str, str], *, context_free: bool) -> None:
        self.lines = (source_lines(texts[0]), source_lines(texts[1]))
        self.context_free = context_free

    def text(self, side: int, node: ast.stmt) -> str | None:
        decorators = getattr(node, "decorator_list", ())
        first = min([node.lineno, *(d.lineno for d in decorators)])
        last = node.end_lineno
        return None if last is None else "\n".join(self.lines[side][first - 1 : last])

    def unchanged(self, before: ast.stmt, after: ast.stmt) -> bool:
        if not self.context_free or isinstance(before, ast.Import | ast.ImportFrom):
            return False  # an import is pruned by what the rest of its module says
        text = self.text(0, before)
        return text is not None and text == self.text(1, after)


def _same_block(before: list[ast.stmt], after: list[ast.stmt], sources: _Sources) -> bool:
    """`_same` over two statement lists, skipping the statements whose source is unchanged and
    going into the bodies of the functions and classes whose source is not."""
    if len(before) != len(after):
        return False
    for left, right in zip(before, after, strict=True):
        if sources.unchanged(left, right):
            continue
        definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        if isinstance(left, definition) and type(left) is type(right):
            heads = [(getattr(left, f), getattr(right, f)) for f in left._fields if f != "body"]
            if not all(_same(a, b) for a, b in heads):
                return False
            if not _same_block(left.body, right.body, sources):
                return False
        elif not _same(left, right):
            return False
    return True


class ModulePair:
    """Two versions of a module, stripped step by step: asked with strips that extend the ones
    already run, it runs only the new ones (comments, then typing, parse once)."""

    def __init__(self, old: str, new: str) -> None:
        self.texts = (old, new)
        self.trees: tuple[ast.Module, ast.Module] | None = None
        self.applied: tuple[Strip, ...] = ()
        self.context_free = True  # whether no strip depends on more than a statement

    def _at(self, strips: Sequence[Strip]) -> tuple[ast.Module, ast.Module] | None:
        strips = tuple(strips)
        if self.trees is None or strips[: len(self.applied)] != self.applied:
            self.trees, self.applied, self.context_free = self._parsed(), (), True
        if self.trees is None:
            return None
        if strip_typing in strips[len(self.applied) :]:  # the module's typing names and classes
            contexts = [_module_of(tree).context() for tree in self.trees]
            self.context_free = contexts[0] == contexts[1]
        try:
            for strip in strips[len(self.applied) :]:
                for tree, text in zip(self.trees, self.texts, strict=True):
                    strip(tree, text)
        except (RecursionError, MemoryError):
            self.trees = None
            return None
        self.applied = strips
        return self.trees

    def _parsed(self) -> tuple[ast.Module, ast.Module] | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # an invalid escape sequence is no error here
                return ast.parse(self.texts[0]), ast.parse(self.texts[1])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def same(self, strips: Sequence[Strip]) -> bool | None:
        """Whether both versions compile to the same code once `strips` ran; None when one
        does not parse."""
        trees = self._at(strips)
        if trees is None:
            return None
        sources = _Sources(self.texts, context_free=self.context_free)
        try:
            return _same_block(trees[0].body, trees[1].body, sources)
        except (RecursionError, MemoryError):
            return None

    def changed_lines(self, strips: Sequence[Strip]) -> int | None:
        """How many lines differ once `strips` ran on both versions: 0 when they compile to the
        same code, else the changed lines of the two trees written out (`ast.unparse`: one
        statement a line, no comment); None when one does not parse."""
        same = self.same(strips)
        if same is None or same:
            return None if same is None else 0
        trees = self._at(strips)
        if trees is None:
            return None
        try:
            before, after = (ast.unparse(tree).split("\n") for tree in trees)
        except (ValueError, RecursionError, MemoryError):
            return None
        return _changed_count(before, after)


def _changed_count(before: list[str], after: list[str]) -> int:
    """How many lines a diff of the two lists changes: their common ends cut, then
    `difflib`'s matching with its junk heuristic (quick; it may match fewer lines than could
    be, never more, so a count is never below the true one)."""
    start = 0
    for left, right in zip(before, after, strict=False):
        if left != right:
            break
        start += 1
    end = 0
    for left, right in zip(reversed(before[start:]), reversed(after[start:]), strict=False):
        if left != right:
            break
        end += 1
    before, after = before[start : len(before) - end], after[start : len(after) - end]
    if not before or not after:
        return len(before) + len(after)
    matcher = difflib.SequenceMatcher(None, before, after)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    return len(before) + len(after) - 2 * matched


# --- renames --------------------------------------------------------------------------------------

_LAYOUT_TOKENS: Final = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})
_SKIPPED_TOKENS: Final = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.ENCODING})


def _code_tokens(text: str) -> list[tuple[int, str]] | None:
    """The module's tokens as (type, text), comments and line breaks inside brackets left out
    (a block's indentation by its kind alone); None when it does not tokenize."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in _SKIPPED_TOKENS:
                continue
            found.append((token.type, "" if token.type in _LAYOUT_TOKENS else token.string))
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return found


def name_mapping(pairs: Iterable[tuple[str, str]]) -> dict[str, str] | None:
    """The one mapping of names that turns each old module into its new one, token for token
    (strings, numbers, operators and layout all the same, comments aside): each old name
    becomes one new name and no two the same; None when there is none."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for old, new in pairs:
        before, after = _code_tokens(old), _code_tokens(new)
        if before is None or after is None or len(before) != len(after):
            return None
        for (kind, left), (other, right) in zip(before, after, strict=True):
            if kind != other or (left != right and kind != tokenize.NAME):
                return None
            if left == right:
                continue
            if forward.setdefault(left, right) != right or backward.setdefault(right, left) != left:
                return None
    return forward


def defined_names(text: str) -> frozenset[str] | None:
    """The names a module defines — functions, classes, parameters, assigned names and
    attributes (`self.x = …`), not imports; None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
    return frozenset(found)
