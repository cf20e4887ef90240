"""Benchmark: `selfbench quality` against the same task's own `selfbench validate --env local`.

Builds a Python project like `validate.py`'s: a regression suite (pass-to-pass) of about
`--suite-seconds` of real CPU work, and a merged change whose held-out test (fail-to-pass) takes
about `--f2p-seconds`. The change adds a small function with arithmetic, a comparison and
constants, so it has mutants to run. Then measures, interleaved, `--repeats` times each:

* the task's own local validation (`--reruns` at its default);
* quality on the same task: the gold once, ablation, mutation (`-j` variants at a time);

and prints the ratio of the medians against the floor the issue sets: quality costs at most 3x
the task's own validation time.

Needs root and bubblewrap, like the local environment itself.

    .venv/bin/python benchmarks/quality.py                     # the 5 s suite, -j 2
    .venv/bin/python benchmarks/quality.py --suite-seconds 1   # a quick run
    .venv/bin/python benchmarks/quality.py --small             # for CI: 0.2 s, once
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import parse_args
from projects import Project, build
from selfbench.quality.api import QualityOptions, assess_task
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from validate import _SETUP, _SLOW_FILES, _TEST, _WORK, _calibrate

_FLOOR = 3.0
"""Quality may take at most this many times the task's own validation."""

_GOLD = """\
def add(a, b):
    return a + b


def scaled(value, factor, limit):
    total = value * factor + 1
    if total > limit:
        return limit
    return total
"""


def project(task_id: str, suite_rounds: int, f2p_rounds: int) -> Project:
    """The slow regression suite (pass-to-pass) and the change `scaled` (fail-to-pass)."""
    per_test = suite_rounds // (_SLOW_FILES * 2)
    slow = {
        f"tests/test_slow_{index}.py": (
            "from calc.work import spin\n\n\n"
            f"def test_a():\n    assert len(spin({per_test})) == 32\n\n\n"
            f"def test_b():\n    assert len(spin({per_test})) == 32\n"
        )
        for index in range(_SLOW_FILES)
    }
    held_out = (
        "from calc import scaled\nfrom calc.work import spin\n\n\n"
        f"def test_scaled():\n    assert len(spin({f2p_rounds})) == 32\n"
        "    assert scaled(2, 3, 100) == 7\n    assert scaled(5, 5, 10) == 10\n"
        "    assert scaled(3, 3, 10) == 10\n"
    )
    return Project(
        base={
            ".gitignore": ".venv/\n__pycache__/\n",
            "calc/__init__.py": "def add(a, b):\n    return a + b\n",
            "calc/work.py": _WORK,
            **slow,
        },
        gold={"calc/__init__.py": _GOLD},
        tests={"tests/test_scaled.py": held_out},
        definition={
            "taskId": task_id,
            "setupCommand": _SETUP,
            "testCommand": _TEST,
            "failToPass": ["tests/test_scaled.py"],
            "passToPass": sorted(slow),
            "toolchains": ["python"],
        },
    )


def timed_validate(out: Path, logs: Path) -> float:
    start = time.perf_counter()
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=logs)))
    elapsed = time.perf_counter() - start
    if not report.accepted:
        raise SystemExit(f"benchmark task rejected: {report.reason}")
    return elapsed


def timed_quality(task: Path, repo: Path, jobs: int, logs: Path) -> tuple[float, str]:
    start = time.perf_counter()
    record = assess_task(task, repo, QualityOptions(local=LocalOptions(logs=logs), jobs=jobs))
    elapsed = time.perf_counter() - start
    mutation = record.mutation
    ran = f"{mutation.killed}/{mutation.generated} killed" if mutation else "no mutants"
    early = ", stopped early" if mutation and mutation.stopped_early else ""
    parts = len(record.ablation.parts) if record.ablation else 0
    return elapsed, f"verdict {record.verdict}; {parts} parts; {ran}{early}"


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} s  ({min(values):.2f}-{max(values):.2f} s)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite-seconds", type=float, default=5.0)
    parser.add_argument("--f2p-seconds", type=float, default=0.5)
    parser.add_argument("--jobs", type=int, default=2, help="quality's -j (default: 2)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per figure")
    args = parse_args(parser, suite_seconds=0.2, f2p_seconds=0.1, repeats=1)
    suite, f2p = _calibrate(args.suite_seconds), _calibrate(args.f2p_seconds)
    os.environ["SELFBENCH_TOOLCHAINS"] = "host"  # as validate.py: the host's Python
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-quality-") as scratch_name:
        scratch = Path(scratch_name)
        out = build(project("bench-quality", suite, f2p), scratch / "p")
        task, repo = scratch / "p" / "authored" / "bench-quality", scratch / "p" / "repo"
        validations: list[float] = []
        qualities: list[float] = []
        seen = ""
        for index in range(args.repeats):  # interleaved, so drift in the machine hits both
            validations.append(timed_validate(out, scratch / f"logs-v-{index}"))
            seconds, seen = timed_quality(task, repo, args.jobs, scratch / f"logs-q-{index}")
            qualities.append(seconds)
        ratio = statistics.median(qualities) / statistics.median(validations)
        print(
            f"task             ~{args.suite_seconds:g} s pass-to-pass suite, "
            f"~{args.f2p_seconds:g} s fail-to-pass, {args.repeats} runs each"
        )
        print(f"validate         {_spread(validations)}")
        print(f"quality (-j {args.jobs})   {_spread(qualities)}  ({seen})")
        verdict = "within" if ratio <= _FLOOR else "OVER"
        print(f"ratio            {ratio:.2f}x the task's validation ({verdict} {_FLOOR:g}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
