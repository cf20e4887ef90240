"""The verifier's evidence: each wanted test seen passing in the runner's own report.

Pure text, the part of `tests/test.sh` that reads the runners' reports. For each runner in
`EVIDENCE_RUNNERS` the verifier (root) writes a reporter into a fresh root-owned directory, has the
runner write its report into a fresh directory with a random name inside a directory of root's that
no one else can list, kills every process of the verifier user, and only then reads the report: the
run must have finished, no test may have failed, each selector must name at least one test seen
passing, and the runner's own output must not disagree with the report (`cross_check_report`). An
agent's patch cannot place either directory, and cannot change what loads the reporter (see
`_runner_files.py`).

The channel. A runner's report reaches root through a descriptor, not a path: in its
`set_evidence_env` arm the runner's `open_report_channel` makes `report.jsonl` in the report's
directory, which becomes root's alone (mode 0700), and the test command inherits the file opened
for appending on `REPORT_DESCRIPTOR`. No argument or environment of any process names it. Who
owns the file depends on how the reporter reaches it:

* root's, for a reporter that writes to the inherited descriptor itself, so no process of the
  verifier user can open it again, nor the path /proc shows for the descriptor: pytest's (and so
  unittest's tests) and cargo's target runner, a shell script whose test binaries do not inherit
  the descriptor;
* the verifier user's, for one that must reopen it by a name, reachable through that descriptor
  only: bun opens its JUnit report by `REPORT_DESCRIPTOR_PATH`; node passes no descriptor but
  the standard three to a child (and npx and npm start the runner as one), so node's, jest's and
  vitest's reporters, in the runner's own process, open it again through `/proc/<pid>/fd` of the
  nearest process that holds it, from the start (a later run in the same command replaces an
  earlier one's records).

go's report is its events, which root takes from the output it captured (`show_output`).

The witness. pytest's reporter, loaded by `-p` before any conftest or project module, moves the
channel to a descriptor the tests' processes do not inherit and closes the inherited number; it
reads, on `KEY_DESCRIPTOR`, a fresh key root wrote beside the report (`open_report_channel …
signed`: root's, mode 0400), closes that too, and signs every record (HMAC-SHA256 over its run
id, its number in that run and its content). Root reads a report through `read_report`: pytest's
records up to the first one not signed or out of order, then a `forged` record naming the line;
bun's JUnit report turned into records with awk and jq (`bun.BUN_JUNIT`, `bun.BUN_RECORDS`), not
with a program the agent's phase could have changed; every other report's first 64 MiB. pytest's
reporter records, when it loads, the callables the verdict rests on (`Function.runtest`,
`TestCaseFunction.runtest`, `unittest.TestCase.run`, pytest's call and report machinery, pluggy's
hook calls, its own hooks; each object and its code) and marks a test failed, `the runner's
machinery was changed: <names>`, when one differs as the test's setup begins (which judges its
setup and call) or as its teardown ends (which judges it and every later test), or when the
session ends; it records only the session it was loaded for.

The cross-check. `cross_check_report` compares the records with the runner's own summary in the
output root captured, and requires that summary: pytest's final summary line (tests passed;
tests failed and errors, where the report says pytest prints one), bun's `N pass`/`N fail`,
jest's `Tests:`, vitest's `Tests`, go's `ok`/`FAIL` package lines, libtest's `test result:`
lines, node's `tests`, `fail` and `cancelled` counts (TAP's `# fail N`, the spec reporter's
`\u2139 fail N`). The command must exit 0 beside it. When the report and those signals disagree (it
shows every wanted test passing but the summary or the exit status does not, or it does not and
the command exits 0: `signals_disagree`), the command runs once more, fresh (a new report
directory, channel and key), and that run decides: its report must show every wanted test
passing, its summary and exit status must agree, and the first run's report must have shown no
test failing (`tests_failed`; a test failing there and passing on the rerun is a disagreement).
A run whose signals agree runs once.

What this guarantees: code the agent wrote cannot find a report by any name (a variable, an
argument, a path under /tmp, for pytest's and cargo's a path under /proc), cannot reopen pytest's
or cargo's, cannot add records to pytest's through the descriptor it finds among its own (they
are not signed), and cannot swap pytest's or unittest's way of running a test, or the reporter's
hooks, without the tests it touches failing; records that the runner's own summary does not also
show, or a run that ends before the runner prints its summary, fail. Beside that:

* go's framing is taken only when marked: every test binary runs through a `-exec` that prints
  a marked framing line naming no test first, so test2json reads no unmarked line as framing (an
  `init` printing `--- PASS` lines prints output, not events); go before 1.20 marks nothing and
  runs without it;
* an agent's patch that adds a line naming one of `VERIFIER_NAMES` (the variable, the plugin,
  the directories, test2json and its framing and escaped marker, node's destination option,
  libtest's `--logfile`, `/proc/self/fd`, `/dev/fd/`, `/environ`) scores 0, unless the gold patch
  adds the same name. It reads the added lines of tracked text files and every line of new text
  files, after the runner-control paths are left out and restored. An honest solution that
  needs such a name where the gold patch does not use it scores 0: the names are chosen rare.

What remains out of reach: the test process is shared with the agent's code. Code that reads
pytest's key out of the reporter's memory, signs its own records and writes the summary line
they imply to the output pytest's capture keeps aside still forges a verdict; so can code that
registers a plugin at run time or patches a callable not on the list. For node, jest, vitest and
bun, code that spells the names apart can reach the channel through an ancestor's
`/proc/<pid>/fd`, beside the reporter's own records (which still show the held-out tests
failing), and code running in the reporter's own process (bun's tests, jest's in-band run of one
file) can write a whole report into the channel and print the summary to match. Not covered
either: a test binary's own arguments (libtest's log file, which that binary writes anyway),
marked test2json framing built from a computed ^V, and a process of the verifier user that takes
a descriptor from another with ptrace or `pidfd_getfd` where the kernel lets a user trace its
own processes (no Yama). Against these the held-out tests' assertions are what stand.

What each runner contributes to the script is its `Runner`'s `report_*` and `verifier_*` fields
(jq branches, shell case arms, reporters, its own functions); this module assembles them from the
registry, in the order of each part's rank. Per runner, the report is:

* pytest: a plugin (its `reporter_module`) loaded by `PYTEST_ADDOPTS`, one JSON line per event,
  on the inherited descriptor;
* node: a `--test-reporter` module given in `NODE_OPTIONS`, beside the usual TAP on stdout;
* bun: its JUnit report (`--reporter=junit`), an element a line, read with `BUN_JUNIT`;
* go: `GOFLAGS=-json -count=1` (no cached result stands for a run), with `GOTOOLCHAIN=local`,
  `GOWORK=off`, and a private copy of the setup's build cache: the events `test2json` writes
  for the test binaries (a binary's own output is one of their `Output` fields, so a printed line
  cannot pass for an event); the log shows the text those events carry. Each `Test` function of
  the `_test.go` files of a selected package (the base's, and the held-out ones: an agent's change
  to a `_test.go` file is left out) must be seen passing or skipped, so a `TestMain` or an `init`
  that narrows `-test.run` does not count;
* jest and vitest: a reporter module of the verifier's, asked for on the command line after the
  selectors (`REPORT_ARGUMENTS`), writing jest's JSON report shape; an agent's change to
  `package.json`'s `jest`, `babel` or `scripts` restores the file, and their configuration files
  are runner-control paths;
* cargo: a target runner (`CARGO_TARGET_<triple>_RUNNER`) that runs each test binary with
  libtest's `--logfile` and records its exit status: every binary must exit 0, and each selector
  (a libtest filter) must be contained in the name of a test seen `ok`. An agent's change to
  `Cargo.toml`'s targets, build script, paths or patches is restored to the base
  (`runners.cargo.CARGO_CONTROL`).
"""

