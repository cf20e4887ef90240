"""Prepared workspaces, kept for the next preparation with the same inputs in this process.

Drafting a candidate, judging its quality and validating its task each prepare the same
environment: the same snapshot, `setupCommand`, toolchains and dependency patch, run by the same
preparation script (`bundle/render_prepare.py`). A workspace whose preparation succeeded is not
removed at its end but *parked* here under its `preparation_key`; the next preparation with that
key *takes* it and runs no setup stage, so a task proven by `run` is set up once, by its draft.

What makes that sound: the key is a digest of every input of the preparation (the snapshot's and
the dependency patch's bytes, not what a manifest claims of them; the stages' arguments; the
toolchains mounted; the setup environment; the workspace's storage), and no phase ever writes
the prepared state: every agent and verifier run works on a copy or an overlay of it
(`TaskPhases` takes no tree while a key is set), the tool state is copied, overlaid or
read-only after setup, and root's home is read-only after setup. Only the verifier tree's
owner changes: it is made the leased `verifier` uid's of the sandbox that shows it as an
overlay's lower layer (`overlay.own_tree`), again by the next sandbox that takes it. Parking
removes everything else the runs left (`Sandbox.LASTING`, `TaskPhases.LASTING` name what
stays). Only drafting, quality and validation park and take;
evaluation's trials, where agents run, never do.

The pool holds at most `CAPACITY` workspaces, the oldest removed first; whatever it holds when
the process ends is removed then. `LocalOptions.keep` (the user keeps each workspace) parks
nothing.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from selfbench._fs import file_sha256
from selfbench.artifacts.compiled import LocatedTask
from selfbench.bundle import layout
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.disk import remove_workspace
from selfbench.environments.local.phases import LocalOptions, TaskPhases
from selfbench.environments.local.sandbox import Sandbox
from selfbench.environments.local.seeds import inputs_digest, setup_inputs
from selfbench.toolchains import Provisioned

__all__ = [
    "CAPACITY",
    "Parked",
    "Workspace",
    "WorkspacePool",
    "preparation_key",
    "task_workspace",
    "workspace_pool",
]

_Phases = TypeVar("_Phases", bound=TaskPhases)

CAPACITY = 4
"""At most this many parked workspaces at once (each holds its prepared trees on disk)."""


@dataclass(frozen=True, slots=True)
class Parked:
    """A prepared workspace waiting for its next preparation."""

    root: Path
    key: str
    log: Path
    """The preparation log of the setup that prepared it."""


def _file_digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes; None when there is no such file."""
    return file_sha256(path)[0] if path.is_file() else None


def preparation_key(
    located: LocatedTask,
    toolchains: Provisioned | None,
    limits: Limits | None,
    setup_env: Iterable[tuple[str, str]],
) -> str:
    """The digest of everything a preparation's result depends on (see the module docstring)."""
    definition = located.definition
    return inputs_digest(
        {
            **setup_inputs(located, toolchains, setup_env),
            "snapshot": _file_digest(located.bundle / layout.TESTS_SNAPSHOT),
            "dependencyPatch": _file_digest(located.bundle / layout.DEPENDENCY_PATCH),
            "agentDependencies": definition.agentDependencies,
            "setupSeconds": definition.timeouts.setupSeconds,
            "storageMb": limits.storage_mb if limits is not None else None,
        }
    )


