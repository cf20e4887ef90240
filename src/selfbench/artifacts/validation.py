"""A validation report (SPEC §6): `validation.json`, its one writer and its one reader.

`selfbench validate` writes each task's report beside its `definition.json`, naming the bundle it
speaks of (`bundleManifestSha256`); `export` reads it, and ignores a report on another build of
the bundle than the one beside it. A run's export keeps its reports under the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import Json, JsonObject, JsonValue, dumps_pretty, loads_strict
from selfbench.errors import BundleError, JsonError, SelfbenchError, translating

__all__ = [
    "BUNDLE_BINDING",
    "VALIDATION_FILE",
    "ValidationRecord",
    "parse_validation_records",
    "read_validation",
    "read_validation_records",
    "validation_record",
    "write_validation",
]

VALIDATION_FILE = "validation.json"
BUNDLE_BINDING = "bundleManifestSha256"
"""The record's field naming the bundle it speaks of: the SHA-256 of its manifest's bytes."""


def validation_record(report: Mapping[str, Json], *, manifest_sha256: str) -> JsonObject:
    """A task's report as written: its JSON form and the digest of the bundle it speaks of."""
    return {**report, BUNDLE_BINDING: manifest_sha256}


def write_validation(directory: Path, record: Json) -> Path:
    """Write `record` (one report, or a list of them) as `directory/validation.json`, atomically.

    Raises:
        BundleError: the file cannot be written.
    """
    path = directory / VALIDATION_FILE
    with translating(BundleError, f"write {path}"):
        write_atomic(path, dumps_pretty(record).encode("utf-8"))
    return path


def read_validation(path: Path, *, error: type[SelfbenchError] | None = None) -> Any:
    """The decoded JSON of a validation file: one report or a list of them.

    The file is read as every task file is (`_fs.read_bytes`): a symbolic link is refused.

    Raises:
        SelfbenchError: `error`, when given, for a file unreadable or not JSON (the same text).
        JsonError: without `error`, the file is not one well-formed JSON document.
        BundleError: without `error`, the file cannot be read.
    """
    if error is None:
        return loads_strict(read_bytes(path, error=BundleError), source=str(path))
    data = read_bytes(path, error=error)
    try:
        return loads_strict(data, source=str(path))
    except JsonError as exc:
        raise error(str(exc)) from exc


@dataclass(frozen=True, slots=True)
class ValidationRecord:
    """One task's validation report as read: what an export decides on, and the JSON itself."""

    task_id: str
    accepted: bool
    reason: str | None
    """The rejection's reason when the report gives a non-empty one."""
    bundle_manifest_sha256: object
    """The digest of the bundle the report speaks of, as the report records it (None: none)."""
    json: Mapping[str, JsonValue]
    """The report object as read; an export's review record carries it unchanged."""


def parse_validation_records(
    value: JsonValue, *, where: str, error: type[SelfbenchError]
) -> tuple[ValidationRecord, ...]:
    """The reports in a decoded validation file: one report object or a list of them.

    Raises:
        SelfbenchError: `error`, for an entry without a string `taskId` and a boolean `accepted`.
    """
    entries = value if isinstance(value, list) else [value]
    records = []
    for index, entry in enumerate(entries):
        fields = entry if isinstance(entry, dict) else {}
        task_id, accepted = fields.get("taskId"), fields.get("accepted")
        if not (
            isinstance(entry, dict) and isinstance(task_id, str) and isinstance(accepted, bool)
        ):
            raise error(f"{where}: entry {index} is not a validation report (taskId, accepted)")
        reason = entry.get("reason")
        records.append(
            ValidationRecord(
                task_id=task_id,
                accepted=accepted,
                reason=reason if isinstance(reason, str) and reason else None,
                bundle_manifest_sha256=entry.get(BUNDLE_BINDING),
                json=entry,
            )
        )
    return tuple(records)


def read_validation_records(
    path: Path, *, error: type[SelfbenchError]
) -> tuple[ValidationRecord, ...]:
    """Read a validation file's reports (`validate`'s own file, or `validate --json` output).

    Raises:
        SelfbenchError: `error`, for a file unreadable, not JSON, or not validation reports.
    """
    return parse_validation_records(
        read_validation(path, error=error), where=str(path), error=error
    )
