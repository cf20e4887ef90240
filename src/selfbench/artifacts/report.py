"""Validation results: the verifier's `reward.json`, one run's record, one task's verdict.

Both environments (`local` and `harbor`) produce the same `TaskReport`, and the verdict rule of
SPEC §7 lives here once: nop must fail fail-to-pass and pass pass-to-pass; oracle must score 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from selfbench._json import JsonObject, loads_strict
from selfbench.errors import JsonError, RewardError
from selfbench.rules import describe_error

if TYPE_CHECKING:
    from selfbench.toolchains.model import ToolchainUse

__all__ = [
    "REWARD_FIELDS",
    "Check",
    "Reward",
    "RewardError",
    "RunReport",
    "TaskReport",
    "parity_reason",
    "read_reward",
]

REWARD_FIELDS = (
    "reward",
    "patch_applied",
    "fail_to_pass",
    "pass_to_pass",
    "deterministic",
    "setup_completed",
    "fail_to_pass_exit_code",
    "fail_to_pass_repeat_exit_code",
    "pass_to_pass_exit_code",
    "forged",
)
"""The keys of `/logs/verifier/reward.json`, in the order `tests/test.sh` writes them."""


class Reward(BaseModel):
    """The verifier's verdict for one run, as `tests/test.sh` writes it."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    reward: Literal[0, 1]
    patch_applied: Literal[0, 1]
    fail_to_pass: Literal[0, 1]
    pass_to_pass: Literal[0, 1]
    deterministic: Literal[0, 1]
    setup_completed: Literal[0, 1]
    fail_to_pass_exit_code: int
    fail_to_pass_repeat_exit_code: int
    pass_to_pass_exit_code: int
    forged: Literal[0, 1] = 0
    """A canary passed, or went missing where every wanted test passed (`bundle/canaries.py`):
    the report was forged, and the trial scores 0. Absent from a verifier that plants none."""


def read_reward(data: bytes, where: str) -> Reward:
    """Parse `reward.json` bytes; `where` names the file in the one-line error."""
    try:
        return Reward.model_validate(loads_strict(data, source=where))
    except (JsonError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        first = first.removeprefix(f"{where}: ")  # JsonError names the source itself
        if isinstance(exc, ValidationError):
            error = exc.errors()[0]
            first = describe_error(error, root="(root)", what=error["msg"])
        raise RewardError(f"{where}: not a selfbench reward.json: {first}") from exc


@dataclass(frozen=True, slots=True)
class Check:
    """One Beyond check (per selector, independent rerun, the suite really ran)."""

    name: str
    passed: bool
    detail: str = ""
    ran: bool = True
    """False when there was nothing to check (then `passed` is False too, never a pass)."""

    def to_json(self) -> JsonObject:
        return {"name": self.name, "ran": self.ran, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class RunReport:
    """One verifier run (nop or oracle): its reward (None when none was written) and log path."""

    reward: Reward | None
    log: str
    tests: dict[str, str] = field(default_factory=dict)
    """Per-test outcomes parsed from the log (test name → passed/failed/skipped), when known."""
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per phase (`fail-to-pass`, `fail-to-pass again`, `pass-to-pass`): passed, failed and
    skipped tests, where the runner's output gives them."""

    def to_json(self) -> JsonObject:
        fields: JsonObject = (
            self.reward.model_dump() if self.reward else dict.fromkeys(REWARD_FIELDS)
        )
        result: JsonObject = {**fields, "log": self.log}
        if self.tests:
            result["tests"] = dict(self.tests)
        if self.counts:
            result["counts"] = {label: dict(counts) for label, counts in self.counts.items()}
        return result


@dataclass(frozen=True, slots=True)
class TaskReport:
    """One task's validation verdict."""

    task_id: str
    accepted: bool
    reason: str | None
    nop: RunReport
    oracle: RunReport
    checks: tuple[Check, ...] = ()
    environment: str = "local"
    toolchains: tuple[ToolchainUse, ...] = ()
    """The toolchain versions the local environment used, and any substitution."""
    reruns: tuple[RunReport, ...] = ()
    """The oracle's reruns from fresh copies (`--reruns`), in order."""

    def to_json(self) -> JsonObject:
        result: JsonObject = {
            "taskId": self.task_id,
            "accepted": self.accepted,
            "reason": self.reason,
            "environment": self.environment,
            "nop": self.nop.to_json(),
            "oracle": self.oracle.to_json(),
            "reruns": [rerun.to_json() for rerun in self.reruns],
            "checks": [check.to_json() for check in self.checks],
        }
        if self.toolchains:
            result["toolchains"] = [use.to_json() for use in self.toolchains]
        return result


_ORACLE_FAILURES = (
    ("patch_applied", "oracle: the gold patch did not apply"),
    ("setup_completed", "oracle: the held-out tests could not be prepared"),
    ("fail_to_pass", "oracle: fail-to-pass failed with the gold patch"),
    ("deterministic", "oracle: fail-to-pass failed on the repeat run (not deterministic)"),
    ("pass_to_pass", "oracle: pass-to-pass failed with the gold patch"),
)


_NOP_FAILURES = (
    ("patch_applied", False, "nop: the collected (empty) patch did not apply"),
    (
        "setup_completed",
        False,
        "nop: the held-out tests could not be prepared (test.patch does not apply)",
    ),
    ("fail_to_pass", True, "nop: fail-to-pass passed without the solution"),
    ("pass_to_pass", False, "nop: pass-to-pass failed without the solution"),
)
"""(field, the value that rejects, the reason), in the order they are judged."""
_FAILING_EVERYWHERE_REASON = (
    "nop and oracle: pass-to-pass failed without the solution and with the gold patch "
    "(the tests fail here whatever the change: see either log)"
)
"""The reason when pass-to-pass fails in both runs: not the change's doing, so naming the nop
run alone would send the reader to the wrong place."""


def _tests_failed_pass_to_pass(oracle: Reward | None) -> bool:
    """Whether the oracle's tests ran (its patch applied, its tests prepared) and pass-to-pass
    failed: a run that never reached them says nothing of pass-to-pass."""
    if oracle is None or not oracle.patch_applied or not oracle.setup_completed:
        return False
    return not oracle.pass_to_pass


def parity_reason(nop: Reward | None, oracle: Reward | None) -> str | None:
    """The original's verdict: None when accepted, else the first reason it is not."""
    if nop is None:
        return "nop: the verifier wrote no reward.json"
    for name, rejecting, message in _NOP_FAILURES:
        if bool(getattr(nop, name)) == rejecting:
            both = name == "pass_to_pass" and _tests_failed_pass_to_pass(oracle)
            return _FAILING_EVERYWHERE_REASON if both else message
    if oracle is None:
        return "oracle: the verifier wrote no reward.json"
    if oracle.reward == 1:
        return None
    return next(
        (message for name, message in _ORACLE_FAILURES if not getattr(oracle, name)),
        "oracle: reward 0",
    )
