"""Hostile tasks in the local environment: nothing outside the workspace changes, nothing survives.

Every case validates (or scores) a task whose test, gold or agent patch or command attacks the
machine, while a sentinel tree outside the workspace (under /var/cache: visible in the sandbox,
read-only) is
hashed before and after, with `/etc` and the invoking user's home. Run as root, as CI does.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from projects import build, git
from selfbench.artifacts.compiled import locate_task
from selfbench.environments.local.scoring import score_patch
from selfbench.environments.local.uids import Users
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from test_validate import PY_SETUP, PY_TEST_MUL, python_project

pytestmark = [pytest.mark.sandbox, pytest.mark.fresh_setup]  # every setup really runs

_MARK = f"selfbench-hostile-{secrets.token_hex(6)}"
"""Names what the attacks leave (files, process names): unique to this run of the tests, so a
survivor of another suite running at the same time is not taken for one of this run's."""


def _digest(root: Path) -> str:
    """Names, modes, owners, times and contents of a tree."""
    digest = hashlib.sha256()
    for path in sorted([root, *root.rglob("*")]):
        stat = path.lstat()
        fields = (path.relative_to(root), stat.st_mode, stat.st_uid, stat.st_gid, stat.st_mtime_ns)
        digest.update("\0".join(map(str, fields)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _listing(root: Path) -> list[str]:
    """The entries of `root`, but the host secrets `test_sandbox_probes.py` plants for its own
    probes (`selfbench-probe-*`), which may come and go on another worker meanwhile."""
    names = (entry.name for entry in os.scandir(root))
    return sorted(name for name in names if not name.startswith("selfbench-probe-"))


@pytest.fixture
def sentinel() -> Iterator[Path]:
    """A tree outside the workspace, in a directory the sandbox shows read-only (/var/cache)."""
    root = Path(tempfile.mkdtemp(prefix=f"{_MARK}-", dir="/var/cache"))
    (root / "keep.txt").write_text("do not touch\n")
    (root / "sub").mkdir()
    (root / "sub" / "data.bin").write_bytes(bytes(range(256)))
    root.chmod(0o755)
    home = Path.home()
    before = (_digest(root), _listing(Path("/etc")), _listing(home), _etc_passwd())
    yield root
    after = (_digest(root), _listing(Path("/etc")), _listing(home), _etc_passwd())
    shutil.rmtree(root, ignore_errors=True)
    assert after == before, "something outside the workspace changed"
    assert _survivors() == [], "a process outlived the validation"


def _etc_passwd() -> bytes:
    return Path("/etc/passwd").read_bytes()


def _survivors() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if _MARK.encode() in command and b"pytest" not in command:
            found.append(command.replace(b"\0", b" ").decode(errors="replace"))
    return found


def _marked_sleep(mark: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["bash", "-c", f"exec -a {mark} sleep 60"])
    deadline = time.monotonic() + 10
    # bash's own command line names the mark too: wait for the exec that makes it argv[0]
    while not Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(mark.encode()):
        assert time.monotonic() < deadline, "the marked process did not start"
        time.sleep(0.05)
    return process


def test_only_a_process_marked_by_this_run_is_its_survivor() -> None:
    # Two suites at once: the other one's attack processes carry its own mark, not this run's.
    other = f"selfbench-hostile-{secrets.token_hex(6)}"
    processes = [_marked_sleep(other), _marked_sleep(_MARK)]
    try:
        assert _survivors() == [f"{_MARK} 60 "]
    finally:
        for process in processes:
            process.kill()
            process.wait()


def _attack(sentinel: Path) -> str:
    """Shell that tries every escape it can think of; each step may fail, none may succeed."""
    target = str(sentinel)
    return (
        f"ln -sfn /etc etc-link; echo pwned > etc-link/{_MARK} ; "
        f"ln -sfn {target} out-link; echo pwned > out-link/keep.txt ; rm -rf out-link/ ; "
        f"chmod -R 777 {target} ; rm -rf --no-preserve-root {target} ; "
        f"echo pwned >> ~/.bashrc ; echo pwned > $HOME/{_MARK} ; echo pwned > /root/{_MARK} ; "
        f"echo pwned > /etc/{_MARK} ; touch /usr/{_MARK} ; mount -o remount,rw / ; "
        f"mkdir -p .git/hooks && echo pwned > .git/hooks/{_MARK} ; "
        f"(exec -a {_MARK} sleep 600 &) ; setsid bash -c 'exec -a {_MARK} sleep 600' & "
        "true"
    )


def test_a_hostile_setup_command_changes_nothing_outside(sentinel: Path, tmp_path: Path) -> None:
    project = python_project(
        "hostile-setup", definition={"setupCommand": f"{_attack(sentinel)} && true"}
    )
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.nop.reward is not None  # the attack failed quietly; validation went on


def test_a_hostile_test_command_changes_nothing_outside(sentinel: Path, tmp_path: Path) -> None:
    command = f"{_attack(sentinel)}; .venv/bin/python -m pytest -q -p no:cacheprovider {{tests}}"
    project = python_project("hostile-tests", definition={"testCommand": command})
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.oracle.reward is not None


def test_a_test_cannot_read_the_gold_patch(sentinel: Path, tmp_path: Path) -> None:
    peek = (
        "import pathlib\n\n\ndef test_mul():\n"
        "    text = pathlib.Path('/solution/gold.patch').read_text()\n"
        "    assert 'def mul' in text\n"
    )
    out = build(python_project("peek", tests={"tests/test_mul.py": peek}), tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.oracle.reward is not None
    assert report.oracle.reward.fail_to_pass == 0
    assert (
        "No such file or directory: '/solution/gold.patch'" in Path(report.oracle.log).read_text()
    )


def test_a_hostile_held_out_test_changes_nothing_outside(sentinel: Path, tmp_path: Path) -> None:
    attack = _attack(sentinel).replace("'", "\\'")
    hostile = (
        "import subprocess\n\nfrom calc import mul\n\n\ndef test_mul():\n"
        f"    subprocess.run(['bash', '-c', '{attack}'], check=False)\n"
        "    assert mul(2, 3) == 6\n"
    )
    project = python_project("hostile-test-file", tests={"tests/test_mul.py": hostile})
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.oracle.reward is not None


def _patch(out: Path, files: dict[str, Any]) -> bytes:
    repo = out.parent.parent / "repo"
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            path.symlink_to(content)
        else:
            path.write_text(content)
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary").encode()
    git(repo, "reset", "-q", "--hard")
    return patch


@pytest.mark.parametrize(
    "case",
    ["symlink-then-write", "into-git", "outside-path", "absolute-path"],
)
def test_a_hostile_agent_patch_changes_nothing_outside(
    case: str, sentinel: Path, tmp_path: Path
) -> None:
    out = build(python_project(f"agent-{case}"), tmp_path / "build")
    if case == "symlink-then-write":
        link = _patch(out, {"escape": sentinel})
        write = (
            b"diff --git a/escape/keep.txt b/escape/keep.txt\n"
            b"--- a/escape/keep.txt\n+++ b/escape/keep.txt\n@@ -1 +1 @@\n-do not touch\n+pwned\n"
        )
        patch = link + write
    elif case == "into-git":
        patch = (
            b"diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
            b"--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+pwned\n"
        )
    elif case == "outside-path":
        patch = (
            b"diff --git a/../../x b/../../x\nnew file mode 100644\n"
            b"--- /dev/null\n+++ b/../../x\n@@ -0,0 +1 @@\n+pwned\n"
        )
    else:
        name = f"{sentinel}/new.txt".lstrip("/")
        patch = (
            f"diff --git a//{name} b//{name}\nnew file mode 100644\n"
            f"--- /dev/null\n+++ b//{name}\n@@ -0,0 +1 @@\n+pwned\n"
        ).encode()
    report = score_patch(locate_task(out), patch, options=LocalOptions(logs=tmp_path / "logs"))
    assert report.reward is not None
    assert report.reward.reward == 0


def test_a_gold_patch_with_a_symlink_out_cannot_write_through_it(
    sentinel: Path, tmp_path: Path
) -> None:
    """The gold patch adds a symlink to the sentinel; the held-out tests write through it."""
    write_through = (
        "\n\ndef test_write_through():\n"
        "    with open('escape/keep.txt', 'w') as handle:\n"
        "        handle.write('pwned')\n"
    )
    project = python_project(
        "gold-symlink",
        gold={"escape": sentinel},
        tests={"tests/test_mul.py": PY_TEST_MUL + write_through},
    )
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.oracle.reward is not None
    assert report.oracle.reward.fail_to_pass == 0
    assert "Read-only file system" in Path(report.oracle.log).read_text()


OPEN_BY_HANDLE = r"""
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
# struct file_handle {handle_bytes, handle_type, f_handle}: inode 2 (a filesystem's root) as
# FILEID_INO32_GEN, the handle the "shocker" escape forges to leave a bind mount
handle = ctypes.create_string_buffer(struct.pack("Ii", 8, 1) + struct.pack("II", 2, 0))
fd = libc.open_by_handle_at(os.open("/app", os.O_RDONLY), handle, os.O_RDONLY)
print("opened" if fd >= 0 else f"errno {ctypes.get_errno()}")
"""


def test_root_in_the_sandbox_cannot_open_files_by_handle(
    tmp_path: Path, sandbox_users: Users
) -> None:
    from selfbench.environments.local.sandbox import (  # noqa: PLC0415
        Mounts,
        Sandbox,
        require_sandbox,
    )

    app = tmp_path / "app"
    app.mkdir()
    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox())
    log = tmp_path / "probe.log"
    result = sandbox.run(
        'exec python3 -c "$1"',
        (OPEN_BY_HANDLE,),
        mounts=Mounts(binds={"/app": app}),
        log=log,
        timeout=60,
    )
    assert result.exit_code == 0, log.read_text()
    assert log.read_text().strip() == f"errno {errno.EPERM}"


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A directory the sandbox shows read-only (/var/cache), for a project built there."""
    root = Path(tempfile.mkdtemp(prefix=f"{_MARK}-", dir="/var/cache"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_a_test_cannot_read_its_bundle_through_the_host_path(visible_dir: Path) -> None:
    """The bundle lives in a directory the sandbox shows; the task's own files are covered."""
    root = visible_dir
    gold = root / "build" / "collected" / "host-peek" / "harbor-task" / "solution" / "gold.patch"
    peek = (
        "import pathlib\n\nfrom calc import mul\n\n\ndef test_mul():\n"
        f"    assert not pathlib.Path({str(gold)!r}).exists()\n"
        "    assert mul(2, 3) == 6\n"
    )
    out = build(python_project("host-peek", tests={"tests/test_mul.py": peek}), root / "build")
    assert out / "harbor-task" / "solution" / "gold.patch" == gold
    assert gold.is_file()
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=root / "logs")))
    assert report.reason is None
    assert report.accepted


