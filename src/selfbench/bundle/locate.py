"""Find a bundle and the definition it was compiled from.

A bundle does not hold `definition.json` (SPEC §5), yet validation and export need it. Commands
that take `BUNDLE_OR_COLLECT_DIR` accept the layouts selfbench itself writes:

* a collect output directory: `DIR/harbor-task/` (the bundle) beside `DIR/definition.json`;
* a bundle directory whose parent holds `definition.json` (the same layout, named by its bundle);
* a bundle directory with the definition named explicitly.

The definition found must be the one the bundle was compiled from: its digest must equal the
manifest's `definitionSha256`; a refreshed bundle records the repaired definition's digest.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from selfbench._json import JsonError, loads_strict
from selfbench.bundle import layout
from selfbench.contract import TaskDefinition, definition_sha256
from selfbench.errors import DefinitionError, SelfbenchError
from selfbench.task import DEFINITION_FILE, TaskFileError, read_definition

__all__ = [
    "BUNDLE_DIR",
    "DEFINITION_FILE",
    "BundleError",
    "LocatedTask",
    "find_bundle",
    "locate_task",
]

BUNDLE_DIR = "harbor-task"


class BundleError(SelfbenchError):
    """A path that is not a bundle, or a definition that does not belong to it."""


@dataclass(frozen=True, slots=True)
class LocatedTask:
    """A bundle directory, its manifest's task id, and its definition."""

    bundle: Path
    definition_path: Path
    definition: TaskDefinition


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror or exc}") from None


def _manifest(bundle: Path) -> dict[str, object]:
    path = bundle / layout.MANIFEST
    try:
        manifest = loads_strict(_read(path), source=str(path))
    except JsonError as exc:
        raise BundleError(str(exc)) from None
    if not isinstance(manifest, dict):
        raise BundleError(f"{path}: not a selfbench manifest")
    return manifest


def find_bundle(path: Path) -> Path:
    """The bundle directory `path` names: itself, or its `harbor-task/`."""
    if (path / layout.TASK_TOML).is_file():
        return path
    if (path / BUNDLE_DIR / layout.TASK_TOML).is_file():
        return path / BUNDLE_DIR
    raise BundleError(f"{path}: not a bundle (no {layout.TASK_TOML}) or a collect directory")


def locate_task(path: Path, *, definition: Path | None = None) -> LocatedTask:
    """Resolve `path` (a bundle or a collect directory) to its bundle and verified definition.

    Raises:
        BundleError: not a bundle, no definition found, or one compiled from other inputs.
        DefinitionError: the definition found is not a valid persisted definition.
    """
    bundle = find_bundle(path)
    definition_path = definition or bundle.parent / DEFINITION_FILE
    if not definition_path.is_file():
        raise BundleError(
            f"{bundle}: no {DEFINITION_FILE} beside the bundle; name it with --definition"
        )
    try:
        parsed = read_definition(definition_path).definition
    except (TaskFileError, JsonError) as exc:
        raise BundleError(str(exc)) from None
    except DefinitionError as exc:
        raise BundleError(f"{definition_path}: {exc.lines[0]}") from None
    manifest = _manifest(bundle)
    bundle_id = manifest.get("taskId")
    if bundle_id != parsed.taskId:
        raise BundleError(
            f"{definition_path}: task {parsed.taskId} does not match bundle {bundle_id}"
        )
    if manifest.get("definitionSha256") != definition_sha256(parsed):
        raise BundleError(
            f"{definition_path}: not the definition bundle {parsed.taskId} was compiled from"
            " (refresh the bundle after a repair)"
        )
    for field, name in (
        ("testPatchSha256", layout.TEST_PATCH),
        ("goldPatchSha256", layout.GOLD_PATCH),
    ):
        if manifest.get(field) != hashlib.sha256(_read(bundle / name)).hexdigest():
            raise BundleError(
                f"{bundle / name}: changed since the bundle was compiled"
                f" ({field} differs; recompile or refresh it)"
            )
    return LocatedTask(bundle=bundle, definition_path=definition_path, definition=parsed)
