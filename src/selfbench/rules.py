"""Rules several stages share, stated once: the `{tests}` placeholder, the difficulty
thresholds (SPEC §4) and the test-only path rule (SPEC §7). Pure, and light to import.

The audit gates on the thresholds and the repair check on the path rule; mining, drafting, the
authoring brief and the SWE-bench import apply the same rules, so they live here, not in the
stage that first needed them. The identifier rules (taskId, SHAs) are `contract`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from posixpath import basename
from typing import TYPE_CHECKING

from selfbench._paths import unsafe_patch_path

if TYPE_CHECKING:
    from selfbench.contract import Difficulty

__all__ = [
    "PLACEHOLDER",
    "TEST_FILE_PATTERNS",
    "TEST_SEGMENTS",
    "THRESHOLDS",
    "Threshold",
    "is_test_only_path",
]

PLACEHOLDER = "{tests}"
"""What a test command holds once, as a whole unquoted word, for the selected test files."""

# --- difficulty --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threshold:
    """The minimum size of a task at one difficulty."""

    files: int
    changed_lines: int
    pass_to_pass: int


THRESHOLDS: dict[Difficulty, Threshold] = {
    "easy": Threshold(files=1, changed_lines=20, pass_to_pass=0),
    "medium": Threshold(files=2, changed_lines=50, pass_to_pass=1),
    "hard": Threshold(files=3, changed_lines=100, pass_to_pass=2),
}

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
