"""A sandbox's network allow-list: the allowed hosts and nothing else. Two sandboxes use it: the
agent phase of a local evaluation (`evaluate.local_trials`) and the author and reviewer commands
of `selfbench run` (`run.confine`).

The sandbox keeps its own network namespace with only loopback. Each allowed `host:port`
becomes one Unix socket in a root-only directory; on the host a relay thread connects every
connection made to it to that host and port (TLS and all, end to end: the relay sees only
bytes). In the sandbox's namespace a forwarder (`_forward.py`, standard library only) listens on
a loopback address for each: `127.0.0.1:PORT` for an endpoint on the host's loopback (a local
model server), else `127.0.0.N:PORT` with the host's name mapped to that address in the
sandbox's `/etc/hosts` (one address per name: two ports of one host share it). The agent
phase's forwarder runs as its root, which may not bind a port below 1024, so a privileged port
is reached at a high one instead, in the URL the harness is given (`EgressPlan.inside_url`: the
host's name stays, for TLS); the author's forwarder may (`plan_for(..., keep_ports=True)`), so
an agent CLI reaches its API at the URL it knows. Nothing else leaves the namespace: a name not
listed does not resolve, an address not listed has no route. A base URL's host is a name,
`localhost` or `127.0.0.1`.

A company network's explicit proxy is honoured on the host's side: when the host's environment
names one for the endpoint's scheme (`proxy_for`) the relay opens each upstream connection with
an HTTP `CONNECT host:port` to it, then relays the tunnel's bytes. A connection that cannot be
made (a proxy's refusal, with its status) is kept in the sandbox's `RelayLog` and said in its
log. The sandbox itself never sees the proxy or its credentials.

The host's relays hold at most `PHASE_CONNECTIONS` connections open at once for one sandbox, and
`ALL_CONNECTIONS` for every sandbox of the process together (each costs the host two descriptors
and up to three threads: an agent opening thousands, and holding them, must not exhaust the
host's). A connection past either is closed as soon as it is accepted, before any thread starts
for it; an `http://` endpoint's client first reads a `503` whose body says why, and the log says
it once either way ("the relay refused a connection to api.example.com:443: 64 are open, the
most one trial may hold").

`MODEL_APIS` are the model APIs agents are known to reach, each with the variable naming its
base URL and the variables holding its keys: a harness's endpoint (`evaluate.harnesses`) and the
endpoints an author command's variables imply (`run.confine`) are read from it.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import shlex
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from selfbench.environments import _forward
from selfbench.errors import EgressError, translating

__all__ = [
    "ALL_CONNECTIONS",
    "EGRESS_DIR",
    "FORWARD_READY",
    "MODEL_APIS",
    "PHASE_CONNECTIONS",
    "PROXY_VARIABLES",
    "EgressPlan",
    "Endpoint",
    "ModelApi",
    "Proxy",
    "RelayLog",
    "endpoint_of",
    "plan_for",
    "proxy_for",
    "relayed",
]

EGRESS_DIR = "/run/selfbench-egress"
"""Where the phase sees the relays' Unix sockets (root-only)."""
FORWARD_READY = "/run/selfbench-forward-ready"
"""The file the forwarder writes once it listens (root's `/run`)."""

_LOOPBACK = ("127.0.0.1", "localhost")
"""Hosts on the host's loopback, reached at `127.0.0.1` in the phase (clients resolve
`localhost` themselves, whatever `/etc/hosts` says)."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_CONNECT_SECONDS = 30.0
_PRIVILEGED = 1024
_HIGH_PORTS = 40000
_PROXY_PORT = 3128
"""A proxy URL's port when it names none (the common default of HTTP proxies)."""
_REPLY_LIMIT = 16 * 1024
"""The most bytes of a proxy's reply to CONNECT read (its status line and headers)."""
PHASE_CONNECTIONS = 64
"""The most connections the host's relays hold open at once for one agent phase."""
ALL_CONNECTIONS = 256
"""The most they hold open at once for all phases of this process together."""
_ALL_SLOTS = threading.BoundedSemaphore(ALL_CONNECTIONS)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One host and port the agent phase may reach."""

    host: str
    port: int
    scheme: str = field(default="https", compare=False)
    """The scheme of the URL it came from (which proxy variable applies); not part of its
    identity: the relay carries the bytes of either."""

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """An endpoint on the host's own loopback (a local model server)."""
        return self.host in _LOOPBACK


