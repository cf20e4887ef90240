"""Changes whose code is mostly layout and lint fixes: ranked last in their tier. Pure.

A formatter run with a linter's fixes ("style: upgrade to use ruff": quotes, `u""` prefixes,
trailing commas, a local named `list` renamed `list_values`) changes the syntax tree, so the
code chores (`selfbench.mine.code_chores`) keep it, and its size ranks it among the hardest
candidates though no instruction asks for it and no test checks it. Such a change stays a
candidate, ranked after every other of its tier (`selfbench.mine.rank`), as a typing sweep is
(`selfbench.mine.typing_share`, whose thresholds it shares), when

1. layout and lint explain at least two thirds (`MOSTLY`) of its implementation's changed code
   tokens;
2. and its tests change no more code tokens they leave unexplained than its implementation does,
   or than one in ten (`_TESTS_SHARE`) of their own changed tokens (tests reformatted with the
   code; the sides of a large reformat's hunks do not always pair up token for token); every
   token of a test file not in Python is unexplained (a fixture, a test in another language),
   as the typing share counts it.

Measured on the `-U0` patch alone, nothing parsed. A file's removed lines, and its added ones,
are each read as one sequence of tokens, hunk after hunk: comment lines, trailing comments and
imports left out (isort's order, an unused import dropped), each string literal one token. Its
*changed* tokens are those that do not cancel out as written (a floor: more changed tokens
only make lint a larger share); the *unexplained* ones are those a sequence match of the two
sides (`difflib`, in order: a reordered condition is work, not a move that cancels out) leaves
once both are normalised:

* a string's `u` prefix goes and its quotes are `"` (`'a'`, `u'a'`, `"a"` and a one-line
  triple-quoted `a` are one token; an escaped quote is the quote; adjacent strings are one; a
  docstring's opening or closing triple quote is one token, whichever its quotes) — but `b`,
  `f` and `r` stay: `b""` ↔ `""` and a new f-string are work;
* a trailing comma goes before `]` or `}`, or before `)` when it ends its line (a one-line `(x,)`
  is a tuple), and at the end of a hunk (its closing bracket may be on a line left unchanged);
* a grouping or tuple parenthesis goes (not a call's: `f(`, `_(`), and so does a line
  continuation `\\`: a formatter adds and removes both (a precedence change made by
  parentheses alone is explained too: the change is only ranked, never excluded);
* `(object)` after a class's name goes;
* a linter's rename of a name that shadowed a built-in is explained: tokens replaced one for one
  by a name that holds the old one (`list` → `list_values`, `type` → `type_`; `min` → `max` is
  work, and so is `items` → `limit`, which may be another variable), each old name by one new
  name over the whole change and the reverse, the old name gone from the added lines and the
  new one not in the removed lines, each defined there (`def`, `class`, an assignment, a
  parameter).

Only a sweep is judged (`typing_share.SWEEP` tokens of Python implementation), and only when
every implementation file is Python or configuration. What it costs: the tokenising of the
largest files first, stopped as soon as the tokens no rename can explain (those that do not
cancel out once normalised) make two thirds impossible; the sequence match only then.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from functools import lru_cache
from typing import TYPE_CHECKING, Final, NamedTuple

from selfbench.mine._code_tokens import apart, count_pieces, keep_line
from selfbench.mine.chores import MOSTLY_LINT
from selfbench.mine.code_chores import file_kind
from selfbench.patches import Hunk

if TYPE_CHECKING:
    from selfbench.mine.code_chores import CodeFile
    from selfbench.mine.typing_share import MeasuredFile

__all__ = ["LintCount", "judge_lint", "lint_count"]

_STRING = (
    r"(?<!\w)[rRbBuUfF]{0,2}(?:\"\"\"(?:[^\"\\]|\\.|\"(?!\"\"))*\"\"\""
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"|'''"
    r"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
)
_TOKEN_RE: Final = re.compile(_STRING + r"|[^\W\d]\w*|\d[\w.]*|\S")
"""A line's tokens: a string literal, a triple quote that opens or closes one on another line,
a name, a number, any other character."""
_UNQUOTED_TOKEN_RE: Final = re.compile(r"[^\W\d]\w*|\d[\w.]*|\S")
"""`_TOKEN_RE` for a line without a quote, where no string can start (a third faster)."""
_STRING_RE: Final = re.compile(r"([rRbBuUfF]*)(\"\"\"|'''|\"|')(.*)\2", re.DOTALL)
_ESCAPE_RE: Final = re.compile(r"\\(.)", re.DOTALL)
_COMMENT_TAIL_RE: Final = re.compile(r"#[^\"'\n]*$")
_NAME_RE: Final = re.compile(r"[^\W\d]\w*")
_HARD_KEYWORDS: Final = frozenset(keyword.kwlist)
_KEYWORDS: Final = _HARD_KEYWORDS | frozenset(keyword.softkwlist)
_BUILTINS: Final = frozenset(dir(builtins))
_CLOSING: Final = frozenset(")]}")
_TESTS_SHARE: Final = 10
"""Tests reformatted beside the code may leave one changed token in this many unexplained."""
_SPECIAL: Final = frozenset({",", "class", "(", ")", "\\", ""})
"""The tokens `_normalised` may drop or rewrite besides strings; any other is kept as it is."""


class LintCount(NamedTuple):
    """One Python file's hunks: each hunk's removed and added tokens normalised (see the
    module), the changed code tokens (a floor: those that do not cancel out as written), every
    token, and the code text of the removed and added lines."""

    hunks: tuple[tuple[list[str], list[str]], ...]
    changed: int
    tokens: int
    texts: tuple[str, str]


def _side(lines: Sequence[bytes]) -> tuple[list[str], list[str], str]:
    """One hunk side's tokens as written and normalised (see the module), and its code text."""
    raw: list[str] = []
    ends: list[bool] = []  # whether the token ends its line
    kept: list[str] = []
    importing = False
    read = _read_lines
    for line in lines:
        found = read.get(line, _UNREAD)
        if found is _UNREAD:
            found = _read_line(line)
        if found is None:
            continue
        text, tokens = found
        if importing or text.startswith(("import ", "from ")):
            opened = text.count("(") > text.count(")") or (importing and ")" not in text)
            importing = opened or text.endswith("\\")
            continue
        if tokens:
            raw += tokens
            ends += [False] * (len(tokens) - 1)
            ends.append(True)
        kept.append(text)
    normal = _normalised([*raw, ""], [*ends, True])  # its closing bracket may be unchanged
    return raw, normal, "\n".join(kept)


