"""The test runners selfbench knows, one module each, and the questions asked of all of them.

Each module in `_MODULES` builds one `Runner` (see `_protocol`); adding a runner is one new
module listed there. The registry answers what the rest of the code asks about runners: which
one a command runs (`detect`), which one a name or a `selfbench.toml` spelling means
(`runner_named`), and the sets and tables derived from their fields. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from selfbench.runners import bun, cargo, go, jest, node, pytest, unittest, vitest
from selfbench.runners._command import commands, runner_of
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
    "runner_named",
    "settings",
    "shared_configuration_files",
    "tamper_names",
    "test_globals",
    "tooling_files",
]

_MODULES = (pytest, unittest, jest, vitest, node, go, cargo, bun)
RUNNERS: tuple[Runner, ...] = tuple(module.RUNNER for module in _MODULES)
"""Every runner, in the order `selfbench.toml`'s messages list them."""

_BY_NAME = {name: runner for runner in RUNNERS for name in (runner.name, runner.setting)}
COMMAND_RUNNERS = tuple(runner for runner in RUNNERS if runner.reads_as == runner.name)
"""The runners a command can be detected as: each reads its own log (not unittest: pytest)."""
# The order of the ecosystems' files in the verifier's exclude list (its scripts stay as they
# were); a new ecosystem's come last.
_CONTROL_ECOSYSTEMS = ("python", "node", "rust", "go")


def runner_named(name: str) -> Runner | None:
    """The runner a name means: its `name` or its `selfbench.toml` spelling (`node-test`)."""
    return _BY_NAME.get(name)


def settings() -> tuple[str, ...]:
    """Every runner's `selfbench.toml` spelling, in the registry's order."""
    return tuple(runner.setting for runner in RUNNERS)


def log_runners() -> tuple[str, ...]:
    """The names a command can be detected as (the runners whose log selfbench reads)."""
    return tuple(runner.name for runner in COMMAND_RUNNERS)


def detect(command: str) -> Runner | None:
    """The runner a shell command runs, read from its words; None when unknown or mixed."""
    return runner_of(command, COMMAND_RUNNERS)


def detect_name(command: str) -> str | None:
    """`detect`'s runner's name, or None."""
    found = detect(command)
    return None if found is None else found.name


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


def _control_rank(runner: Runner) -> int:
    known = runner.ecosystem in _CONTROL_ECOSYSTEMS
    return _CONTROL_ECOSYSTEMS.index(runner.ecosystem) if known else len(_CONTROL_ECOSYSTEMS)


def _by_ecosystem() -> list[Runner]:
    return sorted(RUNNERS, key=_control_rank)


def control_files() -> tuple[str, ...]:
    """Every runner's control files, each once, then the test files a build compiles."""
    return _unique(
        [name for runner in _by_ecosystem() for name in runner.control_files]
        + [name for runner in RUNNERS for name in runner.compiled_tests]
    )


def control_directories() -> tuple[str, ...]:
    """Every runner's installed-package and cache directories, each once."""
    return _unique(name for runner in _by_ecosystem() for name in runner.control_directories)


def _gathered(field: str) -> tuple[str, ...]:
    return _unique(name for runner in _by_ecosystem() for name in getattr(runner, field))


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
    return any(runner.build_directories and wanted & set(runner.toolchains) for runner in RUNNERS)


def build_cache_manifests() -> tuple[str, ...]:
    """The manifests of projects a runner builds into a directory of its own (`Cargo.toml`)."""
    building = (runner for runner in RUNNERS if runner.build_directories)
    return _unique(name for runner in building for name in runner.manifests)


def project_paths() -> tuple[str, ...]:
    """Every runner's own-project directory patterns (see `Runner.project_paths`)."""
    return _gathered("project_paths")


def shared_configuration_files() -> tuple[str, ...]:
    """Files whose runner part an agent may not change (`pyproject.toml`)."""
    return _gathered("shared_configuration_files")


def manifest_keys() -> tuple[str, ...]:
    """The keys of a restored JSON manifest that decide how a runner runs."""
    return _gathered("manifest_keys")


def test_globals(ecosystem: str) -> frozenset[str]:
    """The names the tests of an ecosystem's runners use that are the runners' own."""
    return frozenset(
        name for runner in RUNNERS if runner.ecosystem == ecosystem for name in runner.test_globals
    )


def tamper_names() -> tuple[str, ...]:
    """Every runner's names of its internals that code under test has no reason to name
    (`Runner.tamper_names`), each once, in registry order."""
    return _unique(name for runner in RUNNERS for name in runner.tamper_names)


def tooling_files() -> frozenset[str]:
    """Every runner's settings files that a maintenance change may touch as tooling."""
    return frozenset(name for runner in RUNNERS for name in runner.tooling_files)


def compiled_tests() -> tuple[str, ...]:
    """The patterns of test files a runner's build compiles with the code under test."""
    return _unique(name for runner in RUNNERS for name in runner.compiled_tests)
