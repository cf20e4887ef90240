"""The runner protocol: what `validate` (and `draft` and `run` through it) asks of an environment
that runs the verifier.

`validate` owns what is the same everywhere: it locates each task once, checks that its
definition and patches are the ones the bundle was compiled from (`artifacts.compiled`), refuses
a task given twice, and hands the located tasks to a runner. The runner owns how the bundle's
scripts run (this machine's sandbox, or `harbor run`) and returns one `TaskReport` per task.
resolvelib's resolver and provider split the work the same way.

Each runner takes its own frozen options object (`LocalOptions`, `HarborOptions`), so an option
one environment cannot honour is not accepted by it at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the validate package imports this protocol: no cycle at run time
    from selfbench.artifacts.compiled import LocatedTask
    from selfbench.artifacts.report import TaskReport
    from selfbench.progress import Reporter

__all__ = ["Runner"]


class Runner(Protocol):
    """An environment that proves located tasks: nop and oracle, each scored by `test.sh`."""

    @property
    def environment(self) -> str:
        """The environment's name, as `--env` spells it (`local`, `harbor`)."""
        ...

    def check(self) -> None:
        """Refuse early, before any task is located or anything is written, what cannot run.

        Raises:
            SelfbenchError: this environment cannot run here (no sandbox, no such directory).
        """
        ...

    def run(
        self, tasks: Sequence[LocatedTask], *, jobs: int, reporter: Reporter
    ) -> list[TaskReport]:
        """Validate `tasks` (located and digest-checked, each once); one report each, in order.
        Each task is told to `reporter` (accepted, or rejected with its reason) as soon as its
        report is known.

        Raises:
            SelfbenchError: the environment failed as a whole (not one task's verdict).
        """
        ...
