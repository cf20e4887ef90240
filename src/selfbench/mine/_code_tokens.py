"""What a change's hunks say before any file is read: tokens counted, identifiers paired. Pure.

The screens of `selfbench.mine.code_chores`. Each counts, over one file's hunks without
context, the tokens (identifiers, numbers, single characters; whitespace aside) the hunks take
away and add, so that a line wrapped anew cancels out, and tells how many of them a rule cannot
explain (its *misfits*):

* comments: the tokens of the changed lines that hold code (not blank, not a comment line, in
  Python not prose — a docstring's line perhaps —, trailing comments cut), which must cancel;
* typing (Python): the tokens of the lines of code, imports aside, once what follows an
  annotation's `:` or `->` and each `cast(T, …)`'s type are cut and the keywords typing uses
  (`None`, `if` of `if TYPE_CHECKING:`, `def`, `class` …) left out, which must cancel;
* i18n: the tokens once imports, translation calls' names, brackets and commas are dropped,
  and what filling a template by name adds (`unformatted`: `.format(`, its keyword arguments'
  names, an f-string's `f`), which must cancel.

Renames are exact: `rename_pairs` aligns each hunk's removed and added tokens one to one.
Every count here is a gate before the files are read, never a verdict: the rules'
`selfbench.mine.code_chores.judge` decides on the parsed files.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from operator import itemgetter
from typing import Final, Literal, NamedTuple, TypeVar

from selfbench.mine.python_chores import TRANSLATION_NAMES
from selfbench.patches import Hunk, is_comment

__all__ = [
    "CODE_RE",
    "UNRENAMEABLE",
    "Language",
    "Misfits",
    "apart",
    "count_pieces",
    "identifiers",
    "is_code",
    "keep_line",
    "misfits",
    "numbers_kept",
    "piece_kinds",
    "rename_pairs",
    "section_pieces",
    "unformatted",
]

Language = Literal["python", "js", "ts"]

# A line that does something: an assignment or keyword argument, a call, a statement keyword, a
# closing bracket starting the line. Prose in a docstring rarely reads so.
CODE_RE = re.compile(
    r"(?<![=!<>])=(?![=>])|[\w\])]\(|^[)\]}]"
    r"|^(?:return|raise|yield|del|assert|import|def|class|elif|try|except|finally|pass|break"
    r"|continue|global|nonlocal|lambda|await|async|while)\b|^(?:if|for|with|else)\b.*:$"
)
_CODE_MARK_RE: Final = re.compile(r"=(?<![=!<>]=)(?![=>])|\((?<=[\w\])]\()")
"""`CODE_RE`'s marks anywhere in a line, each found from its `=` or `(` (the search skips the
other characters at C speed, where `CODE_RE` tries every alternative at every character)."""
_CODE_START_RE: Final = re.compile(
    r"[)\]}]|(?:return|raise|yield|del|assert|import|def|class|elif|try|except|finally|pass"
    r"|break|continue|global|nonlocal|lambda|await|async|while)\b|(?:if|for|with|else)\b.*:$"
)
"""`CODE_RE`'s marks at a line's start."""


def is_code(text: str) -> bool:
    """Whether `CODE_RE` finds a mark of code in a line: `CODE_RE.search(text) is not None`,
    four times faster."""
    return _CODE_MARK_RE.search(text) is not None or _CODE_START_RE.match(text) is not None


_COMMENT_TAIL_RE = re.compile(rb"(?:#|//)[^\"'\n]*$", re.MULTILINE)
_TOKEN_RE = re.compile(r"[^\W\d]\w*|\d[\w.]*|\S")
_IDENTIFIER_RE = re.compile(r"[^\W\d]\w*")
_BRACKETS: Final = frozenset({"(", ")", ","})
_TRANSLATION_WORDS: Final = _BRACKETS | TRANSLATION_NAMES
"""What translation wrapping adds: its calls' names and brackets."""
_PIECE_RE: Final = re.compile(rb"\w+|\S")
"""Pieces of patch lines: at least as many as the tokens of the lines (`count_pieces`)."""
_WORD_BYTES: Final = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
_SPACE_BYTES: Final = frozenset(b" \t\n\v\f\r")
_PIECE_KINDS: Final = bytes(
    ord("w") if byte in _WORD_BYTES else ord(" ") if byte in _SPACE_BYTES else ord("x")
    for byte in range(256)
)
"""Each byte's kind to `_PIECE_RE` (`\\w` and `\\s` of a bytes pattern): word, space, other."""


