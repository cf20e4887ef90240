"""Host uids for the sandbox's `agent` and `verifier` users, leased so that no two sandboxes
running at once share one (issue 25).

The kernel counts a user's processes per uid (`RLIMIT_NPROC`), host-wide: two trials, or two runs
on one host, that shared the `agent` uid shared its process cap, and one agent's fork bomb made
another trial's tests fail to fork. So every sandbox leases its own pair from a range of ids no
host user or group has: one lease file per uid under `LEASE_DIRECTORY` (a root-only directory on
the host's `/run`, cleared at boot), held with `flock` for as long as the lease is open. The
kernel drops the lock when its holder exits, however it exits, so the lease of a killed run is
free again at once; a uid that still has processes (a dead holder's stragglers) is never leased.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from selfbench.errors import SandboxError, translating

__all__ = ["FIRST_UID", "LEASE_DIRECTORY", "UID_COUNT", "Users", "leased_users"]

LEASE_DIRECTORY = Path("/run/selfbench/uids")
"""Where the lease files are (`<uid>.lock`), one directory for every selfbench on the host."""

FIRST_UID = 61000
UID_COUNT = 4096
"""The range leased from: `FIRST_UID` up to, not including, `FIRST_UID + UID_COUNT`."""


@dataclass(frozen=True, slots=True)
class Users:
    """Host uids/gids that stand for the container's `agent` and `verifier` users."""

    agent: int
    verifier: int


def _used_ids(path: Path) -> set[int]:
    """The numeric ids of an account file (`/etc/passwd`, `/etc/group`); none when unreadable."""
    ids: set[int] = set()
    with translating(SandboxError, f"read {path}"):
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) > 2 and fields[2].isdigit():  # name:password:id
            ids.add(int(fields[2]))
    return ids


def _running_uids() -> set[int]:
    """The real uids of the host's processes now (a process gone meanwhile is skipped)."""
    uids: set[int] = set()
    with os.scandir("/proc") as entries:
        pids = [entry.name for entry in entries if entry.name.isdigit()]
    for pid in pids:
        try:
            uids.add(Path("/proc", pid).stat().st_uid)
        except FileNotFoundError:
            continue
    return uids


def _try_lease(directory: Path, uid: int) -> int | None:
    """An open, locked lease file for `uid`; None when another holder has it."""
    descriptor = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return None
    os.ftruncate(descriptor, 0)
    os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
    return descriptor


@contextmanager
def leased_users(directory: Path = LEASE_DIRECTORY) -> Iterator[Users]:
    """Lease two uids no host account has, no process runs as and no other holder leases, for
    as long as the block runs (released when it ends, or when this process dies).

    Raises:
        SandboxError: the lease directory cannot be made, or every uid of the range is taken.
    """
    with ExitStack() as held:
        with translating(SandboxError, f"lease sandbox uids in {directory}"):
            leased = _lease(directory, held)
        yield Users(agent=leased[0], verifier=leased[1])


def _lease(directory: Path, held: ExitStack) -> list[int]:
    """Two uids leased in `directory`, their lease files closed when `held` closes."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)
    taken = _used_ids(Path("/etc/passwd")) | _used_ids(Path("/etc/group")) | _running_uids()
    leased: list[int] = []
    for uid in range(FIRST_UID, FIRST_UID + UID_COUNT):
        if uid in taken:
            continue
        descriptor = _try_lease(directory, uid)
        if descriptor is None:
            continue
        held.callback(os.close, descriptor)
        leased.append(uid)
        if len(leased) == 2:  # agent and verifier
            return leased
    raise SandboxError(
        f"no free sandbox uids left in {FIRST_UID}-{FIRST_UID + UID_COUNT - 1} "
        f"(leases in {directory})"
    )
