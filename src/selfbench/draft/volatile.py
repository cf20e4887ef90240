"""Test ids that change from run to run: a parametrized id holding the time, an address or a
random suffix names one test, so its runs are matched by `match_key`.

A **volatile part** is a whole word (neither preceded nor followed by an ASCII letter or digit)
that is one of:

* a timestamp: a date with a four-digit year and a time to the minute or the second, the date
  year first (`2026-12-06T07:33:01`, `2026/12/06 07:33`) or last, day or month first
  (`12-06-2026 16:48:07`, `06.12.2026 16:48`), a space or a `T` between, optionally a fraction
  and a zone (`.123456`, `Z`, `+00:00`), or the time first and a space (`17:02:30 2026-12-06`);
  or ten or more digits with an optional fraction (seconds, milliseconds or nanoseconds since
  the epoch);
* a UUID (`8-4-4-4-12` hexadecimal digits);
* an address: `0x` and four or more hexadecimal digits (`<object at 0x7f3a9c1b2d40>`);
* a random suffix: eight or more hexadecimal digits, at least one a digit and one a letter
  (`uuid4().hex`, `secrets.token_hex(4)`).

`match_key` replaces each by one marker; two ids get one key exactly when they differ only in
their volatile parts. A runner's test names hold no NUL, which the marker is.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MARKER", "is_volatile", "match_key"]

MARKER: Final = "\x00"
"""What a volatile part becomes in a key."""

_HEX = "[0-9a-fA-F]"
_DATE = (  # one separator throughout: `12-06/2026` is none
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}|\d{4}\.\d{1,2}\.\d{1,2}"
    r"|\d{1,2}-\d{1,2}-\d{4}|\d{1,2}/\d{1,2}/\d{4}|\d{1,2}\.\d{1,2}\.\d{4})"
)
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2})?"
_VOLATILE_RE = re.compile(
    r"(?<![0-9A-Za-z])(?:"
    rf"{_DATE}[T ]{_TIME}{_ZONE}|{_TIME} {_DATE}"
    r"|\d{10,}(?:\.\d+)?"
    rf"|{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
    rf"|0x{_HEX}{{4,}}"
    rf"|(?={_HEX}*[0-9])(?={_HEX}*[a-fA-F]){_HEX}{{8,}}"
    r")(?![0-9A-Za-z])"
)


def match_key(name: str) -> str:
    """The key `name` is matched by across runs: its volatile parts (see the module
    docstring) each replaced by `MARKER`."""
    return _VOLATILE_RE.sub(MARKER, name)


def is_volatile(name: str) -> bool:
    """Whether `name` holds a volatile part."""
    return _VOLATILE_RE.search(name) is not None
