"""`draft_candidate`: a mined candidate in, a proven task directory (or the reason why not) out.

    result = draft_candidate(repo, candidate, out_dir, options)

`repo` is the git repository the candidate was mined from, `candidate` a `CandidateModel` (one
line of `candidates.jsonl`), `out_dir` the tasks directory. The result is a `DraftResult`:
`status` is `drafted` (the task is `out_dir/<taskId>/`, its `taskId` the candidate's id) or
`rejected` with a one-line `reason`; either way `logs` names the kept logs. Steps:

1. split the change (`split.split_change`): test patch, gold patch;
2. the environment (`infer.infer_environment`, overridden by `selfbench.toml` or `--config`),
   and, before anything runs, the static audit's blockers the change alone decides
   (`audit.change_blockers`: runner configuration in the gold patch, the tier's size gates);
3. run, read, decide (`run.observe`, `run.decide`): selectors from observed outcomes, the
   gold reruns and the coverage run skipped once the runs so far settle a rejection
   (`run.rejected_early`); when
   the candidate is rejected and a changed test file was collected neither at the base nor with
   the gold patch under the inferred Python, again under the next older one of the image's the
   local sandbox has (`Environment.pythons`), and a rejection names each interpreter and its
   error;
4. the draft instruction (`instruction.draft_instruction`);
5. the static audit (`task.judge_task`) on the finished task;
6. unless `DraftOptions.quality` is off, its quality (`selfbench.quality`, SPEC §13): gold files
   no fail-to-pass test needs that are not implementation are moved out of the gold patch, the
   tier is recomputed from what is left (a candidate left with no tier is rejected, naming the
   files) and the static audit runs again on the result;
7. one atomic write of `definition.json`, `test.patch`, `gold.patch`, `quality.json` and the
   sidecar `draft.json` (marked draft: the evidence, the commands and where each came from,
   the files moved out of the gold, timings, how the pass-to-pass tests were chosen, read back
   by `artifacts.draft_record.pass_to_pass_basis`, and the flaky tests the change does not
   reach that were left out, by `artifacts.draft_record.dropped_flaky`).

A problem with one candidate (no test changes, setup fails, unreadable runner output, a bad
`selfbench.toml` at its base) is a rejection; only what stops every candidate raises (no
sandbox on this machine, an existing task directory without `replace`).
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from selfbench import activity
from selfbench._fs import atomic_directory
from selfbench._git import git
from selfbench._json import JsonObject
from selfbench._scratch import drop_kept, kept_directory
from selfbench.artifacts.draft_record import (
    DRAFT_FILE,
    DraftCommands,
    DraftEvidence,
    FileRunRecord,
    QualityNote,
    RunRecord,
    TaskInputs,
    TierChange,
    observed_inputs,
    render_draft_record,
)
from selfbench.artifacts.quality_record import QUALITY_FILE, QualityRecord, render_quality
from selfbench.artifacts.task_dir import render_task_files
from selfbench.audit import change_blockers
from selfbench.contract import AUTHORING_DEFAULTS, Difficulty, TaskDefinition, parse_definition
from selfbench.draft._python import python_command
from selfbench.draft.config import DraftConfig, merge_configs, repo_config
from selfbench.draft.infer import (
    FILE_SELECTOR_RUNNERS,
    Environment,
    infer_environment,
    matches_globs,
    selector_of,
)
from selfbench.draft.instruction import draft_instruction
from selfbench.draft.run import (
    DEFAULT_P2P_CAP,
    Decision,
    Observation,
    Plan,
    RunSample,
    collection_error,
    decide,
    observe,
    rejected_early,
)
from selfbench.draft.split import SplitChange, is_runnable_test, split_change
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.phases import DEFAULT_RERUNS, LocalOptions
from selfbench.errors import DraftError, SandboxError, SelfbenchError, translating
from selfbench.mine.candidate import CandidateModel
from selfbench.patches import parse_patch
from selfbench.progress import Reporter, silent
from selfbench.rules import THRESHOLDS
from selfbench.runners import runner_named
from selfbench.task import TaskVerdict, judge_task
from selfbench.toolchains import sandbox_pythons

__all__ = [
    "DraftOptions",
    "DraftResult",
    "ProvenCheck",
    "draft_candidate",
    "draft_candidates",
    "draft_evidence",
]

ProvenCheck = Callable[[TaskDefinition, bytes, bytes], str | None]
"""A check of a proven task: its definition, test patch and gold patch in; a rejection or None."""


@dataclass(frozen=True, slots=True)
class DraftOptions:
    """How candidates are drafted."""

    reruns: int | None = None
    """Gold runs (each from a fresh copy of the prepared tree; each runs every file twice);
    default the configuration's `reruns`, else 3."""
    config: DraftConfig | None = None
    """A `--config` file's settings, used instead of the repository's own `selfbench.toml`."""
    logs: Path | None = None
    """Where each candidate's logs go (`<logs>/<candidate id>/`); default a kept temp dir."""
    local: LocalOptions = field(default_factory=LocalOptions)
    """The local environment's options (network, workspace, setup environment…)."""
    pass_to_pass_cap: int | None = None
    """At most this many pass-to-pass selectors (default the configuration's, else 20)."""
    replace: bool = False
    """Replace an existing task directory (else the candidate is rejected)."""
    source_url_base: str | None = None
    """For a candidate with a pull request number but no URL (history without a GitHub
    remote): the task's `sourceUrl` is `<base>/pull/<number>`."""
    pythons: Mapping[str, str] | None = None
    """The local sandbox's Python commands (`python3`, `python3.11`) and the `major.minor` each
    runs, among which the interpreter is chosen; default found on this machine
    (`toolchains.sandbox_pythons`)."""
    agent_dependencies: bool = False
    """`--deps agent`: drafted tasks set `agentDependencies`, so the agent's environment also
    gets the dependencies the gold patch adds (default: the verifier's only)."""
    quality: bool = True
    """Check the drafted task's quality (`quality.json`) and move unneeded non-implementation
    files out of its gold patch (`--no-quality`: neither)."""
    proven_check: ProvenCheck | None = None
    """A rejection the caller settles on the proven task (its definition, test patch and gold
    patch) before its quality is checked: `run`'s coupling check, when no author can repair a
    coupled task, so a coupled candidate costs no quality runs. The reason it returns, if any,
    rejects the candidate as it is."""