from __future__ import annotations

from collections.abc import Callable

from selfbench._runner_files import RESTORED_MANIFESTS
from selfbench.runners import (
    COMMAND_RUNNERS,
    KEY_DESCRIPTOR,
    REPORT_DESCRIPTOR,
    REPORT_ROOT,
    Part,
    Runner,
)

__all__ = [
    "EVIDENCE_BODY",
    "EVIDENCE_QUERY",
    "EVIDENCE_RUNNERS",
    "FILE_SELECTING_RUNNERS",
    "FORGED_LABEL",
    "KEY_DESCRIPTOR",
    "REPORT_ARGUMENTS",
    "REPORT_DESCRIPTOR",
    "SHARED_FUNCTIONS",
    "VERIFIER_NAMES",
    "refused_names",
]

_READ = tuple(runner for runner in COMMAND_RUNNERS if runner.evidence)

EVIDENCE_RUNNERS = tuple(runner.name for runner in _READ)
"""Runners whose own structured report the verifier reads."""

FILE_SELECTING_RUNNERS = tuple(runner.name for runner in COMMAND_RUNNERS if runner.selects_files)
"""Runners whose selectors name test files (protected like held-out ones when pass-to-pass); go's
name packages (their `_test.go` files are runner-control paths), cargo's name tests."""

