"""Prove tasks (SPEC §7): nop must fail, the oracle must pass, twice; in `local` or `harbor`.

`validate` is the entry point: it locates and digest-checks each task once and hands the tasks to
a `Runner` (`environments.runner`): `LocalRunner` (`local`, on this machine's sandbox,
`selfbench.environments.local`, with the Beyond `checks` and a draft's `evidence`) or
`HarborRunner` (`harbor run`), each with its own options object; `environment` builds the one a
command chose. The report model lives in `selfbench.artifacts.report`. The runners load on first
use, so that `selfbench --help` never pays for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._scratch import scratch_directory
from selfbench.artifacts.compiled import LocatedTask, locate_task, refuse_duplicates
from selfbench.artifacts.validation import validation_record, write_validation
from selfbench.compiler import compile_home
from selfbench.environments.runner import Runner
from selfbench.errors import BundleError
from selfbench.progress import Reporter, silent
from selfbench.validate.local import LocalRunner

if TYPE_CHECKING:
    from selfbench.artifacts.report import TaskReport
    from selfbench.validate.harbor import HarborOptions, HarborRunner
    from selfbench.validate.local import LocalOptions

__all__ = [
    "HarborOptions",
    "HarborRunner",
    "LocalOptions",
    "LocalRunner",
    "Runner",
    "validate",
    "validate_bundles",
    "write_report",
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
    repo: Path | None = None,
    reporter: Reporter = silent,
) -> list[TaskReport]:
    """Validate bundles (or collect or task directories); one report per task, in order.

    Each path is located once and its definition, test patch and gold patch checked against the
    bundle's manifest before `runner` (default: `LocalRunner()`) sees it. `definition` names the
    definition of a single bundle that has none beside it; `jobs` is how many tasks (Harbor:
    trials) run at once. With `repo`, each path is an authored task directory, compiled into a
    temporary bundle first. Each task is told to `reporter` (accepted, or rejected with its
    reason) as soon as its report is known.

    Each report is also written as `validation.json` beside the task's `definition.json` (with
    `repo`: in the task directory), where `export` looks for it.

    Raises:
        BundleError: a path is not a bundle, its definition is missing or not its own, or a task
            is given twice.
        SandboxError: the local workspace cannot be created on this machine.
        SelfbenchError: Harbor could not run (harbor environment).
    """
    if runner is None:
        runner = LocalRunner()
    if definition is not None and len(paths) != 1:
        raise BundleError("--definition names the definition of exactly one bundle")
    runner.check()  # before anything is created on disk
    if repo is not None:
        if definition is not None:
            raise BundleError("--definition names a bundle's definition; --repo takes task dirs")
        with scratch_directory("selfbench-compiled-") as scratch:
            bundles = _compile_all(paths, repo, Path(scratch))
            reports = _validate_located(bundles, runner, jobs, reporter)
            homes: list[Path | None] = list(paths)
    else:
        bundles = [
            locate_task(path, definition=definition, definition_option="--definition")
            for path in paths
        ]
        reports = _validate_located(bundles, runner, jobs, reporter)
        homes = [task.home for task in bundles]
    for home, task, report in zip(homes, bundles, reports, strict=True):
        if home is not None:
            write_report(home, task, report)
    return reports


def _validate_located(
    tasks: list[LocatedTask], runner: Runner, jobs: int, reporter: Reporter
) -> list[TaskReport]:
    refuse_duplicates(tasks)  # before the logs directory is made
    return runner.run(tasks, jobs=jobs, reporter=reporter)


def _compile_all(task_dirs: Sequence[Path], repo: Path, scratch: Path) -> list[LocatedTask]:
    """Compile each authored task directory into `scratch`, beside a copy of its definition."""

    return [
        compile_home(task_dir, repo=repo, home=scratch / str(index))
        for index, task_dir in enumerate(task_dirs)
    ]


def write_report(directory: Path, task: LocatedTask, report: TaskReport) -> None:
    """Write `report` as `directory/validation.json`, naming the bundle it speaks of, atomically.

    Raises:
        BundleError: the file cannot be written.
    """
    write_validation(
        directory, validation_record(report.to_json(), manifest_sha256=task.manifest_sha256)
    )


validate_bundles = validate
"""`validate` under the name the package root exports (`selfbench.validate` is this package)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfbench.validate' has no attribute {name!r}")
    return getattr(import_module(module), name)
