"""What `run --resume` may change, and the candidates it tries again (`run/driver.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfbench.errors import RunError
from selfbench.run import RunDirectory, RunOptions
from selfbench.run.driver import (
    RESUME_CHANGES,
    _apply_changes,
    load_options,
    retry_network_rejections,
)
from selfbench.run.state import CandidateState


def _options(tmp_path: Path) -> RunOptions:
    return RunOptions(repo=tmp_path / "repo", out=tmp_path / "b.tar.gz", budgets={"easy": 1})


def test_a_changed_environment_option_is_stored_and_logged(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    options = _options(tmp_path)
    changed = _apply_changes(
        run, options, {"jobs": 2, "host_network_config": False, "env": "local"}
    )
    assert (changed.jobs, changed.host_network_config, changed.env) == (2, False, "local")
    stored = json.loads(run.inputs_path.read_text())
    assert (stored["jobs"], stored["hostNetworkConfig"]) == (2, False)
    events = [(e["event"], e["option"], e["before"], e["after"]) for e in run.events()]
    assert events == [("changed", "jobs", 1, 2), ("changed", "host_network_config", True, False)]


def test_a_changed_harbor_executable_is_stored_and_read_back(tmp_path: Path) -> None:
    """Where Harbor is installed is how the work is done: a resume may point elsewhere."""
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    changed = _apply_changes(run, _options(tmp_path), {"harbor": "/opt/harbor/bin/harbor"})
    assert changed.harbor == "/opt/harbor/bin/harbor"
    stored = json.loads(run.inputs_path.read_text())
    assert load_options(stored, "inputs.json").harbor == "/opt/harbor/bin/harbor"


def test_a_changed_candidate_time_is_stored_and_read_back(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    changed = _apply_changes(run, _options(tmp_path), {"candidate_time": 600.0})
    assert changed.candidate_seconds("hard") == 600.0
    stored = json.loads(run.inputs_path.read_text())
    assert stored["candidateTime"] == 600.0
    assert load_options(stored, "inputs.json").candidate_time == 600.0


def test_nothing_is_written_when_nothing_changed(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    options = _options(tmp_path)
    assert _apply_changes(run, options, {"jobs": 1}) is options
    assert not run.inputs_path.exists()
    assert list(run.events()) == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"budgets": {"easy": 3}}, "--resume cannot change budgets"),
        (
            {"agent_allowed_hosts": ("api.example.com",)},
            "--resume cannot change agent_allowed_hosts",
        ),
        ({"jobs": 0}, "-j must be at least 1"),
        ({"candidate_time": 0.0}, "--candidate-time must be a positive number of seconds"),
    ],
)
def test_what_a_resume_may_not_change_is_refused(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    with pytest.raises(RunError) as error:
        _apply_changes(run, _options(tmp_path), changes)
    assert str(error.value) == message
    assert "budgets" not in RESUME_CHANGES


def _rejected(run: RunDirectory, cid: str, log_text: str, *, inside: bool = True) -> CandidateState:
    base = run.path if inside else run.path.parent
    log = base / "logs" / cid / "prepare.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(log_text)
    state = CandidateState(id=cid, tier="easy", rank=0, status="active")
    return state.rejected("draft", 1.0, f"setup: setupCommand failed (exit 1; log {log})")


def test_a_resume_retries_only_setups_the_network_failed_inside_the_run(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    run.path.mkdir()
    states = {
        "tls": _rejected(run, "tls", "npm error code SELF_SIGNED_CERT_IN_CHAIN\n"),
        "project": _rejected(run, "project", "ERROR: No matching distribution found for x\n"),
        "outside": _rejected(run, "outside", "npm error code ECONNREFUSED\n", inside=False),
    }
    retried = retry_network_rejections(run, states)
    assert list(retried) == ["tls"]
    again = retried["tls"]
    assert (again.status, again.next, again.reason) == ("active", "draft", None)
    assert again.history == ("mined", "rejected", "retried")
    assert run.load("tls") == again
    [event] = list(run.events())
    assert (event["event"], event["candidate"], event["stage"], event["why"]) == (
        "retried",
        "tls",
        "draft",
        "npm error code SELF_SIGNED_CERT_IN_CHAIN",
    )
