"""Probes of a hostile task author against the host, in the local sandbox (issue 12, §2).

A task author writes `setupCommand`, which runs as root in the sandbox with a network, and can
hand over a tampered bundle. Each finding of the red team has a probe here, named after it:

* root in setup sets a host kernel tunable (`core_pattern`: the host runs it on the next crash);
* root in setup reads root-only host files;
* a git config or hook that setup leaves behind runs in a later phase (as root);
* the host reads back a workspace file through a link the sandbox planted (a host secret
  appended to a log, a forged reward read as the verdict).

One hostile setup (`hostile.sh` below) tries all its attacks in one validation, whose report,
logs and kept workspace the probes read; each attempt prints `PROBE <what>: <outcome>`. Run as
root, as CI does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from projects import build
from selfbench._fs import read_beneath
from selfbench.artifacts.compiled import locate_task
from selfbench.artifacts.report import TaskReport
from selfbench.environments.local.disk import remove_workspace
from selfbench.environments.local.downloads import DOWNLOADS, download_caches
from selfbench.environments.local.uids import Users
from selfbench.errors import RewardError
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from test_validate import PY_BASE, PY_SETUP, PY_TEST_MUL, python_project

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs

_TUNABLES = (
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/kernel/hostname",
    "/sys/kernel/uevent_helper",
    "/sys/kernel/rcu_expedited",
)
"""Host values the hostile setup tries to set: each would make the host run a command as root
(the core pattern on a crash, modprobe on a module request, the uevent helper on a device event),
name the host, or tune its kernel (`/sys/kernel`, written back unchanged)."""

_ROOT_ONLY = (
    "/etc/sudoers",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssl/private",
)
"""Root-only files and directories a host may have; the probe also makes its own."""

_DEV = frozenset(
    {"core", "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
     "tty", "urandom", "zero"}
)  # fmt: skip
"""The minimal `/dev` of a container (bubblewrap's)."""

_HOOK_MARK = "probe hook ran as"

HOSTILE_SETUP = r"""#!/bin/bash
# A hostile task author's setupCommand, as root. $1: a host file to link a selector log to;
# the rest: host paths to read.
probe() { printf 'PROBE %s: %s\n' "$1" "$2"; }
try_write() {
  if [ ! -e "$2" ]; then probe "$1" absent
  elif printf '%s\n' "$3" 2>/dev/null >"$2"; then probe "$1" wrote
  else probe "$1" refused; fi
}
try_write core_pattern /proc/sys/kernel/core_pattern '|/bin/true selfbench-probe %p'
try_write modprobe /proc/sys/kernel/modprobe /selfbench-probe-modprobe
try_write hostname /proc/sys/kernel/hostname selfbench-probe
try_write uevent_helper /sys/kernel/uevent_helper /selfbench-probe-uevent
try_write sysrq /proc/sysrq-trigger h
try_write rcu_expedited /sys/kernel/rcu_expedited "$(cat /sys/kernel/rcu_expedited 2>/dev/null)"
try_write drop_caches /proc/sys/vm/drop_caches 1
for procs in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs; do
  if [ -e "$procs" ]; then try_write cgroup "$procs" "$$"; break; fi
done
if mknod /dev/selfbench-probe b 8 0 2>/dev/null; then probe mknod made; else probe mknod refused; fi
probe dev "$(ls -A /dev | tr '\n' ' ')"
probe network "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"

link_target="$1"
shift
for path in "$@"; do
  if [ -d "$path" ]; then
    found="$(ls -A -- "$path" 2>/dev/null | tr '\n' ' ')"
  else
    found="$(head -c 4096 -- "$path" 2>/dev/null | tr '\n' ' ')"
  fi
  probe "read $path" "${found:-nothing}"
done
probe "read /root" "$(ls -A /root | tr '\n' ' ')"

# a hook that, run as root in a later phase, marks the phase's directories and links a
# selector log to a host file (which the host would then read back into a log)
cat >/root/probe-hook <<EOF
#!/bin/sh
for dir in /logs /run/selfbench-status /run/selfbench-agent; do
  if [ -d "\$dir" ]; then : >"\$dir/hook-ran-\$(id -u)" 2>/dev/null; fi
done
if [ -d /logs/selfbench ]; then ln -sfn '$link_target' /logs/selfbench/selector-0.log; fi
echo "probe hook ran as \$(id -un)" >&2
case "\$1" in
  filter) exec cat ;;
  1 | 2) exit 1 ;; # as core.fsmonitor: no answer
esac
exit 0
EOF
chmod 0755 /root/probe-hook
mkdir -p /root/probe-hooks /root/.config/git
git config --global core.fsmonitor /root/probe-hook
git config --global core.hooksPath /root/probe-hooks
printf '[core]\n\tfsmonitor = /root/probe-hook\n' >/root/.config/git/config
printf '* filter=probe\n' >/root/.config/git/attributes
git config core.fsmonitor /root/probe-hook
git config core.hooksPath /root/probe-hooks
git config filter.probe.clean '/root/probe-hook filter'
git config filter.probe.smudge '/root/probe-hook filter'
printf '* filter=probe\n' >>.git/info/attributes
for hook in post-checkout post-index-change reference-transaction pre-commit pre-auto-gc \
  post-rewrite pre-push; do
  ln -sf /root/probe-hook ".git/hooks/$hook"
  ln -sf /root/probe-hook "/root/probe-hooks/$hook"
done
# a configuration of root's home that a later phase's tool would read (jq's ~/.jq)
printf 'def map(f): error("probe jq config" + " read");\n' >/root/.jq
probe git "config and hooks planted"
"""


@dataclass(frozen=True, slots=True)
class HostileRun:
    """One validation of the hostile setup: what the host saw."""

    report: TaskReport
    logs: Path
    workspace: Path
    before: dict[str, str | None]
    after: dict[str, str | None]
    secrets: dict[str, str]

    def prepare_log(self) -> str:
        return (self.logs / "prepare.log").read_text(errors="replace")

    def probes(self) -> dict[str, str]:
        """What each `PROBE name: outcome` line of setup said."""
        return dict(re.findall(r"^PROBE (.+?): (.*)$", self.prepare_log(), flags=re.MULTILINE))

    def phase_logs(self) -> str:
        """Everything the agent and verifier phases logged."""
        names = sorted(p for p in self.logs.iterdir() if p.name != "prepare.log")
        return "".join(p.read_text(errors="replace") for p in names if p.is_file())


def _read_host(path: str) -> str | None:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return None


def _secret_file(path: Path, token: str) -> None:
    path.write_text(f"{token}\n")
    path.chmod(0o600)


@pytest.fixture(scope="module")
def host_secrets() -> Iterator[dict[str, str]]:
    """Root-only host files, each with its own token: in `/etc`, under a private directory of
    `/var/lib`, in a listable `/var/cache`, and in the host's `/root`."""
    tag = os.urandom(6).hex()
    private_dir = Path(tempfile.mkdtemp(prefix="selfbench-probe-", dir="/var/lib"))
    private_dir.chmod(0o700)
    files = {
        Path(f"/etc/selfbench-probe-{tag}"): f"etc-secret-{tag}",
        private_dir / "secret": f"var-lib-secret-{tag}",
        Path(f"/var/cache/selfbench-probe-{tag}"): f"var-cache-secret-{tag}",
        Path.home() / f"selfbench-probe-{tag}": f"root-home-secret-{tag}",
    }
    for path, token in files.items():
        _secret_file(path, token)
    (private_dir / "public").write_text(f"var-lib-listed-{tag}\n")  # 0644, in a 0700 directory
    try:
        yield {str(path): token for path, token in files.items()} | {
            str(private_dir / "public"): f"var-lib-listed-{tag}"
        }
    finally:
        for path in files:
            path.unlink(missing_ok=True)
        shutil.rmtree(private_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def hostile_run(
    tmp_path_factory: pytest.TempPathFactory, host_secrets: dict[str, str]
) -> Iterator[HostileRun]:
    root = tmp_path_factory.mktemp("hostile")
    link_target = next(path for path in host_secrets if path.startswith("/etc/"))
    reads = [*host_secrets, *_ROOT_ONLY]
    arguments = " ".join([link_target, *reads])
    project = python_project(
        "hostile-author",
        base={"hostile.sh": HOSTILE_SETUP},
        tests={"tests/test_mul.py": PY_TEST_MUL, "tests/test_mul_again.py": PY_TEST_MUL},
        definition={"setupCommand": f"bash hostile.sh {arguments} && {PY_SETUP}"},
    )
    out = build(project, root / "build")
    (root / "workspace").mkdir()
    options = LocalOptions(logs=root / "logs", keep=True, workspace=root / "workspace")
    before = {path: _read_host(path) for path in _TUNABLES}
    try:
        [report] = validate([out], runner=LocalRunner(options))
    finally:
        after = {path: _read_host(path) for path in _TUNABLES}
        for path, value in before.items():  # put back what a failed probe changed
            if value is not None and after[path] != value:
                Path(path).write_text(value)
    [workspace] = (root / "workspace").iterdir()
    yield HostileRun(
        report, root / "logs" / "hostile-author", workspace, before, after, host_secrets
    )
    remove_workspace(workspace)


def test_setup_root_cannot_set_a_host_kernel_tunable(hostile_run: HostileRun) -> None:
    """Finding: setup's root wrote `/proc/sys/kernel/core_pattern` (a command the host runs as
    root when a process crashes); `/proc/sys`, `/sys` and the other kernel interfaces are
    read-only now, `/dev` is a container's."""
    assert hostile_run.after == hostile_run.before
    probes = hostile_run.probes()
    for name in ("core_pattern", "hostname", "drop_caches"):
        assert probes[name] == "refused", (name, probes)
    for name in ("modprobe", "uevent_helper", "sysrq", "cgroup", "rcu_expedited"):  # if present
        assert probes.get(name, "absent") in {"refused", "absent"}, (name, probes)
    assert probes["mknod"] == "refused"
    assert set(probes["dev"].split()) <= _DEV


def test_setup_root_cannot_read_root_only_host_files(hostile_run: HostileRun) -> None:
    """Finding: setup's root kept `CAP_DAC_OVERRIDE` and read any host file; now the sandbox
    shows only what an unprivileged host user could read, while setup keeps its network."""
    probes = hostile_run.probes()
    for path in [*hostile_run.secrets, *_ROOT_ONLY]:
        assert probes[f"read {path}"] == "nothing", (path, probes[f"read {path}"])
    everything = hostile_run.prepare_log() + hostile_run.phase_logs()
    for token in hostile_run.secrets.values():
        assert token not in everything
    assert not any(name.startswith("selfbench-probe-") for name in probes["read /root"].split())
    assert set(probes["network"].split()) - {"lo"}, "setup lost its network"
    assert hostile_run.report.accepted, hostile_run.report.reason


def test_a_git_config_or_hook_left_by_setup_never_runs_later(hostile_run: HostileRun) -> None:
    """Finding: a `core.fsmonitor` hook in root's persistent `~/.gitconfig` ran during
    `test.sh`'s git calls. Setup plants global and repository config (fsmonitor, hooksPath,
    filters, hooks) and a `~/.jq` that would break the verifier's evidence; none of it runs in
    the agent or verifier phases, and the gold patch still scores."""
    assert hostile_run.probes()["git"] == "config and hooks planted"
    assert _HOOK_MARK not in hostile_run.phase_logs()
    marks = sorted(str(p.relative_to(hostile_run.workspace))
                   for p in hostile_run.workspace.rglob("hook-ran-*"))  # fmt: skip
    assert marks == []
    assert hostile_run.report.accepted, hostile_run.report.reason
    assert hostile_run.report.oracle.reward is not None
    assert hostile_run.report.oracle.reward.reward == 1


HOSTILE_TEST_SH = """#!/bin/bash
# A tampered bundle's verifier, as root: links the verifier's outputs to host files.
rm -rf /logs/selfbench
ln -sfn {selfbench} /logs/selfbench
mkdir -p /logs/verifier
ln -sfn {reward} /logs/verifier/reward.json
exit 0
"""


def test_a_workspace_link_never_makes_the_host_read_a_host_file(tmp_path: Path) -> None:
    """Finding: a link planted in the workspace (a selector log to a host path) made the host
    read that host file into `nop.log`. A tampered verifier links `/logs/selfbench` to a host
    directory holding a secret selector log, and `reward.json` to a host file forging a pass:
    the host follows neither."""
    tag = os.urandom(6).hex()
    host_dir = tmp_path / "host-only"
    host_dir.mkdir()
    for index in range(2):
        (host_dir / f"selector-{index}.log").write_text(f"host-secret-{tag}\n")
        (host_dir / f"selector-{index}.code").write_text("0\n")
    (host_dir / "test.sh.code").write_text("0\n")
    fields = ("patch_applied", "fail_to_pass", "pass_to_pass", "deterministic", "setup_completed")
    forged = {"reward": 1, **dict.fromkeys(fields, 1)} | {
        "fail_to_pass_exit_code": 0, "fail_to_pass_repeat_exit_code": 0,
        "pass_to_pass_exit_code": 0,
    }  # fmt: skip
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    project = python_project(
        "linked-logs",
        tests={"tests/test_mul.py": PY_TEST_MUL, "tests/test_mul_again.py": PY_TEST_MUL},
    )
    out = build(project, tmp_path / "build")
    bundle = locate_task(out).bundle
    (bundle / "tests" / "test.sh").write_text(
        HOSTILE_TEST_SH.format(selfbench=host_dir, reward=tmp_path / "forged.json")
    )
    logs = tmp_path / "logs"
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=logs)))
    everything = "".join(p.read_text(errors="replace") for p in logs.rglob("*") if p.is_file())
    assert f"host-secret-{tag}" not in everything
    assert f"host-secret-{tag}" not in json.dumps(report.to_json())
    assert report.nop.reward is None
    assert report.oracle.reward is None
    assert not report.accepted
    assert report.reason is not None
    assert "not a regular file (a link, or below one); not read" in report.reason


