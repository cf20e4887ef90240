"""`selfbench run`'s bookkeeping without drafting: the lock, refusals, blocked tiers, status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfbench._git import git
from selfbench.cli import main
from selfbench.errors import RunError
from selfbench.export import verify_export
from selfbench.run import RunDirectory, RunOptions, run_benchmark
from selfbench.run.export import tried
from selfbench.run.state import CandidateState, Status
from selfbench.run.status import _events


def _one_commit(repo: Path) -> Path:
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


@pytest.fixture
def bare_history(tmp_path: Path) -> Path:
    """A GitHub clone whose only commit has no base: mining finds no candidate."""
    repo = _one_commit(tmp_path / "bare")
    git(repo, "remote", "add", "origin", "https://github.com/example/bare.git")
    return repo


@pytest.fixture
def local_clone(tmp_path: Path) -> Path:
    """A clone whose remote is a path on this machine: no pull-request URL is known."""
    repo = _one_commit(tmp_path / "clone")
    git(repo, "remote", "add", "origin", str(tmp_path / "upstream" / "genkit.git"))
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
    # written and verified, but not announced as a benchmark to review and evaluate
    assert f"export  {out}  holds no task: no candidate was accepted" in printed
    assert f"selfbench status {tmp_path / 'bench.run'}" in printed
    assert "selfbench review" not in printed
    assert "selfbench eval" not in printed
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
    nothing = (tmp_path / "nothing").absolute()
    assert capsys.readouterr().err == f"error: {nothing}: no such run directory\n"
    assert not nothing.exists()
    nothing.mkdir()
    assert main(["run", "--resume", str(nothing)]) == 2
    assert capsys.readouterr().err == (
        f"error: {nothing} holds no run (no inputs.json); delete it, or start a run there "
        "with --repo, --out and --run-dir\n"
    )
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
    coupled = state.rejected("coupling", 1.0, "the tests pin _helper", label="coupled")
    assert coupled.history == ("mined", "coupled", "rejected")
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


def test_a_clone_without_a_pull_request_url_is_refused_before_any_work(
    tmp_path: Path, local_clone: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(local_clone), "--easy", "1", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f"error: --repo {local_clone} has no GitHub remote, so its tasks cannot record their "
        "pull request URL: give --source-url BASE (tasks record BASE/pull/<number>)\n"
    )
    assert not (tmp_path / "bench.run").exists()
    assert main([*argv, "--source-url", "example.com/genkit"]) == 2
    assert capsys.readouterr().err == (
        "error: --source-url example.com/genkit: expected an absolute URL "
        "(https://host/owner/name)\n"
    )
    assert not (tmp_path / "bench.run").exists()


def test_with_source_url_the_export_names_the_project_never_the_clone(
    tmp_path: Path, local_clone: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    base = ["run", "--repo", str(local_clone), "--easy", "1", "--out", str(out)]
    assert main([*base, "--source-url", "https://git.example.com/team/genkit/"]) == 1
    capsys.readouterr()
    manifest = verify_export(out).manifest
    assert manifest.repository_url == "team/genkit"
    assert manifest.candidate_counts == (0, 0, 0)
    pool = json.loads((tmp_path / "bench.run" / "pool.json").read_text())
    assert pool["repository"] == "team/genkit"
    assert str(tmp_path) not in out.read_bytes().decode("latin-1")


def test_a_typo_in_repo_leaves_no_run_directory_and_a_later_run_starts(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    typo = tmp_path / "bare-typo"
    assert main(["run", "--repo", str(typo), "--easy", "1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"error: not a git repository: {typo}\n"
    assert not (tmp_path / "bench.run").exists()
    assert main(["run", "--repo", str(bare_history), "--easy", "1", "--out", str(out)]) == 1
    assert "blocked: 0 of 1 easy tasks" in capsys.readouterr().out


def test_a_run_directory_whose_inputs_are_not_a_run_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "bench.run"
    run_dir.mkdir()
    (run_dir / "inputs.json").write_text("{}")
    for argv in (["run", "--resume", str(run_dir)], ["status", str(run_dir)]):
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f"error: {run_dir} holds no valid run ({run_dir}/inputs.json: not a run's inputs); "
            "delete it, or give another --run-dir\n"
        )


def test_a_run_started_without_a_pool_says_to_delete_it_on_resume(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run directory an older version left after a typo in --repo: inputs, no pool."""
    run_dir = tmp_path / "bench.run"
    options = RunOptions(repo=tmp_path / "typo", out=tmp_path / "b.tar.gz", budgets={"easy": 1})
    run = RunDirectory(run_dir)
    run.lock()
    run.write_json(run.inputs_path, options.to_json())
    run.unlock()
    assert main(["run", "--resume", str(run_dir)]) == 2
    assert capsys.readouterr().err == (
        f"error: {run_dir} holds no valid run (not a git repository: {tmp_path / 'typo'}; it "
        "mined nothing yet); delete it, or give another --run-dir\n"
    )


