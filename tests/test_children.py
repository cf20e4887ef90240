"""The registry of process groups a stopped run ends (`selfbench._children`), on real processes:
a group whose members ignore SIGTERM is killed after the grace period, one registered after the
stop is killed at once, and `allow` lets new groups run again."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from selfbench import _children

# A leader that ignores SIGTERM and starts a member that ignores it too; both print when ready.
_STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
member = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
          "print('member', flush=True); time.sleep(600)")
subprocess.Popen([sys.executable, "-c", member])
print("leader", flush=True)
time.sleep(600)
"""


@pytest.fixture(autouse=True)
def _allowed() -> Iterator[None]:
    yield
    _children.allow()


def _start() -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", _STUBBORN],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    assert sorted(process.stdout.readline().strip() for _ in range(2)) == ["leader", "member"]
    return process


def _group_alive(group: int) -> bool:
    found = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, check=False)
    return found.returncode == 0


def _waiting(process: subprocess.Popen[str], ended: list[float]) -> threading.Thread:
    def wait() -> None:
        with process, _children.tracked(process.pid):  # closes its output when it ends
            process.wait()
        ended.append(time.monotonic())

    thread = threading.Thread(target=wait)
    thread.start()
    return thread


def test_stop_all_kills_a_group_that_ignores_sigterm_after_the_grace() -> None:
    process = _start()
    ended: list[float] = []
    waiter = _waiting(process, ended)
    time.sleep(0.2)
    started = time.monotonic()
    assert _children.stop_all(grace=0.5) == 1
    waiter.join(timeout=10)
    assert ended, "the registered group outlived stop_all"
    assert 0.4 < ended[0] - started < 5
    assert process.returncode == -9
    deadline = time.monotonic() + 5
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_alive(process.pid), "a member of the group was left behind"


def test_a_group_registered_after_the_stop_is_killed_at_once_until_allowed() -> None:
    assert _children.stop_all() == 0
    late = _start()
    ended: list[float] = []
    started = time.monotonic()
    _waiting(late, ended).join(timeout=10)
    assert ended
    assert ended[0] - started < 2
    assert late.returncode == -9

    _children.allow()
    kept = _start()
    ended.clear()
    waiter = _waiting(kept, ended)
    time.sleep(0.5)
    assert not ended, "a group registered after allow() was killed"
    kept.kill()
    waiter.join(timeout=10)
    subprocess.run(["pkill", "-KILL", "-g", str(kept.pid)], check=False)
