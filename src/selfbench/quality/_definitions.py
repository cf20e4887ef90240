"""The public names one source file defines, as an interface shows them (no bodies).

Python through `ast`: top-level functions, classes (their signature is their constructor's:
`__init__`, or a dataclass's or model's fields), their methods (`Class.method`, `self` left out),
module-level names assigned one at a time (`MAX_DEPTH: int = 8`, or a table such as
`dt_format_to_regex = {...}`: the tests may use either), and long flags (`--foo`) in
`add_argument(...)`/`option(...)` calls.
JavaScript and TypeScript through tree-sitter: exported functions, classes and the public
methods of exported classes, exported consts, `export { name }` of a top-level declaration,
CommonJS `module.exports` members, and commander's `.option("--foo ...")` flags.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from tree_sitter import Node

from selfbench.quality._js_parser import is_js, parse

__all__ = ["Definition", "definitions", "is_public", "module_doc"]

_SHORT_DEFAULT = 24
_FLAG_RE = re.compile(r"(?<![\w-])--[A-Za-z0-9][\w-]*")
_FLAG_CALLS = frozenset({"add_argument", "option", "Option", "requiredOption"})
_DATACLASS_BASES = frozenset({"NamedTuple", "BaseModel", "TypedDict"})


@dataclass(frozen=True, slots=True)
class Definition:
    """One public name a file defines, as the interface shows it."""

    name: str
    kind: str
    signature: str
    params: tuple[str, ...] = ()
    doc: str = ""
    source: str = ""
    """Its whole text in its file, body and decorators included ("" for a flag): whether a
    change left it as it was."""


def definitions(path: str, text: str) -> dict[str, Definition]:
    """The public names `text` (the file at `path`) defines, by qualified name (flags by the
    flag); nothing for a language it does not read or a file that does not parse."""
    if path.endswith((".py", ".pyi")):
        return _python_definitions(text)
    if is_js(path):
        return _js_definitions(text, path)
    return {}


def module_doc(path: str, text: str) -> str:
    """The first paragraph of a Python module's docstring ("" for none, or another language)."""
    if not path.endswith((".py", ".pyi")):
        return ""
    try:
        doc = ast.get_docstring(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return ""
    return _first_paragraph(doc or "")


def _first_paragraph(doc: str) -> str:
    lines = []
    for line in doc.strip().split("\n"):
        if not line.strip() or line.strip().startswith("@"):
            break
        lines.append(line.strip())
    return " ".join(lines)


_EXAMPLE_LINES = 3
"""An example is shown by at most this many lines of code."""


_TERSE_WORDS = 6
"""A first paragraph of fewer words is followed by the second, when that one is prose."""
_LEAD_LENGTH = 400
_HEADER_RE = re.compile(r"^\s*(?:[-=~^]{3,}|:\w|@|>>>|\.\. |[A-Z][\w ]{0,30}:$)", re.MULTILINE)
"""A paragraph that is a section of a docstring (numpy's underlined headers, Google's `Args:`,
reST fields, doctests), not prose."""


def _lead(doc: str) -> str:
    """The first paragraph, and the second when the first is terse and the second is prose
    (loguru's `reinstall`: "Reinstall the core of logger." then what it is for, "When using
    multiprocessing, you can pass logger as a parameter to the target …")."""
    first = _first_paragraph(doc)
    if len(first.split()) >= _TERSE_WORDS:
        return first
    paragraphs = [p for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    if len(paragraphs) < 2 or _HEADER_RE.search(paragraphs[1]):
        return first
    second = " ".join(line.strip() for line in paragraphs[1].split("\n"))
    joined = f"{first} {second}"
    return joined if len(joined) <= _LEAD_LENGTH else joined[:_LEAD_LENGTH].rsplit(" ", 1)[0] + " …"


def _summary(doc: str) -> str:
    """The lead (`_lead`), then the first example: a JSDoc `@example` block's code, or a
    doctest's first one-line `>>>` example with its output; a summary alone can be wrong where
    the example is exact ("Removes the query section" beside `filterQuery("/foo?a=1&b=2", …)
    // "/foo?b=2"`)."""
    first = _lead(doc)
    example = _jsdoc_example(doc) or _doctest_example(doc)
    return f"{first} Example: {example}".strip() if example else first


def _jsdoc_example(doc: str) -> str:
    lines = doc.strip().split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("@example")), None)
    if start is None:
        return ""
    code = [lines[start].strip().removeprefix("@example").strip()]
    for line in lines[start + 1 :]:
        if line.strip().startswith("@"):
            break
        code.append(line.strip())
    kept = [line for line in code if line and not line.startswith("```")]
    shown = "; ".join(line.rstrip(";") for line in kept[:_EXAMPLE_LINES]).replace("`", "'")
    return f"`{shown}`" if shown else ""


