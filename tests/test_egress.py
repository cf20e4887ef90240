"""The agent phase's allow-list pieces on the host: endpoints from URLs, the phase's hosts file
and the forwarder's command, and a real relay carrying bytes from a Unix socket to one TCP
endpoint (the sandboxed path end to end is `tests/test_eval_harness.py`)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from selfbench.errors import EvalError
from selfbench.evaluate import harnesses
from selfbench.evaluate.egress import Endpoint, endpoint_of, plan_for, relayed
from selfbench.evaluate.harnesses import HARNESSES


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("https://api.openai.com/v1", Endpoint("api.openai.com", 443)),
        ("http://127.0.0.1:8123/v1", Endpoint("127.0.0.1", 8123)),
        ("http://models.internal", Endpoint("models.internal", 80)),
    ],
)
def test_endpoints_of_urls(url: str, endpoint: Endpoint) -> None:
    assert endpoint_of(url) == endpoint


@pytest.mark.parametrize("url", ["ftp://host/x", "api.openai.com", "https://:443/", "http://h:x/"])
def test_urls_without_an_http_host_are_refused(url: str) -> None:
    with pytest.raises(EvalError):
        endpoint_of(url)


def test_the_plan_maps_names_to_their_own_loopback_addresses() -> None:
    plan = plan_for([Endpoint("api.openai.com", 443), Endpoint("127.0.0.1", 9000),
                     Endpoint("api.openai.com", 443)])  # fmt: skip
    assert plan.describe() == "allow-list: api.openai.com:443, 127.0.0.1:9000"
    assert plan.hosts_file() == "127.0.0.1 localhost\n::1 localhost\n127.0.0.2 api.openai.com\n"
    assert plan.forward_command("py", "f.py") == (
        "py f.py /run/selfbench-forward-ready 127.0.0.2:40000:/run/selfbench-egress/0.sock "
        "127.0.0.1:9000:/run/selfbench-egress/1.sock"
    )
    # root in the phase may not bind 443: the harness is given the high port, the same name
    assert plan.inside_url("https://api.openai.com/v1") == "https://api.openai.com:40000/v1"
    assert plan.inside_url("http://127.0.0.1:9000/v1") == "http://127.0.0.1:9000/v1"
    with pytest.raises(EvalError) as error:
        plan.inside_url("https://example.com/v1")
    assert str(error.value) == "example.com:443 is not on the allow-list"


def test_localhost_is_the_phases_own_loopback() -> None:
    plan = plan_for([Endpoint("localhost", 8000)])
    assert plan.hosts_file() == "127.0.0.1 localhost\n::1 localhost\n"
    assert plan.address(0) == "127.0.0.1"


def test_a_harness_reaches_its_base_url_else_its_providers_api() -> None:
    harness = HARNESSES["mini-swe-agent"]
    assert harness.endpoints("openai/gpt-5", {}) == (Endpoint("api.openai.com", 443),)
    assert harness.endpoints("anthropic/claude-sonnet-4-5", {}) == (
        Endpoint("api.anthropic.com", 443),
    )
    local = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}
    assert harness.endpoints("openai/gpt-5", local) == (Endpoint("127.0.0.1", 8000),)
    with pytest.raises(EvalError) as error:
        harness.endpoints("mystery/model", {})
    assert str(error.value) == (
        "mini-swe-agent: no known API for model 'mystery/model' (known: openai/…, anthropic/…)"
    )
    environ = {"OPENAI_API_KEY": "k", "HOME": "/h"}
    plan = plan_for(harness.endpoints("openai/gpt-5", environ))
    variables = harness.variables("openai/gpt-5", environ, plan)
    assert variables["OPENAI_API_KEY"] == "k"
    assert variables["SELFBENCH_MODEL"] == "openai/gpt-5"
    assert variables["OPENAI_BASE_URL"] == "https://api.openai.com:40000/v1"
    assert "HOME" not in variables
    claude = HARNESSES["claude-code"]
    plan = plan_for(claude.endpoints("anthropic/claude-sonnet-4-5", {}))
    assert claude.variables("anthropic/claude-sonnet-4-5", {}, plan)["ANTHROPIC_BASE_URL"] == (
        "https://api.anthropic.com:40000"
    )


def test_gemini_cli_reaches_the_gemini_api_by_either_prefix() -> None:
    gemini = HARNESSES["gemini-cli"]
    for model in ("gemini/gemini-2.5-pro", "google/gemini-2.5-pro"):
        endpoints = gemini.endpoints(model, {})
        assert endpoints == (Endpoint("generativelanguage.googleapis.com", 443),)
        variables = gemini.variables(model, {"GEMINI_API_KEY": "k"}, plan_for(endpoints))
        assert variables["GOOGLE_GEMINI_BASE_URL"] == (
            "https://generativelanguage.googleapis.com:40000"
        )
        assert variables["GEMINI_API_KEY"] == "k"
    local = {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8000"}
    assert gemini.endpoints("gemini/gemini-2.5-pro", local) == (Endpoint("127.0.0.1", 8000),)
    with pytest.raises(EvalError) as error:
        gemini.endpoints("openai/gpt-5", {})
    assert str(error.value) == (
        "gemini-cli: no known API for model 'openai/gpt-5' (known: gemini/…, google/…)"
    )


def test_the_relay_carries_bytes_both_ways_to_its_one_endpoint(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]

        def echo() -> None:
            connection, _ = server.accept()
            with connection:
                connection.sendall(b"echo:" + connection.recv(100))

        thread = threading.Thread(target=echo)
        thread.start()
        plan = plan_for([Endpoint("127.0.0.1", port)])
        with relayed(plan, tmp_path / "relays") as directory:
            assert (directory.stat().st_mode & 0o777) == 0o700
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(str(directory / "0.sock"))
                client.sendall(b"hello")
                client.shutdown(socket.SHUT_WR)
                assert client.recv(100) == b"echo:hello"
        thread.join(timeout=10)
        assert not (directory / "0.sock").exists() or not _connectable(directory / "0.sock")


def _connectable(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as client:
        try:
            client.connect(str(path))
        except OSError:
            return False
        return True


def test_each_pinned_pypi_harness_ships_its_constraints() -> None:
    constraints = Path(harnesses.__file__).with_name("harness_constraints")
    for harness in HARNESSES.values():
        if not harness.constraints:
            continue
        lines = (constraints / f"{harness.name}.txt").read_text().splitlines()
        pins = [line for line in lines if line and not line.startswith("#")]
        assert pins
        assert all("==" in pin for pin in pins)
        assert not any(pin.startswith(f"{harness.package}==") for pin in pins)