def test_reading_beneath_a_workspace_follows_no_link(tmp_path: Path) -> None:
    """The one reader of workspace files: links at any depth, pipes and directories refused,
    a missing file is None, a regular file is read (up to a limit)."""
    secret = tmp_path / "secret"
    secret.write_text("host secret\n")
    root = tmp_path / "workspace"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "ok").write_text("0123456789")
    (root / "logs" / "file-link").symlink_to(secret)
    (root / "dir-link").symlink_to(tmp_path)
    os.mkfifo(root / "logs" / "pipe")

    def read(relative: str, limit: int | None = None) -> bytes | None:
        return read_beneath(root, relative, error=RewardError, limit=limit)

    assert read("logs/ok") == b"0123456789"
    assert read("logs/ok", limit=4) == b"0123"
    assert read("logs/missing") is None
    assert read("missing/ok") is None
    for relative in ("logs/file-link", "dir-link/secret", "logs/pipe", "logs", "logs/ok/x"):
        with pytest.raises(RewardError, match=r"not a regular file \(a link, or below one\)"):
            read(relative)
    for bad in ("", "/etc/passwd", "../secret"):
        with pytest.raises(ValueError, match="not a relative path"):
            read(bad)


SOCKET_PROBE = """
import socket, sys
for path in sys.argv[1:]:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        print("connected", path)
    except OSError as exc:
        print("refused", path, type(exc).__name__)
"""


