"""The error mining raises: bad input, reported on one line, exit 2."""

from __future__ import annotations

from selfbench.errors import SelfbenchError

__all__ = ["MineError"]


class MineError(SelfbenchError):
    """The repository, a revision, a metadata file or an option cannot be mined."""
