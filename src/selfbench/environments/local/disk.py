"""The task's storage: a workspace on a filesystem of its own, the size of the task's `storageMb`.

A container runtime gives each environment a disk of its own; the local environment does the
same with a loop-mounted ext4 image (sparse: it takes on the host only what is written) mounted
over the workspace's root before anything is written there. Everything the task's phases write
lives there: the prepared trees, each run's copies, the homes, the tool state, the verifier's
logs; so no phase can make the workspace grow past the task's storage: a write past it fails with
"No space left on device" (root inside the sandbox has no `CAP_SYS_RESOURCE`, and the image
reserves no blocks for root). The copies of the prepared tree count too, as on a container's
disk they would not: a task needs storage for its tree about three times over (the prepared
tree, the verifier's, one run's copy) plus what its runs write.

The image is created inside the workspace's root and then hidden by the mount; it is mounted
`nodev,nosuid` and with `discard`, so what a phase deletes is given back to the host.
`remove_workspace` unmounts and removes it all; whatever a process leaves mounted is unmounted
when it exits, and what a killed process left mounted is unmounted by the next selfbench's
sweep (each mount is noted in the scratch home while it lasts, `_scratch.note_mount`). When the
image cannot be made or mounted (no root, no loop devices), the workspace stays on the host's
disk and every phase's log says so, like `cgroup.py`'s missing limits.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import threading
from pathlib import Path

from selfbench._scratch import MountNote, drop_note, note_mount
from selfbench.environments.process import CalledProcessError, run_captured
from selfbench.errors import os_reason

__all__ = [
    "FULL_BYTES",
    "IMAGE_NAME",
    "SMALLER_DISK",
    "free_bytes",
    "mount_workspace",
    "remove_workspace",
    "workspace_full",
]

IMAGE_NAME = ".selfbench-disk.img"
"""The image's name in the workspace's root (hidden by the mount)."""

SMALLER_DISK = (
    "the workspace's disk is {size} MB, not the {storage} MB asked: its host filesystem had "
    "{free} MB free"
)
"""A phase log's note when the host could not hold the disk asked for (the space another
workspace or another program took after the storage ceiling was read)."""

_MOUNTED: dict[Path, MountNote | None] = {}
"""The workspaces this process mounted, each with its note in the scratch home (a later run
unmounts it if this one is killed)."""
_LOCK = threading.Lock()

FULL_BYTES = 1 << 20
"""Less free space than this as a phase ends: the phase filled its disk (ext4 keeps a little
for its own metadata)."""


def mount_workspace(root: Path, storage_mb: int) -> str:
    """Put the empty directory `root` on a filesystem of `storage_mb` MB; "" when done, else
    what every phase's log says of it: why the workspace has no storage limit (a reported skip,
    never an error), or that its disk is smaller than asked (`SMALLER_DISK`)."""
    image = root / IMAGE_NAME
    try:
        root.mkdir(parents=True, exist_ok=True)
        if any(root.iterdir()):
            return "no storage limit: the workspace is not empty"
        # never larger than the host's free space: a sparse image that outgrows its host's disk
        # fails its writes with I/O errors (and ext4 turns read-only), not "No space left"
        free = shutil.disk_usage(root).free
        size = min(storage_mb << 20, free * 9 // 10)
        with image.open("xb") as handle:
            handle.truncate(size)
        run_captured(
            ["mkfs.ext4", "-q", "-F", "-m", "0", "-E", "nodiscard", str(image)], check=True
        )
        options = "loop,nodev,nosuid,discard"
        run_captured(["mount", "-t", "ext4", "-o", options, str(image), str(root)], check=True)
    except (OSError, CalledProcessError) as exc:
        image.unlink(missing_ok=True)
        return f"no storage limit: cannot mount the workspace's disk ({_why(exc)})"
    note = note_mount(root)
    with _LOCK:
        _MOUNTED[root] = note
    root.chmod(0o700)
    (root / "lost+found").rmdir()
    if size < (storage_mb << 20) * 9 // 10:  # more than the headroom kept below the host's free
        return SMALLER_DISK.format(size=size >> 20, storage=storage_mb, free=free >> 20)
    return ""


def workspace_full(root: Path, free: int | None) -> bool:
    """Whether `root` is a workspace's own filesystem with (almost) no space left, `free` as
    `free_bytes(root)` read it."""
    with _LOCK:
        if root not in _MOUNTED:
            return False
    return free is not None and free < FULL_BYTES


def free_bytes(path: Path) -> int | None:
    """The free space a write at `path` can still use, as the host reads it (None when it
    cannot be read): its filesystem's, and on a workspace's own disk the least of that and the
    host filesystem's that holds the disk's image. A sparse image whose host fills first fails
    the phase's writes with I/O errors, not "No space left", while its own filesystem still
    shows room (another workspace's image on the same host filesystem may have taken it)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        found.append(shutil.disk_usage(path).free)
    with _LOCK:
        roots = [root for root in _MOUNTED if root == path or root in path.parents]
    for root in roots:
        with contextlib.suppress(OSError):
            found.append(shutil.disk_usage(root.parent).free)
    return min(found) if found else None


def remove_workspace(root: Path, *, keep: bool = False) -> None:
    """Remove a workspace: unmount its disk and delete it all. With `keep`, leave it as it is,
    mounted (`remove_workspace` it, or `umount` it, when done with it)."""
    with _LOCK:
        note = _MOUNTED.pop(root, None)
    drop_note(note)
    if keep:
        return
    if root.is_mount():
        _unmount(root)
    shutil.rmtree(root, ignore_errors=True)


def _unmount(root: Path) -> None:
    with contextlib.suppress(OSError):
        # lazily: a process still holding a file there cannot keep the workspace
        run_captured(["umount", "--lazy", str(root)])


def _why(exc: OSError | CalledProcessError) -> str:
    if isinstance(exc, CalledProcessError):
        words = exc.stderr.decode("utf-8", errors="replace").strip().splitlines()
        return words[-1] if words else f"exit {exc.returncode}"
    return os_reason(exc)


@atexit.register
def _unmount_all() -> None:
    """Unmount what a caller left mounted; an emptied workspace goes too."""
    with _LOCK:
        left = list(_MOUNTED.items())
        _MOUNTED.clear()
    for root, note in left:
        _unmount(root)
        drop_note(note)
        with contextlib.suppress(OSError):
            (root / IMAGE_NAME).unlink(missing_ok=True)
            root.rmdir()
