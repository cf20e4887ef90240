"""The runner-control rule (`_runner_files`): one compiled alternation, the same as each pattern."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench._runner_files import RUNNER_CONTROL_PATTERNS, is_runner_control

SEGMENTS = st.sampled_from(
    ["conftest.py", "pytest.ini", "src", "tests", "node_modules", ".venv", "target", "a.pth",
     "jest.config.js", "pytest", "pytestx", "x.py", "__pycache__", "lib", "go.work", "docs"]
)  # fmt: skip


def by_each_pattern(path: str) -> bool:
    return any(fnmatchcase(path, pattern) for pattern in RUNNER_CONTROL_PATTERNS)


@given(st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join))
def test_the_compiled_rule_agrees_with_every_pattern(path: str) -> None:
    assert is_runner_control(path) == by_each_pattern(path)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("conftest.py", True),
        ("tests/conftest.py", True),
        ("node_modules/left-pad/index.js", True),
        ("src/app/.venv/lib/site.pth", True),
        ("src/pytest_helpers.py", False),
        ("docs/target.md", False),
        ("src/calc/__init__.py", False),
    ],
)
def test_runner_control_paths(path: str, expected: bool) -> None:
    assert is_runner_control(path) is expected
