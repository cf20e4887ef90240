"""The setups' shared download caches: which set each setup stage is lent (`downloads.py`)."""

from __future__ import annotations

from pathlib import Path

from selfbench.environments.local.downloads import DOWNLOADS, MANAGERS, DownloadCaches
from selfbench.environments.local.sandbox import SHARED_STATE


def test_setups_at_once_hold_sets_of_their_own_and_a_later_one_reuses_a_set(
    tmp_path: Path,
) -> None:
    """`-j 2`: two setups running at once never write one cache; the next setup of the same
    repository gets a set an earlier one filled."""
    caches = DownloadCaches(tmp_path)
    with caches.lease("o/a") as first, caches.lease("o/a") as second:
        assert set(first.binds.values()).isdisjoint(second.binds.values())
        (first.binds[f"{DOWNLOADS}/pip"] / "wheel").write_text("1")
    with caches.lease("o/a") as later:
        assert (later.binds[f"{DOWNLOADS}/pip"] / "wheel").is_file()  # the set released last


def test_another_repository_never_gets_a_set_one_repository_filled(tmp_path: Path) -> None:
    """A cache that one repository's setup wrote (its code, as root) serves that repository's
    setups alone."""
    caches = DownloadCaches(tmp_path)
    with caches.lease("o/a") as first:
        (first.binds[f"{DOWNLOADS}/npm"] / "tarball").write_text("1")
    with caches.lease("o/b") as other:
        assert not (other.binds[f"{DOWNLOADS}/npm"] / "tarball").exists()
        assert set(first.binds.values()).isdisjoint(other.binds.values())


def test_a_lease_names_every_managers_cache_and_the_tool_state_it_fills(tmp_path: Path) -> None:
    with DownloadCaches(tmp_path).lease("o/a") as lease:
        assert set(lease.binds) == {f"{DOWNLOADS}/{name}" for name, _ in MANAGERS} | set(
            SHARED_STATE
        )
        assert lease.environment["PIP_CACHE_DIR"] == f"{DOWNLOADS}/pip"
        assert all(path.is_dir() for path in lease.binds.values())


def test_keep_copies_the_sets_tool_state_into_the_tasks(tmp_path: Path) -> None:
    """After its stage, the task's tool state holds what the set's held (as the image's holds
    what its setup downloaded), and the set keeps it for the next setup."""
    with DownloadCaches(tmp_path / "caches").lease("o/a") as lease:
        (lease.state["/opt/uv-cache"] / "archive").mkdir()
        (lease.state["/opt/uv-cache"] / "archive" / "pkg.py").write_text("x = 1\n")
        task = {target: tmp_path / "task" / Path(target).name for target in SHARED_STATE}
        lease.keep(task)
        assert (task["/opt/uv-cache"] / "archive" / "pkg.py").read_text() == "x = 1\n"
        assert (lease.state["/opt/uv-cache"] / "archive" / "pkg.py").is_file()