REPORT_ARGUMENTS = {
    runner.name: runner.report_arguments for runner in COMMAND_RUNNERS if runner.report_arguments
}
"""Shell words the verifier adds after the selectors, for runners that take a report's place only
on their command line (expanded when the command runs, as the verifier user)."""

VERIFIER_NAMES = (
    "SELFBENCH_EVIDENCE",
    *(runner.reporter_module for runner in COMMAND_RUNNERS if runner.reporter_module),
    "selfbench-report",
    "selfbench-evidence",
    "/logs/verifier",
    "test2json",
    "test-reporter-destination",
    "--logfile",
    "=== RUN",
    "--- PASS",
    "\\x16",
    "\\u0016",
    "\\u{16}",
    "\\026",
    "/proc/self/fd",
    "/dev/fd/",
    "/environ",
)
"""What code that runs inside a test process names to find or forge the runner's report: the
verifier's variable, reporter modules and directories, the reward's directory, go's test2json and
its framing (its ^V marker escaped as source spells it), node's report destination option,
libtest's log file option, and a process's open files and first environment. A line the agent's
patch adds naming one scores 0 (`refused_names`)."""


def refused_names(gold_patch: bytes) -> tuple[str, ...]:
    """The `VERIFIER_NAMES` an agent's patch may not add: all but those the gold patch adds too
    (a task whose change is about such a name stays gradable)."""
    added = b"\n".join(line[1:] for line in gold_patch.splitlines() if line.startswith(b"+"))
    return tuple(name for name in VERIFIER_NAMES if name.encode("utf-8") not in added)


_PartOf = Callable[[Runner], Part | None]


def _ranked(part_of: _PartOf) -> list[tuple[Runner, Part]]:
    """The runners with a part of one function, lowest rank first, ties in registry order."""
    found = [(runner, part) for runner in _READ if (part := part_of(runner)) is not None]
    return sorted(found, key=lambda item: item[1].rank)


def _arms(part_of: _PartOf) -> list[tuple[tuple[str, ...], str]]:
    """The arms of one function: (the runners sharing it, its text), each text once."""
    arms: dict[str, list[str]] = {}
    for runner, part in _ranked(part_of):
        arms.setdefault(part.text, []).append(runner.name)
    return [(tuple(names), text) for text, names in arms.items()]


def _jq_branches(arms: list[tuple[tuple[str, ...], str]], otherwise: str) -> str:
    """`if $runner == … then …` for each arm, then `otherwise` (from `else` to `end;`)."""
    text = ""
    for at, (names, body) in enumerate(arms):
        test = " or ".join(f'$runner == "{name}"' for name in names)
        text += f"{'  elif' if at else 'if'} {test} then{body}\n"
    return text + "  " + otherwise


def _jq_each_runner(part_of: _PartOf) -> str:
    """A jq function with one branch per runner, the last one's the `else` (its `end` on a line
    of its own after a branch of several lines)."""
    *arms, (_, last) = _arms(part_of)
    if not arms:
        return last.strip() + ";\n"
    end = "\n  end" if "\n" in last else " end"
    return _jq_branches(arms, f"else{last}{end};\n")


