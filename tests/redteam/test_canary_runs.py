"""Must-fail canaries in real verifier runs, where a runner's own habits meet them: cargo stops at
a first failing test binary, pytest's `-x` at a first failing test.

Real projects, compiled and scored with the bundle's own `tests/test.sh` in the sandbox, as the
red team scores them (`score_patches`): the gold patch scores 1, the empty patch 0, and neither
is ever forged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from redteam_projects import RUST_TEST, rust_project

from projects import Project, build
from selfbench.artifacts.compiled import locate_task
from selfbench.bundle.render_scripts import canary_names
from selfbench.environments.local.scoring import score_patches
from selfbench.validate.local import LocalOptions
from test_validate import python_project

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs


def _scores(project: Project, tmp_path: Path) -> list[tuple[int | None, int | None, bool]]:
    """(reward, forged, whether canaries were planted) for the gold patch and the empty one."""
    out = build(project, tmp_path / "build")
    gold = (out / "harbor-task" / "solution" / "gold.patch").read_bytes()
    options = LocalOptions(logs=tmp_path / "logs")
    reports = score_patches(locate_task(out), [gold, b""], options=options)
    return [
        (
            None if report.reward is None else report.reward.reward,
            None if report.reward is None else report.reward.forged,
            bool(canary_names(Path(report.log).read_text(encoding="utf-8"))),
        )
        for report in reports
    ]


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_runs_every_binary_past_the_one_whose_canaries_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The canaries sit in `tests/a_mul.rs`, the first binary cargo runs; a fail-to-pass test of
    `tests/z_more.rs` runs after it."""
    monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)  # the host's cargo
    project = rust_project("canary-binaries")
    more = RUST_TEST.replace("mul_works", "more_works").replace("(2, 3), 6", "(3, 3), 9")
    project.tests.clear()
    project.tests.update({"tests/a_mul.rs": RUST_TEST, "tests/z_more.rs": more})
    project.definition.update(
        failToPass=["mul_works", "more_works"], testPaths=["tests/a_mul.rs", "tests/z_more.rs"]
    )
    assert _scores(project, tmp_path) == [(1, 0, True), (0, 0, True)]


def test_a_command_that_stops_at_its_first_failure_gets_no_canary(tmp_path: Path) -> None:
    project = python_project("canary-exitfirst")
    project.definition["testCommand"] = project.definition["testCommand"].replace(
        "{tests}", "-x {tests}"
    )
    assert _scores(project, tmp_path) == [(1, 0, False), (0, 0, False)]
