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

import functools
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench.environments.process import CalledProcessError, run_captured

__all__ = ["Overlay", "mounting", "own_tree", "supported"]

MOUNT_FAILED = "selfbench: an overlay could not be mounted"
"""What a phase's log says when an overlay did not mount (the sandbox raises on it)."""

_MOUNT = (
    'mount="$1"; shift; while [ "$1" != -- ]; do '
    '"$mount" -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" -- "$4" '
    f'|| {{ echo "{MOUNT_FAILED}: $4" >&2; exit 125; }}; '
    'shift 4; done; shift; exec "$@"'
)
"""Mount each overlay (`$1` mount's path, then four arguments each, up to `--`), then become
the command after it."""

_UNSAFE = frozenset(',:\\\n"')
"""Characters a path cannot hold in the mount's options (its separators, escape and quote)."""

_OPTIONS_LIMIT = 4000
"""The longest options a mount takes whole (the kernel reads one page of them)."""


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
    unshare, mount = _tools()
    # slave: the host's unmounts (another task's workspace removed) still reach the phase,
    # and nothing mounted here reaches the host
    namespace = [unshare, "--mount", "--propagation", "slave", "--", "/bin/sh", "-c", _MOUNT]
    return [*namespace, "selfbench-overlay", mount, *arguments, "--", *argv]


@functools.cache
def _tools() -> tuple[str, str]:
    """`unshare` and `mount` as this host's paths, never looked up in a phase's PATH."""
    unshare, mount = shutil.which("unshare"), shutil.which("mount")
    return unshare or "/usr/bin/unshare", mount or "/usr/bin/mount"


def supported(root: Path, *paths: Path) -> bool:
    """Whether a phase may show trees as overlays: the kernel mounts one with its directories
    on `root`'s filesystem, and no path of `paths` (or `root`) holds a character the mount's
    options cannot."""
    if any(_UNSAFE & set(str(path)) for path in (root, *paths)):
        return False
    if len(",".join(str(path) for path in (root, *paths)) * 2) > _OPTIONS_LIMIT:
        return False  # a generous bound on the options of an overlay of these paths
    device = root.stat().st_dev
    if device not in _MOUNTED:  # two threads may both probe: each finds the same
        if not _probe(root):  # perhaps for now only (a full disk): probed again next time
            return False
        _MOUNTED.add(device)
    return True


_MOUNTED: set[int] = set()
"""The filesystems an overlay with its directories there was seen to mount on."""


def _probe(root: Path) -> bool:
    """Mount an overlay of a small tree on `root`'s filesystem; write, delete and make a
    directory in it (whiteouts and opaque directories need the upper filesystem's xattrs)."""
    if not all(Path(tool).is_file() for tool in _tools()):
        return False
    with tempfile.TemporaryDirectory(prefix="selfbench-overlay-", dir=root) as temp:
        base = Path(temp)
        lower = base / "lower"
        lower.mkdir()
        (lower / "probe").write_bytes(b"")
        (lower / "directory").mkdir()
        (lower / "directory" / "inside").write_bytes(b"")
        merged = base / "merged"
        overlay = Overlay.beside(lower, merged)
        script = (
            'test -e "$1/probe" && : >"$1/written" && rm "$1/probe" && test ! -e "$1/probe"'
            ' && rm -r "$1/directory" && mkdir "$1/directory" && test ! -e "$1/directory/inside"'
        )
        check = ["/bin/sh", "-c", script, "-", str(merged)]
        try:
            run_captured(mounting(check, {merged: overlay}), check=True)
        except (OSError, CalledProcessError):
            return False
        # the writes went to the upper directory alone, and the mount ended with the probe
        lower_kept = (lower / "probe").is_file() and (lower / "directory" / "inside").is_file()
        unmounted = not any(merged.iterdir())
        return (overlay.upper / "written").is_file() and lower_kept and unmounted


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