Status = Literal["drafted", "rejected"]


@dataclass(frozen=True, slots=True)
class DraftResult:
    """One candidate's outcome."""

    candidate_id: str
    status: Status
    reason: str | None = None
    task_dir: Path | None = None
    logs: Path | None = None
    seconds: float = 0.0
    evidence: DraftEvidence | None = None
    """The sidecar's content (None when rejected before anything ran)."""

    @property
    def drafted(self) -> bool:
        """True when a task directory was written."""
        return self.status == "drafted"

    def to_json(self) -> JsonObject:
        """The result as `selfbench draft --json` prints it."""
        return {
            "candidate": self.candidate_id,
            "status": self.status,
            "reason": self.reason,
            "taskDir": None if self.task_dir is None else str(self.task_dir),
            "logs": None if self.logs is None else str(self.logs),
            "seconds": round(self.seconds, 1),
        }


def _logs_for(options: DraftOptions, candidate_id: str) -> Path:
    if options.logs is None:
        return kept_directory(f"selfbench-draft-{candidate_id}-")
    path = options.logs / candidate_id
    path.mkdir(parents=True, exist_ok=True)
    return path


def _source(candidate: CandidateModel, base: str | None) -> tuple[int, str]:
    """The candidate's pull request number and URL, which every task records.

    Raises:
        DraftError: the candidate has none (a plain commit, or history without a remote).
    """
    if candidate.sourcePr is None:
        raise DraftError("the candidate names no pull request (sourcePr), which a task records")
    if candidate.sourceUrl is not None:
        return candidate.sourcePr, candidate.sourceUrl
    if base is None:
        raise DraftError(
            "the candidate has no pull request URL (no GitHub remote); give --source-url BASE"
        )
    return candidate.sourcePr, f"{base.rstrip('/')}/pull/{candidate.sourcePr}"


