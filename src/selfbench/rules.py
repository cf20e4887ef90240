"""Rules several stages share, stated once: the taskId and commit SHA rules (SPEC §1), the
`{tests}` placeholder, the difficulty thresholds (SPEC §4), the test-only path rule (SPEC §7) and
how a validation error's location reads in a message.
Pure, and light to import (no pydantic), so the run directory and the store use them too.

The audit gates on the thresholds and the repair check on the path rule; mining, drafting, the
authoring brief and the SWE-bench import apply the same rules, so they live here, not in the
stage that first needed them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from posixpath import basename
from typing import TYPE_CHECKING, Any, NamedTuple

from selfbench._paths import unsafe_patch_path

if TYPE_CHECKING:
    from selfbench.contract import Difficulty

__all__ = [
    "CANDIDATE_SECONDS",
    "PLACEHOLDER",
    "TASK_ID_PATTERN",
    "TEST_FILE_PATTERNS",
    "TEST_SEGMENTS",
    "THRESHOLDS",
    "Threshold",
    "describe_error",
    "error_location",
    "harbor_name_problem",
    "is_full_sha",
    "is_sha256_digest",
    "is_task_id",
    "is_test_only_path",
    "sha_regex",
    "task_id_problem",
]

PLACEHOLDER = "{tests}"
"""What a test command holds once, as a whole unquoted word, for the selected test files."""

# --- identifiers -------------------------------------------------------------------------------

_TASK_ID = "[A-Za-z0-9][A-Za-z0-9._-]*"
TASK_ID_PATTERN = f"^{_TASK_ID}$"
_TASK_ID_RE = re.compile(_TASK_ID)
_SHA256_RE = re.compile("[0-9a-f]{64}")


def is_task_id(value: str, *, max_length: int | None = None) -> bool:
    """Whether `value` matches `TASK_ID_PATTERN`, in at most `max_length` characters if given.

    The same rule names a task, a run's candidate (a file name) and a segment of a store key.
    """
    if max_length is not None and len(value) > max_length:
        return False
    return _TASK_ID_RE.fullmatch(value) is not None


def harbor_name_problem(task_id: str) -> str | None:
    """Why a taskId cannot name a Harbor task (`selfbench/<taskId>`), or None when it can.

    The schema's pattern admits `a..b`; Harbor refuses a task name holding `..`.
    """
    if ".." in task_id:
        return f"taskId {task_id} cannot name a Harbor task: it holds '..'"
    return None


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a task (the schema's pattern, then Harbor's `..`), or None."""
    if not is_task_id(task_id):
        return f"taskId {task_id!r} does not match {TASK_ID_PATTERN}"
    return harbor_name_problem(task_id)


def sha_regex(*, lowercase: bool = False, abbreviated: bool = False) -> str:
    """The commit SHA rule as a regular expression (unanchored).

    A full SHA is 40 hex digits in either case (SPEC §1); `lowercase` admits only git's own
    spelling; `abbreviated` admits 7 to 40 digits, a commit named in text (SPEC §4).
    """
    digits = "0-9a-f" if lowercase else "0-9a-fA-F"
    return f"[{digits}]{{7,40}}" if abbreviated else f"[{digits}]{{40}}"


_FULL_SHA_RE = re.compile(sha_regex())
_LOWER_SHA_RE = re.compile(sha_regex(lowercase=True))


def is_full_sha(value: str, *, lowercase: bool = False) -> bool:
    """Whether `value` is a full 40-digit commit SHA (either case, or lower case only)."""
    return (_LOWER_SHA_RE if lowercase else _FULL_SHA_RE).fullmatch(value) is not None


def is_sha256_digest(value: str) -> bool:
    """Whether `value` has the shape of a SHA-256 hex digest: 64 lowercase hex digits."""
    return _SHA256_RE.fullmatch(value) is not None


# --- difficulty --------------------------------------------------------------------------------


class Threshold(NamedTuple):
    """The minimum size of a task at one difficulty."""

    files: int
    changed_lines: int
    pass_to_pass: int


THRESHOLDS: dict[Difficulty, Threshold] = {
    "easy": Threshold(files=1, changed_lines=20, pass_to_pass=0),
    "medium": Threshold(files=2, changed_lines=50, pass_to_pass=1),
    "hard": Threshold(files=3, changed_lines=100, pass_to_pass=2),
}
CANDIDATE_SECONDS: dict[str, float] = {"easy": 1200.0, "medium": 1800.0, "hard": 2700.0}
"""Each tier's default time for one candidate's sandbox stages in a run (`--candidate-time`)."""

# --- test-only paths ---------------------------------------------------------------------------

# Compared lower-cased: the spec makes these segments case-insensitive.
TEST_SEGMENTS = frozenset(
    {
        "test", "tests", "__tests__", "e2e", "integration", "fixture", "fixtures", "selfbench",
        "selfbench-tests", "selfbench_tests", ".selfbench-tests",
    }
)  # fmt: skip
# The toolchains' own conventions (Beyond), matched case-sensitively as pytest and go match them.
TEST_FILE_PATTERNS = ("test_*.py", "*_test.py", "conftest.py", "*_test.go")
# The spec's `(^|.)(test|spec).<ext>`, Jest's convention with the extension left open: `test` or
# `spec` at the start of the name or after a dot, then exactly one final extension. The dots are
# literal (`latest.js` is not a test) and the case is Jest's (`foo.Test.ts` is not one either).
_TEST_NAME_RE = re.compile(r"(?:.*\.)?(?:test|spec)\.[^.]+", re.DOTALL)


def is_test_only_path(path: str) -> bool:
    """Whether a repository path is a test file by its name alone (SPEC §7).

    True when a component is a test segment (any case), or the file name matches
    `(^|.)(test|spec).<ext>` or a toolchain convention. A path `git apply` refuses never is.
    """
    if unsafe_patch_path(path):
        return False
    if any(part.lower() in TEST_SEGMENTS for part in path.split("/")):
        return True
    name = basename(path)
    return bool(_TEST_NAME_RE.fullmatch(name)) or any(
        fnmatchcase(name, pattern) for pattern in TEST_FILE_PATTERNS
    )


# --- validation errors -------------------------------------------------------------------------


def error_location(loc: Sequence[int | str], *, prefix: str = "", root: str = "$") -> str:
    """Where a validation error is, as SPEC §1's messages write it: `timeouts.agentSeconds`,
    `failToPass[0]`.

    `prefix` comes first (`definition`, `[3]`); each key follows a dot (none at the start), each
    list index is `[i]`. An empty location reads `root`.
    """
    text = prefix
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else str(part)
    return text or root


def describe_error(
    error: Mapping[str, Any], *, prefix: str = "", root: str = "$", what: str | None = None
) -> str:
    """One pydantic error as `<location>: <what>`, the location by `error_location`.

    `what` defaults to the error's type with spaces (`missing`, `int parsing`): built from the
    type, not pydantic's wording, so a library upgrade cannot change the message.
    """
    where = error_location(tuple(error["loc"]), prefix=prefix, root=root)
    return f"{where}: {str(error['type']).replace('_', ' ') if what is None else what}"
