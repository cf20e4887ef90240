"""The isolated workspace the `local` environment runs a bundle's scripts in (SPEC §7).

Isolation is bubblewrap's (`bwrap`, Debian package `bubblewrap`): a well-kept, small setuid-free
tool that builds a private mount namespace from a list of binds, which is exactly what the
containers provide and nothing more. Each phase gets:

* the host's system directories bound read-only, the host's `/usr/local` covered by the task's
  own toolchains at the image's paths and the host's toolchain executables in `/usr/bin` covered
  (when the sandbox is given `toolchains`), with the task's own directories bound writable at the
  container paths: `/app`, `/tests`, `/logs`, `/opt/selfbench`, and `/solution` read-only only
  where the solution may be seen;
* the tool state setup prepares (the images' `/opt/uv-cache`, `/opt/go`, `/opt/corepack`, a
  toolchain's own such as `/usr/local/cargo`) written by the preparation stages alone; every
  later phase that runs the agent's or the tests' code gets a copy of its own (an overlay of
  setup's, `overlay.py`, where the kernel mounts one; else `cp -a --reflink=auto`), removed
  when it ends, and any other sees setup's read-only (`ToolState`):
  nothing one phase writes there reaches another phase or trial. The toolchains themselves are
  root's and read-only in every phase (cargo's home too: setup opens only its caches);
* private `/tmp`, `/run`, `/dev` (only `null`, `zero`, `full`, `random`, `urandom`, `tty`, a
  private `pts`, and `shm`: a tmpfs every user may write, of `SHM_BYTES` as a container's where
  bubblewrap can size it (0.7.0 and later), for the POSIX semaphores and shared memory of
  `multiprocessing`'s locks and queues) and `/proc` (its own PID namespace's); everything but
  the system
  directories absent (homes, `/root`, `/run` with its sockets, project directories), and the
  task's own bundle covered;
* the host kernel's interfaces read-only: `/sys`, and in `/proc` every entry but the processes'
  own directories (`/proc/sys` with `kernel/core_pattern` and `kernel/modprobe`,
  `sysrq-trigger`, `irq`, `bus`, `fs`, ...): root inside cannot set a tunable the host obeys
  (a core pattern that the host's kernel runs as root on the next crash);
* of the host's files, only what any unprivileged host user can read (`PrivateEntries`): every
  file in the system directories that is not world-readable, every directory that is not
  world-listable and searchable, and every socket, pipe or device node (a host daemon's socket
  reached by its path, whatever the network namespace) covered by an empty one (found by one
  walk when the run starts: an entry made later is not covered). Root inside
  needs `CAP_DAC_OVERRIDE` for the task's own trees (the agent's and verifier's files), and would
  not need it for the host's secrets anyway: they belong to root, whose owner bits already let
  it read `/etc/sudoers` or an SSH host key; a user namespace would not help either, since
  bubblewrap maps one uid and the phases need three (root, `agent`, `verifier`). So the rule is
  what the sandbox shows, not what root may do: an image built from a distribution has no host
  secrets, and the closest the host's own directories come is what any of its users may read;
* `/etc/passwd` and `/etc/group` with the `agent` and `verifier` users added;
* its own PID namespace: when the phase's script ends, every process it started dies with it;
* `agent` and `verifier` uids of its own, leased for as long as the sandbox lives (`uids.py`):
  the kernel counts a user's processes host-wide, so the per-user process cap (`ulimit -u`) is
  this sandbox's alone, never shared with another trial or run;
* root inside keeps only the capabilities the scripts need (owning and switching users, killing
  the verifier's leftovers): never `CAP_SYS_ADMIN` (no remounting) nor `CAP_DAC_READ_SEARCH`
  (no `open_by_handle_at`);
* a network only where the phase needs one (setup): its own namespace, connected to the outside
  by slirp4netns without the host's loopback; otherwise a fresh namespace with only loopback;
* a control group of its own per phase, with the task's CPUs and memory and a process cap
  (`cgroup.py`), each at most the host's ceiling (`ceilings.py`): each trial's limits are its own;
  and a workspace on a filesystem of the task's storage (`disk.py`).

Creating a mount namespace with several users needs root: the local environment refuses to start
otherwise (`selfbench validate --env harbor` needs no privileges on this machine).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, ClassVar, Literal

from selfbench import activity
from selfbench._fs import read_beneath
from selfbench.bundle import layout
from selfbench.environments.local import _one_walk
from selfbench.environments.local._gate import Gate
from selfbench.environments.local.cgroup import USER_PROCESSES, Limits, PhaseCgroup
from selfbench.environments.local.disk import free_bytes, mount_workspace, workspace_full
from selfbench.environments.local.overlay import MOUNT_FAILED, Overlay, mounting, supported
from selfbench.environments.local.uids import Users, leased_users
from selfbench.environments.process import run_captured, run_phase
from selfbench.errors import BundleError, SandboxError, SelfbenchError, translating
from selfbench.toolchains.model import Mount as ToolchainMount
from selfbench.toolchains.model import Provisioned
from selfbench.toolchains.provision import host_tools_to_hide

__all__ = [
    "CONTAINER_PATH",
    "LOG_LIMIT",
    "SETUP_TRIES",
    "SHARED_ENVIRONMENT",
    "SHARED_STATE",
    "SHM_BYTES",
    "Mounts",
    "PhaseResult",
    "PrivateEntries",
    "Sandbox",
    "SandboxError",
    "ToolState",
    "Users",
    "copy_tree",
    "leased_users",
    "read_status",
    "read_workspace_text",
    "require_sandbox",
]

CONTAINER_PATH = layout.CONTAINER_PATH
SHM_BYTES = 64 << 20
"""The size of a phase's `/dev/shm` (a container engine's default, 64 MiB); its pages count
against the phase's memory."""

