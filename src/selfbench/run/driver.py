"""`selfbench run`: from a repository to a verified benchmark, resumable (issue 15).

`run_benchmark` mines the repository once (the pool, `pool.json`), then fills each tier's budget
from its candidates in rank order: a candidate starts only while the tier's accepted and running
candidates are fewer than its budget, so the accepted set is the first `N` candidates in rank
order that pass every stage, whatever `-j` is and however often the run was killed and resumed.
When a tier's candidates run out first, the run finishes with what was accepted and says so
(`blocked: 3 of 10 hard tasks; history has no more`). The export is written last, with the export
writer, from the accepted bundles; its bytes depend only on the inputs and the candidates' results.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from selfbench import activity
from selfbench._json import JsonObject
from selfbench.artifacts.quality_record import Verdict, read_quality
from selfbench.contract import AUTHORING_DEFAULTS, DIFFICULTIES
from selfbench.draft.config import DraftConfig
from selfbench.environments.local.ceilings import Ceilings
from selfbench.environments.local.host_network import HostNetwork, network_failure
from selfbench.environments.local.network_probe import ecosystems, probe_registries
from selfbench.environments.local.phases import setup_env_values
from selfbench.environments.spec import ENVIRONMENTS, EnvironmentSpec
from selfbench.errors import (
    HarborError,
    InputError,
    MineError,
    RunError,
    SandboxError,
    SetupNetworkError,
)
from selfbench.mine import MineOptions, mine_repository
from selfbench.mine.candidate import CandidateModel
from selfbench.mine.git_history import read_repository
from selfbench.mine.rank import DEFAULT_OVER_FETCH
from selfbench.mine.source import check_source_url, repository_source
from selfbench.progress import Reporter, silent, stage
from selfbench.rules import CANDIDATE_SECONDS
from selfbench.run import stages
from selfbench.run.confine import AuthorNetwork, author_home_problem
from selfbench.run.export import export_accepted
from selfbench.run.state import DOING, STAGES, CandidateState, Pool, RunDirectory
from selfbench.run.steps import StepContext, run_step
from selfbench.validate.environment import build_runner
from selfbench.validate.local import DEFAULT_RERUNS, MIN_RERUNS, LocalOptions

__all__ = [
    "ENVIRONMENTS",
    "RunOptions",
    "RunSummary",
    "TierSummary",
    "load_options",
    "no_valid_run",
    "preflight",
    "run_benchmark",
    "tier_summaries",
]

_DEFAULT_INACTIVITY = 600.0
SANDBOX_STAGES = frozenset({"draft", "validate", "quality"})
"""The stages a candidate's time counts: those that run its tests in the sandbox (an author
or reviewer command has its own limits)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What a run was asked to do; written to `inputs.json` and read back by `--resume`."""

    repo: Path
    out: Path
    budgets: dict[str, int]
    author: str = stages.AUTHOR_DRAFT
    reviewer: str | None = None
    jobs: int = 1
    env: str = "local"
    harbor_env: str = "docker"
    harbor: str = "harbor"
    """The Harbor executable, with `env` harbor (a path, or a name on PATH)."""
    over_fetch: float = DEFAULT_OVER_FETCH
    author_time_limit: float = float(AUTHORING_DEFAULTS["timeouts"]["agentSeconds"])
    inactivity: float = _DEFAULT_INACTIVITY
    source_url: str | None = None
    author_env: tuple[str, ...] = ()
    """The variables author and reviewer commands get from selfbench's environment."""
    """For history without a pull-request URL: tasks record `<source_url>/pull/<n>`."""
    author_home: Path | None = None
    """`--author-home`: the directory a private copy of which is their `HOME` (an agent CLI's
    login); in `inputs.json` only when given."""
    author_allow: tuple[str, ...] = ()
    """`--author-allow URL`: the endpoints author and reviewer commands may reach beside the
    model APIs their variables name (in `inputs.json` only when given)."""
    author_network: str = "allow-list"
    """`--author-network`: `allow-list`, or `host` for the host's network (in `inputs.json`
    only when not the allow-list)."""
    setup_env: tuple[str, ...] = ()
    """Names of variables passed to the local sandbox's setup (a proxy's CA file, say); only the
    names are stored, the values are read from the environment at each start and resume."""
    agent_allowed_hosts: tuple[str, ...] = ()
    """The hosts the agent may reach (`[agent] allowed_hosts`); empty: the compiler's default."""
    host_network_config: bool = True
    """Carry the host's CA bundle and proxy variables into setup
    (`environments.local.host_network`)."""
    agent_dependencies: bool = False
    """`--deps agent`: drafted tasks set `agentDependencies` (in `inputs.json` only when true)."""
    quality: bool = True
    """Check each task's quality (SPEC §13) in drafting and after the coupling check."""
    min_quality: Verdict = "review"
    """`--min-quality`: the lowest quality verdict a task is exported with."""
    ceilings: dict[str, float] = field(default_factory=dict)
    """The `--max-*` options given, by `Ceilings` field: the host's ceilings on the local
    sandbox's stages (drafting, validation, quality) are its defaults for `jobs` changed by
    these (`host_ceilings`; in `inputs.json` only when given)."""
    candidate_time: float | None = None
    """`--candidate-time`: the seconds each candidate's sandbox stages may take in all (None:
    its tier's, `CANDIDATE_SECONDS`); past them its running phase is killed and it is
    rejected (in `inputs.json` only when given)."""
    config: DraftConfig | None = None
    """`--config FILE`: a `selfbench.toml` every candidate's draft uses over the repository's
    own (`draft.config.merge_configs`); `inputs.json` holds its settings, not its path, so a
    resumed run drafts as the run began (in `inputs.json` only when given)."""

    def check(self) -> None:
        """Refuse options no run can use.

        Raises:
            RunError: a negative or empty budget, `-j` below 1, an unknown environment, ...
        """
        problems = [f"--{tier} must be at least 0" for tier, n in self.budgets.items() if n < 0]
        if not problems and sum(self.budgets.values()) == 0:
            problems.append("give at least one task to find: --easy N, --medium N or --hard N")
        if self.jobs < 1:
            problems.append("-j must be at least 1")
        if self.env not in ENVIRONMENTS:
            problems.append(f"--env must be one of {', '.join(ENVIRONMENTS)}")
        elif self.env == "harbor" and shutil.which(self.harbor) is None:
            problems.append(f"--harbor {self.harbor}: not found (install Harbor, or give its path)")
        if not self.over_fetch >= 1:
            problems.append("--over-fetch must be at least 1")
        if not self.author.strip():
            problems.append("--author must be draft or a command")
        if self.min_quality not in stages.MIN_QUALITY:
            problems.append(f"--min-quality must be one of {', '.join(stages.MIN_QUALITY)}")
        if self.ceilings.get("reruns", MIN_RERUNS) < MIN_RERUNS:
            problems.append(
                f"--max-reruns must be at least {MIN_RERUNS} (the verifier runs fail-to-pass twice)"
            )
        problems.extend(self._value_problems())
        if problems:
            raise RunError("\n".join(problems))

    def _value_problems(self) -> list[str]:
        problems = []
        if not self.out.name.endswith(".tar.gz"):
            problems.append(f"--out {self.out}: an export's name ends in .tar.gz")
        if self.source_url is not None and (problem := check_source_url(self.source_url)):
            problems.append(problem)
        if self.candidate_time is not None and not 0 < self.candidate_time < math.inf:
            problems.append("--candidate-time must be a positive number of seconds")
        try:
            setup_env_values(self.setup_env)
        except InputError as error:
            problems.append(str(error))
        problems.extend(self.network.problems(self.author_env, os.environ))
        return problems

    @property
    def network(self) -> AuthorNetwork:
        """What author and reviewer commands may reach."""
        return AuthorNetwork(self.author_network, self.author_allow)

    def to_json(self) -> JsonObject:
        """The options as `inputs.json` holds them (paths absolute)."""
        return {
            "repo": str(self.repo.absolute()),
            "out": str(self.out.absolute()),
            "budgets": {tier: self.budgets.get(tier, 0) for tier in DIFFICULTIES},
            "author": self.author,
            "reviewer": self.reviewer,
            "jobs": self.jobs,
            "env": self.env,
            "harborEnv": self.harbor_env,
            "harbor": self.harbor,
            "overFetch": self.over_fetch,
            "authorTimeLimit": self.author_time_limit,
            "inactivity": self.inactivity,
            "sourceUrl": self.source_url,
            **({"authorEnv": list(self.author_env)} if self.author_env else {}),
            **({"authorHome": str(self.author_home.absolute())} if self.author_home else {}),
            **({"authorAllow": list(self.author_allow)} if self.author_allow else {}),
            **(
                {"authorNetwork": self.author_network}
                if self.author_network != "allow-list"
                else {}
            ),
            "setupEnv": list(self.setup_env),
            "agentAllowedHosts": list(self.agent_allowed_hosts),
            "hostNetworkConfig": self.host_network_config,
            **({"agentDependencies": True} if self.agent_dependencies else {}),
            "quality": self.quality,
            "minQuality": self.min_quality,
            **({"ceilings": _ceilings_json(self.ceilings)} if self.ceilings else {}),
            **({"config": _config_json(self.config)} if self.config is not None else {}),
            **({"candidateTime": self.candidate_time} if self.candidate_time else {}),
        }

    def candidate_seconds(self, tier: str) -> float:
        """The time a candidate of `tier` has for its sandbox stages."""
        return self.candidate_time or CANDIDATE_SECONDS.get(tier, max(CANDIDATE_SECONDS.values()))

    def host_ceilings(self) -> Ceilings:
        """This host's ceilings for the run's `jobs`, changed by its `--max-*` options."""
        return Ceilings.for_host(jobs=self.jobs, given=self.ceilings)