def _jq_or(part_of: _PartOf, otherwise: str) -> str:
    """A jq function with the runners' own branches, and `otherwise` for every other runner."""
    arms = _arms(part_of)
    return _jq_branches(arms, f"else {otherwise} end;\n") if arms else f"{otherwise};\n"


FORGED_LABEL = "forged"
"""What the judgement says first of a forged report (`forged: the canary … passed`), and what
`test.sh` logs before it: the evidence of a forged trial."""

_DEFINITIONS = (
    r"""
def root: (map(select(.event == "start")) | first | .rootdir) // "";
def canary: . as $name | any($canaries[]; . as $drawn | $name | contains($drawn));
def passed($root):
  """
    + _jq_each_runner(lambda runner: runner.verifier.report_passed)
    + "def failed:\n  "
    + _jq_each_runner(lambda runner: runner.verifier.report_failed)
    + "def finished:\n  "
    + _jq_each_runner(lambda runner: runner.verifier.report_finished)
    + "def tests:\n  "
    + _jq_each_runner(lambda runner: runner.verifier.report_tests)
    + 'def under($path): . == $path or startswith($path + "/");\n'
    + "".join(runner.verifier.report_definitions for runner in _READ)
    + "def of($want):\n  "
    + _jq_or(
        lambda runner: runner.verifier.report_of,
        '(.file | under($want.path)) or (.file | endswith("/" + $want.file))\n'
        '    or (.file | contains("/" + $want.file + "/"))',
    )
    + "def named($name):\n  "
    + _jq_or(
        lambda runner: runner.verifier.report_named,
        '$name == "" or . == $name or startswith($name + "::") or startswith($name + "[")',
    )
    + "def selector: "
    + _jq_or(
        lambda runner: runner.verifier.report_selector,
        '.path + (if .name == "" then "" else "::" + .name end)',
    )
)

_JUDGEMENT = r""". as $records
| ($records | passed($records | root)) as $passed
| [$records | tests[] | select(.name | canary)] as $seen
| [$canaries[] | . as $drawn
   | select(any($seen[]; .outcome == "failed" and (.name | contains($drawn))) | not)] as $missed
| if any($seen[]; .outcome == "passed") then
    "@FORGED@: the canary test \(first($seen[] | select(.outcome == "passed")) | .name) passed"
  elif ($records | finished | not) then "the run did not finish"
  elif ($records | failed | length) > 0 then "a test failed: \($records | failed | first)"
  else [$wanted[] | . as $want
        | select(any($passed[]; of($want) and (.name | named($want.name))) | not)
        | selector]
    | if length > 0 then "no test seen passing for \(first)"
      elif ($missed | length) > 0 then
        "@FORGED@: every wanted test is seen passing, but the canary \($missed[0]) is not seen"
        + " failing"
      else "" end
  end
""".replace("@FORGED@", FORGED_LABEL)

EVIDENCE_QUERY = _DEFINITIONS + _JUDGEMENT
"""The jq program that judges a report (`--argjson wanted`, `--argjson canaries`, the names
drawn for the run's canaries, `[]` for none; `--arg runner`): the problem, or ""."""


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _case_arms(part_of: _PartOf) -> str:
    return "".join(f"  {' | '.join(names)}){text}" for names, text in _arms(part_of))


def _prepare_evidence_tools() -> str:
    tools = _ranked(lambda runner: runner.verifier.verifier_tools)
    executables = " ".join(
        f'"$evidence_tools/{name}"'
        for runner, _ in tools
        for name in runner.verifier.verifier_executables
    )
    return (
        f"""
prepare_evidence_tools() {{
  report_root="$(mktemp -d {REPORT_ROOT}XXXXXX)" && chmod 0711 -- "$report_root" ||
    return 1
  evidence_tools="$(mktemp -d /tmp/selfbench-evidence.XXXXXX)" || return 1
  chmod 0755 -- "$evidence_tools" || return 1
"""
        + "".join(part.text for _, part in tools)
        + '  chmod 0644 -- "$evidence_tools/"*\n'
        + (f"  chmod 0755 -- {executables}\n" if executables else "")
        + "".join(
            f'  if [ "$runner" = {runner.name} ]; then\n{runner.verifier.verifier_prepare}  fi\n'
            for runner in _READ
            if runner.verifier.verifier_prepare
        )
        + "}\n"
    )


