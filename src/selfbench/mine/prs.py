"""Pull-request metadata from `gh pr list --json …`: read, validated, matched to commits.

Accepted input: a JSON array of objects as `gh pr list --state merged --json number,title,body,
url,author,isDraft,mergeCommit,headRefName,mergedAt` prints. `number` is required; every other
field is optional and unknown fields are ignored, so older and newer `gh` versions both work.
Metadata enriches a candidate (title, body, author, URL, head branch) and filters it (drafts,
bot authors); it never changes what git says the change is.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfbench._fs import read_given
from selfbench.errors import MineError
from selfbench.rules import describe_error

if TYPE_CHECKING:
    from selfbench.mine._gh_models import MergeCommit

__all__ = [
    "GH_FIELDS",
    "PullRequest",
    "is_bot",
    "parse_pull_requests",
    "read_pull_requests",
    "run_gh",
    "source_url_base",
]

GH_FIELDS = "number,title,body,url,author,isDraft,mergeCommit,headRefName,mergedAt"
_BOT_RE = re.compile(r"(?i)(\[bot\]|-bot$|^bot-|dependabot|renovate|github-actions)")
_GITHUB_REMOTE_RE = re.compile(
    r"^(?:https?://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)
_GH_LIMIT = "10000"
_GH_AUTH_REQUIRED = 4  # gh's documented exit code when no account is logged in


@dataclass(frozen=True, slots=True)
class PullRequest:
    """One merged pull request as gh describes it."""

    number: int
    title: str | None
    body: str | None
    url: str | None
    author: str | None
    author_is_bot: bool
    draft: bool
    merge_commit: str | None
    head_branch: str | None


def _oid(commit: MergeCommit | None) -> str | None:
    """The merge commit's SHA, lower-cased as git prints it; None when gh gave none."""
    return commit.oid.lower() if commit is not None and commit.oid else None


def parse_pull_requests(value: Any, *, source: str) -> tuple[PullRequest, ...]:
    """Validate what `gh pr list --json` printed (already decoded from JSON).

    Raises:
        MineError: not an array of objects with an integer `number`; the first problem named.
    """
    # The validation library loads here, not with the module: mining without metadata never
    # validates, and would pay a tenth of a second for it.
    from pydantic import ValidationError  # noqa: PLC0415

    from selfbench.mine._gh_models import Author, Entry  # noqa: PLC0415

    if not isinstance(value, list):
        raise MineError(f"{source}: expected a JSON array of pull requests")
    found = []
    for index, item in enumerate(value):
        try:
            entry = Entry.model_validate(item)
        except ValidationError as exc:
            problem = describe_error(exc.errors()[0], prefix=f"[{index}]")
            raise MineError(f"{source}: {problem}") from exc
        author = entry.author or Author()
        found.append(
            PullRequest(
                number=entry.number,
                title=entry.title,
                body=entry.body,
                url=entry.url,
                author=author.login,
                author_is_bot=author.is_bot or is_bot(author.login or ""),
                draft=entry.isDraft,
                merge_commit=_oid(entry.mergeCommit),
                head_branch=entry.headRefName,
            )
        )
    return tuple(found)


def _decode(data: bytes, source: str) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "encoding"
        raise MineError(f"{source}: malformed JSON ({where})") from exc


def read_pull_requests(path: Path) -> tuple[PullRequest, ...]:
    """Read a `--prs` file.

    Raises:
        MineError: unreadable, malformed JSON, or not gh's shape.
    """
    data = read_given(path, error=MineError)
    return parse_pull_requests(_decode(data, str(path)), source=str(path))


def run_gh(repo: Path) -> tuple[PullRequest, ...]:
    """Ask an installed, authenticated `gh` for the repository's merged pull requests.

    Raises:
        MineError: gh is missing, not authenticated (its exit code 4), failed (its last stderr
            line), or printed something other than a JSON array of pull requests.
    """
    from selfbench.environments.process import run_captured  # noqa: PLC0415 - `--github` only

    gh = shutil.which("gh")
    if gh is None:
        raise MineError("--github needs the gh command, which is not installed")
    command = [gh, "pr", "list", "--state", "merged", "--limit", _GH_LIMIT, "--json", GH_FIELDS]
    result = run_captured(command, cwd=repo)
    if result.returncode == _GH_AUTH_REQUIRED:
        raise MineError("--github needs gh to be authenticated: run `gh auth login`")
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[-1].strip() if lines else f"exit code {result.returncode}"
        raise MineError(f"gh pr list failed: {reason}")
    return parse_pull_requests(_decode(result.stdout, "gh pr list"), source="gh pr list")


def is_bot(name: str) -> bool:
    """Whether an author name or login is a bot's (`dependabot[bot]`, `renovate-bot`, …)."""
    return bool(name) and _BOT_RE.search(name) is not None


def source_url_base(origin: str | None) -> tuple[str | None, str | None]:
    """`owner/name` and `https://github.com/owner/name` when `origin` is a GitHub remote."""
    match = _GITHUB_REMOTE_RE.match(origin or "")
    if not match:
        return None, None
    label = f"{match.group(1)}/{match.group(2)}"
    return label, f"https://github.com/{label}"
