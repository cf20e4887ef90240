"""A task prepared once, then phases on fresh copies of its trees: the local environment's
workspace, and the public hook validation and `selfbench.evaluate` share (SPEC §7).

`TaskPhases.prepare` runs the images' own preparation script (`bundle/render_prepare.py`) stage
by stage: unpack the snapshot into `/app`, commit it as the base, run `setupCommand` once; a copy
is the verifier's tree, which also gets the gold patch's dependencies when it touches a manifest;
the agent's tree goes back to the base (ignored dependencies stay) with the root-only base git
dir. With the definition's `agentDependencies`, the dependencies stage runs before the copy, so
the agent's tree keeps what it installed too (never the patch itself: the stage restores every
path it touched). Then any number of phases, each on a fresh copy: `agent_phase` runs a script as
an agent phase (validation's `agent` runs `solve.sh` or nothing; evaluation runs the agent's
command), whose collect step writes the agent patch; `verifier` runs `tests/test.sh` on a fresh
copy of the verifier's tree with that patch alone.

Every file the host reads back from a workspace (reward, statuses, selector logs, the agent's
patch) goes through `_fs.read_beneath`, which follows no link, and a bundle holding a link is
refused before any phase.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tarfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from selfbench import activity
from selfbench._fs import read_beneath
from selfbench._shell import substitute_tests
from selfbench.artifacts.compiled import LocatedTask, read_bundle_file, read_collect_command
from selfbench.artifacts.report import Reward, RewardError, RunReport, read_reward
from selfbench.bundle import layout
from selfbench.bundle.render_prepare import (
    DEPENDENCY_PATCH,
    SEED,
    SNAPSHOT,
    Stage,
    prepare_arguments,
    prepare_script,
)
from selfbench.contract import TaskDefinition
from selfbench.environments.local import _scripts
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.disk import FULL_BYTES
from selfbench.environments.local.downloads import download_caches
from selfbench.environments.local.host_network import (
    HostNetwork,
    failure_error,
    network_failure,
)
from selfbench.environments.local.overlay import Overlay, own_tree, supported
from selfbench.environments.local.sandbox import (
    LOG_LIMIT,
    Mounts,
    PhaseResult,
    Sandbox,
    copy_tree,
    read_status,
    read_workspace_text,
)
from selfbench.environments.local.seeds import (
    SeedRefused,
    SeedStore,
    Snapshot,
    seed_key,
    seed_store,
)
from selfbench.environments.local.setup_cause import known_hint, setup_cause
from selfbench.environments.local.sharing import MACHINE
from selfbench.environments.local.verifier import (
    VerifierRun,
    outcome_counts,
    run_outcomes,
    verifier_commands,
)
from selfbench.environments.process import CalledProcessError
from selfbench.errors import (
    BundleError,
    InputError,
    SelfbenchError,
    translating,
)
from selfbench.toolchains.versions import expand_toolchains

__all__ = [
    "COLLECT_SECONDS",
    "DEFAULT_RERUNS",
    "FULL_BYTES",
    "MIN_RERUNS",
    "AgentPatch",
    "AgentPhase",
    "Limit",
    "LocalOptions",
    "TaskPhases",
    "VerifierVariant",
    "limits_struck",
    "setup_env_values",
]

COLLECT_SECONDS = 300.0
"""The collect step's own time limit in an agent phase."""

DEFAULT_RERUNS = 3
MIN_RERUNS = 2
"""`--reruns N`: pass-to-pass runs N times in all (once at the base, where it must pass too, and
in N - 1 verifier runs with the gold patch: the oracle's and N - 2 reruns, each from a fresh
copy of the prepared tree); fail-to-pass runs twice in each of those N - 1 runs (the verifier's
own determinism repeat). So N is at least 2, and the default 3 adds one rerun to the oracle."""

Limit = Literal["time", "memory", "processes", "user-processes", "disk"]
"""A limit a phase (or a step of it) ran into, as the host reads it: never from the phase's
output, which the code under test can write. "processes" is the phase's control group's cap,
"user-processes" the per-user one (`ulimit -u`, `Limits.user_pids`)."""


