"""selfbench: turn merged pull requests into proven benchmark tasks for coding agents."""

from selfbench.errors import (
    DefinitionError,
    Issue,
    PatchError,
    PreflightError,
    SelfbenchError,
    SubmitError,
)

__version__ = "0.1.0"

__all__ = [
    "DefinitionError",
    "Issue",
    "PatchError",
    "PreflightError",
    "SelfbenchError",
    "SubmitError",
    "__version__",
]
