"""Byte relays of the agent phase's allow-list: standard library only, so the same file runs as
the host's relay (imported by `selfbench.evaluate.egress`) and, inside the sandbox, as the
forwarder a harness's interpreter runs as root (`python3 _forward.py READY ADDRESS:PORT:SOCKET
...`): each loopback `ADDRESS:PORT` of the phase's own network namespace leads to one Unix
socket, whose other end the host connects to one allowed host and port.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 16

Connect = Callable[[], socket.socket]
"""Opens the upstream end of one relayed connection."""
Admit = Callable[[socket.socket], Callable[[], None] | None]
"""Admits one accepted connection: the function that frees its place once it has ended, or None
when it is refused (the admitter has told the client why, if it can, and closes nothing)."""


def pipe(source: socket.socket, target: socket.socket) -> None:
    """Copy `source` to `target` until `source` ends, then end `target`'s writing side."""
    with contextlib.suppress(OSError):
        while data := source.recv(_CHUNK):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _nothing() -> None:
    return None


def splice(
    client: socket.socket, upstream: socket.socket, done: Callable[[], None] = _nothing
) -> None:
    """Relay both ways between two connected sockets (a thread each way); both are closed once
    both directions have ended, and then `done` is called."""

    def both() -> None:
        try:
            back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
            back.start()
            pipe(client, upstream)
            back.join()
        finally:
            client.close()
            upstream.close()
            done()

    try:
        threading.Thread(target=both, daemon=True).start()
    except RuntimeError:  # no thread to be had: the connection ends here
        client.close()
        upstream.close()
        done()


def serve(listener: socket.socket, connect: Connect, admit: Admit | None = None) -> None:
    """Accept on `listener` until it is closed; splice each connection to a new `connect()`,
    made in a thread of its own (a proxy's handshake holds up no other connection; one that
    cannot be made is closed). With `admit`, a connection it refuses is closed at once, before
    any thread is started for it."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        done = admit(client) if admit is not None else _nothing
        if done is None:
            client.close()
            continue
        try:
            threading.Thread(target=_open, args=(client, connect, done), daemon=True).start()
        except RuntimeError:  # no thread to be had: refused, its place freed
            client.close()
            done()


def _open(client: socket.socket, connect: Connect, done: Callable[[], None] = _nothing) -> None:
    upstream: socket.socket | None = None
    try:
        upstream = connect()
    except OSError:
        return
    finally:
        if upstream is None:  # refused, failed, or raised: its place is free again
            client.close()
            done()
    splice(client, upstream, done)


def _unix(path: str) -> Connect:
    def connect() -> socket.socket:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(path)
        return upstream

    return connect


def main(argv: list[str]) -> int:
    """The in-sandbox forwarder: listen on each `ADDRESS:PORT`, write `READY`, serve forever."""
    ready, specs = argv[0], argv[1:]
    threads = []
    for spec in specs:
        address, port, path = spec.split(":", 2)
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, int(port)))
        listener.listen(64)
        threads.append(threading.Thread(target=serve, args=(listener, _unix(path))))
    for thread in threads:
        thread.start()
    Path(ready).write_text("ready\n", encoding="ascii")
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
