"""Unpack a verified export into a Harbor tasks directory: `DIR/<taskId>/task.toml …`.

Everything is written under `DIR` only: into a private staging directory inside it, from member
names the reader has already checked, with files created exclusively and never through a
link. Only when the whole export has verified are the task directories renamed into place; on
any failure the staging directory is removed (and `DIR` too, if extract created it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from selfbench._fs import remove_leftovers, rename_no_replace, staging_directory
from selfbench.bundle.local_build import LocalBuild
from selfbench.errors import ExportError, translating
from selfbench.export._streams import BLOCK, Readable
from selfbench.export.reader import Limits, VerifiedExport, read_export

__all__ = ["extract_export"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class _Unpacker:
    """A TaskSink writing each task under `staging/<taskId>/`."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        self.done: list[str] = []

    def _path(self, task_id: str, relative: str) -> Path:
        return self.staging / task_id / relative if relative else self.staging / task_id

    def task_directory(self, task_id: str, relative: str) -> None:
        path = self._path(task_id, relative)
        path.mkdir(mode=0o755, parents=True, exist_ok=True)

    def task_file(
        self, task_id: str, relative: str, content: Readable, *, size: int, executable: bool
    ) -> None:
        path = self._path(task_id, relative)
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        free = shutil.disk_usage(path.parent).free
        if size > free:
            name = f"{task_id}/{relative}"
            raise ExportError(f"no room for {name}: it claims {size} bytes, {free} are free")
        descriptor = os.open(path, _CREATE, 0o755 if executable else 0o644)
        with os.fdopen(descriptor, "wb") as target:
            while chunk := content.read(BLOCK):
                target.write(chunk)

    def task_done(self, task_id: str) -> None:
        self.done.append(task_id)


def _prepare(out: Path) -> bool:
    """Make sure `out` is an empty directory; True when extract created it."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise ExportError(f"{out}: not a directory")
    if out.is_dir():
        remove_leftovers(out)
        if any(out.iterdir()):
            raise ExportError(f"{out}: directory is not empty")
        return False
    out.mkdir(parents=True)
    return True


def extract_export(
    archive: Path, *, out: Path, limits: Limits | None = None, local: LocalBuild | None = None
) -> VerifiedExport:
    """Verify `archive` and unpack each task to `out/<taskId>/`, all or nothing; `local` adapts
    each task to a local engine's build once the whole export has verified.

    Raises:
        ArchiveError: the archive fails verification (nothing is left in `out`).
        ExportError: `out` is not an empty directory, the disk is full, or it cannot be read.
    """
    with translating(ExportError, f"create {out}"):
        created = _prepare(out)
    try:
        with (
            translating(ExportError, f"extract into {out}"),
            staging_directory(out / archive.name) as staging,
        ):
            return _unpack(archive, staging, out, limits, local)
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _unpack(
    archive: Path, staging: Path, out: Path, limits: Limits | None, local: LocalBuild | None
) -> VerifiedExport:
    """Unpack into `staging`, then rename each task into `out`; undo every rename on failure."""
    unpacker = _Unpacker(staging)
    moved: list[str] = []
    try:
        verified = read_export(archive, sink=unpacker, limits=limits)
        if local is not None:
            for task_id in unpacker.done:
                local.apply(staging / task_id)
        for task_id in unpacker.done:
            rename_no_replace(staging / task_id, out / task_id)
            moved.append(task_id)
    except BaseException:
        _roll_back(moved, staging, out)
        raise
    return verified


def _roll_back(moved: list[str], staging: Path, out: Path) -> None:
    """Undo the renames already done: each task goes back into staging (or is removed)."""
    for task_id in reversed(moved):
        try:
            rename_no_replace(out / task_id, staging / task_id)
        except OSError:
            shutil.rmtree(out / task_id, ignore_errors=True)
