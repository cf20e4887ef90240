"""`selfbench run`'s quality stage (SPEC §13) without drafting: the final task's `quality.json`
(the draft's, while the authored task is the drafted one), the `--min-quality` gate, the
options, and the verdicts counted.

The stage runs through `run_step` in a real run directory, on the sample's drafted task; the
records are built here, so each verdict and the gate's reason are known exactly (the checks
themselves run in tests/test_draft_api.py and the end-to-end run tests).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from export_helpers import quality_record
from run_helpers import Sample, sample
from selfbench.artifacts.draft_record import DraftCommands, DraftEvidence, QualityNote, TierChange
from selfbench.artifacts.quality_record import (
    QUALITY_FILE,
    QualityRecord,
    Verdict,
    read_quality,
    write_quality,
)
from selfbench.cli import main
from selfbench.cli.common import MIN_QUALITY_CHOICES
from selfbench.errors import RunError
from selfbench.run import RunDirectory, RunOptions, stages
from selfbench.run.driver import load_options, quality_counts, run_id
from selfbench.run.state import CandidateState, Pool, Status
from selfbench.run.steps import StepContext, run_step

GATE = [
    ("ship", "review", None),
    ("review", "review", None),
    ("reject", "review", "reject: no fail-to-pass test needs the gold's implementation"),
    ("ship", "ship", None),
    ("review", "ship", "review: weak tests: mutation score 50% (2 of 4 mutants killed)"),
    ("reject", "ship", "reject: no fail-to-pass test needs the gold's implementation"),
]


@pytest.mark.parametrize(("verdict", "minimum", "reason"), GATE)
def test_the_gate_rejects_what_is_below_the_minimum(
    verdict: Verdict, minimum: Verdict, reason: str | None
) -> None:
    assert stages.quality_gate(quality_record("t", verdict), minimum) == reason


def test_a_verdict_without_reasons_still_says_why() -> None:
    record = QualityRecord(taskId="t", verdict="reject")
    assert stages.quality_gate(record, "review") == "reject: no reason given"


def test_the_flag_offers_the_stage_s_minimums() -> None:
    assert MIN_QUALITY_CHOICES == stages.MIN_QUALITY


TIER_CHANGES = [
    (None, None),
    (QualityNote("ship", ()), None),
    (QualityNote("ship", ("tox.ini",), TierChange("hard", "hard")), None),
    (
        QualityNote("ship", ("tox.ini", "examples/typing.py"), TierChange("hard", "medium")),
        (
            "without the files no fail-to-pass test needs (tox.ini, examples/typing.py) the "
            "task is medium, not the hard task it was mined as"
        ),
    ),
]


@pytest.mark.parametrize(("quality", "reason"), TIER_CHANGES)
def test_a_draft_moved_to_another_tier_leaves_the_run(
    quality: QualityNote | None, reason: str | None
) -> None:
    """The run's budgets are per mined tier: a draft whose tier dropped is rejected, saying why."""
    commands = DraftCommands("true", "true", (), "none", ())
    evidence = DraftEvidence("t", commands, (), (), (), None, (), (), "logs", 0.0, quality=quality)
    assert stages.tier_change(evidence) == reason
    assert stages.tier_change(None) is None


# --- the stage, through run_step -----------------------------------------------------------------


