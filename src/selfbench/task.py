"""The one judge of an authored task (SPEC §2, §4, §5); its files are `artifacts.task_dir`'s.

`judge_task` is pure: it returns every blocker of a (definition, test patch, gold patch) triple,
the input checks of compile (task paths, then each patch's shape) and the static audit's, and
the audit's warnings. Submit's preflight, compile, `check_task`, `selfbench check`, `audit`, the
demo and the export's review record all judge a task through it, so they agree by construction.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from selfbench._paths import escaping_task_paths, unsafe_patch_path
from selfbench.artifacts.task_dir import GOLD_PATCH_FILE, TEST_PATCH_FILE
from selfbench.audit import AuditReport, audit
from selfbench.contract import LoadedDefinition, TaskDefinition, parse_definition
from selfbench.errors import DefinitionError, Issue, PatchError
from selfbench.patches import (
    Patch,
    changes_no_files,
    display_path,
    is_git_patch,
    parse_patch,
    unprefixed_path,
)
from selfbench.rules import harbor_name_problem

__all__ = ["TaskVerdict", "judge_task"]

# --- the judge (pure) --------------------------------------------------------------------------


class TaskVerdict(NamedTuple):
    """Everything that blocks a task, and what only warns.

    `issues` are the definition's (persisted mode); `input_blockers` are compile's input checks
    in the spec's order (Harbor name, task paths, test patch, gold patch); `report` is the static
    audit, None when the definition is invalid and cannot be audited.
    """

    issues: tuple[Issue, ...]
    input_blockers: tuple[str, ...]
    report: AuditReport | None

    @property
    def blockers(self) -> tuple[str, ...]:
        """Every blocker: the definition's issues, the input checks, then the audit's."""
        audited = self.report.blockers if self.report is not None else ()
        return (*(str(issue) for issue in self.issues), *self.input_blockers, *audited)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The loading and prompt warnings (never blocking)."""
        return self.report.warnings if self.report is not None else ()

    @property
    def accepted(self) -> bool:
        """True when nothing blocks the task."""
        return not self.blockers

    @property
    def audit(self) -> AuditReport:
        """The static audit's report.

        Raises:
            DefinitionError: the definition is invalid, so there is none.
        """
        if self.report is None:
            raise DefinitionError(self.issues)
        return self.report


def _patch_shape(name: str, label: str, data: bytes) -> tuple[tuple[str, ...], Patch]:
    """One patch's shape blockers in the spec's order, and the patch as the audit counts it.

    A Git patch that names no path fails the spec's check before the parser's complaint; a
    malformed one is refused with the parser's message, and its paths are not judged.
    """
    if not is_git_patch(data):
        return (f"{name} is not a Git patch",), parse_patch(data, lenient=True)
    try:
        patch, problem = parse_patch(data), None
    except PatchError as exc:
        patch, problem = parse_patch(data, lenient=True), f"{name}: {exc}"
    if name == TEST_PATCH_FILE and not patch.paths:
        return (changes_no_files(TEST_PATCH_FILE),), patch
    if problem is not None:
        return (problem,), patch
    unprefixed = unprefixed_path(data, parsed=patch)
    if unprefixed is not None:  # `git apply -p1` would strip the path's first directory
        why = "without a/ and b/ prefixes (made with --no-prefix?); make it with plain git diff"
        return (f"{name} names {unprefixed} {why}",), patch
    escaping = tuple(
        f"{label} patch path escapes repository: {display_path(path)}"
        for path in patch.paths
        if unsafe_patch_path(path)
    )
    return escaping, patch


def _task_path_blockers(definition: TaskDefinition) -> tuple[str, ...]:
    problem = harbor_name_problem(definition.taskId)
    return (
        *([problem] if problem is not None else []),
        *(
            f"task path escapes repository: {path}"
            for path in escaping_task_paths(definition.workdir, definition.testPaths)
        ),
    )


def judge_task(
    definition: LoadedDefinition | TaskDefinition | Any,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    prefix: str = "definition",
) -> TaskVerdict:
    """Judge a (definition, test patch, gold patch) triple; every blocker and warning, no I/O.

    `definition` is a loaded or parsed definition, or a decoded JSON value, which is parsed in
    persisted mode (its issues' paths start with `prefix`). An invalid definition still has
    its patches judged, so one call lists every blocker; only the audit needs a valid one.
    """
    test_blockers, tests = _patch_shape(TEST_PATCH_FILE, "test", test_patch)
    gold_blockers, gold = _patch_shape(GOLD_PATCH_FILE, "gold", gold_patch)
    try:
        loaded = _loaded(definition, prefix)
    except DefinitionError as exc:
        return TaskVerdict(exc.issues, (*test_blockers, *gold_blockers), None)
    report = audit(loaded.definition, gold, tests, loading_warnings=loaded.warnings)
    inputs = (*_task_path_blockers(loaded.definition), *test_blockers, *gold_blockers)
    return TaskVerdict((), inputs, report)


def _loaded(definition: LoadedDefinition | TaskDefinition | Any, prefix: str) -> LoadedDefinition:
    if isinstance(definition, LoadedDefinition):
        return definition
    if isinstance(definition, TaskDefinition):
        return LoadedDefinition(definition, definition.model_dump(mode="json"), ())
    return parse_definition(definition, mode="persisted", prefix=prefix)
