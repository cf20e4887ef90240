"""The MCP tool `list_candidates`: an authoring agent chooses its work from mined candidates.

Arguments: `path` (a candidates.jsonl; default `$SELFBENCH_CANDIDATES`), optional `difficulty`
and `limit`. The result lists the candidates in file order (hardest tier first, best first),
each with what authoring needs: id, tier, PR, base commit, title, score, totals, requests.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import read_bytes
from selfbench._json import JsonObject
from selfbench.errors import MineError, SelfbenchError
from selfbench.mine.candidate import CandidateModel, parse_candidate_lines

__all__ = [
    "CANDIDATES_ENV",
    "LIST_CANDIDATES",
    "LIST_CANDIDATES_DESCRIPTION",
    "LIST_CANDIDATES_SCHEMA",
    "TOOL_FILE_LIMIT",
    "CandidateListing",
    "list_candidates",
    "list_candidates_text",
]

LIST_CANDIDATES = "list_candidates"
CANDIDATES_ENV = "SELFBENCH_CANDIDATES"
TOOL_FILE_LIMIT = 64 << 20
"""The largest file an MCP tool reads (a candidates file): only regular files, at most this."""
LIST_CANDIDATES_DESCRIPTION = (
    "List the candidate tasks `selfbench mine` found (merged pull requests with their base "
    "commit, tier, score, file totals and linked engineer requests), best first. Choose one, "
    "then author it with check_task and submit_task using its sourcePr, baseCommit and "
    "difficulty."
)
LIST_CANDIDATES_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": f"candidates.jsonl (default ${CANDIDATES_ENV})"},
        "difficulty": {"enum": ["easy", "medium", "hard"]},
        "limit": {"type": "integer", "minimum": 1},
    },
    "additionalProperties": False,
}
_DEFAULT_LIMIT = 20


def _summary(candidate: CandidateModel) -> JsonObject:
    summary: JsonObject = {
        "id": candidate.id,
        "difficulty": candidate.difficulty,
        "sourcePr": candidate.sourcePr,
        "sourceUrl": candidate.sourceUrl,
        "baseCommit": candidate.baseCommit,
        "completedCommit": candidate.completedCommit,
        "title": candidate.title,
        "score": candidate.score,
        "testsChanged": candidate.testsChanged,
        "toolchains": list(candidate.toolchains),
        "totals": {name: total.model_dump() for name, total in candidate.totals.items()},
        "requests": [request.text for request in candidate.requests],
    }
    if candidate.rankedLast is not None:
        summary["rankedLast"] = candidate.rankedLast
    return summary


@dataclass(frozen=True, slots=True)
class CandidateListing:
    """What a `list_candidates` call returns: how many candidates match, and those shown."""

    total: int
    candidates: tuple[CandidateModel, ...]

    def to_json(self) -> JsonObject:
        """The tool's structured result."""
        return {
            "total": self.total,
            "candidates": [_summary(candidate) for candidate in self.candidates],
        }


def list_candidates(arguments: Mapping[str, object]) -> CandidateListing:
    """The candidates a `list_candidates` call asks for.

    Raises:
        SelfbenchError: no path given or configured, or the file cannot be read as candidates.
    """
    path = arguments.get("path") or os.environ.get(CANDIDATES_ENV)
    if not isinstance(path, str) or not path:
        raise SelfbenchError(f"list_candidates needs a path (or {CANDIDATES_ENV})")
    data = read_bytes(Path(path), error=MineError, limit=TOOL_FILE_LIMIT)
    found = parse_candidate_lines(data, source=path)
    tier = arguments.get("difficulty")
    chosen = [candidate for candidate in found if tier is None or candidate.difficulty == tier]
    limit = arguments.get("limit")
    limit = limit if isinstance(limit, int) and limit >= 1 else _DEFAULT_LIMIT
    return CandidateListing(len(chosen), tuple(chosen[:limit]))


def list_candidates_text(listing: CandidateListing) -> str:
    """One line per candidate, for an agent reading the tool's text."""
    lines = [f"{listing.total} candidates; showing {len(listing.candidates)}:"]
    lines.extend(
        f"- {item.id} ({item.difficulty}, score {item.score}): {item.title}"
        for item in listing.candidates
    )
    return "\n".join(lines)
