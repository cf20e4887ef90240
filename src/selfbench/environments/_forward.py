"""Byte relays of a sandbox's allow-list: standard library only, so the same file runs as the
host's relay (imported by `selfbench.environments.egress`) and as the forwarder in the sandbox's
own network namespace: each loopback `ADDRESS:PORT` there leads to one Unix socket, whose other
end the host connects to one allowed host and port.

* `python3 _forward.py READY ADDRESS:PORT:SOCKET ...`: the agent phase's, run as its root by a
  harness's interpreter: listen, write the file `READY`, serve until killed;
* `python3 -I -S _forward.py --run ADDRESS:PORT:SOCKET ... -- COMMAND ...`: an author
  command's, run by selfbench's interpreter in a new network namespace (`unshare --net`) with
  the right to bind any port, outside the command's sandbox (which cannot see the sockets):
  bring the namespace's loopback up, listen, then run `COMMAND` (the sandbox, which shares the
  namespace) and exit with its status (128 + N when signal N ended it).
"""

from __future__ import annotations

import contextlib
import fcntl
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

_CHUNK = 1 << 16
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = "16sh22x"
"""`struct ifreq` as these two requests use it: the interface's name, its flags, padding."""

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
            # the place is freed before the ends close: a peer that sees them close may
            # connect again at once
            done()
            client.close()
            upstream.close()

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


def _listen(spec: str) -> tuple[socket.socket, Connect]:
    """A listener on the spec's `ADDRESS:PORT` and the connector to its `SOCKET`."""
    address, port, path = spec.split(":", 2)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, int(port)))
    listener.listen(64)
    return listener, _unix(path)


def _loopback_up() -> None:
    """Bring the network namespace's loopback interface up (a new namespace's is down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as control:
        request = struct.pack(_IFREQ, b"lo", 0)
        flags = struct.unpack(_IFREQ, fcntl.ioctl(control, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(control, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))


def run(argv: list[str]) -> int:
    """The author's forwarder (`SPEC ... -- COMMAND ...`): loopback up, a listener per spec,
    then `COMMAND`'s exit status (128 + N for signal N); 1 when it cannot listen."""
    cut = argv.index("--")
    try:
        _loopback_up()
        served = [_listen(spec) for spec in argv[:cut]]
    except OSError as exc:
        sys.stderr.write(f"selfbench: the allow-list's forwarder cannot listen: {exc}\n")
        return 1
    for listener, connect in served:
        threading.Thread(target=serve, args=(listener, connect), daemon=True).start()
    code = subprocess.call(argv[cut + 1 :])
    return 128 - code if code < 0 else code


def main(argv: list[str]) -> int:
    """The agent phase's forwarder: listen on each `ADDRESS:PORT`, write `READY`, serve
    forever; with `--run`, the author's (`run`)."""
    if argv[:1] == ["--run"]:
        return run(argv[1:])
    ready, specs = argv[0], argv[1:]
    threads = []
    for spec in specs:
        listener, connect = _listen(spec)
        threads.append(threading.Thread(target=serve, args=(listener, connect)))
    for thread in threads:
        thread.start()
    Path(ready).write_text("ready\n", encoding="ascii")
    for thread in threads:
        thread.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
