"""Each stage of a candidate, as one call into the module that owns it.

The driver decides the order and records the results; these functions only run a stage and
say how it went: a `StageResult` with the directory it produced, or a one-line reason to reject.
Drafting (`selfbench.draft`), authoring and the coupling check (`selfbench.run.author`,
`selfbench.run.coupling`) are imported when a stage first needs them; so are the quality
checks (`selfbench.quality`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._shell import split_argv
from selfbench.artifacts.draft_record import DRAFT_FILE, DraftEvidence
from selfbench.artifacts.quality_record import (
    QUALITY_FILE,
    QualityRecord,
    Verdict,
    read_quality,
    write_quality,
)
from selfbench.artifacts.task_dir import AuthoredTask, read_authored_task
from selfbench.artifacts.validation import VALIDATION_FILE
from selfbench.compiler import compile_home
from selfbench.contract import TaskDefinition
from selfbench.draft.api import DraftOptions, ProvenCheck, draft_candidate
from selfbench.draft.config import DraftConfig
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.host_network import HostNetwork
from selfbench.errors import HarborError, SandboxError, SelfbenchError
from selfbench.mine.candidate import CandidateModel
from selfbench.run import author
from selfbench.run.author import AuthorJob
from selfbench.run.confine import DEFAULT_NETWORK, AuthorNetwork
from selfbench.run.coupling import (
    blockers_of,
    coupling_blockers,
    coupling_repair_with_command,
    review_with_command,
)
from selfbench.task import judge_task
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions

__all__ = [
    "AUTHOR_DRAFT",
    "LOG_TAIL_BYTES",
    "MIN_QUALITY",
    "StageResult",
    "audit_task",
    "author_task",
    "command_name",
    "compile_stage",
    "coupled_draft",
    "coupling_stage",
    "draft_stage",
    "quality_gate",
    "quality_stage",
    "repair_stage",
    "reused_quality",
    "task_quality_check",
    "tier_change",
    "validate_stage",
]

AUTHOR_DRAFT = "draft"
"""`--author draft`: the drafted task is taken as it is, no model."""
LOG_TAIL_BYTES = 8 * 1024
"""How much of the failing verifier log a validation repair is given."""


@dataclass(frozen=True, slots=True)
class StageResult:
    """A stage's outcome: what it produced (a directory) or why the candidate is rejected."""

    path: Path | None = None
    reason: str | None = None
    quality: Path | None = None
    """The quality record the stage wrote or judged (`quality`, or a draft's gate)."""
    log: str | None = None
    """The failing run's log of a rejected validation, for a repair."""
    findings: tuple[str, ...] = ()
    """A coupled task's findings, for a coupling repair."""

    @property
    def ok(self) -> bool:
        """Whether the candidate goes on."""
        return self.reason is None


def command_name(command: str | None) -> str | None:
    """The program a command runs, never its arguments (they may hold secrets)."""
    if command is None:
        return None
    if command == AUTHOR_DRAFT:
        return AUTHOR_DRAFT
    try:
        words = split_argv(command)
    except ValueError:
        words = command.split()
    return Path(words[0]).name if words else None


def _guarded(run: Callable[[], StageResult]) -> StageResult:
    """A stage's own refusal (a SelfbenchError) rejects the candidate; a machine that cannot
    run the sandbox, or a Harbor that gives no verdict, stops the run; anything else is a bug."""
    try:
        return run()
    except (SandboxError, HarborError):
        raise
    except SelfbenchError as exc:
        return StageResult(reason=" ".join(str(exc).split()))


# --- draft -------------------------------------------------------------------------------------


