"""vitest: its command, its JSON report (`--reporter=json`) or its text, and its configuration."""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._command import installed
from selfbench.runners._index import VITEST
from selfbench.runners._jest_family import (
    JS_SUFFIXES,
    NO_FILES,
    REPORTER_ARGUMENTS,
    VERIFIER,
    canary_text,
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

__all__ = ["RUNNER", "parse_vitest"]

_VITEST_MARKS = table("✓ √", "\u00d7 ✗ ✕", "↓")
_VITEST_DURATION_RE = re.compile(r" \d+(?:\.\d+)?m?s$")
_VITEST_FILE_RE = re.compile(r" \(\d+ tests?(?: \| [^)]*)?\)(?: \d+(?:\.\d+)?m?s)?$")
_VITEST_SUMMARY_RE = re.compile(r"^\s*Tests\s+(.*?)(?: \((\d+)\))?$")


def parse_vitest(run: Run) -> Result:
    return from_json(run) or _vitest_text(run)


def _vitest_text(run: Run) -> Result:
    result = Result(zero="no tests")
    for line in run.lines:
        if line.strip() in NO_FILES:
            result.selector_miss = True
            result.counts = (0, 0, 0)
            continue
        match = _VITEST_SUMMARY_RE.match(line)
        if match is not None and line.lstrip().startswith("Tests "):
            body = match[1]
            result.counts = (0, 0, 0) if body == "no tests" else counts(body.split(" | "))
            continue
        mark, _, rest = line.strip().partition(" ")
        if mark in _VITEST_MARKS and rest and _VITEST_FILE_RE.search(rest) is None:
            result.record(_VITEST_DURATION_RE.sub("", rest), _VITEST_MARKS[mark])
    return result


def _script_command(kept: Sequence[str], local: bool) -> list[str]:
    return [*installed("vitest", local), "run", "--reporter=verbose", *kept]


RUNNER = Runner(
    entry=VITEST,
    label="vitest",
    parse=parse_vitest,
    selector=by_file("vitest"),
    names_carry_file=True,
    node=NodeProject(
        script_command=_script_command,
        kept_options=frozenset(
            {"--config", "-c", "--root", "-r", "--dir", "--environment", "--pool"}
        ),
        dependency="vitest",
        preferred_over=("jest",),
    ),
    test_globals=("vi",),
    tamper_names=(
        "@vitest/runner",
        "onTaskUpdate",
        "onTestCaseResult",
        "matchers-object",
        "expect-global",
        "vitest-reporter",
        "SELFBENCH_REPORTER",
    ),
    evidence=True,
    selects_files=True,
    report_arguments="--reporter=default --reporter=" + REPORTER_ARGUMENTS,
    coverage=V8_COVERAGE,
    canary=CanaryParts(
        text=canary_text("vitest"),
        suffixes=JS_SUFFIXES,
        refused_options=("--bail", "-t", "--testNamePattern", "--test-name-pattern", "--changed"),
    ),
    verifier=VERIFIER,
)
