"""How long-running calls tell what they are doing: one `Reporter`, a method per event.

The library reports through a `Reporter` it is given (mine, draft, validate, export, run, the
toolchains, the host's network) and never prints progress itself. `Reporter` does nothing on any
event (`silent` is one); whoever shows progress subclasses it and draws the events it cares about,
as resolvelib's `BaseReporter` is meant to be used: `PlainReporter` writes lines to stderr, for
logs and CI; `RichReporter` draws a spinner or a bar at a terminal; `selfbench run` draws its
tiers' bars (`cli/run.py`); a task's toolchain downloads go to its `prepare.log` (`toolchains`).
`choose_reporter` picks between the first two, the only place that asks whether stderr is a
terminal. Nothing here imports rich until a terminal needs it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from selfbench._text import markup_text, printable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID
    from rich.status import Status

__all__ = ["PlainReporter", "Reporter", "RichReporter", "choose_reporter", "silent", "stage"]


class Reporter:
    """What a long-running call tells as it goes; every event is a no-op here (a subclass draws).

    A stage is the work a command waits on (`walking history`, `validating`); a candidate is one
    item of it (a mined change, a task), with the run's `tier` where it has one. A subclass that
    defines `__init__` calls this one's (`setup_note` keeps its state here).
    """

    def __init__(self) -> None:
        self._noted = False
        self._note_lock = threading.Lock()

    def stage_started(self, stage: str, *, total: int | None = None) -> None:
        """A stage that takes a while begins (`compiling X`); with `total`, one that finishes
        that many candidates (`validating`)."""

    def stage_progress(self, line: str) -> None:
        """Where the running stage stands (`walking history: 1,200 commits`, `packing X`)."""

    def stage_finished(self, stage: str) -> None:
        """The stage `stage_started` began has ended (however it ended)."""

    def candidate_started(self, name: str, stage: str, *, tier: str = "") -> None:
        """A candidate's next stage begins (`drafting`, `validating`)."""

    def candidate_progress(self, line: str) -> None:
        """A candidate's stage has been quiet for a while: where it stands
        (`selfbench.activity.heartbeat`'s line)."""

    def candidate_accepted(self, name: str, *, tier: str = "") -> None:
        """A candidate passed its stage (validated, drafted, of enough quality)."""

    def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:
        """A candidate failed its stage, for `reason`."""

    def download(self, line: str) -> None:
        """A toolchain is installed from a package registry (`installing node 22`), or could
        not be."""

    def note(self, line: str) -> None:
        """A setup note, always shown: what the host's network gives setup, what author
        commands may reach."""

    def warning(self, line: str) -> None:
        """A warning, always shown (a shallow clone, a corrupt result line)."""

    def candidate_finished(
        self, name: str, *, accepted: bool, reason: str | None, tier: str = ""
    ) -> None:
        """`candidate_accepted` or `candidate_rejected`, as `accepted` says."""
        if accepted:
            self.candidate_accepted(name, tier=tier)
        else:
            self.candidate_rejected(name, reason, tier=tier)

    def setup_note(self, lines: Sequence[str]) -> None:
        """A setup carries the host's configuration (`HostNetwork.summary()`): its lines as
        notes, the first time only (from any thread), however many setups follow."""
        with self._note_lock:
            if self._noted:
                return
            self._noted = True
        for line in lines:
            self.note(line)


silent = Reporter()
"""The reporter of a call given none: it says nothing."""


@contextmanager
def stage(reporter: Reporter, name: str, *, total: int | None = None) -> Iterator[None]:
    """`reporter` is told the stage `name` started, and finished when the block ends."""
    reporter.stage_started(name, total=total)
    try:
        yield
    finally:
        reporter.stage_finished(name)


def _line(text: str) -> None:
    sys.stderr.write(f"{printable(text)}\n")


_VERDICTS = ("accepted", "rejected")


