"""What the review page shows, read from a verified export.

Loading verifies the whole export in one streaming pass and keeps, per task, only what a
reviewer reads: the instruction, both patches and the review record (definition, validation
verdict, audit). They go to a private temporary directory, not to memory, so a large export
costs little; a patch is shown up to `PATCH_SHOWN_BYTES` and says how much was left out.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._json import loads_strict
from selfbench.bundle import layout
from selfbench.export._streams import BLOCK, Readable
from selfbench.export.manifest import Manifest
from selfbench.export.reader import REVIEW_FILE, read_export

__all__ = ["PATCH_SHOWN_BYTES", "ReviewData", "load_review"]

PATCH_SHOWN_BYTES = 2 << 20
_KEPT = frozenset({layout.INSTRUCTION, layout.GOLD_PATCH, layout.TEST_PATCH, REVIEW_FILE})


class _Keeper:
    """A TaskSink saving the files the page shows under `root/<taskId>/`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def task_directory(self, task_id: str, relative: str) -> None:
        """Directories hold nothing the page shows."""

    def task_file(
        self,
        task_id: str,
        relative: str,
        content: Readable,
        *,
        size: int,  # noqa: ARG002 - the protocol's; the page needs no size
        executable: bool,  # noqa: ARG002 - nor the mode
    ) -> None:
        if relative not in _KEPT:
            return
        path = self.root / task_id / relative.replace("/", "__")
        path.parent.mkdir(exist_ok=True)
        with path.open("xb") as target:
            while chunk := content.read(BLOCK):
                target.write(chunk)

    def task_done(self, task_id: str) -> None:
        """Nothing to finish."""


def _verdict(validation: Any) -> str:
    if not isinstance(validation, dict):
        return "not validated"
    return "accepted" if validation.get("accepted") is True else "rejected"


@dataclass(frozen=True, slots=True)
class ReviewData:
    """A verified export's manifest and, per task, the files the page shows."""

    export: Path
    manifest: Manifest
    difficulties: dict[str, str]
    root: Path

    def _file(self, task_id: str, relative: str) -> Path:
        return self.root / task_id / relative.replace("/", "__")

    def record(self, task_id: str) -> dict[str, Any]:
        """The task's review record: definition, validation (or None), audit."""
        path = self._file(task_id, REVIEW_FILE)
        value: dict[str, Any] = loads_strict(path.read_bytes(), source=str(path))
        return value

    def summary(self) -> dict[str, Any]:
        """The run and the task list, as the page's first request gets it."""
        tasks = []
        for entry in self.manifest.tasks:
            record = self.record(entry.task_id)
            validation = record.get("validation")
            reason = validation.get("reason") if isinstance(validation, dict) else None
            tasks.append(
                {
                    "taskId": entry.task_id,
                    "difficulty": self.difficulties[entry.task_id],
                    "verdict": _verdict(validation),
                    "reason": reason if isinstance(reason, str) else None,
                    "audit": record.get("audit"),
                }
            )
        return {"file": self.export.name, "manifest": self.manifest.to_json(), "tasks": tasks}

    def _patch(self, task_id: str, relative: str) -> dict[str, Any]:
        path = self._file(task_id, relative)
        size = path.stat().st_size
        with path.open("rb") as handle:
            shown = handle.read(PATCH_SHOWN_BYTES)
        return {
            "text": shown.decode("utf-8", errors="replace"),
            "bytes": size,
            "omittedBytes": size - len(shown),
        }

    def detail(self, task_id: str) -> dict[str, Any] | None:
        """One task's prompt, record and both patches; None for an unknown task."""
        if task_id not in self.difficulties:
            return None
        instruction = self._file(task_id, layout.INSTRUCTION).read_bytes()
        return {
            "taskId": task_id,
            "difficulty": self.difficulties[task_id],
            "prompt": instruction.decode("utf-8", errors="replace"),
            **self.record(task_id),
            "goldPatch": self._patch(task_id, layout.GOLD_PATCH),
            "testPatch": self._patch(task_id, layout.TEST_PATCH),
        }

    def close(self) -> None:
        """Remove the kept files."""
        shutil.rmtree(self.root, ignore_errors=True)


def load_review(export: Path) -> ReviewData:
    """Verify `export` and keep what the page shows.

    Raises:
        ArchiveError: the export fails verification.
        ExportError: it cannot be read.
    """
    root = Path(tempfile.mkdtemp(prefix="selfbench-review-"))
    try:
        verified = read_export(export, sink=_Keeper(root))
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return ReviewData(export, verified.manifest, verified.difficulties, root)
