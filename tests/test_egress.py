"""The agent phase's allow-list pieces on the host: endpoints from URLs, the phase's hosts file
and the forwarder's command, the host's proxy and CA bundle, and a real relay carrying bytes
from a Unix socket to one TCP endpoint, directly and through a real CONNECT proxy
(`tests/connect_proxy.py`); the sandboxed path end to end is `tests/test_eval_harness.py` and
`tests/test_eval_proxy.py`."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from selfbench.environments import egress
from selfbench.environments.egress import (
    PHASE_CONNECTIONS,
    Endpoint,
    Proxy,
    RelayLog,
    endpoint_of,
    plan_for,
    proxy_for,
    relayed,
)
from selfbench.errors import EgressError, EvalError
from selfbench.evaluate import harnesses
from selfbench.evaluate.harnesses import CA_VARIABLES, HARNESS_CA, HARNESSES, host_ca_bundle

CONNECT_PROXY = Path(__file__).with_name("connect_proxy.py")


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
    with pytest.raises(EgressError):
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
    with pytest.raises(EgressError) as error:
        plan.inside_url("https://example.com/v1")
    assert str(error.value) == "example.com:443 is not on the allow-list"


def test_a_plan_that_keeps_ports_listens_on_each_endpoints_own() -> None:
    """The author's forwarder may bind a privileged port: an agent CLI reaches its API at the
    URL it knows; two ports of one name share its address, one listener per address and port."""
    plan = plan_for(
        [Endpoint("api.openai.com", 443), Endpoint("localhost", 8000),
         Endpoint("models.internal", 80), Endpoint("api.openai.com", 8443),
         Endpoint("127.0.0.1", 8000)],
        keep_ports=True,
    )  # fmt: skip
    assert plan.hosts_file() == (
        "127.0.0.1 localhost\n::1 localhost\n127.0.0.2 api.openai.com\n127.0.0.3 models.internal\n"
    )
    assert plan.forward_specs("/s") == (
        "127.0.0.2:443:/s/0.sock",
        "127.0.0.1:8000:/s/1.sock",
        "127.0.0.3:80:/s/2.sock",
        "127.0.0.2:8443:/s/3.sock",
    )
    assert plan.inside_url("https://api.openai.com/v1") == "https://api.openai.com/v1"


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


API = Endpoint("api.openai.com", 443)
LOCAL = Endpoint("models.internal", 80, "http")


@pytest.mark.parametrize(
    ("environ", "endpoint", "proxy"),
    [
        ({}, API, None),
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, API, "proxy.corp:3128"),
        (
            {"https_proxy": "proxy.corp:8080", "HTTPS_PROXY": "http://other:1"},
            API,
            "proxy.corp:8080",
        ),
        ({"HTTPS_PROXY": "http://proxy.corp"}, API, "proxy.corp:3128"),
        # an http endpoint takes http_proxy, never https_proxy; ALL_PROXY is either's fallback
        ({"HTTPS_PROXY": "http://proxy.corp:3128"}, LOCAL, None),
        ({"http_proxy": "http://web.corp:80"}, LOCAL, "web.corp:80"),
        ({"ALL_PROXY": "http://all.corp:3128"}, API, "all.corp:3128"),
        ({"ALL_PROXY": "http://all.corp:3128", "HTTPS_PROXY": "http://p:1"}, API, "p:1"),
        # loopback never goes through a proxy
        ({"HTTPS_PROXY": "http://p:1"}, Endpoint("127.0.0.1", 8000), None),
        ({"HTTPS_PROXY": "http://p:1"}, Endpoint("localhost", 443), None),
        # no_proxy: domain suffixes (a leading dot or *. ignored), ports optional, *
        ({"HTTPS_PROXY": "http://p:1", "NO_PROXY": "openai.com"}, API, None),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "x.org, .openai.com"}, API, None),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "*.openai.com"}, API, None),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "api.openai.com:443"}, API, None),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "api.openai.com:8443"}, API, "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "*"}, API, None),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "nopenai.com,ai.com"}, API, "p:1"),
        ({"HTTPS_PROXY": "http://p:1", "no_proxy": "OpenAI.COM"}, API, None),
    ],
)
def test_the_hosts_proxy_for_an_endpoint(
    environ: dict[str, str], endpoint: Endpoint, proxy: str | None
) -> None:
    found = proxy_for(endpoint, environ)
    assert (str(found) if found else None) == proxy


def test_a_proxys_credentials_become_basic_authorization_and_are_never_said() -> None:
    environ = {"HTTPS_PROXY": "http://us%40er:p%3Ass@proxy.corp:3128"}
    proxy = proxy_for(API, environ)
    assert proxy == Proxy("proxy.corp", 3128, "Basic dXNAZXI6cDpzcw==")  # us@er:p:ss
    assert "p:ss" not in repr(proxy)
    plan = plan_for([API, Endpoint("127.0.0.1", 9000)], environ)
    assert plan.describe() == (
        "allow-list: api.openai.com:443 (through proxy proxy.corp:3128), 127.0.0.1:9000"
    )
    assert plan_for([API]).describe() == "allow-list: api.openai.com:443"


@pytest.mark.parametrize("url", ["socks5://user:secret@proxy.corp:1080", "https://proxy.corp"])
def test_a_proxy_that_is_not_http_is_refused(url: str) -> None:
    with pytest.raises(EgressError) as error:
        plan_for([API], {"HTTPS_PROXY": url})
    assert str(error.value).startswith("the proxy for api.openai.com:443 is not an http:// URL")
    assert "secret" not in str(error.value)


def test_the_hosts_ca_bundle_is_the_first_variable_naming_a_readable_file(tmp_path: Path) -> None:
    corporate = tmp_path / "corp.pem"
    corporate.write_text("-----BEGIN CERTIFICATE-----\n")
    missing = str(tmp_path / "missing.pem")
    system = host_ca_bundle({"SSL_CERT_FILE": missing})
    assert system == () or (len(system) == 1 and str(system[0]).startswith("/etc/"))
    assert host_ca_bundle({"SSL_CERT_FILE": missing, "CURL_CA_BUNDLE": str(corporate)}) == (
        corporate,
    )
    assert host_ca_bundle({"REQUESTS_CA_BUNDLE": str(corporate), "CURL_CA_BUNDLE": "x"}) == (
        corporate,
    )
    # Node's variable adds to the usual certificates: the system's bundle stays
    assert host_ca_bundle({"SSL_CERT_FILE": missing, "NODE_EXTRA_CA_CERTS": str(corporate)}) == (
        *system,
        corporate,
    )
    plan = plan_for([API])
    variables = HARNESSES["codex"].variables("openai/gpt-5", {}, plan, ca=True)
    assert all(variables[name] == HARNESS_CA for name in CA_VARIABLES)
    assert not set(CA_VARIABLES) & set(HARNESSES["codex"].variables("openai/gpt-5", {}, plan))


def _accepting(server: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    """Accept on `server` in a thread of its own until it is shut down, handing each connection
    to `handle` in that thread."""

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            handle(connection)

    threading.Thread(target=serve, daemon=True).start()


@pytest.fixture
def echo_server() -> Iterator[int]:
    """A TCP server on the host's loopback answering each connection `echo:` + what it read."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)

        def echo(connection: socket.socket) -> None:
            with connection:
                connection.sendall(b"echo:" + connection.recv(100))

        _accepting(server, echo)
        yield server.getsockname()[1]
        server.shutdown(socket.SHUT_RDWR)


