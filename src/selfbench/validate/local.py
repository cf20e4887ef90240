"""Validation in the `local` environment: prove a bundle on this machine, with no Docker engine
(SPEC §7).

Every phase runs the bundle's own scripts in the isolated workspace of the local environment's
sandbox (`environments/local/sandbox.py`), the way the two images and Harbor would:

1. *prepare*: the images' own preparation script (`bundle/render_prepare.py`), stage by stage:
   unpack the snapshot into `/app`, commit it as the base, run `setupCommand` once; a copy is the
   verifier's tree, which also gets the gold patch's dependencies when it touches a manifest;
   the agent's tree goes back to the base (ignored dependencies stay) with the root-only base
   git dir;
2. per run, an *agent* phase on a copy of the prepared tree (oracle: `solve.sh` as `agent`; nop:
   nothing) and the collect command from `task.toml`, which writes the agent patch;
3. a *verifier* phase on a fresh copy of the verifier tree: `tests/test.sh` as root, which writes
   `reward.json`.

Beyond the original (off with `parity=True`): each fail-to-pass selector proven on its own at the
base and with the gold patch, the determinism rerun from a fresh copy, and "the suite really ran"
from the runners' own output. This module orchestrates the phases; the scripts they run live in
`environments/local/_scripts.py`, and what their results prove is judged in `checks.py`.

The phases themselves, and the workspace they run in, are the local environment's `TaskPhases`
(`environments/local/phases.py`), the public hook `selfbench.evaluate` shares; this module adds
validation's verdict and its entry points.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from selfbench import activity
from selfbench.artifacts.compiled import LocatedTask, refuse_duplicates
from selfbench.artifacts.report import Check, RunReport, TaskReport, parity_reason
from selfbench.contract import TaskDefinition
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.phases import (
    COLLECT_SECONDS,
    DEFAULT_RERUNS,
    MIN_RERUNS,
    AgentPatch,
    AgentPhase,
    LocalOptions,
    TaskPhases,
    VerifierVariant,
)
from selfbench.environments.local.sandbox import (
    PrivateEntries,
    Sandbox,
    leased_users,
    require_sandbox,
)
from selfbench.environments.local.scoring import logs_root
from selfbench.environments.local.verifier import VerifierRun, phase_reason
from selfbench.environments.local.workspaces import task_workspace
from selfbench.environments.process import CalledProcessError
from selfbench.errors import BundleError, SelfbenchError
from selfbench.progress import Reporter, silent
from selfbench.toolchains import Provisioned, provision_task
from selfbench.validate.checks import beyond_checks, network_hint, precise_reason
from selfbench.validate.evidence import DraftProof, draft_proof

__all__ = [
    "COLLECT_SECONDS",
    "DEFAULT_RERUNS",
    "MIN_RERUNS",
    "AgentPatch",
    "AgentPhase",
    "LocalOptions",
    "LocalRunner",
    "TaskPhases",
    "VerifierVariant",
    "validate_local",
]


class _Validation(TaskPhases):
    """A task's phases, and validation's verdict on them."""

    def validate(self) -> TaskReport:
        reason = self.prepare()
        prepare_log = str(self.logs / "prepare.log")
        if reason is not None:
            empty = RunReport(None, prepare_log)
            return TaskReport(
                self.definition.taskId, accepted=False, reason=reason, nop=empty, oracle=empty
            )
        proof = (
            None if self.options.parity else draft_proof(self.located, reruns=self.options.reruns)
        )
        several = len(self.definition.failToPass) > 1 and not self.options.parity
        selectors = tuple(self.definition.failToPass) if several and proof is None else ()
        activity.step("the nop run (no change: the tests must fail)")
        nop = self.verifier("nop", self.agent("nop", oracle=False), selectors)
        activity.step("the oracle run (the gold: the tests must pass)")
        oracle_agent = self.agent("oracle", oracle=True, last=True)
        oracle = self.verifier("oracle", oracle_agent, selectors)
        checks: list[Check] = []
        reason = phase_reason(nop) or phase_reason(oracle)
        reason = reason or parity_reason(nop.reward, oracle.reward)
        reruns: list[VerifierRun] = []
        if not self.options.parity:
            scored = oracle.reward is not None and oracle.reward.reward == 1
            if proof is None:
                reruns = self.reruns(oracle_agent) if scored else []
                checks = self.beyond_checks(nop, oracle, reruns if scored else None)
            else:
                checks = _proven_checks(self.definition, proof, nop, oracle, scored=scored)
            reason = reason or next((c.detail for c in checks if c.ran and not c.passed), None)
        if reason is not None:
            reason = precise_reason(self.definition, oracle, reason)
            reason = network_hint(reason, (nop, oracle), network=self.options.network)
            if nop.phase.out_of_memory or oracle.phase.out_of_memory:
                reason += f"; {self.memory_hint()}"
        return TaskReport(
            self.definition.taskId,
            reason is None,
            reason,
            self.run_report(nop),
            self.run_report(oracle),
            tuple(checks),
            reruns=tuple(self.run_report(rerun) for rerun in reruns),
        )

    def reruns(self, agent: AgentPatch) -> list[VerifierRun]:
        """The oracle's verifier again, each time from a fresh copy (the last takes the tree)."""
        count = self.options.reruns - MIN_RERUNS
        names = ["rerun", *(f"rerun-{index}" for index in range(2, count + 1))][:count]
        runs = []
        for index, name in enumerate(names):
            activity.step(f"the oracle's rerun {index + 1} of {count}")
            runs.append(self.verifier(name, agent, (), last=index == count - 1))
        return runs

    def beyond_checks(
        self, nop: VerifierRun, oracle: VerifierRun, reruns: Sequence[VerifierRun] | None
    ) -> list[Check]:
        """The Beyond checks; `reruns` is None when the oracle did not score 1."""
        return beyond_checks(self.definition, nop, oracle, reruns)


