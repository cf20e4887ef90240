"""Agent trials in the local sandbox, on the bundle's own scripts, as local validation runs them.

Per task, the workspace is prepared once (`setupCommand`, the root-only base git dir, the
verifier's tree). Per trial:

1. the **agent phase** on a fresh copy of the prepared tree (the agent image: the base commit,
   setup done, no held-out tests, no solution, no dependency patch): the agent runs as the
   `agent` user in `/app`, without a network (a ready-made harness: only its model API's
   hosts, `environments.egress`), under the task's `agentSeconds`, with the
   instruction in `$SELFBENCH_INSTRUCTION` and in the read-only file
   `$SELFBENCH_INSTRUCTION_FILE`; then the collect command of the bundle's `task.toml` diffs
   `/app` against the true base into the agent patch;
2. the **verifier phase** on a fresh copy of the verifier tree: `tests/test.sh` with only that
   patch, once the tamper scan (`evaluate.tamper`) has read it: its findings mark the trial
   suspect and never change its reward.

The agent sees its copy of `/app` and nothing of the bundle, the solution (except the built-in
`oracle`, which applies it with `solution/solve.sh`), the held-out tests or other trials; only
its collected diff reaches the verifier.

A phase with the agent's code in it (the agent phase and its collect step over the agent's
workspace; the verifier, when the patch is not empty) that gives no verdict is not excused: the
limit it ran into is named (`Limit`, from the control group, the exit statuses and the time
limits), and the oracle runs again in this workspace with the same limits (`PreparedTask.prove`).
When it passes, the failure is the agent's; when it fails too, the infrastructure's. A
ready-made harness that never reached its model's API (every connection of its relays failed:
a proxy refused, the host could not connect) and did not pass is the infrastructure's too. Its
API keys reach its phase in the environment only, never a file.

A harness may leave its trajectory as `/run/selfbench-agent/trajectory.json` (ATIF),
`trajectory.jsonl` (its own lines) or `trajectory.md` (aider's chat history); it is kept beside
the trial's logs (`<name>-trajectory.json`, …), read without following a link, at most
`TRAJECTORY_LIMIT` bytes.

The agent phase gets a private copy of the images' shared tool state (`/opt/uv-cache`, ...), so
what it writes there reaches neither the verifier nor a later trial.

This module composes the local environment's phases through their public hook
(`selfbench.environments.local.phases.TaskPhases`): the workspace, the collect step and the
verifier are the ones validation runs; only the agent phase's script is this module's. A setup
that fails is tried once more in a fresh workspace before the task's trials fail as
infrastructure.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from selfbench._fs import open_beneath, read_beneath
from selfbench.artifacts.compiled import read_bundle_file
from selfbench.bundle import layout
from selfbench.environments import _forward
from selfbench.environments.egress import EGRESS_DIR, FORWARD_READY, RelayLog, plan_for, relayed
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.disk import remove_workspace
from selfbench.environments.local.phases import (
    COLLECT_SECONDS,
    AgentPatch,
    AgentPhase,
    Limit,
    LocalOptions,
    TaskPhases,
    limits_struck,
)
from selfbench.environments.local.sandbox import (
    LOG_LIMIT,
    Sandbox,
    Users,
    leased_users,
    read_status,
    require_sandbox,
)
from selfbench.environments.local.verifier import (
    VerifierRun,
    forged_reason,
    phase_reason,
    run_outcomes,
    verifier_commands,
    verifier_timed_out,
)
from selfbench.environments.process import CalledProcessError
from selfbench.errors import EvalError, SelfbenchError, SetupNetworkError
from selfbench.evaluate.agents import (
    INSTRUCTION_ENV,
    INSTRUCTION_FILE_ENV,
    AgentSpec,
    BuiltinAgent,
    CommandAgent,
    HarnessAgent,
    Usage,
    parse_usage,
)
from selfbench.evaluate.bench import BenchTask
from selfbench.evaluate.classify import (
    KILLED_EXIT,
    TIMEOUT_EXIT,
    Proof,
    TrialFacts,
    classify,
    named_cause,
    oracle_proof,
)
from selfbench.evaluate.harnesses import (
    HARNESS_CA,
    HARNESS_ROOT,
    HARNESS_RUN,
    HARNESSES,
    TRAJECTORY_DIR,
    host_ca_bundle,
    install_harness,
)
from selfbench.evaluate.tamper import Finding, read_suspect
from selfbench.evaluate.trial_files import TRAJECTORY_LIMIT, TRAJECTORY_SUFFIXES
from selfbench.toolchains import provision_task

__all__ = ["LOCAL_NETWORK", "LocalTrial", "PreparedTask", "prepared_task"]

LOCAL_NETWORK = "none (only a ready-made harness reaches a host: its model's API)"
"""What network the agent phase has locally, as the report says."""

_HARNESS_MARGIN = 60.0
_INSTRUCTION = "/run/selfbench-task/instruction.md"
_ORACLE = BuiltinAgent("oracle", "oracle")
_PROCESS_LIMITS: tuple[Limit, ...] = ("processes", "user-processes")
_PATCH_NAME = Path(layout.CONTAINER_AGENT_PATCH).name

_AGENT = rf"""
set -uo pipefail
mode="$1"; seconds="$2"; collect_seconds="$3"; collect="$4"; command="$5"; forward="$6"
if [ -n "$forward" ]; then
  (exec bash -c "$forward") </dev/null &
  for _ in $(seq 300); do [ -e {FORWARD_READY} ] && break; sleep 0.1; done
  [ -e {FORWARD_READY} ] || echo "selfbench: the allow-list's forwarder did not start"
