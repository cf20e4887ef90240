"""Bounded inputs in the local environment (issue 25): the host's ceilings on what a task asks
for, and the task's storage enforced.

Red-team findings, each a test here:

* a definition with `memoryMb` 2^42 let setup touch 3 GB: the host's memory ceiling holds;
* `storageMb` was not enforced (1 GB written under a 100 MB limit): a write past it fails;
* a 2^53-second timeout: the host's ceiling on a phase's time holds.

The sandbox tests run as root, as CI does.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import task
from selfbench._scratch import sweep_scratch
from selfbench.cli import main
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.cgroup import Limits
from selfbench.environments.local.disk import (
    FULL_BYTES,
    IMAGE_NAME,
    SMALLER_DISK,
    free_bytes,
    mount_workspace,
    remove_workspace,
)
from selfbench.environments.local.sandbox import Mounts, Sandbox, Users, require_sandbox

pytestmark = pytest.mark.fresh_setup  # bounds on setups that really run

needs_root = pytest.mark.sandbox

_HUGE = (1 << 53) - 1
"""The largest timeout a definition may hold (the largest safe JSON integer)."""
_HOST = Ceilings(cpus=2.0, memory_mb=256, storage_mb=64, seconds=3, reruns=4)


def _mounted(path: Path) -> bool:
    """Whether `path` is a mount point in this process's mount namespace."""
    mounts = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    return any(line.split()[4] == str(path) for line in mounts)


# --- the ceilings --------------------------------------------------------------------------------


def test_a_task_asking_for_more_than_the_host_gets_the_host_s_ceiling_and_says_so() -> None:
    definition = task(
        resources={"cpus": 64, "memoryMb": 1 << 42, "storageMb": 1 << 40},
        timeouts={"setupSeconds": _HUGE, "agentSeconds": 2, "testsSeconds": 3},
    )

    limits = Limits.for_task(definition, _HOST)

    assert (limits.cpus, limits.memory_mb, limits.storage_mb, limits.seconds) == (2, 256, 64, 3)
    assert limits.lowered == (
        "the task's cpus 64 is above this host's ceiling: using 2",
        "the task's memoryMb 4398046511104 MB is above this host's ceiling: using 256 MB",
        "the task's storageMb 1099511627776 MB is above this host's ceiling: using 64 MB",
        "the task's setupSeconds 9007199254740991 s is above this host's ceiling: using 3 s",
    )


def test_a_task_within_the_ceilings_keeps_its_own_values() -> None:
    definition = task(
        resources={"cpus": 0.5, "memoryMb": 128, "storageMb": 32},
        timeouts={"setupSeconds": 3, "agentSeconds": 1, "testsSeconds": 2},
    )

    limits = Limits.for_task(definition, _HOST)

    assert (limits.cpus, limits.memory_mb, limits.storage_mb, limits.lowered) == (0.5, 128, 32, ())


