"""The error tree, the one translation of foreign errors, and the atomic publish's leftovers."""

from __future__ import annotations

import copy
import os
import pickle
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfbench import _fs, errors
from selfbench.cli import main
from selfbench.collect import find_authored_task
from selfbench.demo import build_sample_repository, sample_arguments
from selfbench.errors import (
    EXIT_INPUT,
    EXIT_REJECTED,
    ArchiveError,
    BundleError,
    CompileError,
    DefinitionError,
    DraftError,
    EgressError,
    EvalError,
    ExportError,
    GitError,
    HarborError,
    InputError,
    Issue,
    JsonError,
    MineError,
    PackError,
    PatchError,
    PreflightError,
    QualityError,
    ReviewerError,
    RewardError,
    RunError,
    SandboxError,
    SelfbenchError,
    StoreError,
    SubmitError,
    SwebenchError,
    TaskFileError,
    ToolchainError,
    ValidateError,
    translating,
)
from selfbench.submit import submit_task

SRC = Path(__file__).resolve().parent.parent / "src" / "selfbench"

# --- the tree -----------------------------------------------------------------------------------

TREE = [
    (InputError, SelfbenchError, EXIT_INPUT),
    (JsonError, SelfbenchError, EXIT_INPUT),
    (GitError, SelfbenchError, EXIT_INPUT),
    (DefinitionError, SelfbenchError, EXIT_INPUT),
    (PatchError, SelfbenchError, EXIT_INPUT),
    (TaskFileError, SelfbenchError, EXIT_INPUT),
    (SubmitError, SelfbenchError, EXIT_INPUT),
    (PreflightError, SubmitError, EXIT_REJECTED),
    (BundleError, SelfbenchError, EXIT_INPUT),
    (CompileError, BundleError, EXIT_INPUT),
    (PackError, BundleError, EXIT_INPUT),
    (StoreError, SelfbenchError, EXIT_INPUT),
    (ValidateError, SelfbenchError, EXIT_INPUT),
    (SandboxError, ValidateError, EXIT_INPUT),
    (EgressError, SandboxError, EXIT_INPUT),
    (HarborError, ValidateError, EXIT_INPUT),
    (RewardError, ValidateError, EXIT_INPUT),
    (ToolchainError, ValidateError, EXIT_INPUT),
    (MineError, SelfbenchError, EXIT_INPUT),
    (DraftError, SelfbenchError, EXIT_INPUT),
    (EvalError, SelfbenchError, EXIT_INPUT),
    (RunError, SelfbenchError, EXIT_INPUT),
    (ReviewerError, RunError, EXIT_INPUT),
    (QualityError, SelfbenchError, EXIT_INPUT),
    (ExportError, SelfbenchError, EXIT_INPUT),
    (ArchiveError, ExportError, EXIT_INPUT),
    (SwebenchError, SelfbenchError, EXIT_INPUT),
]


@pytest.mark.parametrize(("error", "parent", "code"), TREE, ids=[e.__name__ for e, _, _ in TREE])
def test_each_error_has_its_area_and_exit_code(
    error: type[SelfbenchError], parent: type[SelfbenchError], code: int
) -> None:
    assert error.__bases__ == (parent,)
    assert error.exit_code == code
    assert error.__module__ == "selfbench.errors"


def test_every_error_class_lives_in_errors_py() -> None:
    tree = {error.__name__ for error, _, _ in TREE} | {"SelfbenchError"}
    assert {name for name in errors.__all__ if name.endswith("Error")} == tree
    # export/_streams' StreamError and export/_snapshot's _ScanError are the readers' internal
    # signals, never escaping them.
    pending = {"StreamError", "_ScanError"}
    defined = {
        match[1]
        for path in SRC.rglob("*.py")
        if path.name != "errors.py"
        for match in re.finditer(r"^class (\w+Error)\(", path.read_text(), re.MULTILINE)
    }
    assert defined == pending


def test_the_only_raised_rejection_is_preflight() -> None:
    rejected = [error for error, _, code in TREE if code == EXIT_REJECTED]
    assert rejected == [PreflightError]


# --- one translation of foreign errors ----------------------------------------------------------


