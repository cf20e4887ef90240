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

from selfbench.outcomes._core import NO_MATCH, Outcome, Result, Run, table

__all__ = ["parse_jest", "parse_vitest"]

_JSON_STATUS = table("passed", "failed", "pending skipped todo disabled")
_JEST_JOIN = " \u203a "  # jest joins a test's describe names with this
_JEST_MARKS = table("✓ √", "✕ \u00d7", "○ ✎")
_VITEST_MARKS = table("✓ √", "\u00d7 ✗ ✕", "↓")
_JEST_DURATION_RE = re.compile(r" \(\d+(?:\.\d+)? m?s\)$")
_VITEST_DURATION_RE = re.compile(r" \d+(?:\.\d+)?m?s$")
_VITEST_FILE_RE = re.compile(r" \(\d+ tests?(?: \| [^)]*)?\)(?: \d+(?:\.\d+)?m?s)?$")
_JEST_SUMMARY_RE = re.compile(r"^Tests:\s+(.*), (\d+) total$")
_VITEST_SUMMARY_RE = re.compile(r"^\s*Tests\s+(.*?)(?: \((\d+)\))?$")
_COUNT_RE = re.compile(r"^(\d+) (passed|failed|skipped|todo|pending)$")
_COUNT_WORDS = table("passed", "failed", "skipped todo pending")
_SUITE_INDENT = 8
_NOT_SUITES = ("at ", ">", "|", "Expected", "Received")
_NO_FILES = ("No tests found, exiting with code 1", "No test files found, exiting with code 1")


def parse_jest(run: Run) -> Result:
    return _from_json(run) or _jest_text(run)


def parse_vitest(run: Run) -> Result:
    return _from_json(run) or _vitest_text(run)


def _from_json(run: Run) -> Result | None:
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


def _jest_text(run: Run) -> Result:
    result = Result(zero="no tests")
    suites: list[tuple[int, str]] = []
    for line in run.lines:
        if line in _NO_FILES:
            result.selector_miss = True
            result.counts = (0, 0, 0)
        elif (match := _JEST_SUMMARY_RE.match(line)) is not None:
            result.counts = _counts(match[1].split(", "))
        elif line.startswith(("PASS ", "FAIL ")):
            suites = []
        else:
            _jest_line(line, suites, result)
    return result


def _jest_line(line: str, suites: list[tuple[int, str]], result: Result) -> None:
    """A verbose test line, a failure header, or a describe name (kept for nesting)."""
    text = line.lstrip(" ")
    indent = len(line) - len(text)
    if not text or indent == 0 or indent % 2:  # jest indents two spaces a level
        return
    while suites and suites[-1][0] >= indent:
        suites.pop()
    mark, _, rest = text.partition(" ")
    if mark == "●" and _JEST_JOIN in rest:
        result.record(rest, "failed")
    elif mark in _JEST_MARKS and rest:
        name = _JEST_DURATION_RE.sub("", rest)
        if mark == "○":
            name = name.removeprefix("skipped ").removeprefix("todo ")
        result.record(_JEST_JOIN.join([*(title for _, title in suites), name]), _JEST_MARKS[mark])
    elif (
        mark != "●"
        and indent <= 8
        and not text.startswith(("at ", ">", "|", "Expected", "Received"))
    ):
        suites.append((indent, text))


def _vitest_text(run: Run) -> Result:
    result = Result(zero="no tests")
    for line in run.lines:
        if line.strip() in _NO_FILES:
            result.selector_miss = True
            result.counts = (0, 0, 0)
            continue
        match = _VITEST_SUMMARY_RE.match(line)
        if match is not None and line.lstrip().startswith("Tests "):
            body = match[1]
            result.counts = (0, 0, 0) if body == "no tests" else _counts(body.split(" | "))
            continue
        mark, _, rest = line.strip().partition(" ")
        if mark in _VITEST_MARKS and rest and _VITEST_FILE_RE.search(rest) is None:
            result.record(_VITEST_DURATION_RE.sub("", rest), _VITEST_MARKS[mark])
    return result


def _counts(items: list[str]) -> tuple[int, int, int]:
    counts = [0, 0, 0]
    for item in items:
        match = _COUNT_RE.match(item.strip())
        if match is not None:
            outcome: Outcome = _COUNT_WORDS[match[2]]
            counts[("passed", "failed", "skipped").index(outcome)] += int(match[1])
    return counts[0], counts[1], counts[2]


_ = NO_MATCH  # the reason these parsers' selector misses become (see `_zero_reason`)
