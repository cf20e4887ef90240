"""Chores told by what a change's code says, not its title. Pure.

The title rules (`selfbench.mine.chores`) miss upkeep a title does not name: "switch to
pyproject.toml", "enable deferred evaluation of annotations", "Fix typos". These rules read the
change's implementation files (`selfbench.mine.classify`: tests, dependency manifests,
documentation and CI files aside) and give one reason when all of them are upkeep of one kind.
Each file is first judged by its name (`file_kind`):

* **configuration** (`CONFIGURATION_FILES`: `setup.py`, `setup.cfg`, `MANIFEST.in`, `tox.ini`,
  `mypy.ini`, `.flake8`, `Makefile`, `.gitignore` … and the pins, `requirements/*.in`): it may
  go with any chore (a typing change's `[mypy]` section). A change of such files alone is
  `PACKAGING_ONLY`, or `TYPING_ONLY` when one of them configures a type checker (`mypy.ini`,
  `.mypy.ini`, `pyrightconfig.json`). `pyproject.toml` and `package.json` are dependency
  manifests (`selfbench.patches`): a change of those alone had no implementation part already;
* **stubs** (`*.pyi`, `py.typed`, `*.d.ts`): typing;
* **code** (Python, JavaScript, TypeScript; Go, Rust, Java, Kotlin, Scala, C, C++, C#, Swift):
  judged by its diff, below. A code file whose diff is whitespace only is left out;
* anything else (templates, data, styles, a binary file …) is work: the change stays.

The code changes only in

1. **docstrings and comments** (`COMMENTS_ONLY`): Python's syntax tree with docstrings removed
   (`selfbench.quality._documentation`'s rule) is unchanged; JavaScript's and TypeScript's
   tokens, comments left out, are (the quality check's `documentation_only`); in the other
   languages every changed line is a comment line (`selfbench.patches.is_comment`);
2. **typing** (`TYPING_ONLY`): Python's tree is unchanged once docstrings and typing are
   removed (`selfbench.mine.python_chores.strip_typing`: annotations, typing imports,
   `TYPE_CHECKING` blocks, overloads, casts, type variables …); TypeScript's tokens once its
   types are (the quality check's `types_only`);
3. **translation wrapping** (`I18N_ONLY`): Python's tree is unchanged once docstrings are
   removed and each `_("…")`, `gettext("…")` … of a string literal is its string
   (`strip_translation`). A reworded message is work: a test sees it;
4. **identifier renames** (`RENAME_ONLY`): each hunk's removed and added lines are the same
   tokens but for identifiers, which follow one mapping over the whole change: each old name
   becomes one new name and no two the same, no name is both renamed and a rename's target
   (no swap, no chain), no keyword changes. And the rename is complete: no old name is left in
   the new versions of the code files, no new name was in their old ones (`x = a` → `x = b`
   uses another variable: work).

**Besides a few lines.** In Python, what is left once a rule's part is removed — the changed
lines of the two stripped trees written out (`python_chores.changed_lines`) — may be a few
lines: below the easy gate (`THRESHOLDS["easy"]`: too little to be a task of its own) and at
most one in `_TOLERANCE` of the implementation's changed lines (a two-line fix beside a
docstring rewritten is the fix: work). `enable deferred evaluation of annotations` (1,257
lines) also renames the parameters of one `__exit__`. The reason then says so (`BESIDES`:
`changes only type annotations, stubs or type-checker configuration, besides 2 lines of code
(below the easy gate)`). The lines counted are those of the first rule the screen found
within its tolerance (each rule strips what the ones before it do, and more).

**What it costs.** Nothing is read but the change's patch without context (`-U0`, whitespace
and blank lines ignored: what the `git diff-tree` of the whitespace rule prints,
`git_history.WhitespaceCheck`) until three gates are passed (`selfbench.mine._code_tokens`):
every implementation file is one these rules read, by name; the numbers and statement
keywords of the changed lines of code stay the same (a regular expression over the patch's
bytes: no rule changes them, most work does); and `screen`, reading the hunks line by line,
finds at most one changed token in `_TOLERANCE` that a rule cannot explain (renames and the
C-like comments: none). Only the changes left are read whole (one `git cat-file --batch` for
all) and parsed by `judge`, and only with at most `MAX_CODE_FILES` code files of at most
`MAX_TEXT_BYTES` each. Parsing is the cost that remains: a typing change over a whole package
reads the package twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from posixpath import basename, splitext
from typing import Final, Literal, NamedTuple

from selfbench.mine._code_tokens import (
    Language,
    identifiers,
    misfits,
    numbers_kept,
    rename_pairs,
)
from selfbench.mine.chores import (
    COMMENTS_ONLY,
    I18N_ONLY,
    PACKAGING_ONLY,
    RENAME_ONLY,
    TOOLING_FILES,
    TYPING_ONLY,
    is_pinning_path,
)
from selfbench.mine.python_chores import (
    ModulePair,
    Strip,
    strip_docstrings,
    strip_translation,
    strip_typing,
)
from selfbench.patches import Hunk, changed_hunks, parse_patch
from selfbench.rules import THRESHOLDS

__all__ = [
    "BESIDES",
    "CONFIGURATION_FILES",
    "MAX_CODE_FILES",
    "MAX_TEXT_BYTES",
    "ChangeCode",
    "CodeFile",
    "ImplementationFile",
    "Screen",
    "code_chore_reasons",
    "code_files",
    "file_kind",
    "judge",
    "screen",
]

Rule = Literal["comments", "typing", "i18n", "rename"]
_RULES: Final[tuple[Rule, ...]] = ("comments", "typing", "i18n", "rename")
_REASONS: Final[dict[Rule, str]] = {
    "comments": COMMENTS_ONLY,
    "typing": TYPING_ONLY,
    "i18n": I18N_ONLY,
    "rename": RENAME_ONLY,
}
BESIDES = "{reason}, besides {lines} lines of code (below the easy gate)"
"""A rule's reason when a few lines of code changed besides (see the module)."""
_GATE = THRESHOLDS["easy"].changed_lines
_TOLERANCE = 50
"""A rule stays possible when at most one changed token in this many is no part of it."""