_SYSTEM_DIRS = ("bin", "etc", "lib", "lib32", "lib64", "libx32", "nix", "sbin", "usr", "var")
"""The host's top-level entries the sandbox sees (read-only); everything else is absent: homes,
`/root`, `/tmp`, `/run` (sockets such as a Docker daemon's), `/mnt`, `/media`, `/srv` and any
project directory at the top level."""

_COVERED_DIRS = (
    "/var/tmp",  # noqa: S108 - covered by a private tmpfs, never written
    "/var/log",
    "/var/mail",
    "/var/spool",
    "/var/backups",
    "/var/lib/docker",
    "/var/lib/containerd",
)
"""Host state under the bound directories that is replaced by an empty private tmpfs."""

SHARED_STATE = ("/opt/uv-cache", "/opt/go", "/opt/corepack")
"""The images' shared tool state (SPEC §5): one directory per task that setup fills, then a
private copy of it for every later phase (`ToolState`)."""

SHARED_ENVIRONMENT = {
    "UV_CACHE_DIR": "/opt/uv-cache",
    "GOPATH": "/opt/go",
    "COREPACK_HOME": "/opt/corepack",
}
"""The images' environment for that state."""


def _user_limit(limits: Limits | None) -> str:
    """Every phase caps its processes (per user: a fork bomb stops there, not at the host's
    limit; `Limits.user_pids`)."""
    cap = limits.user_pids if limits is not None else USER_PROCESSES
    return f"ulimit -u {cap} 2>/dev/null || true\n"


_CAPABILITIES = (
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_AUDIT_WRITE",
)
"""What root inside needs: chown/chmod the tree, switch to agent/verifier, kill leftovers.

Never `CAP_DAC_READ_SEARCH`: it allows `open_by_handle_at`, which opens any inode of a mounted
filesystem by number, read-only binds notwithstanding (the "shocker" container escape).
"""

ToolState = Literal["setup", "private", "read-only"]
"""How a phase sees the tool state that setup prepares (see `Mounts.tool_state`)."""


@dataclass(frozen=True, slots=True)
class Mounts:
    """What one phase sees besides the read-only host: container path → host path."""

    binds: Mapping[str, Path] = field(default_factory=dict)
    """Writable."""
    ro_binds: Mapping[str, Path] = field(default_factory=dict)
    """Read-only."""
    network: bool = False
    """Share the host's network (else only a private loopback)."""
    hidden: tuple[Path, ...] = ()
    """Host directories covered by an empty tmpfs (the task's own bundle, its definition)."""
    root_home_writable: bool = False
    """Root's home is writable (the setup phase), else read-only."""
    environment: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the phase's environment (setup: `--setup-env`)."""
    overlays: Mapping[Path, Overlay] = field(default_factory=dict)
    """Host mount points → the copy-on-write tree shown there (`overlay.py`); a bind names the
    mount point as it would name a copy."""
    tool_state: ToolState = "private"
    """The tool state setup prepares (`SHARED_STATE`, and a toolchain's own such as
    `/usr/local/cargo`): "setup" writes it in place (the preparation stages only); "private"
    gives the phase a copy of its own, removed when the phase ends, so what the agent's or the
    tests' code writes there reaches no later phase or trial; "read-only" shows setup's as it is
    (a phase that runs no agent or test code)."""


