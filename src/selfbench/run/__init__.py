"""`selfbench run`: mine, draft, author, audit, compile, validate, check coupling, export.

`driver` schedules candidates per tier and writes the export; `steps` is one candidate's state
machine; `stages` calls the module that owns each stage; `state` is the run directory.
"""

from __future__ import annotations

from selfbench.run.driver import RunOptions, RunSummary, TierSummary, run_benchmark
from selfbench.run.state import CandidateState, RunDirectory

__all__ = [
    "CandidateState",
    "RunDirectory",
    "RunOptions",
    "RunSummary",
    "TierSummary",
    "run_benchmark",
]
