"""What the benchmarks share: a git with a fixed identity, a small authored task, and `--small`."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "ORIGINAL_SMALL_SECONDS",
    "TEST_PATCH",
    "git",
    "parse_args",
    "time_interleaved",
    "write_sample_task",
    "write_task",
]

ORIGINAL_SMALL_SECONDS = 0.071
"""The original tool's whole-process time for `audit` of a real task with a small (6 KB) gold
patch, measured interleaved with ours on this machine kind: the start-up every `check`, `audit`
and `submit` of a small task is compared with."""

_GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}

TEST_PATCH = (
    b"diff --git a/tests/test_new.py b/tests/test_new.py\nnew file mode 100644\n"
    b"--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1 @@\n+def test_x(): pass\n"
)
"""A held-out test patch adding one test file."""


def git(repo: Path, *args: str) -> bytes:
    """Run git in `repo` with a fixed identity and no user or system config; its stdout."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=_GIT_ENV, check=True, capture_output=True
    ).stdout


def write_task(task: Path, sha: str, index: int) -> Path:
    """An easy authored task `bench-<index>` at `task`: one new test file, one new source file."""
    task.mkdir(parents=True)
    definition = {
        "schemaVersion": 1, "difficulty": "easy", "taskId": f"bench-{index:02d}",
        "repo": "bench/repo", "baseCommit": sha, "workdir": ".", "setupCommand": "true",
        "testCommand": "pytest {tests}", "failToPass": ["tests/test_new.py"], "passToPass": [],
        "testPaths": ["tests/test_new.py"], "toolchains": ["python"], "sourcePr": index + 1,
        "sourceUrl": f"https://example.com/pull/{index + 1}", "prompt": f"Task {index}.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }  # fmt: skip
    (task / "definition.json").write_text(json.dumps(definition))
    (task / "test.patch").write_bytes(TEST_PATCH)
    (task / "gold.patch").write_bytes(TEST_PATCH.replace(b"tests/test_new.py", b"src/new.py"))
    return task


def parse_args(parser: argparse.ArgumentParser, **small: bool | float | str) -> argparse.Namespace:
    """The parsed command line, with `--small` added: a quick run that gives the options named in
    `small` those values, so the suite can run every benchmark (tests/test_benchmarks.py)."""
    quick = ", ".join(
        f"--{name.replace('_', '-')}" + ("" if value is True else f" {value!r}")
        for name, value in small.items()
    )
    parser.add_argument("--small", action="store_true", help=f"a quick run for CI: {quick}")
    args = parser.parse_args()
    if args.small:
        for name, value in small.items():
            setattr(args, name, value)
    return args


def write_sample_task(root: Path) -> tuple[Path, Path]:
    """The demo's sample task, a real one (a 3 KB gold patch), submitted under `root`: its task
    directory and a file holding its `submit_task` arguments."""
    from selfbench.demo import build_sample_repository, sample_arguments  # noqa: PLC0415
    from selfbench.submit import submit_task  # noqa: PLC0415

    (root / "tasks").mkdir(parents=True)
    arguments = sample_arguments(build_sample_repository(root))
    submit_task(arguments, output_root=root / "tasks", preflight=False)
    arguments_file = root / "arguments.json"
    arguments_file.write_text(json.dumps(arguments))
    return next((root / "tasks").iterdir()), arguments_file


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_interleaved(
    commands: Mapping[str, Sequence[str]],
    runs: int,
    env: Mapping[str, str],
    *,
    before: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command as a fresh process, over `runs` rounds that
    each run every command once in turn, after one warm-up round (it writes the bytecode).
    `before` names a command to run, untimed, before each run of a command of the same name.
    Exits when a command fails (exit code beyond 1, a checker's "rejected")."""
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(runs + 1):
        for name, command in commands.items():
            if before and name in before:
                subprocess.run(before[name], check=True, env=env)
            started, cpu_started = time.perf_counter(), _cpu_seconds()
            result = subprocess.run(command, capture_output=True, check=False, env=env)
            if result.returncode not in {0, 1}:
                sys.exit(f"{name} failed ({result.returncode}): {result.stderr.decode()}")
            if round_:
                wall[name].append(time.perf_counter() - started)
                cpu[name].append(_cpu_seconds() - cpu_started)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in wall}
