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
  2 skipped (8)` (later releases add `| 1 expected fail`: a `test.fails` that failed, which
  passes) or `Tests  no tests`, `No test files found, exiting with code 1`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from selfbench._json import iterated
from selfbench.runners._log import Outcome, Result, Run, table
from selfbench.runners._protocol import Part, VerifierParts
from selfbench.runners.node import REPORT_CHANNEL

__all__ = [
    "CONTROL",
    "CONTROL_NOTE",
    "CROSS_CHECK",
    "ENV",
    "FAILED",
    "FINISHED",
    "NO_FILES",
    "PACKAGE_JSON_KEYS",
    "PASSED",
    "REPORTER_ARGUMENTS",
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


def _json_result(report: Mapping[str, object]) -> Result:
    result = Result(zero="no tests")
    for suite in iterated(report.get("testResults")):
        for test in iterated(suite.get("assertionResults")) if isinstance(suite, dict) else ():
            if not isinstance(test, dict):
                continue
            titles = [*iterated(test.get("ancestorTitles")), test.get("title", "")]
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
    [.[] | .testResults[]?
     | (select(.status == "failed"
          and ([.assertionResults[]? | select(.status == "failed") | .fullName] as $failed
               | ($failed | length) == 0 or any($failed[]; canary | not)))
        | .name),
       (.assertionResults[]? | select(.status == "failed") | .fullName | select(canary | not))]
    + [.[] | select((.numRuntimeErrorTestSuites // 0) > 0) | "a test file did not run"]""",
)
"""A test file failed, or a test in it did; a file whose failing tests are all canaries is
not named (they must fail)."""
TESTS = Part(
    3,
    r"""
    [.[] | .testResults[]? | .assertionResults[]?
     | {name: .fullName,
        outcome: (if .status == "passed" or .status == "failed" then .status
                  else "other" end)}]""",
)
CANARY_TESTS = (
    'test_@SELFBENCH_CANARY_A@("@SELFBENCH_CANARY_A@", () => {\n'
    '  expect_@SELFBENCH_CANARY_A@("@SELFBENCH_VALUE_A@").toBe("@SELFBENCH_VALUE_B@");\n'
    "});\n"
    'test_@SELFBENCH_CANARY_A@("@SELFBENCH_CANARY_B@", () => {\n'
    '  expect_@SELFBENCH_CANARY_A@({ value: "@SELFBENCH_VALUE_A@" })'
    '.toEqual({ value: "@SELFBENCH_VALUE_B@" });\n'
    "});\n"
)
"""The two canary tests of the runners with `expect` (jest, vitest, bun): a failing `toBe` and a
failing `toEqual` on two sentinels, through `test_<name>` and `expect_<name>` (the first name)."""


def canary_text(module: str) -> str:
    """The canaries for a runner whose `test` and `expect` come from `module` (an ES import,
    which the runner's transform takes in any of its test files, wherever it stands)."""
    names = "test as test_@SELFBENCH_CANARY_A@, expect as expect_@SELFBENCH_CANARY_A@"
    return f'\n\nimport {{ {names} }} from "{module}";\n\n' + CANARY_TESTS


GLOBAL_CANARY_TEXT = (
    "\n\n// @ts-ignore - jest's globals, whatever the file imports\n"
    "const test_@SELFBENCH_CANARY_A@ = test, expect_@SELFBENCH_CANARY_A@ = expect;\n\n"
    + CANARY_TESTS
)
"""jest's canaries, through its globals (a test file may be CommonJS, where an import is not
taken)."""


JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
"""The endings of a JavaScript or TypeScript test file (a canary's host)."""
FINISHED = Part(3, '\n    length == 1 and (.[0].numTotalTests | type) == "number"')
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
REPORTER_ARGUMENTS = '"$SELFBENCH_REPORTER"'
"""The shell word naming the verifier's reporter module (a read-only file of root's, not the
report: its reporter writes to the descriptor the verifier opened)."""

_JEST_REPORTER = f"""\
// jest's reporter for the verifier, in jest's own process, made before any test runs: the
// run's results in the shape of jest's JSON report, written to the report channel (no argument
// or variable names it).
'use strict';
const fs = require('node:fs');

{REPORT_CHANNEL}
module.exports = class {{
  constructor() {{
    this.channel = reportChannel();
  }}

  onRunComplete(contexts, results) {{
    if (this.channel === null) {{
      return;
    }}
    const files = results.testResults.map((file) => ({{
      name: file.testFilePath,
      status: file.testExecError || file.numFailingTests > 0 ? 'failed' : 'passed',
      assertionResults: file.testResults.map((test) => ({{
        fullName: test.fullName, status: test.status,
      }})),
    }}));
    const report = {{
      numTotalTests: results.numTotalTests,
      numRuntimeErrorTestSuites: results.numRuntimeErrorTestSuites,
      testResults: files,
    }};
    fs.writeSync(this.channel, JSON.stringify(report) + '\\n');
  }}
}};
"""

_VITEST_REPORTER = f"""\
// vitest's reporter for the verifier, in vitest's own process, made before any test runs: the
// run's results in the shape of jest's JSON report, written to the report channel (no argument
// or variable names it).
import fs from 'node:fs';

{REPORT_CHANNEL}
const STATUS = {{ pass: 'passed', fail: 'failed' }};

function tests(task, titles, found) {{
  for (const child of task.tasks ?? []) {{
    const path = [...titles, child.name];
    if (child.type === 'suite') {{
      tests(child, path, found);
    }} else {{
      found.push({{ fullName: path.join(' '), status: STATUS[child.result?.state] ?? 'skipped' }});
    }}
  }}
  return found;
}}

// vitest 3 and later end a run with onTestRunEnd (its modules carry the files as `task`), and
// vitest 4 no longer calls onFinished, which vitest 3 calls too: the first call writes the report.
export default class {{
  constructor() {{
    this.channel = reportChannel();
    this.written = false;
  }}

  onTestRunEnd(modules = [], errors = []) {{
    this.write(modules.map((module) => module.task), errors);
  }}

  onFinished(files = [], errors = []) {{
    this.write(files, errors);
  }}

  write(files, errors) {{
    if (this.channel === null || this.written) {{
      return;
    }}
    this.written = true;
    const results = files.map((file) => ({{
      name: file.filepath,
      status: file.result?.state === 'fail' ? 'failed' : 'passed',
      assertionResults: tests(file, [], []),
    }}));
    const report = {{
      numTotalTests: results.reduce((total, file) => total + file.assertionResults.length, 0),
      numRuntimeErrorTestSuites: errors.length,
      testResults: results,
    }};
    fs.writeSync(this.channel, JSON.stringify(report) + '\\n');
  }}
}}
"""

TOOLS = Part(
    4,
    """  cat >"$evidence_tools/jest-reporter.cjs" <<'JEST_REPORTER'
"""
    + _JEST_REPORTER
    + """JEST_REPORTER
  cat >"$evidence_tools/vitest-reporter.mjs" <<'VITEST_REPORTER'
"""
    + _VITEST_REPORTER
    + "VITEST_REPORTER\n",
)
ENV = Part(
    3,
    r"""
    open_report_channel "$1" "$verifier_user"
    local reporter=jest-reporter.cjs
    if [ "$runner" = vitest ]; then
      reporter=vitest-reporter.mjs
    fi
    evidence_env=("SELFBENCH_REPORTER=$evidence_tools/$reporter")
    ;;
""",
)
CROSS_CHECK = Part(
    0,
    r"""
    local line passed expected failed seen
    line="$(sed -e 's/\x1b\[[0-9;]*m//g' -- "$output" | grep -aE '^ *Tests:? +' | tail -n 1)"
    passed="$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '^[0-9]+')" || passed=0
    expected="$(grep -oE '[0-9]+ expected fail' <<<"$line" | grep -oE '^[0-9]+')" || expected=0
    passed=$((passed + expected))
    failed="$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '^[0-9]+')" || failed=0
    seen="$(jq -rs '[.[0].testResults[]?.assertionResults[]?.status]
      | "\(map(select(. == "passed")) | length) \(map(select(. == "failed")) | length)"' \
      -- "$report" 2>/dev/null)" || seen=""
    if [ -z "$line" ]; then
      echo "$runner printed no summary line"
    elif [ "$passed $failed" != "$seen" ]; then
      echo "$runner's summary line (${line#"${line%%[! ]*}"}) disagrees with its report" \
        "(${seen% *} passed, ${seen#* } failed)"
    fi
    ;;
""",
)
VERIFIER = VerifierParts(
    report_passed=PASSED,
    report_failed=FAILED,
    report_finished=FINISHED,
    report_tests=TESTS,
    verifier_tools=TOOLS,
    verifier_env=ENV,
    verifier_cross_check=CROSS_CHECK,
    verifier_restore=RESTORE,
    verifier_control_note=CONTROL_NOTE,
    verifier_control=CONTROL,
)
"""Either runner's parts of the verifier's evidence functions (the same arm serves both)."""