def test_agent_allowed_hosts_are_checked_stored_and_change_the_run_id(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    argv = ["run", "--repo", str(bare_history), "--easy", "1", "--out", str(out)]
    assert main([*argv, "--agent-allowed-host", "https://x.example"]) == 2
    assert capsys.readouterr().err == (
        "error: --agent-allowed-host https://x.example: expected a host name "
        "(example.com or *.example.com)\n"
    )
    assert not (tmp_path / "bench.run").exists()
    hosts = ["--agent-allowed-host", "api.example.com", "--agent-allowed-host", "*.example.net"]
    assert main([*argv, *hosts]) == 1
    capsys.readouterr()
    inputs = json.loads((tmp_path / "bench.run" / "inputs.json").read_text())
    assert inputs["agentAllowedHosts"] == ["api.example.com", "*.example.net"]
    with_hosts = verify_export(out).manifest.run_id
    plain = tmp_path / "plain.tar.gz"
    assert main(["run", "--repo", str(bare_history), "--easy", "1", "--out", str(plain)]) == 1
    assert verify_export(plain).manifest.run_id != with_hosts


def test_run_help_names_the_default_agent_hosts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "replaces the default list: chatgpt.com, *.chatgpt.com, openai.com, *.openai.com" in (
        shown
    )


def test_the_export_counts_the_candidates_tried_per_tier() -> None:
    def state(cid: str, tier: str, status: Status) -> CandidateState:
        return CandidateState(id=cid, tier=tier, rank=0, status=status)

    states = (
        state("a", "easy", "accepted"),
        state("b", "easy", "rejected"),
        state("c", "hard", "rejected"),
        state("d", "hard", "active"),  # started, not finished: not tried to the end
        state("e", "medium", "pending"),
    )
    assert tried(states) == (2, 0, 1)


@pytest.mark.parametrize("given", ["bench.run", "bench.run/export"])
def test_eval_given_a_run_that_accepted_nothing_says_so(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    """A run directory is a benchmark of its accepted tasks (`test_run.py` evaluates one)."""
    out = tmp_path / "bench.tar.gz"
    assert main(["run", "--repo", str(bare_history), "--easy", "1", "--out", str(out)]) == 1
    capsys.readouterr()
    assert main(["eval", str(tmp_path / given), "--agent", "x=true"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'bench.run'}: the run has accepted no task yet"
    )


def test_a_running_run_is_seen_running_and_its_time_runs_to_now(tmp_path: Path) -> None:
    """`status` of a run going on: its elapsed time is to now, not to its last event."""
    run = RunDirectory(tmp_path / "bench.run")
    assert not run.in_use()  # no lock file yet
    run.lock()
    started = time.time() - 80
    lines = [{"time": started, "event": "started"}, {"time": started + 0.9, "event": "mined"}]
    run.events_path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert run.in_use()
    events = _events(run, running=run.in_use())
    assert events.elapsed is not None
    assert events.elapsed >= 80
    assert not events.finished

    run.unlock()
    assert not run.in_use()
    assert _events(run, running=run.in_use()).elapsed == 0.9  # stopped: to its last event


def test_status_of_a_running_run_shows_each_candidate_s_last_heartbeat_until_it_moves_on(
    tmp_path: Path,
) -> None:
    """The heartbeat's lines are events: `status` shows each running candidate's last one, and
    none of a candidate whose stage finished after it, nor any once the run stopped."""
    run = RunDirectory(tmp_path / "bench.run")
    run.lock()
    lines = [
        {"time": 1.0, "event": "start", "candidate": "pr-1"},
        {"time": 2.0, "event": "doing", "candidate": "pr-1", "line": "pr-1 (easy): drafting 1"},
        {"time": 3.0, "event": "doing", "candidate": "pr-1", "line": "pr-1 (easy): drafting 2"},
        {"time": 3.5, "event": "doing", "candidate": "pr-2", "line": "pr-2 (hard): drafting 1"},
        {"time": 4.0, "event": "step", "candidate": "pr-2", "stage": "draft"},
    ]
    run.events_path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert _events(run, running=True).doing == ("pr-1 (easy): drafting 2",)
    with run.events_path.open("a") as handle:  # a resumed run: the last process's lines go
        handle.write(json.dumps({"time": 5.0, "event": "resumed"}) + "\n")
    assert _events(run, running=True).doing == ()
    run.unlock()
    assert _events(run, running=False).doing == ()