_UNREAD: Final[tuple[str, list[str]]] = ("", [])
"""What `_read_lines` holds for a line not read yet (it holds None for a blank or comment
line)."""
_read_lines: dict[bytes, tuple[str, list[str]] | None] = {}
"""The lines read so far (`_read_line`), by their bytes (`keep_line`: a line is changed again
and again, moved, taken away by a later change)."""


def _read_line(line: bytes) -> tuple[str, list[str]] | None:
    """A changed line's code text (its trailing comment cut) and its tokens, None for a blank or
    comment line; kept for the next time it is read."""
    found = None
    if line.strip() and not line.lstrip().startswith(b"#"):  # Python: `*args` is code
        text = line.decode("utf-8", "replace")
        if "#" in text:  # a trailing comment (most lines: none)
            text = _COMMENT_TAIL_RE.sub("", text)
        text = text.strip()
        quoted = '"' in text or "'" in text
        found = text, (_TOKEN_RE if quoted else _UNQUOTED_TOKEN_RE).findall(text)
    keep_line(_read_lines, line, found)
    return found


def _normalised(tokens: list[str], ends: list[bool]) -> list[str]:
    found: list[str] = []
    grouping: list[bool] = []  # for each open `(`, whether it groups (no call's)
    start = 0  # the first token not yet kept nor dropped
    special = [i for i, piece in enumerate(tokens) if piece in _SPECIAL or piece[-1] in "\"'"]
    for index in special:  # the others (most tokens) are kept as they are, a run at a time
        if index < start:
            continue  # dropped with `class C(object)`
        found += tokens[start:index]
        start = index + 1
        piece = tokens[index]
        if piece not in _SPECIAL:  # a string
            _add_string(found, _string(piece))
        elif piece == "(":
            grouping.append(index == 0 or _groups(tokens[index - 1]))
            if not grouping[-1]:
                found.append(piece)
        elif piece == ")":
            if not (grouping and grouping.pop()):
                found.append(piece)
        else:
            dropped = _layout(tokens, ends, index)
            if dropped != 1:  # none (kept), or `class C(object)`, of which `class C` stays
                found.extend(tokens[index : index + (2 if dropped else 1)])
            start = index + max(dropped, 1)
    found += tokens[start:]
    return found


