"""Benchmark: `selfbench run --author draft` against the work its verdicts need.

Generates a Python repository (pytest, `src/` layout, `tests/run_history.py`) with --candidates
squash-merged pull requests, each adding one module of about 25 lines and its test file (which
fails before the change and passes after it): every one an easy candidate that drafts, audits,
validates and passes the coupling check. Every run below must accept all of them, or the
benchmark stops: a figure over fewer tasks would compare different work.

The floor is the work itself: for each task `run -j 1` accepted, in the same sandbox, one setup,
then one run of each test selection the verdict needs, made by hand: the changed test files at
the base once and with the gold patch `--reruns` times (the bundle's own verifier with only
those files as fail-to-pass, run once: `render_test_sh(repeat=False)`), then the bundle's
`tests/test.sh` end to end at the base and with the gold. Their wall times are summed. Then the
whole `selfbench run --easy N` is timed with -j 1 and with -j 2, each in a new run directory.

Prints the floor and the run's time per stage (from its state files), then run(-j 1) / floor
(target <= 1.3x) and run(-j 1) / run(-j 2) (target >= 1.6x, which needs two idle cores).
Quality's mutant runs are not part of a verdict: the runs are made with `--no-quality` unless
`--quality` is given.

    .venv/bin/python benchmarks/run.py                   # 20 candidates
    .venv/bin/python benchmarks/run.py --candidates 4    # a quick run
    .venv/bin/python benchmarks/run.py --small           # for CI: 1 candidate, -j 1
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
from run_history import generate
from selfbench.artifacts.compiled import locate_task
from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.render_scripts import render_test_sh
from selfbench.environments.local.host_network import HostNetwork
from selfbench.environments.local.scoring import score_patches
from selfbench.patches import parse_patch
from selfbench.validate.local import LocalOptions, VerifierVariant

_SELFBENCH = [sys.executable, "-m", "selfbench"]
_SOURCE = "https://example.com/example/genkit"
_RERUNS = 3
"""`run`'s default `--reruns`: the gold runs the floor makes per task."""
"""The generated history has no pull-request URLs: tasks record `<source>/pull/<n>`."""


def _timed(argv: list[str], *, ok: tuple[int, ...] = (0,)) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode not in ok:
        sys.exit(f"{' '.join(argv[2:])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds


def floor(run_dir: Path, reruns: int) -> float:
    """The work the accepted tasks' verdicts need, made by hand in the sandbox: summed seconds."""
    total = 0.0
    network = HostNetwork.detect()
    states = sorted(run_dir.glob("candidates/*.json"))
    for state in (json.loads(path.read_text()) for path in states):
        located = locate_task(run_dir / state["bundleHome"])
        definition = located.definition
        test_patch = (located.bundle / layout.TEST_PATCH).read_bytes()
        gold = (located.bundle / layout.GOLD_PATCH).read_bytes()
        selection = definition.model_copy(
            update={"failToPass": list(definition.testPaths), "passToPass": []}
        )
        protected = held_out_paths(definition, parse_patch(test_patch, lenient=True))
        once = VerifierVariant(test_sh=render_test_sh(selection, protected, gold, repeat=False))
        patches: list[bytes | None] = [b"", *[gold] * reruns, b"", gold]
        variants = dict.fromkeys(range(1 + reruns), once)
        with tempfile.TemporaryDirectory(prefix="selfbench-floor-logs-") as logs:
            # setup as `run` makes it: with the host's CA bundle and proxies
            options = LocalOptions(logs=Path(logs), reruns=reruns, host_network=network)
            started = time.monotonic()
            reports = score_patches(located, patches, options=options, variants=variants)
            total += time.monotonic() - started
        if reports[-1].reward is None or reports[-1].reward.reward != 1:
            sys.exit(f"{definition.taskId}: the bundle's test.sh with the gold did not score 1")
    return total


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
    parser.add_argument("--quality", action="store_true", help="run with the quality check")
    args = parse_args(parser, candidates=1, no_j2=True)
    skip = [] if args.quality else ["--no-quality"]
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-run-") as scratch:
        root = Path(scratch)
        repo = generate(root, args.candidates)
        print(f"{args.candidates} candidates; load average {os.getloadavg()[0]:.1f}")
        one, stages = run(repo, root / "j1", args.candidates, 1, skip)
        floor_s = floor(root / "j1" / "run-j1.run", _RERUNS)
        print(f"floor (the verdicts' work by hand): {floor_s:8.1f}s")
        print(
            f"selfbench run -j 1:                 {one:8.1f}s   {one / floor_s:.2f}x the floor"
            f" (<= 1.3x); stages {_breakdown(stages)}"
        )
        if args.no_j2:
            return
        two, _ = run(repo, root / "j2", args.candidates, 2, skip)
        print(
            f"selfbench run -j 2:                 {two:8.1f}s   {one / two:.2f}x faster than -j 1"
            " (>= 1.6x)"
        )
        print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