_CEILING_KEYS = {
    "cpus": "cpus",
    "memory_mb": "memoryMb",
    "storage_mb": "storageMb",
    "seconds": "seconds",
    "reruns": "reruns",
}
"""Each `Ceilings` field and its key in `inputs.json`'s `ceilings`."""


def _config_json(config: DraftConfig) -> JsonObject:
    dumped: JsonObject = config.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _ceilings_json(given: Mapping[str, float]) -> dict[str, float]:
    return {_CEILING_KEYS[name]: value for name, value in given.items()}


def _ceilings_back(value: Any) -> dict[str, float]:
    """`inputs.json`'s `ceilings` back by `Ceilings` field: CPUs a number, the rest integers.

    Raises:
        ValueError: an unknown key, or a value not above 0.
    """
    given: dict[str, float] = {}
    for name, key in _CEILING_KEYS.items():
        if key in value:
            number = float(value[key]) if name == "cpus" else int(value[key])
            if not number > 0:
                raise ValueError(key)
            given[name] = number
    if set(value) - set(_CEILING_KEYS.values()):
        raise ValueError("ceilings")
    return given


def load_options(value: Any, where: str) -> RunOptions:
    """Options back from `inputs.json`.

    Raises:
        RunError: not a run's inputs.
    """
    try:
        return RunOptions(
            repo=Path(value["repo"]),
            out=Path(value["out"]),
            budgets={tier: int(value["budgets"][tier]) for tier in DIFFICULTIES},
            author=str(value["author"]),
            reviewer=value["reviewer"],
            jobs=int(value["jobs"]),
            env=str(value["env"]),
            harbor_env=str(value["harborEnv"]),
            harbor=str(value.get("harbor", "harbor")),
            over_fetch=float(value["overFetch"]),
            author_time_limit=float(value["authorTimeLimit"]),
            inactivity=float(value["inactivity"]),
            source_url=value.get("sourceUrl"),
            author_env=tuple(str(name) for name in value.get("authorEnv", ())),
            author_home=Path(value["authorHome"]) if value.get("authorHome") else None,
            author_allow=tuple(str(url) for url in value.get("authorAllow", ())),
            author_network=str(value.get("authorNetwork", "allow-list")),
            setup_env=tuple(str(name) for name in value.get("setupEnv", ())),
            agent_allowed_hosts=tuple(str(host) for host in value.get("agentAllowedHosts", ())),
            host_network_config=bool(value.get("hostNetworkConfig", True)),
            agent_dependencies=value.get("agentDependencies", False) is True,
            quality=bool(value.get("quality", True)),
            min_quality=value.get("minQuality", "review"),
            ceilings=_ceilings_back(value.get("ceilings", {})),
            config=DraftConfig.model_validate(value["config"]) if "config" in value else None,
            candidate_time=float(value["candidateTime"]) if "candidateTime" in value else None,
        )
    except (KeyError, TypeError, ValueError):
        raise RunError(f"{where}: not a run's inputs") from None


