"""`run --author-env` and `--author-home`: stored with the run, refused where they would hand
the command the repository, the run or the user's home, and honoured again on `--resume`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfbench._git import git
from selfbench.cli import main
from selfbench.run import RunDirectory


@pytest.fixture
def bare_history(tmp_path: Path) -> Path:
    """A GitHub clone whose only commit has no base: mining finds no candidate, so a run
    ends at once (blocked) and can be resumed."""
    repo = tmp_path / "bare"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "add", "--all")
    git(repo, "-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "first")
    git(repo, "remote", "add", "origin", "https://github.com/example/bare.git")
    return repo


def _run(repo: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--repo", str(repo), "--easy", "1", "--out", str(out), *extra]


def test_the_author_options_given_again_on_resume_replace_the_runs_own(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "login-a", tmp_path / "login-b"
    first.mkdir()
    second.mkdir()
    out = tmp_path / "bench.tar.gz"
    assert main(_run(bare_history, out, "--author-env", "KEY_A", "--author-home", str(first))) == 1
    run_dir = (tmp_path / "bench.run").absolute()
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert (inputs["authorEnv"], inputs["authorHome"]) == (["KEY_A"], str(first))

    argv = ["run", "--resume", str(run_dir)]
    assert main([*argv, "--author-env", "KEY_B", "--author-home", str(second)]) == 1
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert (inputs["authorEnv"], inputs["authorHome"]) == (["KEY_B"], str(second))
    changed = [e for e in RunDirectory(run_dir).events() if e["event"] == "changed"]
    assert [(e["option"], e["before"], e["after"]) for e in changed] == [
        ("author_env", ["KEY_A"], ["KEY_B"]),
        ("author_home", str(first), str(second)),
    ]
    assert main(argv) == 1  # not given again: the run keeps them
    inputs = json.loads((run_dir / "inputs.json").read_text())
    assert (inputs["authorEnv"], inputs["authorHome"]) == (["KEY_B"], str(second))
    capsys.readouterr()


def _refusals(tmp_path: Path, repo: Path) -> list[tuple[str, str]]:
    run_dir = tmp_path / "bench.run"
    return [
        ("/", "--author-home /: the whole file system cannot be the author's home"),
        (str(tmp_path / "none"), f"--author-home {tmp_path / 'none'}: not a directory"),
        (
            str(Path.home()),
            (
                f"--author-home {Path.home()}: holds your own home; give a directory with only the "
                "agent's login (log in with HOME=DIR)"
            ),
        ),
        (
            str(repo.parent),
            (
                f"--author-home {repo.parent}: holds the repository ({repo}); give a directory of "
                "its own"
            ),
        ),
        (
            str(run_dir),
            (
                f"--author-home {run_dir}: holds the run's output ({run_dir.absolute()}); give a "
                "directory of its own"
            ),
        ),
    ]


def test_an_author_home_that_would_hand_over_too_much_is_refused_in_one_line(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    (tmp_path / "bench.run").mkdir()  # given as the home: it holds the run directory
    for home, message in _refusals(tmp_path, bare_history):
        assert main(_run(bare_history, out, "--author-home", home)) == 2, home
        assert capsys.readouterr().err == f"error: {message}\n"
        assert not (tmp_path / "bench.run" / "inputs.json").exists()
        assert not out.exists()


def test_a_resume_refuses_an_author_home_that_holds_the_run(
    tmp_path: Path, bare_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bench.tar.gz"
    assert main(_run(bare_history, out)) == 1
    run_dir = (tmp_path / "bench.run").absolute()
    before = (run_dir / "inputs.json").read_bytes()
    capsys.readouterr()
    assert main(["run", "--resume", str(run_dir), "--author-home", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: --author-home {tmp_path}: holds ")
    assert (run_dir / "inputs.json").read_bytes() == before
