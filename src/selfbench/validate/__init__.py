"""Prove tasks (SPEC §7): nop must fail, the oracle must pass, twice; in `local` or `harbor`.

`validate` is the entry point; the environments live in `local` and `harbor`, the report model in
`report`. Imports are deferred so that `selfbench --help` never pays for them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from selfbench.validate.report import TaskReport

__all__ = ["Environment", "validate", "validate_bundles"]

Environment = Literal["local", "harbor"]


def validate(  # noqa: PLR0913 - one keyword per documented option
    paths: Sequence[Path],
    *,
    environment: Environment = "local",
    jobs: int = 1,
    parity: bool = False,
    network: bool = False,
    logs: Path | None = None,
    keep: bool = False,
    workspace: Path | None = None,
    definition: Path | None = None,
    harbor_environment: str = "docker",
    jobs_dir: Path | None = None,
    harbor: str = "harbor",
    on_done: Callable[[TaskReport], None] | None = None,
) -> list[TaskReport]:
    """Validate bundles (or collect directories); one report per task, in the order given.

    `workspace` is where the local environment makes each task's prepared trees (default: the
    system temp directory). `definition` names the definition of a single bundle that has none
    beside it. `logs` (local)
    defaults to a new temporary directory, kept for the reports' paths; `jobs_dir` (harbor) to
    `jobs`, as Harbor's own.

    Raises:
        BundleError: a path is not a bundle, or its definition is missing or not its own.
        SandboxError: the local workspace cannot be created on this machine.
        SelfbenchError: Harbor could not run (harbor environment).
    """
    from selfbench.bundle.locate import (  # noqa: PLC0415
        find_bundle,
        locate_task,
        refuse_duplicates,
    )
    from selfbench.errors import BundleError  # noqa: PLC0415

    if definition is not None and len(paths) != 1:
        raise BundleError("--definition names the definition of exactly one bundle")
    if environment == "harbor":
        from selfbench.validate.harbor import validate_with_harbor  # noqa: PLC0415

        bundles = [find_bundle(path) for path in paths]
        directory = jobs_dir or Path("jobs")
        reports = validate_with_harbor(
            bundles,
            environment=harbor_environment,
            jobs_dir=directory,
            harbor=harbor,
            concurrency=jobs,
        )
        if on_done is not None:
            for report in reports:
                on_done(report)
        return reports
    from selfbench.validate.local import LocalOptions, validate_local  # noqa: PLC0415
    from selfbench.validate.sandbox import require_sandbox  # noqa: PLC0415

    require_sandbox()  # before anything is created on disk
    if workspace is not None and not workspace.is_dir():
        raise BundleError(f"--workspace {workspace}: not a directory")
    located = [locate_task(path, definition=definition) for path in paths]
    refuse_duplicates(located)  # before the logs directory is made
    options = LocalOptions(
        logs=logs or Path(tempfile.mkdtemp(prefix="selfbench-logs-")),
        parity=parity,
        network=network,
        keep=keep,
        workspace=workspace,
    )
    return validate_local(located, options=options, jobs=jobs, on_done=on_done)


validate_bundles = validate
"""`validate` under the name the package root exports (`selfbench.validate` is this package)."""
