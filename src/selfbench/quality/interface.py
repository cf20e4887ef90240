"""The interface a task's tests use: the public names the gold adds or changes, with signatures.

An item is a public name (no segment starting with `_`) that the gold patch adds or whose
signature it changes, and that the test patch's added lines use (as an identifier, an
attribute or inside a string):

* **function**, **method** (`Class.method`), **class**: added, or with a changed signature; a
  class's signature is its constructor's (`__init__`, `constructor`, a dataclass's fields);
* **option**: a parameter added to a function, method or constructor that exists at the base
  (the item's name is the parameter's, its signature the whole new signature);
* **constant**: an added module-level `UPPER_CASE` assignment (Python) or exported `const`
  (JavaScript, TypeScript);
* **flag**: a long command-line flag (`--foo`) added as a string in an `add_argument(...)` or
  `option(...)` call (argparse, click, commander).

Python is read with `ast`; JavaScript and TypeScript with tree-sitter's grammars (exported
functions, classes, the public methods of exported classes, exported consts, CommonJS
`module.exports` members). A signature holds names, parameters, types and short literal defaults
(others show as `...`); never a body. The Interface section adds the first paragraph of each
item's docstring or JSDoc comment; it never names a file: the path stays in the item only.

`check_instruction` says what an instruction leaves out: the items it does not name, and the
errors (`pytest.raises(X)`, `assertRaises(X)`, `expect(...).toThrow(X)`) and messages
(`match="..."`, `assertRaisesRegex(X, "...")`, `toThrow("...")`) the tests assert that it does
not state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from selfbench._git import base_texts, patched_texts
from selfbench.artifacts.quality_record import InstructionCheck, InterfaceItem
from selfbench.patches import added_lines, parse_patch
from selfbench.quality._definitions import Definition, definitions, is_public

__all__ = [
    "INTERFACE_HEADING",
    "changed_file_texts",
    "check_instruction",
    "interface_docs",
    "interface_items",
    "interface_section",
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
    return tuple(items.values())


def interface_docs(items: Sequence[InterfaceItem], gold_files: Mapping[str, str]) -> dict[str, str]:
    """The first paragraph of each item's docstring, JSDoc comment or help text, by item name
    (items without one left out)."""
    docs: dict[str, str] = {}
    for path in dict.fromkeys(item.path for item in items):
        defined = definitions(path, gold_files.get(path, ""))
        for item in items:
            definition = defined.get(item.name) if item.path == path else None
            if definition is not None and definition.doc:
                docs[item.name] = definition.doc
    return docs


_KIND_WORDS = {
    "function": "function",
    "method": "method",
    "class": "class",
    "constant": "constant",
    "flag": "command-line flag",
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
        else:
            lines.append(f"- {_KIND_WORDS.get(item.kind, item.kind)} `{item.signature}`")
        if docs.get(item.name):
            lines.append(f"  {docs[item.name]}")
    return "\n".join(lines)


# --- the check ---------------------------------------------------------------------------------

_RAISES_RE = re.compile(
    r"(?:\b\w+\.raises|assertRaises(?:Regexp?|Regex)?)\(\s*\(?\s*([\w.]+(?:\s*,\s*[\w.]+)*)"
    r"|\.toThrow(?:Error)?\(\s*([A-Z][\w.]*)\s*\)"
)
_PY_STRING = r"""[rRbBuU]{0,2}(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')"""
_JS_STRING = r"""(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`([^`$]*)`)"""
_PATTERN_RES = (
    re.compile(rf"\bmatch\s*=\s*{_PY_STRING}"),
    re.compile(rf"assertRaisesRegexp?\(\s*[\w.]+\s*,\s*{_PY_STRING}"),
    re.compile(r"\.toThrow(?:Error)?\(\s*/((?:[^/\\\n]|\\.)+)/[a-z]*\s*\)"),
)
"""Messages asserted by a regular expression (`match=`, `assertRaisesRegex`, `toThrow(/…/)`)."""
_LITERAL_RE = re.compile(rf"\.toThrow(?:Error)?\(\s*{_JS_STRING}\s*\)")
"""Messages asserted as text (`toThrow("…")`: a substring)."""
_PATTERN_TOKEN_RE = re.compile(r"\\([A-Za-z])|\\(.)|([\[\](){}|^$*+?.])|([^\\\[\](){}|^$*+?.]+)")
_MIN_PIECE = 3


def _raised(text: str) -> list[str]:
    names: list[str] = []
    for match in _RAISES_RE.finditer(text):
        for name in (match.group(1) or match.group(2) or "").split(","):
            leaf = name.strip().rsplit(".", 1)[-1]
            if leaf[:1].isupper():
                names.append(leaf)
    return names


def _pattern_pieces(pattern: str) -> list[str]:
    """The runs of literal text a regular expression holds (escaped characters are literal)."""
    pieces, current = [], ""
    for match in _PATTERN_TOKEN_RE.finditer(pattern):
        klass, escaped, syntax, text = match.groups()
        if klass is not None or syntax is not None:
            pieces.append(current)
            current = ""
        else:
            current += escaped if escaped is not None else text
    return [*pieces, current]


def _meaningful(pieces: Sequence[str]) -> tuple[str, ...]:
    stripped = (piece.strip() for piece in pieces)
    return tuple(p for p in stripped if len(p) >= _MIN_PIECE and any(c.isalpha() for c in p))


def _messages(text: str) -> list[tuple[str, ...]]:
    """Each asserted message as the literal pieces a statement of it must hold."""
    found = []
    for pattern in _PATTERN_RES:
        for match in pattern.finditer(text):
            written = next(group for group in match.groups() if group is not None)
            found.append(_meaningful(_pattern_pieces(written)))
    for match in _LITERAL_RE.finditer(text):
        written = next(group for group in match.groups() if group is not None)
        found.append(_meaningful([written]))
    return [pieces for pieces in found if pieces]


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _named(prompt: str, name: str) -> bool:
    return _uses(prompt, name)


def check_instruction(
    prompt: str, items: Sequence[InterfaceItem], test_patch: bytes = b""
) -> InstructionCheck:
    """What `prompt` leaves out of what the tests check: each item whose name (a method's own
    name, a flag as spelled) it does not hold, then `raises X` for each error class the test
    patch's added lines assert and it does not name, then `message "..."` for each asserted
    message it does not state (case and spacing aside)."""
    missing = [item.name for item in items if not _named(prompt, item.name)]
    used = added_lines(test_patch)
    missing.extend(f"raises {name}" for name in _raised(used) if not _named(prompt, name))
    folded = _normal(prompt)
    missing.extend(
        f"message {json.dumps(' … '.join(pieces), ensure_ascii=False)}"
        for pieces in _messages(used)
        if not all(_normal(piece) in folded for piece in pieces)
    )
    return InstructionCheck(interface=tuple(items), missing=tuple(dict.fromkeys(missing)))