def _doctest_example(doc: str) -> str:
    """The first doctest that is one line (`>>> f(1)` and its output): a block's header (`>>> def
    subworker(logger):`, continued by `...` lines) shows nothing of what it does."""
    lines = [line.strip() for line in doc.strip().split("\n")]
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.startswith(">>> ")
            and not line.rstrip().endswith(":")
            and not (i + 1 < len(lines) and lines[i + 1].startswith("..."))
        ),
        None,
    )
    if start is None:
        return ""
    output = []
    for line in lines[start + 1 :]:
        if not line or line.startswith((">>>", "...")):
            break
        output.append(line)
    shown = lines[start].removeprefix(">>> ").replace("`", "'")
    result = " ".join(output[:_EXAMPLE_LINES]).replace("`", "'")
    return f"`{shown}` gives `{result}`" if result else f"`{shown}`"


def is_public(name: str) -> bool:
    """No segment of the (dotted) name starts with `_` or `#` (a private class member)."""
    return not any(part.startswith(("_", "#")) for part in name.split("."))


# --- Python ------------------------------------------------------------------------------------


def _python_definitions(text: str) -> dict[str, Definition]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):  # not Python 3, or nested past the parser
        return {}
    lines = text.splitlines(keepends=True)
    found: dict[str, Definition] = {}
    for node in tree.body:
        defined: dict[str, Definition] = {}
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defined[node.name] = _py_function(node.name, node, "function")
        elif isinstance(node, ast.ClassDef):
            defined[node.name] = _py_class(node)
            defined.update(_py_methods(node))
        elif (record := _py_functional_class(node)) is not None:
            defined[record.name] = record
        elif (constant := _py_constant(node)) is not None:
            defined[constant.name] = constant
        found.update(
            (name, replace(d, source=_py_source(lines, name, node))) for name, d in defined.items()
        )
    for flag in _py_flags(tree):
        found.setdefault(flag.name, flag)
    return {name: found[name] for name in found if is_public(name)}


def _py_source(lines: list[str], name: str, node: ast.stmt) -> str:
    """The lines of `name`'s definition: a method's own, else the whole top-level statement."""
    if isinstance(node, ast.ClassDef) and "." in name:
        leaf = name.split(".", 1)[1]
        node = next(
            (
                m
                for m in node.body
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef | ast.Assign)
                and leaf in _py_bound_names(m)
            ),
            node,
        )
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return "".join(lines[first - 1 : node.end_lineno or node.lineno])


def _py_bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    return set()


def _py_methods(node: ast.ClassDef) -> dict[str, Definition]:
    """A class's methods, and its aliases of them (`afatal = acritical`), by `Class.name`."""
    methods: dict[str, Definition] = {}
    for member in node.body:
        if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{node.name}.{member.name}"
            methods[name] = _py_function(name, member, "method")
        elif (
            isinstance(member, ast.Assign)
            and len(member.targets) == 1
            and isinstance(target := member.targets[0], ast.Name)
            and isinstance(member.value, ast.Name)
            and (aliased := methods.get(f"{node.name}.{member.value.id}")) is not None
        ):
            name = f"{node.name}.{target.id}"
            signature = aliased.signature.replace(aliased.name, name, 1)
            methods[name] = Definition(name, "method", signature, aliased.params, aliased.doc)
    return methods