class _Rejected(Exception):  # noqa: N818 - a result, raised only inside this module
    """A candidate that cannot be drafted: the reason, and the evidence gathered so far."""

    def __init__(self, reason: str, evidence: DraftEvidence | None = None) -> None:
        super().__init__(reason)
        self.reason = " ".join(reason.split())
        self.evidence = evidence


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What is known before anything runs."""

    number: int
    url: str
    split: SplitChange
    config: DraftConfig
    environment: Environment
    plan: Plan
    blocked_plugins: tuple[str, ...] = ()
    """The plugins its test command blocks because they failed to load (one round at most,
    `_without_failed_plugins`); kept under another Python."""


def draft_candidate(
    repo: Path,
    candidate: CandidateModel,
    out_dir: Path,
    options: DraftOptions | None = None,
) -> DraftResult:
    """Draft one candidate into `out_dir/<id>/`, or say why not (see the module docstring).

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    options = options or DraftOptions()
    if options.pythons is None:
        options = replace(options, pythons=sandbox_pythons())
    started = time.monotonic()
    target = out_dir / candidate.id
    logs = _logs_for(options, candidate.id)
    try:
        evidence = _draft(repo, candidate, target, options, logs, started)
    except _Rejected as rejection:
        seconds = time.monotonic() - started
        kept = _kept(logs, options)
        return DraftResult(
            candidate.id, "rejected", rejection.reason, None, kept, seconds, rejection.evidence
        )
    except BaseException:
        _kept(logs, options)
        raise
    seconds = time.monotonic() - started
    kept = _kept(logs, options)
    return DraftResult(candidate.id, "drafted", None, target, kept, seconds, evidence)


def _kept(logs: Path, options: DraftOptions) -> Path | None:
    """The logs folder, or None once a temporary one nothing was written to is removed."""
    if options.logs is None and logs.is_dir() and not any(logs.iterdir()):
        drop_kept(logs)
        return None
    return logs


def _prepare(repo: Path, candidate: CandidateModel, options: DraftOptions) -> _Prepared:
    """Split, configuration and environment; `_Rejected` when the candidate cannot be drafted."""
    try:
        number, url = _source(candidate, options.source_url_base)
        split = split_change(repo, candidate)
        config = merge_configs(repo_config(repo, candidate.baseCommit), options.config)
        config = config or DraftConfig()
        environment = infer_environment(
            repo,
            candidate.baseCommit,
            split.test_files,
            config,
            local_pythons=_local_pythons(options),
        )
    except SelfbenchError as exc:  # DraftError, or GitError reading the base
        raise _Rejected(str(exc)) from exc
    plan = _plan(repo, candidate, split, environment, config)
    if not plan.held_out:
        raise _Rejected("the change holds out no test file a runner collects tests from")
    return _Prepared(number, url, split, config, environment, plan)


def _observe(
    repo: Path, prepared: _Prepared, options: DraftOptions, logs: Path, *, minimum: int, cap: int
) -> Observation:
    """The runs of the candidate (`run.observe`), stopped once what they show settles a
    rejection (`run.rejected_early`; `minimum` and `cap`: the tier's pass-to-pass)."""
    reruns = options.reruns or prepared.config.reruns or DEFAULT_RERUNS
    reruns = min(reruns, (options.local.ceilings or Ceilings.for_host()).reruns)
    local = replace(options.local, reruns=reruns)
    environment = prepared.environment

    def settled(observation: Observation) -> bool:
        return rejected_early(
            observation,
            selector_of=lambda name: selector_of(environment.runner, name),
            by_file=environment.runner in FILE_SELECTOR_RUNNERS,
            neighbours=prepared.plan.neighbours,
            minimum=minimum,
            cap=cap,
        )

    try:
        return observe(
            repo,
            prepared.plan,
            test_patch=prepared.split.test_patch,
            gold_patch=prepared.split.gold_patch,
            logs=logs,
            options=local,
            settled=settled,
        )
    except SandboxError:
        raise
    except SelfbenchError as exc:  # a patch that does not apply at the base, say
        raise _Rejected(f"the provisional task failed: {exc}") from exc


def _new_behaviour(observation: Observation, decision: Decision) -> tuple[str, ...]:
    """The fail-to-pass tests' names that did not pass at the base: what the change adds (a
    whole-file selector's other tests pass there already)."""
    base = observation.base[0].tests() if observation.base else {}
    passed = {key.partition("\x00")[2] for key, outcome in base.items() if outcome == "passed"}
    return tuple(name for name in decision.tests if name not in passed)


