"""The sandbox an author or reviewer command runs in: the clone and the MCP server, nothing more.

An agent command is a program selfbench did not write, steered by a model reading an untrusted
repository, so it runs in bubblewrap (`bwrap`), built from the same parts as the validation
sandbox (`selfbench.environments.local.sandbox`):

* the host's system directories read-only, every entry in them that an unprivileged host user
  could not read covered (`/etc/shadow`, SSH host keys, daemons' sockets); no homes, no
  `/root`, a private `/tmp`, `/run`, `/dev` and `/proc`;
* a private home (`HOME`), empty; or, with `run --author-home DIR`, a private copy of `DIR`
  (`private_home`): an agent CLI's login and settings, made for each command and removed after,
  so the command may change its copy but never `DIR` itself;
* writable: only the directories the command works in (the clone, the authoring output root);
  read-only: the Python that runs selfbench and its `selfbench mcp` server, the command's own
  program and every existing absolute path named in the command (what the user passed);
* an environment of `PATH`, `HOME`, `LANG`, `TERM`, the command's `SELFBENCH_*` inputs,
  `PYTHONPATH` naming this selfbench, and the variables the user names (`--author-env`, an
  agent's API key): nothing else of selfbench's environment;
* a network namespace of its own (`AuthorNetwork`): loopback and, by default, only the
  endpoints of its allow-list (`run --author-allow URL`, and the model APIs its `--author-env`
  variables name), reached through relays on the host (`selfbench.environments.egress`); never
  the host's loopback unless an endpoint there is allowed. With `run --author-network host`,
  the host's network, as before;
* its own PID namespace, ended with selfbench (`--die-with-parent`): every process the command
  starts, a `setsid` daemon too, dies with the run;
* run by root, it runs as an unprivileged uid (`nobody`), no capabilities, no new privileges;
  the writable directories are handed to that uid for the run and handed back after.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import selfbench
from selfbench._scratch import scratch_directory
from selfbench.environments import _forward
from selfbench.environments.egress import (
    MODEL_APIS,
    PROXY_VARIABLES,
    EgressPlan,
    Endpoint,
    RelayLog,
    endpoint_of,
    plan_for,
    relayed,
)
from selfbench.environments.local.sandbox import (
    _SYSTEM_DIRS,
    PrivateEntries,
    _host_binds,
    _proc_args,
)
from selfbench.errors import EgressError, SandboxError, translating

__all__ = [
    "AGENT_HOME",
    "AUTHOR_NETWORKS",
    "BASE_ENV",
    "DEFAULT_NETWORK",
    "AuthorNetwork",
    "Network",
    "Relays",
    "author_home_problem",
    "command_network",
    "confined",
    "handed_over",
    "private_home",
]

AGENT_HOME = "/home/agent"
"""The command's `HOME`: an empty private directory, or the private copy of `--author-home`."""
BASE_ENV = ("PATH", "LANG", "TERM")
"""The variables of selfbench's environment the command always gets (beside `HOME`)."""
_FALLBACK_UID = 65534


def _agent_ids() -> tuple[int, int]:
    """The unprivileged uid and gid a command started by root runs as (`nobody`)."""
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return _FALLBACK_UID, _FALLBACK_UID
    return entry.pw_uid, entry.pw_gid


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give `root` and everything under it (symlinks themselves, not followed) to uid:gid, but
    a file with other links: a local clone's objects are the user's repository's own files
    (read-only to the command; git never rewrites an object)."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for directory, names, files in os.walk(root):
        for name in (*names, *files):
            path = Path(directory, name)
            if path.is_dir() or path.lstat().st_nlink == 1:
                os.chown(path, uid, gid, follow_symlinks=False)


