"""Benchmark: a draft's coverage run of Python tests against a plain run of the same files.

Builds a project whose tests make many calls (a recursive function, a loop of small calls, a
generator) in a measured module and in an unmeasured one, then times, interleaved, `--repeats`
times each, with the given Python (`--python`, default this one; it needs pytest):

* the tests run plainly (`python -m pytest -q tests`), the floor;
* the same run under the draft's line trace (`selfbench.runners.pytest.COVERAGE`'s plugin,
  measuring the one module, as a draft measures the gold's changed files).

It prints the ratio of the medians against the floor the issue sets: at most about 2x. On
Python 3.12 and later the plugin uses `sys.monitoring`; before it, `sys.settrace`. It also
checks that the trace saw every test that calls the measured module.

    .venv/bin/python benchmarks/coverage.py                       # this Python, --work 400000
    .venv/bin/python benchmarks/coverage.py --python PY312        # a Python with sys.monitoring
    .venv/bin/python benchmarks/coverage.py --small               # for CI: a quick run, once
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import parse_args, time_interleaved
from selfbench.runners.pytest import COVERAGE, COVERAGE_MODULE

_FLOOR = 2.0

_MODULE = """\
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def add(a, b):
    return a + b


def total(n):
    result = 0
    for index in range(n):
        result = add(result, index)
    return result


def squares(n):
    for index in range(n):
        yield index * index
"""

_TEST = """\
from pkg import {module}

WORK = {work}


def test_fib():
    assert {module}.fib(18) == 2584


def test_total():
    assert {module}.total(WORK) == WORK * (WORK - 1) // 2


def test_squares():
    assert sum({module}.squares(WORK)) > 0
"""


def _project(root: Path, work: int) -> Path:
    project = root / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    for module in ("measured", "other"):
        (project / "pkg" / f"{module}.py").write_text(_MODULE)
        test = _TEST.format(module=module, work=work)
        (project / "tests" / f"test_{module}.py").write_text(test)
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the Python the tests run on")
    parser.add_argument("--work", type=int, default=400_000, help="the loop tests' calls")
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_args(parser, work=20_000, repeats=1)
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-coverage-") as scratch:
        root = Path(scratch)
        project = _project(root, args.work)
        lib, data = root / "lib", root / "data"
        lib.mkdir()
        data.mkdir()
        (lib / f"{COVERAGE_MODULE}.py").write_text(COVERAGE.plugin)
        include = lib / "include.json"
        include.write_text(json.dumps([str(project / "pkg" / "measured.py")]))
        pytest = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        tests = [str(project / "tests")]
        commands = {
            "plain": [*pytest, *tests],
            "traced": [*pytest, "-p", COVERAGE_MODULE, *tests],
        }
        env = {
            **os.environ,
            "PYTHONPATH": f"{lib}{os.pathsep}{project}",
            "SELFBENCH_COVERAGE_INCLUDE": str(include),
            "SELFBENCH_COVERAGE_DATA": str(data),
        }
        medians = time_interleaved(commands, args.repeats, env)
        seen: set[str] = set()
        for record in data.glob("lines-*.json"):
            seen.update(json.loads(record.read_text()))
        failed = (data / "error.txt").read_text() if (data / "error.txt").exists() else ""
    names = ("test_fib", "test_total", "test_squares")
    missed = [n for n in names if not any(t.endswith(f"test_measured.py::{n}") for t in seen)]
    if failed or missed or any("test_other.py" in test for test in seen):
        sys.exit(f"the trace is wrong: {failed.strip()}; saw {sorted(seen)}")
    plain, traced = medians["plain"][0], medians["traced"][0]
    print(f"python {args.python}, {args.work} calls per loop test, {args.repeats} runs each")
    print(f"plain run     {plain:.2f} s (the floor)")
    ratio = traced / plain
    print(f"traced run    {traced:.2f} s: {ratio:.2f}x the floor (target <= {_FLOOR:.1f}x)")


if __name__ == "__main__":
    main()
