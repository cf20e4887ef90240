"""`selfbench run`'s bookkeeping without drafting: the lock, refusals, blocked tiers, status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfbench._git import git
from selfbench.cli import main
from selfbench.errors import RunError
from selfbench.export import verify_export
from selfbench.run import RunDirectory, RunOptions, run_benchmark
from selfbench.run.state import CandidateState


@pytest.fixture
def bare_history(tmp_path: Path) -> Path:
    """A repository whose only commit has no base: mining finds no candidate."""
    repo = tmp_path / "bare"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "--all")
    git(
        repo,
        "-c",
        "user.name=A",
        "-c",
        "user.email=a@example.com",
        "commit",
        "--quiet",
        "-m",
        "first",
    )
    return repo


def test_a_locked_run_directory_is_refused_in_one_line(tmp_path: Path, bare_history: Path) -> None:
    run_dir = tmp_path / "run"
    holder = RunDirectory(run_dir)
    holder.lock()
    try:
        options = RunOptions(repo=bare_history, out=tmp_path / "b.tar.gz", budgets={"hard": 1})
        with pytest.raises(RunError) as error:
            run_benchmark(run_dir, options)
    finally:
        holder.unlock()
    assert str(error.value) == (
        f"run directory {run_dir} is in use by another run (pid {os.getpid()})"
    )
    assert not (run_dir / "inputs.json").exists()


def test_another_process_cannot_take_a_held_run_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    holder = RunDirectory(run_dir)
    holder.lock()
    script = (
        "import sys\nfrom pathlib import Path\nfrom selfbench.run import RunDirectory\n"
        "from selfbench.errors import RunError\n"
        "try:\n    RunDirectory(Path(sys.argv[1])).lock()\n"
        "except RunError as e:\n    print(e)\n"
    )
    try:
        held = subprocess.run(
            [sys.executable, "-c", script, str(run_dir)], capture_output=True, text=True, check=True
        )
    finally:
        holder.unlock()
    assert held.stdout.startswith(f"run directory {run_dir} is in use by another run (pid ")
    free = subprocess.run(
        [sys.executable, "-c", script, str(run_dir)], capture_output=True, text=True, check=True
    )
    assert free.stdout == ""


def test_a_tier_the_history_cannot_fill_is_blocked_and_the_export_still_written(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    code = main(["run", "--repo", str(bare_history), "--hard", "3", "--out", str(out)])

    printed = capsys.readouterr().out
    assert code == 1, printed
    assert "blocked: 0 of 3 hard tasks; history has no more" in printed
    assert f"export  {out}  (verified)" in printed
    assert f"selfbench review {out}" in printed
    assert f"selfbench eval {out} --agent NAME=COMMAND" in printed
    verified = verify_export(out)
    assert verified.manifest.accepted_count == 0
    assert verified.manifest.provenance is not None
    assert verified.manifest.provenance["author"] == "draft"
    assert verified.manifest.provenance["tasks"] == {}
    assert main(["verify", str(out)]) == 0

    assert main(["status", str(tmp_path / "bench.run")]) == 0
    status = capsys.readouterr().out
    assert "hard: blocked: 0 of 3 hard tasks; history has no more" in status
    assert "exported" in status


def test_a_run_directory_holds_one_run_and_resume_needs_one(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(bare_history), "--easy", "1", "--out", str(out)]
    assert main(argv) == 1
    capsys.readouterr()

    assert main(argv) == 2
    run_dir = (tmp_path / "bench.run").absolute()
    assert capsys.readouterr().err == (
        f"error: {run_dir} already holds a run; resume it with: selfbench run --resume {run_dir}\n"
    )
    assert main(["run", "--resume", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == f"error: {(tmp_path / 'nothing').absolute()} holds no run\n"
    assert main(["run", "--resume", str(run_dir)]) == 1  # a finished run exports again, the same
    assert "blocked: 0 of 1 easy tasks" in capsys.readouterr().out


def test_setup_env_names_are_stored_and_their_values_read_again_at_resume(
    tmp_path: Path,
    bare_history: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SELFBENCH_PROBE", "secret-42")
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(bare_history), "--easy", "1", "--out", str(out)]
    assert main([*argv, "--setup-env", "SELFBENCH_PROBE"]) == 1
    capsys.readouterr()
    run_dir = (tmp_path / "bench.run").absolute()
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert (inputs["setupEnv"], inputs["harbor"]) == (["SELFBENCH_PROBE"], "harbor")
    assert b"secret-42" not in (run_dir / "inputs.json").read_bytes()

    monkeypatch.delenv("SELFBENCH_PROBE")
    assert main(["run", "--resume", str(run_dir)]) == 2
    assert capsys.readouterr().err == (
        "error: --setup-env SELFBENCH_PROBE: not set in this environment\n"
    )
    del inputs["setupEnv"], inputs["harbor"]  # a run directory from before these options
    (run_dir / "inputs.json").write_text(json.dumps(inputs))
    assert main(["run", "--resume", str(run_dir)]) == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "give at least one task to find: --easy N, --medium N or --hard N"),
        (["--hard", "-1"], "--hard must be at least 0"),
        (["--easy", "1", "-j", "0"], "-j must be at least 1"),
        (["--easy", "1", "--over-fetch", "0.5"], "--over-fetch must be at least 1"),
        (
            ["--easy", "1", "--setup-env", "1BAD"],
            "--setup-env 1BAD: not an environment variable name",
        ),
    ],
)
def test_bad_options_are_one_line_errors_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "b.tar.gz"
    assert main(["run", "--repo", str(tmp_path), "--out", str(out), *extra]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []


def test_an_export_must_be_named_tar_gz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b.zip"
    assert main(["run", "--repo", str(tmp_path), "--easy", "1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"error: --out {out}: an export's name ends in .tar.gz\n"


def test_a_state_file_round_trips_and_a_rejection_is_one_line() -> None:
    state = CandidateState(id="pr-7", tier="easy", rank=3, status="active", next="validate")
    after = state.rejected("validate", 1.5, "oracle: fail-to-pass\nfailed  with the gold patch")

    assert after.reason == "validate: oracle: fail-to-pass failed with the gold patch"
    assert after.history == ("mined", "rejected")
    assert after.next is None
    assert after.finished
    again = CandidateState.from_json(json.loads(json.dumps(after.to_json())), "x")
    assert again == after


def test_a_state_path_outside_the_run_is_refused(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path)
    with pytest.raises(RunError) as error:
        run.resolve("../elsewhere")
    assert str(error.value) == (
        f"{tmp_path}: a state file names a path outside the run: ../elsewhere"
    )
    with pytest.raises(RunError):
        run.state_path("../x")
