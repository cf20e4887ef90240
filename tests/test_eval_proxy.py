"""Real harnesses on a company network: an explicit HTTPS proxy and its own CA, end to end.

The model stand-in (`tests/model_standin.py --tls`) serves HTTPS with a certificate for
`api.standin.test` signed by a CA this test makes (the `openssl` program); a real CONNECT proxy
(`tests/connect_proxy.py`, its own process) resolves `api.standin.test:443` to the stand-in's
port and demands basic credentials. `selfbench eval` runs as a process of its own whose
environment is a user's behind that proxy: `HTTPS_PROXY=http://USER:PASSWORD@…`,
`SSL_CERT_FILE` the test CA, the base URLs `https://api.standin.test/…` (port 443: the phase's
`/etc/hosts` maps the name to its own loopback address, the port is remapped to a high one) and
API keys that must never reach the results directory. All six ready-made harnesses —
mini-swe-agent and aider (PyPI), Codex, Claude Code, OpenCode and Gemini CLI (npm) — each solve
the task through the proxy, each trusting the test CA from the variable it reads among those
the phase sets; with credentials the proxy does not take, the trial fails as the
infrastructure's, naming the proxy's refusal, as its log does.

The harnesses come from the machine's harness cache (`harness_cache()`), installed from their
registries before the proxy is set, on the first run only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers import serving
from projects import build
from selfbench.cli import main
from selfbench.evaluate import read_results
from selfbench.evaluate.harnesses import HARNESSES, install_harness
from selfbench.export import RunInfo, export_run
from test_eval import project
from test_eval_harness import RIGHT, STANDIN, SUBMIT, TOOLS, _api_name, _script, bench
from test_eval_harness_aider import ASK, _edit

__all__ = ["bench"]  # the exported calc task, the fixture this module shares

pytestmark = [
    pytest.mark.network,
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("openssl") is None, reason="the test CA needs openssl"),
]

CONNECT_PROXY = Path(__file__).with_name("connect_proxy.py")
HOST = "api.standin.test"
KEY = "sk-test-secret-5f1d2c9a7e"
ANTHROPIC_KEY = "sk-ant-test-secret-0b8e4d"
GEMINI_KEY = "gm-test-secret-8a2f61"
PROXY_PASSWORD = "proxy-secret-3c7a"  # noqa: S105 - the test proxy's, checked to leak nowhere
KEY_PROBE = (
    "grep -rqs -e sk-test -e sk-ant-test -e gm-test /run/selfbench-harness && echo key-in-a-file"
    ' || echo keys-in-no-file; [ -n "${OPENAI_API_KEY:-}${ANTHROPIC_API_KEY:-}'
    '${GEMINI_API_KEY:-}" ] && echo key-in-environment'
)


def _tools_script(finish: object) -> list[object]:
    """The right fix by shell commands, the first one also probing where the keys are."""
    steps = _script(RIGHT, 9, finish)
    steps[0] = f"{KEY_PROBE}; {steps[0]}"
    return steps


AGENTS = (
    # name, harness, model, its script (aider edits from the model's text, it runs no commands)
    ("mini-swe-agent", "mini-swe-agent", "openai/gpt-4o-mini", _tools_script(SUBMIT)),
    ("aider", "aider", "openai/gpt-4o", [ASK, _edit("def mul(a, b):\n    return a * b")]),
    ("codex", "codex", "openai/gpt-5-mini", _tools_script({"say": "Done."})),
    ("claude-code", "claude-code", "anthropic/claude-sonnet-4-5", _tools_script({"say": "Done."})),
    ("opencode", "opencode", "openai/gpt-4.1", _tools_script({"say": "Done."})),
    ("gemini-cli", "gemini-cli", "gemini/gemini-2.5-pro", _tools_script({"say": "Done."})),
)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test CA (`ca.pem`) and the stand-in's certificate for `api.standin.test` signed by it
    (`server.pem`, `server.key`)."""
    root = tmp_path_factory.mktemp("tls")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=selfbench test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=root)  # fmt: skip
    _openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr",
             "-subj", f"/CN={HOST}", cwd=root)  # fmt: skip
    (root / "server.ext").write_text(
        f"subjectAltName=DNS:{HOST}\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n"
    )
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2",
             "-extfile", "server.ext", cwd=root)  # fmt: skip
    return root


