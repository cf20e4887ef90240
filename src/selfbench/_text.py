"""Text fit to print: the one way repository- and task-derived text is shown to a person.

A commit subject, a selector, a taskId or an archive's field may hold anything, so what a
terminal would act on (control characters, escape sequences, invisible direction overrides)
is shown as an escape instead: `\\xNN` for C0 and C1 controls, DEL and the bytes of a name that
was not UTF-8 (decoded with `surrogateescape`), `\\uNNNN` for other invisible format and
separator characters. Printable text comes back unchanged.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["CONTROL_CLASS", "has_control", "markup_text", "printable"]

CONTROL_CLASS = "\\x00-\\x1f\\x7f-\\x9f\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069"
"""What a name may not hold, as the inside of a regular expression's class (Python's and
JSON Schema's alike): C0 and C1 controls, DEL, line and paragraph separators, and the marks
and overrides that turn text's direction."""
_CONTROL = re.compile(f"[{CONTROL_CLASS}]")

_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories a terminal may act on or that print as nothing: controls, format
characters (direction overrides among them), lone surrogates, line and paragraph separators."""
_BYTE_SURROGATES = range(0xDC80, 0xDD00)
"""Where `surrogateescape` puts the bytes 0x80-0xFF of text that was not UTF-8."""


def _escape(char: str) -> str:
    code = ord(char)
    if code in _BYTE_SURROGATES:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def has_control(text: str) -> bool:
    """Whether `text` holds a character of `CONTROL_CLASS` (each of which `printable`
    escapes)."""
    return _CONTROL.search(text) is not None


def printable(text: str) -> str:
    """`text` safe to print on one line of a terminal: every character a terminal could act on,
    or that shows as nothing, escaped (see the module)."""
    if text.isprintable():
        return text
    return "".join(
        _escape(char) if unicodedata.category(char) in _ESCAPED else char for char in text
    )


def markup_text(text: str) -> str:
    """`printable(text)` for a place rich reads as markup: its `[style]` tags escaped too, so
    a subject holding `[bold]` prints as those characters."""
    from rich.markup import escape  # noqa: PLC0415 - start-up: rich loads only where it prints

    return escape(printable(text))
