"""Time `python -m selfbench audit --json` on a large generated gold patch against a floor, and
on a small real one against the original tool.

The floor is the least any tool must do: start the same interpreter, read the patch and split it
into lines (`bytes.splitlines()`). Both are timed as whole fresh processes, median of N runs,
in wall time and in CPU time (user + system of the child: less disturbed by a shared machine's
load than wall time, though not immune). For the breakdown it also times a fresh process that
only imports what `audit` imports, and `parse_patch` alone in this process. Targets: no slower
than the original tool (`ORIGINAL_SECONDS`) and <= 3x the floor. Then the demo's sample task (a
real pull request, a 3 KB gold patch), interleaved with a bare interpreter: no slower than the
original's `ORIGINAL_SMALL_SECONDS` (`benchmarks/startup.py` times `check` and `submit` too).

    python benchmarks/audit.py [--size-mb 50] [--runs 5] [--keep]
    python benchmarks/audit.py --small    # a quick run for CI: 2 MB, one run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import ORIGINAL_SMALL_SECONDS, parse_args, time_interleaved, write_sample_task

SEED = 20260101
_WORDS = (
    "value", "result", "index", "count", "items", "config", "buffer", "offset", "name", "path",
    "token", "parser", "state", "error", "limit", "node", "child", "parent", "key", "data",
)  # fmt: skip
_TEMPLATES = (
    "    {a} = {b}.{c}({d}, {e})",
    "    if {a} is not None and {b} > {n}:",
    "        return {a}[{n}:] + {b}",
    "    for {a} in {b}.{c}():",
    "        {a}.append({b} * {n})",
    "def {a}_{b}({c}: int, {d}: str) -> bool:",
    '    """Compute the {a} of {b} from {c}."""',
    "    raise ValueError(f'bad {a}: {{{b}!r}}')",
    "",
    "# {a} {b} {c} {d} {e}",
)
_FLOOR = "import sys; data = open(sys.argv[1], 'rb').read(); data.splitlines()"
_IMPORTS = "import selfbench.cli, selfbench.audit, selfbench.contract, selfbench.patches"
_MB = 1_000_000
# The original tool's whole-process time for this audit (the 50 MB gold patch), as measured on
# this machine kind, interleaved with ours: the figure every run is compared with.
ORIGINAL_SECONDS = 0.18
_CONTEXT = 3


def _line_pool(rng: random.Random, size: int) -> list[bytes]:
    pool = []
    for _ in range(size):
        template = rng.choice(_TEMPLATES)
        words = {key: rng.choice(_WORDS) for key in "abcde"}
        pool.append(template.format(n=rng.randrange(100), **words).encode())
    return pool


class _Generator:
    """Deterministic sections: new files (one large hunk) and edits (many small hunks)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.pool = _line_pool(self.rng, 4096)
        self.changed = 0

    def lines(self, prefix: bytes, count: int) -> list[bytes]:
        return [prefix + line + b"\n" for line in self.rng.choices(self.pool, k=count)]

    def added_file(self, path: str) -> bytes:
        count = self.rng.randrange(50, 1500)
        self.changed += count
        header = (
            f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1234567\n"
            f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{count} @@\n"
        )
        return header.encode() + b"".join(self.lines(b"+", count))

    def edited_file(self, path: str) -> bytes:
        out = [f"diff --git a/{path} b/{path}\nindex 89abcde..fedcba9 100644\n".encode()]
        out.append(f"--- a/{path}\n+++ b/{path}\n".encode())
        old_line = new_line = 1
        for _ in range(self.rng.randrange(1, 40)):
            old_line += self.rng.randrange(5, 200)
            removed, added = self.rng.randrange(0, 25), self.rng.randrange(0, 25)
            removed, added = (removed, added) if removed or added else (1, 1)
            old = removed + 2 * _CONTEXT
            new = added + 2 * _CONTEXT
            out.append(f"@@ -{old_line},{old} +{new_line},{new} @@ def {path}():\n".encode())
            out.extend(self.lines(b" ", _CONTEXT))
            out.extend(self.lines(b"-", removed))
            out.extend(self.lines(b"+", added))
            out.extend(self.lines(b" ", _CONTEXT))
            self.changed += removed + added
            old_line += old
            new_line = old_line + (new - old)
        return b"".join(out)

    def patch(self, size: int) -> bytes:
        sections: list[bytes] = []
        total = 0
        index = 0
        while total < size:
            directory = "/".join(self.rng.choices(_WORDS, k=self.rng.randrange(1, 4)))
            path = f"src/{directory}/module_{index}.py"
            adding = self.rng.random() < 0.2
            section = self.added_file(path) if adding else self.edited_file(path)
            sections.append(section)
            total += len(section)
            index += 1
        return b"".join(sections)


def _definition() -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "difficulty": "easy",
        "taskId": "bench-large-gold",
        "repo": "example/bench",
        "baseCommit": "0123456789abcdef0123456789abcdef01234567",
        "workdir": ".",
        "setupCommand": "python -m pip install --quiet pytest",
        "testCommand": "python -m pytest -q {tests}",
        "failToPass": ["tests/test_bench.py"],
        "passToPass": [],
        "testPaths": ["tests/test_bench.py"],
        "toolchains": ["python"],
        "sourcePr": 1,
        "sourceUrl": "https://example.com/example/bench/pull/1",
        "prompt": "Make the modules compute their values faster.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }


_TEST_PATCH = b"""\
diff --git a/tests/test_bench.py b/tests/test_bench.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/tests/test_bench.py
@@ -0,0 +1,2 @@
+def test_bench() -> None:
+    assert True
"""


