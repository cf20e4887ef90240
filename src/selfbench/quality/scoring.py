"""Score variants of the gold patch: prepare a compiled task once, then run each variant as the
agent's patch through the verifier, fail-to-pass only, once.

Each variant runs on a fresh copy of the prepared verifier tree, `jobs` at a time, with the
bundle's own verifier rendered without the determinism repeat and without pass-to-pass
(`render_test_sh(..., repeat=False)` with no pass-to-pass selectors): what the verifier would
say of fail-to-pass for that patch, without the runs only validation needs. A variant is

* True: every fail-to-pass test passed (the variant is as good as the gold for these tests);
* False: some fail-to-pass test failed (the tests noticed the change);
* None: it could not be judged (the patch did not apply, the run timed out, no reward).

A scorer also holds the verifier with pass-to-pass (still without the repeat), for the runs that
ask for it (`score(..., pass_to_pass=True)`: a mutant fail-to-pass cannot tell from the gold).
There a variant is True when pass-to-pass passes too, False when it fails, None when fail-to-pass
itself failed this time or the run could not be judged.
"""

from __future__ import annotations

import copy
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from selfbench import activity
from selfbench._scratch import scratch_directory
from selfbench.artifacts.compiled import LocatedTask, read_bundle_file
from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.render_scripts import pass_to_pass_paths, render_test_sh
from selfbench.contract import TaskDefinition
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.phases import AgentPatch, LocalOptions, TaskPhases
from selfbench.environments.local.sandbox import Sandbox, leased_users, require_sandbox
from selfbench.environments.local.verifier import VerifierRun
from selfbench.environments.local.workspaces import task_workspace
from selfbench.patches import parse_patch
from selfbench.toolchains import provision_task

__all__ = ["Scorer", "Stop", "VariantRun", "open_scorer", "score_variants"]

Stop = Callable[[list[bool | None]], bool]
"""Asked after each result with the results so far (in the order they finished): stop now?"""

MIN_VARIANT_SECONDS: Final = 60
"""A variant's time limit is never under this, however fast the gold ran."""
VARIANT_TIME_FACTOR: Final = 5
"""A variant may take this many times the gold's own run before it is killed (unjudged)."""


def _never(_: list[bool | None]) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class VariantRun:
    """One variant as it ran: its result, whether it ran at all, and its run's seconds."""

    result: bool | None
    ran: bool
    seconds: float = 0.0


def _fail_to_pass_only(definition: TaskDefinition) -> TaskDefinition:
    return definition.model_copy(update={"passToPass": []})


class Scorer:
    """A prepared task: `score` runs batches of variants on fresh copies of it."""

    def __init__(self, task: TaskPhases, test_sh: str, with_pass_to_pass: str | None) -> None:
        self._task = task
        self._test_sh = test_sh
        self._with_pass_to_pass = with_pass_to_pass
        self._lock = threading.Lock()
        self._count = 0
        self.limit: float | None = None
        """Seconds a variant may take (None: the task's own limits)."""
        self.pass_to_pass_limit: float | None = None
        """Seconds a variant may take with pass-to-pass (None: the task's own limits)."""

    @property
    def has_pass_to_pass(self) -> bool:
        """The task names pass-to-pass tests, so `score(..., pass_to_pass=True)` runs them."""
        return self._with_pass_to_pass is not None

    def _name(self) -> str:
        with self._lock:
            self._count += 1
            return f"variant-{self._count}"

    def _one(self, patch: bytes, pass_to_pass: bool) -> VariantRun:
        task = self._task
        name = self._name()
        opt = task.fresh(f"{name}-collected")
        (opt / Path(layout.CONTAINER_AGENT_PATCH).name).write_bytes(patch)
        test_sh, limit = self._test_sh, self.limit
        if pass_to_pass and self._with_pass_to_pass is not None:
            test_sh, limit = self._with_pass_to_pass, self.pass_to_pass_limit
        run = _limited(task, limit).verifier(name, AgentPatch(opt), (), test_sh)
        if not task.options.keep:
            shutil.rmtree(opt, ignore_errors=True)
            for suffix in ("tests", "opt", "logs"):
                shutil.rmtree(task.sandbox.root / f"{name}-{suffix}", ignore_errors=True)
        judged = _judge(run, pass_to_pass=pass_to_pass)
        return VariantRun(judged, ran=True, seconds=run.phase.seconds)

    def score(
        self,
        variants: Sequence[bytes],
        *,
        jobs: int = 1,
        stop: Stop = _never,
        what: str = "quality run",
        pass_to_pass: bool = False,
    ) -> list[VariantRun]:
        """Run each variant, `jobs` at a time, until `stop` says so; in the variants' order
        (`ran` False for those skipped). `what` names the runs in the heartbeat's step
        (`mutant 3 of 9`); with `pass_to_pass` (and pass-to-pass tests to run) each runs them too.

        `stop` is asked of the results in the variants' order only (the longest run of them
        finished from the first), and every variant after the point where it said so counts as
        skipped, even one that ran: how many ran never depends on which finished first, so the
        same task always gives the same record (a resumed run's export is byte-identical).
        """
        runs = [VariantRun(None, ran=False) for _ in variants]
        done_at: set[int] = set()
        prefix = 0
        cut: int | None = None
        pending = iter(enumerate(variants))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            running: dict[Future[VariantRun], int] = {}
            while True:
                while cut is None and len(running) < max(1, jobs):
                    item = next(pending, None)
                    if item is None:
                        break
                    activity.step(f"quality: {what} {item[0] + 1} of {len(variants)}")
                    one = pool.submit(activity.carried(self._one), item[1], pass_to_pass)
                    running[one] = item[0]
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    index = running.pop(future)
                    runs[index] = future.result()
                    done_at.add(index)
                while cut is None and prefix in done_at:
                    prefix += 1
                    if stop([run.result for run in runs[:prefix]]):
                        cut = prefix
        if cut is not None:
            runs[cut:] = [VariantRun(None, ran=False) for _ in runs[cut:]]
        return runs


