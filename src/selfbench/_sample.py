"""The demo's embedded sample repository: a tiny library and one real, merged change.

`BASE` is the tree before the pull request; `CHANGE` holds the files the pull request added or
rewrote. The change is a genuine feature with its own tests, sized for the medium gates.
"""

from __future__ import annotations

__all__ = ["BASE", "CHANGE", "PR_NUMBER", "PR_TITLE"]

PR_NUMBER = 42
PR_TITLE = "Transliterate accented text and add separator and max_length options to slugify"

_README = """\
# slugkit

Turn titles into URL slugs.

    >>> from slugkit import slugify
    >>> slugify("Hello, World!")
    'hello-world'
"""

_PYPROJECT = """\
[project]
name = "slugkit"
version = "0.3.0"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

_INIT_BEFORE = '''\
"""Turn titles into URL slugs."""

from slugkit.core import slugify

__all__ = ["slugify"]
'''

_CORE_BEFORE = '''\
"""The slug rules."""

import re

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """Lower-case `text` and join its runs of letters and digits with hyphens."""
    return _NOT_ALNUM.sub("-", text.lower()).strip("-")
'''

_TEST_CORE = """\
from slugkit import slugify


def test_lowercases_and_joins_words():
    assert slugify("Hello, World!") == "hello-world"


def test_collapses_runs_of_punctuation():
    assert slugify("a -- b __ c") == "a-b-c"


def test_empty_text_gives_empty_slug():
    assert slugify("  !!  ") == ""
"""

_INIT_AFTER = '''\
"""Turn titles into URL slugs."""

from slugkit.core import slugify
from slugkit.translit import transliterate

__all__ = ["slugify", "transliterate"]
'''

_CORE_AFTER = '''\
"""The slug rules."""

import re

from slugkit.translit import transliterate

_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, separator: str = "-", max_length: int | None = None) -> str:
    """Make a URL slug: transliterate, lower-case, join words with `separator`.

    With `max_length`, the slug is cut at a word boundary so it is at most that long; a first
    word longer than the limit is cut hard.
    """
    if not separator or _NOT_ALNUM.fullmatch(separator) is None:
        raise ValueError("separator must be one or more non-alphanumeric characters")
    if max_length is not None and max_length < 1:
        raise ValueError("max_length must be at least 1")
    words = [word for word in _NOT_ALNUM.split(transliterate(text).lower()) if word]
    slug = separator.join(words)
    if max_length is None or len(slug) <= max_length:
        return slug
    return _truncate(words, separator, max_length)


def _truncate(words: list[str], separator: str, max_length: int) -> str:
    kept: list[str] = []
    length = 0
    for word in words:
        extra = len(word) if not kept else len(separator) + len(word)
        if length + extra > max_length:
            break
        kept.append(word)
        length += extra
    if not kept:
        return words[0][:max_length]
    return separator.join(kept)
'''

_TRANSLIT = '''\
"""Transliteration of accented Latin text to ASCII."""

import unicodedata

# Letters whose customary ASCII spelling is not their decomposed base letter.
_SPECIAL = {
    "ä": "ae",
    "ö": "oe",
    "ü": "ue",
    "Ä": "Ae",
    "Ö": "Oe",
    "Ü": "Ue",
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "ø": "o",
    "Ø": "O",
    "œ": "oe",
    "Œ": "OE",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "þ": "th",
    "Þ": "Th",
}


def transliterate(text: str) -> str:
    """Spell `text` in ASCII: special letters by custom, others by dropping their accents."""
    spelled = "".join(_SPECIAL.get(char, char) for char in text)
    decomposed = unicodedata.normalize("NFKD", spelled)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).encode(
        "ascii", "ignore"
    ).decode("ascii")
'''

_TEST_TRANSLIT = """\
import pytest

from slugkit import slugify, transliterate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Crème brûlée", "Creme brulee"),
        ("Straße", "Strasse"),
        ("Grüße aus Köln", "Gruesse aus Koeln"),
        ("Łódź", "Lodz"),
        ("smörgåsbord", "smoergasbord"),
    ],
)
def test_transliterates_to_ascii(text, expected):
    assert transliterate(text) == expected


def test_slugify_transliterates_first():
    assert slugify("Über Straße") == "ueber-strasse"


def test_symbols_without_ascii_spelling_are_dropped():
    assert slugify("naïve ☃ café") == "naive-cafe"
"""

_TEST_OPTIONS = """\
import pytest

from slugkit import slugify


def test_custom_separator():
    assert slugify("Hello, big World", separator="_") == "hello_big_world"


def test_max_length_cuts_at_a_word_boundary():
    assert slugify("the quick brown fox", max_length=12) == "the-quick"


def test_max_length_keeps_a_slug_that_fits():
    assert slugify("short title", max_length=40) == "short-title"


def test_first_word_longer_than_the_limit_is_cut():
    assert slugify("Supercalifragilistic", max_length=5) == "super"


@pytest.mark.parametrize("separator", ["", "a", "1"])
def test_separator_must_not_be_alphanumeric(separator):
    with pytest.raises(ValueError, match="separator"):
        slugify("x y", separator=separator)


def test_max_length_must_be_positive():
    with pytest.raises(ValueError, match="max_length"):
        slugify("x", max_length=0)
"""

BASE: dict[str, str] = {
    ".gitignore": ".venv/\n__pycache__/\n.pytest_cache/\n",
    "README.md": _README,
    "pyproject.toml": _PYPROJECT,
    "slugkit/__init__.py": _INIT_BEFORE,
    "slugkit/core.py": _CORE_BEFORE,
    "tests/test_core.py": _TEST_CORE,
}

CHANGE: dict[str, str] = {
    "slugkit/__init__.py": _INIT_AFTER,
    "slugkit/core.py": _CORE_AFTER,
    "slugkit/translit.py": _TRANSLIT,
    "tests/test_translit.py": _TEST_TRANSLIT,
    "tests/test_options.py": _TEST_OPTIONS,
}
