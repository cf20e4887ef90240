"""A compiled task: its home, a bundle beside the definition it was compiled from (SPEC §5).

`compiler.compile_home` is the one writer of a home; `locate_task` the one reader and checker.

A bundle does not hold `definition.json` (SPEC §5), yet validation and export need it. Commands
that take `BUNDLE_OR_COLLECT_DIR` accept the layouts selfbench itself writes:

* a collect output directory: `DIR/harbor-task/` (the bundle) beside `DIR/definition.json`;
* a bundle directory whose parent holds `definition.json` (the same layout, named by its bundle);
* a bundle directory with the definition named explicitly.

The definition found must be the one the bundle was compiled from: its digest must equal the
manifest's `definitionSha256`; a refreshed bundle records the repaired definition's digest.
Every file of a home is read with `_fs.read_bytes`: a symbolic link in place of one is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import link_refused, read_beneath, read_bytes
from selfbench.artifacts.task_dir import DEFINITION_FILE, read_definition
from selfbench.bundle import layout
from selfbench.bundle.manifest import BundleManifest, parse_bundle_manifest
from selfbench.bundle.render_toml import parse_collect_command
from selfbench.contract import TaskDefinition, definition_sha256
from selfbench.errors import BundleError, DefinitionError, JsonError, TaskFileError

__all__ = [
    "BUNDLE_DIR",
    "LocatedTask",
    "check_patch_digests",
    "find_bundle",
    "locate_task",
    "read_bundle_file",
    "read_bundle_manifest",
    "read_collect_command",
    "refuse_duplicates",
]

BUNDLE_DIR = "harbor-task"
"""The bundle's directory in a home, beside the home's `definition.json`."""


@dataclass(frozen=True, slots=True)
class LocatedTask:
    """A bundle directory, its definition, and its manifest (whose digests it matched)."""

    bundle: Path
    definition_path: Path
    definition: TaskDefinition
    manifest: BundleManifest
    manifest_sha256: str = ""
    """The SHA-256 of the bundle's manifest file: which compiled bundle a report speaks of."""

    @property
    def home(self) -> Path | None:
        """The directory holding both the bundle and its definition; None when they are apart."""
        holder = self.bundle.parent
        return holder if self.definition_path == holder / DEFINITION_FILE else None


def _read(path: Path) -> bytes:
    return read_bytes(path, error=BundleError)


def read_bundle_file(bundle: Path, relative: str) -> bytes:
    """The file `relative` of `bundle` (`layout.TEST_SH`, …), reached through no link at any
    depth: a plain copy of an export's tasks may hold a linked `tests/` or `solution/`.

    Raises:
        BundleError: the file is missing, a link stands on the way, or it cannot be read.
    """
    if (bundle / relative).is_symlink():  # the file itself: said as every reader says it
        raise BundleError(link_refused(bundle / relative))
    data = read_beneath(bundle, relative, error=BundleError)
    if data is None:
        raise BundleError(f"{bundle / relative}: missing from the bundle")
    return data


def read_bundle_manifest(bundle: Path) -> BundleManifest:
    """Read and parse the bundle's `.selfbench-manifest.json`.

    Raises:
        BundleError: the file cannot be read or is not a bundle manifest.
    """
    path = bundle / layout.MANIFEST
    return parse_bundle_manifest(_read(path), source=str(path))


def read_collect_command(bundle: Path) -> str:
    """The `[[verifier.collect]]` command of the bundle's own `task.toml`.

    Raises:
        BundleError: task.toml cannot be read or has no collect command.
    """

    path = bundle / layout.TASK_TOML
    command = parse_collect_command(_read(path)) if path.is_file() else None
    if command is None:
        raise BundleError(f"{path}: no [[verifier.collect]] command")
    return command


def find_bundle(path: Path) -> Path:
    """The bundle directory `path` names: itself, or its `harbor-task/`."""
    if (path / layout.TASK_TOML).is_file():
        return path
    if (path / BUNDLE_DIR / layout.TASK_TOML).is_file():
        return path / BUNDLE_DIR
    if (path / DEFINITION_FILE).is_file():
        raise BundleError(f"{path}: a task directory with no {BUNDLE_DIR}/ yet; compile it first")
    raise BundleError(f"{path}: not a bundle (no {layout.TASK_TOML}) or a collect directory")


def _check_digests(
    bundle: Path, manifest: BundleManifest, definition_path: Path, parsed: TaskDefinition
) -> None:
    """The definition and both patches must be the inputs the manifest records."""
    if manifest.task_id != parsed.taskId:
        raise BundleError(
            f"{definition_path}: task {parsed.taskId} does not match bundle {manifest.task_id}"
        )
    if manifest.definition_sha256 != definition_sha256(parsed):
        raise BundleError(
            f"{definition_path}: not the definition bundle {parsed.taskId} was compiled from"
            " (refresh the bundle after a repair)"
        )
    check_patch_digests(bundle, manifest)


def check_patch_digests(bundle: Path, manifest: BundleManifest) -> None:
    """Both patches of `bundle` must be the ones its manifest records (read through no link).

    Raises:
        BundleError: a patch that changed since the bundle was compiled, or cannot be read.
    """
    for field, name, recorded in (
        ("testPatchSha256", layout.TEST_PATCH, manifest.test_patch_sha256),
        ("goldPatchSha256", layout.GOLD_PATCH, manifest.gold_patch_sha256),
    ):
        if recorded != hashlib.sha256(read_bundle_file(bundle, name)).hexdigest():
            raise BundleError(
                f"{bundle / name}: changed since the bundle was compiled"
                f" ({field} differs; recompile or refresh it)"
            )


def locate_task(
    path: Path, *, definition: Path | None = None, definition_option: str | None = None
) -> LocatedTask:
    """Resolve `path` (a bundle or a collect directory) to its bundle and verified definition.

    `definition_option` is the caller's option that names a definition (`--definition`), for
    the message when none is beside the bundle; a caller without one passes None.

    Raises:
        BundleError: not a bundle, no definition found, or one compiled from other inputs.
        DefinitionError: the definition found is not a valid persisted definition.
    """
    bundle = find_bundle(path)
    definition_path = definition or bundle.parent / DEFINITION_FILE
    if not definition_path.is_file():
        hint = f"; name it with {definition_option}" if definition_option else ""
        raise BundleError(f"{bundle}: no {DEFINITION_FILE} beside the bundle{hint}")
    try:
        parsed = read_definition(definition_path).definition
    except (TaskFileError, JsonError) as exc:
        raise BundleError(str(exc)) from exc
    except DefinitionError as exc:
        raise BundleError(f"{definition_path}: {exc.lines[0]}") from exc
    raw = _read(bundle / layout.MANIFEST)
    manifest = parse_bundle_manifest(raw, source=str(bundle / layout.MANIFEST))
    _check_digests(bundle, manifest, definition_path, parsed)
    return LocatedTask(bundle, definition_path, parsed, manifest, hashlib.sha256(raw).hexdigest())


def refuse_duplicates(tasks: Sequence[LocatedTask]) -> None:
    """Each task once: two bundles of one task would share its logs and its place in an export.

    Raises:
        BundleError: `task <taskId> given twice: <first bundle>, <second bundle>`.
    """
    seen: dict[str, LocatedTask] = {}
    for located in tasks:
        task_id = located.definition.taskId
        first = seen.setdefault(task_id, located)
        if first is not located:
            raise BundleError(f"task {task_id} given twice: {first.bundle}, {located.bundle}")