def test_root_in_the_sandbox_cannot_reach_a_host_socket_by_its_path(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """A host daemon's socket in a directory the sandbox shows (`/var/cache`, say): a network
    namespace does not cover a socket reached by its path, so the sandbox covers every socket."""
    from selfbench.environments.local.sandbox import Mounts, Sandbox, require_sandbox  # noqa: PLC0415

    directory = Path(tempfile.mkdtemp(prefix="selfbench-probe-", dir="/var/cache"))
    directory.chmod(0o755)
    path = directory / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        path.chmod(0o777)
        server.listen()
        server.settimeout(0.1)
        sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox())
        log = tmp_path / "probe.log"
        result = sandbox.run(
            'exec python3 -c "$1" "$2"',
            (SOCKET_PROBE, str(path)),
            mounts=Mounts(root_home_writable=True),  # its own network namespace
            log=log,
            timeout=60,
        )
        assert result.exit_code == 0, log.read_text()
        assert log.read_text().splitlines()[-1].startswith(f"refused {path} ")
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_bundle_with_a_link_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A tampered bundle whose verifier links to a host file: the sandbox would have copied the
    host file in and run it (bash's errors quoting its lines); the bundle is refused instead."""
    tag = os.urandom(6).hex()
    secret = tmp_path / "host-secret"
    secret.write_text(f"bundle-secret-{tag}\n")
    secret.chmod(0o600)
    out = build(python_project("linked-bundle"), tmp_path / "build")
    bundle = locate_task(out).bundle
    (bundle / "tests" / "test.sh").unlink()
    (bundle / "tests" / "test.sh").symlink_to(secret)
    logs = tmp_path / "logs"
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=logs)))
    assert not report.accepted
    assert report.reason == (
        f"validation failed: {bundle / 'tests' / 'test.sh'}: not a regular file or directory;"
        " a bundle holds no links"
    )
    everything = "".join(p.read_text(errors="replace") for p in logs.rglob("*") if p.is_file())
    assert f"bundle-secret-{tag}" not in everything


