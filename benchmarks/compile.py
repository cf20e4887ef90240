"""Benchmark: `selfbench compile` on a large repository against `git archive` alone.

Generates a repository of about 30,000 files / 300 MB (scaled by --size-mb), then times, interleaved
and repeated, our whole compile, `git archive --format=tar.gz` of the same commit, and
`git archive --format=tar` (the floor: producing the snapshot at all). Prints the median of each,
the ratios, and the bundle's bytes on disk against the size of the tar.gz.

    .venv/bin/python benchmarks/compile.py              # the full 300 MB case
    .venv/bin/python benchmarks/compile.py --size-mb 10 # a quick run
    .venv/bin/python benchmarks/compile.py --small      # a quick run for CI: 2 MB, one run
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _bench import git, parse_args, write_task

_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "lambda",
    "request",
    "response",
    "handler",
    "config",
    "value",
    "return",
    "import",
    "class",
    "def",
    "self",
    "none",
    "true",
    "false",
    "error",
    "result",
    "index",
    "buffer",
    "stream",
    "token",
)


def _text(rng: random.Random, size: int) -> bytes:
    lines = []
    total = 0
    while total < size:
        line = " ".join(rng.choices(_WORDS, k=rng.randint(3, 12))) + f" {rng.randint(0, 10**6)}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()


def generate_repository(root: Path, *, size_mb: int) -> str:
    """Write ~100 files per MB (10 KB each), commit them, and return the commit."""
    rng = random.Random(1234)
    files = size_mb * 100
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    for index in range(files):
        path = repo / f"pkg{index % 97}" / f"mod{index // 97}" / f"file{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_text(rng, 10_000))
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "base")
    return git(repo, "rev-parse", "HEAD").decode().strip()


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _disk_bytes(root: Path) -> int:
    seen: set[int] = set()
    total = 0
    for path in root.rglob("*"):
        status = path.lstat()
        if path.is_file() and status.st_ino not in seen:
            seen.add(status.st_ino)
            total += status.st_size
    return total


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parse_args(parser, size_mb=2, runs=1)
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        sha = generate_repository(root, size_mb=args.size_mb)
        print(f"generated {args.size_mb * 100} files in {time.perf_counter() - started:.1f} s")
        task = write_task(root / "task", sha, 0)
        repo = root / "repo"
        bundle = root / "bundle"
        targz = root / "snapshot.tar.gz"
        tar = root / "snapshot.tar"
        compile_cmd = [sys.executable, "-m", "selfbench", "compile", str(task)]
        compile_cmd += ["--repo", str(repo), "--out", str(bundle)]
        actions: dict[str, Callable[[], object]] = {
            "selfbench compile": lambda: subprocess.run(compile_cmd, check=True),
            "git archive tar.gz": lambda: git(
                repo, "archive", "--format=tar.gz", "-o", str(targz), sha
            ),
            "git archive tar": lambda: git(repo, "archive", "--format=tar", "-o", str(tar), sha),
        }
        os.sync()  # let the kernel write the generated repository out before timing anything
        for action in actions.values():
            action()  # one untimed warm-up each: a cold page cache is not what we measure
        times: dict[str, list[float]] = {name: [] for name in actions}
        for _ in range(args.runs):
            for name, action in actions.items():
                times[name].append(_timed(action))
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            runs = " ".join(f"{run:.2f}" for run in times[name])
            print(f"{name:22} {value:7.2f} s   (runs: {runs})")
        ours = medians["selfbench compile"]
        print(f"compile / git archive tar.gz = {ours / medians['git archive tar.gz']:.2f}x")
        print(f"compile / git archive tar    = {ours / medians['git archive tar']:.2f}x (floor)")
        on_disk = _disk_bytes(bundle)
        size = targz.stat().st_size
        print(f"bundle on disk {on_disk / 1e6:.1f} MB = {on_disk / size:.2f}x the tar.gz")
        shutil.rmtree(bundle, ignore_errors=True)


if __name__ == "__main__":
    main()