def _add_string(found: list[str], normal: str) -> None:
    """Add a normalised string token, joined to a plain string before it (`"a " "b"` is
    `"a b"`)."""
    if _plain_string(normal) and found and _plain_string(found[-1]):
        found[-1] = found[-1][:-1] + normal[1:]
    else:
        found.append(normal)


def _layout(tokens: list[str], ends: list[bool], index: int) -> int:
    """How many tokens from a `_SPECIAL` one at `index` on, not a parenthesis, `_normalised`
    drops as layout: none, one (a trailing comma, a line's continuation, the end), or the five
    of `class C(object)` (of which `class C` stays)."""
    piece = tokens[index]
    if piece == ",":
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        closing = following in _CLOSING and (following != ")" or ends[index])
        return int(closing or (following == "" and ends[index]))
    if piece == "class":
        return 5 if tokens[index + 2 : index + 5] == ["(", "object", ")"] else 0
    return 1  # the end, or a line continued


def _plain_string(normal: str) -> bool:
    """Whether a normalised token is a one-line string without a prefix."""
    return len(normal) >= 2 and normal[0] == normal[-1] == '"' and not normal.startswith('"""')


@lru_cache(maxsize=1 << 12)  # most are a few names asked again and again (`f(`, `print(`)
def _groups(before: str) -> bool:
    """Whether a `(` after this token groups or makes a tuple (not a call's, a definition's)."""
    if before in _HARD_KEYWORDS:  # `return (`, `in (`; a soft one is a name: `_(`, `type(`
        return True
    return not (_NAME_RE.fullmatch(before) or before in (")", "]") or before[-1:] in ('"', "'"))


def _string(token: str) -> str:
    match = _STRING_RE.fullmatch(token)
    if match is None:
        return '"""' if token[-3:] in ('"""', "'''") else token
    prefix, _, body = match.groups()
    kinds = "".join(sorted(set(prefix.lower()) - {"u"}))
    if "r" not in kinds:
        body = _ESCAPE_RE.sub(lambda m: m[1] if m[1] in "'\"" else m[0], body)
    return f'{kinds}"{body}"'  # `"""a"""` on one line is `"a"`


def _unmatched(before: list[str], after: list[str]) -> tuple[int, list[tuple[str, str]]]:
    """The tokens a sequence match of the two leaves unmatched, and the one-for-one
    replacements of names it found."""
    if before == after:
        return 0, []
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    left = 0
    pairs: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        left += (i2 - i1) + (j2 - j1)
        if tag == "replace" and i2 - i1 == j2 - j1:
            pairs.extend(
                (a, b)
                for a, b in zip(before[i1:i2], after[j1:j2], strict=True)
                if _NAME_RE.fullmatch(a) and _NAME_RE.fullmatch(b)
            )
    return left, pairs


def lint_count(hunks: Sequence[Hunk]) -> LintCount:
    """Read a Python file's hunks (see `LintCount`)."""
    sides = []
    raw: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
    texts: tuple[list[str], list[str]] = ([], [])
    for hunk in hunks:
        old, new = _side(hunk.removed), _side(hunk.added)
        raw[0].update(old[0])
        raw[1].update(new[0])
        texts[0].append(old[2])
        texts[1].append(new[2])
        if old[1] != new[1]:
            sides.append((old[1], new[1]))
    changed = apart(*raw)
    tokens = raw[0].total() + raw[1].total()
    return LintCount(tuple(sides), changed, tokens, ("\n".join(texts[0]), "\n".join(texts[1])))


def _floor(found: LintCount) -> int:
    """At least the tokens left unexplained: those that do not cancel out, but the built-ins'
    names taken away and the names that hold one of them (what a rename may explain)."""
    old: Counter[str] = Counter(t for side, _ in found.hunks for t in side)
    new: Counter[str] = Counter(t for _, side in found.hunks for t in side)
    gone, came = old - new, new - old
    shadowing = [name for name in gone if name in _BUILTINS]
    left = sum(n for token, n in gone.items() if token not in _BUILTINS)
    return left + sum(
        n for token, n in came.items() if not any(name in token for name in shadowing)
    )


def _sequence(found: LintCount) -> tuple[int, list[tuple[str, str]]]:
    """The tokens a sequence match leaves unmatched in the hunks that differ once normalised,
    one after another (a formatter may move a token across an unchanged line)."""
    old = [token for side, _ in found.hunks for token in side]
    new = [token for _, side in found.hunks for token in side]
    return _unmatched(old, new)