# --- trials that cannot touch each other (issue 25) --------------------------------------------

_SHARED = ("/opt/uv-cache", "/opt/go", "/opt/corepack")

LEAKY_CALC = f"""\
import glob, os, shutil

# the code under test, imported by the held-out tests: copies them into the shared tool state
for state in {_SHARED!r}:
    for test in glob.glob("/app/tests/test_mul*.py"):
        try:
            shutil.copyfile(test, os.path.join(state, "leak-" + os.path.basename(test)))
        except OSError:
            pass


def add(a, b):
    return a + b
"""

LEAK_CHECK = f"""\
import os
from calc import add


def test_add():
    assert add(1, 2) == 3


def test_the_held_out_test_was_copied_in_this_phase():
    assert all(os.path.exists(state + "/leak-test_mul.py") for state in {_SHARED!r})
"""

READ_SHARED = (
    "for state in " + " ".join(_SHARED) + '; do ls -A "$state"; cat "$state"/leak-* ; done'
    " 2>/dev/null; true"
)
"""A later agent: lists the shared tool state and prints what an earlier phase left there."""


def test_the_verifiers_writes_to_the_shared_tool_state_reach_no_later_trial(
    tmp_path: Path,
) -> None:
    """Finding: code run in the verifier phase (imported by the held-out tests) wrote the held-out
    test file into `/opt/go`, `/opt/uv-cache` and `/opt/corepack`, which setup opened to every
    user and every phase shared; the next trial's agent read it there. Each phase now gets its own
    copy of what setup left: the agent still sees setup's state, never an earlier phase's."""
    from selfbench.evaluate.agents import BuiltinAgent, CommandAgent  # noqa: PLC0415
    from selfbench.evaluate.bench import BenchTask  # noqa: PLC0415
    from selfbench.evaluate.local_trials import prepared_task  # noqa: PLC0415

    token = f"held-out-{os.urandom(6).hex()}"
    project = python_project(
        "shared-state-leak",
        base={"calc/__init__.py": LEAKY_CALC, "tests/test_core.py": LEAK_CHECK},
        gold={"calc/__init__.py": LEAKY_CALC + "\n\ndef mul(a, b):\n    return a * b\n"},
        tests={"tests/test_mul.py": f"# {token}\n{PY_TEST_MUL}"},
        definition={"setupCommand": f"{PY_SETUP} && touch /opt/go/from-setup"},
    )
    out = build(project, tmp_path / "build")
    task = BenchTask(locate_task(out), digest="probe")
    setup = LocalOptions(logs=tmp_path / "logs")
    with prepared_task(task, setup=setup, workspace=None) as prepared:
        assert prepared.setup_error is None, prepared.setup_error
        first = prepared.run(BuiltinAgent("oracle", "oracle"), "first")
        later = prepared.run(CommandAgent("reader", READ_SHARED), "later")
    # the verifier's own code wrote the copies (its pass-to-pass checks them), and scored
    assert first.facts.reward is not None, first.log
    assert first.facts.reward.reward == 1, Path(first.log).read_text(errors="replace")
    seen = Path(later.log).read_text(errors="replace")
    assert "from-setup" in seen, seen  # the agent sees what setup prepared
    assert token not in seen
    assert "leak-test_mul.py" not in seen


