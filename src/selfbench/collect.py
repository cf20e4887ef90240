"""Collect an authoring run's one task: compile, pack, copy out, and store it (SPEC §6)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._fs import write_atomic
from selfbench._json import JsonError, loads_strict
from selfbench.compiler import CompileError, compile_task, read_authored_task
from selfbench.errors import EXIT_REJECTED, SelfbenchError
from selfbench.pack import pack_tree
from selfbench.store import ArtifactRef, LocalArtifactStore, authoring_key

__all__ = [
    "Candidate",
    "CandidateMismatchError",
    "CollectResult",
    "StoreTarget",
    "collect_authoring",
    "find_authored_task",
    "read_candidate",
]

MISMATCH = "authored task does not match its assigned PR, base commit, and difficulty"


class CandidateMismatchError(SelfbenchError):
    """The authored task is not the one the candidate assigned; the candidate is rejected."""

    exit_code = EXIT_REJECTED


@dataclass(frozen=True, slots=True)
class Candidate:
    """The assignment an author worked from."""

    source_pr: int
    base_commit: str
    difficulty: str


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """Where accepted authoring results go in an artifact store."""

    store: LocalArtifactStore
    run_id: str
    candidate_id: str


@dataclass(frozen=True, slots=True)
class CollectResult:
    """What collect produced."""

    bundle: Path
    archive: Path
    definition: Path
    stored: tuple[ArtifactRef, ...]


def read_candidate(path: Path, candidate_id: str | None = None) -> Candidate:
    """Read `{"sourcePr", "baseCommit", "difficulty"}` from a candidate JSON file, or the
    candidate `candidate_id` of a `selfbench mine` candidates.jsonl.

    Raises:
        CompileError: the file is unreadable or lacks one of the three fields.
        MineError: a candidates.jsonl without that candidate, or one with no pull request.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CompileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        value: Any = loads_strict(data, source=str(path))
    except JsonError:
        if data.strip().count(b"\n") == 0:
            raise
        return _mined_candidate(path, candidate_id)
    fields = ("sourcePr", "baseCommit", "difficulty")
    if not isinstance(value, dict) or any(field not in value for field in fields):
        raise CompileError(f"{path}: a candidate needs sourcePr, baseCommit and difficulty")
    return Candidate(value["sourcePr"], str(value["baseCommit"]), str(value["difficulty"]))


def _mined_candidate(path: Path, candidate_id: str | None) -> Candidate:
    from selfbench.mine import MineError, find_candidate  # noqa: PLC0415 - only for mined files

    mined = find_candidate(path, candidate_id)
    if mined.sourcePr is None:
        raise MineError(f"{path}: candidate {mined.id} has no pull request number to author")
    return Candidate(mined.sourcePr, mined.baseCommit, mined.difficulty)


def find_authored_task(root: Path) -> Path:
    """The one task directory an authoring run produced.

    Raises:
        CompileError: the root does not hold exactly one task directory.
    """
    try:
        found = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError as exc:
        raise CompileError(f"cannot read {root}: {exc.strerror or exc}") from None
    if len(found) != 1:
        raise CompileError(f"authoring must produce exactly one task; found {len(found)}")
    return found[0]


def _check_candidate(candidate: Candidate, task_dir: Path) -> None:
    definition = read_authored_task(task_dir).definition
    same = (
        definition.sourcePr == candidate.source_pr
        and definition.baseCommit.lower() == candidate.base_commit.lower()
        and definition.difficulty == candidate.difficulty
    )
    if not same:
        raise CandidateMismatchError(MISMATCH)


def collect_authoring(
    root: Path,
    *,
    repo: Path,
    out: Path,
    candidate: Candidate | None = None,
    store: StoreTarget | None = None,
    allowed_hosts: tuple[str, ...] | None = None,
) -> CollectResult:
    """Compile the run's one task into `out/harbor-task/`, pack `out/task.tar.gz`, copy out
    `out/definition.json`, and store the accepted result when a store is given.

    Raises:
        CompileError: no single task, or it does not compile.
        CandidateMismatchError: the task is not the assigned candidate's.
        StoreError: the store refused a write.
    """
    task_dir = find_authored_task(root)
    if candidate is not None:
        _check_candidate(candidate, task_dir)
    bundle = out / "harbor-task"
    compile_task(task_dir, repo=repo, out=bundle, allowed_hosts=allowed_hosts)
    archive = out / "task.tar.gz"
    pack_tree(bundle, archive, prefix="harbor-task")
    definition = out / "definition.json"
    write_atomic(definition, (task_dir / "definition.json").read_bytes())
    stored: tuple[ArtifactRef, ...] = ()
    if store is not None:
        stored = (
            store.store.put_file(
                authoring_key(store.run_id, store.candidate_id, "definition.json"),
                definition,
                content_type="application/json",
            ),
            store.store.put_file(
                authoring_key(store.run_id, store.candidate_id, "harbor-task.tar.gz"),
                archive,
                content_type="application/gzip",
            ),
        )
    return CollectResult(bundle, archive, definition, stored)
