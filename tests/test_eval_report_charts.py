"""The HTML report's charts and links: units that fit, labels that never overlap at 8 and 20
agents in real headless Chromium, and each non-pass linked to its logs and trajectory.

The results directories are written through the results store (`open_results`), record by
record, as `selfbench eval` appends them; the logs and trajectories lie where eval puts them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from eval_helpers import failed, record, write_results
from projects import build
from selfbench.cli import main
from selfbench.evaluate import build_summary, read_results
from selfbench.evaluate.charts import (
    AgentBar,
    cost_unit,
    pass_rate_chart,
    seconds_unit,
    tokens_unit,
)
from selfbench.evaluate.report_html import render_html
from selfbench.evaluate.results import TrialRecord
from selfbench.evaluate.trial_files import STEP_LIMIT, parse_trajectory, read_trial_files
from test_eval import project

_TASKS = (
    "parse-dates", "slug-unicode", "retry-backoff-on-429-with-jitter", "cache-ttl",
    "csv-dialect-sniffing", "plugin-hooks", "json-pointer-escape", "tz-aware-cron",
    "config-merge-order", "unicode-normalize-paths", "http-range-requests", "lru-eviction",
)  # fmt: skip
_NAMES = (
    "claude-code-sonnet", "codex-cli-gpt-5", "gemini-cli-2.5-pro", "opencode", "aider-sonnet",
    "mini-swe-agent-gpt-5-mini", "oracle", "nop", "scripted-a", "scripted-b", "scripted-c",
    "qwen-coder-32b-aider", "claude-code-haiku", "codex-cli-o4-mini", "gemini-cli-flash",
    "opencode-kimi-k2", "aider-deepseek-v3", "mini-swe-agent-claude", "swe-agent-baseline",
    "retry-wrapper-1",
)  # fmt: skip


def _agent_log(results: Path, task: str, name: str) -> str:
    """Write the trial's logs where a local trial leaves them; the path eval records."""
    directory = results / "logs" / task
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.log").write_text("selfbench: verifier\n")
    agent = directory / f"{name}-agent.log"
    agent.write_text(f"selfbench: agent ({name}) exited 1\n")
    return str(agent)


def _many(tmp_path: Path, agents: int) -> Path:
    """`agents` agents on twelve tasks: pass rates from all to none, agent time from
    milliseconds to minutes, tokens and cost where known, a task one agent never ran, one the
    infrastructure failed, and logs for every non-pass."""
    results = tmp_path / f"results-{agents}"
    records: list[TrialRecord] = []
    for number, agent in enumerate(_NAMES[:agents]):
        for index, task in enumerate(_TASKS):
            if number == 3 and index == 11:
                continue  # not run
            common: dict[str, Any] = {
                "agent_seconds": 0.004 + 13.7 * number + index,
                "tokens": 1500 * number * (index + 1) or None,
                "cost_usd": 0.0015 * number * (index + 1) or None,
            }
            if number == 4 and index == 0:
                records.append(
                    record(
                        task,
                        agent,
                        passed=False,
                        classification="infrastructure",
                        reason="setup: failed",
                        **common,
                    )
                )
            elif (index * 7 + number * 5) % agents < agents - number:
                records.append(record(task, agent, **common))
            else:
                log = _agent_log(results, task, f"{agent}-t1-a1")
                records.append(failed(task, agent, log=log, **common))
    return write_results(results, records, tasks=len(_TASKS))


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("Chromium is missing: run ./scripts/system-deps.sh (apt package chromium)")
    return found