@contextlib.contextmanager
def handed_over(writable: Sequence[Path]) -> Iterator[None]:
    """While the block runs, the `writable` trees belong to the confined command's uid (when
    selfbench runs as root); afterwards, back to root, whatever the command left there."""
    if os.geteuid() != 0:
        yield
        return
    uid, gid = _agent_ids()
    for path in writable:
        _chown_tree(path, uid, gid)
    try:
        yield
    finally:
        for path in writable:
            if path.exists():
                _chown_tree(path, 0, 0)


def author_home_problem(home: Path, *, repo: Path, outputs: Sequence[Path]) -> str | None:
    """Why `home` cannot be an author home (`run --author-home`), in one line; None when it
    can: an existing directory that is not `/`, holds neither the repository nor any of
    `outputs` (the export, the run directory) and is not, nor holds, the invoking user's own
    home (every secret there would be handed to the command)."""
    given = f"--author-home {home}"
    if not home.is_dir():
        return f"{given}: not a directory"
    where = home.resolve()
    if where == Path("/"):
        return f"{given}: the whole file system cannot be the author's home"
    if Path.home().resolve().is_relative_to(where):
        return (
            f"{given}: holds your own home; give a directory with only the agent's login "
            "(log in with HOME=DIR)"
        )
    for name, path in (("the repository", repo), *(("the run's output", p) for p in outputs)):
        if path.absolute().resolve().is_relative_to(where):
            return f"{given}: holds {name} ({path}); give a directory of its own"
    return None


def _copy_home(source: Path, target: Path) -> None:
    """Copy the directories, regular files and symbolic links (as links) under `source` into
    the new directory `target`, modes kept; sockets, pipes and devices are left out."""
    target.mkdir(mode=0o700)
    directories = [(source, target)]
    for directory, names, files in os.walk(source):
        into = target / Path(directory).relative_to(source)
        for name in (*names, *files):
            path, copy = Path(directory, name), into / name
            if path.is_symlink():
                copy.symlink_to(path.readlink())
            elif path.is_dir():
                copy.mkdir(mode=0o700)
                directories.append((path, copy))
            elif path.is_file():
                shutil.copy2(path, copy)
    for path, copy in reversed(directories):  # modes last: a read-only directory is filled first
        shutil.copystat(path, copy)


@contextlib.contextmanager
def private_home(source: Path | None) -> Iterator[Path | None]:
    """A private copy of `source` for one command's `HOME` (None when `source` is), removed
    when the block ends. Made inside a scratch directory only selfbench's user can enter and,
    when selfbench runs as root, given to the command's uid: a root-owned `0700` login
    directory is readable inside, while no other host user (`nobody` either) can reach it.

    Raises:
        SandboxError: `source` cannot be read.
    """
    if source is None:
        yield None
        return
    with scratch_directory("selfbench-home-") as scratch:
        home = Path(scratch) / "home"
        with translating(SandboxError, f"copy the author home {source}"):
            _copy_home(source.resolve(), home)
            if os.geteuid() == 0:
                _chown_tree(home, *_agent_ids())
        yield home


# --- the network -------------------------------------------------------------------------------

AUTHOR_NETWORKS = ("allow-list", "host")
"""`run --author-network`: the allow-list (the default) or the host's network."""


