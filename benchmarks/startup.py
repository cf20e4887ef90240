"""Time `selfbench check`, `audit` and `submit` on a real task against the original's start-up.

The task is the demo's sample (a real pull request of a small library: a 3 KB gold patch). Each
command runs as a fresh process, `--runs` interleaved rounds (every command once per round, in
turn), median wall and CPU time (user + system of the child; less disturbed by a shared machine's
load than wall time). `submit` writes into an emptied output root each time. The floor is a bare
interpreter (`python -c pass`). Target: each command's wall time <= the original tool's
whole-process time for a small task (`ORIGINAL_SMALL_SECONDS`).

    python benchmarks/startup.py [--runs 15]
    python benchmarks/startup.py --small    # a quick run for CI: 2 runs
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _bench import ORIGINAL_SMALL_SECONDS, parse_args, time_interleaved, write_sample_task


def measure(root: Path, runs: int) -> None:
    """Time the floor and each command; print the figures and the ratios to the original."""
    task_dir, arguments = write_sample_task(root / "sample")
    output = root / "submitted"
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(root / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # cached, as an installed tool's would be
    selfbench = [sys.executable, "-m", "selfbench"]
    commands = {
        "floor (python -c pass)": [sys.executable, "-c", "pass"],
        "--version": [*selfbench, "--version"],
        "check TASK_DIR": [*selfbench, "check", str(task_dir)],
        "check --json TASK_DIR": [*selfbench, "check", "--json", str(task_dir)],
        "check definition.json": [*selfbench, "check", str(task_dir / "definition.json")],
        "audit --json TASK_DIR": [*selfbench, "audit", "--json", str(task_dir)],
        "audit TASK_DIR": [*selfbench, "audit", str(task_dir)],
        "submit --args": [*selfbench, "submit", "--args", str(arguments), "--output-root",
                          str(output)],
    }  # fmt: skip
    empty = f"rm -rf {output} && mkdir {output}"
    timings = time_interleaved(commands, runs, env, before={"submit --args": ["sh", "-c", empty]})
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"task: {task_dir.name}, median of {runs} interleaved runs")
    print(f"load average: {load} on {os.cpu_count()} CPUs (wall time is only honest when low)")
    print(f"original (small task): {ORIGINAL_SMALL_SECONDS:.3f} s whole process   (target <= 1x)")
    for name, (wall, cpu) in timings.items():
        ratio = wall / ORIGINAL_SMALL_SECONDS
        print(f"  {name:24} {wall:.3f} s  cpu {cpu:.3f} s   {ratio:.2f}x the original")


def main() -> None:
    """Write the sample task into a temp dir, measure, clean up."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="interleaved rounds (15)")
    args = parse_args(parser, runs=2)
    root = Path(tempfile.mkdtemp(prefix="selfbench-bench-"))
    try:
        measure(root, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
