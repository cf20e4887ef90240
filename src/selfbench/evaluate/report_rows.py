"""The rows every format of the evaluation report shows: the per-agent table, the task-by-agent
matrix, the non-passes and the agents' network (pure: strings out; the text and HTML renderers
share them)."""

from __future__ import annotations

from selfbench.evaluate.summary import AgentSummary, Summary

__all__ = ["agent_rows", "failure_rows", "matrix_rows", "network_lines", "quality_rows"]


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} s"


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


def agent_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The per-agent table: header and rows, as every format shows it."""
    difficulties = _difficulty_header(summary)
    header = ["agent", "pass rate", *difficulties]
    if summary.trials_per_task > 1:
        header.append(f"pass@{summary.trials_per_task}")
    header += ["mean time", "median time", "cost", "agent / task / infra failures"]
    rows = []
    for agent in summary.agents:
        row = [agent.name, f"{_percent(agent.pass_rate)} ({agent.passes}/{agent.counted})"]
        row += [
            f"{_percent(passes / counted if counted else None)} ({passes}/{counted})"
            for _, passes, counted in agent.by_difficulty
        ]
        if summary.trials_per_task > 1:
            row.append(_percent(agent.pass_at_k))
        row += [
            _seconds(agent.mean_seconds),
            _seconds(agent.median_seconds),
            _cost(agent),
            f"{agent.agent_failures} / {agent.task_failures} / {agent.infrastructure}",
        ]
        rows.append(row)
    return header, rows


def matrix_rows(summary: Summary) -> tuple[list[str], list[list[str]]]:
    """The task-by-agent matrix: header and rows; with quality records, each task's verdict
    after its difficulty (`—` for a task without one)."""
    quality = ["quality"] if summary.quality else []
    header = ["task", "difficulty", *quality, *(agent.name for agent in summary.agents)]
    rows = [
        [task, level, *_verdict(summary, task), *(cell.text() for cell in cells)]
        for task, level, cells in summary.matrix
    ]
    return header, rows


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
