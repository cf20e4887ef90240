"""Hypothesis strategies for Git patches (file trees, their edits, and patch-like bytes) and for
the kernel's TCP socket tables."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address

from hypothesis import strategies as st

from selfbench._paths import unsafe_patch_path

__all__ = [
    "SAMPLE_PATCHES",
    "Edit",
    "FileSpec",
    "TcpLine",
    "Tree",
    "contents",
    "edits",
    "file_names",
    "mutated_patches",
    "patch_like",
    "tcp_lines",
    "trees",
]

# Characters git quotes (tab, newline, quote, backslash, non-ASCII) or splits badly (space, " b").
_NAME_CHARS = st.sampled_from([*"abcxyz019_.-", " ", "\t", "\n", '"', "\\", "ä", "日", "é"])
_SPECIAL_NAMES = st.sampled_from(
    ["-dash", "--x", "x b", "a b c", '"q"', "ünï", "tab\there", "end ", "package.json"]
)
# Lines that look like patch syntax once prefixed, and ordinary ones.
_SPECIAL_LINES = st.sampled_from(
    [
        b"-- ",
        b"--- a/x",
        b"++ y",
        b"+++ b/y",
        b"-",
        b"+",
        b"",
        b"@@ -1 +1 @@",
        b"diff --git a/x b/x",
        b"\\ No newline at end of file",
        b"GIT binary patch",
        b"\t indented",
    ]
)
_TEXT_LINES = st.binary(max_size=12).map(lambda raw: raw.replace(b"\n", b"").replace(b"\0", b""))


@dataclass(frozen=True, slots=True)
class FileSpec:
    """One file of a generated tree."""

    content: bytes
    executable: bool


Tree = dict[str, FileSpec]


@dataclass(frozen=True, slots=True)
class Edit:
    """One change to a tree. `kind` is modify, delete, rename, copy, chmod, binary or add."""

    kind: str
    index: int
    target: str
    content: bytes


def file_names() -> st.SearchStrategy[str]:
    """A path component git accepts, often one it quotes or one that starts with `-`."""
    plain = st.text(_NAME_CHARS, min_size=1, max_size=6)
    return st.one_of(_SPECIAL_NAMES, plain).filter(lambda name: not unsafe_patch_path(name))


def _paths() -> st.SearchStrategy[str]:
    return st.lists(file_names(), min_size=1, max_size=3).map("/".join)


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    """File content: text lines (LF or CRLF, patch-like or not, maybe unterminated) or binary."""
    kind = draw(st.sampled_from(["text", "text", "text", "empty", "binary"]))
    if kind == "empty":
        return b""
    if kind == "binary":
        return draw(st.binary(min_size=1, max_size=64)) + b"\0"
    lines = draw(st.lists(st.one_of(_SPECIAL_LINES, _TEXT_LINES), min_size=1, max_size=30))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    text = ending.join(lines)
    return text if draw(st.booleans()) else text + ending


def _without_conflicts(paths: list[str]) -> list[str]:
    """Drop paths that would need a file to be a directory too."""
    kept: list[str] = []
    for path in sorted(paths):
        if not any(path.startswith(k + "/") or k.startswith(path + "/") for k in kept):
            kept.append(path)
    return kept


@st.composite
def trees(draw: st.DrawFn) -> Tree:
    """A small tree: nested directories, odd names, text, CRLF, empty and binary files."""
    paths = _without_conflicts(draw(st.lists(_paths(), min_size=1, max_size=8, unique=True)))
    return {path: FileSpec(draw(contents()), draw(st.booleans())) for path in paths}


def edits(tree_size: int) -> st.SearchStrategy[list[Edit]]:
    """Changes to the files of a tree; `index` picks a file by position, modulo the tree size."""
    edit = st.builds(
        Edit,
        kind=st.sampled_from(["modify", "modify", "delete", "rename", "copy", "chmod", "binary"]),
        index=st.integers(0, max(tree_size - 1, 0)),
        target=_paths(),
        content=contents(),
    )
    added = st.builds(Edit, st.just("add"), st.just(0), _paths(), contents())
    return st.lists(st.one_of(edit, added), min_size=1, max_size=6)


# Real patches, as git writes them, to mutate.
SAMPLE_PATCHES = (
    (
        b"diff --git a/src/app.py b/src/app.py\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/src/app.py\n"
        b"+++ b/src/app.py\n"
        b"@@ -1,3 +1,3 @@ def main():\n"
        b" keep\n"
        b"--- removed\n"
        b"+++ added\n"
        b" keep\n"
        b"@@ -10 +10,2 @@\n"
        b"-old\r\n"
        b"+new\r\n"
        b"+more\r\n"
        b"\\ No newline at end of file\n"
    ),
    (
        b'diff --git "a/x y\\t.py" "b/x \\303\\244.py"\n'
        b"similarity index 90%\n"
        b'rename from "x y\\t.py"\n'
        b'rename to "x \\303\\244.py"\n'
        b'--- "a/x y\\t.py"\n'
        b'+++ "b/x \\303\\244.py"\n'
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
        b"diff --git a/bin.dat b/bin.dat\n"
        b"new file mode 100755\n"
        b"index 0000000..3333333\n"
        b"GIT binary patch\n"
        b"literal 3\n"
        b"KcmZQzWMT{e\n"
        b"\n"
        b"literal 0\n"
        b"HcmV?d00001\n"
        b"\n"
        b"diff --git a/mode.sh b/mode.sh\n"
        b"old mode 100644\n"
        b"new mode 100755\n"
    ),
    (
        b"diff --git a/a b/a\n"
        b"deleted file mode 100644\n"
        b"index 4444444..0000000\n"
        b"--- a/a\n"
        b"+++ /dev/null\n"
        b"@@ -1,2 +0,0 @@\n"
        b"-x\n"
        b"-y\n"
        b"-- \n"
        b"2.39.5\n"
        b"\n"
    ),
)

_PATCH_LINES = st.sampled_from(
    [
        b"diff --git a/f b/f",
        b'diff --git "a/q\\"x" "b/q\\"x"',
        b'diff --git "a/unterminated b/x',
        b"diff --git a/x y b/x y",
        b"diff --git nope",
        b"new file mode 100644",
        b"deleted file mode 100644",
        b"old mode 100644",
        b"new mode 100755",
        b"index 0000000..1111111",
        b"similarity index 50%",
        b"rename from a",
        b"rename to b",
        b'copy from "c\\1"',
        b"copy to d",
        b"--- a/f",
        b"+++ b/f",
        b"--- /dev/null",
        b"+++ /dev/null",
        b'--- "a/\\777"',
        b"@@ -1 +1 @@",
        b"@@ -0,0 +1,2 @@",
        b"@@ -1,2 +0,0 @@",
        b"@@ -9999999999999999999999 +1 @@",
        b"@@ -x +1 @@",
        b"@@ ",
        b"GIT binary patch",
        b"Binary files a/f and b/f differ",
        b"\\ No newline at end of file",
        b" context",
        b"-removed",
        b"+added",
        b"-- ",
        b"",
        b"\r",
    ]
)


def patch_like() -> st.SearchStrategy[bytes]:
    """Lines drawn from patch syntax, in any order, joined by LF or CRLF."""
    return st.builds(
        lambda lines, ending: ending.join(lines),
        st.lists(_PATCH_LINES, max_size=25),
        st.sampled_from([b"\n", b"\r\n"]),
    )


@st.composite
def mutated_patches(draw: st.DrawFn) -> bytes:
    """A real patch with a few bytes deleted, inserted, duplicated or truncated."""
    data = bytearray(draw(st.sampled_from(SAMPLE_PATCHES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "truncate"]))
        if kind == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "insert":
            data[at:at] = draw(st.one_of(st.binary(min_size=1, max_size=4), _PATCH_LINES))
        elif kind == "duplicate":
            data[at:at] = data[at : at + draw(st.integers(1, 40))]
        else:
            del data[at:]
    return bytes(data)


Address = IPv4Address | IPv6Address


@dataclass(frozen=True, slots=True)
class TcpLine:
    """A line of `/proc/net/tcp` (IPv4) or `/proc/net/tcp6` (IPv6) and what it lists."""

    text: str
    local: tuple[Address, int]
    remote: tuple[Address, int]
    state: int
    uid: int


def kernel_hex(address: Address) -> str:
    """An address as the kernel prints it in its TCP tables: 32-bit words, each the `%08X` of
    its four bytes read in the host's order (`0100007F` for 127.0.0.1 on a little-endian host)."""
    packed = address.packed
    words = (packed[start : start + 4] for start in range(0, len(packed), 4))
    return "".join(f"{int.from_bytes(word, sys.byteorder):08X}" for word in words)


