"""The agent phase's network allow-list in the local environment: the allowed hosts and nothing
else.

The agent phase keeps its own network namespace with only loopback (`validate/sandbox.py`).
Each allowed `host:port` becomes one Unix socket in a root-only directory bound into the phase;
on the host a relay thread connects every connection made to it to that host and port (TLS and
all, end to end: the relay sees only bytes). Inside, a forwarder run as root (`_forward.py`,
by the harness's own interpreter) listens on a loopback address for each: `127.0.0.1:PORT` for
an endpoint on the host's loopback (a local model server), else `127.0.0.N:PORT` with the host's
name mapped to that address in the phase's `/etc/hosts`. Root in the phase may not bind a
port below 1024, so a privileged port is reached at a high one instead, in the URL the harness
is given (`EgressPlan.inside_url`: the host's name stays, for TLS). Nothing else leaves the
namespace: a name not listed does not resolve, an address not listed has no route. A base URL's
host is a name, `localhost` or `127.0.0.1`.
"""

from __future__ import annotations

import contextlib
import shlex
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from selfbench.errors import EvalError
from selfbench.evaluate import _forward

__all__ = [
    "EGRESS_DIR",
    "FORWARD_READY",
    "EgressPlan",
    "Endpoint",
    "endpoint_of",
    "plan_for",
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


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One host and port the agent phase may reach."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """An endpoint on the host's own loopback (a local model server)."""
        return self.host in _LOOPBACK


def endpoint_of(url: str) -> Endpoint:
    """The host and port an `http(s)://` URL reaches (its scheme's port when it names none).

    Raises:
        EvalError: not an http or https URL with a host.
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = None
        parts = parts._replace(netloc="")
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise EvalError(f"not an http(s) URL with a host: {url!r}")
    return Endpoint(parts.hostname, port or _DEFAULT_PORTS[parts.scheme])


@dataclass(frozen=True, slots=True)
class EgressPlan:
    """How one agent phase reaches its allowed endpoints."""

    endpoints: tuple[Endpoint, ...]

    def describe(self) -> str:
        """The phase's network in one line, as each record and the report say it."""
        return "allow-list: " + ", ".join(str(endpoint) for endpoint in self.endpoints)

    def address(self, index: int) -> str:
        """The loopback address the phase reaches endpoint `index` at."""
        return "127.0.0.1" if self.endpoints[index].loopback else f"127.0.0.{index + 2}"

    def port(self, index: int) -> int:
        """The port the phase reaches endpoint `index` at: its own, or for a privileged one
        (below 1024, which root in the phase may not bind) `_HIGH_PORTS + index`."""
        port = self.endpoints[index].port
        return port if port >= _PRIVILEGED else _HIGH_PORTS + index

    def inside_url(self, url: str) -> str:
        """`url` as the phase reaches it: the same host (TLS checks that name), the port its
        forwarder listens on.

        Raises:
            EvalError: not an http(s) URL, or one of a host and port the plan does not allow.
        """
        endpoint = endpoint_of(url)
        if endpoint not in self.endpoints:
            raise EvalError(f"{endpoint} is not on the allow-list")
        port = self.port(self.endpoints.index(endpoint))
        if port == endpoint.port:
            return url
        parts = urlsplit(url.strip())
        host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
        return parts._replace(netloc=f"{host}:{port}").geturl()

    def hosts_file(self) -> str:
        """The phase's `/etc/hosts`: loopback, and each allowed name at its address."""
        lines = ["127.0.0.1 localhost", "::1 localhost"]
        for index, endpoint in enumerate(self.endpoints):
            if not endpoint.loopback:
                lines.append(f"{self.address(index)} {endpoint.host}")
        return "\n".join(lines) + "\n"

    def forward_command(self, python: str, script: str) -> str:
        """The shell command that starts the in-phase forwarder (as root) with `python`."""
        specs = [
            f"{self.address(index)}:{self.port(index)}:{EGRESS_DIR}/{index}.sock"
            for index in range(len(self.endpoints))
        ]
        return shlex.join([python, script, FORWARD_READY, *specs])


def _connector(endpoint: Endpoint) -> socket.socket:
    upstream = socket.create_connection((endpoint.host, endpoint.port), _CONNECT_SECONDS)
    upstream.settimeout(None)
    return upstream


@contextmanager
def relayed(plan: EgressPlan, directory: Path) -> Iterator[Path]:
    """Relay `directory/N.sock` to the plan's endpoint N while the block runs (the directory is
    made root-only); yields the directory, to be bound at `EGRESS_DIR`.

    Raises:
        OSError: a socket cannot be made.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    listeners: list[socket.socket] = []
    try:
        for index, endpoint in enumerate(plan.endpoints):
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listeners.append(listener)
            listener.bind(str(directory / f"{index}.sock"))
            listener.listen(64)
            threading.Thread(
                target=_forward.serve, args=(listener, _bound(endpoint)), daemon=True
            ).start()
        yield directory
    finally:
        for listener in listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()


def _bound(endpoint: Endpoint) -> _forward.Connect:
    return lambda: _connector(endpoint)


def plan_for(endpoints: Sequence[Endpoint]) -> EgressPlan:
    """The plan for `endpoints`, each once, in order."""
    return EgressPlan(tuple(dict.fromkeys(endpoints)))
