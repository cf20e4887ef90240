"""Real agent harnesses through `selfbench eval`: mini-swe-agent from PyPI (OpenAI Chat
Completions), Codex CLI (the OpenAI Responses API, streamed), Claude Code (Anthropic Messages,
streamed), OpenCode (OpenAI Chat Completions, streamed) and Gemini CLI (the Gemini API,
streamed) from npm against a local model stand-in
(`tests/model_standin.py`, on the host's loopback).

Each harness is installed from its package registry when the test runs (pinned:
`MINI_SWE_AGENT_VERSION`, `CODEX_VERSION`, `CLAUDE_CODE_VERSION`, `OPENCODE_VERSION`,
`GEMINI_CLI_VERSION`), runs in
the local agent phase as the `agent` user, reaches the stand-in through the phase's allow-list
and nothing else, and is scored by the task's own verifier: the scripted right fix scores 1,
the scripted wrong fix 0, and the tokens the harness reports from its own output are the
stand-in's.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helpers import serving
from projects import build
from selfbench.cli import main
from selfbench.errors import EvalError
from selfbench.evaluate import read_results
from selfbench.evaluate.harnesses import (
    CLAUDE_CODE_VERSION,
    CODEX_VERSION,
    GEMINI_CLI_VERSION,
    HARNESSES,
    MINI_SWE_AGENT_VERSION,
    OPENCODE_VERSION,
    install_harness,
)
from selfbench.export import RunInfo, export_run
from test_eval import project

pytestmark = [
    pytest.mark.network,
    pytest.mark.sandbox,
]

STANDIN = Path(__file__).with_name("model_standin.py")
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
RIGHT = "def mul(a, b):\\n    return a * b"
WRONG = "def mul(a, b):\\n    return a + b"
AGENTS = (
    # name, harness, model (litellm prices the Chat Completions ones), fix, how it finishes
    ("mini-swe-agent", "mini-swe-agent", "openai/gpt-4o-mini", RIGHT, SUBMIT),
    ("mini-wrong", "mini-swe-agent", "openai/gpt-4.1-mini", WRONG, SUBMIT),
    ("codex", "codex", "openai/gpt-5-mini", RIGHT, {"say": "Done."}),
    ("codex-wrong", "codex", "openai/gpt-5-nano", WRONG, {"say": "Done."}),
    ("claude-code", "claude-code", "anthropic/claude-sonnet-4-5", RIGHT, {"say": "Done."}),
    ("claude-wrong", "claude-code", "anthropic/claude-opus-4-5", WRONG, {"say": "Done."}),
    ("opencode", "opencode", "openai/gpt-4.1", RIGHT, {"say": "Done."}),
    ("opencode-wrong", "opencode", "openai/gpt-4.1-nano", WRONG, {"say": "Done."}),
    ("gemini-cli", "gemini-cli", "gemini/gemini-2.5-pro", RIGHT, {"say": "Done."}),
    ("gemini-wrong", "gemini-cli", "gemini/gemini-2.5-flash", WRONG, {"say": "Done."}),
)
TOOLS = {
    "mini-swe-agent": "bash",
    "codex": "exec_command",
    "claude-code": "Bash",
    "opencode": "bash",
    "gemini-cli": "run_shell_command",
}
"""The tool each harness offers its model for shell commands."""
WROTE = {
    "mini-swe-agent": "→ bash(printf &#x27;",
    "codex": "→ command(/bin/bash -lc &quot;printf &#x27;",
    "claude-code": "→ Bash(printf &#x27;",
    "opencode": "→ bash(printf &#x27;",
    "gemini-cli": "→ run_shell_command(printf &#x27;",
}
"""How the report's steps show the command that wrote the fix, per harness (escaped)."""


def _api_name(model: str) -> str:
    """The model's name as the API sees it (each harness sends it without its provider)."""
    return model.split("/", 1)[1]