def endpoint_of(url: str) -> Endpoint:
    """The host and port an `http(s)://` URL reaches (its scheme's port when it names none).

    Raises:
        EgressError: not an http or https URL with a host.
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
        parts = parts._replace(netloc="")
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise EgressError(f"not an http(s) URL with a host: {url!r}")
    return Endpoint(parts.hostname, port or _DEFAULT_PORTS[parts.scheme], parts.scheme)


@dataclass(frozen=True, slots=True)
class Proxy:
    """An explicit HTTP proxy the host reaches an endpoint through (`CONNECT`)."""

    host: str
    port: int
    authorization: str | None = field(default=None, repr=False)
    """The `Proxy-Authorization` header's value (from the URL's userinfo), never said."""

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


PROXY_VARIABLES = tuple(
    variable
    for name in ("http_proxy", "https_proxy", "all_proxy")
    for variable in (name, name.upper())
)
"""The variables naming the host's proxy (`_proxy_url` reads them)."""


def _proxy_url(environ: Mapping[str, str], scheme: str) -> str:
    """The proxy URL the environment sets for `scheme`: `https_proxy` (or `HTTPS_PROXY`) for
    https, `http_proxy` (or `HTTP_PROXY`) for http, else `all_proxy` (or `ALL_PROXY`); the
    lower-case name first, as the standard library's `getproxies` prefers it (which reads only
    `os.environ`, so is not used)."""
    for name in (f"{scheme}_proxy", "all_proxy"):
        for variable in (name, name.upper()):
            if value := environ.get(variable, "").strip():
                return value
    return ""


def _bypassed(endpoint: Endpoint, no_proxy: str) -> bool:
    """Whether `no_proxy` exempts `endpoint`: a comma list of host names, each matching that
    host and its subdomains (a leading `.` ignored, and `*.` as many tools allow), with an
    optional `:port`; `*` exempts all. These are the standard library's
    `proxy_bypass_environment`'s semantics (and curl's), written out because the typed standard
    library does not declare that function and `proxy_bypass` reads only `os.environ`."""
    host = endpoint.host.lower().rstrip(".")
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if entry == "*":
            return True
        name, colon, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if colon and port != str(endpoint.port):
            continue
        name = name.lstrip("*").lstrip(".").rstrip(".")
        if name and (host == name or host.endswith(f".{name}")):
            return True
    return False


def proxy_for(endpoint: Endpoint, environ: Mapping[str, str]) -> Proxy | None:
    """The proxy `environ` routes `endpoint` through, if any: none for an endpoint on the
    host's loopback or one `no_proxy` (`NO_PROXY`) exempts (`_bypassed`).

    Raises:
        EgressError: a proxy URL that is not an `http://` one with a host (a schemeless
            `host:port` is read as one).
    """
    url = _proxy_url(environ, endpoint.scheme)
    if not url or endpoint.loopback:
        return None
    if _bypassed(endpoint, environ.get("no_proxy") or environ.get("NO_PROXY") or ""):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port, parts = None, parts._replace(netloc="")
    if parts.scheme != "http" or not parts.hostname:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # no userinfo
        raise EgressError(
            f"the proxy for {endpoint} is not an http:// URL with a host: {shown!r} "
            "(only an HTTP proxy's CONNECT is supported)"
        )
    authorization = None
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
    return Proxy(parts.hostname, port or _PROXY_PORT, authorization)


