"""Collect an authoring run's one task: compile, pack, copy out, and store it (SPEC §6)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._fs import link_refused, read_bytes
from selfbench._json import loads_strict
from selfbench.artifacts.compiled import BUNDLE_DIR
from selfbench.artifacts.task_dir import DEFINITION_FILE, read_authored_task
from selfbench.compiler import compile_home
from selfbench.errors import CompileError, JsonError, translating
from selfbench.mine import MineError, find_candidate
from selfbench.pack import pack_tree
from selfbench.store import ArtifactRef, LocalArtifactStore, authoring_key

__all__ = [
    "Candidate",
    "CollectRejection",
    "CollectResult",
    "StoreTarget",
    "candidate_mismatch",
    "collect_authoring",
    "find_authored_task",
    "read_candidate",
]

MISMATCH = "authored task does not match its assigned PR, base commit, and difficulty"


@dataclass(frozen=True, slots=True)
class CollectRejection:
    """Why collect rejected the run (the task is not the assigned candidate's); nothing written."""

    reason: str


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
    data = read_bytes(path, error=CompileError)
    try:
        value: Any = loads_strict(data, source=str(path))
    except JsonError:
        if data.strip().count(b"\n") == 0:
            raise
        return _mined_candidate(path, candidate_id)
    # A mined candidate (it has an `id`), alone in its file, is still read with mining's rules.
    if isinstance(value, dict) and "id" in value:
        return _mined_candidate(path, candidate_id)
    fields = ("sourcePr", "baseCommit", "difficulty")
    if not isinstance(value, dict) or any(field not in value for field in fields):
        raise CompileError(f"{path}: a candidate needs sourcePr, baseCommit and difficulty")
    return Candidate(value["sourcePr"], str(value["baseCommit"]), str(value["difficulty"]))


def _mined_candidate(path: Path, candidate_id: str | None) -> Candidate:

    mined = find_candidate(path, candidate_id)
    if mined.sourcePr is None:
        raise MineError(f"{path}: candidate {mined.id} has no pull request number to author")
    return Candidate(mined.sourcePr, mined.baseCommit, mined.difficulty)


def find_authored_task(root: Path) -> Path:
    """The one task directory an authoring run produced.

    The author wrote the root: a symbolic link in it is refused, never followed (not even to
    see whether it names a directory), so the task read is the directory the author made.

    Raises:
        CompileError: the root holds a link, or not exactly one task directory.
    """
    with translating(CompileError, f"read {root}"):
        entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
        for path in entries:
            if path.is_symlink():
                raise CompileError(link_refused(path))
        found = [p for p in entries if p.is_dir()]
    if len(found) != 1:
        raise CompileError(f"authoring must produce exactly one task; found {len(found)}")
    return found[0]


def candidate_mismatch(candidate: Candidate, task_dir: Path) -> CollectRejection | None:
    """The rejection of an authored task that is not the assigned candidate's; None if it is."""
    definition = read_authored_task(task_dir).definition
    same = (
        definition.sourcePr == candidate.source_pr
        and definition.baseCommit.lower() == candidate.base_commit.lower()
        and definition.difficulty == candidate.difficulty
    )
    return None if same else CollectRejection(MISMATCH)


def collect_authoring(
    root: Path,
    *,
    repo: Path,
    out: Path,
    candidate: Candidate | None = None,
    store: StoreTarget | None = None,
    allowed_hosts: tuple[str, ...] | None = None,
) -> CollectResult | CollectRejection:
    """Compile the run's one task into `out/harbor-task/`, pack `out/task.tar.gz`, copy out
    `out/definition.json`, and store the accepted result when a store is given. A task that is
    not the `candidate`'s is a rejection, returned, and nothing is written.

    Raises:
        CompileError: no single task, or it does not compile.
        StoreError: the store refused a write.
    """
    task_dir = find_authored_task(root)
    mismatch = None if candidate is None else candidate_mismatch(candidate, task_dir)
    if mismatch is not None:
        return mismatch
    located = compile_home(task_dir, repo=repo, home=out, allowed_hosts=allowed_hosts)
    archive = out / "task.tar.gz"
    pack_tree(located.bundle, archive, prefix=BUNDLE_DIR)
    definition = located.definition_path
    stored: tuple[ArtifactRef, ...] = ()
    if store is not None:
        stored = (
            store.store.put_file(
                authoring_key(store.run_id, store.candidate_id, DEFINITION_FILE),
                definition,
                content_type="application/json",
            ),
            store.store.put_file(
                authoring_key(store.run_id, store.candidate_id, f"{BUNDLE_DIR}.tar.gz"),
                archive,
                content_type="application/gzip",
            ),
        )
    return CollectResult(located.bundle, archive, definition, stored)
