"""Benchmark: `selfbench eval` in the local sandbox against one bare run of the verifier.

Uses the project of `benchmarks/validate.py` (a regression suite of about `--suite-seconds` of
real CPU work and a fast new feature). Measures:

* one bare verifier run on the host: what `tests/test.sh` runs (fail-to-pass twice and
  pass-to-pass), in a set-up copy with the gold patch;
* the cost of one more trial: `eval` with `1 + N` trials of the `oracle` agent minus `eval` with
  one (so the task's one-time setup cancels out), per trial. Beyond the agent's own time and the
  verifier's run (its sandboxed phase, as each trial records it), what is left is the harness's
  overhead (workspace copies, the sandbox, the collect step, recording): its ratio to the bare
  verifier run is the figure (target <= 1.2). The whole trial beyond the agent's time, sandboxed
  verifier included, is printed beside it as a ratio too;
* `--tasks` tasks (four), two trials each, with `-j 1` and with `-j 2`, and the speed-up
  (target >= 1.6 on 2 cores).

The figures use the host's system Python (`SELFBENCH_TOOLCHAINS=host`), as the bare verifier
run does, so both run the same interpreter (and the project's tests find the host's pytest).

Needs root and bubblewrap, like the local environment itself.

    .venv/bin/python benchmarks/eval.py            # the 5 s suite
    .venv/bin/python benchmarks/eval.py --small    # a quick run for CI: 0.2 s, 2 tasks, once
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import parse_args
from projects import build, git
from selfbench.bundle import layout
from selfbench.evaluate import EvalOptions, open_benchmark, parse_agent_specs, run_eval
from validate import _SETUP, _SLOW_FILES, _TEST, _calibrate, project


def bare_verifier(repo: Path, scratch: Path) -> float:
    """One bare run of what the verifier runs: fail-to-pass twice, then pass-to-pass."""
    tree = scratch / "bare"
    shutil.rmtree(tree, ignore_errors=True)
    git(repo, "worktree", "add", "-q", "--detach", str(tree), "HEAD")
    git(tree, "checkout", "-q", "main")
    env = {**os.environ, "PATH": layout.CONTAINER_PATH}
    subprocess.run(["bash", "-c", _SETUP], cwd=tree, check=True, env=env)
    slow = " ".join(f"tests/test_slow_{i}.py" for i in range(_SLOW_FILES))
    commands = [_TEST.replace("{tests}", "tests/test_mul.py")] * 2
    commands.append(_TEST.replace("{tests}", slow))
    start = time.perf_counter()
    for command in commands:
        subprocess.run(["bash", "-c", command], cwd=tree, check=True, capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    git(repo, "worktree", "remove", "--force", str(tree))
    return elapsed


def timed_eval(tasks: Path, results: Path, *, trials: int, jobs: int) -> tuple[float, float, float]:
    """Wall time of one evaluation of `oracle`; the agent's and the verifier's mean per trial."""
    agents = parse_agent_specs(["oracle"])
    start = time.perf_counter()
    with open_benchmark(tasks) as bench:
        log = run_eval(bench, agents, options=EvalOptions(results, trials=trials, jobs=jobs))
    elapsed = time.perf_counter() - start
    failed = [f"{r.task}: {r.reason}" for r in log.trials.values() if not r.passed]
    if failed:
        raise SystemExit("benchmark trial failed: " + "; ".join(failed))
    agent = statistics.fmean(r.agent_seconds or 0.0 for r in log.trials.values())
    verifier = statistics.fmean(r.verifier_seconds or 0.0 for r in log.trials.values())
    return elapsed, agent, verifier


def _spread(values: list[float]) -> str:
    return f"median {statistics.median(values):6.2f} s  ({min(values):.2f}-{max(values):.2f} s)"


def _tasks_dir(scratch: Path, name: str, rounds: int, count: int) -> Path:
    tasks = scratch / name
    tasks.mkdir()
    for index in range(count):
        out = build(project(f"{name}-{index}", rounds), scratch / f"{name}-build-{index}")
        shutil.move(out, tasks / out.name)
    return tasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite-seconds", type=float, default=5.0)
    parser.add_argument("--extra-trials", type=int, default=4, help="N: trials beyond the first")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per figure")
    parser.add_argument("--tasks", type=int, default=4, help="tasks of the -j 1 / -j 2 figure")
    args = parse_args(parser, suite_seconds=0.2, extra_trials=1, repeats=1, tasks=2)
    os.environ["SELFBENCH_TOOLCHAINS"] = "host"  # the bare verifier's Python, in the sandbox too
    rounds = _calibrate(args.suite_seconds)
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-eval-") as name:
        scratch = Path(name)
        one = _tasks_dir(scratch, "one", rounds, 1)
        bare: list[float] = []
        overhead: list[float] = []
        beyond_agent: list[float] = []
        for index in range(args.repeats):  # interleaved, so drift in the machine hits both
            bare.append(bare_verifier(scratch / "one-build-0" / "repo", scratch))
            first, _, _ = timed_eval(one, scratch / f"r1-{index}", trials=1, jobs=1)
            more, agent, verifier = timed_eval(
                one, scratch / f"rn-{index}", trials=1 + args.extra_trials, jobs=1
            )
            trial = (more - first) / args.extra_trials
            overhead.append(trial - agent - verifier)
            beyond_agent.append(trial - agent)
        ratio = statistics.median(overhead) / statistics.median(bare)
        print(f"suite            ~{args.suite_seconds:g} s of CPU, {args.repeats} run(s) each")
        print(f"bare verifier    {_spread(bare)}  (fail-to-pass twice + pass-to-pass on the host)")
        print(f"trial overhead   {_spread(overhead)}  = {ratio:.2f}x the bare verifier"
              " (target <= 1.2)")  # fmt: skip
        whole = statistics.median(beyond_agent) / statistics.median(bare)
        print(f"trial - agent    {_spread(beyond_agent)}  = {whole:.2f}x the bare verifier"
              " (sandboxed verifier included)")  # fmt: skip
        four = _tasks_dir(scratch, "four", rounds, args.tasks)
        serial: list[float] = []
        parallel: list[float] = []
        for index in range(max(1, args.repeats - 1)):
            serial.append(timed_eval(four, scratch / f"j1-{index}", trials=2, jobs=1)[0])
            parallel.append(timed_eval(four, scratch / f"j2-{index}", trials=2, jobs=2)[0])
        speedup = statistics.median(serial) / statistics.median(parallel)
        print(f"{args.tasks} tasks x 2, -j 1 {_spread(serial)}")
        faster = f"{speedup:.2f}x faster (target >= 1.6)"
        print(f"{args.tasks} tasks x 2, -j 2 {_spread(parallel)}  = {faster}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
