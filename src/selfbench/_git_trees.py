"""Git's own object names for a snapshot: archived with no attribute applied, and its tree id
rebuilt from its files. Each runs `_git.git` in a private bare repository of a scratch
directory (`_scratch`), so neither the user's repository nor its configuration is touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from selfbench._git import archive_tar, git
from selfbench._scratch import scratch_directory
from selfbench.bundle.base_commit import GITLINK_MODE, BaseCommit

__all__ = ["TreeEntry", "archive_plain", "read_base_commit", "tree_id"]

TreeEntry = tuple[str, str, str]
"""One file of a tree: its Git mode (`100644`), its object id and its path."""

_PLAIN_ATTRIBUTES = (
    b"* -export-subst -export-ignore -text -eol -ident -filter !working-tree-encoding\n"
)
"""`info/attributes`, which outranks a tree's own `.gitattributes`: every file archived as
its blob, nothing left out, substituted, converted or filtered."""


@contextmanager
def _bare(borrow: Path | None = None) -> Iterator[Path]:
    """A new bare repository; with `borrow`, that repository's objects are readable in it."""
    with scratch_directory("selfbench-git-") as path:
        git(path, "init", "--bare", "--quiet")
        if borrow is not None:
            objects = Path(git(borrow, "rev-parse", "--git-path", "objects").decode().strip())
            objects = objects if objects.is_absolute() else borrow / objects
            (path / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n")
        (path / "info").mkdir(exist_ok=True)
        (path / "info" / "attributes").write_bytes(_PLAIN_ATTRIBUTES)
        yield path


def archive_plain(repo: Path, commit: str, target: Path) -> str:
    """`archive_tar` of `commit` with no `.gitattributes` applied, so each file is its blob
    (no `export-subst`, `export-ignore`, line-ending conversion or filter); its SHA-256.

    Raises:
        GitError: git failed.
    """
    with _bare(repo) as plain:
        return archive_tar(plain, commit, target)


def read_base_commit(repo: Path, commit: str) -> BaseCommit:
    """The commit's raw object and the submodules its tree holds.

    Raises:
        GitError: `commit` cannot be read.
    """
    raw = git(repo, "cat-file", "commit", commit)
    submodules: dict[str, str] = {}
    for record in git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        info, _, path = record.partition(b"\t")
        fields = info.split(b" ")
        if len(fields) == 3 and fields[0].decode() == GITLINK_MODE:
            submodules[path.decode("utf-8", "surrogateescape")] = fields[2].decode()
    return BaseCommit(raw, submodules)


def tree_id(entries: Iterable[TreeEntry]) -> str:
    """The id of the tree holding exactly `entries` (Git computes it; the objects need not
    exist).

    Raises:
        GitError: an entry is not one Git can put in a tree.
    """
    listing = b"".join(
        f"{mode} {oid}\t".encode() + path.encode("utf-8", "surrogateescape") + b"\0"
        for mode, oid, path in entries
    )
    with _bare() as bare:
        env = {"GIT_INDEX_FILE": str(bare / "scratch-index")}
        git(bare, "update-index", "--add", "-z", "--index-info", stdin=listing, env=env)
        return git(bare, "write-tree", "--missing-ok", env=env).decode().strip()
