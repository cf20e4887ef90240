"""`selfbench report`: the summary's figures, every format, and the HTML page in Chromium.

The results files here are written record by record, as `selfbench eval` appends them, so the
figures are known exactly; tests/test_eval.py produces real ones end to end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.sync_api import sync_playwright
from rich.console import Console

from eval_helpers import BENCHMARK, failed, record, write_results
from export_helpers import COMMIT, author_collected, quality_record
from selfbench.artifacts.quality_record import write_quality
from selfbench.cli import main
from selfbench.cli.eval import _LiveTable
from selfbench.demo import build_sample_repository
from selfbench.evaluate import EvalError, Recheck, build_summary, read_results, render_report
from selfbench.evaluate.bench import open_benchmark
from selfbench.evaluate.report_html import render_html as render_report_html
from selfbench.evaluate.results import RESULTS_FILE, QualityNote, open_results
from selfbench.evaluate.run import _note_quality
from selfbench.evaluate.summary import AgentSummary, Failure, Summary
from selfbench.evaluate.tamper import Finding
from selfbench.export import RunInfo, export_run

INFRA: dict[str, Any] = {
    "passed": False,
    "classification": "infrastructure",
    "reason": "setup: failed",
}


def _results(tmp_path: Path) -> Path:
    """oracle passes both tasks; agent-a passes t1, fails t2 whose oracle no longer passes
    (a task failure), and meets the infrastructure on t3; agent-b fails t1."""
    records = [
        record("t1", "oracle"),
        record("t2", "oracle", difficulty="medium"),
        record("t1", "agent-a", agent_seconds=20.0, tokens=1000, cost_usd=0.5),
        failed("t2", "agent-a", difficulty="medium", agent_seconds=40.0),
        record("t3", "agent-a", **INFRA),
        failed("t1", "agent-b"),
    ]
    broken = Recheck("t2", "d-t2", passed=False, reason="the oracle no longer passes: x")
    return write_results(tmp_path / "results", records, [broken], tasks=3)


def test_the_summary_counts_only_passes_and_agent_failures(tmp_path: Path) -> None:
    summary = build_summary(read_results(_results(tmp_path)))
    agent = {item.name: item for item in summary.agents}["agent-a"]
    assert (agent.passes, agent.counted, agent.pass_rate) == (1, 1, 1.0)
    assert (agent.agent_failures, agent.task_failures, agent.infrastructure) == (0, 1, 1)
    assert agent.by_difficulty == (("easy", 1, 1), ("medium", 0, 0))
    assert (agent.mean_seconds, agent.median_seconds) == (20.0, 20.0)
    assert (agent.tokens, agent.cost_usd) == (1000, 0.5)
    assert [f.classification for f in summary.failures] == ["agent", "task", "infrastructure"]
    assert summary.failures[1].reason == (
        "the task is broken: the oracle no longer passes: x "
        "(was: tests ran and failed: fail-to-pass)"
    )
    assert [cell.text() for cell in summary.matrix[1][2]] == ["1/1", "task", "—"]


def test_pass_at_k_is_the_unbiased_estimator(tmp_path: Path) -> None:
    records = [record("t1", "a", 1), failed("t1", "a", 2), failed("t1", "a", 3)]
    records += [failed("t2", "a", trial) for trial in (1, 2, 3)]
    records += [record("t3", "a", 1), record("t3", "a", 2), failed("t3", "a", 3)]
    summary = build_summary(read_results(write_results(tmp_path / "r", records)))
    [agent] = summary.agents
    assert summary.trials_per_task == 3
    assert agent.pass_rate == pytest.approx(3 / 9)
    assert agent.pass_at_k == pytest.approx(2 / 3)  # t1 and t3 pass at 3 trials, t2 never


def test_markdown_and_csv_are_exact(tmp_path: Path) -> None:
    summary = build_summary(read_results(_results(tmp_path)))
    assert render_report(summary, "md") == (
        f"# Benchmark {BENCHMARK[:12]}: 3 tasks, 1 trial(s) per task and agent\n\n"
        "Agent network (local: none).\n\n## Agents\n\n"
        "| agent | pass rate | 95% CI | easy | medium | mean time | median time | cost |"
        " agent / task / infra failures |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
        "| oracle | 100.0% (2/2) | 34-100% | 100.0% (1/1) | 100.0% (1/1) | 10.0 s | 10.0 s | — |"
        " 0 / 0 / 0 |\n"
        "| agent-a | 100.0% (1/1) | 21-100% | 100.0% (1/1) | — (0/0) | 20.0 s | 20.0 s |"
        " $0.50 / 1,000 tok | 0 / 1 / 1 |\n"
        "| agent-b | 0.0% (0/1) | 0-79% | 0.0% (0/1) | — (0/0) | 10.0 s | 10.0 s | — |"
        " 1 / 0 / 0 |\n"
        "\n## Tasks\n\n"
        "| task | difficulty | oracle | agent-a | agent-b | agents passing |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| t1 | easy | 1/1 | 1/1 | 0/1 | 1/2 |\n| t2 | medium | 1/1 | task | — | 0/0 |\n"
        "| t3 | easy | — | infra | — | 0/0 |\n\n"
        "Passed by every agent: no task.\nPassed by no agent: no task.\n\n## Pairs\n\n"
        "| tasks | pair |\n| --- | --- |\n"
        "| 1 | agent-a beats agent-b on 1 task, loses on 0, ties on 0;"
        " difference 100 pp [-12, 100]; p = 1.00 |\n\n"
        "*Pass rate: 95% Wilson score interval.*\n"
        "*Pairs, on common tasks: Newcombe's paired interval, exact McNemar test (two-sided).*\n"
        "*The baselines (oracle, nop) are left out of the pairs and of the agents passing each"
        " task.*\n\n## Non-passes\n\n"
        "| task | agent | trial | class | reason |\n| --- | --- | --- | --- | --- |\n"
        "| t1 | agent-b | 1 | agent | tests ran and failed: fail-to-pass |\n"
        "| t2 | agent-a | 1 | task | the task is broken: the oracle no longer passes: x"
        " (was: tests ran and failed: fail-to-pass) |\n"
        "| t3 | agent-a | 1 | infrastructure | setup: failed |\n"
    )
    assert render_report(summary, "csv").splitlines()[1:4] == [
        "oracle,all,2,2,1.0000,,10.0000,10.0000,,,0,0,0,0.3424,1.0000,wilson,",
        "oracle,easy,1,1,1.0000,,,,,,,,,,,,",
        "oracle,medium,1,1,1.0000,,,,,,,,,,,,",
    ]


def test_sub_second_times_are_shown_in_the_charts_unit_in_every_table(tmp_path: Path) -> None:
    """Times under 0.05 s read as milliseconds, not "0.0 s", in text, md and html alike; csv
    and json keep the seconds (the csv's header says so)."""
    records = [
        record("t1", "quick", agent_seconds=0.012),
        failed("t2", "quick", agent_seconds=0.004),
        record("t1", "slow", agent_seconds=0.034),
        failed("t2", "slow", agent_seconds=0.0006),
    ]
    summary = build_summary(read_results(write_results(tmp_path / "results", records)))
    markdown = render_report(summary, "md")
    assert "| quick | 50.0% (1/2) | 9-91% | 50.0% (1/2) | 8.0 ms | 8.0 ms | — | 1 / 0 / 0 |" in (
        markdown
    )
    assert "| slow | 50.0% (1/2) | 9-91% | 50.0% (1/2) | 17.3 ms | 17.3 ms | — | 1 / 0 / 0 |" in (
        markdown
    )
    text = render_report(summary, "text")
    assert re.search(r"│ quick +│ .* │ 8\.0 ms +│ 8\.0 ms +│", text), text
    assert re.search(r"│ slow +│ .* │ 17\.3 ms +│ 17\.3 ms +│", text), text
    page = render_report_html(summary)
    assert page.count(">8.0 ms<") == 3  # mean and median in the table, the chart's label
    assert page.count(">17.3 ms<") == 3
    csv_lines = render_report(summary, "csv").splitlines()
    assert "mean_agent_seconds" in csv_lines[0]
    assert csv_lines[1].startswith("quick,all,2,1,0.5000,,0.0080,0.0080,")
    assert json.loads(render_report(summary, "json"))["agents"][1]["meanAgentSeconds"] == (
        pytest.approx(0.0173)
    )


def test_the_json_report_and_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(tmp_path)
    assert main(["report", str(results), "--format", "json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["agents"][1]["byDifficulty"]["easy"] == {"passes": 1, "passRate": 1.0, "trials": 1}
    cells = {"oracle": "—", "agent-a": "infra", "agent-b": "—"}
    assert value["matrix"][2] == {
        "task": "t3",
        "difficulty": "easy",
        "cells": cells,
        "passedBy": 0,
        "agentsCounted": 0,
    }
    out = tmp_path / "report.txt"
    assert main(["report", str(results), "--out", str(out)]) == 0
    text = out.read_text()
    assert "agent-a" in text
    assert "  t3 agent-a #1: infrastructure: setup: failed\n" in text


def test_a_corrupt_line_is_reported_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _results(tmp_path)
    with (results / RESULTS_FILE).open("a") as handle:
        handle.write('{"kind": "trial", "task": "t9"}\nnot json\n')
    log = read_results(results)
    assert log.corrupt == (
        f"{results / RESULTS_FILE}:9: corrupt line skipped: not a trial record (its fields differ)",
        f"{results / RESULTS_FILE}:10: corrupt line skipped: not JSON (column 1)",
    )
    assert len(log.trials) == 6
    assert main(["report", str(results), "--format", "csv"]) == 0
    assert capsys.readouterr().err == "".join(f"warning: {line}\n" for line in log.corrupt)


def test_a_line_cut_by_a_kill_is_ended_and_skipped(tmp_path: Path) -> None:
    results = _results(tmp_path)
    with (results / RESULTS_FILE).open("a") as handle:
        handle.write('{"kind": "trial", "ta')
    _, log = open_results(results, benchmark=BENCHMARK, tasks=3)
    assert log.corrupt == (
        f"{results / RESULTS_FILE}:9: corrupt line skipped: not JSON (column 19)",
    )
    assert (results / RESULTS_FILE).read_bytes().endswith(b'"ta\n')


def test_results_of_another_benchmark_are_refused(tmp_path: Path) -> None:
    results = _results(tmp_path)
    with pytest.raises(EvalError) as error:
        open_results(results, benchmark="e" * 64, tasks=3)
    assert str(error.value) == (
        f"{results / RESULTS_FILE}: results of another benchmark (ffffffffffff, not eeeeeeeeeeee);"
        " use another --results directory"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory"),
        ("[]\n", "{path}:1: not a selfbench results file (no benchmark header)"),
    ],
    ids=["missing", "no-header"],
)
def test_unreadable_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    path = tmp_path / RESULTS_FILE
    if content is not None:
        path.write_text(content)
    assert main(["report", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {message.format(path=path)}\n"


def _showcase(tmp_path: Path) -> Path:
    """Three agents and the baselines on six tasks, three trials each."""
    levels = {"parse-dates": "easy", "slug-unicode": "easy", "retry-backoff": "medium",
              "cache-ttl": "medium", "csv-dialect": "hard", "plugin-hooks": "hard"}  # fmt: skip
    solved = {"agent-a": 5, "agent-b": 3}
    records = []
    for index, (task, level) in enumerate(levels.items()):
        for trial in (1, 2, 3):
            common = {"difficulty": level, "digest": f"d-{task}"}
            records.append(record(task, "oracle", trial, agent_seconds=0.1, **common))
            records.append(failed(task, "nop", trial, agent_seconds=0.0, **common))
            for number, (agent, count) in enumerate(solved.items()):
                seconds = 60.0 + 45 * number + 17 * index + 5 * trial
                usage = {"agent_seconds": seconds, "tokens": 40_000 + 1000 * index,
                         "cost_usd": 0.12 + 0.03 * number}  # fmt: skip
                passes = index < count and (trial != 3 or number == 0)
                make = record if passes else failed
                records.append(make(task, agent, trial, **common, **usage))
    records.append(record("plugin-hooks", "agent-b", 3, difficulty="hard", **INFRA))
    return write_results(tmp_path / "showcase", records, tasks=6)


def test_the_html_page_is_self_contained_and_deterministic(tmp_path: Path) -> None:
    summary = build_summary(read_results(_showcase(tmp_path)))
    page = render_report(summary, "html")
    assert page == render_report(summary, "html")
    assert page.count("<svg") == 3
    assert "<script" not in page
    namespaces = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert set(re.findall(r"https?://[^\"]*", page)) == namespaces  # XML namespaces only


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("Chromium is missing: run ./scripts/system-deps.sh (apt package chromium)")
    return found


def test_the_html_page_reads_in_chromium_without_script(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", str(_showcase(tmp_path)), "--format", "html", "--out", str(out)]) == 0
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=_chromium(), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            context = browser.new_context(
                java_script_enabled=False, viewport={"width": 1280, "height": 900}
            )
            page = context.new_page()
            page.on("request", lambda request: requests.append(request.url))
            page.goto(out.as_uri())
            assert page.title() == "selfbench evaluation: 6 tasks"
            assert page.locator("figure svg").count() == 3
            rows = (
                page.locator("table").first.locator("tbody tr td:first-child").all_text_contents()
            )
            assert rows == ["oracle", "nop", "agent-a", "agent-b"]
            matrix = page.locator("h2:text-is('Tasks by agent') + div table")
            cell = matrix.locator("tbody tr").first.locator("td").nth(4)
            assert cell.text_content() == "3/3"
            assert cell.get_attribute("class") == "pass"
            pairs = page.locator("h2:text-is('Pairs') + table tbody td:last-child")
            assert pairs.all_text_contents()[0].startswith("agent-")
            assert " beats " in pairs.all_text_contents()[0]
            assert page.locator("ul.methods li").count() >= 1
            assert page.locator("figure svg").first.bounding_box() is not None
            page.screenshot(path=str(tmp_path / "eval-report.png"), full_page=False)
        finally:
            browser.close()
    assert requests == [out.as_uri()]
    assert (tmp_path / "eval-report.png").stat().st_size > 20_000
    keep = os.environ.get("SELFBENCH_KEEP_SCREENSHOTS")  # a directory to look at it in
    if keep:
        shutil.copyfile(tmp_path / "eval-report.png", Path(keep) / "eval-report.png")


def test_the_terminal_live_table_counts_trials_as_they_end() -> None:
    live = _LiveTable(["oracle", "agent-a"], total=2)
    live.add(record("t1", "oracle"))
    live.add(failed("t1", "agent-a"))
    live.add(record("t2", "agent-a", **INFRA))
    console = Console(width=80, color_system=None, record=True)
    console.print(live.render())
    rows = [line.split("│")[1:-1] for line in console.export_text().splitlines() if "│" in line]
    cells = [[cell.strip() for cell in row] for row in rows]
    assert cells[-2:] == [["oracle", "1/2", "1", "0", "0"], ["agent-a", "2/2", "0", "1", "1"]]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.characters(exclude_characters="\n\r")), max_size=5))
def test_any_extra_lines_are_records_or_reported(tmp_path: Path, lines: list[str]) -> None:
    results = tmp_path / "prop"
    shutil.rmtree(results, ignore_errors=True)
    write_results(results, [record("t1", "oracle")])
    # a lone surrogate becomes bytes that are not UTF-8: a corrupt line too
    with (results / RESULTS_FILE).open("a", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write("".join(f"{line}\n" for line in lines))
    log = read_results(results)
    blank = sum(1 for line in lines if not line.strip())
    assert len(log.corrupt) + blank <= len(lines)
    assert all(": corrupt line skipped: " in line for line in log.corrupt)
    assert record("t1", "oracle").key in log.trials


def _agent(name: str, *, counted: int, task: int, infrastructure: int) -> AgentSummary:
    return AgentSummary(name, counted, 0, (), None, None, None, None, None, counted, task,
                        infrastructure)  # fmt: skip


@pytest.mark.parametrize(
    ("counted", "task", "infrastructure", "unmeasured"),
    [
        (0, 0, 2, True),  # every trial failed on the infrastructure: nothing measured
        (1, 0, 1, False),  # one trial counted
        (0, 1, 1, False),  # one trial was the task's: the agent ran
        (0, 0, 0, False),  # no trial at all (an empty benchmark) is not a failure
    ],
)
def test_eval_fails_when_nothing_of_an_agent_was_measured(
    counted: int, task: int, infrastructure: int, unmeasured: bool
) -> None:
    from selfbench.cli.eval import _unmeasured  # noqa: PLC0415

    agent = _agent("a", counted=counted, task=task, infrastructure=infrastructure)
    failure = Failure("t1", "a", 1, "infrastructure", "setup: setupCommand failed (exit 1)")
    summary = Summary("b", 1, 1, (agent,), (), (failure,), ())
    expected = [
        (
            "every trial of a failed on the infrastructure, so nothing was measured "
            "(first: setup: setupCommand failed (exit 1))"
        )
    ]
    assert _unmeasured(summary) == (expected if unmeasured else [])


# --- quality -----------------------------------------------------------------------------------

SHIP = QualityNote("t1", "d-t1", "ship")
REVIEW = QualityNote("t2", "d-t2", "review", ("weak tests: mutation score 50% (2 of 4 killed)",))


def _with_quality(tmp_path: Path) -> Path:
    """The results above, for a benchmark whose t1 and t2 carry quality records (t3 none)."""
    results = _results(tmp_path)
    store, _ = open_results(results, benchmark=BENCHMARK, tasks=3)
    store.append(SHIP)
    store.append(REVIEW)
    return results


def test_the_markdown_report_has_a_verdict_column_and_the_reasons(tmp_path: Path) -> None:
    summary = build_summary(read_results(_with_quality(tmp_path)))
    assert summary.quality == {"t1": ("ship", ()), "t2": ("review", REVIEW.reasons)}
    text = render_report(summary, "md")
    assert (
        "## Tasks\n\n"
        "| task | difficulty | quality | oracle | agent-a | agent-b | agents passing |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        "| t1 | easy | ship | 1/1 | 1/1 | 0/1 | 1/2 |\n"
        "| t2 | medium | review | 1/1 | task | — | 0/0 |\n"
        "| t3 | easy | — | — | infra | — | 0/0 |\n\n"
        "Passed by every agent: no task.\nPassed by no agent: no task.\n\n"
        "## Quality\n\n"
        "| task | verdict | reasons |\n| --- | --- | --- |\n"
        "| t1 | ship | — |\n"
        "| t2 | review | weak tests: mutation score 50% (2 of 4 killed) |\n\n"
        "## Pairs"
    ) in text


def test_the_text_json_and_html_reports_show_the_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _with_quality(tmp_path)
    assert main(["report", str(results), "--format", "json"]) == 0
    value = json.loads(capsys.readouterr().out)
    assert value["quality"] == {
        "t1": {"verdict": "ship", "reasons": []},
        "t2": {"verdict": "review", "reasons": list(REVIEW.reasons)},
    }
    assert main(["report", str(results)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if re.match(r"│ t\d ", line)]
    assert [re.split(r"\s*│\s*", row)[1:4] for row in rows] == [
        ["t1", "easy", "ship"],
        ["t2", "medium", "review"],
        ["t3", "easy", "—"],
    ]
    page = render_report(build_summary(read_results(results)), "html")
    assert "<th>quality</th><th>oracle</th>" in page
    assert '<td>review</td><td class="pass">1/1</td><td class="note">task</td>' in page
    assert "<h2>Quality</h2>" in page
    assert "<td>weak tests: mutation score 50% (2 of 4 killed)</td>" in page


def test_a_report_without_quality_records_is_as_before(tmp_path: Path) -> None:
    summary = build_summary(read_results(_results(tmp_path)))
    assert "quality" not in summary.to_json()
    assert "Quality" not in render_report(summary, "md")


def test_eval_records_each_tasks_quality_once(tmp_path: Path) -> None:
    """The verdicts come from the export's quality.json, through the tasks eval reads."""
    sample = build_sample_repository(tmp_path)
    tasks = [author_collected(tmp_path, sample, name) for name in ("q-a", "q-b")]
    write_quality(tasks[0], quality_record("q-a", "review"))
    export = tmp_path / "bench.tar.gz"
    export_run(tasks, run=RunInfo("run-q", "acme/slugkit", COMMIT), out=export)
    results = tmp_path / "results"
    with open_benchmark(export) as bench:
        assert [task.quality is not None for task in bench.tasks] == [True, False]
        for _ in range(2):  # a resumed evaluation adds no second line
            store, log = open_results(results, benchmark=bench.benchmark_id, tasks=2)
            _note_quality(store, log, bench)
    log = read_results(results)
    [note] = log.quality.values()
    assert (note.task, note.verdict) == ("q-a", "review")
    assert note.reasons == quality_record("q-a", "review").reasons
    lines = (results / RESULTS_FILE).read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["benchmark", "quality"]


CAUSE = "the agent's workspace exceeded the task's memory in the collect step"
PROOF = "the oracle passed here with the same limits (log x.log)"


def test_a_failure_the_agents_code_caused_shows_its_cause_and_counts(tmp_path: Path) -> None:
    reason = f"{CAUSE}: the collect step failed (exit 137; log y.log); {PROOF}"
    records = [
        record("t1", "hog"),
        record(
            "t2",
            "hog",
            passed=False,
            classification="agent",
            reason=reason,
            reward=0,
            cause=CAUSE,
            proof=PROOF,
        ),
        failed("t2", "honest"),
        record("t1", "honest"),
    ]
    summary = build_summary(read_results(write_results(tmp_path / "results", records)))
    rates = {agent.name: (agent.passes, agent.counted) for agent in summary.agents}
    assert rates == {"hog": (1, 2), "honest": (1, 2)}
    markdown = render_report(summary, "md")
    assert markdown.endswith(
        "| task | agent | trial | class | cause | reason |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        f"| t2 | hog | 1 | agent | {CAUSE} | {reason} |\n"
        "| t2 | honest | 1 | agent | — | tests ran and failed: fail-to-pass |\n"
    )
    text = " ".join(render_report(summary, "text").split())  # as the terminal width wraps it
    assert f" t2 hog #1: agent: {reason} [cause: {CAUSE}] t2 honest #1: " in text
    page = render_report(summary, "html")
    assert "<th>cause</th>" in page
    assert page.count("the agent&#x27;s workspace exceeded the task&#x27;s memory") == 2
    [first, _] = json.loads(render_report(summary, "json"))["failures"]
    assert (first["cause"], first["proof"]) == (CAUSE, PROOF)


def test_a_trial_line_written_before_causes_is_still_read(tmp_path: Path) -> None:
    results = write_results(tmp_path / "results", [])
    line = failed("t1", "a").to_json()
    del line["cause"], line["proof"]
    with (results / RESULTS_FILE).open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    log = read_results(results)
    assert log.corrupt == ()
    [found] = log.trials.values()
    assert (found.cause, found.proof) == (None, None)


SUSPECT = (
    Finding("always-equal", "calc/core.py", 4, "def __eq__(self, other):", "__eq__ never reads "
            "its other argument"),
    Finding("process-exit", "calc/core.py", 9, "os._exit(0)", "exits the process in library "
            "code: os._exit"),
)  # fmt: skip


def test_a_suspect_trial_is_shown_in_every_format_and_its_reward_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        record("t1", "sly", suspect=SUSPECT),
        failed("t2", "sly", suspect=SUSPECT[1:]),
        record("t1", "honest"),
        failed("t2", "honest"),
    ]
    results = write_results(tmp_path / "results", records)
    log = read_results(results)
    assert log.corrupt == ()
    assert [r.suspect for r in log.trials.values()] == [SUSPECT, SUSPECT[1:], (), ()]
    summary = build_summary(log)
    # the findings change no figure: both agents pass t1 and fail t2
    rates = {agent.name: (agent.passes, agent.counted) for agent in summary.agents}
    assert rates == {"sly": (1, 2), "honest": (1, 2)}
    marks = "calc/core.py:4 always-equal; calc/core.py:9 process-exit"
    assert render_report(summary, "md").endswith(
        "## Suspect trials\n\n"
        "| task | agent | trial | outcome | reward | suspect |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        f"| t1 | sly | 1 | pass | 1 | {marks} |\n"
        "| t2 | sly | 1 | agent | 0 | calc/core.py:9 process-exit |\n"
    )
    text = render_report(summary, "text")
    assert "Suspect trials" in text
    assert "calc/core.py:9 process-exit" in " ".join(text.split())
    page = render_report(summary, "html")
    assert "<h2>Suspect trials</h2>" in page
    assert "calc/core.py:4 always-equal: __eq__ never reads its other argument" in page
    assert main(["report", str(results), "--format", "json"]) == 0
    value = json.loads(capsys.readouterr().out)
    [first, second] = value["suspect"]
    assert first == {
        "task": "t1",
        "agent": "sly",
        "trial": 1,
        "outcome": "pass",
        "reward": 1,
        "findings": [finding.to_json() for finding in SUSPECT],
    }
    assert (second["outcome"], second["reward"]) == ("agent", 0)
    assert value["agents"][0]["passes"] == 1


def test_a_trial_without_findings_keeps_its_line_and_report_as_they_were(tmp_path: Path) -> None:
    clean = record("t1", "a")
    assert "suspect" not in clean.to_json()
    line = json.dumps(clean.to_json(), sort_keys=True)
    assert read_results(write_results(tmp_path / "r", [clean])).trials[clean.key] == clean
    assert '"suspect"' not in line
    summary = build_summary(read_results(tmp_path / "r"))
    assert "suspect" not in json.loads(render_report(summary, "json"))
    for output_format in ("text", "md", "html"):
        assert "Suspect" not in render_report(summary, output_format)


@pytest.mark.parametrize(
    "suspect",
    [{"rule": "x"}, "calc/core.py:4", [{"rule": "x", "path": "a", "line": "4", "text": "",
                                        "reason": ""}]],
)  # fmt: skip
def test_a_trial_line_with_malformed_findings_is_skipped(tmp_path: Path, suspect: object) -> None:
    results = write_results(tmp_path / "results", [])
    line = {**record("t1", "a").to_json(), "suspect": suspect}
    with (results / RESULTS_FILE).open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    log = read_results(results)
    assert log.trials == {}
    [corrupt] = log.corrupt
    assert "corrupt line skipped: not a" in corrupt