_IPV4 = st.one_of(
    st.sampled_from([IPv4Address("127.0.0.1"), IPv4Address("0.0.0.0")]),  # noqa: S104 - a value
    st.ip_addresses(v=4),
)
_IPV6 = st.one_of(
    st.sampled_from([IPv6Address("::1"), IPv6Address("::"), IPv6Address("::ffff:127.0.0.1")]),
    st.ip_addresses(v=6),
    st.ip_addresses(v=4).map(lambda ip: IPv6Address(f"::ffff:{ip}")),  # an IPv4-mapped socket
)


@st.composite
def tcp_lines(draw: st.DrawFn) -> TcpLine:
    """A socket's line as the kernel's `tcp4_seq_show`/`tcp6_seq_show` print it, any slot,
    addresses, ports, state, uid and counters, padded or not."""
    addresses = draw(st.sampled_from([_IPV4, _IPV6]))
    local = (draw(addresses), draw(st.integers(0, 0xFFFF)))
    remote = (draw(addresses), draw(st.integers(0, 0xFFFF)))
    state, uid = draw(st.integers(0, 0xFF)), draw(st.integers(0, 2**32 - 1))
    counters = draw(st.lists(st.integers(0, 2**32 - 1), min_size=12, max_size=12))
    text = (
        f"{draw(st.integers(0, 99999)):4d}: {kernel_hex(local[0])}:{local[1]:04X} "
        f"{kernel_hex(remote[0])}:{remote[1]:04X} {state:02X} "
        f"{counters[0]:08X}:{counters[1]:08X} {counters[2] % 256:02X}:{counters[3]:08X} "
        f"{counters[4]:08X} {uid:5d} {counters[5]:8d} {counters[6]} {counters[7] % 8} "
        f"{counters[8]:016x} {counters[9]} {counters[10]} {counters[11]} 10 -1"
    )
    return TcpLine(text + " " * draw(st.integers(0, 40)), local, remote, state, uid)
