"""`submit_task`, the author's one tool call (SPEC §2): validate, preflight, write atomically.

Also its dry run, `check_task` (the MCP tool, and `selfbench check` given patches): the same
validation and preflight, through the same judge (`selfbench.task.judge_task`), writing nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from selfbench._fs import atomic_directory
from selfbench._json import JsonObject, loads_strict
from selfbench.artifacts.task_dir import render_task_files
from selfbench.contract import Mode, check_definition, parse_definition, parse_submit_arguments
from selfbench.errors import (
    DefinitionError,
    Issue,
    JsonError,
    PreflightError,
    SelfbenchError,
    SubmitError,
    translating,
)
from selfbench.task import TaskVerdict, judge_task

__all__ = [
    "INCOMPLETE",
    "OUTPUT_ENV",
    "Submission",
    "TaskCheck",
    "check_definition_files",
    "check_task",
    "preflight_blockers",
    "resolve_output_root",
    "submit_files",
    "submit_task",
    "write_submission",
    "write_submission_files",
]

OUTPUT_ENV = "SELFBENCH_TASK_OUTPUT"
INCOMPLETE = "submit_task received an incomplete task"
NOT_CONFIGURED = f"{OUTPUT_ENV} is not configured"
_PREFLIGHT_OFF = "not blocking (preflight is off): "


class Submission(NamedTuple):
    """A written task: its id, and the warnings its preflight accepted (none without one)."""

    task_id: str
    warnings: tuple[str, ...]

    @property
    def message(self) -> str:
        """The tool's result text, `Submitted <taskId>.`."""
        return f"Submitted {self.task_id}."


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
        SubmitError: as `write_submission`.
        DefinitionError: as `write_submission`.
    """
    return write_submission(arguments, output_root=output_root, preflight=preflight).message


def write_submission(
    arguments: Any,
    *,
    output_root: str | os.PathLike[str] | None = None,
    preflight: bool = True,
) -> Submission:
    """`submit_task`, returning the written task and the warnings its preflight accepted.

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
    return write_submission_files(
        definition, test_patch, gold_patch, output_root=output_root, preflight=preflight
    ).message


def write_submission_files(
    definition: Any,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    output_root: str | os.PathLike[str] | None = None,
    preflight: bool = True,
) -> Submission:
    """`submit_files`, returning the written task and the warnings its preflight accepted.

    Raises:
        SubmitError: as `submit_task`.
        DefinitionError: as `submit_task`.
    """
    root = resolve_output_root(output_root)
    _task_id(definition)
    parse_definition(definition, mode="submission", prefix="definition")
    return _submit(root, definition, test_patch, gold_patch, preflight=preflight)


def _submit(
    root: Path,
    definition: Mapping[str, object],
    test_patch: bytes,
    gold_patch: bytes,
    *,
    preflight: bool,
) -> Submission:
    task_id = str(definition["taskId"])
    warnings: tuple[str, ...] = ()
    if preflight:
        verdict = judge_task(definition, test_patch, gold_patch)
        if verdict.blockers:
            raise PreflightError(task_id, verdict.blockers)
        warnings = verdict.warnings
    _write_exclusive(root, task_id, render_task_files(definition, test_patch, gold_patch))
    return Submission(task_id, warnings)


def preflight_blockers(
    definition: Mapping[str, object], test_patch: bytes, gold_patch: bytes
) -> tuple[str, ...]:
    """Everything that would reject this task after submission, found now; empty when clean.

    A definition that fails persisted validation is reported issue by issue, and the patches
    are still judged, so one call lists every blocker; only the audit needs a valid definition.
    """
    return judge_task(definition, test_patch, gold_patch).blockers


# --- the dry run -------------------------------------------------------------------------------


class TaskCheck(NamedTuple):
    """What `check_task` found: accepted exactly when there are no issues and no blockers."""

    task_id: str | None
    issues: tuple[Issue, ...]
    blockers: tuple[str, ...]
    warnings: tuple[str, ...]
    metrics: dict[str, int] | None

    @property
    def accepted(self) -> bool:
        """True when `submit_task` with the same arguments would write the task."""
        return not self.issues and not self.blockers

    def to_json(self) -> JsonObject:
        """The report as the tool's structured result shapes it."""
        return {
            "taskId": self.task_id,
            "accepted": self.accepted,
            "issues": [{"path": issue.path, "message": issue.message} for issue in self.issues],
            "blockers": list(self.blockers),
            "warnings": list(self.warnings),
            "metrics": self.metrics,
        }

    def to_check_json(self) -> JsonObject:
        """The report as `selfbench check --json` shapes it when given the patches."""
        found = self.to_json()
        return {"valid": self.accepted} | {
            key: found[key] for key in ("issues", "blockers", "warnings")
        }

    def to_text(self) -> str:
        """One line per finding, for an agent reading the tool's text."""
        name = self.task_id or "the task"
        head = f"{name} would be accepted." if self.accepted else f"{name} would be refused:"
        lines = [head]
        lines.extend(f"- {issue}" for issue in self.issues)
        lines.extend(f"- {blocker}" for blocker in self.blockers)
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        return "\n".join(lines)