@pytest.mark.parametrize("area", [error for error, _, _ in TREE if error not in {
    DefinitionError, PreflightError}], ids=lambda e: e.__name__)  # fmt: skip
def test_translating_names_what_failed_and_why(area: type[SelfbenchError], tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(area) as caught, translating(area, f"read {missing}"):
        missing.read_bytes()
    assert str(caught.value) == f"cannot read {missing}: No such file or directory"
    assert type(caught.value) is area
    assert isinstance(caught.value.__cause__, FileNotFoundError)  # kept for --debug's chain


def test_translating_lets_everything_else_through() -> None:
    with pytest.raises(KeyError), translating(StoreError, "read nothing"):
        raise KeyError("a bug keeps its traceback")


def test_a_reason_is_one_line() -> None:
    assert errors.os_reason(OSError("bad\nname")) == "bad\\nname"
    assert errors.os_reason(FileNotFoundError(2, "No such file or directory", "x")) == (
        "No such file or directory"
    )


def test_read_bytes_raises_the_callers_area(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"data")
    assert _fs.read_bytes(tmp_path / "file", error=BundleError) == b"data"
    with pytest.raises(BundleError) as caught:
        _fs.read_bytes(tmp_path, error=BundleError)
    assert str(caught.value) == f"{tmp_path}: not a regular file; not read"


def test_the_cli_edge_reads_with_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.json"
    assert main(["check", str(missing)]) == EXIT_INPUT
    assert capsys.readouterr().err == f"error: cannot read {missing}: No such file or directory\n"


def test_the_debug_variable_prints_the_chain_of_causes_under_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nope.json"
    monkeypatch.setenv(errors.DEBUG_VARIABLE, "1")
    assert main(["check", str(missing)]) == EXIT_INPUT
    first, *chain = capsys.readouterr().err.splitlines()
    assert first == f"error: cannot read {missing}: No such file or directory"
    assert "FileNotFoundError: [Errno 2] No such file or directory" in "\n".join(chain)
    assert "The above exception was the direct cause of the following exception:" in chain
    assert chain[-1].startswith("selfbench.errors.")


# Files that may still translate an OSError by hand, and why.
HAND_TRANSLATIONS = {
    "errors.py": "the one translation, `translating`",
    "_fs.py": (
        "rename_no_replace turns a rename's errno into FileExistsError; the readers name a link"
    ),
    "mine/sessions.py": "an unreadable session file is a reported skip, not an error",
    "evaluate/harbor_trials.py": "a Harbor that cannot start fails its trials as infrastructure",
    "environments/local/cgroup.py": (
        "a control group that cannot be made or joined is a reported skip"
    ),
    "environments/process.py": (
        "an author or reviewer command that cannot start is a reported outcome"
    ),
    "environments/_forward.py": (
        "the author's forwarder, a standard-library script of its own, says on its standard "
        "error why it cannot listen"
    ),
}


def test_no_hand_translation_of_os_errors_is_left() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative in HAND_TRANSLATIONS:
            continue
        text = path.read_text()
        found += [
            f"{relative}:{text.count(chr(10), 0, match.start()) + 1}"
            for match in re.finditer(r"except OSError as \w+|\.strerror\b", text)
        ]
    assert found == []


# --- one atomic publish, and what a killed run leaves -------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _leftover(directory: Path, pid: int, started: float, name: str = "out") -> Path:
    path = directory / f"{_fs.STAGING_PREFIX}{pid}-{int(started)}-0badf00d-{name}"
    path.mkdir(parents=True)
    (path / "half-written").write_bytes(b"x")
    return path


def test_a_staging_name_is_recognisable(tmp_path: Path) -> None:
    name = _fs.staging_name(tmp_path / "bundle")
    assert re.fullmatch(rf"\.selfbench-stage-{os.getpid()}-[0-9]+-[0-9a-f]{{8}}-bundle", name)


def test_leftovers_of_gone_or_old_runs_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    now = time.time()
    dead = _leftover(tmp_path, _dead_pid(), now)
    old = _leftover(tmp_path, os.getppid(), now - _fs.STALE_AFTER_SECONDS - 60)
    live = _leftover(tmp_path, os.getppid(), now)
    mine = _leftover(tmp_path, os.getpid(), now)
    stray_file = tmp_path / f"{_fs.STAGING_PREFIX}{_dead_pid()}-{int(now)}-0badf00d-out.tar.gz"
    stray_file.write_bytes(b"partial")
    output = tmp_path / ".selfbench-stage-output-without-a-pid"
    output.mkdir()
    no_such_pid = _leftover(tmp_path, 10**30, now)  # kept until old, never a crash

    removed = _fs.remove_leftovers(tmp_path)

    assert removed == tuple(sorted(p.name for p in (dead, old, stray_file)))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (live, mine, output, no_such_pid)
    )


