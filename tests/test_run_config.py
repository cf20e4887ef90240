"""`run --config FILE`: a `selfbench.toml` every candidate's draft uses over the repository's
own, stored with the run (its settings, not its path) and used again by `--resume`; a bad file
is one line and exit 2 with nothing written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from run_history import generate
from selfbench.cli import main

SOURCE = "https://example.com/example/genkit"


def _argv(repo: Path, out: Path, *extra: str) -> list[str]:
    budget = ["--easy", "1", "--over-fetch", "1", "--source-url", SOURCE, "--no-quality"]
    return ["run", "--repo", str(repo), *budget, "--out", str(out), *extra]


@pytest.mark.sandbox
def test_every_candidate_drafts_with_the_given_configuration_and_a_resume_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file's setupCommand replaces the one inferred from the repository (here one that
    fails, so the candidate is rejected at drafting with the file's own command in the log);
    `inputs.json` holds the settings, so removing the file changes nothing on resume."""
    repo = generate(tmp_path, 1)
    config = tmp_path / "team.toml"
    config.write_text('setupCommand = "echo selfbench-config-setup && exit 3"\n')
    out = tmp_path / "bench.tar.gz"
    assert main(_argv(repo, out, "--config", str(config))) == 1
    run_dir = tmp_path / "bench.run"
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert inputs["config"] == {"setupCommand": "echo selfbench-config-setup && exit 3"}
    state = json.loads((run_dir / "candidates" / "pr-1.json").read_text())
    assert state["status"] == "rejected"
    assert "setup" in state["reason"]
    logs = "".join(path.read_text() for path in (run_dir / "logs").rglob("prepare.log"))
    assert "selfbench-config-setup" in logs
    capsys.readouterr()

    config.unlink()
    assert main(["run", "--resume", str(run_dir)]) == 1
    assert json.loads((run_dir / "inputs.json").read_text())["config"] == inputs["config"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("setupCommand = [", "{path}: malformed TOML: "),
        ('runner = "mocha"\n', "{path}: runner: must be one of "),
        ("bogus = 1\n", "{path}: unknown key 'bogus'"),
    ],
    ids=["malformed", "unknown runner", "unknown key"],
)
def test_a_bad_configuration_is_one_line_and_exit_2_with_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, error: str
) -> None:
    config = tmp_path / "team.toml"
    config.write_text(text)
    out = tmp_path / "bench.tar.gz"
    assert main(_argv(tmp_path / "no-repo-needed", out, "--config", str(config))) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {error.format(path=config)}"), lines
    assert not (tmp_path / "bench.run").exists()


def test_a_resume_takes_no_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "team.toml"
    config.write_text("reruns = 3\n")
    run_dir = tmp_path / "bench.run"
    assert main(["run", "--resume", str(run_dir), "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        "error: --resume takes the run's own options; give no --repo, --out or --config\n"
    )


_POOL, _AUTHOR = "budgets and --over-fetch", "author and reviewer"


@pytest.mark.parametrize(
    ("given", "kept", "flag"),
    [
        (["--over-fetch", "3"], _POOL, "--over-fetch"),
        (["--easy", "4"], _POOL, "--easy"),
        (["--medium", "0"], _POOL, "--medium"),
        (["--hard", "2", "--over-fetch", "2"], _POOL, "--hard"),
        (["--author", "draft"], _AUTHOR, "--author"),
        (["--reviewer", "review-it"], _AUTHOR, "--reviewer"),
        (["--author-time-limit", "60"], _AUTHOR, "--author-time-limit"),
        (["--inactivity", "30"], _AUTHOR, "--inactivity"),
    ],
)
def test_a_resume_refuses_what_the_run_keeps_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: list[str], kept: str, flag: str
) -> None:
    """The mined pool is sized once, by the run's own budgets and over-fetch, and its tasks are
    authored and reviewed as it began: given again with `--resume`, those options are refused
    before the run directory is read, not ignored."""
    run_dir = tmp_path / "bench.run"
    assert main(["run", "--resume", str(run_dir), *given]) == 2
    assert capsys.readouterr().err == f"error: --resume keeps the run's {kept}; give no {flag}\n"
    assert not run_dir.exists()


@pytest.mark.sandbox
def test_a_candidate_past_its_time_is_stopped_and_rejected_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A setup that would sleep a minute under `--candidate-time 3`: its phase is killed once
    the 3 s are up, and the candidate is rejected with the reason, in seconds, not a minute."""
    repo = generate(tmp_path, 1)
    config = tmp_path / "slow.toml"
    config.write_text('setupCommand = "sleep 60"\n')
    out = tmp_path / "bench.tar.gz"
    started = time.monotonic()
    argv = _argv(repo, out, "--config", str(config), "--candidate-time", "3")
    assert main(argv) == 1
    assert time.monotonic() - started < 45
    printed = capsys.readouterr().out
    assert "each candidate's sandbox stages may take: easy 0.05 min (--candidate-time)" in printed
    state = json.loads((tmp_path / "bench.run" / "candidates" / "pr-1.json").read_text())
    reason = "draft: the candidate's sandbox stages took longer than its 0.05 minutes"
    assert (state["status"], state["reason"]) == ("rejected", f"{reason} (--candidate-time)")
    inputs = json.loads((tmp_path / "bench.run" / "inputs.json").read_text())
    assert inputs["candidateTime"] == 3.0


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf"])
def test_a_candidate_time_that_is_no_positive_number_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    out = tmp_path / "bench.tar.gz"
    assert main(_argv(tmp_path, out, "--candidate-time", value)) == 2
    assert capsys.readouterr().err == (
        "error: --candidate-time must be a positive number of seconds\n"
    )
    assert not (tmp_path / "bench.run").exists()


@pytest.mark.sandbox
def test_with_the_draft_author_a_task_below_the_minimum_is_rejected_at_drafting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The draft author keeps the drafted task, so the draft's quality record is the final
    one: a task below `--min-quality` (here `review` under `ship`) is rejected as soon as it is
    drafted, never authored, compiled or validated first."""
    repo = generate(tmp_path, 1)
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(repo), "--easy", "1", "--over-fetch", "1"]
    argv += ["--source-url", SOURCE, "--out", str(out), "--min-quality", "ship"]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    state = json.loads((tmp_path / "bench.run" / "candidates" / "pr-1.json").read_text())
    assert state["status"] == "rejected"
    assert state["reason"].startswith("draft: quality: review: "), state["reason"]
    assert state["history"] == ["mined", "rejected"]
    assert state["quality"] == "work/pr-1/1-draft/pr-1/quality.json"
    assert "quality 0 ship, 1 review, 0 reject" in printed
