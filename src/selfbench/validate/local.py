"""The `local` environment: prove a bundle on this machine, with no Docker engine (SPEC §7).

Every phase runs the bundle's own scripts in the isolated workspace of `sandbox.py`, the way the
two images and Harbor would:

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
from the runners' own output. Every file the host reads back from a workspace (reward, statuses,
selector logs, the agent's patch) goes through `_fs.read_beneath`, which follows no link, and a
bundle holding a link is refused before any phase. This module orchestrates the phases; the
scripts they run live in `_scripts.py`, and what their results prove is judged in `checks.py`.
At about 650 lines it is one task's phases and their options; `evaluate/local_trials.py`
reuses `_Task` directly until a public "prepared task" hook takes the phases out of this module.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import tomllib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from selfbench._fs import read_beneath
from selfbench._shell import substitute_tests
from selfbench.bundle import layout
from selfbench.bundle.locate import LocatedTask, refuse_duplicates
from selfbench.bundle.render_prepare import (
    DEPENDENCY_PATCH,
    SNAPSHOT,
    Stage,
    prepare_arguments,
    prepare_script,
)
from selfbench.contract import TaskDefinition
from selfbench.errors import BundleError, SelfbenchError, os_reason
from selfbench.toolchains import Provisioned, provision_task
from selfbench.toolchains.versions import expand_toolchains
from selfbench.validate import _scripts
from selfbench.validate.cgroup import Limits
from selfbench.validate.checks import (
    VerifierRun,
    beyond_checks,
    network_hint,
    outcome_counts,
    phase_reason,
    precise_reason,
    run_outcomes,
    verifier_commands,
)
from selfbench.validate.report import (
    Check,
    Reward,
    RewardError,
    RunReport,
    TaskReport,
    parity_reason,
    read_reward,
)
from selfbench.validate.runner import OnDone
from selfbench.validate.sandbox import (
    LOG_LIMIT,
    Mounts,
    PrivateEntries,
    Sandbox,
    choose_users,
    require_sandbox,
)

__all__ = [
    "DEFAULT_RERUNS",
    "MIN_RERUNS",
    "LocalOptions",
    "LocalRunner",
    "score_patch",
    "score_patches",
    "validate_local",
]

_COLLECT_SECONDS = 300.0

DEFAULT_RERUNS = 3
MIN_RERUNS = 2
"""`--reruns N`: pass-to-pass runs N times in all (once at the base, where it must pass too, and
in N - 1 verifier runs with the gold patch: the oracle's and N - 2 reruns, each from a fresh
copy of the prepared tree); fail-to-pass runs twice in each of those N - 1 runs (the verifier's
own determinism repeat). So N is at least 2, and the default 3 adds one rerun to the oracle."""


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """How the local environment runs."""

    logs: Path | None = None
    """Where each task's logs go: `<logs>/<taskId>/{prepare,nop,oracle,rerun}.log` (default: a
    new temporary directory, kept for the reports' paths)."""
    parity: bool = False
    """Give the original's verdict: no per-selector, rerun or suite-ran checks."""
    network: bool = False
    """Let the tests reach the network (setup always may)."""
    keep: bool = False
    """Keep each task's workspace (the prepared trees); `<logs>/<taskId>/workspace.txt` names it."""
    workspace: Path | None = None
    """Where workspaces are created (default: the system temp directory)."""
    strict_toolchains: bool = False
    """Reject a task whose toolchains cannot all be had at the image's versions."""
    setup_env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs added to setup's environment only (proxy, CA certificates): never
    written into `setupCommand`, a log or the bundle, and not seen by the agent or the tests."""
    reruns: int = DEFAULT_RERUNS
    """How many times fail-to-pass and pass-to-pass run in all (see `MIN_RERUNS`)."""


@dataclass(frozen=True, slots=True)
class _Agent:
    """An agent phase's outcome: the host directory holding agent.patch, and what went wrong."""

    opt: Path
    reason: str | None