class _Checks:
    """The checks the stage falls back on when the draft's record does not hold: they record
    each task they are given and answer with a record of `verdict`."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.given: list[Path] = []

    def __call__(self, task_dir: Path, out: Path) -> QualityRecord:
        self.given.append(task_dir)
        assert out.is_dir()
        task_id = json.loads((task_dir / "definition.json").read_text())["taskId"]
        return quality_record(task_id, self.verdict)


def _at_quality(
    tmp_path: Path, drafted: Sample, authored: Path
) -> tuple[RunDirectory, CandidateState]:
    """A run directory whose candidate passed coupling: its next stage is quality."""
    run = RunDirectory(tmp_path / "run")
    run.lock()
    draft = run.path / "work" / "pr-42" / "1-draft" / drafted.draft.name
    shutil.copytree(drafted.draft, draft)
    task = run.path / "work" / "pr-42" / "2-author" / authored.name
    shutil.copytree(authored, task, ignore=shutil.ignore_patterns(QUALITY_FILE, "draft.json"))
    history = ("mined", "drafted", "authored", "audited", "compiled", "validated")
    state = CandidateState(
        id="pr-42",
        tier="medium",
        rank=0,
        status="active",
        next="quality",
        history=(*history, "coupling-checked"),
        task_dir=run.relative(task),
        draft_dir=run.relative(draft),
    )
    return run, state


def _step(
    run: RunDirectory,
    state: CandidateState,
    drafted: Sample,
    checks: _Checks,
    minimum: Verdict,
) -> CandidateState:
    settings = stages.AuthorSettings(stages.AUTHOR_DRAFT, 60.0, 60.0)
    context = StepContext(
        run, drafted.repo.path, settings, None, None, quality=checks, min_quality=minimum
    )
    return run_step(context, state, drafted.candidate)


@pytest.fixture
def drafted(tmp_path: Path) -> Sample:
    """The sample's drafted task, with the quality record drafting wrote: verdict `review`."""
    (tmp_path / "sample").mkdir()
    found = sample(tmp_path / "sample")
    task_id = json.loads((found.draft / "definition.json").read_text())["taskId"]
    write_quality(found.draft, quality_record(task_id, "review", seconds=31.5))
    return found


def test_ship_rejects_a_review_task_with_its_first_reason(tmp_path: Path, drafted: Sample) -> None:
    run, state = _at_quality(tmp_path, drafted, drafted.draft)
    checks = _Checks("ship")
    after = _step(run, state, drafted, checks, "ship")
    assert after.status == "rejected"
    assert after.reason == (
        "quality: review: weak tests: mutation score 50% (2 of 4 mutants killed)"
    )
    assert after.history[-2:] == ("coupling-checked", "rejected")
    assert checks.given == []  # the authored task is the drafted one: its record holds
    assert after.quality is not None
    assert read_quality(run.resolve(after.quality)).verdict == "review"


def test_review_accepts_it_and_records_the_draft_s_record(tmp_path: Path, drafted: Sample) -> None:
    run, state = _at_quality(tmp_path, drafted, drafted.draft)
    after = _step(run, state, drafted, _Checks("reject"), "review")
    assert after.status == "accepted"
    assert after.history[-3:] == ("coupling-checked", "quality-checked", "accepted")
    assert after.quality == "work/pr-42/7-quality/quality.json"
    assert run.resolve(after.quality).read_bytes() == (drafted.draft / QUALITY_FILE).read_bytes()
    assert not (run.resolve(state.task_dir or "") / QUALITY_FILE).exists()  # never written into


def test_an_authored_task_that_differs_is_checked_again(tmp_path: Path, drafted: Sample) -> None:
    """A new instruction may name what the draft's missed: the draft's record does not hold."""
    authored = tmp_path / "authored" / drafted.draft.name
    shutil.copytree(drafted.draft, authored)
    (authored / QUALITY_FILE).unlink()
    definition = json.loads((authored / "definition.json").read_text())
    definition["prompt"] += "\nThe function is `slugify(text: str) -> str`."
    (authored / "definition.json").write_text(json.dumps(definition, indent=2) + "\n")
    run, state = _at_quality(tmp_path, drafted, authored)
    checks = _Checks("ship")
    after = _step(run, state, drafted, checks, "ship")
    assert after.status == "accepted"
    [given] = checks.given
    assert given == run.resolve(state.task_dir or "")
    assert after.quality is not None
    assert read_quality(run.resolve(after.quality)).verdict == "ship"