def _short(node: ast.expr | None) -> str:
    """A default as the signature shows it: a short literal, else `...`."""
    if node is None:
        return "..."
    literal = isinstance(node, ast.Constant) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)
    )
    empty = isinstance(node, ast.Tuple | ast.List | ast.Dict | ast.Set) and not ast.unparse(node)[
        1:-1
    ].strip(" ,")
    shown = ast.unparse(node)
    return shown if (literal or empty) and len(shown) <= _SHORT_DEFAULT else "..."


def _shape(node: ast.expr) -> str:
    """A constant's value as the Interface shows it: `_short`'s, but a long container literal
    shows its kind and first entry (`{'%a': ..., ...}`, `('mg', ...)`), so that a reader knows a
    table from a list without the whole of it."""
    shown = _short(node)
    if shown != "..." or not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
        return shown
    whole = ast.unparse(node)
    entries = [*node.keys, *node.values] if isinstance(node, ast.Dict) else node.elts
    if len(whole) <= _SHORT_DEFAULT and all(
        entry is not None and _short(entry) != "..." for entry in entries
    ):
        return whole  # short, of literals only: `[1]`, `{'a': 1}`
    if isinstance(node, ast.Dict):
        first = node.keys[0]
        return "{...}" if first is None else f"{{{_short(first)}: ..., ...}}"
    brackets = {ast.Tuple: "()", ast.List: "[]", ast.Set: "{}"}[type(node)]
    return f"{brackets[0]}{_short(node.elts[0])}, ...{brackets[1]}"


def _py_parameter(arg: ast.arg, default: ast.expr | None, *, has_default: bool) -> str:
    shown = arg.arg
    if arg.annotation is not None:
        shown += f": {ast.unparse(arg.annotation)}"
    if has_default:
        shown += f" = {_short(default)}" if arg.annotation is not None else f"={_short(default)}"
    return shown


