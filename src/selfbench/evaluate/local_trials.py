"""Agent trials in the local sandbox, on the bundle's own scripts, as local validation runs them.

Per task, the workspace is prepared once (`setupCommand`, the root-only base git dir, the
verifier's tree). Per trial:

1. the **agent phase** on a fresh copy of the prepared tree (the agent image: the base commit,
   setup done, no held-out tests, no solution, no dependency patch): the agent runs as the
   `agent` user in `/app`, without a network, under the task's `agentSeconds`, with the
   instruction in `$SELFBENCH_INSTRUCTION` and in the read-only file
   `$SELFBENCH_INSTRUCTION_FILE`; then the collect command of the bundle's `task.toml` diffs
   `/app` against the true base into the agent patch;
2. the **verifier phase** on a fresh copy of the verifier tree: `tests/test.sh` with only that
   patch.

The agent sees its copy of `/app` and nothing of the bundle, the solution (except the built-in
`oracle`, which applies it with `solution/solve.sh`), the held-out tests or other trials; only
its collected diff reaches the verifier.

This module composes the local environment's phases (`selfbench.validate.local`), whose
workspace and verifier it reuses unchanged; it imports their private helpers here, in one place.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from selfbench.bundle import layout
from selfbench.errors import SelfbenchError
from selfbench.evaluate.agents import (
    INSTRUCTION_ENV,
    INSTRUCTION_FILE_ENV,
    AgentSpec,
    Usage,
    parse_usage,
)
from selfbench.evaluate.bench import BenchTask
from selfbench.evaluate.classify import TrialFacts
from selfbench.toolchains import provision_task
from selfbench.validate.checks import phase_reason, run_outcomes, verifier_commands

# The local environment's phases and helpers, reused unchanged (private names, imported only here).
from selfbench.validate.local import (
    LocalOptions,
    _Agent,
    _collect_command,
    _copy_tree,
    _limits,
    _status,
    _Task,
    _workspace_text,
)
from selfbench.validate.sandbox import Mounts, PhaseResult, Sandbox, choose_users, require_sandbox

__all__ = ["LOCAL_NETWORK", "LocalTrial", "PreparedTask", "prepared_task"]

LOCAL_NETWORK = "none (the local sandbox cannot enforce an allow-list)"
"""What network the agent phase has locally, as the report says."""

_COLLECT_SECONDS = 300.0
_HARNESS_MARGIN = 60.0
_INSTRUCTION = "/run/selfbench-task/instruction.md"

_AGENT = rf"""
set -uo pipefail
mode="$1"; seconds="$2"; collect_seconds="$3"; collect="$4"; command="$5"
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


