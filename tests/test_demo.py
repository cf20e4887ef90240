"""The demo and its sample: a real repository whose pull request makes a valid task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from selfbench import _sample
from selfbench._git import git
from selfbench.cli import main
from selfbench.cli.demo import run_demo
from selfbench.demo import (
    DEMO_EXPORT,
    SampleRepository,
    build_sample_repository,
    sample_arguments,
)
from selfbench.export import verify_export


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def run_sample_tests(checkout: Path, selectors: list[str]) -> subprocess.CompletedProcess[str]:
    """The sample's own tests, by a fresh interpreter, leaving no cache in the checkout."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *selectors],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.sandbox
def test_run_demo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = run_demo(main, out=tmp_path)

    out = capsys.readouterr().out
    assert "1. sample history" in out
    assert code == 0, out
    assert "2. selfbench run --easy 1 --medium 1 --hard 1 --author draft" in out
    assert "rejected pr-5 (easy): draft: no fail-to-pass test" in out
    for accepted in ("pr-1 (easy)", "pr-3 (medium)", "pr-4 (hard)"):
        assert f"accepted {accepted}" in out
    assert "easy   1 of 1 accepted, 1 rejected, 2 mined" in out
    export = tmp_path / DEMO_EXPORT
    assert f"export  {export}  (verified)" in out
    assert "3. selfbench verify  ok" in out
    assert f"selfbench review {export}" in out
    verified = verify_export(export)
    assert verified.difficulties == {"pr-1": "easy", "pr-3": "medium", "pr-4": "hard"}
    assert main(["verify", str(export)]) == 0


def test_the_sample_repository_has_a_base_and_a_merged_change(sample: SampleRepository) -> None:
    log = git(sample.path, "log", "--format=%H %s").decode().splitlines()

    assert log == [
        f"{sample.head} {_sample.PR_TITLE} (#{_sample.PR_NUMBER})",
        f"{sample.base} Initial slugkit",
    ]
    assert git(sample.path, "status", "--porcelain") == b""


def test_the_sample_patches_apply_at_the_base_and_prove_the_change(
    sample: SampleRepository, tmp_path: Path
) -> None:
    arguments: dict[str, Any] = json.loads(json.dumps(sample_arguments(sample)))  # as sent
    definition = arguments["definition"]
    test_patch, gold_patch = tmp_path / "test.patch", tmp_path / "gold.patch"
    test_patch.write_text(arguments["testPatch"], encoding="utf-8")
    gold_patch.write_text(arguments["goldPatch"], encoding="utf-8")
    checkout = tmp_path / "checkout"
    git(sample.path, "worktree", "add", "--quiet", "--detach", str(checkout), sample.base)
    try:
        assert definition["baseCommit"] == sample.base
        git(checkout, "apply", "--check", str(test_patch))
        git(checkout, "apply", "--check", str(gold_patch))
        selectors = [*definition["failToPass"], *definition["passToPass"]]

        git(checkout, "apply", str(test_patch))
        for selector in definition["failToPass"]:
            before = run_sample_tests(checkout, [selector])
            assert before.returncode != 0, before.stdout + before.stderr
        regressions = run_sample_tests(checkout, definition["passToPass"])
        assert regressions.returncode == 0, regressions.stdout + regressions.stderr

        git(checkout, "apply", str(gold_patch))
        after = run_sample_tests(checkout, selectors)
        assert after.returncode == 0, after.stdout + after.stderr
    finally:
        git(sample.path, "worktree", "remove", "--force", str(checkout))
