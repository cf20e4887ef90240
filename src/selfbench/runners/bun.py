"""bun test: its command, its log's `(pass) name [1.2ms]` or `✓ name`, the counts, and its
"nothing matched" lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._command import subcommand
from selfbench.runners._log import NO_MATCH, Outcome, Result, Run, table
from selfbench.runners._protocol import NodeProject, Runner, by_file

__all__ = ["RUNNER", "parse_bun"]

_BUN_MARKS = table("(pass) ✓", "(fail) ✗", "(skip) (todo) » ✎")
_BUN_DURATION_RE = re.compile(r"(.*) \[\d++(?:\.\d++)?(?:ns|µs|us|ms|s)\]")
_BUN_COUNT_RE = re.compile(r" *+(\d{1,9}) (pass|fail|skip|todo|error)s?")
_BUN_NO_FILES = "No tests found!"
_BUN_FILTER_MISS = "The following filters did not match any test files"


def parse_bun(run: Run) -> Result:
    result = Result(zero="0 pass")
    summary: dict[str, int] = {}
    for line in run.lines:
        found = _bun_test(line)
        if found is not None:
            result.record(*found)
        elif (match := _BUN_COUNT_RE.fullmatch(line)) is not None:
            summary[match[2]] = int(match[1])
        elif line.startswith(_BUN_FILTER_MISS) or (
            line.startswith("error: regex ") and " matched 0 tests" in line
        ):
            result.selector_miss = True
        elif line.startswith(_BUN_NO_FILES):
            result.no_tests = "bun test ran no test (no test files)"
    if summary:
        passed, failed = summary.get("pass", 0), summary.get("fail", 0) + summary.get("error", 0)
        result.counts = (passed, failed, summary.get("skip", 0) + summary.get("todo", 0))
    elif result.selector_miss and result.no_tests is None:
        result.no_tests = NO_MATCH
    return result


def _bun_test(line: str) -> tuple[str, Outcome] | None:
    mark, _, rest = line.partition(" ")
    outcome = _BUN_MARKS.get(mark)
    if outcome is None or not rest:
        return None
    match = _BUN_DURATION_RE.fullmatch(rest)
    return (rest if match is None else match[1]), outcome


def _matches(name: str, args: Sequence[str]) -> bool:
    return name == "bun" and subcommand(args, frozenset({"--cwd"})) == "test"


def _script_command(kept: Sequence[str], local: bool) -> list[str]:  # noqa: ARG001 - the shape
    return ["bun", "test", *kept]


RUNNER = Runner(
    name="bun",
    setting="bun",
    label="bun test",
    reads_as="bun",
    matches=_matches,
    parse=parse_bun,
    selector=by_file("bun"),
    names_carry_file=True,
    ecosystem="node",
    manifests=("package.json",),
    node=NodeProject(
        script_command=_script_command,
        kept_options=frozenset({"--preload", "--config", "-c"}),
        import_pattern=r"""from\s+['"]bun:test['"]""",
    ),
    toolchains=("bun",),
    evidence=False,
    selects_files=False,
    control_files=("bunfig.toml",),
    control_directories=("node_modules",),
)