@dataclass
class PreparedTask:
    """A task's workspace, set up once; trials run in it one after another."""

    task: BenchTask
    phases: _Task
    setup_error: str | None

    def run(self, agent: AgentSpec, name: str) -> LocalTrial:
        """Run one trial of `agent`; `name` names its directories and logs (unique per task).

        A harness that breaks (a full disk, a copy that fails) fails the trial as
        infrastructure, not the evaluation.
        """
        if self.setup_error is not None:
            return self._broken(self.setup_error)
        try:
            return self._run(agent, name)
        except (OSError, subprocess.CalledProcessError, SelfbenchError) as exc:
            why = str(exc) if isinstance(exc, SelfbenchError) else f"{type(exc).__name__}: {exc}"
            return self._broken(f"the harness failed: {why}".splitlines()[0])

    def _broken(self, reason: str) -> LocalTrial:
        facts = TrialFacts(reward=None, infrastructure=reason)
        return LocalTrial(facts, {}, None, None, Usage(), str(self.phases.logs))

    def _run(self, agent: AgentSpec, name: str) -> LocalTrial:
        opt, status, agent_log, usage, harness = self._agent_phase(agent, name)
        run = self.phases.verifier(name, _Agent(opt, None), ())
        infrastructure = harness or phase_reason(run)
        if infrastructure is None and run.phase.out_of_memory:
            infrastructure = f"out of memory: {self.phases.memory_hint()}"
        milliseconds = _status(status, "agent-ms")
        facts = TrialFacts(
            reward=run.reward,
            agent_exit=_status(status, "agent") if agent.kind != "nop" else 0,
            agent_seconds_limit=float(self.task.located.definition.timeouts.agentSeconds),
            infrastructure=infrastructure,
        )
        commands = verifier_commands(self.phases.definition)
        tests = run_outcomes(run.log, commands) if run.reward else {}
        seconds = milliseconds / 1000 if milliseconds >= 0 else None
        return LocalTrial(facts, tests, seconds, run.phase.seconds, usage, str(agent_log))

    def _agent_phase(
        self, agent: AgentSpec, name: str
    ) -> tuple[Path, Path, Path, Usage, str | None]:
        phases = self.phases
        opt, status, output = (
            phases.fresh(f"{name}-agent-{part}") for part in ("opt", "status", "out")
        )
        _copy_tree(phases.base_git, opt)
        instruction = phases.sandbox.root / f"{name}-instruction.md"
        shutil.copyfile(phases.bundle / layout.INSTRUCTION, instruction)
        binds = {
            layout.CONTAINER_SELFBENCH: opt,
            "/run/selfbench-status": status,
            "/run/selfbench-agent": output,
        }
        ro_binds = {_INSTRUCTION: instruction}
        app = phases.sandbox.root / f"{name}-agent-app"
        if agent.kind == "nop":
            ro_binds[layout.CONTAINER_APP] = phases.prepared
        else:
            _copy_tree(phases.prepared, app)
            binds[layout.CONTAINER_APP] = app
        if agent.kind == "oracle":
            ro_binds["/solution"] = phases.bundle / "solution"
        seconds = float(phases.definition.timeouts.agentSeconds)
        log = phases.logs / f"{name}-agent.log"
        phase = phases.sandbox.run(
            _AGENT,
            (agent.kind, f"{seconds:g}", f"{_COLLECT_SECONDS:g}", _collect_command(phases.bundle),
             agent.command),
            log=log,
            timeout=seconds + _COLLECT_SECONDS + _HARNESS_MARGIN,
            mounts=Mounts(binds=binds, ro_binds=ro_binds, hidden=phases.hidden()),
        )  # fmt: skip
        shutil.rmtree(app, ignore_errors=True)
        text = _agent_output(output, log)
        return opt, status, log, parse_usage(text), _harness_reason(phase, status, log, phases)


def _agent_output(directory: Path, log: Path) -> str:
    """The agent's own output (`directory/output.log`, never through a link), appended to the
    phase log; its text (for the usage line)."""
    if not os.path.lexists(directory / "output.log"):
        return ""
    text = _workspace_text(directory, "output.log")
    with log.open("a", encoding="utf-8") as handle:
        handle.write("selfbench: the agent's output:\n" + text)
    return text


def _harness_reason(phase: PhaseResult, status: Path, log: Path, phases: _Task) -> str | None:
    """Why the agent phase broke on the harness's side, if it did."""
    if phase.timed_out:
        return f"the harness stopped the agent phase at its time limit (log {log})"
    if phase.out_of_memory:
        return f"out of memory in the agent phase: {phases.memory_hint()}"
    collect = _status(status, "collect")
    if collect != 0:
        return f"the collect step failed (exit {collect}; log {log})"
    return None


@contextmanager
def prepared_task(task: BenchTask, *, logs: Path, workspace: Path | None) -> Iterator[PreparedTask]:
    """Prepare `task`'s workspace once (setup runs here); removed afterwards.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    bwrap = require_sandbox()
    task_logs = logs / task.task_id
    task_logs.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="selfbench-eval-", dir=workspace))
    try:
        definition = task.located.definition
        # the image's toolchains, as validate provisions them (selfbench.toolchains)
        toolchains = provision_task(definition.toolchains, strict=False, logs=task_logs)
        sandbox = Sandbox(root, choose_users(), bwrap, _limits(definition), toolchains)
        options = LocalOptions(logs=logs, workspace=workspace)
        phases = _Task(task.located, sandbox, task_logs, options)
        try:
            error = phases.prepare()
        except (OSError, subprocess.CalledProcessError) as exc:
            error = f"setup: {type(exc).__name__}: {exc}".splitlines()[0]
        yield PreparedTask(task, phases, error)
    finally:
        shutil.rmtree(root, ignore_errors=True)
