"""Real projects for the validation tests: a git repository with a merged change, compiled.

A `Project` is written as three file maps: the base tree, the implementation change (the gold
patch) and the held-out tests (the test patch). `build` commits the base and the merged tree in a
real repository, takes both patches from `git diff`, writes the definition, and compiles the
task into the collect layout (`DIR/harbor-task/` beside `DIR/definition.json`) that
`selfbench validate` reads.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfbench.compiler import compile_task

__all__ = ["Project", "build", "git"]

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout."""
    return subprocess.run(
        ["git", *args], cwd=repo, env=_ENV, check=True, capture_output=True, text=True
    ).stdout


@dataclass
class Project:
    """A repository before and after a merged change, and how to test it."""

    base: dict[str, str]
    gold: dict[str, str | Path | None]
    """Implementation files the change writes (a Path: a symlink to it; None deletes)."""
    tests: dict[str, str]
    """Held-out test files the change writes."""
    definition: dict[str, Any]
    """Definition fields (taskId, commands, selectors, toolchains…); the rest is filled in."""
    extra: dict[str, Any] = field(default_factory=dict)


_DEFAULTS: dict[str, Any] = {
    "schemaVersion": 1,
    "difficulty": "easy",
    "repo": "example/project",
    "workdir": ".",
    "passToPass": [],
    "sourcePr": 7,
    "sourceUrl": "https://example.com/example/project/pull/7",
    "prompt": "Make the change the maintainers asked for in the linked request.",
    "timeouts": {"setupSeconds": 300, "agentSeconds": 600, "testsSeconds": 120},
    "resources": {"cpus": 2, "memoryMb": 4096, "storageMb": 10240},
}


def _write(root: Path, files: dict[str, str | Path | None]) -> None:
    for name, text in files.items():
        path = root / name
        if text is None:
            path.unlink()
            continue
        if isinstance(text, Path):
            path.symlink_to(text)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if text.startswith("#!"):
            path.chmod(0o755)


def build(project: Project, root: Path) -> Path:
    """Build, author and compile `project` under `root`; the collect directory."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--initial-branch=main")
    _write(repo, dict(project.base))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    _write(repo, project.gold)
    _write(repo, dict(project.tests))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "merged")
    tests = sorted(project.tests)
    test_patch = git(repo, "diff", "--binary", base, "HEAD", "--", *tests)
    gold_patch = git(repo, "diff", "--binary", base, "HEAD", "--", ".", *(f":!{t}" for t in tests))
    git(repo, "checkout", "-q", base)
    definition = {
        **_DEFAULTS,
        "baseCommit": base,
        "testPaths": tests,
        **project.definition,
    }
    task_id = str(definition["taskId"])
    task = root / "authored" / task_id
    task.mkdir(parents=True)
    (task / "definition.json").write_text(json.dumps(definition, indent=2), encoding="utf-8")
    (task / "test.patch").write_text(test_patch, encoding="utf-8")
    (task / "gold.patch").write_text(gold_patch, encoding="utf-8")
    out = root / "collected" / task_id
    compile_task(task, repo=repo, out=out / "harbor-task")
    (out / "definition.json").write_bytes((task / "definition.json").read_bytes())
    return out
