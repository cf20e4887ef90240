"""Property tests: the parser against real git, and against arbitrary bytes."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from selfbench.errors import PatchError
from selfbench.patches import Patch, parse_patch
from strategies import Edit, FileSpec, Tree, edits, mutated_patches, patch_like, trees

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "LC_ALL": "C",
}
_STATUSES = {
    "A": {"added"},
    "D": {"deleted"},
    "R": {"renamed"},
    "C": {"copied"},
    "M": {"modified", "mode-only", "binary"},
}
_SIGNATURE = b"-- \n2.39.5\n\n"


class Entry(NamedTuple):
    """What git reports for one file of a diff, or what we parsed for it."""

    status: str
    old: str | None
    new: str | None
    changed: int | None  # None: binary in numstat
    binary: bool  # ours: the section holds binary data; git's: numstat counts no lines


def git(repo: Path, *args: str) -> bytes:
    """Run git in `repo` with no user or system configuration; return its output."""
    result = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, env=_ENV, check=False
    )
    assert result.returncode == 0, (args, result.stderr.decode(errors="replace"))
    return result.stdout


def _write(path: Path, content: bytes, *, executable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o755 if executable else 0o644)


def _free(repo: Path, tree: Tree, target: str) -> bool:
    """Whether a new file may be created at `target` (no file or directory in the way)."""
    parts = target.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts))]
    blocked = any(path == target or path.startswith(target + "/") for path in tree)
    in_the_way = os.path.lexists(repo / target)  # an emptied directory, say
    return not blocked and not in_the_way and not any(prefix in tree for prefix in prefixes)


def _apply(repo: Path, tree: Tree, edit: Edit) -> None:
    """Apply one edit to the work tree and keep `tree` in step with it."""
    if edit.kind == "add":
        if _free(repo, tree, edit.target):
            _write(repo / edit.target, edit.content, executable=False)
            tree[edit.target] = FileSpec(edit.content, executable=False)
        return
    if not tree:
        return
    path = sorted(tree)[edit.index % len(tree)]
    spec = tree[path]
    if edit.kind == "modify":
        content = _modify(spec.content, edit.content)
        _write(repo / path, content, executable=spec.executable)
        tree[path] = FileSpec(content, spec.executable)
    elif edit.kind == "binary":
        _write(repo / path, spec.content + b"\0\1\2", executable=spec.executable)
        tree[path] = FileSpec(spec.content + b"\0\1\2", spec.executable)
    elif edit.kind == "chmod":
        _write(repo / path, spec.content, executable=not spec.executable)
        tree[path] = FileSpec(spec.content, not spec.executable)
    elif edit.kind == "delete":
        (repo / path).unlink()
        del tree[path]
    elif not edit.target.startswith(path + "/") and _free(
        repo, {other: spec for other, spec in tree.items() if other != path}, edit.target
    ):
        _move_or_copy(repo, tree, path, edit)


def _move_or_copy(repo: Path, tree: Tree, path: str, edit: Edit) -> None:
    spec = tree[path]
    (repo / edit.target).parent.mkdir(parents=True, exist_ok=True)
    if edit.kind == "rename" and edit.target != path:
        git(repo, "add", "--all")  # git mv moves only tracked files
        git(repo, "mv", "--", path, edit.target)
        del tree[path]
    elif edit.target in tree:
        return
    content = spec.content
    if edit.content[:1] == b"+":  # sometimes edit the moved or copied file a little too
        content += b"one more line\n"
    _write(repo / edit.target, content, executable=spec.executable)
    tree[edit.target] = FileSpec(content, spec.executable)


def _modify(content: bytes, new: bytes) -> bytes:
    """Replace, insert or drop some lines, keeping most of the file."""
    lines = content.splitlines(keepends=True)
    if not lines:
        return new
    middle = len(lines) // 2
    replacement = new.splitlines(keepends=True)[:3]
    return b"".join(lines[:middle] + replacement + lines[middle + 1 :])


def _numstat(output: bytes) -> list[int | None]:
    """Per file, its changed lines; None where git counts none because the file is binary."""
    fields = output.split(b"\0")
    result: list[int | None] = []
    index = 0
    while index < len(fields) - 1:
        added, deleted, path = fields[index].split(b"\t", 2)
        result.append(None if added == b"-" else int(added) + int(deleted))
        index += 1 if path else 3  # a rename or copy puts its two paths in the next fields
    return result


def _name_status(output: bytes) -> list[tuple[str, str, str | None]]:
    """Per file, its status letter, its path and, for a rename or copy, the new path."""
    fields = [field.decode("utf-8", "surrogateescape") for field in output.split(b"\0")]
    result: list[tuple[str, str, str | None]] = []
    index = 0
    while index < len(fields) - 1:
        letter = fields[index][0]
        if letter in "RC":
            result.append((letter, fields[index + 1], fields[index + 2]))
            index += 3
        else:
            result.append((letter, fields[index + 1], None))
            index += 2
    return result


def git_entries(repo: Path, options: list[str]) -> list[Entry]:
    """What `git diff --cached` reports per file, from --name-status and --numstat."""
    names = _name_status(git(repo, "diff", "--cached", "-z", "--name-status", *options, "HEAD"))
    counts = _numstat(git(repo, "diff", "--cached", "-z", "--numstat", *options, "HEAD"))
    assert len(names) == len(counts)
    entries = []
    for (letter, first, second), changed in zip(names, counts, strict=True):
        old = None if letter == "A" else first
        new = None if letter == "D" else (second or first)
        entries.append(Entry(letter, old, new, changed, binary=changed is None))
    return entries


def our_entries(patch: Patch) -> list[Entry]:
    """Our parse, shaped like git's report (the status kept as ours)."""
    return [
        Entry(change.status, change.old_path, change.new_path, change.changed_lines, change.binary)
        for change in patch.files
    ]


