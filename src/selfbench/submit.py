"""`submit_task`, the author's one tool call (SPEC §2): validate, preflight, write atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from selfbench._fs import rename_no_replace
from selfbench._json import dumps_pretty
from selfbench._paths import escaping_task_paths, unsafe_patch_path
from selfbench.audit import audit
from selfbench.contract import harbor_name_problem, parse_definition, parse_submit_arguments
from selfbench.errors import DefinitionError, PatchError, PreflightError, SubmitError
from selfbench.patches import display_path, is_git_patch, parse_patch

__all__ = [
    "INCOMPLETE",
    "OUTPUT_ENV",
    "preflight_blockers",
    "resolve_output_root",
    "submit_files",
    "submit_task",
]

OUTPUT_ENV = "SELFBENCH_TASK_OUTPUT"
INCOMPLETE = "submit_task received an incomplete task"
NOT_CONFIGURED = f"{OUTPUT_ENV} is not configured"


def resolve_output_root(output_root: str | os.PathLike[str] | None = None) -> Path:
    """The authoring output root: the argument, else `$SELFBENCH_TASK_OUTPUT`.

    Raises:
        SubmitError: neither names a directory.
    """
    root = os.fspath(output_root) if output_root is not None else os.environ.get(OUTPUT_ENV, "")
    if not root:
        raise SubmitError(NOT_CONFIGURED)
    return Path(root)


def _task_id(definition: Any) -> str:
    if not isinstance(definition, Mapping):
        raise SubmitError(INCOMPLETE)
    task_id = definition.get("taskId")
    if task_id is None or task_id == "":
        raise SubmitError(INCOMPLETE)
    return str(task_id)


def submit_task(
    arguments: Any,
    *,
    output_root: str | os.PathLike[str] | None = None,
    preflight: bool = True,
) -> str:
    """Write one authored task from the tool's argument object; return `Submitted <taskId>.`.

    Raises:
        SubmitError: the output root is not configured, the task is incomplete, already exists,
            or (a `PreflightError`) would be rejected later.
        DefinitionError: the arguments fail submission-mode validation.
    """
    root = resolve_output_root(output_root)
    if not isinstance(arguments, Mapping):
        raise SubmitError(INCOMPLETE)
    _task_id(arguments.get("definition"))
    test_patch, gold_patch = arguments.get("testPatch"), arguments.get("goldPatch")
    if not isinstance(test_patch, str) or not isinstance(gold_patch, str):
        raise SubmitError(INCOMPLETE)
    parse_submit_arguments(dict(arguments))
    return _submit(
        root,
        arguments["definition"],
        test_patch.encode("utf-8"),
        gold_patch.encode("utf-8"),
        preflight=preflight,
    )


def submit_files(
    definition: Any,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    output_root: str | os.PathLike[str] | None = None,
    preflight: bool = True,
) -> str:
    """`submit_task` for patches held as bytes (the CLI's files), byte-exact.

    Raises:
        SubmitError: as `submit_task`.
        DefinitionError: as `submit_task`.
    """
    root = resolve_output_root(output_root)
    _task_id(definition)
    parse_definition(definition, mode="submission", prefix="definition")
    return _submit(root, definition, test_patch, gold_patch, preflight=preflight)


def _submit(
    root: Path, definition: dict[str, Any], test_patch: bytes, gold_patch: bytes, *, preflight: bool
) -> str:
    task_id = str(definition["taskId"])
    if preflight:
        blockers = preflight_blockers(definition, test_patch, gold_patch)
        if blockers:
            raise PreflightError(task_id, blockers)
    _write_exclusive(
        root,
        task_id,
        {
            "definition.json": dumps_pretty(definition).encode("utf-8"),
            "test.patch": test_patch,
            "gold.patch": gold_patch,
        },
    )
    return f"Submitted {task_id}."


def _patch_blockers(name: str, label: str, data: bytes) -> list[str]:
    if not is_git_patch(data):
        return [f"{name} is not a Git patch"]
    try:
        patch = parse_patch(data)
    except PatchError as exc:
        return [f"{name}: {exc}"]
    blockers = [
        f"{label} patch path escapes repository: {display_path(path)}"
        for path in patch.paths
        if unsafe_patch_path(path)
    ]
    if name == "test.patch" and not patch.paths:
        blockers.insert(0, "test.patch changes no files")
    return blockers


def preflight_blockers(
    definition: dict[str, Any], test_patch: bytes, gold_patch: bytes
) -> tuple[str, ...]:
    """Everything that would reject this task after submission, found now; empty when clean.

    A definition that fails persisted validation is reported issue by issue, and the patches
    are still judged, so one call lists every blocker; only the audit needs a valid definition.
    """
    test_blockers = _patch_blockers("test.patch", "test", test_patch)
    gold_blockers = _patch_blockers("gold.patch", "gold", gold_patch)
    try:
        loaded = parse_definition(definition, mode="persisted", prefix="definition")
    except DefinitionError as exc:
        return (*(str(issue) for issue in exc.issues), *test_blockers, *gold_blockers)
    task = loaded.definition
    name_problem = harbor_name_problem(task.taskId)
    escaping = [
        *([name_problem] if name_problem else []),
        *(
            f"task path escapes repository: {path}"
            for path in escaping_task_paths(task.workdir, task.testPaths)
        ),
    ]
    report = audit(
        task, parse_patch(gold_patch, lenient=True), parse_patch(test_patch, lenient=True)
    )
    return (*escaping, *test_blockers, *gold_blockers, *report.blockers)


def _write_exclusive(root: Path, task_id: str, files: dict[str, bytes]) -> None:
    """Write the task's files into a private temp dir under root, then rename it into place.

    Raises:
        SubmitError: the root is missing, the task exists, or the disk refused a write.
    """
    target = root / task_id
    if not root.is_dir():
        raise SubmitError(f"{OUTPUT_ENV} directory does not exist: {root}")
    if os.path.lexists(target):
        raise SubmitError(f"task {task_id} already exists: {target}")
    try:
        _stage_and_rename(root, target, files)
    except FileExistsError:
        raise SubmitError(f"task {task_id} already exists: {target}") from None
    except OSError as exc:  # a full disk or a read-only root is an input problem, not a bug
        raise SubmitError(f"cannot write task {task_id}: {exc.strerror or exc}") from None


def _stage_and_rename(root: Path, target: Path, files: dict[str, bytes]) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=root))
    try:
        for name, content in files.items():
            with (staging / name).open("xb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
        staging.chmod(0o755)
        rename_no_replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
