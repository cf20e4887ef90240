"""The test runners selfbench knows, one module each, and the questions asked of all of them.

Each runner has an entry in `_index.ENTRIES` (its names, how its command is recognised, the
paths it protects) and a module, `selfbench.runners.<name>`, that builds its `Runner` (see
`_protocol`) from that entry; adding a runner is one new module and its entry. A module is
imported when its runner is asked for (`runner_named`, `detect`, `RUNNERS`): the questions about
every runner (which one a command runs by name, `detect_name`; the sets and tables derived from
the entries) import none, so a command pays only for the runners it uses. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import TYPE_CHECKING

from selfbench.runners._command import commands, runner_of
from selfbench.runners._index import ENTRIES, Entry

if TYPE_CHECKING:
    from selfbench.runners._log import NO_MATCH, Outcome, Result, Run
    from selfbench.runners._protocol import (
        CANARY_NAMES,
        CANARY_VALUES,
        KEY_DESCRIPTOR,
        REPORT_DESCRIPTOR,
        REPORT_DESCRIPTOR_PATH,
        REPORT_ROOT,
        V8_COVERAGE,
        CanaryParts,
        CompiledProject,
        CoverageParts,
        NodeProject,
        Part,
        PythonProject,
        Runner,
        VerifierParts,
        package_ceiling,
    )

__all__ = [
    "CANARY_NAMES",
    "CANARY_VALUES",
    "COMMAND_RUNNERS",
    "KEY_DESCRIPTOR",
    "NO_MATCH",
    "REPORT_DESCRIPTOR",
    "REPORT_DESCRIPTOR_PATH",
    "REPORT_ROOT",
    "RUNNERS",
    "V8_COVERAGE",
    "CanaryParts",
    "CompiledProject",
    "CoverageParts",
    "NodeProject",
    "Outcome",
    "Part",
    "PythonProject",
    "Result",
    "Run",
    "Runner",
    "VerifierParts",
    "build_cache_manifests",
    "build_directories",
    "builds_in_cache",
    "commands",
    "compiled_project",
    "compiled_tests",
    "control_directories",
    "control_files",
    "detect",
    "detect_name",
    "log_runners",
    "manifest_keys",
    "node_project",
    "package_ceiling",
    "package_directories",
    "package_files",
    "project_paths",
    "python_project",
    "restored_by",
    "runner_named",
    "settings",
    "shared_configuration_files",
    "tamper_names",
    "test_globals",
    "tooling_files",
]

# The protocol's and the log's names, re-exported here and imported on first use: building
# `_protocol`'s records cost every start-up milliseconds, though `audit` needs none of them.
_LAZY = {
    **dict.fromkeys(("NO_MATCH", "Outcome", "Result", "Run"), "_log"),
    **dict.fromkeys(
        (
            "CANARY_NAMES", "CANARY_VALUES", "KEY_DESCRIPTOR", "REPORT_DESCRIPTOR",
            "REPORT_DESCRIPTOR_PATH", "REPORT_ROOT", "V8_COVERAGE", "CanaryParts",
            "CompiledProject", "CoverageParts", "NodeProject", "Part", "PythonProject", "Runner",
            "VerifierParts", "package_ceiling",
        ),
        "_protocol",
    ),
}  # fmt: skip

if TYPE_CHECKING:
    RUNNERS: tuple[Runner, ...]
    """Every runner, in the order `selfbench.toml`'s messages list them (imports every module)."""
    COMMAND_RUNNERS: tuple[Runner, ...]
    """The runners a command can be detected as: each reads its own log (not unittest: pytest)."""

_BY_NAME = {name: entry for entry in ENTRIES for name in (entry.name, entry.setting)}
_COMMAND_ENTRIES = tuple(entry for entry in ENTRIES if entry.reads_as == entry.name)
# The order of the ecosystems' files in the verifier's exclude list (its scripts stay as they
# were); a new ecosystem's come last.
_CONTROL_ECOSYSTEMS = ("python", "node", "rust", "go")


def __getattr__(name: str) -> object:
    """`RUNNERS` and `COMMAND_RUNNERS` (built on first use), and the protocol's names."""
    if name in ("RUNNERS", "COMMAND_RUNNERS"):
        entries = ENTRIES if name == "RUNNERS" else _COMMAND_ENTRIES
        value: object = tuple(_runner(entry) for entry in entries)
    elif name in _LAZY:
        value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _runner(entry: Entry) -> Runner:
    runner: Runner = import_module(f"{__name__}.{entry.name}").RUNNER
    return runner


def runner_named(name: str) -> Runner | None:
    """The runner a name means: its `name` or its `selfbench.toml` spelling (`node-test`);
    imports its module."""
    entry = _BY_NAME.get(name)
    return None if entry is None else _runner(entry)


def settings() -> tuple[str, ...]:
    """Every runner's `selfbench.toml` spelling, in the registry's order."""
    return tuple(entry.setting for entry in ENTRIES)


