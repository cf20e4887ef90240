"""A phase's tree as an overlay of the prepared one (`environments/local/overlay.py`): what the
phase writes stays its own, the prepared tree is never written, and no mount outlives it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from selfbench.environments.local.overlay import (
    MOUNT_FAILED,
    Overlay,
    mounting,
    own_tree,
    supported,
)
from selfbench.environments.local.sandbox import Mounts, Sandbox, require_sandbox
from selfbench.environments.local.uids import Users
from selfbench.errors import SandboxError

pytestmark = pytest.mark.sandbox  # mounting takes root


def _prepared(tmp_path: Path) -> Path:
    lower = tmp_path / "prepared"
    (lower / "src").mkdir(parents=True)
    (lower / "src" / "code.py").write_text("answer = 42\n")
    (lower / "shared").mkdir()
    (lower / "shared").chmod(0o1777)  # setup opened it to every user, as the images' tool state
    return lower


def _run_in(overlay: Overlay, mount_point: Path, script: str, uid: int) -> str:
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sh", "-c", script]
    completed = subprocess.run(
        mounting(argv, {mount_point: overlay}),
        cwd=mount_point.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_a_phase_writes_its_own_layer_and_the_prepared_tree_stays_as_it_was(
    tmp_path: Path, other_uid: int
) -> None:
    lower = _prepared(tmp_path)
    own_tree(lower, other_uid, other_uid)
    mount_point = tmp_path / "workspace" / "app"  # the test's own directory is root's alone
    overlay = Overlay.beside(lower, mount_point)
    script = (
        "cat app/src/code.py && echo 'answer = 0' >app/src/code.py && rm app/src/code.py"
        " && echo made >app/shared/new && mkdir app/cache && ls app"
    )
    shown = _run_in(overlay, mount_point, script, other_uid)

    assert shown.splitlines() == ["answer = 42", "cache", "shared", "src"]
    assert (lower / "src" / "code.py").read_text() == "answer = 42\n"
    assert sorted(path.name for path in lower.rglob("*")) == ["code.py", "shared", "src"]
    assert (overlay.upper / "shared" / "new").read_text() == "made\n"
    assert not list(mount_point.iterdir())  # the mount ended with its namespace
    assert str(mount_point) not in Path("/proc/self/mountinfo").read_text()
    overlay.remove(mount_point)
    assert not any(path.exists() for path in (mount_point, overlay.upper, overlay.work))


def test_the_top_directory_shows_the_prepared_trees_owner_and_mode(
    tmp_path: Path, other_uid: int
) -> None:
    lower = _prepared(tmp_path) / "shared"  # a tool state: 1777, root's
    mount_point = tmp_path / "phase-state" / "0-uv-cache"
    overlay = Overlay.beside(lower, mount_point)

    _run_in(overlay, mount_point, f"echo written >{mount_point.name}/by-another-user", other_uid)

    assert (overlay.upper / "by-another-user").read_text() == "written\n"
    assert (overlay.upper.stat().st_mode & 0o7777, overlay.upper.stat().st_uid) == (0o1777, 0)


@pytest.mark.parametrize("unsafe", [",", ":", "\\", "\n"])
def test_a_path_the_mount_options_cannot_hold_is_copied_instead(
    tmp_path: Path, unsafe: str
) -> None:
    assert supported(tmp_path)
    assert not supported(tmp_path, tmp_path / f"variant{unsafe}1-app")


def test_paths_too_long_for_one_page_of_mount_options_are_copied_instead(
    tmp_path: Path,
) -> None:
    assert supported(tmp_path, tmp_path / "variant-1-app")
    assert not supported(tmp_path, tmp_path / ("d" * 200) / ("d" * 200) / ("long-" * 400))


def test_without_overlays_the_command_is_run_as_it_is() -> None:
    argv = ["bwrap", "--", "/bin/bash", "-c", "true"]
    assert mounting(argv, {}) == argv


def test_own_tree_changes_every_entry_only_when_its_top_is_not_the_users(
    tmp_path: Path, other_uid: int
) -> None:
    lower = _prepared(tmp_path)
    (lower / "src" / "link").symlink_to("/etc/passwd")
    own_tree(lower, other_uid, other_uid)
    owners = {(path.lstat().st_uid, path.lstat().st_gid) for path in [lower, *lower.rglob("*")]}
    assert owners == {(other_uid, other_uid)}
    assert Path("/etc/passwd").stat().st_uid == 0  # a link's own owner changes, not its target's

    os.chown(lower / "src" / "code.py", 0, 0)  # the top says the tree is the user's already
    own_tree(lower, other_uid, other_uid)
    assert (lower / "src" / "code.py").stat().st_uid == 0


def test_an_overlay_that_does_not_mount_stops_the_phase_as_the_machines_failure(
    tmp_path: Path, sandbox_users: Users
) -> None:
    """A mount that fails when the phase starts (a full disk, say) is the machine's failure,
    never the task's: the phase's script does not run, and the sandbox raises with mount's
    own words."""
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox())
    lower = tmp_path / "prepared"
    lower.mkdir()
    mount_point = sandbox.root / "variant-1-app"
    overlay = Overlay.beside(lower, mount_point)
    lower.rmdir()  # gone by the time the phase starts
    log = tmp_path / "phase.log"
    mounts = Mounts(binds={"/app": mount_point}, overlays={mount_point: overlay})
    with pytest.raises(SandboxError) as raised:
        sandbox.run("echo the script ran", (), mounts=mounts, log=log, timeout=60)
    message = str(raised.value)
    assert message.startswith(f"{MOUNT_FAILED}: {mount_point}: mount")
    assert message.endswith(f" (log {log})")
    assert "the script ran" not in log.read_text()


def test_the_sandboxes_of_one_run_share_one_walk_of_the_hosts_private_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within a command's scope every sandbox covers what the first walk found; outside one
    (a library caller, a server) each walks anew, so an entry made since is covered."""
    from selfbench.environments.local import _one_walk  # noqa: PLC0415
    from selfbench.environments.local.sandbox import PrivateEntries  # noqa: PLC0415

    walks: list[PrivateEntries] = []

    def walk() -> PrivateEntries:
        walks.append(PrivateEntries(files=(f"/etc/walk-{len(walks)}",)))
        return walks[-1]

    monkeypatch.setattr(PrivateEntries, "find", staticmethod(walk))
    with _one_walk.scope():
        first = PrivateEntries.for_run()
        with _one_walk.scope():  # a stage inside the run
            assert PrivateEntries.for_run() is first
        assert PrivateEntries.for_run() is first
    assert len(walks) == 1
    assert PrivateEntries.for_run() is not first
    assert PrivateEntries.for_run() is not PrivateEntries.for_run()
    with _one_walk.scope():
        assert PrivateEntries.for_run() is not first  # the next run walks again
    assert len(walks) == 5


@pytest.mark.parametrize(
    ("argv", "scoped"),
    [
        (["validate", "no-such-bundle"], True),
        (["quality", "no-such-task", "--repo", "."], True),
        (["audit", "no-such-task"], False),  # no sandbox
        (["review", "no-such-export.tar.gz"], False),  # a server: each sandbox walks anew
    ],
)
def test_a_sandboxed_command_is_one_run_and_a_server_is_not(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], scoped: bool
) -> None:
    from selfbench.cli import main  # noqa: PLC0415
    from selfbench.environments.local import _one_walk  # noqa: PLC0415

    entered: list[str] = []

    class Recording(_one_walk.scope):
        def __enter__(self) -> None:
            entered.append(argv[0])
            super().__enter__()

    monkeypatch.setattr(_one_walk, "scope", Recording)
    main(argv)  # each fails on its missing input, after the scope is entered or not
    assert entered == ([argv[0]] if scoped else [])
