"""The bundle's shell scripts: the verifier `tests/test.sh`, `solution/solve.sh`, the collect step.

Pure. Every value from the definition or a patch enters a script through `_shell.quote` only, as
the right-hand side of an assignment in the script's data header; the body below the header is
constant text that reads those variables.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Sequence

from selfbench._paths import join_repository_path
from selfbench._runner_files import (
    PACKAGE_FILES,
    is_build_cache_project,
    package_directory_names,
    package_patterns,
    runner_control_patterns,
)
from selfbench._shell import quote, substitute_tests
from selfbench.bundle import layout
from selfbench.bundle.canaries import CanaryPlan, canary_plan
from selfbench.bundle.evidence import (
    EVIDENCE_BODY,
    EVIDENCE_RUNNERS,
    FILE_SELECTING_RUNNERS,
    FORGED_LABEL,
    KEY_DESCRIPTOR,
    REPORT_ARGUMENTS,
    REPORT_DESCRIPTOR,
    refused_names,
)
from selfbench.contract import TaskDefinition
from selfbench.outcomes import detect_runner
from selfbench.rules import PLACEHOLDER
from selfbench.runners import CANARY_NAMES, CANARY_VALUES, RUNNERS, runner_named

__all__ = [
    "CANARIES_LABEL",
    "F2P_AGAIN_LABEL",
    "F2P_LABEL",
    "INFRASTRUCTURE_ERRORS",
    "LOG_PREFIX",
    "P2P_LABEL",
    "RERUN_LABEL",
    "RETRY_LABEL",
    "REWARD_LABEL",
    "SAFE_GIT",
    "VERIFIER_LABELS",
    "canary_names",
    "collect_command",
    "container_workdir",
    "evidence_runner",
    "fail_to_pass_command",
    "forged_evidence",
    "git_exclude_pattern",
    "pass_to_pass_command",
    "pass_to_pass_paths",
    "render_solve_sh",
    "render_test_sh",
]

INFRASTRUCTURE_ERRORS = (
    "ECONNRESET", "ETIMEDOUT", "ESOCKETTIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "META_FETCH_FAIL",
    "FetchError", "EPIPE", "EPERM", r"registry\.npmjs",
)  # fmt: skip
"""Output patterns (extended regular expressions) that mark a run as an infrastructure error."""

LOG_PREFIX = "selfbench: "
"""What `test.sh` puts before each line it logs itself (its `log` function)."""
F2P_LABEL = "fail-to-pass"
F2P_AGAIN_LABEL = "fail-to-pass again"
P2P_LABEL = "pass-to-pass"
VERIFIER_LABELS = (F2P_LABEL, F2P_AGAIN_LABEL, P2P_LABEL)
"""The labels `test.sh` logs before each verifier command's output (`selfbench: <label>…`), in
the order it runs them; the log's readers split a run's output by them."""
RETRY_LABEL = "infrastructure error"
"""Logged as `selfbench: infrastructure error (exit N); retrying …` before a command's retry."""
RERUN_LABEL = "rerun"
"""Logged as `selfbench: rerun: …` before a command's second run, when its report and the signals
beside it disagreed: the command's output starts again after it."""
REWARD_LABEL = "reward"
"""Logged as `selfbench: reward R` after the last command's output."""
CANARIES_LABEL = "canaries"
"""Logged as `selfbench: canaries: NAME NAME` once the run's canaries are planted: the names
drawn for them (`bundle/canaries.py`), which a test's name holds."""

_GLOB_SPECIALS = frozenset("\\*?[]")


def container_workdir(definition: TaskDefinition) -> str:
    """`/app/<workdir>` as the containers spell it (`/app/.` for the repository root)."""
    return f"{layout.CONTAINER_APP}/{definition.workdir}"


def fail_to_pass_command(definition: TaskDefinition) -> str:
    """The test command with `{tests}` replaced by the fail-to-pass selectors."""
    return substitute_tests(definition.testCommand, definition.failToPass)


def pass_to_pass_command(definition: TaskDefinition) -> str:
    """The test command for the pass-to-pass selectors; `true` when there are none."""
    if not definition.passToPass:
        return "true"
    return substitute_tests(definition.testCommand, definition.passToPass)