@dataclass
class _Task:
    located: LocatedTask
    sandbox: Sandbox
    logs: Path
    options: LocalOptions
    prepared: Path = field(init=False)
    verifier_base: Path = field(init=False)
    base_git: Path = field(init=False)

    def __post_init__(self) -> None:
        root = self.sandbox.root
        self.prepared = root / "prepared"
        self.verifier_base = self.prepared
        self.base_git = root / "opt-base"

    @property
    def definition(self) -> TaskDefinition:
        return self.located.definition

    @property
    def bundle(self) -> Path:
        return self.located.bundle

    def workdir(self) -> str:
        return f"{layout.CONTAINER_APP}/{self.definition.workdir}"

    def fresh(self, name: str) -> Path:
        path = self.sandbox.root / name
        path.mkdir(parents=True)
        return path

    # --- phases -----------------------------------------------------------------------------

    def memory_hint(self) -> str:
        return (
            "a process was killed for using more than the task's "
            f"{self.definition.resources.memoryMb} MB of memory"
        )

    def hidden(self) -> tuple[Path, ...]:
        """Host paths no phase may see: the directory holding the bundle and its definition."""
        holder = self.bundle.parent.resolve()
        system = {Path("/"), *(Path("/", name) for name in ("usr", "etc", "var", "opt", "bin"))}
        if holder in system or self.sandbox.root.resolve().is_relative_to(holder):
            return (self.bundle.resolve(),)
        return (holder,)

    def prepare(self) -> str | None:
        """Set up the prepared trees with the images' own preparation script (render_prepare);
        a reason when setup failed.

        Raises:
            BundleError: the bundle holds a link or a special file (see `_refuse_links`).
        """
        _refuse_links(self.bundle)
        self.prepared.mkdir()
        self.base_git.mkdir()
        self.verifier_base = self.fresh("verifier-prepared")
        # the image's toolchain steps need the image's toolchains (none with the host's own)
        declared = self.definition.toolchains if self.sandbox.toolchains else ()
        arguments = prepare_arguments(self.definition, expand_toolchains(declared))
        snapshot = {SNAPSHOT: self.bundle / layout.TESTS_SNAPSHOT}
        app = {layout.CONTAINER_APP: self.prepared}
        reason = self.setup("base", "setupCommand", arguments, binds=app, ro_binds=snapshot)
        if reason is not None:
            return reason
        _copy_tree(self.prepared, self.verifier_base)  # the verifier image's tree: set up
        dependency_patch = self.bundle / layout.DEPENDENCY_PATCH
        if dependency_patch.is_file():
            reason = self.setup(
                "dependencies",
                "the dependency setup",
                arguments,
                binds={layout.CONTAINER_APP: self.verifier_base},
                ro_binds={DEPENDENCY_PATCH: dependency_patch},
            )
            if reason is not None:
                return reason
        base_git = {**app, layout.CONTAINER_SELFBENCH: self.base_git}
        return self.setup("agent", "the base copy", (), binds=base_git, ro_binds={}, network=False)

    def setup(
        self,
        stage: Stage,
        label: str,
        arguments: tuple[str, ...],
        *,
        binds: dict[str, Path],
        ro_binds: dict[str, Path],
        network: bool = True,
    ) -> str | None:
        """Run one preparation stage (root's home writable); a reason when it failed."""
        log = self.logs / "prepare.log"
        seconds = float(self.definition.timeouts.setupSeconds)
        result = self.sandbox.run(
            prepare_script(stage),
            arguments,
            log=log,
            timeout=seconds,
            mounts=Mounts(
                binds=binds,
                ro_binds=ro_binds,
                network=network,
                hidden=self.hidden(),
                root_home_writable=True,
                environment=dict(self.options.setup_env),
            ),
        )
        if result.timed_out:
            return f"setup: {label} timed out after {seconds:g} s (log {log})"
        if result.exit_code != 0:
            hint = f"; {self.memory_hint()}" if result.out_of_memory else ""
            return f"setup: {label} failed (exit {result.exit_code}; log {log}){hint}"
        return None

    def agent(self, name: str, *, oracle: bool, last: bool = False) -> _Agent:
        """Run the agent phase and the collect step; where agent.patch is, and how it went."""
        opt = self.fresh(f"{name}-agent-opt")
        status = self.fresh(f"{name}-agent-status")
        _copy_tree(self.base_git, opt)
        binds = {layout.CONTAINER_SELFBENCH: opt, "/run/selfbench-status": status}
        ro_binds: dict[str, Path] = {}
        if oracle:
            app = self.sandbox.root / f"{name}-agent-app"
            _take_tree(self.prepared, app, last=last)
            binds[layout.CONTAINER_APP] = app
            ro_binds["/solution"] = self.bundle / "solution"
        else:
            ro_binds[layout.CONTAINER_APP] = self.prepared
        log = self.logs / f"{name}.log"
        phase = self.sandbox.run(
            _scripts.AGENT,
            ("oracle" if oracle else "nop", f"{_COLLECT_SECONDS:g}", _collect_command(self.bundle)),
            log=log,
            timeout=float(self.definition.timeouts.agentSeconds) + _COLLECT_SECONDS,
            mounts=Mounts(binds=binds, ro_binds=ro_binds, hidden=self.hidden()),
        )
        if oracle and not self.options.keep:
            shutil.rmtree(self.sandbox.root / f"{name}-agent-app", ignore_errors=True)
        reason = None
        if phase.timed_out:
            reason = f"{name}: the agent phase timed out (log {log})"
        elif oracle and _status(status, "solve") != 0:
            reason = (
                f"{name}: solution/solve.sh failed (exit {_status(status, 'solve')}; log {log})"
            )
        elif _status(status, "collect") != 0:
            reason = (
                f"{name}: the collect step failed (exit {_status(status, 'collect')}; log {log})"
            )
        return _Agent(opt, reason)

    def verifier(
        self,
        name: str,
        agent: _Agent,
        selectors: Sequence[str],
        test_sh: str | None = None,
        *,
        last: bool = False,
    ) -> VerifierRun:
        """Run `tests/test.sh` (or `test_sh`) on a fresh copy of the verifier tree, then each
        selector on its own."""
        app = self.sandbox.root / f"{name}-app"
        _take_tree(self.verifier_base, app, last=last)
        tests, opt, logs = (
            self.fresh(f"{name}-tests"),
            self.fresh(f"{name}-opt"),
            self.fresh(f"{name}-logs"),
        )
        for item in (layout.TEST_SH, layout.TEST_PATCH):
            shutil.copyfile(self.bundle / item, tests / Path(item).name)
        if test_sh is not None:
            (tests / Path(layout.TEST_SH).name).write_text(test_sh, encoding="utf-8")
        patch_name = Path(layout.CONTAINER_AGENT_PATCH).name
        agent_reason = agent.reason
        try:
            patch = read_beneath(agent.opt, patch_name, error=BundleError)
        except SelfbenchError as exc:
            patch, agent_reason = None, agent_reason or f"{name}: {exc}"
        if patch is not None:
            (opt / patch_name).write_bytes(patch)
        timeouts = self.definition.timeouts
        commands = [substitute_tests(self.definition.testCommand, [s]) for s in selectors]
        log = self.logs / f"{name}.log"
        phase = self.sandbox.run(
            _scripts.VERIFIER,
            (
                f"{timeouts.setupSeconds + timeouts.testsSeconds:g}",
                self.workdir(),
                f"{timeouts.testsSeconds:g}",
                str(LOG_LIMIT),
                *commands,
            ),
            log=log,
            timeout=float(timeouts.setupSeconds + timeouts.testsSeconds * (1 + len(commands))),
            mounts=Mounts(
                binds={
                    layout.CONTAINER_APP: app,
                    layout.CONTAINER_TESTS: tests,
                    layout.CONTAINER_SELFBENCH: opt,
                    "/logs": logs,
                },
                network=self.options.network,
                hidden=self.hidden(),
            ),
        )
        reward: Reward | None = None
        reward_error = None
        try:
            data = read_beneath(logs, _REWARD, error=RewardError, limit=_REWARD_LIMIT)
            if data is not None:
                reward = read_reward(data, f"{name} reward.json")
        except RewardError as exc:
            reward_error = str(exc)
        results = []
        for index, selector in enumerate(selectors):
            code = _status(logs, f"selfbench/selector-{index}.code")
            output = _workspace_text(logs, f"selfbench/selector-{index}.log")
            results.append((selector, commands[index], code, output))
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"selfbench: selector {selector!r} exited {code}\n{output}")
        if not self.options.keep:
            shutil.rmtree(app, ignore_errors=True)
        test_sh_code = _status(logs, "selfbench/test.sh.code")
        reason = agent_reason or reward_error
        return VerifierRun(name, reward, log, phase, tuple(results), reason, test_sh_code)

    # --- the verdict ----------------------------------------------------------------------------

    def validate(self) -> TaskReport:
        reason = self.prepare()
        prepare_log = str(self.logs / "prepare.log")
        if reason is not None:
            empty = RunReport(None, prepare_log)
            return TaskReport(
                self.definition.taskId, accepted=False, reason=reason, nop=empty, oracle=empty
            )
        several = len(self.definition.failToPass) > 1 and not self.options.parity
        selectors = tuple(self.definition.failToPass) if several else ()
        nop = self.verifier("nop", self.agent("nop", oracle=False), selectors)
        oracle_agent = self.agent("oracle", oracle=True, last=True)
        oracle = self.verifier("oracle", oracle_agent, selectors)
        checks: list[Check] = []
        reason = phase_reason(nop) or phase_reason(oracle)
        reason = reason or parity_reason(nop.reward, oracle.reward)
        reruns: list[VerifierRun] = []
        if not self.options.parity:
            scored = oracle.reward is not None and oracle.reward.reward == 1
            reruns = self.reruns(oracle_agent) if scored else []
            checks = self.beyond_checks(nop, oracle, reruns if scored else None)
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

    def run_report(self, run: VerifierRun) -> RunReport:
        """What the report says of one verifier run: its reward, log and the tests it ran."""
        commands = verifier_commands(self.definition)
        tests = run_outcomes(run.log, commands)
        return RunReport(run.reward, str(run.log), tests, outcome_counts(run.log, commands))

    def reruns(self, agent: _Agent) -> list[VerifierRun]:
        """The oracle's verifier again, each time from a fresh copy (the last takes the tree)."""
        count = self.options.reruns - MIN_RERUNS
        names = ["rerun", *(f"rerun-{index}" for index in range(2, count + 1))][:count]
        return [
            self.verifier(name, agent, (), last=index == count - 1)
            for index, name in enumerate(names)
        ]

    def beyond_checks(
        self, nop: VerifierRun, oracle: VerifierRun, reruns: Sequence[VerifierRun] | None
    ) -> list[Check]:
        """The Beyond checks; `reruns` is None when the oracle did not score 1."""
        return beyond_checks(self.definition, nop, oracle, reruns)


