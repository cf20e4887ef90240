"""Scratch directories leave nothing behind: a killed selfbench's are swept by the next one."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfbench import _scratch
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.draft import api as draft_api
from selfbench.draft.api import DraftOptions
from selfbench.environments.local.phases import LocalOptions
from selfbench.environments.local.scoring import logs_root
from selfbench.submit import submit_task

_KILLS = 12


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def _authored(root: Path, sample: SampleRepository) -> Path:
    arguments = sample_arguments(sample)
    root.mkdir(parents=True)
    submit_task(arguments, output_root=root, preflight=False)
    return root / str(arguments["definition"]["taskId"])


def _compile(task: Path, repo: Path, out: Path, temp: Path) -> subprocess.Popen[bytes]:
    source = Path(_scratch.__file__).parents[1]
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(source)}
    command = [sys.executable, "-m", "selfbench", "compile", str(task), "--repo", str(repo)]
    return subprocess.Popen(
        [*command, "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _leftovers(temp: Path) -> list[str]:
    """Everything under `temp`."""
    return sorted(path.relative_to(temp).as_posix() for path in temp.rglob("*"))


def _has_index(temp: Path) -> bool:
    """Whether a scratch index exists under `temp` (while directories come and go)."""
    return any(
        name.startswith("selfbench-index-")
        for _, directories, _ in os.walk(temp)  # os.walk skips what vanishes mid-walk
        for name in directories
    )


def _kill_when_scratch_appears(process: subprocess.Popen[bytes], temp: Path) -> bool:
    """Kill -9 `process` as soon as a scratch index exists under `temp` (or at once if it
    ended); whether one was there when it was killed."""
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        if _has_index(temp):
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
    process.kill()
    process.wait()
    return False


def test_a_killed_compile_leaves_nothing_once_selfbench_starts_again(
    tmp_path: Path, sample: SampleRepository
) -> None:
    task = _authored(tmp_path / "tasks", sample)
    temp = tmp_path / "tmp"
    temp.mkdir()
    rng = random.Random(25)
    caught = 0
    for index in range(_KILLS):
        process = _compile(task, sample.path, tmp_path / f"out{index}", temp)
        if index % 2:
            caught += _kill_when_scratch_appears(process, temp)
        else:  # at a random moment of its life
            time.sleep(rng.uniform(0.0, 0.6))
            process.send_signal(signal.SIGKILL)
            process.wait()
    assert caught > 0, "no kill landed while a scratch index existed"
    assert _has_index(temp)  # the kills did leave directories behind
    finished = _compile(task, sample.path, tmp_path / "final", temp)
    assert finished.wait(timeout=120) == 0
    assert _leftovers(temp) == []


def test_a_live_owners_directory_is_not_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with _scratch.scratch_directory("selfbench-test-") as path:
        (path / "file").write_text("kept", encoding="utf-8")
        assert _scratch.sweep_scratch() == 0
        assert (path / "file").read_text(encoding="utf-8") == "kept"
    assert not path.exists()
    assert _leftovers(tmp_path) == []


def test_a_home_another_user_could_list_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    home = tmp_path / f"selfbench-{os.geteuid()}"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    (home / "planted").mkdir()
    assert _scratch.scratch_home() is None
    assert _scratch.sweep_scratch() == 0
    with _scratch.scratch_directory("selfbench-test-") as path:
        assert path.parent == tmp_path
    assert (home / "planted").is_dir()


_KEEPER = (
    "import sys; from selfbench._scratch import kept_directory;"
    "print(kept_directory('selfbench-logs-'), flush=True); sys.stdin.read()"
)
"""A process that keeps a log directory, prints its path and lives until its stdin closes."""


def _keeper(temp: Path) -> tuple[subprocess.Popen[str], Path]:
    """A live process holding a kept directory made under `temp`, and that directory."""
    source = Path(_scratch.__file__).parents[1]
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(source)}
    process = subprocess.Popen(
        [sys.executable, "-c", _KEEPER],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    path = Path(process.stdout.readline().strip())
    assert path.is_absolute(), path
    assert path.is_dir(), path
    return process, path


def _kept(temp: Path) -> Path:
    """A kept directory (with a log in it) whose process has ended."""
    process, path = _keeper(temp)
    process.communicate("")
    (path / "oracle.log").write_text("kept\n", encoding="utf-8")
    return path


def _age(path: Path, days: float) -> None:
    """Make `path` last changed `days` days ago."""
    when = time.time() - days * 86400
    os.utime(path, (when, when))


def test_kept_logs_live_beside_the_scratch_home_until_they_are_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    old, fresh = _kept(tmp_path), _kept(tmp_path)
    _age(old, _scratch.KEPT_DAYS + 1)
    _age(fresh, _scratch.KEPT_DAYS - 1)
    home = _scratch.kept_home(make=False)
    assert home == tmp_path / f"selfbench-{os.geteuid()}-kept"
    assert {old.parent.parent, fresh.parent.parent} == {home}  # in each process's entry
    assert old.name.startswith("selfbench-logs-")
    assert _scratch.sweep_scratch() == 1
    assert not old.exists()
    assert (fresh / "oracle.log").read_text(encoding="utf-8") == "kept\n"
    assert _scratch.sweep_scratch() == 0
    assert home.is_dir()  # while it holds one


def test_old_kept_logs_of_a_live_run_are_not_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    process, path = _keeper(tmp_path)
    try:
        _age(path, _scratch.KEPT_DAYS + 30)
        assert _scratch.sweep_scratch() == 0
        assert path.is_dir()
    finally:
        process.communicate("")
    assert _scratch.sweep_scratch() == 1
    assert not (tmp_path / f"selfbench-{os.geteuid()}-kept").exists()  # its home went with it


def test_a_later_start_sweeps_old_kept_logs(tmp_path: Path) -> None:
    old = _kept(tmp_path)
    _age(old, _scratch.KEPT_DAYS + 1)
    _keeper(tmp_path)[0].communicate("")  # a later run that keeps logs of its own
    assert not old.exists()


def test_draft_and_validate_keep_their_logs_in_the_scratch_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(_scratch, "_kept_entry", None)  # this process's own, made here
    home = tmp_path / f"selfbench-{os.geteuid()}-kept"
    validate_logs = logs_root(LocalOptions())
    draft_logs = draft_api._logs_for(DraftOptions(), "pr-7")  # noqa: SLF001
    assert validate_logs.parent == draft_logs.parent  # this process's entry
    assert validate_logs.parent.parent == home
    assert validate_logs.name.startswith("selfbench-logs-")
    assert draft_logs.name.startswith("selfbench-draft-pr-7-")
    _scratch.drop_kept(validate_logs)
    assert draft_logs.is_dir()
    _scratch.drop_kept(draft_logs)  # the last one: the entry and the home go with it
    assert list(tmp_path.iterdir()) == []