@dataclass(frozen=True, slots=True)
class PhaseResult:
    """How one sandboxed phase ended."""

    exit_code: int
    timed_out: bool
    seconds: float
    out_of_memory: bool = False
    """The kernel killed a process of the phase for exceeding the task's memory."""
    process_limit: bool = False
    """A process of the phase failed to fork at the phase's process cap."""
    user_process_limit: bool = False
    """A user of the phase reached its own process cap (`ulimit -u`), as the host counted it."""
    free_bytes: int | None = None
    """The free space a write in the workspace could still use as the phase's processes ended
    (`disk.free_bytes`; None: unknown): read then, before anything of the phase is removed, so
    the log's "workspace is full" and the limits a verdict names read the same."""


@functools.cache
def _shm_args(bwrap: str) -> tuple[str, ...]:
    """The arguments that give a phase its own `/dev/shm` (`SHM_BYTES`, every user may write):
    `--size` came with bubblewrap 0.7.0; an older one makes it without a size of its own (the
    phase's memory still bounds it)."""
    try:
        helped = run_captured([bwrap, "--help"])
        sized = b"--size" in helped.stdout + helped.stderr
    except OSError:
        sized = False
    size = ["--size", str(SHM_BYTES)] if sized else []
    return ("--perms", "01777", *size, "--tmpfs", "/dev/shm")  # noqa: S108 - private tmpfs


def require_sandbox() -> str:
    """The `bwrap` executable; refuses when this machine cannot create the workspace."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "the local environment needs bubblewrap (bwrap): apt-get install bubblewrap"
        )
    if os.geteuid() != 0:
        raise SandboxError(
            "the local environment needs root to create its workspace users; "
            "run as root (or use --env harbor)"
        )
    return bwrap


def _account_files(root: Path, users: Users) -> tuple[Path, Path]:
    """`/etc/passwd` and `/etc/group` for the sandbox: the host's plus agent and verifier."""
    root.mkdir(parents=True, exist_ok=True)
    passwd, group = root / "passwd", root / "group"
    names = {layout.AGENT_USER: users.agent, layout.VERIFIER_USER: users.verifier}
    host_passwd = [
        line
        for line in Path("/etc/passwd").read_text(encoding="utf-8").splitlines()
        if line.split(":", 1)[0] not in names
    ]
    host_group = [
        line
        for line in Path("/etc/group").read_text(encoding="utf-8").splitlines()
        if line.split(":", 1)[0] not in names
    ]
    host_passwd.extend(
        f"{name}:x:{uid}:{uid}::/home/{name}:/bin/bash" for name, uid in names.items()
    )
    host_group.extend(f"{name}:x:{uid}:" for name, uid in names.items())
    passwd.write_text("\n".join(host_passwd) + "\n", encoding="utf-8")
    group.write_text("\n".join(host_group) + "\n", encoding="utf-8")
    return passwd, group


_REUSED_UNLIMITED = "no storage limit: the reused workspace was prepared without one"


