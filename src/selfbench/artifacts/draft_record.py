"""A draft record: `draft.json`, the evidence `selfbench draft` keeps beside the task it wrote.

It records what the draft observed (the runs, the decision, where the logs are), so that an
author or a reviewer can see why the task came out as it did. One writer, one reader.

Three of its members have a shape of their own, read back here: `passToPassBasis` (how the
pass-to-pass tests were chosen, a `PassToPassBasis`), `droppedFlaky` (each test the change
does not reach whose outcome changed between runs, left out of pass-to-pass: a `FlakyTest`) and
`rerunAlone` (each test the change may reach whose outcome changed between runs, and how it
fared when run again with the machine alone: an `AloneRerun`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from selfbench._fs import read_bytes
from selfbench._json import dumps_pretty
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.errors import TaskFileError

__all__ = [
    "ALONE_KEY",
    "BASIS_KEY",
    "DRAFT_FILE",
    "DROPPED_FLAKY_KEY",
    "AloneRerun",
    "FlakyTest",
    "dropped_flaky",
    "pass_to_pass_basis",
    "read_draft_record",
    "render_draft_record",
    "reruns_alone",
]

DRAFT_FILE = "draft.json"
"""The sidecar beside a drafted task's files: the evidence and the draft marker."""


def render_draft_record(evidence: Mapping[str, Any]) -> bytes:
    """The bytes of `draft.json`: two-space indented JSON with a trailing newline."""
    return dumps_pretty(evidence).encode("utf-8")


def read_draft_record(task_dir: Path) -> Any:
    """The decoded `draft.json` of a drafted task directory, read as the task's own files are
    (`_fs.read_bytes`: a symbolic link in its place is refused).

    Raises:
        TaskFileError: the file cannot be read, or is a link or not a regular file.
        ValueError: it is not JSON (or not UTF-8).
    """
    return json.loads(read_bytes(task_dir / DRAFT_FILE, error=TaskFileError).decode("utf-8"))


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


DROPPED_FLAKY_KEY = "droppedFlaky"
"""The evidence's list of flaky tests left out of pass-to-pass (each a `FlakyTest`)."""


class FlakyTest(BaseModel):
    """A test (or a test file, when its exit status changed) whose outcome changed between
    the runs at one place, and how often it passed there."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    test: str
    """The test as a rejection names it: `<file>: <name>` (or the runner's id when it holds
    its file, `tests/test_a.py::test_x`), or the file alone."""
    where: Literal["base", "gold"]
    """Where it flipped: in the runs at the base, or in those with the gold patch."""
    passed: int
    runs: int


def dropped_flaky(evidence: Mapping[str, Any]) -> tuple[FlakyTest, ...]:
    """The flaky tests a draft left out of pass-to-pass, from its evidence (none when it
    recorded none).

    Raises:
        pydantic.ValidationError: a recorded entry is not one.
    """
    return tuple(FlakyTest.model_validate(entry) for entry in evidence.get(DROPPED_FLAKY_KEY) or ())


ALONE_KEY = "rerunAlone"
"""The evidence's list of tests run again alone (each an `AloneRerun`)."""


class AloneRerun(BaseModel):
    """A test the change may reach (or its file, when its exit status changed) whose outcome
    changed between the runs at one place while other runs shared the machine, and how often
    it passed when its file ran again with the machine alone. Steady alone (passed in every one
    of those runs: the machine's load can make a test fail, never pass), its file's runs alone
    stand for the others; otherwise it is flaky and rejects the candidate."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    test: str
    """As `FlakyTest.test`."""
    where: Literal["base", "gold"]
    passed: int
    runs: int
    alonePassed: int  # noqa: N815 - the record's camelCase, as its other members
    aloneRuns: int  # noqa: N815

    @property
    def steady(self) -> bool:
        """Whether it passed in every run alone."""
        return 0 < self.alonePassed == self.aloneRuns


def reruns_alone(evidence: Mapping[str, Any]) -> tuple[AloneRerun, ...]:
    """The tests a draft ran again alone, from its evidence (none when it recorded none).

    Raises:
        pydantic.ValidationError: a recorded entry is not one.
    """
    return tuple(AloneRerun.model_validate(entry) for entry in evidence.get(ALONE_KEY) or ())
