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
  the environment when `-p` loads it, before any conftest or project module; node's reporter,
  loaded before any test file's process starts, points those processes' `NODE_OPTIONS` at
  /dev/null; cargo's runner starts each test binary without the variable; the directory cannot
  be listed, so a glob under /tmp finds nothing;
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
files or first environment under `/proc/<pid>/`, a test binary's own arguments (libtest's log
file, jest's and vitest's `--outputFile`), or by printing marked test2json framing built from a
computed ^V. Against these the held-out tests' assertions are what stand; a verdict on evidence
the agent cannot shape at all needs the tests to run where the agent's code cannot write or
print what the runner reports, which no runner here offers.

Per runner, the report is:

* pytest: a plugin (`PYTEST_PLUGIN`) loaded by `PYTEST_ADDOPTS`, one JSON line per event;
* node: a `--test-reporter` module given in `NODE_OPTIONS`, beside the usual TAP on stdout;
* go: `GOFLAGS=-json -count=1` (no cached result stands for a run), with `GOTOOLCHAIN=local`,
  `GOWORK=off`, and a private copy of the setup's build cache: the events `test2json` writes
  for the test binaries (a binary's own output is one of their `Output` fields, so a printed line
  cannot pass for an event); the log shows the text those events carry. Each `Test` function of
  the `_test.go` files of a selected package (the base's, and the held-out ones: an agent's change
  to a `_test.go` file is left out) must be seen passing or skipped, so a `TestMain` or an `init`
  that narrows `-test.run` does not count;
* jest and vitest: their JSON report (the same shape), asked for on the command line after the
  selectors (`REPORT_ARGUMENTS`); an agent's change to `package.json`'s `jest`, `babel` or
  `scripts` restores the file, and their configuration files are runner-control paths;
* cargo: a target runner (`CARGO_TARGET_<triple>_RUNNER`) that runs each test binary with
  libtest's `--logfile` and records its exit status: every binary must exit 0, and each selector
  (a libtest filter) must be contained in the name of a test seen `ok`. An agent's change to
  `Cargo.toml`'s targets, build script, paths or patches is restored to the base
  (`CARGO_CONTROL`).
"""

from __future__ import annotations

from selfbench._runner_files import (
    PACKAGE_JSON_CONTROL_KEYS,
    RESTORED_MANIFESTS,
    SHARED_CONFIGURATION_FILES,
)
from selfbench.runners import COMMAND_RUNNERS

__all__ = [
    "CARGO_CONTROL",
    "EVIDENCE_BODY",
    "EVIDENCE_QUERY",
    "EVIDENCE_RUNNERS",
    "FILE_SELECTING_RUNNERS",
    "GO_EVENTS",
    "GO_TEST_NAMES",
    "GO_TEXT",
    "PYTEST_PLUGIN",
    "REPORT_ARGUMENTS",
    "VERIFIER_NAMES",
    "refused_names",
]

EVIDENCE_RUNNERS = tuple(runner.name for runner in COMMAND_RUNNERS if runner.evidence)
"""Runners whose own structured report the verifier reads."""

FILE_SELECTING_RUNNERS = tuple(runner.name for runner in COMMAND_RUNNERS if runner.selects_files)
"""Runners whose selectors name test files (protected like held-out ones when pass-to-pass); go's
name packages (their `_test.go` files are runner-control paths), cargo's name tests."""

PYTEST_PLUGIN = "_selfbench_evidence"
"""The module name of the pytest reporter (a runner-control name: no patch may shadow it)."""

REPORT_ARGUMENTS = {
    runner.name: runner.report_arguments for runner in COMMAND_RUNNERS if runner.report_arguments
}
"""Shell words the verifier adds after the selectors, for runners that take a report's place only
on their command line (expanded when the command runs, as the verifier user)."""

