"""What a report says, computed from a results file (pure).

Counted trials are passes and agent failures (those the agent's code caused by running into a
limit included, with their cause); infrastructure failures and failures of a task whose oracle
no longer passes are listed but never counted against an agent. pass@k is the
unbiased estimator (Chen et al., 2021) averaged over tasks, with k the trials per task; the
intervals and the comparisons of agents are `selfbench.evaluate.stats`'s. The baselines
(`oracle`, `nop`) get intervals but are left out of the comparisons and of the count of agents
that pass each task. A trial the tamper scan found suspect is listed with its findings and
counted as its verdict says: the findings change no figure.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from selfbench._json import JsonObject
from selfbench.evaluate.agents import BUILTIN_AGENTS
from selfbench.evaluate.classify import Verdict, reclassify
from selfbench.evaluate.results import ResultsLog, TrialRecord
from selfbench.evaluate.stats import (
    Comparison,
    Interval,
    compare,
    describe_methods,
    pass_at_k,
    pass_hat_k,
    pass_rate_interval,
    reading,
)
from selfbench.evaluate.tamper import Finding

__all__ = [
    "DIFFICULTIES",
    "AgentSummary",
    "Cell",
    "Failure",
    "Summary",
    "Suspect",
    "build_summary",
]

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True, slots=True)
class AgentSummary:
    """One agent's figures."""

    name: str
    counted: int
    passes: int
    by_difficulty: tuple[tuple[str, int, int], ...]
    """(difficulty, passes, counted) for each difficulty the benchmark has."""
    pass_at_k: float | None
    mean_seconds: float | None
    median_seconds: float | None
    tokens: int | None
    cost_usd: float | None
    agent_failures: int
    task_failures: int
    infrastructure: int
    interval: Interval | None = None
    """The pass rate's 95% interval (`stats.pass_rate_interval`)."""
    pass_hat_k: float | None = None
    """pass^k, with pass@k's k (`None` for one trial per task)."""

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.counted if self.counted else None

    def to_json(self) -> JsonObject:
        return {
            "agent": self.name,
            "trials": self.counted,
            "passes": self.passes,
            "passRate": self.pass_rate,
            "passRateInterval": _interval_json(self.interval),
            "byDifficulty": {
                name: {"passes": passes, "trials": counted, "passRate": _rate(passes, counted)}
                for name, passes, counted in self.by_difficulty
            },
            "passAtK": self.pass_at_k,
            "passHatK": self.pass_hat_k,
            "meanAgentSeconds": self.mean_seconds,
            "medianAgentSeconds": self.median_seconds,
            "tokens": self.tokens,
            "costUsd": self.cost_usd,
            "agentFailures": self.agent_failures,
            "taskFailures": self.task_failures,
            "infrastructureFailures": self.infrastructure,
        }


@dataclass(frozen=True, slots=True)
class Cell:
    """One (task, agent) entry of the matrix."""

    passes: int
    counted: int
    note: str
    """`infra` or `task` when no trial counted, else empty."""

    def text(self) -> str:
        return self.note or f"{self.passes}/{self.counted}"


@dataclass(frozen=True, slots=True)
class Failure:
    """One non-pass, with its class and reason."""

    task: str
    agent: str
    trial: int
    classification: str
    reason: str
    cause: str | None = None
    """The limit the agent's code ran into, when one struck."""
    proof: str | None = None
    """The oracle's run that decided a trial with no verdict."""


