"""Prepared workspaces reused within a process (environments/local/workspaces.py): a preparation
with the same inputs runs no setup again, one with other inputs does, no run changes what is
parked, and agents' trials never take part."""

from __future__ import annotations

from pathlib import Path

import pytest

from projects import build
from selfbench.artifacts.compiled import locate_task
from selfbench.environments.local.disk import remove_workspace
from selfbench.environments.local.scoring import score_patch, score_patches
from selfbench.environments.local.workspaces import Parked, WorkspacePool, workspace_pool
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from test_validate import PY_SETUP, python_project

# each test checks which of its own preparations are parked and reused, from none parked
pytestmark = pytest.mark.fresh_setup

needs_sandbox = pytest.mark.sandbox

MARKED_SETUP = f"{PY_SETUP} && echo setup-ran-$((6 * 7))"
"""Setup that says so in the log (the product is printed, so the command line alone never
matches)."""


def _setups(log: Path) -> int:
    return log.read_text(encoding="utf-8").count("setup-ran-42")


@needs_sandbox
def test_a_second_preparation_with_the_same_inputs_runs_no_setup(tmp_path: Path) -> None:
    out = build(python_project("reused", definition={"setupCommand": MARKED_SETUP}), tmp_path)
    located = locate_task(out)
    drafted = score_patches(
        located, [b""], options=LocalOptions(logs=tmp_path / "draft"), reuse=True
    )
    assert drafted[0].reward is not None
    assert len(workspace_pool()) == 1
    draft_log = tmp_path / "draft" / "reused" / "prepare.log"
    assert _setups(draft_log) == 1

    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "validate")))

    assert report.accepted, report.reason
    log = tmp_path / "validate" / "reused" / "prepare.log"
    text = log.read_text(encoding="utf-8")
    assert _setups(log) == 0
    assert "selfbench: setup skipped: this workspace was prepared with the same inputs" in text
    assert str(draft_log) in text
    [parked] = workspace_pool().parked()  # parked again, for the next one
    prepared = parked.root / "prepared" / "calc" / "__init__.py"
    assert "def mul" not in prepared.read_text(encoding="utf-8")  # the oracle ran on a copy
    entries = {path.name for path in parked.root.iterdir()}
    assert {"prepared", "verifier-prepared", "opt-base", "home", "etc"} <= entries
    assert entries <= {"prepared", "verifier-prepared", "opt-base", "home", "etc", "shared"} | {
        "toolchain-state"
    }
    assert sorted(path.name for path in (parked.root / "home").iterdir()) == ["root"]


@needs_sandbox
def test_other_inputs_prepare_again(tmp_path: Path) -> None:
    first = build(python_project("one", definition={"setupCommand": MARKED_SETUP}), tmp_path / "a")
    other = MARKED_SETUP + " && true"
    second = build(python_project("two", definition={"setupCommand": other}), tmp_path / "b")
    for out in (first, second):
        validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert _setups(tmp_path / "logs" / "two" / "prepare.log") == 1
    assert len(workspace_pool()) == 2


@needs_sandbox
def test_kept_workspaces_and_agents_patches_are_never_parked(tmp_path: Path) -> None:
    out = build(python_project("never", definition={"setupCommand": MARKED_SETUP}), tmp_path)
    located = locate_task(out)
    score_patch(located, b"", options=LocalOptions(logs=tmp_path / "agent"))
    assert len(workspace_pool()) == 0
    kept = LocalOptions(logs=tmp_path / "kept", keep=True)
    validate([out], runner=LocalRunner(kept))
    root = Path((tmp_path / "kept" / "never" / "workspace.txt").read_text().strip())
    try:
        assert len(workspace_pool()) == 0
        assert (root / "opt-base").is_dir()
    finally:
        remove_workspace(root)  # kept: the test removes it, passed or not


def _parked(tmp_path: Path, name: str, key: str) -> Parked:
    root = tmp_path / name
    for entry in ("prepared/a", "home/root", "home/agent-1", "agent-0-app/x"):
        (root / entry).mkdir(parents=True)
    (root / "stray.txt").write_text("left by a run\n", encoding="utf-8")
    return Parked(root, key, root / "prepare.log")


def test_parking_keeps_only_the_lasting_entries(tmp_path: Path) -> None:
    pool = WorkspacePool(capacity=2)
    parked = _parked(tmp_path, "ws", "k")
    pool.park(parked, ("prepared", "home/root"))
    assert sorted(str(p.relative_to(parked.root)) for p in parked.root.rglob("*")) == [
        "home",
        "home/root",
        "prepared",
        "prepared/a",
    ]
    assert pool.take("other") is None
    assert pool.take("k") == parked
    assert pool.take("k") is None


def test_the_oldest_parked_workspace_is_removed_past_the_capacity(tmp_path: Path) -> None:
    pool = WorkspacePool(capacity=2)
    workspaces = [_parked(tmp_path, f"ws{index}", f"k{index}") for index in range(3)]
    for parked in workspaces:
        pool.park(parked, ("prepared",))
    assert len(pool) == 2
    assert not workspaces[0].root.exists()
    assert pool.take("k0") is None
    assert pool.take("k2") == workspaces[2]
    pool.clear()
    assert not workspaces[1].root.exists()
