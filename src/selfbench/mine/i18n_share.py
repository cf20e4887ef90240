"""Changes whose code is mostly translation wrapping: ranked last in their tier. Pure.

The code chores (`selfbench.mine.code_chores`) take out a change that only wraps string
literals for translation (`"Aborted!"` → `_("Aborted!")`). Wrapping an f-string takes more: its
placeholders become named ones filled by `.format` (`f"no such option: {name}"` →
`_("No such option: {name}").format(name=name)`), a plural becomes `ngettext(…)`, and such a
change over a whole package (click's "Wrapped public messages with gettext for i18n support")
ranks among the hardest candidates though it is upkeep. It stays a candidate, ranked after
every other of its tier (`selfbench.mine.rank`), as a typing sweep is
(`selfbench.mine.typing_share`, whose thresholds it shares), when

1. translation wrapping explains at least two thirds (`MOSTLY`) of its implementation's
   changed code tokens, and it adds a translation call (`_(`, `gettext(`, `ngettext(` …) for
   every `_PER_WRAP` of them at most (click's: 66 calls for 933 tokens; a reformat or a
   reordering, whose tokens also cancel once quotes and brackets are dropped, adds none);
2. and its tests change no more code tokens it leaves unexplained than its implementation
   does: a reworded message is work a test sees, and tests that follow many rewordings keep
   the change's rank.

Measured on the `-U0` patch alone, nothing parsed, over each Python file's changed lines (comment
lines, trailing comments and imports left out), tokens as the screens count them
(`_code_tokens`: names, numbers, single characters; a string's words are tokens). The *changed*
tokens are those that do not cancel out as written; the *unexplained* ones are those that do
not cancel out once both sides lose what wrapping adds or moves: the translation functions'
names, brackets, commas, quotes, braces, an f-string's `f`, a `.format(` and the names of its
keyword arguments (each once more: the placeholder it fills). The words of a message stay: a
reworded message is unexplained. Only a sweep is judged (`typing_share.SWEEP` tokens of
Python implementation), and only when every implementation file is Python or configuration.
What it costs: a regular expression over the sections (no added line calls a translation
function: no more), then the token count of the largest files first, stopped once the files
left cannot make wrapping two thirds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from selfbench.mine._code_tokens import apart, unformatted
from selfbench.mine.chores import MOSTLY_I18N
from selfbench.mine.code_chores import FileKind, file_hunks, python_sections
from selfbench.mine.python_chores import TRANSLATION_NAMES
from selfbench.patches import Hunk, is_comment

if TYPE_CHECKING:
    from selfbench.mine.typing_share import MeasuredFile

__all__ = ["judge_i18n"]

_TOKEN_RE: Final = re.compile(r"[^\W\d]\w*|\d[\w.]*|\S")
_COMMENT_TAIL_RE: Final = re.compile(r"#[^\"'\n]*$")
_PER_WRAP: Final = 20
"""The most changed code tokens one translation call added may account for."""
_CALL_RE: Final = re.compile(rb"^\+[^\n]*?(?<![\w.])(?:_|N_|\w*gettext\w*)\(", re.MULTILINE)
"""An added line that calls a translation function."""
_QUOTES: Final = frozenset({'"', "'"})
_WRAPPING: Final = TRANSLATION_NAMES | frozenset({"(", ")", ",", "{", "}"}) | _QUOTES
"""What wrapping adds or moves, once `.format(`'s own are gone (`_unwrapped`)."""


def _side(lines: Iterable[bytes]) -> list[str]:
    """One side's tokens: comment lines, trailing comments and imports left out."""
    tokens: list[str] = []
    for raw in lines:
        if not raw.strip() or is_comment(raw):
            continue
        text = _COMMENT_TAIL_RE.sub("", raw.decode("utf-8", "replace")).strip()
        if not text.startswith(("import ", "from ")):
            tokens += _TOKEN_RE.findall(text)
    return tokens


def _unwrapped(tokens: list[str]) -> Counter[str]:
    """The tokens without what wrapping adds or moves (see the module)."""
    counted = unformatted(tokens)
    for token in _WRAPPING:
        counted.pop(token, None)
    return counted


def _counts(hunks: Sequence[Hunk]) -> tuple[int, int, int, int]:
    """A Python file's changed code tokens, those wrapping leaves unexplained, every one, and
    the translation calls added (those removed taken away)."""
    removed = _side(line for hunk in hunks for line in hunk.removed)
    added = _side(line for hunk in hunks for line in hunk.added)
    before, after = Counter(removed), Counter(added)
    changed = apart(before, after)
    unexplained = apart(_unwrapped(removed), _unwrapped(added))
    wraps = sum(after[name] - before[name] for name in TRANSLATION_NAMES)
    return changed, unexplained, len(removed) + len(added), wraps


def judge_i18n(
    pairs: Sequence[tuple[MeasuredFile, bytes | None]], *, mostly: tuple[int, int], sweep: int
) -> str | None:
    """The reason a change is ranked last (see the module), or None, from each file and its
    patch section (None when the patch has none); its tests are read only when its
    implementation is mostly translation wrapping; `sweep`: the fewest tokens judged."""
    split = python_sections(pairs)
    if split is None:
        return None
    code, tests = split
    if not any(_CALL_RE.search(section) for _, section in code):
        return None  # no translation call added: most changes, told at C speed
    counted = _implementation(code, mostly)
    if counted is None:
        return None
    changed, unexplained, every = counted
    least, of = mostly
    explained = changed - unexplained
    if every < sweep or explained <= 0 or explained * of < changed * least:
        return None
    tested = _tests_left(tests, unexplained)
    if tested is None:
        return None
    return MOSTLY_I18N.format(i18n=explained, tokens=changed, tests=tested)


def _tests_left(tests: Sequence[tuple[FileKind | None, bytes | None]], most: int) -> int | None:
    """The tokens the tests leave unexplained (see the module); None once more than `most`."""
    tested = 0
    for kind, section in tests:
        hunks = file_hunks(section)
        if kind == "python":
            tested += _counts(hunks)[1]
        else:
            tested += len(_side(line for hunk in hunks for line in (*hunk.removed, *hunk.added)))
        if tested > most:
            return None
    return tested


def _implementation(
    code: Sequence[tuple[int, bytes]], mostly: tuple[int, int]
) -> tuple[int, int, int] | None:
    """The Python files' changed code tokens, those wrapping leaves unexplained, every token;
    None as soon as wrapping cannot explain two thirds, or adds too few calls: the largest
    files first, the others' pieces (at least their tokens) bounding what they could add."""
    least, of = mostly
    left = sum(pieces for pieces, _ in code)
    changed = unexplained = every = wraps = 0
    for pieces, section in sorted(code, key=lambda found: -found[0]):
        found = _counts(file_hunks(section))
        left -= pieces
        changed += found[0]
        unexplained += found[1]
        every += found[2]
        wraps += found[3]
        if unexplained * of > (changed + left) * (of - least):
            return None
    if wraps * _PER_WRAP < changed:
        return None  # too few wraps for what changed: a reformat, a reordering
    return changed, unexplained, every
