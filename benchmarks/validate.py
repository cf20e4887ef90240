"""Benchmark: `selfbench validate --env local` against running the tests bare.

Builds a Python project whose test suite takes about `--suite-seconds` (default 5 s) of real CPU
work, with a merged change and its held-out test, and compiles it. Then measures:

* the floor: `setupCommand` once plus three bare runs of the whole test command (fail-to-pass
  and pass-to-pass selectors together) on the host, in a prepared copy with the gold patch —
  what any validation must at least spend (nop, oracle, determinism);
* our whole local validation of that task with `--reruns` at its default (3: pass-to-pass at the
  base and in two gold-patch runs, fail-to-pass twice in each of those; sandbox, copies, nop,
  oracle, the per-selector checks, the flaky-test comparison and the independent rerun
  included), and the ratio to the floor (target ≤ 1.25);
* `--tasks` such tasks (four) with `-j 1` and with `-j 2`, and the speed-up (target ≥ 1.6 on
  2 cores);
* apart from validation itself, the first-use cost of provisioning the task's toolchains (an
  empty toolchain cache: what the registries install, e.g. uv for python) and the per-task cost
  once they are cached (finding and probing them); not with `--toolchains ""`.

The validation figures use the host's system Python (`SELFBENCH_TOOLCHAINS=host`), as the floor
does: the project's setup takes pytest from Debian's python3-pytest.

Needs root and bubblewrap, like the local environment itself.

    .venv/bin/python benchmarks/validate.py                     # the 5 s suite
    .venv/bin/python benchmarks/validate.py --suite-seconds 1   # a quick run
    .venv/bin/python benchmarks/validate.py --small             # for CI: 0.2 s, 2 tasks, once,
                                                                # no provisioning
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _bench import parse_args
from projects import Project, build, git
from selfbench.bundle import layout
from selfbench.toolchains import provision
from selfbench.validate import validate
from selfbench.validate.local import DEFAULT_RERUNS, LocalOptions, LocalRunner

_SETUP = "python3 -m venv --system-site-packages --without-pip .venv"
_TEST = ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}"
_SLOW_FILES = 4

_WORK = """\
import hashlib


def spin(rounds):
    digest = b"selfbench"
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()
    return digest
"""


def _calibrate(seconds: float) -> int:
    """Hash rounds that take `seconds` of CPU on this machine in the project's interpreter."""
    probe = 200_000
    script = f"{_WORK}\nimport time\nt = time.process_time()\nspin({probe})\n"
    script += "print(time.process_time() - t)"
    result = subprocess.run(
        ["python3", "-c", script],
        check=True,
        capture_output=True,
        text=True,
    )
    per_round = float(result.stdout) / probe
    return max(1, int(seconds / per_round))


def project(task_id: str, rounds: int) -> Project:
    """A project: a slow regression suite (pass-to-pass) and a fast new feature (fail-to-pass)."""
    per_test = rounds // (_SLOW_FILES * 2)
    slow = {
        f"tests/test_slow_{index}.py": (
            "from calc.work import spin\n\n\n"
            f"def test_a():\n    assert len(spin({per_test})) == 32\n\n\n"
            f"def test_b():\n    assert len(spin({per_test})) == 32\n"
        )
        for index in range(_SLOW_FILES)
    }
    return Project(
        base={
            ".gitignore": ".venv/\n__pycache__/\n",
            "calc/__init__.py": "def add(a, b):\n    return a + b\n",
            "calc/work.py": _WORK,
            **slow,
        },
        gold={
            "calc/__init__.py": (
                "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
            )
        },
        tests={
            "tests/test_mul.py": (
                "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
            )
        },
        definition={
            "taskId": task_id,
            "setupCommand": _SETUP,
            "testCommand": _TEST,
            "failToPass": ["tests/test_mul.py"],
            "passToPass": sorted(slow),
            "toolchains": ["python"],
        },
    )