def assert_agrees(ours: list[Entry], theirs: list[Entry]) -> None:
    """Section by section: same paths, a matching status, the same changed lines."""
    assert [(e.old, e.new) for e in ours] == [(e.old, e.new) for e in theirs]
    for mine, git_entry in zip(ours, theirs, strict=True):
        assert mine.status in _STATUSES[git_entry.status], (mine, git_entry)
        expected = 0 if git_entry.changed is None else git_entry.changed
        assert mine.changed == expected, (mine, git_entry)
        if mine.binary:
            assert git_entry.binary, (mine, git_entry)


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    tree=trees(),
    data=st.data(),
    options=st.sampled_from(
        [["-M", "-C"], ["-M", "-C", "--find-copies-harder"], ["-M", "-C", "-B"], ["--no-renames"]]
    ),
    quote_path=st.booleans(),
)
def test_parse_agrees_with_git(
    tree: Tree, data: st.DataObject, options: list[str], quote_path: bool
) -> None:
    with tempfile.TemporaryDirectory() as temp:
        repo = Path(temp)
        git(repo, "init", "--quiet")
        git(repo, "config", "core.quotePath", "true" if quote_path else "false")
        for path, spec in tree.items():
            _write(repo / path, spec.content, executable=spec.executable)
        git(repo, "add", "--all")
        git(repo, "commit", "--quiet", "--allow-empty", "--message", "base")
        current = dict(tree)
        for edit in data.draw(edits(len(tree))):
            _apply(repo, current, edit)
        git(repo, "add", "--all")
        patch_bytes = git(repo, "diff", "--cached", "--binary", *options, "HEAD")
        theirs = git_entries(repo, options)
    if not patch_bytes:  # the edits undid each other
        assert theirs == []
        return
    patch = parse_patch(patch_bytes)
    for change in patch.files:
        event(f"status {change.status}")
    assert_agrees(our_entries(patch), theirs)
    assert b"".join(patch.section(change) for change in patch.files) == patch_bytes
    # A mail signature after the last hunk, and CRLF line ends throughout, change nothing.
    assert our_entries(parse_patch(patch_bytes + _SIGNATURE)) == our_entries(patch)
    assert our_entries(parse_patch(patch_bytes.replace(b"\n", b"\r\n"))) == our_entries(patch)


def _check_any_bytes(data: bytes) -> None:
    lenient = parse_patch(data, lenient=True)
    message = None
    try:
        strict = parse_patch(data)
    except PatchError as exc:
        message = str(exc)
    if message is None:
        assert strict == lenient  # what strict accepts, lenient reads the same way
    else:
        assert message
        event(message.partition(" at line ")[0].partition(": ")[0])
    previous_end = 0
    for change in lenient.files:
        assert previous_end <= change.start < change.end <= len(data)
        assert change.changed_lines >= 0
        assert change.paths
        previous_end = change.end


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(
        st.binary(),
        st.binary().map(lambda tail: b"diff --git " + tail),
        patch_like(),
        patch_like().map(lambda body: b"diff --git a/f b/f\n" + body),
        mutated_patches(),
    )
)
def test_any_bytes_raise_only_patch_error(data: bytes) -> None:
    _check_any_bytes(data)