def _draft(
    repo: Path,
    candidate: CandidateModel,
    target: Path,
    options: DraftOptions,
    logs: Path,
    started: float,
) -> DraftEvidence:
    """The steps of `draft_candidate`; the evidence written, or `_Rejected`."""
    if target.exists() and not options.replace:
        raise _Rejected(f"{target} already exists (--replace overwrites it)")
    prepared = _prepare(repo, candidate, options)
    plan, split = prepared.plan, prepared.split
    static = change_blockers(
        candidate.difficulty,
        plan.test_command,
        plan.toolchains,
        parse_patch(split.gold_patch, lenient=True),
        parse_patch(split.test_patch, lenient=True),
    )
    if static:  # before any sandbox work: what the runs observe cannot change these
        raise _Rejected(_audit_reason(static))
    prepared, observation, decision, retries = _observe_pythons(
        repo, candidate, prepared, options, logs
    )
    evidence = draft_evidence(candidate, prepared.environment, observation, decision, logs)
    evidence = replace(evidence, python_retries=tuple(retries))
    if decision.reason is not None:
        raise _Rejected(decision.reason, evidence)
    split = prepared.split
    names = (*decision.tests, *decision.fail_to_pass, *decision.pass_to_pass)
    prompt = draft_instruction(
        candidate,
        split,
        tuple(dict.fromkeys(names)),
        repo=repo,
        behaviours=_new_behaviour(observation, decision),
    )
    definition = _definition(
        candidate, prepared.plan, decision, prompt, prepared.number, prepared.url
    )
    if options.agent_dependencies:
        definition["agentDependencies"] = True
    gold_runs = len({sample.name.split()[0] for sample in observation.gold})
    plan = prepared.plan
    task = TaskInputs(
        plan.base_commit, plan.workdir, plan.setup_command, plan.test_command, plan.toolchains
    )
    observed = observed_inputs(task, split.test_patch, split.gold_patch, gold_runs=gold_runs)
    evidence = replace(evidence, observed=observed)
    verdict = _check_proven(definition, split, options, evidence)
    quality = None
    if options.quality:
        quality = _assess_draft(repo, definition, split, options, evidence)
        definition, split, evidence = _without_moved(
            definition, candidate.difficulty, split, quality, evidence
        )
        verdict = judge_task(definition, split.test_patch, split.gold_patch)
        if verdict.blockers:
            raise _Rejected(_audit_reason(verdict.blockers), evidence)
    evidence = replace(
        evidence,
        total_seconds=round(time.monotonic() - started, 1),
        audit_warnings=tuple(verdict.warnings),
    )
    try:
        _write_task(target, definition, split, evidence, quality, replace=options.replace)
    except DraftError as exc:
        raise _Rejected(str(exc), evidence) from exc
    return evidence


def _check_proven(
    definition: JsonObject,
    split: SplitChange,
    options: DraftOptions,
    evidence: DraftEvidence,
) -> TaskVerdict:
    """The static audit's verdict on the proven task; `_Rejected`, before its quality runs, on
    the audit's blockers or the caller's `proven_check`."""
    verdict = judge_task(definition, split.test_patch, split.gold_patch)
    if verdict.blockers:
        raise _Rejected(_audit_reason(verdict.blockers), evidence)
    if options.proven_check is not None:
        proven = parse_definition(definition, mode="persisted").definition  # valid: no blockers
        reason = options.proven_check(proven, split.test_patch, split.gold_patch)
        if reason is not None:
            raise _Rejected(reason, evidence)
    return verdict


def _audit_reason(blockers: Sequence[str]) -> str:
    """A rejection by the static audit: its blockers, joined."""
    return "audit: " + "; ".join(blockers)


_QUALITY_JOBS = 2
"""Variants a draft's quality check runs at a time (the sandbox runs are mostly waiting)."""