def draft_stage(  # noqa: PLR0913 - one stage's inputs, as the step has them
    repo: Path,
    candidate: CandidateModel,
    out: Path,
    *,
    logs: Path,
    source_url: str | None,
    setup_env: tuple[tuple[str, str], ...] = (),
    host_network: HostNetwork | None = None,
    ceilings: Ceilings | None = None,
    agent_dependencies: bool = False,
    quality: bool = True,
    config: DraftConfig | None = None,
    gate: Verdict | None = None,
    coupling: bool = False,
) -> StageResult:
    """Draft the candidate into `out`: a proven task directory (with its quality record unless
    `quality` is False), or the reason it is not one; its sandbox within the host's `ceilings`
    (None: `Ceilings.for_host()`). With `gate` (a run whose author keeps the drafted task as
    it is, so the draft's quality record is the final one), a task below that verdict is
    rejected here, `quality: <verdict>: <first reason>`, not after authoring and validating
    it. With `coupling` (no author can repair a coupled task), the coupling check's
    deterministic blockers reject the proven task before its quality runs (`coupled: …`, as the
    coupling stage says it). It reads the gold before quality moves unneeded files out of it;
    a name only such a file introduces (no test needs that file) is all it could find beyond
    the coupling stage's own check, which still runs on the final task."""

    def run() -> StageResult:
        out.mkdir(parents=True)
        local = LocalOptions(
            setup_env=setup_env, host_network=host_network or HostNetwork(), ceilings=ceilings
        )
        options = DraftOptions(
            logs=logs,
            source_url_base=source_url,
            local=local,
            agent_dependencies=agent_dependencies,
            quality=quality,
            config=config,
            proven_check=coupled_draft(repo) if coupling else None,
        )
        result = draft_candidate(repo, candidate, out, options)
        if result.status != "drafted" or result.task_dir is None:
            return StageResult(reason=result.reason or "not drafted")
        retiered = tier_change(result.evidence)
        if retiered is not None:
            return StageResult(reason=retiered)
        recorded = Path(result.task_dir) / QUALITY_FILE
        if gate is not None and recorded.is_file():
            below = quality_gate(read_quality(recorded), gate)
            if below is not None:  # the record is the verdict's: the summary counts it
                return StageResult(reason=f"quality: {below}", quality=recorded)
        return StageResult(path=Path(result.task_dir))

    return _guarded(run)


def coupled_draft(repo: Path) -> ProvenCheck:
    """The coupling check's deterministic blockers of a proven draft, as its rejection."""

    def check(definition: TaskDefinition, test_patch: bytes, gold_patch: bytes) -> str | None:
        findings = blockers_of(
            repo, definition.baseCommit, definition.prompt, test_patch, gold_patch
        )
        return _coupled(findings) if findings else None

    return check


def _coupled(findings: Sequence[str]) -> str:
    """The coupling stage's rejection: its findings, joined."""
    return f"coupled: {'; '.join(findings)}"


def tier_change(evidence: DraftEvidence | None) -> str | None:
    """Why a drafted task no longer fills its candidate's tier (drafting moved gold files no
    test needs out and recomputed the tier lower), or None. A run's budgets are per mined tier,
    and its author must submit the candidate's tier."""
    quality = None if evidence is None else evidence.quality
    change = None if quality is None else quality.difficulty
    if quality is None or change is None or change.after == change.before:
        return None
    moved = ", ".join(quality.moved)
    return (
        f"without the files no fail-to-pass test needs ({moved}) the task is "
        f"{change.after}, not the {change.before} task it was mined as"
    )


# --- author ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthorSettings:
    """How tasks are authored: `draft`, or a command; and the limits it runs under."""

    command: str
    time_limit_sec: float
    inactivity_sec: float
    env_names: tuple[str, ...] = ()
    """The variables passed to author and reviewer commands (`--author-env`)."""
    home: Path | None = None
    """The directory copied to be their `HOME` (`--author-home`); None: an empty one."""
    network: AuthorNetwork = DEFAULT_NETWORK
    """What they may reach (`--author-allow`, `--author-network`)."""


def _job(
    repo: Path, candidate: CandidateModel, draft_dir: Path, out: Path, log: Path, s: AuthorSettings
) -> Any:

    return AuthorJob(
        repo=repo,
        candidate=candidate,
        draft_dir=draft_dir,
        out_dir=out,
        log=log,
        time_limit_sec=s.time_limit_sec,
        inactivity_sec=s.inactivity_sec,
        env_names=s.env_names,
        home=s.home,
        network=s.network,
    )


def _authored(result: Any) -> StageResult:
    if not result.ok or result.task_dir is None:
        return StageResult(reason=result.reason or "the author produced no task")
    return StageResult(path=Path(result.task_dir))


def author_task(
    repo: Path,
    candidate: CandidateModel,
    draft_dir: Path,
    out: Path,
    log: Path,
    settings: AuthorSettings,
) -> StageResult:
    """Author the task from its draft: as it is (`draft`) or by the author command."""

    def run() -> StageResult:
        out.mkdir(parents=True)
        log.parent.mkdir(parents=True, exist_ok=True)
        job = _job(repo, candidate, draft_dir, out / "out", log, settings)
        if settings.command == AUTHOR_DRAFT:
            return _authored(author.author_from_draft(job))
        return _authored(author.author_with_command(settings.command, job))

    return _guarded(run)