@pytest.fixture(scope="module")
def short_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The calc task with a 20 s agent limit: a harness that cannot reach its model retries
    until then."""
    root = tmp_path_factory.mktemp("short-bench")
    timeouts = {"setupSeconds": 300, "agentSeconds": 20, "testsSeconds": 120}
    calc = project("calc-mul", "mul", "a * b", "easy", timeouts=timeouts)
    out = build(calc, root / "calc-mul")
    archive = root / "bench.tar.gz"
    export_run([out], run=RunInfo("run-1", "https://example.com/calc.git", "a" * 40), out=archive)
    return archive


@pytest.fixture(scope="module")
def installed() -> None:
    """The six harnesses in the machine's harness cache, installed before any proxy is set."""
    for _, harness, *_ in AGENTS:
        install_harness(HARNESSES[harness])


@pytest.fixture
def standin(tmp_path: Path, certificates: Path) -> Iterator[tuple[int, Path]]:
    """The stand-in over HTTPS, each agent's model its right script; its port and its counts
    file."""
    scripts = {_api_name(model): script for _, _, model, script in AGENTS}
    (tmp_path / "scripts.json").write_text(json.dumps(scripts))
    counts = tmp_path / "counts.json"
    tls = ["--tls", str(certificates / "server.pem"), str(certificates / "server.key")]
    argv = [sys.executable, str(STANDIN), str(tmp_path / "scripts.json"), str(counts), *tls]
    with serving(argv) as port:
        yield port, counts


def _proxy(tmp_path: Path, standin: int) -> Iterator[tuple[int, Path]]:
    log = tmp_path / "proxy.log"
    argv = [sys.executable, str(CONNECT_PROXY), str(log), "--auth", f"corp-user:{PROXY_PASSWORD}",
            f"{HOST}:443=127.0.0.1:{standin}"]  # fmt: skip
    with serving(argv) as port:
        yield port, log


