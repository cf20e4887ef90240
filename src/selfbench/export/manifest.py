"""The export's `manifest.json` (SPEC §8): build, render and parse it. Pure: no I/O.

`manifest.json` holds `schemaVersion` (1), `runId`, `candidateCounts` {easy, medium, hard},
`repository` {url, commit}, `version` (the builder), `acceptedCount` and `tasks`
[{taskId, sha256}] (plus `qualitySha256` for a task that carries its `quality.json`), in that
order, two-space indented; a run's export adds `provenance` last
(how it was built: the author, reviewer, validation environment, toolchains, and each task's
stage history), an object kept as it is. Parsing is strict: unknown or missing keys, wrong
types and counts that disagree are refused, each with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from selfbench import rules
from selfbench._json import JsonObject, JsonValue, dumps_pretty, loads_strict
from selfbench._text import has_control
from selfbench.errors import ArchiveError, JsonError

__all__ = [
    "DIFFICULTIES",
    "MANIFEST_NAME",
    "MAX_TASK_ID",
    "SCHEMA_VERSION",
    "TASKS_DIR",
    "Manifest",
    "TaskEntry",
    "parse_manifest",
    "render_manifest",
    "task_id_problem",
    "task_member_name",
]

SCHEMA_VERSION = 1
MANIFEST_NAME = "manifest.json"
TASKS_DIR = "tasks"
DIFFICULTIES = ("easy", "medium", "hard")
MAX_TASK_ID = 93
"""The longest taskId an export holds: `tasks/<taskId>.tar.gz` must fit a plain ustar header."""
_KEYS = ("schemaVersion", "runId", "candidateCounts", "repository", "version", "acceptedCount")
_PROVENANCE = "provenance"
_QUALITY_KEY = "qualitySha256"


@dataclass(frozen=True, slots=True)
class TaskEntry:
    """One exported task: its id and the SHA-256 of `tasks/<taskId>.tar.gz`."""

    task_id: str
    sha256: str
    quality_sha256: str | None = None
    """The SHA-256 of the task's `quality.json` (SPEC §13); None for a task without one."""

    def to_json(self) -> dict[str, str]:
        """The entry as `tasks` lists it (`qualitySha256` only when the task has a record)."""
        entry = {"taskId": self.task_id, "sha256": self.sha256}
        if self.quality_sha256 is not None:
            entry[_QUALITY_KEY] = self.quality_sha256
        return entry


@dataclass(frozen=True, slots=True)
class Manifest:
    """What `manifest.json` says about a run export."""

    run_id: str
    candidate_counts: tuple[int, int, int]
    """Candidates given to the export, by difficulty: easy, medium, hard."""
    repository_url: str
    repository_commit: str
    version: str
    tasks: tuple[TaskEntry, ...]
    provenance: JsonObject | None = None
    """How `selfbench run` built the export (absent from other exports); `tasks` in it is an
    object keyed by taskId."""

    @property
    def accepted_count(self) -> int:
        """The number of exported tasks."""
        return len(self.tasks)

    def keeping(self, task_ids: frozenset[str]) -> Manifest:
        """The same manifest listing only the tasks named (a clean export's manifest)."""
        provenance = self.provenance
        tasks = None if provenance is None else provenance.get("tasks")
        if provenance is not None and isinstance(tasks, dict):
            kept = {key: value for key, value in tasks.items() if key in task_ids}
            provenance = {**provenance, "tasks": kept}
        return replace(
            self,
            tasks=tuple(t for t in self.tasks if t.task_id in task_ids),
            provenance=provenance,
        )

    def to_json(self) -> JsonObject:
        """The manifest as JSON, keys in the spec's order (`provenance` last, when present)."""
        result: JsonObject = {
            "schemaVersion": SCHEMA_VERSION,
            "runId": self.run_id,
            "candidateCounts": dict(zip(DIFFICULTIES, self.candidate_counts, strict=True)),
            "repository": {"url": self.repository_url, "commit": self.repository_commit},
            "version": self.version,
            "acceptedCount": self.accepted_count,
            "tasks": [task.to_json() for task in self.tasks],
        }
        if self.provenance is not None:
            result["provenance"] = self.provenance
        return result