def floor_seconds(out: Path, scratch: Path) -> float:
    """Setup once and three bare runs of the whole test command, on the host."""
    repo = out.parent.parent / "repo"
    tree = scratch / "floor"
    shutil.rmtree(tree, ignore_errors=True)
    git(repo, "worktree", "add", "-q", "--detach", str(tree), "HEAD")
    git(tree, "checkout", "-q", "main")
    # The same interpreter and tools as the sandbox: the containers' PATH, not this shell's.
    env = {**os.environ, "PATH": layout.CONTAINER_PATH}
    start = time.perf_counter()
    subprocess.run(["bash", "-c", _SETUP], cwd=tree, check=True, env=env)
    selectors = ["tests/test_mul.py", *(f"tests/test_slow_{i}.py" for i in range(_SLOW_FILES))]
    command = _TEST.replace("{tests}", " ".join(selectors))
    for _ in range(3):
        subprocess.run(
            ["bash", "-c", command],
            cwd=tree,
            check=True,
            capture_output=True,
            env=env,
        )
    elapsed = time.perf_counter() - start
    git(repo, "worktree", "remove", "--force", str(tree))
    return elapsed


def timed_validate(outs: list[Path], jobs: int, logs: Path, reruns: int) -> float:
    start = time.perf_counter()
    options = LocalOptions(logs=logs, reruns=reruns)
    reports = validate(outs, runner=LocalRunner(options), jobs=jobs)
    elapsed = time.perf_counter() - start
    rejected = [f"{r.task_id}: {r.reason}" for r in reports if not r.accepted]
    if rejected:
        raise SystemExit("benchmark task rejected: " + "; ".join(rejected))
    return elapsed


def provisioning_seconds(toolchains: list[str], cache: Path) -> tuple[float, float, str]:
    """Provisioning `toolchains` into an empty cache, then again from it; what was used."""
    os.environ["SELFBENCH_TOOLCHAINS_DIR"] = str(cache)
    try:
        start = time.perf_counter()
        first = provision(toolchains)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        provision(toolchains)
        warm = time.perf_counter() - start
    finally:
        del os.environ["SELFBENCH_TOOLCHAINS_DIR"]
    return cold, warm, ", ".join(use.describe() for use in first.uses)


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} s  ({min(values):.2f}-{max(values):.2f} s)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite-seconds", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per figure")
    parser.add_argument("--tasks", type=int, default=4, help="tasks of the -j 1 / -j 2 figure")
    parser.add_argument(
        "--toolchains",
        default="python",
        help="comma-separated toolchains whose first-use provisioning is timed (default: python)",
    )
    parser.add_argument(
        "--reruns", type=int, default=DEFAULT_RERUNS, help="validate's --reruns (default: its own)"
    )
    args = parse_args(parser, suite_seconds=0.2, repeats=1, tasks=2, toolchains="")
    rounds = _calibrate(args.suite_seconds)
    os.environ["SELFBENCH_TOOLCHAINS"] = "host"  # validation as the floor: the host's Python
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-validate-") as scratch_name:
        scratch = Path(scratch_name)
        if args.toolchains:
            toolchains = args.toolchains.split(",")
            cold, warm, used = provisioning_seconds(toolchains, scratch / "cache")
            print(f"toolchains       first use {cold:6.2f} s, then {warm:.2f} s per task  ({used})")
        one = build(project("bench-0", rounds), scratch / "p0")
        floors: list[float] = []
        ours: list[float] = []
        for index in range(args.repeats):  # interleaved, so drift in the machine hits both
            floors.append(floor_seconds(one, scratch))
            ours.append(timed_validate([one], 1, scratch / f"logs-one-{index}", args.reruns))
        ratio = statistics.median(ours) / statistics.median(floors)
        print(
            f"suite            ~{args.suite_seconds:g} s of CPU per run, {args.repeats} runs each,"
            f" --reruns {args.reruns}"
        )
        print(f"floor            {_spread(floors)}  (setup once + three bare test runs)")
        print(f"validate (1)     {_spread(ours)}  = {ratio:.2f}x the floor (target <= 1.25)")
        outs = [build(project(f"bench-{i}", rounds), scratch / f"q{i}") for i in range(args.tasks)]
        serial: list[float] = []
        parallel: list[float] = []
        for index in range(max(1, args.repeats - 1)):
            serial.append(timed_validate(outs, 1, scratch / f"logs-j1-{index}", args.reruns))
            parallel.append(timed_validate(outs, 2, scratch / f"logs-j2-{index}", args.reruns))
        speedup = statistics.median(serial) / statistics.median(parallel)
        print(f"{args.tasks} tasks, -j 1    {_spread(serial)}")
        faster = f"{speedup:.2f}x faster (target >= 1.6)"
        print(f"{args.tasks} tasks, -j 2    {_spread(parallel)}  = {faster}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
