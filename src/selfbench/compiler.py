"""Compile an authored task into a Harbor bundle, and refresh one after a repair (SPEC §5).

Rendering is pure (`selfbench.bundle`); this module does the I/O around it: the checks in the
spec's order, one `git archive` snapshot hard-linked into both build contexts, and an atomic
swap of the finished tree into place.
"""

from __future__ import annotations

import os
from pathlib import Path

from selfbench._fs import atomic_directory, read_bytes, write_atomic
from selfbench._git import git, scratch_index
from selfbench._git_trees import archive_plain, read_base_commit
from selfbench.artifacts.compiled import BUNDLE_DIR, LocatedTask, locate_task, read_bundle_manifest
from selfbench.artifacts.draft_record import DRAFT_FILE
from selfbench.artifacts.task_dir import (
    DEFINITION_FILE,
    GOLD_PATCH_FILE,
    TEST_PATCH_FILE,
    AuthoredTask,
    read_authored_task,
    read_definition,
)
from selfbench.bundle import layout
from selfbench.bundle.base_commit import render_base_commit
from selfbench.bundle.render import BundleFile, render_bundle, render_refresh
from selfbench.bundle.render_toml import parse_allowed_hosts
from selfbench.contract import TaskDefinition
from selfbench.errors import CompileError, GitError
from selfbench.task import judge_task

__all__ = ["check_authored_task", "compile_home", "compile_task", "refresh_bundle"]


def check_authored_task(task: AuthoredTask) -> None:
    """The compile checks after parsing, in the spec's order; the first failure raises.

    They are `judge_task`'s input blockers, the very ones submit's preflight reports.

    Raises:
        CompileError: with the spec's message for the first check that fails.
    """
    blockers = judge_task(task.loaded, task.test_patch, task.gold_patch).input_blockers
    if blockers:
        raise CompileError(blockers[0])


def _check_base_commit(repo: Path, sha: str) -> None:
    try:
        git(repo, "rev-parse", "--git-dir")
    except GitError:
        raise CompileError(f"not a git repository: {repo}") from None
    try:
        git(repo, "cat-file", "-e", f"{sha}^{{commit}}")
    except GitError:
        raise CompileError(f"baseCommit {sha} is not a commit in {repo}") from None


def _check_base_applies(task: AuthoredTask, repo: Path) -> None:
    """Both patches apply at the base (their shape, a `--no-prefix` patch included, is
    `judge_task`'s).

    The base may be a merge commit: in a history of merged pull requests a change's base (its
    merge's first parent) often is one. When a patch does not apply at a merge commit, the
    message says so, since naming the pull request's own merge is the usual mistake.

    Each patch is checked with `git apply --cached --check` against a private index read from
    the base commit: the repository's own index, work tree and checkout are never touched.

    Raises:
        CompileError: a patch does not apply at the base.
    """
    sha = task.definition.baseCommit
    parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()
    hint = (
        "; it is a merge commit: name the parent the change was made on" if len(parents) > 2 else ""
    )
    with scratch_index(repo, sha) as env:
        for name, patch in ((TEST_PATCH_FILE, task.test_patch), (GOLD_PATCH_FILE, task.gold_patch)):
            try:
                git(repo, *_APPLY_CHECK, stdin=patch, env=env)
            except GitError as exc:
                why = str(exc).removeprefix("git apply failed: ").removeprefix("error: ")
                raise CompileError(
                    f"{name} does not apply at baseCommit {sha}: {why}{hint}"
                ) from exc


_APPLY_CHECK = ("apply", "--cached", "--check", "--binary", "--whitespace=nowarn", "-")


def _write_files(root: Path, files: tuple[BundleFile, ...]) -> None:
    for item in files:
        path = root / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item.content)
        path.chmod(item.mode)


def _write_snapshot(root: Path, repo: Path, sha: str) -> str:
    """One `git archive` of the base commit, stored once and hard-linked into both contexts,
    each file exactly its blob (no `.gitattributes` applied), and beside them what proves it
    is that commit (`bundle.base_commit`).

    Returns the snapshot's SHA-256, for the manifest.
    """
    first = root / layout.ENV_SNAPSHOT
    second = root / layout.TESTS_SNAPSHOT
    first.parent.mkdir(parents=True, exist_ok=True)
    second.parent.mkdir(parents=True, exist_ok=True)
    digest = archive_plain(repo, sha, first)
    first.chmod(0o644)
    (root / layout.BASE_COMMIT).write_bytes(render_base_commit(read_base_commit(repo, sha)))
    os.link(first, second)
    return digest


def _check_output(target: Path) -> None:
    """An existing output must be a bundle directory, which a new one then replaces atomically."""
    if os.path.lexists(target) and (not target.is_dir() or target.is_symlink()):
        raise CompileError(f"output exists and is not a bundle directory: {target}")