def test_a_publish_leaves_nothing_beside_its_output(tmp_path: Path) -> None:
    with _fs.atomic_directory(tmp_path / "tree") as staging:
        (staging / "file").write_bytes(b"1")
    with _fs.atomic_directory(tmp_path / "tree", replace=True) as staging:
        (staging / "file").write_bytes(b"2")
    _fs.write_atomic(tmp_path / "file", b"3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "tree"]
    assert (tmp_path / "tree" / "file").read_bytes() == b"2"


def test_a_failed_publish_keeps_the_old_output(tmp_path: Path) -> None:
    (tmp_path / "tree").mkdir()
    with pytest.raises(RuntimeError), _fs.atomic_directory(tmp_path / "tree", replace=True):
        raise RuntimeError
    with pytest.raises(FileExistsError), _fs.atomic_directory(tmp_path / "tree"):
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["tree"]


_KILLED_MID_PUBLISH = """
import sys, time
from pathlib import Path
from selfbench._fs import atomic_directory
with atomic_directory(Path(sys.argv[1])) as staging:
    (staging / "half-written").write_bytes(b"x")
    print(staging.name, flush=True)
    time.sleep(60)
"""


def test_a_killed_publish_is_cleaned_up_by_the_next_compile(tmp_path: Path) -> None:
    sample = build_sample_repository(tmp_path)
    (tmp_path / "tasks").mkdir()
    submit_task(sample_arguments(sample), output_root=tmp_path / "tasks", preflight=False)
    task_dir = find_authored_task(tmp_path / "tasks")
    out = tmp_path / "bundles" / "task"
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_PUBLISH, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    name = child.stdout.readline().strip()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert name.startswith(f"{_fs.STAGING_PREFIX}{child.pid}-")
    assert [p.name for p in out.parent.iterdir()] == [name]  # left behind, half written

    args = ["compile", str(task_dir), "--repo", str(sample.path), "--out", str(out)]
    assert main(args) == 0

    assert [p.name for p in out.parent.iterdir()] == ["task"]


def test_a_leftover_is_never_taken_for_a_task(tmp_path: Path) -> None:
    (tmp_path / "my-task").mkdir()
    _leftover(tmp_path, _dead_pid(), time.time(), name="other-task")
    assert find_authored_task(tmp_path) == tmp_path / "my-task"


def test_an_issue_is_a_frozen_record() -> None:
    """Written out rather than a dataclass (start-up), it keeps a frozen dataclass's manners."""
    issue = Issue("$.taskId", "is required")
    assert issue == Issue("$.taskId", "is required") != Issue("$.taskId", "x")
    assert issue != ("$.taskId", "is required")
    assert hash(issue) == hash(Issue("$.taskId", "is required"))
    assert repr(issue) == "Issue(path='$.taskId', message='is required')"
    assert str(issue) == "$.taskId: is required"
    assert pickle.loads(pickle.dumps(issue)) == issue  # noqa: S301 - our own bytes
    assert copy.copy(issue) == issue
    with pytest.raises(AttributeError):
        issue.path = "$"  # type: ignore[misc]
    for name in Issue.__slots__:  # its hash never changes under it
        with pytest.raises(AttributeError):
            setattr(issue, name, "$")
        with pytest.raises(AttributeError):
            delattr(issue, name)
    assert (issue.path, issue.message) == ("$.taskId", "is required")
    match issue:
        case Issue(path, message):
            assert (path, message) == ("$.taskId", "is required")