@dataclass
class Sandbox:
    """A workspace root on the host and the way to run phases isolated inside it.

    `root/home/root` is root's home: writable in the phase that sets the task up (as the
    images' build keeps what setup left in `/root`), read-only afterwards. The `agent` and
    `verifier` homes are new and empty in every phase, so no run inherits another's caches.
    `root/shared/*` are the images' shared tool state (`/opt/uv-cache`, `/opt/go`,
    `/opt/corepack`) and `root/toolchain-state/*` a toolchain's (`/usr/local/cargo`): written by
    the preparation stages, never afterwards; every later phase gets its own copy
    (`Mounts.tool_state`).
    """

    root: Path
    users: Users
    bwrap: str
    limits: Limits | None = None
    """The task's CPUs, memory, storage and a process cap, per phase (None: unlimited)."""
    toolchains: Provisioned | None = None
    """The task's toolchains at the image's paths (None: the host's `/usr/local` as it is)."""
    private: PrivateEntries | None = None
    """The host entries the sandbox covers (None: found when the first phase runs)."""
    adopted: bool = False
    """`root` is a parked workspace, prepared before (`workspaces.py`): its disk is mounted
    already and its tool state written."""
    _etc: tuple[Path, Path] = field(init=False)
    _root_home: Path = field(init=False)
    _phases: Iterator[int] = field(init=False, default_factory=lambda: itertools.count(1))
    """Numbers the phases' homes; `next` on it is atomic, so phases may start from threads."""
    _copies: Iterator[int] = field(init=False, default_factory=lambda: itertools.count(1))
    """Numbers the phases' private copies of the tool state (atomic as `_phases`)."""
    _notes: tuple[str, ...] = field(init=False, default=())
    """What every phase's log says of its limits (lowered to the host's, a storage skip)."""

    def __post_init__(self) -> None:
        if self.limits is not None:  # the disk first: everything below is written on it
            storage = self.limits.storage_mb
            if self.adopted:  # mounted when it was first prepared, or never
                skip = "" if storage is None or self.root.is_mount() else _REUSED_UNLIMITED
            else:
                skip = mount_workspace(self.root, storage) if storage is not None else ""
            self._notes = (*self.limits.lowered, *filter(None, [skip]))
        self._etc = _account_files(self.root / "etc", self.users)
        self._root_home = self.root / "home" / "root"
        self._root_home.mkdir(parents=True, exist_ok=True)
        self._root_home.chmod(0o700)
        for target in SHARED_STATE:
            (self.root / "shared" / Path(target).name).mkdir(parents=True, exist_ok=True)
        for mount in self.toolchains.mounts if self.toolchains else ():
            self._prepare_toolchain_mount(mount)
        if self.toolchains is not None:
            self._write_profile()

    LASTING: ClassVar[tuple[str, ...]] = ("etc", "home/root", "shared", "toolchain-state")
    """The entries of `root` a preparation writes for every later phase (relative paths); the
    rest is a phase's own."""

    def tool_state(self) -> dict[str, Path]:
        """The tool state setup prepares: container path → the host directory setup wrote."""
        state = {target: self.root / "shared" / Path(target).name for target in SHARED_STATE}
        for mount in self.toolchains.mounts if self.toolchains else ():
            if mount.kind == "state":
                state[mount.target] = self._state(mount.target)
        return state

    def _private_state(self) -> tuple[dict[str, Path], Path, dict[Path, Overlay]]:
        """A copy of the tool state for one phase, and the directory holding it, which the
        phase's end removes: each an overlay of setup's (`overlay.py`) where this machine
        mounts them, else a copy (`cp -a`, a reflink where the filesystem has them)."""
        holder = self.root / "phase-state" / str(next(self._copies))
        copies: dict[str, Path] = {}
        overlays: dict[Path, Overlay] = {}
        state = sorted(self.tool_state().items())
        layered = supported(self.root, *(source for _, source in state))
        for index, (target, source) in enumerate(state):
            copies[target] = holder / f"{index}-{Path(target).name}"
            if layered:
                overlays[copies[target]] = Overlay.beside(source, copies[target])
            else:
                copy_tree(source, copies[target])
        return copies, holder, overlays

    def _state_args(self, mounts: Mounts, copies: Mapping[str, Path] | None) -> list[str]:
        """The shared tool state's binds (a toolchain's own are `_toolchain_args`')."""
        args: list[str] = []
        for target in SHARED_STATE:
            args += self._state_bind(target, mounts, copies)
        return args

    def _state_bind(
        self, target: str, mounts: Mounts, copies: Mapping[str, Path] | None
    ) -> list[str]:
        """One tool state directory as `mounts.tool_state` shows it: setup's own writable, a
        private copy writable, or setup's read-only (a phase run without its copies)."""
        if mounts.tool_state == "setup":
            return ["--bind", str(self.tool_state()[target]), target]
        if copies is not None and target in copies:
            return ["--bind", str(copies[target]), target]
        return ["--ro-bind", str(self.tool_state()[target]), target]

    def _prepare_toolchain_mount(self, mount: ToolchainMount) -> None:
        """Make a toolchain's writable state."""
        if mount.kind == "state":
            self._state(mount.target).mkdir(parents=True, exist_ok=True)

    def _profile(self) -> Path:
        """The host's `/etc/profile` ending with the images' PATH, as their
        `/etc/profile.d/00-selfbench-path.sh` sets it for login shells (setup runs in one)."""
        return self.root / "etc" / "profile"

    def _write_profile(self) -> None:
        try:
            host = Path("/etc/profile").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        self._profile().write_text(f"{host}\nexport PATH={CONTAINER_PATH}\n", encoding="utf-8")

    def _state(self, target: str) -> Path:
        return self.root / "toolchain-state" / target.strip("/").replace("/", "-")

    def _toolchain_args(self, mounts: Mounts, copies: Mapping[str, Path] | None) -> list[str]:
        """The host's `/usr/local` covered, the task's toolchains mounted at the image's paths
        (their state as `mounts.tool_state` says), and the host's own toolchain executables in
        `/usr/bin` covered."""
        if self.toolchains is None:
            return []
        args = ["--tmpfs", "/usr/local"]
        parents = {str(p) for m in self.toolchains.mounts for p in Path(m.target).parents}
        for parent in sorted(parents - {"/", "/usr", "/opt"}, key=lambda p: (p.count("/"), p)):
            args += ["--perms", "0755", "--dir", parent]  # bwrap would make them 0700
        args += ["--perms", "0755", "--dir", "/usr/local/bin"]
        if self._profile().is_file():
            args += ["--ro-bind", str(self._profile()), "/etc/profile"]
        for mount in self.toolchains.mounts:
            if mount.kind == "bind":
                args += ["--ro-bind", mount.source, mount.target]
            elif mount.kind == "symlink":
                args += ["--symlink", mount.source, mount.target]
            else:
                args += self._state_bind(mount.target, mounts, copies)
                for target, source in sorted(mounts.binds.items()):  # after it: over it
                    if Path(target).is_relative_to(mount.target) and target != mount.target:
                        args += ["--bind", str(source), target]
        for path in host_tools_to_hide(self.toolchains):
            args += ["--ro-bind", "/dev/null", str(path)]
        return args

    def _state_mounts(self) -> tuple[str, ...]:
        """The toolchains' own tool state mounts (`/usr/local/cargo`): a phase's binds below
        one are made after it (`_toolchain_args`), not with the others."""
        mounts = self.toolchains.mounts if self.toolchains else ()
        return tuple(mount.target for mount in mounts if mount.kind == "state")

    def _user_homes(self) -> list[str]:
        """Fresh, empty homes for agent and verifier, for one phase."""
        phase = next(self._phases)
        args: list[str] = []
        for name, uid in (
            (layout.AGENT_USER, self.users.agent),
            (layout.VERIFIER_USER, self.users.verifier),
        ):
            home = self.root / "home" / f"{name}-{phase}"
            home.mkdir(parents=True)
            os.chown(home, uid, uid)
            home.chmod(0o755)
            args += ["--bind", str(home), f"/home/{name}"]
        return args

    def command(
        self,
        script: str,
        args: Sequence[str],
        mounts: Mounts,
        *,
        gate: Gate | None = None,
        copies: Mapping[str, Path] | None = None,
    ) -> list[str]:
        """The `bwrap` argv that runs `bash -c script` as root in the workspace; `copies` are
        the phase's private tool state (`run` makes them; without them it is read-only).

        With a `gate`, bwrap reports its namespaces (`--info-fd`) and waits (`--block-fd`) until
        `run` has moved the phase into its control group and, when the phase has a network, has
        connected its own network namespace to the outside through slirp4netns.
        """
        slirp = gate is not None and gate.slirp_wanted
        passwd, group = self._etc
        argv = [
            self.bwrap,
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "selfbench",
        ]
        if not mounts.network or slirp:
            argv.append("--unshare-net")
        if gate is not None:
            argv += ["--info-fd", str(gate.info_write), "--block-fd", str(gate.block_read)]
        if self.private is None:
            self.private = PrivateEntries.for_run()
        argv += _host_binds(self.private)
        if slirp:
            argv += ["--ro-bind", str(self._resolv_conf()), "/etc/resolv.conf"]
        argv += ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group"]
        argv += [*_proc_args(), "--dev", "/dev", "--ro-bind", "/sys", "/sys"]
        argv += list(_shm_args(self.bwrap))
        argv += ["--perms", "01777", "--tmpfs", "/tmp", "--tmpfs", "/run", "--dir", "/home"]  # noqa: S108 - private tmpfs
        home_mode = "--bind" if mounts.root_home_writable else "--ro-bind"
        argv += [home_mode, str(self._root_home), "/root", *self._user_homes()]
        argv += self._state_args(mounts, copies)
        for path in mounts.hidden:
            argv += ["--tmpfs", str(path)]
        argv += _mount_args(mounts, below=self._state_mounts())
        argv += self._toolchain_args(mounts, copies)
        argv += ["--remount-ro", "/", "--chdir", "/"]
        argv += ["--cap-drop", "ALL"]
        for capability in _CAPABILITIES:
            argv += ["--cap-add", capability]
        announce = gate.announce() if gate is not None else ""
        limit = _user_limit(self.limits)
        argv += ["--", "/bin/bash", "-c", announce + limit + script, "selfbench", *args]
        return argv

    def _storage_hint(self) -> str:
        storage = self.limits.storage_mb if self.limits is not None else None
        return f"the workspace is full: the task's storage is {storage} MB (storageMb)"

    def _resolv_conf(self) -> Path:
        """slirp4netns answers DNS at 10.0.2.3 (the host's resolver may sit on its loopback)."""
        path = self.root / "etc" / "resolv.conf"
        if not path.is_file():
            path.write_text(f"nameserver {_SLIRP_DNS}\n", encoding="ascii")
        return path

    def run(
        self, script: str, args: Sequence[str], *, mounts: Mounts, log: Path, timeout: float
    ) -> PhaseResult:
        """Run one phase; its output is appended to `log`. Kills it all after `timeout` s.

        A phase whose bwrap failed to set the sandbox up, before its script ran (under load its
        namespace setup can fail, `bwrap: loopback: Failed RTM_NEWADDR: ...`), is run again, up
        to `SETUP_TRIES` times in all, each retry said in the log. With `mounts.tool_state`
        "private", each try gets its own copy of the tool state, removed when it ends.

        Raises:
            CalledProcessError: the tool state could not be copied (a full disk, say).
        """
        with activity.phase(log):
            return self._tries(script, args, mounts=mounts, log=log, timeout=timeout)

    def _tries(
        self, script: str, args: Sequence[str], *, mounts: Mounts, log: Path, timeout: float
    ) -> PhaseResult:
        for attempt in range(1, SETUP_TRIES + 1):
            start = log.stat().st_size if log.is_file() else 0
            copies, holder, overlays = (
                self._private_state() if mounts.tool_state == "private" else ({}, None, {})
            )
            gate = Gate.open(slirp=mounts.network and shutil.which("slirp4netns") is not None)
            cgroup, why = PhaseCgroup.create(self.limits) if self.limits else (None, "")
            if self.limits is not None and self.limits.seconds is not None:
                timeout = min(timeout, self.limits.seconds)
            try:
                result = self._run(script, args, mounts=mounts, log=log, timeout=timeout,
                                   gate=gate, cgroup=cgroup, note=why, copies=copies,
                                   overlays=overlays)  # fmt: skip
                started = gate.script_started()
            finally:
                gate.close()
                if cgroup is not None:
                    cgroup.close()
                if holder is not None:
                    shutil.rmtree(holder, ignore_errors=True)
            if not started and (failed := _mount_failed(log, start)):
                raise SandboxError(f"{failed} (log {log})")
            if started or result.exit_code == 0 or result.timed_out or attempt == SETUP_TRIES:
                break
            if not _bwrap_failed(log, start):
                break
            with log.open("ab") as output:
                output.write(
                    "selfbench: bwrap failed to set the sandbox up; "
                    f"retrying (try {attempt + 1} of {SETUP_TRIES})\n".encode()
                )
            time.sleep(_SETUP_BACKOFF_SECONDS * attempt)
        return result

    def _run(  # noqa: PLR0913 - run's arguments and the phase's plumbing
        self,
        script: str,
        args: Sequence[str],
        *,
        mounts: Mounts,
        log: Path,
        timeout: float,
        gate: Gate,
        cgroup: PhaseCgroup | None,
        note: str,
        copies: Mapping[str, Path],
        overlays: Mapping[Path, Overlay],
    ) -> PhaseResult:
        argv = self.command(script, args, mounts, gate=gate, copies=copies)
        argv = mounting(argv, {**mounts.overlays, **overlays})
        environment = {
            "PATH": CONTAINER_PATH,
            "HOME": "/root",
            "TERM": "dumb",
            "USER": "root",
            "LOGNAME": "root",
            **SHARED_ENVIRONMENT,
            **dict(layout.PINNED_ENVIRONMENT),
            **dict(self.toolchains.environment if self.toolchains else ()),
            **mounts.environment,
        }
        start = time.monotonic()
        log.parent.mkdir(parents=True, exist_ok=True)
        watch = cgroup.watch_users(self.limits.user_pids) if cgroup and self.limits else None
        with log.open("ab") as output, watch or contextlib.nullcontext():
            for line in (*self._notes, *filter(None, [note])):
                output.write(f"selfbench: {line}\n".encode())
            code, timed_out = run_phase(
                argv,
                env=environment,
                output=output,
                timeout=timeout,
                log_limit=LOG_LIMIT,
                pass_fds=gate.child_fds(),
                started=lambda pid: _started(pid, gate, output, cgroup),
            )
            if timed_out:
                output.write(f"\nselfbench: phase killed after {timeout:g} s\n".encode())
            free = free_bytes(self.root)
            if self.limits is not None and workspace_full(self.root, free):
                output.write(f"\nselfbench: {self._storage_hint()}\n".encode())
        out_of_memory = cgroup is not None and cgroup.out_of_memory()
        process_limit = cgroup is not None and cgroup.process_limit_hit()
        user_limit = watch is not None and watch.reached
        seconds = time.monotonic() - start
        return PhaseResult(code, timed_out, seconds, out_of_memory, process_limit, user_limit, free)


