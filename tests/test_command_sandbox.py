"""Author and reviewer commands run in the command sandbox (`selfbench.run.confine`).

Each command here is a real hostile program: it reads `/etc/shadow`, looks for a host secret
in its environment, leaves a `setsid` child behind that writes a file once the run is over,
and reports what it saw. It must see no secret, run as an unprivileged user, and its child
must die with it; the variables named by `--author-env` do reach it, and the real scripted
author still submits over MCP from inside.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import selfbench
from run_helpers import SCRIPTED_AUTHOR, Sample, sample
from selfbench.environments.local.uids import leased_users
from selfbench.errors import SandboxError
from selfbench.run.author import AuthorJob, author_with_command
from selfbench.run.coupling import review_with_command

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="the sandbox's uid switch needs root"),
]

PROMPT = (
    "Titles in German or Scandinavian languages come out of slugify mangled. Spell accented "
    "Latin text in ASCII before slugging it (ä as ae, ß as ss, other accents dropped), expose "
    "that as slugkit.transliterate, and give slugify two keyword-only options: separator "
    '(default "-", non-alphanumeric, else ValueError) and max_length (cut at a word boundary; '
    "below 1 is a ValueError)."
)
SECRET = "HOST_SECRET_TOKEN"  # noqa: S105 - a variable name
API_KEY = "AGENT_API_KEY"

HOSTILE = """\
import json, os, subprocess, sys
try:
    with open("/etc/shadow", encoding="utf-8", errors="replace") as handle:
        shadow = "root:" in handle.read()
except OSError:
    shadow = False
