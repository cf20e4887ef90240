"""`.selfbench-base-commit.json`: what proves a bundle's snapshot is its base commit. Pure.

The compiler writes, beside the snapshot, the base commit's raw object (base64) and the
submodules its tree holds (`git archive` writes a submodule as an empty directory, so its
commit id is not in the snapshot). A reader rebuilds the tree from the snapshot's files (mode,
name and blob id of each) and those submodules, and checks, in this order:

1. the commit object's id is `baseCommit` (`commit <size>\\0` + its bytes, hashed as Git does);
2. the tree the commit object names is the tree the snapshot's files make.

The file is two-space-indented JSON with exactly the keys `commitObject` (base64) and
`submodules` ({path: commit id}), and a trailing newline.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from selfbench._json import dumps_pretty, loads_strict
from selfbench.errors import BundleError, JsonError
from selfbench.rules import is_full_sha

__all__ = [
    "GITLINK_MODE",
    "BaseCommit",
    "commit_id",
    "commit_tree",
    "parse_base_commit",
    "render_base_commit",
]

GITLINK_MODE = "160000"
"""The mode Git gives a submodule's entry in a tree."""
_KEYS = ("commitObject", "submodules")


@dataclass(frozen=True, slots=True)
class BaseCommit:
    """The base commit's raw object and the submodules (path → commit id) of its tree."""

    commit_object: bytes
    submodules: Mapping[str, str] = field(default_factory=dict)


def render_base_commit(base: BaseCommit) -> bytes:
    """The file's bytes: deterministic, submodules sorted by path."""
    value = {
        "commitObject": base64.b64encode(base.commit_object).decode("ascii"),
        "submodules": dict(sorted(base.submodules.items())),
    }
    return dumps_pretty(value).encode("utf-8")


def parse_base_commit(data: bytes, *, source: str) -> BaseCommit:
    """Parse the file's bytes.

    Raises:
        BundleError: not the JSON object the module describes; one line naming `source`.
    """
    try:
        value: Any = loads_strict(data, source=source)
    except JsonError as exc:
        raise BundleError(str(exc)) from exc
    if not isinstance(value, dict) or sorted(value) != sorted(_KEYS):
        raise BundleError(f"{source}: not an object of exactly {', '.join(_KEYS)}")
    raw, submodules = value["commitObject"], value["submodules"]
    try:
        commit_object = base64.b64decode(raw, validate=True) if isinstance(raw, str) else None
    except binascii.Error:
        commit_object = None
    if commit_object is None:
        raise BundleError(f"{source}: commitObject must be base64")
    if not isinstance(submodules, dict) or not all(
        isinstance(oid, str) and is_full_sha(oid, lowercase=True) for oid in submodules.values()
    ):
        raise BundleError(f"{source}: submodules must map paths to full commit ids")
    return BaseCommit(commit_object, submodules)


def commit_id(commit_object: bytes) -> str:
    """The id Git gives a commit object's bytes (SHA-1, as `git hash-object -t commit`)."""
    digest = hashlib.sha1(b"commit %d\x00" % len(commit_object), usedforsecurity=False)
    digest.update(commit_object)
    return digest.hexdigest()


def commit_tree(commit_object: bytes) -> str | None:
    """The tree id a commit object names on its first line, or None when it names none."""
    first, _, _ = commit_object.partition(b"\n")
    kind, _, tree = first.partition(b" ")
    text = tree.decode("ascii", "replace")
    return text if kind == b"tree" and is_full_sha(text, lowercase=True) else None