def _refuse_links(bundle: Path) -> None:
    """Refuse a bundle holding anything but directories and regular files.

    The sandbox binds the bundle's snapshot and solution and copies its verifier in: a link
    there would hand a host file to the phases. A compiled bundle never holds one (an export
    could not pack it either).

    Raises:
        BundleError: a link, pipe, socket or device is in the bundle, or it cannot be read.
    """
    try:
        if bundle.is_symlink():
            raise BundleError(f"{bundle}: a link; a bundle is a directory")
        for directory, dirnames, filenames in os.walk(bundle):
            for name in sorted([*dirnames, *filenames]):
                path = Path(directory, name)
                mode = path.lstat().st_mode
                if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                    raise BundleError(
                        f"{path}: not a regular file or directory; a bundle holds no links"
                    )
    except OSError as exc:
        raise BundleError(f"cannot read the bundle {bundle}: {os_reason(exc)}") from None


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a prepared tree with its owners, modes, links and ignored files (`cp -a`)."""
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["cp", "-a", "--reflink=auto", "--", f"{source}/.", f"{target}/"],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )


_MAX_TASKS = 8192
"""A phase's process cap (the sandbox also caps each user at half that)."""


def _limits(definition: TaskDefinition) -> Limits:
    """The task's resources as the local environment enforces them (storage is not)."""
    resources = definition.resources
    return Limits(cpus=float(resources.cpus), memory_mb=resources.memoryMb, pids=_MAX_TASKS)


