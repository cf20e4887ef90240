"""Mine a repository's history into ranked candidate tasks (SPEC §12, mine)."""

from __future__ import annotations

from selfbench.errors import MineError
from selfbench.mine.api import (
    MineOptions,
    MineResult,
    excluded_path,
    mine_repository,
    write_candidates,
)
from selfbench.mine.candidate import (
    CandidateModel,
    ExcludedModel,
    candidate_json_schema,
    find_candidate,
)
from selfbench.mine.records import Candidate, Excluded

__all__ = [
    "Candidate",
    "CandidateModel",
    "Excluded",
    "ExcludedModel",
    "MineError",
    "MineOptions",
    "MineResult",
    "candidate_json_schema",
    "excluded_path",
    "find_candidate",
    "mine_repository",
    "write_candidates",
]
