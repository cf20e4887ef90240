"""go test: its command, its log's `--- PASS: Name (0.00s)` and per-package lines, and the
command a draft gives it.

The inferred test command joins its selectors into one `go test -run` pattern
(`^TestA$|^TestB$/^case$`), and a selector naming a `_test.go` file runs that file's package.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from selfbench.errors import DraftError
from selfbench.runners._index import GO
from selfbench.runners._log import NO_MATCH, Outcome, Result, Run, table
from selfbench.runners._protocol import (
    CanaryParts,
    CompiledProject,
    Part,
    Runner,
    VerifierParts,
    readonly,
)

__all__ = ["GO_EVENTS", "GO_TEST_NAMES", "GO_TEXT", "RUNNER", "parse_go"]

_GO_RESULTS = table("PASS", "FAIL", "SKIP")


@dataclass(slots=True)
class _GoPackages:
    ran: int = 0
    no_tests_to_run: int = 0
    no_test_files: int = 0
    no_packages: bool = False


def parse_go(run: Run) -> Result:
    result = Result()
    packages = _GoPackages()
    for line in run.lines:
        found = _go_test(line)
        if found is not None:
            result.record(*found)
        else:
            _go_package(line, packages)
    if not result.tests and not packages.ran:
        if packages.no_tests_to_run:
            result.no_tests = NO_MATCH
        elif packages.no_test_files:
            result.no_tests = "go test ran no test (no test files)"
        elif packages.no_packages:
            result.no_tests = "go test ran no test (matched no packages)"
    return result


def _go_test(line: str) -> tuple[str, Outcome] | None:
    """`--- PASS: TestX/sub (0.00s)`, indented for a subtest."""
    text = line.lstrip()
    if not text.startswith("--- "):
        return None
    word, _, rest = text[4:].partition(": ")
    outcome, name = _GO_RESULTS.get(word), rest.partition(" ")[0]
    return None if outcome is None or not name else (name, outcome)


def _go_package(line: str, packages: _GoPackages) -> None:
    if line.startswith("ok") and line[2:3] in (" ", "\t") and "\t" in line:
        if line.endswith("[no tests to run]"):
            packages.no_tests_to_run += 1
        else:
            packages.ran += 1
    elif line.startswith(("FAIL\t", "FAIL ")):
        packages.ran += 1  # a failing package: a build failure or failing tests, not "no test"
    elif line.startswith("?") and line.endswith("[no test files]"):
        packages.no_test_files += 1
    elif line == "testing: warning: no tests to run":
        packages.no_tests_to_run += 1
    elif line.startswith("go: warning: ") and line.endswith("matched no packages"):
        packages.no_packages = True


_GO_TEST_RE = re.compile(r"(?:Test|Example|Fuzz|Benchmark)\w*")
_REGEX_SPECIALS = frozenset("\\.+*?()|[]{}^$")


def _go_part(part: str) -> str:
    return "".join(f"\\{char}" if char in _REGEX_SPECIALS else char for char in part)


def _selector(test_name: str) -> str:
    """The `-run` pattern of a test (`pkg/TestX/case` or `TestX/case` → `^TestX$/^case$`)."""
    parts = test_name.split("/")
    start = next((at for at, part in enumerate(parts) if _GO_TEST_RE.fullmatch(part)), None)
    if start is None:
        raise DraftError(f"go test {test_name!r} names no Test, Example or Fuzz function")
    return "/".join(f"^{_go_part(part)}$" for part in parts[start:])


_TEST_COMMAND = (
    'sh -c \'pkgs=; run=; for arg; do case $arg in */*_test.go) pkgs="$pkgs ./${arg%/*}";; '
    '*_test.go) pkgs="$pkgs .";; *) run="$run|$arg";; esac; done; '
    'exec go test -v -run "${run#|}" ${pkgs:-./...}\' go-test {tests}'
)

# The verifier's evidence for go test (`Runner`'s `report_*` and `verifier_*` parts, text that
# `bundle/evidence.py` puts together into `tests/test.sh`).
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

_PACKAGE_OF = r"""def package_of($want):
  ($want.file | rtrimstr("...") | rtrimstr("/")) as $dir
  | if ($want.file | endswith("...")) then
      $dir == "" or $dir == "." or . == $dir or endswith("/" + $dir)
      or contains("/" + $dir + "/") or startswith($dir + "/")
    else $dir == "." or . == $dir or endswith("/" + $dir) end;
