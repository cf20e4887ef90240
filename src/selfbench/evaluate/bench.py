"""Read the benchmark an evaluation runs: an export archive (verified, then unpacked), a
directory of tasks, or a `selfbench run` directory (or the `export/` folder in it).

A tasks directory holds one task per entry: an extracted task (`DIR/<taskId>/task.toml` with its
`.selfbench-review.json`, what `selfbench extract` writes) or a collect directory
(`DIR/<name>/harbor-task/` beside `definition.json`). A task's **digest** is the SHA-256 of its
`.selfbench-manifest.json`, which binds its definition and both patches; the **benchmark id** is
the SHA-256 of the sorted `taskId digest` lines, so results can tell their benchmark. A task's
`quality.json` (beside its definition, or at the root of an extracted task) is read with it.

A run directory's benchmark is its accepted tasks: each accepted candidate's compiled bundle and
the quality record its quality stage wrote, the very tasks (and digests, so the same benchmark
id) its export holds, whether or not the export was written yet or moved since.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import read_beneath, read_bytes
from selfbench._json import loads_strict
from selfbench._scratch import scratch_directory
from selfbench.artifacts.compiled import (
    LocatedTask,
    check_patch_digests,
    locate_task,
    read_bundle_manifest,
)
from selfbench.artifacts.quality_record import QUALITY_FILE, QualityRecord, read_quality
from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.contract import definition_sha256, parse_definition
from selfbench.errors import BundleError, EvalError, JsonError, SelfbenchError, translating
from selfbench.export import extract_export
from selfbench.export.reader import REVIEW_FILE
from selfbench.patches import parse_patch
from selfbench.run.export import EXPORT_DIR
from selfbench.run.state import RunDirectory

__all__ = ["BenchTask", "Benchmark", "open_benchmark", "read_run_tasks", "read_tasks_dir"]


@dataclass(frozen=True, slots=True)
class BenchTask:
    """One task of the benchmark."""

    located: LocatedTask
    digest: str
    quality: QualityRecord | None = None
    """The task's quality record, when it has one."""

    @property
    def task_id(self) -> str:
        return self.located.definition.taskId

    @property
    def difficulty(self) -> str:
        return self.located.definition.difficulty

    def held_out_paths(self) -> tuple[str, ...]:
        """The task's held-out paths (`bundle.held_out.held_out_paths`): its testPaths joined to
        its workdir, then every path its bundle's test patch names (none of those when the
        bundle holds no readable one)."""
        data = self._bundle_bytes(layout.TEST_PATCH)
        return held_out_paths(self.located.definition, parse_patch(data, lenient=True))

    def gold_patch(self) -> bytes:
        """The bundle's gold patch (empty when it holds no readable one): what the tamper scan
        does not hold against an agent (`tamper.scan_patch`)."""
        return self._bundle_bytes(layout.GOLD_PATCH)

    def _bundle_bytes(self, relative: str) -> bytes:
        """A file of the bundle, reached as `read_beneath` reaches it (no link followed); empty
        when there is none or it cannot be read."""
        try:
            data = read_beneath(self.located.bundle, relative, error=EvalError)
        except (EvalError, ValueError):
            return b""
        return data or b""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """The tasks, sorted by id, and the id of the whole."""

    benchmark_id: str
    tasks: tuple[BenchTask, ...]


def _extracted_task(bundle: Path) -> LocatedTask:
    """An extracted task: its definition comes from its review record."""
    path = bundle / REVIEW_FILE
    data = read_bytes(path, error=EvalError)  # an extracted export's file: never via a link
    try:
        record = loads_strict(data, source=str(path))
    except JsonError as exc:
        raise EvalError(f"{path}: cannot read the review record: {exc}") from exc
    if not isinstance(record, dict) or "definition" not in record:
        raise EvalError(f"{path}: not a review record")
    definition = parse_definition(record["definition"], mode="persisted").definition
    manifest = read_bundle_manifest(bundle)
    if manifest.task_id != definition.taskId or (
        manifest.definition_sha256 != definition_sha256(definition)
    ):
        raise EvalError(f"{path}: its definition is not the bundle's")
    try:
        check_patch_digests(bundle, manifest)  # a plain copy of the tasks may have changed them
    except BundleError as exc:
        raise EvalError(str(exc)) from exc
    return LocatedTask(bundle, path, definition, manifest)