def copy_tree(source: Path, target: Path) -> None:
    """Copy a prepared tree with its owners, modes, links and ignored files (`cp -a`).

    Raises:
        CalledProcessError: `cp` failed (a full disk, say).
    """
    target.mkdir(parents=True, exist_ok=True)
    run_captured(["cp", "-a", "--reflink=auto", "--", f"{source}/.", f"{target}/"], check=True)


def read_status(directory: Path, name: str) -> int:
    """An exit status a phase's script wrote to `directory/name`; -1 when it wrote none, or left
    a link or anything but a regular file there (never followed: `_fs.read_beneath`)."""
    try:
        data = read_beneath(directory, name, error=BundleError, limit=_STATUS_LIMIT)
        return int(data.decode("ascii").strip()) if data is not None else -1
    except (SelfbenchError, UnicodeDecodeError, ValueError):
        return -1


def read_workspace_text(directory: Path, name: str) -> str:
    """The text of a log a phase wrote to `directory/name` ("" when none); a link or other
    non-regular file is not read, and said instead."""
    try:
        data = read_beneath(directory, name, error=BundleError, limit=LOG_LIMIT)
    except SelfbenchError as exc:
        return f"selfbench: {exc}\n"
    return data.decode("utf-8", errors="replace") if data is not None else ""


