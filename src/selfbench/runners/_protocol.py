"""What every test runner says about itself: one frozen value per runner module, `RUNNER`.

A runner module (`pytest`, `node`, `go`, …) builds one `Runner` from its entry in the registry's
table (`_index.py`), and the registry imports it when it is asked for that runner; no module
outside `selfbench.runners` names a runner. A runner states what applies to it: the
fields every runner has are required, the rest default to empty, and each ecosystem's drafting
parts are one sub-record (`PythonProject`, `NodeProject`, `CompiledProject`) that only its
runners carry; the verifier's evidence parts are one `VerifierParts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from selfbench.errors import DraftError
from selfbench.runners._index import Entry
from selfbench.runners._log import Result, Run

__all__ = [
    "CANARY_NAMES",
    "CANARY_VALUES",
    "KEY_DESCRIPTOR",
    "REPORT_DESCRIPTOR",
    "REPORT_DESCRIPTOR_PATH",
    "REPORT_ROOT",
    "V8_COVERAGE",
    "CanaryParts",
    "CompiledProject",
    "CoverageParts",
    "NodeProject",
    "Part",
    "PythonProject",
    "Runner",
    "VerifierParts",
    "by_file",
    "readonly",
]


REPORT_DESCRIPTOR = 9
"""The file descriptor on which the verifier hands a runner its report channel for the run
(`open_report_channel` of `bundle/evidence.py`): opened by root for appending on a file in a
directory only root can enter, inherited, and named by no argument or environment variable.
The file is root's for a reporter that writes to the descriptor itself (pytest's, cargo's
target runner), so no process of the verifier user can open it again; the verifier user's for
one that must reopen it by a name (`REPORT_DESCRIPTOR_PATH`, or an ancestor's `/proc/<pid>/fd`
entry: bun, node, jest, vitest)."""
REPORT_DESCRIPTOR_PATH = f"/dev/fd/{REPORT_DESCRIPTOR}"
"""Its name, for a runner that opens its report by a path (bun's `--reporter-outfile`)."""
KEY_DESCRIPTOR = 8
"""The descriptor on which the verifier hands a reporter that signs its records (pytest's),
read-only, the key it signs them with (a root-owned file beside the report, mode 0400). A second
descriptor, as the key is read and the report written, and neither may be reopened by name."""
REPORT_ROOT = "/tmp/selfbench-reports."  # noqa: S108 - `mktemp -d` in the verifier, mode 0711
"""The prefix of the verifier's directory of report directories (`mktemp -d` adds the rest)."""


@dataclass(frozen=True, slots=True)
class Part:
    """A runner's arm of one of the verifier's generated functions (a jq `if` branch, a shell
    `case` arm), and its place among the runners' arms of that function.

    The arms go lowest `rank` first (ties in registry order), which keeps the generated script
    as it was; runners whose arms have the same text share one arm, at the first one's place."""

    rank: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonProject:
    """What drafting reads in a Python project for a Python runner (`selfbench.draft`)."""

    package: str
    """The Python distribution a draft installs to run it when the project does not."""
    package_floor: str
    """The earliest date its package resolves as of when a draft adds it ("" for any): older
    releases do not run on every image Python."""
    package_too_old: tuple[tuple[tuple[int, ...], tuple[int, int]], ...]
    """(its package's first release that runs on a Python, that Python `major.minor`)."""
    package_majors: tuple[tuple[int, str], ...] = ()
    """(a major release of its package, the date it was published), oldest first: a draft of
    an older commit keeps below the first major published after it (`package_ceiling`)."""
    python_arguments: str
    """What a draft's test command passes the project's Python to run it (`-m MODULE …
    {tests}`)."""
    tool_table: str = ""
    """The `[tool.NAME]` table of `pyproject.toml` that says a project uses it ("")."""
    mentions: tuple[tuple[str, str], ...] = ()
    """(file of the project, text in it) that say the project uses it (`("tox.ini",
    "[pytest]")`; an empty text: the file's presence)."""
    marker_files: tuple[str, ...] = ()
    """File names that, anywhere in the tree, say a project uses it (`conftest.py`)."""
    import_pattern: str = ""
    """A regular expression of a test file's import that says it is its test ("" for none)."""
    failed_plugins: Callable[[str], tuple[str, ...]] | None = None
    """From a run's log, the names under which to block each plugin the runner failed to load
    as it started (an installed package's entry point: none of the tests could run); None when
    it loads no plugin by itself."""
    without_plugins: Callable[[str, Sequence[str]], str | None] | None = None
    """A draft's test command (`python_arguments` in it) with the named plugins blocked; None
    when the command does not hold those arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeProject:
    """What drafting reads in a Node project for a runner a project's script runs."""

    script_command: Callable[[Sequence[str], bool], list[str]]
    """The words of the command a draft builds from a project's script, given the script's kept
    options and whether the project's own installed copy is at hand (its `node_modules/.bin`)."""
    kept_options: frozenset[str] = frozenset()
    """Its options, in a project's script, that take the next word as value and say how to load
    or configure the tests, not which to run: a draft keeps them."""
    dependency: str = ""
    """The package whose declaration in `package.json` says the project uses it ("" for none)."""
    preferred_over: tuple[str, ...] = ()
    """Runners it is taken over when a project declares both (vitest over a leftover jest)."""
    import_pattern: str = ""
    """A regular expression of a test file's import that says it is its test ("" for none)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledProject:
    """The commands a draft infers for a runner that builds its project (Go's, Rust's), from its
    manifest alone."""

    setup_command: str
    """The setup command a draft infers for it."""
    test_command: str
    """The test command a draft infers for it, with `{tests}`."""


CANARY_NAMES = ("@SELFBENCH_CANARY_A@", "@SELFBENCH_CANARY_B@")
"""The placeholders of the two canary tests' names in `CanaryParts.text` and their selectors;
the verifier replaces each with a name it draws at random for the trial (a lowercase letter, then
eleven lowercase letters and digits)."""
CANARY_VALUES = ("@SELFBENCH_VALUE_A@", "@SELFBENCH_VALUE_B@")
"""The placeholders of the two sentinels a canary compares, drawn like the names: they differ."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CanaryParts:
    """A runner's must-fail canary tests (`selfbench.bundle.canaries`): two tests the verifier
    appends to a held-out test file, named at random per trial, that fail whatever the code
    under test does. One is a plain failing assertion; the other compares two different
    sentinels through the runner's usual assertion (a matcher, `assertEqual`), so a patched
    matcher or assertion makes it pass."""

    text: str
    """What is appended to the file, with `CANARY_NAMES` and `CANARY_VALUES` in it."""
    suffixes: tuple[str, ...]
    """The endings of a file that can hold it (`.py`, `_test.go`)."""
    selector: Callable[[str, str, Sequence[str]], str | None] | None = None
    """The selector that runs a canary, from the file (relative to the workdir), its name
    placeholder and the fail-to-pass selectors; None (the part, or what it returns) where
    those selectors already run every test of the file."""
    hosts: Callable[[str, Sequence[str]], bool] | None = None
    """Whether a held-out file (relative to the workdir) that no fail-to-pass selector names
    runs under those selectors, and so can hold the canaries (None: only a file a selector names
    can)."""
    requires: str = ""
    """An extended regular expression the file must match to hold it (Go's `"testing"` import);
    "" for none."""
    names: str = "{}"
    """How the canary's test is named from its drawn name (`test_{}`), as its report shows it."""
    refused_options: tuple[str, ...] = ()
    """Options of the runner that stop a run at its first failure or select tests by name (`-x`,
    `-k`, `--bail`): a test command holding one gets no canary. A long option matches with its
    `=value` too, a short one with its value attached."""
    programs: tuple[str, ...] = ()
    """The names its program goes by in a command (`pytest`, `py.test`); none: the first word of
    its `label`."""
    arguments: tuple[str, ...] = ()
    """Words added after the selectors of the command that runs the canaries: what keeps a
    setting of the project's own from stopping the run at its first failure (pytest's
    `--maxfail=0` after an `addopts = -x`)."""
    refuses: str = ""
    """An extended regular expression that, matching the file when the verifier runs, says it
    cannot hold them (go's build constraints); "" for none."""
    selectors_first: bool = False
    """The canaries' selectors go before the fail-to-pass ones (go's `-run` alternatives, where a
    subtest's `/` would otherwise take them to its own level)."""
    fits_command: Callable[[str], bool] | None = None
    """Whether the canaries fit a test command: it takes their selectors beside the
    fail-to-pass ones (cargo's names after `--` only) and selects no test by a name of its own
    (a go command's `-run`, but the draft's); None: any."""


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifierParts:
    """A runner's parts of the verifier's evidence functions (`bundle/evidence.py`), shell and
    jq text; None or "" where it has no part (every part of a runner whose report the verifier
    does not read)."""

    report_passed: Part | None = None
    """The jq branch (after `then`) of `passed($root)`: `{file, name}` of each test its report
    shows passing. The last runner's branch is the `else`."""
    report_failed: Part | None = None
    """The jq branch of `failed`: what its report shows failing (the first is logged)."""
    report_finished: Part | None = None
    """The jq branch of `finished`: whether its report shows the run finished."""
    report_of: Part | None = None
    """The jq branch of `of($want)`: whether a test seen passing is in the wanted selector's
    file or package (None: under the selector's path or ending with its file)."""
    report_named: Part | None = None
    """The jq branch of `named($name)`: whether a test name is the wanted one (None: it or a
    test under it, `::` or `[` after it)."""
    report_selector: Part | None = None
    """The jq branch of `selector`, the wanted selector as logged (None: its path and name)."""
    report_tests: Part | None = None
    """The jq branch of `tests`: `{name, outcome}` of each test its report shows (`passed`,
    `failed` or `other`), the name holding the test's own title (a canary's is found by it)."""
    report_definitions: str = ""
    """jq definitions its branches use, after the shared ones."""
    verifier_programs: str = ""
    """Shell lines assigning its programs (jq, awk, Python) to read-only variables."""
    verifier_variables: str = ""
    """Shell lines setting its global variables."""
    verifier_tools: Part | None = None
    """The shell lines (`cat` with a here-document) writing its reporter files into
    `$evidence_tools`."""
    verifier_executables: tuple[str, ...] = ()
    """Those files run as programs (mode 0755)."""
    verifier_prepare: str = ""
    """Shell lines run after the tools are written when it is the task's runner."""
    verifier_env: Part | None = None
    """Its `set_evidence_env` case arm (after `)`): the environment that has it write its report
    to `$report`, or opens the report channel it writes to (`open_report_channel "$1" OWNER`,
    with `signed` for a reporter that signs its records)."""
    verifier_reader: Part | None = None
    """Its `read_report` case arm: the shell lines that print the report (`$1`) as JSON lines
    (bun's JUnit report turned into records; pytest's records up to the first one not signed
    with the key beside it); None: the report's first 64 MiB as they are."""
    verifier_cross_check: Part | None = None
    """Its `cross_check_report` case arm: the shell lines that print where the runner's own
    output (`$output`, captured by root) disagrees with its report's records (`$report`),
    nothing when they agree."""
    verifier_restore: Part | None = None
    """Its `restore_runner_configuration` case arm: what restores its configuration the agent's
    patch changed (`$changed`)."""
    verifier_control_note: Part | None = None
    """The comment line of `runner_control_of` saying what of its manifests it compares."""
    verifier_control: Part | None = None
    """Its `runner_control_of` branch (after `then`): the part of a manifest (`$1`) that decides
    how it runs. The last runner's branch is the `else`."""
    verifier_functions: tuple[tuple[str, str], ...] = ()
    """Its own shell functions: (the shared function they follow, their text)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageParts:
    """How a draft measures which tests execute which lines of the changed files, at the base
    (`selfbench.draft.coverage`): shell words run before each test file's command, given
    `$selfbench_data` (the file's own data directory, writable) and `$selfbench_coverage_lib`
    (the plugin below, read-only)."""

    tool: str
    """`lines` (Python's line events, per name the runner's report gives) or `v8` (Node's own
    coverage, per test file)."""
    environment: str
    """The shell words (`export …; `) that have the test processes measured."""
    plugin_module: str = ""
    """The module name `environment` has the runner load (`lines`' only; "" for none)."""
    plugin: str = ""
    """Its Python source: it records the lines each test executes of the files listed (a JSON
    array of paths) in `$SELFBENCH_COVERAGE_INCLUDE`, writing `lines-<pid>.json` into
    `$SELFBENCH_COVERAGE_DATA`, and writes a failure to `error.txt` there instead of raising."""


V8_COVERAGE = CoverageParts(tool="v8", environment='export NODE_V8_COVERAGE="$selfbench_data"; ')
"""V8's own coverage, which every Node process writes where `NODE_V8_COVERAGE` says."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Runner:
    """One test runner: its names, how it is recognised and read, what the verifier does for it.

    The fields without a default are what every runner says; the others are empty (None, "",
    False) for a runner they do not apply to. The drafting parts of one ecosystem are one
    sub-record, set for that ecosystem's runners only (`python`, `node`, `compiled`). What
    is asked of every runner is its `entry` (`_index.py`), read here through properties."""

    entry: Entry
    """Its names, how its command is recognised and the paths it protects: what the registry
    knows of it without importing this module."""
    label: str
    """How messages name the command (`node --test`, `go test`)."""
    parse: Callable[[Run], Result]
    """Per-test outcomes and counts from its log (its structured report when the log holds one)."""
    selector: Callable[[str], str]
    """The selector that runs one test, from the name its parser reports (raises `DraftError`)."""
    names_carry_file: bool
    """Whether the names its parser reports lead with the test's file (`file > suite > test`),
    and a selector is that file."""
    evidence: bool
    """The verifier reads its own structured report."""
    selects_files: bool
    """Its selectors name test files, protected like held-out ones when pass-to-pass."""

    python: PythonProject | None = None
    """A Python runner's drafting parts (None for another ecosystem's)."""
    node: NodeProject | None = None
    """A Node runner's drafting parts, for one a project's script runs (None otherwise)."""
    compiled: CompiledProject | None = None
    """The commands a draft infers for a runner that builds its project (None where drafting
    reads them from the project's files: Python's and Node's rules in `selfbench.draft`)."""
    verifier: VerifierParts = VerifierParts()
    """Its parts of the verifier's evidence functions (none for a runner whose report the
    verifier does not read)."""

    accepts_selector: Callable[[str], bool] | None = None
    """Whether a string is a selector its command line takes (None: any string it is given)."""
    test_globals: tuple[str, ...] = ()
    """Names its tests use that are its own, not the code under test's (`pytest`, jest's `jest`
    object): a test naming them asserts nothing about the gold patch."""
    runs_named_tests: bool = False
    """Its command line runs the tests it is given by name, several of one file in one process
    (pytest's node ids): a draft's later runs of an unchanged file run only its tests that
    matter (`draft.run.partial_runs`)."""
    finished_line: str = ""
    """An extended regular expression matching the last line it prints once every test has
    run ("" for none): a draft stops a file's run that printed it and then does not exit
    (`draft._linger.LINGER_SECONDS`)."""
    selects_by_name: bool = False
    """Its selectors are test-name filters (libtest's), not paths with a test name: the
    verifier's report must show each selector as a name."""
    report_arguments: str = ""
    """Shell words the verifier adds after the selectors to ask for its report ("" for none)."""
    package_projects: tuple[str, ...] = ()
    """The projects whose own repositories track directories named like its package (pytest's,
    pluggy's): their code, which an agent's patch may change."""
    reporter_module: str = ""
    """The module name of the reporter the verifier has it load ("" for none): a name no patch
    may add or shadow."""
    tamper_names: tuple[str, ...] = ()
    """Names of its internals, its reporters' hooks and its global state (pytest's `_pytest`,
    `pluggy`, `runtest`; jest's matchers object) that the code under test has no reason to
    name: the evaluation's tamper scan marks a trial whose patch adds one
    (`selfbench.evaluate.tamper`). Never refused: a project may be a runner's plugin. Matched as
    identifiers (a name ending `_` is a prefix); a name honest code uses for its own (a class
    `TestResult`) is given qualified (`unittest.TestResult`)."""
    assertion_classes: tuple[str, ...] = ()
    """Qualified names of the classes its tests assert through (unittest's `unittest.TestCase`),
    each as code may spell it: the evaluation's tamper scan marks a trial whose patch replaces
    one of their assertions (`selfbench.evaluate.tamper`), by that name or, in a file that
    defines no class of its own so named, by the class's name alone."""
    coverage: CoverageParts | None = None
    """How a draft measures, at the base, which of its tests execute which lines (None: it
    cannot)."""
    canary: CanaryParts | None = None
    """Its must-fail canary tests (None: the verifier plants none)."""
    failed_status: int = 1
    """The exit status its command ends with when tests failed (libtest's 101): a run in which
    only the canaries failed, as they must, counts as exiting 0."""

    # Its entry's facts, as every runner's (`Entry`'s fields).

    @property
    def name(self) -> str:
        """`Entry.name`."""
        return self.entry.name

    @property
    def setting(self) -> str:
        """`Entry.setting`."""
        return self.entry.setting

    @property
    def reads_as(self) -> str:
        """`Entry.reads_as`."""
        return self.entry.reads_as

    @property
    def matches(self) -> Callable[[str, Sequence[str]], bool]:
        """`Entry.matches`."""
        return self.entry.matches

    @property
    def ecosystem(self) -> str:
        """`Entry.ecosystem`."""
        return self.entry.ecosystem

    @property
    def manifests(self) -> tuple[str, ...]:
        """`Entry.manifests`."""
        return self.entry.manifests

    @property
    def toolchains(self) -> tuple[str, ...]:
        """`Entry.toolchains`."""
        return self.entry.toolchains

    @property
    def control_files(self) -> tuple[str, ...]:
        """`Entry.control_files`."""
        return self.entry.control_files

    @property
    def control_directories(self) -> tuple[str, ...]:
        """`Entry.control_directories`."""
        return self.entry.control_directories

    @property
    def package_directories(self) -> tuple[str, ...]:
        """`Entry.package_directories`."""
        return self.entry.package_directories

    @property
    def package_files(self) -> tuple[str, ...]:
        """`Entry.package_files`."""
        return self.entry.package_files

    @property
    def build_directories(self) -> tuple[str, ...]:
        """`Entry.build_directories`."""
        return self.entry.build_directories

    @property
    def project_paths(self) -> tuple[str, ...]:
        """`Entry.project_paths`."""
        return self.entry.project_paths

    @property
    def shared_configuration_files(self) -> tuple[str, ...]:
        """`Entry.shared_configuration_files`."""
        return self.entry.shared_configuration_files

    @property
    def manifest_keys(self) -> tuple[str, ...]:
        """`Entry.manifest_keys`."""
        return self.entry.manifest_keys

    @property
    def compiled_tests(self) -> tuple[str, ...]:
        """`Entry.compiled_tests`."""
        return self.entry.compiled_tests

    @property
    def restored_manifests(self) -> tuple[str, ...]:
        """`Entry.restored_manifests`."""
        return self.entry.restored_manifests

    @property
    def tooling_files(self) -> tuple[str, ...]:
        """`Entry.tooling_files`."""
        return self.entry.tooling_files


_FILE_SEPARATORS = (" > ", " \u203a ")


def by_file(setting: str) -> Callable[[str], str]:
    """The selector of a runner whose test names lead with their file (`file > suite > test`,
    the file part given by whoever ran the file): that file."""

    def selector(test_name: str) -> str:
        for separator in _FILE_SEPARATORS:
            head, found, _ = test_name.partition(separator)
            if found and ("/" in head or "." in head):
                return head
        raise DraftError(f"{setting} test {test_name!r} does not name its file")

    return selector


def readonly(name: str, program: str, *, expands: bool = True) -> str:
    """The shell line assigning a program to a read-only variable, single-quoted; one whose text
    holds what reads as an expansion (`$x` of jq or awk) is marked as meant."""
    quoted = "'" + program.replace("'", "'\"'\"'") + "'"
    marker = "# shellcheck disable=SC2016\n" if expands else ""
    return f"{marker}readonly {name}={quoted}\n"


def package_ceiling(project: PythonProject, date: str) -> str | None:
    """The requirement that keeps a project's runner package below the first major release
    published after `date` (ISO 8601 UTC, as `2024-01-27T00:00:00Z`), or None when every
    major release known was published by then: a newer major turns the deprecations the
    project's tests were written against into errors (its `filterwarnings = error` then stops
    the collection)."""
    for major, published in project.package_majors:
        if published > date:
            return f"{project.package}<{major}"
    return None
