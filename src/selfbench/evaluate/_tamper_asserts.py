"""The tamper scan's `matcher-override` rule (`evaluate.tamper`): an added line that replaces
what the tests assert with.

In JavaScript and TypeScript: the global matchers (`expect.extend(`, a `Symbol.for` of an expect
or matchers symbol, `globalThis.expect`, an assignment to `expect.X`), or an assertion library
(`assert`, `node:assert`, `assert/strict`, `chai`, `power-assert`, `uvu/assert`): an assignment
to a member of one required in place (`require('node:assert').strictEqual = ...`), of `assert`
(`assert.strict.equal = ...`) or of chai's `assert`, `expect`, `should` or `Assertion`, or an
`Object.assign`, `Object.defineProperty` or `Object.setPrototypeOf` on one. A file whose lines
shown define its own `assert` (a function, class or variable of that name, or an import of a
relative path) and name no assertion library changes its own object, no finding.

In Python: an assignment to, or a `setattr` on, an assertion (`assert*`, `fail*`) or a private or
running method (`_*`, `run`, `debug`) of a class the tests assert through
(`Runner.assertion_classes`: unittest's `unittest.TestCase`), by its qualified name or, where the
file's lines shown define no class so named, by its name alone (`TestCase`); its settings
(`maxDiff`, `longMessage`) are none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Literal

from selfbench.runners import RUNNERS

__all__ = ["Language", "LineCheck", "matcher_check"]

Language = Literal["js", "python"]
LineCheck = Callable[[str], str | None]
"""Why an added line breaks the rule, if it does."""

_SPAN = 200
"""Characters a pattern reads between two of its parts at most (a bound keeps a long line's scan
linear)."""
_MATCHER_RE = re.compile(
    r"\bexpect\s*\.\s*extend\s*\("
    rf"|\bSymbol\s*\.\s*for\s*\(\s*['\"`][^'\"`]{{0,{_SPAN}}}(?:expect|matchers)"
    r"|\b(?:globalThis|global|window)\s*(?:\.\s*expect\b|\[\s*['\"`]expect['\"`]\s*\])"
    r"|(?<![\w$.])expect\s*\.\s*[\w$]+\s*=(?![=>])"
)
_LIBRARY = r"['\"`](?:(?:node:)?assert(?:/strict)?|chai|power-assert|uvu/assert)['\"`]"
_REQUIRED = rf"require\s*\(\s*{_LIBRARY}\s*\)"
_PATCHES = r"\bObject\s*\.\s*(?:assign|defineProperty|defineProperties|setPrototypeOf)\s*\(\s*"
_MEMBER_SET = r"\s*=(?![=>])"
_JS_LIBRARY_RE = re.compile(
    rf"{_REQUIRED}(?:\s*\.\s*[\w$]+){{1,3}}{_MEMBER_SET}|{_PATCHES}{_REQUIRED}"
)
_JS_NAMED_RE = re.compile(
    r"(?<![\w$.])(?:assert(?:\s*\.\s*[\w$]+){1,3}"
    rf"|chai\s*\.\s*(?:assert|expect|should|Assertion)\b(?:\s*\.\s*[\w$]+){{0,3}}){_MEMBER_SET}"
    rf"|{_PATCHES}(?:assert|chai)(?![\w$])"
)
_JS_IMPORTS_LIBRARY_RE = re.compile(_LIBRARY)
_JS_OWN_ASSERT_RE = re.compile(
    r"\b(?:function\s*\*?|class)\s+assert\b"
    r"|\b(?:const|let|var)\s+assert\s*=\s*(?:(?!(?:await\s+)?(?:require|import)\s*\()"
    r"|(?:await\s+)?(?:require|import)\s*\(\s*['\"`]\.)"
    r"|\bimport\s+(?:\*\s+as\s+)?assert\s+from\s*['\"`]\."
)
"""A definition of `assert`: a function, a class, a variable of another value than a module's,
or a module of the project's own (a relative path)."""
_CLASSES = tuple(dict.fromkeys(name for r in RUNNERS for name in r.assertion_classes))
"""The classes tests assert through, qualified (`Runner.assertion_classes`)."""
_CLASS_NAMES = tuple(dict.fromkeys(name.rpartition(".")[2] for name in _CLASSES))
_CLASS = "|".join(
    r"\s*\.\s*".join(map(re.escape, name.split("."))) for name in (*_CLASSES, *_CLASS_NAMES)
)
_PATCHED = r"(?:assert\w*|fail\w*|_\w+|run|debug)"
"""The methods a class's tests assert or run with, not its settings (`maxDiff`)."""
_CLASS_PATCHED_RE = re.compile(
    rf"(?<![\w.])({_CLASS})\s*\.\s*{_PATCHED}\s*=(?!=)"
    rf"|\bsetattr\s*\(\s*({_CLASS})\s*,\s*(?=[^'\"\s]|(['\"]){_PATCHED}\3)"
)
_OWN_CLASS_RE = re.compile(rf"\bclass\s+(?:{'|'.join(map(re.escape, _CLASS_NAMES))})\b")
_WORDS: dict[Language, tuple[str, ...]] = {
    "js": ("expect", "Symbol", "assert", "chai"),
    "python": _CLASS_NAMES,
}
"""The words every line a language's check finds holds."""


def matcher_check(language: Language, shown: Iterable[str], added: str) -> LineCheck | None:
    """The check of a file's added lines (`added`, joined) in `language`, by the lines its hunks
    show; None when none of them can break the rule."""
    if not any(word in added for word in _WORDS[language]):
        return None
    if language == "python":
        return partial(_test_class, own=_defines(shown, _OWN_CLASS_RE))
    own = "assert" in added and _defines(shown, _JS_OWN_ASSERT_RE, unless=_JS_IMPORTS_LIBRARY_RE)
    return partial(_js, own_assert=own)


def _defines(
    shown: Iterable[str], pattern: re.Pattern[str], *, unless: re.Pattern[str] | None = None
) -> bool:
    """Whether a line shown matches `pattern` and none matches `unless`."""
    found = False
    for text in shown:
        if unless is not None and unless.search(text):
            return False
        found = found or pattern.search(text) is not None
    return found


def _js(text: str, *, own_assert: bool) -> str | None:
    """`own_assert`: the file's `assert` is its own, and it names no assertion library."""
    found = _MATCHER_RE.search(text)
    if found is not None:
        return f"overrides global matchers: {found[0].strip()}"
    library = _JS_LIBRARY_RE.search(text)
    named = (m for m in _JS_NAMED_RE.finditer(text) if not own_assert or "chai" in m[0])
    found = library or next(named, None)
    return None if found is None else f"overrides an assertion library: {found[0].strip()}"


def _test_class(text: str, *, own: bool) -> str | None:
    """`own`: the file defines a class named as one of them, so only a qualified name is
    read."""
    patched = _CLASS_PATCHED_RE.finditer(text)
    found = next((m for m in patched if not own or "." in (m[1] or m[2])), None)
    return None if found is None else f"overrides the test runner's assertions: {found[0].strip()}"