@dataclass(frozen=True, slots=True)
class TierSummary:
    """One tier at the end (or the middle) of a run."""

    tier: str
    budget: int
    accepted: int
    rejected: int
    pool: int
    blocked: str | None = None
    """`blocked: 3 of 10 hard tasks; history has no more`, when the tier fell short."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """How a run ended."""

    run_dir: Path
    tiers: tuple[TierSummary, ...]
    export: Path | None
    interrupted: bool = False
    states: tuple[CandidateState, ...] = field(default_factory=tuple)
    quality: dict[str, int] = field(default_factory=dict)
    """Finished candidates with a quality record, per verdict (`ship`, `review`, `reject`)."""

    @property
    def blocked(self) -> tuple[str, ...]:
        """The tiers that fell short, one line each."""
        return tuple(tier.blocked for tier in self.tiers if tier.blocked)


# --- the pool ----------------------------------------------------------------------------------


def _mine_pool(run: RunDirectory, options: RunOptions) -> Pool:

    budgets = {tier: n for tier, n in options.budgets.items() if n > 0}
    mine = MineOptions(
        budgets=budgets,  # type: ignore[arg-type]
        over_fetch=options.over_fetch,
        source_url=options.source_url,
    )
    mined = mine_repository(options.repo, mine)
    info = read_repository(options.repo, "HEAD")
    pool = Pool(
        head=info.head,
        repository=repository_source(info.origin, info.path, options.source_url).label,
        candidates=tuple(candidate.to_json() for candidate in mined.candidates),
    )
    run.write_pool(pool)
    run.event("mined", candidates=len(mined.candidates), counts=mined.counts())
    return pool


def _read_pool(run: RunDirectory, options: RunOptions, reporter: Reporter) -> Pool:
    if not run.pool_path.is_file():
        with stage(reporter, "mining the repository's history"):
            return _mine_pool(run, options)
    return run.read_pool()


def _candidates(pool: Pool) -> dict[str, CandidateModel]:
    """The pool's candidates by id, in the pool's order (hardest tier first, best first)."""
    models = [CandidateModel.model_validate(value) for value in pool.candidates]
    return {model.id: model for model in models}


def run_id(pool: Pool, options: RunOptions) -> str:
    """The run's id: the same inputs (not paths) give the same id."""
    key = {
        "head": pool.head,
        "budgets": options.to_json()["budgets"],
        "author": stages.command_name(options.author),
        "reviewer": stages.command_name(options.reviewer),
        "env": options.env,
        "overFetch": options.over_fetch,
    }
    if options.agent_allowed_hosts:  # the default list keeps the ids runs had before
        key["agentAllowedHosts"] = list(options.agent_allowed_hosts)
    if not options.quality:  # as do the default quality checks and gate
        key["quality"] = False
    if options.min_quality != "review":
        key["minQuality"] = options.min_quality
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return f"run-{digest[:12]}"