def _verifier_command(definition: TaskDefinition, selectors: tuple[str, ...]) -> str:
    """The command test.sh runs: the selectors, then any arguments that ask for the report."""
    if not selectors:
        return "true"
    extra = REPORT_ARGUMENTS.get(evidence_runner(definition))
    if extra is None:
        return substitute_tests(definition.testCommand, selectors)
    words = " ".join(quote(selector) for selector in selectors)
    return definition.testCommand.replace(PLACEHOLDER, f"{words} {extra}")


def canary_names(log: str) -> tuple[str, ...]:
    """The names drawn for a run's canaries, as its `test.sh` log says them before any command's
    output (none: none; a test's output cannot name them)."""
    marker = f"{LOG_PREFIX}{CANARIES_LABEL}: "
    start = f"{LOG_PREFIX}{F2P_LABEL}"
    for line in log.splitlines():
        if line.startswith(start):
            break
        if line.startswith(marker):
            names = tuple(line[len(marker) :].split())
            if all(name.isascii() and name.isalnum() for name in names):
                return names
    return ()


def forged_evidence(log: str) -> str | None:
    """Why a run's report was forged, as its `test.sh` log first says it (None: it does not)."""
    marker = f"{LOG_PREFIX}{FORGED_LABEL}: "
    for line in log.splitlines():
        if line.startswith(marker):
            return line[len(marker) :][:500]
    return None


def evidence_runner(definition: TaskDefinition) -> str:
    """The runner whose own report the verifier reads (`pytest`, `node`), or "" for none."""
    runner = detect_runner(definition.testCommand)
    return runner if runner in EVIDENCE_RUNNERS else ""


def _selector_file(selector: str) -> str:
    return selector.split("::", 1)[0]


def pass_to_pass_paths(definition: TaskDefinition) -> tuple[str, ...]:
    """The repository paths the pass-to-pass selectors name (runners that select by file)."""
    if evidence_runner(definition) not in FILE_SELECTING_RUNNERS:
        return ()
    paths = []
    for selector in definition.passToPass:
        path = join_repository_path(definition.workdir, _selector_file(selector))
        if path not in {".", ""} and not path.startswith(("../", "/")) and path != "..":
            paths.append(path)
    return tuple(paths)


def _evidence(definition: TaskDefinition, selectors: Sequence[str]) -> str:
    """What the runner's report must show passing: each selector's path (absolute, and as given,
    for a command that changes directory first) and test name."""
    if not selectors or not evidence_runner(definition):
        return ""
    runner = runner_named(evidence_runner(definition))
    if runner is not None and runner.selects_by_name:  # a libtest filter, not a path
        return json.dumps(
            [{"path": selector, "file": "", "name": selector} for selector in selectors],
            separators=(",", ":"),
        )
    wanted = []
    for selector in selectors:
        file, _, name = selector.partition("::")
        path = posixpath.normpath(posixpath.join(container_workdir(definition), file))
        wanted.append({"path": path, "file": posixpath.normpath(file), "name": name})
    return json.dumps(wanted, separators=(",", ":"))


def git_exclude_pattern(path: str) -> str:
    """A `git apply --exclude` pattern matching exactly `path` (wildmatch specials escaped)."""
    return "".join(f"\\{char}" if char in _GLOB_SPECIALS else char for char in path)


_NO_HOME = "/nonexistent"
"""`HOME` for root's tools in the scripts: no configuration file is found there."""
_SAFE_GIT_ENVIRONMENT = (
    f"HOME={_NO_HOME} GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_ATTR_NOSYSTEM=1"
)
_SAFE_GIT_OPTIONS = "-c safe.directory='*' -c core.hooksPath=/dev/null -c core.fsmonitor=false"