def _assess_draft(
    repo: Path,
    definition: JsonObject,
    split: SplitChange,
    options: DraftOptions,
    evidence: DraftEvidence,
) -> QualityRecord:
    """The quality checks (`selfbench.quality.assess`) on the drafted task, in the local sandbox
    with the draft's own options, judged with what the draft observed (`evidence`: how its
    pass-to-pass tests were chosen); a task they cannot check is rejected, saying why.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
    """
    from selfbench.quality.api import (  # noqa: PLC0415 - heavy, optional
        QualityOptions,
        assess,
        task_observations,
    )

    try:
        loaded = parse_definition(definition, mode="persisted").definition
        seen = task_observations(
            repo, loaded, split.test_patch, split.gold_patch, evidence=evidence.to_json()
        )
        return assess(
            repo,
            loaded,
            split.test_patch,
            split.gold_patch,
            options=QualityOptions(local=options.local, jobs=_QUALITY_JOBS),
            pass_to_pass=seen.pass_to_pass,
            instruction=seen.instruction,
            tests=seen.tests,
            dependencies=seen.dependencies,
            coverage_supported=seen.coverage_supported,
        )
    except SandboxError:
        raise
    except SelfbenchError as exc:
        raise _Rejected(f"quality: {exc}") from exc


def _without_moved(
    definition: JsonObject,
    before: Difficulty,
    split: SplitChange,
    record: QualityRecord,
    evidence: DraftEvidence,
) -> tuple[JsonObject, SplitChange, DraftEvidence]:
    """The task with the gold files the quality record moves out left out of its gold patch and
    its tier (`before`, the definition's) recomputed from what is left, and the evidence
    recording the moved files (`moved`, and the tier before and after). `_Rejected` when what
    is left meets no tier."""
    from selfbench.quality.api import (  # noqa: PLC0415 - with `_assess_draft`
        gold_without_moved,
        moved_out,
        recomputed_difficulty,
    )

    moved = moved_out(record)
    evidence = replace(evidence, quality=QualityNote(record.verdict, tuple(moved)))
    if not moved:
        return definition, split, evidence
    gold = gold_without_moved(split.gold_patch, record)
    after = recomputed_difficulty(gold, before)
    note = QualityNote(record.verdict, tuple(moved), TierChange(before, after))
    evidence = replace(evidence, quality=note)
    if after is None:
        files = ", ".join(moved)
        raise _Rejected(
            f"quality: without the files no fail-to-pass test needs ({files}) the gold patch "
            "meets no tier",
            evidence,
        )
    kept = tuple(path for path in split.gold_files if path not in moved)
    trimmed = replace(split, gold_patch=gold, gold_files=kept)
    return {**definition, "difficulty": after}, trimmed, evidence


def _decide(
    candidate: CandidateModel, prepared: _Prepared, observation: Observation, cap: int
) -> Decision:
    environment = prepared.environment
    try:
        return decide(
            observation,
            difficulty=candidate.difficulty,
            selector_of=lambda name: selector_of(environment.runner, name),
            by_file=environment.runner in FILE_SELECTOR_RUNNERS,
            cap=cap,
            neighbours=prepared.plan.neighbours,
        )
    except DraftError as exc:  # a reported name that says no selector
        raise _Rejected(str(exc)) from exc


def _observe_pythons(
    repo: Path, candidate: CandidateModel, prepared: _Prepared, options: DraftOptions, logs: Path
) -> tuple[_Prepared, Observation, Decision, tuple[str, ...]]:
    """Observe and decide under the inferred Python, then, while the candidate is rejected and
    a changed test file is collected neither at the base nor with the gold patch, under each
    older one; a rejection with no Python left names each one's error. An ordinary
    fail-to-pass test (failing at the base only) never retries. A collection that failed
    because a plugin the runner loads by itself could not be imported first runs again under
    the same Python with that plugin blocked (`_without_failed_plugins`), which later retries
    keep.

    The retries' logs go under `logs/python3.X/` (`…/plugins-blocked/` for a blocked plugin's);
    the failures come back, one line each."""
    cap = _first(options.pass_to_pass_cap, prepared.config.passToPassCap, DEFAULT_P2P_CAP)
    failures: list[str] = []
    where = logs
    while True:
        minimum = THRESHOLDS[candidate.difficulty].pass_to_pass
        observation = _observe(repo, prepared, options, where, minimum=minimum, cap=cap)
        decision = _decide(candidate, prepared, observation, cap)
        found = collection_error(observation) if decision.reason is not None else None
        pythons = prepared.environment.pythons
        if found is None or not pythons:
            return prepared, observation, decision, tuple(failures)
        file, error, log = found
        unblocked = _without_failed_plugins(repo, candidate, prepared, log)
        if unblocked is not None:  # the same Python again, its logs apart
            prepared = unblocked
            where = where / "plugins-blocked"
            where.mkdir(parents=True, exist_ok=True)
            continue
        interpreter = _interpreter(pythons[0], _local_pythons(options))
        failures.append(f"under {interpreter}: {error} in the collection of {file} (log {log})")
        if len(pythons) < 2:
            rejected = replace(decision, reason="; ".join(failures))
            return prepared, observation, rejected, tuple(failures)
        prepared = _with_python(repo, candidate, prepared, options, pythons[1])
        where = logs / f"python{pythons[1]}"
        where.mkdir(parents=True, exist_ok=True)