# --- scheduling --------------------------------------------------------------------------------


class _Scheduler:
    """Which candidates run next: per tier, in rank order, while the budget has room."""

    def __init__(
        self,
        options: RunOptions,
        candidates: dict[str, CandidateModel],
        states: dict[str, CandidateState],
    ) -> None:
        self.options = options
        self.candidates = candidates
        self.states = states
        self.running: set[str] = set()

    def order(self, tier: str) -> list[str]:
        return [cid for cid, model in self.candidates.items() if model.difficulty == tier]

    def to_start(self, room: int) -> list[str]:
        chosen: list[str] = []
        for tier in reversed(DIFFICULTIES):  # hard first: the scarcest candidates
            budget = self.options.budgets.get(tier, 0)
            order = self.order(tier)
            taken = sum(self.states[c].status == "accepted" for c in order if c in self.states)
            taken += sum(c in self.running for c in order)
            for cid in order:
                if taken >= budget or len(chosen) >= room:
                    break
                state = self.states.get(cid)
                if cid in self.running or (state is not None and state.finished):
                    continue
                chosen.append(cid)
                taken += 1
        return chosen


def _new_state(cid: str, candidates: dict[str, CandidateModel]) -> CandidateState:
    rank = list(candidates).index(cid)
    return CandidateState(id=cid, tier=candidates[cid].difficulty, rank=rank, status="active")


def _process(
    context: StepContext,
    state: CandidateState,
    candidate: CandidateModel,
    stop: threading.Event,
    reporter: Reporter,
) -> CandidateState:
    """Run one candidate's stages until it is finished or the run stops, each step told to
    `reporter`.

    A stage that was running when the stop came is not recorded: it may have been cut short
    (a stopped run ends the processes it started), so the resumed run does it again.
    """
    while not state.finished and not stop.is_set():
        after = _step(context, state, candidate, stop)
        if after is None or stop.is_set():
            break
        context.run.save(after)
        context.run.event(
            "step",
            candidate=state.id,
            step=len(state.history),
            stage=state.next,
            to=after.next,
            status=after.status,
            reason=after.reason,
        )
        state = after
        _tell(reporter, state)
    return state


