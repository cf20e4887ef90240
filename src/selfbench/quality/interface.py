"""The interface a task's tests use: the public names the gold adds or changes, with signatures.

An item is a public name (no segment starting with `_`) that the gold patch adds or whose
signature it changes, and that the test patch's added lines use (as an identifier, an
attribute or inside a string):

* **function**, **method** (`Class.method`), **class**: added, or with a changed signature; a
  class's signature is its constructor's (`__init__`, `constructor`, a dataclass's fields);
* **option**: a parameter added to a function, method or constructor that exists at the base
  (the item's name is the parameter's, its signature the whole new signature);
* **constant**: an added public module-level assignment of one name, with its annotation if
  any and its value when short, else a long container's kind and first entry (Python:
  `MAX_DEPTH: int = 8`, a table `dt_format_to_regex = {'%a': ..., ...}`, `UNITS = ('mg', ...)`)
  or exported `const` (JavaScript, TypeScript);
* **flag**: a long command-line flag (`--foo`) added as a string in an `add_argument(...)` or
  `option(...)` call (argparse, click, commander);
* **module**: a file the gold adds that a test imports: dotted for Python (`pkg.parser`, a
  suffix of two or more of its path's segments; `from pkg import parser` too, unless an item is
  called `parser`), the path without extension for JavaScript and TypeScript (`src/parser`, by
  a relative import resolved against the test file, or a package path ending in its name);
* **variable**: an environment variable the gold's changed files read (`os.environ[...]`,
  `os.getenv(...)`, `process.env.X`) that they did not at the base, and the tests name;
* **key**: a keyword argument or dict/object literal key the tests pass (`{ kind: [String] }`)
  that the gold's added lines read or declare (`.kind`, `["kind"]`, `.get("kind")`, `kind?:`)
  and the changed files did not at the base; its signature is its TypeScript declaration
  (`kind?: StringConstructor[]`) where one is added;
* **attribute**: a public attribute the tests read (`result.count`) that the gold's added lines
  newly set on an instance (`self.count = …`, `this.count = …`).

Python is read with `ast`; JavaScript and TypeScript with tree-sitter's grammars (exported
functions, classes, the public methods of exported classes, exported consts, CommonJS
`module.exports` members). A signature holds names, parameters, types and short literal defaults
(others show as `...`); never a body. The Interface section adds the lead of each item's
docstring or JSDoc comment (its first paragraph, the second too when the first is terse) and
its first example; it never names a file: the path stays in the item only.

`check_instruction` says what an instruction leaves out: the items it does not name (a module
by its whole name), and the
errors (`pytest.raises(X)`, `assertRaises(X)`, `expect(...).toThrow(X)`) and messages
(`match="..."`, `assertRaisesRegex(X, "...")`, `toThrow("...")`) the tests assert that it does
not state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from selfbench._git import base_texts, patched_texts
from selfbench.artifacts.quality_record import InstructionCheck, InterfaceItem
from selfbench.patches import added_lines, parse_patch
from selfbench.quality._definitions import Definition, definitions, is_public, module_doc
from selfbench.quality._js_parser import is_js
from selfbench.quality.usage import (
    TestUsage,
    asserted_errors,
    asserted_messages,
    read_test_usage,
)

__all__ = [
    "INTERFACE_HEADING",
    "changed_file_texts",
    "check_instruction",
    "interface_docs",
    "interface_items",
    "interface_section",
    "spelled_names",
    "stray_names",
]

INTERFACE_HEADING = "## Interface"
_UNCHANGING = ("constant", "flag")
"""Kinds that are new or not at all: a constant's value or a flag's spelling is no signature."""


# --- reading the files -------------------------------------------------------------------------


def changed_file_texts(
    repo: Path, base: str, gold_patch: bytes
) -> tuple[dict[str, str], dict[str, str]]:
    """The text of each file the gold patch changes, at `base` and with the gold applied (a file
    the gold adds is only in the second, one it deletes only in the first); binary files are in
    neither. `repo` is not touched.

    Raises:
        GitError: the base commit is missing or the gold patch does not apply to it.
    """
    changes = [
        change for change in parse_patch(gold_patch, lenient=True).files if not change.binary
    ]
    before = [c.old_path for c in changes if c.old_path is not None and c.status != "added"]
    after = [c.new_path for c in changes if c.new_path is not None and c.status != "deleted"]
    if not before and not after:
        return {}, {}
    return _present(base_texts(repo, base, before)), _present(
        patched_texts(repo, base, gold_patch, after)
    )


def _present(texts: Mapping[str, str | None]) -> dict[str, str]:
    return {path: text for path, text in texts.items() if text is not None}


# --- the items ---------------------------------------------------------------------------------


def _uses(text: str, name: str) -> bool:
    """The test's added lines use `name`'s last segment (a flag as spelled)."""
    leaf = name if name.startswith("-") else name.rsplit(".", 1)[-1]
    edge = r"[\w-]" if leaf.startswith("-") else r"[\w$]"
    return re.search(rf"(?<!{edge}){re.escape(leaf)}(?!{edge})", text) is not None


def _changes(base: Definition | None, gold: Definition, used: str) -> Iterator[tuple[str, str]]:
    """(kind, name) of what the gold adds or changes in one definition that the tests use:
    the parameters it adds that the tests name (options), else the definition itself."""
    if base is not None and (base.signature == gold.signature or gold.kind in _UNCHANGING):
        return
    if base is not None and all(name in gold.params for name in base.params):
        added = [name for name in gold.params if name not in base.params and is_public(name)]
        options = [name for name in added if _uses(used, name)]
        if options:
            yield from (("option", name) for name in options)
            return
    if _uses(used, gold.name):
        yield gold.kind, gold.name


def interface_items(
    gold_patch: bytes,
    test_patch: bytes,
    base_files: Mapping[str, str],
    gold_files: Mapping[str, str],
) -> tuple[InterfaceItem, ...]:
    """The public names the gold adds or whose signature it changes, that the test patch's added
    lines use; in the gold patch's file order, then each file's order.

    `base_files` and `gold_files` hold each gold-changed path's text at the base and with the
    gold applied (`changed_file_texts`). A name some other changed file defined at the base
    with the same signature (a move) is not new.
    """
    used = added_lines(test_patch)
    before: dict[str, Definition] = {}
    for path, text in sorted(base_files.items()):
        before.update(definitions(path, text))
    items: dict[tuple[str, str], InterfaceItem] = {}
    for path in parse_patch(gold_patch, lenient=True).paths:
        if path not in gold_files:
            continue
        old = definitions(path, base_files[path]) if path in base_files else {}
        for definition in definitions(path, gold_files[path]).values():
            known = old.get(definition.name) or before.get(definition.name)
            if known is not None and known.signature == definition.signature:
                continue
            for kind, name in _changes(old.get(definition.name), definition, used):
                item = InterfaceItem(
                    name=name, kind=kind, signature=definition.signature, path=path
                )
                items.setdefault((name, definition.signature), item)
    usage = read_test_usage(test_patch)
    named = {item.name.rsplit(".", 1)[-1] for item in items.values()}
    for item in (
        *_modules(gold_patch, usage, gold_files, named),
        *_variables(base_files, gold_files, used),
        *_keys_and_attributes(gold_patch, usage, base_files, gold_files, named),
    ):
        items.setdefault((item.name, item.signature), item)
    return tuple(items.values())


def _python_module(path: str) -> tuple[str, ...]:
    parts = tuple(path.removesuffix(".py").split("/"))
    return parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts


def _imported_python(parts: tuple[str, ...], imported: str) -> bool:
    """`imported` names the module at `parts` (a suffix of two or more of its segments, or the
    whole of a one-segment path)."""
    wanted = tuple(imported.split("."))
    least = min(2, len(parts))
    return len(wanted) >= least and parts[-len(wanted) :] == wanted


def _imported_js(stem: str, specifier: str) -> bool:
    """`specifier` (resolved, without extension) names the file whose path without extension is
    `stem`: the same path, or a package path ending in the same file name."""
    if specifier == stem:
        return True
    return (
        "/" in specifier
        and not specifier.startswith((".", "/"))
        and (specifier.rsplit("/", 1)[1] == stem.rsplit("/", 1)[-1])
    )


def _modules(
    gold_patch: bytes, usage: TestUsage, gold_files: Mapping[str, str], named: set[str]
) -> Iterator[InterfaceItem]:
    """The modules the gold adds that a test imports: dotted (Python) or as a path without its
    extension (JavaScript, TypeScript). `from package import name` imports a module `name` only
    when no item of the interface is called `name` (`named`): that is a function re-exported."""
    imported = [
        name
        for names in usage.imports.values()
        for name in names
        if "/" in name or name.rsplit(".", 1)[-1] not in named
    ]
    for change in parse_patch(gold_patch, lenient=True).files:
        path = change.new_path
        if change.status != "added" or path is None or path not in gold_files:
            continue
        if path.endswith(".py"):
            parts = _python_module(path)
            spelled = next((n for n in imported if _imported_python(parts, n)), None)
        elif is_js(path):
            stem = _JS_STEM_RE.sub("", path).removesuffix("/index")
            spelled = stem if any(_imported_js(stem, n) for n in imported) else None
        else:
            continue
        if spelled is not None and is_public(spelled.replace("/", ".")):
            yield InterfaceItem(name=spelled, kind="module", signature=spelled, path=path)


_JS_STEM_RE = re.compile(r"\.(?:[cm]?[jt]sx?)$")
_VARIABLE_RES = (
    re.compile(r"""\benviron(?:\.get|\.setdefault|\.pop)?\s*[\[(]\s*["']([A-Z][A-Z0-9_]*)["']"""),
    re.compile(r"""\bgetenv\(\s*["']([A-Z][A-Z0-9_]*)["']"""),
    re.compile(
        r"""\bprocess\.env(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*["'`]([A-Z][A-Z0-9_]*)["'`]\s*\])"""
    ),
)
"""An environment variable read: `os.environ[...]`, `os.getenv(...)`, `process.env.X`."""


def _read_variables(texts: Iterable[str]) -> dict[str, None]:
    found: dict[str, None] = {}
    for text in texts:
        for pattern in _VARIABLE_RES:
            for match in pattern.finditer(text):
                found[next(group for group in match.groups() if group)] = None
    return found


def _variables(
    base_files: Mapping[str, str], gold_files: Mapping[str, str], used: str
) -> Iterator[InterfaceItem]:
    """The environment variables the gold's files newly read and the tests name."""
    before = _read_variables(base_files.values())
    for path, text in gold_files.items():
        for name in _read_variables([text]):
            if name not in before and _uses(used, name):
                yield InterfaceItem(name=name, kind="variable", signature=name, path=path)


def _key_read(key: str) -> re.Pattern[str]:
    """A read (or declaration) of the option or configuration key `key` in source text."""
    k = re.escape(key)
    return re.compile(
        rf"""(?:(?<![\w$])\.{k}\b(?!\s*\()|\[\s*["'`]{k}["'`]\s*\]|\.(?:get|pop|setdefault)\(\s*["']{k}["']"""
        rf"""|(?<![\w$.])(?:readonly\s+)?{k}\??\s*:(?![:=])|\{{[^{{}}]*\b{k}\b[^{{}}]*\}}\s*=)"""
    )


_MIN_KEY = 2


def _added_sources(gold_patch: bytes, gold_files: Mapping[str, str]) -> dict[str, str]:
    """The added lines of each source file (Python, JavaScript, TypeScript) the gold leaves."""
    patch = parse_patch(gold_patch, lenient=True)
    return {
        path: added_lines(patch.section(change))
        for change in patch.files
        if (path := change.new_path) is not None
        and path in gold_files
        and is_implementation_source(path)
    }


def _assigned(name: str) -> re.Pattern[str]:
    """An instance attribute `name` set in a method (`self.name =`, `this.name =`)."""
    return re.compile(rf"\b(?:self|this)\.{re.escape(name)}\s*(?::[^=\n]+)?=(?!=)")


def _newly_used(
    names: Iterable[str],
    pattern_of: Callable[[str], re.Pattern[str]],
    base_files: Mapping[str, str],
    added: Mapping[str, str],
    named: set[str],
) -> Iterator[tuple[str, str, str]]:
    """(name, path, added lines) of each public name the tests use whose pattern (a key read,
    an attribute set) the gold's added lines in `path` match and no changed file matched at the
    base; a name an item already has is left out."""
    for name in sorted(names):
        if name in named or not is_public(name) or len(name) < _MIN_KEY:
            continue
        pattern = pattern_of(name)
        if any(pattern.search(text) for text in base_files.values()):
            continue
        found = next(((path, text) for path, text in added.items() if pattern.search(text)), None)
        if found is not None:
            yield name, *found


def _keys_and_attributes(
    gold_patch: bytes,
    usage: TestUsage,
    base_files: Mapping[str, str],
    gold_files: Mapping[str, str],
    named: set[str],
) -> Iterator[InterfaceItem]:
    """The keys the tests pass (keyword arguments, literal keys) that the gold's added lines
    newly read or declare, with their declared type where a TypeScript declaration gives one;
    then the public attributes the tests read that the gold newly sets on an instance
    (`self.count = 0`)."""
    added = _added_sources(gold_patch, gold_files)
    for key, path, text in _newly_used(usage.keys, _key_read, base_files, added, named):
        yield InterfaceItem(name=key, kind="key", signature=_key_shape(key, text), path=path)
    attributes = usage.attributes - usage.keys
    for name, path, _ in _newly_used(attributes, _assigned, base_files, added, named):
        yield InterfaceItem(name=name, kind="attribute", signature=name, path=path)


def is_implementation_source(path: str) -> bool:
    """A source file an interface reads (Python, JavaScript, TypeScript)."""
    return path.endswith((".py", ".pyi")) or is_js(path)


def _key_shape(key: str, text: str) -> str:
    """`key?: Type` where an added TypeScript property declaration gives it; else the key."""
    declared = re.search(
        rf"^\s*(?:readonly\s+)?({re.escape(key)}\??\s*:\s*[^;,{{}}=]+?)\s*[;,]?\s*$",
        text,
        re.MULTILINE,
    )
    return " ".join(declared.group(1).split()) if declared is not None else key


def interface_docs(items: Sequence[InterfaceItem], gold_files: Mapping[str, str]) -> dict[str, str]:
    """The lead and first example of each item's docstring, JSDoc comment or help text
    (`_definitions`), by item name (items without one left out)."""
    docs: dict[str, str] = {}
    for path in dict.fromkeys(item.path for item in items):
        defined = definitions(path, gold_files.get(path, ""))
        for item in items:
            definition = defined.get(item.name) if item.path == path else None
            if definition is not None and definition.doc:
                docs[item.name] = definition.doc
            elif item.path == path and item.kind == "module":
                docs[item.name] = module_doc(path, gold_files.get(path, ""))
    return {name: doc for name, doc in docs.items() if doc}


_KIND_WORDS = {
    "function": "function",
    "method": "method",
    "class": "class",
    "constant": "constant",
    "flag": "command-line flag",
    "module": "module",
    "variable": "environment variable",
    "key": "option key",
    "attribute": "attribute",
}


def interface_section(items: Sequence[InterfaceItem], docs: Mapping[str, str]) -> str:
    """The Markdown "## Interface" section: each item's signature and documented behaviour; ""
    for no items. Never a body, a test or a file path."""
    if not items:
        return ""
    lines = [INTERFACE_HEADING, ""]
    for item in items:
        if item.kind == "option":
            lines.append(f"- option `{item.name}`, a new parameter of `{item.signature}`")
        elif item.kind == "module":
            lines.append(f"- module `{item.signature}` (new)")
        else:
            lines.append(f"- {_KIND_WORDS.get(item.kind, item.kind)} `{item.signature}`")
        if docs.get(item.name):
            lines.append(f"  {docs[item.name]}")
    return "\n".join(lines)


_CALLED_RE = re.compile(r"(?:async\s+)?(?:class\s+)?([A-Za-z_$][\w$.]*)\s*\(")
"""The callable a signature belongs to (`url_query_parameter(url, …)`, `Client.send(…)`)."""


def spelled_names(
    items: Sequence[InterfaceItem], gold_files: Mapping[str, str] | None = None
) -> set[str]:
    """The names an instruction with these items spells as code: each item's own (a method's
    last segment), the callable each signature belongs to (the function an option is a new
    parameter of), and every public name the gold's changed files define (`gold_files`: the
    function a test is named after, whose signature did not change)."""
    names = {item.name.rsplit(".", 1)[-1] for item in items}
    for path, text in (gold_files or {}).items():
        names.update(name.rsplit(".", 1)[-1] for name in definitions(path, text))
    for item in items:
        called = _CALLED_RE.match(item.signature)
        if called is not None:
            names.add(called.group(1).rsplit(".", 1)[-1])
    return names


# --- the check ---------------------------------------------------------------------------------


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _named(prompt: str, name: str) -> bool:
    return _uses(prompt, name)


def _states(prompt: str, item: InterfaceItem) -> bool:
    """The prompt names the item: a module by its whole dotted name or path, anything else by
    its own name (a method's last segment, a flag as spelled)."""
    if item.kind == "module":
        pattern = rf"(?<![\w$./-]){re.escape(item.name)}(?![\w$/-]|\.\w)"
        return re.search(pattern, prompt) is not None
    return _named(prompt, item.name)


def _code_mention(line: str, name: str) -> bool:
    """`line` names `name` as code: quoted (`` `name` ``, `` `name()` ``), called (`name(`), or
    spelled as no word of prose is (`snake_case`, `camelCase`, `Class.method`); a method by its
    qualified name, or by its own name quoted or called."""
    leaf = name.rsplit(".", 1)[-1]
    quoted = rf"`{re.escape(leaf)}(?:\(\))?`|(?<![\w$.]){re.escape(leaf)}\("
    if re.search(quoted, line) is not None:
        return True
    if "." in name:
        return re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", line) is not None
    code_like = "_" in name or re.search(r"[a-z][A-Z]", name) is not None
    return code_like and _uses(line, name)


def _first_line(prompt: str) -> str:
    return next((line for line in prompt.splitlines() if line.strip()), "")


def stray_names(
    prompt: str,
    items: Sequence[InterfaceItem],
    base_files: Mapping[str, str],
    gold_files: Mapping[str, str],
    tests: str,
) -> tuple[str, ...]:
    """The names the prompt's first line gives as code that only mislead: each a public
    definition of a file the gold changes, left by the gold exactly as it was (a method, with its
    class) and used nowhere in the changed test files (`tests`, their texts with the test patch
    applied), when the gold adds, changes or removes a public definition and the line names none
    of them (scule's "feat: `trainCase` util" for a change that adds `titleCase`). A gold that
    changes only private code says nothing here: the public name a title gives is the way in."""
    line = _first_line(prompt)
    if not line:
        return ()
    left: list[str] = []
    touched: set[str] = set()
    for path in sorted(set(base_files) | set(gold_files)):
        before = definitions(path, base_files[path]) if path in base_files else {}
        after = definitions(path, gold_files[path]) if path in gold_files else {}
        touched.update(name for name in before if name not in after)  # removed
        for name, definition in after.items():
            kept = before.get(name)
            if definition.kind == "flag":  # no source of its own: touched when it is new
                if kept is None:
                    touched.add(name)
                continue
            if kept is not None and kept.source == definition.source and definition.source:
                left.append(name)
            else:
                touched.add(name)
    left = [name for name in left if name.split(".", 1)[0] not in touched or "." not in name]
    if not touched or any(
        _code_mention(line, name) for name in (*touched, *(i.name for i in items))
    ):
        return ()
    return tuple(
        dict.fromkeys(name for name in left if _code_mention(line, name) and not _uses(tests, name))
    )


def check_instruction(
    prompt: str,
    items: Sequence[InterfaceItem],
    test_patch: bytes = b"",
    files: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
    tests: Mapping[str, str] | None = None,
) -> InstructionCheck:
    """What `prompt` leaves out of what the tests check: each item whose name (a method's own
    name, a flag as spelled) it does not hold, then `raises X` for each error class the test
    patch's added lines assert and it does not name, then `message "..."` for each asserted
    message it does not state (case and spacing aside); and what its first line names that
    only misleads (`stray_names`, given the changed files' texts at the base and with the gold,
    `files`, and the changed test files' texts, `tests`; their added lines without them)."""
    missing = [item.name for item in items if not _states(prompt, item)]
    used = added_lines(test_patch)
    missing.extend(f"raises {name}" for name in asserted_errors(used) if not _named(prompt, name))
    folded = _normal(prompt)
    missing.extend(
        f"message {json.dumps(' … '.join(' '.join(p.split()) for p in pieces), ensure_ascii=False)}"
        for pieces in asserted_messages(used)
        if not all(_normal(piece) in folded for piece in pieces)
    )
    return InstructionCheck(
        interface=tuple(items),
        missing=tuple(dict.fromkeys(missing)),
        strays=stray_names(
            prompt, items, *files, "\n".join(tests.values()) if tests is not None else used
        ),
    )
