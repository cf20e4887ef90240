"""An exported task proves its own contents: what it runs is what its definition compiles to.

The reader hands every member of a task archive to a `TaskProof`: the rendered files and the
two patches are kept (each bounded), each snapshot copy is hashed as it streams by, and the first
copy is also scanned (`SnapshotScan`). Members may come in any order, so the proof is judged
once the whole task has been read (`problem`):

1. the bundle manifest is of this compiler revision, and records both patches' digests;
2. both snapshot copies have the digest the manifest records (so they are one snapshot);
3. every script, Dockerfile, `task.toml`, `instruction.md`, the dependency-setup patch and the
   manifest are, byte for byte and mode for mode, what the renderers make of the review record's
   definition and the bundle's patches (the agent's allowed hosts taken from the `task.toml`
   being checked, as refresh takes them), and nothing rendered is missing or extra;
4. the snapshot is `git archive` of `baseCommit` (the commit its pax header records) and
   holds neither the gold patch's new content nor the held-out tests (`SnapshotRules`);
5. the snapshot is the base commit: the commit object the bundle carries has the id
   `baseCommit`, and the tree it names is the tree the snapshot's files (and the submodules
   the bundle lists) make (`bundle.base_commit`), so no file of it can be changed, added or
   left out, whichever files the patches touch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from selfbench._git_trees import tree_id
from selfbench.bundle import layout
from selfbench.bundle.base_commit import (
    GITLINK_MODE,
    BaseCommit,
    commit_id,
    commit_tree,
    parse_base_commit,
)
from selfbench.bundle.manifest import BundleManifest
from selfbench.bundle.render import BundleFile, render_bundle
from selfbench.bundle.render_toml import parse_allowed_hosts
from selfbench.bundle.snapshot import build_snapshot_rules
from selfbench.contract import TaskDefinition
from selfbench.errors import BundleError, GitError
from selfbench.export._snapshot import SnapshotScan
from selfbench.export._streams import BLOCK, Readable
from selfbench.patches import display_path

__all__ = ["KEPT_FILES", "TaskProof"]

KEPT_FILES = frozenset(set(layout.BUNDLE_PATHS) - set(layout.SNAPSHOT_PATHS) - {layout.BASE_COMMIT})
"""Every bundle file the renderers make; the proof keeps each one whole to compare it."""
PATCH_FILES = frozenset({layout.TEST_PATCH, layout.GOLD_PATCH, *layout.OPTIONAL_PATHS})
_DIFFERS = "differs from what the review record's definition and the bundle's patches compile to"


class _Tee:
    """Reads a snapshot member through, hashing it and feeding the scan (if any)."""

    def __init__(self, source: Readable, scan: SnapshotScan | None) -> None:
        self._source = source
        self._scan = scan
        self.sha256 = hashlib.sha256()

    def read(self, size: int = -1, /) -> bytes:
        data = self._source.read(size)
        self.sha256.update(data)
        if self._scan is not None:
            self._scan.feed(data)
        return data

    def drain(self) -> None:
        """Read (hash and scan) whatever the sink left unread."""
        while self.read(BLOCK):
            pass
        if self._scan is not None:
            self._scan.finish()


@dataclass(frozen=True, slots=True)
class _Problem:
    relative: str
    message: str


class TaskProof:
    """What one task archive holds, gathered as it streams, and judged at its end."""

    def __init__(self, *, unpack_limit: int) -> None:
        self.files: dict[str, tuple[bytes, int]] = {}
        """Each kept file's bytes and its mode in the archive."""
        self.snapshots: dict[str, str] = {}
        """Each snapshot copy's SHA-256."""
        self.scan: SnapshotScan | None = None
        self.scanned = ""
        """The snapshot copy scanned (the first read); the other must have its digest."""
        self.base_commit: bytes | None = None
        """The bytes of `layout.BASE_COMMIT`."""
        self._unpack_limit = unpack_limit

    def keep(self, relative: str, data: bytes, mode: int) -> None:
        """Keep a rendered file (or a patch) to compare once the task is read."""
        self.files[relative] = (data, mode & 0o7777)

    def snapshot(self, relative: str, content: Readable) -> _Tee:
        """A reader for a snapshot copy that hashes it; the first copy is scanned too."""
        scan = None
        if self.scan is None:
            scan = self.scan = SnapshotScan(unpack_limit=self._unpack_limit)
            self.scanned = relative
        return _Tee(content, scan)

    def snapshot_done(self, relative: str, tee: _Tee) -> None:
        """Record a snapshot copy's digest once it has been read to its end."""
        self.snapshots[relative] = tee.sha256.hexdigest()

    def problem(
        self, definition: TaskDefinition, manifest: BundleManifest
    ) -> tuple[str, str] | None:
        """The first member that disproves the task, with why; None when it is proven."""
        found = (
            self._revision(manifest)
            or self._patch_digests(manifest)
            or self._snapshot_digests(manifest)
            or self._rendered(definition, manifest)
            or self._snapshot_content(definition)
        )
        return None if found is None else (found.relative, found.message)

    def _revision(self, manifest: BundleManifest) -> _Problem | None:
        if manifest.compiler_revision == layout.COMPILER_REVISION:
            return None
        return _Problem(
            layout.MANIFEST,
            f"compiled by compiler revision {manifest.compiler_revision}; this selfbench proves "
            f"revision {layout.COMPILER_REVISION} (export it again with this version)",
        )

    def _patch_digests(self, manifest: BundleManifest) -> _Problem | None:
        for relative, recorded in (
            (layout.TEST_PATCH, manifest.test_patch_sha256),
            (layout.GOLD_PATCH, manifest.gold_patch_sha256),
        ):
            digest = hashlib.sha256(self.files[relative][0]).hexdigest()
            if digest != recorded:
                return _Problem(
                    relative, f"sha256 {digest} does not match {layout.MANIFEST} ({recorded})"
                )
        return None

    def _snapshot_digests(self, manifest: BundleManifest) -> _Problem | None:
        for relative in layout.SNAPSHOT_PATHS:
            digest = self.snapshots[relative]
            if digest != manifest.snapshot_sha256:
                recorded = manifest.snapshot_sha256
                return _Problem(
                    relative, f"sha256 {digest} does not match {layout.MANIFEST} ({recorded})"
                )
        return None

    def _rendered(self, definition: TaskDefinition, manifest: BundleManifest) -> _Problem | None:
        hosts = parse_allowed_hosts(self.files[layout.TASK_TOML][0])
        if hosts is None:
            return _Problem(layout.TASK_TOML, "cannot read [agent] allowed_hosts")
        rendered = render_bundle(
            definition,
            self.files[layout.TEST_PATCH][0],
            self.files[layout.GOLD_PATCH][0],
            allowed_hosts=hosts,
            snapshot_sha256=manifest.snapshot_sha256,
        )
        for item in rendered:
            problem = self._compare(item)
            if problem is not None:
                return problem
        extra = sorted(self.files.keys() - {item.path for item in rendered})
        if extra:
            return _Problem(extra[0], "not part of the bundle its definition compiles to")
        return None

    def _compare(self, item: BundleFile) -> _Problem | None:
        kept = self.files.get(item.path)
        if kept is None:
            return _Problem(item.path, "missing: the bundle its definition compiles to has it")
        data, mode = kept
        if data != item.content:
            return _Problem(item.path, _DIFFERS)
        if mode != item.mode:
            return _Problem(item.path, f"mode {mode:04o} is not the compiled {item.mode:04o}")
        return None

    def _snapshot_content(self, definition: TaskDefinition) -> _Problem | None:
        scan = self.scan
        if scan is None:  # unreachable: both snapshots are required files
            return _Problem(layout.ENV_SNAPSHOT, "missing")
        relative = self.scanned
        if scan.problem is not None:
            return _Problem(relative, scan.problem)
        base = definition.baseCommit
        if scan.commit is None:
            return _Problem(relative, f"records no commit; the snapshot of baseCommit {base} does")
        if scan.commit != base.lower():  # git archive records the id in lowercase
            return _Problem(relative, f"the snapshot of commit {scan.commit}, not of {base}")
        rules = build_snapshot_rules(
            self.files[layout.TEST_PATCH][0], self.files[layout.GOLD_PATCH][0]
        )
        problem = rules.problem(scan.files)
        if problem is not None:
            return _Problem(relative, problem)
        return self._base_tree(base, scan, relative)

    def _carried(self, base: str) -> tuple[BaseCommit, str] | _Problem:
        """The commit object the bundle carries and the tree it names; its id must be `base`."""
        try:
            carried = parse_base_commit(self.base_commit or b"", source=layout.BASE_COMMIT)
        except BundleError as exc:
            return _Problem(layout.BASE_COMMIT, str(exc).removeprefix(f"{layout.BASE_COMMIT}: "))
        found = commit_id(carried.commit_object)
        if found != base.lower():
            return _Problem(layout.BASE_COMMIT, f"holds commit {found}, not baseCommit {base}")
        tree = commit_tree(carried.commit_object)
        if tree is None:
            return _Problem(layout.BASE_COMMIT, "its commit object names no tree")
        return carried, tree

    def _base_tree(self, base: str, scan: SnapshotScan, relative: str) -> _Problem | None:
        """The snapshot's files make the tree of the commit object the bundle carries, whose
        id is `base`."""
        found = self._carried(base)
        if isinstance(found, _Problem):
            return found
        carried, tree = found
        problem = _submodules_problem(scan, carried)
        if problem is not None:
            return _Problem(relative, problem)
        entries = [(mode, oid, path) for path, (mode, oid) in scan.entries.items()]
        entries += [(GITLINK_MODE, oid, path) for path, oid in carried.submodules.items()]
        try:
            made = tree_id(entries)
        except GitError as exc:
            return _Problem(relative, f"its files make no Git tree ({exc})")
        if made == tree:
            return None
        return _Problem(
            relative,
            f"is not the tree of baseCommit {base}: its files make tree {made}, "
            f"the commit names {tree}",
        )


def _submodules_problem(scan: SnapshotScan, carried: BaseCommit) -> str | None:
    """Its empty directories are exactly the submodules the bundle lists (git archive writes
    each as one), or why not."""
    parents = {
        "/".join(parts[:end])
        for parts in (path.split("/") for path in (*scan.entries, *scan.directories))
        for end in range(1, len(parts))
    }
    empty = scan.directories - parents
    listed = set(carried.submodules)
    for path in sorted(empty - listed):
        return f"holds an empty directory {display_path(path)}, not a submodule of its tree"
    for path in sorted(listed - empty):
        return f"lacks submodule {display_path(path)} ({layout.BASE_COMMIT} lists it)"
    return None