def _tell(reporter: Reporter, state: CandidateState) -> None:
    """Where the candidate now stands: finished, or its next stage begun."""
    if state.finished:
        accepted = state.status == "accepted"
        reporter.candidate_finished(
            state.id, accepted=accepted, reason=state.reason, tier=state.tier
        )
    elif state.next is not None:
        reporter.candidate_started(state.id, DOING[state.next], tier=state.tier)


def _step(
    context: StepContext, state: CandidateState, candidate: CandidateModel, stop: threading.Event
) -> CandidateState | None:
    """The candidate's state after its next stage; None when the stop cut the stage short.

    A stage of the sandbox (`SANDBOX_STAGES`) runs within what is left of the candidate's
    time (`--candidate-time`): past it, its running phase is killed and the candidate is
    rejected, whatever the cut-short stage made of it.
    """
    started = time.monotonic()
    deadline = _deadline(context, state, started)
    if state.next is not None and deadline is not None and deadline <= started:
        return state.rejected(state.next, 0.0, _out_of_time(context, state))
    stage = DOING[state.next] if state.next is not None else "working"
    try:
        with activity.doing(
            f"{state.id} ({state.tier})", stage, key=state.id, deadline=deadline
        ) as doing:
            after = run_step(context, state, candidate)
    except SetupNetworkError as exc:
        if stop.is_set():
            return None
        return _unreachable(context, state, exc, time.monotonic() - started)
    except Exception:
        if stop.is_set():  # the stop cut the stage's processes short: not a result
            return None
        raise
    if doing.expired and state.next is not None:
        return state.rejected(state.next, time.monotonic() - started, _out_of_time(context, state))
    return after


def _deadline(context: StepContext, state: CandidateState, now: float) -> float | None:
    """When the candidate's time for its sandbox stages is up, from `now`, for a stage that
    counts (`SANDBOX_STAGES`); None for one that does not."""
    if state.next not in SANDBOX_STAGES:
        return None
    spent = sum(seconds for stage, seconds in state.seconds.items() if stage in SANDBOX_STAGES)
    return now + context.candidate_seconds(state.tier) - spent


def _out_of_time(context: StepContext, state: CandidateState) -> str:
    """The rejection of a candidate out of time (its stage prefixes it)."""
    minutes = context.candidate_seconds(state.tier) / 60
    took = f"the candidate's sandbox stages took longer than its {minutes:g} minutes"
    return f"{took} (--candidate-time)"


_UNREACHABLE = (
    "the registries answered a check made right after, so this candidate's setup needs a host "
    "this network does not reach"
)


def _unreachable(
    context: StepContext, state: CandidateState, error: SetupNetworkError, seconds: float
) -> CandidateState:
    """A candidate whose setup failed on the network while the registries still answer: its
    setup needs a host this network does not reach (a dependency fetched from a repository's
    archive, say), so it is rejected, and the run goes on. A certificate failure, or a network
    that fails the registry check too, is the machine's: the error is raised and the run stops.

    Raises:
        SetupNetworkError: the failure is the machine's (or cannot be told apart from it).
        SandboxError: this machine cannot create the isolated workspace.
    """
    probes = ecosystems(context.repo, "HEAD")
    if error.kind in (None, "tls") or error.failed is None or not probes or state.next is None:
        raise error
    try:
        probe_registries(probes, host_network=context.host_network, setup_env=context.setup_env)
    except SetupNetworkError:
        raise error from None
    context.run.event("unreachable", candidate=state.id, why=error.failed)
    return state.rejected(state.next, seconds, f"{error.failed}; {_UNREACHABLE}")


def _runner_factory(
    options: RunOptions,
    setup_env: tuple[tuple[str, str], ...],
    host_network: HostNetwork,
    ceilings: Ceilings,
) -> Callable[[Path], Any]:
    spec = EnvironmentSpec(
        kind="harbor" if options.env == "harbor" else "local",
        harbor_env=options.harbor_env,
        harbor=options.harbor,
        setup_env=setup_env,
        host_network=host_network,
    )

    # validation reruns as often as it does by default, unless `--max-reruns` allows fewer
    local = LocalOptions(ceilings=ceilings, reruns=min(DEFAULT_RERUNS, ceilings.reruns))

    def make(logs: Path) -> Any:
        return build_runner(spec, logs=logs, jobs_dir=logs / "jobs", local=local)

    return make


def _quality_check(
    options: RunOptions,
    setup_env: tuple[tuple[str, str], ...],
    host_network: HostNetwork,
    ceilings: Ceilings,
) -> stages.QualityCheck | None:
    """How the run checks a task's quality; None with `--no-quality`."""
    if not options.quality:
        return None
    local = LocalOptions(setup_env=setup_env, host_network=host_network, ceilings=ceilings)
    return stages.task_quality_check(options.repo, local)