class WorkspacePool:
    """Parked workspaces by preparation key, oldest first; safe to use from several threads."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._parked: OrderedDict[Path, Parked] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> Parked | None:
        """The newest parked workspace with `key`, no longer parked; None when there is none."""
        with self._lock:
            for root, parked in reversed(self._parked.items()):
                if parked.key == key:
                    del self._parked[root]
                    return parked
        return None

    def new_root(self, directory: Path | None) -> Path:
        """A new, empty workspace root in `directory` (default: the system temp directory)."""
        return Path(tempfile.mkdtemp(prefix="selfbench-ws-", dir=directory))

    def park(self, parked: Parked, lasting: Iterable[str]) -> None:
        """Keep a prepared workspace for the next preparation with its key: everything in its
        root but the `lasting` entries (paths relative to the root) is removed first."""
        _keep_only(parked.root, {Path(entry) for entry in lasting})
        with self._lock:
            self._parked[parked.root] = parked
            evicted = []
            while len(self._parked) > self._capacity:
                evicted.append(self._parked.popitem(last=False)[1])
        for old in evicted:
            remove_workspace(old.root)

    def clear(self) -> None:
        """Remove every parked workspace."""
        with self._lock:
            parked = list(self._parked.values())
            self._parked.clear()
        for old in parked:
            remove_workspace(old.root)

    def parked(self) -> tuple[Parked, ...]:
        """The parked workspaces, oldest first."""
        with self._lock:
            return tuple(self._parked.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._parked)


def _keep_only(root: Path, lasting: set[Path]) -> None:
    """Remove every entry below `root` that is neither a lasting entry nor a parent of one."""
    parents = {parent for entry in lasting for parent in entry.parents if parent != Path()}
    for path in list(root.iterdir()):
        _prune(root, path.relative_to(root), lasting, parents)


def _prune(root: Path, relative: Path, lasting: set[Path], parents: set[Path]) -> None:
    path = root / relative
    if relative in lasting:
        return
    if relative in parents and path.is_dir() and not path.is_symlink():
        for child in list(path.iterdir()):
            _prune(root, child.relative_to(root), lasting, parents)
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


_POOL = WorkspacePool()
atexit.register(_POOL.clear)


def workspace_pool() -> WorkspacePool:
    """This process's pool of parked workspaces."""
    return _POOL


@dataclass
class Workspace:
    """One task's workspace while it is used: a new root, or a parked one taken (`reused_log`
    set). Give it the task's phases (`phases`) so that its end can park it."""

    root: Path
    key: str | None
    """The preparation key when the workspace is parked at its end (None: removed)."""
    reused_log: Path | None = None
    """The preparation log of the setup that prepared it, when it was taken from the pool."""
    task: TaskPhases | None = field(default=None, init=False)

    @property
    def adopted(self) -> bool:
        """Whether the workspace was prepared before (taken from the pool)."""
        return self.reused_log is not None

    def phases(self, task: _Phases) -> _Phases:
        """`task`, set up to reuse this workspace's preparation and to leave it reusable."""
        task.reuse_key, task.reused_log = self.key, self.reused_log
        task.seeding = self.key is not None
        self.task = task
        return task


@contextmanager
def task_workspace(
    located: LocatedTask,
    options: LocalOptions,
    *,
    toolchains: Provisioned | None,
    limits: Limits | None,
    reuse: bool,
) -> Iterator[Workspace]:
    """A workspace for `located`: with `reuse` (and not `options.keep`), a parked one with the
    same preparation when there is one, and parked at the end when its preparation succeeded
    and nothing raised; otherwise new, and removed at the end (kept with `options.keep`)."""
    pool = workspace_pool()
    key = None
    if reuse and not options.keep:
        key = preparation_key(located, toolchains, limits, options.setup_env)
    parked = pool.take(key) if key is not None else None
    if parked is not None:
        workspace = Workspace(parked.root, key, parked.log)
    else:
        workspace = Workspace(pool.new_root(options.workspace), key)
    try:
        yield workspace
    except BaseException:
        remove_workspace(workspace.root, keep=options.keep)
        raise
    task = workspace.task
    if key is None or task is None or not task.ready:
        remove_workspace(workspace.root, keep=options.keep)
        return
    log = workspace.reused_log or task.logs / "prepare.log"
    pool.park(Parked(workspace.root, key, log), (*Sandbox.LASTING, *TaskPhases.LASTING))
