"""The demo's samples: the history `selfbench demo` runs `selfbench run --author draft` on (the
command itself is `cli.demo.run_demo`), and its budgets and names.

The one-task sample repository (`build_sample_repository`, `sample_arguments`) stays for the
tests and examples that need a single hand-authored task.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from selfbench import _sample
from selfbench._git import git
from selfbench._json import JsonObject
from selfbench._sample_history import build_sample_history
from selfbench.artifacts.task_dir import read_authored_task
from selfbench.audit import AuditReport
from selfbench.contract import AUTHORING_DEFAULTS
from selfbench.task import judge_task

__all__ = [
    "DEMO_BUDGETS",
    "DEMO_EXPORT",
    "DEMO_SOURCE_URL",
    "SampleRepository",
    "SubmitArguments",
    "audit_task_dir",
    "build_sample_history",
    "build_sample_repository",
    "bundle_tree",
    "sample_arguments",
]

_TESTS_PATHSPEC = "tests"
_PROMPT = """\
Our slugs mangle non-English titles: "Grüße aus Köln" currently becomes "gr-e-aus-k-ln".
Please make `slugify` spell accented Latin text in plain ASCII first, the way a German or
Scandinavian reader would expect (ä becomes ae, ß becomes ss, other accents are dropped), and
expose that conversion on its own as `slugkit.transliterate`.

While you are in there, add two keyword-only options to `slugify`: `separator` (default "-";
it must be one or more non-alphanumeric characters, otherwise raise ValueError) and
`max_length` (default None; when set, cut the slug at a word boundary so it fits, cutting the
first word itself only if it alone is too long; values below 1 raise ValueError).
"""


@dataclass(frozen=True, slots=True)
class SampleRepository:
    """The sample repository on disk and the two commits of its pull request."""

    path: Path
    base: str
    head: str


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def build_sample_repository(parent: Path) -> SampleRepository:
    """Create the sample repository with its base commit and its merged change."""
    path = parent / "slugkit"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    _write_tree(path, _sample.BASE)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--message", "Initial slugkit")
    base = git(path, "rev-parse", "HEAD").decode().strip()
    _write_tree(path, _sample.CHANGE)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--message", f"{_sample.PR_TITLE} (#{_sample.PR_NUMBER})")
    head = git(path, "rev-parse", "HEAD").decode().strip()
    return SampleRepository(path, base, head)


class SubmitArguments(TypedDict):
    """The `submit_task` tool's argument object."""

    definition: JsonObject
    testPatch: str
    goldPatch: str


def sample_arguments(repo: SampleRepository) -> SubmitArguments:
    """The `submit_task` arguments an author would send for the sample's pull request."""
    diff = ("diff", "--binary", "--no-color", "--no-ext-diff", repo.base, repo.head, "--")
    gold = git(repo.path, *diff, ".", f":(exclude){_TESTS_PATHSPEC}")
    tests = git(repo.path, *diff, _TESTS_PATHSPEC)
    definition: JsonObject = {
        "schemaVersion": 1,
        "difficulty": "medium",
        "taskId": f"slugkit-pr-{_sample.PR_NUMBER}",
        "repo": "example/slugkit",
        "baseCommit": repo.base,
        "workdir": ".",
        "setupCommand": (
            "python3 -m venv --system-site-packages .venv"
            " && .venv/bin/python -m pip install --quiet pytest"
        ),
        "testCommand": ".venv/bin/python -m pytest -q {tests}",
        "failToPass": ["tests/test_translit.py", "tests/test_options.py"],
        "passToPass": ["tests/test_core.py"],
        "testPaths": ["tests/test_translit.py", "tests/test_options.py"],
        "toolchains": ["python"],
        "sourcePr": _sample.PR_NUMBER,
        "sourceUrl": f"https://example.com/example/slugkit/pull/{_sample.PR_NUMBER}",
        "prompt": _PROMPT,
        **AUTHORING_DEFAULTS,
    }
    return {
        "definition": definition,
        "testPatch": tests.decode("utf-8"),
        "goldPatch": gold.decode("utf-8"),
    }


def audit_task_dir(task_dir: Path) -> AuditReport:
    """Audit an authored task directory as `selfbench audit` does."""
    task = read_authored_task(task_dir)
    return judge_task(task.loaded, task.test_patch, task.gold_patch).audit


def bundle_tree(bundle: Path) -> list[str]:
    """The bundle's files, one line each: path, mode, size; a hard-linked copy says so."""
    lines = []
    seen: dict[int, str] = {}
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        relative = path.relative_to(bundle).as_posix()
        status = path.stat()
        size = f"{status.st_size:>9,} bytes"
        twin = seen.setdefault(status.st_ino, relative)
        note = f"  (hard link of {twin})" if twin != relative else ""
        lines.append(f"{relative:<34} {status.st_mode & 0o777:o}  {size}{note}")
    return lines


DEMO_BUDGETS = {"easy": 1, "medium": 1, "hard": 1}
"""What the demo asks of the sample history: a task of each tier. The best easy candidate (#5,
whose new tests already pass at the base) is rejected on the way and the next one (#1) is taken;
the medium (#3) and hard (#4) pull requests name what their tests call, so their drafts pass the
coupling check as they are, with `--author draft`."""
DEMO_EXPORT = "unitkit-demo.tar.gz"
DEMO_SOURCE_URL = "https://example.com/example/unitkit"
"""The sample history has no remote: its tasks record pull requests under this base."""
