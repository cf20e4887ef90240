"""Benchmark: `selfbench mine` of a generated history against one `git log` of the same range.

Generates, with `git fast-import`, a repository of --commits commits (default 20,000): a main
line of merged pull requests (a branch commit plus a `Merge pull request #N` merge), squash
merges (`Subject (#N)`), plain commits, reverts and docs-only changes, each editing a few of
2,000 files. Then times, interleaved and repeated, the whole `selfbench mine --out` process and
the floor, one `git log --first-parent --numstat` of the same range to /dev/null. Prints the
medians, their ratio (target <= 1.5x) and mine's peak RSS (target < 300 MB). With `--repo`,
a real history instead: a clone's checked-out branch, as a user mines it (pallets/click's ~1,400
first-parent commits is the issue's measure).

    .venv/bin/python benchmarks/mine.py                  # 20,000 commits
    .venv/bin/python benchmarks/mine.py --commits 2000   # a quick run
    .venv/bin/python benchmarks/mine.py --repo CLONE     # a real history (a clone, not changed)
    .venv/bin/python benchmarks/mine.py --small          # for CI: 300 commits, one run
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

from _bench import parse_args

_PATHS = 2000
_MAX_LINES = 120
_POOL = 8192
# Runs the CLI as the program (as `selfbench` runs it, on sys.argv), then records this process's
# own peak RSS (bytes): wait4 reports the largest of a process and its children, which is git's,
# so the two are measured apart.
_OWN_RSS = (
    "import resource, sys; from pathlib import Path; from selfbench.cli import main; "
    "own = Path(sys.argv[1]); sys.argv = ['selfbench', *sys.argv[2:]]; code = main(); "
    "own.write_text(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)); "
    "sys.exit(code)"
)
_START = 1_700_000_000
_WORDS = ("value", "count", "index", "parser", "state", "token", "node", "limit", "offset", "key")


class _Stream:
    """A fast-import stream written as it is made: files mutate line by line, commits mark them.

    Written straight to fast-import's stdin, so this process stays small: a child's peak RSS on
    Linux starts from its parent's, and the benchmark measures its children's.
    """

    def __init__(self, seed: int, sink: IO[bytes]) -> None:
        self.rng = random.Random(seed)
        self.sink = sink
        self.mark = 0
        self.clock = _START
        self.files: dict[str, list[str]] = {}
        self.paths = [self._path(index) for index in range(_PATHS)]
        self.pool = [self._new_line() for _ in range(_POOL)]

    def _new_line(self) -> str:
        words = self.rng.choices(_WORDS, k=3)
        number, argument = self.rng.randrange(1000), self.rng.randrange(99)
        return f"{words[0]}_{number} = {words[1]}({words[2]}, {argument})\n"

    def _path(self, index: int) -> str:
        kind = index % 10
        if kind < 6:
            return f"src/pkg{index % 40}/module_{index}.py"
        if kind < 9:
            return f"tests/pkg{index % 40}/test_module_{index}.py"
        return f"docs/page_{index}.md"

    def _line(self) -> str:
        return self.pool[self.rng.randrange(len(self.pool))]

    def edit(self, path: str) -> bytes:
        lines = self.files.setdefault(path, [])
        for _ in range(self.rng.randrange(1, 8)):
            if lines and self.rng.random() < 0.5:
                lines[self.rng.randrange(len(lines))] = self._line()
        lines.extend(self._line() for _ in range(self.rng.randrange(2, 40)))
        del lines[: max(0, len(lines) - _MAX_LINES)]  # files stay small: the stream stays small
        data = "".join(lines).encode()
        return f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"

    def commit(
        self, ref: str, message: str, edits: list[bytes], *, parents: tuple[int, ...] = ()
    ) -> int:
        self.mark += 1
        self.clock += 600
        text = message.encode()
        head = (
            f"commit {ref}\nmark :{self.mark}\ncommitter Dev <dev@example.com> {self.clock} +0000\n"
        )
        parts = [head.encode(), f"data {len(text)}\n".encode(), text, b"\n"]
        if parents:
            parts.append(f"from :{parents[0]}\n".encode())
            parts.extend(f"merge :{parent}\n".encode() for parent in parents[1:])
        self.sink.write(b"".join([*parts, *edits, b"\n"]))
        return self.mark

    def change(self, docs: bool = False) -> list[str]:
        count = self.rng.randrange(1, 5)
        pool = [p for p in self.paths if p.endswith(".md")] if docs else self.paths
        return sorted(set(self.rng.sample(pool, count)))


def generate(repo: Path, commits: int, seed: int = 20260101) -> int:
    """Write the repository with fast-import; return the number of changes in it."""
    repo.mkdir(parents=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    command = ["git", "-C", str(repo), "fast-import", "--quiet"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, env=env) as importer:
        assert importer.stdin is not None  # noqa: S101 - guaranteed by stdin=PIPE
        number = _write_history(_Stream(seed, importer.stdin), commits)
        importer.stdin.close()
        if importer.wait() != 0:
            raise SystemExit("git fast-import failed")
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard", "main"], check=True, env=env)
    return number


def _write_history(stream: _Stream, commits: int) -> int:
    main = stream.commit(
        "refs/heads/main", "Initial commit", [stream.edit(p) for p in stream.paths[:50]]
    )
    number = 0
    while stream.mark < commits:
        number += 1
        roll = stream.rng.random()
        if roll < 0.2:
            paths = stream.change()
            branch = stream.commit(
                f"refs/heads/topic-{number}", f"Work on {number}", [stream.edit(p) for p in paths],
                parents=(main,),
            )  # fmt: skip
            # the merge's tree is main's plus the branch's files (fast-import starts from main)
            edits = [f"M 100644 inline {p}\n".encode() + _data(stream.files[p]) for p in paths]
            message = f"Merge pull request #{number} from octo/topic-{number}\n\nFeature {number}"
            main = stream.commit("refs/heads/main", message, edits, parents=(main, branch))
        elif roll < 0.55:
            message = f"Change {number} (#{number})\n\nWhat it does."
            main = stream.commit(
                "refs/heads/main", message, [stream.edit(p) for p in stream.change()]
            )
        elif roll < 0.6:
            message = f"Docs {number} (#{number})"
            main = stream.commit(
                "refs/heads/main", message, [stream.edit(p) for p in stream.change(docs=True)]
            )
        else:
            main = stream.commit(
                "refs/heads/main", f"tweak {number}", [stream.edit(p) for p in stream.change()]
            )
    return number


def _data(lines: list[str]) -> bytes:
    data = "".join(lines).encode()
    return f"data {len(data)}\n".encode() + data + b"\n"


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, int, float]:
    """Wall time, peak RSS (bytes) and CPU time (user + system, children included) of a child."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed with {process.returncode}")
    return elapsed, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def _generated(repo: Path, commits: int) -> Path:
    """A generated history of `commits` commits at `repo`, its figures printed."""
    started = time.perf_counter()
    numbers = generate(repo, commits)
    count = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--count", "--all"], capture_output=True, check=True
    )
    took = time.perf_counter() - started
    print(f"generated {count.stdout.decode().strip()} commits ({numbers} changes) in {took:.1f} s")
    return repo


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path, help="a clone to mine instead of a generated history")
    args = parse_args(parser, commits=300, runs=1)
    with tempfile.TemporaryDirectory(prefix="selfbench-bench-") as temp:
        root = Path(temp)
        repo = args.repo if args.repo is not None else _generated(root / "repo", args.commits)
        out = root / "candidates.jsonl"
        own = root / "own-rss"
        mine = [sys.executable, "-c", _OWN_RSS, str(own), "mine", str(repo), "--no-sessions"]
        mine += ["--out", str(out)]
        floor = ["git", "-C", str(repo), "log", "--first-parent", "--numstat", "HEAD"]
        commands = {"selfbench mine": mine, "git log (floor)": floor}
        # bytecode cached, as an installed tool's would be (the warm-up writes it)
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(root / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for command in commands.values():
            timed(command, env)  # warm-up: a cold page cache is not what we measure
        times: dict[str, list[float]] = {name: [] for name in commands}
        peaks: dict[str, list[int]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        own_peaks: list[int] = []
        for _ in range(args.runs):
            for name, command in commands.items():
                elapsed, peak, used = timed(command, env)
                times[name].append(elapsed)
                peaks[name].append(peak)
                cpu[name].append(used)
            own_peaks.append(int(own.read_text()))
        medians = {name: statistics.median(values) for name, values in times.items()}
        for name, value in medians.items():
            runs = " ".join(f"{run:.2f}" for run in times[name])
            print(f"{name:16} {value:7.2f} s   (runs: {runs})")
        ratio = medians["selfbench mine"] / medians["git log (floor)"]
        print(f"mine / git log = {ratio:.2f}x (target <= 1.5x)")
        # On a shared machine the wall ratio is noisy; CPU time (git's included) is not.
        spent = {name: statistics.median(values) for name, values in cpu.items()}
        mine_cpu, floor_cpu = spent["selfbench mine"], spent["git log (floor)"]
        print(f"CPU: mine {mine_cpu:.2f} s, git log {floor_cpu:.2f} s, {mine_cpu / floor_cpu:.2f}x")
        lines = out.read_text().count("\n")
        excluded = out.with_name("candidates.excluded.jsonl").read_text().count("\n")
        print(f"{lines} candidates, {excluded} excluded")
        tree, floor_peak = max(peaks["selfbench mine"]), max(peaks["git log (floor)"])
        print(f"mine peak RSS {max(own_peaks) / 2**20:.0f} MiB (target < 300 MB)")
        print(
            f"  its git log child {tree / 2**20:.0f} MiB (the floor's {floor_peak / 2**20:.0f} MiB)"
        )


if __name__ == "__main__":
    main()
