"""How long-running calls tell what they are doing: one `Reporter` protocol, two implementations.

The library reports through a `Reporter` it is given (draft, validate, export, mine) and never
prints progress itself. `PlainReporter` writes lines to stderr, for logs and CI; `RichReporter`
draws a spinner or a bar at a terminal. `choose_reporter` picks one, the only place that asks
whether stderr is a terminal. Nothing here imports rich until a terminal needs it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from selfbench._text import markup_text, printable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID
    from rich.status import Status

__all__ = ["PlainReporter", "Reporter", "RichReporter", "choose_reporter", "silent"]


class Reporter(Protocol):
    """What a long-running call reports, and what a person or a log sees of it."""

    def working(self, message: str) -> AbstractContextManager[None]:
        """A step that takes a while (`compiling X`): a spinner at a terminal, else nothing."""
        ...

    def status(self, message: str) -> None:
        """Where the running step stands (`walking history: 1,200 commits`, `packing X`): the
        spinner's text at a terminal (a line when none runs), nothing in a log."""
        ...

    def event(self, message: str) -> None:
        """Something worth a line in a log (`installing node 22`): the spinner's text at a
        terminal."""
        ...

    def items(
        self, total: int, doing: str, verdicts: tuple[str, str]
    ) -> AbstractContextManager[None]:
        """`total` items to finish (`doing` names the work, `verdicts` a pass and a failure:
        `accepted`, `rejected`): a bar at a terminal, a line per item in a log."""
        ...

    def done(self, name: str, ok: bool, reason: str | None) -> None:
        """One item of `items` finished: passed, or failed for `reason`."""
        ...

    def warning(self, line: str) -> None:
        """A warning, always shown: `warning: LINE` on stderr."""
        ...


def _line(text: str) -> None:
    sys.stderr.write(f"{printable(text)}\n")


class _Base:
    """What both reporters share: the verdict words of the running `items`, warnings."""

    def __init__(self) -> None:
        self._verdicts = ("done", "failed")

    def warning(self, line: str) -> None:
        _line(f"warning: {line}")


class PlainReporter(_Base):
    """Lines on stderr, for a log: events, finished items and warnings; no spinner, no bar."""

    @contextmanager
    def working(self, message: str) -> Iterator[None]:  # noqa: ARG002 - a log needs no spinner
        yield

    def status(self, message: str) -> None:
        pass

    def event(self, message: str) -> None:
        _line(message)

    @contextmanager
    def items(self, total: int, doing: str, verdicts: tuple[str, str]) -> Iterator[None]:  # noqa: ARG002
        self._verdicts = verdicts
        yield

    def done(self, name: str, ok: bool, reason: str | None) -> None:
        passed, failed = self._verdicts
        _line(f"{name}: {passed if ok else f'{failed}: {reason}'}")


class _Silent(PlainReporter):
    """Reports nothing: what a library call uses when given no reporter."""

    def event(self, message: str) -> None:
        pass

    def done(self, name: str, ok: bool, reason: str | None) -> None:
        pass

    def warning(self, line: str) -> None:
        pass


silent: Reporter = _Silent()
"""The reporter of a call given none: it says nothing."""


class RichReporter(_Base):
    """A spinner and a bar on a terminal's stderr (rich, imported on first use)."""

    def __init__(self) -> None:
        super().__init__()
        self._spinner: Status | None = None
        self._bars: tuple[Progress, TaskID] | None = None
        self._lock = threading.Lock()

    @contextmanager
    def working(self, message: str) -> Iterator[None]:
        from rich.console import Console  # noqa: PLC0415 - start-up: rich costs 40 ms; only a terminal pays

        with Console(stderr=True).status(markup_text(message)) as spinner:
            self._spinner = spinner
            try:
                yield
            finally:
                self._spinner = None

    def status(self, message: str) -> None:
        if self._spinner is not None:
            self._spinner.update(markup_text(message))
        else:
            _line(message)

    def event(self, message: str) -> None:
        self.status(message)

    @contextmanager
    def items(self, total: int, doing: str, verdicts: tuple[str, str]) -> Iterator[None]:
        from rich.console import Console  # noqa: PLC0415 - start-up: rich costs 40 ms; only a terminal pays
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._verdicts = verdicts
        columns = (
            SpinnerColumn(),
            TextColumn(markup_text(doing)),
            BarColumn(),
            MofNCompleteColumn(),
        )
        console = Console(stderr=True)
        with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as bars:
            self._bars = (bars, bars.add_task(doing, total=total))
            try:
                yield
            finally:
                self._bars = None

    def done(self, name: str, ok: bool, reason: str | None) -> None:
        passed, failed = self._verdicts
        with self._lock:
            if self._bars is None:
                _line(f"{name}: {passed if ok else f'{failed}: {reason}'}")
                return
            bars, bar = self._bars
            mark = f"[green]{passed}[/]" if ok else f"[red]{failed}[/]"
            bars.console.print(f"{mark} {markup_text(name)}")
            bars.advance(bar)


def choose_reporter(stream: Any = None) -> Reporter:
    """A `RichReporter` when `stream` (default: stderr) is a terminal, else a `PlainReporter`."""
    if (stream or sys.stderr).isatty():
        return RichReporter()
    return PlainReporter()
