"""A run directory: its layout, its lock, one state file per candidate and the event log.

Layout of `DIR` (every file but the log written atomically, so a kill leaves the old or the new):

    lock                     held (flock) by the one process running; names its pid
    inputs.json              the run's options, written once: `--resume` reads them back
    pool.json                the mined candidates in the order they are tried, written once
    candidates/<id>.json     one candidate's state: tier, next stage, history, reason
    events.jsonl             append-only, one JSON object a line (a torn last line is skipped)
    work/<id>/<n>-<stage>/   what stage n of a candidate wrote (redone whole if it did not finish)
    logs/<id>/               the candidate's logs (author, validation, reviewer)

A candidate's stages: draft, author, audit, compile, validate (then at most one `repair`, and
audit, compile, validate again), coupling (then at most one `coupling-repair`, and the same
again), quality (unless the run has none), and `accepted` or `rejected` with a one-line
reason. A stage's result is recorded only
once the stage has finished, so a resumed run redoes at most the stages that were running.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from selfbench._fs import read_bytes, write_atomic
from selfbench._json import Json, JsonObject, JsonValue, dumps_pretty, loads_strict
from selfbench.errors import JsonError, RunError, translating
from selfbench.rules import is_task_id

__all__ = [
    "DOING",
    "STAGES",
    "CandidateState",
    "Pool",
    "RunDirectory",
    "Stage",
    "Status",
]

Stage = Literal[
    "draft",
    "author",
    "audit",
    "compile",
    "validate",
    "repair",
    "coupling",
    "coupling-repair",
    "quality",
]
Status = Literal["pending", "active", "accepted", "rejected"]
STAGES: tuple[Stage, ...] = (
    "draft",
    "author",
    "audit",
    "compile",
    "validate",
    "repair",
    "coupling",
    "coupling-repair",
    "quality",
)
DOING: dict[str, str] = {
    "draft": "drafting",
    "author": "authoring",
    "audit": "auditing",
    "compile": "compiling",
    "validate": "validating",
    "repair": "repairing",
    "coupling": "coupling check",
    "coupling-repair": "coupling repair",
    "quality": "quality check",
}
"""What each stage is called while it runs (`drafting pr-3 (easy)…`)."""
DONE = {
    "draft": "drafted",
    "author": "authored",
    "audit": "audited",
    "compile": "compiled",
    "validate": "validated",
    "repair": "repaired",
    "coupling": "coupling-checked",
    "coupling-repair": "coupling-repaired",
    "quality": "quality-checked",
}
"""How the history names a finished stage."""

_LOCK = "lock"
_INPUTS = "inputs.json"
_POOL = "pool.json"
_EVENTS = "events.jsonl"
_CANDIDATES = "candidates"
_WORK = "work"
_LOGS = "logs"
_MAX_ID = 121


@dataclass(frozen=True, slots=True)
class Pool:
    """The mined pool (`pool.json`): the repository's head and label, and its candidates."""

    head: str
    repository: str
    candidates: tuple[Json, ...]
    """Each candidate's JSON as mining wrote it, in the order they are tried."""

    def to_json(self) -> JsonObject:
        """The pool as `pool.json` holds it."""
        return {
            "head": self.head,
            "repository": self.repository,
            "candidates": list(self.candidates),
        }


