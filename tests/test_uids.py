"""Sandbox uids leased per run and per trial (issue 25): no two sandboxes running at once share
an `agent` or `verifier` uid, so none shares another's process cap."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfbench.environments.local import uids
from selfbench.environments.local.uids import FIRST_UID, leased_users
from selfbench.errors import SandboxError

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        shutil.which("setpriv") is None, reason="leases are taken with setpriv (util-linux)"
    ),
]

HOLDER = """
import sys, time
from pathlib import Path
from selfbench.environments.local.uids import leased_users
with leased_users(Path(sys.argv[1])) as users:
    print(users.agent, users.verifier, flush=True)
    time.sleep(600)
"""


def test_two_leases_at_once_share_no_uid_and_a_released_one_is_leased_again(
    tmp_path: Path,
) -> None:
    with leased_users(tmp_path) as first, leased_users(tmp_path) as second:
        assert first.agent != first.verifier
        assert {first.agent, first.verifier}.isdisjoint({second.agent, second.verifier})
        assert min(first.agent, second.agent) >= FIRST_UID
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            f"{uid}.lock" for uid in (first.agent, first.verifier, second.agent, second.verifier)
        )
        assert (tmp_path / f"{first.agent}.lock").read_text() == f"{os.getpid()}\n"
    with leased_users(tmp_path) as again:
        assert again == first
    assert tmp_path.stat().st_mode & 0o777 == 0o700


def test_the_lease_of_a_killed_run_is_free_again(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert holder.stdout is not None
    held = tuple(int(uid) for uid in holder.stdout.readline().split())
    with leased_users(tmp_path) as meanwhile:
        assert {meanwhile.agent, meanwhile.verifier}.isdisjoint(held)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()
    with leased_users(tmp_path) as after:
        assert (after.agent, after.verifier) == held


def test_a_uid_that_still_runs_a_process_is_never_leased(tmp_path: Path) -> None:
    with leased_users(tmp_path) as first:
        pass
    straggler = subprocess.Popen(
        [
            "setpriv",
            f"--reuid={first.agent}",
            f"--regid={first.agent}",
            "--clear-groups",
            "sleep",
            "60",
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while Path("/proc", str(straggler.pid)).stat().st_uid != first.agent:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with leased_users(tmp_path) as users:
            assert first.agent not in (users.agent, users.verifier)
    finally:
        straggler.kill()
        straggler.wait()


def test_a_range_with_no_free_uid_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uids, "UID_COUNT", 3)
    refused = pytest.raises(SandboxError, match="no free sandbox uids left")
    with leased_users(tmp_path), refused, leased_users(tmp_path):
        pass
