"""Requests engineers typed into local coding agents, kept, redacted and linked to changes.

Formats read (JSON Lines, one object a line; a line that is not JSON is skipped):

* **Claude Code** `~/.claude/projects/<dir>/<uuid>.jsonl`: objects with `type` `user` or
  `assistant`, `cwd`, `gitBranch`, `timestamp` (ISO 8601) and `message.content`, a string or a
  list of blocks. Kept: `text` blocks of `user` objects that are neither `isMeta` nor
  `isSidechain`; `tool_result` blocks, command echoes (`<command-…>`, `<local-command-…>`) and
  `<system-reminder>` text are dropped.
* **Codex** `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: a `session_meta` object whose
  `payload` has `cwd` and `git.branch`, then `response_item` objects whose `payload` is a
  `message` with `role` `user` and `input_text` blocks. Injected `<environment_context>`,
  `<user_instructions>` and `AGENTS.md` text is dropped.
* **pi** `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl` (assumed from pi's published
  session format, version 3): a `session` header with `cwd`, then `message` objects whose
  `message.role` is `user` and whose `message.content` is a string or a list of `text` blocks;
  the time is the object's ISO `timestamp` (else the message's epoch milliseconds). pi records no
  branch.

A session is kept when its working directory is a worktree of the repository or lies inside
one. Requests are redacted (`selfbench.mine.redact`), whitespace-normalised, and de-duplicated
by text (the earliest kept); requests shorter than 12 characters ("ok", "continue") are dropped.

**Linking rule.** A request is linked to the candidate merged within 14 days after it that has
the most evidence: first a branch match (the session's branch is the candidate's head branch and
not a main branch), then the number of the candidate's paths the request names (a whole path,
or a file name of 5 or more characters, as a word), then the shortest time to the merge, then
the candidate id. A request with neither a branch match nor a named path is not linked.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from posixpath import basename
from typing import Literal

from selfbench._json import JsonValue
from selfbench.errors import os_reason
from selfbench.mine.merged import MAIN_BRANCHES
from selfbench.mine.redact import redact

__all__ = [
    "DEFAULT_SESSION_DIRS",
    "LINK_WINDOW_SECONDS",
    "Link",
    "LinkTarget",
    "SessionRequest",
    "link_requests",
    "parse_session",
    "read_sessions",
]

Tool = Literal["claude-code", "codex", "pi"]
DEFAULT_SESSION_DIRS = (".claude/projects", ".codex/sessions", ".pi/agent/sessions")
LINK_WINDOW_SECONDS = 14 * 24 * 3600
_MIN_CHARS = 12
_MIN_NAME_CHARS = 5
_DROPPED_PREFIXES = (
    "<command-", "<local-command-", "<system-reminder>", "<environment_context>",
    "<user_instructions>", "<user_shell_command>", "# AGENTS.md instructions", "Caveat: ",
    "[Request interrupted",
)  # fmt: skip
_REMINDER_RE = re.compile(r"<system-reminder>[\s\S]*?</system-reminder>")
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """One request a person typed into a coding agent, redacted."""

    tool: Tool
    session: str
    timestamp: int
    cwd: str
    branch: str | None
    text: str


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """What linking needs to know of a candidate."""

    id: str
    merged: int
    branch: str | None
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """A request attached to a candidate, with the evidence for it."""

    request: SessionRequest
    seconds_before_merge: int
    branch: str | None
    paths: tuple[str, ...]


def _time(value: JsonValue) -> int | None:
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value).timestamp())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value / 1000) if value > 10**11 else int(value)
    return None


def _block_text(block: JsonValue, kinds: frozenset[str]) -> str | None:
    if not isinstance(block, dict) or block.get("type") not in kinds:
        return None
    text = block.get("text")
    return text if isinstance(text, str) else None


def _texts(content: JsonValue, kinds: frozenset[str]) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    found = (_block_text(block, kinds) for block in content)
    return [text for text in found if text is not None]


def _object(value: JsonValue) -> dict[str, JsonValue]:
    return value if isinstance(value, dict) else {}


_TEXT = frozenset({"text"})
_INPUT_TEXT = frozenset({"input_text", "text"})


class _Reader:
    """Reads one session file's objects into requests, whichever tool wrote it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.tool: Tool | None = None
        self.cwd: JsonValue = None
        self.branch: JsonValue = None
        self.found: list[tuple[int, JsonValue, JsonValue, str]] = []

    def add(self, when: JsonValue, texts: list[str], cwd: JsonValue, branch: JsonValue) -> None:
        stamp = _time(when)
        if stamp is not None:
            self.found.extend((stamp, cwd, branch, text) for text in texts)

    def feed(self, item: dict[str, JsonValue]) -> None:
        kind = item.get("type")
        payload = _object(item.get("payload"))
        message = _object(item.get("message"))
        if kind == "session_meta":
            self.tool, self.cwd = "codex", payload.get("cwd")
            self.branch = _object(payload.get("git")).get("branch")
        elif kind == "session":
            self.tool, self.cwd = "pi", item.get("cwd")
        elif kind == "response_item" and payload.get("type") == "message":
            if payload.get("role") == "user":
                texts = _texts(payload.get("content"), _INPUT_TEXT)
                self.add(item.get("timestamp"), texts, self.cwd, self.branch)
        elif kind == "message" and message.get("role") == "user":
            when = item.get("timestamp") or message.get("timestamp")
            self.add(when, _texts(message.get("content"), _TEXT), self.cwd, None)
        elif kind == "user" and not item.get("isMeta") and not item.get("isSidechain"):
            self.tool = "claude-code"
            texts = _texts(message.get("content"), _TEXT)
            self.add(item.get("timestamp"), texts, item.get("cwd"), item.get("gitBranch"))

    def requests(self) -> Iterator[SessionRequest]:
        for stamp, cwd, branch, text in self.found:
            cleaned = _clean(text)
            if cleaned is not None and isinstance(cwd, str):
                tool = self.tool or "claude-code"
                shown_branch = branch if isinstance(branch, str) and branch else None
                yield SessionRequest(tool, self.name, stamp, cwd, shown_branch, cleaned)