def _renamed(replaced: Counter[tuple[str, str]], removed: str, added: str) -> int:
    """The tokens a consistent rename explains (see the module)."""
    forward: dict[str, set[str]] = {}
    backward: dict[str, set[str]] = {}
    for old, new in replaced:
        forward.setdefault(old, set()).add(new)
        backward.setdefault(new, set()).add(old)
    names = (_names(removed), _names(added))
    explained = 0
    for (old, new), count in replaced.items():
        if len(forward[old]) > 1 or len(backward[new]) > 1 or old in backward or new in forward:
            continue
        if old not in _BUILTINS or old not in new or new in _KEYWORDS or new in _BUILTINS:
            continue  # not a built-in's shadowing undone
        if names[1][old] or names[0][new]:
            continue  # the old name still used, or the new one there before
        if _defines(removed, old) and _defines(added, new):
            explained += 2 * count
    return explained


def _names(text: str) -> Counter[str]:
    """The names a code text uses, strings and comments left out."""
    return Counter(t for t in _TOKEN_RE.findall(text) if _NAME_RE.fullmatch(t))


def _defines(text: str, name: str) -> bool:
    """Whether the lines define `name`: a `def`, a class, an assignment or a parameter."""
    word = re.escape(name)
    pattern = rf"\b(?:def|class)\s+{word}\b|^\s*{word}\s*(?::[^=]*)?=(?!=)|[(,]\s*{word}\s*[:=,)]"
    return re.search(pattern, text, re.MULTILINE) is not None


def _pieces(file: CodeFile) -> int:
    """At least the tokens a file's hunks change (both sides): pieces found at C speed."""
    return count_pieces(
        b"\n".join(line for hunk in file.hunks for line in (*hunk.removed, *hunk.added))
    )


def _count(
    files: Iterable[CodeFile], *, limit: Callable[[int], int]
) -> tuple[int, int, int] | None:
    """The files' changed tokens, those left unexplained, every token; None for none, or as
    soon as more than `limit` are surely unexplained."""
    sized = sorted(((_pieces(file), file) for file in files), key=lambda pair: -pair[0])
    if not sized:
        return None
    left = sum(pieces for pieces, _ in sized)
    counts: list[LintCount] = []
    changed = floor = 0
    for pieces, file in sized:  # the largest first, until the others cannot make up for them
        found = lint_count(file.hunks)
        counts.append(found)
        left -= pieces
        changed += found.changed
        floor += _floor(found)
        if floor > limit(changed + left):
            return None
    tokens = sum(found.tokens for found in counts)
    unexplained = 0
    replaced: Counter[tuple[str, str]] = Counter()
    for found in counts:
        left, pairs = _sequence(found)
        unexplained += left
        replaced.update(pairs)
    removed = "\n".join(found.texts[0] for found in counts)
    added = "\n".join(found.texts[1] for found in counts)
    unexplained = max(unexplained - _renamed(replaced, removed, added), 0)
    return changed, unexplained, tokens


def judge_lint(
    pairs: Sequence[tuple[MeasuredFile, CodeFile]], *, mostly: tuple[int, int], sweep: int
) -> str | None:
    """The reason a change is ranked last (see the module), or None; its tests are read only
    when its implementation is mostly layout and lint."""
    code: list[CodeFile] = []
    tests: list[CodeFile] = []
    other_tests = 0  # the tokens of test files not Python: none explained (as typing_share)
    for measured, file in pairs:
        kind = file_kind(measured.path)
        if measured.binary or kind in ("configuration", "type-checker"):
            continue
        if kind != "python":
            if not measured.test:
                return None  # other code: work these tokens cannot weigh
            other_tests += lint_count(file.hunks).tokens
            continue
        (tests if measured.test else code).append(file)
    least, of = mostly
    counted = _count(code, limit=lambda changed: changed * (of - least) // of)
    if counted is None:
        return None
    changed, unexplained, every = counted
    explained = changed - unexplained
    if every < sweep or explained <= 0 or explained * of < changed * least:
        return None
    tested = _count(tests, limit=lambda changed: max(unexplained, changed // _TESTS_SHARE))
    if tests and tested is None:
        return None
    tests_changed, left = (tested[0], tested[1]) if tested is not None else (0, 0)
    left += other_tests
    if left > max(unexplained, (tests_changed + other_tests) // _TESTS_SHARE):
        return None
    return MOSTLY_LINT.format(lint=explained, tokens=changed, tests=left)
