"""A phase whose bwrap fails to set the sandbox up, before its script runs, is run again."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfbench.environments.local.sandbox import (
    SETUP_TRIES,
    Mounts,
    Sandbox,
    Users,
    require_sandbox,
)

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # setups that really run

BWRAP_ERROR = "bwrap: loopback: Failed RTM_NEWADDR: No child processes"

FLAKY_BWRAP = """#!/bin/bash
if [ "$1" = --help ]; then  # what it can do, asked once: no sandbox set up
    exec {bwrap} "$@"
fi
count=$(cat {count} 2>/dev/null || echo 0)
echo $((count + 1)) > {count}
if [ "$count" -lt {fails} ]; then
    echo '{error}' >&2
    exit 1
fi
exec {bwrap} "$@"
"""


def _retry(attempt: int) -> str:
    return f"selfbench: bwrap failed to set the sandbox up; retrying (try {attempt} of 3)\n"


def _flaky_bwrap(tmp_path: Path, fails: int) -> tuple[str, Path]:
    """A bwrap that fails its namespace setup `fails` times, then is the real one."""
    count = tmp_path / "count"
    path = tmp_path / "bwrap"
    path.write_text(
        FLAKY_BWRAP.format(count=count, fails=fails, error=BWRAP_ERROR, bwrap=require_sandbox())
    )
    path.chmod(0o755)
    return str(path), count


FAILED = f"{BWRAP_ERROR}\n"

CASES = [
    # (bwrap's failures, the phase's exit code, bwrap's runs, the log)
    (0, 0, 1, "ran\n"),
    (1, 0, 2, FAILED + _retry(2) + "ran\n"),
    (2, 0, 3, FAILED + _retry(2) + FAILED + _retry(3) + "ran\n"),
    (3, 1, 3, FAILED + _retry(2) + FAILED + _retry(3) + FAILED),
]


_USERS = Users(agent=61000, verifier=61001)
"""No process runs as them: the bwrap here is a stand-in."""


@pytest.mark.parametrize(("fails", "code", "runs", "log_text"), CASES)
def test_a_failed_sandbox_setup_is_retried(
    tmp_path: Path, fails: int, code: int, runs: int, log_text: str
) -> None:
    assert SETUP_TRIES == 3
    bwrap, count = _flaky_bwrap(tmp_path, fails)
    sandbox = Sandbox(tmp_path / "ws", _USERS, bwrap)
    log = tmp_path / "phase.log"
    result = sandbox.run("echo ran", (), mounts=Mounts(), log=log, timeout=60)
    assert (result.exit_code, result.timed_out) == (code, False)
    assert int(count.read_text()) == runs
    assert log.read_text() == log_text


def test_a_script_that_says_bwrap_is_not_retried(tmp_path: Path) -> None:
    bwrap, count = _flaky_bwrap(tmp_path, 0)
    sandbox = Sandbox(tmp_path / "ws", _USERS, bwrap)
    log = tmp_path / "phase.log"
    result = sandbox.run(f"echo '{BWRAP_ERROR}'; exit 1", (), mounts=Mounts(), log=log, timeout=60)
    assert result.exit_code == 1
    assert int(count.read_text()) == 1
    assert log.read_text() == FAILED