@dataclass(frozen=True, slots=True)
class AuthorNetwork:
    """What author and reviewer commands may reach (`run --author-network`, `--author-allow`).

    `allow-list` (the default): a network namespace of their own, with loopback and only the
    allow-list's endpoints: each `--author-allow` URL's host and port, and each model API
    (`egress.MODEL_APIS`) that a variable they are given names: its base URL's when they get
    that variable, else its own when they get one of its keys. `host`: the host's network.
    """

    mode: str = "allow-list"
    allowed: tuple[str, ...] = ()
    """The `--author-allow` URLs, as given."""

    def _urls(self, env_names: Sequence[str], environ: Mapping[str, str]) -> list[tuple[str, str]]:
        """Each allowed URL, after the option that names it."""
        urls = [("--author-allow", url) for url in self.allowed]
        passed = {name for name in env_names if environ.get(name)}
        for api in dict.fromkeys(MODEL_APIS.values()):
            if api.variable in passed:
                urls.append((f"--author-env {api.variable}", environ[api.variable]))
            elif keys := sorted(passed.intersection(api.keys)):
                urls.append((f"--author-env {keys[0]}", api.url))
        return urls

    def endpoints(
        self, env_names: Sequence[str], environ: Mapping[str, str]
    ) -> tuple[Endpoint, ...]:
        """The allow-list, each endpoint once, for commands given the variables `env_names`
        names from `environ` (none on the host's network, which needs no list).

        Raises:
            EgressError: a URL that is not an http(s) one with a host (its option named).
        """
        if self.mode == "host":
            return ()
        found = []
        for where, url in self._urls(env_names, environ):
            try:
                found.append(endpoint_of(url))
            except EgressError as exc:
                raise EgressError(f"{where}: {exc}") from exc
        return tuple(dict.fromkeys(found))

    def problems(self, env_names: Sequence[str], environ: Mapping[str, str]) -> list[str]:
        """Why commands cannot run with this network, one line each (none when they can). The
        `--author-allow` URLs are checked on the host's network too, which keeps them unused."""
        if self.mode not in AUTHOR_NETWORKS:
            return [f"--author-network must be one of {', '.join(AUTHOR_NETWORKS)}"]
        if self.mode == "host":
            given = [("--author-allow", url) for url in self.allowed]
            return [f"{where}: {why}" for where, url in given if (why := _url_problem(url))]
        urls = self._urls(env_names, environ)
        problems = [f"{where}: {why}" for where, url in urls if (why := _url_problem(url))]
        problems += [
            f"--author-env {name}: the allow-list's relays use the host's proxy themselves, the "
            "command cannot reach it (pass no proxy variable, or give --author-network host)"
            for name in env_names
            if name in PROXY_VARIABLES
        ]
        if not problems:
            try:
                plan_for(self.endpoints(env_names, environ), environ)
            except EgressError as exc:  # the host's proxy for an endpoint
                problems.append(str(exc))
        return problems

    def describe(self, env_names: Sequence[str], environ: Mapping[str, str]) -> str:
        """What author and reviewer commands may reach, in one line for the run's output.

        Raises:
            EgressError: as `endpoints` and `egress.plan_for`.
        """
        if self.mode == "host":
            return (
                "author and reviewer commands use the host's network (--author-network host): "
                "every host, services on the host's loopback too"
            )
        endpoints = self.endpoints(env_names, environ)
        if not endpoints:
            return (
                "author and reviewer commands reach no host: give --author-allow URL for their "
                "model's API (or --author-network host)"
            )
        plan = plan_for(endpoints, environ)
        return f"author and reviewer commands reach only their {plan.describe()}"


def _url_problem(url: str) -> str | None:
    """Why `url` cannot be on an allow-list (`egress.endpoint_of`), or None."""
    try:
        endpoint_of(url)
    except EgressError as exc:
        return str(exc)
    return None


DEFAULT_NETWORK = AuthorNetwork()
"""The allow-list of no `--author-allow` URL: the model APIs the commands' variables name."""


@dataclass(frozen=True, slots=True)
class Relays:
    """An allow-list's relays, open on the host: its plan, the directory of the relays' Unix
    sockets (`N.sock` for endpoint N) and the command's `/etc/hosts`."""

    plan: EgressPlan
    sockets: Path
    hosts: Path


Network = Relays | Literal["host"] | None
"""A command's network in `confined`: its allow-list's relays, the host's network, or none
(loopback only)."""