def _argument_task_id(arguments: Any) -> str | None:
    definition = arguments.get("definition") if isinstance(arguments, Mapping) else None
    task_id = definition.get("taskId") if isinstance(definition, Mapping) else None
    return task_id if isinstance(task_id, str) and task_id else None


def _destination_blockers(task_id: str, output_root: str | os.PathLike[str] | None) -> list[str]:
    """What the output root would refuse: not configured, missing, or the task already there."""
    try:
        root = resolve_output_root(output_root)
    except SelfbenchError as exc:
        return [str(exc)]
    if not root.is_dir():
        return [f"{OUTPUT_ENV} directory does not exist: {root}"]
    target = root / task_id
    return [f"task {task_id} already exists: {target}"] if os.path.lexists(target) else []


def _unshown(verdict: TaskVerdict, issues: tuple[Issue, ...]) -> list[str]:
    """The verdict's blockers that the issues do not already say."""
    shown = {str(issue) for issue in issues}
    return [blocker for blocker in verdict.blockers if blocker not in shown]


def _metrics(verdict: TaskVerdict) -> dict[str, int] | None:
    return verdict.report.metrics if verdict.report is not None else None


def check_task(
    arguments: Any, *, output_root: str | os.PathLike[str] | None = None, preflight: bool = True
) -> TaskCheck:
    """Judge `submit_task` arguments as submit would, and write nothing.

    The output root (the argument, else `$SELFBENCH_TASK_OUTPUT`) is consulted only to report
    that it is missing or already holds the task. With `preflight=False` (submit's switch), the
    preflight's findings do not block, as they would not block submit; they come back as
    warnings, since the audit and compile still refuse such a task later.
    """
    issues: tuple[Issue, ...] = ()
    try:
        parse_submit_arguments(arguments)
    except DefinitionError as exc:
        issues = exc.issues
    task_id = _argument_task_id(arguments)
    test_patch = arguments.get("testPatch") if isinstance(arguments, Mapping) else None
    gold_patch = arguments.get("goldPatch") if isinstance(arguments, Mapping) else None
    definition = arguments.get("definition") if isinstance(arguments, Mapping) else None
    if not isinstance(test_patch, str) or not isinstance(gold_patch, str):
        return TaskCheck(task_id, issues, (), (), None)
    verdict = judge_task(
        definition,
        test_patch.encode("utf-8", "surrogatepass"),
        gold_patch.encode("utf-8", "surrogatepass"),
    )
    found = _unshown(verdict, issues)
    blockers = found if preflight else []
    if not issues and task_id is not None:
        blockers.extend(_destination_blockers(task_id, output_root))
    warnings = verdict.warnings
    if not preflight:
        warnings = (*(f"{_PREFLIGHT_OFF}{finding}" for finding in found), *warnings)
    return TaskCheck(task_id, issues, tuple(blockers), warnings, _metrics(verdict))


def check_definition_files(
    definition: bytes,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    mode: Mode = "persisted",
    source: str = "$",
) -> TaskCheck:
    """Judge a definition file's bytes and both patches as submit would; write nothing.

    `selfbench check` given the patches: the definition's issues in `mode`, then the blockers and
    warnings submit's preflight would report for the same files.
    """
    report = check_definition(definition, mode=mode, source=source)
    try:
        value = loads_strict(definition, source=source)
    except JsonError:
        return TaskCheck(None, report.issues, (), report.warnings, None)
    verdict = judge_task(value, test_patch, gold_patch, prefix="")
    warnings = tuple(dict.fromkeys((*report.warnings, *verdict.warnings)))
    task_id = _argument_task_id({"definition": value})
    return TaskCheck(
        task_id, report.issues, tuple(_unshown(verdict, report.issues)), warnings, _metrics(verdict)
    )


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
    # A full disk or a read-only root is an input problem, not a bug.
    with translating(SubmitError, f"write task {task_id}"):
        try:
            _stage_and_rename(target, files)
        except FileExistsError:
            raise SubmitError(f"task {task_id} already exists: {target}") from None


def _stage_and_rename(target: Path, files: dict[str, bytes]) -> None:
    with atomic_directory(target) as staging:
        for name, content in files.items():
            with (staging / name).open("xb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
