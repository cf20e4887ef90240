"""The rows every format of the evaluation report shows: the per-agent table, the task-by-agent
matrix, the comparisons of agents, the non-passes, the suspect trials and the agents' network
(pure: strings out; the text and HTML renderers share them)."""

from __future__ import annotations

from selfbench.evaluate.agents import BUILTIN_AGENTS
from selfbench.evaluate.stats import Interval, reading
from selfbench.evaluate.summary import AgentSummary, Summary
from selfbench.evaluate.units import Unit, seconds_unit

__all__ = [
    "agent_rows",
    "comparison_rows",
    "failure_rows",
    "matrix_rows",
    "method_lines",
    "network_lines",
    "passed_by_lines",
    "quality_rows",
    "suspect_rows",
    "time_unit",
]


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _interval(value: Interval | None) -> str:
    if value is None:
        return "—"
    return f"{value.low * 100:.0f}-{value.high * 100:.0f}%"


def _cost(agent: AgentSummary) -> str:
    if agent.cost_usd is None and agent.tokens is None:
        return "—"
    parts = []
    if agent.cost_usd is not None:
        parts.append(f"${agent.cost_usd:.2f}")
    if agent.tokens is not None:
        parts.append(f"{agent.tokens:,} tok")
    return " / ".join(parts)


def _difficulty_header(summary: Summary) -> list[str]:
    first = summary.agents[0].by_difficulty if summary.agents else ()
    return [name for name, _, _ in first]


def time_unit(summary: Summary) -> Unit:
    """The unit the agents' mean and median times are shown in, in every table and chart."""
    return seconds_unit([v for a in summary.agents for v in (a.mean_seconds, a.median_seconds)])


def agent_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The per-agent table: header and rows, as every format shows it (times in `time_unit`)."""
    time = time_unit(summary)
    difficulties = _difficulty_header(summary)
    header = ["agent", "pass rate", "95% CI", *difficulties]
    if summary.trials_per_task > 1:
        header += [f"pass@{summary.trials_per_task}", f"pass^{summary.trials_per_task}"]
    header += ["mean time", "median time", "cost", "agent / task / infra failures"]
    rows = []
    for agent in summary.agents:
        row = [
            agent.name,
            f"{_percent(agent.pass_rate)} ({agent.passes}/{agent.counted})",
            _interval(agent.interval),
        ]
        row += [
            f"{_percent(passes / counted if counted else None)} ({passes}/{counted})"
            for _, passes, counted in agent.by_difficulty
        ]
        if summary.trials_per_task > 1:
            row += [_percent(agent.pass_at_k), _percent(agent.pass_hat_k)]
        row += [
            time.text(agent.mean_seconds),
            time.text(agent.median_seconds),
            _cost(agent),
            f"{agent.agent_failures} / {agent.task_failures} / {agent.infrastructure}",
        ]
        rows.append(row)
    return header, rows


def matrix_rows(summary: Summary, *, passed_by: bool = False) -> tuple[list[str], list[list[str]]]:
    """The task-by-agent matrix: header and rows; with quality records, each task's verdict
    after its difficulty (`—` for a task without one). With `passed_by` and agents other than
    the baselines, a last column: how many of them pass the task (of those with a counted
    trial on it)."""
    quality = ["quality"] if summary.quality else []
    header = ["task", "difficulty", *quality, *(agent.name for agent in summary.agents)]
    rows = [
        [task, level, *_verdict(summary, task), *(cell.text() for cell in cells)]
        for task, level, cells in summary.matrix
    ]
    if passed_by and summary.passed_by and _compared(summary):
        header.append("agents passing")
        for row, (passing, counted) in zip(rows, summary.passed_by, strict=True):
            row.append(f"{passing}/{counted}")
    return header, rows


def _compared(summary: Summary) -> list[str]:
    return [agent.name for agent in summary.agents if agent.name not in BUILTIN_AGENTS]


def passed_by_lines(summary: Summary) -> list[str]:
    """The tasks every agent other than the baselines passes, and those none passes (with
    two such agents or more; a task none of them has a counted trial on is in neither)."""
    if len(_compared(summary)) < 2 or not summary.passed_by:
        return []
    counts = [
        (task, *count)
        for (task, _, _), count in zip(summary.matrix, summary.passed_by, strict=True)
    ]
    every = [task for task, passing, counted in counts if counted and passing == counted]
    none = [task for task, passing, counted in counts if counted and not passing]
    return [
        f"Passed by every agent: {', '.join(every) or 'no task'}",
        f"Passed by no agent: {', '.join(none) or 'no task'}",
    ]


def comparison_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """Each pair of agents other than the baselines: its common tasks and its one-line
    reading (who beats whom on how many tasks, the difference in percentage points with its
    95% interval, the p value)."""
    rows = [[str(c.tasks), reading(c)] for c in summary.comparisons]
    return ["tasks", "pair"], rows


def method_lines(summary: Summary) -> list[str]:
    """The report's footnote: the statistical methods, and what the comparisons leave out."""
    lines = list(summary.methods)
    if any(agent.name in BUILTIN_AGENTS for agent in summary.agents):
        lines.append(
            f"The baselines ({', '.join(BUILTIN_AGENTS)}) are left out of the pairs and of the "
            "agents passing each task."
        )
    return lines


def _verdict(summary: Summary, task: str) -> list[str]:
    if not summary.quality:
        return []
    return [summary.quality[task][0] if task in summary.quality else "—"]


def quality_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """Each task's quality verdict and its reasons (one cell, `; ` between them)."""
    rows = [
        [task, verdict, "; ".join(reasons) or "—"]
        for task, (verdict, reasons) in sorted(summary.quality.items())
    ]
    return ["task", "verdict", "reasons"], rows


def network_lines(summary: Summary) -> list[str]:
    """What network the agents had, one line per environment."""
    return [f"Agent network ({line})" for line in summary.networks]


def failure_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """Every non-pass: header and rows; a `cause` column (the limit the agent's code ran into,
    `—` for none) when any non-pass has one."""
    causes = any(f.cause for f in summary.failures)
    header = ["task", "agent", "trial", "class", *(["cause"] if causes else []), "reason"]
    rows = [
        [
            f.task,
            f.agent,
            str(f.trial),
            f.classification,
            *([f.cause or "—"] if causes else []),
            f.reason,
        ]
        for f in summary.failures
    ]
    return header, rows


def suspect_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """Every trial the tamper scan found suspect: its outcome and reward as recorded (the
    findings change neither), and its findings as `path:line rule`."""
    rows = [
        [
            s.task,
            s.agent,
            str(s.trial),
            s.outcome,
            "—" if s.reward is None else str(s.reward),
            s.marks,
        ]
        for s in summary.suspects
    ]
    return ["task", "agent", "trial", "outcome", "reward", "suspect"], rows