def _py_parameters(args: ast.arguments, *, bound: bool) -> tuple[list[str], list[str]]:
    """The rendered parameters and their names, the bound `self`/`cls` left out."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults.extend(args.defaults)
    shown: list[str] = []
    names: list[str] = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        if not (bound and index == 0):
            shown.append(
                _py_parameter(
                    arg, default, has_default=index >= len(positional) - len(args.defaults)
                )
            )
            names.append(arg.arg)
        if args.posonlyargs and index == len(args.posonlyargs) - 1 and shown:
            shown.append("/")
    if args.vararg is not None:
        shown.append("*" + _py_parameter(args.vararg, None, has_default=False))
    elif args.kwonlyargs:
        shown.append("*")
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        shown.append(_py_parameter(arg, kw_default, has_default=kw_default is not None))
        names.append(arg.arg)
    if args.kwarg is not None:
        shown.append("**" + _py_parameter(args.kwarg, None, has_default=False))
    return shown, names


def _is_bound(node: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> bool:
    decorators = {ast.unparse(d) for d in node.decorator_list}
    return kind == "method" and "staticmethod" not in decorators


def _py_function(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef, kind: str) -> Definition:
    shown, names = _py_parameters(node.args, bound=_is_bound(node, kind))
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    signature = f"{prefix}{name}({', '.join(shown)})"
    if node.returns is not None:
        signature += f" -> {ast.unparse(node.returns)}"
    doc = _summary(ast.get_docstring(node) or "")
    return Definition(name, kind, signature, tuple(names), doc)


def _py_class(node: ast.ClassDef) -> Definition:
    doc = _summary(ast.get_docstring(node) or "")
    for member in node.body:
        if isinstance(member, ast.FunctionDef) and member.name == "__init__":
            shown, names = _py_parameters(member.args, bound=True)
            return Definition(
                node.name, "class", f"{node.name}({', '.join(shown)})", tuple(names), doc
            )
    decorators = " ".join(ast.unparse(d) for d in node.decorator_list)
    bases = [ast.unparse(b) for b in (*node.bases, *node.keywords)]
    fields = [
        m for m in node.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)
    ]
    if fields and (
        "dataclass" in decorators or _DATACLASS_BASES & {b.split(".")[-1] for b in bases}
    ):
        shown = [
            _py_parameter(
                ast.arg(f.target.id, f.annotation), f.value, has_default=f.value is not None
            )
            for f in fields
            if isinstance(f.target, ast.Name) and "ClassVar" not in ast.unparse(f.annotation)
        ]
        named = tuple(f.target.id for f in fields if isinstance(f.target, ast.Name))
        return Definition(node.name, "class", f"{node.name}({', '.join(shown)})", named, doc)
    heritage = f"({', '.join(bases)})" if bases else ""
    return Definition(node.name, "class", f"class {node.name}{heritage}", (), doc)


def _py_functional_class(node: ast.stmt) -> Definition | None:
    """A record class made by a call, shown with its fields as a constructor:
    `Binding = NamedTuple("Binding", [("key", str), ...])` (`typing.NamedTuple`, `TypedDict`),
    `Point = namedtuple("Point", ["x", "y"])` or `"x y"`, `"x, y"`; None for any other statement.
    """
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target, call = node.targets[0], node.value
    if not (isinstance(target, ast.Name) and isinstance(call, ast.Call) and len(call.args) >= 2):
        return None
    kind = ast.unparse(call.func).split(".")[-1]
    fields = _record_fields(kind, call.args[1])
    if fields is None:
        return None
    shown = [f"{name}: {ast.unparse(kind_of)}" if kind_of else name for name, kind_of in fields]
    names = tuple(name for name, _ in fields)
    return Definition(target.id, "class", f"{target.id}({', '.join(shown)})", names)


Fields = list[tuple[str, ast.expr | None]]


def _record_fields(kind: str, spec: ast.expr) -> Fields | None:
    """The fields a functional `NamedTuple`, `TypedDict` or `namedtuple` call names, in order;
    None when `kind` is none of them or its fields are not literals."""
    read = _FIELD_READERS.get(kind)
    return None if read is None else read(spec)


def _namedtuple_fields(spec: ast.expr) -> Fields | None:
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return [(name, None) for name in spec.value.replace(",", " ").split()]
    if not isinstance(spec, ast.List | ast.Tuple):
        return None
    names = [e.value for e in spec.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return [(name, None) for name in names] if len(names) == len(spec.elts) else None


def _named_tuple_fields(spec: ast.expr) -> Fields | None:
    if not isinstance(spec, ast.List | ast.Tuple):
        return None
    fields: Fields = []
    for element in spec.elts:
        if not (isinstance(element, ast.Tuple) and len(element.elts) == 2):
            return None
        key, annotation = element.elts
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        fields.append((key.value, annotation))
    return fields


def _typed_dict_fields(spec: ast.expr) -> Fields | None:
    if not isinstance(spec, ast.Dict):
        return None
    keys = [k.value for k in spec.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    if len(keys) != len(spec.keys):
        return None
    return list(zip(keys, spec.values, strict=True))


_FIELD_READERS: dict[str, Callable[[ast.expr], Fields | None]] = {
    "namedtuple": _namedtuple_fields,
    "NamedTuple": _named_tuple_fields,
    "TypedDict": _typed_dict_fields,
}


def _py_constant(node: ast.stmt) -> Definition | None:
    target: ast.expr
    annotation: ast.expr | None
    value: ast.expr | None
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, annotation, value = node.targets[0], None, node.value
    elif isinstance(node, ast.AnnAssign):
        target, annotation, value = node.target, node.annotation, node.value
    else:
        return None
    if not isinstance(target, ast.Name):  # `a, b = ...` or `obj.attr = ...` defines no one name
        return None
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in _FIELD_READERS:
        return None  # a record class whose fields are no literals: a class, not a value
    typed = f": {ast.unparse(annotation)}" if annotation is not None else ""
    assigned = f" = {_shape(value)}" if value is not None else ""
    return Definition(target.id, "constant", f"{target.id}{typed}{assigned}")


def _py_flags(tree: ast.Module) -> Iterator[Definition]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        called = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if called not in _FLAG_CALLS:
            continue
        strings = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        flags = [s for s in strings if s.startswith("-")]
        helps = [k.value for k in node.keywords if k.arg == "help"]
        doc = helps[0].value if helps and isinstance(helps[0], ast.Constant) else ""
        yield from _flags(", ".join(flags), str(doc))


def _flags(spelled: str, doc: str) -> Iterator[Definition]:
    """The long flags one option's spelling (`-p, --port <n>`) declares."""
    for flag in _FLAG_RE.findall(spelled):
        yield Definition(flag, "flag", spelled, (), _first_paragraph(doc))


