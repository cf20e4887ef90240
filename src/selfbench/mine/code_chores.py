"""Chores told by what a change's code says, not its title. Pure.

The title rules (`selfbench.mine.chores`) miss upkeep a title does not name: "switch to
pyproject.toml", "enable deferred evaluation of annotations", "Fix typos". These rules read the
change's implementation files (`selfbench.mine.classify`: tests, dependency manifests,
documentation and CI files aside) and give one reason when all of them are upkeep of one kind.
Each file is first judged by its name (`file_kind`):

* **configuration** (`CONFIGURATION_FILES`: `setup.py`, `setup.cfg`, `MANIFEST.in`, `tox.ini`,
  `mypy.ini`, `.flake8`, `Makefile`, `.gitignore` … and the pins, `requirements/*.in`,
  `constraints.txt`: `.txt` and `.in` files only; a name of code, `setup.py` or `noxfile.py`,
  at the root only, a module elsewhere; every file under `.devcontainer/`): it may
  go with any chore (a typing change's `[mypy]` section). A change of such files alone is
  `PACKAGING_ONLY`, or `TYPING_ONLY` when one of them configures a type checker (`mypy.ini`,
  `.mypy.ini`, `pyrightconfig.json`). `pyproject.toml` and `package.json` are dependency
  manifests (`selfbench.patches`): a change of those alone had no implementation part already;
* **stubs** (`*.pyi`, `py.typed`, `*.d.ts`): typing;
* **code** (Python, JavaScript, TypeScript): judged by its parsed versions, below. A code file
  added, deleted or moved keeps the change (a module is imported anew, whatever it holds), so
  does one the patch shows no hunk of (its diff is whitespace only, or it is not there to
  read): nothing says what it is;
* anything else (templates, data, styles, a binary file, Go, Rust, C … which no parser here
  reads) is work: the change stays.

The code changes only in

1. **docstrings and comments** (`COMMENTS_ONLY`): Python's syntax tree with docstrings removed
   (`selfbench._python_source`'s rule, but for the docstrings that may be behaviour:
   `python_chores.strip_docstrings`) is unchanged; JavaScript's and TypeScript's tokens,
   comments left out, are (the quality check's `documentation_only`);
2. **typing** (`TYPING_ONLY`): Python's tree is unchanged once docstrings and typing are
   removed (`selfbench.mine.python_chores.strip_typing`: annotations where nothing reads
   them, typing imports, `TYPE_CHECKING` blocks, overloads, casts, type variables …), or the
   files are stubs (`*.pyi`, `*.d.ts`) and type-checker configuration;
3. **translation wrapping** (`I18N_ONLY`): Python's tree is unchanged once docstrings are
   removed and each `_("…")`, `gettext("…")` … of a string literal is its string, or, filled
   by name (`.format(name=value)`), the f-string it wraps (`strip_translation`). A reworded
   message is work: a test sees it;
4. **identifier renames** (`RENAME_ONLY`, Python only): each module's tokens (`tokenize`,
   comments aside) are the same but for names, which follow one mapping over the whole
   change: each old name becomes one new name and no two the same, no name is both renamed
   and a rename's target (no swap, no chain), no keyword or built-in changes (`min` → `max`),
   a string never (`c["timeout"]`). Each old name is defined in the old versions (a `def`, a
   class, a parameter, an assignment, not an import: `from os import getcwd` → `getcwdb` is
   work) and each new one in the new versions. And the rename is complete: no old name is
   left in the new versions of the code files, no new name was in their old ones, in code,
   strings or comments (`x = a` → `x = b` uses another variable: work).

**Besides a few lines.** In Python, what is left once a rule's part is removed — the changed
lines of the two stripped trees written out (`python_chores.changed_lines`) — may be a few
lines: at most `BESIDES_MOST` and at most one in `_TOLERANCE` of the changed lines of code
of the Python files read (the patch's, whitespace and blank lines ignored; a two-line fix
beside a docstring rewritten is the fix: work): a large typing change may also rename the
parameters of one `__exit__`. The reason then says so (`BESIDES`:
`changes only type annotations, stubs or type-checker configuration, besides 2 lines of code
(below the easy gate)`). The lines counted are those of the first rule the screen found
within its tolerance (each rule strips what the ones before it do, and more).

**What it costs.** Nothing is read but the change's patch without context (`-U0`, whitespace
and blank lines ignored: what the `git diff-tree` of the whitespace rule prints,
`git_history.WhitespaceCheck`) until three gates are passed (`selfbench.mine._code_tokens`):
every implementation file is one these rules read, by name; the numbers and statement
keywords of the changed lines of code stay the same (a regular expression over the patch's
bytes: no rule changes them, most work does); and `screen`, reading the hunks line by line,
finds at most one changed token in `_TOLERANCE` that a rule cannot explain (renames: none).
Only the changes left are read whole (one `git cat-file --batch` for all) and parsed by
`judge`, and only with at most `MAX_CODE_FILES` code files of at most `MAX_TEXT_BYTES` each.
Parsing is the cost that remains: a typing change over a whole package reads the package
twice. The patches are those of the readable files alone, and dropped once judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from posixpath import basename, splitext
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from selfbench.mine._code_tokens import (
    UNRENAMEABLE,
    Language,
    identifiers,
    misfits,
    numbers_kept,
    rename_pairs,
    section_pieces,
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
    defined_names,
    name_mapping,
    strip_docstrings,
    strip_translation,
    strip_typing,
)
from selfbench.patches import FileChange, Hunk, changed_hunks, parse_patch

if TYPE_CHECKING:
    from selfbench.mine.typing_share import MeasuredFile

__all__ = [
    "BESIDES",
    "BESIDES_MOST",
    "CONFIGURATION_FILES",
    "MAX_CODE_FILES",
    "MAX_TEXT_BYTES",
    "ChangeCode",
    "CodeFile",
    "ImplementationFile",
    "Screen",
    "code_chore_reasons",
    "code_files",
    "file_hunks",
    "file_kind",
    "judge",
    "python_sections",
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
BESIDES_MOST = 3
"""The most lines of code a rule's reason may leave aside."""
_TOLERANCE = 50
"""A rule stays possible when at most one changed token in this many is no part of it."""