def _script(function: str, forbidden: int, finish: object) -> list[object]:
    """Read the instruction and the package (and probe the network), write `function`, finish
    as the harness does."""
    probe = (
        f"(exec 3<>/dev/tcp/127.0.0.1/{forbidden}) 2>/dev/null && echo forbidden-reached"
        " || echo forbidden-refused; getent hosts example.com || echo name-unresolved;"
        " touch /opt/selfbench-harness/bin/x 2>/dev/null && echo install-written"
        " || echo install-read-only; ls /run/selfbench-egress >/dev/null 2>&1"
        " && echo relays-listed || echo relays-closed"
    )
    return [
        f'cat "$SELFBENCH_INSTRUCTION_FILE" && cat calc/__init__.py && {probe}',
        f"printf '\\n\\n{function}\\n' >> calc/__init__.py && git diff --stat",
        finish,
    ]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, float]]:
    """The harnesses installed from their registries into a fresh cache; the seconds each
    took."""
    cache = tmp_path_factory.mktemp("harnesses")
    seconds: dict[str, float] = {}
    for name in TOOLS:
        started = time.monotonic()
        install_harness(HARNESSES[name], cache)
        seconds[name] = time.monotonic() - started
    return cache, seconds


@pytest.fixture
def forbidden() -> Iterator[int]:
    """A port listening on the host's loopback that the allow-list does not name."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.fixture
def standin(tmp_path: Path, forbidden: int) -> Iterator[tuple[int, Path]]:
    """The stand-in process, serving each agent's model its script; its port and its counts
    file."""
    scripts = tmp_path / "scripts.json"
    scripts.write_text(
        json.dumps(
            {
                _api_name(model): _script(fix, forbidden, finish)
                for _, _, model, fix, finish in AGENTS
            }
        )
    )
    counts = tmp_path / "counts.json"
    with serving([sys.executable, str(STANDIN), str(scripts), str(counts)]) as port:
        yield port, counts


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real calc task (add `mul`), exported and verified."""
    root = tmp_path_factory.mktemp("bench")
    out = build(project("calc-mul", "mul", "a * b", "easy"), root / "calc-mul")
    archive = root / "bench.tar.gz"
    export_run([out], run=RunInfo("run-1", "https://example.com/calc.git", "a" * 40), out=archive)
    return archive