SAFE_GIT = rf"""
# Git as the scripts run it: nothing that setup left behind runs or counts. No system, global
# or XDG configuration or attributes, no hooks, no fsmonitor; and `safe_git_dir` reduces a
# repository's own configuration to its format (no filter, no hook path, no worktree elsewhere).
safe_git() {{
  env -u XDG_CONFIG_HOME {_SAFE_GIT_ENVIRONMENT} \
    git {_SAFE_GIT_OPTIONS} "$@"
}}

safe_git_dir() {{
  local dir="$1" format kept key value
  if [ -L "$dir" ] || [ ! -d "$dir" ] || [ -L "$dir/config" ]; then
    printf 'selfbench: %s is not a plain git directory\n' "$dir"
    return 1
  fi
  format='^(core\.(repositoryformatversion|bare|filemode|logallrefupdates|symlinks|ignorecase)'
  format+='|extensions\.(objectformat|refstorage))$'
  kept="$(safe_git config --file "$dir/config" --get-regexp "$format")" || kept=""
  rm -rf -- "$dir/config" "$dir/config.worktree" "$dir/commondir" "$dir/hooks" \
    "$dir/info/attributes"
  : >"$dir/config" && chmod 0644 -- "$dir/config" || return 1
  while read -r key value; do
    if [ -n "$key" ]; then
      safe_git config --file "$dir/config" "$key" "$value" || return 1
    fi
  done <<<"$kept"
}}
"""
"""Shell functions for the scripts that run git as root in a tree setup has been through
(`tests/test.sh`, and the preparation's `agent` stage): `safe_git` ignores every configuration
but the repository's and runs no hook or fsmonitor; `safe_git_dir DIR` keeps only the format
keys of DIR's configuration and removes its hooks and attributes."""


def collect_command() -> str:
    """The `[[verifier.collect]]` command: the agent's work as one binary diff against the base.

    Its git ignores every configuration but the base git dir's (which the preparation reduced
    with `safe_git_dir`), and runs no hook or fsmonitor."""
    git = (
        f"git {_SAFE_GIT_OPTIONS} --git-dir={layout.CONTAINER_BASE_GIT}"
        f" --work-tree={layout.CONTAINER_APP}"
    )
    partial = f"{layout.CONTAINER_AGENT_PATCH}.partial"
    return (
        f"set -eu; unset XDG_CONFIG_HOME; export {_SAFE_GIT_ENVIRONMENT}; "
        f"{git} add -A; "
        f"{git} diff --cached --binary --no-renames --no-ext-diff --no-textconv HEAD > {partial}; "
        f"mv -f {partial} {layout.CONTAINER_AGENT_PATCH}"
    )


def render_solve_sh() -> str:
    """`solution/solve.sh`: apply the gold patch in /app."""
    return (
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        f"cd {layout.CONTAINER_APP}\n"
        f"git apply --binary --whitespace=nowarn {layout.CONTAINER_GOLD_PATCH}\n"
    )


def _array(values: Iterable[str]) -> str:
    return "(" + " ".join(quote(value) for value in values) + ")"


def _exclude_args(protected: tuple[str, ...], *, build_cache: bool) -> tuple[str, ...]:
    """The held-out paths and the runner-control paths protected whether tracked or not."""
    args: list[str] = []
    for path in protected:
        pattern = git_exclude_pattern(path.rstrip("/"))
        args.extend((f"--exclude={pattern}", f"--exclude={pattern}/*"))
    patterns = runner_control_patterns(build_cache=build_cache)
    args.extend(f"--exclude={pattern}" for pattern in patterns)
    return tuple(args)


def _canary_command(definition: TaskDefinition, canaries: CanaryPlan | None) -> str:
    """The fail-to-pass command with the canaries' selectors, before or after its own ("": no
    canary)."""
    if canaries is None:
        return ""
    f2p = tuple(definition.failToPass)
    if canaries.first:
        return _verifier_command(definition, canaries.selectors + f2p)
    return _verifier_command(definition, f2p + canaries.selectors)


def _failed_status(definition: TaskDefinition) -> int:
    """The exit status the task's runner ends with when tests failed."""
    runner = runner_named(evidence_runner(definition))
    return 1 if runner is None else runner.failed_status


def _names_pattern(names: Iterable[str]) -> str:
    """An extended regular expression (`grep -E`) for a path whose last name is one of `names`."""
    alternatives = "|".join(name.replace(".", r"\.") for name in names)
    return f"(^|/)({alternatives})$"


