"""node --test: its command, its TAP and spec reporters (nested tests named `suite > test`), and
the files every Node runner reads (transforms, package managers' configuration)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from selfbench.runners._index import NODE
from selfbench.runners._log import Outcome, Result, Run, table
from selfbench.runners._protocol import (
    REPORT_DESCRIPTOR,
    REPORT_ROOT,
    V8_COVERAGE,
    CanaryParts,
    NodeProject,
    Part,
    Runner,
    VerifierParts,
    by_file,
    readonly,
)

__all__ = ["REPORT_CHANNEL", "RUNNER", "parse_node"]

_SUMMARY_MARKS = ("#", "\u2139")  # TAP's, the spec reporter's
_SUMMARY_COUNTS = ("tests", "pass", "fail", "cancelled", "skipped", "todo")
_NODE_SUMMARY_RE = re.compile(
    f"(?:{'|'.join(_SUMMARY_MARKS)}) ({'|'.join(_SUMMARY_COUNTS)}) (\\d{{1,9}})"
)
_SUMMARY_LINE = f"^({'|'.join(_SUMMARY_MARKS)}) ({'|'.join(_SUMMARY_COUNTS)}) [0-9]{{1,9}}$"
"""`_NODE_SUMMARY_RE` as an extended regular expression (`grep -E`) for a whole line: a count of
node's summary, as the log parser reads it."""
_TAP_RE = re.compile(r"(not )?ok \d++(?: - (.*))?")
_SPEC_MARKS = table("✔", "✖", "﹣")
_SPEC_RE = re.compile(r"(.*?) \(\d++(?:\.\d++)?ms\)(?: # (.*))?")
_TAP_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_TAP_ESCAPE_RE = re.compile(r"\\(.)")
_PATTERN_SKIP = "test name does not match pattern"


