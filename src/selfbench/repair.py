"""What one repair of a task may change (SPEC §7, validation repair and coupling repair). Pure.

A repair is judged after the fact, from what it produced: the definition before and after it,
the original held-out test patch, and the repository paths of the files it changed (what
`git diff --name-only` prints for the repaired work tree; `definition.json` is not one of them).
The verdict names the first rule broken with the spec's message, checked in the spec's order:

* validation repair: an immutable definition field changed (fields in schema order), a changed
  file outside the held-out tests, an original test patch that names no files, an original
  test patch path that is not test-only;
* coupling repair: a changed file outside the held-out tests, an original test patch that names
  no files.

Paths follow Git's rules, not the file system's. The *paths of the test patch* are every old and
new path it names (a rename's both sides, a deleted file's old path), read leniently as the audit
reads it, so bytes that are not a Git patch name no files. A changed path is compared in its
normal form: empty and `.` components dropped (`./tests//a.py` is `tests/a.py`); `..` is never
resolved, since a lexical `..` can be wrong across a symlink, and a path `git apply` would refuse
(absolute, `..`, `.git`) admits nothing and is never test-only. Comparison is case-sensitive, as
Git's is. A message lists its paths as given, each once, in order, joined by `, ` (as the audit's
overlap blocker does), each shown with `display_path` so a hostile name stays on one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from selfbench._paths import unsafe_patch_path
from selfbench.contract import TaskDefinition
from selfbench.patches import changes_no_files, display_path, parse_patch
from selfbench.rules import is_test_only_path

__all__ = [
    "IMMUTABLE_FIELDS",
    "MUTABLE_FIELDS",
    "RepairVerdict",
    "check_coupling_repair",
    "check_validation_repair",
]

IMMUTABLE_FIELDS = (
    "schemaVersion", "difficulty", "taskId", "repo", "baseCommit", "workdir", "sourcePr",
    "sourceUrl", "prompt", "agentDependencies",
)  # fmt: skip
MUTABLE_FIELDS = (
    "setupCommand", "testCommand", "failToPass", "passToPass", "testPaths", "toolchains",
    "timeouts", "resources",
)  # fmt: skip
OUTSIDE_VALIDATION = "validation repair changed files outside held-out tests: {paths}"
OUTSIDE_COUPLING = "repair changed files outside the held-out tests: {paths}"
NO_FILES = changes_no_files("original held-out test patch")
NOT_TEST_ONLY = "validation repair requires test-only patch paths: {paths}"
IMMUTABLE = "validation repair changed immutable definition field {name}"


@dataclass(frozen=True, slots=True)
class RepairVerdict:
    """Whether a repair is allowed, and if not, the spec's message for the first rule it broke."""

    reason: str | None

    @property
    def allowed(self) -> bool:
        """True when the repair broke no rule."""
        return self.reason is None


def check_validation_repair(
    original: TaskDefinition,
    repaired: TaskDefinition,
    test_patch: bytes,
    changed: Iterable[str],
) -> RepairVerdict:
    """Check a validation repair: mutable definition fields and held-out test files only.

    `test_patch` is the original held-out test patch; `changed` the repository paths of the
    files the repair changed. Definitions are compared as parsed values, so `42.0` for `42` or
    a dropped unknown key is no change.

    Raises:
        TypeError: `changed` is one string, not an iterable of paths.
    """
    for name in IMMUTABLE_FIELDS:
        if getattr(original, name) != getattr(repaired, name):
            return RepairVerdict(IMMUTABLE.format(name=name))
    held_out = _held_out_paths(test_patch, changed, OUTSIDE_VALIDATION)
    if isinstance(held_out, RepairVerdict):
        return held_out
    not_test_only = [path for path in held_out if not is_test_only_path(path)]
    if not_test_only:
        return RepairVerdict(NOT_TEST_ONLY.format(paths=_listed(not_test_only)))
    return RepairVerdict(None)


def check_coupling_repair(test_patch: bytes, changed: Iterable[str]) -> RepairVerdict:
    """Check a coupling repair: it may rewrite the held-out test files only.

    Raises:
        TypeError: `changed` is one string, not an iterable of paths.
    """
    held_out = _held_out_paths(test_patch, changed, OUTSIDE_COUPLING)
    return held_out if isinstance(held_out, RepairVerdict) else RepairVerdict(None)


def _held_out_paths(
    test_patch: bytes, changed: Iterable[str], outside: str
) -> tuple[str, ...] | RepairVerdict:
    """The original test patch's paths if every changed path is one of them, else the verdict."""
    if isinstance(changed, str):  # one path would be read as its characters
        raise TypeError("changed must be an iterable of paths, not one string")
    paths = parse_patch(test_patch, lenient=True).paths
    admitted = {path for path in paths if not unsafe_patch_path(path)}
    seen: set[str] = set()
    strays = []
    for path in changed:
        normal = _normal_form(path)
        if normal not in seen and normal not in admitted:
            strays.append(path)
        seen.add(normal)
    if strays:
        return RepairVerdict(outside.format(paths=_listed(strays)))
    if not paths:
        return RepairVerdict(NO_FILES)
    return paths


def _normal_form(path: str) -> str:
    """A relative path without empty or `.` components; an absolute one as it is."""
    if path.startswith("/"):
        return path
    return "/".join(part for part in path.split("/") if part not in {"", "."})


def _listed(paths: Iterable[str]) -> str:
    return ", ".join(display_path(path) for path in paths)
