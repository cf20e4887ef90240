"""The sandbox an author or reviewer command runs in: the clone and the MCP server, nothing more.

An agent command is a program selfbench did not write, steered by a model reading an untrusted
repository, so it runs in bubblewrap (`bwrap`), built from the same parts as the validation
sandbox (`selfbench.validate.sandbox`):

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
* the host's network (a model's API);
* its own PID namespace, ended with selfbench (`--die-with-parent`): every process the command
  starts, a `setsid` daemon too, dies with the run;
* run by root, it runs as an unprivileged uid (`nobody`), no capabilities, no new privileges;
  the writable directories are handed to that uid for the run and handed back after.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import selfbench
from selfbench._scratch import scratch_directory
from selfbench.errors import SandboxError, translating
from selfbench.validate.sandbox import _SYSTEM_DIRS, PrivateEntries, _host_binds, _proc_args

__all__ = [
    "AGENT_HOME",
    "BASE_ENV",
    "author_home_problem",
    "confined",
    "handed_over",
    "private_home",
]

AGENT_HOME = "/home/agent"
"""The command's `HOME`: an empty private directory, or the private copy of `--author-home`."""
BASE_ENV = ("PATH", "LANG", "TERM")
"""The variables of selfbench's environment the command always gets (beside `HOME`)."""
_FALLBACK_UID = 65534


@functools.cache
def _private_entries() -> PrivateEntries:
    """The host's unreadable entries, walked once per process (a second or two)."""
    return PrivateEntries.find()


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


def confined(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    writable: Sequence[Path],
    readable: Sequence[Path] = (),
    env_names: Sequence[str] = (),
    home: Path | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The argument list and environment that run `argv` in the command sandbox (see the
    module), in `cwd`, with `writable` bound read-write and `readable` read-only, and of `env`
    only what the sandbox passes and the variables `env_names` names. `home` (a
    `private_home`) is bound writable as its `HOME`; without it, `HOME` is empty.

    Raises:
        SandboxError: the command's program is not found, or bubblewrap is not installed.
    """
    if _program(argv) is None:  # said here: inside, only bwrap's own message would tell
        raise SandboxError(f"{argv[0]}: No such file or directory")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError(
            "author and reviewer commands run in bubblewrap (bwrap): apt-get install bubblewrap"
        )
    root = os.geteuid() == 0
    args = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc"]
    args += ["--unshare-uts", "--unshare-cgroup-try"]
    if not root:
        args.append("--unshare-user")
    args += _host_binds(_private_entries())
    args += [*_proc_args(), "--dev", "/dev"]
    args += ["--perms", "01777", "--tmpfs", "/tmp", "--tmpfs", "/run"]  # noqa: S108 - private tmpfs
    args += _resolver_binds()
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
    return args, _environment(env, env_names)