def test_real_harnesses_solve_through_the_standin_and_a_wrong_fix_scores_0(
    bench: Path,
    installed: tuple[Path, dict[str, float]],
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
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://localhost:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-standin")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("GEMINI_API_KEY", "standin")
    results = tmp_path / "results"
    argv = ["eval", str(bench), "--results", str(results), "--json"]
    for name, harness, model, _, _ in AGENTS:
        argv += ["--agent", f"{name}={harness}:{model}"]
    started = time.monotonic()
    code = main(argv)
    eval_seconds = time.monotonic() - started
    summary: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0
    counts = json.loads(counts_file.read_text())
    records = {record.agent: record for record in read_results(results).trials.values()}
    agents = {agent["agent"]: agent for agent in summary["agents"]}

    for name, harness, model, fix, _ in AGENTS:
        record, seen = records[name], counts[_api_name(model)]
        if fix == RIGHT:  # the right fix scores 1
            assert (record.passed, record.reward) == (True, 1.0), record
            assert agents[name]["passRate"] == 1.0
        else:  # the wrong one 0: the tests ran and failed, the agent's failure
            assert (record.passed, record.classification) == (False, "agent"), record
            assert (record.reason or "").startswith("tests ran and failed"), record.reason
            assert agents[name]["passRate"] == 0.0
        # three scripted steps: read, write, finish; the harness asked for each once
        assert seen["requests"] == 3, (name, seen)
        assert TOOLS[harness] in seen["tools"]
        assert "Add a function mul(a, b) to the calc package" in seen["first_user"]
        # step 1 read the instruction and the file, and reached nothing off the allow-list
        assert "def add(a, b)" in seen["observations"][0]
        assert "forbidden-refused" in seen["observations"][0]
        assert "name-unresolved" in seen["observations"][0]
        # the install is read-only to trials; the relays' sockets are root's
        assert "install-read-only" in seen["observations"][0]
        assert "relays-closed" in seen["observations"][0]
        # the tokens are the harness's own (its trajectory, its events): the stand-in's count
        assert record.tokens == seen["total_tokens"], (name, record.tokens, seen)
        assert agents[name]["tokens"] == seen["total_tokens"]
        host = "localhost" if harness == "claude-code" else "127.0.0.1"
        assert record.network == f"allow-list: {host}:{port}"
        if harness not in ("codex", "opencode", "gemini-cli"):  # its price (these report none)
            assert record.cost_usd is not None
            assert record.cost_usd > 0

    text = _text_report(results).replace(",", "")
    assert all(str(counts[_api_name(model)]["total_tokens"]) in text for *_, model, _, _ in AGENTS)
    _assert_steps_shown(results)
    sys.stderr.write(
        f"installed mini-swe-agent {MINI_SWE_AGENT_VERSION} in "
        f"{install_seconds['mini-swe-agent']:.0f} s, codex {CODEX_VERSION} in "
        f"{install_seconds['codex']:.0f} s, claude-code {CLAUDE_CODE_VERSION} in "
        f"{install_seconds['claude-code']:.0f} s, opencode {OPENCODE_VERSION} in "
        f"{install_seconds['opencode']:.0f} s, gemini-cli {GEMINI_CLI_VERSION} in "
        f"{install_seconds['gemini-cli']:.0f} s; "
        f"eval of {len(AGENTS)} trials in {eval_seconds:.0f} s\n"
    )


@pytest.mark.parametrize(
    "agent", [["codex:openai/gpt-5"], ["codex", "--model", "openai/gpt-5"]], ids=["spec", "model"]
)
def test_a_harness_needs_the_local_environment(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: list[str]
) -> None:
    argv = ["eval", str(bench), "--results", str(tmp_path / "r"), "--env", "harbor"]
    assert main([*argv, "--agent", *agent]) == 2
    assert capsys.readouterr().err == (
        "error: agent codex: a ready-made harness needs --env local\n"
    )


def _text_report(results: Path) -> str:
    out = results.parent / "report.txt"
    assert main(["report", str(results), "--out", str(out)]) == 0
    return out.read_text()


def _html_report(results: Path) -> str:
    out = results / "report.html"
    assert main(["report", str(results), "--format", "html", "--out", str(out)]) == 0
    return out.read_text()


def _assert_steps_shown(results: Path) -> None:
    """Each non-pass of the HTML report shows its harness's trajectory: the command that wrote
    the wrong fix, once per wrong-fix agent."""
    page = _html_report(results)
    for name, harness, _, fix, _ in AGENTS:
        suffix = "json" if harness == "mini-swe-agent" else "jsonl"
        trajectory = f'href="logs/calc-mul/{name}-t1-a1-trajectory.{suffix}">trajectory</a>'
        assert (trajectory in page) == (fix == WRONG), name
    wrong = [(name, harness) for name, harness, _, fix, _ in AGENTS if fix == WRONG]
    assert sorted(harness for _, harness in wrong) == sorted(WROTE)
    for name, harness in wrong:  # its own steps show its command writing the wrong fix
        start = page.index(f"{name}-t1-a1-trajectory.")
        steps = page[start : page.index("</details>", start)]
        assert WROTE[harness] in steps, (name, steps)
        assert "def mul(a, b):" in steps, (name, steps)
        assert "return a + b" in steps, (name, steps)
    assert page.count("&gt;&gt; calc/__init__.py &amp;&amp; git diff --stat") == len(wrong)
    assert page.count("<summary>trajectory (") == len(wrong)


def test_an_install_that_fails_says_what_the_registry_said(tmp_path: Path) -> None:
    missing = replace(HARNESSES["mini-swe-agent"], version="0.0.0.dev0")
    with pytest.raises(EvalError) as error:
        install_harness(missing, tmp_path)
    message = str(error.value)
    assert message.startswith("cannot install mini-swe-agent==0.0.0.dev0 for mini-swe-agent: "), (
        message
    )
    assert "No matching distribution found for mini-swe-agent==0.0.0.dev0" in message
    assert [path.name for path in tmp_path.iterdir()] == [".lock"]  # nothing half-installed


def test_a_node_harness_needs_a_node_the_sandbox_shows(tmp_path: Path) -> None:
    node = subprocess.run(
        ["/usr/bin/node", "--version"], check=True, capture_output=True, text=True
    )
    newer = replace(HARNESSES["gemini-cli"], node=int(node.stdout[1:].split(".")[0]) + 1)
    with pytest.raises(EvalError) as error:
        install_harness(newer, tmp_path)
    assert str(error.value) == (
        f"cannot install @google/gemini-cli@{GEMINI_CLI_VERSION}: its program needs Node "
        f"{newer.node} or later under /usr, which the sandbox shows (found: {node.stdout.strip()})"
    )
    assert [path.name for path in tmp_path.iterdir()] == [".lock"]  # nothing half-installed