def compile_task(
    task_dir: Path,
    *,
    repo: Path,
    out: Path | None = None,
    allowed_hosts: tuple[str, ...] | None = None,
) -> AuthoredTask:
    """Compile an authored task directory into a Harbor bundle at `out`.

    Without `out` the bundle is `task_dir/harbor-task/`, beside the task's `definition.json`,
    where `validate` and `export` find both.

    Raises:
        CompileError: a check failed (nothing is written).
        TaskFileError: a file of the task cannot be read.
        JsonError: the definition is not well-formed JSON.
        DefinitionError: the definition is invalid.
    """
    task = read_authored_task(task_dir)
    check_authored_task(task)
    _check_base_commit(repo, task.definition.baseCommit)
    _check_base_applies(task, repo)
    if out is None:
        out = task_dir / BUNDLE_DIR
    _check_output(out)
    with atomic_directory(out, replace=True) as staging:
        snapshot_sha256 = _write_snapshot(staging, repo, task.definition.baseCommit)
        files = render_bundle(
            task.definition,
            task.test_patch,
            task.gold_patch,
            allowed_hosts=allowed_hosts or layout.DEFAULT_ALLOWED_HOSTS,
            snapshot_sha256=snapshot_sha256,
        )
        _write_files(staging, files)
    return task


def compile_home(
    task_dir: Path,
    *,
    repo: Path,
    home: Path,
    allowed_hosts: tuple[str, ...] | None = None,
    draft_record: Path | None = None,
) -> LocatedTask:
    """Compile a task into `home/harbor-task/` and copy its `definition.json` beside it, and
    its draft's record (`draft_record`, default `task_dir/draft.json` when there is one), which
    validation reads as evidence (`validate.evidence`).

    `home` may be `task_dir` itself: the definition is then already in place.

    This is the one writer of a compiled task's home; the home is read back (`locate_task`).

    Raises:
        CompileError: a check failed.
        TaskFileError: a file of the task cannot be read.
        JsonError: the definition is not well-formed JSON.
        DefinitionError: the definition is invalid.
        BundleError: the home does not read back as the task compiled.
    """
    record = draft_record or task_dir / DRAFT_FILE
    evidence = None
    if record.is_file() and record != home / DRAFT_FILE:  # read first: a refusal writes nothing
        evidence = read_bytes(record, error=CompileError)
    compile_task(task_dir, repo=repo, out=home / BUNDLE_DIR, allowed_hosts=allowed_hosts)
    if home != task_dir:
        definition = read_bytes(task_dir / DEFINITION_FILE, error=CompileError)
        write_atomic(home / DEFINITION_FILE, definition)
    if evidence is not None:
        write_atomic(home / DRAFT_FILE, evidence)
    return locate_task(home)


def _current_allowed_hosts(bundle: Path) -> tuple[str, ...]:
    path = bundle / layout.TASK_TOML
    hosts = parse_allowed_hosts(read_bytes(path, error=CompileError))
    if hosts is None:
        raise CompileError(f"{path}: cannot read [agent] allowed_hosts")
    return hosts


def refresh_bundle(
    bundle: Path,
    *,
    definition: Path,
    allowed_hosts: tuple[str, ...] | None = None,
) -> TaskDefinition:
    """Re-render a bundle from a new definition and the bundle's own patches, atomically.

    Raises:
        CompileError: the bundle is unreadable or belongs to another task.
        BundleError: its manifest cannot be read or is malformed.
        TaskFileError: the definition cannot be read.
        JsonError: the definition is not well-formed JSON.
        DefinitionError: the definition is invalid.
    """
    loaded = read_definition(definition)
    old = read_bundle_manifest(bundle)
    old_id = old.task_id
    if old_id != loaded.definition.taskId:
        raise CompileError(f"bundle task {old_id} does not match {loaded.definition.taskId}")
    test_patch = read_bytes(bundle / layout.TEST_PATCH, error=CompileError)
    gold_patch = read_bytes(bundle / layout.GOLD_PATCH, error=CompileError)
    hosts = allowed_hosts or _current_allowed_hosts(bundle)
    rendered = render_refresh(
        loaded.definition,
        test_patch,
        gold_patch,
        allowed_hosts=hosts,
        snapshot_sha256=old.snapshot_sha256,
    )
    fresh = tuple(item for item in rendered if item.path in layout.REFRESH_PATHS)
    _check_output(bundle)
    with atomic_directory(bundle, replace=True) as staging:
        _link_tree(bundle, staging, skip=layout.REFRESH_PATHS)
        _write_files(staging, fresh)
    return loaded.definition


def _link_tree(source: Path, target: Path, *, skip: frozenset[str]) -> None:
    """Hard-link every file of `source` into `target` except the `skip` paths."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source).as_posix()
        if relative in skip or (path.is_dir() and not path.is_symlink()):
            continue
        if not path.is_file() or path.is_symlink():
            raise CompileError(f"bundle holds something other than files: {relative}")
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, destination, follow_symlinks=False)
