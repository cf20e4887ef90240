"""A validation report (SPEC §6): `validation.json`, its one writer and its one reader.

`selfbench validate` writes each task's report beside its `definition.json`, naming the bundle it
speaks of (`bundleManifestSha256`); `export` reads it, and ignores a report on another build of
the bundle than the one beside it. A run's export keeps its reports under the same name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import dumps_pretty, loads_strict
from selfbench.errors import BundleError, JsonError, SelfbenchError, translating

__all__ = ["VALIDATION_FILE", "read_validation", "validation_record", "write_validation"]

VALIDATION_FILE = "validation.json"


def validation_record(report: Mapping[str, Any], *, manifest_sha256: str) -> dict[str, Any]:
    """A task's report as written: its JSON form and the digest of the bundle it speaks of."""
    return {**report, "bundleManifestSha256": manifest_sha256}


def write_validation(directory: Path, record: Any) -> Path:
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

    Raises:
        SelfbenchError: `error`, when given, for a file unreadable or not JSON (the same text).
        JsonError: without `error`, the file is not one well-formed JSON document.
        OSError: without `error`, the file cannot be read.
    """
    if error is None:
        return loads_strict(path.read_bytes(), source=str(path))
    data = read_bytes(path, error=error)
    try:
        return loads_strict(data, source=str(path))
    except JsonError as exc:
        raise error(str(exc)) from None
