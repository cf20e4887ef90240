"""The bundle manifest, `.selfbench-manifest.json` (SPEC §5): build, render, parse. Pure: no I/O.

Grammar: one JSON object with exactly these keys, rendered in this order, two-space indented,
non-ASCII kept, with a trailing newline:

    generator             "selfbench"
    harborSchemaVersion   a non-empty string (the Harbor task schema compiled for)
    compilerRevision      a positive integer
    taskId                a taskId that can name a Harbor task (`rules.task_id_problem`)
    difficulty            "easy" | "medium" | "hard"
    definitionSha256      64 lowercase hex digits: the definition's canonical digest
    testPatchSha256       64 lowercase hex digits: tests/test.patch
    goldPatchSha256       64 lowercase hex digits: solution/gold.patch
    snapshotSha256        64 lowercase hex digits: environment/repo.tar.gz, whose bytes
                          tests/repo.tar.gz repeats (one snapshot, hard-linked into both)

Every reader of a bundle manifest parses it here; each problem is one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from selfbench._json import JsonObject, JsonValue, dumps_pretty, loads_strict
from selfbench.bundle import layout
from selfbench.contract import DIFFICULTIES, Difficulty, TaskDefinition, definition_sha256
from selfbench.errors import BundleError, JsonError
from selfbench.rules import is_sha256_digest, task_id_problem

__all__ = [
    "GENERATOR",
    "BundleManifest",
    "build_bundle_manifest",
    "parse_bundle_manifest",
    "render_bundle_manifest",
]

GENERATOR = "selfbench"
_KEYS = (
    "generator",
    "harborSchemaVersion",
    "compilerRevision",
    "taskId",
    "difficulty",
    "definitionSha256",
    "testPatchSha256",
    "goldPatchSha256",
    "snapshotSha256",
)
_SHOWN_KEY = 60
"""How much of an unknown key a message quotes."""


def _positive_integer(value: JsonValue) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _non_empty_string(value: JsonValue) -> bool:
    return isinstance(value, str) and bool(value)


def _digest(value: JsonValue) -> bool:
    return isinstance(value, str) and is_sha256_digest(value)


_RULES: tuple[tuple[str, Callable[[JsonValue], bool], str], ...] = (
    ("generator", lambda value: value == GENERATOR, f'must be "{GENERATOR}"'),
    ("harborSchemaVersion", _non_empty_string, "must be a non-empty string"),
    ("compilerRevision", _positive_integer, "must be a positive integer"),
    ("taskId", lambda value: isinstance(value, str), "must be a string"),
    (
        "difficulty",
        lambda value: value in DIFFICULTIES,
        f"must be one of {', '.join(DIFFICULTIES)}",
    ),
    *((key, _digest, "must be 64 lowercase hex digits") for key in _KEYS[-4:]),
)
"""Each field's rule, in order; the taskId's pattern is checked after them all."""


@dataclass(frozen=True, slots=True)
class BundleManifest:
    """What compiled a bundle, and from which inputs (their SHA-256 digests)."""

    task_id: str
    difficulty: Difficulty
    definition_sha256: str
    test_patch_sha256: str
    gold_patch_sha256: str
    snapshot_sha256: str
    compiler_revision: int = layout.COMPILER_REVISION
    harbor_schema_version: str = layout.HARBOR_SCHEMA_VERSION

    def to_json(self) -> JsonObject:
        """The manifest as JSON, keys in the grammar's order."""
        values = (
            GENERATOR,
            self.harbor_schema_version,
            self.compiler_revision,
            self.task_id,
            self.difficulty,
            self.definition_sha256,
            self.test_patch_sha256,
            self.gold_patch_sha256,
            self.snapshot_sha256,
        )
        return dict(zip(_KEYS, values, strict=True))


def build_bundle_manifest(
    definition: TaskDefinition, test_patch: bytes, gold_patch: bytes, *, snapshot_sha256: str
) -> BundleManifest:
    """The manifest this compiler writes for a definition, its two patches and its snapshot."""
    return BundleManifest(
        task_id=definition.taskId,
        difficulty=cast("Difficulty", definition.difficulty),
        definition_sha256=definition_sha256(definition),
        test_patch_sha256=hashlib.sha256(test_patch).hexdigest(),
        gold_patch_sha256=hashlib.sha256(gold_patch).hexdigest(),
        snapshot_sha256=snapshot_sha256,
    )


def render_bundle_manifest(manifest: BundleManifest) -> bytes:
    """`.selfbench-manifest.json` bytes: deterministic, as the grammar above."""
    return dumps_pretty(manifest.to_json()).encode("utf-8")


# --- parsing -----------------------------------------------------------------------------------


def _fields(value: JsonValue, source: str) -> dict[str, JsonValue]:
    if not isinstance(value, dict):
        raise BundleError(f"{source}: not a selfbench manifest (a JSON object)")
    missing = [key for key in _KEYS if key not in value]
    if missing:
        raise BundleError(f"{source}: lacks {', '.join(missing)}")
    unknown = sorted(key for key in value if key not in _KEYS)
    if unknown:
        shown = json.dumps(unknown[0][:_SHOWN_KEY])
        raise BundleError(f"{source}: has unknown key {shown}")
    return value


def _problem(fields: Mapping[str, JsonValue]) -> str | None:
    """The first field that breaks the grammar, as a message; None when every field obeys."""
    for key, obeys, rule in _RULES:
        if not obeys(fields[key]):
            return f"{key} {rule}"
    task_id = fields["taskId"]
    return task_id_problem(task_id) if isinstance(task_id, str) else "taskId must be a string"


def _text(fields: Mapping[str, JsonValue], key: str, source: str) -> str:
    """A field `_problem` found a string (so never raises)."""
    value = fields[key]
    if not isinstance(value, str):
        raise BundleError(f"{source}: {key} must be a string")
    return value


def parse_bundle_manifest(data: bytes, *, source: str) -> BundleManifest:
    """Parse `.selfbench-manifest.json` bytes; `source` names the file in every message.

    Raises:
        BundleError: not one JSON object of exactly the grammar's keys and values.
    """
    try:
        value = loads_strict(data, source=source)
    except JsonError as exc:
        raise BundleError(str(exc)) from exc
    fields = _fields(value, source)
    problem = _problem(fields)
    if problem is not None:
        raise BundleError(f"{source}: {problem}")
    revision = fields["compilerRevision"]
    if not isinstance(revision, int):  # `_problem` found it one
        raise BundleError(f"{source}: compilerRevision must be a positive integer")
    return BundleManifest(
        task_id=_text(fields, "taskId", source),
        difficulty=next(tier for tier in DIFFICULTIES if tier == fields["difficulty"]),
        definition_sha256=_text(fields, "definitionSha256", source),
        test_patch_sha256=_text(fields, "testPatchSha256", source),
        gold_patch_sha256=_text(fields, "goldPatchSha256", source),
        snapshot_sha256=_text(fields, "snapshotSha256", source),
        compiler_revision=revision,
        harbor_schema_version=_text(fields, "harborSchemaVersion", source),
    )
