"""Read a run export as a stream and verify everything on the way (SPEC §8, Beyond).

One pass, memory flat: the outer archive's first member must be `manifest.json`; each
`tasks/<taskId>.tar.gz` that follows is hashed while its own tar is parsed, and its digest is
compared with the manifest's before the task counts as read. Every member of both layers is
checked before a byte of its content is used: no absolute names, no `..`, no links, devices or
extended headers, no duplicates, nothing outside the layout, no size beyond the limits. Once a
task's digest has matched, it must prove its contents (`_proof.TaskProof`): what runs it is what
its definition and patches compile to, and its snapshot holds no solution. A task's
`quality.json`, when it has one, must be a quality record of that task whose digest is the
manifest's `qualitySha256` for it (and a task the manifest gives one must carry it). The first
problem ends the read with one line naming the archive and the member. The export file itself
is opened as every task file is (`_fs.open_file`): a symbolic link in its place is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from selfbench._fs import open_file
from selfbench._json import loads_strict
from selfbench.artifacts.compiled import BUNDLE_DIR
from selfbench.artifacts.quality_record import QUALITY_FILE, parse_quality
from selfbench.artifacts.validation import BUNDLE_BINDING
from selfbench.bundle import layout
from selfbench.bundle.manifest import BundleManifest, parse_bundle_manifest
from selfbench.contract import TaskDefinition, definition_sha256, parse_definition
from selfbench.errors import (
    ArchiveError,
    BundleError,
    DefinitionError,
    ExportError,
    JsonError,
    QualityError,
)
from selfbench.export._proof import KEPT_FILES, PATCH_FILES, TaskProof
from selfbench.export._streams import (
    HashingReader,
    MemberReader,
    Readable,
    StreamError,
    TarReader,
    one_line,
    shown,
)
from selfbench.export.manifest import (
    DIFFICULTIES,
    MANIFEST_NAME,
    TASKS_DIR,
    Manifest,
    parse_manifest,
    render_manifest,
    task_id_problem,
    task_member_name,
)

__all__ = [
    "BUNDLE_DIRS",
    "BUNDLE_FILES",
    "REQUIRED_FILES",
    "REVIEW_FILE",
    "REVIEW_KEYS",
    "Limits",
    "TaskSink",
    "VerifiedExport",
    "copy_tasks",
    "read_export",
    "read_manifest",
    "verify_export",
]

REVIEW_FILE = ".selfbench-review.json"
"""The review record each exported task carries at its root (definition, validation, audit)."""
REVIEW_KEYS = ("definition", "validation", "audit")
"""The review record's keys, in the order the writer writes them; a reader wants exactly these."""
REQUIRED_FILES = frozenset({*layout.BUNDLE_PATHS, REVIEW_FILE} - layout.OPTIONAL_PATHS)
BUNDLE_FILES = frozenset({*layout.BUNDLE_PATHS, REVIEW_FILE, QUALITY_FILE})
"""Every file a task archive may hold under `harbor-task/`."""
BUNDLE_DIRS = frozenset({"", *(path.rpartition("/")[0] for path in layout.BUNDLE_PATHS)})
"""Every directory it may hold ("" is `harbor-task/` itself)."""
_JSON_FILES = frozenset({layout.MANIFEST, REVIEW_FILE, QUALITY_FILE, layout.BASE_COMMIT})
_REGULAR = (tarfile.REGTYPE, tarfile.AREGTYPE)
_EXTENDED = (
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
    tarfile.GNUTYPE_SPARSE,
)
_DEVICES = (tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE)
_MESSAGE_BEYOND_PATH = 1000
"""How long a message may run after the archive's path (member names and the problem)."""
_OUTER_LAYOUT = "member outside the export layout (manifest.json, tasks/<taskId>.tar.gz)"


@dataclass(frozen=True, slots=True)
class Limits:
    """What a member may claim: one member's size, all task files together, a JSON record.

    A patch is held whole while its task is checked (`patch_bytes`); every other rendered file
    is bounded like a JSON record; a snapshot may unpack to at most `total_bytes`.
    """

    member_bytes: int = 4 << 30
    total_bytes: int = 64 << 30
    json_bytes: int = 16 << 20
    patch_bytes: int = 256 << 20


