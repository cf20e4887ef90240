"""Changes whose code is mostly comments and docstrings: ranked last in their tier. Pure.

The code chores (`selfbench.mine.code_chores`) take out a change whose code changes only in
comments and docstrings, or besides a few lines. A larger documentation pass that also
touches a little code (click's "Documentation & docstring fixes": two thousand tokens of
prose, a local variable inlined, an example's `--help` text reworded) keeps its size, and ranks
among the hardest candidates though no instruction asks for it and no test checks it. Such a
change stays a candidate, ranked after every other of its tier (`selfbench.mine.rank`), as a
typing sweep is (`selfbench.mine.typing_share`, whose thresholds it shares), when

1. comments and docstrings explain at least two thirds (`MOSTLY`) of the tokens its Python
   implementation's changed lines hold;
2. and its tests change nothing but comments: a docstring or message whose text is behaviour
   (read as `__doc__`, a command's `--help`, an error a test matches) is checked by a test
   that changes with it, and the change keeps its rank.

Measured on the `-U0` patch alone, nothing parsed: the tokens of the changed lines, comment
lines included; those the comments rule of the screens cannot explain (`_code_tokens.misfits`:
lines of code whose tokens do not cancel out) are unexplained, and so is every token of a
changed doctest line (`>>>`, `...`: a doctest runs). Of the tests, every token of a changed
line counts but a comment's: a string a test holds (an expected message, a help text) is what
it checks.
Only a sweep is judged (`SWEEP` tokens of Python implementation, comments included), and only
when every implementation file is Python or configuration. What it costs: a line-by-line
reading of the largest files first, stopped once the unexplained tokens pass a third of the
pieces (`\\w+` or one character) of every Python file's patch section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from selfbench.mine._code_tokens import count_pieces, is_code, piece_kinds
from selfbench.mine.chores import MOSTLY_COMMENTS
from selfbench.mine.code_chores import FileKind, file_hunks, python_sections
from selfbench.patches import Hunk

if TYPE_CHECKING:
    from selfbench.mine.typing_share import MeasuredFile

__all__ = ["judge_comments"]

_DOCTEST: Final = (b">>>", b"...")
_PROSE_WORDS: Final = 3
"""The fewest pieces of a line read as prose (`@property`, `x.y` are code)."""


def _counts(hunks: Sequence[Hunk], limit: int | None = None) -> tuple[int, int] | None:
    """A Python file's changed tokens and those comments and docstrings leave unexplained:
    every token of a line of code (see the module); None as soon as more than `limit` are."""
    every = unexplained = 0
    for hunk in hunks:
        for line in (*hunk.removed, *hunk.added):
            runs, others = piece_kinds(line)
            every += runs + others
            if not _prose(line, runs, others):
                unexplained += runs + others
        if limit is not None and unexplained > limit:
            return None
    return every, unexplained


def _prose(line: bytes, runs: int, others: int) -> bool:
    """Whether a changed line is a comment line or reads as prose: at least `_PROSE_WORDS`
    pieces (`_code_tokens.PIECE_RE`), three in four of them runs of word characters (quotes
    aside: a docstring's own), and no code's mark (`_code_tokens.CODE_RE`)."""
    stripped = line.strip()
    if not stripped or stripped.startswith(_DOCTEST):
        return not stripped
    if stripped.startswith(b"#"):
        return True
    if runs + others < _PROSE_WORDS:
        return False
    others -= stripped.count(b'"') + stripped.count(b"'")
    if 4 * runs < 3 * (runs + others):
        return False
    return not is_code(stripped.decode("utf-8", "replace"))


def judge_comments(
    pairs: Sequence[tuple[MeasuredFile, bytes | None]], *, mostly: tuple[int, int], sweep: int
) -> str | None:
    """The reason a change is ranked last (see the module), or None, from each file and its
    patch section (None when the patch has none); its tests are read only when its
    implementation is mostly comments and docstrings."""
    split = python_sections(pairs)
    if split is None:
        return None
    code, tests = split
    least, of = mostly
    limit = sum(pieces for pieces, _ in code) * (of - least) // of  # at most every token's third
    every = unexplained = 0
    for _, section in sorted(code, key=lambda found: -found[0]):  # the largest first
        counted = _counts(file_hunks(section), limit - unexplained)
        if counted is None:
            return None
        every += counted[0]
        unexplained += counted[1]
    explained = every - unexplained
    if every < sweep or explained <= 0 or explained * of < every * least:
        return None
    tested = _tests_left(tests, 0)
    if tested is None:
        return None
    return MOSTLY_COMMENTS.format(comments=explained, tokens=every, tests=tested)


def _tests_left(tests: Sequence[tuple[FileKind | None, bytes | None]], most: int) -> int | None:
    """The tokens the tests leave unexplained (see the module); None once more than `most`."""
    tested = 0
    for kind, section in tests:
        hunks = file_hunks(section)
        lines = (line for hunk in hunks for line in (*hunk.removed, *hunk.added))
        if kind == "python":  # its comments aside: a string a test holds is what it checks
            lines = (line for line in lines if not line.lstrip().startswith(b"#"))
        tested += sum(count_pieces(line) for line in lines)
        if tested > most:
            return None
    return tested