_LOG_READ = 4 << 20
"""The most of a run's log read for the plugins that failed to load."""


def _without_failed_plugins(
    repo: Path, candidate: CandidateModel, prepared: _Prepared, log: str
) -> _Prepared | None:
    """The candidate prepared again with the test command blocking each plugin the runner
    failed to load as it started (`PythonProject.failed_plugins`, read from the base run's
    `log`); None when there is none, or when plugins were blocked once already (a log that keeps
    naming new ones never keeps the draft going). The command's source says which were blocked
    and why."""
    environment = prepared.environment
    runner = runner_named(environment.runner)
    project = runner.python if runner is not None else None
    if prepared.blocked_plugins or project is None or project.failed_plugins is None:
        return None
    try:
        with Path(log).open("rb") as handle:
            text = handle.read(_LOG_READ).decode("utf-8", "replace")
    except OSError:
        return None
    names = project.failed_plugins(text)
    unblocked = _blocking(environment, names)
    if unblocked is environment:
        return None
    plan = _plan(repo, candidate, prepared.split, unblocked, prepared.config)
    return replace(prepared, environment=unblocked, plan=plan, blocked_plugins=names)


def _blocking(environment: Environment, names: Sequence[str]) -> Environment:
    """The environment with its test command blocking the plugins `names`, its source saying
    why; itself when there are none or its runner cannot block them."""
    runner = runner_named(environment.runner)
    project = runner.python if runner is not None else None
    if not names or project is None or project.without_plugins is None:
        return environment
    command = project.without_plugins(environment.test_command, names)
    if command is None:
        return environment
    said = environment.sources.get("testCommand", "")
    sources = {
        **environment.sources,
        "testCommand": f"{said}; {', '.join(names)} blocked: a plugin failed to load at start",
    }
    return replace(environment, test_command=command, sources=sources)


def _interpreter(version: str, local: Mapping[str, str]) -> str:
    """`Python 3.12 (python3)`: the version the local sandbox's command runs, and the command."""
    command = python_command(version)
    return f"Python {local.get(command, version)} ({command})"


def _local_pythons(options: DraftOptions) -> Mapping[str, str]:
    return options.pythons if options.pythons is not None else sandbox_pythons()


def _with_python(
    repo: Path, candidate: CandidateModel, prepared: _Prepared, options: DraftOptions, python: str
) -> _Prepared:
    """The same candidate prepared under another of the image's Pythons."""
    try:
        environment = infer_environment(
            repo,
            candidate.baseCommit,
            prepared.split.test_files,
            prepared.config,
            local_pythons=_local_pythons(options),
            python=python,
        )
    except SelfbenchError as exc:  # pragma: no cover - inferred once already
        raise _Rejected(str(exc)) from exc
    environment = _blocking(environment, prepared.blocked_plugins)
    plan = _plan(repo, candidate, prepared.split, environment, prepared.config)
    return replace(prepared, environment=environment, plan=plan)


def _first(*values: int | None) -> int:
    return next(value for value in values if value is not None)


