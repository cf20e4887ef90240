"""Write a run export (SPEC §8): read, pack and list each accepted task, atomically.

Export is one-way: it reads its input bundles and never writes to them. A bundle whose
definition was repaired after it was compiled is refused (`locate_task`): refresh it first.

Layout of the export, a gzip tar written in this order:

    manifest.json
    tasks/
    tasks/<taskId>.tar.gz   harbor-task/ ... plus harbor-task/.selfbench-review.json
                            (and harbor-task/quality.json when the task has one)

`.selfbench-review.json` carries what the review page shows beyond the bundle: the definition,
the validation verdict (or null) and the static audit. It sits at the task root, where Harbor's
`Task` and `harbor lint` ignore it and from where nothing enters a container (only
`environment/`, `tests/` and `solution/` do). `quality.json` (SPEC §13) is the task's quality
record, taken from beside its definition; the manifest lists its digest (`qualitySha256`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench import __version__
from selfbench._fs import atomic_file, open_file, read_bytes, staging_directory
from selfbench._json import dumps_pretty
from selfbench.artifacts.compiled import BUNDLE_DIR, LocatedTask, locate_task, refuse_duplicates
from selfbench.artifacts.provenance import RunProvenance
from selfbench.artifacts.quality_record import QUALITY_FILE, read_quality, render_quality
from selfbench.artifacts.validation import (
    VALIDATION_FILE,
    ValidationRecord,
    read_validation_records,
    validation_record,
)
from selfbench.audit import AuditReport
from selfbench.bundle import layout
from selfbench.contract import TaskDefinition
from selfbench.errors import BundleError, ExportError, QualityError, translating
from selfbench.export._streams import HashingReader
from selfbench.export._tar import TarWriter
from selfbench.export.manifest import (
    DIFFICULTIES,
    MANIFEST_NAME,
    TASKS_DIR,
    Manifest,
    TaskEntry,
    render_manifest,
    task_id_problem,
    task_member_name,
)
from selfbench.export.reader import (
    BUNDLE_DIRS,
    BUNDLE_FILES,
    REVIEW_FILE,
    REVIEW_KEYS,
    copy_tasks,
)
from selfbench.progress import Reporter, silent
from selfbench.rules import is_full_sha
from selfbench.task import judge_task

__all__ = [
    "ExportResult",
    "LeftOut",
    "RunInfo",
    "export_run",
    "read_validation_reports",
    "reports_beside",
    "same_file",
    "write_clean_export",
]

_TASK_LEVEL = 6
_OUTER_LEVEL = 0  # the outer layer holds gzip files only: deflating them again gains nothing


@dataclass(frozen=True, slots=True)
class RunInfo:
    """The run an export comes from."""

    run_id: str
    repository_url: str
    repository_commit: str
    candidate_counts: tuple[int, int, int] | None = None
    """Candidates tried per tier (easy, medium, hard); None: the tasks given, by difficulty."""


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A task given to the export and not exported, and why."""

    task_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What an export wrote."""

    path: Path
    manifest: Manifest
    left_out: tuple[LeftOut, ...]


def _version() -> str:

    return f"selfbench {__version__} (compiler revision {layout.COMPILER_REVISION})"


def _check_run(run: RunInfo) -> None:
    if not run.run_id.strip() or not run.run_id.isprintable():
        raise ExportError("--run-id must be a non-empty single line")
    if not run.repository_url.strip() or not run.repository_url.isprintable():
        raise ExportError("--repository-url must be a non-empty single line")
    commit = run.repository_commit
    if not is_full_sha(commit):
        raise ExportError(f"--repository-commit {commit}: expected a full commit SHA")


# --- validation reports ------------------------------------------------------------------------


def read_validation_reports(paths: Sequence[Path]) -> dict[str, ValidationRecord]:
    """Every task's validation report by taskId; a later report on a task replaces an earlier.

    Raises:
        ExportError: a file is unreadable or is not `selfbench validate --json` output.
    """
    reports: dict[str, ValidationRecord] = {}
    for path in paths:
        for record in read_validation_records(path, error=ExportError):
            reports[record.task_id] = record
    return reports


# --- inputs ------------------------------------------------------------------------------------


def _located(inputs: Sequence[Path]) -> list[LocatedTask]:
    tasks: list[LocatedTask] = []
    for path in inputs:
        task = locate_task(path)
        problem = task_id_problem(task.definition.taskId)
        if problem is not None:
            raise ExportError(f"{path}: {problem}")
        tasks.append(task)
    refuse_duplicates(tasks)
    return sorted(tasks, key=lambda task: task.definition.taskId)


def reports_beside(tasks: Sequence[LocatedTask]) -> dict[str, ValidationRecord]:
    """The reports `selfbench validate` wrote beside the tasks' definitions, by taskId.

    A report on another build of the bundle (its `bundleManifestSha256` differs) is left out.

    Raises:
        ExportError: a report file is unreadable or is not a validation report.
    """
    reports: dict[str, ValidationRecord] = {}
    for task in tasks:
        if task.home is None or not (path := task.home / VALIDATION_FILE).is_file():
            continue
        found = read_validation_reports([path]).get(task.definition.taskId)
        if found is not None and found.bundle_manifest_sha256 == task.manifest_sha256:
            reports[task.definition.taskId] = found
    return reports


def _bound(task: LocatedTask, reports: Mapping[str, ValidationRecord]) -> ValidationRecord | None:
    """The task's report, if any; one that names another build of its bundle is refused.

    Raises:
        ExportError: the report's `bundleManifestSha256` is not this bundle's.
    """
    task_id = task.definition.taskId
    report = reports.get(task_id)
    if report is not None and report.bundle_manifest_sha256 not in (None, task.manifest_sha256):
        raise ExportError(
            f"the validation report on task {task_id} speaks of another build of its bundle "
            "(bundleManifestSha256 differs); validate it again"
        )
    return report


def _unaccepted(report: ValidationRecord | None) -> str | None:
    """Why a task has no accepted validation report; None when it has one."""
    if report is None:
        return "no validation report"
    if report.accepted:
        return None
    return f"rejected: {report.reason}" if report.reason else "rejected"


def _required_verdicts(
    tasks: list[LocatedTask], reports: dict[str, ValidationRecord], *, skip: bool
) -> tuple[list[LocatedTask], list[LeftOut]]:
    kept: list[LocatedTask] = []
    left_out: list[LeftOut] = []
    for task in tasks:
        task_id = task.definition.taskId
        why = _unaccepted(_bound(task, reports))
        if why is None:
            kept.append(task)
        elif skip:
            left_out.append(LeftOut(task_id, why))
        else:
            raise ExportError(
                f"task {task_id} has no accepted validation report ({why}); validate it,"
                " or leave it out with --skip-unvalidated"
            )
    return kept, left_out


def _verdicts(
    tasks: list[LocatedTask], reports: dict[str, ValidationRecord] | None
) -> tuple[list[LocatedTask], list[LeftOut]]:
    if reports is None:
        return tasks, []
    kept: list[LocatedTask] = []
    left_out: list[LeftOut] = []
    for task in tasks:
        task_id = task.definition.taskId
        report = _bound(task, reports)
        if report is None:
            raise ExportError(f"no validation report names task {task_id}")
        if report.accepted:
            kept.append(task)
        else:
            left_out.append(LeftOut(task_id, report.reason or "rejected by validation"))
    return kept, left_out


# --- packing -----------------------------------------------------------------------------------


def _audit(task: LocatedTask) -> AuditReport:
    """The static audit of a located task: each patch read and parsed once, audited once."""
    gold = read_bytes(task.bundle / layout.GOLD_PATCH, error=BundleError)
    tests = read_bytes(task.bundle / layout.TEST_PATCH, error=BundleError)
    return judge_task(task.definition, tests, gold).audit


def _review_record(task: LocatedTask, validation: ValidationRecord | None) -> bytes:
    """The review record: the definition `locate_task` parsed, the verdict, one audit. The
    verdict is bound to the bundle it speaks of: it carries the digest of the bundle's
    manifest, which records the definition's, both patches' and the snapshot's digests."""
    definition: TaskDefinition = task.definition
    verdict = None
    if validation is not None:
        verdict = validation_record(validation.json, manifest_sha256=task.manifest_sha256)
    values = (definition.model_dump(mode="json"), verdict, _audit(task).to_json())
    record = dict(zip(REVIEW_KEYS, values, strict=True))  # definition, validation, audit
    return dumps_pretty(record).encode("utf-8")


