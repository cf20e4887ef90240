"""Resource limits for a sandboxed phase: the task's `resources` as a control group.

`Limits.for_task` caps the task's values at the host's ceilings (`ceilings.py`) first.

A container runtime gives each environment the task's CPUs and memory; the local environment
does the same with a control group of its own per phase, on either hierarchy the kernel offers:

* cgroup v2 (one tree, `cgroup.controllers` at its root): `cpu.max`, `memory.max`
  (`memory.swap.max` 0), `pids.max`;
* cgroup v1 (one tree per controller): `cpu.cfs_quota_us`, `memory.limit_in_bytes` (and the
  memory+swap limit when the kernel accounts swap), `pids.max`.

When neither can be written (no root, a read-only `/sys/fs/cgroup`, a delegated subtree without
the controllers), the phase runs unlimited and says so in its log: limits are a safety net, and
their absence must not make a valid task fail.

Each user of a phase is also capped (`ulimit -u`, `RLIMIT_NPROC`). The kernel refuses a fork at
that cap without a trace the host can read (`pids.events` counts only the group's own cap), so
`UserWatch` tells from the group's own count, which the host reads and nothing in the group can
lower, whether a user reached it: the sandbox's uids are leased (`uids.py`), so a uid's count is
the phase's own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from selfbench.environments.local.ceilings import Ceilings, lowered
from selfbench.errors import os_reason

if TYPE_CHECKING:
    from selfbench.contract import TaskDefinition

__all__ = ["MAX_TASKS", "USER_PROCESSES", "Limits", "PhaseCgroup", "UserWatch"]

_ROOT = Path("/sys/fs/cgroup")
_PERIOD_US = 100_000
_EMPTY_WAIT_SECONDS = 5.0
MAX_TASKS = 8192
"""A phase's process cap (the sandbox also caps each user at half that)."""
USER_PROCESSES = MAX_TASKS // 2
"""Each user's process cap in a phase (`ulimit -u`): a user's flood leaves root's script room."""
_SAMPLE_SECONDS = 0.1
_NEAR_CAP = 64
"""A user counted within 1/64 of its cap (at least 1) has hit it: at the cap a flood churns, its
refused forkers exiting while others take their places, so a sample seldom lands on the cap."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one phase may use."""

    cpus: float
    memory_mb: int
    pids: int
    storage_mb: int | None = None
    """The size of the workspace's own filesystem (`disk.py`; None: the host's disk)."""
    seconds: float | None = None
    """The longest any phase may run (None: as long as the phase's own timeout)."""
    lowered: tuple[str, ...] = ()
    """What of the task's was above the host's ceilings, one line each (`ceilings.lowered`)."""
    user_pids: int = USER_PROCESSES
    """Each user's process cap (`ulimit -u`)."""

    @classmethod
    def for_task(cls, definition: TaskDefinition, ceilings: Ceilings | None = None) -> Limits:
        """The task's resources and timeouts as the local environment enforces them: each the
        smaller of the task's and the host's `ceilings` (default: `Ceilings.for_host()`)."""
        host = ceilings or Ceilings.for_host()
        resources, timeouts = definition.resources, definition.timeouts
        notes = []
        for what, asked, ceiling, unit in (
            ("cpus", resources.cpus, host.cpus, ""),
            ("memoryMb", resources.memoryMb, host.memory_mb, " MB"),
            ("storageMb", resources.storageMb, host.storage_mb, " MB"),
            ("setupSeconds", timeouts.setupSeconds, host.seconds, " s"),
            ("agentSeconds", timeouts.agentSeconds, host.seconds, " s"),
            ("testsSeconds", timeouts.testsSeconds, host.seconds, " s"),
        ):
            if asked > ceiling:
                notes.append(lowered(what, asked, ceiling, unit))
        return cls(
            cpus=min(float(resources.cpus), host.cpus),
            memory_mb=min(resources.memoryMb, host.memory_mb),
            pids=MAX_TASKS,
            storage_mb=min(resources.storageMb, host.storage_mb),
            seconds=float(host.seconds),
            lowered=tuple(notes),
            user_pids=USER_PROCESSES,
        )


def _quota(cpus: float) -> int:
    """Microseconds of CPU per period for `cpus` CPUs (at least 1 ms)."""
    return max(1000, round(cpus * _PERIOD_US))


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