def repair_stage(  # noqa: PLR0913 - one stage's inputs, as the step has them
    repo: Path,
    candidate: CandidateModel,
    task_dir: Path,
    out: Path,
    log: Path,
    settings: AuthorSettings,
    failing_log_tail: bytes,
    *,
    draft_dir: Path,
) -> StageResult:
    """One validation repair by the author command, checked by the repair rules; the author
    is given the task to repair and, as its draft, the drafted task."""

    def run() -> StageResult:
        given = _private_copy(task_dir, out)
        log.parent.mkdir(parents=True, exist_ok=True)
        job = _job(repo, candidate, draft_dir, out / "out", log, settings)
        return _authored(author.repair_with_command(settings.command, job, given, failing_log_tail))

    return _guarded(run)


def _private_copy(task_dir: Path, out: Path) -> Path:
    """A copy of the task for a repair to start from, so the recorded one is never changed."""
    given = out / "given" / task_dir.name
    given.parent.mkdir(parents=True)  # `out` is made here too
    shutil.copytree(task_dir, given, symlinks=True)
    return given


# --- audit, compile, validate ------------------------------------------------------------------


def audit_task(task_dir: Path) -> StageResult:
    """The static audit (SPEC §4): its blockers, joined, reject."""

    def run() -> StageResult:
        task = read_authored_task(task_dir)
        judged = judge_task(task.loaded, task.test_patch, task.gold_patch)
        if not judged.audit.accepted:
            return StageResult(reason=judged.audit.reason)
        return StageResult(path=task_dir)

    return _guarded(run)


def compile_stage(
    task_dir: Path,
    repo: Path,
    home: Path,
    *,
    allowed_hosts: tuple[str, ...] = (),
    draft_dir: Path | None = None,
) -> StageResult:
    """Compile the task into `home/harbor-task/`, with its definition and its draft's record
    (from `draft_dir`) beside it (its agent may reach `allowed_hosts`, else the compiler's
    default list)."""

    def run() -> StageResult:
        home.mkdir(parents=True)
        record = draft_dir / DRAFT_FILE if draft_dir is not None else None
        compile_home(
            task_dir,
            repo=repo,
            home=home,
            allowed_hosts=allowed_hosts or None,
            draft_record=record if record is not None and record.is_file() else None,
        )
        return StageResult(path=home)

    return _guarded(run)


RunnerFactory = Callable[[Path], Any]
"""Makes the validation runner for one task, given where its logs go."""


def validate_stage(home: Path, runner: Any) -> StageResult:
    """Validate the compiled task (nop, oracle, rerun); the report lands beside it.

    A rejection holds the failing run's log path (`log`), for a repair.
    """

    def run() -> StageResult:
        [report] = validate([home], runner=runner, jobs=1)
        if report.accepted:
            return StageResult(path=home / VALIDATION_FILE)
        failing = report.nop if (report.reason or "").startswith("nop") else report.oracle
        return StageResult(reason=report.reason or "rejected by validation", log=failing.log)

    return _guarded(run)


def log_tail(log: str | None) -> bytes:
    """The last `LOG_TAIL_BYTES` of a log file (empty when there is none)."""
    if not log:
        return b""
    try:
        with Path(log).open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - LOG_TAIL_BYTES))
            return handle.read()
    except OSError:
        return b""


# --- coupling ----------------------------------------------------------------------------------


def coupling_stage(
    task_dir: Path, repo: Path, reviewer: str | None, log: Path, settings: AuthorSettings
) -> StageResult:
    """The coupling check: the deterministic blockers, then the reviewer's verdict if any (the
    reviewer runs under the author command's time limit, variables, home and network).

    A coupled task is a rejection holding the findings (for a coupling repair).
    """

    def run() -> StageResult:
        findings = list(coupling_blockers(task_dir, repo))
        if not findings and reviewer is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            verdict = review_with_command(
                reviewer,
                task_dir,
                log,
                settings.time_limit_sec,
                settings.env_names,
                home=settings.home,
                network=settings.network,
            )
            if verdict.verdict == "coupled":
                findings = list(verdict.findings) or ["the reviewer found the tests coupled"]
        if findings:
            return StageResult(reason=_coupled(findings), findings=tuple(findings))
        return StageResult(path=task_dir)

    return _guarded(run)