@dataclass(frozen=True, slots=True)
class CandidateState:
    """Where one candidate stands: its tier and rank, the next stage, what it has been through."""

    id: str
    tier: str
    rank: int
    status: Status = "pending"
    next: Stage | None = "draft"
    history: tuple[str, ...] = ("mined",)
    reason: str | None = None
    task_dir: str | None = None
    """The authored task directory, relative to the run directory."""
    draft_dir: str | None = None
    """The drafted task directory (what a repair restores from), relative to the run directory."""
    bundle_home: str | None = None
    """The compiled holder (harbor-task/ and definition.json), relative to the run directory."""
    validation: str | None = None
    """The last validation report, relative to the run directory."""
    findings: tuple[str, ...] = ()
    """The last coupling check's findings, for the coupling repair."""
    failing_log: str | None = None
    """The failing verifier log of the last validation, for the validation repair."""
    quality: str | None = None
    """The task's quality record (`quality.json`), relative to the run directory."""
    repairs: int = 0
    coupling_repairs: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time per stage, summed over its runs (never exported)."""

    @property
    def finished(self) -> bool:
        """Accepted or rejected."""
        return self.status in ("accepted", "rejected")

    def advanced(
        self, stage: Stage, seconds: float, *, label: str | None = None, **changes: Any
    ) -> CandidateState:
        """The state after `stage` finished in `seconds` (the history says `label`, by default
        the stage's own word), with `changes` applied."""
        spent = dict(self.seconds)
        spent[stage] = round(spent.get(stage, 0.0) + seconds, 3)
        history = (*self.history, label or DONE[stage])
        return replace(self, history=history, seconds=spent, status="active", **changes)

    def rejected(
        self, stage: Stage, seconds: float, reason: str, *, label: str | None = None
    ) -> CandidateState:
        """The state after `stage` rejected the candidate; the reason is one line, stage first,
        and the history says `label` (what the stage found) before `rejected`."""
        spent = dict(self.seconds)
        spent[stage] = round(spent.get(stage, 0.0) + seconds, 3)
        one_line = " ".join(reason.split()) or "no reason given"
        return replace(
            self,
            status="rejected",
            next=None,
            reason=f"{stage}: {one_line}",
            history=(*self.history, *((label,) if label else ()), "rejected"),
            seconds=spent,
        )

    def to_json(self) -> JsonObject:
        """The state file's content."""
        return {
            "id": self.id,
            "tier": self.tier,
            "rank": self.rank,
            "status": self.status,
            "next": self.next,
            "history": list(self.history),
            "reason": self.reason,
            "taskDir": self.task_dir,
            "draftDir": self.draft_dir,
            "bundleHome": self.bundle_home,
            "validation": self.validation,
            "findings": list(self.findings),
            "failingLog": self.failing_log,
            "quality": self.quality,
            "repairs": self.repairs,
            "couplingRepairs": self.coupling_repairs,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, value: Any, where: str) -> CandidateState:
        """Read a state file's content back.

        Raises:
            RunError: not a candidate state.
        """
        try:
            return cls(
                id=_text(value["id"]),
                tier=_text(value["tier"]),
                rank=int(value["rank"]),
                status=value["status"],
                next=value["next"],
                history=tuple(_text(item) for item in value["history"]),
                reason=value["reason"],
                task_dir=value["taskDir"],
                draft_dir=value.get("draftDir"),
                bundle_home=value["bundleHome"],
                validation=value["validation"],
                findings=tuple(_text(item) for item in value["findings"]),
                failing_log=value["failingLog"],
                quality=value.get("quality"),
                repairs=int(value["repairs"]),
                coupling_repairs=int(value["couplingRepairs"]),
                seconds={str(k): float(v) for k, v in value["seconds"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise RunError(f"{where}: not a candidate state file") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


class RunDirectory:
    """One run's directory; `lock()` before changing anything in it."""

    def __init__(self, path: Path) -> None:
        self.path = path.absolute()
        self._lock_fd: int | None = None

    # --- paths ---------------------------------------------------------------------------------

    @property
    def inputs_path(self) -> Path:
        return self.path / _INPUTS

    @property
    def pool_path(self) -> Path:
        return self.path / _POOL

    @property
    def events_path(self) -> Path:
        return self.path / _EVENTS

    def state_path(self, candidate: str) -> Path:
        return self.path / _CANDIDATES / f"{_safe(candidate)}.json"

    def work(self, candidate: str, step: int, stage: Stage) -> Path:
        """Where step `step` (a stage) of a candidate writes."""
        return self.path / _WORK / _safe(candidate) / f"{step}-{stage}"

    def logs(self, candidate: str) -> Path:
        return self.path / _LOGS / _safe(candidate)

    def relative(self, path: Path) -> str:
        """`path` as the state files record it: relative to the run directory."""
        return path.absolute().relative_to(self.path).as_posix()

    def resolve(self, relative: str) -> Path:
        """A path a state file recorded, back under the run directory.

        Raises:
            RunError: the recorded path leaves the run directory.
        """
        path = (self.path / relative).resolve()
        if not path.is_relative_to(self.path.resolve()):
            raise RunError(f"{self.path}: a state file names a path outside the run: {relative}")
        return path

    # --- the lock --------------------------------------------------------------------------------

    def lock(self) -> None:
        """Take the run directory for this process, creating it if needed.

        Raises:
            RunError: another process holds it, or it cannot be created.
        """
        with translating(RunError, f"create the run directory {self.path}"):
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / _LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise RunError(
                f"run directory {self.path} is in use by another run (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def in_use(self) -> bool:
        """Whether a process holds the run directory now (a run going on)."""
        try:
            fd = os.open(self.path / _LOCK, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing lets a lock this probe took go
        return False

    def unlock(self) -> None:
        """Let the run directory go (the lock also goes when the process dies)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # --- inputs, pool, states --------------------------------------------------------------------

    def write_json(self, path: Path, value: Json) -> None:
        """Write one of the run's JSON files atomically."""
        with translating(RunError, f"write {path}"):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, dumps_pretty(value).encode("utf-8"))

    def read_json(self, path: Path) -> JsonValue:
        """Read one of the run's JSON files.

        Raises:
            RunError: it is missing, unreadable or not JSON.
        """
        data = read_bytes(path, error=RunError)
        try:
            value: JsonValue = loads_strict(data, source=str(path))
        except JsonError as exc:
            raise RunError(str(exc)) from exc
        return value

    def write_pool(self, pool: Pool) -> None:
        """Write the run's mined pool, once."""
        self.write_json(self.pool_path, pool.to_json())

    def read_pool(self) -> Pool:
        """Read the run's mined pool.

        Raises:
            RunError: it is missing, unreadable, not JSON or not a pool.
        """
        value = self.read_json(self.pool_path)
        fields = value if isinstance(value, dict) else {}
        head, repository = fields.get("head"), fields.get("repository")
        candidates = fields.get("candidates")
        if not (isinstance(head, str) and isinstance(repository, str)):
            raise RunError(f"{self.pool_path}: not a run's mined pool")
        if not isinstance(candidates, list):
            raise RunError(f"{self.pool_path}: not a run's mined pool")
        return Pool(head, repository, tuple(candidates))

    def is_run(self) -> bool:
        """Whether the directory holds a run (its inputs were written)."""
        return self.inputs_path.is_file()

    def require_run(self) -> None:
        """Refuse a directory that holds no run, saying what to do.

        Raises:
            RunError: there is no such directory, or it holds no run's inputs.
        """
        if not self.path.is_dir():
            raise RunError(f"{self.path}: no such run directory")
        if not self.is_run():
            raise RunError(
                f"{self.path} holds no run (no {_INPUTS}); delete it, or start a run there "
                "with --repo, --out and --run-dir"
            )

    def save(self, state: CandidateState) -> None:
        """Write a candidate's state file atomically."""
        self.write_json(self.state_path(state.id), state.to_json())

    def load(self, candidate: str) -> CandidateState | None:
        """A candidate's state, or None when it has none yet."""
        path = self.state_path(candidate)
        if not path.is_file():
            return None
        return CandidateState.from_json(self.read_json(path), str(path))

    def states(self) -> list[CandidateState]:
        """Every candidate state written so far, by rank."""
        folder = self.path / _CANDIDATES
        found = [
            CandidateState.from_json(self.read_json(path), str(path))
            for path in sorted(folder.glob("*.json"))
            if path.is_file() and not path.name.startswith(".")
        ]
        return sorted(found, key=lambda state: state.rank)

    # --- events ----------------------------------------------------------------------------------

    def event(self, kind: str, **fields: Json) -> None:
        """Append one event to the log (one line, written with one `write`)."""
        record: JsonObject = {"time": round(time.time(), 3), "event": kind, **fields}
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        with translating(RunError, f"append to {self.events_path}"):
            fd = os.open(self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)

    def events(self) -> Iterator[dict[str, JsonValue]]:
        """The events logged so far; a line torn by a kill is skipped."""
        if not self.events_path.is_file():
            return
        with self.events_path.open("rb") as handle:
            for line in handle:
                try:
                    value: JsonValue = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    yield value


def _safe(candidate: str) -> str:
    if not is_task_id(candidate, max_length=_MAX_ID):
        raise RunError(f"candidate id {candidate!r} cannot name a file")
    return candidate