fi
started=$(date +%s%N)
status=0
if [ "$mode" != nop ]; then
  chown -R agent:agent /app /opt/uv-cache
  if [ "$mode" = oracle ]; then
    (cd /app && exec timeout -k 5 "$seconds" runuser -u agent -- env HOME=/home/agent \
      bash /solution/solve.sh) </dev/null >/run/selfbench-agent/output.log 2>&1
  else
    (cd /app && exec timeout -k 5 "$seconds" runuser -u agent -- env HOME=/home/agent \
      {INSTRUCTION_FILE_ENV}={_INSTRUCTION} {INSTRUCTION_ENV}="$(cat {_INSTRUCTION})" \
      bash -c "$command") </dev/null >/run/selfbench-agent/output.log 2>&1
  fi
  status=$?
  pkill -KILL -u agent >/dev/null 2>&1 || true
fi
finished=$(date +%s%N)
echo "$status" >/run/selfbench-status/agent
echo $(( (finished - started) / 1000000 )) >/run/selfbench-status/agent-ms
echo "selfbench: agent ($mode) exited $status"
echo "selfbench: collect"
timeout -k 5 "$collect_seconds" bash -c "$collect"
echo "$?" >/run/selfbench-status/collect
"""


@dataclass(frozen=True, slots=True)
class LocalTrial:
    """What one local trial observed."""

    facts: TrialFacts
    tests: dict[str, str]
    agent_seconds: float | None
    verifier_seconds: float | None
    usage: Usage
    log: str
    network: str = LOCAL_NETWORK
    """The agent phase's network, as the record says it."""
    suspect: tuple[Finding, ...] = ()
    """The tamper scan's findings on the collected patch (`evaluate.tamper`)."""