def _drive(
    context: StepContext,
    scheduler: _Scheduler,
    stop: threading.Event,
    reporter: Reporter,
) -> None:
    jobs = scheduler.options.jobs
    run = context.run
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="selfbench-run") as pool:
        running: dict[Future[CandidateState], str] = {}
        while True:
            if not stop.is_set():
                for cid in scheduler.to_start(jobs - len(running)):
                    state = scheduler.states.get(cid) or _new_state(cid, scheduler.candidates)
                    if cid not in scheduler.states:
                        run.save(state)
                        run.event("start", candidate=cid, tier=state.tier)
                    scheduler.states[cid] = state
                    scheduler.running.add(cid)
                    _tell(reporter, state)
                    future = pool.submit(
                        _process, context, state, scheduler.candidates[cid], stop, reporter
                    )
                    running[future] = cid
            if not running:
                return
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                cid = running.pop(future)
                scheduler.running.discard(cid)
                try:
                    scheduler.states[cid] = future.result()
                except BaseException:
                    stop.set()  # a bug: let the others stop at their next stage, then raise
                    raise


# --- summary -----------------------------------------------------------------------------------


def tier_summaries(
    options: RunOptions, candidates: dict[str, CandidateModel], states: dict[str, CandidateState]
) -> tuple[TierSummary, ...]:
    """Each tier's counts, and why it fell short when every candidate was tried."""
    tiers: list[TierSummary] = []
    for tier in DIFFICULTIES:
        budget = options.budgets.get(tier, 0)
        order = [cid for cid, model in candidates.items() if model.difficulty == tier]
        found = [states[cid] for cid in order if cid in states]
        accepted = sum(state.status == "accepted" for state in found)
        rejected = sum(state.status == "rejected" for state in found)
        exhausted = all(cid in states and states[cid].finished for cid in order)
        blocked = None
        if accepted < budget and exhausted:
            fetched = math.ceil(budget * options.over_fetch)
            why = (
                "history has no more"
                if len(order) < fetched
                else f"the mined pool ({len(order)} with --over-fetch {options.over_fetch:g}) "
                "has no more"
            )
            blocked = f"blocked: {accepted} of {budget} {tier} tasks; {why}"
            if rejected:
                blocked += f" ({rejected} rejected)"
        tiers.append(TierSummary(tier, budget, accepted, rejected, len(order), blocked))
    return tuple(tiers)


def quality_counts(run: RunDirectory, states: Mapping[str, CandidateState]) -> dict[str, int]:
    """The finished candidates' quality verdicts, counted (every verdict named, in order)."""
    counts = dict.fromkeys(("ship", "review", "reject"), 0)
    for state in states.values():
        if state.finished and state.quality is not None:
            counts[read_quality(run.resolve(state.quality)).verdict] += 1
    return counts


# --- the run -----------------------------------------------------------------------------------


def resume_command(run_dir: Path) -> str:
    """The command that finishes the run in `run_dir`."""
    return f"selfbench run --resume {run_dir}"


def preflight(options: RunOptions, *, reporter: Reporter = silent) -> None:
    """Refuse, in seconds and before anything is written, a run that could export no task
    (what setup carries from the host's network is told to `reporter`).

    Raises:
        RunError: bad options, or no pull-request URL for the tasks to record.
        MineError: `--repo` is not a git repository, or it has no commit.
        SetupNetworkError: with the local environment, the sandbox cannot reach a registry
            the repository's manifests need (`environments.local.network_probe`).
    """

    options.check()
    info = read_repository(options.repo, "HEAD")
    if repository_source(info.origin, info.path, options.source_url).url_base is None:
        raise RunError(
            f"--repo {options.repo} has no GitHub remote, so its tasks cannot record their pull "
            "request URL: give --source-url BASE (tasks record BASE/pull/<number>)"
        )
    if options.env == "local":
        probe_registries(
            ecosystems(options.repo, "HEAD"),
            host_network=_host_network(options, reporter),
            setup_env=setup_env_values(options.setup_env),
        )


def _host_network(options: RunOptions, reporter: Reporter) -> HostNetwork:
    """The host's network configuration setup carries, unless the run turned it off."""
    if not options.host_network_config:
        return HostNetwork()
    return HostNetwork.detect(reporter=reporter)