def _limited(task: TaskPhases, limit: float | None) -> TaskPhases:
    """The task with its verifier's time limit cut to `limit` seconds (its setup done)."""
    if limit is None:
        return task
    definition = task.definition
    seconds = max(MIN_VARIANT_SECONDS, int(limit))
    timeouts = definition.timeouts.model_copy(
        update={
            "setupSeconds": min(definition.timeouts.setupSeconds, seconds),
            "testsSeconds": min(definition.timeouts.testsSeconds, seconds),
        }
    )
    view = copy.copy(task)  # the same workspace and prepared trees, another definition
    view.located = replace(
        task.located, definition=definition.model_copy(update={"timeouts": timeouts})
    )
    return view


def _judge(run: VerifierRun, *, pass_to_pass: bool) -> bool | None:
    reward = run.reward
    if reward is None or run.phase.timed_out or run.agent_reason is not None:
        return None
    if not reward.patch_applied or not reward.setup_completed:
        return None
    if not pass_to_pass:
        return bool(reward.fail_to_pass)
    return bool(reward.pass_to_pass) if reward.fail_to_pass else None


@contextmanager
def open_scorer(
    located: LocatedTask, test_patch: bytes, *, options: LocalOptions
) -> Iterator[Scorer | str]:
    """The task prepared once (setup runs once), in a workspace parked with the same
    preparation when there is one (`environments.local.workspaces`), parked again at the end;
    the reason setup failed instead when it did.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    bwrap = require_sandbox()
    with scratch_directory("selfbench-quality-logs-") as temp:
        logs = (options.logs or Path(temp)) / located.definition.taskId
        logs.mkdir(parents=True, exist_ok=True)
        definition = located.definition
        toolchains = provision_task(definition.toolchains, options.strict_toolchains, logs)
        limits = Limits.for_task(definition, options.ceilings)
        with (
            task_workspace(
                located, options, toolchains=toolchains, limits=limits, reuse=True
            ) as workspace,
            leased_users() as users,
        ):
            sandbox = Sandbox(
                workspace.root, users, bwrap, limits, toolchains, adopted=workspace.adopted
            )
            task = workspace.phases(TaskPhases(located, sandbox, logs, options))
            reason = task.prepare()
            if reason is not None:
                yield reason
                return
            protected = (
                *held_out_paths(definition, parse_patch(test_patch, lenient=True)),
                *pass_to_pass_paths(definition),
            )
            only = _fail_to_pass_only(definition)
            gold = read_bundle_file(located.bundle, layout.GOLD_PATCH)
            with_pass_to_pass = None
            if definition.passToPass:
                with_pass_to_pass = render_test_sh(definition, protected, gold, repeat=False)
            yield Scorer(
                task, render_test_sh(only, protected, gold, repeat=False), with_pass_to_pass
            )


def score_variants(
    located_task: LocatedTask,
    variants: Sequence[bytes],
    *,
    options: LocalOptions,
    jobs: int = 1,
    stop: Stop = _never,
) -> list[bool | None]:
    """Prepare the task once and run each variant's fail-to-pass; see the module's docstring.

    A variant skipped because `stop` said so is None, like one that could not be judged.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    test_patch = read_bundle_file(located_task.bundle, layout.TEST_PATCH)
    with open_scorer(located_task, test_patch, options=options) as scorer:
        if isinstance(scorer, str):
            return [None for _ in variants]
        return [run.result for run in scorer.score(variants, jobs=jobs, stop=stop)]
