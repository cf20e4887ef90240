"""Prove tasks (SPEC §7): nop must fail, the oracle must pass, twice; in `local` or `harbor`.

`validate` is the entry point: it locates and digest-checks each task once and hands the tasks to
a `Runner` (`runner`): `LocalRunner` (`local`, this machine's sandbox) or `HarborRunner`
(`harbor run`), each with its own options object. The report model lives in `report`. The
runners load on first use, so that `selfbench --help` never pays for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench.bundle.locate import locate_task, refuse_duplicates
from selfbench.errors import BundleError
from selfbench.validate.runner import OnDone, Runner

if TYPE_CHECKING:
    from selfbench.validate.harbor import HarborOptions, HarborRunner
    from selfbench.validate.local import LocalOptions, LocalRunner
    from selfbench.validate.report import TaskReport

__all__ = [
    "HarborOptions",
    "HarborRunner",
    "LocalOptions",
    "LocalRunner",
    "Runner",
    "validate",
    "validate_bundles",
]

_LAZY = {
    "HarborOptions": "selfbench.validate.harbor",
    "HarborRunner": "selfbench.validate.harbor",
    "LocalOptions": "selfbench.validate.local",
    "LocalRunner": "selfbench.validate.local",
}


def validate(
    paths: Sequence[Path],
    *,
    runner: Runner | None = None,
    definition: Path | None = None,
    jobs: int = 1,
    on_done: OnDone | None = None,
) -> list[TaskReport]:
    """Validate bundles (or collect directories); one report per task, in the order given.

    Each path is located once and its definition, test patch and gold patch checked against the
    bundle's manifest before `runner` (default: `LocalRunner()`) sees it. `definition` names the
    definition of a single bundle that has none beside it; `jobs` is how many tasks (Harbor:
    trials) run at once.

    Raises:
        BundleError: a path is not a bundle, its definition is missing or not its own, or a task
            is given twice.
        SandboxError: the local workspace cannot be created on this machine.
        SelfbenchError: Harbor could not run (harbor environment).
    """
    if runner is None:
        from selfbench.validate.local import LocalRunner  # noqa: PLC0415

        runner = LocalRunner()
    if definition is not None and len(paths) != 1:
        raise BundleError("--definition names the definition of exactly one bundle")
    runner.check()  # before anything is created on disk
    located = [locate_task(path, definition=definition) for path in paths]
    refuse_duplicates(located)  # before the logs directory is made
    return runner.run(located, jobs=jobs, on_done=on_done)


validate_bundles = validate
"""`validate` under the name the package root exports (`selfbench.validate` is this package)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfbench.validate' has no attribute {name!r}")
    return getattr(import_module(module), name)