def _say_network(run: RunDirectory, options: RunOptions, reporter: Reporter) -> None:
    """Say once, and log, what author and reviewer commands may reach (when any runs).

    Raises:
        EgressError: an allowed URL, or the host's proxy for it, that cannot be used.
    """
    if options.author == stages.AUTHOR_DRAFT and options.reviewer is None:
        return
    line = options.network.describe(options.author_env, os.environ)
    run.event("network", line=line)
    reporter.note(line)


def no_valid_run(run: RunDirectory, why: str) -> RunError:
    """The error for a run directory whose files are not a run's: what is wrong, what to do."""
    return RunError(f"{run.path} holds no valid run ({why}); delete it, or give another --run-dir")


_SETUP_LOG_RE = re.compile(r"^(\w[\w-]*): .*\bsetup: .*\(.*\blog (/[^;)]+)")
"""A rejection at setup: its stage, and the log its reason names."""


def retry_network_rejections(
    run: RunDirectory, states: Mapping[str, CandidateState]
) -> dict[str, CandidateState]:
    """The candidates a setup failure rejected whose log says the network failed it (a run made
    before such failures stopped the run, or one not recognised then), set to run that stage
    again; each retry saved and logged. Only logs inside the run directory are read."""
    retried: dict[str, CandidateState] = {}
    for cid, state in states.items():
        match = _SETUP_LOG_RE.match(state.reason or "") if state.status == "rejected" else None
        stage = next((stage for stage in STAGES if match and stage == match[1]), None)
        if match is None or stage is None:
            continue
        log = Path(match[2])
        if not log.resolve().is_relative_to(run.path.resolve()) or not log.is_file():
            continue
        failure = network_failure(log.read_text(encoding="utf-8", errors="replace"))
        if failure is None:
            continue
        again = replace(
            state,
            status="active",
            next=stage,
            reason=None,
            history=(*state.history, "retried"),
        )
        run.save(again)
        run.event("retried", candidate=cid, stage=stage, why=failure.line)
        retried[cid] = again
    return retried


RESUME_CHANGES = (
    "candidate_time",
    "setup_env",
    "host_network_config",
    "source_url",
    "jobs",
    "env",
    "harbor_env",
    "harbor",
    "ceilings",
    "author_env",
    "author_home",
    "author_allow",
    "author_network",
)
"""The options `run --resume` may change: how and where the run's work is done, never what it
is to find (the repository, budgets, author and export stay the run's own). The `--max-*`
options given again change those ceilings only; the others stay the run's."""


def _recorded(value: Any) -> Any:
    """An option's value as the event log records it."""
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


def _check_author_home(run: RunDirectory, options: RunOptions) -> None:
    """Refuse an author home that holds the repository, the export or the run directory.

    Raises:
        RunError: the one-line reason (`confine.author_home_problem`).
    """
    if options.author_home is None:
        return
    outputs = (options.out, run.path)
    problem = author_home_problem(options.author_home, repo=options.repo, outputs=outputs)
    if problem is not None:
        raise RunError(problem)


def _apply_changes(
    run: RunDirectory, options: RunOptions, changes: Mapping[str, Any]
) -> RunOptions:
    """The resumed run's options with `changes` made, each recorded in the event log and in
    `inputs.json`.

    Raises:
        RunError: an option resume cannot change, or a changed value no run can use.
    """
    refused = sorted(set(changes) - set(RESUME_CHANGES))
    if refused:
        raise RunError(f"--resume cannot change {', '.join(refused)}")
    if "ceilings" in changes:
        changes = {**changes, "ceilings": {**options.ceilings, **changes["ceilings"]}}
    changed = {k: v for k, v in changes.items() if getattr(options, k) != v}
    if not changed:
        return options
    updated = replace(options, **changed)
    updated.check()
    _check_author_home(run, updated)
    for name, value in changed.items():
        before = getattr(options, name)
        run.event(
            "changed",
            option=name,
            before=_recorded(before),
            after=_recorded(value),
        )
    run.write_json(run.inputs_path, updated.to_json())
    return updated


def _start_or_resume(
    run: RunDirectory, options: RunOptions | None, changes: Mapping[str, Any] | None = None
) -> RunOptions:
    if options is None:
        try:
            resumed = load_options(run.read_json(run.inputs_path), str(run.inputs_path))
        except RunError as exc:
            raise no_valid_run(run, str(exc)) from exc
        run.event("resumed")
        applied = _apply_changes(run, resumed, changes or {})
        _check_author_home(run, applied)
        return applied
    if run.is_run():
        raise RunError(
            f"{run.path} already holds a run; resume it with: {resume_command(run.path)}"
        )
    _check_author_home(run, options)
    run.write_json(run.inputs_path, options.to_json())
    run.event("started", options=options.to_json())
    return options