FLOOD = """
import os, sys, threading, time
threading.stack_size(64 * 1024)
stop, count = threading.Event(), 0
try:
    while count < 50000:
        threading.Thread(target=stop.wait, daemon=True).start()
        count += 1
except RuntimeError:
    pass
with open(sys.argv[1], "w") as out:
    out.write(f"{count}\\n")
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.1)
"""
"""The agent's flood: threads (each a task the kernel counts against the user's process cap)
until the cap refuses one, held until the host says so."""

FORKS = 'for i in 1 2 3 4 5 6 7 8; do /bin/true || exit 1; done; echo "forked 8 times"'


def test_one_sandboxs_process_flood_leaves_another_sandbox_able_to_fork(tmp_path: Path) -> None:
    """Finding: with `eval -j 2`, one agent's process flood made a correct agent in another task
    crash ("fork: Resource temporarily unavailable"): every sandbox ran as the same uids, and the
    kernel counts a user's processes host-wide. Two sandboxes at once, each with the uids leased
    for it: the first floods its `agent` to its process cap, the second's `agent` still forks."""
    import threading  # noqa: PLC0415

    from selfbench.environments.local.sandbox import Mounts, Sandbox, leased_users, require_sandbox  # noqa: PLC0415

    shared = tmp_path / "flood"
    shared.mkdir()
    shared.chmod(0o777)
    release = tmp_path / "release"
    release.mkdir()
    count, done = shared / "count", release / "done"
    with leased_users() as first_users, leased_users() as second_users:
        assert {first_users.agent, first_users.verifier}.isdisjoint(
            {second_users.agent, second_users.verifier}
        )
        first = Sandbox(tmp_path / "ws-1", first_users, require_sandbox())
        second = Sandbox(tmp_path / "ws-2", second_users, require_sandbox())
        mounts = Mounts(binds={"/run/flood": shared}, ro_binds={"/run/release": release})
        flood = threading.Thread(
            target=first.run,
            args=(
                'runuser -u agent -- python3 -c "$1" /run/flood/count /run/release/done',
                (FLOOD,),
            ),
            kwargs={"mounts": mounts, "log": tmp_path / "flood.log", "timeout": 180},
        )
        flood.start()
        try:
            deadline = time.monotonic() + 120
            while not count.is_file() and time.monotonic() < deadline:
                time.sleep(0.2)
            flooded = int(count.read_text())
            log = tmp_path / "forks.log"
            result = second.run(
                'runuser -u agent -- bash -c "$1"', (FORKS,), mounts=Mounts(), log=log, timeout=60
            )
        finally:
            done.touch()
            flood.join()
    assert 1000 < flooded < 50000, flooded  # the flood stopped at the cap, not before
    assert result.exit_code == 0, log.read_text(errors="replace")
    assert "forked 8 times" in log.read_text(errors="replace")


