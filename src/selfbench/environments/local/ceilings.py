"""The host's ceilings: what no task may raise, whatever its definition or `selfbench.toml` says.

A task names its CPUs, memory, storage and timeouts, and a draft configuration its reruns; the
host running them sets the most each may be (`Ceilings`), so a definition asking for 2^42 MB of
memory or a 2^53-second timeout gets the host's ceiling instead. The effective limit is the
smaller of the task's and the host's, and a phase's log says when a task's was lowered.

Defaults come from the host: its CPUs (`os.cpu_count`), its memory and the free space where the
workspaces go, each shared by the tasks run at once (`-j N`); a phase's time and the reruns have
fixed defaults. The `--max-*` options change them (`cli/common.py`).

`CONFIG_CAPS` are the fixed caps of a `selfbench.toml`: a file valid on one host is valid on
every host.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "CONFIG_CAPS",
    "MAX_RERUNS",
    "MAX_SECONDS",
    "Ceilings",
    "ConfigCaps",
    "lowered",
]

MAX_SECONDS = 6 * 3600
"""The default ceiling on any one timeout (and on one phase's time): six hours."""
MAX_RERUNS = 10
"""The default ceiling on `--reruns` (and `reruns` in `selfbench.toml`)."""


@dataclass(frozen=True, slots=True)
class ConfigCaps:
    """The most each `selfbench.toml` value may be."""

    cpus: int = 1024
    memory_mb: int = 1 << 20
    """1 TiB."""
    storage_mb: int = 1 << 24
    """16 TiB."""
    seconds: int = MAX_SECONDS
    reruns: int = MAX_RERUNS
    pass_to_pass: int = 10_000


CONFIG_CAPS = ConfigCaps()


@dataclass(frozen=True, slots=True)
class Ceilings:
    """The most one task may use on this host, per phase."""

    cpus: float
    memory_mb: int
    storage_mb: int
    seconds: int = MAX_SECONDS
    """Any one timeout, and so the longest any phase may run."""
    reruns: int = MAX_RERUNS

    @classmethod
    def for_host(
        cls,
        *,
        jobs: int = 1,
        workspace: Path | None = None,
        given: Mapping[str, float] | None = None,
    ) -> Ceilings:
        """This host's defaults, for `jobs` tasks at once with workspaces under `workspace`
        (default: the system temp directory): all its CPUs, and its memory and that
        directory's free space shared among the jobs (at least 1 MB each); each field `given`
        names (the `--max-*` options) is that value instead."""
        share = max(1, jobs)
        host = cls(
            cpus=float(os.cpu_count() or 1),
            memory_mb=max(1, _host_memory_mb() // share),
            storage_mb=max(1, _free_mb(workspace or Path(tempfile.gettempdir())) // share),
        )
        changes: dict[str, Any] = dict(given or {})
        return dataclasses.replace(host, **changes)


def _host_memory_mb() -> int:
    """The host's physical memory in MB."""
    return (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20


def _free_mb(directory: Path) -> int:
    """The free space of the filesystem holding `directory`, in MB (1 when it cannot be read:
    then every task is lowered, and says so)."""
    with contextlib.suppress(OSError):
        return shutil.disk_usage(directory).free >> 20
    return 1


def lowered(what: str, asked: float, ceiling: float, unit: str = "") -> str:
    """The log line saying a task's `what` was lowered from `asked` to the host's `ceiling`."""
    return (
        f"the task's {what} {_number(asked)}{unit} is above this host's ceiling: "
        f"using {_number(ceiling)}{unit}"
    )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
