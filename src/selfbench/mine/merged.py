"""Which first-parent commits are merged work, read from their messages alone. Pure.

* **merge**: a merge commit. `Merge pull request #N from owner/branch` (GitHub), a body line
  `See merge request group/project!N` (GitLab) or a title ending in `(#N)` give the request's
  number; `Merge branch 'x'` gives only the branch (a merge without a number is a candidate
  only when plain commits are asked for, as it is usually a release branch brought back). A
  merge of the main branch (`Merge branch 'main' of …`, `Merge remote-tracking branch
  'origin/main'`, `Merge branch 'main' into x`) is excluded.
* **squash**: a single-parent commit whose subject ends in `(#N)` (GitHub's squash and rebase
  merges). Consecutive first-parent commits with the same `(#N)` are one rebase-merged change.
* **plain**: any other single-parent commit; a candidate only when asked for.
* A revert (`Revert "…"` as its subject or its request's title, or a body saying `This reverts
  commit <sha>`) is excluded, and so is the change it reverted: the commit named, else the older
  request that GitHub's `Reverts owner/repo#N` line or a `(#N)` in the quoted title names, else
  the nearest older change whose title is the quoted one (case and spacing aside).
* A branch sync is excluded: a request whose title says it merges a long-lived branch into
  another (`Merge stable into main`, ``Merge `stable` into `main` after …``, `merge main into
  stable to synchronize commits.`, `Merge branch '2.x' into main`). Its diff bundles changes that
  were each merged on the other branch (usually their own requests), so it is no one unit of work
  and its title describes none of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from selfbench.rules import sha_regex

__all__ = [
    "MAIN_BRANCHES",
    "REVERTED_BY",
    "REVERTS",
    "Kind",
    "MessageFacts",
    "branch_sync",
    "is_merge_of_main",
    "parse_message",
    "reverted_commits",
    "reverted_request",
    "strip_number",
    "title_key",
]

Kind = Literal["merge", "squash", "plain"]
MAIN_BRANCHES = frozenset({"main", "master", "trunk", "develop", "development", "default"})

_GITHUB_MERGE_RE = re.compile(r"Merge pull request #(\d+) from (\S+)")
_GITLAB_RE = re.compile(r"^See merge request (\S+)!(\d+)\s*$", re.MULTILINE)
_BRANCH_MERGE_RE = re.compile(
    r"Merge (?:remote-tracking )?branch '([^']+)'(?: of (\S+))?(?: into '?([^'\s]+)'?)?"
)
_SQUASH_RE = re.compile(r"\(#(\d+)\)\s*$")
_NAME = r"[\w/+-]+(?:\.[\w/+-]+)*"  # a branch name, without a sentence's final dot
_SYNC_RE = re.compile(
    rf"merge\s+(?:(?:remote-tracking\s+)?branch\s+)?(?P<q1>[`'\"]?)(?P<source>{_NAME})(?P=q1)"
    rf"\s+into\s+(?P<q2>[`'\"]?)(?P<target>{_NAME})(?P=q2)(?:$|[\s.,;:(])",
    re.IGNORECASE,
)
_LONG_LIVED_RE = re.compile(
    r"(?:origin/|upstream/)?(?:main|master|trunk|develop|development|default|stable|next|dev"
    r"|beta|alpha|release\S*|hotfix\S*|maint\S*|v?\d+(?:\.\d+)*(?:\.x)?)",
    re.IGNORECASE,
)
REVERTS = "reverts an earlier change"
REVERTED_BY = "reverted later by {sha7}"

_REVERT_SUBJECT_RE = re.compile(r'^Revert "')
_REVERT_TITLE_RE = re.compile(r'^Revert\s+"(?P<title>.+)"$', re.DOTALL)
_REVERTS_REQUEST_RE = re.compile(r"^Reverts\s+(?:[\w.-]+/[\w.-]+)?#(\d+)\s*$", re.MULTILINE)
_REVERTS_RE = re.compile(f"This reverts commit ({sha_regex(abbreviated=True)})")


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """What a commit message says about the change: its kind, number and head branch."""

    kind: Kind
    number: int | None
    branch: str | None


def _branch_of(head: str) -> str:
    """`owner/feature/x` (GitHub's `from` part) is the branch `feature/x`."""
    return head.split("/", 1)[1] if "/" in head else head


def parse_message(subject: str, body: str, *, merge: bool) -> MessageFacts:
    """The kind of change a message describes, with its request number and head branch."""
    if merge:
        github = _GITHUB_MERGE_RE.match(subject)
        if github:
            return MessageFacts("merge", int(github.group(1)), _branch_of(github.group(2)))
        gitlab = _GITLAB_RE.search(body)
        titled = _SQUASH_RE.search(subject)  # a merge commit whose title was edited: `… (#N)`
        branch = _BRANCH_MERGE_RE.match(subject)
        name = branch.group(1) if branch else None
        number = gitlab.group(2) if gitlab else titled.group(1) if titled else None
        return MessageFacts("merge", int(number) if number else None, name)
    squash = _SQUASH_RE.search(subject)
    if squash:
        return MessageFacts("squash", int(squash.group(1)), None)
    return MessageFacts("plain", None, None)


def strip_number(subject: str) -> str | None:
    """The subject without its trailing `(#N)`, or None when it has none."""
    match = _SQUASH_RE.search(subject)
    return subject[: match.start()].rstrip() if match else None


def is_merge_of_main(subject: str, main_branches: frozenset[str] = MAIN_BRANCHES) -> bool:
    """Whether a merge commit's subject says it merged the main branch into another one."""
    match = _BRANCH_MERGE_RE.match(subject)
    if not match:
        return False
    source = match.group(1).removeprefix("origin/").removeprefix("upstream/")
    return source in main_branches


def branch_sync(title: str) -> tuple[str, str] | None:
    """(source, target) when a request's title says it merges a long-lived branch (main, stable,
    a release or version branch) into another. `Merge branch 'feature' into 'main'` (GitLab's
    subject for a feature's request) and `Merge the parsers into one module` are not syncs."""
    match = _SYNC_RE.match(title.strip())
    if match is None or not _LONG_LIVED_RE.fullmatch(match.group("source")):
        return None
    return match.group("source"), match.group("target")


def reverted_commits(subject: str, body: str) -> tuple[str, ...] | None:
    """The commits a revert names (lower-case), or None when the message is not a revert."""
    named = _REVERTS_RE.findall(body) if "This reverts commit" in body else None
    if named:
        return tuple(sha.lower() for sha in named)
    return () if _REVERT_SUBJECT_RE.match(subject) else None


def title_key(title: str) -> str:
    """A title as reverts are matched: without its `(#N)`, case-folded, spaces collapsed."""
    return " ".join((strip_number(title) or title).split()).casefold()


def reverted_request(title: str, body: str) -> tuple[str, tuple[int, ...]] | None:
    """For a revert's title (`Revert "<title>"`): the reverted title's key and the request
    numbers it names (GitHub's `Reverts owner/repo#N` body line, the quoted title's `(#N)`);
    None when the title is not a revert's."""
    match = _REVERT_TITLE_RE.match((strip_number(title) or title).strip())
    if match is None:
        return None
    quoted = match.group("title")
    numbers = [int(number) for number in _REVERTS_REQUEST_RE.findall(body)]
    own = _SQUASH_RE.search(quoted)
    if own is not None:
        numbers.append(int(own.group(1)))
    return title_key(quoted), tuple(numbers)
