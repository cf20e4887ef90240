"""What the review page shows, read from a verified export.

Loading verifies the whole export in one streaming pass and keeps, per task, only what a
reviewer reads: the instruction, both patches, the verifier script and both Dockerfiles, the
review record (definition, validation verdict, audit) and the quality record (`quality.json`,
when the task has one; verify checked its digest). They go to a private temporary
directory, not to memory, so a large export costs little; of the instruction and each file
only the first `PATCH_SHOWN_BYTES` are kept (and shown), the rest is counted, so a hostile
export cannot fill the disk either. The export, and each kept file when the page asks for it,
is read as every task file is (`_fs.open_file`): never through a symbolic link.

The page shows the export's own words only where they are labelled as such: the prompt comes
from the task's `instruction.md`, the difficulty from its bundle manifest, and the review
record gives only the definition, the validation verdict and the audit recorded at export.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from selfbench._fs import open_file, read_bytes
from selfbench._json import JsonObject, JsonValue, loads_strict
from selfbench.artifacts.quality_record import QUALITY_FILE, QualityRecord, parse_quality
from selfbench.bundle import layout
from selfbench.errors import ExportError
from selfbench.export._streams import BLOCK, Readable
from selfbench.export.manifest import Manifest
from selfbench.export.reader import REVIEW_FILE, read_export

__all__ = ["PATCH_SHOWN_BYTES", "ReviewData", "load_review"]

PATCH_SHOWN_BYTES = 2 << 20
_SCRIPTS = {
    "verifierScript": layout.TEST_SH,
    "agentDockerfile": layout.ENV_DOCKERFILE,
    "verifierDockerfile": layout.TESTS_DOCKERFILE,
    "taskToml": layout.TASK_TOML,
}
"""What runs the task, shown as text: verify has proven each is what its definition compiles to
(`task.toml` given its agent's allowed hosts, which the reviewer reads there)."""
_KEPT = frozenset(
    {
        layout.INSTRUCTION,
        layout.GOLD_PATCH,
        layout.TEST_PATCH,
        REVIEW_FILE,
        QUALITY_FILE,
        *_SCRIPTS.values(),
    }
)
_WHOLE = frozenset({REVIEW_FILE, QUALITY_FILE})
"""Records needed whole (each bounded by the reader's JSON limit)."""


def _read(path: Path) -> bytes:
    return read_bytes(path, error=ExportError)


class _Keeper:
    """A TaskSink saving the files the page shows under `root/<taskId>/`, each cut to the limit.

    `sizes` records each kept file's full size, so the page can say how much it left out.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sizes: dict[tuple[str, str], int] = {}

    def task_directory(self, task_id: str, relative: str) -> None:
        """Directories hold nothing the page shows."""

    def task_file(
        self,
        task_id: str,
        relative: str,
        content: Readable,
        *,
        size: int,
        executable: bool,  # noqa: ARG002 - the protocol's; the page needs no mode
    ) -> None:
        if relative not in _KEPT:
            return
        path = self.root / task_id / relative.replace("/", "__")
        path.parent.mkdir(exist_ok=True)
        left = size if relative in _WHOLE else min(size, PATCH_SHOWN_BYTES)
        with path.open("xb") as target:
            while left > 0 and (chunk := content.read(min(BLOCK, left))):
                target.write(chunk)
                left -= len(chunk)
        self.sizes[task_id, relative] = size  # the rest is skipped by the reader, unkept

    def task_done(self, task_id: str) -> None:
        """Nothing to finish."""


def _verdict(validation: JsonValue) -> str:
    if not isinstance(validation, dict):
        return "not validated"
    return "accepted" if validation.get("accepted") is True else "rejected"


def _quality_verdict(quality: QualityRecord | None) -> JsonObject | None:
    """What the task list shows of a quality record: the verdict and its reasons."""
    if quality is None:
        return None
    return {"verdict": quality.verdict, "reasons": list(quality.reasons)}


@dataclass(frozen=True, slots=True)
class ReviewData:
    """A verified export's manifest and, per task, the files the page shows."""

    export: Path
    manifest: Manifest
    difficulties: dict[str, str]
    root: Path
    sizes: dict[tuple[str, str], int] = field(default_factory=dict)
    """Each kept file's full size in the export (the kept copy stops at the shown limit)."""

    def _file(self, task_id: str, relative: str) -> Path:
        return self.root / task_id / relative.replace("/", "__")

    def record(self, task_id: str) -> dict[str, JsonValue]:
        """The task's review record: definition, validation (or None), audit.

        Raises:
            ExportError: the kept file is not a JSON object (verify proved it is one).
        """
        path = self._file(task_id, REVIEW_FILE)
        value: JsonValue = loads_strict(_read(path), source=str(path))
        if not isinstance(value, dict):
            raise ExportError(f"{path}: not a JSON object")
        return value

    def _quality_record(self, task_id: str) -> QualityRecord | None:
        path = self._file(task_id, QUALITY_FILE)
        if not path.is_file():
            return None
        return parse_quality(_read(path), source=str(path))

    def quality(self, task_id: str) -> JsonObject | None:
        """The task's quality record as the page gets it (its own fields only), or None for a
        task exported without one."""
        record = self._quality_record(task_id)
        if record is None:
            return None
        quality: JsonObject = record.model_dump(mode="json", by_alias=True)
        return quality

    def summary(self) -> JsonObject:
        """The run and the task list, as the page's first request gets it."""
        tasks: list[JsonObject] = []
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
                    "quality": _quality_verdict(self._quality_record(entry.task_id)),
                }
            )
        return {"file": self.export.name, "manifest": self.manifest.to_json(), "tasks": tasks}

    def _shown(self, task_id: str, relative: str) -> tuple[str, int, int]:
        """The kept text of a file, its full size and the bytes not shown."""
        path = self._file(task_id, relative)
        with open_file(path, error=ExportError) as handle:
            shown = handle.read(PATCH_SHOWN_BYTES)
            size = self.sizes.get((task_id, relative), os.fstat(handle.fileno()).st_size)
        return shown.decode("utf-8", errors="replace"), size, size - len(shown)

    def _patch(self, task_id: str, relative: str) -> JsonObject:
        text, size, omitted = self._shown(task_id, relative)
        return {"text": text, "bytes": size, "omittedBytes": omitted}

    def detail(self, task_id: str) -> JsonObject | None:
        """One task's quality record (None without one), prompt, recorded definition, validation
        and audit, both patches, what runs.

        Built from an allow-list: whatever else a review record holds never reaches the page,
        and the prompt (`instruction.md`) and difficulty (the bundle manifest) come from the
        bundle itself. None for an unknown task.
        """
        if task_id not in self.difficulties:
            return None
        record = self.record(task_id)
        prompt, prompt_size, prompt_omitted = self._shown(task_id, layout.INSTRUCTION)
        return {
            "quality": self.quality(task_id),
            "definition": record.get("definition"),
            "validation": record.get("validation"),
            "audit": record.get("audit"),
            "goldPatch": self._patch(task_id, layout.GOLD_PATCH),
            "testPatch": self._patch(task_id, layout.TEST_PATCH),
            **{key: self._patch(task_id, relative) for key, relative in _SCRIPTS.items()},
            "prompt": prompt,
            "promptBytes": prompt_size,
            "promptOmittedBytes": prompt_omitted,
            "taskId": task_id,
            "difficulty": self.difficulties[task_id],
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
    keeper = _Keeper(root)
    try:
        verified = read_export(export, sink=keeper)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return ReviewData(export, verified.manifest, verified.difficulties, root, keeper.sizes)