def _task(entry: Path, *, quality_path: Path | None = None) -> BenchTask:
    """The task at `entry`, with the quality record at `quality_path` (default: beside its
    definition, when there is one)."""
    try:
        with translating(EvalError, f"read {entry}"):
            if (entry / layout.TASK_TOML).is_file() and (entry / REVIEW_FILE).is_file():
                located = _extracted_task(entry)
            else:
                located = locate_task(entry)
            digest = hashlib.sha256(
                read_bytes(located.bundle / layout.MANIFEST, error=EvalError)
            ).hexdigest()
            quality_path = quality_path or located.definition_path.parent / QUALITY_FILE
            quality = read_quality(quality_path) if quality_path.is_file() else None
    except SelfbenchError as exc:
        if isinstance(exc, EvalError):
            raise
        raise EvalError(f"{entry}: not a task: {exc.lines[0]}") from exc
    return BenchTask(located, digest, quality)


def read_tasks_dir(directory: Path, *, named: Path | None = None) -> Benchmark:
    """Every task of a tasks directory; messages name it as `named` (the export it came from).

    Raises:
        EvalError: the directory holds no task, an entry is not a task, or a task id repeats.
    """
    with translating(EvalError, f"read {directory}"):
        entries = sorted(
            p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")
        )
    return _benchmark([_task(entry) for entry in entries], named or directory)


def read_run_tasks(run: RunDirectory) -> Benchmark:
    """The accepted tasks of a run directory (see the module docstring).

    Raises:
        EvalError: the run has accepted no task yet, or its state cannot be read.
    """
    try:
        accepted = [state for state in run.states() if state.status == "accepted"]
        homes = [
            (run.resolve(state.bundle_home), state.quality)
            for state in accepted
            if state.bundle_home is not None
        ]
        tasks = [
            _task(home, quality_path=None if quality is None else run.resolve(quality))
            for home, quality in homes
        ]
    except SelfbenchError as exc:
        if isinstance(exc, EvalError):
            raise
        raise EvalError(f"{run.path}: cannot read the run: {exc.lines[0]}") from exc
    if not tasks:
        raise EvalError(f"{run.path}: the run has accepted no task yet")
    return _benchmark(tasks, run.path)


def _benchmark(found: list[BenchTask], named: Path) -> Benchmark:
    """The benchmark of `found`, sorted by task id; its id from their ids and digests.

    Raises:
        EvalError: there is no task, or a task id repeats.
    """
    tasks = sorted(found, key=lambda task: task.task_id)
    if not tasks:
        raise EvalError(f"{named}: no tasks")
    ids = [task.task_id for task in tasks]
    for task_id in ids:
        if ids.count(task_id) > 1:
            raise EvalError(f"{named}: task {task_id} is given more than once")
    lines = "".join(f"{task.task_id} {task.digest}\n" for task in tasks)
    return Benchmark(hashlib.sha256(lines.encode()).hexdigest(), tuple(tasks))


def _run_of(path: Path) -> RunDirectory | None:
    """The run a directory names: a run directory itself, or the `export/` folder in one."""
    for candidate in (path, path.parent if path.name == EXPORT_DIR else None):
        if candidate is not None and RunDirectory(candidate).is_run():
            return RunDirectory(candidate)
    return None


@contextmanager
def open_benchmark(path: Path, *, workspace: Path | None = None) -> Iterator[Benchmark]:
    """The benchmark at `path` (an export, a tasks directory or a run directory: see the module
    docstring); an export is verified and unpacked into a temporary directory that is removed
    afterwards.

    Raises:
        EvalError: `path` is missing, an archive does not verify, or a task is malformed.
    """
    if path.is_dir():
        run = _run_of(path)
        yield read_tasks_dir(path) if run is None else read_run_tasks(run)
        return
    if not path.is_file():
        raise EvalError(
            f"{path}: no such benchmark (an export archive, a tasks directory or a run directory)"
        )

    if workspace is None:  # in the scratch home: a killed eval's copy is swept by the next run
        with scratch_directory("selfbench-bench-") as scratch:
            yield _unpacked(path, scratch)
        return
    scratch = Path(tempfile.mkdtemp(prefix="selfbench-bench-", dir=workspace))
    try:
        yield _unpacked(path, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _unpacked(path: Path, scratch: Path) -> Benchmark:
    """The export at `path`, verified and unpacked into `scratch`.

    Raises:
        EvalError: it does not verify, or a task is malformed.
    """
    try:
        extract_export(path, out=scratch / "tasks")
    except SelfbenchError as exc:
        raise EvalError(f"{path}: the export does not verify: {exc.lines[0]}") from exc
    return read_tasks_dir(scratch / "tasks", named=path)