VERIFIER_NAMES = (
    "SELFBENCH_EVIDENCE",
    PYTEST_PLUGIN,
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
verifier's variable, plugin and directories, the reward's directory, go's test2json and its framing
(its ^V marker escaped as source spells it), node's report destination option, libtest's log file
option, and a process's open files and first environment. A line the agent's patch adds naming
one scores 0 (`refused_names`)."""


def refused_names(gold_patch: bytes) -> tuple[str, ...]:
    """The `VERIFIER_NAMES` an agent's patch may not add: all but those the gold patch adds too
    (a task whose change is about such a name stays gradable)."""
    added = b"\n".join(line[1:] for line in gold_patch.splitlines() if line.startswith(b"+"))
    return tuple(name for name in VERIFIER_NAMES if name.encode("utf-8") not in added)


_PYTEST_REPORTER = """\
import json
import os


def _writer(report):
    def write(record):
        if report:
            with open(report, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\\n")

    return write


# Loaded by -p before any conftest or project module: the report's path leaves the environment.
_write = _writer(os.environ.pop("SELFBENCH_EVIDENCE", ""))


def pytest_sessionstart(session):
    _write({"event": "start", "rootdir": str(session.config.rootpath)})


def pytest_collectreport(report):
    if report.failed:
        _write({"event": "collect-error", "nodeid": report.nodeid})


def pytest_runtest_logreport(report):
    _write({"event": "test", "nodeid": report.nodeid, "when": report.when,
            "outcome": report.outcome})


def pytest_sessionfinish(session, exitstatus):
    _write({"event": "finish", "exitstatus": int(exitstatus)})
"""

_NODE_REPORTER = """\
// Loaded before any test file runs: the test files' processes, started after, are not told where
// the report goes.
process.env.NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '').replace(
  /--test-reporter-destination=(?!std(out|err)(\\s|$))\\S+/g,
  '--test-reporter-destination=/dev/null',
);

export default async function* reporter(source) {
  for await (const event of source) {
    if (event.type === 'test:pass' || event.type === 'test:fail') {
      const data = event.data;
      yield JSON.stringify({
        event: event.type, file: data.file ?? '', name: data.name,
        type: data.details?.type ?? '',
      }) + '\\n';
    }
  }
  yield '{"event":"finish"}\\n';
}
"""

EVIDENCE_QUERY = r"""
def root: (map(select(.event == "start")) | first | .rootdir) // "";
def passed($root):
  if $runner == "pytest" then
    map(select(.event == "test" and .when == "call" and .outcome == "passed")
      | {file: ($root + "/" + (.nodeid | split("::")[0])),
         name: (.nodeid | split("::")[1:] | join("::"))})
  elif $runner == "go" then
    map(select((.Action == "pass" or .Action == "skip") and (.Test | type) == "string")
      | {file: .Package, name: .Test})
  elif $runner == "cargo" then
    map(select(.event == "test" and .outcome == "ok") | {file: "", name: .name})
  elif $runner == "jest" or $runner == "vitest" then
    [.[] | .testResults[]? | .name as $file | .assertionResults[]?
     | select(.status == "passed") | {file: $file, name: ""}]
  else
    map(select(.event == "test:pass" and .type != "suite" and .name != .file)
      | {file: .file, name: ""})
  end;
def failed:
  if $runner == "pytest" then
    map(select((.event == "test" and .outcome == "failed") or .event == "collect-error")
      | .nodeid)
  elif $runner == "go" then
    map(select(.Action == "fail" or .Action == "build-fail")
      | ((.Package // .ImportPath // "") + (if .Test then " " + .Test else "" end)))
  elif $runner == "cargo" then
    map(select((.event == "test" and .outcome == "failed") or (.event == "exit" and .status != 0))
      | (.name // "a test binary exited \(.status)"))
  elif $runner == "jest" or $runner == "vitest" then
    [.[] | .testResults[]? | (select(.status == "failed") | .name),
     (.assertionResults[]? | select(.status == "failed") | .fullName)]
    + [.[] | select((.numRuntimeErrorTestSuites // 0) > 0) | "a test file did not run"]
  else map(select(.event == "test:fail") | .name) end;
def finished:
  if $runner == "pytest" then any(.[]; .event == "finish" and .exitstatus == 0)
  elif $runner == "go" then
    any(.[]; (.Action == "pass" or .Action == "fail" or .Action == "skip")
      and (.Test | type) != "string")
  elif $runner == "cargo" then any(.[]; .event == "exit")
  elif $runner == "jest" or $runner == "vitest" then
    length == 1 and (.[0].numTotalTests | type) == "number"
  else any(.[]; .event == "finish") end;
def under($path): . == $path or startswith($path + "/");
def package_of($want):
  ($want.file | rtrimstr("...") | rtrimstr("/")) as $dir
  | if ($want.file | endswith("...")) then
      $dir == "" or $dir == "." or . == $dir or endswith("/" + $dir)
      or contains("/" + $dir + "/") or startswith($dir + "/")
    else $dir == "." or . == $dir or endswith("/" + $dir) end;
def of($want):
  if $runner == "go" then .file | package_of($want)
  elif $runner == "cargo" then true
  else (.file | under($want.path)) or (.file | endswith("/" + $want.file))
    or (.file | contains("/" + $want.file + "/")) end;
def named($name):
  if $runner == "cargo" then contains($name)
  elif $runner == "go" then $name == "" or . == $name or startswith($name + "/")
  else $name == "" or . == $name or startswith($name + "::") or startswith($name + "[") end;
def selector: if $runner == "cargo" then .name
  else .path + (if .name == "" then "" else "::" + .name end) end;
. as $records
| ($records | passed($records | root)) as $passed
| if ($records | finished | not) then "the run did not finish"
  elif ($records | failed | length) > 0 then "a test failed: \($records | failed | first)"
  else [$wanted[] | . as $want
        | select(any($passed[]; of($want) and (.name | named($want.name))) | not)
        | selector]
    | if length > 0 then "no test seen passing for \(first)" else "" end
  end
"""
"""The jq program that judges a report (`--argjson wanted`, `--arg runner`): the problem, or ""."""

_SAME_PYTEST_TABLE = r"""
import configparser
import sys
import tomllib


def pytest_part(path, kind):
    try:
        if kind == "pyproject.toml":
            with open(path, "rb") as handle:
                tool = tomllib.load(handle).get("tool", {})
            return tool.get("pytest") if isinstance(tool, dict) else "unreadable"
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        with open(path, encoding="utf-8") as handle:
            parser.read_file(handle)
        section = "tool:pytest" if kind == "setup.cfg" else "pytest"
        return dict(parser[section]) if parser.has_section(section) else None
    except (OSError, UnicodeDecodeError, ValueError, configparser.Error):
        return "unreadable"


kind = sys.argv[3].rsplit("/", 1)[-1]
sys.exit(0 if pytest_part(sys.argv[1], kind) == pytest_part(sys.argv[2], kind) else 1)
"""

_SHADOWING_MODULES = r"""
import sys

names = (set(sys.stdlib_module_names) - {"test"}) | {
    "pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging", "_selfbench_evidence",
}
workdir = sys.argv[1].strip("/")
bases = [""] if workdir in ("", ".") else ["", workdir + "/"]


def paths(data):
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


with open(sys.argv[2], "rb") as handle:
    tracked = set()
    for path in paths(handle.read()):
        parts = path.split("/")
        tracked.update("/".join(parts[: at + 1]) for at in range(len(parts)))
for path in paths(sys.stdin.buffer.read()):
    for base in bases:
        rest = path[len(base):] if path.startswith(base) else ""
        first, _, inner = rest.partition("/")
        stem = first if inner else first.split(".")[0]
        new = base + first not in tracked
        if new and stem in names and (inner or first.endswith((".py", ".pyc", ".so", ".pth"))):
            sys.stdout.buffer.write(path.encode("utf-8", "surrogateescape") + b"\0")
            break
"""

_GO_EXEC = r"""#!/bin/sh
# go test's -exec for the verifier: a test binary's first line is a marked (^V) framing line that
# names no test, so test2json takes no unmarked line as framing from then on (an init that prints
# "=== RUN" or "--- PASS" lines before the tests run prints output, not events).
case "$1" in
*.test) printf '\026=== NAME\n' ;;
esac
exec "$@"
"""

GO_TEXT = r"""(try fromjson catch null) as $event
| if ($event | type) == "object" and ($event.Action | type) == "string"
  then ($event.Output // "") else . + "\n" end
"""
"""The jq program that shows `go test -json`'s output as the text it carries."""

GO_EVENTS = r"""try fromjson catch empty
| select(type == "object" and (.Action | type) == "string")
"""
"""The jq program that keeps `go test -json`'s events (cmd/go's own lines; a test binary's output
is inside their `Output` fields)."""

GO_TEST_NAMES = r"""
def dir_in($want):
  ($want.file | rtrimstr("...") | rtrimstr("/")) as $prefix
  | if ($want.file | endswith("...")) then
      $prefix == "" or $prefix == "." or . == $prefix or startswith($prefix + "/")
    else . == (if $prefix == "" then "." else $prefix end) end;
[inputs | split("\t") | {dir: .[0], name: .[1]}] as $tests
| $wanted + [$wanted[] as $want | $tests[] | select(.dir | dir_in($want))
             | {path: $want.path, file: .dir, name: .name}]
"""
"""The jq program adding each `Test` function of a selected package to the wanted tests."""

_CARGO_RUNNER = r"""#!/bin/bash
# cargo's target runner for the verifier: a test binary logs each result with libtest's --logfile;
# its exit status is recorded after them.
binary="$1"
shift
log="$(mktemp "${SELFBENCH_EVIDENCE%/*}/libtest.XXXXXX")" || exit 1
env -u SELFBENCH_EVIDENCE "$binary" "$@" --logfile "$log"
status=$?
{
  sed -n -e 's/^\(ok\|failed\|ignored\) \(.*\)$/\1\t\2/p' -- "$log" |
    jq -Rc 'split("\t") | {event: "test", outcome: .[0], name: (.[1:] | join("\t"))}'
  printf '{"event":"exit","status":%d}\n' "$status"
} >>"$SELFBENCH_EVIDENCE"
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

EVIDENCE_BODY = (
    r"""
# shellcheck disable=SC2016 # jq and Python programs, not shell expansions
readonly evidence_query='"""
    + EVIDENCE_QUERY.replace("'", "'\"'\"'")
    + r"""'
# shellcheck disable=SC2016
readonly same_pytest_table='"""
    + _SAME_PYTEST_TABLE.replace("'", "'\"'\"'")
    + r"""'
readonly shadowing_modules='"""
    + _SHADOWING_MODULES.replace("'", "'\"'\"'")
    + r"""'
# shellcheck disable=SC2016
readonly go_text='"""
    + GO_TEXT.replace("'", "'\"'\"'")
    + r"""'
# shellcheck disable=SC2016
readonly go_events='"""
    + GO_EVENTS.replace("'", "'\"'\"'")
    + r"""'
# shellcheck disable=SC2016
readonly go_test_names='"""
    + GO_TEST_NAMES.replace("'", "'\"'\"'")
    + r"""'
readonly go_test_function='Test\([A-Z0-9_][A-Za-z0-9_]*\)\{0,1\}'
# shellcheck disable=SC2016
readonly cargo_control='"""
    + CARGO_CONTROL.replace("'", "'\"'\"'")
    + r"""'
evidence_tools=""
evidence_problem=""
untracked_before=/dev/null
evidence_env=()
go_cache=""
go_exec=""
report_root=""

prepare_evidence_tools() {
  report_root="$(mktemp -d /tmp/selfbench-reports.XXXXXX)" && chmod 0711 -- "$report_root" ||
    return 1
  evidence_tools="$(mktemp -d /tmp/selfbench-evidence.XXXXXX)" || return 1
  chmod 0755 -- "$evidence_tools" || return 1
  cat >"$evidence_tools/"""
    + PYTEST_PLUGIN
    + r""".py" <<'PYTEST_REPORTER'
"""
    + _PYTEST_REPORTER
    + r"""PYTEST_REPORTER
  cat >"$evidence_tools/reporter.mjs" <<'NODE_REPORTER'
"""
    + _NODE_REPORTER
    + r"""NODE_REPORTER
  cat >"$evidence_tools/cargo-runner" <<'CARGO_RUNNER'
"""
    + _CARGO_RUNNER
    + r"""CARGO_RUNNER
  cat >"$evidence_tools/go-exec" <<'GO_EXEC'
"""
    + _GO_EXEC
    + r"""GO_EXEC
  chmod 0644 -- "$evidence_tools/"*
  chmod 0755 -- "$evidence_tools/cargo-runner" "$evidence_tools/go-exec"
  if [ "$runner" = go ]; then
    prepare_go_cache
    if go_marks_framing; then
      go_exec="$evidence_tools/go-exec"
    fi
  fi
}

# go 1.20 and later mark test2json's framing lines with ^V (older test binaries do not, and run
# without the marking `-exec`).
go_marks_framing() {
  local version minor
  version="$(GOTOOLCHAIN=local GOFLAGS='' go env GOVERSION 2>/dev/null)" || return 1
  case "$version" in
  go1.*) ;;
  *) return 0 ;;
  esac
  minor="${version#go1.}"
  minor="${minor%%[!0-9]*}"
  [ "${minor:-0}" -ge 20 ]
}

# go: a private copy of the build cache the setup left (root's), so each run does not compile the
# standard library again; written by no one else, and never shared between runs of test.sh.
prepare_go_cache() {
  go_cache="$(mktemp -d /tmp/selfbench-go-cache.XXXXXX)" || return 1
  if [ -d /root/.cache/go-build ] && [ ! -L /root/.cache/go-build ]; then
    cp -a -- /root/.cache/go-build/. "$go_cache/" || true
  fi
  chown -R "$verifier_user:$verifier_user" -- "$go_cache"
}

# Each report's directory: a random name in a directory of root's that no one else can list, so
# the tests find it only where the verifier hands it to the runner.
new_report_dir() {
  local directory
  [ -n "$report_root" ] || return 1
  directory="$report_root/$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  mkdir -m 0700 -- "$directory" && chown "$verifier_user:$verifier_user" -- "$directory" &&
    printf '%s\n' "$directory"
}

set_evidence_env() {
  local report="$1/report.jsonl"
  case "$runner" in
  pytest)
    evidence_env=("PYTHONPATH=$evidence_tools" "PYTEST_ADDOPTS=-p """
    + PYTEST_PLUGIN
    + r"""" "SELFBENCH_EVIDENCE=$report")
    ;;
  node)
    evidence_env=("NODE_OPTIONS=--test-reporter=tap --test-reporter-destination=stdout \
--test-reporter=$evidence_tools/reporter.mjs --test-reporter-destination=$report")
    ;;
  go)
    evidence_env=("GOFLAGS=-json -count=1${go_exec:+ -exec=$go_exec}" "GOTOOLCHAIN=local"
      "GOWORK=off")
    if [ -n "$go_cache" ]; then
      evidence_env+=("GOCACHE=$go_cache")
    fi
    ;;
  jest | vitest) evidence_env=("SELFBENCH_EVIDENCE=$report") ;;
  cargo)
    evidence_env=("SELFBENCH_EVIDENCE=$report"
      "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$evidence_tools/cargo-runner"
      "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$evidence_tools/cargo-runner")
    ;;
  *) evidence_env=() ;;
  esac
}

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

# What decides how the tests run but sits in files an agent may change: the part of such a file
# that changed is restored to the base (the whole file).
restore_runner_configuration() {
  local changed
  changed="$(mktemp /tmp/selfbench-changed.XXXXXX)" || return 1
  agent_changed_paths >"$changed"
  case "$runner" in
  pytest)
    restore_pytest_configuration "$changed"
    restore_shadowing_modules "$changed"
    ;;
  go | cargo | jest | vitest) restore_changed_configuration "$changed" ;;
  esac
  rm -f -- "$changed"
}

restore_file() {
  log "the agent patch changes $2 in $1; restored"
  rm -f -- "${app:?}/$1"
  app_git --literal-pathspecs checkout -q HEAD -- "$1" >/dev/null 2>&1 || true
}

# An agent may change pyproject.toml, setup.cfg and tox.ini, but not pytest's part of them.
restore_pytest_configuration() {
  local path base
  base="$(mktemp /tmp/selfbench-base.XXXXXX)" || return 1
  while IFS= read -r -d '' path; do
    case "${path##*/}" in
    """
    + "|".join(SHARED_CONFIGURATION_FILES)
    + r""") ;;
    *) continue ;;
    esac
    app_git --literal-pathspecs show "HEAD:$path" >"$base" 2>/dev/null || : >"$base"
    if [ -L "$app/$path" ] ||
      ! python3 -I -c "$same_pytest_table" "$base" "$app/$path" "$path" 2>/dev/null; then
      restore_file "$path" "pytest's configuration"
    fi
  done <"$1"
  rm -f -- "$base"
}

# Each changed go.mod or Cargo.toml whose runner-control part differs from the base's.
restore_changed_configuration() {
  local path base
  base="$(mktemp /tmp/selfbench-base.XXXXXX)" || return 1
  while IFS= read -r -d '' path; do
    case "$runner:${path##*/}" in
    """
    + " | ".join(
        f"{runner}:{name}" for name, runners in RESTORED_MANIFESTS.items() for runner in runners
    )
    + r""") ;;
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

# go.mod's replace and toolchain directives (which code and which go the tests build with);
# package.json's jest configuration, babel configuration (jest's transform) and scripts;
# Cargo.toml's part that `cargo_control` prints.
runner_control_of() {
  if [ ! -s "$1" ]; then
    echo absent
  elif [ "$runner" = jest ] || [ "$runner" = vitest ]; then
    jq -cS '["""
    + ", ".join(f".{key}" for key in PACKAGE_JSON_CONTROL_KEYS)
    + r"""]' "$1" 2>/dev/null || echo unreadable
  elif [ "$runner" = go ]; then
    GOTOOLCHAIN=local GOFLAGS='' GOWORK=off go mod edit -json -- "$1" 2>/dev/null |
      jq -c '[.Replace, .Toolchain]' 2>/dev/null || echo unreadable
  else
    awk "$cargo_control" "$1" 2>/dev/null || echo unreadable
  fi
}

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

# The untracked files before the agent's patch (the setup's ignored files), to tell the patch's
# new files from them.
remember_untracked() {
  untracked_before="$(mktemp /tmp/selfbench-untracked.XXXXXX)" || return 1
  app_git ls-files -z --others | LC_ALL=C sort -z >"$untracked_before"
}

# The command's output for the log; for go, whose output is its events, the text they carry, and
# the events as the report (written by root once no process of the verifier user is left).
show_output() {
  local output="$1" report="$2/report.jsonl"
  if [ "$runner" != go ]; then
    cat -- "$output"
    return 0
  fi
  jq -Rrj "$go_text" <"$output" 2>/dev/null || cat -- "$output"
  rm -f -- "$report"
  (set -C && jq -Rc "$go_events" <"$output" >"$report") 2>/dev/null || rm -f -- "$report"
}

# The wanted tests; for go, also each Test function of the _test.go files (the base's and the
# held-out ones) of a selected package.
wanted_tests() {
  local wanted="$1" path name
  if [ "$runner" != go ] || [ -z "$wanted" ]; then
    printf '%s' "$wanted"
    return 0
  fi
  (cd -- "$workdir" && find . \( -name testdata -o -name vendor -o -name '[._]?*' \) -prune -o \
    -type f -name '*_test.go' -print0) |
    while IFS= read -r -d '' path; do
      sed -n -e "s/^func \\($go_test_function\\)([A-Za-z0-9_]* *\\*testing\\.T).*/\\1/p" \
        -- "$workdir/$path" | grep -vx TestMain |
        while IFS= read -r name; do
          path="${path%/*}"
          printf '%s\t%s\n' "${path#./}" "$name"
        done
    done | jq -Rnc --argjson wanted "$wanted" "$go_test_names"
}

# Every path the agent's patch changed or added, NUL-separated.
agent_changed_paths() {
  app_git ls-files -z --modified
  app_git ls-files -z --others | LC_ALL=C sort -z | LC_ALL=C comm -z -13 "$untracked_before" -
}

# A module the agent adds at the top of the repository or the workdir, named like one of the
# standard library or of pytest, would be imported instead of it (the working directory comes
# first on `sys.path`): it is removed. Modules the base already has are left alone.
restore_shadowing_modules() {
  local path tracked
  tracked="$(mktemp /tmp/selfbench-tracked.XXXXXX)" || return 1
  app_git ls-files -z >"$tracked"
  while IFS= read -r -d '' path; do
    log "the agent patch shadows a module of Python or pytest: $path; removed"
    rm -rf -- "${app:?}/$path"
  done < <(python3 -I -c "$shadowing_modules" "${workdir#"$app"}" "$tracked" <"$1" 2>/dev/null)
  rm -f -- "$tracked"
}
"""
)
"""The verifier's functions that read the runners' reports (constant text, no task data)."""
