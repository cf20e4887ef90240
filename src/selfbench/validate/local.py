"""The `local` environment: prove a bundle on this machine, with no Docker engine (SPEC §7).

Every phase runs the bundle's own scripts in the isolated workspace of `sandbox.py`, the way the
two images and Harbor would:

1. *prepare*: unpack the snapshot into `/app`, commit it as the base, run `setupCommand` once,
   reset to the base (ignored dependencies stay) and keep the root-only base git dir; when the
   gold patch touches a manifest, a verifier copy also gets those dependencies (the verifier
   image's dependency layer);
2. per run, an *agent* phase on a copy of the prepared tree (oracle: `solve.sh` as `agent`; nop:
   nothing) and the collect command from `task.toml`, which writes the agent patch;
3. a *verifier* phase on a fresh copy of the verifier tree: `tests/test.sh` as root, which writes
   `reward.json`.

Beyond the original (off with `parity=True`): each fail-to-pass selector proven on its own at the
base and with the gold patch, the determinism rerun from a fresh copy, and "the suite really ran"
from the runners' own output.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from selfbench._shell import substitute_tests
from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.locate import LocatedTask
from selfbench.bundle.render_scripts import (
    fail_to_pass_command,
    pass_to_pass_command,
    render_test_sh,
)
from selfbench.contract import TaskDefinition
from selfbench.errors import BundleError, SelfbenchError
from selfbench.patches import parse_patch
from selfbench.validate.cgroup import Limits
from selfbench.validate.outcomes import parse_outcomes
from selfbench.validate.report import (
    Check,
    Reward,
    RewardError,
    RunReport,
    TaskReport,
    parity_reason,
    read_reward,
)
from selfbench.validate.sandbox import (
    LOG_LIMIT,
    Mounts,
    PhaseResult,
    Sandbox,
    choose_users,
    require_sandbox,
)

__all__ = ["LocalOptions", "refuse_duplicates", "score_patch", "validate_local"]

_COLLECT_SECONDS = 300.0
_TIMEOUT_EXIT = 124  # timeout(1)
_NETWORK_ERRORS = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ENETUNREACH|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Could not resolve host"
)
"""Name resolution or routing failing: what a test sees without a network (not a refused
connection, which a test may provoke on purpose)."""

_PREPARE = r"""
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1
tar -xzf /run/selfbench/repo.tar.gz -C /app --no-same-owner
git -C /app init -q --initial-branch=main
git -C /app config user.name selfbench
git -C /app config user.email selfbench@localhost
git -C /app add --all --force
GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
  git -C /app commit -q --no-verify --no-gpg-sign --allow-empty -m 'selfbench base'
echo "selfbench: setup: $2"
(cd -- "$1" && exec /bin/bash -lc "$2")
chmod -R a+rwX /opt/uv-cache /opt/go /opt/corepack
cp -a /app/. /verifier/
git -C /app reset -q --hard HEAD
git -C /app clean -fdq
mkdir -p /opt/selfbench
cp -a /app/.git /opt/selfbench/base.git
chmod 0700 /opt/selfbench /opt/selfbench/base.git
"""

_DEPENDENCIES = r"""
set -euo pipefail
export GIT_CONFIG_NOSYSTEM=1
git -C /app apply --binary --whitespace=nowarn /run/selfbench/dependency-setup.patch
echo "selfbench: setup with the gold patch's dependency manifests: $2"
(cd -- "$1" && exec /bin/bash -lc "$2")
git -C /app reset -q --hard HEAD
git -C /app clean -fdq
"""

_AGENT = r"""
set -uo pipefail
if [ "$1" = oracle ]; then
  chown -R agent:agent /app /opt/uv-cache
  echo "selfbench: solve.sh as agent"
  (cd /app && exec runuser -u agent -- env HOME=/home/agent bash /solution/solve.sh) </dev/null
  status=$?
  echo "$status" >/run/selfbench-status/solve
  echo "selfbench: solve.sh exited $status"
  pkill -KILL -u agent >/dev/null 2>&1 || true
