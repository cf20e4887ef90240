"""Per-test outcomes read from a test runner's log, and whether the suite really ran. Pure.

SPEC §7, Beyond, *the suite really ran*: for pytest, node's test runner, bun test, go test and
cargo test the report carries per-test outcomes parsed from the log, and a command that exits 0
while running no test counts as a failure, with that reason.

The runner comes from the command (`detect_runner`), never from the log. The log is hostile
text: ANSI escapes are removed, it is read one line at a time (`str.splitlines`, trailing blanks
dropped), every pattern is anchored and linear, and a line that fits no pattern is noise. Lines:

* pytest: `<nodeid> STATUS [ NN%]` (`-v`), `[gwN] [ NN%] STATUS <nodeid>` (xdist `-v`),
  `STATUS <nodeid>[ - message]` (`-rA`, short summary), the final summary
  `[=== ]N word, N word in 1.23s[ ===]` or `no tests ran in …` (the last one counts), and
  progress lines `[file ].Fsx [ NN%]`, counted only when there is no summary (`-qq`).
* node: TAP (`# Subtest: name`, `[indent](not )ok N - name[ # SKIP|TODO …]`, YAML blocks from
  `---` to `...` skipped, `# tests|pass|fail|cancelled|skipped|todo N`) or the spec reporter
  (`▶ suite`, `✔|✖|﹣ name (1.2ms)[ # …]`, an info sign then `tests N`, `pass N`, …; the
  `✖ failing tests:` recap is skipped). The kind of the last summary line decides which: test
  output is `# `-prefixed in TAP but raw in spec.
* bun: `(pass|fail|skip|todo) name [1.2ms]` or `✓ ✗ » ✎ name`, ` N pass|fail|skip|todo|error`,
  `error: regex … matched 0 tests`, `The following filters did not match any test files`,
  `No tests found!`.
* go: `[indent]--- PASS|FAIL|SKIP: Name (0.00s)`, `ok  ⇥pkg⇥…[ [no tests to run]]`,
  `FAIL⇥pkg…`, `?   ⇥pkg⇥[no test files]`, `testing: warning: no tests to run`,
  `go: warning: "…" matched no packages`.
* cargo: `test name ... ok|FAILED|ignored[, reason]`, `name --- FAILED` (`-q`),
  `test result: ok. N passed; N failed; N ignored; N measured; N filtered out…` (summed over
  test binaries); the `failures:` section up to `test result:` is captured output, skipped.

Nested node tests are named `suite > test`. A name reported twice keeps its worst outcome
(failed over passed over skipped). Counts are the runner's own summary when it prints one (pytest,
node, bun, cargo), else counted from the names (go `-v`); zero counts without a "ran no test"
reason mean the log did not say (go without `-v`).

Each runner's parser and its command's detection live in its module of `selfbench.runners`; this
package keeps what every runner shares: the log's cleaning and the counts and "ran no test"
reason made of a parser's findings.
"""

from __future__ import annotations

import re

from selfbench.outcomes._core import Outcomes
from selfbench.runners import (
    NO_MATCH,
    Outcome,
    Runner,
    commands,
    detect,
    detect_name,
    log_runners,
)
from selfbench.runners._log import INDEX, Result, Run

__all__ = ["NO_MATCH", "RUNNERS", "Outcome", "Outcomes", "detect_runner", "parse_outcomes"]

RUNNERS = log_runners()
"""The names `Outcomes.runner` can take."""

detect_runner = detect_name
"""The test runner a shell command runs: one of `RUNNERS`, or None when unknown or mixed."""

# CSI sequences, other escapes (`ESC ( B`, `ESC =`), a lone ESC; possessive, so linear on any input.
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*+[ -/]*+[@-~]|[ -/]*+[0-~]|)")


def parse_outcomes(command: str, output: str, exit_code: int) -> Outcomes:
    """Read per-test outcomes, counts and the "ran no test" reason from a test command's log.

    `output` is the command's stdout and stderr together; `exit_code` is its exit status.
    """
    runner = detect(command)
    if runner is None:
        return Outcomes(None, (), 0, 0, 0, None, exit_code)
    lines = [line.rstrip() for line in _ANSI_RE.sub("", output).splitlines()]
    words = [word for argv in commands(command) for word in argv]
    return _finish(runner, runner.parse(Run(lines, words, exit_code)), exit_code)


def _finish(runner: Runner, result: Result, exit_code: int) -> Outcomes:
    counts = result.counts
    if counts is None and result.tests:
        tally = [0, 0, 0]
        for outcome in result.tests.values():
            tally[INDEX[outcome]] += 1
        counts = (tally[0], tally[1], tally[2])
    no_tests = result.no_tests or _zero_reason(runner, counts, result)
    passed, failed, skipped = counts or (0, 0, 0)
    tests = tuple(result.tests.items())
    return Outcomes(runner.name, tests, passed, failed, skipped, no_tests, exit_code)


def _zero_reason(runner: Runner, counts: tuple[int, int, int] | None, result: Result) -> str | None:
    """Why counts with no passed and no failed test mean "ran no test"; None otherwise."""
    if counts is None or counts[0] or counts[1]:
        return None
    if result.selector_miss:
        return NO_MATCH
    evidence = f"{counts[2]} skipped" if counts[2] else result.zero
    return f"{runner.label} ran no test ({evidence})"
