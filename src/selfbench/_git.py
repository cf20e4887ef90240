"""The one place that runs git. Arguments are lists, never shell text.

Every git command runs with no configuration that starts a program: no system or global
configuration, and the repository's own configuration (with what it includes) overridden for
every key that names a command (`SAFE_CONFIG`, and per driver the repository declares,
`DRIVER_CONFIG`), so hooks, fsmonitor, filters, signature programs, external diffs, textconv,
pagers, credential helpers and transport commands a repository (or an agent that edited its
`.git/config`) names never run. The overrides are `GIT_CONFIG_COUNT` entries, which outrank
every configuration file and reach the git processes git itself starts.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TypeVar

from selfbench._scratch import scratch_directory
from selfbench.errors import GitError

__all__ = [
    "DIFF_OPTIONS",
    "DRIVER_CONFIG",
    "SAFE_CONFIG",
    "GitStream",
    "archive_tar",
    "base_texts",
    "blob_texts",
    "configuration_listed_once",
    "git",
    "git_stream",
    "patched_texts",
    "safe_command",
    "scratch_index",
]

_K = TypeVar("_K")

# A fixed identity and clock, and no user or system configuration, so the same inputs always give
# the same commits and nothing in ~/.gitconfig changes what a command prints.
_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "selfbench",
    "GIT_AUTHOR_EMAIL": "selfbench@localhost",
    "GIT_COMMITTER_NAME": "selfbench",
    "GIT_COMMITTER_EMAIL": "selfbench@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}

SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),  # no fsmonitor hook
    ("core.hooksPath", os.devnull),  # no hooks: none can be found under /dev/null
    ("core.pager", "cat"),  # (and `--no-pager`)
    ("core.editor", ":"),  # ":" is git's own "do not start an editor"
    ("sequence.editor", ":"),
    ("core.askPass", ""),  # no password prompt program
    ("credential.helper", ""),  # empty: the list of helpers is reset
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("protocol.ext.allow", "never"),  # `ext::` URLs run a command
    ("log.showSignature", "false"),  # `git log` would run the signature program
    ("gpg.program", "false"),
    ("gpg.openpgp.program", "false"),
    ("gpg.x509.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("gc.auto", "0"),  # no `git gc --auto` started behind a command
    ("maintenance.auto", "false"),
)
"""The configuration keys that name a program, each with the value selfbench runs git with."""

DRIVER_CONFIG: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"filter\..+\.(?:clean|smudge|process)"), ""),  # empty: no filter runs
    (re.compile(r"filter\..+\.required"), "false"),
    (re.compile(r"diff\.external"), "false"),  # a diff that would run it fails; none runs
    (re.compile(r"diff\..+\.command"), "false"),
    (re.compile(r"diff\..+\.textconv"), "cat"),  # the text as it is
    (re.compile(r"merge\..+\.driver"), "false"),  # a conflict, never the driver
    (re.compile(r"credential\..+\.helper"), ""),
)
"""Keys named by a driver or remote the repository declares (`filter.<driver>.smudge`, a
`.gitattributes` line choosing the driver): each such key found in the repository's
configuration is overridden with the value beside its pattern (matched whole, lower case)."""

_FIRST_WINS = re.compile(r"remote\..+\.(?:uploadpack|receivepack)")
"""Keys git reads first-wins, so no override reaches them: a transport command (`_TRANSPORT`)
on a repository that sets one is refused."""
_TRANSPORT = frozenset({"fetch", "pull", "push", "ls-remote", "remote", "submodule"})

_INHERITED_CONFIG = re.compile(r"GIT_CONFIG_(?:PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)")

DIFF_OPTIONS = (
    "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/",
    "--dst-prefix=b/", "--submodule=short", "--ignore-submodules=none", "-O/dev/null",
)  # fmt: skip
"""`git diff` with every output choice a repository's own configuration could change pinned."""


def git(
    repo: Path,
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    ok: tuple[int, ...] = (0,),
) -> bytes:
    """Run `git -C repo args...` and return its standard output; `env` adds variables.

    `ok` lists the exit codes that are not failures (`git grep` exits 1 when nothing matched).

    Raises:
        GitError: git exited with a code not in `ok`; the message carries its last line of
            stderr.
    """
    argv, full_env = safe_command(repo, args, env)
    result = subprocess.run(
        argv,
        input=stdin,
        capture_output=True,
        env=full_env,
        check=False,
    )
    if result.returncode not in ok:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        last = detail[-1] if detail else f"exit code {result.returncode}"
        raise GitError(f"git {args[0]} failed: {last}")
    return result.stdout


def _base_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment without any configuration it passes to git, plus `_ENV`."""
    inherited = {k: v for k, v in os.environ.items() if not _INHERITED_CONFIG.fullmatch(k)}
    return {**inherited, **_ENV, **(extra or {})}


def _config_entries(entries: Sequence[tuple[str, str]]) -> dict[str, str]:
    """`GIT_CONFIG_COUNT` and its numbered key and value variables for `entries`."""
    env = {"GIT_CONFIG_COUNT": str(len(entries))}
    for index, (key, value) in enumerate(entries):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


_listed_once: dict[str, bytes] = {}
"""Each repository's `git config --list` while `configuration_listed_once` holds, by `-C` path."""
_holds = 0


