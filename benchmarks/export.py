"""Benchmark: `selfbench export` of many large bundles against plain `tar -czf` of the same trees.

Builds one repository of incompressible files (a compiled snapshot is gzip data, incompressible
whatever the sources were), compiles --bundles tasks from it into collect directories of about
--size-mb MB each (the snapshot twice, hard-linked, plus the rendered files), then times,
interleaved and repeated, the whole `selfbench export` process and `tar --hard-dereference
-czf` of the same bundle trees (the floor: one gzip tar of every byte the export must hold).
Prints the medians, their ratio, and the export's peak RSS (target: under 200 MB).

    .venv/bin/python benchmarks/export.py               # 20 bundles of about 50 MB
    .venv/bin/python benchmarks/export.py --size-mb 5   # a quick run
    .venv/bin/python benchmarks/export.py --small       # for CI: 2 bundles of 1 MB, one run
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import git, parse_args, write_task

_FILE_BYTES = 100_000


def _git(repo: Path, *args: str) -> str:
    return git(repo, *args).decode().strip()


def generate_repository(root: Path, *, snapshot_mb: float) -> tuple[Path, str]:
    """A repository whose snapshot is about `snapshot_mb` MB; returns it and its commit."""
    rng = random.Random(1234)
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "--quiet")
    for index in range(max(1, round(snapshot_mb * 1e6 / _FILE_BYTES))):
        path = repo / f"pkg{index % 17}" / f"blob{index}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(rng.randbytes(_FILE_BYTES))
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    return repo, _git(repo, "rev-parse", "HEAD")


def build_bundles(root: Path, *, bundles: int, size_mb: float) -> list[Path]:
    """`bundles` collect directories (`harbor-task/` beside `definition.json` and an accepted
    `validation.json` bound to the bundle, as `validate` writes it: export takes only validated
    tasks)."""
    from selfbench.artifacts.validation import (  # noqa: PLC0415 - only after argument parsing
        validation_record,
        write_validation,
    )
    from selfbench.bundle import layout  # noqa: PLC0415
    from selfbench.compiler import compile_task  # noqa: PLC0415

    repo, sha = generate_repository(root, snapshot_mb=size_mb / 2)
    collected = []
    for index in range(bundles):
        task = write_task(root / "authored" / f"bench-{index:02d}", sha, index)
        out = root / "collected" / task.name
        compile_task(task, repo=repo, out=out / "harbor-task")
        (out / "definition.json").write_bytes((task / "definition.json").read_bytes())
        manifest = hashlib.sha256((out / "harbor-task" / layout.MANIFEST).read_bytes()).hexdigest()
        report = validation_record(
            {"taskId": task.name, "accepted": True}, manifest_sha256=manifest
        )
        write_validation(out, report)
        collected.append(out)
    return collected


def _bytes(paths: list[Path]) -> int:
    return sum(p.stat().st_size for path in paths for p in path.rglob("*") if p.is_file())


def timed(command: list[str]) -> tuple[float, int]:
    """Wall time and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed with {process.returncode}")
    return elapsed, usage.ru_maxrss * 1024


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bundles", type=int, default=20)
    parser.add_argument("--size-mb", type=float, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parse_args(parser, bundles=2, size_mb=1, runs=1)
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-") as temp:
        root = Path(temp)
        started = time.perf_counter()
        collected = build_bundles(root, bundles=args.bundles, size_mb=args.size_mb)
        total = _bytes(collected)
        print(
            f"built {args.bundles} bundles, {total / 1e6 / args.bundles:.1f} MB each "
            f"({total / 1e6:.0f} MB), in {time.perf_counter() - started:.1f} s"
        )
        export = [sys.executable, "-m", "selfbench", "export", "--run-id", "bench"]
        export += ["--repository-url", "https://example.com/bench.git"]
        export += ["--repository-commit", "0" * 40, "--out", str(root / "export.tar.gz")]
        export += [str(path) for path in collected]
        floor = ["tar", "--hard-dereference", "-czf", str(root / "floor.tar.gz"), "-C", temp]
        floor += [str(path.relative_to(root) / "harbor-task") for path in collected]
        commands = {"selfbench export": export, "tar -czf (floor)": floor}
        os.sync()
        for command in commands.values():
            timed(command)  # one untimed warm-up each: a cold page cache is not what we measure
        times: dict[str, list[float]] = {name: [] for name in commands}
        peaks: list[int] = []
        for _ in range(args.runs):
            for name, command in commands.items():
                elapsed, peak = timed(command)
                times[name].append(elapsed)
                if name == "selfbench export":
                    peaks.append(peak)
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            runs = " ".join(f"{run:.2f}" for run in times[name])
            print(f"{name:18} {value:7.2f} s   (runs: {runs})")
        ratio = medians["selfbench export"] / medians["tar -czf (floor)"]
        print(f"export / tar -czf = {ratio:.2f}x")
        sizes = {
            name: (root / name).stat().st_size / 1e6 for name in ("export.tar.gz", "floor.tar.gz")
        }
        print(f"export {sizes['export.tar.gz']:.0f} MB, tar.gz {sizes['floor.tar.gz']:.0f} MB")
        print(f"export peak RSS {max(peaks) / 2**20:.0f} MiB (target < 200 MB)")


if __name__ == "__main__":
    main()
