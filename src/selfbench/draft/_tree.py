"""A commit's tree, read through git: which regular files it holds, and their text.

Inference never reads a working tree: the commit is what the task's image will hold. Symbolic
links and submodules are not files here, and a file larger than `MAX_BYTES` reads as absent, so
a hostile repository cannot point inference elsewhere or make it read without bound.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from posixpath import dirname, join, normpath
from typing import TypeAlias

from selfbench._git import git
from selfbench._json import JsonValue

__all__ = ["MAX_BYTES", "TomlDocument", "Tree"]

TomlDocument: TypeAlias = dict[str, object]
"""A TOML file as `tomllib` parses it: its tables are dicts, read with `_json.table`."""

MAX_BYTES = 4 << 20
_REGULAR = (b"100644", b"100755")
_RELEASE_RE = re.compile(r"v?(\d{1,9}(?:\.\d{1,9}){0,4})(?:[.-]?[a-z][0-9a-z.+-]{0,40})?")


@dataclass
class Tree:
    """The regular files of one commit, listed once; their contents read when asked."""

    repo: Path
    commit: str
    _files: dict[str, tuple[str, int]] = field(default_factory=dict)
    _loaded: bool = False

    def _load(self) -> None:
        if self._loaded:
            return
        listing = git(self.repo, "ls-tree", "-r", "-z", "--long", "--full-tree", self.commit)
        for entry in listing.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, _kind, oid, size = meta.split()
            if mode in _REGULAR:
                name = path.decode("utf-8", "surrogateescape")
                self._files[name] = (oid.decode("ascii"), int(size))
        self._loaded = True

    def committed(self) -> str:
        """The commit's committer date in UTC, `2021-05-01T12:00:00Z`: what was published by
        then is what the project was tested with."""
        stamp = int(git(self.repo, "show", "-s", "--format=%ct", self.commit).strip())
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def release(self) -> str | None:
        """The release of the nearest tag the commit descends from (`v1.2.0rc1` → `1.2.0`), or
        None when no tag names a release: what a version computed from tags would start from."""
        tag = git(self.repo, "describe", "--tags", "--abbrev=0", self.commit, ok=(0, 128))
        found = _RELEASE_RE.fullmatch(tag.decode("utf-8", "replace").strip())
        return None if found is None else found[1]

    def files(self) -> tuple[str, ...]:
        """Every regular file's path, sorted."""
        self._load()
        return tuple(sorted(self._files))

    def has(self, path: str) -> bool:
        """Whether `path` is a regular file of the commit."""
        self._load()
        return normpath(path) in self._files

    def text(self, path: str) -> str | None:
        """The file's text (UTF-8, undecodable bytes replaced); None when absent or too large."""
        self._load()
        found = self._files.get(normpath(path))
        if found is None or found[1] > MAX_BYTES:
            return None
        return git(self.repo, "cat-file", "blob", found[0]).decode("utf-8", "replace")

    def toml(self, path: str) -> TomlDocument | None:
        """The file as TOML; None when absent, too large or malformed."""
        text = self.text(path)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None

    def json(self, path: str) -> dict[str, JsonValue] | None:
        """The file as a JSON object; None when absent, too large, malformed or not an object."""
        text = self.text(path)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def nearest(self, start: str, names: tuple[str, ...]) -> str | None:
        """The directory nearest `start` (itself, then its parents) holding one of `names`."""
        directory = normpath(start)
        while True:
            here = "" if directory == "." else directory
            if any(self.has(join(here, name)) for name in names):
                return directory
            if directory == ".":
                return None
            directory = dirname(directory) or "."
