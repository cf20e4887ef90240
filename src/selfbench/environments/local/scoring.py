"""Patches scored in the local environment: the verifier on an agent's patch, as Harbor would.

Drafting scores the gold patch and the base, quality scores its variants: each patch on a fresh
copy of one prepared task (`phases.py`), in a workspace parked for the next preparation when
asked (`workspaces.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from selfbench import activity
from selfbench._scratch import kept_directory
from selfbench.artifacts.compiled import LocatedTask
from selfbench.artifacts.report import RunReport
from selfbench.bundle import layout
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.phases import (
    AgentPatch,
    LocalOptions,
    TaskPhases,
    VerifierVariant,
)
from selfbench.environments.local.sandbox import Sandbox, leased_users, require_sandbox
from selfbench.environments.local.sharing import MACHINE
from selfbench.environments.local.workspaces import task_workspace
from selfbench.toolchains import provision_task

__all__ = ["logs_root", "score_patch", "score_patches"]


def logs_root(options: LocalOptions) -> Path:
    """Where a task's logs go: `options.logs`, else a directory kept after the run."""
    return options.logs or kept_directory("selfbench-logs-")


def score_patch(located: LocatedTask, patch: bytes | None, *, options: LocalOptions) -> RunReport:
    """Run the verifier on an agent's patch (None: no patch collected), as Harbor would.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        ToolchainError: `options.strict_toolchains` and a toolchain is not the image's version.
    """
    return score_patches(located, [patch], options=options)[0]


def score_patches(
    located: LocatedTask,
    patches: Sequence[bytes | None],
    *,
    options: LocalOptions,
    variants: Mapping[int, VerifierVariant] | None = None,
    stop: Callable[[Sequence[RunReport]], bool] | None = None,
    reuse: bool = False,
    alone: str | None = None,
) -> list[RunReport]:
    """`score_patch` for several patches, each on a fresh copy of one prepared task; the run of
    `patches[i]` is `variants[i]`'s when given (its own test.sh and mounts).

    `stop`, when given, is asked after each run but the last with the reports so far; when it
    says True the patches left are not run and the reports so far are returned (the setup is
    never repeated: one prepared task serves every run). With `reuse`, the workspace is one
    parked with the same preparation when there is one, and is parked at the end
    (`environments/local/workspaces.py`): only for patches no agent wrote. With `alone`, the
    runs (not the setup) hold the machine whole (`environments.local.sharing`: no other verifier
    run of this process goes on meanwhile) and their logs are named `alone` instead of `agent`
    (with the run's index when there are several), so a later call on a parked workspace keeps
    an earlier one's logs.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    bwrap = require_sandbox()
    logs = logs_root(options) / located.definition.taskId
    logs.mkdir(parents=True, exist_ok=True)
    toolchains = provision_task(located.definition.toolchains, options.strict_toolchains, logs)
    limits = Limits.for_task(located.definition, options.ceilings)
    with (
        task_workspace(
            located, options, toolchains=toolchains, limits=limits, reuse=reuse
        ) as workspace,
        leased_users() as users,  # the task's own uids: a process cap of its own
    ):
        sandbox = Sandbox(
            workspace.root, users, bwrap, limits, toolchains, adopted=workspace.adopted
        )
        task = workspace.phases(TaskPhases(located, sandbox, logs, options))
        if task.prepare() is not None:
            return [RunReport(None, str(logs / "prepare.log")) for _ in patches]
        if alone:
            activity.step("waiting for the other test runs to end, to run alone")
        with MACHINE.whole() if alone else contextlib.nullcontext():
            return _scored(task, patches, variants, stop, alone or "agent")


def _scored(
    task: TaskPhases,
    patches: Sequence[bytes | None],
    variants: Mapping[int, VerifierVariant] | None,
    stop: Callable[[Sequence[RunReport]], bool] | None,
    label: str,
) -> list[RunReport]:
    """`score_patches`' runs on the prepared task."""
    reports: list[RunReport] = []
    for index, patch in enumerate(patches):
        activity.step(f"test run {index + 1} of {len(patches)}")
        name = label if len(patches) == 1 else f"{label}-{index}"
        opt = task.fresh(f"{name}-collected")
        if patch is not None:
            (opt / Path(layout.CONTAINER_AGENT_PATCH).name).write_bytes(patch)
        last = index == len(patches) - 1
        variant = (variants or {}).get(index, VerifierVariant())
        run = task.verifier(
            name,
            AgentPatch(opt),
            (),
            variant.test_sh,
            last=last,
            binds=variant.binds,
            ro_binds=variant.ro_binds,
        )
        reports.append(task.run_report(run))
        if not last and stop is not None and stop(tuple(reports)):
            break
    return reports