_TYPING_KEYWORDS: Final = frozenset(
    {"None", "if", "import", "from", "as", "def", "class", "async", "pass"}
)
"""The words a Python typing change may add or take away besides names."""
UNRENAMEABLE: Final = (
    frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
)
"""Names no rename may change: keywords and built-ins (`min` → `max` is work)."""


class Misfits(NamedTuple):
    """Of one file's changed tokens, how many each rule cannot explain, and how many there are;
    `None` for a rule that can explain none of them."""

    comments: int | None
    typing: int | None
    i18n: int | None
    tokens: int


def _tokens(lines: Iterable[bytes]) -> list[str]:
    return _TOKEN_RE.findall("\n".join(line.decode("utf-8", "replace") for line in lines))


def apart(removed: Counter[str], added: Counter[str]) -> int:
    """How many tokens the two sides do not share: `(removed - added) + (added - removed)`
    counted, each common token's smaller count taken once from both totals (at C speed)."""
    common = removed.keys() & added.keys()
    shared = sum(map(min, map(removed.__getitem__, common), map(added.__getitem__, common)))
    return removed.total() + added.total() - 2 * shared


def piece_kinds(data: bytes) -> tuple[int, int]:
    """The pieces `_PIECE_RE` finds, by kind: runs of word bytes, and other bytes (each one),
    counted at C speed without making the pieces."""
    kinds = data.translate(_PIECE_KINDS)
    runs = kinds.count(b" w") + kinds.count(b"xw") + kinds.startswith(b"w")
    return runs, kinds.count(b"x")


def count_pieces(data: bytes) -> int:
    """`len(_PIECE_RE.findall(data))`, counted at C speed without making the pieces: each
    byte that is neither word nor space is one, and so is each run of word bytes."""
    runs, others = piece_kinds(data)
    return runs + others


_SECTIONS_COUNTED: Final = 64
_SECTION_COUNTED_BYTES: Final = 1 << 18
_counted_sections: dict[bytes, int] = {}
"""The pieces of the file sections counted last (`section_pieces`): at most
`_SECTIONS_COUNTED`, each of at most `_SECTION_COUNTED_BYTES` (a few MB in all)."""


def section_pieces(section: bytes) -> int:
    """`count_pieces` of a file section of a change's patch, counted once: the typing share
    asks for each section's to tell a sweep, again to order its files, and the other shares
    again to order theirs."""
    counted = _counted_sections.get(section)
    if counted is None:
        counted = count_pieces(section)
        if len(section) <= _SECTION_COUNTED_BYTES:
            if len(_counted_sections) >= _SECTIONS_COUNTED:
                _counted_sections.clear()  # the next change asks for its own
            _counted_sections[section] = counted
    return counted


def _without(tokens: list[str], left_out: Iterable[str]) -> Counter[str]:
    """The tokens counted, those in `left_out` not (counted first, then dropped: at C speed)."""
    counted = Counter(tokens)
    for token in left_out:
        counted.pop(token, None)
    return counted


class _Side(NamedTuple):
    """One side's tokens of a file's changed lines, comment lines and trailing comments left
    out: how many in all, those of code lines, those of code lines but imports with annotations
    cut (`_unannotated`), those of all lines but imports."""

    every: int
    code: list[str]
    unannotated: list[str]
    unimported: list[str]


class _Line(NamedTuple):
    """What one changed line gives its side (`_Side`, the same fields): its tokens are all
    that matter, and a line's are its own, so each is read once (`_read_line`)."""

    every: int
    code: Sequence[str]
    unannotated: Sequence[str]
    unimported: Sequence[str]


_NOTHING: Final = _Line(0, (), (), ())
"""A blank line's or a comment line's part."""
_LINES_KEPT: Final = 1 << 13
_LINE_KEPT_BYTES: Final = 256
_read_lines: Final[dict[bool, dict[bytes, _Line]]] = {True: {}, False: {}}
"""The lines read so far (`_read_line`), of Python and of the other languages, by their bytes
(`keep_line`). A line is changed again and again (moved, read by the screen and again by a
share, taken away by a later change): about half the lines a walk reads, it has read before."""

