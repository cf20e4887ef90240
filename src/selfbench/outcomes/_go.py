"""go test: `--- PASS: Name (0.00s)` and the per-package lines."""

from __future__ import annotations

from dataclasses import dataclass

from selfbench.outcomes._core import NO_MATCH, Outcome, Result, Run, table

__all__ = ["parse_go"]

_GO_RESULTS = table("PASS", "FAIL", "SKIP")


@dataclass(slots=True)
class _GoPackages:
    ran: int = 0
    no_tests_to_run: int = 0
    no_test_files: int = 0
    no_packages: bool = False


def parse_go(run: Run) -> Result:
    result = Result()
    packages = _GoPackages()
    for line in run.lines:
        found = _go_test(line)
        if found is not None:
            result.record(*found)
        else:
            _go_package(line, packages)
    if not result.tests and not packages.ran:
        if packages.no_tests_to_run:
            result.no_tests = NO_MATCH
        elif packages.no_test_files:
            result.no_tests = "go test ran no test (no test files)"
        elif packages.no_packages:
            result.no_tests = "go test ran no test (matched no packages)"
    return result


def _go_test(line: str) -> tuple[str, Outcome] | None:
    """`--- PASS: TestX/sub (0.00s)`, indented for a subtest."""
    text = line.lstrip()
    if not text.startswith("--- "):
        return None
    word, _, rest = text[4:].partition(": ")
    outcome, name = _GO_RESULTS.get(word), rest.partition(" ")[0]
    return None if outcome is None or not name else (name, outcome)


def _go_package(line: str, packages: _GoPackages) -> None:
    if line.startswith("ok") and line[2:3] in (" ", "\t") and "\t" in line:
        if line.endswith("[no tests to run]"):
            packages.no_tests_to_run += 1
        else:
            packages.ran += 1
    elif line.startswith(("FAIL\t", "FAIL ")):
        packages.ran += 1  # a failing package: a build failure or failing tests, not "no test"
    elif line.startswith("?") and line.endswith("[no test files]"):
        packages.no_test_files += 1
    elif line == "testing: warning: no tests to run":
        packages.no_tests_to_run += 1
    elif line.startswith("go: warning: ") and line.endswith("matched no packages"):
        packages.no_packages = True