MAX_CODE_FILES = 50
"""A change with more code files is not read whole: a mass rename beyond it stays a candidate."""
MAX_TEXT_BYTES = 1 << 19
"""A file version larger than this is not read: its change stays a candidate."""

_TYPE_CHECKER_FILES = frozenset({"mypy.ini", ".mypy.ini", "pyrightconfig.json"})
CONFIGURATION_FILES = (
    TOOLING_FILES
    | _TYPE_CHECKER_FILES
    | frozenset(
        {
            "setup.py", "setup.cfg", "MANIFEST.in", "flit.ini", "hatch.toml", "pdm.toml",
            ".npmignore", "ruff.toml", ".ruff.toml", ".isort.cfg", ".pydocstyle",
            ".codespellrc", ".yamllint",
        }
    )
)  # fmt: skip
"""Packaging, build and tooling configuration, by file name (besides the pinning paths)."""

_LANGUAGES: Final[dict[str, Language]] = {
    **dict.fromkeys((".py", ".pyw"), "python"),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs"), "js"),
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts"), "ts"),
    **dict.fromkeys(
        (
            ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx",
            ".hpp", ".hh", ".cs", ".swift",
        ),
        "c-like",
    ),
}  # fmt: skip
_STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")

FileKind = Literal["configuration", "type-checker", "stub", "python", "js", "ts", "c-like"]
_RULES_OF: Final[dict[FileKind, frozenset[Rule]]] = {
    "python": frozenset(_RULES),
    "js": frozenset({"comments", "rename"}),
    "ts": frozenset({"comments", "typing", "rename"}),
    "c-like": frozenset({"comments", "rename"}),
    "stub": frozenset({"typing"}),
}
_READ_FOR: Final[dict[Rule, frozenset[FileKind]]] = {
    "comments": frozenset({"python", "js", "ts"}),
    "typing": frozenset({"python", "ts"}),
    "i18n": frozenset({"python"}),
    "rename": frozenset({"python", "js", "ts", "c-like"}),
}
"""The code files a rule reads whole, by kind (the others are told by their patch or name)."""


@dataclass(frozen=True, slots=True)
class CodeFile:
    """One implementation file of a change: its path, its old path (None when added), whether
    it is left (False when deleted), binary or not, and its hunks without context."""

    path: str
    old_path: str | None
    present: bool
    binary: bool
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True, slots=True)
class Screen:
    """What is left to judge after the patch: the rules still possible (in order), the code
    files `judge` reads whole, and the identifier renames the hunks show."""

    rules: tuple[Rule, ...]
    files: tuple[CodeFile, ...]
    renames: tuple[tuple[str, str], ...]
    closest: Rule | None = None
    """The first rule the screen found within its tolerance: the one whose leftover lines
    count when no rule holds exactly."""


class ImplementationFile(NamedTuple):
    """An implementation file as the walk measured it: path, old path (a rename's), binary."""

    path: str
    old_path: str | None
    binary: bool


class ChangeCode(NamedTuple):
    """A change's base and completed commits, its implementation files and their changed
    lines."""

    base: str
    commit: str
    files: tuple[ImplementationFile, ...]
    lines: int


_Key = tuple[int, str, bool]
Reader = Callable[[Mapping[_Key, str]], Mapping[_Key, str | None]]
"""Reads blobs named `<commit>:<path>`: each key's text, None where there is none."""
Texts = Mapping[str, tuple[str, str]]
"""A code file's old and new text by its path ("" for a side where it is absent)."""


