"""Each runner's entry: its names and what the registry asks of every runner, known without
importing any runner module.

A runner module (`selfbench.runners.<name>`) is imported only when something needs that one
runner: its parser, its verifier parts, its drafting parts. What questions about all runners
read is here instead, stated once (the module's `Runner` takes it as its `entry`): which one a
command runs (`matches`), the runner-control paths the audit and the verifier protect, the
tooling files mining sets aside. So `selfbench audit` of a task imports no runner module, or
only its own. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from selfbench.runners._command import js_bin, python_module, subcommand

__all__ = ["ENTRIES", "Entry"]


class Entry(NamedTuple):
    """What a runner says that is asked of every runner (its `Runner`'s `entry`)."""

    name: str
    """The one spelling in code, in the verifier's scripts and in `Outcomes.runner`; its module
    is `selfbench.runners.<name>`."""
    setting: str
    """Its spelling in `selfbench.toml`'s `runner` key and in draft records (`node-test`)."""
    reads_as: str
    """The runner whose command and log it runs under (unittest's tests run through pytest)."""
    matches: Callable[[str, Sequence[str]], bool]
    """Whether a simple command (its name, without directory, and its arguments, wrappers
    removed) runs this runner; at most one runner matches a command."""
    ecosystem: str
    """The language whose test files it runs (`python`, `node`, `go`, `rust`)."""
    manifests: tuple[str, ...]
    """The files that mark a project of its ecosystem (the nearest one is a draft's workdir)."""
    toolchains: tuple[str, ...]
    """The SPEC §1 toolchain layers a task run by it needs."""
    control_files: tuple[str, ...]
    """Files that configure it or that it loads, protected at any depth (wildmatch patterns)."""
    control_directories: tuple[str, ...] = ()
    """Directories of its installed packages and caches, protected at any depth."""
    package_directories: tuple[str, ...] = ()
    """Directories named like its package (or its virtual environment): a new one would shadow
    it, while one the base tracks is the project's own code (pytest's repository)."""
    package_files: tuple[str, ...] = ()
    """Modules named like its own, protected unless the base tracks them."""
    build_directories: tuple[str, ...] = ()
    """Its build's output directories (Cargo's `target`): protected in a project it builds."""
    project_paths: tuple[str, ...] = ()
    """Regular expressions of a directory of its own project's code (pytest's `_pytest`), each
    with one group naming the project: a change there is a change to the runner itself."""
    shared_configuration_files: tuple[str, ...] = ()
    """Files holding much besides its configuration, whose part for it an agent may not change."""
    manifest_keys: tuple[str, ...] = ()
    """The keys of a restored JSON manifest (`package.json`) that decide how it runs."""
    compiled_tests: tuple[str, ...] = ()
    """Test files its build compiles with the code under test (Go's `*_test.go`): protected at
    any depth, the base's and the held-out ones run, never an agent's."""
    restored_manifests: tuple[str, ...] = ()
    """Shared manifests whose runner-control part the verifier restores for it (`go.mod`)."""
    tooling_files: tuple[str, ...] = ()
    """Its own settings files that a maintenance change may touch as tooling (`pytest.ini`)."""


# --- how a command is recognised --------------------------------------------------------------

_PYTEST_NAMES = ("pytest", "py.test")


def _pytest(name: str, args: Sequence[str]) -> bool:
    return name in _PYTEST_NAMES or python_module(name, args) in _PYTEST_NAMES


def _unittest(name: str, args: Sequence[str]) -> bool:  # noqa: ARG001 - the protocol's shape
    return False  # its command is pytest's


def _node_test(name: str, args: Sequence[str]) -> bool:
    return name in ("node", "nodejs") and "--test" in args


def _jest(name: str, args: Sequence[str]) -> bool:
    return js_bin(name, args) == "jest" and not _node_test(name, args)


def _vitest(name: str, args: Sequence[str]) -> bool:
    return js_bin(name, args) == "vitest" and not _node_test(name, args)


def _go(name: str, args: Sequence[str]) -> bool:
    return name == "go" and subcommand(args, frozenset({"-C"})) == "test"


def _cargo(name: str, args: Sequence[str]) -> bool:
    value_options = frozenset({"-Z", "--config", "-C", "--color"})
    return name == "cargo" and subcommand(args, value_options) in ("test", "t")


def _bun(name: str, args: Sequence[str]) -> bool:
    return name == "bun" and subcommand(args, frozenset({"--cwd"})) == "test"


# --- the entries, in the order `selfbench.toml`'s messages list them --------------------------

_PYTHON_PROJECT = ("pyproject.toml", "setup.py", "setup.cfg")
_PYTEST_CONTROL_FILES = (
    # configuration, plugins by conftest, modules Python loads first, bytecode caches
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
    "sitecustomize.py", "usercustomize.py", "*.pth", "*.pyc", "*.pyo",
    "_selfbench_evidence.py",  # the verifier's own pytest reporter (`REPORTER_MODULE`)
)  # fmt: skip
_PYTEST_CONTROL_DIRECTORIES = (
    "_selfbench_evidence",
    "__pycache__",
    ".pytest_cache",
    ".venv",
    "site-packages",
)
_PYTEST_PACKAGE_DIRECTORIES = ("pytest", "_pytest", "pluggy", "venv")
_PYTEST_PACKAGE_FILES = ("pytest.py", "py.py")
_PYTEST_PROJECT_PATHS = (r"_?(pytest|pluggy)",)  # pytest's `src/_pytest/`, pluggy's `src/pluggy/`
_PYTEST_SHARED_CONFIGURATION_FILES = ("pyproject.toml", "setup.cfg", "tox.ini")

PYTEST = Entry(
    name="pytest",
    setting="pytest",
    reads_as="pytest",
    matches=_pytest,
    ecosystem="python",
    manifests=_PYTHON_PROJECT,
    toolchains=("python",),
    control_files=_PYTEST_CONTROL_FILES,
    control_directories=_PYTEST_CONTROL_DIRECTORIES,
    package_directories=_PYTEST_PACKAGE_DIRECTORIES,
    package_files=_PYTEST_PACKAGE_FILES,
    project_paths=_PYTEST_PROJECT_PATHS,
    shared_configuration_files=_PYTEST_SHARED_CONFIGURATION_FILES,
    tooling_files=("pytest.ini",),
)
UNITTEST = Entry(
    name="unittest",
    setting="unittest",
    reads_as="pytest",
    matches=_unittest,
    ecosystem="python",
    manifests=_PYTHON_PROJECT,
    toolchains=("python",),
    control_files=_PYTEST_CONTROL_FILES,  # its tests run through pytest
    control_directories=_PYTEST_CONTROL_DIRECTORIES,
    package_directories=_PYTEST_PACKAGE_DIRECTORIES,
    package_files=_PYTEST_PACKAGE_FILES,
    project_paths=_PYTEST_PROJECT_PATHS,
    shared_configuration_files=_PYTEST_SHARED_CONFIGURATION_FILES,
)
JEST = Entry(
    name="jest",
    setting="jest",
    reads_as="jest",
    matches=_jest,
    ecosystem="node",
    manifests=("package.json",),
    toolchains=("node",),
    control_files=("jest.config.*", "jest.setup.*"),
    project_paths=(r"packages/(jest)(?:-[^/]*)?",),
    manifest_keys=("jest", "babel", "scripts"),  # its settings, its transform's, the scripts
    restored_manifests=("package.json",),
)
VITEST = Entry(
    name="vitest",
    setting="vitest",
    reads_as="vitest",
    matches=_vitest,
    ecosystem="node",
    manifests=("package.json",),
    toolchains=("node",),
    control_files=(
        "vitest.config.*",
        "vitest.setup.*",
        "vitest.workspace.*",
        "vite.config.*",
    ),
    project_paths=(r"packages/(vitest)(?:-[^/]*)?",),
    manifest_keys=("scripts",),
    restored_manifests=("package.json",),
)
NODE = Entry(
    name="node",
    setting="node-test",
    reads_as="node",
    matches=_node_test,
    ecosystem="node",
    manifests=("package.json",),
    toolchains=("node",),
    control_files=(
        # What any Node runner may load: transforms, mocha's settings, package managers'
        # configuration (bun's too: `bun install` reads it), node's own options.
        "babel.config.*",
        ".babelrc",
        ".babelrc.*",
        ".mocharc*",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        "bunfig.toml",
        ".node-options",
    ),
    control_directories=("node_modules",),
)
GO = Entry(
    name="go",
    setting="go",
    reads_as="go",
    matches=_go,
    ecosystem="go",
    manifests=("go.mod",),
    toolchains=("go",),
    control_files=("go.work", "go.work.sum", "go.env", "vendor/modules.txt"),
    compiled_tests=("*_test.go",),
    restored_manifests=("go.mod",),
)
CARGO = Entry(
    name="cargo",
    setting="cargo",
    reads_as="cargo",
    matches=_cargo,
    ecosystem="rust",
    manifests=("Cargo.toml",),
    toolchains=("rust",),
    control_files=("rust-toolchain", "rust-toolchain.toml", "build.rs"),
    control_directories=(".cargo",),
    build_directories=("target",),
    compiled_tests=("tests/*.rs",),
    restored_manifests=("Cargo.toml",),
)
BUN = Entry(
    name="bun",
    setting="bun",
    reads_as="bun",
    matches=_bun,
    ecosystem="node",
    manifests=("package.json",),
    toolchains=("bun",),
    control_files=("bunfig.toml",),
    control_directories=("node_modules",),
)

ENTRIES = (PYTEST, UNITTEST, JEST, VITEST, NODE, GO, CARGO, BUN)
"""Every runner's entry, in the order `selfbench.toml`'s messages list them."""