@contextlib.contextmanager
def command_network(
    network: AuthorNetwork, env_names: Sequence[str], *, log: Path
) -> Iterator[Network]:
    """The network of one command given the variables `env_names` names (read from this
    process's environment, as the command's are): for an allow-list, its relays (through the
    host's proxy, if it names one), open while the block runs, each reason a connection could
    not be made said once in `log`.

    Raises:
        EgressError: an allowed URL, or the host's proxy for it, cannot be used.
        SandboxError: the relays cannot be opened.
    """
    if network.mode == "host":
        yield "host"
        return
    endpoints = network.endpoints(env_names, os.environ)
    if not endpoints:
        yield None
        return
    plan = plan_for(endpoints, os.environ, keep_ports=True)
    # a short host path: a Unix socket's path has at most 107 bytes
    with (
        tempfile.TemporaryDirectory(prefix="selfbench-net-") as temp,
        contextlib.ExitStack() as stack,
    ):
        with translating(SandboxError, "open the author's network relays"):
            hosts = Path(temp, "hosts")
            hosts.write_text(plan.hosts_file(), encoding="ascii")
            hosts.chmod(0o644)
            sockets = stack.enter_context(relayed(plan, Path(temp, "s"), RelayLog.appending(log)))
        yield Relays(plan, sockets, hosts)


def _forwarding(relays: Relays, *, root: bool) -> list[str]:
    """The argument list that starts the sandbox in a network namespace of its own whose
    loopback forwards each allowed endpoint to its relay (`_forward.run`, selfbench's Python in
    isolated mode), outside the command's sandbox, which never sees the relays' sockets:
    `unshare --net`, `setpriv --pdeathsig` so that it dies with selfbench as bwrap does. Not
    run by root, the namespace belongs to a user namespace of its own whose capabilities the
    forwarder keeps (to bring loopback up and bind any port) and drops before bwrap starts.

    Raises:
        SandboxError: `unshare` or `setpriv` is not installed.
    """
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare is None or setpriv is None:
        raise SandboxError(
            "an author command's allow-list needs unshare and setpriv: apt-get install util-linux"
        )
    user = [] if root else ["--user", "--map-current-user", "--keep-caps"]
    dropped = [] if root else [setpriv, "--ambient-caps=-all", "--inh-caps=-all", "--"]
    specs = relays.plan.forward_specs(str(relays.sockets))
    forward = str(Path(_forward.__file__).resolve())
    return [
        unshare, "--net", *user, "--", setpriv, "--pdeathsig", "KILL", "--",
        sys.executable, "-I", "-S", forward, "--run", *specs, "--", *dropped,
    ]  # fmt: skip


def _program(argv: Sequence[str]) -> Path | None:
    """The command's executable, as found on PATH (or named)."""
    found = shutil.which(argv[0])
    return Path(found).resolve() if found else None


def _searchable_dir(path: Path) -> bool:
    """Whether `path` is a directory this user can reach: one it may not search (a Python
    under root's home, for a user that is not root) is not bound, and does not stop the run."""
    return os.path.isdir(path)  # noqa: PTH112 - unlike Path.is_dir, False when not permitted


def _readable(argv: Sequence[str]) -> list[Path]:
    """What the command may read beside the system: selfbench's Python, its program, and every
    existing absolute path its arguments name (a file's directory)."""
    package_root = Path(selfbench.__file__).resolve().parent.parent
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent]
    paths += [Path(entry) for entry in sys.path if entry and Path(entry).is_absolute()]
    paths.append(package_root)
    program = _program(argv)
    if program is not None:
        paths.append(program.parent)
    for token in argv[1:]:
        if token.startswith("/") and os.path.lexists(token):
            named = Path(token)
            paths.append(named if _searchable_dir(named) else named.parent)
    shown: list[Path] = []
    for path in paths:
        if _searchable_dir(path) and path not in shown and path != Path("/"):
            shown.append(path)
    return shown


def _environment(env: Mapping[str, str], names: Sequence[str]) -> dict[str, str]:
    """The command's environment: `BASE_ENV` and `names` from `env`, every `SELFBENCH_*`
    input, a private `HOME`, and `PYTHONPATH` naming this selfbench (for its MCP server)."""
    kept = {name: env[name] for name in (*BASE_ENV, *names) if name in env}
    kept.update({k: v for k, v in env.items() if k.startswith("SELFBENCH_")})
    kept["HOME"] = AGENT_HOME
    kept["PYTHONPATH"] = str(Path(selfbench.__file__).resolve().parent.parent)
    return kept