class _Nest:
    """The suites enclosing a line, by indentation, to give a nested test its full name."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []

    def open(self, indent: int, name: str) -> None:
        self.close(indent)
        self.stack.append((indent, name))

    def close(self, indent: int) -> None:
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()

    def name(self, indent: int, name: str) -> str:
        self.close(indent)
        return " > ".join([*(parent for _, parent in self.stack), name])


@dataclass(slots=True)
class _NodeState:
    result: Result = field(default_factory=Result)
    nest: _Nest = field(default_factory=_Nest)
    summary: dict[str, int] = field(default_factory=dict)
    pattern_skips: int = 0
    other_skips: int = 0

    def record(self, indent: int, name: str, outcome: Outcome, directive: str) -> None:
        self.result.record(self.nest.name(indent, name), outcome)
        if directive.lower().endswith(_PATTERN_SKIP):
            self.pattern_skips += 1
        elif outcome == "skipped":
            self.other_skips += 1


def parse_node(run: Run) -> Result:
    state = _NodeState()
    if _node_is_tap(run.lines):
        _read_tap(run.lines, state)
    else:
        _read_spec(run.lines, state)
    result, summary = state.result, state.summary
    empty_files = _node_empty_files(result, run.words)
    if summary:
        result.counts = (
            summary.get("pass", 0) - empty_files,
            summary.get("fail", 0) + summary.get("cancelled", 0),
            summary.get("skipped", 0) + summary.get("todo", 0),
        )
    by_pattern = any(w.startswith("--test-name-pattern") for w in run.words) and not result.tests
    result.selector_miss = (state.pattern_skips > 0 and state.other_skips == 0) or by_pattern
    result.zero = "a selected file holds no test" if empty_files else "tests 0"
    return result


_NODE_FILE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def _node_empty_files(result: Result, words: Sequence[str]) -> int:
    """Drop the entries Node 20 reports for a selected file that holds no test; their number.

    Node 20 runs each file as a subtest named by its absolute path; a file with tests reports
    them instead, so a passing entry named after a selected file is a file that ran no test.
    """
    files = [word.lstrip("./") for word in words if word.endswith(_NODE_FILE_SUFFIXES)]
    empty = [
        name
        for name, outcome in result.tests.items()
        if outcome == "passed"
        and name.startswith("/")
        and any(name.endswith(f"/{file}") for file in files if file)
    ]
    for name in empty:
        del result.tests[name]
    return len(empty)


def _node_is_tap(lines: list[str]) -> bool:
    """Whether the log is TAP: the kind of its last summary line, else a `TAP version` line."""
    for line in reversed(lines):
        if _NODE_SUMMARY_RE.fullmatch(line):
            return line.startswith("#")
    return "TAP version 13" in lines


def _node_summary(line: str, summary: dict[str, int]) -> None:
    match = _NODE_SUMMARY_RE.fullmatch(line)
    if match is not None:
        summary[match[1]] = int(match[2])


def _read_tap(lines: list[str], state: _NodeState) -> None:
    yaml_end: str | None = None
    for line in lines:
        if yaml_end is not None:
            yaml_end = None if line == yaml_end else yaml_end
            continue
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        if text == "---" and indent:
            yaml_end = line[:indent] + "..."
        elif text.startswith("# Subtest: "):
            state.nest.open(indent, _tap_unescape(text[len("# Subtest: ") :]))
        elif (match := _TAP_RE.fullmatch(text)) is not None:
            name, _, directive = (match[2] or "").partition(" # ")
            skipped = directive[:4].upper() in ("SKIP", "TODO")
            outcome: Outcome = "skipped" if skipped else "failed" if match[1] else "passed"
            state.record(indent, _tap_unescape(name), outcome, directive)
        elif indent == 0:
            _node_summary(line, state.summary)


def _tap_unescape(text: str) -> str:
    return _TAP_ESCAPE_RE.sub(lambda match: _TAP_ESCAPES.get(match[1], match[1]), text)


def _read_spec(lines: list[str], state: _NodeState) -> None:
    recap = False
    for line in lines:
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        if line == "✖ failing tests:":
            recap = True  # the reporter repeats each failure, without its suite
        elif text.startswith("▶ ") and not recap:
            state.nest.open(indent, _spec_name(text[2:])[0])
        elif text[:1] in _SPEC_MARKS and text[1:2] == " " and not recap:
            name, directive = _spec_name(text[2:])
            outcome = _SPEC_MARKS[text[0]]
            if directive[:4].upper() in ("SKIP", "TODO"):
                outcome = "skipped"
            state.record(indent, name, outcome, directive)
        elif indent == 0:
            _node_summary(line, state.summary)


def _spec_name(text: str) -> tuple[str, str]:
    """`name (1.2ms) # directive` as (name, directive)."""
    match = _SPEC_RE.fullmatch(text)
    return (text, "") if match is None else (match[1], match[2] or "")


def _script_command(kept: Sequence[str], local: bool) -> list[str]:  # noqa: ARG001 - the shape
    return ["node", *kept, "--test"]  # the verifier adds its reporters (NODE_OPTIONS)


# The verifier's evidence for node --test (`Runner`'s `report_*` and `verifier_*` parts, text that
# `bundle/evidence.py` puts together into `tests/test.sh`).
REPORT_CHANNEL = f"""\
// The report channel: the descriptor {REPORT_DESCRIPTOR} the verifier opened on a file in a
// directory of root's, held by this process or, for a runner that npx or npm started (node passes
// no other descriptor to a child), by its nearest ancestor that holds it; opened again through
// /proc, from the start (a later run of the runner in the same command replaces an earlier one's
// records).
function reportChannel() {{
  let pid = process.pid;
  while (pid > 1) {{
    const link = '/proc/' + pid + '/fd/{REPORT_DESCRIPTOR}';
    try {{
      if (fs.readlinkSync(link).startsWith('{REPORT_ROOT}')) {{
        return fs.openSync(link, 'w');
      }}
    }} catch {{}}
    try {{
      const stat = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    }} catch {{
      return null;
    }}
  }}
  return null;
}}
"""
"""The JavaScript function the Node runners' reporters find their report channel with (it uses
`fs`, node's file module): a descriptor, or null when no process holds the channel."""

_REPORTER = f"""\
// node --test's reporter for the verifier, in the runner's own process, loaded before any test
// file's process starts: each test's outcome, written to the report channel (no argument or
// variable names it).
import fs from 'node:fs';

{REPORT_CHANNEL}
const channel = reportChannel();

export default async function* reporter(source) {{
  for await (const event of source) {{
    if ((event.type === 'test:pass' || event.type === 'test:fail') && channel !== null) {{
      const data = event.data;
      fs.writeSync(channel, JSON.stringify({{
        event: event.type, file: data.file ?? '', name: data.name,
        type: data.details?.type ?? '', todo: Boolean(data.todo), skip: Boolean(data.skip),
      }}) + '\\n');
    }}
  }}
  if (channel !== null) {{
    fs.writeSync(channel, '{{"event":"finish"}}\\n');
  }}
}}
"""

_PASSED = r"""
    map(select(.event == "test:pass" and .type != "suite" and .name != .file)
      | {file: .file, name: ""})"""
