"""Each runner's runner-control list against the configuration files its documentation names.

One row per runner and file, the documentation cited beside it: the file is in that runner's own
list (`control_files`, `control_directories`), or is a shared file whose part for it the verifier
restores (`shared_configuration_files`, `restored_manifests`); and the verifier's rule
(`is_runner_control`) leaves the protected ones out of an agent's patch at any depth.
"""

from __future__ import annotations

import subprocess
import sys
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from selfbench._runner_files import is_runner_control
from selfbench.runners import RUNNERS, Runner, runner_named

_PYTEST_FILES = (
    # https://docs.pytest.org/en/stable/reference/customize.html#configuration-file-formats
    ("pytest.toml", "control"),  # pytest 9.0 and later
    (".pytest.toml", "control"),  # pytest 9.0 and later
    ("pytest.ini", "control"),
    (".pytest.ini", "control"),
    ("pyproject.toml", "restored"),  # [tool.pytest] or [tool.pytest.ini_options]
    ("tox.ini", "restored"),  # [pytest]
    ("setup.cfg", "restored"),  # [tool:pytest]
    # https://docs.pytest.org/en/stable/how-to/writing_plugins.html#localplugin
    ("conftest.py", "control"),
    # https://docs.python.org/3/library/site.html (what Python runs before pytest starts)
    ("sitecustomize.py", "control"),
    ("usercustomize.py", "control"),
    ("lib/site-packages/x.pth", "control"),
)

ROWS: tuple[tuple[str, str, str], ...] = (
    *(("pytest", path, how) for path, how in _PYTEST_FILES),
    # unittest's tests run through pytest, which reads the same files
    *(("unittest", path, how) for path, how in _PYTEST_FILES),
    # https://jestjs.io/docs/configuration
    ("jest", "jest.config.js", "control"),
    ("jest", "jest.config.ts", "control"),
    ("jest", "jest.config.mjs", "control"),
    ("jest", "jest.config.cjs", "control"),
    ("jest", "jest.config.json", "control"),
    ("jest", "package.json", "restored"),  # its "jest" key
    # https://vitest.dev/config/
    ("vitest", "vitest.config.ts", "control"),
    ("vitest", "vitest.config.mts", "control"),
    ("vitest", "vitest.config.js", "control"),
    ("vitest", "vite.config.ts", "control"),
    ("vitest", "vite.config.js", "control"),
    ("vitest", "vitest.workspace.ts", "control"),  # https://vitest.dev/guide/workspace
    ("vitest", "package.json", "restored"),  # its scripts
    # https://docs.npmjs.com/cli/v10/using-npm/config#node-options (NODE_OPTIONS from .npmrc)
    ("node", ".npmrc", "control"),
    # https://nodejs.org/api/modules.html#loading-from-node_modules-folders
    ("node", "node_modules/x/index.js", "control"),
    # https://go.dev/ref/mod#go-work-file
    ("go", "go.work", "control"),
    ("go", "go.work.sum", "control"),
    # https://go.dev/ref/mod#go-mod-file (its replace and toolchain directives)
    ("go", "go.mod", "restored"),
    # https://go.dev/ref/mod#vendoring
    ("go", "vendor/modules.txt", "control"),
    # https://go.dev/doc/toolchain#config
    ("go", "go.env", "control"),
    # https://doc.rust-lang.org/cargo/reference/config.html#hierarchical-structure
    ("cargo", ".cargo/config.toml", "control"),
    ("cargo", ".cargo/config", "control"),
    # https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file
    ("cargo", "rust-toolchain.toml", "control"),
    ("cargo", "rust-toolchain", "control"),
    # https://doc.rust-lang.org/cargo/reference/build-scripts.html
    ("cargo", "build.rs", "control"),
    # https://doc.rust-lang.org/cargo/reference/manifest.html (targets, profiles, patches)
    ("cargo", "Cargo.toml", "restored"),
    # https://bun.sh/docs/runtime/bunfig
    ("bun", "bunfig.toml", "control"),
)
"""(runner, a path its documentation says configures it or is loaded by it, how it is guarded)."""


def _runner(name: str) -> Runner:
    runner = runner_named(name)
    assert runner is not None
    return runner


def _in_own_list(runner: Runner, path: str) -> bool:
    *directories, name = path.split("/")
    files = runner.control_files
    return any(fnmatchcase(name, pattern) or pattern == path for pattern in files) or any(
        directory in runner.control_directories for directory in directories
    )


@pytest.mark.parametrize(("runner", "path", "how"), ROWS, ids=[f"{r}-{p}" for r, p, _ in ROWS])
def test_each_documented_configuration_file_is_guarded(runner: str, path: str, how: str) -> None:
    own = _runner(runner)
    if how == "control":
        assert _in_own_list(own, path)
        for where in (path, f"sub/dir/{path}"):
            assert is_runner_control(where, build_cache=runner == "cargo")
    else:
        assert path in (*own.shared_configuration_files, *own.restored_manifests)
        assert not is_runner_control(path)


def test_every_runner_has_rows() -> None:
    assert {runner.name for runner in RUNNERS} == {row[0] for row in ROWS}


_PYTEST_MAJOR = int(pytest.__version__.split(".")[0])


@pytest.mark.skipif(_PYTEST_MAJOR < 9, reason="pytest reads pytest.toml from 9.0")
@pytest.mark.parametrize("name", ["pytest.toml", ".pytest.toml"])
def test_pytest_reads_its_toml_configuration(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text('[pytest]\naddopts = ["-p", "no:cacheprovider"]\n')
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    header = subprocess.run(
        [sys.executable, "-m", "pytest", "--co"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    assert f"configfile: {name}" in header