def test_the_host_s_defaults_share_its_memory_and_disk_among_the_jobs(tmp_path: Path) -> None:
    one = Ceilings.for_host(workspace=tmp_path)
    four = Ceilings.for_host(jobs=4, workspace=tmp_path)

    assert one.cpus == float(os.cpu_count() or 1)
    assert one.memory_mb == (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20
    assert four.memory_mb == one.memory_mb // 4
    assert 0 < one.storage_mb <= shutil.disk_usage(tmp_path).total >> 20
    assert abs(four.storage_mb - one.storage_mb // 4) <= 1  # the free space moves a little


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-memory", "0"], "error: --max-memory must be more than 0\n"),
        (["--max-cpus", "-1"], "error: --max-cpus must be more than 0\n"),
        (["--env", "harbor", "--max-storage", "5"], None),
        (["--reruns", "11"], "error: --reruns must be at most 10 (--max-reruns)\n"),
        (
            ["--reruns", "5", "--max-reruns", "4"],
            "error: --reruns must be at most 4 (--max-reruns)\n",
        ),
    ],
)
def test_the_ceiling_options_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str | None
) -> None:
    if "harbor" in argv:
        message = "error: --max-storage is not used by --env harbor\n"
    elif os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.skip("the local runner's checks need the sandbox")
    assert main(["validate", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err == message


def test_draft_refuses_reruns_above_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["draft", "c1", "--repo", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main([*argv, "--reruns", "1000000"]) == 2
    assert capsys.readouterr().err == "error: --reruns must be at most 10 (--max-reruns)\n"


# --- the sandbox enforces them -------------------------------------------------------------------


@needs_root
def test_setup_cannot_use_more_memory_than_the_host_s_ceiling(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """Red team: `memoryMb` 2^42 in definition.json let setup touch 3 GB."""
    definition = task(resources={"cpus": 1, "memoryMb": 1 << 42, "storageMb": 64})
    limits = Limits.for_task(definition, _HOST)
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), limits)
    log = tmp_path / "setup.log"
    touch = 'python3 -c \'b = bytearray(b"x") * (768 << 20); print("touched", len(b))\''
    try:
        result = sandbox.run(touch, (), mounts=Mounts(), log=log, timeout=60)
    finally:
        remove_workspace(sandbox.root)

    text = log.read_text()
    assert result.exit_code != 0
    assert result.out_of_memory
    assert "touched" not in text
    assert "selfbench: the task's memoryMb 4398046511104 MB is above this host's ceiling" in text


@needs_root
def test_a_phase_cannot_write_past_the_task_s_storage(tmp_path: Path, sandbox_users: Users) -> None:
    """Red team: `storageMb` was not enforced (1 GB written under a 100 MB limit)."""
    definition = task(resources={"cpus": 1, "memoryMb": 256, "storageMb": 64})
    limits = Limits.for_task(definition, Ceilings(cpus=1.0, memory_mb=256, storage_mb=1 << 20))
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), limits)
    app = sandbox.root / "app"
    app.mkdir()
    log = tmp_path / "agent.log"
    write = "dd if=/dev/zero of=/app/big bs=1M count=256 status=none; echo dd exited $?"
    try:
        result = sandbox.run(write, (), mounts=Mounts(binds={"/app": app}), log=log, timeout=60)
        written = (app / "big").stat().st_size
        assert _mounted(sandbox.root)
    finally:
        remove_workspace(sandbox.root)

    text = log.read_text()
    assert result.exit_code == 0
    assert "No space left on device" in text
    assert "dd exited 1" in text
    assert written < 64 << 20
    assert "selfbench: the workspace is full: the task's storage is 64 MB (storageMb)" in text
    assert not sandbox.root.exists()
    assert not _mounted(sandbox.root)


@needs_root
def test_the_free_space_a_phase_ends_with_is_read_before_its_own_files_go(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """A phase that fills its disk in its private tool state (`/opt/uv-cache`, removed as the
    phase ends) ended with a full disk: its result says so, and so does its log, though the
    space is free again once the phase is gone."""
    definition = task(resources={"cpus": 1, "memoryMb": 256, "storageMb": 64})
    limits = Limits.for_task(definition, Ceilings(cpus=1.0, memory_mb=256, storage_mb=1 << 20))
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), limits)
    log = tmp_path / "agent.log"
    fill = "dd if=/dev/zero of=/opt/uv-cache/big bs=1M status=none; echo dd exited $?"
    try:
        result = sandbox.run(fill, (), mounts=Mounts(tool_state="private"), log=log, timeout=60)
        after = free_bytes(sandbox.root)
    finally:
        remove_workspace(sandbox.root)

    assert "dd exited 1" in log.read_text()
    assert result.free_bytes is not None
    assert result.free_bytes < FULL_BYTES
    assert after is not None
    assert after > 32 << 20  # the private copy went with the phase
    assert "selfbench: the workspace is full: the task's storage is 64 MB" in log.read_text()


