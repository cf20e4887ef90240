"""The runner-control rule (`_runner_files`): a matcher that compiles no pattern, the same as each
pattern, and the same first-match order as the verifier's `git apply` patterns."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench._runner_files import (
    PACKAGE_FILES,
    RUNNER_CONTROL_PATTERNS,
    _Patterns,
    is_runner_control,
    package_directory_names,
    package_patterns,
    runner_control_patterns,
    runner_project,
    tracked_prefixes,
)
from selfbench.bundle.render_scripts import git_exclude_pattern

SEGMENTS = st.sampled_from(
    ["conftest.py", "pytest.ini", "src", "tests", "node_modules", ".venv", "target", "a.pth",
     "jest.config.js", "pytest", "pytestx", "x.py", "__pycache__", "lib", "go.work", "docs",
     "pluggy", "_pytest", "py.py", "pytest.py", "venv", "a[1]", "x.rs", "x_test.go", "vendor",
     "modules.txt", ".mocharc.yml", "a.pyc", "jest.config.d", "vite.config.ts", ".babelrc", ""]
)  # fmt: skip
PATHS = st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join)


def by_each_pattern(path: str, *, cargo: bool) -> bool:
    patterns = runner_control_patterns(build_cache=cargo) + package_patterns(build_cache=cargo)
    return any(fnmatchcase(path, pattern) for pattern in patterns)


def by_git_apply(path: str, tracked: frozenset[str], *, cargo: bool) -> bool:
    """What the verifier's patterns leave out, in its order, the first match deciding: the
    runner-control patterns, the tracked packages (`--include`), the packages, `--include=*`."""
    names = package_directory_names(build_cache=cargo)
    includes = [
        f"{git_exclude_pattern(prefix)}/*" for prefix in tracked if prefix.split("/")[-1] in names
    ]
    includes += [
        git_exclude_pattern(prefix) for prefix in tracked if prefix.split("/")[-1] in PACKAGE_FILES
    ]
    ordered = [(pattern, True) for pattern in runner_control_patterns(build_cache=cargo)]
    ordered += [(pattern, False) for pattern in includes]
    ordered += [(pattern, True) for pattern in package_patterns(build_cache=cargo)]
    return next(
        (left_out for pattern, left_out in ordered if fnmatchcase(path, _fnmatch(pattern))), False
    )


def _fnmatch(pattern: str) -> str:
    """A wildmatch pattern in fnmatch's spelling: fnmatch has no backslash escape, `[X]` is its
    literal X (`git_exclude_pattern` writes `\\[` for a literal `[`)."""
    return re.sub(r"\\(.)", lambda m: f"[{m[1]}]", pattern)


@given(PATHS, st.booleans())
def test_the_compiled_rule_agrees_with_every_pattern(path: str, cargo: bool) -> None:
    assert is_runner_control(path, build_cache=cargo) == by_each_pattern(path, cargo=cargo)


@given(st.lists(st.text("ab/*.?[]!", max_size=8), max_size=4), st.text("ab/.[]", max_size=8))
def test_the_matcher_agrees_with_fnmatch_on_any_pattern(patterns: list[str], path: str) -> None:
    assert _Patterns(patterns).match(path) == any(fnmatchcase(path, p) for p in patterns)


@given(PATHS, st.lists(PATHS, max_size=4), st.booleans())
def test_the_rule_agrees_with_the_verifiers_order(
    path: str, tracked_files: list[str], cargo: bool
) -> None:
    tracked = tracked_prefixes(tracked_files)
    assert is_runner_control(path, tracked, build_cache=cargo) == by_git_apply(
        path, tracked, cargo=cargo
    )


def test_the_verifiers_own_patterns_are_protected_everywhere() -> None:
    assert "conftest.py" in RUNNER_CONTROL_PATTERNS
    assert "*/site-packages/*" in RUNNER_CONTROL_PATTERNS
    assert "target/*" not in RUNNER_CONTROL_PATTERNS
    assert "target/*" in runner_control_patterns(build_cache=True)
    assert "*/pluggy/*" in package_patterns(build_cache=False)
    assert "target/*" not in package_patterns(build_cache=True)


PLUGGY_BASE = ("src/pluggy/__init__.py", "src/pluggy/_hooks.py", "testing/test_hooks.py")
PYTEST_BASE = (
    "src/_pytest/python.py",
    "src/pytest/__init__.py",
    "src/py.py",
    "testing/conftest.py",
)


@pytest.mark.parametrize(
    ("path", "tracked", "cargo", "expected"),
    [
        ("conftest.py", (), False, True),
        ("tests/conftest.py", (), False, True),
        ("node_modules/left-pad/index.js", (), False, True),
        ("src/app/.venv/lib/site.pth", (), False, True),
        ("src/pytest_helpers.py", (), False, False),
        ("docs/target.md", (), False, False),
        ("src/calc/__init__.py", (), False, False),
        # a runner-named package the base does not track shadows the runner
        ("pytest/__init__.py", (), False, True),
        ("src/pluggy/_hooks.py", (), False, True),
        ("pytest.py", (), False, True),
        ("lib/py.py", (), False, True),
        ("venv/bin/python", (), False, True),
        ("target/debug/app", (), False, True),
        # the project's own code: pluggy's and pytest's repositories
        ("src/pluggy/_hooks.py", PLUGGY_BASE, False, False),
        ("src/pluggy/_new_module.py", PLUGGY_BASE, False, False),
        ("src/pluggy/sub/pytest/x.py", PLUGGY_BASE, False, False),
        ("src/_pytest/python.py", PYTEST_BASE, False, False),
        ("src/pytest/__main__.py", PYTEST_BASE, False, False),
        ("src/py.py", PYTEST_BASE, False, False),
        ("src/docs/target/notes.md", ("src/docs/target/index.md",), False, False),
        # tracked or not, configuration and installed or cached trees stay protected
        ("testing/conftest.py", PYTEST_BASE, False, True),
        ("src/pluggy/conftest.py", PLUGGY_BASE, False, True),
        ("src/pluggy/__pycache__/_hooks.cpython-312.pyc", PLUGGY_BASE, False, True),
        ("src/pluggy/node_modules/x/index.js", PLUGGY_BASE, False, True),
        # a new runner-named package or module beside the tracked ones
        ("pytest.py", PLUGGY_BASE, False, True),
        ("pytest/__init__.py", PLUGGY_BASE, False, True),
        ("pluggy/__init__.py", PLUGGY_BASE, False, True),
        ("py.py", PYTEST_BASE, False, True),
        ("src/pluggy2/pluggy/x.py", PLUGGY_BASE, False, True),
        # a Cargo project's target/ is its build cache, tracked or not
        ("target/debug/app", ("target/.gitkeep",), True, True),
        ("target/debug/app", ("target/.gitkeep",), False, False),
        ("src/target/mod.rs", (), True, True),
    ],
)
def test_runner_control_paths(
    path: str, tracked: tuple[str, ...], *, cargo: bool, expected: bool
) -> None:
    assert is_runner_control(path, tracked_prefixes(tracked), build_cache=cargo) is expected


def test_tracked_prefixes_are_every_path_and_directory_above_it() -> None:
    assert tracked_prefixes(["src/pluggy/_hooks.py", "a"]) == {
        "src", "src/pluggy", "src/pluggy/_hooks.py", "a",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("paths", "project"),
    [
        (("src/pluggy/_hooks.py",), "pluggy"),
        (("README.md", "src/_pytest/python.py"), "pytest"),
        (("src/pytest/__init__.py",), "pytest"),
        (("packages/jest-circus/src/run.ts",), "jest"),
        (("packages/jest/package.json",), "jest"),
        (("packages/vitest/src/node/cli.ts",), "vitest"),
        (("src/calc/add.py",), None),
        (("src/pytest_helpers.py", "pytest.ini"), None),
        (("packages/jester/index.js", "packages/expect/src/index.ts"), None),
        ((".venv/lib/python3.12/site-packages/pluggy/_hooks.py",), None),
        (("node_modules/jest/index.js",), None),
    ],
)
def test_runner_projects(paths: tuple[str, ...], project: str | None) -> None:
    assert runner_project(paths) == project