_Read = TypeVar("_Read")


def keep_line(kept: dict[bytes, _Read], line: bytes, read: _Read) -> None:
    """Keep what a changed line read as, for the next time it is read: at most `_LINES_KEPT`
    lines, each of at most `_LINE_KEPT_BYTES` (the memos of this module and of the lint share,
    a few MB at most)."""
    if len(line) <= _LINE_KEPT_BYTES:
        if len(kept) >= _LINES_KEPT:
            kept.clear()  # a walk's lines come again soon after, if ever
        kept[line] = read


_EVERY, _CODE, _UNANNOTATED, _UNIMPORTED = map(itemgetter, range(4))


def _side(language: Language, lines: Iterable[bytes]) -> _Side:
    python = language == "python"
    kept = _read_lines[python]
    read = [kept.get(raw) or _read_line(python, raw) for raw in lines]
    return _Side(
        sum(map(_EVERY, read)),
        list(chain.from_iterable(map(_CODE, read))),
        list(chain.from_iterable(map(_UNANNOTATED, read))),
        list(chain.from_iterable(map(_UNIMPORTED, read))),
    )


def _read_line(python: bool, raw: bytes) -> _Line:
    """One line's part of its side (see `_Side`), kept for the next time it is read."""
    line = _NOTHING
    if raw.strip() and not is_comment(raw):
        code = raw
        if b"#" in code or b"//" in code:  # what a trailing comment starts with (most: none)
            code = _COMMENT_TAIL_RE.sub(b"", code)
        text = code.decode("utf-8", "replace").strip()
        tokens = _TOKEN_RE.findall(text)
        importing = text.startswith(("import ", "from "))
        if python and not is_code(text):
            line = _Line(len(tokens), (), (), () if importing else tokens)
        elif importing:
            line = _Line(len(tokens), tokens, (), ())
        elif ":" in text or "-" in text or "cast" in text:  # an annotation's or a cast's mark
            line = _Line(len(tokens), tokens, _unannotated(_uncast(tokens)), tokens)
        else:  # each `:` and `-` is a token of its own: `_unannotated` and `_uncast` keep all
            line = _Line(len(tokens), tokens, tokens, tokens)
    keep_line(_read_lines[python], raw, line)
    return line


def misfits(language: Language, hunks: Sequence[Hunk], *, i18n: bool = True) -> Misfits:
    """Count the changed tokens of one file's hunks that each rule cannot explain (see the
    module); without `i18n`, translation wrapping's are not counted (None), for a caller that
    does not read them (the typing share: a tenth of its time)."""
    removed = _side(language, (line for hunk in hunks for line in hunk.removed))
    added = _side(language, (line for hunk in hunks for line in hunk.added))
    total = removed.every + added.every
    code = apart(Counter(removed.code), Counter(added.code))
    typed = translated = None
    if language == "python":
        typed = apart(
            _without(removed.unannotated, _TYPING_KEYWORDS),
            _without(added.unannotated, _TYPING_KEYWORDS),
        )
    if language == "python" and i18n:
        translated = apart(
            _dropped(unformatted(removed.unimported), _BRACKETS),
            _dropped(unformatted(added.unimported), _TRANSLATION_WORDS),
        )
    return Misfits(code, typed, translated, total)


def _dropped(counted: Counter[str], left_out: Iterable[str]) -> Counter[str]:
    for token in left_out:
        counted.pop(token, None)
    return counted


_QUOTE_TOKENS: Final = frozenset({'"', "'"})


def _keyword(tokens: list[str], index: int) -> bool:
    """Whether the token at `index` names a keyword argument: a name, then `=` (not `==`)."""
    if tokens[index + 1 : index + 2] != ["="] or tokens[index + 2 : index + 3] == ["="]:
        return False
    return _IDENTIFIER_RE.fullmatch(tokens[index]) is not None