_STATUS_LIMIT = 64


def _mount_args(mounts: Mounts, *, below: tuple[str, ...] = ()) -> list[str]:
    """A phase's own binds but those `below` a toolchain's state mount (made after it);
    mount points below the private `/run` made readable by every phase user first (bwrap would
    make a missing parent 0700, root's alone)."""
    below_run = {
        str(parent)
        for target in (*mounts.binds, *mounts.ro_binds)
        for parent in Path(target).parents
        if parent.is_relative_to("/run") and parent != Path("/run")
    }
    args: list[str] = []
    for parent in sorted(below_run, key=lambda p: (p.count("/"), p)):
        args += ["--perms", "0755", "--dir", parent]
    for target, source in sorted(mounts.binds.items()):
        if not any(Path(target).is_relative_to(state) for state in below):
            args += ["--bind", str(source), target]
    for target, source in sorted(mounts.ro_binds.items()):
        args += ["--ro-bind", str(source), target]
    return args


def _started(pid: int, gate: Gate, output: IO[bytes], cgroup: PhaseCgroup | None) -> None:
    """The phase's bwrap runs: the heartbeat may look at its processes, the gate lets it go."""
    activity.process(pid)
    gate.release(output, bwrap=pid, cgroup=cgroup)


def _mount_failed(log: Path, start: int) -> str | None:
    """The line saying an overlay of the phase did not mount, in what it wrote to `log` from
    `start` on (`overlay.mounting`), with mount's own message before it; None if none did."""
    with log.open("rb") as handle:
        handle.seek(start)
        lines = handle.read(LOG_LIMIT).decode("utf-8", errors="replace").splitlines()
    for index, line in enumerate(lines):
        if line.startswith(MOUNT_FAILED):
            said = [text.strip() for text in lines[max(0, index - 4) : index]]
            starts = [at for at, text in enumerate(said) if text.startswith("mount:")]
            cause = " ".join(said[starts[-1] :]) if starts else ""
            return f"{line}: {cause}" if cause else line
    return None


