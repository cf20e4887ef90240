"""Benchmark: `selfbench run --author draft` against the same stages run one by one.

Generates a Python repository (pytest, `src/` layout, `tests/run_history.py`) with --candidates
squash-merged pull requests, each adding one module of about 25 lines and its test file (which
fails before the change and passes after it): every one an easy candidate that drafts, audits,
validates and passes the coupling check.

The floor is the same work done with the existing commands, one process each, one candidate
after another: `selfbench mine`, then per candidate `selfbench draft`, `audit`, `compile` and
`validate`, then one `selfbench export`. Their wall times are summed. Then the whole
`selfbench run --easy N` is timed with -j 1 and with -j 2, each in a new run directory.

Prints the three times, run(-j 1) / floor (target <= 1.1x) and run(-j 1) / run(-j 2) (target
>= 1.6x, which needs two idle cores).

    .venv/bin/python benchmarks/run.py                   # 20 candidates
    .venv/bin/python benchmarks/run.py --candidates 4    # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from run_history import generate, git

_SELFBENCH = [sys.executable, "-m", "selfbench"]


def _timed(argv: list[str], *, ok: tuple[int, ...] = (0,)) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in ok:
        sys.exit(f"{' '.join(argv[2:])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds


def floor(repo: Path, work: Path, candidates: int) -> float:
    """The stages one by one with the existing commands; the sum of their wall times."""
    pool = work / "candidates.jsonl"
    total = _timed(
        [
            *_SELFBENCH,
            "mine",
            str(repo),
            "--easy",
            str(candidates),
            "--over-fetch",
            "1",
            "--out",
            str(pool),
        ]
    )
    ids = [json.loads(line)["id"] for line in pool.read_text().splitlines() if line]
    drafts, homes = work / "drafts", []
    for cid in ids:
        out = drafts / cid
        total += _timed(
            [
                *_SELFBENCH,
                "draft",
                cid,
                "--repo",
                str(repo),
                "--candidates",
                str(pool),
                "--out",
                str(out),
            ]
        )
        [task] = [path for path in out.iterdir() if (path / "definition.json").is_file()]
        total += _timed([*_SELFBENCH, "audit", str(task)])
        total += _timed([*_SELFBENCH, "compile", str(task), "--repo", str(repo)])
        total += _timed(
            [*_SELFBENCH, "validate", str(task / "harbor-task"), "--logs", str(work / "logs" / cid)]
        )
        homes.append(task)
    total += _timed(
        [
            *_SELFBENCH,
            "export",
            *map(str, homes),
            "--run-id",
            "bench",
            "--repository-url",
            "https://example.com/genkit",
            "--repository-commit",
            git(repo, "rev-parse", "HEAD").decode().strip(),
            "--out",
            str(work / "floor.tar.gz"),
        ]
    )
    return total


def run(repo: Path, work: Path, candidates: int, jobs: int) -> float:
    """The whole `selfbench run`, in a new run directory."""
    out = work / f"run-j{jobs}.tar.gz"
    return _timed(
        [
            *_SELFBENCH,
            "run",
            "--repo",
            str(repo),
            "--easy",
            str(candidates),
            "--over-fetch",
            "1",
            "-j",
            str(jobs),
            "--out",
            str(out),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-run-") as scratch:
        root = Path(scratch)
        repo = generate(root, args.candidates)
        print(f"{args.candidates} candidates; load average {os.getloadavg()[0]:.1f}")
        floor_s = floor(repo, root / "floor", args.candidates)
        print(f"floor (commands one by one): {floor_s:8.1f}s")
        one = run(repo, root / "j1", args.candidates, 1)
        print(
            f"selfbench run -j 1:          {one:8.1f}s   {one / floor_s:.2f}x the floor (<= 1.1x)"
        )
        two = run(repo, root / "j2", args.candidates, 2)
        print(
            f"selfbench run -j 2:          {two:8.1f}s   {one / two:.2f}x faster than -j 1"
            " (>= 1.6x)"
        )


if __name__ == "__main__":
    main()