MAX_CODE_FILES = 50
"""A change with more code files is not read whole: a mass rename beyond it stays a candidate."""
MAX_TEXT_BYTES = 1 << 19
"""A file version larger than this is not read: its change stays a candidate."""
_SECTIONS_KEPT: Final = 64
"""The file sections whose parse is kept (`_read_section`): a change's, asked for by each rule."""
_SECTION_KEPT_BYTES: Final = 1 << 16
"""A larger section's parse is not kept: the cache holds a few MB at most (its lines are kept
apart, about three times the section's size) for as long as the process lives."""

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

_DEVELOPMENT_DIRECTORIES: Final = (".devcontainer/",)
"""Where every file configures the contributors' environment, whatever its language."""

_LANGUAGES: Final[dict[str, Language]] = {
    **dict.fromkeys((".py", ".pyw"), "python"),
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs"), "js"),
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts"), "ts"),
}
_STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")

FileKind = Literal["configuration", "type-checker", "stub", "python", "js", "ts"]
_RULES_OF: Final[dict[FileKind, frozenset[Rule]]] = {
    "python": frozenset(_RULES),
    "js": frozenset({"comments"}),
    "ts": frozenset({"comments"}),
    "stub": frozenset({"typing"}),
}
_READ_FOR: Final[dict[Rule, frozenset[FileKind]]] = {
    "comments": frozenset({"python", "js", "ts"}),
    "typing": frozenset({"python"}),
    "i18n": frozenset({"python"}),
    "rename": frozenset({"python"}),
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
    if path.startswith(_DEVELOPMENT_DIRECTORIES):
        return "configuration"  # whatever its language
    name = basename(path)
    if name == "py.typed" or name.endswith(_STUB_SUFFIXES):
        return "stub"
    if name in _TYPE_CHECKER_FILES:
        return "type-checker"
    language = _LANGUAGES.get(splitext(name)[1].lower())
    if name in CONFIGURATION_FILES and (language is None or "/" not in path):
        return "configuration"  # `setup.py`, `noxfile.py` at the root: a module elsewhere
    if language is not None:
        return language
    return "configuration" if is_pinning_path(path) else None


# --- screening: the patch alone ------------------------------------------------------------------


def _readable(file: CodeFile, kind: FileKind | None) -> bool:
    """Whether the rules can tell anything of a file: known, not binary, and, when code, kept
    where it was (a module added, deleted or moved is imported anew, whatever it holds) with
    a hunk the patch shows (of a code file it shows nothing of, nothing says what it is)."""
    if kind is None or file.binary:
        return False
    if kind not in _READ_FOR["comments"]:
        return True
    return file.present and file.old_path == file.path and bool(file.hunks)


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
    if not kinds or not all(_readable(file, kind) for file, kind in kinds):
        return None
    code = [(f, k) for f, k in kinds if k in _RULES_OF]
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


def judge(found: Screen, texts: Texts) -> str | None:
    """The reason of the first rule every file read confirms; else of the closest rule, when
    the lines of code its part leaves are few (see the module); None when no rule holds."""
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
    if closest is None or left is None or left * _TOLERANCE > _code_lines(found):
        return None
    return BESIDES.format(reason=_REASONS[closest], lines=left)


def _code_lines(found: Screen) -> int:
    """The Python files' changed lines in the patch (whitespace and blank lines ignored)."""
    return sum(
        1
        for file in found.files
        if file_kind(file.path) == "python"
        for hunk in file.hunks
        for line in (*hunk.removed, *hunk.added)
        if line.strip()
    )


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


def _smallest_first(found: Screen, texts: Texts, rule: Rule) -> list[tuple[str, str, str]]:
    """`_texts`, the shortest files first: a rule that fails, fails on any file, and the
    smaller are parsed sooner (what `_holds` and `_left` answer does not depend on the order)."""
    return sorted(_texts(found, texts, rule), key=lambda item: len(item[1]) + len(item[2]))


def _holds(rule: Rule, found: Screen, texts: Texts, pairs: Mapping[str, ModulePair]) -> bool:
    """Whether every file the rule reads is changed only as the rule says."""
    if rule == "rename":
        return _renamed(found, texts)
    for path, old, new in _smallest_first(found, texts, rule):
        pair = pairs.get(path)
        if not (pair.same(_STRIPS[rule]) if pair is not None else _exact(rule, path, old, new)):
            return False
    return True


def _left(rule: Rule, found: Screen, texts: Texts, pairs: Mapping[str, ModulePair]) -> int | None:
    """The lines of Python code a rule leaves, when at most `BESIDES_MOST` and every other file
    holds to it; None otherwise (and for renames, which are exact)."""
    if rule == "rename":
        return None
    left = 0
    for path, old, new in _smallest_first(found, texts, rule):
        pair = pairs.get(path)
        if pair is None:
            if not _exact(rule, path, old, new):
                return None
            continue
        lines = pair.changed_lines(_STRIPS[rule])
        if lines is None:
            return None
        left += lines
        if left > BESIDES_MOST:
            return None
    return left


def _exact(rule: Rule, path: str, old: str, new: str) -> bool:
    """JavaScript's and TypeScript's comments rule, by the quality check's own (no other rule
    reads them)."""
    if rule != "comments":
        return False
    # The JavaScript and TypeScript parsers load here, with the first such file read whole:
    # mining a history without one (most of Python's) never pays for them.
    from selfbench.quality._documentation import documentation_only  # noqa: PLC0415

    return documentation_only(path, old, new)


def _renamed(found: Screen, texts: Texts) -> bool:
    """Whether the Python files differ only by a rename of names defined in them, complete (see
    the module)."""
    versions = [(old, new) for _, old, new in _texts(found, texts, "rename")]
    mapping = name_mapping(versions)
    if not mapping:
        return False
    olds, news = set(mapping), set(mapping.values())
    if not olds.isdisjoint(news) or not UNRENAMEABLE.isdisjoint(olds | news):
        return False
    defined: tuple[set[str], set[str]] = (set(), set())
    for old, new in versions:
        names = (defined_names(old), defined_names(new))
        if names[0] is None or names[1] is None:
            return False
        defined[0].update(names[0])
        defined[1].update(names[1])
        if not (news.isdisjoint(identifiers(old)) and olds.isdisjoint(identifiers(new))):
            return False
    return olds <= defined[0] and news <= defined[1]


# --- over a walk's changes ----------------------------------------------------------------------


def code_files(
    files: Sequence[ImplementationFile], sections: Mapping[str, bytes]
) -> tuple[CodeFile, ...]:
    """The implementation files with their hunks in the change's patch (`-U0`; `sections`: its
    file sections by path); a file the patch does not name has none."""
    found = []
    for file in files:
        data = sections.get(file.path)
        section, hunks = _read_section(data) if data is not None else (None, ())
        if section is None:
            old_path = file.old_path or file.path
            found.append(CodeFile(file.path, old_path, present=True, binary=file.binary, hunks=()))
            continue
        old = None if section.status == "added" else (section.old_path or file.path)
        present = section.status != "deleted"
        binary = file.binary or section.binary
        found.append(CodeFile(file.path, old, present=present, binary=binary, hunks=hunks))
    return tuple(found)


def file_hunks(section: bytes | None) -> tuple[Hunk, ...]:
    """The hunks `code_files` gives a file from its patch section (None: the patch has none),
    the section parsed only when it has a hunk: none when it does not parse."""
    if section is None:
        return ()
    parsed, hunks = _read_section(section)
    return hunks if hunks and parsed is not None else ()


def _read_section(section: bytes) -> tuple[FileChange | None, tuple[Hunk, ...]]:
    """A file section's first file as the patch parser reads it (None: none) and its hunks,
    read once when the section is small: the code chores and the shares each ask for them."""
    if len(section) > _SECTION_KEPT_BYTES:
        return _parse_section(section)
    return _kept_section(section)


def _parse_section(section: bytes) -> tuple[FileChange | None, tuple[Hunk, ...]]:
    parsed = parse_patch(section, lenient=True).files
    return (parsed[0] if parsed else None), changed_hunks(section)


_kept_section = lru_cache(maxsize=_SECTIONS_KEPT)(_parse_section)


def python_sections(
    pairs: Sequence[tuple[MeasuredFile, bytes | None]],
) -> tuple[list[tuple[int, bytes]], list[tuple[FileKind | None, bytes | None]]] | None:
    """A change's Python implementation sections, each with its pieces (`section_pieces`), and
    its tests' (kind, section), binary and configuration files aside; None when it changes
    other code, work that Python's tokens cannot weigh (the shares' common first step)."""
    code: list[tuple[int, bytes]] = []
    tests: list[tuple[FileKind | None, bytes | None]] = []
    for measured, section in pairs:
        kind = file_kind(measured.path)
        if measured.binary or kind in ("configuration", "type-checker"):
            continue
        if measured.test:
            tests.append((kind, section))
        elif kind != "python":
            return None
        else:
            code.append((section_pieces(section or b""), section or b""))
    return code, tests


def _worth_reading(change: ChangeCode, sections: Mapping[str, bytes]) -> bool:
    """Whether every implementation file is one the rules can read (by name; not binary) and
    the numbers in their code stay (`_code_tokens.numbers_kept`): a screen's line-by-line
    reading is for the few changes left."""
    if not all(file_kind(file.path) is not None and not file.binary for file in change.files):
        return False
    if any(file_kind(f.path) in _RULES_OF and f.path not in sections for f in change.files):
        return False  # a code file the patch does not show: nothing says what it is
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
            reasons.append(judge(found, mine) if mine is not None else None)
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