fi
echo "selfbench: collect"
timeout -k 5 "$2" bash -c "$3"
status=$?
echo "$status" >/run/selfbench-status/collect
echo "selfbench: collect exited $status"
"""

_VERIFIER = r"""
set -uo pipefail
chown -R verifier:verifier /app
chown -R root:root /tests
chmod 0700 /tests
chmod 0600 /tests/test.patch
chmod 0755 /tests/test.sh
mkdir -p /logs/verifier /logs/selfbench
timeout -k 5 "$1" bash /tests/test.sh
status=$?
echo "$status" >/logs/selfbench/test.sh.code
echo "selfbench: test.sh exited $status"
workdir="$2"
seconds="$3"
limit="$4"
shift 4
index=0
for command in "$@"; do
  (cd -- "$workdir" && exec timeout -k 5 "$seconds" runuser -u verifier -- \
    env PATH="$PATH" HOME=/home/verifier bash -c "$command") \
    </dev/null 2>&1 | head -c "$limit" >"/logs/selfbench/selector-$index.log"
  echo "${PIPESTATUS[0]}" >"/logs/selfbench/selector-$index.code"
  pkill -KILL -u verifier >/dev/null 2>&1 || true
  index=$((index + 1))
done
"""


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """How the local environment runs."""

    logs: Path
    """Where each task's logs go: `<logs>/<taskId>/{prepare,nop,oracle,rerun}.log`."""
    parity: bool = False
    """Give the original's verdict: no per-selector, rerun or suite-ran checks."""
    network: bool = False
    """Let the tests reach the network (setup always may)."""
    keep: bool = False
    """Keep each task's workspace (the prepared trees); `<logs>/<taskId>/workspace.txt` names it."""
    workspace: Path | None = None
    """Where workspaces are created (default: the system temp directory)."""