def _quality(task: LocatedTask, given: Mapping[str, Path]) -> bytes | None:
    """The task's quality record as the export carries it: from `given` (by taskId), else the
    `quality.json` beside its definition; None when it has none. Its `seconds` is left out, so
    the export's bytes do not depend on how long the checks took.

    Raises:
        ExportError: the record is unreadable, not a quality record, or of another task.
    """
    task_id = task.definition.taskId
    path = given.get(task_id, task.definition_path.parent / QUALITY_FILE)
    if not path.is_file():
        return None
    try:
        record = read_quality(path)
    except QualityError as exc:
        raise ExportError(str(exc)) from exc
    if record.taskId != task_id:
        raise ExportError(f"{path}: the quality record of task {record.taskId}, not {task_id}")
    return render_quality(record.model_copy(update={"seconds": 0.0}))


def _bundle_entries(bundle: Path) -> list[tuple[str, Path | None]]:
    """Every path of the bundle (None for a directory), sorted, relative, posix."""
    entries: list[tuple[str, Path | None]] = []
    for path in bundle.rglob("*"):
        relative = path.relative_to(bundle).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise ExportError(f"{bundle}: cannot pack {relative}: not a regular file or directory")
        if relative not in (BUNDLE_FILES if path.is_file() else BUNDLE_DIRS):
            raise ExportError(f"{bundle}: cannot pack {relative}: not a path of a bundle")
        entries.append((relative, path if path.is_file() else None))
    if not (bundle / layout.BASE_COMMIT).is_file():
        raise ExportError(
            f"{bundle}: lacks {layout.BASE_COMMIT}, which proves its snapshot is the base commit "
            "(compiled by an older selfbench); compile it again"
        )
    return sorted(entries)


