"""A company network's explicit HTTP proxy for the tests: it answers `CONNECT host:port` only,
resolves names through the map on its command line (never DNS), may demand basic
authentication, and logs every CONNECT. Run as a process of its own:

    python connect_proxy.py LOG [--auth USER:PASSWORD] HOST:PORT=ADDRESS:PORT ...

It prints its port (on the host's loopback) on its first line of output, then serves until
killed. Each CONNECT appends `CONNECT HOST:PORT STATUS` to `LOG`: 407 without the right
`Proxy-Authorization: Basic` credentials, 403 for a target the map does not name, 502 when the
mapped address refuses, else 200 and the tunnel's bytes both ways.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import socketserver
import sys
import threading
from pathlib import Path

_REASONS = {
    200: "Connection established",
    403: "Forbidden",
    405: "Method Not Allowed",
    407: "Proxy Authentication Required",
    502: "Bad Gateway",
}


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _decide(
    method: str,
    target: str,
    headers: dict[str, str],
    routes: dict[str, tuple[str, int]],
    auth: str | None,
) -> tuple[int, socket.socket | None]:
    """The reply's status, and the tunnel's upstream when it is 200."""
    if method != "CONNECT":
        return 405, None
    if auth is not None:
        expected = "Basic " + base64.b64encode(auth.encode()).decode("ascii")
        if headers.get("proxy-authorization") != expected:
            return 407, None
    if target not in routes:
        return 403, None
    try:
        upstream = socket.create_connection(routes[target], timeout=10)
    except OSError:
        return 502, None
    upstream.settimeout(None)
    return 200, upstream


def _handler(
    log: Path, routes: dict[str, tuple[str, int]], auth: str | None
) -> type[socketserver.StreamRequestHandler]:
    lock = threading.Lock()

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            request = self.rfile.readline(8192).decode("latin-1").strip()
            headers: dict[str, str] = {}
            while (line := self.rfile.readline(8192).decode("latin-1").strip()) != "":
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            method, _, rest = request.partition(" ")
            target = rest.split(" ", 1)[0]
            status, upstream = _decide(method, target, headers, routes, auth)
            with lock, log.open("a", encoding="utf-8") as handle:
                handle.write(f"{method} {target} {status}\n")
            extra = 'Proxy-Authenticate: Basic realm="test"\r\n' if status == 407 else ""
            head = f"HTTP/1.1 {status} {_REASONS[status]}\r\n{extra}"
            if status != 200:
                head += "Content-Length: 0\r\nConnection: close\r\n"
            self.wfile.write(f"{head}\r\n".encode("latin-1"))
            self.wfile.flush()
            if upstream is None:
                return
            with upstream:
                back = threading.Thread(target=_pipe, args=(upstream, self.connection))
                back.start()
                _pipe(self.connection, upstream)
                back.join()

    return Handler


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv: list[str]) -> int:
    log, rest = Path(argv[0]), argv[1:]
    auth = None
    if rest[:1] == ["--auth"]:
        auth, rest = rest[1], rest[2:]
    routes: dict[str, tuple[str, int]] = {}
    for spec in rest:
        name, _, address = spec.partition("=")
        host, _, port = address.rpartition(":")
        routes[name] = (host, int(port))
    server = _Server(("127.0.0.1", 0), _handler(log, routes, auth))
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