def limits_struck(
    result: PhaseResult, *, free_bytes: int | None, timed_out: bool = False
) -> tuple[Limit, ...]:
    """The limits a phase ran into: its time (the sandbox's, or a step's own when `timed_out`),
    its control group's memory (a kernel OOM kill) and process cap (a refused fork), a user's
    process cap (a user's count, as the host sampled it, at `ulimit -u`), and the disk
    (`free_bytes` left on its workspace's filesystem as it ended, None when unknown)."""
    struck: list[Limit] = []
    if result.timed_out or timed_out:
        struck.append("time")
    if result.out_of_memory:
        struck.append("memory")
    if result.process_limit:
        struck.append("processes")
    if result.user_process_limit:
        struck.append("user-processes")
    if free_bytes is not None and free_bytes < FULL_BYTES:
        struck.append("disk")
    return tuple(struck)


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
    host_network: HostNetwork = field(default_factory=HostNetwork)
    """The host's CA certificates and proxies, for setup's networked stages only (see
    `host_network.py`); `setup_env` wins over it for a name both set."""
    reruns: int = DEFAULT_RERUNS
    """How many times fail-to-pass and pass-to-pass run in all (see `MIN_RERUNS`)."""
    ceilings: Ceilings | None = None
    """The most a task may use on this host (None: `Ceilings.for_host()`; see `ceilings.py`)."""


