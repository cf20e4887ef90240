"""The process groups selfbench started and is waiting for, so that an interrupt can end them.

Every long-running child (a sandbox phase, an author or reviewer command) runs in its own
session, so a terminal's Ctrl-C does not reach it and a timeout can end its whole group. A run
that is asked to stop must end them itself: `stop_all` sends each registered group SIGTERM, then
SIGKILL to those still there after a grace period, and until `allow` is called again a group
registered later (a stage that went on to its next phase) is killed at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

__all__ = ["allow", "kill", "stop_all", "tracked"]

_GRACE_SEC = 2.0
_lock = threading.Lock()
_groups: set[int] = set()
_stopping = False


def _signal(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _waited_for() -> set[int]:
    """The groups still registered: their leaders not yet reaped, so their ids not reused."""
    with _lock:
        return set(_groups)


@contextlib.contextmanager
def tracked(group: int) -> Iterator[None]:
    """Register the process group `group` (its leader's pid) while the caller waits for it."""
    with _lock:
        _groups.add(group)
        stopping = _stopping
    if stopping:
        _signal(group, signal.SIGKILL)
    try:
        yield
    finally:
        with _lock:
            _groups.discard(group)


def kill(group: int) -> bool:
    """SIGKILL the group `group` if it is registered (its leader not yet reaped, so its id is
    not another's); whether it was."""
    with _lock:
        registered = group in _groups
        if registered:
            _signal(group, signal.SIGKILL)
    return registered


def stop_all(grace: float = _GRACE_SEC) -> int:
    """End every registered group (SIGTERM, then SIGKILL after `grace` seconds) and kill any
    registered from now on; how many groups there were."""
    global _stopping  # noqa: PLW0603 - the registry is the process's own
    with _lock:
        _stopping = True
        groups = sorted(_groups)
    for group in groups:
        _signal(group, signal.SIGTERM if grace > 0 else signal.SIGKILL)
    deadline = time.monotonic() + grace
    while grace > 0 and time.monotonic() < deadline and _waited_for().intersection(groups):
        time.sleep(0.05)
    for group in _waited_for().intersection(groups):
        _signal(group, signal.SIGKILL)
    return len(groups)


def allow() -> None:
    """Let new groups run again (a new run in the same process)."""
    global _stopping  # noqa: PLW0603
    with _lock:
        _stopping = False
