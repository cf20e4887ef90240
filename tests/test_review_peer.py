"""Who opened a loopback connection: the kernel's TCP tables, parsed, and real connections.

The parser is checked against lines printed the way the kernel prints them (any address, IPv4
or IPv6, in its host-order hexadecimal form) and against lines copied from a little-endian
host; the lookup against real connections of this process's uid and of another one.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from ipaddress import IPv4Address, IPv6Address, ip_address
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench.review._peer import (
    Endpoint,
    TcpSocket,
    find_owner,
    parse_tcp_line,
    parse_tcp_table,
    peer_uid,
)
from strategies import TcpLine, kernel_hex, tcp_lines

HEADER = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
    "inode"
)
LOOPBACK = IPv4Address("127.0.0.1")


def _plain(endpoint: tuple[IPv4Address | IPv6Address, int]) -> Endpoint:
    address, port = endpoint
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped, port
    return address, port


def _expected(line: TcpLine) -> TcpSocket:
    return TcpSocket(_plain(line.local), _plain(line.remote), line.state, line.uid)


# --- the parser --------------------------------------------------------------------------------


@given(tcp_lines())
def test_a_kernel_line_gives_its_endpoints_state_and_uid(line: TcpLine) -> None:
    assert parse_tcp_line(line.text) == _expected(line)


@given(st.lists(tcp_lines(), max_size=6))
def test_a_table_gives_every_socket_line_after_the_header(lines: list[TcpLine]) -> None:
    text = "\n".join([HEADER, *(line.text for line in lines)]) + "\n"
    assert parse_tcp_table(text) == tuple(_expected(line) for line in lines)


@given(st.text(max_size=200))
def test_any_text_is_a_socket_line_or_a_value_error(text: str) -> None:
    try:
        parse_tcp_line(text)
    except ValueError as error:
        assert repr(text) in str(error)  # noqa: PT017 - the message quotes the line


COUNTERS = "00000000:00000000 00:00000000 00000000"
TAIL = "       0 19689490 2 00000000e804b99f 20 0 0 10 -1"


@pytest.mark.skipif(sys.byteorder != "little", reason="lines copied from a little-endian host")
@pytest.mark.parametrize(
    ("line", "local", "remote", "state", "uid"),
    [
        (
            f"   0: 0100007F:1F90 00000000:0000 0A {COUNTERS}     0{TAIL}",
            ("127.0.0.1", 8080),
            ("0.0.0.0", 0),  # noqa: S104 - a value
            0x0A,
            0,
        ),
        (
            f"  12: 0100007F:C4B2 0100007F:1F90 01 {COUNTERS}  1000{TAIL}",
            ("127.0.0.1", 50354),
            ("127.0.0.1", 8080),
            0x01,
            1000,
        ),
        (
            (
                "   1: 00000000000000000000000001000000:C4B2 "
                f"00000000000000000000000001000000:9CA7 01 {COUNTERS} 61000{TAIL}"
            ),
            ("::1", 50354),
            ("::1", 40103),
            0x01,
            61000,
        ),
        (
            (
                "   2: 0000000000000000FFFF00000100007F:E132 "
                f"0000000000000000FFFF00000100007F:9099 06 {COUNTERS}     0        0 0 3 0000000090"
            ),
            ("127.0.0.1", 57650),
            ("127.0.0.1", 37017),
            0x06,
            0,
        ),
        (
            (
                "   3: B80D01200000000000FF000029834200:0050 "
                f"00000000000000000000000000000000:0000 0A {COUNTERS}   33{TAIL}"
            ),
            ("2001:db8::ff00:42:8329", 80),
            ("::", 0),
            0x0A,
            33,
        ),
    ],
    ids=["ipv4-listening", "ipv4-connected", "ipv6", "ipv4-mapped-time-wait", "ipv6-global"],
)
def test_lines_of_a_little_endian_host(
    line: str, local: tuple[str, int], remote: tuple[str, int], state: int, uid: int
) -> None:
    parsed = parse_tcp_line(line)
    assert parsed == TcpSocket(
        (ip_address(local[0]), local[1]), (ip_address(remote[0]), remote[1]), state, uid
    )


GOOD = "0100007F:1F90"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (f"0: {GOOD} {GOOD} 01 {COUNTERS}", "not a line of /proc/net/tcp: LINE"),
        (f"x: {GOOD} {GOOD} 01 {COUNTERS} 0", "not a line of /proc/net/tcp: LINE"),
        (
            f"0: {GOOD} {GOOD} 1 {COUNTERS} 0",
            "not a state and uid of /proc/net/tcp: '1', '0' in LINE",
        ),
        (
            f"0: {GOOD} {GOOD} 01 {COUNTERS} -1",
            "not a state and uid of /proc/net/tcp: '01', '-1' in LINE",
        ),
        (
            f"0: 0100007F:1F9 {GOOD} 01 {COUNTERS} 0",
            "not an address:port of /proc/net/tcp: '0100007F:1F9' in LINE",
        ),
        (
            f"0: {GOOD} 0100007:1F90 01 {COUNTERS} 0",
            "not an address:port of /proc/net/tcp: '0100007:1F90' in LINE",
        ),
        (
            f"0: +100007F:1F90 {GOOD} 01 {COUNTERS} 0",
            "not an address:port of /proc/net/tcp: '+100007F:1F90' in LINE",
        ),
        (
            f"0: 0100_07F:1F90 {GOOD} 01 {COUNTERS} 0",
            "not an address:port of /proc/net/tcp: '0100_07F:1F90' in LINE",
        ),
        (
            f"0: 0100007f:1F90 {GOOD} 01 {COUNTERS} 0",
            "not an address:port of /proc/net/tcp: '0100007f:1F90' in LINE",
        ),
    ],
    ids=[
        "too-few-fields",
        "slot",
        "state",
        "uid",
        "port",
        "short-address",
        "sign",
        "underscore",
        "lower-case",
    ],
)
def test_a_line_out_of_the_grammar_is_named(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=r".") as caught:
        parse_tcp_line(line)
    assert str(caught.value) == message.replace("LINE", repr(line))


# --- finding the client's socket ---------------------------------------------------------------

CLIENT = (LOOPBACK, 50354)
SERVER = (LOOPBACK, 8080)
ESTABLISHED, TIME_WAIT = 0x01, 0x06


@pytest.mark.parametrize(
    ("sockets", "owner"),
    [
        ([TcpSocket(CLIENT, SERVER, ESTABLISHED, 1000)], 1000),
        ([TcpSocket(SERVER, CLIENT, ESTABLISHED, 0)], None),  # the server's own end
        (
            [
                TcpSocket(SERVER, CLIENT, ESTABLISHED, 0),
                TcpSocket(CLIENT, SERVER, ESTABLISHED, 1000),
            ],
            1000,
        ),
        ([TcpSocket(CLIENT, SERVER, TIME_WAIT, 0)], None),  # closed: the kernel says uid 0
        (
            [TcpSocket(CLIENT, SERVER, ESTABLISHED, 1000), TcpSocket(CLIENT, SERVER, 0x08, 0)],
            None,
        ),
        ([TcpSocket(CLIENT, (LOOPBACK, 8081), ESTABLISHED, 1000)], None),
        ([], None),
    ],
    ids=["client", "server-end", "both-ends", "time-wait", "two-uids", "other-port", "none"],
)
def test_the_owner_is_the_one_uid_of_the_client_end(
    sockets: list[TcpSocket], owner: int | None
) -> None:
    assert find_owner(sockets, client=CLIENT, server=SERVER) == owner


# --- real connections --------------------------------------------------------------------------


@pytest.fixture(params=["ipv4", "ipv4-mapped", "ipv6"])
def connection(request: pytest.FixtureRequest) -> Iterator[socket.socket]:
    """The server's end of a real connection from this process: over IPv4, from an IPv6
    socket to an IPv4-mapped address (the client is listed in tcp6), or over IPv6."""
    family, host, client_host = {
        "ipv4": (socket.AF_INET, "127.0.0.1", "127.0.0.1"),
        "ipv4-mapped": (socket.AF_INET, "127.0.0.1", "::ffff:127.0.0.1"),
        "ipv6": (socket.AF_INET6, "::1", "::1"),
    }[request.param]
    try:
        listener = socket.create_server((host, 0), family=family)
    except OSError as error:
        pytest.skip(f"no {host} here to listen on: {error}")
    with listener, socket.socket(socket.AF_INET6 if ":" in client_host else socket.AF_INET) as c:
        c.connect((client_host, listener.getsockname()[1]))
        accepted, _ = listener.accept()
        with accepted:
            yield accepted


def test_a_connection_of_this_process_is_its_uid(connection: socket.socket) -> None:
    assert peer_uid(connection) == os.geteuid()


def test_another_users_connection_is_that_users_uid(other_uid: int) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(30)
        hold = 'exec 3<>"/dev/tcp/127.0.0.1/$1" && read -r _ <&3'
        client = subprocess.Popen(
            ["bash", "-c", hold, "client", str(listener.getsockname()[1])],
            user=other_uid,
            group=other_uid,
            extra_groups=[],
            cwd="/",
        )
        try:
            accepted, _ = listener.accept()
            with accepted:
                assert peer_uid(accepted) == other_uid
                accepted.sendall(b"done\n")
            assert client.wait(timeout=30) == 0
        finally:
            client.kill()
            client.wait()


def _line(entry: TcpSocket) -> str:
    (local, local_port), (remote, remote_port) = entry.local, entry.remote
    return (
        f"   0: {kernel_hex(local)}:{local_port:04X} {kernel_hex(remote)}:{remote_port:04X} "
        f"{entry.state:02X} {COUNTERS} {entry.uid:5d}{TAIL}"
    )


def _endpoint(name: tuple[str, int]) -> Endpoint:
    return _plain((ip_address(name[0]), name[1]))


@pytest.mark.parametrize("table", ["absent", "empty", "garbage", "only-the-server-end"])
def test_a_connection_the_tables_do_not_list_has_no_owner(
    tmp_path: Path, table: str, connection: socket.socket
) -> None:
    """The server's own end (the same endpoints, unswapped) never stands for the client's."""
    server, client = _endpoint(connection.getsockname()), _endpoint(connection.getpeername())
    path = tmp_path / "tcp"
    text = {
        "empty": f"{HEADER}\n",
        "garbage": f"{HEADER}\n   0: not a socket\n",
        "only-the-server-end": f"{HEADER}\n{_line(TcpSocket(server, client, ESTABLISHED, 0))}\n",
    }.get(table)
    if text is not None:
        path.write_text(text, encoding="ascii")
    assert peer_uid(connection, tables=[path]) is None
    assert peer_uid(connection) == os.geteuid()  # as the kernel's own tables list it


def test_a_socket_that_is_not_tcp_has_no_owner() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert peer_uid(left) is None
