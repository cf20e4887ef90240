"""unittest: `TestCase` tests run through pytest, which collects them (its log is pytest's).

A draft infers it when nothing in the repository mentions pytest and the test files import
unittest; its test command is pytest's, so a command never detects it: `detect` finds pytest.
The verifier therefore reads its tests through pytest's reporter, which also checks unittest's
own machinery (`TestCase.run` and `__call__`, pytest's `TestCaseFunction.runtest`).
"""

from __future__ import annotations

from selfbench.runners import pytest
from selfbench.runners._index import UNITTEST
from selfbench.runners._protocol import PythonProject, Runner

__all__ = ["RUNNER"]


RUNNER = Runner(
    entry=UNITTEST,
    label="pytest",
    parse=pytest.parse_pytest,
    selector=lambda test_name: test_name,  # pytest's node id
    accepts_selector=pytest.is_node_id,
    finished_line=pytest.FINISHED_LINE,
    names_carry_file=False,
    python=PythonProject(
        package=pytest.PACKAGE,  # run through pytest
        package_floor=pytest.PACKAGE_FLOOR,
        package_too_old=pytest.PACKAGE_TOO_OLD,
        package_majors=pytest.PACKAGE_MAJORS,
        python_arguments=pytest.PYTHON_ARGUMENTS,
        failed_plugins=pytest.failed_plugins,
        without_plugins=pytest.without_plugins,
        import_pattern=r"(?m)^\s*(?:import unittest|from unittest\b)",
    ),
    test_globals=("unittest",),
    tamper_names=(
        "unittest.TestResult",
        "unittest.TextTestResult",
        "unittest.TextTestRunner",
        "unittest.result",
        "unittest.runner",
        "addSuccess",
        "wasSuccessful",
    ),
    assertion_classes=("unittest.TestCase", "unittest.case.TestCase"),
    evidence=True,
    selects_files=True,
    coverage=pytest.COVERAGE,
    canary=pytest.CANARY,  # its tests run through pytest
)