_SET_EVIDENCE_ENV = (
    """
set_evidence_env() {
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_env)
    + """  *) evidence_env=() ;;
  esac
}
"""
)

_OPEN_REPORT_CHANNEL = f"""
# Opens the runner's report channel for the run (`$report_channel`, which the command inherits on
# descriptor {REPORT_DESCRIPTOR}, appending): `report.jsonl` in the report's directory (`$1`),
# which becomes root's alone, so that no argument or variable names the file and no one else
# reaches it by its path. Owned by `$2`: root for a reporter that writes to the inherited
# descriptor itself (no process of the verifier user can open the file again, nor the path /proc
# shows for it), the verifier user for one that must reopen it by a name
# (`/dev/fd/{REPORT_DESCRIPTOR}`, an ancestor's `/proc/<pid>/fd/{REPORT_DESCRIPTOR}`). With `signed`
# (`$3`), also a fresh key beside it, root's and read-only (`$key_channel`, inherited on
# descriptor {KEY_DESCRIPTOR}), that the reporter signs its records with. Both stay /dev/null when
# the channel cannot be made.
open_report_channel() {{
  local channel="$1/report.jsonl" key="$1/key"
  chown root:root -- "$1" && chmod 0700 -- "$1" && rm -f -- "$channel" "$key" &&
    (umask 0177 && : >"$channel") && chown "$2:$2" -- "$channel" || return 1
  if [ "${{3:-}}" = signed ]; then
    (umask 0377 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' >"$key") || return 1
    key_channel="$key"
  fi
  report_channel="$channel"
}}
"""

_READ_REPORT = (
    """
# Prints the report ($1) as JSON lines: a runner's own reading of it (records it signed, up to the
# first one it did not; a report of another format turned into records), or its first 64 MiB.
read_report() {
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_reader)
    + """  *) head -c 67108864 -- "$1" ;;
  esac
}
"""
)

_CROSS_CHECK_REPORT = (
    """
# Prints where the runner's own output, captured by root ($2), disagrees with its report's records
# ($1): a signal the report's writer does not control (its summary line); nothing when they agree.
cross_check_report() {
  local report="$1" output="$2"
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_cross_check)
    + """  esac
}
"""
)

_RESTORE_RUNNER_CONFIGURATION = (
    r"""
# What decides how the tests run but sits in files an agent may change: the part of such a file
# that changed is restored to the base (the whole file).
restore_runner_configuration() {
  local changed
  changed="$(mktemp /tmp/selfbench-changed.XXXXXX)" || return 1
  agent_changed_paths >"$changed"
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_restore)
    + """  esac
  rm -f -- "$changed"
}
"""
)

_RESTORE_CHANGED_CONFIGURATION = r"""
# Each changed go.mod or Cargo.toml whose runner-control part differs from the base's.
restore_changed_configuration() {
  local path base
  base="$(mktemp /tmp/selfbench-base.XXXXXX)" || return 1
  while IFS= read -r -d '' path; do
    case "$runner:${path##*/}" in
    @RESTORED@) ;;
    *) continue ;;
    esac
    app_git --literal-pathspecs show "HEAD:$path" >"$base" 2>/dev/null || : >"$base"
    if [ -L "$app/$path" ] ||
      [ "$(runner_control_of "$base")" != "$(runner_control_of "$app/$path")" ]; then
      restore_file "$path" "what builds the tests"
    fi
  done <"$1"
  rm -f -- "$base"
}
""".replace(
    "@RESTORED@",
    " | ".join(
        f"{runner}:{name}" for name, runners in RESTORED_MANIFESTS.items() for runner in runners
    ),
)


