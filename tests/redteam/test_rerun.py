"""The verifier's second run: when a run's report and the signals beside it (the runner's own
summary line, the exit status) disagree, the command runs once more, fresh, and that run decides.

Real projects, compiled and scored with the bundle's own `tests/test.sh` in the sandbox, as the red
team scores them (`score_patches`). The log shows each run's output: how many runs there were is
counted there. A project whose first run differs from its next ones keeps a marker file in its
workspace (the verifier user's to write), made as that first run ends.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from redteam_attacks import ATTACKS

from projects import Project, build, git
from selfbench.artifacts.compiled import locate_task
from selfbench.bundle.render_scripts import LOG_PREFIX, RERUN_LABEL
from selfbench.environments.local.scoring import score_patches
from selfbench.validate.local import LocalOptions
from test_validate import node_project, python_project

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs

_RERUN = f"{LOG_PREFIX}{RERUN_LABEL}: running the command once more, fresh"
_PYTEST_RUN = "[100%]"
"""The end of each pytest run's progress line (`-q`)."""
_NODE_RUN = "TAP version 13"
"""The head of each `node --test` run's TAP."""

# Project code (the base's, which the agent's patch cannot change) that, on the first run only,
# marks the workspace as that run ends; `_FIRST_RUN_SUMMARY` then prints a summary line that
# disagrees with the report, `_FIRST_RUN_EXITS_0` makes a failing first run exit 0.
_FIRST_RUN = """\
import atexit
import os

_MARKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".first-run-done")
FIRST = not os.path.exists(_MARKER)


def _mark():
    with open(_MARKER, "w", encoding="utf-8"):
        pass
"""
_FIRST_RUN_SUMMARY = (
    _FIRST_RUN
    + """

def _end():
    _mark()
    print("7 passed in 0.01s", flush=True)


if FIRST:
    atexit.register(_end)
"""
)
_FIRST_RUN_EXITS_0 = (
    _FIRST_RUN
    + """

def _end():
    _mark()
    os._exit(0)


if FIRST:
    atexit.register(_end)
"""
)
_MUL_FAILS_FIRST = (
    "from calc import mul\nfrom conftest import FIRST\n\n\n"
    "def test_mul():\n    assert not FIRST\n    assert mul(2, 3) == 6\n"
)


def _score(project: Project, tmp_path: Path, agent_patch: bytes | None = None) -> tuple[int, str]:
    """The reward of the gold patch (or `agent_patch`) with the bundle's verifier, and its log."""
    out = build(project, tmp_path / "build")
    patch = agent_patch
    if patch is None:
        patch = (out / "harbor-task" / "solution" / "gold.patch").read_bytes()
    options = LocalOptions(logs=tmp_path / "logs")
    [report] = score_patches(locate_task(out), [patch], options=options)
    assert report.reward is not None, Path(report.log).read_text(errors="replace")
    return report.reward.reward, Path(report.log).read_text(errors="replace")


def _attack_patch(project: Project, tmp_path: Path, attack_id: str) -> bytes:
    """One red-team attack on `project`'s base, as the collect step would take it."""
    [attack] = [row for row in ATTACKS if row.id == attack_id]
    repo = tmp_path / "attack"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    for path, text in project.base.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for change in attack.changes:
        (repo / change.path).write_text(change.text, encoding="utf-8")
    git(repo, "add", "-A")
    return subprocess.run(
        ["git", "diff", "--cached", "--binary", "--no-renames", "HEAD"],
        cwd=repo,
        check=True,
        capture_output=True,
    ).stdout


def test_a_run_whose_signals_agree_runs_each_command_once(tmp_path: Path) -> None:
    reward, log = _score(node_project("rerun-happy"), tmp_path)
    assert reward == 1, log
    assert log.count(_NODE_RUN) == 3  # fail-to-pass, its determinism repeat, pass-to-pass
    assert _RERUN not in log


def test_a_summary_that_disagrees_on_the_first_run_only_is_judged_by_the_rerun(
    tmp_path: Path,
) -> None:
    project = python_project("rerun-summary", base={"conftest.py": _FIRST_RUN_SUMMARY})
    reward, log = _score(project, tmp_path)
    assert reward == 1, log
    assert log.count(_PYTEST_RUN) == 4, log
    assert log.count(_RERUN) == 1, log
    assert f"{LOG_PREFIX}the report and the runner's own output disagree: " in log
    assert f"{LOG_PREFIX}the rerun agrees: every wanted test passes\n" in log


def test_a_test_failing_on_the_first_run_and_passing_on_the_rerun_is_a_disagreement(
    tmp_path: Path,
) -> None:
    project = python_project(
        "rerun-flip",
        base={"conftest.py": _FIRST_RUN_EXITS_0},
        tests={"tests/test_mul.py": _MUL_FAILS_FIRST},
    )
    reward, log = _score(project, tmp_path)
    assert reward == 0, log
    assert log.count(_RERUN) == 1, log
    assert f"{LOG_PREFIX}the command exited 0 but its report does not agree: " in log
    problem = "the first run's report shows a test failing that the rerun shows passing"
    assert f"{LOG_PREFIX}the runs disagree: {problem}\n" in log


def test_a_forgery_that_disagrees_again_on_the_rerun_scores_0(tmp_path: Path) -> None:
    project = node_project("rerun-forged")
    patch = _attack_patch(
        project, tmp_path, "node-appends-to-report-through-an-ancestor-descriptor"
    )
    reward, log = _score(project, tmp_path, patch)
    assert reward == 0, log
    # fail-to-pass and pass-to-pass (the forgery is in the code both import), each run twice
    assert log.count(_RERUN) == 2, log
    assert log.count(_NODE_RUN) == 4, log
    assert f"{LOG_PREFIX}the rerun disagrees too: the report and the runner's own output" in log
