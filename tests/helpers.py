"""Builders shared by the tests: a valid task definition and small, real Git patches.

The patches are written the way `git diff` writes them (`git apply --check` accepts them, see
`test_submit.py`), so the audit and submit tests judge real input, not fakes.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import selfbench
from selfbench.audit import AuditReport, audit
from selfbench.contract import Mode, TaskDefinition, parse_definition
from selfbench.errors import SubmitError
from selfbench.patches import parse_patch
from selfbench.submit import submit_files

__all__ = [
    "BASE_COMMIT",
    "GOLD",
    "SNAPSHOT_SHA256",
    "SOURCES",
    "SOURCE_URL",
    "TESTS",
    "added_file",
    "arguments",
    "definition",
    "implementation_patch",
    "modified_file",
    "patch",
    "run_audit",
    "selectors",
    "sources_path",
    "submit_after_barrier",
    "task",
    "variant",
    "write_task_files",
]

SOURCES = Path(selfbench.__file__).resolve().parents[1]
"""The directory this process imports `selfbench` from: the checkout under test."""


def sources_path(*first: Path) -> str:
    """A `PYTHONPATH` that makes a child Python import the `selfbench` under test (`SOURCES`),
    not whichever one is installed: `first` before it, this process's `PYTHONPATH` after."""
    paths = [*map(str, first), str(SOURCES), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(path for path in paths if path)


SNAPSHOT_SHA256 = "5a" * 32
"""The snapshot digest rendered bundles record where no snapshot is written (golden cases)."""

BASE_COMMIT = "0123456789abcdef0123456789abcdef01234567"
SOURCE_URL = "https://example.com/acme/widgets/pull/42"

_DEFINITION: dict[str, Any] = {
    "schemaVersion": 1,
    "difficulty": "easy",
    "taskId": "widgets-pr-42",
    "repo": "acme/widgets",
    "baseCommit": BASE_COMMIT,
    "workdir": ".",
    "setupCommand": "python -m pip install -e .",
    "testCommand": "python -m pytest -q {tests}",
    "failToPass": ["tests/test_new.py"],
    "passToPass": [],
    "testPaths": ["tests/test_new.py"],
    "toolchains": ["python"],
    "sourcePr": 42,
    "sourceUrl": SOURCE_URL,
    "prompt": "Let the widget parser accept a trailing comma after the last field.",
    "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
    "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
}


def definition(**changes: Any) -> dict[str, Any]:
    """A valid definition (easy, one held-out test file), with `changes` replacing its keys."""
    return {**copy.deepcopy(_DEFINITION), **changes}


def task(*, mode: Mode = "persisted", **changes: Any) -> TaskDefinition:
    """`definition(**changes)` validated into the model the audit takes."""
    return parse_definition(definition(**changes), mode=mode).definition


def selectors(prefix: str, count: int) -> list[str]:
    """`count` distinct test-file selectors."""
    return [f"tests/{prefix}_{index}.py" for index in range(count)]


def added_file(path: str, lines: int, *, tag: str = "line") -> str:
    """A `git diff` section that adds `path` with `lines` lines (`lines` changed lines)."""
    if lines == 0:
        return f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..e69de29\n"
    body = "".join(f"+{tag} {index}\n" for index in range(lines))
    return (
        f"diff --git a/{path} b/{path}\n"
        "new file mode 100644\n"
        f"--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{lines} @@\n{body}"
    )


def new_files_patch(files: dict[str, str]) -> bytes:
    """A patch that adds each file holding its text, as `git diff` writes one."""
    sections = []
    for path, text in files.items():
        lines = text.splitlines()
        body = "".join(f"+{line}\n" for line in lines)
        sections.append(
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}"
        )
    return patch(*sections)


def modified_file(path: str, removed: int, added: int) -> str:
    """A `git diff` section that replaces `removed` lines of `path` (`old N`) with `added`."""
    old = "".join(f"-old {index}\n" for index in range(removed))
    new = "".join(f"+new {index}\n" for index in range(added))
    return (
        f"diff --git a/{path} b/{path}\n"
        f"--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{removed} +1,{added} @@\n{old}{new}"
    )


def patch(*sections: str) -> bytes:
    """Sections joined into one patch, as bytes."""
    return "".join(sections).encode("utf-8")


def implementation_patch(files: int, lines: int) -> bytes:
    """A gold patch adding `files` source files with `lines` changed lines in total."""
    share, extra = divmod(lines, files) if files else (0, 0)
    return patch(
        *(
            added_file(f"src/widgets/module_{index}.py", share + (index < extra))
            for index in range(files)
        )
    )


GOLD = implementation_patch(1, 20)
TESTS = patch(added_file("tests/test_new.py", 5, tag="assert"))


def run_audit(
    definition_value: TaskDefinition, gold: bytes = GOLD, tests: bytes = TESTS
) -> AuditReport:
    """The audit of a definition and two patches given as bytes, read as `selfbench audit` does."""
    return audit(
        definition_value, parse_patch(gold, lenient=True), parse_patch(tests, lenient=True)
    )


def arguments(**changes: Any) -> dict[str, Any]:
    """`submit_task` arguments that pass validation and the preflight."""
    return {
        "definition": definition(**changes),
        "testPatch": TESTS.decode("utf-8"),
        "goldPatch": GOLD.decode("utf-8"),
    }


def write_task_files(
    directory: Path,
    definition_value: dict[str, Any] | None = None,
    *,
    gold: bytes = GOLD,
    tests: bytes = TESTS,
) -> None:
    """Write a task's `definition.json`, `gold.patch` and `test.patch` into `directory`."""
    value = definition() if definition_value is None else definition_value
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "definition.json").write_text(json.dumps(value), encoding="utf-8")
    (directory / "gold.patch").write_bytes(gold)
    (directory / "test.patch").write_bytes(tests)


def variant(index: int) -> tuple[dict[str, Any], bytes, bytes]:
    """A definition, test patch and gold patch for one taskId, distinguishable by `index`."""
    value = definition(prompt=f"Variant {index}: let the widget parser accept a trailing comma.")
    tests = patch(added_file("tests/test_new.py", 5, tag=f"assert variant {index}"))
    gold = patch(added_file("src/widgets/parse.py", 20 + index, tag=f"variant {index}"))
    return value, tests, gold


def submit_after_barrier(
    barrier: Barrier, root: str, index: int, results: Queue[tuple[int, str]]
) -> None:
    """One of many concurrent submits of the same taskId: wait for all, then race."""
    value, tests, gold = variant(index)
    barrier.wait()
    try:
        outcome = submit_files(value, tests, gold, output_root=root)
    except SubmitError as exc:
        outcome = f"error: {exc}"
    results.put((index, outcome))


@contextmanager
def serving(argv: list[str]) -> Iterator[int]:
    """Run a server process that prints its port on its first line (the model stand-in, the
    CONNECT proxy); its port, until the block ends."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
