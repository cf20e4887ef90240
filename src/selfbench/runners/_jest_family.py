"""jest and vitest: their structured JSON report when the log holds one, else their text.

The JSON report (`jest --json`, `vitest --reporter=json`, the same shape) is one line starting
`{` with `numTotalTests`; each `testResults[].assertionResults[]` has `fullName` (vitest: the
`ancestorTitles` and `title`) and `status` (`passed`, `failed`, `pending`, `skipped`, `todo`,
`disabled`). Text, for both runners:

* jest: `  ✓ name (1 ms)`, `  ✕ name`, `  ○ skipped name`, `  ✎ todo name` (`--verbose`, nested
  under indented describe names, joined with U+203A), `  ● suite U+203A name` (a failure's header),
  `Tests:       1 failed, 2 skipped, 5 passed, 8 total`, `No tests found, exiting with code 1`;
* vitest: `   ✓ suite > name 11ms`, `   U+00D7 suite > name`, `   ↓ suite > name` (a file's line,
  ` ✓ file (4 tests | 1 skipped) 6ms`, is not a test), `      Tests  1 failed | 5 passed |
  2 skipped (8)` or `Tests  no tests`, `No test files found, exiting with code 1`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from selfbench.runners._log import Outcome, Result, Run, table
from selfbench.runners._protocol import Part, VerifierParts

__all__ = [
    "CONTROL",
    "CONTROL_NOTE",
    "ENV",
    "FAILED",
    "FINISHED",
    "NO_FILES",
    "PACKAGE_JSON_KEYS",
    "PASSED",
    "RESTORE",
    "VERIFIER",
    "counts",
    "from_json",
]

_JSON_STATUS = table("passed", "failed", "pending skipped todo disabled")
_COUNT_RE = re.compile(r"^(\d+) (passed|failed|skipped|todo|pending)$")
_COUNT_WORDS = table("passed", "failed", "skipped todo pending")
NO_FILES = ("No tests found, exiting with code 1", "No test files found, exiting with code 1")


def from_json(run: Run) -> Result | None:
    """The structured report, when a line of the log is one."""
    for line in run.lines:
        if not (line.startswith("{") and '"numTotalTests"' in line):
            continue
        try:
            report = json.loads(line)
        except ValueError:
            continue
        if isinstance(report, dict):
            return _json_result(report)
    return None


def _json_result(report: dict[str, Any]) -> Result:
    result = Result(zero="no tests")
    for suite in report.get("testResults") or ():
        for test in (suite.get("assertionResults") or ()) if isinstance(suite, dict) else ():
            if not isinstance(test, dict):
                continue
            titles = [*(test.get("ancestorTitles") or ()), test.get("title", "")]
            name = test.get("fullName") or " ".join(str(title) for title in titles)
            outcome = _JSON_STATUS.get(str(test.get("status")))
            if outcome is not None and isinstance(name, str):
                result.record(name, outcome)
    if not result.tests and report.get("numTotalTests") == 0:
        result.counts = (0, 0, 0)
    return result


def counts(items: list[str]) -> tuple[int, int, int]:
    counts = [0, 0, 0]
    for item in items:
        match = _COUNT_RE.match(item.strip())
        if match is not None:
            outcome: Outcome = _COUNT_WORDS[match[2]]
            counts[("passed", "failed", "skipped").index(outcome)] += int(match[1])
    return counts[0], counts[1], counts[2]


# The verifier's parts for either runner (`VERIFIER`, `VerifierParts`' fields): their JSON
# report, and the keys of `package.json` that decide how they run.

PACKAGE_JSON_KEYS = ("jest", "babel", "scripts")
"""jest's settings, its transform's (babel), and the scripts: compared for either runner."""

PASSED = Part(
    3,
    r"""
    [.[] | .testResults[]? | .name as $file | .assertionResults[]?
     | select(.status == "passed") | {file: $file, name: ""}]""",
)
FAILED = Part(
    3,
    r"""
    [.[] | .testResults[]? | (select(.status == "failed") | .name),
     (.assertionResults[]? | select(.status == "failed") | .fullName)]
    + [.[] | select((.numRuntimeErrorTestSuites // 0) > 0) | "a test file did not run"]""",
)
FINISHED = Part(3, '\n    length == 1 and (.[0].numTotalTests | type) == "number"')
ENV = Part(3, ' evidence_env=("SELFBENCH_EVIDENCE=$report") ;;\n')
RESTORE = Part(3, ' restore_changed_configuration "$changed" ;;\n')
CONTROL_NOTE = Part(
    1, "# package.json's jest configuration, babel configuration (jest's transform) and scripts;\n"
)
CONTROL = Part(
    0,
    "\n    jq -cS '["
    + ", ".join(f".{key}" for key in PACKAGE_JSON_KEYS)
    + ']\' "$1" 2>/dev/null || echo unreadable\n',
)
VERIFIER = VerifierParts(
    report_passed=PASSED,
    report_failed=FAILED,
    report_finished=FINISHED,
    verifier_env=ENV,
    verifier_restore=RESTORE,
    verifier_control_note=CONTROL_NOTE,
    verifier_control=CONTROL,
)
"""Either runner's parts of the verifier's evidence functions (the same arm serves both)."""