@dataclass(frozen=True, slots=True)
class EgressPlan:
    """How one sandbox reaches its allowed endpoints."""

    endpoints: tuple[Endpoint, ...]
    proxies: tuple[Proxy | None, ...] = ()
    """Endpoint N's proxy, if it has one (none for all when empty)."""
    keep_ports: bool = False
    """The forwarder may listen on a port below 1024, so each endpoint keeps its own port."""

    def proxy(self, index: int) -> Proxy | None:
        """The proxy endpoint `index` is reached through, if any."""
        return self.proxies[index] if index < len(self.proxies) else None

    def describe(self) -> str:
        """The sandbox's network in one line, as each record and the report say it (a proxy by
        its host and port, never its credentials)."""
        said = []
        for index, endpoint in enumerate(self.endpoints):
            proxy = self.proxy(index)
            said.append(f"{endpoint} (through proxy {proxy})" if proxy else str(endpoint))
        return "allow-list: " + ", ".join(said)

    def address(self, index: int) -> str:
        """The loopback address the sandbox reaches endpoint `index` at: `127.0.0.1` for the
        host's loopback, else the next address from `127.0.0.2` on for each host name."""
        if self.endpoints[index].loopback:
            return "127.0.0.1"
        names = list(dict.fromkeys(e.host for e in self.endpoints if not e.loopback))
        return str(ipaddress.IPv4Address("127.0.0.2") + names.index(self.endpoints[index].host))

    def port(self, index: int) -> int:
        """The port the sandbox reaches endpoint `index` at: its own, or for a privileged one
        (below 1024, which root in the agent phase may not bind) `_HIGH_PORTS + index` unless
        the plan keeps ports."""
        port = self.endpoints[index].port
        return port if port >= _PRIVILEGED or self.keep_ports else _HIGH_PORTS + index

    def inside_url(self, url: str) -> str:
        """`url` as the sandbox reaches it: the same host (TLS checks that name), the port its
        forwarder listens on.

        Raises:
            EgressError: not an http(s) URL, or one of a host and port the plan does not allow.
        """
        endpoint = endpoint_of(url)
        if endpoint not in self.endpoints:
            raise EgressError(f"{endpoint} is not on the allow-list")
        port = self.port(self.endpoints.index(endpoint))
        if port == endpoint.port:
            return url
        parts = urlsplit(url.strip())
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        return parts._replace(netloc=f"{host}:{port}").geturl()

    def hosts_file(self) -> str:
        """The sandbox's `/etc/hosts`: loopback, and each allowed name at its address."""
        lines = ["127.0.0.1 localhost", "::1 localhost"]
        for index, endpoint in enumerate(self.endpoints):
            line = f"{self.address(index)} {endpoint.host}"
            if not endpoint.loopback and line not in lines:
                lines.append(line)
        return "\n".join(lines) + "\n"

    def forward_specs(self, directory: str) -> tuple[str, ...]:
        """The forwarder's `ADDRESS:PORT:SOCKET` arguments, the relays' sockets in
        `directory`: one per loopback address and port (`localhost:8000` and
        `127.0.0.1:8000` are one listener, the first's)."""
        specs: dict[str, str] = {}
        for index in range(len(self.endpoints)):
            listen = f"{self.address(index)}:{self.port(index)}"
            specs.setdefault(listen, f"{listen}:{directory}/{index}.sock")
        return tuple(specs.values())

    def forward_command(self, python: str, script: str) -> str:
        """The shell command that starts the agent phase's forwarder (as root) with `python`."""
        return shlex.join([python, script, FORWARD_READY, *self.forward_specs(EGRESS_DIR)])


def _connector(endpoint: Endpoint, proxy: Proxy | None) -> socket.socket:
    """A connection to `endpoint`, directly or through `proxy`'s tunnel.

    Raises:
        EgressError: the proxy answered CONNECT with other than 2xx.
        OSError: no connection.
    """
    if proxy is None:
        upstream = socket.create_connection((endpoint.host, endpoint.port), _CONNECT_SECONDS)
    else:
        upstream = socket.create_connection((proxy.host, proxy.port), _CONNECT_SECONDS)
        try:
            _tunnel(upstream, endpoint, proxy)
        except BaseException:
            upstream.close()
            raise
    upstream.settimeout(None)
    return upstream


