"""aider (PyPI `aider-chat`) through `selfbench eval`: a harness that edits files from its model's
plain text (SEARCH/REPLACE blocks), not from tool calls, against the local model stand-in
(`tests/model_standin.py`, OpenAI Chat Completions, on the host's loopback).

aider is installed from PyPI when the test runs (pinned: `AIDER_VERSION`, its dependencies by
`harness_constraints/aider.txt`), runs in the local agent phase as the `agent` user, reaches the
stand-in through the phase's allow-list and nothing else, and is scored by the task's own
verifier: the scripted right edit scores 1, the scripted wrong edit 0, the tokens and cost it
reports from its own analytics log are the stand-in's tokens and litellm's price for them, and the
HTML report shows the wrong edit from aider's chat history.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import serving
from selfbench.cli import main
from selfbench.evaluate import read_results
from selfbench.evaluate.harnesses import AIDER_VERSION, HARNESSES, install_harness
from test_eval_harness import STANDIN, _api_name, _html_report, _text_report, bench, pytestmark

__all__ = ["bench", "pytestmark"]  # the shared task fixture and markers, re-exported for pytest

ASK = {"say": "Please add calc/__init__.py to the chat so I can edit it."}
"""aider's model asks for the file it must edit (aider adds a file its reply names, and sends
the file's contents with the next request)."""


def _edit(body: str) -> dict[str, str]:
    """A SEARCH/REPLACE block (aider's `diff` edit format) appending `body` to the package."""
    block = f"<<<<<<< SEARCH\n=======\n\n\n{body}\n>>>>>>> REPLACE"
    return {"say": f"Adding it.\n\ncalc/__init__.py\n```python\n{block}\n```\n"}


AGENTS = (
    # name, model (aider's `diff` format and litellm's price for both), the script, right?
    ("aider", "openai/gpt-4o", [ASK, _edit("def mul(a, b):\n    return a * b")], True),
    ("aider-wrong", "openai/gpt-4.1", [ASK, _edit("def mul(a, b):\n    return a + b")], False),
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """aider installed from PyPI into a fresh cache; the seconds it took."""
    cache = tmp_path_factory.mktemp("harnesses")
    started = time.monotonic()
    install_harness(HARNESSES["aider"], cache)
    return cache, time.monotonic() - started


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The stand-in process, serving each agent's model its script; its port and its counts
    file."""
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps({_api_name(model): script for _, model, script, _ in AGENTS}))
    counts = tmp_path / "counts.json"
    with serving([sys.executable, str(STANDIN), str(scripts), str(counts)]) as port:
        yield port, counts


def test_aider_edits_from_its_models_text_and_a_wrong_edit_scores_0(
    bench: Path,
    installed: tuple[Path, float],
    standin: tuple[int, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache, install_seconds = installed
    port, counts_file = standin
    monkeypatch.setenv("SELFBENCH_HARNESS_DIR", str(cache))
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-standin")
    results = tmp_path / "results"
    argv = ["eval", str(bench), "--results", str(results), "--json"]
    for name, model, _, _ in AGENTS:
        argv += ["--agent", f"{name}=aider:{model}"]
    started = time.monotonic()
    code = main(argv)
    eval_seconds = time.monotonic() - started
    summary: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0
    counts = json.loads(counts_file.read_text())
    records = {record.agent: record for record in read_results(results).trials.values()}
    agents = {agent["agent"]: agent for agent in summary["agents"]}

    for name, model, _, right in AGENTS:
        record, seen = records[name], counts[_api_name(model)]
        if right:
            assert (record.passed, record.reward) == (True, 1.0), record
            assert agents[name]["passRate"] == 1.0
        else:  # the tests ran and failed: the agent's failure
            assert (record.passed, record.classification) == (False, "agent"), record
            assert (record.reason or "").startswith("tests ran and failed"), record.reason
            assert agents[name]["passRate"] == 0.0
        # two scripted replies: ask for the file, edit it; aider offers no tools
        assert seen["requests"] == 2, (name, seen)
        assert seen["tools"] == []
        # the instruction; then the file the model asked for, which aider added and sent
        assert "Add a function mul(a, b) to the calc package" in seen["first_user"]
        assert "def add(a, b):\n    return a + b" in seen["first_user"]
        # the tokens and cost are aider's own (its analytics log): the stand-in's count, priced
        assert record.tokens == seen["total_tokens"], (name, record.tokens, seen)
        assert agents[name]["tokens"] == seen["total_tokens"]
        assert record.cost_usd is not None
        assert record.cost_usd > 0
        assert record.network == f"allow-list: 127.0.0.1:{port}"

    text = _text_report(results).replace(",", "")
    assert all(str(counts[_api_name(model)]["total_tokens"]) in text for _, model, _, _ in AGENTS)
    # the wrong edit's trial shows aider's chat history: the model's edit block, aider applying it
    page = _html_report(results)
    for name, _, _, right in AGENTS:
        trajectory = f'href="logs/calc-mul/{name}-t1-a1-trajectory.md">trajectory</a>'
        assert (trajectory in page) == (not right), name
    wrong = sum(not right for *_, right in AGENTS)
    edit = "def mul(a, b):\n    return a + b\n&gt;&gt;&gt;&gt;&gt;&gt;&gt; REPLACE"
    assert page.count(edit) == wrong
    assert page.count("Applied edit to calc/__init__.py") == wrong
    assert page.count("<summary>trajectory (6 steps)</summary>") == wrong
    sys.stderr.write(
        f"installed aider {AIDER_VERSION} in {install_seconds:.0f} s; "
        f"eval of {len(AGENTS)} trials in {eval_seconds:.0f} s\n"
    )
