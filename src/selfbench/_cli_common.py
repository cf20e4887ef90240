"""What the command modules of the `selfbench` command line share: reading, printing, a spinner."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selfbench._fs import read_bytes
from selfbench.errors import EXIT_REJECTED, InputError

__all__ = ["print_json", "read_input", "rejected", "working"]


def read_input(path: str) -> bytes:
    """The bytes of a file named on the command line; an unreadable one is rejected input."""
    return read_bytes(Path(path), error=InputError)


@contextmanager
def working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs, for a person at a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich

    with Console(stderr=True).status(message):
        yield


def rejected(reason: str) -> int:
    """Report a failed check the way an error is reported, with the exit code of a rejection."""
    sys.stderr.write(f"error: {reason}\n")
    return EXIT_REJECTED


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
