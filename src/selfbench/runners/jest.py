"""jest: its command, its JSON report (`--json`) or its verbose text, and its configuration."""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._command import installed
from selfbench.runners._index import JEST
from selfbench.runners._jest_family import (
    GLOBAL_CANARY_TEXT,
    JS_SUFFIXES,
    NO_FILES,
    REPORTER_ARGUMENTS,
    VERIFIER,
    counts,
    from_json,
)
from selfbench.runners._log import Result, Run, table
from selfbench.runners._protocol import (
    V8_COVERAGE,
    CanaryParts,
    NodeProject,
    Runner,
    by_file,
)

__all__ = ["RUNNER", "parse_jest"]

_JEST_JOIN = " \u203a "  # jest joins a test's describe names with this
_JEST_MARKS = table("✓ √", "✕ \u00d7", "○ ✎")
_JEST_DURATION_RE = re.compile(r" \(\d+(?:\.\d+)? m?s\)$")
_JEST_SUMMARY_RE = re.compile(r"^Tests:\s+(.*), (\d+) total$")


def parse_jest(run: Run) -> Result:
    return from_json(run) or _jest_text(run)


def _jest_text(run: Run) -> Result:
    result = Result(zero="no tests")
    suites: list[tuple[int, str]] = []
    for line in run.lines:
        if line in NO_FILES:
            result.selector_miss = True
            result.counts = (0, 0, 0)
        elif (match := _JEST_SUMMARY_RE.match(line)) is not None:
            result.counts = counts(match[1].split(", "))
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


def _script_command(kept: Sequence[str], local: bool) -> list[str]:
    return [*installed("jest", local), "--ci", "--json", "--runTestsByPath", *kept]


RUNNER = Runner(
    entry=JEST,
    label="jest",
    parse=parse_jest,
    selector=by_file("jest"),
    # its last words once every test ran, and those it prints when open handles keep it alive
    finished_line=(
        r"^Ran all test suites|^Jest did not exit one second after"
        r"|Consider running Jest with .--detectOpenHandles. to troubleshoot"
    ),
    names_carry_file=True,
    node=NodeProject(
        script_command=_script_command,
        kept_options=frozenset(
            {"--config", "-c", "--rootDir", "--setupFiles", "--testEnvironment"}
        ),
        dependency="jest",
    ),
    test_globals=("jest",),
    tamper_names=(
        "jest-circus",
        "@jest/reporters",
        "@jest/test-result",
        "$$jest-matchers-object",
        "jest.asymmetricMatcher",
        "onTestResult",
        "onRunComplete",
        "numFailedTests",
        "jest-reporter",
        "SELFBENCH_REPORTER",
    ),
    evidence=True,
    selects_files=True,
    report_arguments="--reporters=default --reporters=" + REPORTER_ARGUMENTS,
    coverage=V8_COVERAGE,
    canary=CanaryParts(
        text=GLOBAL_CANARY_TEXT,
        suffixes=JS_SUFFIXES,
        refused_options=(
            "--bail",
            "-b",
            "-t",
            "--testNamePattern",
            "--test-name-pattern",
            "--only-failures",
            "--only-changed",
            "--onlyFailures",
            "-f",
            "--onlyChanged",
            "-o",
        ),
    ),
    verifier=VERIFIER,
)
