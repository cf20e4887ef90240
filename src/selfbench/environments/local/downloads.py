"""The package managers' download caches that the setups of one process share.

Each networked preparation stage (`TaskPhases.setup`: `base` and `dependencies`) sees one set of
download caches, one directory per package manager, bound writable below `DOWNLOADS` and named
by the manager's own variable: pip (`PIP_CACHE_DIR`), npm (`npm_config_cache`), pnpm
(`PNPM_HOME`, whose `store` is its store: pnpm reads no variable of its own for the store, and
npm warns of an unknown `npm_config_store_dir`), yarn 1 (`YARN_CACHE_FOLDER`) and 2+
(`YARN_GLOBAL_FOLDER`, its global cache), bun (`BUN_INSTALL_CACHE_DIR`). These are the caches
a manager keeps in root's home, which no later phase reads (root's home is read-only after
setup, and the agent and the tests run with homes of their own), so the prepared trees are the
images' whatever the caches held. The tool state that later phases do read (`/opt/uv-cache`,
`/opt/go`, `/opt/corepack`) is the set's during the stage, bound over the task's, and copied
into the task's after it (`Lease.keep`): the task's then holds all its setup used, as the
image's does, plus what earlier setups of the same repository left. So do cargo's registry and
git caches (`Lease.cargo`), for a task whose cargo home is its own tool state (a provisioned
rust toolchain): they are bound over that home's, after it (`Sandbox`'s toolchain mounts), and
copied into it.

* Shared by the setups of one process (one `run`, `draft` or `validate`): a later candidate's
  setup finds what an earlier one downloaded. Not across processes: a setup runs the
  repository's own code as root, and some managers read their cache back without checking it
  against a lockfile's hashes (pip's HTTP cache, yarn 1), so a cache one repository's setup
  wrote is trusted by that run's setups alone.
* One setup at a time per set (`DownloadCaches.lease`): with `-j 2` two sets fill side by side,
  so no manager's own locking is relied on (pip's cache is not safe for concurrent writers).
* Copied from, never linked: a cache is a mount of its own, and the kernel links no file across
  mounts, so a prepared tree holds no hard link into a cache (pnpm falls back to copying).
* Never seen by an agent or verifier phase: only the setup stages bind them, and the host
  directory is a private scratch directory of this process (`_scratch.py`), removed when it
  ends.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from selfbench._scratch import process_scoped
from selfbench.bundle.render_prepare import CARGO_CACHES
from selfbench.environments.local.sandbox import SHARED_STATE, copy_tree

__all__ = ["DOWNLOADS", "MANAGERS", "DownloadCaches", "Lease", "download_caches"]

_CARGO_HOME = str(Path(CARGO_CACHES[0]).parent)

DOWNLOADS = "/run/selfbench-downloads"
"""Where a setup stage sees its set of download caches, one directory per manager."""

MANAGERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pip", ("PIP_CACHE_DIR",)),
    ("npm", ("npm_config_cache",)),
    ("pnpm", ("PNPM_HOME",)),
    ("yarn", ("YARN_CACHE_FOLDER",)),
    ("yarn-berry", ("YARN_GLOBAL_FOLDER",)),
    ("bun", ("BUN_INSTALL_CACHE_DIR",)),
)
"""Each manager's cache directory name and the variables that point it there."""


def _environment() -> dict[str, str]:
    return {
        variable: f"{DOWNLOADS}/{name}" for name, variables in MANAGERS for variable in variables
    }


@dataclass(frozen=True, slots=True)
class Lease:
    """One set of download caches, held by one setup stage."""

    binds: dict[str, Path]
    """Container path → host directory, writable: the managers' caches and the set's own tool
    state, bound over the task's (`SHARED_STATE`)."""
    environment: dict[str, str]
    """The managers' variables naming their caches."""
    state: dict[str, Path]
    """The set's tool state: container path → host directory."""
    cargo: dict[str, Path]
    """Cargo's caches (`CARGO_CACHES`): container path → host directory, writable; bound only
    for a task whose cargo home is its tool state (`cargo_binds`)."""

    def cargo_binds(self, tool_state: Mapping[str, Path]) -> dict[str, Path]:
        """Cargo's caches to bind for a task with this tool state: none without a cargo home."""
        return dict(self.cargo) if _CARGO_HOME in tool_state else {}

    def keep(self, tool_state: Mapping[str, Path]) -> None:
        """Copy the set's tool state into the task's (`Sandbox.tool_state()`), after its stage:
        the task's holds all its setup used, as the image's does, for the later phases.

        Raises:
            CalledProcessError: the copy failed (a full disk, say).
        """
        for target, directory in sorted(self.state.items()):
            copy_tree(directory, tool_state[target])
        for target, directory in sorted(self.cargo_binds(tool_state).items()):
            copy_tree(directory, tool_state[_CARGO_HOME] / Path(target).name)


@dataclass
class DownloadCaches:
    """Sets of download caches below `root`, one pool per repository, each set lent to one
    setup stage at a time."""

    root: Path
    _free: dict[str, list[Path]] = field(default_factory=dict)
    _made: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def lease(self, repository: str) -> Iterator[Lease]:
        """A set of `repository`'s that no other setup holds (a free one, the one used last
        first; else a new one)."""
        with self._lock:
            free = self._free.setdefault(repository, [])
            if free:
                directory = free.pop()
            else:
                self._made += 1
                directory = self.root / str(self._made)
        binds = {f"{DOWNLOADS}/{name}": directory / name for name, _ in MANAGERS}
        state = {target: directory / "state" / Path(target).name for target in SHARED_STATE}
        cargo = {target: directory / "cargo" / Path(target).name for target in CARGO_CACHES}
        for path in (*binds.values(), *state.values(), *cargo.values()):
            path.mkdir(parents=True, exist_ok=True)
        try:
            yield Lease({**binds, **state}, _environment(), state, cargo)
        finally:
            with self._lock:
                free.append(directory)


def download_caches() -> DownloadCaches:
    """This process's download caches (made on first use, removed when the process ends)."""
    return process_scoped("selfbench-downloads-", DownloadCaches)