_MEASURE = """() => Array.from(document.querySelectorAll('figure svg')).map(svg => {
  const frame = svg.getBoundingClientRect();
  const texts = Array.from(svg.querySelectorAll('text'))
    .map(t => ({text: t.textContent, box: t.getBoundingClientRect()}))
    .filter(t => t.text.trim() && t.box.width > 0)
    .map(t => ({text: t.text, x: t.box.x, y: t.box.y, w: t.box.width, h: t.box.height}));
  return {frame: {x: frame.x, y: frame.y, w: frame.width, h: frame.height}, texts};
})"""


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two boxes share more than a hairline (half a pixel) of area."""
    width = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return bool(width > 0.5 and height > 0.5)


def _inside(box: dict[str, Any], frame: dict[str, Any]) -> bool:
    return bool(
        box["x"] >= frame["x"] - 0.5
        and box["y"] >= frame["y"] - 0.5
        and box["x"] + box["w"] <= frame["x"] + frame["w"] + 0.5
        and box["y"] + box["h"] <= frame["y"] + frame["h"] + 0.5
    )


def _measure(page_file: Path) -> list[dict[str, Any]]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=_chromium(), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_file.as_uri())
            charts: list[dict[str, Any]] = page.evaluate(_MEASURE)
        finally:
            browser.close()
    return charts


@pytest.mark.parametrize("agents", [1, 8, 20])
def test_no_chart_label_overlaps_another_or_leaves_its_chart(tmp_path: Path, agents: int) -> None:
    results = _many(tmp_path, agents)
    out = tmp_path / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(out)]) == 0
    charts = _measure(out)
    assert len(charts) == 3
    for chart in charts:
        texts = chart["texts"]
        assert len(texts) >= agents
        outside = [t["text"] for t in texts if not _inside(t, chart["frame"])]
        assert outside == []
        clashes = [
            (a["text"], b["text"])
            for i, a in enumerate(texts)
            for b in texts[i + 1 :]
            if _overlap(a, b)
        ]
        assert clashes == []
    [rates, usage, matrix] = (chart["texts"] for chart in charts)
    values = [t for t in rates if t["text"].endswith(")") and "% (" in t["text"]]
    assert len(values) == agents  # one value label per agent, none merged into another
    names = [t["text"] for t in matrix]
    assert set(_NAMES[:agents]) <= set(names)
    assert set(_TASKS) <= set(names)
    legend = {"pass", "fail", "infrastructure", "not run"} if agents > 4 else {"pass"}
    assert legend <= set(names)
    seconds = [t["text"] for t in usage if t["text"].endswith(" min") or t["text"].endswith(" s")]
    assert len(seconds) == agents


def test_the_table_and_the_time_axis_share_their_unit(tmp_path: Path) -> None:
    records = [
        record("t1", "quick", agent_seconds=0.012),
        record("t2", "quick", agent_seconds=0.034),
        record("t1", "other", agent_seconds=0.051, tokens=2_500_000, cost_usd=0.0042),
    ]
    summary = build_summary(read_results(write_results(tmp_path / "r", records)))
    page = render_html(summary)
    assert "<td>23.0 ms</td><td>23.0 ms</td>" in page  # quick: mean and median
    assert "<td>51.0 ms</td><td>51.0 ms</td><td>$0.0042 / 2.50 M tokens</td>" in page
    assert "mean agent time per trial (ms)" in page  # the axis
    assert "0.0 s" not in page


def test_units_fit_the_values() -> None:
    assert seconds_unit([0.0123, None]).text(0.0123) == "12.3 ms"
    assert seconds_unit([4.2, 61.0]).text(4.2) == "4.2 s"
    assert seconds_unit([400.0]).text(90.0) == "1.50 min"
    assert tokens_unit([900]).text(900) == "900 tokens"
    assert tokens_unit([45_000]).text(45_000) == "45.0 k tokens"
    assert tokens_unit([12_000_000]).text(3_400_000) == "3.4 M tokens"
    assert cost_unit([0.12, 3.0]).text(3.0) == "$3.00"
    assert cost_unit([0.0042, 1.0]).text(1.0) == "$1.0000"
    assert cost_unit([None]).text(None) == "—"
    assert seconds_unit([400.0, 0.1]).text(0.1) == "< 0.01 min"  # measured, not zero
    assert seconds_unit([400.0, 0.0]).text(0.0) == "0.00 min"


def test_bars_are_sorted_and_whiskers_drawn_only_from_given_intervals() -> None:
    bars = [AgentBar("low", 1, 4), AgentBar("high", 3, 4, (0.3, 0.95)), AgentBar("none", 0, 0)]
    page = pass_rate_chart(bars)
    assert page.index(">high<") < page.index(">low<") < page.index(">none<")
    assert "75% (3/4)" in page
    assert "25% (1/4)" in page
    plain = pass_rate_chart([AgentBar("low", 1, 4), AgentBar("high", 3, 4)])
    assert page.count("<path") > plain.count("<path")  # the whisker and its caps


def test_each_non_pass_links_its_logs_and_shows_its_trajectory_escaped(tmp_path: Path) -> None:
    results = tmp_path / "results"
    log = _agent_log(results, "t1", "evil-t1-a1")
    steps = [
        {"step_id": 1, "source": "user", "message": "Fix the <b>bug</b>"},
        {
            "step_id": 2,
            "source": "agent",
            "message": "</pre><script>alert(1)</script>",
            "tool_calls": [{"function_name": "bash", "arguments": {"cmd": "cat x"}}],
            "observation": {"results": [{"content": "x" * (STEP_LIMIT + 50)}]},
        },
    ]
    trajectory = {"schema_version": "ATIF-v1.2", "steps": steps}
    (results / "logs" / "t1" / "evil-t1-a1-trajectory.json").write_text(json.dumps(trajectory))
    records = [failed("t1", "evil", log=log), record("t1", "good")]
    write_results(results, records)
    out = tmp_path / "pages" / "report.html"
    out.parent.mkdir()
    assert main(["report", str(results), "--format", "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert '<a href="../results/logs/t1/evil-t1-a1-agent.log">agent log</a>' in page
    assert '<a href="../results/logs/t1/evil-t1-a1.log">verifier log</a>' in page
    assert '<a href="../results/logs/t1/evil-t1-a1-trajectory.json">trajectory</a>' in page
    assert "<script" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Fix the &lt;b&gt;bug&lt;/b&gt;" in page
    assert "→ bash({&quot;cmd&quot;: &quot;cat x&quot;})" in page
    assert "x" * STEP_LIMIT not in page  # the step is cut, and says how long it was
    assert re.search(r"x… \(2\d{3} characters\)</pre>", page)
    assert "<summary>trajectory (2 steps)</summary>" in page


def test_a_harness_jsonl_trajectory_and_a_moved_results_directory(tmp_path: Path) -> None:
    lines = [
        json.dumps({"type": "user", "content": "read the instruction"}),
        "not json",
        json.dumps({"role": "assistant", "content": [{"type": "text", "text": "done"}]}),
    ]
    steps, omitted = parse_trajectory("\n".join(lines).encode())
    assert [step.source for step in steps] == ["user", "assistant"]
    assert steps[1].text == "done"
    assert omitted == 0
    where = tmp_path / "elsewhere" / "results"
    log = _agent_log(where, "t1", "a-t1-a1")
    write_results(where, [failed("t1", "a", log=log)])
    moved = tmp_path / "moved"
    shutil.move(where, moved)
    files = read_trial_files(read_results(moved), moved, page_dir=moved)
    assert files[("t1", "a", 1)].links == (
        ("agent log", "logs/t1/a-t1-a1-agent.log"),
        ("verifier log", "logs/t1/a-t1-a1.log"),
    )


def test_a_log_path_that_climbs_out_of_the_results_is_not_linked(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (tmp_path / "secret.log").write_text("x")
    write_results(results, [failed("t1", "a", log="logs/../../secret.log")])
    (results / "logs").mkdir()
    files = read_trial_files(read_results(results), results, page_dir=results)
    assert files[("t1", "a", 1)].links == ()


_ATIF = json.dumps(
    {
        "schema_version": "ATIF-v1.2",
        "steps": [
            {"step_id": 1, "source": "user", "message": "Add <mul>"},
            {
                "step_id": 2,
                "source": "agent",
                "message": "writing mul",
                "tool_calls": [
                    {"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ed"}}
                ],
            },
        ],
    }
)
WRONG = (
    f"echo the-agent-was-here; printf '%s' '{_ATIF}' > /run/selfbench-agent/trajectory.json; "
    "printf '\\n\\ndef mul(a, b):\\n    return 0\\n' >> calc/__init__.py"
)
LINKER = (
    "ln -s /etc/passwd /run/selfbench-agent/trajectory.json; "
    "rm -f /run/selfbench-agent/output.log; echo linker-ran"
)


@pytest.mark.sandbox
def test_a_real_evaluation_links_each_non_pass_to_the_logs_it_wrote(tmp_path: Path) -> None:
    out = build(project("calc-mul", "mul", "a * b", "easy"), tmp_path / "b")
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.move(out, tasks / out.name)
    results = tmp_path / "results"
    argv = ["eval", str(tasks), "--results", str(results), "--agent", "oracle"]
    assert main([*argv, "--agent", f"wrong={WRONG}", "--agent", f"linker={LINKER}"]) == 0
    page_file = tmp_path / "site" / "report.html"
    page_file.parent.mkdir()
    assert main(["report", str(results), "--format", "html", "--out", str(page_file)]) == 0
    page = page_file.read_text()
    links = re.findall(r'<a href="([^"]+)">([a-z ]+)</a>', page)
    logs = "../results/logs/calc-mul"
    assert links == [
        (f"{logs}/wrong-t1-a1-agent.log", "agent log"),
        (f"{logs}/wrong-t1-a1.log", "verifier log"),
        (f"{logs}/wrong-t1-a1-trajectory.json", "trajectory"),
        (f"{logs}/linker-t1-a1-agent.log", "agent log"),
        (f"{logs}/linker-t1-a1.log", "verifier log"),
    ]

    def linked(name: str) -> str:
        return (page_file.parent / logs / name).read_text()

    assert "the-agent-was-here" in linked("wrong-t1-a1-agent.log")
    assert "test_mul" in linked("wrong-t1-a1.log")
    assert "linker-ran" in linked("linker-t1-a1-agent.log")  # output.log stayed root's
    assert "<summary>trajectory (2 steps)</summary>" in page
    assert "Add &lt;mul&gt;" in page
    assert "→ bash({&quot;cmd&quot;: &quot;ed&quot;})" in page
    assert "root:" not in page  # the link to /etc/passwd was not followed