def _proven_checks(
    definition: TaskDefinition,
    proof: DraftProof,
    nop: VerifierRun,
    oracle: VerifierRun,
    *,
    scored: bool,
) -> list[Check]:
    """The Beyond checks with the draft's runs as the evidence of three (`evidence.py`): the
    bundle's own nop and oracle runs give the rest."""
    checks = beyond_checks(definition, nop, oracle, () if scored else None)
    by_name = {check.name: check for check in checks}
    if len(definition.failToPass) > 1:
        for check in proof.selector_checks():
            by_name[check.name] = check
    flaky = by_name["no flaky test"]
    if scored:
        by_name["independent rerun"] = proof.rerun_check()
        if flaky.passed:
            by_name[flaky.name] = replace(flaky, detail=proof.flaky_detail())
    return [by_name[check.name] for check in checks]


@dataclass(frozen=True, slots=True)
class LocalRunner:
    """The `local` environment as a `Runner`: this machine's sandbox, with its own options."""

    options: LocalOptions = field(default_factory=LocalOptions)

    @property
    def environment(self) -> str:
        return "local"

    def check(self) -> None:
        """Refuse a machine without the sandbox, or a workspace that is not a directory.

        Raises:
            SandboxError: this machine cannot create the isolated workspace.
            BundleError: `options.workspace` is not a directory.
        """
        require_sandbox()
        if self.options.reruns < MIN_RERUNS:
            raise BundleError(
                f"--reruns must be at least {MIN_RERUNS} (the verifier runs fail-to-pass twice)"
            )
        ceiling = (self.options.ceilings or Ceilings.for_host()).reruns
        if self.options.reruns > ceiling:
            raise BundleError(f"--reruns must be at most {ceiling} (--max-reruns)")
        workspace = self.options.workspace
        if workspace is not None and not workspace.is_dir():
            raise BundleError(f"--workspace {workspace}: not a directory")

    def run(
        self, tasks: Sequence[LocatedTask], *, jobs: int = 1, reporter: Reporter = silent
    ) -> list[TaskReport]:
        """Validate located tasks in the sandbox; see `validate_local`."""
        return validate_local(tasks, options=self.options, jobs=jobs, reporter=reporter)


def validate_local(
    tasks: Sequence[LocatedTask],
    *,
    options: LocalOptions,
    jobs: int = 1,
    reporter: Reporter = silent,
) -> list[TaskReport]:
    """Validate bundles locally, `jobs` tasks at a time; reports in the order given, each told
    to `reporter` as soon as it is known.

    A task whose bundle turns out broken while it runs is rejected with the reason; the others
    go on.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        BundleError: a task is given twice.
    """
    bwrap = require_sandbox()
    refuse_duplicates(tasks)
    ceilings = options.ceilings or Ceilings.for_host(jobs=jobs, workspace=options.workspace)
    private = PrivateEntries.for_run()
    root_logs = logs_root(options)
    root_logs.mkdir(parents=True, exist_ok=True)

    def one(located: LocatedTask) -> TaskReport:
        task_id = located.definition.taskId
        logs = root_logs / task_id
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True)
        with activity.doing(task_id, "validating"):
            report = _one_task(located, logs)
        reporter.candidate_finished(task_id, accepted=report.accepted, reason=report.reason)
        return report

    def _one_task(located: LocatedTask, logs: Path) -> TaskReport:
        task_id = located.definition.taskId
        try:
            # toolchains: the image's, provisioned (selfbench.toolchains)
            toolchains = provision_task(
                located.definition.toolchains, options.strict_toolchains, logs
            )
            limits = Limits.for_task(located.definition, ceilings)
            with (
                task_workspace(
                    located, options, toolchains=toolchains, limits=limits, reuse=True
                ) as workspace,
                leased_users() as users,  # the task's own uids: a process cap of its own
            ):
                if options.keep:
                    (logs / "workspace.txt").write_text(f"{workspace.root}\n", encoding="utf-8")
                sandbox = Sandbox(
                    workspace.root, users, bwrap, limits, toolchains, private, workspace.adopted
                )
                task = workspace.phases(_Validation(located, sandbox, logs, options))
                report = _with_toolchains(task, toolchains)
        except (
            OSError,
            CalledProcessError,
            SelfbenchError,
        ) as exc:
            # One task's broken bundle or a full disk rejects that task, not the whole batch.
            empty = RunReport(None, str(logs / "prepare.log"))
            why = str(exc) if isinstance(exc, SelfbenchError) else f"{type(exc).__name__}: {exc}"
            reason = f"validation failed: {why}".splitlines()[0]
            report = TaskReport(task_id, accepted=False, reason=reason, nop=empty, oracle=empty)
        return report

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(activity.carried(one), tasks))


def _with_toolchains(task: _Validation, toolchains: Provisioned | None) -> TaskReport:
    report = task.validate()
    return replace(report, toolchains=toolchains.uses) if toolchains else report