_FAILED = r"""
    . as $records
    | map(select(.event == "test:fail" and (.name | canary | not)
        and (.name != .file or (.file as $file
          | any($records[]; .event == "test:fail" and .file == $file and (.name | canary))
          | not)))
      | .name)"""
# A test file's own failure is its canaries' when a canary of that file failed: its other
# failing tests are named on their own.
_TESTS = r"""
    map(select((.event == "test:pass" or .event == "test:fail") and .type != "suite"
        and .name != .file)
      | {name, outcome: (if .skip == true then "other"
                       elif .event == "test:pass" then "passed" else "failed" end)})"""
CANARY = CanaryParts(
    text=(
        '\n\nimport("node:test").then(({ test }) =>\n'
        '  import("node:assert").then(({ default: assert }) => {\n'
        '  test("@SELFBENCH_CANARY_A@", () => {\n'
        '    assert.strictEqual("@SELFBENCH_VALUE_A@", "@SELFBENCH_VALUE_B@");\n'
        "  });\n"
        '  test("@SELFBENCH_CANARY_B@", () => {\n'
        '    assert.deepStrictEqual({ value: "@SELFBENCH_VALUE_A@" },'
        ' { value: "@SELFBENCH_VALUE_B@" });\n'
        "  });\n"
        "}));\n"
    ),
    suffixes=(".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"),
    programs=("node", "nodejs"),
    refused_options=("--test-name-pattern", "--test-skip-pattern", "--test-only"),
)
"""node's canaries: `assert`'s `strictEqual` and `deepStrictEqual` on two sentinels, registered
through `import()`, which CommonJS and ES modules both take; the test file is selected, so they
run."""
_FINISHED = ' any(.[]; .event == "finish")'

# The summary's last counts (node prints `tests`, `fail` and `cancelled` with its TAP summary, and
# with the spec reporter's) beside the report's: its tests (not suites), and those that failed (a
# `todo` test that failed is one of the summary's `todo`, not `fail`).
_CROSS_CHECK = r"""
    local summary seen
    summary="$(grep -aE -- "$node_summary" "$output" | awk '{ count[$2] = $3 }
      END { if (NR) print count["tests"] + 0, count["fail"] + count["cancelled"] }')"
    seen="$(jq -rs 'map(select(.event == "test:pass" or .event == "test:fail")
      | select(.type != "suite"))
      | "\(length) \(map(select(.event == "test:fail" and .todo != true)) | length)"' \
      -- "$report" 2>/dev/null)" || seen=""
    if [ -z "$summary" ]; then
      echo "node --test printed no summary line"
    elif [ "$summary" != "$seen" ]; then
      echo "node --test's summary (${summary% *} tests, ${summary#* } failed) disagrees with its" \
        "report (${seen% *} tests, ${seen#* } failed)"
    fi
    ;;
"""

_TOOLS = (
    """  cat >"$evidence_tools/reporter.mjs" <<'NODE_REPORTER'
"""
    + _REPORTER
    + "NODE_REPORTER\n"
)

_ENV = r"""
    open_report_channel "$1" "$verifier_user"
    evidence_env=("NODE_OPTIONS=--test-reporter=tap --test-reporter-destination=stdout \
--test-reporter=$evidence_tools/reporter.mjs --test-reporter-destination=stderr")
    ;;
"""

RUNNER = Runner(
    entry=NODE,
    label="node --test",
    parse=parse_node,
    selector=by_file("node-test"),
    names_carry_file=True,
    node=NodeProject(
        script_command=_script_command,
        kept_options=frozenset(
            {"--import", "--require", "-r", "--loader", "--experimental-loader", "-C"}
        ),
        import_pattern=r"""from\s+['"]node:test['"]|require\(\s*['"]node:test['"]\s*\)""",
    ),
    tamper_names=("node:test/reporters", "--test-reporter", "test:pass", "test:fail"),
    evidence=True,
    selects_files=True,
    coverage=V8_COVERAGE,
    canary=CANARY,
    verifier=VerifierParts(
        report_passed=Part(4, _PASSED),
        report_failed=Part(4, _FAILED),
        report_finished=Part(4, _FINISHED),
        report_tests=Part(4, _TESTS),
        verifier_programs=readonly("node_summary", _SUMMARY_LINE, expands=False),
        verifier_tools=Part(1, _TOOLS),
        verifier_env=Part(1, _ENV),
        verifier_cross_check=Part(1, _CROSS_CHECK),
    ),
)