def write_task(task_dir: Path, size_mb: float) -> int:
    """Write definition.json, gold.patch and test.patch; return the gold changed-line count."""
    generator = _Generator(SEED)
    gold = generator.patch(int(size_mb * _MB))
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "gold.patch").write_bytes(gold)
    (task_dir / "test.patch").write_bytes(_TEST_PATCH)
    (task_dir / "definition.json").write_text(json.dumps(_definition(), indent=2) + "\n")
    return generator.changed


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(command: list[str], runs: int, env: dict[str, str]) -> tuple[float, float, bytes]:
    """Median wall and CPU time of `runs` fresh processes, after one warm-up run."""
    timings = []
    cpu = []
    output = b""
    for run in range(runs + 1):
        started, cpu_started = time.perf_counter(), _cpu_seconds()
        result = subprocess.run(command, capture_output=True, check=False, env=env)
        if run == 0:
            continue
        timings.append(time.perf_counter() - started)
        cpu.append(_cpu_seconds() - cpu_started)
        if result.returncode not in {0, 1}:
            sys.exit(f"{command[:4]} failed ({result.returncode}): {result.stderr.decode()}")
        output = result.stdout
    return statistics.median(timings), statistics.median(cpu), output


def _parse_seconds(gold: Path, runs: int) -> float:
    from selfbench.patches import parse_patch  # noqa: PLC0415 - only the breakdown needs it

    data = gold.read_bytes()
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        parse_patch(data, lenient=True)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def measure(task_dir: Path, expected: int, runs: int) -> None:
    """Time ours, the floor and the breakdown; print the figures.

    Bytecode is cached (in a temp dir) as an installed tool's would be, even where the caller
    set PYTHONDONTWRITEBYTECODE; the first, warm-up run of each command writes it.
    """
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(task_dir.parent / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    gold = task_dir / "gold.patch"
    megabytes = gold.stat().st_size / _MB
    ours, ours_cpu, output = _time(
        [sys.executable, "-m", "selfbench", "audit", "--json", str(task_dir)], runs, env
    )
    counted = json.loads(output)["metrics"]["implementationChangedLines"]
    if counted != expected:
        sys.exit(f"wrong count: audit says {counted} changed lines, generated {expected}")
    floor, floor_cpu, _ = _time([sys.executable, "-c", _FLOOR, str(gold)], runs, env)
    imports, imports_cpu, _ = _time([sys.executable, "-c", _IMPORTS], runs, env)
    parse = _parse_seconds(gold, runs)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"gold patch: {megabytes:.1f} MB, {expected} changed lines, median of {runs} runs")
    print(f"load average: {load} on {os.cpu_count()} CPUs (wall time is only honest when low)")
    print(f"ours:  {ours:.3f} s  {megabytes / ours:7.1f} MB/s   cpu {ours_cpu:.3f} s")
    print(f"floor: {floor:.3f} s  {megabytes / floor:7.1f} MB/s   cpu {floor_cpu:.3f} s")
    print(
        f"ratio ours/original ({ORIGINAL_SECONDS} s): {ours / ORIGINAL_SECONDS:.2f}x wall, "
        f"{ours_cpu / ORIGINAL_SECONDS:.2f}x cpu   (target <= 1x)"
    )
    print(
        f"ratio ours/floor: {ours / floor:.2f}x wall, {ours_cpu / floor_cpu:.2f}x cpu"
        "   (target <= 3x)"
    )
    print(f"  startup + imports alone: {imports:.3f} s   cpu {imports_cpu:.3f} s")
    print(f"  parse_patch alone:       {parse:.3f} s  {megabytes / parse:7.1f} MB/s")


def measure_small(root: Path, runs: int) -> None:
    """Time `audit --json` of the demo's sample task against the original's small-task figure."""
    task_dir, _ = write_sample_task(root / "sample")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(root / "pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    timings = time_interleaved(
        {
            "ours": [sys.executable, "-m", "selfbench", "audit", "--json", str(task_dir)],
            "bare": [sys.executable, "-c", "pass"],
        },
        runs,
        env,
    )
    (ours, ours_cpu), (bare, _) = timings["ours"], timings["bare"]
    size = (task_dir / "gold.patch").stat().st_size / 1000
    print(f"small real task ({size:.1f} KB gold patch), median of {runs} interleaved runs:")
    print(f"ours:  {ours:.3f} s   cpu {ours_cpu:.3f} s   (a bare interpreter: {bare:.3f} s)")
    print(
        f"ratio ours/original ({ORIGINAL_SMALL_SECONDS} s): {ours / ORIGINAL_SMALL_SECONDS:.2f}x "
        f"wall, {ours_cpu / ORIGINAL_SMALL_SECONDS:.2f}x cpu   (target <= 1x)"
    )


def main() -> None:
    """Generate the task into a temp dir, measure, clean up."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50.0, help="gold patch size (50)")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (5)")
    parser.add_argument(
        "--small-runs", type=int, default=15, help="interleaved runs on the small task (15)"
    )
    parser.add_argument("--keep", action="store_true", help="keep and print the temp dir")
    args = parse_args(parser, size_mb=2, runs=1, small_runs=2)
    root = Path(tempfile.mkdtemp(prefix="selfbench-bench-"))
    try:
        task_dir = root / "task"
        measure(task_dir, write_task(task_dir, args.size_mb), args.runs)
        measure_small(root, args.small_runs)
        if args.keep:
            print(f"kept: {root}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
