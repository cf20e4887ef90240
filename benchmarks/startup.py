"""Time `selfbench check`, `audit` and `submit` on a real task against the original's start-up.

The task is the demo's sample (a real pull request of a small library: a 3 KB gold patch) and,
with `--task`, a real pull request's task beside it: a task directory (`definition.json`,
`test.patch`, `gold.patch`), or a task of an extracted export (what `selfbench extract` writes:
its review record holds the definition), whose task files are written into a temp dir first.
Each command runs as a fresh process, `--runs` interleaved rounds (every command once per round,
in turn), median wall and CPU time (user + system of the child; less disturbed by a shared
machine's load than wall time). `submit` writes into an emptied output root each time. The floor
is a bare interpreter (`python -c pass`). Target: each command's wall time <= the original
tool's whole-process time for a small task (`ORIGINAL_SMALL_SECONDS`).

    python benchmarks/startup.py [--runs 15] [--task DIR]
    python benchmarks/startup.py --small    # a quick run for CI: 2 runs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _bench import ORIGINAL_SMALL_SECONDS, parse_args, time_interleaved, write_sample_task
from selfbench.artifacts.task_dir import DEFINITION_FILE, GOLD_PATCH_FILE, write_task_files
from selfbench.bundle import layout
from selfbench.export.reader import REVIEW_FILE


def task_files(task: Path, root: Path) -> Path:
    """`task` when it is a task directory, else the task directory written from an extracted
    export's task (its review record's definition, its patches) under `root`."""
    if (task / DEFINITION_FILE).is_file():
        return task
    if not (task / REVIEW_FILE).is_file():
        sys.stderr.write(
            f"error: {task}: neither a task directory nor an extracted export's task\n"
        )
        sys.exit(2)
    definition = json.loads((task / REVIEW_FILE).read_bytes())["definition"]
    written = root / "real" / str(definition["taskId"])
    written.mkdir(parents=True)
    test_patch = (task / layout.TEST_PATCH).read_bytes()
    write_task_files(written, definition, test_patch, (task / layout.GOLD_PATCH).read_bytes())
    return written


def measure(root: Path, runs: int, real: Path | None) -> None:
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
    if real is not None:
        commands |= {
            "real: check TASK_DIR": [*selfbench, "check", str(real)],
            "real: audit --json": [*selfbench, "audit", "--json", str(real)],
            "real: audit TASK_DIR": [*selfbench, "audit", str(real)],
        }
    empty = f"rm -rf {output} && mkdir {output}"
    timings = time_interleaved(commands, runs, env, before={"submit --args": ["sh", "-c", empty]})
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"task: {task_dir.name}, median of {runs} interleaved runs")
    if real is not None:
        gold = (real / GOLD_PATCH_FILE).stat().st_size
        print(f"real task: {real.name} (a {gold / 1024:.1f} KB gold patch)")
    print(f"load average: {load} on {os.cpu_count()} CPUs (wall time is only honest when low)")
    print(f"original (small task): {ORIGINAL_SMALL_SECONDS:.3f} s whole process   (target <= 1x)")
    for name, (wall, cpu) in timings.items():
        ratio = wall / ORIGINAL_SMALL_SECONDS
        print(f"  {name:24} {wall:.3f} s  cpu {cpu:.3f} s   {ratio:.2f}x the original")


def main() -> None:
    """Write the sample task into a temp dir, measure, clean up."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="interleaved rounds (15)")
    parser.add_argument(
        "--task",
        type=Path,
        help="also time check and audit of this real task: a task directory or an extracted "
        "export's task",
    )
    args = parse_args(parser, runs=2)
    root = Path(tempfile.mkdtemp(prefix="selfbench-bench-"))
    try:
        real = None if args.task is None else task_files(args.task, root)
        measure(root, args.runs, real)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