# --- JavaScript and TypeScript -----------------------------------------------------------------


def _text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return " ".join(node.text.decode("utf-8", "replace").split())


def _raw(node: Node) -> str:
    """A node's text as written."""
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def _jsdoc(node: Node) -> str:
    comment = node.prev_named_sibling
    if (
        comment is None
        or comment.type != "comment"
        or comment.end_point[0] < node.start_point[0] - 1
    ):
        return ""
    raw = comment.text.decode("utf-8", "replace") if comment.text is not None else ""
    if not raw.startswith("/**"):
        return ""
    lines = [line.strip().lstrip("*").strip() for line in raw[3:].removesuffix("*/").split("\n")]
    return _summary("\n".join(lines))


def _js_params(node: Node) -> tuple[str, tuple[str, ...]]:
    """A function node's parameter list as written (types kept), and its parameter names."""
    parameters = node.child_by_field_name("parameters")
    if parameters is None:
        single = node.child_by_field_name("parameter")
        return f"({_text(single)})", (_text(single),) if single is not None else ()
    names = []
    for parameter in parameters.named_children:
        pattern = parameter.child_by_field_name("pattern") or parameter
        if pattern.type == "assignment_pattern":
            pattern = pattern.child_by_field_name("left") or pattern
        if pattern.type == "identifier":
            names.append(_text(pattern))
    shown = _text(parameters).replace("( ", "(").replace(" )", ")")
    return shown, tuple(names)


def _js_function(name: str, node: Node, kind: str, doc: str) -> Definition:
    shown, names = _js_params(node)
    returns = node.child_by_field_name("return_type")
    return Definition(name, kind, f"{name}{shown}{_text(returns)}", names, doc, _raw(node))


_JS_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression",
     "arrow_function", "function", "generator_function"}
)  # fmt: skip
_JS_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})


def _js_class(name: str, node: Node, doc: str) -> Iterator[Definition]:
    body = node.child_by_field_name("body")
    members = body.named_children if body is not None else []
    heritage = next((_text(c) for c in node.named_children if c.type == "class_heritage"), "")
    signature = f"class {name}{' ' + heritage if heritage else ''}"
    params: tuple[str, ...] = ()
    for member in members:
        if member.type != "method_definition":
            continue
        method = _text(member.child_by_field_name("name"))
        hidden = any(
            c.type == "accessibility_modifier" and _text(c) != "public" for c in member.children
        )
        if method == "constructor":
            shown, params = _js_params(member)
            signature = f"{name}{shown}"
        elif not hidden and is_public(method):
            yield _js_function(f"{name}.{method}", member, "method", _jsdoc(member))
    yield Definition(name, "class", signature, params, doc, _raw(node))


def _js_declared(node: Node, doc: str) -> Iterator[Definition]:
    """The names one top-level declaration defines."""
    if node.type in _JS_FUNCTIONS and node.child_by_field_name("name") is not None:
        yield _js_function(_text(node.child_by_field_name("name")), node, "function", doc)
    elif node.type in _JS_CLASSES and node.child_by_field_name("name") is not None:
        yield from _js_class(_text(node.child_by_field_name("name")), node, doc)
    elif node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            name = _text(declarator.child_by_field_name("name"))
            if declarator.type == "variable_declarator" and name:
                yield from _js_value(name, declarator.child_by_field_name("value"), declarator, doc)