_NEIGHBOURS = 6
"""At most this many unchanged test files run beside the changed ones when the runner has a
coverage measure (which decides whether any of their tests guards the change)."""
_NEIGHBOURS_UNMEASURED = 2
"""Without a measure, this many, and only when the tier needs pass-to-pass tests: their tests
come after the changed files' (basis `neighbours`)."""
_VAGUE_STEMS = frozenset({"__init__", "index", "main", "mod", "lib", "test", "tests"})
"""Module names too common to tell which test files exercise them."""


def _neighbours(
    repo: Path, commit: str, files: Sequence[str], changed: set[str], gold: Sequence[str]
) -> list[str]:
    """Unchanged runnable test files at `commit`: first those whose name holds the stem of a
    gold file (`test_wrap.py` for `wrap.py`), then those in the changed test files'
    directories; each group sorted."""
    listing = git(repo, "ls-tree", "-r", "-z", "--name-only", commit)
    tests = sorted(
        path
        for path in (raw.decode("utf-8", "replace") for raw in listing.split(b"\0"))
        if path and path not in changed and is_runnable_test(path)
    )
    stems = {
        stem
        for stem in (posixpath.splitext(posixpath.basename(path))[0] for path in gold)
        if len(stem) >= 3 and stem not in _VAGUE_STEMS
    }
    named = [p for p in tests if any(stem in posixpath.basename(p) for stem in stems)]
    directories = {posixpath.dirname(path) for path in files}
    beside = [p for p in tests if posixpath.dirname(p) in directories]
    return list(dict.fromkeys([*named, *beside]))


def test_patch_paths(split: SplitChange) -> set[str]:
    """Every path the test patch names, old and new: a test file it moves away is no
    unchanged neighbour (a rename is listed by its new path alone)."""
    named = (change.paths for change in parse_patch(split.test_patch, lenient=True).files)
    return {*split.test_files, *split.support_files, *(path for paths in named for path in paths)}


def _plan(
    repo: Path,
    candidate: CandidateModel,
    split: SplitChange,
    environment: Environment,
    config: DraftConfig,
) -> Plan:
    workdir = environment.workdir or "."
    prefix = "" if workdir in {".", ""} else workdir.rstrip("/") + "/"
    chosen = [
        path
        for path in split.test_files
        if (not config.testPaths or matches_globs(path, config.testPaths))
        and not (config.exclude and matches_globs(path, config.exclude))
        and path.startswith(prefix)
    ]
    files = tuple(sorted(path.removeprefix(prefix) for path in chosen))
    neighbours: tuple[str, ...] = ()
    runner = runner_named(environment.runner)
    coverage = runner.coverage if runner is not None else None
    wanted = _NEIGHBOURS if coverage is not None else 0
    if THRESHOLDS[candidate.difficulty].pass_to_pass > 0:
        wanted = max(wanted, _NEIGHBOURS_UNMEASURED)
    if files and wanted:
        changed = test_patch_paths(split)
        found = _neighbours(repo, candidate.baseCommit, chosen, changed, split.gold_files)
        kept = [
            path
            for path in found
            if path.startswith(prefix)
            and (not config.testPaths or matches_globs(path, config.testPaths))
            and not (config.exclude and matches_globs(path, config.exclude))
        ]
        neighbours = tuple(path.removeprefix(prefix) for path in kept[:wanted])
    timeouts = dict(AUTHORING_DEFAULTS["timeouts"])
    if config.timeouts is not None:
        timeouts.update(config.timeouts.model_dump(exclude_none=True))
    resources: dict[str, int | float] = dict(AUTHORING_DEFAULTS["resources"])
    if config.resources is not None:
        resources.update(config.resources.model_dump(exclude_none=True))
    return Plan(
        candidate.baseCommit,
        workdir,
        environment.setup_command,
        environment.test_command,
        tuple(environment.toolchains),
        (*files, *neighbours),
        timeouts,
        resources,
        frozenset(neighbours),
        coverage,
        runner.accepts_selector if runner is not None and runner.runs_named_tests else None,
        runner.finished_line if runner is not None else "",
    )


