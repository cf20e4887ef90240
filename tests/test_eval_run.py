"""Done when (issue 16): `selfbench eval` on a benchmark that `selfbench run` made.

The benchmark is made by `selfbench run --author draft --easy 1` from the sample history cut
after its first pull request (the demo asks for every tier of the whole history; one task keeps
this test short, and the cut leaves #1 the only candidate, so none is drafted and rejected
first). Two scripted agents are compared with the baselines: `first` applies the gold patch of
the easy task (it reads the instruction file to know which), `second` crashes. The evaluation
is killed with SIGKILL after some trials and re-run; every non-pass is classified, and
`selfbench report --format html` is read in headless Chromium.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from projects import git
from selfbench._sample_history import build_sample_history
from selfbench.cli import main
from selfbench.demo import DEMO_SOURCE_URL
from selfbench.evaluate import RESULTS_FILE, build_summary, read_results
from test_eval_report import _chromium

pytestmark = pytest.mark.sandbox

TRIAL_LINE = re.compile(r"(\S+) (\S+) #(\d+): ")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The export `selfbench run` writes for the sample history up to #1, and its extracted
    tasks."""
    root = tmp_path_factory.mktemp("run-bench")
    repo = build_sample_history(root)
    first = git(repo, "log", "--format=%H", "--fixed-strings", "--grep=(#1)")
    git(repo, "reset", "--quiet", "--hard", first.strip())
    out = root / "bench.tar.gz"
    argv = ["run", "--repo", str(repo), "--easy", "1"]
    argv += ["--author", "draft", "--out", str(out), "--source-url", DEMO_SOURCE_URL]
    assert main([*argv, "--run-dir", str(root / "run")]) == 0
    assert main(["extract", str(out), "--out", str(root / "tasks")]) == 0
    return out, root / "tasks"


def _difficulty(task: Path) -> str:
    manifest = json.loads((task / ".selfbench-manifest.json").read_text())
    return str(manifest["difficulty"])


def _scripted(tasks: Path, solves: set[str], otherwise: str) -> str:
    """An agent that knows the gold patch of the tasks of `solves` difficulties (by the hash of
    their instruction) and applies it; on any other task it runs `otherwise`."""
    cases = []
    for task in sorted(tasks.iterdir()):
        if _difficulty(task) not in solves:
            continue
        digest = hashlib.sha256((task / "instruction.md").read_bytes()).hexdigest()
        patch = base64.b64encode((task / "solution" / "gold.patch").read_bytes()).decode()
        cases.append(f"  {digest}) echo {patch} | base64 -d | git apply --binary - ;;")
    return (
        'digest="$(sha256sum "$SELFBENCH_INSTRUCTION_FILE" | cut -c1-64)"\n'
        'case "$digest" in\n' + "\n".join(cases) + f"\n  *) {otherwise} ;;\nesac\n"
    )


def _trial_lines(results: Path) -> list[dict[str, object]]:
    if not (results / RESULTS_FILE).is_file():
        return []
    lines = (results / RESULTS_FILE).read_text().splitlines()[1:]
    return [json.loads(line) for line in lines if '"kind": "trial"' in line]


def _kill_and_resume(argv: list[str], results: Path) -> None:
    """Run the evaluation, kill it with SIGKILL after two trials, run it again: it runs only the
    trials the killed run had not finished, and ends with each of the 4 once."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while len(_trial_lines(results)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed = _trial_lines(results)
    assert 2 <= len(killed) < 4
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    lines = _trial_lines(results)
    assert lines[: len(killed)] == killed
    keys = {(line["task"], line["agent"], line["trial"]) for line in lines}
    assert len(keys) == len(lines) == 4
    ran = {
        (match[1], match[2], int(match[3]))
        for line in done.stderr.splitlines()
        if (match := TRIAL_LINE.match(line))
    }
    assert ran == keys - {(line["task"], line["agent"], line["trial"]) for line in killed}


def test_eval_compares_agents_on_a_run_benchmark_resumes_and_reports(
    bench: tuple[Path, Path], tmp_path: Path
) -> None:
    export, tasks = bench
    difficulties = sorted(_difficulty(task) for task in tasks.iterdir())
    assert difficulties == ["easy"]
    first = _scripted(tasks, {"easy"}, "true")
    second = _scripted(tasks, set(), "exit 4")
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "selfbench", "eval", str(export), "--results", str(results)]
    argv += ["--agent", "oracle", "--agent", "nop", "--agent", f"first={first}"]
    argv += ["--agent", f"second={second}", "-j", "2"]
    _kill_and_resume(argv, results)
    log = read_results(results)
    assert log.corrupt == ()
    verdicts = {(r.agent, r.difficulty): (r.passed, r.classification, r.reason)
                for r in log.trials.values()}  # fmt: skip
    failed = (False, "agent", "tests ran and failed: fail-to-pass")
    crashed = (False, "agent", "the agent crashed (exit 4); tests ran and failed: fail-to-pass")
    passed = (True, None, None)
    assert verdicts == {
        **{("oracle", d): passed for d in difficulties},
        **{("nop", d): failed for d in difficulties},
        ("first", "easy"): passed,
        ("second", "easy"): crashed,
    }
    # every non-pass is classified, with its reason, and each failed task was re-checked
    assert all(r.passed or (r.classification and r.reason) for r in log.trials.values())
    assert [check.passed for check in log.rechecks.values()] == [True]
    summary = build_summary(log)
    rates = {a.name: (a.passes, a.counted) for a in summary.agents}
    assert rates == {"oracle": (1, 1), "nop": (0, 1), "first": (1, 1), "second": (0, 1)}

    page = tmp_path / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(page)]) == 0
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=_chromium(), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            context = browser.new_context(
                java_script_enabled=False, viewport={"width": 1280, "height": 900}
            )
            view = context.new_page()
            view.on("request", lambda request: requests.append(request.url))
            view.goto(page.as_uri())
            assert view.title().startswith("selfbench evaluation: 1 task")
            assert view.locator("figure svg").count() == 3
            agents = view.locator("table").first.locator("tbody tr td:first-child")
            assert agents.all_text_contents() == ["oracle", "nop", "first", "second"]
            view.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert requests == [page.as_uri()]
    assert (tmp_path / "report.png").stat().st_size > 20_000
