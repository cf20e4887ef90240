"""cargo test: its command, its log's `test name ... ok`, terse failures and summed `test result:`
lines, and the command a draft gives it.

The inferred test command is `cargo test -- --exact <names>`; a selector naming `tests/x.rs` runs
that integration test target (`--test x`), one under `src/` the library's tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._index import CARGO
from selfbench.runners._log import Outcome, Result, Run, table
from selfbench.runners._protocol import (
    REPORT_DESCRIPTOR,
    CanaryParts,
    CompiledProject,
    Part,
    Runner,
    VerifierParts,
    readonly,
)

__all__ = ["CARGO_CONTROL", "CARGO_SUMMARY", "RUNNER", "parse_cargo"]

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


_TEST_COMMAND = (
    'sh -c \'targets=; n=$#; while [ "$n" -gt 0 ]; do arg=$1; shift; n=$((n - 1)); '
    'case $arg in tests/*.rs) name=${arg#tests/}; targets="$targets --test ${name%.rs}";; '
    '*.rs) targets="$targets --lib";; *) set -- "$@" "$arg";; esac; done; '
    'exec cargo test $targets -- --exact "$@"\' cargo-test {tests}'
)

# The verifier's evidence for cargo test (`Runner`'s `report_*` and `verifier_*` parts, text that
# `bundle/evidence.py` puts together into `tests/test.sh`).
_CARGO_RUNNER = f"""#!/bin/bash
# cargo's target runner for the verifier: a test binary logs each result with libtest's --logfile;
# its exit status is recorded after them, each record naming the binary, on the descriptor the
# verifier opened (a file of root's that no process of the tests can open), which the test binary
# does not inherit.
binary="$1"
shift
log="$(mktemp -d /tmp/selfbench-libtest.XXXXXX)/log" || exit 1
"$binary" "$@" --logfile "$log" {REPORT_DESCRIPTOR}>&-
status=$?
{{
  sed -n -e 's/^\\(ok\\|failed\\|ignored\\) \\(.*\\)$/\\1\\t\\2/p' -- "$log" |
    jq -Rc --arg binary "$binary" 'split("\\t")
      | {{event: "test", outcome: .[0], name: (.[1:] | join("\\t")), binary: $binary}}'
  jq -nc --arg binary "$binary" --argjson status "$status" \\
    '{{event: "exit", status: $status, binary: $binary}}'
}} >&{REPORT_DESCRIPTOR}
# A binary whose only failing tests are the run's canaries (named in the file beside this one)
# tells cargo it passed, so that cargo, which stops at a first failing binary, runs the others;
# its record above keeps its status.
canaries="$(dirname -- "$0")/canaries"
if [ "$status" -eq 101 ] && [ -s "$canaries" ] && grep -q '^failed ' -- "$log" &&
  ! grep '^failed ' -- "$log" | grep -v -F -f "$canaries" | grep -q .; then
  status=0
