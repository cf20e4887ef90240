"""Why a setup failed, in one line of its own output: what a rejection says beside its log.

A failed setup's log may run to thousands of lines (a package manager's retries, a compiler's
warnings); the reason a user reads should name the failure itself. `setup_cause` takes the last
line that reads as an error (`ERR_PNPM_FETCH_404 …`, `npm ERR! …`, `error: …`,
`ModuleNotFoundError: …`, `No matching distribution found for …`, uv's lines that start with a
multiplication sign), selfbench's own lines left out, and `known_hint` adds what to do for a
failure whose remedy is known.
"""

from __future__ import annotations

import re
from typing import Final

from selfbench._text import printable

__all__ = ["known_hint", "setup_cause"]

_ERROR_LINE: Final = re.compile(
    r"\bERR_[A-Z_]{3,}\b|\bnpm ERR!|^\s*(?:error|ERROR|Error)\b|\b[A-Z]\w*(?:Error|Exception):"
    r"|No matching distribution found|Could not find a version|^\s*fatal:|^\s*\u00d7"
    r"|command not found|No such file or directory"
)
_MAX_CHARS = 200
_SCANNED_LINES = 400

_HINTS: Final = (
    (
        re.compile(r"\bERR_INVALID_THIS\b"),
        (
            "a pnpm older than 8 cannot fetch on the image's Node 22 (its packageManager pins "
            "it): set setupCommand to a newer one's install (`npx pnpm@9 install`) in a "
            "selfbench.toml"
        ),
    ),
    (
        re.compile(r"No module named '?pkg_resources"),
        (
            "the project imports pkg_resources, which setuptools 82 dropped: pin setuptools<82 "
            "in its setupCommand (a selfbench.toml)"
        ),
    ),
)


def setup_cause(output: str) -> str | None:
    """The last line of a failed setup's `output` that reads as an error (cut to 200
    characters), or None when no line does."""
    lines = output.splitlines()[-_SCANNED_LINES:]
    for line in reversed(lines):
        if line.startswith("selfbench:") or _ERROR_LINE.search(line) is None:
            continue
        text = " ".join(printable(line).split())
        return text if len(text) <= _MAX_CHARS else f"{text[: _MAX_CHARS - 1]}…"
    return None


def known_hint(output: str) -> str | None:
    """What to do about a failure whose remedy is known, when `output` shows one."""
    return next((hint for pattern, hint in _HINTS if pattern.search(output)), None)
