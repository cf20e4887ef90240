"""What the benchmarks share: a git with a fixed identity, a small authored task, and `--small`."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

__all__ = ["TEST_PATCH", "git", "parse_args", "write_task"]

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