def _eval(
    bench: Path, results: Path, proxy_url: str, ca: Path, agents: tuple[tuple[Any, ...], ...]
) -> tuple[int, dict[str, Any], str]:
    """`selfbench eval` in a process of its own, its environment a user's behind the proxy;
    its exit status, its JSON summary and its error output."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if key.lower() not in ("no_proxy", "http_proxy", "all_proxy")
        and not key.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"))
    }
    environ.update(
        HTTPS_PROXY=proxy_url,
        SSL_CERT_FILE=str(ca),
        OPENAI_BASE_URL=f"https://{HOST}/v1",
        OPENAI_API_KEY=KEY,
        ANTHROPIC_BASE_URL=f"https://{HOST}",
        ANTHROPIC_API_KEY=ANTHROPIC_KEY,
        GOOGLE_GEMINI_BASE_URL=f"https://{HOST}",
        GEMINI_API_KEY=GEMINI_KEY,
    )
    argv = [sys.executable, "-m", "selfbench", "eval", str(bench), "--results", str(results),
            "--json"]  # fmt: skip
    for name, harness, model, *_ in agents:
        argv += ["--agent", f"{name}={harness}:{model}"]
    done = subprocess.run(
        argv, env=environ, capture_output=True, text=True, timeout=900, check=False
    )
    summary = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, summary, done.stderr


def _files_holding(root: Path, secrets: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {secret}" for secret in secrets if secret.encode() in data]
    return found


def test_real_harnesses_reach_their_api_through_the_company_proxy_and_its_ca(
    bench: Path,
    installed: None,
    standin: tuple[int, Path],
    certificates: Path,
    tmp_path: Path,
) -> None:
    port, counts_file = standin
    results = tmp_path / "results"
    for proxy_port, proxy_log in _proxy(tmp_path, port):
        proxy_url = f"http://corp-user:{PROXY_PASSWORD}@127.0.0.1:{proxy_port}"
        code, summary, stderr = _eval(bench, results, proxy_url, certificates / "ca.pem", AGENTS)
        connects = proxy_log.read_text().splitlines()
    assert code == 0, stderr
    records = {record.agent: record for record in read_results(results).trials.values()}
    counts = json.loads(counts_file.read_text())
    for name, harness, model, _ in AGENTS:
        record, seen = records[name], counts[_api_name(model)]
        assert (record.passed, record.reward) == (True, 1.0), (record, Path(record.log or ""))
        assert record.network == f"allow-list: {HOST}:443 (through proxy 127.0.0.1:{proxy_port})"
        assert record.tokens == seen["total_tokens"]
        if harness == "aider":  # it asked for the file and edited it from the model's text
            assert seen["requests"] == 2, seen
            continue
        assert TOOLS[harness] in seen["tools"]
        # the keys reach the harness in its environment, in no file of the phase
        assert "keys-in-no-file" in seen["observations"][0], seen["observations"][0]
        assert "key-in-environment" in seen["observations"][0]
    assert {agent["agent"]: agent["passRate"] for agent in summary["agents"]} == {
        name: 1.0 for name, *_ in AGENTS
    }
    # every request went through the proxy, to the name the base URL gives, on its own port
    assert connects
    assert set(connects) == {f"CONNECT {HOST}:443 200"}
    # no key and no proxy password in anything the evaluation left, its report included
    report = tmp_path / "report.txt"
    subprocess.run([sys.executable, "-m", "selfbench", "report", str(results), "--out",
                    str(report)], check=True, capture_output=True)  # fmt: skip
    assert f"through proxy 127.0.0.1:{proxy_port}" in report.read_text()
    secrets = (KEY, ANTHROPIC_KEY, GEMINI_KEY, PROXY_PASSWORD)
    assert _files_holding(results, secrets) == []
    assert _files_holding(tmp_path, secrets) == []


def test_a_proxy_that_refuses_the_credentials_is_named_in_the_trials_log(
    short_bench: Path,
    installed: None,
    standin: tuple[int, Path],
    certificates: Path,
    tmp_path: Path,
) -> None:
    port, _ = standin
    results = tmp_path / "results"
    codex = tuple(agent for agent in AGENTS if agent[0] == "codex")
    for proxy_port, proxy_log in _proxy(tmp_path, port):
        proxy_url = f"http://corp-user:wrong-password@127.0.0.1:{proxy_port}"
        _, summary, stderr = _eval(short_bench, results, proxy_url, certificates / "ca.pem", codex)
        connects = proxy_log.read_text().splitlines()
    assert summary, stderr
    refusal = (
        f"the proxy 127.0.0.1:{proxy_port} refused CONNECT {HOST}:443: "
        "407 Proxy Authentication Required"
    )
    # not the agent's failure: its harness never reached the model (retried once, as such)
    (record,) = read_results(results).trials.values()
    assert (record.passed, record.classification) == (False, "infrastructure")
    assert record.reason == f"the harness never reached its model's API: {refusal}"
    assert connects
    assert set(connects) == {f"CONNECT {HOST}:443 407"}
    log = Path(record.log or "").read_text()
    assert f"selfbench: the allow-list's relay: {refusal}\n" in log
    assert log.count("refused CONNECT") == 1  # said once, however often the harness retried
    assert _files_holding(results, (KEY, "wrong-password")) == []


def test_a_proxy_that_is_not_http_refuses_the_harness_before_it_starts(
    bench: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("no_proxy", "NO_PROXY", "https_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("HTTPS_PROXY", f"socks5://corp-user:{PROXY_PASSWORD}@proxy.corp:1080")
    argv = ["eval", str(bench), "--results", str(tmp_path / "r"), "--agent", "codex:openai/gpt-5"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "error: agent codex: cannot start: the proxy for api.openai.com:443 is not an http:// "
        "URL with a host: 'socks5://proxy.corp:1080' (only an HTTP proxy's CONNECT is "
        "supported)\n"
    )
