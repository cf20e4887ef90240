"""What mining produces, as frozen values (named tuples for the many small ones).

`to_json` gives the documented line shape.

`selfbench.mine.candidate` holds the same shape as pydantic models, for reading lines back and
for the JSON Schema; a test proves every line these values write validates there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from selfbench._json import JsonObject
from selfbench.contract import Difficulty

__all__ = ["Candidate", "ChangedFile", "ClassTotal", "Excluded", "LinkedRequest", "Score"]


class ChangedFile(NamedTuple):
    """One changed file, classified."""

    path: str
    old_path: str | None
    file_class: str
    kind: str
    changed_lines: int
    binary: bool

    def to_json(self) -> JsonObject:
        """The file as a candidate line holds it."""
        return {
            "path": self.path,
            "oldPath": self.old_path,
            "fileClass": self.file_class,
            "kind": self.kind,
            "changedLines": self.changed_lines,
            "binary": self.binary,
        }


class ClassTotal(NamedTuple):
    """Files and changed lines of one class."""

    files: int
    changed_lines: int

    def to_json(self) -> JsonObject:
        """The total as a candidate line holds it."""
        return {"files": self.files, "changedLines": self.changed_lines}


@dataclass(frozen=True, slots=True)
class Score:
    """The score's three terms (see `selfbench.mine.rank`)."""

    tests: int
    size: int
    recency: int

    @property
    def total(self) -> int:
        """The sum of the terms."""
        return self.tests + self.size + self.recency


@dataclass(frozen=True, slots=True)
class LinkedRequest:
    """A request from a local coding session, with the evidence linking it."""

    tool: str
    session: str
    timestamp: int
    text: str
    seconds_before_merge: int
    branch: str | None
    paths: tuple[str, ...]

    def to_json(self) -> JsonObject:
        """The request as a candidate line holds it."""
        return {
            "tool": self.tool,
            "session": self.session,
            "timestamp": self.timestamp,
            "text": self.text,
            "secondsBeforeMerge": self.seconds_before_merge,
            "branch": self.branch,
            "paths": list(self.paths),
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A merged change worth authoring as a task."""

    id: str
    kind: str
    repo: str
    source_pr: int | None
    source_url: str | None
    base_commit: str
    completed_commit: str
    merged_at: int
    title: str
    body: str
    author: str
    head_branch: str | None
    metadata: str
    difficulty: Difficulty
    eligible_tiers: tuple[Difficulty, ...]
    score: Score
    tests_changed: bool
    ecosystems: tuple[str, ...]
    toolchains: tuple[str, ...]
    totals: dict[str, ClassTotal]
    files: tuple[ChangedFile, ...]
    requests: tuple[LinkedRequest, ...]
    ranked_last: str | None = None
    """Why it comes after every other candidate of its tier, if it does."""

    def to_json(self) -> JsonObject:
        """One line of candidates.jsonl (schema: `selfbench schema --candidate`)."""
        line: JsonObject = {
            "schemaVersion": 1,
            "id": self.id,
            "kind": self.kind,
            "repo": self.repo,
            "sourcePr": self.source_pr,
            "sourceUrl": self.source_url,
            "baseCommit": self.base_commit,
            "completedCommit": self.completed_commit,
            "mergedAt": self.merged_at,
            "title": self.title,
            "body": self.body,
            "author": self.author,
            "headBranch": self.head_branch,
            "metadata": self.metadata,
            "difficulty": self.difficulty,
            "eligibleTiers": list(self.eligible_tiers),
            "score": self.score.total,
            "scoreParts": {
                "tests": self.score.tests,
                "size": self.score.size,
                "recency": self.score.recency,
            },
            "testsChanged": self.tests_changed,
            "ecosystems": list(self.ecosystems),
            "toolchains": list(self.toolchains),
            "totals": {
                name: {"files": files, "changedLines": lines}
                for name, (files, lines) in self.totals.items()
            },
            # inlined rather than one method call per file: a history has tens of thousands
            "files": [
                {
                    "path": path,
                    "oldPath": old_path,
                    "fileClass": file_class,
                    "kind": kind,
                    "changedLines": changed_lines,
                    "binary": binary,
                }
                for path, old_path, file_class, kind, changed_lines, binary in self.files
            ],
            "requests": [request.to_json() for request in self.requests],
        }
        if self.ranked_last is not None:  # absent otherwise: every other line as it was
            line["rankedLast"] = self.ranked_last
        return line


@dataclass(frozen=True, slots=True)
class Excluded:
    """A change that is not a candidate, and why."""

    commit: str
    source_pr: int | None
    subject: str
    reason: str

    def to_json(self) -> JsonObject:
        """One line of the excluded file."""
        return {
            "commit": self.commit,
            "sourcePr": self.source_pr,
            "subject": self.subject,
            "reason": self.reason,
        }