PLANT_CARGO_CONFIG = r"""
status=/run/selfbench-status
for user in agent verifier; do
  runuser -u "$user" -- sh -c \
    'printf "[build]\nrustc-wrapper = \"/tmp/wrapper\"\n" >/usr/local/cargo/config.toml' \
    2>/dev/null
  echo "$?" >"$status/config-$user"
  runuser -u "$user" -- sh -c 'echo cached >/usr/local/cargo/registry/cache-$(id -un)'
  echo "$?" >"$status/cache-$user"
done
"""
"""An agent phase that plants cargo's configuration (a `rustc-wrapper`) in cargo's home as each
unprivileged user, and writes into cargo's registry cache."""

SEE_CARGO_HOME = r"""
status=/run/selfbench-status
for name in config.toml registry/cache-agent registry/cache-verifier registry/from-setup; do
  test -e "/usr/local/cargo/$name"
  echo "$?" >"$status/$(basename "$name")"
done
"""
"""A later phase: what of cargo's home it sees (0 there, 1 absent)."""


def test_no_phase_can_plant_a_cargo_configuration_for_a_later_one(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """Finding: the agent wrote `$CARGO_HOME/config.toml` (`/usr/local/cargo`, a writable
    toolchain mount shared by every phase) with a `rustc-wrapper`, which a later phase ran.
    Cargo's home is root's now, its caches are each phase's own copy: neither the agent nor the
    verifier user can write the configuration, and what they cache reaches no later phase."""
    from selfbench.environments.local.phases import TaskPhases  # noqa: PLC0415
    from selfbench.environments.local.sandbox import Sandbox, read_status, require_sandbox  # noqa: PLC0415
    from selfbench.toolchains.model import Mount, Provisioned  # noqa: PLC0415
    from test_toolchains import shell_project  # noqa: PLC0415

    setup = "mkdir -p /usr/local/cargo/registry && touch /usr/local/cargo/registry/from-setup"
    out = build(shell_project("cargo-home", ["rust"], setup), tmp_path / "build")
    toolchains = Provisioned(mounts=(Mount("state", "/usr/local/cargo"),))
    (tmp_path / "ws").mkdir()
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), None, toolchains)
    logs = tmp_path / "logs"
    logs.mkdir()
    phases = TaskPhases(locate_task(out), sandbox, logs, LocalOptions(logs=logs))
    assert phases.prepare() is None, (logs / "prepare.log").read_text(errors="replace")
    planted = phases.agent_phase(
        "plant", PLANT_CARGO_CONFIG, (), timeout=60, log=logs / "plant.log", writable_app=True
    )
    later = phases.agent_phase(
        "later", SEE_CARGO_HOME, (), timeout=60, log=logs / "later.log", writable_app=True
    )
    plant_log = (logs / "plant.log").read_text(errors="replace")
    for user in ("agent", "verifier"):
        assert read_status(planted.status, f"config-{user}") not in {-1, 0}, plant_log
        assert read_status(planted.status, f"cache-{user}") == 0, plant_log  # its own cache
    seen = {name: read_status(later.status, name) for name in
            ("config.toml", "cache-agent", "cache-verifier", "from-setup")}  # fmt: skip
    assert seen == {"config.toml": 1, "cache-agent": 1, "cache-verifier": 1, "from-setup": 0}