class TaskSink(Protocol):
    """Receives each task's verified-so-far members; `task_done` once its digest matched."""

    def task_directory(self, task_id: str, relative: str) -> None: ...

    def task_file(
        self, task_id: str, relative: str, content: Readable, *, size: int, executable: bool
    ) -> None: ...

    def task_done(self, task_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class VerifiedExport:
    """A verified export: its manifest and each task's difficulty."""

    manifest: Manifest
    difficulties: dict[str, str] = field(default_factory=dict)


# --- one-line errors ---------------------------------------------------------------------------


class _Where:
    """The archive and the chain of members being read, for messages."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.members: list[str] = []

    def error(self, message: str, *members: str) -> ArchiveError:
        chain = [shown(member) for member in (*self.members, *members)]
        return ArchiveError(": ".join([str(self.path), *chain, one_line(message)]))


@contextmanager
def _translated(where: _Where) -> Iterator[None]:
    """Turn a broken stream into one ArchiveError naming where it broke.

    Every message leaving here is one short line: whatever of the archive it quotes (a JSON
    key, a taskId, a decompressor's complaint) is escaped and cut.
    """
    try:
        yield
    except StreamError as exc:
        raise where.error(str(exc)) from exc
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise where.error(f"not a valid gzip stream ({exc})") from exc
    except ExportError as exc:
        text = str(exc)
        brief = one_line(text, len(str(where.path)) + _MESSAGE_BEYOND_PATH)
        if brief == text:
            raise
        raise type(exc)(brief) from exc


def _member_problem(info: tarfile.TarInfo) -> str | None:
    """Why a member is unsafe whatever the layout, or None; the first rule that fails wins."""
    name = info.name
    parts = name.split("/")
    rules = (
        (info.type in _EXTENDED, "extended (pax or GNU) header; exports use plain ustar"),
        (name.startswith("/"), "absolute member name"),
        (".." in parts, "member name escapes the archive (..)"),
        (any(part in ("", ".") for part in parts), "member name is not normalized"),
        (
            info.type in (tarfile.SYMTYPE, tarfile.LNKTYPE),
            f"link member (to {shown(info.linkname)}); links are refused",
        ),
        (info.type in _DEVICES, "device or FIFO member"),
        (info.type not in (*_REGULAR, tarfile.DIRTYPE), f"unsupported member type {info.type!r}"),
        (info.type == tarfile.DIRTYPE and info.size > 0, "directory member with content"),
    )
    return next((message for failed, message in rules if failed), None)


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.total = 0

    def check_member(self, info: tarfile.TarInfo) -> str | None:
        """Why one member's claimed size is refused, or None."""
        if info.size > self.limits.member_bytes:
            return f"member claims {info.size} bytes (limit {self.limits.member_bytes})"
        return None

    def check(self, info: tarfile.TarInfo) -> str | None:
        """As `check_member`, and count it towards what the export unpacks to."""
        problem = self.check_member(info)
        if problem is not None:
            return problem
        self.total += info.size
        if self.total > self.limits.total_bytes:
            return f"the export unpacks to more than {self.limits.total_bytes} bytes"
        return None


# --- the outer layer ---------------------------------------------------------------------------


class _Outer:
    """The outer archive: the manifest first, then each listed task's member."""

    def __init__(self, stream: IO[bytes], where: _Where, budget: _Budget) -> None:
        self.where = where
        self.budget = budget
        self.tar = TarReader(gzip.GzipFile(fileobj=stream, mode="rb"))
        self.manifest = self._manifest()
        self.expected = {entry.task_id: entry.sha256 for entry in self.manifest.tasks}
        self.quality = {entry.task_id: entry.quality_sha256 for entry in self.manifest.tasks}
        self.names = {MANIFEST_NAME}
        self.seen: set[str] = set()

    def _manifest(self) -> Manifest:
        info = self.tar.next()
        if info is None or info.name != MANIFEST_NAME or info.type not in _REGULAR:
            found = "nothing" if info is None else shown(info.name)
            raise self.where.error(f"the first member must be {MANIFEST_NAME}; found {found}")
        if info.size > self.budget.limits.json_bytes:
            raise self.where.error(f"member claims {info.size} bytes", MANIFEST_NAME)
        return parse_manifest(
            self.tar.content().read(), where=f"{self.where.path}: {MANIFEST_NAME}"
        )

    def _task_id(self, info: tarfile.TarInfo) -> str | None:
        """The task a member holds, None for the `tasks/` directory; refuses anything else."""
        problem = _member_problem(info)
        if problem is None and info.name in self.names:
            problem = "duplicate member"
        self.names.add(info.name)
        if problem is None and info.name == TASKS_DIR and info.type == tarfile.DIRTYPE:
            return None
        stem = info.name.removeprefix(f"{TASKS_DIR}/").removesuffix(".tar.gz")
        if problem is None and (
            info.name != task_member_name(stem)
            or task_id_problem(stem)
            or info.type not in _REGULAR
        ):
            problem = _OUTER_LAYOUT
        if problem is None and stem not in self.expected:
            problem = f"task {stem} is not listed in {MANIFEST_NAME}"
        problem = problem or self.budget.check_member(info)
        if problem is not None:
            raise self.where.error(problem, info.name)
        return stem

    def tasks(self) -> Iterator[tuple[str, MemberReader]]:
        """Each task member in archive order, then a check that none listed is missing."""
        while (info := self.tar.next()) is not None:
            task_id = self._task_id(info)
            if task_id is not None:
                self.seen.add(task_id)
                self.where.members.append(info.name)
                yield task_id, self.tar.content()
                self.where.members.pop()
        for entry in self.manifest.tasks:
            if entry.task_id not in self.seen:
                member = task_member_name(entry.task_id)
                raise self.where.error(f"listed in {MANIFEST_NAME} but missing", member)

    def check_digest(self, task_id: str, digest: str) -> None:
        expected = self.expected[task_id]
        if digest != expected:
            raise self.where.error(f"sha256 {digest} does not match {MANIFEST_NAME} ({expected})")


# --- one task's archive ------------------------------------------------------------------------


class _Task:
    """One task archive's members, checked against the bundle layout.

    The review record must agree with the bundle it travels with: the digest of its definition
    is the bundle manifest's `definitionSha256`, and its difficulty the manifest's. The two
    files may come in either order, so that check runs once every member has been read.
    """

    def __init__(
        self,
        task_id: str,
        where: _Where,
        budget: _Budget,
        sink: TaskSink | None,
        *,
        quality_sha256: str | None = None,
    ) -> None:
        self.task_id = task_id
        self.quality_sha256 = quality_sha256
        """The digest the manifest lists for the task's `quality.json` (None: it has none)."""
        self.where = where
        self.budget = budget
        self.sink = sink
        self.names: set[str] = set()
        self.files: set[str] = set()
        self.difficulty = ""
        self.definition_sha256: str | None = None
        self.reviewed: tuple[str, str] | None = None
        """The review record's definition: its digest and its difficulty."""
        self.definition: TaskDefinition | None = None
        self.manifest: BundleManifest | None = None
        self.manifest_sha256 = ""
        """The SHA-256 of the bundle manifest's bytes, which a validation record must name."""
        self.verdict_binding: object = None
        """The review record's validation's `bundleManifestSha256` (None: no validation)."""
        self.proof = TaskProof(unpack_limit=budget.limits.total_bytes)

    def _relative(self, info: tarfile.TarInfo) -> str:
        problem = _member_problem(info)
        if problem is None and info.name in self.names:
            problem = "duplicate member"
        self.names.add(info.name)
        relative = info.name.removeprefix(BUNDLE_DIR).removeprefix("/")
        if (
            problem is None
            and info.name != BUNDLE_DIR
            and not info.name.startswith(f"{BUNDLE_DIR}/")
        ):
            problem = f"member outside {BUNDLE_DIR}/"
        is_dir = info.type == tarfile.DIRTYPE
        if problem is None and relative not in (BUNDLE_DIRS if is_dir else BUNDLE_FILES):
            problem = "member outside the bundle layout"
        problem = problem or self.budget.check(info)
        if problem is not None:
            raise self.where.error(problem, info.name)
        return relative

    def read(self, tar: TarReader) -> None:
        while (info := tar.next()) is not None:
            relative = self._relative(info)
            if info.type == tarfile.DIRTYPE:
                if self.sink is not None:
                    self.sink.task_directory(self.task_id, relative)
                continue
            self.files.add(relative)
            if relative in layout.SNAPSHOT_PATHS:
                self._snapshot(relative, info, tar.content())
                continue
            content: Readable = tar.content()
            if relative in _JSON_FILES:
                content = io.BytesIO(self._record(relative, info, tar.content()))
            elif relative in KEPT_FILES:
                content = io.BytesIO(self._kept(relative, info, tar.content()))
            self._hand(relative, info, content)
        for missing in sorted(REQUIRED_FILES - self.files):
            raise self.where.error(f"lacks {BUNDLE_DIR}/{missing}")
        if self.quality_sha256 is not None and QUALITY_FILE not in self.files:
            raise self.where.error(
                f"lacks {BUNDLE_DIR}/{QUALITY_FILE} ({MANIFEST_NAME} lists its qualitySha256)"
            )
        self._check_review()

    def _hand(self, relative: str, info: tarfile.TarInfo, content: Readable) -> None:
        if self.sink is not None:
            executable = bool(info.mode & 0o111)
            self.sink.task_file(
                self.task_id, relative, content, size=info.size, executable=executable
            )

    def _snapshot(self, relative: str, info: tarfile.TarInfo, content: MemberReader) -> None:
        """Hand a snapshot copy on while it is hashed (and, the first, scanned)."""
        tee = self.proof.snapshot(relative, content)
        self._hand(relative, info, tee)
        tee.drain()
        self.proof.snapshot_done(relative, tee)

    def _kept(self, relative: str, info: tarfile.TarInfo, content: MemberReader) -> bytes:
        """A rendered file or a patch, read whole (bounded) for the proof."""
        limits = self.budget.limits
        limit = limits.patch_bytes if relative in PATCH_FILES else limits.json_bytes
        if info.size > limit:
            name = f"{BUNDLE_DIR}/{relative}"
            raise self.where.error(f"member claims {info.size} bytes (limit {limit})", name)
        data = content.read()
        self.proof.keep(relative, data, info.mode)
        return data

    def _record(self, relative: str, info: tarfile.TarInfo, content: MemberReader) -> bytes:
        name = f"{BUNDLE_DIR}/{relative}"
        if info.size > self.budget.limits.json_bytes:
            raise self.where.error(f"member claims {info.size} bytes", name)
        data = content.read()
        if relative == QUALITY_FILE:
            self._quality(data, name)
        elif relative == REVIEW_FILE:
            try:
                value: Any = loads_strict(data, source=name)
            except JsonError as exc:
                raise self.where.error(str(exc)) from exc
            self._review(value, name)
        elif relative == layout.BASE_COMMIT:
            self.proof.base_commit = data
        else:
            self._bundle_manifest(data, name)
            self.proof.keep(relative, data, info.mode)
        return data

    def _quality(self, data: bytes, name: str) -> None:
        """The quality record's digest is the one the manifest lists, and it is of this task."""
        digest = hashlib.sha256(data).hexdigest()
        expected = self.quality_sha256
        if expected is None:
            raise self.where.error(f"not listed in {MANIFEST_NAME} (no qualitySha256)", name)
        if digest != expected:
            raise self.where.error(
                f"sha256 {digest} does not match {MANIFEST_NAME} qualitySha256 ({expected})", name
            )
        try:
            record = parse_quality(data, source=name)
        except QualityError as exc:
            raise self.where.error(str(exc).removeprefix(f"{name}: ")) from exc
        if record.taskId != self.task_id:
            raise self.where.error(f"does not describe task {self.task_id}", name)

    def _bundle_manifest(self, data: bytes, name: str) -> None:
        try:
            manifest = parse_bundle_manifest(data, source=name)
        except BundleError as exc:
            raise self.where.error(str(exc)) from exc
        if manifest.task_id != self.task_id:
            raise self.where.error(f"does not describe task {self.task_id}", name)
        self.difficulty = manifest.difficulty
        self.definition_sha256 = manifest.definition_sha256
        self.manifest = manifest
        self.manifest_sha256 = hashlib.sha256(data).hexdigest()

    def _review(self, value: Any, name: str) -> None:
        """Check the review record's shape (exactly what the writer writes) and keep its digest."""
        if not isinstance(value, dict) or sorted(value) != sorted(REVIEW_KEYS):
            keys = ", ".join(REVIEW_KEYS)
            raise self.where.error(f"not a review record (an object of exactly {keys})", name)
        raw = value["definition"]
        if not isinstance(raw, dict) or raw.get("taskId") != self.task_id:
            raise self.where.error(f"does not describe task {self.task_id}", name)
        try:
            loaded = parse_definition(raw, mode="persisted", prefix="definition")
        except DefinitionError as exc:
            raise self.where.error(f"invalid definition: {exc.lines[0]}", name) from exc
        if loaded.warnings:
            unknown = loaded.warnings[0].removeprefix("dropped ")
            raise self.where.error(f"invalid definition: {unknown}", name)
        definition = loaded.definition
        self.reviewed = (definition_sha256(definition), definition.difficulty)
        self.definition = definition
        validation = value["validation"]
        if validation is not None and not (
            isinstance(validation, dict)
            and validation.get("taskId") == self.task_id
            and isinstance(validation.get("accepted"), bool)
        ):
            raise self.where.error(
                f"validation is neither null nor a report on task {self.task_id}", name
            )
        if validation is not None:
            self.verdict_binding = validation.get(BUNDLE_BINDING, "")
        if not isinstance(value["audit"], dict):
            raise self.where.error("audit is not an object", name)

    def _check_review(self) -> None:
        if self.reviewed is None:  # unreachable: the record is a required file
            raise self.where.error(f"lacks {BUNDLE_DIR}/{REVIEW_FILE}")
        name = f"{BUNDLE_DIR}/{REVIEW_FILE}"
        digest, difficulty = self.reviewed
        if digest != self.definition_sha256:
            raise self.where.error(
                f"its definition is not the bundle's (definitionSha256 of {layout.MANIFEST})",
                name,
            )
        if difficulty != self.difficulty:
            raise self.where.error(
                f"difficulty {difficulty} does not match {layout.MANIFEST} ({self.difficulty})",
                name,
            )
        binding = self.verdict_binding
        if binding is not None and binding != self.manifest_sha256:
            raise self.where.error(
                f"validation is not bound to this bundle: its {BUNDLE_BINDING} is not the "
                f"sha256 of {layout.MANIFEST} ({self.manifest_sha256})",
                name,
            )

    def check_proof(self) -> None:
        """The task's files are what its definition and patches compile to (`TaskProof`)."""
        if self.definition is None or self.manifest is None:  # unreachable: both are required
            raise self.where.error(f"lacks {BUNDLE_DIR}/{REVIEW_FILE}")
        problem = self.proof.problem(self.definition, self.manifest)
        if problem is not None:
            relative, message = problem
            raise self.where.error(message, f"{BUNDLE_DIR}/{relative}")


def _read_task(task: _Task, content: MemberReader) -> str:
    hashing = HashingReader(content)
    task.read(TarReader(gzip.GzipFile(fileobj=hashing, mode="rb")))
    hashing.drain()
    return hashing.sha256.hexdigest()


def _check_counts(where: _Where, manifest: Manifest, difficulties: dict[str, str]) -> None:
    for difficulty, candidates in zip(DIFFICULTIES, manifest.candidate_counts, strict=True):
        accepted = sum(value == difficulty for value in difficulties.values())
        if accepted > candidates:
            raise where.error(
                f"{accepted} {difficulty} tasks exported but candidateCounts.{difficulty} is "
                f"{candidates}",
                MANIFEST_NAME,
            )


def _open(path: Path) -> IO[bytes]:
    """The export file, never read through a link (`_fs.open_file`)."""
    return open_file(path, error=ExportError)


def read_export(
    path: Path, *, sink: TaskSink | None = None, limits: Limits | None = None
) -> VerifiedExport:
    """Verify the export at `path` in one streaming pass, handing each task's members to `sink`.

    Raises:
        ArchiveError: the first problem found, naming the member.
        ExportError: the file cannot be read.
    """
    where = _Where(path)
    budget = _Budget(limits or Limits())
    difficulties: dict[str, str] = {}
    with _open(path) as stream, _translated(where):
        outer = _Outer(stream, where, budget)
        for task_id, content in outer.tasks():
            quality = outer.quality[task_id]
            task = _Task(task_id, where, budget, sink, quality_sha256=quality)
            outer.check_digest(task_id, _read_task(task, content))
            task.check_proof()
            difficulties[task_id] = task.difficulty
            if sink is not None:
                sink.task_done(task_id)
        _check_counts(where, outer.manifest, difficulties)
    return VerifiedExport(outer.manifest, difficulties)


def verify_export(path: Path, *, limits: Limits | None = None) -> VerifiedExport:
    """Verify every digest, count and member of the export at `path`.

    Raises:
        ArchiveError: the first problem found, naming the member.
        ExportError: the file cannot be read.
    """
    return read_export(path, limits=limits)


def read_manifest(path: Path) -> Manifest:
    """The manifest alone (the first member), checked; the tasks are not read.

    Raises:
        ArchiveError: the manifest is missing or malformed.
        ExportError: the file cannot be read.
    """
    where = _Where(path)
    with _open(path) as stream, _translated(where):
        return _Outer(stream, where, _Budget(Limits())).manifest


class _Writer(Protocol):
    def add_bytes(self, name: str, content: bytes, *, executable: bool = False) -> None: ...

    def add_directory(self, name: str) -> None: ...

    def add_stream(
        self, name: str, source: Readable, size: int, *, executable: bool = False
    ) -> None: ...


def copy_tasks(
    source: Path, writer: _Writer, *, drop: frozenset[str], expected: Manifest | None = None
) -> Manifest:
    """Write `source`'s manifest without `drop`, then every kept task byte for byte.

    With `expected` (the manifest a reviewer was shown), `source` must still hold exactly that
    manifest; each kept task's digest is then checked against it as the task is copied, so
    the copy holds only what was reviewed even if the file was replaced in between.

    Raises:
        ArchiveError: `source` fails verification of its layout or a digest, or it is not the
            export `expected` describes.
        ExportError: a dropped task is not in the export.
    """
    where = _Where(source)
    with _open(source) as stream, _translated(where):
        outer = _Outer(stream, where, _Budget(Limits()))
        if expected is not None and outer.manifest != expected:
            raise where.error(
                "not the export that was loaded for review (the file changed since); "
                "nothing written",
                MANIFEST_NAME,
            )
        listed = {entry.task_id for entry in outer.manifest.tasks}
        for task_id in sorted(drop - listed):
            raise ExportError(f"cannot drop {task_id}: not a task of {source}")
        manifest = outer.manifest.keeping(frozenset(listed - drop))
        writer.add_bytes(MANIFEST_NAME, render_manifest(manifest))
        writer.add_directory(TASKS_DIR)
        for task_id, content in outer.tasks():
            if task_id in drop:
                continue
            hashing = HashingReader(content)
            writer.add_stream(task_member_name(task_id), hashing, content.remaining)
            outer.check_digest(task_id, hashing.sha256.hexdigest())
    return manifest