def _header(
    definition: TaskDefinition,
    protected: tuple[str, ...],
    gold_patch: bytes,
    *,
    evidence: bool,
    canaries: CanaryPlan | None,
) -> str:
    assignments = {
        "app": layout.CONTAINER_APP,
        "workdir": container_workdir(definition),
        "agent_patch": layout.CONTAINER_AGENT_PATCH,
        "test_patch": layout.CONTAINER_TEST_PATCH,
        "reward_file": layout.CONTAINER_REWARD,
        "shared_uv_cache": layout.CONTAINER_UV_CACHE,
        "verifier_user": layout.VERIFIER_USER,
        "infrastructure_errors": "|".join(INFRASTRUCTURE_ERRORS),
        "fail_to_pass_command": _verifier_command(definition, tuple(definition.failToPass)),
        "pass_to_pass_command": _verifier_command(definition, tuple(definition.passToPass)),
        "runner": evidence_runner(definition),
        "fail_to_pass_evidence": _evidence(definition, definition.failToPass) if evidence else "",
        "pass_to_pass_evidence": _evidence(definition, definition.passToPass) if evidence else "",
        "canary_file": canaries.file if canaries else "",
        "canary_text": canaries.text if canaries else "",
        "canary_requires": canaries.requires if canaries else "",
        "canary_refuses": canaries.refuses if canaries else "",
        "fail_to_pass_canary_command": _canary_command(definition, canaries),
        "failed_status": str(_failed_status(definition)),
    }
    lines = [
        f"export PATH={quote(layout.CONTAINER_PATH)}",
        "# root's home is what setup left: no tool here reads its configuration (jq's ~/.jq)",
        f"export HOME={_NO_HOME}",
        "unset XDG_CONFIG_HOME",
    ]
    for name, value in assignments.items():
        if name.endswith("_command"):  # `$SELFBENCH_REPORTER` expands when the command runs
            lines.append("# shellcheck disable=SC2016")
        lines.append(f"readonly {name}={quote(value)}")
    lines.append(f"readonly protected_paths={_array(protected)}")
    cache = is_build_cache_project(definition.toolchains)
    lines.append(f"readonly exclude_args={_array(_exclude_args(protected, build_cache=cache))}")
    packages = (f"--exclude={pattern}" for pattern in package_patterns(build_cache=cache))
    lines.append(f"readonly package_exclude_args={_array(packages)}")
    directories = _names_pattern(package_directory_names(build_cache=cache))
    lines.append(f"readonly package_directories={quote(directories)}")
    lines.append(f"readonly package_files={quote(_names_pattern(PACKAGE_FILES))}")
    lines.append(f"readonly verifier_names={_array(refused_names(gold_patch))}")
    return "\n".join(lines) + "\n"


_PREAMBLE = """\
#!/bin/bash
# The selfbench verifier. Runs as root after the agent phase: applies the agent's patch without
# touching held-out, pass-to-pass or runner-control paths, restores and applies the held-out
# tests, runs fail-to-pass (twice when it passes) and pass-to-pass as the verifier user, reads
# each test's outcome from the runner's own report, kills every process of the verifier user,
# and writes the verdict to reward.json, in a directory only root can write.
# It always exits 0. Generated by selfbench; the data below is shell-quoted, the body is fixed.
set -uo pipefail
"""