def setup_env_values(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """`--setup-env NAME`s with their values from this process's environment (the values are read
    at each start, never stored: a run directory records the names only).

    Raises:
        InputError: a name that is not a variable name, or a variable that is not set.
    """
    pairs: dict[str, str] = {}
    for name in names:
        if not name.isidentifier() or not name.isascii():
            raise InputError(f"--setup-env {name}: not an environment variable name")
        if name not in os.environ:
            raise InputError(f"--setup-env {name}: not set in this environment")
        pairs[name] = os.environ[name]
    return tuple(pairs.items())


@dataclass(frozen=True, slots=True)
class AgentPatch:
    """What an agent phase hands the verifier: the host directory holding `agent.patch` (nothing
    else of the phase reaches it), and what went wrong when it did."""

    opt: Path
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class AgentPhase:
    """One agent phase as it ran: its patch, the statuses its script wrote, the sandbox's
    result and the phase's log."""

    patch: AgentPatch
    status: Path
    """The directory the script wrote exit statuses to (`/run/selfbench-status`; `read_status`)."""
    result: PhaseResult
    log: Path
    free_bytes: int | None = None
    """The free space on the workspace's filesystem as the phase ended (None: unknown)."""


@dataclass(frozen=True, slots=True)
class VerifierVariant:
    """A verifier run unlike the bundle's own: another `tests/test.sh`, and more mounts."""

    test_sh: str | None = None
    """The script run instead of the bundle's `tests/test.sh` (None: the bundle's)."""
    binds: Mapping[str, Path] = field(default_factory=dict)
    """Writable, besides the verifier's own."""
    ro_binds: Mapping[str, Path] = field(default_factory=dict)
    """Read-only."""


_VERIFIER_TREE = "verifier-prepared"
"""The verifier's prepared tree, in the workspace's root."""


@dataclass
class TaskPhases:
    """One task in its workspace: `prepare()` once, then any number of phases, each on a fresh
    copy of a prepared tree (`agent_phase`/`agent`, then `verifier` on the collected patch)."""

    located: LocatedTask
    sandbox: Sandbox
    logs: Path
    options: LocalOptions
    reuse_key: str | None = None
    """The preparation's key when its workspace is parked for reuse afterwards
    (`workspaces.py`): no run then takes a prepared tree, each copies it."""
    reused_log: Path | None = None
    """The preparation log of the setup that prepared this (adopted) workspace already: then
    `prepare` runs no stage."""
    seeding: bool = False
    """Start the base stage from a dependency seed of the same manifests, and leave one
    (`seeds.py`); as `reuse_key`, drafting, quality and validation only."""
    prepared: Path = field(init=False)
    verifier_base: Path = field(init=False)
    base_git: Path = field(init=False)
    ready: bool = field(init=False, default=False)
    """Whether `prepare` succeeded."""
    _owning: threading.Lock = field(init=False, default_factory=threading.Lock, repr=False)
    """Held while the verifier tree is made the verifier's (`_verifier_overlay`)."""

    LASTING: ClassVar[tuple[str, ...]] = ("prepared", _VERIFIER_TREE, "opt-base")
    """The prepared trees, relative to the workspace's root (the sandbox's are its own)."""

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
        activity.step("setting up")
        if self.reused_log is not None:
            self.verifier_base = self.sandbox.root / _VERIFIER_TREE
            self._log(
                "selfbench: setup skipped: this workspace was prepared with the same inputs "
                f"(snapshot, setupCommand, toolchains, dependency patch; log {self.reused_log})"
            )
            self.ready = True
            return None
        reason = self._prepare()
        self.ready = reason is None
        return reason

    def _prepare(self) -> str | None:
        self.prepared.mkdir()
        self.base_git.mkdir()
        self.verifier_base = self.fresh(_VERIFIER_TREE)
        # the image's toolchain steps need the image's toolchains (none with the host's own)
        declared = self.definition.toolchains if self.sandbox.toolchains else ()
        arguments = prepare_arguments(self.definition, expand_toolchains(declared))
        app = {layout.CONTAINER_APP: self.prepared}
        reason = self._base(arguments, app)
        if reason is not None:
            return reason
        dependency_patch = self.bundle / layout.DEPENDENCY_PATCH
        # `agentDependencies`: the agent's tree is the one after the dependencies stage too
        both = self.definition.agentDependencies and dependency_patch.is_file()
        if both and (reason := self._dependencies(self.prepared, arguments)) is not None:
            return reason
        copy_tree(self.prepared, self.verifier_base)  # the verifier image's tree: set up
        if dependency_patch.is_file() and not both:
            reason = self._dependencies(self.verifier_base, arguments)
            if reason is not None:
                return reason
        base_git = {**app, layout.CONTAINER_SELFBENCH: self.base_git}
        return self.setup("agent", "the base copy", (), binds=base_git, ro_binds={}, network=False)

    def _base(self, arguments: tuple[str, ...], app: dict[str, Path]) -> str | None:
        """Run the stage `base`: from a dependency seed when `seeding` and one of the same
        manifests is kept (`seeds.py`), then again from the snapshot alone if that failed;
        a setup from the snapshot alone leaves its seed for the next."""
        snapshot = {SNAPSHOT: self.bundle / layout.TESTS_SNAPSHOT}
        if not self.seeding:
            return self.setup("base", "setupCommand", arguments, binds=app, ro_binds=snapshot)
        store = seed_store()
        try:
            inventory = Snapshot.read(self.bundle / layout.TESTS_SNAPSHOT)
        except (OSError, tarfile.TarError):  # the stage itself says what is wrong with it
            return self.setup("base", "setupCommand", arguments, binds=app, ro_binds=snapshot)
        key = seed_key(self.located, inventory, self.sandbox.toolchains, self.options.setup_env)
        with store.use(key) as seed:
            if seed is None:
                reason = self.setup("base", "setupCommand", arguments, binds=app, ro_binds=snapshot)
                if reason is None:
                    self._keep_seed(store, key, inventory)
                return reason
            seeded = {**snapshot, SEED: seed}
            reason = self.setup("base", "setupCommand", arguments, binds=app, ro_binds=seeded)
        if reason is None:
            return None
        self._log(
            f"selfbench: the seeded setup failed ({reason}); setting up from the snapshot alone"
        )
        shutil.rmtree(self.prepared)
        self.prepared.mkdir()
        return self.setup("base", "setupCommand", arguments, binds=app, ro_binds=snapshot)

    def _keep_seed(self, store: SeedStore, key: str, inventory: Snapshot) -> None:
        """Keep what this setup installed as the seed of the next with the same manifests."""
        try:
            kept = store.record(key, self.prepared, inventory)
        except (OSError, CalledProcessError, SeedRefused) as error:
            self._log(f"selfbench: no seed kept: {error}")
            return
        if kept:
            self._log(
                f"selfbench: seed kept for the next setup of the same manifests: {', '.join(kept)}"
            )

    def _log(self, line: str) -> None:
        """Add a line of selfbench's own to `prepare.log`."""
        with (self.logs / "prepare.log").open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def _dependencies(self, tree: Path, arguments: tuple[str, ...]) -> str | None:
        """Run the stage `dependencies` on `tree`: the gold's manifests installed, then restored
        to the base; a reason when it failed."""
        return self.setup(
            "dependencies",
            "the dependency setup",
            arguments,
            binds={layout.CONTAINER_APP: tree},
            ro_binds={DEPENDENCY_PATCH: self.bundle / layout.DEPENDENCY_PATCH},
        )

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
        """Run one preparation stage (root's home writable; a networked one with a set of the
        process's download caches, `downloads.py`); a reason when it failed.

        Raises:
            SetupNetworkError: a networked stage failed on the machine's network (its log
                says TLS, DNS, a refused or timed-out connection): nobody's task is to blame.
        """
        log = self.logs / "prepare.log"
        seconds = float(self.definition.timeouts.setupSeconds)
        environment = dict(self.options.setup_env)
        if network:  # the host's network configuration serves the stages that reach a registry
            host = self.options.host_network
            host.used()
            variables, host_binds = host.mounts(host.write_bundle(self.sandbox.root))
            environment = {**variables, **environment}
            ro_binds = {**ro_binds, **host_binds}
        start = log.stat().st_size if log.is_file() else 0
        with contextlib.ExitStack() as stack:
            lease = None
            if network:  # the process's download caches, this stage's alone while it runs
                lease = stack.enter_context(download_caches().lease(self.definition.repo))
                binds = {**binds, **lease.binds, **lease.cargo_binds(self.sandbox.tool_state())}
                environment = {**lease.environment, **environment}
            result = self.sandbox.run(
                prepare_script(stage, seeded=SEED in ro_binds),
                arguments,
                log=log,
                timeout=seconds,
                mounts=Mounts(
                    binds=binds,
                    ro_binds=ro_binds,
                    network=network,
                    hidden=self.hidden(),
                    root_home_writable=True,
                    environment=environment,
                    tool_state="setup",
                ),
            )
            if lease is not None and result.exit_code == 0 and not result.timed_out:
                lease.keep(self.sandbox.tool_state())
        if result.timed_out:
            return f"setup: {label} timed out after {seconds:g} s (log {log})"
        if result.exit_code != 0:
            failure = network_failure(_log_since(log, start)) if network else None
            if failure is not None:
                raise failure_error(failure, label, log)
            return self._failed(label, result.exit_code, log, start, result.out_of_memory)
        return None

    def _failed(self, label: str, code: int, log: Path, start: int, out_of_memory: bool) -> str:
        """A failed stage's reason: the line of its output that names the failure, and what to
        do when that is known (`setup_cause`), or when it ran out of memory."""
        output = _log_since(log, start)
        cause = setup_cause(output)
        said = f": {cause}" if cause else ""
        hint = self.memory_hint() if out_of_memory else known_hint(output)
        return f"setup: {label} failed{said} (exit {code}; log {log})" + (
            f"; {hint}" if hint else ""
        )

    def collect_command(self) -> str:
        """The collect command of the bundle's own `task.toml`.

        Raises:
            BundleError: task.toml cannot be read or has no collect command.
        """
        return read_collect_command(self.bundle)

    def agent_phase(  # noqa: PLR0913 - a phase's script, its arguments and its mounts
        self,
        name: str,
        script: str,
        arguments: Sequence[str],
        *,
        timeout: float,
        log: Path,
        writable_app: bool,
        solution: bool = False,
        binds: Mapping[str, Path] | None = None,
        ro_binds: Mapping[str, Path] | None = None,
        last: bool = False,
        environment: Mapping[str, str] | None = None,
    ) -> AgentPhase:
        """Run `script` as an agent phase: `/app` a fresh copy of the agent's prepared tree
        (read-only as it is unless `writable_app`; `last` takes the tree itself),
        `/opt/selfbench` a fresh copy of the root-only base git dir where the collect step
        writes `agent.patch`, `/run/selfbench-status` for the script's statuses, `/solution`
        only with `solution`, and `binds`/`ro_binds` besides; `environment` is added to the
        script's environment (never written to a file). The tool state setup prepared
        (`/opt/uv-cache`, `/usr/local/cargo`, ...) is a private copy when the agent runs
        (`writable_app`), so nothing the phase writes there reaches the verifier or a later
        phase, and setup's read-only otherwise.
        """
        opt = self.fresh(f"{name}-agent-opt")
        status = self.fresh(f"{name}-agent-status")
        copy_tree(self.base_git, opt)
        all_binds = {layout.CONTAINER_SELFBENCH: opt, "/run/selfbench-status": status}
        all_ro_binds: dict[str, Path] = {}
        app = self.sandbox.root / f"{name}-agent-app"
        if writable_app:
            _take_tree(self.prepared, app, last=last and self.reuse_key is None)
            all_binds[layout.CONTAINER_APP] = app
        else:
            all_ro_binds[layout.CONTAINER_APP] = self.prepared
        if solution:
            all_ro_binds["/solution"] = self.bundle / "solution"
        all_binds.update(binds or {})
        all_ro_binds.update(ro_binds or {})
        try:
            result = self.sandbox.run(
                script,
                arguments,
                log=log,
                timeout=timeout,
                mounts=Mounts(
                    binds=all_binds,
                    ro_binds=all_ro_binds,
                    hidden=self.hidden(),
                    environment=environment or {},
                    tool_state="private" if writable_app else "read-only",
                ),
            )
        finally:
            if not self.options.keep:
                shutil.rmtree(app, ignore_errors=True)
        return AgentPhase(AgentPatch(opt), status, result, log, result.free_bytes)

    def agent(self, name: str, *, oracle: bool, last: bool = False) -> AgentPatch:
        """Run validation's agent phase (`solve.sh`, or nothing) and the collect step; where
        agent.patch is, and how it went."""
        log = self.logs / f"{name}.log"
        phase = self.agent_phase(
            name,
            _scripts.AGENT,
            ("oracle" if oracle else "nop", f"{COLLECT_SECONDS:g}", self.collect_command()),
            timeout=float(self.definition.timeouts.agentSeconds) + COLLECT_SECONDS,
            log=log,
            writable_app=oracle,
            solution=oracle,
            last=last,
        )
        status = phase.status
        reason = None
        if phase.result.timed_out:
            reason = f"{name}: the agent phase timed out (log {log})"
        elif oracle and read_status(status, "solve") != 0:
            reason = (
                f"{name}: solution/solve.sh failed (exit {read_status(status, 'solve')}; log {log})"
            )
        elif read_status(status, "collect") != 0:
            reason = (
                f"{name}: the collect step failed (exit {read_status(status, 'collect')}; "
                f"log {log})"
            )
        return AgentPatch(phase.patch.opt, reason)

    def verifier(
        self,
        name: str,
        agent: AgentPatch,
        selectors: Sequence[str],
        test_sh: str | None = None,
        *,
        last: bool = False,
        binds: Mapping[str, Path] | None = None,
        ro_binds: Mapping[str, Path] | None = None,
    ) -> VerifierRun:
        """Run `tests/test.sh` (or `test_sh`) on a fresh copy of the verifier tree, then each
        selector on its own. Of the agent phase, only `agent.patch` in `agent.opt` is used.
        `binds` (writable) and `ro_binds` are mounted besides the verifier's own."""
        app = self.sandbox.root / f"{name}-app"
        overlay = self._verifier_overlay(app, last=last and self.reuse_key is None)
        try:
            layered = {app: overlay} if overlay is not None else {}
            return self._verify(name, app, agent, selectors, test_sh, binds, ro_binds, layered)
        finally:
            if overlay is not None:
                overlay.remove(app)
            elif not self.options.keep:
                shutil.rmtree(app, ignore_errors=True)

    def _verify(  # noqa: PLR0913, PLR0917 - `verifier`'s arguments, and its tree at `app`
        self,
        name: str,
        app: Path,
        agent: AgentPatch,
        selectors: Sequence[str],
        test_sh: str | None,
        binds: Mapping[str, Path] | None,
        ro_binds: Mapping[str, Path] | None,
        overlays: Mapping[Path, Overlay],
    ) -> VerifierRun:
        tests, opt, logs = (
            self.fresh(f"{name}-tests"),
            self.fresh(f"{name}-opt"),
            self.fresh(f"{name}-logs"),
        )
        for item in (layout.TEST_SH, layout.TEST_PATCH):  # never through a link
            (tests / Path(item).name).write_bytes(read_bundle_file(self.bundle, item))
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
        with MACHINE.shared():  # a run that must see a test alone waits for it (`sharing`)
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
                        **(binds or {}),
                    },
                    ro_binds=dict(ro_binds or {}),
                    overlays=overlays,
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
            code = read_status(logs, f"selfbench/selector-{index}.code")
            output = read_workspace_text(logs, f"selfbench/selector-{index}.log")
            results.append((selector, commands[index], code, output))
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"selfbench: selector {selector!r} exited {code}\n{output}")
        test_sh_code = read_status(logs, "selfbench/test.sh.code")
        reason = agent_reason or reward_error
        return VerifierRun(
            name, reward, log, phase, tuple(results), reason, test_sh_code, phase.free_bytes
        )

    def _verifier_overlay(self, app: Path, *, last: bool) -> Overlay | None:
        """The verifier tree shown at `app` as an overlay (`overlay.py`), its lower layer owned
        by the verifier first, as the verifier script would make each copy; None when `app` is
        the tree itself instead (its last user takes it, `keep` keeps each run's whole tree, or
        this machine cannot mount overlays), then made here."""
        base = self.verifier_base
        if last or self.options.keep or not supported(self.sandbox.root, base, app):
            _take_tree(base, app, last=last)
            return None
        users = self.sandbox.users
        with self._owning:  # variants start together: the first owns the tree, once
            own_tree(base, users.verifier, users.verifier)
        return Overlay.beside(base, app)

    # --- the verdict ----------------------------------------------------------------------------

    def run_report(self, run: VerifierRun) -> RunReport:
        """What the report says of one verifier run: its reward, log and the tests it ran."""
        commands = verifier_commands(self.definition)
        tests = run_outcomes(run.log, commands)
        return RunReport(run.reward, str(run.log), tests, outcome_counts(run.log, commands))


_REWARD = "verifier/reward.json"
"""Where `tests/test.sh` writes its verdict, below `/logs`."""
_REWARD_LIMIT = 1 << 16


def _refuse_links(bundle: Path) -> None:
    """Refuse a bundle holding anything but directories and regular files.

    The sandbox binds the bundle's snapshot and solution and copies its verifier in: a link
    there would hand a host file to the phases. A compiled bundle never holds one (an export
    could not pack it either).

    Raises:
        BundleError: a link, pipe, socket or device is in the bundle, or it cannot be read.
    """
    with translating(BundleError, f"read the bundle {bundle}"):
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


def _take_tree(source: Path, target: Path, *, last: bool) -> None:
    """A fresh copy of a prepared tree for one run; its last user takes the tree itself."""
    if last:
        source.rename(target)
    else:
        copy_tree(source, target)


def _log_since(log: Path, start: int) -> str:
    """What a phase appended to `log` from byte `start` on (at most `LOG_LIMIT` bytes)."""
    try:
        with log.open("rb") as handle:
            handle.seek(start)
            return handle.read(LOG_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""