def _take_tree(source: Path, target: Path, *, last: bool) -> None:
    """A fresh copy of a prepared tree for one run; its last user takes the tree itself."""
    if last:
        source.rename(target)
    else:
        _copy_tree(source, target)


def _collect_command(bundle: Path) -> str:
    """The `[[verifier.collect]]` command of the bundle's own `task.toml`.

    Raises:
        BundleError: task.toml cannot be read or has no collect command.
    """
    path = bundle / layout.TASK_TOML
    try:
        command = tomllib.loads(path.read_text(encoding="utf-8"))["verifier"]["collect"][0][
            "command"
        ]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, LookupError, TypeError):
        raise BundleError(f"{path}: no [[verifier.collect]] command") from None
    if not isinstance(command, str):
        raise BundleError(f"{path}: no [[verifier.collect]] command")
    return command


_REWARD = "verifier/reward.json"
"""Where `tests/test.sh` writes its verdict, below `/logs`."""
_REWARD_LIMIT = 1 << 16
_STATUS_LIMIT = 64


def _status(directory: Path, name: str) -> int:
    """An exit status a phase wrote to `directory/name`; -1 when it wrote none (or a link)."""
    try:
        data = read_beneath(directory, name, error=BundleError, limit=_STATUS_LIMIT)
        return int(data.decode("ascii").strip()) if data is not None else -1
    except (SelfbenchError, UnicodeDecodeError, ValueError):
        return -1


def _workspace_text(directory: Path, name: str) -> str:
    """The text of a log a phase wrote to `directory/name` ("" when none); a link or other
    non-regular file is not read, and said instead."""
    try:
        data = read_beneath(directory, name, error=BundleError, limit=LOG_LIMIT)
    except SelfbenchError as exc:
        return f"selfbench: {exc}\n"
    return data.decode("utf-8", errors="replace") if data is not None else ""


