"""Changes whose code is mostly typing: ranked last in their tier, with the reason. Pure.

The code chores (`selfbench.mine.code_chores`) take out a change whose code is typing alone,
or typing besides a few lines. A larger typing sweep does some work besides (`while 1` becomes
`while True`, a `None` check is added for the checker, an `__init__` calls `super()`), and its
size ranks it among the hardest candidates though no instruction asks for it and no test
checks it (werkzeug's "redo type annotations", "enable more mypy checks"). Such a change stays
a candidate, ranked after every other of its tier (`selfbench.mine.rank`), when

1. typing explains at least two thirds (`MOSTLY`) of its implementation's changed code tokens;
2. and its tests change no more code tokens typing leaves unexplained than its implementation
   does: tests that check something of their own (a new parameter, a changed default) make it
   work whatever its typing share (werkzeug's "Fix CacheControl issues": two thirds stub
   types, and tests of its new defaults).

Measured on the `-U0` patch alone (the code chores' own), nothing parsed: the changed
code tokens of its Python implementation (`_code_tokens.misfits`, tokens moved within a file
cancel out) and of its stubs (all typing); typing explains those that are left once
annotations, `typing` imports and casts are cut from both sides. Only a sweep is judged: a
change whose Python implementation changes fewer than `SWEEP` tokens (both sides, comments
and moves included) keeps its rank, as does one that changes another code file — unless it
also sets up a type checker (a `mypy.ini`, or a configuration file's new `[mypy]`,
`[tool.mypy]` or `[tool.pyright]` section: click's "Enable mypy checking and add minimal
hints"), which is plainly typing at any size.

A change that is not mostly typing may be mostly layout and lint (`selfbench.mine.lint_share`),
else mostly translation wrapping (`selfbench.mine.i18n_share`), else mostly comments and
docstrings (`selfbench.mine.comment_share`); those judge sweeps only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from selfbench.mine._code_tokens import misfits, section_pieces
from selfbench.mine.chores import MOSTLY_TYPING
from selfbench.mine.code_chores import (
    CodeFile,
    ImplementationFile,
    code_files,
    file_hunks,
    file_kind,
)
from selfbench.mine.comment_share import judge_comments
from selfbench.mine.i18n_share import judge_i18n
from selfbench.mine.lint_share import judge_lint

__all__ = ["MOSTLY", "SWEEP", "MeasuredChange", "MeasuredFile", "typing_last_reasons"]

MOSTLY: Final = (2, 3)
"""The least share (numerator, denominator) of the changed code tokens typing explains."""
SWEEP: Final = 1000
"""The fewest tokens a change's Python implementation changes for it to be judged a sweep."""


_CHECKER_SECTION_RE: Final = re.compile(
    rb"^\+[ \t]*\[(?:tool\.)?(?:mypy|pyright)\][ \t]*$", re.MULTILINE
)
"""A configuration file's new section that sets up a type checker (not a module's own,
`[mypy-requests.*]`, which comes with a new dependency)."""
_NEW_FILE_RE: Final = re.compile(rb"^(?:new file mode |--- /dev/null$)", re.MULTILINE)
"""A file section's header line that says the file is new."""
_CHECKER_CONFIGURED: Final = ("configuration", "type-checker")


class MeasuredFile(NamedTuple):
    """A changed file as the walk measured it: path, old path (a rename's), binary, changed
    lines, and whether it is a test file."""

    path: str
    old_path: str | None
    binary: bool
    lines: int
    test: bool


class MeasuredChange(NamedTuple):
    """A change's base and completed commits and its implementation and test files."""

    base: str
    commit: str
    files: tuple[MeasuredFile, ...]


def judge_typing(
    pairs: Sequence[tuple[MeasuredFile, bytes | None]], *, sweep: int = SWEEP
) -> str | None:
    """The reason a change is ranked last (see the module), or None, from each file and its
    patch section (None when the patch has none); its tests are read only when its
    implementation is mostly typing, and only a change of at least `sweep` tokens is judged."""
    counted = _implementation(pairs)
    if counted is None:
        return None
    changed, unexplained, every = counted
    least, of = MOSTLY
    typing = changed - unexplained
    if every < sweep or typing <= 0 or typing * of < changed * least:
        return None
    tests = 0
    for measured, section in pairs:
        kind = file_kind(measured.path)
        if not measured.test or measured.binary or kind in ("configuration", "type-checker"):
            continue
        found = misfits("python", file_hunks(section), i18n=False)
        tests += found.typing or 0 if kind == "python" else found.tokens
    if tests > unexplained:
        return None
    return MOSTLY_TYPING.format(typing=typing, tokens=changed, tests=tests)