def test_two_tasks_validated_at_once_run_as_uids_of_their_own(tmp_path: Path) -> None:
    """`validate -j 2` (as `eval -j 2`) runs two tasks' sandboxes at once: each runs as the
    `agent` and `verifier` uids leased for it, so neither shares the other's process cap."""
    outs = [build(python_project(name), tmp_path / name) for name in ("uids-first", "uids-second")]
    (tmp_path / "workspace").mkdir()
    options = LocalOptions(logs=tmp_path / "logs", keep=True, workspace=tmp_path / "workspace")
    reports = validate(outs, runner=LocalRunner(options), jobs=2)
    assert all(report.accepted for report in reports), [r.reason for r in reports]
    seen = []
    for workspace in sorted((tmp_path / "workspace").iterdir()):
        passwd = (workspace / "etc" / "passwd").read_text().splitlines()
        users = dict(line.split(":")[0:3:2] for line in passwd)
        seen.append({users["agent"], users["verifier"]})
        remove_workspace(workspace)
    assert len(seen) == 2
    assert seen[0].isdisjoint(seen[1]), seen


# --- the setups' shared download caches (issue 27) ---------------------------------------------

CACHE_SETUP = (
    f"{PY_SETUP} && ls -A \"$PIP_CACHE_DIR\" | sed 's/^/CACHE HELD /'"
    ' && echo setup >"$PIP_CACHE_DIR/from-setup-$MARK" && chmod 0777 "$PIP_CACHE_DIR"'
)
"""A setup that lists what the pip cache holds, adds its own file and opens the directory to
every user (as setup opens the tool state): a later phase that saw it could write it."""

CACHE_WRITER = f"""\
import glob, os

# the code under test, imported by the tests: plants a file in every download cache it finds
for cache in [os.environ.get("PIP_CACHE_DIR", ""), *glob.glob("{DOWNLOADS}/*")]:
    try:
        with open(os.path.join(cache or "/nonexistent", "from-verifier"), "w") as out:
            out.write("planted")
    except OSError:
        pass


def add(a, b):
    return a + b
"""

CACHE_AGENT = (
    f'for d in "${{PIP_CACHE_DIR:-/nonexistent}}" {DOWNLOADS} {DOWNLOADS}/*; do'
    ' echo agent >"$d/from-agent" 2>/dev/null && echo "WROTE $d"; done;'
    ' echo "SEES PIP_CACHE_DIR=${PIP_CACHE_DIR:-unset}"; ls -A ' + DOWNLOADS + " 2>&1; true"
)
"""An agent planting a file in the setups' download caches (a poisoned package for the next
candidate's setup)."""


def _cache_files() -> set[str]:
    root = download_caches().root
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def test_the_setups_of_one_process_share_their_download_caches(tmp_path: Path) -> None:
    """A second candidate's setup finds what the first one's setup left in the package managers'
    download caches (pip's here): the caches of one process outlive each task's workspace."""
    marks = ("first", "second")
    outs = [
        build(
            python_project(
                f"downloads-{mark}",
                definition={"setupCommand": f"export MARK={mark} && {CACHE_SETUP}"},
            ),
            tmp_path / mark,
        )
        for mark in marks
    ]
    options = LocalOptions(logs=tmp_path / "logs")
    reports = validate(outs, runner=LocalRunner(options), jobs=1)
    assert all(report.accepted for report in reports), [r.reason for r in reports]
    second = (tmp_path / "logs" / "downloads-second" / "prepare.log").read_text(errors="replace")
    assert "CACHE HELD from-setup-first" in second, second
    assert {"from-setup-first", "from-setup-second"} <= {Path(f).name for f in _cache_files()}