_BODY = r"""
patch_applied=1
setup_completed=0
forged=0
fail_to_pass=0
pass_to_pass=0
deterministic=0
all_stopped=1
names_verifier=0
fail_to_pass_exit_code=-1
fail_to_pass_repeat_exit_code=-1
pass_to_pass_exit_code=-1
uv_cache=""
fail_to_pass_wanted=""
pass_to_pass_wanted=""
fail_to_pass_run="$fail_to_pass_command"
planted='[]'
canary_names=()
canary_backup=""

log() { printf '@LOG_PREFIX@%s\n' "$*"; }

# The reward's directory (and its parent) belong to root alone, so nothing the verifier user
# leaves behind can replace reward.json once it is written, nor the directory that holds it.
lock_reward_dir() {
  local directory parent
  directory="$(dirname -- "$reward_file")"
  parent="$(dirname -- "$directory")"
  mkdir -p -- "$parent" && chmod go-w -- "$parent"
  if [ -L "$directory" ] ||
    { [ -e "$directory" ] && [ "$(stat -c %u -- "$directory")" != 0 ]; }; then
    rm -rf -- "$directory"
  fi
  mkdir -p -- "$directory" && chown root:root -- "$directory" && chmod 0755 -- "$directory"
  rm -f -- "$reward_file"
}

write_reward() {
  local reward=0 partial
  if [ "$patch_applied" -eq 1 ] && [ "$fail_to_pass" -eq 1 ] && [ "$deterministic" -eq 1 ] &&
    [ "$pass_to_pass" -eq 1 ] && [ "$all_stopped" -eq 1 ] && [ "$names_verifier" -eq 0 ] &&
    [ "$forged" -eq 0 ]; then
    reward=1
  fi
  kill_verifier_processes || reward=0
  lock_reward_dir
  partial="$(mktemp -- "$reward_file.XXXXXX")" || return 1
  chmod 0644 -- "$partial"
  printf '{
  "reward": %d,
  "patch_applied": %d,
  "fail_to_pass": %d,
  "pass_to_pass": %d,
  "deterministic": %d,
  "setup_completed": %d,
  "fail_to_pass_exit_code": %d,
  "fail_to_pass_repeat_exit_code": %d,
  "pass_to_pass_exit_code": %d,
  "forged": %d
}\n' \
    "$reward" "$patch_applied" "$fail_to_pass" "$pass_to_pass" "$deterministic" \
    "$setup_completed" "$fail_to_pass_exit_code" "$fail_to_pass_repeat_exit_code" \
    "$pass_to_pass_exit_code" "$forged" >"$partial" && mv -f -- "$partial" "$reward_file"
  log "@REWARD@ $reward"
}

# Every process of the verifier user, killed until none is left (a fork races a single kill).
kill_verifier_processes() {
  local round
  for round in {1..50}; do
    pkill -KILL -u "$verifier_user" >/dev/null 2>&1
    if ! pgrep -u "$verifier_user" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  log "processes of $verifier_user survived $round kills"
  all_stopped=0
  return 1
}

# A patch adding code that names the verifier's internals scores 0 (see evidence.py).
check_agent_names() {
  local found line
  found="$(agent_names_verifier)" || found="the agent patch could not be read"
  if [ -n "$found" ]; then
    names_verifier=1
    while IFS= read -r line; do
      log "the agent patch names the verifier's internals: $line"
    done <<<"$found"
  fi
}

app_git() {
  safe_git -C "$app" "$@"
}

# `--include` patterns for the base's own directories and modules named like a runner's package
# (@PACKAGE_PROJECTS@ repositories): the project's code, which the agent's patch may change.
# A new one is left out (`package_exclude_args`), as it would shadow the runner.
tracked_package_args() {
  {
    app_git ls-tree -r -d -z --name-only HEAD | grep -z -E -e "$package_directories" |
      sed -z -e 's/[][\\*?]/\\&/g' -e 's|$|/*|'
    app_git ls-tree -r -z --name-only HEAD | grep -z -E -e "$package_files" |
      sed -z -e 's/[][\\*?]/\\&/g'
  } | sed -z -e 's/^/--include=/'
}

# git apply takes each path's first matching pattern: the held-out and runner-control paths,
# then the tracked packages, then new packages; `--include=*` keeps every other path.
apply_agent_patch() {
  local include_args=()
  mapfile -d '' -t include_args < <(tracked_package_args)
  if [ ! -f "$agent_patch" ]; then
    log "no agent patch at $agent_patch"
    patch_applied=0
  elif [ -s "$agent_patch" ] &&
    ! app_git apply --binary --whitespace=nowarn "${exclude_args[@]}" "${include_args[@]}" \
      "${package_exclude_args[@]}" --include='*' -- "$agent_patch"; then
    log "the agent patch does not apply"
    patch_applied=0
  fi
}

restore_protected_paths() {
  local path
  for path in "${protected_paths[@]}"; do
    app_git --literal-pathspecs checkout -q HEAD -- "$path" >/dev/null 2>&1 || true
    app_git --literal-pathspecs clean -fdq -- "$path" >/dev/null 2>&1 || true
  done
}

hand_tree_to_verifier() {
  find "$app" \( ! -user "$verifier_user" -o ! -group "$verifier_user" \) \
    -exec chown -h "$verifier_user:$verifier_user" -- {} +
}

protect_path() {
  local target="$app/$1"
  if [ ! -e "$target" ] && [ ! -L "$target" ]; then
    return 0
  fi
  chown -hR root:root -- "$target" &&
    find "$target" ! -type l -exec chmod a-w,a+rX -- {} +
}

# A name or sentinel for a canary, drawn for this run: a lowercase letter, then eleven lowercase
# letters and digits.
canary_word() {
  local first rest
  first="$(head -c 1024 /dev/urandom | LC_ALL=C tr -dc '[:lower:]' | head -c 1)"
  rest="$(head -c 4096 /dev/urandom | LC_ALL=C tr -dc '[:lower:][:digit:]' | head -c 11)"
  [ "${#first}${#rest}" = 111 ] && printf '%s%s' "$first" "$rest"
}

# Appends the must-fail canaries to their held-out file (`bundle/canaries.py`), named and with
# sentinels drawn now, and has the fail-to-pass command select them; the log names them.
plant_canaries() {
  local target="$app/$canary_file" text a b value_a value_b
  if [ -z "$canary_file" ]; then
    return 0
  fi
  if [ -L "$target" ] || [ ! -f "$target" ] ||
    [ "$(realpath -e -- "$target")" != "$(realpath -e -- "$app")/$canary_file" ] ||
    { [ -n "$canary_requires" ] && ! grep -qE -- "$canary_requires" "$target"; } ||
    { [ -n "$canary_refuses" ] && grep -qE -- "$canary_refuses" "$target"; }; then
    log "no canary: $canary_file cannot hold them"
    return 0
  fi
  if ! { a="$(canary_word)" && b="$(canary_word)" && value_a="$(canary_word)" &&
    value_b="$(canary_word)"; }; then
    log "no canary: no name could be drawn"
    return 0
  fi
  canary_backup="$(mktemp /tmp/selfbench-canary.XXXXXX)" && cp -- "$target" "$canary_backup" ||
    return 1
  text="${canary_text//"@NAME_A@"/$a}"
  text="${text//"@NAME_B@"/$b}"
  text="${text//"@VALUE_A@"/$value_a}"
  printf '%s' "${text//"@VALUE_B@"/$value_b}" >>"$target" || return 1
  fail_to_pass_run="${fail_to_pass_canary_command//"@NAME_A@"/$a}"
  fail_to_pass_run="${fail_to_pass_run//"@NAME_B@"/$b}"
  canary_names=("$a" "$b")
  planted="[\"$a\",\"$b\"]"
  log "@CANARIES@: $a $b"
}

# Gives the canaries' file back as the held-out tests have it once the fail-to-pass runs ended
# (no process of the verifier user is left), before pass-to-pass, whose selectors may run it
# too (where they are patterns): a new file in place of whatever is there, in the directory the
# file was planted in.
remove_canaries() {
  local target="$app/$canary_file"
  if [ -z "$canary_backup" ]; then
    return 0
  fi
  if [ "$(realpath -e -- "$(dirname -- "$target")")" != \
    "$(realpath -s -m -- "$(realpath -e -- "$app")/$(dirname -- "$canary_file")")" ]; then
    log "the canaries' directory moved; $canary_file left as it is"
    return 0
  fi
  rm -f -- "$target" && cp -- "$canary_backup" "$target" &&
    chown "$verifier_user:$verifier_user" -- "$target" && rm -f -- "$canary_backup"
  protect_path "$canary_file"
}

# Its input's lines (tests' names) but those of the canaries.
not_canaries() {
  if [ "${#canary_names[@]}" -eq 0 ]; then
    cat
  else
    grep -v -F -e "${canary_names[0]}" -e "${canary_names[1]}" || true
  fi
}

prepare_held_out_tests() {
  local path
  restore_protected_paths
  if ! app_git apply --binary --whitespace=nowarn -- "$test_patch"; then
    log "the held-out test patch does not apply"
    rm -f -- "$test_patch"
    return 0
  fi
  rm -f -- "$test_patch"
  plant_canaries || return 0
  hand_tree_to_verifier || return 0
  for path in "${protected_paths[@]}"; do
    protect_path "$path" || return 0
  done
  setup_completed=1
}

prepare_uv_cache() {
  uv_cache="$(mktemp -d /tmp/selfbench-uv-cache.XXXXXX)" || return 1
  if [ -d "$shared_uv_cache" ]; then
    cp -a -- "$shared_uv_cache/." "$uv_cache/" || return 1
  fi
  chown -R "$verifier_user:$verifier_user" -- "$uv_cache"
}

# Runs a command once as the verifier user, fresh: a new report directory, channel and key (opened
# here by root on descriptors the command inherits: `open_report_channel`, from
# `set_evidence_env`), every process of the verifier user killed after. Its status, and in
# `$evidence_problem` what `check_evidence` says of its report ($2: the wanted tests), whose
# records it leaves in `$4`; the output, captured in `$3`, is logged.
run_once() {
  local command="$1" wanted="$2" output="$3" records="$4" status report
  evidence_problem=""
  : >"$records"
  report="$(new_report_dir)" || return 1
  report_channel=/dev/null
  key_channel=/dev/null
  set_evidence_env "$report"
  (cd -- "$workdir" && exec runuser -u "$verifier_user" -- env PATH="$PATH" \
    HOME="/home/$verifier_user" UV_CACHE_DIR="$uv_cache" "${evidence_env[@]}" \
    bash -c "$command") </dev/null >"$output" 2>&1 @DESCRIPTOR@>>"$report_channel" \
    @KEY@<"$key_channel"
  status=$?
  kill_verifier_processes
  show_output "$output" "$report"
  evidence_problem="$(check_evidence "$report" "$wanted" "$output" "$records")"
  rm -rf -- "$report"
  case "$evidence_problem" in
  "@FORGED@: "*)
    forged=1
    log "$evidence_problem"
    ;;
  "")
    # The canaries failed, as they must, and no other test did: the runner's status for failed
    # tests is the run passing.
    if [ -n "$wanted" ] && [ "$canaries" != '[]' ] && [ "$status" -eq "$failed_status" ]; then
      status=0
    fi
    ;;
  esac
  return "$status"
}

# Runs a command as the verifier user; its status, and in `$evidence_problem` why the runner's
# own report does not show every wanted test passing ("" when it does or nothing is wanted).
# When the report and the signals beside it (the runner's own summary, the exit status) disagree
# (`signals_disagree`), the command runs once more, fresh, and that run decides: the wanted tests
# pass only if its report shows them passing, its summary and status agree, and the first run's
# report showed no test failing (a test failing there and passing on the rerun is a disagreement).
run_as_verifier() {
  local command="$1" wanted="$2" output records status=1 attempt disagreement failed
  output="$(mktemp /tmp/selfbench-output.XXXXXX)" || return 1
  records="$(mktemp /tmp/selfbench-records.XXXXXX)" || return 1
  for attempt in 1 2 3; do
    run_once "$command" "$wanted" "$output" "$records"
    status=$?
    if [ "$status" -eq 0 ] || [ "$attempt" -eq 3 ] ||
      ! grep -qE -- "$infrastructure_errors" "$output"; then
      break
    fi
    log "@RETRY@ (exit $status); retrying in $((10 * attempt)) s"
    sleep "$((10 * attempt))"
  done
  disagreement="$(signals_disagree "$records" "$wanted" "$status")"
  if [ -n "$disagreement" ]; then
    log "$disagreement"
    failed="$(tests_failed "$records")"
    log "@RERUN@: running the command once more, fresh"
    run_once "$command" "$wanted" "$output" "$records"
    status=$?
    disagreement="$(signals_disagree "$records" "$wanted" "$status")"
    if [ -n "$disagreement" ]; then
      log "the rerun disagrees too: $disagreement"
    elif [ "$status" -ne 0 ] || [ -n "$evidence_problem" ]; then
      log "the rerun agrees: not every wanted test passes"
    elif [ "$failed" != 0 ]; then
      evidence_problem="the first run's report shows a test failing that the rerun shows passing"
      log "the runs disagree: $evidence_problem"
    else
      log "the rerun agrees: every wanted test passes"
    fi
  fi
  rm -f -- "$output" "$records"
  if [ -n "$evidence_problem" ]; then
    log "no evidence from $runner's own report: $evidence_problem"
  fi
  return "$status"
}

run_tests() {
  prepare_uv_cache || log "could not copy the uv cache"
  prepare_evidence_tools || log "could not write the $runner reporter"
  log "@FAIL_TO_PASS@: $fail_to_pass_run"
  fail_to_pass_wanted="$(wanted_tests "$fail_to_pass_evidence")"
  pass_to_pass_wanted="$(wanted_tests "$pass_to_pass_evidence")"
  canaries="$planted"
  run_as_verifier "$fail_to_pass_run" "$fail_to_pass_wanted"
  fail_to_pass_exit_code=$?
  if [ "$fail_to_pass_exit_code" -eq 0 ] && [ -z "$evidence_problem" ]; then
    fail_to_pass=1
@REPEAT@
  fi
  canaries='[]'
  remove_canaries
  log "@PASS_TO_PASS@: $pass_to_pass_command"
  run_as_verifier "$pass_to_pass_command" "$pass_to_pass_wanted"
  pass_to_pass_exit_code=$?
  if [ "$pass_to_pass_exit_code" -eq 0 ] && [ -z "$evidence_problem" ]; then
    pass_to_pass=1
  fi
}
"""