def _tunnel(upstream: socket.socket, endpoint: Endpoint, proxy: Proxy) -> None:
    """Ask `proxy` (connected as `upstream`) for a tunnel to `endpoint`; read its reply's head
    byte by byte, so nothing of the tunnel is consumed.

    Raises:
        EgressError: a status other than 2xx, or no HTTP reply (the endpoint and the status
            said).
        OSError: the connection failed.
    """
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    lines = [f"CONNECT {host}:{endpoint.port} HTTP/1.1", f"Host: {host}:{endpoint.port}"]
    if proxy.authorization is not None:
        lines.append(f"Proxy-Authorization: {proxy.authorization}")
    upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
    reply = bytearray()
    while not reply.endswith(b"\r\n\r\n") and len(reply) < _REPLY_LIMIT:
        byte = upstream.recv(1)
        if not byte:
            break
        reply += byte
    status = reply.split(b"\r\n", 1)[0].decode("latin-1").strip()
    fields = status.split(" ", 1)
    if len(fields) == 2 and fields[0].startswith("HTTP/") and fields[1][:1] == "2":
        return
    said = fields[1] if len(fields) == 2 and fields[0].startswith("HTTP/") else "no HTTP reply"
    raise EgressError(f"the proxy {proxy} refused CONNECT {endpoint}: {said}")


class RelayLog:
    """What one sandbox's relays did while it ran: how many upstream connections they made, and
    each distinct reason one could not be made (each said once to `report`, as it happens)."""

    def __init__(self, report: Callable[[str], None] | None = None) -> None:
        self.connected = 0
        self.failures: list[str] = []
        self._report = report
        self._lock = threading.Lock()

    @classmethod
    def appending(cls, log: Path) -> RelayLog:
        """A relay log that says each reason in `log`, as `selfbench: the allow-list's relay:
        <why>` (the sandbox's own output is appended there too)."""

        def report(why: str) -> None:
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"selfbench: the allow-list's relay: {why}\n")

        return cls(report)

    def opened(self) -> None:
        """Count one upstream connection made."""
        with self._lock:
            self.connected += 1

    def failed(self, why: str) -> None:
        """Keep `why` one connection could not be made; say it the first time."""
        with self._lock:
            first = why not in self.failures
            if first:
                self.failures.append(why)
        if first and self._report is not None:
            self._report(why)

    def unreached(self) -> str | None:
        """Why the phase never reached an endpoint: the first failure, when no connection was
        made at all (None when one was, or none was tried)."""
        with self._lock:
            return self.failures[0] if self.failures and not self.connected else None