@lru_cache(maxsize=1 << 14)  # a history touches the same paths again and again
def file_kind(path: str) -> FileKind | None:
    """What a changed implementation file is to these rules; None for one they cannot read."""
    name = basename(path)
    if name in _TYPE_CHECKER_FILES:
        return "type-checker"
    if name in CONFIGURATION_FILES or is_pinning_path(path):
        return "configuration"
    if name == "py.typed" or name.endswith(_STUB_SUFFIXES):
        return "stub"
    return _LANGUAGES.get(splitext(name)[1].lower())


# --- screening: the patch alone ------------------------------------------------------------------


def _possible(code: Sequence[tuple[CodeFile, FileKind]]) -> tuple[set[Rule], Rule | None]:
    """The rules every code file's hunks leave possible (see the module), renames aside, and
    the first of them within the tolerance (each includes the ones before it)."""
    misfit: dict[Rule, int] = dict.fromkeys(("comments", "typing", "i18n"), 0)
    possible: set[Rule] = {"comments", "typing", "i18n"}
    total = 0
    for file, kind in code:
        possible &= _RULES_OF[kind]
        if kind == "stub":
            continue
        counted = misfits(kind, file.hunks)  # type: ignore[arg-type]  # a language, not a stub
        total += counted.tokens
        for rule in tuple(possible):
            found = getattr(counted, rule)
            if found is None:
                possible.discard(rule)
            else:
                misfit[rule] += found
    kept = {rule for rule in possible if misfit[rule] * _TOLERANCE <= total}
    closest = next((rule for rule in _RULES if rule in kept), None)
    if kept & {"typing", "i18n"} and all(k in _READ_FOR["comments"] for _, k in code):
        kept.add("comments")  # their trees lose docstrings first: comments alone may do
    return kept, closest


def screen(files: Sequence[CodeFile]) -> Screen | str | None:
    """What the patch alone says of a change's implementation files: a reason when it is
    enough (configuration alone, stubs or comment lines alone), a `Screen` when the files
    must be read to tell, None when no rule can hold."""
    kinds = [(file, file_kind(file.path)) for file in files]
    if not kinds or any(kind is None or file.binary for file, kind in kinds):
        return None
    code = [(f, k) for f, k in kinds if k in _RULES_OF and (f.hunks or k == "stub")]
    if not code:
        return TYPING_ONLY if any(k == "type-checker" for _, k in kinds) else PACKAGING_ONLY
    if len(code) > MAX_CODE_FILES:
        return None
    possible, closest = _possible(code)
    renames = None
    if all("rename" in _RULES_OF[kind] for _, kind in code):
        renames = rename_pairs(hunk for file, _ in code for hunk in file.hunks)
    rules = tuple(r for r in _RULES if r in possible or (r == "rename" and renames is not None))
    if not rules:
        return None
    needed = frozenset().union(*(_READ_FOR[rule] for rule in rules))
    read = tuple(file for file, kind in code if kind in needed)
    if not read:  # stubs, comment lines: nothing to read
        return _REASONS[rules[0]]
    return Screen(rules, read, renames or (), closest)


# --- judging: the files read whole --------------------------------------------------------------


def judge(found: Screen, texts: Texts, lines: int) -> str | None:
    """The reason of the first rule every file read confirms; else of the rule whose part
    leaves the fewest lines of code, when they are few (see the module) out of the `lines`
    the implementation changed; None when no rule holds."""
    pairs = {
        path: ModulePair(old, new)
        for path, (old, new) in texts.items()
        if file_kind(path) == "python"
    }
    for rule in found.rules:
        if _holds(rule, found, texts, pairs):
            return _REASONS[rule]
    closest = found.closest
    left = None if closest is None else _left(closest, found, texts, pairs)
    if closest is None or left is None or left * _TOLERANCE > lines:
        return None
    return BESIDES.format(reason=_REASONS[closest], lines=left)


_STRIPS: Final[dict[Rule, tuple[Strip, ...]]] = {
    "comments": (strip_docstrings,),
    "typing": (strip_docstrings, strip_typing),
    "i18n": (strip_docstrings, strip_translation),
}


def _texts(found: Screen, texts: Texts, rule: Rule) -> Iterable[tuple[str, str, str]]:
    for file in found.files:
        if file_kind(file.path) in _READ_FOR[rule]:
            old, new = texts[file.path]
            yield file.path, old, new


def _holds(rule: Rule, found: Screen, texts: Texts, pairs: Mapping[str, ModulePair]) -> bool:
    """Whether every file the rule reads is changed only as the rule says."""
    if rule == "rename":
        return _renamed(found, texts)
    for path, old, new in _texts(found, texts, rule):
        pair = pairs.get(path)
        if not (pair.same(_STRIPS[rule]) if pair is not None else _exact(rule, path, old, new)):
            return False
    return True


