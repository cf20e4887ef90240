"""The snapshot is the base commit: archived with no attribute applied, its files rebuild the
commit's own tree, on a real repository holding everything `git archive` could bend."""

from __future__ import annotations

import gzip
import os
import subprocess
from pathlib import Path

import pytest

from selfbench._git_trees import archive_plain, read_base_commit, tree_id
from selfbench.bundle.base_commit import (
    GITLINK_MODE,
    commit_id,
    commit_tree,
    parse_base_commit,
    render_base_commit,
)
from selfbench.errors import BundleError
from selfbench.export._snapshot import SnapshotScan

SUBMODULE = "1234567890abcdef1234567890abcdef12345678"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a"}
    env |= {"GIT_COMMITTER_EMAIL": "a@x"}
    result = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, check=True
    )
    return result.stdout.decode().strip()


@pytest.fixture(scope="module")
def bent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A commit whose `git archive` would differ from its tree: export-subst, export-ignore,
    CRLF conversion, an ident; plus a symlink, an executable and a submodule."""
    repo = tmp_path_factory.mktemp("bent") / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    files = {
        ".gitattributes": "VERSION export-subst\nsecret.txt export-ignore\n"
        "*.txt text eol=crlf\nid.c ident\n",
        "VERSION": "$Format:%H$\n",
        "secret.txt": "left out by export-ignore\n",
        "notes.txt": "one\ntwo\n",
        "id.c": "/* $Id$ */\n",
        "run.sh": "#!/bin/sh\n",
        "deep/a/b/c.py": "x = 1\n",
    }
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    (repo / "run.sh").chmod(0o755)
    (repo / "link.py").symlink_to("deep/a/b/c.py")
    _git(repo, "add", "-A")
    _git(repo, "update-index", "--add", "--cacheinfo", f"{GITLINK_MODE},{SUBMODULE},vendor/lib")
    _git(repo, "commit", "-q", "-m", "bent\n\nbody")
    return repo, _git(repo, "rev-parse", "HEAD")


def test_the_plain_snapshot_rebuilds_the_commits_tree(
    tmp_path: Path, bent: tuple[Path, str]
) -> None:
    repo, commit = bent
    target = tmp_path / "repo.tar.gz"
    archive_plain(repo, commit, target)
    scan = SnapshotScan(unpack_limit=1 << 30)
    scan.feed(target.read_bytes())
    scan.finish()
    assert scan.problem is None
    assert scan.commit == commit
    base = read_base_commit(repo, commit)
    assert base.submodules == {"vendor/lib": SUBMODULE}
    assert commit_id(base.commit_object) == commit
    assert commit_tree(base.commit_object) == _git(repo, "rev-parse", f"{commit}^{{tree}}")
    entries = [(mode, oid, path) for path, (mode, oid) in scan.entries.items()]
    entries += [(GITLINK_MODE, oid, path) for path, oid in base.submodules.items()]
    assert tree_id(entries) == commit_tree(base.commit_object)
    assert scan.entries["run.sh"][0] == "100755"
    assert scan.entries["link.py"][0] == "120000"
    assert "vendor/lib" in scan.directories


def test_plain_git_archive_would_not_rebuild_it(bent: tuple[Path, str]) -> None:
    """The reason compile archives with attributes switched off."""
    repo, commit = bent
    archived = subprocess.run(
        ["git", "-C", str(repo), "archive", commit], capture_output=True, check=True
    ).stdout
    scan = SnapshotScan(unpack_limit=1 << 30)
    scan.feed(gzip.compress(archived))
    scan.finish()
    assert "secret.txt" not in scan.entries
    base = read_base_commit(repo, commit)
    entries = [(mode, oid, path) for path, (mode, oid) in scan.entries.items()]
    entries += [(GITLINK_MODE, oid, path) for path, oid in base.submodules.items()]
    assert tree_id(entries) != commit_tree(base.commit_object)


def test_the_base_commit_file_round_trips_and_refuses_junk(bent: tuple[Path, str]) -> None:
    repo, commit = bent
    base = read_base_commit(repo, commit)
    data = render_base_commit(base)
    assert parse_base_commit(data, source="f") == base
    for junk, message in (
        (b"[]", "f: not an object of exactly commitObject, submodules"),
        (b'{"commitObject": "!!", "submodules": {}}', "f: commitObject must be base64"),
        (
            b'{"commitObject": "", "submodules": {"a": "xyz"}}',
            "f: submodules must map paths to full commit ids",
        ),
    ):
        with pytest.raises(BundleError) as error:
            parse_base_commit(junk, source="f")
        assert str(error.value) == message