_LOG_WORDS = {
    "@LOG_PREFIX@": LOG_PREFIX,
    "@REWARD@": REWARD_LABEL,
    "@RETRY@": RETRY_LABEL,
    "@RERUN@": RERUN_LABEL,
    "@FAIL_TO_PASS_AGAIN@": F2P_AGAIN_LABEL,
    "@FAIL_TO_PASS@": F2P_LABEL,
    "@PASS_TO_PASS@": P2P_LABEL,
    "@CANARIES@": CANARIES_LABEL,
    "@FORGED@": FORGED_LABEL,
    "@NAME_A@": CANARY_NAMES[0],
    "@NAME_B@": CANARY_NAMES[1],
    "@VALUE_A@": CANARY_VALUES[0],
    "@VALUE_B@": CANARY_VALUES[1],
}


def _spell_log_words(body: str) -> str:
    """The body with the log's words spelled as above (its one spelling)."""
    for token, word in _LOG_WORDS.items():
        body = body.replace(token, word)
    return body


_PACKAGE_PROJECTS = tuple(
    dict.fromkeys(project for runner in RUNNERS for project in runner.package_projects)
)
"""The projects whose repositories track directories named like a runner's package, as the
body's comment on `tracked_package_args` names them."""
_BODY = (
    _spell_log_words(_BODY)
    .replace("@PACKAGE_PROJECTS@", " and ".join(f"{project}'s" for project in _PACKAGE_PROJECTS))
    .replace("@DESCRIPTOR@", str(REPORT_DESCRIPTOR))
    .replace("@KEY@", str(KEY_DESCRIPTOR))
)
_REPEAT = _spell_log_words(
    """\
    log "@FAIL_TO_PASS_AGAIN@ (determinism)"
    run_as_verifier "$fail_to_pass_run" "$fail_to_pass_wanted"
    fail_to_pass_repeat_exit_code=$?
    if [ "$fail_to_pass_repeat_exit_code" -eq 0 ] && [ -z "$evidence_problem" ]; then
      deterministic=1
    fi
"""
)
"""The determinism repeat of fail-to-pass, run when its first run passed."""

