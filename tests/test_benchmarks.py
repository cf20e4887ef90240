"""Every benchmark of `benchmarks/` runs in its small configuration (`--small`), so a change that
breaks one fails the suite. Nothing here is timed: each test asserts that its benchmark ran and
printed its ratios (shown with `-s`); the figures themselves are measured by running a benchmark
at its full size (docs/performance.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import sources_path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
NAMES = sorted(path.stem for path in BENCHMARKS.glob("*.py") if not path.stem.startswith("_"))
SANDBOXED = {"eval", "quality", "run", "validate"}
"""The benchmarks that run tasks in the local sandbox, which needs root and bubblewrap."""
_RATIO_RE = re.compile(r"\d+\.\d+x\b")


@pytest.mark.benchmark
@pytest.mark.parametrize("name", NAMES)
def test_the_benchmark_runs_in_its_small_configuration(name: str) -> None:
    if name in SANDBOXED and (os.geteuid() != 0 or shutil.which("bwrap") is None):
        pytest.skip("the local sandbox needs root and bubblewrap")
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--small"],
        env={**os.environ, "PYTHONPATH": sources_path()},
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    sys.stdout.write(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _RATIO_RE.search(result.stdout), result.stdout
