"""A repository's own configuration never starts a program when selfbench runs git on it.

Each attack is a real repository whose `.git/config` (or a file it includes, or a driver its
`.gitattributes` chooses) names a program that would create a marker file; selfbench's git
(`selfbench._git`, and the long-running git of `mine`) runs the command the feature runs, and
the marker must not appear. The table of overridden keys is checked row by row.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from selfbench._git import archive_tar, git
from selfbench.errors import GitError
from selfbench.mine.git_history import read_history

_CLEAN_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
}


def _run(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    """The test's own git (not selfbench's), to build the hostile repository."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        env=_CLEAN_ENV,
        check=True,
    )
    return done.stdout.decode().strip()


@dataclass(frozen=True)
class Hostile:
    """A repository with two commits, a program that touches `marker`, and where things go."""

    repo: Path
    program: str
    marker: Path
    tmp: Path

    def config(self, key: str, value: str) -> None:
        _run(self.repo, "config", key, value)

    def commit_attributes(self, line: str) -> None:
        (self.repo / ".gitattributes").write_text(line + "\n", encoding="utf-8")
        _run(self.repo, "add", ".gitattributes")
        _run(self.repo, "commit", "-q", "-m", "attributes")


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    repo = tmp_path / "repo"
    repo.mkdir()
    _run(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("one\n", encoding="utf-8")
    _run(repo, "add", "f.txt")
    _run(repo, "commit", "-q", "-m", "one")
    (repo / "f.txt").write_text("one\ntwo\n", encoding="utf-8")
    _run(repo, "commit", "-q", "-a", "-m", "two")
    marker = tmp_path / "MARKER"
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    program.chmod(0o755)
    return Hostile(repo, str(program), marker, tmp_path)


def _quietly(action: Callable[[], object]) -> None:
    """Run a command that may fail once the program it would have started is refused."""
    with contextlib.suppress(GitError):
        action()


def _sign_head(h: Hostile) -> None:
    """Give HEAD a (bogus) signature, so `log.showSignature` would verify it."""
    header, body = _run(h.repo, "cat-file", "commit", "HEAD").split("\n\n", 1)
    signature = " -----BEGIN PGP SIGNATURE-----\n \n wsBcBAABCAAQ\n -----END PGP SIGNATURE-----"
    signed = f"{header}\ngpgsig{signature}\n\n{body}\n"
    commit = _run(h.repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed.encode())
    _run(h.repo, "update-ref", "refs/heads/main", commit)


def _fsmonitor(h: Hostile) -> None:
    h.config("core.fsmonitor", h.program)
    git(h.repo, "status", "--porcelain")


def _hooks_path(h: Hostile) -> None:
    hooks = h.tmp / "hooks"
    hooks.mkdir()
    (hooks / "post-checkout").symlink_to(h.program)
    h.config("core.hooksPath", str(hooks))
    git(h.repo, "checkout", "-q", "--detach", "HEAD~1")


def _default_hooks(h: Hostile) -> None:
    hook = h.repo / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(exist_ok=True)
    hook.symlink_to(h.program)
    git(h.repo, "checkout", "-q", "--detach", "HEAD~1")


def _smudge_in_archive(h: Hostile) -> None:
    h.commit_attributes("*.txt filter=evil")
    h.config("filter.evil.smudge", h.program)
    archive_tar(h.repo, "HEAD", h.tmp / "snapshot.tar.gz")


def _clean_on_status(h: Hostile) -> None:
    h.commit_attributes("*.txt filter=evil")
    h.config("filter.evil.clean", h.program)
    (h.repo / "f.txt").write_text("changed\n", encoding="utf-8")
    git(h.repo, "status", "--porcelain")


def _process_filter_on_checkout(h: Hostile) -> None:
    h.commit_attributes("*.txt filter=evil")
    h.config("filter.evil.process", h.program)
    (h.repo / "f.txt").unlink()
    _quietly(lambda: git(h.repo, "checkout", "-q", "--", "f.txt"))


def _subsection_with_equals(h: Hostile) -> None:
    h.commit_attributes("*.txt filter=a=b")
    h.config("filter.a=b.smudge", h.program)
    archive_tar(h.repo, "HEAD", h.tmp / "snapshot.tar.gz")


def _external_diff(h: Hostile) -> None:
    h.config("diff.external", h.program)
    _quietly(lambda: git(h.repo, "diff", "HEAD~1", "HEAD"))


def _diff_driver_command(h: Hostile) -> None:
    h.commit_attributes("*.txt diff=evil")
    h.config("diff.evil.command", h.program)
    _quietly(lambda: git(h.repo, "diff", "HEAD~2", "HEAD"))


def _textconv(h: Hostile) -> None:
    h.commit_attributes("*.txt diff=evil")
    h.config("diff.evil.textconv", h.program)
    git(h.repo, "log", "-p", "-3")


def _signature_program_in_mine(h: Hostile) -> None:
    _sign_head(h)
    h.config("log.showSignature", "true")
    h.config("gpg.program", h.program)
    list(read_history(h.repo, rev="HEAD"))


def _upload_pack(h: Hostile) -> None:
    h.config("remote.origin.url", str(h.repo))
    h.config("remote.origin.uploadpack", h.program)
    _quietly(lambda: git(h.repo, "fetch", "-q", "origin"))


def _ssh_command(h: Hostile) -> None:
    h.config("remote.origin.url", "ssh://127.0.0.1:1/nothing")
    h.config("core.sshCommand", h.program)
    _quietly(lambda: git(h.repo, "ls-remote", "origin"))


def _included_fsmonitor(h: Hostile) -> None:
    included = h.tmp / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = {h.program}\n", encoding="utf-8")
    h.config("include.path", str(included))
    git(h.repo, "status", "--porcelain")


def _include_if_filter(h: Hostile) -> None:
    included = h.tmp / "included.config"
    included.write_text(f'[filter "evil"]\n\tsmudge = {h.program}\n', encoding="utf-8")
    h.commit_attributes("*.txt filter=evil")
    h.config(f"includeIf.gitdir:{h.repo}/.git.path", str(included))
    archive_tar(h.repo, "HEAD", h.tmp / "snapshot.tar.gz")


ATTACKS: dict[str, Callable[[Hostile], None]] = {
    "core.fsmonitor on status": _fsmonitor,
    "core.hooksPath post-checkout hook": _hooks_path,
    ".git/hooks post-checkout hook": _default_hooks,
    "smudge filter in the snapshot archive": _smudge_in_archive,
    "clean filter on status": _clean_on_status,
    "process filter on checkout": _process_filter_on_checkout,
    "filter named with '=' in it": _subsection_with_equals,
    "diff.external": _external_diff,
    "diff driver command": _diff_driver_command,
    "diff driver textconv": _textconv,
    "gpg.program through log.showSignature in mine's history walk": _signature_program_in_mine,
    "remote uploadpack on fetch": _upload_pack,
    "core.sshCommand": _ssh_command,
    "include.path naming a file with core.fsmonitor": _included_fsmonitor,
    "includeIf naming a file with a smudge filter": _include_if_filter,
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_repository_configuration_runs_no_program(hostile: Hostile, attack: str) -> None:
    ATTACKS[attack](hostile)
    assert not hostile.marker.exists(), f"{attack}: the repository's program ran"


def _set_everywhere(h: Hostile, key: str) -> None:
    """The key set in the repository's configuration and again in a file it includes."""
    included = h.tmp / "included.config"
    section, _, name = key.rpartition(".")
    head, _, subsection = section.partition(".")
    header = f'[{head} "{subsection}"]' if subsection else f"[{head}]"
    included.write_text(f"{header}\n\t{name} = {h.program}\n", encoding="utf-8")
    h.config(key, h.program)
    h.config("include.path", str(included))


def _safe_rows() -> list[tuple[str, str]]:
    from selfbench._git import SAFE_CONFIG  # noqa: PLC0415 - the table under test

    return list(SAFE_CONFIG)


_DRIVER_EXAMPLES = (
    "diff.external",
    "filter.Evil.clean",
    "filter.evil.smudge",
    "filter.evil.process",
    "filter.evil.required",
    "diff.evil.command",
    "diff.evil.textconv",
    "merge.evil.driver",
    "credential.https://example.com.helper",
)


@pytest.mark.parametrize(("key", "value"), _safe_rows())
def test_each_key_that_names_a_program_is_overridden(
    hostile: Hostile, key: str, value: str
) -> None:
    _set_everywhere(hostile, key)
    seen = git(hostile.repo, "config", "--get-all", key).decode().splitlines()
    assert seen[-1] == value, seen


@pytest.mark.parametrize("key", _DRIVER_EXAMPLES)
def test_each_driver_key_the_repository_sets_is_overridden(hostile: Hostile, key: str) -> None:
    from selfbench._git import DRIVER_CONFIG  # noqa: PLC0415 - the table under test

    _set_everywhere(hostile, key)
    (expected,) = {value for pattern, value in DRIVER_CONFIG if pattern.fullmatch(key.lower())}
    seen = git(hostile.repo, "config", "--get-all", key).decode().splitlines()
    assert seen[-1] == expected, seen


def test_within_a_listed_once_block_the_configuration_is_listed_once(hostile: Hostile) -> None:
    """`mine` lists a repository's configuration once for all its git runs: a driver it set
    before is overridden in every run; one set later (no agent runs while mine does) is not
    listed again until the block ends, and every command outside it lists anew."""
    from selfbench._git import DRIVER_CONFIG, configuration_listed_once  # noqa: PLC0415

    (expected,) = {value for pattern, value in DRIVER_CONFIG if pattern.fullmatch("diff.external")}
    hostile.config("diff.external", hostile.program)
    with configuration_listed_once():
        assert git(hostile.repo, "config", "--get", "diff.external").decode().strip() == expected
        hostile.config("filter.evil.clean", hostile.program)
        seen = git(hostile.repo, "config", "--get", "filter.evil.clean").decode().strip()
        assert seen == hostile.program  # listed before it was set: not overridden in the block
        assert git(hostile.repo, "config", "--get", "diff.external").decode().strip() == expected
    (clean,) = {value for pattern, value in DRIVER_CONFIG if pattern.fullmatch("filter.evil.clean")}
    assert git(hostile.repo, "config", "--get", "filter.evil.clean").decode().strip() == clean


def test_a_transport_command_is_refused_where_a_remote_names_a_program(hostile: Hostile) -> None:
    hostile.config("remote.origin.url", str(hostile.repo))
    hostile.config("remote.origin.receivepack", hostile.program)
    with pytest.raises(GitError, match=r"remote\.origin\.receivepack names a program"):
        git(hostile.repo, "push", "origin", "HEAD:refs/heads/other")
    assert not hostile.marker.exists()


# --- through selfbench's commands: a pager, credential helpers and a merge driver -------------

_COMMAND_TIMEOUT = 600


def _hostile_config(program: str) -> str:
    """Configuration naming `program` as the pager (of every command), as credential helpers
    (plain, shell `!` form and per URL) and as the merge driver `.git/info/attributes` chooses
    for every path."""
    return (
        f"[core]\n\tpager = {program}\n"
        + "".join(f"[pager]\n\t{command} = {program}\n" for command in ("log", "diff", "show"))
        + f"[credential]\n\thelper = {program}\n\thelper = !{program}\n"
        + f'[credential "https://github.com"]\n\thelper = {program}\n'
        + f'[merge "evil"]\n\tname = evil\n\tdriver = {program} %O %A %B\n'
    )


def _arm(repo: Path, program: str) -> None:
    """Give the repository the hostile configuration and the attributes that choose the driver."""
    with (repo / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write(_hostile_config(program))
    info = repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("* merge=evil\n", encoding="utf-8")


@dataclass(frozen=True)
class HostileSample:
    """The sample project (a GitHub remote, one merged pull request), armed."""

    repo: Path
    marker: Path
    program: str
    tmp: Path


@pytest.fixture(scope="module")
def hostile_sample(tmp_path_factory: pytest.TempPathFactory) -> HostileSample:
    from selfbench.demo import build_sample_repository  # noqa: PLC0415 - the sample project

    tmp = tmp_path_factory.mktemp("hostile-sample")
    repo = build_sample_repository(tmp).path
    _run(repo, "remote", "add", "origin", "https://github.com/example/slugkit.git")
    marker = tmp / "MARKER"
    program = tmp / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n", encoding="utf-8")
    program.chmod(0o755)
    _arm(repo, str(program))
    return HostileSample(repo, marker, str(program), tmp)


def _at_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run `python -m selfbench argv` with a terminal as its standard streams (where git would
    start a pager), and its exit code and what it printed."""
    leader, follower = pty.openpty()
    paths = [str(Path(__file__).resolve().parents[1] / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p), "TERM": "xterm"}
    env.pop("GIT_PAGER", None)
    env.pop("PAGER", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "selfbench", *argv],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    printed = bytearray()
    with contextlib.suppress(OSError):  # EIO once the terminal's last writer is gone
        while chunk := os.read(leader, 65536):
            printed += chunk
    os.close(leader)
    return process.wait(timeout=_COMMAND_TIMEOUT), printed.decode("utf-8", "replace")


def test_mine_at_a_terminal_starts_no_pager_or_helper_the_repository_names(
    hostile_sample: HostileSample,
) -> None:
    out = hostile_sample.tmp / "candidates.jsonl"
    argv = ["mine", str(hostile_sample.repo), "--no-sessions", "--out", str(out)]
    code, printed = _at_a_terminal(argv, hostile_sample.tmp)
    assert code == 0, printed[-2000:]
    assert out.read_text(encoding="utf-8").strip(), printed[-2000:]
    assert not hostile_sample.marker.exists(), "mine ran the repository's pager or helper"


@pytest.mark.sandbox
def test_draft_starts_no_pager_helper_or_merge_driver_the_repository_names(
    hostile_sample: HostileSample,
) -> None:
    candidates = hostile_sample.tmp / "draft-candidates.jsonl"
    mined = ["mine", str(hostile_sample.repo), "--no-sessions", "--out", str(candidates)]
    assert _at_a_terminal(mined, hostile_sample.tmp)[0] == 0
    first = json.loads(candidates.read_text(encoding="utf-8").splitlines()[0])
    out = hostile_sample.tmp / "tasks"
    argv = ["draft", first["id"], "--candidates", str(candidates), "--repo"]
    argv += [str(hostile_sample.repo), "--out", str(out), "--no-quality"]
    code, printed = _at_a_terminal(argv, hostile_sample.tmp)
    assert code == 0, printed[-2000:]
    assert list(out.glob("*/definition.json")), printed[-2000:]
    assert not hostile_sample.marker.exists(), "draft ran the repository's program"


def test_an_author_that_arms_its_clone_gets_no_program_run_by_selfbench(
    tmp_path: Path,
) -> None:
    """`run`'s author stage: the author command (the attacker here) writes the pager, helpers
    and merge driver into its clone's configuration, then submits; selfbench's own git on the
    clone afterwards (the submission's checks) must start none of them."""
    from run_helpers import SCRIPTED_AUTHOR, sample  # noqa: PLC0415 - the run's fixtures
    from selfbench.run.author import AuthorJob, author_with_command  # noqa: PLC0415

    drafted = sample(tmp_path)
    marker = tmp_path / "MARKER"
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n", encoding="utf-8")
    program.chmod(0o755)
    arm = tmp_path / "bin" / "arm.sh"  # the clone is the command's directory
    arm.parent.mkdir()
    config = _hostile_config(str(program)).replace("\\", "\\\\")
    arm.write_text(
        f"printf '%s' '{config}' >> .git/config\n"
        "mkdir -p .git/info && echo '* merge=evil' > .git/info/attributes\n"
        "cat .git/config\n"  # into the log: the clone was armed
        f'exec {SCRIPTED_AUTHOR} --prompt "$1"\n',
        encoding="utf-8",
    )
    job = AuthorJob(
        repo=drafted.repo.path,
        candidate=drafted.candidate,
        draft_dir=drafted.draft,
        out_dir=tmp_path / "out",
        log=tmp_path / "author.log",
        time_limit_sec=120,
        inactivity_sec=60,
        work_root=tmp_path / "work",
    )
    result = author_with_command(f"sh {arm} 'Spell accented text in ASCII.'", job)
    log = job.log.read_text(encoding="utf-8")
    assert result.ok, (result.reason, log[-2000:])
    assert f"driver = {program} %O %A %B" in log, log[-2000:]
    assert not marker.exists(), "selfbench ran a program the author's clone names"