def _clean(text: str) -> str | None:
    if text.lstrip().startswith(_DROPPED_PREFIXES):
        return None
    text = _SPACE_RE.sub(" ", _REMINDER_RE.sub(" ", text)).strip()
    if len(text) < _MIN_CHARS:
        return None
    return redact(text)


def parse_session(data: bytes, *, name: str) -> tuple[SessionRequest, ...]:
    """The user's own requests in one session file's bytes (any of the three formats)."""
    reader = _Reader(name)
    for line in data.splitlines():
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(item, dict):
            reader.feed(item)
    return tuple(reader.requests())


def _inside(cwd: str, worktrees: tuple[str, ...]) -> bool:
    return any(cwd == tree or cwd.startswith(tree.rstrip("/") + "/") for tree in worktrees)


def _session_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*.jsonl") if not path.is_dir())


def read_sessions(
    directories: Iterable[Path], *, worktrees: tuple[str, ...]
) -> tuple[tuple[SessionRequest, ...], tuple[str, ...]]:
    """The requests of sessions run in the repository's worktrees, and what was skipped."""
    kept: dict[str, SessionRequest] = {}
    skipped: list[str] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in _session_files(directory):
            try:
                data = path.read_bytes()
            except OSError as exc:  # a skip to report, not an error: the walk goes on
                skipped.append(f"skipped session {path}: {os_reason(exc)}")
                continue
            for request in parse_session(data, name=path.stem):
                if not _inside(request.cwd, worktrees):
                    continue
                earlier = kept.get(request.text)
                if earlier is None or _order(request) < _order(earlier):
                    kept[request.text] = request
    return tuple(sorted(kept.values(), key=_order)), tuple(skipped)


def _order(request: SessionRequest) -> tuple[int, str, str, str]:
    return (request.timestamp, request.tool, request.session, request.text)


def _named_paths(text: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    named = []
    for path in paths:
        name = basename(path)
        by_name = len(name) >= _MIN_NAME_CHARS and _names_word(name, text)
        if path in text or by_name:
            named.append(path)
    return tuple(named)


def _names_word(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text) is not None


def _evidence(request: SessionRequest, target: LinkTarget) -> Link | None:
    branch = request.branch
    same_branch = branch is not None and branch not in MAIN_BRANCHES and branch == target.branch
    paths = _named_paths(request.text, target.paths)
    if not same_branch and not paths:
        return None
    return Link(request, target.merged - request.timestamp, branch if same_branch else None, paths)


def link_requests(
    requests: tuple[SessionRequest, ...], targets: tuple[LinkTarget, ...]
) -> dict[str, tuple[Link, ...]]:
    """Attach each request to at most one candidate by the module's linking rule."""
    ordered = sorted(targets, key=lambda target: (target.merged, target.id))
    times = [target.merged for target in ordered]
    linked: dict[str, list[Link]] = {}
    for request in requests:
        low = bisect_left(times, request.timestamp)
        high = bisect_right(times, request.timestamp + LINK_WINDOW_SECONDS)
        best: tuple[tuple[int, int, int], str, Link] | None = None
        for target in ordered[low:high]:
            link = _evidence(request, target)
            if link is None:
                continue
            rank = (int(link.branch is not None), len(link.paths), -link.seconds_before_merge)
            if best is None or (rank, _neg(target.id)) > (best[0], _neg(best[1])):
                best = (rank, target.id, link)
        if best is not None:
            linked.setdefault(best[1], []).append(best[2])
    return {key: tuple(links) for key, links in linked.items()}


def _neg(text: str) -> tuple[int, ...]:
    """A key under which a smaller string sorts higher, for "then the candidate id"."""
    return (*(-ord(char) for char in text), 0)
