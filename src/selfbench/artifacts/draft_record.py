"""A draft record: `draft.json`, the evidence `selfbench draft` keeps beside the task it wrote.

It records what the draft observed (the runs, the decision, where the logs are), so that an
author or a reviewer can see why the task came out as it did. One writer, one reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from selfbench._json import dumps_pretty
from selfbench.artifacts.quality_record import PassToPassBasis

__all__ = [
    "BASIS_KEY",
    "DRAFT_FILE",
    "pass_to_pass_basis",
    "read_draft_record",
    "render_draft_record",
]

DRAFT_FILE = "draft.json"
"""The sidecar beside a drafted task's files: the evidence and the draft marker."""


def render_draft_record(evidence: Mapping[str, Any]) -> bytes:
    """The bytes of `draft.json`: two-space indented JSON with a trailing newline."""
    return dumps_pretty(evidence).encode("utf-8")


def read_draft_record(task_dir: Path) -> Any:
    """The decoded `draft.json` of a drafted task directory.

    Raises:
        OSError: the file cannot be read.
        ValueError: it is not JSON.
    """
    return json.loads((task_dir / DRAFT_FILE).read_text(encoding="utf-8"))


BASIS_KEY = "passToPassBasis"
"""The evidence's record of how pass-to-pass was chosen (a `PassToPassBasis`)."""


def pass_to_pass_basis(evidence: Mapping[str, Any]) -> PassToPassBasis:
    """How a draft chose its pass-to-pass tests, from its evidence (`draft.json`'s content);
    basis `none` when the draft recorded none (rejected first, or drafted before it was kept).

    Raises:
        pydantic.ValidationError: the recorded basis is not one.
    """
    recorded = evidence.get(BASIS_KEY)
    if recorded is None:
        return PassToPassBasis(basis="none", detail="the draft recorded no basis")
    return PassToPassBasis.model_validate(recorded, strict=False)  # JSON arrays for tuples