def test_no_agent_or_verifier_phase_can_write_the_setups_download_caches(tmp_path: Path) -> None:
    """Finding to rule out: the download caches that every setup of a run reads are shared
    state; an agent, or the code under test in the verifier, that wrote a package there would
    hand it to the next candidate's setup. Only the setup stages bind them: a later phase sees
    no cache, its variables unset, and whatever setup opened there stays unwritten."""
    from selfbench.evaluate.agents import BuiltinAgent, CommandAgent  # noqa: PLC0415
    from selfbench.evaluate.bench import BenchTask  # noqa: PLC0415
    from selfbench.evaluate.local_trials import prepared_task  # noqa: PLC0415

    project = python_project(
        "downloads-probe",
        base={
            "calc/__init__.py": CACHE_WRITER,
            "tests/test_core.py": PY_BASE["tests/test_core.py"],
        },
        gold={"calc/__init__.py": CACHE_WRITER + "\n\ndef mul(a, b):\n    return a * b\n"},
        definition={"setupCommand": f"export MARK=probe && {CACHE_SETUP}"},
    )
    task = BenchTask(locate_task(build(project, tmp_path / "build")), digest="probe")
    with prepared_task(
        task, setup=LocalOptions(logs=tmp_path / "logs"), workspace=None
    ) as prepared:
        assert prepared.setup_error is None, prepared.setup_error
        oracle = prepared.run(BuiltinAgent("oracle", "oracle"), "oracle")
        agent = prepared.run(CommandAgent("planter", CACHE_AGENT), "planter")
    assert oracle.facts.reward is not None, oracle.log
    assert oracle.facts.reward.reward == 1, Path(oracle.log).read_text(errors="replace")
    seen = Path(agent.log).read_text(errors="replace")
    assert "SEES PIP_CACHE_DIR=unset" in seen, seen
    assert "WROTE" not in seen, seen
    names = {Path(f).name for f in _cache_files()}
    assert "from-setup-probe" in names  # setup wrote them
    assert not names & {"from-agent", "from-verifier"}, names


SHARED_MEMORY = r"""
import multiprocessing, os
lock = multiprocessing.Lock()
queue = multiprocessing.Queue()
queue.put("through a queue")
with lock:
    print(queue.get(timeout=10), os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize)
"""
"""A test's use of POSIX semaphores (`multiprocessing`'s locks and queues live in `/dev/shm`)."""


def test_every_user_of_a_phase_has_a_shared_memory_of_its_own(tmp_path: Path) -> None:
    """Finding: loguru #1069's tests create `multiprocessing.Lock()`, which failed with
    `PermissionError` in every phase: bubblewrap's `/dev/shm` was root's, mode 0755. Each phase
    has its own, every user may write it, and it is as large as a container's."""
    from selfbench.environments.local.sandbox import (  # noqa: PLC0415
        SHM_BYTES,
        Mounts,
        Sandbox,
        leased_users,
        require_sandbox,
    )

    with leased_users() as users:
        sandbox = Sandbox(tmp_path / "ws", users, require_sandbox())
        for user in ("agent", "verifier"):
            log = tmp_path / f"{user}.log"
            result = sandbox.run(
                f'echo left >/dev/shm/left-by-root && runuser -u {user} -- python3 -c "$1"',
                (SHARED_MEMORY,),
                mounts=Mounts(),
                log=log,
                timeout=60,
            )
            output = log.read_text(errors="replace")
            assert result.exit_code == 0, output
            assert f"through a queue {SHM_BYTES}" in output
    assert not Path("/dev/shm/left-by-root").exists()


@pytest.mark.parametrize(
    ("help_text", "sized"),
    [("    --size BYTES   Set size of next argument (only for --tmpfs)\n", True), ("", False)],
    ids=["bubblewrap-0.7-or-later", "older"],
)
def test_shared_memory_has_a_size_where_bubblewrap_can_set_one(
    tmp_path: Path, help_text: str, sized: bool
) -> None:
    from selfbench.environments.local.sandbox import SHM_BYTES, _shm_args  # noqa: PLC0415

    bwrap = tmp_path / "bwrap"
    bwrap.write_text(f"#!/bin/sh\nprintf '%s' '{help_text}'\n", encoding="utf-8")
    bwrap.chmod(0o755)
    size = ["--size", str(SHM_BYTES)] if sized else []
    assert _shm_args(str(bwrap)) == ("--perms", "01777", *size, "--tmpfs", "/dev/shm")