def _bwrap_failed(log: Path, start: int) -> bool:
    """Whether what the phase wrote to `log` from `start` on has bwrap's own error line."""
    with log.open("rb") as handle:
        handle.seek(start)
        written = handle.read(LOG_LIMIT)
    return any(line.startswith(b"bwrap: ") for line in written.splitlines())


LOG_LIMIT = 64 << 20
"""The most of one phase's output kept in its log."""

SETUP_TRIES = 3
"""How many times a phase is run when bwrap fails to set its sandbox up before the script."""
_SETUP_BACKOFF_SECONDS = 0.5

_SLIRP_DNS = "10.0.2.3"


def _bind_entry(path: Path) -> list[str]:
    """Show one host entry read-only: a symlink as itself, a directory or file bound."""
    if path.is_symlink():
        return ["--symlink", str(path.readlink()), str(path)]
    if path.is_dir() or path.is_file():
        return ["--ro-bind", str(path), str(path)]
    return []


def _opt_entries() -> list[Path]:
    """The host's `/opt` entries the sandbox shows (not the images' own paths there)."""
    if not Path("/opt").is_dir():
        return []
    return [
        entry
        for entry in sorted(Path("/opt").iterdir())
        if str(entry) not in SHARED_STATE and entry.name != "selfbench"
    ]


