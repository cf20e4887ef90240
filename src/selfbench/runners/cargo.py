"""cargo test: its command, its log's `test name ... ok`, terse failures and summed `test result:`
lines, and the command a draft gives it.

The inferred test command is `cargo test -- --exact <names>`; a selector naming `tests/x.rs` runs
that integration test target (`--test x`), one under `src/` the library's tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._command import subcommand
from selfbench.runners._log import Outcome, Result, Run, table
from selfbench.runners._protocol import Runner

__all__ = ["RUNNER", "parse_cargo"]

_CARGO_TEST_RE = re.compile(r"test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?")
_CARGO_OUTCOMES = table("ok", "FAILED", "ignored")
_CARGO_RESULT_RE = re.compile(
    r"test result: (?:ok|FAILED)\. (\d{1,9}) passed; (\d{1,9}) failed; (\d{1,9}) ignored; "
    r"\d{1,9} measured; (\d{1,9}) filtered out"
)
_CARGO_TERSE_FAILED = " --- FAILED"
# A test path (`tests::it_works`) or a doc test (`src/lib.rs - add (line 3)`).
_CARGO_NAME_RE = re.compile(r"[^\s]++(?: - .+ \(line \d++\))?")


def parse_cargo(run: Run) -> Result:
    result = Result(zero="running 0 tests")
    totals = [0, 0, 0, 0]  # passed, failed, ignored, filtered out
    seen = in_failures = False
    for line in run.lines:
        if line.startswith("test result: "):
            in_failures = False
            match = _CARGO_RESULT_RE.match(line)
            if match is not None:
                seen = True
                for at in range(4):
                    totals[at] += int(match[at + 1])
        elif line == "failures:":
            in_failures = True  # captured output and the list of failures, up to the result
        elif not in_failures:
            found = _cargo_test(line)
            if found is not None:
                result.record(*found)
    if seen:
        result.counts = (totals[0], totals[1], totals[2])
        result.selector_miss = totals[3] > 0 and not any(result.counts)
    return result


def _cargo_test(line: str) -> tuple[str, Outcome] | None:
    match = _CARGO_TEST_RE.fullmatch(line)
    if match is not None:
        return match[1], _CARGO_OUTCOMES[match[2]]
    name = line.removesuffix(_CARGO_TERSE_FAILED)
    if name != line and _CARGO_NAME_RE.fullmatch(name):
        return name, "failed"
    return None


def _matches(name: str, args: Sequence[str]) -> bool:
    value_options = frozenset({"-Z", "--config", "-C", "--color"})
    return name == "cargo" and subcommand(args, value_options) in ("test", "t")


_TEST_COMMAND = (
    'sh -c \'targets=; n=$#; while [ "$n" -gt 0 ]; do arg=$1; shift; n=$((n - 1)); '
    'case $arg in tests/*.rs) name=${arg#tests/}; targets="$targets --test ${name%.rs}";; '
    '*.rs) targets="$targets --lib";; *) set -- "$@" "$arg";; esac; done; '
    'exec cargo test $targets -- --exact "$@"\' cargo-test {tests}'
)

RUNNER = Runner(
    name="cargo",
    setting="cargo",
    label="cargo test",
    reads_as="cargo",
    matches=_matches,
    parse=parse_cargo,
    selector=lambda test_name: test_name,  # the test's full name, for `--exact`
    accepts_selector=None,
    names_carry_file=False,
    ecosystem="rust",
    manifests=("Cargo.toml",),
    setup_command="cargo fetch",
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
    toolchains=("rust",),
    evidence=True,
    selects_by_name=True,
    selects_files=False,  # its selectors name tests
    report_arguments="",
    control_files=("rust-toolchain", "rust-toolchain.toml", "build.rs"),
    control_directories=(".cargo",),
    package_directories=(),
    package_files=(),
    build_directories=("target",),
    project_paths=(),
    shared_configuration_files=(),
    manifest_keys=(),
    compiled_tests=("tests/*.rs",),
    restored_manifests=("Cargo.toml",),
)