def unformatted(tokens: list[str]) -> Counter[str]:
    """The tokens counted without what filling a template by name adds or an f-string has:
    each `.format(`'s `.` and `format`, its keyword arguments' names and `=` (each name once
    more: the placeholder it fills), an f-string's `f` (`f"{a}"` is `"{a}".format(a=a)`)."""
    if "format" not in tokens and "f" not in tokens:
        return Counter(tokens)  # most lines: counted at C speed
    kept: list[str] = []
    named: Counter[str] = Counter()
    depth = 0  # the brackets open inside a `.format(` call, 0 outside one
    index, end = 0, len(tokens)
    while index < end:
        piece = tokens[index]
        following = tokens[index + 1 : index + 2]
        if piece == "." and following == ["format"] and tokens[index + 2 : index + 3] == ["("]:
            kept.append("(")
            depth, index = 1, index + 3
            continue
        if depth and piece in "([":
            depth += 1
        elif depth and piece in ")]":
            depth -= 1
        elif depth == 1 and _keyword(tokens, index):
            named[piece] += 1
            index += 2
            continue
        if not (piece == "f" and following and following[0] in _QUOTE_TOKENS):
            kept.append(piece)
        index += 1
    counted = Counter(kept)
    counted.subtract(named)
    return +counted


_RETURN_STOPS: Final = frozenset({":"})
_ANNOTATION_STOPS: Final = frozenset({"=", ","})
_OPENING: Final = frozenset("([{<")
_CLOSING: Final = frozenset(")]}>")


def _unannotated(tokens: list[str]) -> list[str]:
    """A line's tokens without what follows a `->` up to the line's last `:`, nor another `:`
    and what follows it up to the next `=` or `,` of its bracket, or the bracket's end (a
    block's colon, last on its line, stays): annotations,
    cut alike from both versions of a line (a dict's values and a slice's ends go too; the
    trees judge those)."""
    if not _annotated(tokens):
        return tokens
    kept: list[str] = []
    index, end = 0, len(tokens)
    while index < end:
        piece = tokens[index]
        kept.append(piece)
        index += 1
        if piece == "-" and index < end and tokens[index] == ">":
            kept.pop()
            index = _skip(tokens, index + 1, stops=_RETURN_STOPS)
        elif piece == ":" and index < end:  # not a block's colon, which ends its line
            kept.pop()
            index = _skip(tokens, index, stops=_ANNOTATION_STOPS)
    return kept


def _annotated(tokens: list[str]) -> bool:
    """Whether a line's tokens may hold an annotation `_unannotated` cuts: a `->`, or a `:`
    before the last token (most lines hold neither: they are kept as they are)."""
    colons = tokens.count(":")
    if colons > 1 or (colons == 1 and tokens[-1] != ":"):
        return True
    return "-" in tokens and ">" in tokens


def _uncast(tokens: list[str]) -> list[str]:
    """A line's tokens with each `cast(T, value)` (`t.cast`, `typing.cast`) left as `value`."""
    if "cast" not in tokens:
        return tokens
    kept: list[str] = []
    closing: list[int] = []  # the depths whose closing bracket belongs to a cast
    depth, index, end = 0, 0, len(tokens)
    while index < end:
        piece = tokens[index]
        if piece == "cast" and index + 1 < end and tokens[index + 1] == "(":
            if kept[-2:-1] and kept[-1] == ".":
                del kept[-2:]  # the module's name and its dot
            index = _skip(tokens, index + 2, stops=_ANNOTATION_STOPS) + 1
            depth += 1
            closing.append(depth)
            continue
        if piece in _OPENING:
            depth += 1
        elif piece in _CLOSING:
            if closing and closing[-1] == depth:
                closing.pop()
                depth -= 1
                index += 1
                continue
            depth -= 1
        kept.append(piece)
        index += 1
    return kept


def _skip(tokens: list[str], index: int, *, stops: frozenset[str]) -> int:
    """Where an annotation starting at `index` ends: the first stop or closing bracket outside
    the brackets it opens, or the line's end."""
    depth = 0
    while index < len(tokens):
        token = tokens[index]
        if depth == 0 and (token in stops or token in _CLOSING):
            return index
        if token in _OPENING:
            depth += 1
        elif token in _CLOSING:
            depth -= 1
        index += 1
    return index


