"""Harbor as an environment: its options and the one place `harbor run` is launched.

Validation runs Harbor's `nop` and `oracle` jobs at once; evaluation runs one job per agent and
trial number. Either way each `harbor run` runs in its own session with its console output in a
log, and an interrupted run ends it (`selfbench.environments.process`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench.environments.process import run_logged

__all__ = ["HarborOptions", "launch_harbor"]

_STOP_SECONDS = 30
"""How long an interrupted Harbor has to stop its trials (SIGTERM) before it is killed."""


@dataclass(frozen=True, slots=True)
class HarborOptions:
    """How the harbor environment runs."""

    environment: str = "docker"
    """Harbor's environment: `docker`, `modal`, `daytona`, … or `package.module:ClassName`."""
    jobs_dir: Path = Path("jobs")
    """Where the run directory goes, as Harbor's own `--jobs-dir`."""
    harbor: str = "harbor"
    """The harbor executable."""
    logs: Path | None = None
    """Where each run's log is copied, `<logs>/<taskId>/{nop,oracle}.log` (default: not copied;
    the reports name the logs in the job directories)."""
    concurrency: int = 1
    """Trials at once in one job (`--n-concurrent`)."""


def launch_harbor(commands: Sequence[tuple[Sequence[str], Path]]) -> list[int]:
    """Run each `harbor run` argument list at once, its console output written to its log; their
    exit codes, in order, once all have ended.

    Raises:
        OSError: a log cannot be written or Harbor cannot start.
    """
    return run_logged(commands, grace=_STOP_SECONDS)