def coupling_repair_stage(  # noqa: PLR0913 - one stage's inputs, as the step has them
    repo: Path,
    candidate: CandidateModel,
    task_dir: Path,
    out: Path,
    log: Path,
    settings: AuthorSettings,
    findings: tuple[str, ...],
    *,
    draft_dir: Path,
) -> StageResult:
    """One coupling repair by the author command (held-out test files only)."""

    def run() -> StageResult:
        given = _private_copy(task_dir, out)
        log.parent.mkdir(parents=True, exist_ok=True)
        job = _job(repo, candidate, draft_dir, out / "out", log, settings)
        return _authored(coupling_repair_with_command(settings.command, job, given, list(findings)))

    return _guarded(run)


# --- quality -----------------------------------------------------------------------------------

MIN_QUALITY: tuple[Verdict, ...] = ("review", "ship")
"""`--min-quality`: the lowest verdict a task is exported with (`review`, the default, rejects
only `reject`; `ship` rejects `review` too)."""
_RANK: dict[Verdict, int] = {"ship": 0, "review": 1, "reject": 2}

QualityCheck = Callable[[Path, Path], QualityRecord]
"""Checks the quality of a task directory (a copy is made under the second path to work in)."""

_SAME_FOR_QUALITY = (
    "baseCommit",
    "workdir",
    "setupCommand",
    "testCommand",
    "failToPass",
    "passToPass",
    "testPaths",
    "toolchains",
    "prompt",
)
"""What the quality checks read of a definition: the draft's record holds for an authored task
that keeps them all (and both patches byte for byte)."""


def task_quality_check(repo: Path, local: LocalOptions) -> QualityCheck:
    """The quality checks of `selfbench.quality` (ablation, mutation, verdict) on a task of
    `repo`, run in the local sandbox with `local`'s setup environment. They run on a copy of
    the task under the stage's directory: `assess_task` writes its record beside the task it
    reads, and the recorded task is never changed."""

    def check(task_dir: Path, out: Path) -> QualityRecord:
        from selfbench.quality.api import QualityOptions, assess_task  # noqa: PLC0415

        return assess_task(_private_copy(task_dir, out), repo, QualityOptions(local=local))

    return check


def quality_gate(record: QualityRecord, minimum: Verdict) -> str | None:
    """Why the task is not exported under `--min-quality minimum`, as `<verdict>: <first
    reason>`; None when its verdict is `minimum` or better."""
    if _RANK[record.verdict] <= _RANK[minimum]:
        return None
    first = record.reasons[0] if record.reasons else "no reason given"
    return f"{record.verdict}: {first}"


def _same_for_quality(authored: AuthoredTask, drafted: AuthoredTask) -> bool:
    if (authored.test_patch, authored.gold_patch) != (drafted.test_patch, drafted.gold_patch):
        return False
    mine, theirs = authored.definition, drafted.definition
    return all(getattr(mine, key) == getattr(theirs, key) for key in _SAME_FOR_QUALITY)


def reused_quality(task_dir: Path, draft_dir: Path) -> QualityRecord | None:
    """The drafted task's quality record, for an authored task the checks would see as the
    same (both patches byte for byte, the selectors, commands and prompt); its taskId made the
    authored task's. None when the draft has no record or the task differs.

    Raises:
        QualityError: the draft's `quality.json` is not a quality record.
    """
    path = draft_dir / QUALITY_FILE
    if not path.is_file():
        return None
    authored = read_authored_task(task_dir)
    if not _same_for_quality(authored, read_authored_task(draft_dir)):
        return None
    return read_quality(path).model_copy(update={"taskId": authored.definition.taskId})


def quality_stage(
    task_dir: Path,
    draft_dir: Path,
    out: Path,
    *,
    minimum: Verdict,
    check: QualityCheck,
) -> StageResult:
    """The final task's quality record (the draft's when it still holds, else `check`'s),
    written to `out/quality.json`, and the `--min-quality` gate on its verdict: a task below
    `minimum` is rejected with `<verdict>: <first reason>`. Either way the result names the
    record (`quality`)."""

    def run() -> StageResult:
        out.mkdir(parents=True)
        record = reused_quality(task_dir, draft_dir) or check(task_dir, out)
        path = write_quality(out, record)
        return StageResult(path=path, reason=quality_gate(record, minimum), quality=path)

    return _guarded(run)
