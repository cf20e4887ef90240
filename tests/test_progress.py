"""The one `Reporter`: plain lines for a log, nothing from `silent`, chosen by stderr alone."""

from __future__ import annotations

import io

import pytest

from selfbench.progress import PlainReporter, RichReporter, choose_reporter, silent


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_writes_events_items_and_warnings_but_no_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    reporter = PlainReporter()
    with reporter.working("compiling"), reporter.items(2, "validating", ("accepted", "rejected")):
        reporter.status("packing task-a")
        reporter.event("installing node 22")
        reporter.done("task-a", ok=True, reason=None)
        reporter.done("task-b", ok=False, reason="oracle failed")
    reporter.warning("shallow clone")
    lines = ["installing node 22", "task-a: accepted", "task-b: rejected: oracle failed"]
    assert capsys.readouterr() == ("", "\n".join([*lines, "warning: shallow clone", ""]))


def test_silent_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with silent.working("x"), silent.items(1, "drafting", ("drafted", "rejected")):
        silent.status("x")
        silent.event("x")
        silent.done("x", ok=False, reason="y")
    silent.warning("x")
    assert capsys.readouterr() == ("", "")


def test_the_reporter_follows_stderr() -> None:
    assert isinstance(choose_reporter(io.StringIO()), PlainReporter)
    assert isinstance(choose_reporter(_Terminal()), RichReporter)


def test_rich_status_without_a_spinner_is_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    RichReporter().status("packing task-a")
    assert capsys.readouterr().err == "packing task-a\n"