def _left(rule: Rule, found: Screen, texts: Texts, pairs: Mapping[str, ModulePair]) -> int | None:
    """The lines of Python code a rule leaves, when below the easy gate and every other file
    holds to it; None otherwise (and for renames, which are exact)."""
    if rule == "rename":
        return None
    left = 0
    for path, old, new in _texts(found, texts, rule):
        pair = pairs.get(path)
        if pair is None:
            if not _exact(rule, path, old, new):
                return None
            continue
        lines = pair.changed_lines(_STRIPS[rule])
        if lines is None:
            return None
        left += lines
        if left >= _GATE:
            return None
    return left


def _exact(rule: Rule, path: str, old: str, new: str) -> bool:
    """JavaScript's and TypeScript's rules, by the quality check's own."""
    from selfbench.quality._documentation import documentation_only  # noqa: PLC0415 - heavy
    from selfbench.quality._types_only import types_only  # noqa: PLC0415 - heavy

    if rule == "typing":
        return types_only(path, old, new)
    return old == new or documentation_only(path, old, new)


def _renamed(found: Screen, texts: Texts) -> bool:
    """Whether the rename is complete: no old name left in the files' new versions, no new
    name in their old ones."""
    olds = {old for old, _ in found.renames}
    news = {new for _, new in found.renames}
    return all(
        news.isdisjoint(identifiers(old)) and olds.isdisjoint(identifiers(new))
        for _, old, new in _texts(found, texts, "rename")
    )


# --- over a walk's changes ----------------------------------------------------------------------


def code_files(
    files: Sequence[ImplementationFile], sections: Mapping[str, bytes]
) -> tuple[CodeFile, ...]:
    """The implementation files with their hunks in the change's patch (`-U0`; `sections`: its
    file sections by path); a file the patch does not name has none."""
    found = []
    for file in files:
        data = sections.get(file.path)
        parsed = parse_patch(data, lenient=True).files if data is not None else ()
        if not parsed:
            old_path = file.old_path or file.path
            found.append(CodeFile(file.path, old_path, present=True, binary=file.binary, hunks=()))
            continue
        section = parsed[0]
        old = None if section.status == "added" else (section.old_path or file.path)
        hunks = changed_hunks(data or b"")
        present = section.status != "deleted"
        binary = file.binary or section.binary
        found.append(CodeFile(file.path, old, present=present, binary=binary, hunks=hunks))
    return tuple(found)


def _worth_reading(change: ChangeCode, sections: Mapping[str, bytes]) -> bool:
    """Whether every implementation file is one the rules can read (by name; not binary) and
    the numbers in their code stay (`_code_tokens.numbers_kept`): a screen's line-by-line
    reading is for the few changes left."""
    if not all(file_kind(file.path) is not None and not file.binary for file in change.files):
        return False
    return numbers_kept(
        sections[file.path]
        for file in change.files
        if file.path in sections and file_kind(file.path) in _RULES_OF
    )


def code_chore_reasons(
    changes: Sequence[ChangeCode], patches: Sequence[Mapping[str, bytes]], read: Reader
) -> list[str | None]:
    """Each change's code-chore reason, or None; `patches[i]` is change i's patch without
    context, by file section. The files the screens leave are read in one call of `read`."""
    screens: list[Screen | str | None] = [
        screen(code_files(change.files, sections)) if _worth_reading(change, sections) else None
        for change, sections in zip(changes, patches, strict=True)
    ]
    names: dict[_Key, str] = {}
    for index, found in enumerate(screens):
        if isinstance(found, Screen):
            names.update(_names(index, changes[index], found))
    texts = read(names) if names else {}
    reasons: list[str | None] = []
    for index, found in enumerate(screens):
        if isinstance(found, Screen):
            mine = _texts_of(index, found, texts)
            lines = changes[index].lines
            reasons.append(judge(found, mine, lines) if mine is not None else None)
        else:
            reasons.append(found)
    return reasons


def _names(index: int, change: ChangeCode, found: Screen) -> dict[_Key, str]:
    names = {}
    for file in found.files:
        if file.old_path is not None:
            names[index, file.path, False] = f"{change.base}:{file.old_path}"
        if file.present:
            names[index, file.path, True] = f"{change.commit}:{file.path}"
    return names


def _texts_of(index: int, found: Screen, texts: Mapping[_Key, str | None]) -> Texts | None:
    """Each file's old and new text ("" where absent); None when one could not be read."""
    mine = {}
    for file in found.files:
        old = texts.get((index, file.path, False)) if file.old_path is not None else ""
        new = texts.get((index, file.path, True)) if file.present else ""
        if old is None or new is None:
            return None
        mine[file.path] = (old, new)
    return mine