def task_member_name(task_id: str) -> str:
    """Where a task's archive sits in the export."""
    return f"{TASKS_DIR}/{task_id}.tar.gz"


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name an exported task, or None when it can."""
    if rules.is_task_id(task_id) and len(task_id) > MAX_TASK_ID:
        return f"taskId {task_id} is longer than {MAX_TASK_ID} characters, an export's limit"
    return rules.task_id_problem(task_id)


def render_manifest(manifest: Manifest) -> bytes:
    """`manifest.json` bytes: two-space indented, keys in order, trailing newline."""
    return dumps_pretty(manifest.to_json()).encode("utf-8")


# --- parsing -----------------------------------------------------------------------------------


def _fail(where: str, message: str) -> ArchiveError:
    return ArchiveError(f"{where}: {message}")


def _object(
    value: JsonValue,
    keys: tuple[str, ...],
    where: str,
    path: str,
    *,
    optional: tuple[str, ...] = (),
) -> dict[str, JsonValue]:
    if not isinstance(value, dict):
        raise _fail(where, f"{path} must be an object")
    missing = [key for key in keys if key not in value]
    if missing:
        raise _fail(where, f"{path} lacks {', '.join(missing)}")
    unknown = sorted(key for key in value if key not in keys and key not in optional)
    if unknown:
        raise _fail(where, f"{path} has unknown key {unknown[0]}")
    return value


def _string(value: JsonValue, where: str, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(where, f"{path} must be a non-empty string")
    return value


def _name(value: JsonValue, where: str, path: str) -> str:
    """A string that names something (the run, the repository): printed, so no controls."""
    text = _string(value, where, path)
    if has_control(text):
        raise _fail(where, f"{path} must not contain control characters")
    return text


def _count(value: JsonValue, where: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(where, f"{path} must be a non-negative integer")
    return value


def _digest(value: JsonValue, where: str, path: str) -> str:
    if not isinstance(value, str) or not rules.is_sha256_digest(value):
        raise _fail(where, f"{path} must be 64 lowercase hex digits")
    return value


def _tasks(value: JsonValue, where: str) -> tuple[TaskEntry, ...]:
    if not isinstance(value, list):
        raise _fail(where, "tasks must be an array")
    entries: list[TaskEntry] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        path = f"tasks[{index}]"
        fields = _object(item, ("taskId", "sha256"), where, path, optional=(_QUALITY_KEY,))
        task_id = _string(fields["taskId"], where, f"{path}.taskId")
        problem = task_id_problem(task_id)
        if problem is not None:
            raise _fail(where, f"{path}.taskId: {problem}")
        if task_id in seen:
            raise _fail(where, f"{path}.taskId: task {task_id} is listed twice")
        seen.add(task_id)
        digest = _digest(fields["sha256"], where, f"{path}.sha256")
        found = fields.get(_QUALITY_KEY)
        quality = None if found is None else _digest(found, where, f"{path}.{_QUALITY_KEY}")
        entries.append(TaskEntry(task_id, digest, quality))
    return tuple(entries)


def _provenance(value: JsonValue, where: str) -> JsonObject | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("tasks", {}), dict):
        raise _fail(where, "provenance must be an object whose tasks is an object")
    provenance: JsonObject = dict(value)
    return provenance


def parse_manifest(data: bytes, *, where: str = MANIFEST_NAME) -> Manifest:
    """Parse and check `manifest.json` bytes, counts included.

    Raises:
        ArchiveError: not well-formed JSON, not the schema, or counts that disagree.
    """
    try:
        value: JsonValue = loads_strict(data, source=where)
    except JsonError as exc:
        raise ArchiveError(str(exc)) from exc
    fields = _object(value, (*_KEYS, "tasks"), where, "manifest", optional=(_PROVENANCE,))
    if fields["schemaVersion"] != SCHEMA_VERSION or isinstance(fields["schemaVersion"], bool):
        raise _fail(where, f"schemaVersion must be {SCHEMA_VERSION}")
    counts = _object(fields["candidateCounts"], DIFFICULTIES, where, "candidateCounts")
    repository = _object(fields["repository"], ("url", "commit"), where, "repository")
    commit = _string(repository["commit"], where, "repository.commit")
    if not rules.is_full_sha(commit):
        raise _fail(where, "repository.commit must be a full commit SHA")
    manifest = Manifest(
        run_id=_name(fields["runId"], where, "runId"),
        candidate_counts=(
            _count(counts["easy"], where, "candidateCounts.easy"),
            _count(counts["medium"], where, "candidateCounts.medium"),
            _count(counts["hard"], where, "candidateCounts.hard"),
        ),
        repository_url=_name(repository["url"], where, "repository.url"),
        repository_commit=commit,
        version=_string(fields["version"], where, "version"),
        tasks=_tasks(fields["tasks"], where),
        provenance=_provenance(fields.get(_PROVENANCE), where),
    )
    accepted = _count(fields["acceptedCount"], where, "acceptedCount")
    if accepted != manifest.accepted_count:
        raise _fail(
            where, f"acceptedCount {accepted} does not match {manifest.accepted_count} tasks"
        )
    if accepted > sum(manifest.candidate_counts):
        raise _fail(
            where,
            f"acceptedCount {accepted} exceeds {sum(manifest.candidate_counts)} candidates",
        )
    return manifest