@dataclass
class PreparedTask:
    """A task's workspace, set up once; trials run in it one after another."""

    task: BenchTask
    phases: TaskPhases
    setup_error: str | None
    proof: Proof | None = None
    """The oracle's passing run on this workspace, once one ran (`prove`)."""
    _proofs: int = field(default=0, repr=False)

    def run(self, agent: AgentSpec, name: str) -> LocalTrial:
        """Run one trial of `agent`; `name` names its directories and logs (unique per task).

        A trial whose phase with the agent's code gave no verdict carries the oracle's `prove`.
        A harness that breaks (a full disk, a copy that fails) fails the trial as
        infrastructure, not the evaluation.
        """
        if self.setup_error is not None:
            return self._broken(self.setup_error)
        try:
            trial = self._run(agent, name)
            if trial.facts.stopped is not None:
                trial = replace(trial, facts=replace(trial.facts, proof=self.prove()))
        except (OSError, CalledProcessError, SelfbenchError) as exc:
            why = str(exc) if isinstance(exc, SelfbenchError) else f"{type(exc).__name__}: {exc}"
            return self._broken(f"the harness failed: {why}".splitlines()[0])
        return trial

    def prove(self) -> Proof:
        """Run the oracle again in this workspace, with the task's limits, as a trial: does the
        machine run the task? A passing run is kept and answers every later call.

        Raises:
            OSError, CalledProcessError, SelfbenchError: the harness broke (as `run`'s).
        """
        if self.proof is not None:
            return self.proof
        self._proofs += 1
        oracle = self._run(_ORACLE, f"proof-{self._proofs}")
        proof = oracle_proof(classify(oracle.facts), oracle.log)
        if proof.passed:
            self.proof = proof
        return proof

    def _broken(self, reason: str) -> LocalTrial:
        facts = TrialFacts(reward=None, infrastructure=reason)
        return LocalTrial(facts, {}, None, None, Usage(), str(self.phases.logs))

    def _run(self, agent: AgentSpec, name: str) -> LocalTrial:
        """One trial, its facts as observed (no proof)."""
        phase, usage, network, unreached = self._agent_phase(agent, name)
        harness = _harness_reason(phase, self.phases)
        suspect = read_suspect(
            phase.patch.opt,
            _PATCH_NAME,
            held_out=self.task.held_out_paths(),
            gold_patch=self.task.gold_patch(),
        )  # before the verifier runs: what it scores is what was scanned
        run = self.phases.verifier(name, phase.patch, ())
        verifier = phase_reason(run)
        if verifier is None and run.reward is None and run.phase.out_of_memory:
            verifier = f"out of memory: {self.phases.memory_hint()}"
        # the agent's code: in its phase (solve.sh for the oracle), and in a non-empty patch
        in_agent = agent.kind != "nop"
        in_verifier = in_agent and harness is None and _patched(phase.patch)
        cause = _agent_cause(phase) if in_agent else None
        if in_verifier and cause is None:
            cause = _verifier_cause(run)
        stopped = harness or verifier
        own = (in_agent and harness is not None) or in_verifier
        milliseconds = read_status(phase.status, "agent-ms")
        seconds = milliseconds / 1000 if milliseconds >= 0 else None
        facts = TrialFacts(
            reward=run.reward,
            agent_exit=read_status(phase.status, "agent") if agent.kind != "nop" else 0,
            agent_seconds=seconds,
            agent_seconds_limit=float(self.task.located.definition.timeouts.agentSeconds),
            infrastructure=None if own else stopped,
            stopped=stopped if own else None,
            cause=cause,
            forged=forged_reason(run.log) if run.reward is not None and run.reward.forged else None,
        )
        if unreached is not None and not (run.reward is not None and run.reward.reward == 1):
            # the host's network (a proxy that refused, an API down), not the agent
            why = f"the harness never reached its model's API: {unreached}"
            facts = replace(facts, infrastructure=why, stopped=None, cause=None)
        commands = verifier_commands(self.phases.definition)
        tests = run_outcomes(run.log, commands) if run.reward else {}
        log = str(phase.log)
        return LocalTrial(facts, tests, seconds, run.phase.seconds, usage, log, network, suspect)

    def _agent_phase(
        self, agent: AgentSpec, name: str
    ) -> tuple[AgentPhase, Usage, str, str | None]:
        """The agent phase; the usage it reported; its network; why a harness never reached
        its model's API, when every connection its relays tried failed."""
        with ExitStack() as stack:
            harness = _HarnessMounts.for_agent(agent, self.phases, name, stack)
            phase, usage = self._run_agent_phase(agent, name, harness)
        unreached = harness.relays.unreached() if harness.relays is not None else None
        return phase, usage, harness.network, unreached

    def _run_agent_phase(
        self, agent: AgentSpec, name: str, harness: _HarnessMounts
    ) -> tuple[AgentPhase, Usage]:
        phases = self.phases
        command = agent.command if isinstance(agent, CommandAgent) else harness.command
        output = phases.fresh(f"{name}-agent-out")
        output.chmod(0o1777)  # the agent may add its trajectory; output.log stays root's
        instruction = phases.sandbox.root / f"{name}-instruction.md"
        # never through a link: the bundle may be a plain copy of an export's tasks
        instruction.write_bytes(read_bundle_file(phases.bundle, layout.INSTRUCTION))
        seconds = float(phases.definition.timeouts.agentSeconds)
        log = phases.logs / f"{name}-agent.log"
        phase = phases.agent_phase(
            name,
            _AGENT,
            (_MODES[agent.kind], f"{seconds:g}", f"{COLLECT_SECONDS:g}", phases.collect_command(),
             command, harness.forward),
            timeout=seconds + COLLECT_SECONDS + _HARNESS_MARGIN,
            log=log,
            writable_app=agent.kind != "nop",
            solution=agent.kind == "oracle",
            binds={TRAJECTORY_DIR: output},
            ro_binds={_INSTRUCTION: instruction, **harness.ro_binds},
            environment=harness.environment,
        )  # fmt: skip
        text = _agent_output(output, log)
        _keep_trajectory(output, phases.logs, name)
        return phase, parse_usage(text)