@contextmanager
def relayed(plan: EgressPlan, directory: Path, log: RelayLog | None = None) -> Iterator[Path]:
    """Relay `directory/N.sock` to the plan's endpoint N (through its proxy, if it has one)
    while the block runs (the directory is made root-only); yields the directory, to be bound
    at `EGRESS_DIR`. Each upstream connection is counted in `log`; one that cannot be made is
    closed and its reason kept there (a proxy's refusal names the endpoint and the proxy's
    status).

    Raises:
        OSError: a socket cannot be made.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    listeners: list[socket.socket] = []
    kept = RelayLog() if log is None else log
    phase = _Phase()
    try:
        for index, endpoint in enumerate(plan.endpoints):
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listeners.append(listener)
            listener.bind(str(directory / f"{index}.sock"))
            listener.listen(64)
            connect = phase.holding(_bound(endpoint, plan.proxy(index), kept))
            admit = _admitter(endpoint, phase, _ALL_SLOTS, kept)
            threading.Thread(
                target=_forward.serve, args=(listener, connect, admit), daemon=True
            ).start()
        yield directory
    finally:
        for listener in listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        phase.end()


class _Phase:
    """One phase's relayed connections: its places (`PHASE_CONNECTIONS`) and the sockets it
    holds open, ended with the phase so no connection outlives it (nor keeps a place of all)."""

    def __init__(self) -> None:
        self.places = threading.BoundedSemaphore(PHASE_CONNECTIONS)
        self._sockets: set[socket.socket] = set()  # a phase's own, dropped as they end
        self._lock = threading.Lock()
        self._ended = False

    def hold(self, connection: socket.socket) -> None:
        """Keep `connection` to end with the phase (at once, if it has ended)."""
        with self._lock:
            ended = self._ended
            if not ended:
                self._sockets.add(connection)
        if ended:
            _shut(connection)

    def drop(self, connection: socket.socket) -> None:
        """Forget `connection`, which has ended, and every socket held that is closed (its
        upstream end, closed with it)."""
        with self._lock:
            self._sockets.discard(connection)
            self._sockets = {held for held in self._sockets if held.fileno() != -1}

    def holding(self, connect: _forward.Connect) -> _forward.Connect:
        """`connect`, each upstream connection it makes held by the phase."""

        def connected() -> socket.socket:
            upstream = connect()
            self.hold(upstream)
            return upstream

        return connected

    def end(self) -> None:
        """Shut down every connection still open: its relay threads end and free its places."""
        with self._lock:
            self._ended = True
            held = list(self._sockets)
            self._sockets.clear()
        for connection in held:
            _shut(connection)


def _shut(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)


def _admitter(
    endpoint: Endpoint,
    phase: _Phase,
    everyone: threading.BoundedSemaphore,
    log: RelayLog,
) -> _forward.Admit:
    """Admits a connection while the phase and the process hold fewer than their most (a place
    in each, freed when it ends; the phase holds it to end it with the phase); else says why in
    `log` (and to an `http://` client) and refuses it."""

    def admit(client: socket.socket) -> Callable[[], None] | None:
        if phase.places.acquire(blocking=False):
            if everyone.acquire(blocking=False):
                phase.hold(client)

                def done() -> None:
                    phase.drop(client)
                    everyone.release()
                    phase.places.release()

                return done
            phase.places.release()
            why = f"{ALL_CONNECTIONS} are open, the most all trials together may hold"
        else:
            why = f"{PHASE_CONNECTIONS} are open, the most one trial may hold"
        said = f"the relay refused a connection to {endpoint}: {why}"
        if endpoint.scheme == "http":
            _unavailable(client, said)
        log.failed(said)
        return None

    return admit


def _unavailable(client: socket.socket, said: str) -> None:
    """Answer an `http://` client with a `503` whose body says `said` (without waiting on it)."""
    body = (said + "\n").encode("utf-8")
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.settimeout(1.0)
        client.sendall(head.encode("ascii") + body)


def _bound(endpoint: Endpoint, proxy: Proxy | None, log: RelayLog) -> _forward.Connect:
    through = f" through the proxy {proxy}" if proxy is not None else ""

    def connect() -> socket.socket:
        try:
            with translating(EgressError, f"connect to {endpoint}{through}"):
                upstream = _connector(endpoint, proxy)
        except EgressError as exc:
            log.failed(str(exc))
            raise ConnectionError(str(exc)) from exc
        log.opened()
        return upstream

    return connect


def plan_for(
    endpoints: Sequence[Endpoint],
    environ: Mapping[str, str] | None = None,
    *,
    keep_ports: bool = False,
) -> EgressPlan:
    """The plan for `endpoints`, each once, in order; each through the proxy `environ` (the
    host's environment) names for it (`proxy_for`), none without `environ`. With `keep_ports`
    the sandbox's forwarder may bind a privileged port (`EgressPlan.keep_ports`).

    Raises:
        EgressError: a proxy URL that is not an `http://` one.
    """
    unique = tuple(dict.fromkeys(endpoints))
    proxies = () if environ is None else tuple(proxy_for(e, environ) for e in unique)
    return EgressPlan(unique, proxies, keep_ports=keep_ports)


@dataclass(frozen=True, slots=True)
class ModelApi:
    """A model provider's API as agents reach it."""

    variable: str
    """The variable naming its base URL (agents read it)."""
    url: str
    """Its base URL when that variable is not set."""
    keys: tuple[str, ...]
    """The variables holding its keys."""

    def base_url(self, environ: Mapping[str, str]) -> str:
        """Its base URL as `environ` sets it, else its own."""
        return environ.get(self.variable) or self.url


MODEL_APIS: Mapping[str, ModelApi] = {
    "openai": ModelApi("OPENAI_BASE_URL", "https://api.openai.com/v1", ("OPENAI_API_KEY",)),
    "anthropic": ModelApi(
        "ANTHROPIC_BASE_URL", "https://api.anthropic.com", ("ANTHROPIC_API_KEY",)
    ),
    "gemini": ModelApi(
        "GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com", ("GEMINI_API_KEY",)
    ),
}
"""The model APIs agents are known to reach, by provider (a model's `openai/…` prefix)."""