def _proxy(tmp_path: Path, *args: str) -> Iterator[tuple[int, Path]]:
    log = tmp_path / "proxy.log"
    process = subprocess.Popen(
        [sys.executable, str(CONNECT_PROXY), str(log), *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline()), log
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _through_relay(directory: Path) -> bytes:
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(str(directory / "0.sock"))
        try:
            client.sendall(b"hello")
            client.shutdown(socket.SHUT_WR)
            return client.recv(100)
        except (BrokenPipeError, ConnectionResetError):  # closed, "hello" unread or unsent
            return b""


def test_the_relay_tunnels_through_the_hosts_proxy_with_its_credentials(
    tmp_path: Path, echo_server: int
) -> None:
    mapping = f"api.example.test:443=127.0.0.1:{echo_server}"
    for port, log in _proxy(tmp_path, "--auth", "user:pw", mapping):
        environ = {"HTTPS_PROXY": f"http://user:pw@127.0.0.1:{port}"}
        plan = plan_for([Endpoint("api.example.test", 443)], environ)
        reports: list[str] = []
        relays = RelayLog(reports.append)
        with relayed(plan, tmp_path / "relays", relays) as directory:
            assert _through_relay(directory) == b"echo:hello"
        assert (reports, relays.connected, relays.unreached()) == ([], 1, None)
        assert log.read_text() == "CONNECT api.example.test:443 200\n"


def test_a_proxys_refusal_is_reported_with_the_endpoint_and_its_status(
    tmp_path: Path, echo_server: int
) -> None:
    mapping = f"api.example.test:443=127.0.0.1:{echo_server}"
    for port, log in _proxy(tmp_path, "--auth", "user:right", mapping):
        environ = {"HTTPS_PROXY": f"http://user:wrong@127.0.0.1:{port}"}
        plan = plan_for([Endpoint("api.example.test", 443)], environ)
        reports: list[str] = []
        relays = RelayLog(reports.append)
        with relayed(plan, tmp_path / "relays", relays) as directory:
            assert _through_relay(directory) == b""  # closed, nothing relayed
            assert _through_relay(directory) == b""
        assert relays.connected == 0
        assert relays.unreached() == reports[0]
        # said once, however often it happened
        assert reports == [
            (
                f"the proxy 127.0.0.1:{port} refused CONNECT api.example.test:443: "
                "407 Proxy Authentication Required"
            )
        ]
        assert log.read_text().splitlines() == ["CONNECT api.example.test:443 407"] * 2


def test_a_proxy_that_cannot_be_reached_is_reported(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    plan = plan_for([Endpoint("api.example.test", 443)], {"HTTPS_PROXY": f"127.0.0.1:{port}"})
    reports: list[str] = []
    with relayed(plan, tmp_path / "relays", RelayLog(reports.append)) as directory:
        assert _through_relay(directory) == b""
    assert reports == [
        (
            f"cannot connect to api.example.test:443 through the proxy 127.0.0.1:{port}: "
            "Connection refused"
        )
    ]


@pytest.fixture
def holding_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A TCP server on the host's loopback that accepts each connection and holds it open until
    its client ends it (then closes it too)."""
    held: list[socket.socket] = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(512)

        def hold(connection: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while connection.recv(100):
                    pass
            connection.close()

        def keep(connection: socket.socket) -> None:  # counted once its thread runs
            threading.Thread(target=hold, args=(connection,), daemon=True).start()
            held.append(connection)

        _accepting(server, keep)
        yield server.getsockname()[1], held
        server.shutdown(socket.SHUT_RDWR)
        for connection in held:
            connection.close()


def _wait_for(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_relay_holds_at_most_its_connections_for_a_phase(
    tmp_path: Path, holding_server: tuple[int, list[socket.socket]]
) -> None:
    port, held = holding_server
    plan = plan_for([Endpoint("127.0.0.1", port, "http")])
    reports: list[str] = []
    clients: list[socket.socket] = []
    with relayed(plan, tmp_path / "relays", RelayLog(reports.append)) as directory:
        try:
            for _ in range(PHASE_CONNECTIONS):
                clients.append(socket.socket(socket.AF_UNIX))
                clients[-1].connect(str(directory / "0.sock"))
            _wait_for(lambda: len(held) == PHASE_CONNECTIONS)
            threads = threading.active_count()
            refused = []
            for _ in range(3 * PHASE_CONNECTIONS):
                refused.append(socket.socket(socket.AF_UNIX))
                refused[-1].connect(str(directory / "0.sock"))
            answer = refused[0].makefile("rb").read()
            # no thread, no upstream connection for any refused one
            assert threading.active_count() == threads
            assert len(held) == PHASE_CONNECTIONS
            for client in refused:
                client.close()
            clients.pop().close()  # one place freed: the next connection is relayed
            _wait_for(lambda: threading.active_count() < threads)
            clients.append(socket.socket(socket.AF_UNIX))
            clients[-1].connect(str(directory / "0.sock"))
            _wait_for(lambda: len(held) == PHASE_CONNECTIONS + 1)
        finally:
            for client in clients:
                client.close()
    said = (
        f"the relay refused a connection to 127.0.0.1:{port}: {PHASE_CONNECTIONS} are open, "
        "the most one trial may hold"
    )
    assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert answer.endswith(f"\r\n\r\n{said}\n".encode())
    assert reports == [said]  # said once


@pytest.mark.parametrize(
    ("phase_free", "all_free", "said"),
    [
        (True, True, None),
        (False, True, "7 are open, the most one trial may hold"),
        (True, False, "9 are open, the most all trials together may hold"),
    ],
)
def test_a_connection_takes_a_place_in_its_phase_and_in_all(
    monkeypatch: pytest.MonkeyPatch, phase_free: bool, all_free: bool, said: str | None
) -> None:
    monkeypatch.setattr(egress, "PHASE_CONNECTIONS", 7)
    monkeypatch.setattr(egress, "ALL_CONNECTIONS", 9)
    held = egress._Phase()  # noqa: SLF001
    phase, everyone = threading.BoundedSemaphore(1), threading.BoundedSemaphore(1)
    held.places = phase
    if not phase_free:
        phase.acquire()
    if not all_free:
        everyone.acquire()
    reports: list[str] = []
    endpoint = Endpoint("api.example.test", 443)
    admit = egress._admitter(endpoint, held, everyone, RelayLog(reports.append))  # noqa: SLF001
    client, other = socket.socketpair()
    with client, other:
        done = admit(client)
        if said is None:
            assert done is not None
            assert not phase.acquire(blocking=False)
            assert not everyone.acquire(blocking=False)
            done()
            assert reports == []
        else:
            assert done is None
            assert reports == [f"the relay refused a connection to api.example.test:443: {said}"]
            other.setblocking(False)  # noqa: FBT003 - the socket API's own flag
            with pytest.raises(BlockingIOError):  # https: nothing written, the bytes are TLS
                other.recv(1)
        # every place it took is free again
        assert phase.acquire(blocking=False) is phase_free
        assert everyone.acquire(blocking=False) is all_free


def test_a_connection_that_cannot_be_made_frees_its_place(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once closed
    reports: list[str] = []
    plan = plan_for([Endpoint("127.0.0.1", port, "http")])
    with relayed(plan, tmp_path / "relays", RelayLog(reports.append)) as directory:
        for _ in range(PHASE_CONNECTIONS + 8):
            assert _through_relay(directory) == b""
    assert len(reports) == 1
    assert reports[0].startswith(f"cannot connect to 127.0.0.1:{port}")  # never "refused"


def test_no_relayed_connection_outlives_its_phase(
    tmp_path: Path, holding_server: tuple[int, list[socket.socket]]
) -> None:
    port, held = holding_server
    plan = plan_for([Endpoint("127.0.0.1", port)])
    threads = threading.active_count()
    clients = []
    with relayed(plan, tmp_path / "relays") as directory:
        for _ in range(4):
            clients.append(socket.socket(socket.AF_UNIX))
            clients[-1].connect(str(directory / "0.sock"))
        _wait_for(lambda: len(held) == 4)
    # the clients never closed: the phase's end shut their relays down, upstream too
    _wait_for(lambda: threading.active_count() <= threads)
    for client in clients:
        client.settimeout(10)
        assert client.recv(10) == b""
        client.close()