def _keep_trajectory(directory: Path, logs: Path, name: str) -> None:
    """Copy the harness's trajectory, if it left one in `directory`, to `logs` beside the
    trial's logs (a link or a non-regular file is none; at most `TRAJECTORY_LIMIT` bytes)."""
    for suffix in TRAJECTORY_SUFFIXES:
        try:
            data = read_beneath(
                directory, f"trajectory{suffix}", error=EvalError, limit=TRAJECTORY_LIMIT
            )
        except EvalError:
            continue
        if data is not None:
            (logs / f"{name}-trajectory{suffix}").write_bytes(data)
            return


@dataclass(frozen=True, slots=True)
class _HarnessMounts:
    """What a ready-made harness adds to its agent phase: its install and files read-only, the
    host's CA bundle, the allow-list's relays (open while the phase runs), the forwarder's
    command, its script, and its keys (in the phase's environment only)."""

    command: str = ""
    forward: str = ""
    ro_binds: dict[str, Path] = field(default_factory=dict)
    network: str = LOCAL_NETWORK
    environment: dict[str, str] = field(default_factory=dict, repr=False)
    """The harness's key variables: the phase's environment, never a file."""
    relays: RelayLog | None = None
    """What the allow-list's relays did while the phase ran."""

    @classmethod
    def for_agent(
        cls, agent: AgentSpec, phases: TaskPhases, name: str, stack: ExitStack
    ) -> _HarnessMounts:
        """None of it for an agent that is not a harness; else the harness installed (once per
        machine), its `env` file (no keys), its `/etc/hosts`, the host's CA bundle and its
        relays (through the host's proxy, if it names one), open until `stack` closes; a relay
        that cannot reach its endpoint says why in the trial's agent log.

        Raises:
            EvalError: the harness cannot be installed, or its model's host is not known.
            EgressError: the model's base URL or the host's proxy for it is not usable.
            OSError: a relay's socket cannot be made.
        """
        if not isinstance(agent, HarnessAgent):
            return cls()
        harness = HARNESSES[agent.harness]
        install = install_harness(harness)
        plan = plan_for(harness.endpoints(agent.model, os.environ), os.environ)
        bundle = host_ca_bundle(os.environ)
        files = phases.fresh(f"{name}-harness")
        files.chmod(0o755)
        variables = harness.variables(agent.model, os.environ, plan, ca=bool(bundle))
        keys = harness.keys(os.environ)
        lines = [
            f"export {key}={shlex.quote(value)}"
            for key, value in variables.items()
            if key not in keys
        ]
        (files / "env").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (files / "hosts").write_text(plan.hosts_file(), encoding="ascii")
        shutil.copyfile(Path(_forward.__file__), files / "forward.py")
        if len(bundle) > 1:  # the system's and the added certificates, in one file
            (files / "ca.pem").write_bytes(b"\n".join(path.read_bytes() for path in bundle))
        for child in files.iterdir():
            child.chmod(0o644)
        # a short host path: a Unix socket's path has at most 107 bytes
        relays = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="selfbench-net-")))
        relay_log = RelayLog.appending(phases.logs / f"{name}-agent.log")
        stack.enter_context(relayed(plan, relays / "s", relay_log))
        forward = plan.forward_command(f"{HARNESS_ROOT}/bin/python3", f"{HARNESS_RUN}/forward.py")
        ro_binds = {HARNESS_ROOT: install, HARNESS_RUN: files, "/etc/hosts": files / "hosts",
                    EGRESS_DIR: relays / "s"}  # fmt: skip
        if bundle:
            ro_binds[HARNESS_CA] = bundle[0] if len(bundle) == 1 else files / "ca.pem"
        return cls(harness.script, forward, ro_binds, plan.describe(), keys, relay_log)


_MODES = {"oracle": "oracle", "nop": "nop", "command": "command", "harness": "command"}
"""The agent script's mode per agent kind (a harness runs as a command)."""


def _agent_output(directory: Path, log: Path) -> str:
    """The end of the agent's own output (`directory/output.log`, never through a link; at most
    `LOG_LIMIT` bytes), appended to the phase log; its text (for the usage line, whose last one
    counts)."""
    try:
        handle = open_beneath(directory, "output.log", error=EvalError)
        if handle is None:
            return ""
        with handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - LOG_LIMIT))
            data = handle.read(LOG_LIMIT)
    except (EvalError, OSError) as exc:
        data, size = f"selfbench: {exc}\n".encode(), 0
    cut = f" (its last {LOG_LIMIT} of {size} bytes)" if size > LOG_LIMIT else ""
    with log.open("ab") as handle:
        handle.write(f"selfbench: the agent's output{cut}:\n".encode() + data)
    return data.decode("utf-8", errors="replace")