def _add_snapshot(writer: TarWriter, task: LocatedTask, relative: str, path: Path) -> None:
    """Pack a snapshot copy, hashed on the way: it must be the one the manifest records.

    Raises:
        ExportError: the copy is not the snapshot the bundle was compiled with.
    """
    with open_file(path, error=ExportError) as source:
        size = os.fstat(source.fileno()).st_size
        hashing = HashingReader(source)
        writer.add_stream(f"{BUNDLE_DIR}/{relative}", hashing, size)
    if hashing.sha256.hexdigest() != task.manifest.snapshot_sha256:
        raise ExportError(
            f"{path}: changed since the bundle was compiled (snapshotSha256 differs; recompile it)"
        )


def _pack_task(
    task: LocatedTask, review: bytes, target: Path, *, quality: bytes | None = None
) -> str:
    """Pack `harbor-task/` plus the review record (and the quality record) into `target`;
    return its SHA-256."""
    entries: list[tuple[str, Path | bytes | None]] = [*_bundle_entries(task.bundle)]
    entries.append((REVIEW_FILE, review))
    if quality is not None:
        entries.append((QUALITY_FILE, quality))
    with target.open("wb") as raw:
        writer = TarWriter(raw, level=_TASK_LEVEL)
        try:
            writer.add_directory(BUNDLE_DIR)
            for relative, source in sorted(entries, key=lambda entry: entry[0]):
                name = f"{BUNDLE_DIR}/{relative}"
                if source is None:
                    writer.add_directory(name)
                elif isinstance(source, bytes):
                    writer.add_bytes(name, source)
                elif relative in layout.SNAPSHOT_PATHS:
                    _add_snapshot(writer, task, relative, source)
                else:
                    writer.add_file(name, source)
            writer.finish()
        except BaseException:
            writer.gzip.abort()
            raise
    return writer.gzip.sha256.hexdigest()


def _write_outer(out: Path, manifest: Manifest, archives: dict[str, Path]) -> None:
    with atomic_file(out) as raw:
        writer = TarWriter(raw, level=_OUTER_LEVEL)
        try:
            writer.add_bytes(MANIFEST_NAME, render_manifest(manifest))
            writer.add_directory(TASKS_DIR)
            for entry in manifest.tasks:
                writer.add_file(task_member_name(entry.task_id), archives[entry.task_id])
            writer.finish()
        except BaseException:
            writer.gzip.abort()
            raise