def _begin(
    run: RunDirectory,
    options: RunOptions | None,
    reporter: Reporter,
    *,
    created: bool,
    changes: Mapping[str, Any] | None = None,
) -> tuple[RunOptions, Pool]:
    """The run's options and pool; a run directory this start created and that never got its
    pool is removed again, so a bad input leaves nothing behind."""
    try:
        options = _start_or_resume(run, options, changes)
        return options, _read_pool(run, options, reporter)
    except MineError as exc:
        if created:
            shutil.rmtree(run.path, ignore_errors=True)
            raise
        raise no_valid_run(run, f"{exc}; it mined nothing yet") from exc
    except BaseException:
        if created:
            shutil.rmtree(run.path, ignore_errors=True)
        raise


def run_benchmark(
    run_dir: Path,
    options: RunOptions | None = None,
    *,
    stop: threading.Event | None = None,
    reporter: Reporter = silent,
    changes: Mapping[str, Any] | None = None,
) -> RunSummary:
    """Run (or, with `options` None, resume) the run in `run_dir` until it is done or stopped.

    A resumed run takes `changes` to the options `RESUME_CHANGES` names, and tries again the
    candidates whose setup failed on the network (`retry_network_rejections`). `reporter` is
    told the mining, each candidate's stages and verdict, a line for each running stage quiet
    for 15 s (`selfbench.activity`; the run's events record each such line for `status`), and
    as notes: once, when a setup first carries the host's network configuration, what it
    carries, and at the start, when author or reviewer commands run, what they may reach (the
    run's events record that line too).

    Raises:
        RunError: the run directory is in use, holds another run or none, or bad options.
        EgressError: a resumed run's author allow-list, or the host's proxy, cannot be used.
        MineError: the repository cannot be mined.
        ExportError: the export cannot be written.
    """
    run = RunDirectory(run_dir)
    if options is None:
        run.require_run()
    if options is not None:
        preflight(options, reporter=reporter)
    created = not run.path.exists()
    run.lock()
    try:
        resuming = options is None
        options, pool = _begin(run, options, reporter, created=created, changes=changes)
        stop = stop or threading.Event()
        candidates = _candidates(pool)
        states = {state.id: state for state in run.states()}
        if resuming:
            states.update(retry_network_rejections(run, states))
        settings = stages.AuthorSettings(
            options.author,
            options.author_time_limit,
            options.inactivity,
            options.author_env,
            options.author_home,
            options.network,
        )
        _say_network(run, options, reporter)
        setup_env = setup_env_values(options.setup_env)
        host_network = _host_network(options, reporter)
        host = options.host_ceilings()
        runner = _runner_factory(options, setup_env, host_network, host)
        context = StepContext(
            run,
            options.repo,
            settings,
            options.reviewer,
            runner,
            options.source_url,
            setup_env,
            host_network,
            agent_allowed_hosts=options.agent_allowed_hosts,
            agent_dependencies=options.agent_dependencies,
            quality=_quality_check(options, setup_env, host_network, host),
            min_quality=options.min_quality,
            ceilings=host,
            config=options.config,
            candidate_seconds=options.candidate_seconds,
        )
        scheduler = _Scheduler(options, candidates, states)

        def record(entry: activity.Doing, line: str) -> None:
            run.event("doing", candidate=entry.key, line=line)

        beating = activity.heartbeat(reporter.candidate_progress, on_line=record)
        try:
            with beating:
                _drive(context, scheduler, stop, reporter)
        except (SandboxError, HarborError) as exc:  # the machine's fault, not a candidate's
            run.event("stopped", error=str(exc))
            raise RunError(
                f"{exc}; the run stopped, resume with: {resume_command(run.path)}"
            ) from exc
        tiers = tier_summaries(options, candidates, states)
        ordered = tuple(sorted(states.values(), key=lambda state: state.rank))
        quality = quality_counts(run, states)
        if stop.is_set():
            run.event("interrupted")
            return RunSummary(
                run.path, tiers, None, interrupted=True, states=ordered, quality=quality
            )
        export = export_accepted(run, options, pool, run_id(pool, options), ordered)
        run.event("exported", path=str(export))
        return RunSummary(run.path, tiers, export, states=ordered, quality=quality)
    finally:
        run.unlock()
