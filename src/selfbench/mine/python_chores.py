"""What a Python module's syntax tree is without its docstrings, typing or translation calls.
Pure.

Two versions of a module whose trees are equal once the same strips ran on both differ only in
what the strips removed (`selfbench.mine.code_chores`). `strip_typing` removes, in place:

* every annotation: of parameters, returns and variables (`x: int = 1` becomes `x = 1`, a bare
  `x: int` goes) — except in a class that reads them: a dataclass, an attrs class, a named
  tuple or typed dict keeps its fields (whatever their types; `ClassVar`, `InitVar` and
  `KW_ONLY` say what is a field), and a class with another decorator, a keyword
  (`metaclass=`), a pydantic- or msgspec-like base (`BaseModel`, `Struct` …) or a base of the
  same module that is such a class keeps its annotations whole;
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
`pgettext(context, "…")` … of string literals by its string, and drops the imports and the
assignments of those names (`from gettext import gettext as _`, `_ = translation.gettext`).

Trees are compared by their dumps, positions aside (`_same`), and the strips walk only the
statements in Python, not every expression.
"""

from __future__ import annotations

import ast
import difflib
import re
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, Literal

__all__ = [
    "TRANSLATION_CALLS",
    "TRANSLATION_NAMES",
    "ModulePair",
    "Strip",
    "strip_docstrings",
    "strip_translation",
    "strip_typing",
]

_TYPING_MODULES: Final = frozenset({"typing", "typing_extensions", "mypy_extensions", "_typeshed"})
_TYPE_FACTORIES: Final = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})
_TYPING_DECORATORS: Final = frozenset({"final", "override", "type_check_only"})
_FIELD_BASES: Final = frozenset({"NamedTuple", "TypedDict"})
_FIELD_DECORATORS: Final = frozenset({"dataclass", "s", "attrs", "define", "frozen", "mutable"})
_FIELD_MARKERS: Final = frozenset({"ClassVar", "InitVar", "KW_ONLY"})
_TYPE_BASES: Final = frozenset(
    {"BaseModel", "BaseSettings", "RootModel", "SQLModel", "Struct", "Schema", "Model", "Document"}
)
TRANSLATION_CALLS: Final = frozenset(
    {
        "_", "gettext", "ugettext", "pgettext", "gettext_lazy", "ugettext_lazy",
        "pgettext_lazy", "lazy_gettext", "lazy_pgettext", "gettext_noop", "N_",
    }
)  # fmt: skip
"""Calls that wrap one string literal (after a context string, for the `pgettext` ones)."""
TRANSLATION_NAMES: Final = TRANSLATION_CALLS | {"ngettext", "npgettext", "ngettext_lazy"}
"""Every translation function's name, the plural ones too."""

Reading = Literal["none", "fields", "types"]
"""How a class reads its annotations: not at all, as a list of fields (the types do not
matter), or their types too (see the module)."""
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


def strip_docstrings(tree: ast.Module, _text: str = "") -> None:
    """Remove the module's docstrings, in place (`selfbench.quality._documentation`'s rule:
    the first string statement of each module, class and function)."""
    from selfbench.quality._documentation import remove_docstrings  # noqa: PLC0415 - heavy

    remove_docstrings(tree)


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
                self.readers[node.name] = _reading(node, self.readers)

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


def _reading(node: ast.ClassDef, known: dict[str, Reading]) -> Reading:
    bases = [_final_name(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases]
    decorators = [
        _final_name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list
    ]
    inherited = {known.get(base or "", "none") for base in bases}
    fields = not _FIELD_BASES.isdisjoint(bases)
    if "types" in inherited or (node.keywords and not fields):
        return "types"
    if any(name not in _FIELD_DECORATORS for name in decorators):
        return "types"
    if decorators or fields or "fields" in inherited:
        return "fields"
    return "types" if not _TYPE_BASES.isdisjoint(bases) else "none"


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
        marked = reading == "fields" and not _FIELD_MARKERS.isdisjoint(_names([node.annotation]))
        if reading == "types" or marked:
            return [node]
        self.drop(node.annotation)
        if reading == "fields":  # a field all the same, of whatever type
            node.annotation = ast.copy_location(ast.Constant(value="field"), node.annotation)
            return [node]
        if node.value is None:
            return []
        assign = ast.Assign(targets=[node.target], value=node.value, type_comment=None)
        return [ast.copy_location(assign, node)]

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
        module = self.module
        if any(module.names(d, frozenset({"overload"})) for d in node.decorator_list):
            self.drop(node)
            return []
        node.decorator_list = [
            d for d in node.decorator_list if not module.names(d, _TYPING_DECORATORS)
        ]
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None]
        self.drop(node.returns, *(arg.annotation for arg in every))
        node.returns = None
        for arg in every:
            arg.annotation = None
        self.inner(node, "none")
        return [node]

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
    lines = text.splitlines()

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
        self.generic_visit(node)
        name = _final_name(node.func) or ""
        if name not in TRANSLATION_CALLS or node.keywords or not node.args:
            return node
        if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
            return node
        if len(node.args) == 1 or (len(node.args) == 2 and "pgettext" in name):
            return node.args[-1]
        return node


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
        self.lines = (texts[0].splitlines(), texts[1].splitlines())
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
            lines = [ast.unparse(tree).splitlines() for tree in trees]
        except (ValueError, RecursionError, MemoryError):
            return None
        matcher = difflib.SequenceMatcher(None, lines[0], lines[1], autojunk=False)
        changed: int = sum(
            (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
        )
        return changed
