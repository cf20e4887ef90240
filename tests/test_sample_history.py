"""The sample history: several merged pull requests that mining sorts into every tier."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfbench._git import git
from selfbench._sample_history import SAMPLE_PULL_REQUESTS, build_sample_history
from selfbench.demo import build_sample_history as exported
from selfbench.mine import MineResult, mine_repository

_KEEP_GOING = ("--continue-on-collection-errors",)
_HEAD = "2b2d527d6f3e1610ad919337c5a9747a4dd43aab"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def mined(sample: Path) -> MineResult:
    return mine_repository(sample)


def test_the_demo_module_exports_the_builder() -> None:
    assert exported is build_sample_history


def test_the_history_is_deterministic(sample: Path, tmp_path: Path) -> None:
    again = build_sample_history(tmp_path)

    assert git(again, "rev-parse", "HEAD") == git(sample, "rev-parse", "HEAD")
    assert git(sample, "rev-parse", "HEAD").decode().strip() == _HEAD
    assert git(sample, "status", "--porcelain") == b""


def test_mining_finds_a_candidate_in_every_tier(mined: MineResult) -> None:
    tiers = [(c.id, c.kind, c.difficulty, c.tests_changed) for c in mined.candidates]

    assert tiers == [
        ("pr-4", "merge", "hard", True),
        ("pr-3", "merge", "medium", True),
        ("pr-5", "squash", "easy", True),
        ("pr-1", "squash", "easy", True),
    ]
    assert mined.counts() == {"easy": 2, "medium": 1, "hard": 1}
    expected = {f"pr-{p.number}": p.tier for p in SAMPLE_PULL_REQUESTS if p.tier is not None}
    assert {c.id: c.difficulty for c in mined.candidates} == expected


def test_mining_excludes_the_docs_only_and_the_untested_changes(mined: MineResult) -> None:
    reasons = [(e.source_pr, e.reason) for e in mined.excluded]

    assert reasons == [
        (6, "no test file a known runner runs"),
        (2, "changes only documentation"),
        (None, "the first commit has no base"),
    ]


def test_a_merge_carries_its_title_and_body(mined: MineResult) -> None:
    hard = next(c for c in mined.candidates if c.id == "pr-4")

    assert hard.title == "Convert temperatures, and any two units by name"
    assert hard.body.startswith("Temperatures differ by an offset")


def _pytest(checkout: Path, *paths: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rA",
            *_KEEP_GOING,
            *paths,
        ],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("number", [1, 3, 4, 5])
def test_each_change_s_tests_fail_before_and_pass_after_unless_they_already_pass(
    sample: Path, mined: MineResult, tmp_path: Path, number: int
) -> None:
    candidate = next(c for c in mined.candidates if c.source_pr == number)
    drafts = next(p.drafts for p in SAMPLE_PULL_REQUESTS if p.number == number)
    checkout = tmp_path / "checkout"
    git(sample, "worktree", "add", "--quiet", "--detach", str(checkout), candidate.base_commit)
    try:
        diff = ("diff", "--binary", candidate.base_commit, candidate.completed_commit, "--")
        tests = sorted(f.path for f in candidate.files if f.file_class == "tests")
        git(checkout, "apply", stdin=git(sample, *diff, "tests"))
        before = _pytest(checkout, *(t for t in tests if t.endswith(".py") and "/test_" in t))
        git(checkout, "apply", stdin=git(sample, *diff, "src", "pyproject.toml"))
        after = _pytest(checkout, "tests")
    finally:
        git(sample, "worktree", "remove", "--force", str(checkout))

    assert after.returncode == 0, after.stdout
    assert (before.returncode != 0) is drafts, before.stdout
    if drafts:
        assert "passed" in before.stdout  # the kept tests still pass: pass-to-pass exists