def _runner_control_of() -> str:
    *arms, (_, last) = _arms(lambda runner: runner.verifier.verifier_control)
    branches = "".join(
        "  elif " + " || ".join(f'[ "$runner" = {name} ]' for name in names) + f"; then{body}"
        for names, body in arms
    )
    return (
        "\n"
        + "".join(text for _, text in _arms(lambda runner: runner.verifier.verifier_control_note))
        + """runner_control_of() {
  if [ ! -s "$1" ]; then
    echo absent
"""
        + branches
        + f"  else{last}"
        + "  fi\n}\n"
    )


SHARED_FUNCTIONS: dict[str, str] = {
    "prepare_evidence_tools": _prepare_evidence_tools(),
    "new_report_dir": r"""
# Each report's directory: a random name in a directory of root's that no one else can list, so
# the tests find it only where the verifier hands it to the runner.
new_report_dir() {
  local directory
  [ -n "$report_root" ] || return 1
  directory="$report_root/$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  mkdir -m 0700 -- "$directory" && chown "$verifier_user:$verifier_user" -- "$directory" &&
    printf '%s\n' "$directory"
}
""",
    "set_evidence_env": _SET_EVIDENCE_ENV,
    "open_report_channel": _OPEN_REPORT_CHANNEL,
    "read_report": _READ_REPORT,
    "cross_check_report": _CROSS_CHECK_REPORT,
    "check_evidence": r"""
# Prints why the report does not show every wanted test passing, or where the runner's own
# output ($3) disagrees with it; nothing when it shows them and nothing disagrees. With a file
# ($4), the records it read are left there (nothing, when there is no report).
check_evidence() {
  local report="$1/report.jsonl" wanted="$2" problem records="${4:-}"
  if [ -z "$wanted" ]; then
    return 0
  fi
  if [ -L "$report" ] || [ ! -f "$report" ]; then
    echo "the runner wrote no report"
    return 0
  fi
  if [ -z "${4:-}" ] && ! records="$(mktemp /tmp/selfbench-records.XXXXXX)"; then
    echo "the report could not be read"
    return 0
  fi
  read_report "$report" >"$records"
  problem="$(jq -rs --argjson wanted "$wanted" --argjson canaries "$canaries" \
    --arg runner "$runner" "$evidence_query" <"$records" 2>/dev/null)" ||
    problem="the report is not JSON lines"
  if [ -z "$problem" ]; then
    problem="$(cross_check_report "$records" "$3")"
  fi
  if [ -z "${4:-}" ]; then
    rm -f -- "$records"
  fi
  if [ -n "$problem" ]; then
    printf '%s\n' "$problem"
  fi
}
""",
    "signals_disagree": r"""
# Prints where a run's report and the signals beside it disagree, for the wanted tests ($2): the
# report's records ($1) show every wanted test passing but the runner's own output disagrees with
# them (`$evidence_problem`, what `check_evidence` said) or the command exited non-zero ($3); or
# they do not, and the command exited 0. Nothing when they agree, or when nothing is wanted.
signals_disagree() {
  local records="$1" wanted="$2" status="$3" problem
  if [ -z "$wanted" ] || { [ "$status" -eq 0 ] && [ -z "$evidence_problem" ]; }; then
    return 0
  fi
  problem="$(jq -rs --argjson wanted "$wanted" --argjson canaries "$canaries" \
    --arg runner "$runner" "$evidence_query" <"$records" 2>/dev/null)" ||
    problem="the report is not JSON lines"
  if [ -n "$problem" ] && [ "$status" -eq 0 ]; then
    echo "the command exited 0 but its report does not agree: $evidence_problem"
  elif [ -z "$problem" ] && [ -n "$evidence_problem" ]; then
    echo "the report and the runner's own output disagree: $evidence_problem"
  elif [ -z "$problem" ]; then
    echo "the report shows every wanted test passing but the command exited $status"
  fi
}
""",
    "tests_failed": r"""
# How many tests the report's records ($1) show failing, finished or not, the canaries aside (1
# when they cannot be read).
tests_failed() {
  jq -rs --arg runner "$runner" --argjson canaries "$canaries" \
    "$evidence_definitions failed | length" <"$1" 2>/dev/null || echo 1
}
""",
    "restore_runner_configuration": _RESTORE_RUNNER_CONFIGURATION,
    "restore_file": r"""
restore_file() {
  log "the agent patch changes $2 in $1; restored"
  rm -f -- "${app:?}/$1"
  app_git --literal-pathspecs checkout -q HEAD -- "$1" >/dev/null 2>&1 || true
}
""",
    "restore_changed_configuration": _RESTORE_CHANGED_CONFIGURATION,
    "runner_control_of": _runner_control_of(),
    "agent_names_verifier": r"""
# Prints each file of the agent's patch with an added line that names the verifier's internals
# (`verifier_names`, the header's data) and the name: code the tests load that finds or forges
# the runner's report. Added lines of tracked files (git's diff; binary files are not read) and
# every line of new text files.
agent_names_verifier() {
  local changed names path name
  if [ "${#verifier_names[@]}" -eq 0 ]; then
    return 0
  fi
  changed="$(mktemp /tmp/selfbench-changed.XXXXXX)" || return 1
  names="$(mktemp /tmp/selfbench-names.XXXXXX)" || return 1
  agent_changed_paths >"$changed"
  printf '%s\n' "${verifier_names[@]}" >"$names"
  while IFS= read -r -d '' path; do
    if [ -L "$app/$path" ] || [ ! -f "$app/$path" ]; then
      continue
    fi
    if app_git --literal-pathspecs ls-files --error-unmatch -- "$path" >/dev/null 2>&1; then
      app_git --literal-pathspecs diff -U0 --no-color --no-ext-diff --no-textconv HEAD -- "$path" |
        sed -n -e '/^@@/,$ s/^+//p'
    else
      LC_ALL=C grep -I -e '' -- "$app/$path"
    fi | LC_ALL=C grep -a -F -o -f "$names" | head -n 1 | while IFS= read -r name; do
      printf '%s: %s\n' "${path//[[:cntrl:]]/?}" "$name"
    done
  done <"$changed"
  rm -f -- "$changed" "$names"
}
""",
    "remember_untracked": r"""
# The untracked files before the agent's patch (the setup's ignored files), to tell the patch's
# new files from them.
remember_untracked() {
  untracked_before="$(mktemp /tmp/selfbench-untracked.XXXXXX)" || return 1
  app_git ls-files -z --others | LC_ALL=C sort -z >"$untracked_before"
}
""",
    "agent_changed_paths": r"""
# Every path the agent's patch changed or added, NUL-separated.
agent_changed_paths() {
  app_git ls-files -z --modified
  app_git ls-files -z --others | LC_ALL=C sort -z | LC_ALL=C comm -z -13 "$untracked_before" -
}
""",
}
"""The verifier's evidence functions every runner shares, in the script's order, by name; a
runner's own functions (`VerifierParts.verifier_functions`) follow the one they name."""


def _functions() -> str:
    text = ""
    for name, shared in SHARED_FUNCTIONS.items():
        text += shared + "".join(
            own
            for runner in _READ
            for after, own in runner.verifier.verifier_functions
            if after == name
        )
    return text


EVIDENCE_BODY = (
    "\n# shellcheck disable=SC2016 # jq and Python programs, not shell expansions\n"
    f"readonly evidence_definitions={_single_quoted(_DEFINITIONS)}\n"
    "# shellcheck disable=SC2016\n"
    f'readonly evidence_query="$evidence_definitions"{_single_quoted(_JUDGEMENT)}\n'
    + "".join(runner.verifier.verifier_programs for runner in _READ)
    + 'evidence_tools=""\nevidence_problem=""\nuntracked_before=/dev/null\nevidence_env=()\n'
    + "canaries='[]'\n"
    + "report_channel=/dev/null\nkey_channel=/dev/null\n"
    + "".join(runner.verifier.verifier_variables for runner in _READ)
    + 'report_root=""\n'
    + _functions()
)
"""The verifier's functions that read the runners' reports (constant text, no task data)."""
