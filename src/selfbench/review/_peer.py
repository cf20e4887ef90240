"""Which local user opened a TCP connection to 127.0.0.1: the uid of the client's socket (Linux).

The review page serves an export's held-out tests and the token that writes a clean export, and
any user of the host can connect to the loopback interface, so the server answers its owner
only. TCP carries no credentials (`SO_PEERCRED` is for Unix sockets), but the kernel lists every
TCP socket of the network namespace, with the uid that created it, in `/proc/net/tcp` and
`/proc/net/tcp6`, readable by every user. The client's socket is the entry whose local end is
the connection's remote end as the server sees it, and whose remote end is the server's: the
same pair of endpoints, swapped. An IPv6 socket connected to `::ffff:127.0.0.1` is listed in
`tcp6` under that IPv4-mapped address; it stands for the IPv4 one. A connection no entry (or
more than one uid) answers for has no known owner.

A line of either table, after the header line that names the columns (grammar; `HEX` is an
upper-case hexadecimal digit, fields separated by spaces):

    line     = SLOT ":" local remote STATE QUEUES TIMER RETRANSMITS UID *(field)
    local    = address ":" 4HEX                       ; the port, in the usual order
    remote   = address ":" 4HEX
    address  = 8HEX / 32HEX                           ; IPv4 (tcp) or IPv6 (tcp6)
    STATE    = 2HEX                                   ; 06 is TIME_WAIT
    UID      = 1*DIGIT

The kernel prints an address as 32-bit words, each the `%08X` of the word as it lies in
memory, so each word's four bytes are in the host's order (little-endian on x86 and arm64):
`0100007F` is 127.0.0.1 there.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path
from typing import NamedTuple, TypeAlias

__all__ = [
    "TCP_TABLES",
    "Endpoint",
    "TcpSocket",
    "find_owner",
    "parse_tcp_line",
    "parse_tcp_table",
    "peer_uid",
]

TCP_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
"""The kernel's TCP socket tables of this network namespace, IPv4 and IPv6."""

Endpoint: TypeAlias = tuple[IPv4Address | IPv6Address, int]
"""An address and a port; an IPv4-mapped IPv6 address is given as its IPv4 address."""

# Parsed by hand: no library reads the `uid` column. psutil parses these tables but reports a
# socket's process instead, found by scanning every process's descriptors, which an
# unprivileged owner cannot do for another user's processes; and the format is a fixed table.
_ENDPOINT = re.compile(r"(?P<address>[0-9A-F]{8}|[0-9A-F]{32}):(?P<port>[0-9A-F]{4})")
_SLOT = re.compile(r"[0-9]+:")
_STATE = re.compile(r"[0-9A-F]{2}")
_UID = re.compile(r"[0-9]+")
_TIME_WAIT = 0x06
"""A closed socket waiting out its last packets: the kernel lists it with uid 0, whoever owned
it, so it never names an owner."""


class TcpSocket(NamedTuple):
    """One line of a TCP table: the socket's two ends, TCP state and the uid that created it."""

    local: Endpoint
    remote: Endpoint
    state: int
    uid: int


def _endpoint(text: str, line: str) -> Endpoint:
    found = _ENDPOINT.fullmatch(text)
    if found is None:
        raise ValueError(f"not an address:port of /proc/net/tcp: {text!r} in {line!r}")
    hexadecimal = found["address"]
    words = (hexadecimal[start : start + 8] for start in range(0, len(hexadecimal), 8))
    packed = b"".join(int(word, 16).to_bytes(4, sys.byteorder) for word in words)
    return _plain(ip_address(packed)), int(found["port"], 16)


def _plain(address: IPv4Address | IPv6Address) -> IPv4Address | IPv6Address:
    """An IPv4-mapped IPv6 address as its IPv4 address; any other as it is."""
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_tcp_line(line: str) -> TcpSocket:
    """Parse one socket's line of `/proc/net/tcp` or `/proc/net/tcp6` (the module's grammar).

    Raises:
        ValueError: the line does not follow the grammar; the message quotes it.
    """
    fields = line.split()
    if len(fields) < 8 or _SLOT.fullmatch(fields[0]) is None:  # the fields up to UID
        raise ValueError(f"not a line of /proc/net/tcp: {line!r}")
    state, uid = fields[3], fields[7]
    if _STATE.fullmatch(state) is None or _UID.fullmatch(uid) is None:
        raise ValueError(f"not a state and uid of /proc/net/tcp: {state!r}, {uid!r} in {line!r}")
    local, remote = _endpoint(fields[1], line), _endpoint(fields[2], line)
    return TcpSocket(local, remote, int(state, 16), int(uid))


def parse_tcp_table(text: str) -> tuple[TcpSocket, ...]:
    """Parse a whole table: the first line names the columns, each other line is a socket.

    Raises:
        ValueError: a socket's line does not follow the grammar.
    """
    return tuple(parse_tcp_line(line) for line in text.splitlines()[1:] if line.strip())


def find_owner(sockets: Iterable[TcpSocket], *, client: Endpoint, server: Endpoint) -> int | None:
    """The uid of the client's socket of the connection `client` → `server`, or None when no
    listed socket (or more than one uid) answers for it."""
    uids = {
        entry.uid
        for entry in sockets
        if (entry.local, entry.remote) == (client, server) and entry.state != _TIME_WAIT
    }
    return uids.pop() if len(uids) == 1 else None


def _address_of(name: object) -> Endpoint:
    """A socket's address as `getsockname`/`getpeername` give it, for TCP over IPv4 or IPv6."""
    if not isinstance(name, tuple) or len(name) < 2:  # host, port[, flow, scope]
        raise ValueError(f"not an internet address: {name!r}")
    host, port = name[0], name[1]
    return _plain(ip_address(str(host).partition("%")[0])), int(port)


def _read_table(path: Path) -> tuple[TcpSocket, ...]:
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:  # no IPv6 in this kernel: no tcp6 table, and no sockets for it
        return ()
    return parse_tcp_table(text)


def peer_uid(connection: socket.socket, tables: Iterable[Path] = TCP_TABLES) -> int | None:
    """The uid of the local user whose socket is the other end of `connection`, an accepted
    TCP connection; None when it cannot be found (not TCP, not listed, the tables unreadable or
    not in the grammar, or no such tables on this system)."""
    try:
        client = _address_of(connection.getpeername())
        server = _address_of(connection.getsockname())
        sockets = [entry for path in tables for entry in _read_table(path)]
    except (OSError, ValueError):
        return None
    return find_owner(sockets, client=client, server=server)