@dataclass(frozen=True, slots=True)
class Suspect:
    """A trial whose patch the tamper scan found suspect: its outcome, as counted, and its
    findings. The findings change nothing in the outcome."""

    task: str
    agent: str
    trial: int
    outcome: str
    """`pass`, or the non-pass's class."""
    reward: int | None
    findings: tuple[Finding, ...]

    @property
    def marks(self) -> str:
        """Each finding as `path:line rule`, `; ` between them."""
        return "; ".join(finding.mark for finding in self.findings)

    def to_json(self) -> JsonObject:
        return {
            "task": self.task,
            "agent": self.agent,
            "trial": self.trial,
            "outcome": self.outcome,
            "reward": self.reward,
            "findings": [finding.to_json() for finding in self.findings],
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """A whole report."""

    benchmark: str
    tasks: int
    trials_per_task: int
    agents: tuple[AgentSummary, ...]
    matrix: tuple[tuple[str, str, tuple[Cell, ...]], ...]
    """(task, difficulty, one cell per agent in `agents` order)."""
    failures: tuple[Failure, ...]
    skipped_lines: tuple[str, ...]
    networks: tuple[str, ...] = ()
    """The agents' network, per environment (`local: none (…)`), as the trials recorded it."""
    quality: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """Per task, its quality verdict and reasons (none when the benchmark carries no records)."""
    comparisons: tuple[Comparison, ...] = ()
    """Each pair of agents other than the baselines, the higher pass rate first."""
    passed_by: tuple[tuple[int, int], ...] = ()
    """Per `matrix` row: the agents other than the baselines that pass the task in at least
    one trial, and those with a counted trial on it."""
    suspects: tuple[Suspect, ...] = ()
    """Every trial the tamper scan found suspect, in the non-passes' order."""

    @property
    def methods(self) -> tuple[str, str]:
        """The statistical methods of this report, named once."""
        return describe_methods(several_trials=self.trials_per_task > 1)

    def to_json(self) -> JsonObject:
        names = [agent.name for agent in self.agents]
        passed_by = self.passed_by or ((0, 0),) * len(self.matrix)
        return {
            "benchmark": self.benchmark,
            "tasks": self.tasks,
            "trialsPerTask": self.trials_per_task,
            "agents": [agent.to_json() for agent in self.agents],
            "matrix": [
                {
                    "task": task,
                    "difficulty": difficulty,
                    "cells": {name: cell.text() for name, cell in zip(names, cells, strict=True)},
                    "passedBy": passing,
                    "agentsCounted": counted,
                }
                for (task, difficulty, cells), (passing, counted) in zip(
                    self.matrix, passed_by, strict=True
                )
            ],
            "comparisons": [_comparison_json(c) for c in self.comparisons],
            "methods": list(self.methods),
            "failures": [
                {
                    "task": f.task,
                    "agent": f.agent,
                    "trial": f.trial,
                    "class": f.classification,
                    "reason": f.reason,
                    "cause": f.cause,
                    "proof": f.proof,
                }
                for f in self.failures
            ],
            "skippedLines": list(self.skipped_lines),
            "agentNetwork": list(self.networks),
            **self._quality_json(),
            **({"suspect": [item.to_json() for item in self.suspects]} if self.suspects else {}),
        }

    def _quality_json(self) -> JsonObject:
        """`quality`, per task its verdict and reasons, when the benchmark carries records."""
        if not self.quality:
            return {}
        return {
            "quality": {
                task: {"verdict": verdict, "reasons": list(reasons)}
                for task, (verdict, reasons) in sorted(self.quality.items())
            }
        }


def _rate(passes: int, counted: int) -> float | None:
    return passes / counted if counted else None


def _interval_json(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval.low, interval.high]


def _comparison_json(comparison: Comparison) -> JsonObject:
    return {
        "first": comparison.first,
        "second": comparison.second,
        "tasks": comparison.tasks,
        "wins": comparison.wins,
        "losses": comparison.losses,
        "difference": comparison.difference,
        "interval": _interval_json(comparison.interval),
        "pValue": comparison.p_value,
        "reading": reading(comparison),
    }


def _final(record: TrialRecord, log: ResultsLog) -> Verdict:
    verdict = Verdict(record.passed, record.classification, record.reason)
    return reclassify(verdict, log.rechecks.get(record.digest))


def _agent(name: str, records: list[TrialRecord], log: ResultsLog, k: int) -> AgentSummary:
    verdicts = [(record, _final(record, log)) for record in records]
    counted = [(r, v) for r, v in verdicts if v.passed or v.classification == "agent"]
    difficulties = sorted({r.difficulty for r in log.trials.values()}, key=_difficulty_order)
    by_difficulty = tuple(
        (
            difficulty,
            sum(1 for r, v in counted if r.difficulty == difficulty and v.passed),
            sum(1 for r, _ in counted if r.difficulty == difficulty),
        )
        for difficulty in difficulties
    )
    per_task: dict[str, list[bool]] = {}
    for record, verdict in counted:
        per_task.setdefault(record.digest, []).append(verdict.passed)
    seconds = [r.agent_seconds for r, _ in counted if r.agent_seconds is not None]
    tokens = [r.tokens for r, _ in counted if r.tokens is not None]
    costs = [r.cost_usd for r, _ in counted if r.cost_usd is not None]
    classes = [v.classification for _, v in verdicts]
    counts = [(sum(p), len(p)) for p in per_task.values()]
    return AgentSummary(
        name=name,
        counted=len(counted),
        passes=sum(1 for _, v in counted if v.passed),
        by_difficulty=by_difficulty,
        pass_at_k=pass_at_k(counts, k) if k > 1 else None,
        mean_seconds=statistics.fmean(seconds) if seconds else None,
        median_seconds=statistics.median(seconds) if seconds else None,
        tokens=sum(tokens) if tokens else None,
        cost_usd=round(sum(costs), 6) if costs else None,
        agent_failures=classes.count("agent"),
        task_failures=classes.count("task"),
        infrastructure=classes.count("infrastructure"),
        interval=pass_rate_interval(counts, several_trials=k > 1),
        pass_hat_k=pass_hat_k(counts, k) if k > 1 else None,
    )


def _difficulty_order(name: str) -> tuple[int, str]:
    return (DIFFICULTIES.index(name) if name in DIFFICULTIES else len(DIFFICULTIES), name)


def _cell(records: list[TrialRecord], log: ResultsLog) -> Cell:
    verdicts = [_final(record, log) for record in records]
    counted = [v for v in verdicts if v.passed or v.classification == "agent"]
    if counted or not verdicts:
        return Cell(sum(1 for v in counted if v.passed), len(counted), "" if verdicts else "—")
    note = "task" if any(v.classification == "task" for v in verdicts) else "infra"
    return Cell(0, 0, note)


def build_summary(log: ResultsLog) -> Summary:
    """Summarise a results file: per agent, per difficulty, the matrix and every non-pass."""
    records = sorted(log.trials.values(), key=lambda r: (r.task, r.trial))
    names = list(dict.fromkeys(record.agent for record in log.trials.values()))
    k = max((record.trial for record in records), default=1)
    by_agent = {name: [r for r in records if r.agent == name] for name in names}
    agents = tuple(_agent(name, by_agent[name], log, k) for name in names)
    tasks = dict.fromkeys((r.task, r.difficulty) for r in records)
    matrix = tuple(
        (
            task,
            difficulty,
            tuple(_cell([r for r in by_agent[n] if r.task == task], log) for n in names),
        )
        for task, difficulty in tasks
    )
    failures = []
    suspects = []
    for record in sorted(records, key=lambda r: (r.task, names.index(r.agent), r.trial)):
        verdict = _final(record, log)
        if record.suspect:
            outcome = "pass" if verdict.passed else verdict.classification or "agent"
            suspects.append(
                Suspect(
                    record.task, record.agent, record.trial, outcome, record.reward, record.suspect
                )
            )
        if not verdict.passed:
            failures.append(
                Failure(
                    record.task,
                    record.agent,
                    record.trial,
                    verdict.classification or "agent",
                    verdict.reason or "",
                    record.cause,
                    record.proof,
                )
            )
    networks = tuple(sorted({f"{r.environment}: {r.network}" for r in records}))
    quality = {note.task: (note.verdict, note.reasons) for note in log.quality.values()}
    return Summary(
        log.benchmark,
        log.tasks,
        k,
        agents,
        matrix,
        tuple(failures),
        log.corrupt,
        networks,
        quality,
        _comparisons(agents, matrix, k),
        _passed_by(agents, matrix),
        tuple(suspects),
    )


def _compared(agents: tuple[AgentSummary, ...]) -> list[int]:
    """The positions of the agents other than the baselines, by pass rate, highest first."""
    chosen = [i for i, agent in enumerate(agents) if agent.name not in BUILTIN_AGENTS]
    return sorted(chosen, key=lambda i: -(agents[i].pass_rate or 0.0))


def _comparisons(
    agents: tuple[AgentSummary, ...],
    matrix: tuple[tuple[str, str, tuple[Cell, ...]], ...],
    k: int,
) -> tuple[Comparison, ...]:
    """Every pair of agents other than the baselines, on the tasks both have trials on, by the
    methods of `k` trials per task."""
    order = _compared(agents)
    return tuple(
        compare(
            agents[i].name,
            agents[j].name,
            [((c[i].passes, c[i].counted), (c[j].passes, c[j].counted)) for _, _, c in matrix],
            several_trials=k > 1,
        )
        for position, i in enumerate(order)
        for j in order[position + 1 :]
    )


def _passed_by(
    agents: tuple[AgentSummary, ...], matrix: tuple[tuple[str, str, tuple[Cell, ...]], ...]
) -> tuple[tuple[int, int], ...]:
    chosen = _compared(agents)
    return tuple(
        (sum(1 for i in chosen if cells[i].passes), sum(1 for i in chosen if cells[i].counted))
        for _, _, cells in matrix
    )
