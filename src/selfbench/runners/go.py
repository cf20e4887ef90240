"""go test: its command, its log's `--- PASS: Name (0.00s)` and per-package lines, and the
command a draft gives it.

The inferred test command joins its selectors into one `go test -run` pattern
(`^TestA$|^TestB$/^case$`), and a selector naming a `_test.go` file runs that file's package.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from selfbench.errors import DraftError
from selfbench.runners._command import subcommand
from selfbench.runners._log import NO_MATCH, Outcome, Result, Run, table
from selfbench.runners._protocol import Runner

__all__ = ["RUNNER", "parse_go"]

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


def _matches(name: str, args: Sequence[str]) -> bool:
    return name == "go" and subcommand(args, frozenset({"-C"})) == "test"


_GO_TEST_RE = re.compile(r"(?:Test|Example|Fuzz|Benchmark)\w*")
_REGEX_SPECIALS = frozenset("\\.+*?()|[]{}^$")


def _go_part(part: str) -> str:
    return "".join(f"\\{char}" if char in _REGEX_SPECIALS else char for char in part)


def _selector(test_name: str) -> str:
    """The `-run` pattern of a test (`pkg/TestX/case` or `TestX/case` → `^TestX$/^case$`)."""
    parts = test_name.split("/")
    start = next((at for at, part in enumerate(parts) if _GO_TEST_RE.fullmatch(part)), None)
    if start is None:
        raise DraftError(f"go test {test_name!r} names no Test, Example or Fuzz function")
    return "/".join(f"^{_go_part(part)}$" for part in parts[start:])


_TEST_COMMAND = (
    'sh -c \'pkgs=; run=; for arg; do case $arg in */*_test.go) pkgs="$pkgs ./${arg%/*}";; '
    '*_test.go) pkgs="$pkgs .";; *) run="$run|$arg";; esac; done; '
    'exec go test -v -run "${run#|}" ${pkgs:-./...}\' go-test {tests}'
)

RUNNER = Runner(
    name="go",
    setting="go",
    label="go test",
    reads_as="go",
    matches=_matches,
    parse=parse_go,
    selector=_selector,
    accepts_selector=None,
    names_carry_file=False,
    ecosystem="go",
    manifests=("go.mod",),
    setup_command="go mod download",
    test_command=_TEST_COMMAND,
    package="",
    package_floor="",
    package_too_old=(),
    python_arguments="",
    tool_table="",
    mentions=(),
    marker_files=(),
    dependency="",
    preferred_over=(),
    import_pattern="",
    kept_options=frozenset(),
    script_command=None,
    test_globals=(),
    tooling_files=(),
    toolchains=("go",),
    evidence=True,
    selects_by_name=False,
    selects_files=False,  # its selectors name packages, whose `_test.go` files are protected
    report_arguments="",
    control_files=("go.work", "go.work.sum", "go.env", "vendor/modules.txt"),
    control_directories=(),
    package_directories=(),
    package_files=(),
    build_directories=(),
    project_paths=(),
    shared_configuration_files=(),
    manifest_keys=(),
    compiled_tests=("*_test.go",),
    restored_manifests=("go.mod",),
)
