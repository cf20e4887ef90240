"""Who a repository is to the outside: its label and where its pull requests live.

The label is what a task's `repo`, its `task.toml` and an export's `repository.url` hold, so it
never names a path on this machine:

* `--source-url BASE` given: BASE's path (`https://git.example.com/team/app` → `team/app`), or
  its host when it has no path; pull requests live at `BASE/pull/<number>`;
* else a GitHub remote: `owner/name`; pull requests at `https://github.com/owner/name/pull/<n>`;
* else another remote URL (`https://…`, `ssh://…`, `git@host:path`): its path, `.git` dropped;
  no pull-request URL is known;
* else (a remote that is a local path, or no remote): the last component of that path, or of
  the clone's own path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from selfbench.mine.prs import source_url_base

__all__ = ["RepositorySource", "check_source_url", "repository_source"]

_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?[^/:]+:(?P<path>.+)$")
"""Git's `[user@]host:path` form (a colon before any slash)."""


@dataclass(frozen=True, slots=True)
class RepositorySource:
    """A repository's label (`owner/name`) and pull-request URL base (None when unknown)."""

    label: str
    url_base: str | None


def _path_label(path: str) -> str:
    return path.strip("/").removesuffix(".git").strip("/")


def _url_label(url: str) -> str | None:
    """The label of a remote or base URL, or None when `url` is not a URL (a local path)."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file":
            return None
        return _path_label(parts.path) or parts.hostname or None
    match = _SCP_LIKE.match(url)
    if match is not None and not url.startswith(("/", ".")):
        return _path_label(match.group("path")) or None
    return None


def check_source_url(source_url: str) -> str | None:
    """The problem with a `--source-url`, or None: it must be an absolute http(s) URL."""
    parts = urlsplit(source_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--source-url {source_url}: expected an absolute URL (https://host/owner/name)"
    return None


def repository_source(
    origin: str | None, path: Path, source_url: str | None = None
) -> RepositorySource:
    """The label and pull-request URL base of the clone at `path` whose remote is `origin`."""
    if source_url is not None:
        base = source_url.rstrip("/")
        return RepositorySource(_url_label(base) or base, base)
    label, url_base = source_url_base(origin)
    if label is not None:
        return RepositorySource(label, url_base)
    named = _url_label(origin) if origin else None
    if named is None:
        local = PurePosixPath(origin.rstrip("/")) if origin else PurePosixPath(path.resolve())
        named = _path_label(local.name) or path.resolve().name
    return RepositorySource(named, None)