"""
_PASSED = r"""
    map(select((.Action == "pass" or .Action == "skip") and (.Test | type) == "string")
      | {file: .Package, name: .Test})"""
_FAILED = r"""
    . as $events
    | map(select(.Action == "fail" or .Action == "build-fail")
      | select(if (.Test | type) == "string" then .Test | canary | not
               else .Action == "build-fail" or (.Package as $package
                 | any($events[]; .Action == "fail" and .Package == $package
                       and (.Test | type) == "string" and (.Test | canary))
                 | not) end)
      | ((.Package // .ImportPath // "") + (if .Test then " " + .Test else "" end)))"""
# A package's own failure is its canaries' when a canary of that package failed: its other
# failing tests are named on their own.
_TESTS = r"""
    map(select((.Test | type) == "string"
        and (.Action == "pass" or .Action == "fail" or .Action == "skip"))
      | {name: .Test,
         outcome: (if .Action == "pass" then "passed" elif .Action == "fail" then "failed"
                   else "other" end)})"""
_PATH_SELECTOR = re.compile(r"[./]|.*_test\.go$")
"""A go selector that names a package or a test file (`./calc`, `calc/x_test.go`), not a test."""


def _canary_selector(file: str, name: str, selectors: Sequence[str]) -> str | None:  # noqa: ARG001
    """A `-run` pattern for a canary when the selectors hold patterns (the draft's command runs
    only the tests they match); none when they name packages (every test of them runs)."""
    if all(_PATH_SELECTOR.match(selector) for selector in selectors):
        return None
    return f"^Test_{name}$"


_GOOS = (
    "aix|android|darwin|dragonfly|freebsd|hurd|illumos|ios|js|linux|nacl|netbsd|openbsd|plan9"
    "|solaris|wasip1|windows|zos"
)
_GOARCH = (
    "386|amd64|amd64p32|arm|armbe|arm64|arm64be|loong64|mips|mipsle|mips64|mips64le|mips64p32"
    "|mips64p32le|ppc|ppc64|ppc64le|riscv|riscv64|s390|s390x|sparc|sparc64|wasm"
)
_NOT_BUILT = re.compile(
    r"(?:^|/)(?:testdata|vendor|[._][^/]*)/|(?:^|/)[._][^/]*$"
    rf"|_(?:(?:{_GOOS})(?:_(?:{_GOARCH}))?|{_GOARCH})_test\.go$"
)
"""A `_test.go` file go may not build here: under `testdata`, `vendor` or a directory go
ignores, a name go ignores, or one for a system or an architecture (even the image's own: which
one that is, the task does not say)."""


def _canary_hosts(file: str, selectors: Sequence[str]) -> bool:
    """Whether the selectors run the tests of `file`: its package is one they name (`./calc`,
    `./calc/...`, `./...`), or they name none (patterns, run over every package)."""
    directory = posixpath.dirname(file) or "."
    if _NOT_BUILT.search(file):
        return False
    packages = [selector for selector in selectors if _PATH_SELECTOR.match(selector)]
    for selector in packages:
        recursive = selector.endswith("/...") or selector == "..."
        package = posixpath.normpath(selector.removesuffix("...").rstrip("/") or ".")
        if package.endswith("_test.go"):
            package = posixpath.dirname(package) or "."
        if directory == package or (
            recursive and (package == "." or directory.startswith(package + "/"))
        ):
            return True
    return not packages


CANARY = CanaryParts(
    text=(
        "\n\nfunc Test_@SELFBENCH_CANARY_A@(t *testing.T) {\n"
        '\tt.Fatal("@SELFBENCH_VALUE_A@")\n'
        "}\n\n"
        "func Test_@SELFBENCH_CANARY_B@(t *testing.T) {\n"
        '\tif got, want := "@SELFBENCH_VALUE_A@", "@SELFBENCH_VALUE_B@"; got != want {\n'
        '\t\tt.Fatalf("got %q, want %q", got, want)\n'
        "\t}\n"
        "}\n"
    ),
    suffixes=("_test.go",),
    selector=_canary_selector,
    hosts=_canary_hosts,
    refused_options=("-skip", "--skip", "-failfast", "--failfast"),
    selectors_first=True,
    fits_command=lambda command: _TEST_COMMAND in command or "-run" not in command,
    requires=r'^[[:space:]]*(import[[:space:]]+)?"testing"[[:space:]]*$',
    refuses=r"^//(go:build|[[:space:]]*\+build)",
    names="Test_{}",
)
"""go's canaries: a `t.Fatal`, and a comparison of two sentinels; the file must import
`testing` by that name."""
_FINISHED = r"""
    any(.[]; (.Action == "pass" or .Action == "fail" or .Action == "skip")
      and (.Test | type) != "string")"""
_NAMED = r' $name == "" or . == $name or startswith($name + "/")'

_PROGRAMS = (
    readonly("go_text", GO_TEXT)
    + readonly("go_events", GO_EVENTS)
    + readonly("go_test_names", GO_TEST_NAMES)
    + readonly("go_test_function", r"Test\([A-Z0-9_][A-Za-z0-9_]*\)\{0,1\}", expands=False)
)

_TOOLS = (
    """  cat >"$evidence_tools/go-exec" <<'GO_EXEC'
"""
    + _GO_EXEC
    + "GO_EXEC\n"
)

_PREPARE = """\
    prepare_go_cache
    if go_marks_framing; then
      go_exec="$evidence_tools/go-exec"
    fi
"""

_ENV = r"""
    evidence_env=("GOFLAGS=-json -count=1${go_exec:+ -exec=$go_exec}" "GOTOOLCHAIN=local"
      "GOWORK=off")
    if [ -n "$go_cache" ]; then
      evidence_env+=("GOCACHE=$go_cache")
    fi
    ;;
"""

_CONTROL_NOTE = (
    "# go.mod's replace and toolchain directives (which code and which go the tests build with);\n"
)
_CONTROL = r"""
    GOTOOLCHAIN=local GOFLAGS='' GOWORK=off go mod edit -json -- "$1" 2>/dev/null |
      jq -c '[.Replace, .Toolchain]' 2>/dev/null || echo unreadable
"""

_TOOL_FUNCTIONS = r"""
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
"""

_OUTPUT_FUNCTIONS = r"""
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
# held-out ones) of a selected package, but the canaries.
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
        -- "$workdir/$path" | grep -vx TestMain | not_canaries |
        while IFS= read -r name; do
          path="${path%/*}"
          printf '%s\t%s\n' "${path#./}" "$name"
        done
    done | jq -Rnc --argjson wanted "$wanted" "$go_test_names"
}
"""

_CROSS_CHECK = r"""
    local text passed failed seen
    text="$(jq -Rrj "$go_text" <"$output" 2>/dev/null)" || text=""
    passed="$(grep -cE '^ok[[:space:]]' <<<"$text")"
    failed="$(grep -cE '^FAIL[[:space:]]' <<<"$text")"
    seen="$(jq -rs 'map(select((.Test | type) != "string") | .Action)
      | "\(map(select(. == "pass")) | length) \(map(select(. == "fail")) | length)"' \
      -- "$report" 2>/dev/null)" || seen=""
    if [ "$passed $failed" != "$seen" ]; then
      echo "go test's package lines ($passed ok, $failed FAIL) disagree with its events" \
        "(${seen% *} passed, ${seen#* } failed)"
    fi
    ;;
"""

RUNNER = Runner(
    entry=GO,
    label="go test",
    parse=parse_go,
    selector=_selector,
    names_carry_file=False,
    compiled=CompiledProject(
        setup_command="go mod download",
        test_command=_TEST_COMMAND,
    ),
    tamper_names=("testing.MainStart", "-test.run", "-test.v"),
    evidence=True,
    selects_files=False,  # its selectors name packages, whose `_test.go` files are protected
    canary=CANARY,
    verifier=VerifierParts(
        report_passed=Part(1, _PASSED),
        report_failed=Part(1, _FAILED),
        report_finished=Part(1, _FINISHED),
        report_tests=Part(1, _TESTS),
        report_of=Part(0, " .file | package_of($want)"),
        report_named=Part(1, _NAMED),
        report_definitions=_PACKAGE_OF,
        verifier_programs=_PROGRAMS,
        verifier_variables='go_cache=""\ngo_exec=""\n',
        verifier_tools=Part(3, _TOOLS),
        verifier_executables=("go-exec",),
        verifier_prepare=_PREPARE,
        verifier_env=Part(2, _ENV),
        verifier_cross_check=Part(3, _CROSS_CHECK),
        verifier_restore=Part(1, ' restore_changed_configuration "$changed" ;;\n'),
        verifier_control_note=Part(0, _CONTROL_NOTE),
        verifier_control=Part(1, _CONTROL),
        verifier_functions=(
            ("prepare_evidence_tools", _TOOL_FUNCTIONS),
            ("remember_untracked", _OUTPUT_FUNCTIONS),
        ),
    ),
)