@contextmanager
def configuration_listed_once() -> Iterator[None]:
    """While the block runs, each repository's configuration is listed once, not before every
    git command: for a command that runs no agent and changes no repository's configuration
    while it holds (`selfbench mine`, whose eleven or more git runs each listed it again, 5 ms
    apiece, several on the path to its last line). Outside it, every command lists anew (an
    agent may have changed the configuration since)."""
    global _holds  # noqa: PLW0603 - one count per process: the command's, not a thread's
    _holds += 1
    try:
        yield
    finally:
        _holds -= 1
        if not _holds:
            _listed_once.clear()


def _configuration(repo: Path, env: Mapping[str, str]) -> bytes:
    """`repo`'s configuration and what it includes, listed (NUL-separated records)."""
    if _holds and (kept := _listed_once.get(str(repo))) is not None:
        return kept
    listed = subprocess.run(
        ["git", "--no-pager", "-C", str(repo), "config", "--null", "--list", "--includes"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=dict(env),
        check=False,
    ).stdout
    if _holds:
        _listed_once[str(repo)] = listed
    return listed


def _driver_entries(repo: Path, env: Mapping[str, str], command: str) -> list[tuple[str, str]]:
    """The overrides for every driver key (`DRIVER_CONFIG`) set in `repo`'s configuration or
    a file it includes. Listing the configuration runs no program; when it cannot be read,
    the command itself fails on it the same way.

    Raises:
        GitError: `command` is a transport command and the configuration names a remote's
            program (`_FIRST_WINS`).
    """
    found: list[tuple[str, str]] = []
    for record in _configuration(repo, env).split(b"\0"):
        key = record.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        folded = key.lower()
        if command in _TRANSPORT and _FIRST_WINS.fullmatch(folded):
            raise GitError(f"git {command} refused: the repository's {key} names a program")
        for pattern, value in DRIVER_CONFIG:
            if pattern.fullmatch(folded) and (key, value) not in found:
                found.append((key, value))
    return found


def safe_command(
    repo: Path, args: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The argument list and environment that run `git -C repo args...` with no configuration
    that starts a program (`SAFE_CONFIG`, `DRIVER_CONFIG`), no pager, and `env` added: for a
    long-running git started elsewhere. Costs one `git config --list` of `repo`, read anew each
    time (an agent may have changed it since) unless `configuration_listed_once` holds.

    Raises:
        GitError: a transport command on a repository whose configuration names a remote's
            program (`remote.<name>.uploadpack`, which no override reaches).
    """
    base = _base_env(env)
    static = {**base, **_config_entries(SAFE_CONFIG)}
    entries = [*SAFE_CONFIG, *_driver_entries(repo, static, args[0] if args else "")]
    return ["git", "--no-pager", "-C", str(repo), *args], {**base, **_config_entries(entries)}


class _HashingWriter:
    """Writes through to a file, hashing every byte (SHA-256)."""

    def __init__(self, target: IO[bytes]) -> None:
        import hashlib  # noqa: PLC0415 - OpenSSL's bindings load for archives only, not each git run

        self._target = target
        self.sha256 = hashlib.sha256()

    def write(self, data: bytes, /) -> int:
        self.sha256.update(data)
        return self._target.write(data)


def archive_tar(repo: Path, commit: str, target: Path) -> str:
    """Write `git archive --format=tar` of a commit to `target`, gzipped on several cores.

    Returns the SHA-256 of the bytes written (hashed as they are written, not read back).

    Raises:
        GitError: git archive failed.
    """
    from selfbench._gzip import compress_stream  # noqa: PLC0415 - its thread pool: archives only

    argv, env = safe_command(repo, ("archive", "--format=tar", commit))
    with (
        target.open("wb") as raw,
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as process,
    ):
        assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
        out = _HashingWriter(raw)
        compress_stream(process.stdout, out)
        error = process.stderr.read() if process.stderr else b""
        if process.wait() != 0:
            lines = error.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git archive failed: {lines[-1] if lines else process.returncode}")
    return out.sha256.hexdigest()


class GitStream:
    """A git process started at once, its standard output read later: `with` it to read the
    stream; leaving the block closes it and checks git's exit (see `git_stream`)."""

    def __init__(self, repo: Path, args: Sequence[str]) -> None:
        argv, env = safe_command(repo, args)
        self.args = tuple(args)
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by `close`
        try:
            self._process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=self._errors, env=env
            )
        except BaseException:
            self._errors.close()
            raise
        self.stdout: IO[bytes] = self._process.stdout  # type: ignore[assignment] # stdout=PIPE

    def __enter__(self) -> IO[bytes]:
        return self.stdout

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.stdout.close()  # git, if it still writes, ends on a broken pipe
        code = self._process.wait()
        try:
            if kind is None and code not in {0, -13}:  # -13: SIGPIPE, the caller stopped early
                self._errors.seek(0)
                lines = self._errors.read().decode("utf-8", "replace").strip().splitlines()
                last = lines[-1] if lines else f"exit code {code}"
                raise GitError(f"git {self.args[0]} failed: {last}")
        finally:
            self._errors.close()

    def close(self) -> None:
        """Stop git if it still runs and release its pipe (whether or not it was read)."""
        self.__exit__(BaseException)


def git_stream(repo: Path, *args: str) -> GitStream:
    """Run `git -C repo args...` now; `with` the result to read its standard output as it
    comes.

    Raises:
        GitError: git exited non-zero (checked once the caller has read what it wanted).
    """
    return GitStream(repo, args)


@contextmanager
def scratch_index(
    repo: Path, treeish: str, *, private_objects: bool = False
) -> Iterator[dict[str, str]]:
    """A private index read from `treeish`: yields the variables that make `git` use it, so
    `git apply --cached` and `write-tree` touch neither the repository's index nor its work
    tree. With `private_objects`, new objects go to a private directory too, the repository's
    own objects borrowed read-only. Both are removed when the block ends, or by the next
    selfbench when this one is killed (`_scratch`).

    Raises:
        GitError: `treeish` cannot be read (or the repository's objects found).
    """
    with scratch_directory("selfbench-index-") as temp:
        env = {"GIT_INDEX_FILE": str(temp / "index")}
        if private_objects:
            shared = Path(git(repo, "rev-parse", "--git-path", "objects").decode().strip())
            shared = shared if shared.is_absolute() else repo / shared
            (temp / "objects").mkdir()
            env["GIT_OBJECT_DIRECTORY"] = str(temp / "objects")
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(shared.resolve())
        git(repo, "read-tree", treeish, env=env)
        yield env


def blob_texts(
    repo: Path,
    names: Mapping[_K, str],
    env: Mapping[str, str] | None = None,
    *,
    limit: int | None = None,
) -> dict[_K, str | None]:
    """For each key, the text of the blob its value names (`:path`, `commit:path`; undecodable
    bytes replaced), None when there is none, when the name cannot be asked for (a line break
    in it) or, with a `limit`, when the blob is larger: one `git cat-file --batch` (after one
    `--batch-check` of the sizes with a limit).

    Raises:
        GitError: git failed.
    """
    asked = {key: name for key, name in names.items() if "\n" not in name and "\r" not in name}
    if limit is not None and asked:
        sizes = _blob_sizes(repo, asked, env)
        asked = {key: name for key, name in asked.items() if 0 <= sizes[key] <= limit}
    texts: dict[_K, str | None] = dict.fromkeys(names)
    if not asked:
        return texts
    request = "".join(f"{name}\n" for name in asked.values()).encode("utf-8", "surrogateescape")
    out = git(repo, "cat-file", "--batch", stdin=request, env=env)
    at = 0
    for key in asked:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split(b" ")
        at = header_end + 1
        if len(header) != 3 or not header[2].isdigit():  # `oid type size`
            texts[key] = None  # `<name> missing` (or `ambiguous`): no content follows
            continue
        size = int(header[2])
        body = out[at : at + size]
        texts[key] = body.decode("utf-8", "replace") if header[1] == b"blob" else None
        at += size + 1
    return texts


def _blob_sizes(
    repo: Path, names: Mapping[_K, str], env: Mapping[str, str] | None
) -> dict[_K, int]:
    """Each named blob's size, -1 for a name that is no blob (`git cat-file --batch-check`)."""
    request = "".join(f"{name}\n" for name in names.values()).encode("utf-8", "surrogateescape")
    out = git(repo, "cat-file", "--batch-check", stdin=request, env=env).split(b"\n")
    sizes = {}
    for key, line in zip(names, out, strict=False):
        header = line.split(b" ")
        blob = len(header) == 3 and header[1] == b"blob" and header[2].isdigit()
        sizes[key] = int(header[2]) if blob else -1
    return {key: sizes.get(key, -1) for key in names}


def base_texts(repo: Path, base: str, paths: Sequence[str]) -> dict[str, str | None]:
    """The text of each path at `base` (undecodable bytes replaced), None where it is absent.

    Raises:
        GitError: `base` cannot be read.
    """
    git(repo, "cat-file", "-e", f"{base}^{{commit}}")
    return blob_texts(repo, {path: f"{base}:{path}" for path in paths})


def patched_texts(
    repo: Path, base: str, patch: bytes, paths: Sequence[str]
) -> dict[str, str | None]:
    """The text of each path once `patch` is applied to `base`, None where the patch leaves no
    file, read without touching `repo`: the patch goes to a private index whose new objects go
    to a private directory, the repository's own objects borrowed read-only.

    Raises:
        GitError: `base` is missing or the patch does not apply to it.
    """
    with scratch_index(repo, base, private_objects=True) as env:
        if patch.strip():  # `git apply` refuses an empty patch; it leaves the base as it is
            git(repo, "apply", "--cached", "-", stdin=patch, env=env)
        return blob_texts(repo, {path: f":{path}" for path in paths}, env)