def test_setup_reaches_the_network_but_not_the_hosts_loopback(tmp_path: Path) -> None:
    """setupCommand gets a user-mode network (slirp4netns): the host's loopback services are out
    of reach, as they are from a container."""
    if shutil.which("slirp4netns") is None:
        pytest.skip("slirp4netns is not installed (scripts/system-deps.sh installs it)")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.settimeout(0.1)
    probe = (
        "import socket\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'pwned')\n"
        "    print('reached', 'the host')\nexcept OSError as exc:\n    print('refused', exc)\n"
    )
    command = f"python3 -c {shlex.quote(probe)} && {PY_SETUP}"
    project = python_project("loopback", definition={"setupCommand": command})
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()
    log = (tmp_path / "logs" / "loopback" / "prepare.log").read_text()
    assert "\nrefused [Errno 111] Connection refused\n" in log
    assert "\nreached the host\n" not in log
    assert report.accepted


def test_a_phase_that_prints_without_end_is_cut(tmp_path: Path, sandbox_users: Users) -> None:
    from selfbench.environments.local.sandbox import (  # noqa: PLC0415
        LOG_LIMIT,
        Mounts,
        Sandbox,
        require_sandbox,
    )

    sandbox = Sandbox(tmp_path / "ws", sandbox_users, require_sandbox())
    log = tmp_path / "flood.log"
    result = sandbox.run("yes selfbench-flood", (), mounts=Mounts(), log=log, timeout=5)
    assert result.timed_out
    size = log.stat().st_size
    assert LOG_LIMIT < size < LOG_LIMIT + 200
    assert log.read_bytes().endswith(b" s\n")


def test_a_test_that_takes_more_than_the_tasks_memory_is_killed(tmp_path: Path) -> None:
    from selfbench.environments.local.cgroup import Limits, PhaseCgroup  # noqa: PLC0415

    group, why = PhaseCgroup.create(Limits(cpus=1, memory_mb=64, pids=16))
    if group is None:
        pytest.skip(why)
    group.close()
    hog = (
        "from calc import mul\n\n\ndef test_mul():\n"
        "    hoard = bytearray(1024 << 20)\n"
        "    assert mul(2, 3) == 6 and hoard\n"
    )
    resources = {"cpus": 1, "memoryMb": 256, "storageMb": 1024}
    project = python_project(
        "hog", tests={"tests/test_mul.py": hog}, definition={"resources": resources}
    )
    [report] = validate(
        [build(project, tmp_path / "build")],
        runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")),
    )
    assert not report.accepted
    assert report.reason == (
        "oracle: fail-to-pass failed with the gold patch; "
        "a process was killed for using more than the task's 256 MB of memory"
    )