def _harness_reason(phase: AgentPhase, phases: TaskPhases) -> str | None:
    """Why the agent phase broke on the harness's side, if it did."""
    if phase.result.timed_out:
        return f"the harness stopped the agent phase at its time limit (log {phase.log})"
    if phase.result.out_of_memory and read_status(phase.status, "agent") == -1:
        return f"out of memory in the agent phase: {phases.memory_hint()}"
    collect = read_status(phase.status, "collect")
    if collect != 0:
        return f"the collect step failed (exit {collect}; log {phase.log})"
    return None


def _agent_cause(phase: AgentPhase) -> str | None:
    """The limit the agent's phase ran into: the harness's time; memory while the agent ran (its
    script killed, or the agent's own SIGKILL) or its process cap; any limit in the collect
    step."""
    result = phase.result
    agent, collect = read_status(phase.status, "agent"), read_status(phase.status, "collect")
    if result.timed_out:
        return named_cause("agent", ("time",))
    if result.out_of_memory and agent in (-1, KILLED_EXIT):
        return named_cause("agent", ("memory",))
    if collect == 0:
        struck = limits_struck(result, free_bytes=None)
        return named_cause("agent", tuple(k for k in struck if k in _PROCESS_LIMITS))
    timed_out = collect == TIMEOUT_EXIT or (collect == KILLED_EXIT and not result.out_of_memory)
    limits = limits_struck(result, free_bytes=phase.free_bytes, timed_out=timed_out)
    return named_cause("collect", limits)


def _verifier_cause(run: VerifierRun) -> str | None:
    """The limits the verifier ran into with the agent's patch."""
    limits = limits_struck(run.phase, free_bytes=run.free_bytes, timed_out=verifier_timed_out(run))
    return named_cause("verifier", limits)


def _patched(patch: AgentPatch) -> bool:
    """Whether the collect step wrote a non-empty patch (the agent's code reaches the tests)."""
    with contextlib.suppress(OSError):
        info = (patch.opt / _PATCH_NAME).lstat()
        return stat.S_ISREG(info.st_mode) and info.st_size > 0
    return False


def _prepare(
    task: BenchTask, *, root: Path, setup: LocalOptions, bwrap: str, users: Users
) -> tuple[TaskPhases, str | None]:
    """Set the task up in `root` for the leased `users`; its phases, and why setup failed if it
    did (the network failing it too: the trials are then the infrastructure's, never an
    agent's)."""
    assert setup.logs is not None  # noqa: S101 - prepared_task's caller gives the logs
    task_logs = setup.logs / task.task_id
    definition = task.located.definition
    # the image's toolchains, as validate provisions them (selfbench.toolchains)
    toolchains = provision_task(definition.toolchains, strict=False, logs=task_logs)
    sandbox = Sandbox(root, users, bwrap, Limits.for_task(definition, setup.ceilings), toolchains)
    phases = TaskPhases(task.located, sandbox, task_logs, setup)
    try:
        return phases, phases.prepare()
    except SetupNetworkError as exc:
        return phases, str(exc)
    except (OSError, CalledProcessError) as exc:
        return phases, f"setup: {type(exc).__name__}: {exc}".splitlines()[0]


@contextmanager
def prepared_task(
    task: BenchTask, *, setup: LocalOptions, workspace: Path | None
) -> Iterator[PreparedTask]:
    """Prepare `task`'s workspace once (setup runs here; a failed setup is tried once more in
    a fresh workspace); removed afterwards. Its trials run as uids leased for the task alone
    (`leased_users`), released afterwards. `setup` holds the logs' directory and setup's
    environment.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    bwrap = require_sandbox()
    assert setup.logs is not None  # noqa: S101 - the evaluation's logs directory
    logs = setup.logs
    (logs / task.task_id).mkdir(parents=True, exist_ok=True)
    roots: list[Path] = []
    lease = ExitStack()
    users = lease.enter_context(leased_users())
    try:
        roots.append(Path(tempfile.mkdtemp(prefix="selfbench-eval-", dir=workspace)))
        phases, error = _prepare(task, root=roots[-1], setup=setup, bwrap=bwrap, users=users)
        if error is not None:
            with (logs / task.task_id / "prepare.log").open("a", encoding="utf-8") as handle:
                handle.write(f"selfbench: {error}; trying once more in a fresh workspace\n")
            remove_workspace(roots[-1])
            roots.append(Path(tempfile.mkdtemp(prefix="selfbench-eval-", dir=workspace)))
            phases, error = _prepare(task, root=roots[-1], setup=setup, bwrap=bwrap, users=users)
        yield PreparedTask(task, phases, error)
    finally:
        for root in roots:
            remove_workspace(root)
        lease.close()
