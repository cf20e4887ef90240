"""Benchmark: `selfbench run --author draft` against the same stages run one by one.

Generates a Python repository (pytest, `src/` layout) with --candidates squash-merged pull
requests, each adding one module of about 30 lines and its test file (which fails before the
change and passes after it): every one an easy candidate that drafts, audits and validates.

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

sys.path.insert(0, str(Path(__file__).parent))
from _bench import git

_SELFBENCH = [sys.executable, "-m", "selfbench"]
_PYPROJECT = """\
[project]
name = "genkit"
version = "0.1.0"
requires-python = ">=3.10"

[project.optional-dependencies]
test = ["pytest"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""


def _module(index: int) -> str:
    lines = [f'"""Step function number {index}."""', "", ""]
    lines.append(f"def step_{index}(values: list[int]) -> list[int]:")
    lines.append(f'    """Scale each value by {index + 2}, then keep those not divisible by 3."""')
    lines.append("    result = []")
    lines.append("    for value in values:")
    lines.append(f"        scaled = value * {index + 2}")
    lines.append("        if scaled % 3 == 0:")
    lines.append("            continue")
    lines.append("        result.append(scaled)")
    lines.append("    return result")
    lines += ["", ""]
    lines.append(f"def total_{index}(values: list[int]) -> int:")
    lines.append(f'    """The sum of step_{index} over the values, zero when empty."""')
    lines.append("    if not values:")
    lines.append("        return 0")
    lines.append(f"    return sum(step_{index}(values))")
    lines += ["", ""]
    lines.append(f"def describe_{index}(values: list[int]) -> str:")
    lines.append('    """A one-line summary."""')
    lines.append(f"    kept = step_{index}(values)")
    lines.append('    return f"{len(kept)} of {len(values)} kept"')
    return "\n".join(lines) + "\n"


def _test(index: int) -> str:
    factor = index + 2
    kept = [v * factor for v in (1, 2, 3, 4) if (v * factor) % 3]
    return (
        f"from genkit.step_{index} import describe_{index}, step_{index}, total_{index}\n\n\n"
        f"def test_step_{index}():\n    assert step_{index}([1, 2, 3, 4]) == {kept}\n\n\n"
        f"def test_total_{index}():\n    assert total_{index}([]) == 0\n"
        f"    assert total_{index}([1, 2, 3, 4]) == {sum(kept)}\n\n\n"
        f"def test_describe_{index}():\n"
        f'    assert describe_{index}([1, 2, 3, 4]) == "{len(kept)} of 4 kept"\n'
    )


def generate(parent: Path, candidates: int) -> Path:
    """The repository: a base commit, then one squash-merged pull request per candidate."""
    repo = parent / "genkit"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "pyproject.toml").write_text(_PYPROJECT)
    (repo / "src/genkit").mkdir(parents=True)
    (repo / "src/genkit/__init__.py").write_text('"""Generated steps."""\n')
    (repo / "tests").mkdir()
    (repo / "tests/test_base.py").write_text(
        "import genkit\n\n\ndef test_imports():\n    assert genkit\n"
    )
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "Initial genkit")
    for index in range(1, candidates + 1):
        (repo / f"src/genkit/step_{index}.py").write_text(_module(index))
        (repo / f"tests/test_step_{index}.py").write_text(_test(index))
        git(repo, "add", "--all")
        body = f"Add step function {index}: scale values, drop multiples of three, sum, describe."
        git(repo, "commit", "--quiet", "-m", f"Add step {index} (#{index})\n\n{body}")
    return repo


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