def _definition(
    candidate: CandidateModel,
    plan: Plan,
    decision: Decision,
    prompt: str,
    number: int,
    url: str,
) -> JsonObject:
    difficulty: Difficulty = candidate.difficulty
    return {
        "schemaVersion": 1,
        "difficulty": difficulty,
        "taskId": candidate.id,
        "repo": candidate.repo,
        "baseCommit": candidate.baseCommit,
        "workdir": plan.workdir,
        "setupCommand": plan.setup_command,
        "testCommand": plan.test_command,
        "failToPass": list(decision.fail_to_pass),
        "passToPass": list(decision.pass_to_pass),
        "testPaths": list(plan.held_out),
        "toolchains": list(plan.toolchains),
        "sourcePr": number,
        "sourceUrl": url,
        "prompt": prompt,
        "timeouts": dict(plan.timeouts),
        "resources": dict(plan.resources),
    }


def _run_record(sample: RunSample) -> RunRecord:
    """A sample of the draft's runs as its evidence records it."""
    return RunRecord(
        sample.name,
        tuple(
            FileRunRecord(
                run.file,
                run.exit_code,
                tuple(run.outcomes.tests),
                run.outcomes.no_tests,
                carried=run.carried,
                carried_tests=len(run.carried_tests),
                alone=run.alone,
            )
            for run in sample.files
        ),
    )


def draft_evidence(
    candidate: CandidateModel,
    environment: Environment,
    observation: Observation,
    decision: Decision,
    logs: Path,
) -> DraftEvidence:
    """The sidecar's content: the draft marker, the commands and their sources, every run."""
    return DraftEvidence(
        candidate=candidate.id,
        commands=DraftCommands(
            setup_command=environment.setup_command,
            test_command=environment.test_command,
            toolchains=tuple(environment.toolchains),
            runner=environment.runner,
            sources=tuple(environment.sources.items()),
        ),
        fail_to_pass=tuple(decision.fail_to_pass),
        pass_to_pass=tuple(decision.pass_to_pass),
        runs=tuple(_run_record(sample) for sample in (*observation.base, *observation.gold)),
        reason=decision.reason,
        dropped_flaky=tuple(decision.dropped_flaky),
        rerun_alone=tuple(observation.alone),
        logs=str(logs),
        run_seconds=round(observation.seconds, 1),
        basis=decision.basis,
    )


def _write_task(
    target: Path,
    definition: JsonObject,
    split: SplitChange,
    evidence: DraftEvidence,
    quality: QualityRecord | None,
    *,
    replace: bool,
) -> None:
    """The task directory, all its files at once (never half-written)."""
    with translating(DraftError, f"write {target}"):
        try:
            with atomic_directory(target, replace=replace) as staging:
                files = render_task_files(definition, split.test_patch, split.gold_patch)
                files[DRAFT_FILE] = render_draft_record(evidence)
                if quality is not None:
                    files[QUALITY_FILE] = render_quality(quality)
                for name, content in files.items():
                    (staging / name).write_bytes(content)
        except FileExistsError:
            raise DraftError(f"{target} already exists (--replace overwrites it)") from None


def draft_candidates(
    repo: Path,
    candidates: Sequence[CandidateModel],
    out_dir: Path,
    options: DraftOptions | None = None,
    *,
    jobs: int = 1,
    reporter: Reporter = silent,
) -> list[DraftResult]:
    """`draft_candidate` for each candidate, `jobs` at a time; results in the order given, each
    told to `reporter` as it is known (drafted, or rejected with its reason).

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        DraftError: a candidate is given twice.
    """
    seen: set[str] = set()
    for candidate in candidates:
        if candidate.id in seen:
            raise DraftError(f"candidate {candidate.id} is given twice")
        seen.add(candidate.id)

    def one(candidate: CandidateModel) -> DraftResult:
        with activity.doing(f"{candidate.id} ({candidate.difficulty})", "drafting"):
            result = draft_candidate(repo, candidate, out_dir, options)
        reporter.candidate_finished(
            result.candidate_id, accepted=result.drafted, reason=result.reason
        )
        return result

    options = options or DraftOptions()
    if options.pythons is None:
        options = replace(options, pythons=sandbox_pythons())  # found once for every candidate
    with (
        ThreadPoolExecutor(max_workers=max(1, jobs)) as pool,
        activity.heartbeat(reporter.candidate_progress),
    ):
        return list(pool.map(one, candidates))
