"""The one place that runs git. Arguments are lists, never shell text."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from selfbench._gzip import compress_stream
from selfbench._scratch import scratch_directory
from selfbench.errors import GitError

__all__ = [
    "DIFF_OPTIONS",
    "archive_tar",
    "base_texts",
    "git",
    "git_stream",
    "patched_texts",
    "scratch_index",
]

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
    env = {**os.environ, **_ENV, **(env or {})}
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )
    if result.returncode not in ok:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        last = detail[-1] if detail else f"exit code {result.returncode}"
        raise GitError(f"git {args[0]} failed: {last}")
    return result.stdout


class _HashingWriter:
    """Writes through to a file, hashing every byte (SHA-256)."""

    def __init__(self, target: IO[bytes]) -> None:
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
    with (
        target.open("wb") as raw,
        subprocess.Popen(
            ["git", "-C", str(repo), "archive", "--format=tar", commit],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **_ENV},
        ) as process,
    ):
        assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
        out = _HashingWriter(raw)
        compress_stream(process.stdout, out)
        error = process.stderr.read() if process.stderr else b""
        if process.wait() != 0:
            lines = error.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git archive failed: {lines[-1] if lines else process.returncode}")
    return out.sha256.hexdigest()


@contextmanager
def git_stream(repo: Path, *args: str) -> Iterator[IO[bytes]]:
    """Run `git -C repo args...` and yield its standard output as a stream, read as it comes.

    Raises:
        GitError: git exited non-zero (checked once the caller has read what it wanted).
    """
    with (
        tempfile.TemporaryFile() as errors,
        subprocess.Popen(
            ["git", "-C", str(repo), *args],
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, **_ENV},
        ) as process,
    ):
        assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
        try:
            yield process.stdout
        finally:
            process.stdout.close()
        code = process.wait()
        if code not in {0, -13}:  # -13: SIGPIPE, the caller stopped reading early
            errors.seek(0)
            lines = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git {args[0]} failed: {lines[-1] if lines else f'exit code {code}'}")


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


def _blob_texts(
    repo: Path, names: Mapping[str, str], env: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """For each key, the text of the blob its value names (`:path`, `commit:path`; undecodable
    bytes replaced), None when there is none: one `git cat-file --batch`."""
    if not names:
        return {}
    request = "".join(f"{name}\n" for name in names.values()).encode("utf-8", "surrogateescape")
    out = git(repo, "cat-file", "--batch", stdin=request, env=env)
    texts: dict[str, str | None] = {}
    at = 0
    for key in names:
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


def base_texts(repo: Path, base: str, paths: Sequence[str]) -> dict[str, str | None]:
    """The text of each path at `base` (undecodable bytes replaced), None where it is absent.

    Raises:
        GitError: `base` cannot be read.
    """
    git(repo, "cat-file", "-e", f"{base}^{{commit}}")
    return _blob_texts(repo, {path: f"{base}:{path}" for path in paths})


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
        return _blob_texts(repo, {path: f":{path}" for path in paths}, env)