def _walked_roots() -> list[Path]:
    """The host directories the sandbox shows: the system directories and `/opt`'s entries."""
    roots = [*(Path("/", name) for name in _SYSTEM_DIRS), *_opt_entries()]
    return [root for root in roots if root.is_dir() and not root.is_symlink()]


_FIND_PRIVATE = (
    "(", "-type", "d", "(", "!", "-perm", "-o+rx", ")", "-prune", "-printf", r"d%p\0", ")",
    "-o", "(", "!", "-type", "d", "!", "-type", "l", "(", "!", "-type", "f", "-o",
    "!", "-perm", "-o+r", ")", "-printf", r"f%p\0", ")",
)  # fmt: skip
"""`find` arguments printing each private entry once: `d` directories (not descended), `f` the
rest; each ends with a NUL byte, so any name is one entry."""


@dataclass(frozen=True, slots=True)
class PrivateEntries:
    """The host entries under the shown directories that an unprivileged host user could not
    read, list or connect to: the sandbox covers each with an empty one."""

    directories: tuple[str, ...] = ()
    """Directories not both world-readable and world-searchable (covered by an empty tmpfs)."""
    files: tuple[str, ...] = ()
    """Files not world-readable, sockets, pipes and device nodes (covered by `/dev/null`)."""

    @classmethod
    def for_run(cls) -> PrivateEntries:
        """`find`'s entries, walked once per run where the command opened a scope for it
        (`_one_walk.py`), else walked now.

        Raises:
            SandboxError: the host's directories cannot be walked.
        """
        return _one_walk.shared(cls.find)

    @classmethod
    def find(cls) -> PrivateEntries:
        """Walk the shown host directories (a second or two: once per run, see `for_run`).

        Raises:
            SandboxError: the host's directories cannot be walked.
        """
        roots = [str(root) for root in _walked_roots()]
        if not roots:  # find would walk the current directory
            return cls()
        covered = tuple(f"{name}/" for name in _COVERED_DIRS)
        with translating(SandboxError, "walk the host's directories"):
            found = run_captured(["find", *roots, *_FIND_PRIVATE]).stdout
        directories: list[str] = []
        files: list[str] = []
        for record in found.split(b"\0"):
            kind, path = record[:1], os.fsdecode(record[1:])
            if not path.startswith("/") or f"{path}/".startswith(covered):
                continue
            (directories if kind == b"d" else files).append(path)
        return cls(tuple(directories), tuple(files))


def _proc_args() -> list[str]:
    """A private `/proc` whose entries but the processes' own directories are the host's,
    read-only (the kernel's tunables and triggers)."""
    args = ["--proc", "/proc"]
    with os.scandir("/proc") as entries:
        names = sorted(entry.name for entry in entries if not entry.is_symlink())
    for name in names:
        if not name.isdigit():
            args += ["--ro-bind-try", f"/proc/{name}", f"/proc/{name}"]
    return args


def _host_binds(private: PrivateEntries) -> list[str]:
    """The host's system directories, read-only; runtime state and private entries covered."""
    args: list[str] = []
    for name in _SYSTEM_DIRS:
        args += _bind_entry(Path("/", name))
    args += ["--dir", "/opt"]
    for entry in _opt_entries():
        args += _bind_entry(entry)
    for name in _COVERED_DIRS:
        if Path(name).is_dir() and not Path(name).is_symlink():
            args += ["--tmpfs", name]
    # an entry gone since the walk (a lock file) is left out: bwrap could not cover it
    for directory in filter(os.path.lexists, private.directories):
        args += ["--perms", "0700", "--tmpfs", directory]
    for path in filter(os.path.lexists, private.files):
        args += ["--ro-bind", "/dev/null", path]
    return args
