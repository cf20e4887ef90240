"""Copy-on-write trees for a phase: an overlay of a prepared tree instead of a copy of it.

A phase that runs the tests' or the agent's code gets a tree of its own, so nothing it writes
reaches the prepared tree, another phase or a trial. Copying that tree (`cp -a`) costs a write
of every file, and its removal a delete of every file: on a Python task's tree of 2,300 entries
about 0.35 s of the kernel's time per phase, and mutation testing runs dozens of phases a task.
An overlay (the kernel's `overlayfs`, which container engines stack their image layers with)
shows the prepared tree as the lower layer and takes every write into an upper directory of the
phase's own: the phase's cost is what it writes.

The overlay is mounted in a mount namespace of the phase's own (`unshare --mount`, util-linux),
made just before bubblewrap starts in it: the mount is never seen by the host and ends with the
phase, however the phase ends (a `kill -9` of selfbench leaves no mount behind). The sandbox
binds the mount point as it would bind a copy. Where the kernel cannot mount one (no overlay
support, a filesystem that cannot hold an upper directory), `supported` says so once and the
phase copies the tree as before.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench.environments.process import run_captured

__all__ = ["Overlay", "mounting", "own_tree", "supported"]

_MOUNT = (
    'while [ "$1" != -- ]; do '
    'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" -- "$4" || exit 125; '
    'shift 4; done; shift; exec "$@"'
)
"""Mount each overlay (four arguments each, up to `--`), then become the command after it."""

_UNSAFE = frozenset(",:\\\n")
"""Characters a path cannot hold in the mount's options (its separators and escape)."""


@dataclass(frozen=True, slots=True)
class Overlay:
    """A tree shown at a host mount point: `lower` as it is, every write kept in `upper`."""

    lower: Path
    """The prepared tree; never written while a phase shows it."""
    upper: Path
    """Where the phase's writes go (an empty directory of the phase's own)."""
    work: Path
    """The kernel's scratch directory for `upper` (empty, on the same filesystem)."""

    @classmethod
    def beside(cls, lower: Path, mount_point: Path) -> Overlay:
        """An overlay of `lower` whose own directories sit beside `mount_point`, made empty."""
        upper = mount_point.with_name(f"{mount_point.name}-upper")
        work = mount_point.with_name(f"{mount_point.name}-work")
        for directory in (mount_point, upper, work):
            directory.mkdir(parents=True)
        # the overlay's top directory is the upper one: it shows the lower's owner and mode
        top = lower.stat()
        os.chown(upper, top.st_uid, top.st_gid)
        upper.chmod(stat.S_IMODE(top.st_mode))
        return cls(lower, upper, work)

    def remove(self, mount_point: Path) -> None:
        """Remove the phase's directories (the mount ended with its namespace)."""
        for directory in (mount_point, self.upper, self.work):
            shutil.rmtree(directory, ignore_errors=True)


def mounting(argv: Sequence[str], overlays: Mapping[Path, Overlay]) -> list[str]:
    """`argv` run in a mount namespace of its own in which each overlay is mounted at its
    mount point (the map's key) first; `argv` itself when there is none. The process keeps its
    id through each `exec`, so whoever waits on it waits on `argv`'s program."""
    if not overlays:
        return list(argv)
    arguments: list[str] = []
    for mount_point, overlay in overlays.items():
        arguments += [str(overlay.lower), str(overlay.upper), str(overlay.work), str(mount_point)]
    unshare = ["unshare", "--mount", "--propagation", "private", "--"]
    return [*unshare, "/bin/sh", "-c", _MOUNT, "selfbench-overlay", *arguments, "--", *argv]


def supported(root: Path, *paths: Path) -> bool:
    """Whether a phase may show trees as overlays: the kernel mounts one with its directories
    on `root`'s filesystem, and no path of `paths` (or `root`) holds a character the mount's
    options cannot."""
    if any(_UNSAFE & set(str(path)) for path in (root, *paths)):
        return False
    device = root.stat().st_dev
    if device not in _PROBED:  # two threads may both probe: each finds the same
        _PROBED[device] = _probe(root)
    return _PROBED[device]


_PROBED: dict[int, bool] = {}
"""Each filesystem's probe: whether an overlay with its directories there mounts."""


def _probe(root: Path) -> bool:
    """Mount an overlay of a one-file tree on `root`'s filesystem."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="selfbench-overlay-", dir=root) as temp:
        base = Path(temp)
        lower = base / "lower"
        lower.mkdir()
        (lower / "probe").write_bytes(b"")
        merged = base / "merged"
        overlay = Overlay.beside(lower, merged)
        check = ["/bin/sh", "-c", 'test -e "$1/probe" && : >"$1/written"', "-", str(merged)]
        try:
            run_captured(mounting(check, {merged: overlay}), check=True)
        except (OSError, subprocess.CalledProcessError):
            return False
        # the write went to the upper directory alone, and the mount did not outlive the probe
        return (overlay.upper / "written").is_file() and not (lower / "written").exists()


def own_tree(tree: Path, uid: int, gid: int) -> None:
    """Make every entry of `tree` (links themselves, not what they name) `uid`:`gid`'s, when its
    top is not already: a phase that takes ownership of its tree then changes nothing of an
    overlay's lower layer, so copies up nothing.

    Raises:
        CalledProcessError: `chown` failed.
    """
    status = tree.lstat()
    if (status.st_uid, status.st_gid) != (uid, gid):
        run_captured(["chown", "-hR", f"{uid}:{gid}", "--", str(tree)], check=True)