fi
rm -rf -- "${{log%/log}}"
exit "$status"
"""

CARGO_CONTROL = r"""
{ line = $0; sub(/#.*/, "", line); gsub(/[[:space:]]/, "", line) }
line == "" { next }
line ~ /^\[/ {
  section = line
  controlled = section ~ /^\[(lib|\[(test|bin|bench|example)\]|workspace|replace|patch(\..*)?|profile(\..*)?)\]$/
  if (controlled) print section
  next
}
controlled { print section line; next }
section == "[package]" && line ~ /^"?(build|autotests|autobins|autoexamples|autobenches|autolib|links|workspace)"?=/ {
  print section line
  next
}
line ~ /(^|[{,.])"?path"?=/ { print section line }
"""  # noqa: E501 - an awk regular expression is one line
"""The awk program printing what of a `Cargo.toml` decides which code the tests build and how:
its target tables, profiles, patches and workspace, `[package]`'s build and auto-discovery keys,
and every `path` (a path dependency). Text, as the images have no TOML parser."""

_PASSED = '\n    map(select(.event == "test" and .outcome == "ok") | {file: "", name: .name})'
_FAILED = r"""
    . as $records
    | map(select((.event == "test" and .outcome == "failed" and (.name | canary | not))
        or (.event == "exit" and .status != 0 and (.binary as $binary
          | .status != 101
            or ([$records[] | select(.event == "test" and .outcome == "failed"
                                     and .binary == $binary) | .name] as $failed
                | ($failed | length) == 0 or any($failed[]; canary | not)))))
      | (.name // "a test binary exited \(.status)"))"""
# A test binary that exits 101 (libtest's failing tests) because its canaries failed, and only
# they, is not named: they must fail.
_TESTS = r"""
    map(select(.event == "test")
      | {name,
         outcome: (if .outcome == "ok" then "passed" elif .outcome == "failed" then "failed"
                   else "other" end)})"""


def _module_path(file: str) -> str | None:
    """The module path libtest names a test of `file` with (`a::b::`; "" for a crate root or an
    integration test), or None for a file whose module path its name does not tell."""
    parts = file.split("/")
    if len(parts) == 2 and parts[0] == "tests" and parts[1].endswith(".rs"):
        return ""
    if len(parts) < 2 or parts[0] != "src" or parts[1] == "bin" or not parts[-1].endswith(".rs"):
        return None
    if len(parts) == 2 and parts[1] in ("lib.rs", "main.rs"):
        return ""
    modules = [*parts[1:-1], parts[-1].removesuffix(".rs")]
    if modules[-1] == "mod":
        modules.pop()
    if not all(re.fullmatch(r"[a-z_][a-z0-9_]*", module) for module in modules):
        return None
    return "".join(f"{module}::" for module in modules)


def _canary_selector(file: str, name: str, selectors: Sequence[str]) -> str | None:  # noqa: ARG001
    path = _module_path(file)
    return None if path is None else f"{path}{name}"


CANARY = CanaryParts(
    text=(
        "\n\n#[test]\nfn @SELFBENCH_CANARY_A@() {\n"
        '    assert!("@SELFBENCH_VALUE_A@".is_empty(), "@SELFBENCH_VALUE_B@");\n'
        "}\n\n"
        "#[test]\nfn @SELFBENCH_CANARY_B@() {\n"
        '    assert_eq!("@SELFBENCH_VALUE_A@", "@SELFBENCH_VALUE_B@");\n'
        "}\n"
    ),
    suffixes=(".rs",),
    selector=_canary_selector,
    hosts=lambda file, _selectors: _module_path(file) is not None,
    fits_command=lambda command: (
        re.search(r"(?:^|\s)--\s", command.split("{tests}")[0]) is not None
    ),
)
"""cargo's canaries: a failing `assert!` and a failing `assert_eq!` of two sentinels, each
selected by its full name (the draft's command passes `--exact`)."""

_TOOLS = (
    """  cat >"$evidence_tools/cargo-runner" <<'CARGO_RUNNER'
"""
    + _CARGO_RUNNER
    + "CARGO_RUNNER\n"
)

_ENV = r"""
    open_report_channel "$1" root
    evidence_env=("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$evidence_tools/cargo-runner"
      "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$evidence_tools/cargo-runner")
    ;;
"""

CARGO_SUMMARY = r"""
/^ *Doc-tests / { doc = 1 }
/^ *Running / { doc = 0 }
!doc && /^test result: / {
  lines++
  for (at = 2; at <= NF; at++) {
    if ($at == "passed;") passed += $(at - 1)
    if ($at == "failed;") failed += $(at - 1)
  }
}
END { print lines + 0, passed + 0, failed + 0 }
"""
"""The awk program summing libtest's `test result:` lines of the test binaries cargo ran through
its runner (not the doc tests'): how many lines, tests passed, tests failed."""

_CROSS_CHECK = r"""
    local summary lines seen
    summary="$(awk "$cargo_summary" "$output")"
    lines="${summary%% *}"
    seen="$(jq -rs '[.[] | select(.event == "test") | .outcome]
      | "\(map(select(. == "ok")) | length) \(map(select(. == "failed")) | length)"' \
      -- "$report" 2>/dev/null)" || seen=""
    summary="${summary#* }"
    if [ "$lines" = 0 ]; then
      echo "cargo test printed no test result line"
    elif [ "$summary" != "$seen" ]; then
      echo "cargo test's result lines (${summary% *} passed, ${summary#* } failed) disagree" \
        "with its report (${seen% *} passed, ${seen#* } failed)"
    fi
    ;;
"""

RUNNER = Runner(
    entry=CARGO,
    label="cargo test",
    parse=parse_cargo,
    selector=lambda test_name: test_name,  # the test's full name, for `--exact`
    names_carry_file=False,
    compiled=CompiledProject(
        setup_command="cargo fetch",
        test_command=_TEST_COMMAND,
    ),
    tamper_names=("custom_test_frameworks", "run_tests_console", "reexport_test_harness_main"),
    evidence=True,
    selects_by_name=True,
    selects_files=False,  # its selectors name tests
    canary=CANARY,
    failed_status=101,
    verifier=VerifierParts(
        report_passed=Part(2, _PASSED),
        report_failed=Part(2, _FAILED),
        report_finished=Part(2, ' any(.[]; .event == "exit")'),
        report_tests=Part(2, _TESTS),
        report_of=Part(1, " true"),
        report_named=Part(0, " contains($name)"),
        report_selector=Part(0, " .name"),
        verifier_programs=readonly("cargo_control", CARGO_CONTROL)
        + readonly("cargo_summary", CARGO_SUMMARY),
        verifier_tools=Part(2, _TOOLS),
        verifier_executables=("cargo-runner",),
        verifier_prepare=(
            '    if [ "${#canary_names[@]}" -gt 0 ]; then\n'
            '      printf \'%s\\n\' "${canary_names[@]}" >"$evidence_tools/canaries"\n'
            "    fi\n"
        ),
        verifier_env=Part(4, _ENV),
        verifier_cross_check=Part(2, _CROSS_CHECK),
        verifier_restore=Part(2, ' restore_changed_configuration "$changed" ;;\n'),
        verifier_control_note=Part(2, "# Cargo.toml's part that `cargo_control` prints.\n"),
        verifier_control=Part(
            2, '\n    awk "$cargo_control" "$1" 2>/dev/null || echo unreadable\n'
        ),
    ),
)