late = sys.argv[1]
subprocess.Popen(
    ["setsid", sys.executable, "-c",
     "import pathlib, sys, time; time.sleep(2); pathlib.Path(sys.argv[1]).write_text('late')",
     late],
    start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
seen = {
    "shadow": shadow,
    "secret": os.environ.get("HOST_SECRET_TOKEN"),
    "key": os.environ.get("AGENT_API_KEY"),
    "uid": os.getuid(),
    "root_home": sorted(os.listdir("/root")) if os.path.isdir("/root") else [],
}
if sys.argv[2:] == ["review"]:
    print(json.dumps({"verdict": "coupled", "findings": [json.dumps(seen)]}))
else:
    print("SEEN " + json.dumps(seen))
"""


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return sample(tmp_path_factory.mktemp("sample"))


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(SECRET, "s3cret-of-the-host")
    monkeypatch.setenv(API_KEY, "key-the-user-passed")
    script = tmp_path / "bin" / "hostile.py"
    script.parent.mkdir()
    script.write_text(HOSTILE, encoding="utf-8")
    return script


def _job(drafted: Sample, tmp_path: Path) -> AuthorJob:
    return AuthorJob(
        repo=drafted.repo.path,
        candidate=drafted.candidate,
        draft_dir=drafted.draft,
        out_dir=tmp_path / "out",
        log=tmp_path / "author.log",
        time_limit_sec=120,
        inactivity_sec=60,
        work_root=tmp_path / "work",
        env_names=(API_KEY,),
    )


def _assert_confined(seen: dict[str, object]) -> None:
    assert seen["shadow"] is False, "the command read /etc/shadow"
    assert seen["secret"] is None, "the command saw a host secret in its environment"
    assert seen["key"] == "key-the-user-passed", "--author-env did not pass the variable"
    assert seen["uid"] != 0, "the command ran as root"
    python = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve()}
    shown = {path.parts[2] for path in python if path.is_relative_to("/root")}
    root_home = seen["root_home"]
    assert isinstance(root_home, list)
    assert set(root_home) <= shown, "the command saw /root beyond its Python"


def test_an_author_command_sees_no_host_secret_and_its_children_die_with_it(
    drafted: Sample, tmp_path: Path, hostile: Path
) -> None:
    the_job = _job(drafted, tmp_path)
    late = tmp_path / "out" / ".late"
    result = author_with_command(f"{sys.executable} {hostile} {late}", the_job)
    assert not result.ok
    log = the_job.log.read_text(encoding="utf-8")
    assert "--- author command: python" in log
    (line,) = [line for line in log.splitlines() if line.startswith("SEEN ")]
    _assert_confined(json.loads(line.removeprefix("SEEN ")))
    time.sleep(3)  # the child would have written by now
    assert not late.exists(), "the author's setsid child outlived the run"
    assert all(path.stat().st_uid == 0 for path in the_job.out_dir.rglob("*"))


def test_a_reviewer_command_sees_no_host_secret(
    drafted: Sample, tmp_path: Path, hostile: Path
) -> None:
    late = tmp_path / "late"
    command = f"{sys.executable} {hostile} {late} review"
    verdict = review_with_command(
        command, drafted.draft, tmp_path / "reviewer.log", 60, env_names=(API_KEY,)
    )
    (finding,) = verdict.findings
    _assert_confined(json.loads(finding))
    time.sleep(3)
    assert not late.exists(), "the reviewer's setsid child outlived the run"


def test_the_scripted_author_submits_over_mcp_from_inside(drafted: Sample, tmp_path: Path) -> None:
    the_job = _job(drafted, tmp_path)
    command = f"{SCRIPTED_AUTHOR} --prompt {shlex.quote(PROMPT)}"
    result = author_with_command(command, the_job)
    assert result.ok, (result.reason, the_job.log.read_text(encoding="utf-8")[-2000:])
    assert result.task_dir is not None
    assert result.task_dir.parent == the_job.out_dir
    assert all(path.stat().st_uid == 0 for path in the_job.out_dir.rglob("*"))


# --- the author home (`run --author-home`) -----------------------------------------------------

LOGIN_TOKEN = "token-of-the-user"  # noqa: S105 - a test value
HOME_PROBE = """\
import json, os, pathlib, sys
home = pathlib.Path(os.environ["HOME"])
def read(path):
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        return type(error).__name__
(home / ".agent" / "refreshed").write_text("new token", encoding="utf-8")
seen = {
    "home": str(home),
    "uid": os.getuid(),
    "token": read(home / ".agent" / "token"),
    "shadow": "root:" in read(home / "shadow"),
    "names": sorted(os.listdir(home)),
}
if sys.argv[1:] == ["review"]:
    print(json.dumps({"verdict": "coupled", "findings": [json.dumps(seen)]}))
else:
    print("SEEN " + json.dumps(seen))
"""


@pytest.fixture
def login(tmp_path: Path) -> Path:
    """An agent CLI's login as root keeps it: a 0700 directory, the token 0600, with a link
    to /etc/shadow and a named pipe (which a naive copy would block on)."""
    home = tmp_path / "login"
    (home / ".agent").mkdir(parents=True)
    token = home / ".agent" / "token"
    token.write_text(LOGIN_TOKEN, encoding="utf-8")
    token.chmod(0o600)
    (home / ".agent").chmod(0o700)
    home.chmod(0o700)
    (home / "shadow").symlink_to("/etc/shadow")
    os.mkfifo(home / "pipe")
    return home


def _snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Each entry's mode, owner and size, links not followed."""
    infos = {str(path.relative_to(root)): path.lstat() for path in [root, *root.rglob("*")]}
    return {name: (info.st_mode, info.st_uid, info.st_size) for name, info in infos.items()}


def _assert_home_seen(seen: dict[str, object]) -> None:
    assert seen["home"] == "/home/agent"
    assert seen["uid"] != 0, "the command ran as root"
    assert seen["token"] == LOGIN_TOKEN, "the login was not readable inside"
    assert seen["shadow"] is False, "the home's link reached the host's /etc/shadow"
    assert seen["names"] == [".agent", "shadow"], "the named pipe was copied"


def _probe(tmp_path: Path) -> Path:
    probe = tmp_path / "bin" / "home_probe.py"  # the test's own directory is root's alone
    probe.parent.mkdir()
    probe.write_text(HOME_PROBE, encoding="utf-8")
    return probe


def _scratch_homes() -> list[Path]:
    from selfbench._scratch import scratch_home  # noqa: PLC0415

    home = scratch_home()
    return sorted(home.glob("selfbench-home-*")) if home is not None else []


def test_an_author_home_is_a_private_copy_the_command_may_change(
    drafted: Sample, tmp_path: Path, login: Path
) -> None:
    before = _snapshot(login)
    probe = _probe(tmp_path)
    the_job = replace(_job(drafted, tmp_path), home=login)
    result = author_with_command(f"{sys.executable} {probe}", the_job)
    assert not result.ok
    log = the_job.log.read_text(encoding="utf-8")
    (line,) = [line for line in log.splitlines() if line.startswith("SEEN ")]
    _assert_home_seen(json.loads(line.removeprefix("SEEN ")))
    assert _snapshot(login) == before, "the author home itself was changed"
    assert _scratch_homes() == [], "the private copy of the home outlived the command"


def test_a_reviewer_gets_the_author_home_too(drafted: Sample, tmp_path: Path, login: Path) -> None:
    before = _snapshot(login)
    probe = _probe(tmp_path)
    verdict = review_with_command(
        f"{sys.executable} {probe} review", drafted.draft, tmp_path / "reviewer.log", 60, home=login
    )
    (finding,) = verdict.findings
    _assert_home_seen(json.loads(finding))
    assert _snapshot(login) == before
    assert _scratch_homes() == []


# --- run by a user that is not root (`bwrap --unshare-user`) ----------------------------------

NON_ROOT_RUN = """\
import os, subprocess, sys
from pathlib import Path
from selfbench.run.confine import confined
clone, out, *command = sys.argv[1:]
argv, env = confined(command, cwd=Path(clone), env=dict(os.environ),
                     writable=[Path(clone), Path(out)])
assert "--unshare-user" in argv, argv
subprocess.run(argv, env=env, check=False)
"""

NON_ROOT_PROBE = """\
clone=$1 out=$2 root_only=$3 private=${4#*=} outside=${5#*=}
setsid sh -c "sleep 2; echo late > $clone/.late" </dev/null >/dev/null 2>&1 &
can() { if "$@" >/dev/null 2>&1; then echo true; else echo false; fi; }
{
  echo "uid=$(id -u)"
  echo "shadow=$(can cat /etc/shadow)"
  echo "root_only=$(can cat "$root_only")"
  echo "private=$(can cat "$private")"
  echo "clone=$(can sh -c "echo written > $clone/new.txt")"
  echo "out=$(can sh -c "echo written > $out/new.txt")"
  echo "outside=$(can sh -c "echo written > $outside/escaped.txt")"
  echo "root_home=$(can ls -A /root)"
} > "$out/seen.tmp"
mv "$out/seen.tmp" "$out/seen.txt"
sleep 120
"""


@pytest.fixture
def shared_base() -> Iterator[Path]:
    """A directory a non-root user can reach (the test's own is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="selfbench-nonroot-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                pids.append(int(entry.name))
    return pids


def _wait_for(path: Path, process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, "the sandbox ended before the probe reported"
        assert time.monotonic() < deadline, f"no {path.name} after {seconds:g} s"
        time.sleep(0.1)


def test_a_command_run_by_a_user_that_is_not_root_is_confined_and_dies_with_the_run(
    shared_base: Path,
) -> None:
    with leased_users() as users:
        uid = users.agent
        clone, out, mine = shared_base / "clone", shared_base / "out", shared_base / "mine"
        for directory in (clone, out, mine):
            directory.mkdir()
            os.chown(directory, uid, uid)
        (shared_base / "root").mkdir()
        root_only = shared_base / "root" / "root-only.txt"  # named: its directory is bound
        root_only.write_text("root's secret", encoding="utf-8")
        root_only.chmod(0o600)
        private = mine / "private.txt"  # the user's own, outside what the command is given
        private.write_text("the user's secret", encoding="utf-8")
        os.chown(private, uid, uid)
        (shared_base / "bin").mkdir()
        probe = shared_base / "bin" / "probe.sh"  # named: its directory is bound
        probe.write_text(NON_ROOT_PROBE, encoding="utf-8")
        # not named as paths, so not bound: the command must not reach them at all
        unnamed = [f"private={private}", f"outside={mine}"]
        command = ["sh", str(probe), str(clone), str(out), str(root_only), *unnamed]
        ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(Path(selfbench.__file__).parents[1])}
        runner = [sys.executable, "-c", NON_ROOT_RUN, str(clone), str(out), *command]
        run = subprocess.Popen(["setpriv", *ids, "--", *runner], env=env, cwd=shared_base)
        try:
            _wait_for(out / "seen.txt", run, 60)
        finally:
            run.kill()  # selfbench killed: everything it started in the sandbox goes with it
            run.wait()
        lines = (out / "seen.txt").read_text(encoding="utf-8").splitlines()
        seen = dict(line.split("=", 1) for line in lines)
        time.sleep(3)  # the setsid child would have written by now
        assert seen == {
            "uid": str(uid),
            "shadow": "false",
            "root_only": "false",
            "private": "false",
            "clone": "true",
            "out": "true",
            "outside": "false",
            "root_home": "false",
        }
        assert not (mine / "escaped.txt").exists()
        assert not (clone / ".late").exists(), "the command's setsid child outlived the run"
        assert _processes_of(uid) == [], "a process of the command outlived the run"


def test_an_author_home_that_cannot_be_copied_stops_the_run(
    drafted: Sample, tmp_path: Path
) -> None:
    gone = tmp_path / "gone"  # checked when the run started, removed since
    the_job = replace(_job(drafted, tmp_path), home=gone)
    with pytest.raises(SandboxError, match=f"^cannot copy the author home {gone}: "):
        author_with_command(f"{sys.executable} -c pass", the_job)
    assert _scratch_homes() == []
