"""Mine a repository's history into ranked candidate tasks (SPEC §12, mine).

Every name but `MineError` loads on first use: mining writes candidates and never validates
them, so it does not pay for the validation library (`candidate`); and the command line starts
the walk's `git log` (`git_history`) before it loads the rest (`api`), which then loads while
git walks.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from selfbench.errors import MineError

if TYPE_CHECKING:
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

_LAZY = {
    **dict.fromkeys(
        ("CandidateModel", "ExcludedModel", "candidate_json_schema", "find_candidate"), "candidate"
    ),
    **dict.fromkeys(
        ("MineOptions", "MineResult", "excluded_path", "mine_repository", "write_candidates"), "api"
    ),
    **dict.fromkeys(("Candidate", "Excluded"), "records"),
}
"""Each name loaded on first use, and its module."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'selfbench.mine' has no attribute {name!r}")
    value = getattr(import_module(f"selfbench.mine.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