@dataclass
class PhaseCgroup:
    """The control group(s) of one phase; `add` a process before it starts its work."""

    directories: tuple[Path, ...]
    version: int

    @classmethod
    def create(cls, limits: Limits) -> tuple[PhaseCgroup | None, str]:
        """A new limited group, or None and why there is none."""
        name = f"selfbench-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            if (_ROOT / "cgroup.controllers").is_file():
                return cls._create_v2(name, limits), ""
            if (_ROOT / "memory" / "memory.limit_in_bytes").is_file():
                return cls._create_v1(name, limits), ""
        except OSError as exc:
            return None, f"no resource limits: cannot create a control group ({os_reason(exc)})"
        return None, "no resource limits: no control group hierarchy found"

    @classmethod
    def _create_v2(cls, name: str, limits: Limits) -> PhaseCgroup:
        enabled = (_ROOT / "cgroup.subtree_control").read_text(encoding="ascii").split()
        missing = {"cpu", "memory", "pids"} - set(enabled)
        if missing:
            with contextlib.suppress(OSError):
                _write(_ROOT / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))
        directory = _ROOT / name
        directory.mkdir()
        group = cls((directory,), 2)
        try:
            _write(directory / "cpu.max", f"{_quota(limits.cpus)} {_PERIOD_US}")
            _write(directory / "memory.max", str(limits.memory_mb << 20))
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(directory / "memory.swap.max", "0")
            _write(directory / "pids.max", str(limits.pids))
        except OSError:
            group.close()
            raise
        return group

    @classmethod
    def _create_v1(cls, name: str, limits: Limits) -> PhaseCgroup:
        made: list[Path] = []
        group = cls((), 1)
        try:
            for controller in ("memory", "cpu", "pids"):
                directory = _ROOT / controller / name
                directory.mkdir()
                made.append(directory)
                group.directories = tuple(made)
            memory = _ROOT / "memory" / name
            _write(memory / "memory.limit_in_bytes", str(limits.memory_mb << 20))
            swap = memory / "memory.memsw.limit_in_bytes"
            if swap.is_file():
                _write(swap, str(limits.memory_mb << 20))
            cpu = _ROOT / "cpu" / name
            _write(cpu / "cpu.cfs_period_us", str(_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(_quota(limits.cpus)))
            _write(_ROOT / "pids" / name / "pids.max", str(limits.pids))
        except OSError:
            group.close()
            raise
        return group

    def add(self, *pids: int) -> str:
        """Move processes (and so everything they will start) into the group.

        Returns why the phase runs unlimited when one cannot be moved (a reported skip, never an
        error: see the module's docstring), else "".
        """
        try:
            for pid in pids:
                for directory in self.directories:
                    _write(directory / "cgroup.procs", str(pid))
        except OSError as exc:
            return f"no resource limits: {os_reason(exc)}"
        return ""

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for memory."""
        memory = self.directories[0]
        with contextlib.suppress(OSError, ValueError):
            if self.version == 2:
                for line in (memory / "memory.events").read_text(encoding="ascii").splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
                return False
            control = (memory / "memory.oom_control").read_text(encoding="ascii")
            for line in control.splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        return False

    def _pids(self) -> Path:
        """The group's directory in the pids controller."""
        return self.directories[-1] if self.version == 1 else self.directories[0]

    def process_limit_hit(self) -> bool:
        """Whether a process of the group failed to fork at the group's process cap
        (`pids.events`: `max`, on either hierarchy)."""
        with contextlib.suppress(OSError, ValueError):
            for line in (self._pids() / "pids.events").read_text(encoding="ascii").splitlines():
                key, _, value = line.partition(" ")
                if key == "max" and int(value) > 0:
                    return True
        return False

    def close(self) -> None:
        """Kill whatever is left in the group and remove it."""
        for directory in self.directories:
            procs = directory / "cgroup.procs"
            deadline = time.monotonic() + _EMPTY_WAIT_SECONDS
            while time.monotonic() < deadline:
                try:
                    pids = [int(p) for p in procs.read_text(encoding="ascii").split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)
            with contextlib.suppress(OSError):
                directory.rmdir()

    def watch_users(self, cap: int) -> UserWatch:
        """A watch (a context manager) of the group's users against their cap `cap`."""
        return UserWatch(self._pids(), "tasks" if self.version == 1 else "cgroup.threads", cap)


def _real_uid(task: str) -> int | None:
    """A task's real uid (`/proc/<tid>/status`, as the host sees it; None when it is gone)."""
    status = Path("/proc", task, "status")
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in status.read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    return None


class UserWatch:
    """Whether a user of a group reached its own process cap `cap` while the block ran.

    With the kernel's `pids.peak` (the group's most tasks at once): when it passed `cap`. A
    user at its cap means the group held more than that (the phase's root script is in it too),
    and a user's count can pass `cap` minus root's few tasks only in a flood; nothing in the group
    can lower the peak. Without `pids.peak`, the count of each user's tasks but root's (threads:
    what `RLIMIT_NPROC` counts) is sampled every `_SAMPLE_SECONDS` instead, read only when the
    group's own count (`pids.current`) is that high; a user within `_NEAR_CAP` of its cap has
    reached it, and a flood shorter than a sample can be missed.
    """

    def __init__(self, pids: Path, threads: str, cap: int) -> None:
        self._pids, self._threads, self._cap = pids, threads, cap
        self._near = cap - max(1, cap // _NEAR_CAP)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._peaked = (pids / "pids.peak").is_file()
        self.reached = False
        """A user of the group reached its cap (known once the block ended)."""

    def __enter__(self) -> Self:
        if not self._peaked:
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not self._peaked:
            self._stop.set()
            self._thread.join()
            return
        with contextlib.suppress(OSError, ValueError):
            self.reached = int((self._pids / "pids.peak").read_text(encoding="ascii")) > self._cap

    def _sample(self) -> None:
        while not self.reached and not self._stop.wait(_SAMPLE_SECONDS):
            self.reached = self._near_cap()

    def _near_cap(self) -> bool:
        with contextlib.suppress(OSError, ValueError):
            if int((self._pids / "pids.current").read_text(encoding="ascii")) < self._near:
                return False
            tasks = (self._pids / self._threads).read_text(encoding="ascii").split()
            counts = Counter(_real_uid(task) for task in tasks)
            return any(n >= self._near for uid, n in counts.items() if uid not in (None, 0))
        return False