def _logs_root(options: LocalOptions) -> Path:
    return options.logs or Path(tempfile.mkdtemp(prefix="selfbench-logs-"))


@dataclass(frozen=True, slots=True)
class LocalRunner:
    """The `local` environment as a `Runner`: this machine's sandbox, with its own options."""

    options: LocalOptions = LocalOptions()

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
        workspace = self.options.workspace
        if workspace is not None and not workspace.is_dir():
            raise BundleError(f"--workspace {workspace}: not a directory")

    def run(
        self, tasks: Sequence[LocatedTask], *, jobs: int = 1, on_done: OnDone | None = None
    ) -> list[TaskReport]:
        """Validate located tasks in the sandbox; see `validate_local`."""
        return validate_local(tasks, options=self.options, jobs=jobs, on_done=on_done)


def validate_local(
    tasks: Sequence[LocatedTask],
    *,
    options: LocalOptions,
    jobs: int = 1,
    on_done: OnDone | None = None,
) -> list[TaskReport]:
    """Validate bundles locally, `jobs` tasks at a time; reports in the order given.

    A task whose bundle turns out broken while it runs is rejected with the reason; the others
    go on.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        BundleError: a task is given twice.
    """
    bwrap = require_sandbox()
    refuse_duplicates(tasks)
    users = choose_users()
    private = PrivateEntries.find()
    root_logs = _logs_root(options)
    root_logs.mkdir(parents=True, exist_ok=True)

    def one(located: LocatedTask) -> TaskReport:
        task_id = located.definition.taskId
        logs = root_logs / task_id
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True)
        root = Path(tempfile.mkdtemp(prefix="selfbench-ws-", dir=options.workspace))
        if options.keep:
            (logs / "workspace.txt").write_text(f"{root}\n", encoding="utf-8")
        try:
            # toolchains: the image's, provisioned (selfbench.toolchains)
            toolchains = provision_task(
                located.definition.toolchains, options.strict_toolchains, logs
            )
            sandbox = Sandbox(root, users, bwrap, _limits(located.definition), toolchains, private)
            report = _with_toolchains(_Task(located, sandbox, logs, options), toolchains)
        except (
            OSError,
            subprocess.CalledProcessError,
            SelfbenchError,
        ) as exc:
            # One task's broken bundle or a full disk rejects that task, not the whole batch.
            empty = RunReport(None, str(logs / "prepare.log"))
            why = str(exc) if isinstance(exc, SelfbenchError) else f"{type(exc).__name__}: {exc}"
            reason = f"validation failed: {why}".splitlines()[0]
            report = TaskReport(task_id, accepted=False, reason=reason, nop=empty, oracle=empty)
        finally:
            if not options.keep:
                shutil.rmtree(root, ignore_errors=True)
        if on_done is not None:
            on_done(report)
        return report

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, tasks))


def _with_toolchains(task: _Task, toolchains: Provisioned | None) -> TaskReport:
    report = task.validate()
    return replace(report, toolchains=toolchains.uses) if toolchains else report


def score_patch(located: LocatedTask, patch: bytes | None, *, options: LocalOptions) -> RunReport:
    """Run the verifier on an agent's patch (None: no patch collected), as Harbor would.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        ToolchainError: `options.strict_toolchains` and a toolchain is not the image's version.
    """
    return score_patches(located, [patch], options=options)[0]


def score_patches(
    located: LocatedTask, patches: Sequence[bytes | None], *, options: LocalOptions
) -> list[RunReport]:
    """`score_patch` for several patches, each on a fresh copy of one prepared task.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        BundleError: the bundle holds a link or a special file.
    """
    bwrap = require_sandbox()
    logs = _logs_root(options) / located.definition.taskId
    logs.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="selfbench-ws-", dir=options.workspace))
    try:
        toolchains = provision_task(located.definition.toolchains, options.strict_toolchains, logs)
        sandbox = Sandbox(root, choose_users(), bwrap, _limits(located.definition), toolchains)
        task = _Task(located, sandbox, logs, options)
        if task.prepare() is not None:
            return [RunReport(None, str(logs / "prepare.log")) for _ in patches]
        reports = []
        for index, patch in enumerate(patches):
            name = "agent" if len(patches) == 1 else f"agent-{index}"
            opt = task.fresh(f"{name}-collected")
            if patch is not None:
                (opt / Path(layout.CONTAINER_AGENT_PATCH).name).write_bytes(patch)
            last = index == len(patches) - 1
            run = task.verifier(name, _Agent(opt, None), (), last=last)
            reports.append(task.run_report(run))
        return reports
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)