def _parents(paths: Sequence[Path]) -> list[str]:
    """The mount points' missing parents, made searchable by the command's uid first (bwrap
    would make them 0700, root's alone); none inside the host's system directories."""
    parents = {
        str(parent)
        for path in paths
        if len(path.parts) > 1 and path.parts[1] not in _SYSTEM_DIRS
        for parent in path.parents
        if parent != Path("/")
    }
    args: list[str] = []
    for parent in sorted(parents, key=lambda p: (p.count("/"), p)):
        args += ["--perms", "0755", "--dir", parent]
    return args


def _resolver_binds() -> list[str]:
    """`/etc/resolv.conf` when it points into `/run` (covered by a private tmpfs)."""
    resolv = Path("/etc/resolv.conf")
    if not resolv.is_symlink():
        return []
    target = resolv.resolve()
    return ["--ro-bind", str(target), str(target)] if target.is_file() else []


def confined(  # noqa: PLR0913 - the command, where, and what of the host it gets, keyword-only
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    writable: Sequence[Path],
    readable: Sequence[Path] = (),
    env_names: Sequence[str] = (),
    home: Path | None = None,
    network: Network = None,
) -> tuple[list[str], dict[str, str]]:
    """The argument list and environment that run `argv` in the command sandbox (see the
    module), in `cwd`, with `writable` bound read-write and `readable` read-only, and of `env`
    only what the sandbox passes and the variables `env_names` names. `home` (a
    `private_home`) is bound writable as its `HOME`; without it, `HOME` is empty. `network`
    (`command_network`) is its allow-list's relays, the host's network, or (None) loopback
    alone.

    Raises:
        SandboxError: the command's program is not found, or bubblewrap (or, for an
            allow-list, `unshare`) is not installed.
    """
    if _program(argv) is None:  # said here: inside, only bwrap's own message would tell
        raise SandboxError(f"{argv[0]}: No such file or directory")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "author and reviewer commands run in bubblewrap (bwrap): apt-get install bubblewrap"
        )
    root = os.geteuid() == 0
    relays = network if isinstance(network, Relays) else None
    forwarding = _forwarding(relays, root=root) if relays is not None else []
    args = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    args += ["--unshare-uts", "--unshare-cgroup-try"]
    if network is None:  # with relays, the namespace is the forwarder's (`_forwarding`)
        args.append("--unshare-net")
    if not root:
        args.append("--unshare-user")
    args += _host_binds(PrivateEntries.for_run())
    args += [*_proc_args(), "--dev", "/dev"]
    args += ["--perms", "01777", "--tmpfs", "/tmp", "--tmpfs", "/run"]  # noqa: S108 - private tmpfs
    args += _resolver_binds()
    if relays is not None:
        args += ["--ro-bind", str(relays.hosts), "/etc/hosts"]
    if home is None:
        args += ["--perms", "01777", "--tmpfs", AGENT_HOME]
    else:
        parent = str(Path(AGENT_HOME).parent)  # made searchable, as `_parents` does
        args += ["--perms", "0755", "--dir", parent, "--bind", str(home), AGENT_HOME]
    args += _parents([*_readable(argv), *readable, *writable])
    for path in [*_readable(argv), *readable]:
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(cwd)]
    if root:
        uid, gid = _agent_ids()
        # kept until `setpriv` switches to the uid (which clears them): enough to enter the
        # handed-over directories (`--chdir`) and to switch
        args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        args += ["--cap-add", "CAP_DAC_OVERRIDE"]
        args += ["--", "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
        args += ["--inh-caps=-all", "--no-new-privs"]
    args += ["--", *argv]
    return [*forwarding, *args], _environment(env, env_names)
