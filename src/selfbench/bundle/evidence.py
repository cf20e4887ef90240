"""The verifier's evidence: each wanted test seen passing in the runner's own report.

Pure text, the part of `tests/test.sh` that reads the runners' reports. For each runner in
`EVIDENCE_RUNNERS` the verifier (root) writes a reporter into a fresh root-owned directory, has the
runner write its report into a fresh directory with a random name inside a directory of root's that
no one else can list, kills every process of the verifier user, and only then reads the report: the
run must have finished, no test may have failed, and each selector must name at least one test seen
passing. An agent's patch cannot place either directory, and cannot change what loads the reporter
(see `_runner_files.py`).

The boundary. Code the agent wrote runs inside the test process (the package under test, which
the tests import; for go and cargo, the test binary whose output or log file is the report); such
code can in principle do whatever the reporter can. What the verifier does against it:

* the report's location is out of reach by name: pytest's plugin pops `SELFBENCH_EVIDENCE` from
  the environment when `-p` loads it, before any conftest or project module; the directory cannot
  be listed, so a glob under /tmp finds nothing;
* bun, node, jest, vitest and cargo report through a channel (`open_report_channel`): a file in
  a directory of root's, which test.sh opens as descriptor `REPORT_FD` for the run and no
  argument or variable names. cargo's runner, a shell script, writes to the descriptor; the file
  is root's, so no process of the verifier user can open it again, and the test binaries do not
  inherit it. node passes no descriptor but the standard three to a child (and npx and npm start
  the runner as one), so node's, jest's and vitest's reporters, in the runner's own process,
  open the descriptor again through `/proc/<pid>/fd` of the nearest process that holds it; bun
  opens its JUnit report by `/dev/fd/7`. Their channel file is the verifier user's (reachable
  through that descriptor only), and bun's is turned into records by root with awk and jq;
* each runner's own summary line in the output (bun's `N pass`/`N fail`, jest's `Tests:`,
  vitest's `Tests`, go's `ok`/`FAIL` package lines, libtest's `test result:` lines) must agree
  with its report (`cross_check`), and the command must exit 0;
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

Not covered: code that spells those names apart and reaches the report anyway, through memory
it shares with the reporter (the plugin's closure, pytest's plugin manager), the parent's open
files or first environment under `/proc/<pid>/` (pytest; for node, jest, vitest and bun, the
channel through an ancestor's `/proc/<pid>/fd`, beside the reporter's own records, which still
show the held-out tests failing), a test binary's own arguments (libtest's log
file, which that binary writes anyway), or by printing marked test2json framing built from a
computed ^V; code running in the reporter's own process (bun's tests, jest's in-band run of one
file) that writes a whole report into the channel and prints the summary to match; a process of
the verifier user that takes the descriptor from another with ptrace or `pidfd_getfd` where the
kernel lets a user trace its own processes (no Yama). Against these the held-out tests'
assertions are what stand; a verdict on evidence the agent cannot shape at all needs the tests to
run where the agent's code cannot write or print what the runner reports, which no runner here
offers.

What each runner contributes to the script is its `Runner`'s `report_*` and `verifier_*` fields
(jq branches, shell case arms, reporters, its own functions); this module assembles them from the
registry, in the order of each part's rank. Per runner, the report is:

* pytest: a plugin (its `reporter_module`) loaded by `PYTEST_ADDOPTS`, one JSON line per event;
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
from selfbench.runners import COMMAND_RUNNERS, REPORT_FD, REPORT_ROOT, Part, Runner

__all__ = [
    "EVIDENCE_BODY",
    "EVIDENCE_QUERY",
    "EVIDENCE_RUNNERS",
    "FILE_SELECTING_RUNNERS",
    "REPORT_ARGUMENTS",
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


EVIDENCE_QUERY = (
    r"""
def root: (map(select(.event == "start")) | first | .rootdir) // "";
def passed($root):
  """
    + _jq_each_runner(lambda runner: runner.verifier.report_passed)
    + "def failed:\n  "
    + _jq_each_runner(lambda runner: runner.verifier.report_failed)
    + "def finished:\n  "
    + _jq_each_runner(lambda runner: runner.verifier.report_finished)
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
    + r""". as $records
| ($records | passed($records | root)) as $passed
| if ($records | finished | not) then "the run did not finish"
  elif ($records | failed | length) > 0 then "a test failed: \($records | failed | first)"
  else [$wanted[] | . as $want
        | select(any($passed[]; of($want) and (.name | named($want.name))) | not)
        | selector]
    | if length > 0 then "no test seen passing for \(first)" else "" end
  end
"""
)
"""The jq program that judges a report (`--argjson wanted`, `--arg runner`): the problem, or ""."""


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
  local report="$1/report.jsonl"
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_env)
    + """  *) evidence_env=() ;;
  esac
}
"""
)

_OPEN_REPORT_CHANNEL = f"""
# A runner's report channel: a file in the report's directory `$1`, made root's alone so that no
# one else reaches it by name, which the run gets as descriptor {REPORT_FD} only; owned by `$2`: the
# verifier user for a runner that opens the descriptor by its name (`/dev/fd/{REPORT_FD}`), root for
# one whose reporter writes to the descriptor itself (no process of the verifier user can open it).
open_report_channel() {{
  evidence_channel="$1/$3"
  if ! {{ chown root:root -- "$1" && chmod 0700 -- "$1" && rm -f -- "$evidence_channel" &&
    : >"$evidence_channel" && chown "$2:$2" -- "$evidence_channel" &&
    chmod 0600 -- "$evidence_channel"; }}; then
    evidence_channel=/dev/null
  fi
}}
"""

_READ_REPORT_CHANNEL = (
    r"""
# After the run, as root: the report's JSON lines from what the runner wrote to its channel.
read_report_channel() {
  local channel="$1/channel" report="$1/report.jsonl"
  case "$runner" in
"""
    + _case_arms(lambda runner: runner.verifier.verifier_read)
    + """  esac
}
"""
)

_CROSS_CHECK = (
    r"""
# Prints why the runner's own summary line in the output (`$1`) disagrees with its report in
# `$2` (the exit status is judged beside it); nothing when they agree or nothing is wanted (`$3`).
cross_check() {
  local output="$1" report="$2/report.jsonl"
  if [ -z "$3" ] || [ -L "$report" ] || [ ! -f "$report" ]; then
    return 0
  fi
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
    "read_report_channel": _READ_REPORT_CHANNEL,
    "check_evidence": r"""
# Prints why the report does not show every wanted test passing; nothing when it does.
check_evidence() {
  local report="$1/report.jsonl" wanted="$2"
  if [ -z "$wanted" ]; then
    return 0
  fi
  if [ -L "$report" ] || [ ! -f "$report" ]; then
    echo "the runner wrote no report"
    return 0
  fi
  head -c 67108864 -- "$report" |
    jq -rs --argjson wanted "$wanted" --arg runner "$runner" "$evidence_query" 2>/dev/null ||
    echo "the report is not JSON lines"
}
""",
    "cross_check": _CROSS_CHECK,
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
    f"readonly evidence_query={_single_quoted(EVIDENCE_QUERY)}\n"
    + "".join(runner.verifier.verifier_programs for runner in _READ)
    + 'evidence_tools=""\nevidence_problem=""\nuntracked_before=/dev/null\nevidence_env=()\n'
    + "evidence_channel=/dev/null\n"
    + "".join(runner.verifier.verifier_variables for runner in _READ)
    + 'report_root=""\n'
    + _functions()
)
"""The verifier's functions that read the runners' reports (constant text, no task data)."""