def log_runners() -> tuple[str, ...]:
    """The names a command can be detected as (the runners whose log selfbench reads)."""
    return tuple(entry.name for entry in _COMMAND_ENTRIES)


def detect(command: str) -> Runner | None:
    """The runner a shell command runs, read from its words; None when unknown or mixed."""
    found = runner_of(command, _COMMAND_ENTRIES)
    return None if found is None else _runner(found)


def detect_name(command: str) -> str | None:
    """`detect`'s runner's name, or None; imports no runner module."""
    found = runner_of(command, _COMMAND_ENTRIES)
    return None if found is None else found.name


def restored_by(manifest: str) -> tuple[str, ...]:
    """The runners (of those a command is detected as) for which the verifier restores the
    runner-control part of a shared manifest (`go.mod`), in registry order."""
    return tuple(entry.name for entry in _COMMAND_ENTRIES if manifest in entry.restored_manifests)


def python_project(runner: Runner) -> PythonProject:
    """A Python runner's drafting parts (`Runner.python`); another ecosystem's runner has none."""
    if runner.python is None:
        raise ValueError(f"{runner.name} is not a Python project's runner")
    return runner.python


def node_project(runner: Runner) -> NodeProject:
    """The drafting parts of a runner a Node project's script runs (`Runner.node`)."""
    if runner.node is None:
        raise ValueError(f"{runner.name} is not run by a Node project's script")
    return runner.node


def compiled_project(runner: Runner) -> CompiledProject:
    """The inferred commands of a runner that builds its project (`Runner.compiled`)."""
    if runner.compiled is None:
        raise ValueError(f"{runner.name} has no inferred commands")
    return runner.compiled


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _control_rank(entry: Entry) -> int:
    known = entry.ecosystem in _CONTROL_ECOSYSTEMS
    return _CONTROL_ECOSYSTEMS.index(entry.ecosystem) if known else len(_CONTROL_ECOSYSTEMS)


def _by_ecosystem() -> list[Entry]:
    return sorted(ENTRIES, key=_control_rank)


def control_files() -> tuple[str, ...]:
    """Every runner's control files, each once, then the test files a build compiles."""
    return _unique(
        [name for entry in _by_ecosystem() for name in entry.control_files]
        + [name for entry in ENTRIES for name in entry.compiled_tests]
    )


def control_directories() -> tuple[str, ...]:
    """Every runner's installed-package and cache directories, each once."""
    return _unique(name for entry in _by_ecosystem() for name in entry.control_directories)


def _gathered(field: str) -> tuple[str, ...]:
    return _unique(name for entry in _by_ecosystem() for name in getattr(entry, field))


def package_directories() -> tuple[str, ...]:
    """Every runner's package-named directories, then every build's output directories."""
    return _unique((*_gathered("package_directories"), *build_directories()))


def package_files() -> tuple[str, ...]:
    """Every runner's package-named modules."""
    return _gathered("package_files")


def build_directories() -> tuple[str, ...]:
    """Every runner's build output directories (`target`)."""
    return _gathered("build_directories")


def builds_in_cache(toolchains: Iterable[str]) -> bool:
    """A task with these toolchains builds with a runner whose build output is a directory of
    the project (Cargo's `target/`, its toolchains holding `rust`)."""
    wanted = set(toolchains)
    return any(entry.build_directories and wanted & set(entry.toolchains) for entry in ENTRIES)


def build_cache_manifests() -> tuple[str, ...]:
    """The manifests of projects a runner builds into a directory of its own (`Cargo.toml`)."""
    building = (entry for entry in ENTRIES if entry.build_directories)
    return _unique(name for entry in building for name in entry.manifests)


def project_paths() -> tuple[str, ...]:
    """Every runner's own-project directory patterns (see `Entry.project_paths`)."""
    return _gathered("project_paths")


def shared_configuration_files() -> tuple[str, ...]:
    """Files whose runner part an agent may not change (`pyproject.toml`)."""
    return _gathered("shared_configuration_files")


def manifest_keys() -> tuple[str, ...]:
    """The keys of a restored JSON manifest that decide how a runner runs."""
    return _gathered("manifest_keys")


def test_globals(ecosystem: str) -> frozenset[str]:
    """The names the tests of an ecosystem's runners use that are the runners' own."""
    runners = (_runner(entry) for entry in ENTRIES if entry.ecosystem == ecosystem)
    return frozenset(name for runner in runners for name in runner.test_globals)


def tamper_names() -> tuple[str, ...]:
    """Every runner's names of its internals that code under test has no reason to name
    (`Runner.tamper_names`), each once, in registry order."""
    runners = (_runner(entry) for entry in ENTRIES)
    return _unique(name for runner in runners for name in runner.tamper_names)


def tooling_files() -> frozenset[str]:
    """Every runner's settings files that a maintenance change may touch as tooling."""
    return frozenset(name for entry in ENTRIES for name in entry.tooling_files)


def compiled_tests() -> tuple[str, ...]:
    """The patterns of test files a runner's build compiles with the code under test."""
    return _unique(name for entry in ENTRIES for name in entry.compiled_tests)