@dataclass(frozen=True, slots=True)
class _Run:
    """One verifier run as seen from the host."""

    name: str
    reward: Reward | None
    log: Path
    phase: PhaseResult
    selectors: tuple[tuple[str, str, int, str], ...] = ()
    """(selector, command, exit code, output) of each per-selector command, in order."""
    agent_reason: str | None = None
    """Why the agent phase before this run went wrong, or why its reward.json is unreadable."""
    test_sh_code: int = 0
    """`tests/test.sh`'s exit status (124: killed by its timeout)."""


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
        """Set up the prepared trees; a reason when setup failed."""
        self.prepared.mkdir()
        self.base_git.mkdir()
        self.verifier_base = self.fresh("verifier-prepared")
        reason = self.setup(
            _PREPARE,
            "setupCommand",
            binds={
                layout.CONTAINER_APP: self.prepared,
                layout.CONTAINER_SELFBENCH: self.base_git,
                "/verifier": self.verifier_base,
            },
            ro_binds={"/run/selfbench/repo.tar.gz": self.bundle / layout.TESTS_SNAPSHOT},
        )
        dependency_patch = self.bundle / layout.DEPENDENCY_PATCH
        if reason is not None or not dependency_patch.is_file():
            return reason
        return self.setup(
            _DEPENDENCIES,
            "the dependency setup",
            binds={layout.CONTAINER_APP: self.verifier_base},
            ro_binds={"/run/selfbench/dependency-setup.patch": dependency_patch},
        )

    def setup(
        self, script: str, label: str, *, binds: dict[str, Path], ro_binds: dict[str, Path]
    ) -> str | None:
        """Run one setup phase (network, root's home writable); a reason when it failed."""
        log = self.logs / "prepare.log"
        seconds = float(self.definition.timeouts.setupSeconds)
        result = self.sandbox.run(
            script,
            (self.workdir(), self.definition.setupCommand),
            log=log,
            timeout=seconds,
            mounts=Mounts(
                binds=binds,
                ro_binds=ro_binds,
                network=True,
                hidden=self.hidden(),
                root_home_writable=True,
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
            _AGENT,
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
        elif oracle and _status(status / "solve") != 0:
            reason = (
                f"{name}: solution/solve.sh failed (exit {_status(status / 'solve')}; log {log})"
            )
        elif _status(status / "collect") != 0:
            reason = (
                f"{name}: the collect step failed (exit {_status(status / 'collect')}; log {log})"
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
    ) -> _Run:
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
        patch = agent.opt / Path(layout.CONTAINER_AGENT_PATCH).name
        if patch.is_file():
            shutil.copyfile(patch, opt / patch.name)
        timeouts = self.definition.timeouts
        commands = [substitute_tests(self.definition.testCommand, [s]) for s in selectors]
        log = self.logs / f"{name}.log"
        phase = self.sandbox.run(
            _VERIFIER,
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
        reward_path = logs / "verifier" / "reward.json"
        reward: Reward | None = None
        reward_error = None
        if reward_path.is_file():
            try:
                reward = read_reward(reward_path.read_bytes(), f"{name} reward.json")
            except RewardError as exc:
                reward_error = str(exc)
        results = []
        for index, selector in enumerate(selectors):
            code_path = logs / "selfbench" / f"selector-{index}.code"
            output_path = logs / "selfbench" / f"selector-{index}.log"
            code = int(code_path.read_text().strip() or "-1") if code_path.is_file() else -1
            output = output_path.read_text(errors="replace") if output_path.is_file() else ""
            results.append((selector, commands[index], code, output))
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"selfbench: selector {selector!r} exited {code}\n{output}")
        if not self.options.keep:
            shutil.rmtree(app, ignore_errors=True)
        test_sh_code = _status(logs / "selfbench" / "test.sh.code")
        reason = agent.reason or reward_error
        return _Run(name, reward, log, phase, tuple(results), reason, test_sh_code)

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
        reason = _phase_reason(nop) or _phase_reason(oracle)
        reason = reason or parity_reason(nop.reward, oracle.reward)
        if not self.options.parity:
            scored = oracle.reward is not None and oracle.reward.reward == 1
            rerun = (
                self.verifier("rerun", oracle_agent, (), self.rerun_test_sh(), last=True)
                if scored
                else None
            )
            checks = self.beyond_checks(nop, oracle, rerun)
            reason = reason or next((c.detail for c in checks if not c.passed), None)
        if reason is not None:
            reason = _with_network_hint(reason, (nop, oracle), network=self.options.network)
            if nop.phase.out_of_memory or oracle.phase.out_of_memory:
                reason += f"; {self.memory_hint()}"
        return TaskReport(
            self.definition.taskId,
            reason is None,
            reason,
            RunReport(nop.reward, str(nop.log), _outcomes(nop.log, self.commands())),
            RunReport(oracle.reward, str(oracle.log), _outcomes(oracle.log, self.commands())),
            tuple(checks),
        )

    def rerun_test_sh(self) -> str | None:
        """The verifier for the determinism rerun: the bundle's, rendered without pass-to-pass.

        The rerun proves fail-to-pass again from a fresh copy; pass-to-pass has already passed
        with the gold patch, and running it a third time would only cost a whole suite run.
        None (run the bundle's own) when the bundle's verifier is not what its definition renders.
        """
        test_patch = parse_patch((self.bundle / layout.TEST_PATCH).read_bytes(), lenient=True)
        protected = held_out_paths(self.definition, test_patch)
        own = (self.bundle / layout.TEST_SH).read_text(encoding="utf-8", errors="replace")
        if render_test_sh(self.definition, protected) != own:
            return None
        return render_test_sh(self.definition.model_copy(update={"passToPass": []}), protected)

    def commands(self) -> dict[str, str]:
        """The verifier's commands by their `test.sh` log label."""
        return {
            "fail-to-pass": fail_to_pass_command(self.definition),
            "pass-to-pass": pass_to_pass_command(self.definition),
        }

    def beyond_checks(self, nop: _Run, oracle: _Run, rerun: _Run | None) -> list[Check]:
        """The Beyond checks; `rerun` is None when the oracle did not score 1 (nothing to rerun)."""
        checks = [
            _selector_check(nop, expect_pass=False),
            _selector_check(oracle, expect_pass=True),
        ]
        if rerun is None:
            checks.append(Check("independent rerun", passed=True, detail="not run"))
        elif rerun.reward is not None and rerun.reward.reward == 1:
            checks.append(Check("independent rerun", passed=True))
        elif _phase_reason(rerun) is not None:
            detail = f"oracle rerun from a fresh copy: {_phase_reason(rerun)}"
            checks.append(Check("independent rerun", passed=False, detail=detail))
        else:
            detail = (
                "oracle: the rerun from a fresh copy did not score 1 (not deterministic; "
                f"log {rerun.log})"
            )
            checks.append(Check("independent rerun", passed=False, detail=detail))
        checks.append(self.suite_ran(nop, oracle))
        return checks

    def suite_ran(self, nop: _Run, oracle: _Run) -> Check:
        """The fail-to-pass command with the gold patch and pass-to-pass really ran tests."""
        f2p = fail_to_pass_command(self.definition)
        p2p = pass_to_pass_command(self.definition)
        problems: list[str] = []
        for run in (oracle, nop):
            if run.reward is None:
                continue
            segments = _segments(run.log.read_text(errors="replace"))
            wanted = [("pass-to-pass", p2p, run.reward.pass_to_pass_exit_code)]
            if run is oracle:
                wanted.insert(0, ("fail-to-pass", f2p, run.reward.fail_to_pass_exit_code))
            for label, command, code in wanted:
                text = segments.get(label)
                if text is None or command == "true" or code != 0:
                    continue
                outcome = parse_outcomes(command, text, code)
                if outcome.no_tests is not None:
                    problems.append(f"{run.name}: {label} ran no test: {outcome.no_tests}")
        return Check("suite ran", not problems, "; ".join(problems))


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


def _phase_reason(run: _Run) -> str | None:
    if run.agent_reason is not None:
        return run.agent_reason
    if run.phase.timed_out or run.test_sh_code == _TIMEOUT_EXIT:
        return f"{run.name}: the verifier timed out (log {run.log})"
    if run.reward is None:
        return f"{run.name}: the verifier wrote no reward.json (log {run.log})"
    return None


def _status(path: Path) -> int:
    """An exit status a phase wrote to `path`; -1 when it wrote none."""
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return -1


def _selector_check(run: _Run, *, expect_pass: bool) -> Check:
    name = "per selector with the gold patch" if expect_pass else "per selector at the base"
    if run.reward is None or not run.reward.setup_completed:
        return Check(name, passed=True, detail="not run: the held-out tests were not prepared")
    command_of = run.name
    for selector, command, code, output in run.selectors:
        outcome = parse_outcomes(command, output, code)
        passed = code == 0 and outcome.no_tests is None
        if expect_pass and not passed:
            why = outcome.no_tests or f"exit {code}"
            return Check(
                name, passed=False, detail=f"{command_of}: selector {selector} fails alone ({why})"
            )
        if not expect_pass and passed:
            return Check(
                name,
                passed=False,
                detail=f"{command_of}: selector {selector} already passes without the solution",
            )
    return Check(name, passed=True)


_MARKER = re.compile(r"^selfbench: (fail-to-pass|fail-to-pass again|pass-to-pass)\b", re.MULTILINE)
_RETRY = re.compile(r"^selfbench: infrastructure error \(exit (\d+)\)", re.MULTILINE)
_END = re.compile(r"^selfbench: (?:reward|pass-to-pass|fail-to-pass)", re.MULTILINE)


def _segments(log: str) -> dict[str, str]:
    """Each verifier command's output (its last attempt) in a `test.sh` log, by label."""
    result: dict[str, str] = {}
    matches = list(_MARKER.finditer(log))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(log)
        text = log[match.end() : end]
        reward = text.find("\nselfbench: reward ")
        if reward >= 0:
            text = text[:reward]
        retries = list(_RETRY.finditer(text))
        if retries:
            text = text[retries[-1].end() :]
        result[match.group(1)] = text
    return result


def _outcomes(log: Path, commands: dict[str, str]) -> dict[str, str]:
    """Per-test outcomes of the run's fail-to-pass and pass-to-pass output, when parseable."""
    tests: dict[str, str] = {}
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return tests
    for label, output in _segments(text).items():
        if label in commands:
            tests.update(parse_outcomes(commands[label], output, 0).tests)
    return tests


def _with_network_hint(reason: str, runs: Sequence[_Run], *, network: bool) -> str:
    if network:
        return reason
    for run in runs:
        try:
            text = run.log.read_text(errors="replace")
        except OSError:
            continue
        match = _NETWORK_ERRORS.search(text)
        if match:
            return (
                f"{reason}; the tests needed the network ({match.group(0)} in {run.log}), "
                "which the local environment withholds (--network allows it)"
            )
    return reason


def refuse_duplicates(tasks: Sequence[LocatedTask]) -> None:
    """Each task once: two runs of one task would share its logs directory.

    Raises:
        BundleError: a task is given more than once.
    """
    seen: set[str] = set()
    for located in tasks:
        if located.definition.taskId in seen:
            raise BundleError(f"task {located.definition.taskId} is given more than once")
        seen.add(located.definition.taskId)


def validate_local(
    tasks: Sequence[LocatedTask],
    *,
    options: LocalOptions,
    jobs: int = 1,
    on_done: Callable[[TaskReport], None] | None = None,
) -> list[TaskReport]:
    """Validate bundles locally, `jobs` tasks at a time; reports in the order given.

    A task whose bundle turns out broken while it runs is rejected with the reason; the others
    go on.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        BundleError: a task is given more than once.
    """
    bwrap = require_sandbox()
    refuse_duplicates(tasks)
    users = choose_users()
    options.logs.mkdir(parents=True, exist_ok=True)

    def one(located: LocatedTask) -> TaskReport:
        task_id = located.definition.taskId
        logs = options.logs / task_id
        shutil.rmtree(logs, ignore_errors=True)
        logs.mkdir(parents=True)
        root = Path(tempfile.mkdtemp(prefix="selfbench-ws-", dir=options.workspace))
        if options.keep:
            (logs / "workspace.txt").write_text(f"{root}\n", encoding="utf-8")
        try:
            sandbox = Sandbox(root, users, bwrap, _limits(located.definition))
            report = _Task(located, sandbox, logs, options).validate()
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


def score_patch(located: LocatedTask, patch: bytes | None, *, options: LocalOptions) -> RunReport:
    """Run the verifier on an agent's patch (None: no patch collected), as Harbor would.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    bwrap = require_sandbox()
    logs = options.logs / located.definition.taskId
    logs.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="selfbench-ws-", dir=options.workspace))
    try:
        sandbox = Sandbox(root, choose_users(), bwrap, _limits(located.definition))
        task = _Task(located, sandbox, logs, options)
        reason = task.prepare()
        if reason is not None:
            return RunReport(None, str(logs / "prepare.log"))
        opt = task.fresh("collected")
        if patch is not None:
            (opt / Path(layout.CONTAINER_AGENT_PATCH).name).write_bytes(patch)
        run = task.verifier("agent", _Agent(opt, None), (), last=True)
        return RunReport(run.reward, str(run.log), _outcomes(run.log, task.commands()))
    finally:
        if not options.keep:
            shutil.rmtree(root, ignore_errors=True)
