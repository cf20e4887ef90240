"""bun test: its command, its log's `(pass) name [1.2ms]` or `✓ name`, the counts, and its
"nothing matched" lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from selfbench.runners._index import BUN
from selfbench.runners._jest_family import JS_SUFFIXES, canary_text
from selfbench.runners._log import NO_MATCH, Outcome, Result, Run, table
from selfbench.runners._protocol import (
    REPORT_DESCRIPTOR_PATH,
    CanaryParts,
    NodeProject,
    Part,
    Runner,
    VerifierParts,
    by_file,
    readonly,
)

__all__ = ["BUN_JUNIT", "BUN_RECORDS", "RUNNER", "parse_bun"]

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


def _script_command(kept: Sequence[str], local: bool) -> list[str]:  # noqa: ARG001 - the shape
    return ["bun", "test", *kept]


# The verifier's evidence for bun test (`Runner`'s `report_*` and `verifier_*` parts, text that
# `bundle/evidence.py` puts together into `tests/test.sh`): bun's JUnit report, which bun writes
# into the descriptor the verifier opened (a file of the verifier user's in a directory of root's:
# no argument or variable names it), read by root after the run with awk and jq, not with a
# program the agent's phase could have changed.
BUN_JUNIT = r"""
function attribute(name) {
  if (!match($0, " " name "=\"[^\"]*\"")) return ""
  return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
}
/^ *<testcase / {
  file = attribute("file")
  name = attribute("name")
  outcome = "passed"
  if ($0 ~ /\/>$/) print "test\tpassed\t" file "\t" name
  else open = 1
  next
}
open && /^ *<(failure|error)[ >\/]/ { outcome = "failed" }
open && /^ *<skipped[ >\/]/ { outcome = "skipped" }
open && /^ *<\/testcase>/ { print "test\t" outcome "\t" file "\t" name; open = 0 }
/^<\/testsuites>/ { print "finish" }
"""
"""The awk program reading bun's JUnit report (an element a line, as bun writes it): a
tab-separated line per test case (`test`, its outcome, file and name, XML-escaped), then `finish`
when the report is whole."""

BUN_RECORDS = r"""
def text: gsub("&lt;"; "<") | gsub("&gt;"; ">") | gsub("&quot;"; "\"") | gsub("&apos;"; "'")
  | gsub("&#10;"; "\n") | gsub("&amp;"; "&");
split("\t")
| if .[0] == "test" then {event: "test", outcome: .[1], file: (.[2] | text), name: (.[3] | text)}
  else {event: "finish"} end
"""
"""The jq program turning `BUN_JUNIT`'s lines into the report's JSON lines."""

_READER = """
    head -c 67108864 -- "$1" | awk "$bun_junit" | jq -Rc "$bun_records"
    ;;
"""

_CROSS_CHECK = r"""
    local passed failed seen
    passed="$(grep -aE '^ *[0-9]+ pass$' -- "$output" | tail -n 1 | tr -dc 0-9)"
    failed="$(grep -aE '^ *[0-9]+ fail$' -- "$output" | tail -n 1 | tr -dc 0-9)"
    seen="$(jq -rs 'map(select(.event == "test") | .outcome)
      | "\(map(select(. == "passed")) | length) \(map(select(. == "failed")) | length)"' \
      -- "$report" 2>/dev/null)" || seen=""
    if [ -z "$passed" ]; then
      echo "bun test printed no summary line"
    elif [ "$passed ${failed:-0}" != "$seen" ]; then
      echo "bun test's summary ($passed pass, ${failed:-0} fail) disagrees with its report" \
        "(${seen% *} passed, ${seen#* } failed)"
    fi
    ;;
"""
_PASSED = '\n    map(select(.event == "test" and .outcome == "passed") | {file, name: ""})'
_FAILED = r"""
    map(select(.event == "test" and .outcome == "failed") | "\(.file) \(.name)"
      | select(canary | not))"""
_TESTS = r"""
    map(select(.event == "test")
      | {name: "\(.file) \(.name)",
         outcome: (if .outcome == "passed" or .outcome == "failed" then .outcome
                   else "other" end)})"""
_ENV = '\n    open_report_channel "$1" "$verifier_user"\n    evidence_env=()\n    ;;\n'

RUNNER = Runner(
    entry=BUN,
    label="bun test",
    parse=parse_bun,
    selector=by_file("bun"),
    names_carry_file=True,
    node=NodeProject(
        script_command=_script_command,
        kept_options=frozenset({"--preload", "--config", "-c"}),
        import_pattern=r"""from\s+['"]bun:test['"]""",
    ),
    tamper_names=("--reporter-outfile", "--reporter=junit"),
    evidence=True,
    selects_files=False,
    report_arguments=f"--reporter=junit --reporter-outfile={REPORT_DESCRIPTOR_PATH}",
    canary=CanaryParts(
        text=canary_text("bun:test"),
        suffixes=JS_SUFFIXES,
        refused_options=("--bail", "-t", "--test-name-pattern", "--only"),
    ),
    verifier=VerifierParts(
        report_passed=Part(5, _PASSED),
        report_failed=Part(5, _FAILED),
        report_tests=Part(5, _TESTS),
        report_finished=Part(5, ' any(.[]; .event == "finish")'),
        report_of=Part(2, " (.file | under($want.file)) or (.file | under($want.path))"),
        verifier_programs=readonly("bun_junit", BUN_JUNIT) + readonly("bun_records", BUN_RECORDS),
        verifier_env=Part(5, _ENV),
        verifier_reader=Part(0, _READER),
        verifier_cross_check=Part(1, _CROSS_CHECK),
    ),
)