def test_a_run_without_quality_accepts_after_coupling(tmp_path: Path, drafted: Sample) -> None:
    run, state = _at_quality(tmp_path, drafted, drafted.draft)
    coupling = replace(state, next="coupling", history=state.history[:-1])
    settings = stages.AuthorSettings(stages.AUTHOR_DRAFT, 60.0, 60.0)
    context = StepContext(run, drafted.repo.path, settings, None, None, quality=None)
    after = run_step(context, coupling, drafted.candidate)
    assert after.status == "accepted", after.reason
    assert after.history[-2:] == ("coupling-checked", "accepted")
    assert after.quality is None


def test_the_summary_counts_the_finished_candidates_per_verdict(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path)
    states = {}
    verdicts: tuple[Verdict, ...] = ("review", "ship", "review", "reject")
    for index, verdict in enumerate(verdicts):
        folder = tmp_path / "work" / f"pr-{index}" / "7-quality"
        folder.mkdir(parents=True)
        write_quality(folder, quality_record(f"pr-{index}", verdict))
        status: Status = "rejected" if verdict == "reject" else "accepted"
        states[f"pr-{index}"] = CandidateState(
            id=f"pr-{index}",
            tier="easy",
            rank=index,
            status=status,
            next=None,
            quality=run.relative(folder / QUALITY_FILE),
        )
    states["pr-9"] = CandidateState(id="pr-9", tier="easy", rank=9)  # waiting: not counted
    assert quality_counts(run, states) == {"ship": 1, "review": 2, "reject": 1}


# --- the options ---------------------------------------------------------------------------------


def _options(tmp_path: Path, **changes: object) -> RunOptions:
    return RunOptions(
        repo=tmp_path,
        out=tmp_path / "b.tar.gz",
        budgets={"easy": 1, "medium": 0, "hard": 0},
        **changes,  # type: ignore[arg-type]
    )


def test_the_options_are_stored_and_read_back(tmp_path: Path) -> None:
    options = _options(tmp_path, quality=False, min_quality="ship")
    stored = json.loads(json.dumps(options.to_json()))
    assert (stored["quality"], stored["minQuality"]) == (False, "ship")
    assert load_options(stored, "inputs.json") == options
    older = {k: v for k, v in stored.items() if k not in ("quality", "minQuality")}
    assert load_options(older, "inputs.json") == _options(tmp_path)  # a run from before


def test_the_defaults_keep_the_run_id_and_a_gate_changes_it(tmp_path: Path) -> None:
    pool = Pool(head="0" * 40, repository="example/genkit", candidates=())
    plain = run_id(pool, _options(tmp_path))
    assert plain == run_id(pool, _options(tmp_path, min_quality="review", quality=True))
    assert run_id(pool, _options(tmp_path, min_quality="ship")) != plain
    assert run_id(pool, _options(tmp_path, quality=False)) != plain


def test_a_bad_minimum_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunError) as caught:
        _options(tmp_path, min_quality="great").check()
    assert "--min-quality must be one of review, ship" in str(caught.value)


@pytest.mark.parametrize("flag", [["--min-quality", "ship"], ["--no-quality"]])
def test_resume_keeps_the_run_s_own_quality_options(
    tmp_path: Path, flag: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "bench.run"
    RunDirectory(run_dir).write_json(run_dir / "inputs.json", _options(tmp_path).to_json())
    (run_dir / "pool.json").write_text(
        json.dumps({"head": "0" * 40, "repository": "x", "candidates": []})
    )
    assert main(["run", "--resume", str(run_dir), *flag]) == 2
    name = "min_quality" if flag[0] == "--min-quality" else "quality"
    assert capsys.readouterr().err == f"error: --resume cannot change {name}\n"


@pytest.mark.parametrize("command", ["run", "draft"])
def test_no_quality_is_offered_by_draft_and_run(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "--no-quality" in shown
    assert ("--min-quality {review,ship}" in shown) == (command == "run")
