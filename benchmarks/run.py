"""Benchmark: `selfbench run --author draft` against the same stages run one by one.

Generates a Python repository (pytest, `src/` layout, `tests/run_history.py`) with --candidates
squash-merged pull requests, each adding one module of about 25 lines and its test file (which
fails before the change and passes after it): every one an easy candidate that drafts, audits,
validates and passes the coupling check. Every run below must accept all of them, or the
benchmark stops: a figure over fewer tasks would compare different work.

The floor is the same work done with the existing commands, one process each, one candidate
after another: `selfbench mine`, then per candidate `selfbench draft`, `audit`, `compile` and
`validate`, then one `selfbench export`. Their wall times are summed. Then the whole
`selfbench run --easy N` is timed with -j 1 and with -j 2, each in a new run directory.

Prints the floor's time per command and the run's per stage (from its state files), then
run(-j 1) / floor (target <= 1.1x) and run(-j 1) / run(-j 2) (target >= 1.6x, which needs two
idle cores).

    .venv/bin/python benchmarks/run.py                   # 20 candidates
    .venv/bin/python benchmarks/run.py --candidates 4    # a quick run
    .venv/bin/python benchmarks/run.py --small           # for CI: 1 candidate, -j 1, no quality
    .venv/bin/python benchmarks/run.py --no-j2           # the floor and -j 1 only
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
from _bench import parse_args
from run_history import generate, git

_SELFBENCH = [sys.executable, "-m", "selfbench"]
_SOURCE = "https://example.com/example/genkit"
"""The generated history has no pull-request URLs: tasks record `<source>/pull/<n>`."""


def _timed(argv: list[str], *, ok: tuple[int, ...] = (0,)) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in ok:
        sys.exit(f"{' '.join(argv[2:])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds


def floor(repo: Path, work: Path, candidates: int, skip: list[str]) -> dict[str, float]:
    """The stages one by one with the existing commands; each command's summed wall time."""
    work.mkdir(parents=True)
    pool = work / "candidates.jsonl"
    spent: dict[str, float] = {}

    def add(command: str, seconds: float) -> None:
        spent[command] = spent.get(command, 0.0) + seconds

    add(
        "mine",
        _timed(
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
        ),
    )
    ids = [json.loads(line)["id"] for line in pool.read_text().splitlines() if line]
    drafts, homes = work / "drafts", []
    for cid in ids:
        out = drafts / cid
        add(
            "draft",
            _timed(
                [
                    *_SELFBENCH,
                    "draft",
                    cid,
                    "--repo",
                    str(repo),
                    "--candidates",
                    str(pool),
                    "--source-url",
                    _SOURCE,
                    "--out",
                    str(out),
                    *skip,
                ]
            ),
        )
        [task] = [path for path in out.iterdir() if (path / "definition.json").is_file()]
        add("audit", _timed([*_SELFBENCH, "audit", str(task)]))
        add("compile", _timed([*_SELFBENCH, "compile", str(task), "--repo", str(repo)]))
        logs = str(work / "logs" / cid)
        add(
            "validate", _timed([*_SELFBENCH, "validate", str(task / "harbor-task"), "--logs", logs])
        )
        homes.append(task)
    add(
        "export",
        _timed(
            [
                *_SELFBENCH,
                "export",
                *map(str, homes),
                "--run-id",
                "bench",
                "--repository-url",
                _SOURCE,
                "--repository-commit",
                git(repo, "rev-parse", "HEAD").decode().strip(),
                "--out",
                str(work / "floor.tar.gz"),
            ]
        ),
    )
    if len(homes) != candidates:
        sys.exit(f"the floor drafted {len(homes)} of {candidates} candidates")
    return spent


def run(
    repo: Path, work: Path, candidates: int, jobs: int, skip: list[str]
) -> tuple[float, dict[str, float]]:
    """The whole `selfbench run`, in a new run directory: its wall time, and the seconds each
    stage took summed over the candidates (from the state files)."""
    out = work / f"run-j{jobs}.tar.gz"
    seconds = _timed(
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
            "--source-url",
            _SOURCE,
            "--out",
            str(out),
            *skip,
        ]
    )
    stages: dict[str, float] = {}
    states = [
        json.loads(path.read_text())
        for path in (work / f"run-j{jobs}.run").glob("candidates/*.json")
    ]
    accepted = sum(state["status"] == "accepted" for state in states)
    if accepted != candidates:
        sys.exit(f"run -j {jobs} accepted {accepted} of {candidates} candidates")
    for state in states:
        for stage, spent in state["seconds"].items():
            stages[stage] = stages.get(stage, 0.0) + spent
    return seconds, stages


def _breakdown(spent: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.1f}s" for name, seconds in spent.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=20)
    parser.add_argument("--no-j2", action="store_true", help="skip the -j 2 run")
    parser.add_argument(
        "--no-quality", action="store_true", help="draft and run without the quality check"
    )
    args = parse_args(parser, candidates=1, no_j2=True, no_quality=True)
    skip = ["--no-quality"] if args.no_quality else []
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-run-") as scratch:
        root = Path(scratch)
        repo = generate(root, args.candidates)
        print(f"{args.candidates} candidates; load average {os.getloadavg()[0]:.1f}")
        spent = floor(repo, root / "floor", args.candidates, skip)
        floor_s = sum(spent.values())
        print(f"floor (commands one by one): {floor_s:8.1f}s   {_breakdown(spent)}")
        one, stages = run(repo, root / "j1", args.candidates, 1, skip)
        print(
            f"selfbench run -j 1:          {one:8.1f}s   {one / floor_s:.2f}x the floor (<= 1.1x);"
            f" stages {_breakdown(stages)}"
        )
        if args.no_j2:
            return
        two, _ = run(repo, root / "j2", args.candidates, 2, skip)
        print(
            f"selfbench run -j 2:          {two:8.1f}s   {one / two:.2f}x faster than -j 1"
            " (>= 1.6x)"
        )
        print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