@needs_root
def test_a_phase_cannot_outlast_the_host_s_ceiling_on_time(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """Red team: 2^53-second timeouts kept a phase running."""
    definition = task(timeouts={"setupSeconds": _HUGE, "agentSeconds": 1, "testsSeconds": 1})
    limits = Limits.for_task(definition, _HOST)
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox(), limits)
    log = tmp_path / "setup.log"
    start = time.monotonic()
    try:
        result = sandbox.run("sleep 60", (), mounts=Mounts(), log=log, timeout=float(_HUGE))
    finally:
        remove_workspace(sandbox.root)

    assert result.timed_out
    assert time.monotonic() - start < 30
    assert "selfbench: phase killed after 3 s" in log.read_text()


# --- the workspace's disk ------------------------------------------------------------------------


@needs_root
def test_the_workspace_disk_takes_only_what_is_written_and_goes_with_the_workspace(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"

    assert mount_workspace(root, 1024) == ""
    try:
        assert _mounted(root)
        assert list(root.iterdir()) == []
        assert oct(root.stat().st_mode & 0o777) == "0o700"
        assert shutil.disk_usage(root).total > 900 << 20
    finally:
        remove_workspace(root)
    assert not _mounted(root)
    assert not root.exists()


@needs_root
def test_a_workspace_whose_host_disk_fills_first_reads_as_full(tmp_path: Path) -> None:
    """A workspace's image takes 90% of its host's free space as it is made, sparse; once
    something else on that host (another workspace's image) takes the rest, the image's own
    filesystem still shows room, but the free space a phase's end reads (`free_bytes`) is the
    host's: none."""
    host = tmp_path / "host"
    host.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(host)], check=True)
    workspace = host / "workspace"
    try:
        free = shutil.disk_usage(host).free
        said = mount_workspace(workspace, 1024)
        assert said == SMALLER_DISK.format(size=free * 9 // 10 >> 20, storage=1024, free=free >> 20)
        with (host / "other.bin").open("wb") as other:
            # until the host is full: dd's own status is its failure to write more
            dd = ["dd", "if=/dev/zero", "bs=1M"]
            subprocess.run(dd, stdout=other, stderr=subprocess.DEVNULL, check=False)
        assert shutil.disk_usage(workspace).free > 16 << 20  # its own filesystem: room
        assert (free_bytes(workspace / "app") or 0) < 1 << 20  # the host's: none
        assert free_bytes(host) == shutil.disk_usage(host).free  # no workspace: its own
    finally:
        remove_workspace(workspace)
        subprocess.run(["umount", "-l", str(host)], check=False)


@needs_root
def test_a_workspace_that_is_not_empty_is_left_on_the_host_s_disk_and_said(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "already").write_text("here\n")

    assert mount_workspace(root, 64) == "no storage limit: the workspace is not empty"
    assert not _mounted(root)
    assert not (root / IMAGE_NAME).exists()


@needs_root
def test_a_kept_workspace_stays_mounted_until_removed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    assert mount_workspace(root, 64) == ""
    (root / "kept").write_text("kept\n")

    remove_workspace(root, keep=True)
    assert (root / "kept").read_text() == "kept\n"
    remove_workspace(root)
    assert not root.exists()


@needs_root
def test_a_killed_run_s_workspace_disk_is_unmounted_and_removed_by_the_next_run(
    tmp_path: Path,
) -> None:
    """`kill -9` leaves a mounted workspace behind; the next selfbench's sweep takes it."""
    root = tmp_path / "selfbench-ws-killed"
    mount_and_die = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from selfbench.environments.local.disk import mount_workspace\n"
        "assert mount_workspace(Path(sys.argv[1]), 64) == ''\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run([sys.executable, "-c", mount_and_die, str(root)], check=False)
    assert killed.returncode == -signal.SIGKILL
    assert _mounted(root)

    sweep_scratch()

    assert not _mounted(root)
    assert not root.exists()
