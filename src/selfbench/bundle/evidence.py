"""The verifier's evidence: each wanted test seen passing in the runner's own report.

Pure text, the part of `tests/test.sh` that reads the runners' reports. For each runner in
`EVIDENCE_RUNNERS` the verifier (root) writes a reporter into a fresh root-owned directory, has the
runner write its report into another fresh directory outside the tree, kills every process of the
verifier user, and only then reads the report: the run must have finished, no test may have failed,
and each selector must name at least one test seen passing. An agent's patch cannot place either
directory, and cannot change what loads the reporter (see `_runner_files.py`).
"""

from __future__ import annotations

from selfbench._runner_files import PYTEST_CONFIGURATION_FILES

__all__ = ["EVIDENCE_BODY", "EVIDENCE_QUERY", "EVIDENCE_RUNNERS", "PYTEST_PLUGIN"]

EVIDENCE_RUNNERS = ("pytest", "node")
"""Runners whose own structured report the verifier reads."""

PYTEST_PLUGIN = "_selfbench_evidence"
"""The module name of the pytest reporter (a runner-control name: no patch may shadow it)."""

_PYTEST_REPORTER = """\
import json
import os

_REPORT = os.environ.get("SELFBENCH_EVIDENCE", "")


def _write(record):
    if _REPORT:
        with open(_REPORT, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\\n")


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
  else
    map(select(.event == "test:pass" and .type != "suite" and .name != .file)
      | {file: .file, name: ""})
  end;
def failed:
  if $runner == "pytest" then
    map(select((.event == "test" and .outcome == "failed") or .event == "collect-error")
      | .nodeid)
  else map(select(.event == "test:fail") | .name) end;
def finished:
  if $runner == "pytest" then any(.[]; .event == "finish" and .exitstatus == 0)
  else any(.[]; .event == "finish") end;
def under($path): . == $path or startswith($path + "/");
def of($want):
  (.file | under($want.path)) or (.file | endswith("/" + $want.file))
  or (.file | contains("/" + $want.file + "/"));
def named($name):
  $name == "" or . == $name or startswith($name + "::") or startswith($name + "[");
def selector: .path + (if .name == "" then "" else "::" + .name end);
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
evidence_tools=""
evidence_problem=""
untracked_before=/dev/null
evidence_env=()

prepare_evidence_tools() {
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
  chmod 0644 -- "$evidence_tools/"*
}

new_report_dir() {
  local directory
  directory="$(mktemp -d /tmp/selfbench-report.XXXXXX)" || return 1
  chown "$verifier_user:$verifier_user" -- "$directory" && printf '%s\n' "$directory"
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

# An agent may change pyproject.toml, setup.cfg and tox.ini, but not pytest's part of them: a file
# whose pytest part changed is restored to the base.
restore_runner_configuration() {
  local path base changed
  if [ "$runner" != pytest ]; then
    return 0
  fi
  base="$(mktemp /tmp/selfbench-base.XXXXXX)" || return 1
  changed="$(mktemp /tmp/selfbench-changed.XXXXXX)" || return 1
  agent_changed_paths >"$changed"
  while IFS= read -r -d '' path; do
    case "${path##*/}" in
    """
    + "|".join(PYTEST_CONFIGURATION_FILES)
    + r""") ;;
    *) continue ;;
    esac
    app_git --literal-pathspecs show "HEAD:$path" >"$base" 2>/dev/null || : >"$base"
    if [ -L "$app/$path" ] ||
      ! python3 -I -c "$same_pytest_table" "$base" "$app/$path" "$path" 2>/dev/null; then
      log "the agent patch changes pytest's configuration in $path; restored"
      rm -f -- "${app:?}/$path"
      app_git --literal-pathspecs checkout -q HEAD -- "$path" >/dev/null 2>&1 || true
    fi
  done <"$changed"
  restore_shadowing_modules "$changed"
  rm -f -- "$base" "$changed"
}

# The untracked files before the agent's patch (the setup's ignored files), to tell the patch's
# new files from them.
remember_untracked() {
  if [ "$runner" = pytest ]; then
    untracked_before="$(mktemp /tmp/selfbench-untracked.XXXXXX)" || return 1
    app_git ls-files -z --others | LC_ALL=C sort -z >"$untracked_before"
  fi
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