# A changed line of code, for the numbers: not a comment line, and one that assigns, calls or
# indexes, or starts with a statement's keyword (its sign, then its text).
_CHANGEDCODE_RE = re.compile(
    rb"^([-+])(?!-- |\+\+ )(?![ \t]*(?:#|//|/?\*))([ \t]*(?:return|raise|yield|if|elif|else|for"
    rb"|while|with|try|except|finally|assert|del|import|from|def|class|lambda|await|async|pass"
    rb"|break|continue)\b[^\n]*"
    rb"|(?=[^\n](?:[^\n(\[=]++|[(\[](?<!\w[(\[])|=(?![^=\n])|=(?<![^=!<>\n]=))*+[(\[=])[^\n]*"
    rb"|[^\n]*[^=!<>\n]=\n[^\n]*)",
    re.MULTILINE,
)
"""A changed line of code, for the numbers: not a comment line, and one that starts with a
statement's keyword, or assigns (`x=`, not `==`, `<=`, `x==`), calls or indexes (`f(`, `a[`)
— its sign, then its text. A line that ends assigning (`x =`) takes the next line with it.
The marks are looked for from the line's second character on (one follows what it marks),
each run of other characters skipped at once (`++`): trying each character in turn, as a
lazy `[^\n]*?` would, costs four times as much."""
_NUMBER_RE = re.compile(
    rb"\b(?:\d+|return|raise|yield|for|while|try|except|not|and|or|in|is|else|elif|lambda"
    rb"|with|assert|del|break|continue|await)\b"
)
_GATE_BYTES = 4096
_MOST_BYTES = 4 * _GATE_BYTES
"""A first hunk longer than this is not read: the numbers cannot be told, the change stays."""
_REPEATS = 2


def numbers_kept(sections: Iterable[bytes]) -> bool:
    """Whether the numbers in the lines of code each file section of a patch changes stay the
    same (counted, comments cut): no chore rule changes a number in code, most work does. Read
    at C speed on the sections' bytes, and only the first `_GATE_BYTES` of each (to the end of
    the hunk that crosses them): the gate before `misfits` reads anything line by line."""
    for section in sections:
        if len(section) > _GATE_BYTES:
            cut = section.find(b"\n@@ ", _GATE_BYTES, _MOST_BYTES)
            if cut < 0 and len(section) > _MOST_BYTES:
                return False
            section = section if cut < 0 else section[:cut]  # noqa: PLW2901 - its first part
        lines = _CHANGEDCODE_RE.findall(section)
        if not lines:
            continue
        removed = b"\n".join(text for sign, text in lines if sign == b"-")
        added = b"\n".join(text for sign, text in lines if sign == b"+")
        if _numbers(removed) != _numbers(added):
            return False
    return True


def _numbers(code: bytes) -> list[bytes]:
    return sorted(_NUMBER_RE.findall(_COMMENT_TAIL_RE.sub(b"", code)))


def rename_pairs(hunks: Iterable[Hunk]) -> tuple[tuple[str, str], ...] | None:
    """The identifier mapping every hunk follows, sorted; None when a hunk's removed and added
    tokens differ but for identifiers, when an identifier becomes two, two become one, one is
    both renamed and a rename's target (a swap, a chain), a keyword is renamed, nothing is, or
    the names are replaced fewer than `_REPEATS` times each on average (a rename changes a
    name where it is defined and where it is used)."""
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    replaced = 0
    for hunk in hunks:
        old, new = _tokens(hunk.removed), _tokens(hunk.added)
        if len(old) != len(new):
            return None
        for before, after in zip(old, new, strict=True):
            if before == after:
                continue
            if not _paired(forward, backward, before, after):
                return None
            replaced += 1
    renamed = bool(forward) and forward.keys().isdisjoint(backward)
    if not renamed or replaced < _REPEATS * len(forward):  # once each: edits, not a rename
        return None
    return tuple(sorted(forward.items()))


def _paired(forward: dict[str, str], backward: dict[str, str], before: str, after: str) -> bool:
    """Note `before` becoming `after`; whether both are names and the mapping stays one to
    one."""
    if not (_renameable(before) and _renameable(after)):
        return False
    return (
        forward.setdefault(before, after) == after and backward.setdefault(after, before) == before
    )


def _renameable(token: str) -> bool:
    return _IDENTIFIER_RE.fullmatch(token) is not None and token not in UNRENAMEABLE


def identifiers(text: str) -> frozenset[str]:
    """Every identifier-like word of a text (its strings' and comments' words too)."""
    return frozenset(_IDENTIFIER_RE.findall(text))
