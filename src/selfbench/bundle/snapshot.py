"""What a bundle's repository snapshot must not hold: the solution or the held-out tests. Pure.

The snapshot is the repository at `baseCommit`; the gold patch and the held-out test patch are
changes on top of it. So, at the path each patch changes, the snapshot holds neither:

* a file the patch adds (also as the new side of a rename or copy): the base has no such file,
  whatever its content;
* the post-image of a file the patch modifies, by its Git blob id (the `index OLD..NEW` line
  `git diff` writes; a section without one is not checked);
* anywhere, a byte-for-byte copy of either patch file itself.

Files are compared by Git blob id (`git_blob_id`), so a reader hashes each snapshot file once,
as it streams by, and keeps only its path and id.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from selfbench.bundle import layout
from selfbench.patches import FileChange, Patch, display_path, parse_patch

__all__ = ["SnapshotRules", "build_snapshot_rules", "git_blob_header", "git_blob_id"]

_INDEX_RE = re.compile(rb"^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})", re.MULTILINE)
_BODY_RE = re.compile(rb"^(?:--- |@@ |GIT binary patch|Binary files )", re.MULTILINE)
_NEW_PATHS = frozenset({"added", "renamed", "copied"})
_SOURCES = (
    ("the gold patch", layout.GOLD_PATCH),
    ("the held-out test patch", layout.TEST_PATCH),
)


def git_blob_header(size: int) -> bytes:
    """What Git hashes before a file's bytes to name it: `blob <size>\\0`."""
    return b"blob %d\x00" % size


def git_blob_id(data: bytes) -> str:
    """The Git blob id (SHA-1) of a file's bytes."""
    digest = hashlib.sha1(git_blob_header(len(data)), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class SnapshotRules:
    """Paths the snapshot must not hold, post-images it must not hold, patch copies."""

    added: tuple[tuple[str, str], ...]
    """(path, whose): a file the gold or the test patch adds."""
    post_images: tuple[tuple[str, str, str], ...]
    """(path, abbreviated blob id, whose): a modified file's new content."""
    copies: tuple[tuple[str, str], ...]
    """(full blob id, bundle path): the patch files themselves."""

    def problem(self, files: dict[str, str | None]) -> str | None:
        """The first rule the snapshot's files (path to blob id, None if not a file) break."""
        for path, whose in self.added:
            if path in files:
                return f"holds {display_path(path)}, a file {whose} adds"
        for path, prefix, whose in self.post_images:
            blob = files.get(path)
            if blob is not None and blob.startswith(prefix):
                return f"holds {whose}'s new content of {display_path(path)}"
        copies = dict(self.copies)
        for path, blob in files.items():
            if blob in copies:
                return f"holds a copy of {copies[blob]} at {display_path(path)}"
        return None


def _post_image(patch: Patch, change: FileChange) -> str | None:
    section = patch.section(change)
    body = _BODY_RE.search(section)
    match = _INDEX_RE.search(section, 0, body.start() if body else len(section))
    if match is None or set(match[2]) == {ord("0")}:
        return None
    return match[2].decode("ascii")


def build_snapshot_rules(test_patch: bytes, gold_patch: bytes) -> SnapshotRules:
    """The rules for a task's snapshot, from its two patches (parsed leniently)."""
    added: dict[str, str] = {}
    post_images: dict[str, tuple[str, str]] = {}
    for (whose, _), data in zip(_SOURCES, (gold_patch, test_patch), strict=True):
        patch = parse_patch(data, lenient=True)
        for change in patch.files:
            if change.new_path is None:
                continue
            if change.status in _NEW_PATHS:
                added.setdefault(change.new_path, whose)
            elif (blob := _post_image(patch, change)) is not None:
                post_images.setdefault(change.new_path, (blob, whose))
    return SnapshotRules(
        added=tuple(added.items()),
        post_images=tuple((path, blob, whose) for path, (blob, whose) in post_images.items()),
        copies=tuple(
            (git_blob_id(data), name)
            for (_, name), data in zip(_SOURCES, (gold_patch, test_patch), strict=True)
        ),
    )