class _Lines(Reporter):
    """What both reporters of a command share: the words of its verdicts, notes and warnings
    as lines on stderr."""

    def __init__(self, verdicts: tuple[str, str] = _VERDICTS) -> None:
        super().__init__()
        self._verdicts = verdicts

    def note(self, line: str) -> None:
        _line(line)
        sys.stderr.flush()

    def warning(self, line: str) -> None:
        _line(f"warning: {line}")


class PlainReporter(_Lines):
    """Lines on stderr, for a log: downloads, quiet candidates, finished candidates, notes and
    warnings; no spinner, no bar. `verdicts` names a pass and a failure (`drafted`,
    `rejected`)."""

    def candidate_progress(self, line: str) -> None:
        _line(line)

    def download(self, line: str) -> None:
        _line(line)

    def candidate_accepted(self, name: str, *, tier: str = "") -> None:  # noqa: ARG002
        _line(f"{name}: {self._verdicts[0]}")

    def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:  # noqa: ARG002
        _line(f"{name}: {self._verdicts[1]}: {reason}")


class RichReporter(_Lines):
    """A spinner (a stage) or a bar (a stage of `total` candidates) on a terminal's stderr
    (rich, imported on first use)."""

    def __init__(self, verdicts: tuple[str, str] = _VERDICTS) -> None:
        super().__init__(verdicts)
        self._spinner: Status | None = None
        self._bars: tuple[Progress, TaskID] | None = None
        self._lock = threading.Lock()

    def stage_started(self, stage: str, *, total: int | None = None) -> None:
        from rich.console import Console  # noqa: PLC0415 - start-up: rich costs 40 ms; only a terminal pays

        if total is None:
            self._spinner = Console(stderr=True).status(markup_text(stage))
            self._spinner.start()
        else:
            self._bars = _bars(stage, total)

    def stage_finished(self, stage: str) -> None:  # noqa: ARG002 - one stage at a time
        if self._spinner is not None:
            spinner, self._spinner = self._spinner, None
            spinner.stop()
        elif self._bars is not None:
            (bars, _), self._bars = self._bars, None
            bars.stop()

    def stage_progress(self, line: str) -> None:
        if self._spinner is not None:
            self._spinner.update(markup_text(line))
        else:
            _line(line)

    def candidate_progress(self, line: str) -> None:
        self.stage_progress(line)

    def download(self, line: str) -> None:
        self.stage_progress(line)

    def candidate_accepted(self, name: str, *, tier: str = "") -> None:  # noqa: ARG002
        self._finished(name, ok=True, reason=None)

    def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:  # noqa: ARG002
        self._finished(name, ok=False, reason=reason)

    def _finished(self, name: str, *, ok: bool, reason: str | None) -> None:
        passed, failed = self._verdicts
        with self._lock:
            if self._bars is None:
                _line(f"{name}: {passed if ok else f'{failed}: {reason}'}")
                return
            bars, bar = self._bars
            mark = f"[green]{passed}[/]" if ok else f"[red]{failed}[/]"
            bars.console.print(f"{mark} {markup_text(name)}")
            bars.advance(bar)


def _bars(doing: str, total: int) -> tuple[Progress, TaskID]:
    """A started bar of `total` items labelled `doing`, on stderr, gone when it stops."""
    from rich.console import Console  # noqa: PLC0415 - start-up: rich costs 40 ms; only a terminal pays
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (SpinnerColumn(), TextColumn(markup_text(doing)), BarColumn(), MofNCompleteColumn())
    bars = Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    bars.start()
    return bars, bars.add_task(doing, total=total)


def choose_reporter(stream: Any = None, *, verdicts: tuple[str, str] = _VERDICTS) -> Reporter:
    """A `RichReporter` when `stream` (default: stderr) is a terminal, else a `PlainReporter`;
    `verdicts` names a candidate's pass and failure (`accepted`, `rejected`)."""
    if (stream or sys.stderr).isatty():
        return RichReporter(verdicts)
    return PlainReporter(verdicts)