def _implementation(
    pairs: Sequence[tuple[MeasuredFile, bytes | None]],
) -> tuple[int, int, int] | None:
    """The implementation's changed code tokens, those typing leaves unexplained, and every
    token its Python files change; None as soon as typing cannot be two thirds: the largest
    files first, the others' sections' pieces (`section_pieces`, at least their hunks' tokens)
    bounding what they could add, so most sweeps read one file's hunks. The counts are sums,
    the same in any order, and a stop is only ever where they would say None."""
    code = []
    for measured, section in pairs:
        kind = file_kind(measured.path)
        if measured.test or measured.binary or kind in ("configuration", "type-checker"):
            continue
        if kind not in ("python", "stub"):
            return None  # other code: work these tokens cannot weigh
        code.append((kind, section, section_pieces(section or b"")))
    code.sort(key=lambda found: -found[2])
    left = sum(pieces for _, _, pieces in code)
    least, of = MOSTLY
    changed = unexplained = every = 0
    for kind, section, pieces in code:
        found = misfits("python", file_hunks(section), i18n=False)
        left -= pieces
        if kind == "stub":
            changed += found.tokens
        else:
            changed += found.comments or 0
            unexplained += found.typing or 0
            every += found.tokens
        if unexplained * of > (changed + left) * (of - least):
            return None
    return changed, unexplained, every


def typing_last_reasons(
    changes: Sequence[MeasuredChange], patches: Sequence[Mapping[str, bytes]]
) -> list[str | None]:
    """Each change's reason to be ranked last, or None: mostly typing, else mostly layout and
    lint (`selfbench.mine.lint_share`), translation wrapping (`selfbench.mine.i18n_share`) or
    comments and docstrings (`selfbench.mine.comment_share`); `patches[i]`: change i's patch
    without context, by file section."""
    return [
        _last(change, sections, sweep=_most_tokens(change, sections) >= SWEEP)
        for change, sections in zip(changes, patches, strict=True)
    ]


def _last(change: MeasuredChange, sections: Mapping[str, bytes], *, sweep: bool) -> str | None:
    """A sweep's reason (typing, else lint, else translation wrapping, else comments); a
    smaller change's, typing's when it sets up a type checker."""
    checker = _sets_up_checker(change, sections)
    if not sweep and not checker:
        return None
    files = [(file, sections.get(file.path)) for file in change.files]
    typing = judge_typing(files, sweep=0 if checker else SWEEP)
    if typing is not None or not sweep:
        return typing
    pairs = list(zip(change.files, _code_files(change, sections), strict=True))
    lint = judge_lint(pairs, mostly=MOSTLY, sweep=SWEEP)
    if lint is not None:
        return lint
    i18n = judge_i18n(files, mostly=MOSTLY, sweep=SWEEP)
    if i18n is not None:
        return i18n
    return judge_comments(files, mostly=MOSTLY, sweep=SWEEP)


def _sets_up_checker(change: MeasuredChange, sections: Mapping[str, bytes]) -> bool:
    """Whether the change adds a type checker's configuration file, or its top-level section to
    a configuration file (`pyproject.toml`'s too: a manifest, no implementation file); a test's
    own files aside."""
    for file in change.files:
        if file.test:
            continue
        section = sections.get(file.path, b"")
        if file_kind(file.path) == "type-checker" and _NEW_FILE_RE.search(section) is not None:
            return True
        configured = file.path.rpartition("/")[2] == "pyproject.toml" or file_kind(file.path) in (
            _CHECKER_CONFIGURED
        )
        if configured and _CHECKER_SECTION_RE.search(section) is not None:
            return True
    return False


def _most_tokens(change: MeasuredChange, sections: Mapping[str, bytes]) -> int:
    """At least the tokens its Python implementation changes, counted without reading hunks:
    most changes are too small to be judged, and cost no more than this."""
    return sum(
        section_pieces(sections.get(file.path, b""))
        for file in change.files
        if not file.test and not file.binary and file_kind(file.path) == "python"
    )


def _code_files(change: MeasuredChange, sections: Mapping[str, bytes]) -> tuple[CodeFile, ...]:
    files = [ImplementationFile(f.path, f.old_path, f.binary) for f in change.files]
    return code_files(files, sections)
