"""What the benchmarks share: a git with a fixed identity, and a one-file held-out test patch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["TEST_PATCH", "git"]

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