_MAIN = r"""
lock_reward_dir
if safe_git_dir "$app/.git"; then
  remember_untracked
  apply_agent_patch
else
  patch_applied=0
fi
if [ "$patch_applied" -eq 1 ]; then
  restore_runner_configuration
  check_agent_names
  prepare_held_out_tests
fi
if [ "$setup_completed" -eq 1 ]; then
  run_tests
fi
write_reward
exit 0
"""


def render_test_sh(
    definition: TaskDefinition,
    protected: tuple[str, ...],
    gold_patch: bytes = b"",
    *,
    repeat: bool = True,
    evidence: bool = True,
    canaries: bool = True,
) -> str:
    """`tests/test.sh`, the verifier (SPEC §5), for the given protected (held-out) paths.

    The pass-to-pass files are protected too, like the held-out ones. An agent's patch that adds
    a line naming one of the verifier's internals scores 0, unless the gold patch adds that name
    too (`evidence.refused_names`). Without `repeat` (quality's variant runs, never a bundle's
    verifier), fail-to-pass runs once: `deterministic` stays 0, so the reward is 0 and only
    `fail_to_pass` says how the run went. Without `evidence` (the draft's own runs, which read
    each file's outcomes from their marker lines and run no agent's code), the runner's report
    is asked for nothing, so a report the draft's per-file loop leaves partial (node's holds the
    last file's run) never sends the command to a fresh rerun. Without `canaries` (the draft's
    base run, which reads each file's exit from its marker lines), none is planted
    (`bundle/canaries.py`); nor without `evidence`, which they need.
    """
    everything = tuple(dict.fromkeys((*protected, *pass_to_pass_paths(definition))))
    body = _BODY.replace("@REPEAT@\n", _REPEAT if repeat else "") + SAFE_GIT + EVIDENCE_BODY
    plan = canary_plan(definition, protected) if evidence and canaries else None
    header = _header(definition, everything, gold_patch, evidence=evidence, canaries=plan)
    return _PREAMBLE + header + body + _MAIN
