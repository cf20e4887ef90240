"""jest and vitest as the projects that build them run them: honest work scores 1 under the
witness, doing nothing scores 0.

The verifier's reporter module is loaded by the project's own runner, whatever its release, and
its report must agree with the runner's own summary line. vitest 4 and later end a run with
`onTestRunEnd` only (vitest's own repository runs its tests with its workspace build of vitest
5); their summary counts a passing `test.fails` as `expected fail`, not `passed`.

Real projects installed by `npm ci` during setup (the lock resolved once, kept under `.cache`),
scored with the bundle's own `tests/test.sh` in the real sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redteam_projects import JS_TEST_SUFFIX, js_package, js_package_lock, js_project

from projects import Project, build
from selfbench.artifacts.compiled import locate_task
from selfbench.environments.local.scoring import score_patches
from selfbench.validate.local import LocalOptions

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs

VITEST_CURRENT = "4.1.12"
"""A vitest release that no longer calls a reporter's `onFinished`."""

_EXPECTED_FAIL = (
    "\ntest.fails('reverse of a number', () => {\n  expect(lib.reverse(12)).toBe('21');\n});\n"
)
"""A `test.fails` test: it passes when its body throws (a number has no characters to spread)."""


def _vitest_project(task_id: str, version: str, held_out_extra: str = "") -> Project:
    """The red team's vitest sample on another vitest release; `held_out_extra` is added to the
    held-out test file."""
    project = js_project(task_id, "vitest")
    project.base["package.json"] = js_package("vitest", version)
    project.base["package-lock.json"] = js_package_lock("vitest", version)
    held_out = f"test/reverse{JS_TEST_SUFFIX['vitest']}"
    project.tests[held_out] += held_out_extra
    return project


def _rewards(project: Project, tmp_path: Path) -> tuple[int | None, int | None]:
    """The gold patch's reward and an empty patch's, each on a fresh copy of the prepared task."""
    out = build(project, tmp_path / "build")
    gold = (out / "harbor-task" / "solution" / "gold.patch").read_bytes()
    reports = score_patches(
        locate_task(out), [gold, b""], options=LocalOptions(logs=tmp_path / "logs")
    )
    gold_reward, nop_reward = (
        None if report.reward is None else report.reward.reward for report in reports
    )
    return gold_reward, nop_reward


def test_a_vitest_that_only_calls_on_test_run_end_is_graded(tmp_path: Path) -> None:
    assert _rewards(_vitest_project("vitest-current", VITEST_CURRENT), tmp_path) == (1, 0)


def test_a_vitest_summary_with_expected_failures_agrees_with_the_report(tmp_path: Path) -> None:
    project = _vitest_project("vitest-expected-fail", VITEST_CURRENT, _EXPECTED_FAIL)
    assert _rewards(project, tmp_path) == (1, 0)
