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
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from selfbench.errors import os_reason
from selfbench.validate.ceilings import Ceilings, lowered

if TYPE_CHECKING:
    from selfbench.contract import TaskDefinition

__all__ = ["MAX_TASKS", "Limits", "PhaseCgroup"]

_ROOT = Path("/sys/fs/cgroup")
_PERIOD_US = 100_000
_EMPTY_WAIT_SECONDS = 5.0
MAX_TASKS = 8192
"""A phase's process cap (the sandbox also caps each user at half that)."""


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

    def process_limit_hit(self) -> bool:
        """Whether a process of the group failed to fork at the group's process cap
        (`pids.events`: `max`, on either hierarchy)."""
        pids = self.directories[-1] if self.version == 1 else self.directories[0]
        with contextlib.suppress(OSError, ValueError):
            for line in (pids / "pids.events").read_text(encoding="ascii").splitlines():
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