def _pack_all(
    tasks: list[LocatedTask],
    reports: dict[str, ValidationRecord],
    staging: Path,
    reporter: Reporter,
    quality: Mapping[str, Path],
) -> dict[str, tuple[Path, TaskEntry]]:
    """Pack each task into `staging`; taskId → (archive, its manifest entry), in taskId order."""
    archives: dict[str, tuple[Path, TaskEntry]] = {}
    for task in tasks:
        task_id = task.definition.taskId
        reporter.stage_progress(f"packing {task_id}")
        archive = staging / f"{task_id}.tar.gz"
        record = _quality(task, quality)
        review = _review_record(task, reports.get(task_id))
        digest = _pack_task(task, review, archive, quality=record)
        quality_sha256 = None if record is None else hashlib.sha256(record).hexdigest()
        archives[task_id] = (archive, TaskEntry(task_id, digest, quality_sha256))
    return archives


def export_run(  # noqa: PLR0913 - keyword-only options of one call
    inputs: Sequence[Path],
    *,
    run: RunInfo,
    out: Path,
    validation: Sequence[Path] | None = None,
    reporter: Reporter = silent,
    require_validation: bool = False,
    skip_unvalidated: bool = False,
    provenance: RunProvenance | None = None,
    quality: Mapping[str, Path] | None = None,
) -> ExportResult:
    """Pack and list every accepted task into one export at `out`, atomically.

    The input bundles are only read: a stale one (its definition changed since it was compiled
    or refreshed) is refused before anything is written.

    With `validation` reports, a task they reject is left out and one they do not name is an
    error; `candidateCounts` is the run's count of candidates tried, else every task given.
    With `require_validation` (the CLI's
    way), each task needs an accepted report (from `validation`, else the one `validate` wrote
    beside it for this very bundle): one without is an error, or with `skip_unvalidated` is
    left out. `provenance` (from `selfbench run`) goes into the manifest as it is, its `tasks`
    cut to the exported ones. A task's `quality.json` goes with it, and its digest into the
    manifest: the one `quality` names by taskId, else the one beside its definition (a task
    without one is exported without). Each task is told to `reporter` as it is packed.

    Raises:
        ExportError: bad run fields, unreadable reports or quality records, duplicate or unnamed
            tasks, I/O errors.
        BundleError: an input is not a bundle, or its definition or patches are not the ones
            it was compiled from.
    """
    _check_run(run)
    reports = read_validation_reports(validation) if validation is not None else None
    tasks = _located(inputs)
    if require_validation:
        reports = reports if reports is not None else reports_beside(tasks)
        kept, left_out = _required_verdicts(tasks, reports, skip=skip_unvalidated)
    else:
        kept, left_out = _verdicts(tasks, reports)
    counts = run.candidate_counts or tuple(
        sum(t.definition.difficulty == d for t in tasks) for d in DIFFICULTIES
    )
    out = out.absolute()
    with translating(ExportError, f"write {out}"), staging_directory(out) as staging:
        archives = _pack_all(kept, reports or {}, staging, reporter, quality or {})
        manifest = Manifest(
            run_id=run.run_id,
            candidate_counts=(counts[0], counts[1], counts[2]),
            repository_url=run.repository_url,
            repository_commit=run.repository_commit,
            version=_version(),
            tasks=tuple(entry for _, entry in archives.values()),
            provenance=None if provenance is None else provenance.to_json(),
        ).keeping(frozenset(archives))
        _write_outer(out, manifest, {task_id: path for task_id, (path, _) in archives.items()})
    return ExportResult(out, manifest, tuple(left_out))


def same_file(first: Path, second: Path) -> bool:
    """Whether two paths name one file, however spelled (`a/../x`, a symlink, a hard link)."""
    if first.resolve() == second.resolve():
        return True
    try:
        return first.samefile(second)
    except OSError:  # either is missing: then they are not one existing file
        return False


def write_clean_export(
    source: Path, out: Path, *, drop: frozenset[str], expected: Manifest | None = None
) -> Manifest:
    """Copy `source` to `out` without the dropped tasks: same format, manifest filtered.

    The kept task archives are copied byte for byte, each digest checked on the way. With
    `expected` (the manifest that was reviewed), `source` must still be exactly that export.

    Raises:
        ArchiveError: `source` fails verification, or it is not the export `expected` lists.
        ExportError: a dropped task is not in the export, `out` is `source`, or I/O failed.
    """
    if same_file(out, source):
        raise ExportError(f"a clean export must not replace its source: {out}")
    with translating(ExportError, f"write {out}"):
        out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(out) as raw:
            writer = TarWriter(raw, level=_OUTER_LEVEL)
            try:
                manifest = copy_tasks(source, writer, drop=drop, expected=expected)
                writer.finish()
            except BaseException:
                writer.gzip.abort()
                raise
    return manifest
