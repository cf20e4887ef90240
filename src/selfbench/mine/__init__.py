"""Mine a repository's history into ranked candidate tasks (SPEC §12, mine).

The candidate file's validating models (`candidate`) load on first use: mining writes
candidates and never validates them, so it does not pay for the validation library.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from selfbench.errors import MineError
from selfbench.mine.api import (
    MineOptions,
    MineResult,
    excluded_path,
    mine_repository,
    write_candidates,
)
from selfbench.mine.records import Candidate, Excluded

if TYPE_CHECKING:
    from selfbench.mine.candidate import (
        CandidateModel,
        ExcludedModel,
        candidate_json_schema,
        find_candidate,
    )

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

_LAZY = frozenset({"CandidateModel", "ExcludedModel", "candidate_json_schema", "find_candidate"})


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'selfbench.mine' has no attribute {name!r}")
    value = getattr(import_module("selfbench.mine.candidate"), name)
    globals()[name] = value
    return value
