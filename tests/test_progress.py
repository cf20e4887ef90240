"""The one `Reporter`: plain lines for a log, nothing from `silent` or an event a subclass does not
draw, a setup note once, chosen by stderr alone."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress, TextColumn

from selfbench.cli.run import _RunReporter
from selfbench.progress import PlainReporter, Reporter, RichReporter, choose_reporter, silent, stage
from selfbench.run import RunOptions


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_writes_events_items_and_warnings_but_no_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    reporter = PlainReporter(("accepted", "rejected"))
    with stage(reporter, "compiling"), stage(reporter, "validating", total=2):
        reporter.stage_progress("packing task-a")
        reporter.download("installing node 22")
        reporter.candidate_accepted("task-a")
        reporter.candidate_rejected("task-b", "oracle failed")
    reporter.warning("shallow clone")
    lines = ["installing node 22", "task-a: accepted", "task-b: rejected: oracle failed"]
    assert capsys.readouterr() == ("", "\n".join([*lines, "warning: shallow clone", ""]))


def test_silent_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with stage(silent, "x"), stage(silent, "drafting", total=1):
        silent.stage_progress("x")
        silent.download("x")
        silent.candidate_progress("x")
        silent.candidate_started("x", "drafting")
        silent.candidate_rejected("x", "y")
        silent.note("x")
    silent.warning("x")
    assert capsys.readouterr() == ("", "")


def test_the_reporter_follows_stderr() -> None:
    assert isinstance(choose_reporter(io.StringIO()), PlainReporter)
    assert isinstance(choose_reporter(_Terminal()), RichReporter)


def test_rich_status_without_a_spinner_is_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    RichReporter().stage_progress("packing task-a")
    assert capsys.readouterr().err == "packing task-a\n"


def test_a_setup_note_is_said_once_however_many_setups_carry_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    reporter = PlainReporter()
    for _ in range(3):
        reporter.setup_note(("setup trusts the host's CA", "setup uses the host's proxy"))
    reporter.note("author commands may reach: api.example.test")
    assert capsys.readouterr().err == (
        "setup trusts the host's CA\nsetup uses the host's proxy\n"
        "author commands may reach: api.example.test\n"
    )


def test_a_subclass_draws_the_events_it_names_and_no_others() -> None:
    class Verdicts(Reporter):
        def __init__(self) -> None:
            super().__init__()
            self.told: list[str] = []

        def candidate_accepted(self, name: str, *, tier: str = "") -> None:
            self.told.append(f"{name} ({tier}) accepted")

        def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:
            self.told.append(f"{name} ({tier}) rejected: {reason}")

    reporter = Verdicts()
    reporter.candidate_started("pr-1", "drafting", tier="easy")
    reporter.candidate_finished("pr-1", accepted=True, reason=None, tier="easy")
    reporter.candidate_finished("pr-2", accepted=False, reason="draft: no test", tier="hard")
    assert reporter.told == ["pr-1 (easy) accepted", "pr-2 (hard) rejected: draft: no test"]


def test_the_run_draws_its_candidates_stages_and_verdicts_per_tier() -> None:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    bars = Progress(TextColumn("{task.description}"), console=console, auto_refresh=False)
    reporter = _RunReporter(console, bars)
    reporter.start(RunOptions(repo=Path("r"), out=Path("o.tar.gz"), budgets={"easy": 2}))
    with stage(reporter, "mining the repository's history"):
        pass
    reporter.candidate_started("pr-1", "drafting", tier="easy")
    reporter.candidate_started("pr-2", "drafting", tier="easy")
    reporter.candidate_accepted("pr-1", tier="easy")
    reporter.candidate_rejected("pr-3", "draft: no test", tier="easy")
    reporter.setup_note(["setup uses the host's proxy (HTTPS_PROXY)"])
    reporter.setup_note(["setup uses the host's proxy (HTTPS_PROXY)"])
    assert console.file.getvalue().splitlines() == [  # type: ignore[attr-defined]
        "each candidate's sandbox stages may take: easy 20 min (--candidate-time)",
        "mining the repository's history…",
        "drafting pr-1 (easy)…",
        "drafting pr-2 (easy)…",
        "accepted pr-1 (easy)",
        "rejected pr-3 (easy): draft: no test",
        "setup uses the host's proxy (HTTPS_PROXY)",
    ]
    [bar] = bars.tasks
    assert (bar.description, bar.completed) == ("easy   1/2 accepted, 1 rejected; drafting 1", 1)