def _js_value(name: str, value: Node | None, declarator: Node, doc: str) -> Iterator[Definition]:
    if value is not None and value.type in _JS_FUNCTIONS:
        yield _js_function(name, value, "function", doc)
    elif value is not None and value.type in _JS_CLASSES:
        yield from _js_class(name, value, doc)
    else:
        typed = _text(declarator.child_by_field_name("type"))
        shown = _text(value)
        literal = value is not None and value.type in ("number", "string", "true", "false", "null")
        assigned = f" = {shown if literal and len(shown) <= _SHORT_DEFAULT else '...'}"
        yield Definition(
            name,
            "constant",
            f"const {name}{typed}{assigned if value else ''}",
            (),
            doc,
            _raw(declarator),
        )


def _js_definitions(text: str, path: str) -> dict[str, Definition]:
    root = parse(text.encode("utf-8"), path=path).root_node
    local: dict[str, Definition] = {}
    found: dict[str, Definition] = {}
    exported: list[str] = []
    for node in root.named_children:
        declaration = (
            node.child_by_field_name("declaration") if node.type == "export_statement" else None
        )
        if declaration is not None:
            found.update((d.name, d) for d in _js_declared(declaration, _jsdoc(node)))
        elif node.type == "export_statement":
            exported.extend(_js_export_names(node))
        elif node.type == "expression_statement":
            exports = _js_commonjs(node, local)
            found.update(exports[0])
            exported.extend(exports[1])
        else:
            local.update((d.name, d) for d in _js_declared(node, _jsdoc(node)))
    for name in exported:
        for qualified, definition in local.items():
            if qualified == name or qualified.startswith(f"{name}."):
                found.setdefault(qualified, definition)
    found.update((f.name, f) for f in _js_flags(root))
    return {name: found[name] for name in found if is_public(name)}


def _js_export_names(node: Node) -> Iterator[str]:
    for clause in node.named_children:
        if clause.type == "export_clause":
            for specifier in clause.named_children:
                yield _text(specifier.child_by_field_name("name"))


def _js_commonjs(
    node: Node, local: Mapping[str, Definition]
) -> tuple[dict[str, Definition], list[str]]:
    """`module.exports.name = function …` and `module.exports = { a, b }`."""
    assignment = node.named_children[0] if node.named_children else None
    if assignment is None or assignment.type != "assignment_expression":
        return {}, []
    left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
    target = _text(left)
    if target in ("module.exports", "exports") and right is not None and right.type == "object":
        names = [
            _text(p) for p in right.named_children if p.type == "shorthand_property_identifier"
        ]
        return {}, names
    if (
        left is not None
        and left.type == "member_expression"
        and target.startswith(("module.exports.", "exports."))
    ):
        name = _text(left.child_by_field_name("property"))
        if right is not None and right.type == "identifier" and _text(right) in local:
            return {name: local[_text(right)]}, []
        return {d.name: d for d in _js_value(name, right, assignment, _jsdoc(node))}, []
    return {}, []


def _js_flags(root: Node) -> Iterator[Definition]:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type != "call_expression":
            continue
        function = node.child_by_field_name("function")
        called = function.child_by_field_name("property") if function is not None else None
        if called is None or _text(called) not in _FLAG_CALLS:
            continue
        arguments = node.child_by_field_name("arguments")
        strings = [
            _string(a)
            for a in (arguments.named_children if arguments else [])
            if a.type == "string"
        ]
        if strings and strings[0].startswith("-"):
            yield from _flags(strings[0], strings[1] if len(strings) > 1 else "")


def _string(node: Node) -> str:
    return "".join(_text(c) for c in node.named_children if c.type == "string_fragment")
