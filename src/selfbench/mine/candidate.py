"""One line of `candidates.jsonl` (and of the excluded file): the stable, documented shape.

`selfbench schema --candidate` prints `candidate_json_schema()`. `sourcePr`, `baseCommit` and
`difficulty` are the fields `collect --candidate` checks an authored task against (SPEC §6).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfbench._fs import read_bytes
from selfbench._json import JsonObject, JsonValue
from selfbench.errors import MineError
from selfbench.rules import describe_error, sha_regex

__all__ = [
    "CANDIDATE_SCHEMA_VERSION",
    "CandidateFileModel",
    "CandidateModel",
    "ClassTotalsModel",
    "ExcludedModel",
    "LinkedRequestModel",
    "ScorePartsModel",
    "candidate_json_schema",
    "find_candidate",
    "parse_candidate_lines",
]

CANDIDATE_SCHEMA_VERSION = 1
_FROZEN = ConfigDict(extra="forbid", frozen=True)
_GIT_SHA = f"^{sha_regex(lowercase=True)}$"
"""Mining writes commits as git prints them, so a candidate's are lower case."""


class CandidateFileModel(BaseModel):
    """One changed file, classified."""

    model_config = _FROZEN
    path: str
    oldPath: str | None  # noqa: N815 - the JSON shape is camelCase
    fileClass: Literal["implementation", "tests", "dependencies", "other"]  # noqa: N815
    kind: str
    changedLines: int  # noqa: N815
    binary: bool


class ClassTotalsModel(BaseModel):
    """Files and changed lines of one class."""

    model_config = _FROZEN
    files: int
    changedLines: int  # noqa: N815


class ScorePartsModel(BaseModel):
    """The score's three terms (see `selfbench.mine.rank`)."""

    model_config = _FROZEN
    tests: int
    size: int
    recency: int


class LinkedRequestModel(BaseModel):
    """A request from a local coding session, with the evidence linking it."""

    model_config = _FROZEN
    tool: Literal["claude-code", "codex", "pi"]
    session: str
    timestamp: int
    text: str
    secondsBeforeMerge: int  # noqa: N815
    branch: str | None
    paths: tuple[str, ...]


class CandidateModel(BaseModel):
    """A change worth authoring as a task."""

    model_config = _FROZEN
    schemaVersion: Literal[1] = 1  # noqa: N815
    id: str = Field(description="pr-<N>, or commit-<12 hex> without a request number")
    kind: Literal["merge", "squash", "plain"]
    repo: str
    sourcePr: int | None  # noqa: N815
    sourceUrl: str | None  # noqa: N815
    baseCommit: str = Field(pattern=_GIT_SHA)  # noqa: N815
    completedCommit: str = Field(pattern=_GIT_SHA)  # noqa: N815
    mergedAt: int = Field(description="commit time of the completed commit, Unix seconds")  # noqa: N815
    title: str
    body: str
    author: str
    headBranch: str | None  # noqa: N815
    metadata: Literal["git", "pull-request"]
    difficulty: Literal["easy", "medium", "hard"]
    eligibleTiers: tuple[Literal["easy", "medium", "hard"], ...]  # noqa: N815
    score: int
    scoreParts: ScorePartsModel  # noqa: N815
    testsChanged: bool  # noqa: N815
    ecosystems: tuple[str, ...]
    toolchains: tuple[str, ...]
    totals: dict[Literal["implementation", "tests", "dependencies", "other"], ClassTotalsModel]
    files: tuple[CandidateFileModel, ...]
    requests: tuple[LinkedRequestModel, ...]
    rankedLast: str | None = Field(  # noqa: N815
        default=None,
        description="why it comes after every other candidate of its tier (its code mostly"
        " typing); absent otherwise",
    )


class ExcludedModel(BaseModel):
    """A change that is not a candidate, and why."""

    model_config = _FROZEN
    commit: str
    sourcePr: int | None  # noqa: N815
    subject: str
    reason: str


def candidate_json_schema() -> JsonObject:
    """The JSON Schema (draft 2020-12) of one candidate line."""
    schema: JsonObject = CandidateModel.model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def parse_candidate_lines(data: bytes, *, source: str) -> tuple[CandidateModel, ...]:
    """Every candidate of a `candidates.jsonl` (or of a file holding one candidate object).

    Raises:
        MineError: a line is not JSON or not a candidate; the first problem named.
    """
    text = data.decode("utf-8", "replace").strip()
    try:
        whole = json.loads(text) if text.startswith("{") and "\n{" not in text else None
    except json.JSONDecodeError:
        whole = None
    lines = [whole] if whole is not None else _lines(text, source)
    found = []
    for number, value in enumerate(lines, start=1):
        try:
            found.append(CandidateModel.model_validate(value))
        except ValidationError as exc:
            problem = describe_error(exc.errors()[0], root="line")
            raise MineError(f"{source}:{number}: {problem}") from exc
    return tuple(found)


def _lines(text: str, source: str) -> list[JsonValue]:
    values: list[JsonValue] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError:
            raise MineError(f"{source}:{number}: malformed JSON") from None
    return values


def find_candidate(
    path: Path, candidate_id: str | None, *, limit: int | None = None
) -> CandidateModel:
    """The candidate with `candidate_id` in a candidates file (the only one when no id is given);
    with a `limit`, the file must be a regular file of at most that many bytes.

    Raises:
        MineError: unreadable, refused, malformed, no such candidate, or several and no id.
    """
    data = read_bytes(path, error=MineError, limit=limit)
    candidates = parse_candidate_lines(data, source=str(path))
    if candidate_id is None:
        if len(candidates) != 1:
            raise MineError(
                f"{path} holds {len(candidates)} candidates; name one with --candidate-id"
            )
        return candidates[0]
    for candidate in candidates:
        if candidate.id == candidate_id:
            return candidate
    raise MineError(f"{path} has no candidate {candidate_id}")
