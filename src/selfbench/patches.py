"""Git patches parsed from bytes (SPEC §3). Pure: no I/O.

Hand-written on purpose. Library parsers (unidiff, whatthepatch, patch-ng) decode to text first,
lose CRLF and non-UTF-8 bytes, mis-split `diff --git` headers whose unquoted paths hold spaces,
and count a removed line that reads `-- x` or an added `++ y` as a file header. Counting must
follow hunk structure, and must run at C speed on a 50 MB patch, so it works on the buffer
with `bytes.find`/`bytes.count` and walks lines in Python only when a hunk is irregular.

Grammar (what `git diff --binary` and `git format-patch` emit; `git apply -p1` semantics)::

    patch    := section*                       (strict: the bytes start with "diff --git ")
    section  := "diff --git " NAME " " NAME LF header* body
    header   := ("old mode" | "new mode" | "deleted file mode" | "new file mode" | "index"
                 | "similarity index" | "dissimilarity index" | "copy from" | "copy to"
                 | "rename from" | "rename to" | "rename old" | "rename new") ... LF
    body     := ("--- " NAME LF "+++ " NAME LF hunk+ | "GIT binary patch" ... | "Binary files" ...)?
    hunk     := "@@ -" N ["," N] " +" N ["," N] " @@" ... LF line*   (until both counts are used)
    line     := (" " | "+" | "-") TEXT LF | "\\" TEXT LF | LF        (an empty line is context)

A NAME is a C-quoted string (`"a/x\\ty"`, octal escapes for other bytes) or raw bytes; the
first path component (`a/`, `b/`) is stripped. Lines after a complete hunk up to the next
section are ignored, as `git apply` ignores a mail signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from posixpath import basename
from typing import Literal

from selfbench.errors import PatchError

__all__ = [
    "DEPENDENCY_MANIFESTS",
    "FileChange",
    "Patch",
    "Status",
    "dependency_setup_patch",
    "display_path",
    "is_dependency_manifest",
    "is_git_patch",
    "parse_patch",
]

Status = Literal["added", "deleted", "modified", "renamed", "copied", "mode-only", "binary"]

GIT_PATCH_MAGIC = b"diff --git "
DEPENDENCY_MANIFESTS = frozenset(
    {
        "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
        "pnpm-lock.yaml", "bun.lock", "bun.lockb", "deno.lock", "pyproject.toml", "uv.lock",
        "poetry.lock", "Pipfile", "Pipfile.lock", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock",
    }
)  # fmt: skip
_HUNK_RE = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_HEADER_KEYS = (
    b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ", b"index ",
    b"similarity index ", b"dissimilarity index ", b"copy from ", b"copy to ",
    b"rename from ", b"rename to ", b"rename old ", b"rename new ",
)  # fmt: skip
_ESCAPES = {
    ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
    ord("r"): 13, ord('"'): 34, ord("\\"): 92,
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file section of a patch. A path is None where the patch says /dev/null."""

    old_path: str | None
    new_path: str | None
    status: Status
    changed_lines: int
    binary: bool
    start: int
    end: int

    @property
    def paths(self) -> tuple[str, ...]:
        """The old and the new path, /dev/null left out, each once."""
        named = (self.old_path, self.new_path)
        return tuple(dict.fromkeys(p for p in named if p is not None))

    @property
    def path(self) -> str:
        """The path a reader would name this change by: the new one, else the old."""
        return self.new_path or self.old_path or ""


@dataclass(frozen=True, slots=True)
class Patch:
    """A parsed patch: its bytes and its file sections, in order."""

    data: bytes
    files: tuple[FileChange, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        """Every old and new path the patch names, in order of appearance, each once."""
        return tuple(dict.fromkeys(p for change in self.files for p in change.paths))

    @property
    def changed_lines(self) -> int:
        """The `+` and `-` lines inside hunks, over all sections."""
        return sum(change.changed_lines for change in self.files)

    def section(self, change: FileChange) -> bytes:
        """The bytes of one file section, exactly as they appear in the patch."""
        return self.data[change.start : change.end]


def is_git_patch(data: bytes) -> bool:
    """A Git patch starts with the bytes `diff --git `."""
    return data.startswith(GIT_PATCH_MAGIC)


def display_path(path: str) -> str:
    """A path fit to print: bytes that were not UTF-8 shown as \\x escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_dependency_manifest(path: str) -> bool:
    """Whether a path's basename is a dependency manifest or lockfile."""
    name = basename(path)
    return name in DEPENDENCY_MANIFESTS or fnmatchcase(name, "requirements*.txt")


def dependency_setup_patch(patch: Patch) -> bytes:
    """The manifest sections of a gold patch, in order, byte-exact; empty when there are none."""
    return b"".join(
        patch.section(change)
        for change in patch.files
        if any(is_dependency_manifest(path) for path in change.paths)
    )


def parse_patch(data: bytes, *, lenient: bool = False) -> Patch:
    """Parse a Git patch.

    Strict by default: the bytes must start with `diff --git ` and every section must be
    well formed. With `lenient=True` nothing raises: sections are found wherever a
    `diff --git ` line starts, and whatever part of a section parses is kept, which is what
    the static audit needs to judge any bytes it is given.

    Raises:
        PatchError: (strict only) the bytes are not a well-formed Git patch.
    """
    if not lenient and not is_git_patch(data):
        raise PatchError("not a Git patch: it does not start with 'diff --git '")
    starts = _section_starts(data)
    files = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        try:
            files.append(_Section(data, start, end, lenient=lenient).parse())
        except PatchError:
            if not lenient:
                raise
    return Patch(data, tuple(files))


def _section_starts(data: bytes) -> list[int]:
    starts = [0] if data.startswith(GIT_PATCH_MAGIC) else []
    position = data.find(b"\n" + GIT_PATCH_MAGIC)
    while position != -1:
        starts.append(position + 1)
        position = data.find(b"\n" + GIT_PATCH_MAGIC, position + 1)
    return starts


def _line_number(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _unquote(text: bytes) -> tuple[bytes, bytes]:
    """Decode one C-quoted name at the start of `text`; return it and the rest after it."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == ord('"'):
            return bytes(out), text[i + 1 :]
        if char == ord("\\"):
            escape = text[i + 1 : i + 2]
            if escape and escape[0] in _ESCAPES:
                out.append(_ESCAPES[escape[0]])
                i += 2
                continue
            octal = text[i + 1 : i + 4]
            if len(octal) == 3 and all(48 <= b <= 55 for b in octal) and int(octal, 8) < 256:
                out.append(int(octal, 8))
                i += 4
                continue
            raise PatchError(f"bad escape in quoted path {text.decode('utf-8', 'replace')}")
        out.append(char)
        i += 1
    raise PatchError(f"unterminated quoted path {text.decode('utf-8', 'replace')}")


def _decode(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


def _strip_prefix(name: bytes) -> str:
    """Drop the first path component, as `git apply -p1` does."""
    slash = name.find(b"/")
    if slash <= 0 or slash == len(name) - 1:
        raise PatchError(f"path without a/ or b/ prefix: {_decode(name)!r}")
    return _decode(name[slash + 1 :])


def _file_name(value: bytes) -> bytes:
    """The name on a ---/+++ line: quoted, or raw up to a tab (git adds one after spaces)."""
    if value.startswith(b'"'):
        return _unquote(value)[0]
    tab = value.find(b"\t")
    return value if tab == -1 else value[:tab]


def _full_name(value: bytes) -> str:
    """The name on a rename/copy line: a whole path, no prefix."""
    return _decode(_unquote(value)[0] if value.startswith(b'"') else value)


def _header_names(rest: bytes) -> tuple[str | None, str | None]:
    """The two names of a `diff --git` line; (None, None) when unquoted names are ambiguous."""
    if rest.startswith(b'"'):
        first, tail = _unquote(rest)
        if not tail.startswith(b" "):
            raise PatchError("malformed diff --git line")
        tail = tail[1:]
        second = _unquote(tail)[0] if tail.startswith(b'"') else tail
        return _strip_prefix(first), _strip_prefix(second)
    space = rest.find(b' "')
    if rest.endswith(b'"') and space > 0:
        return _strip_prefix(rest[:space]), _strip_prefix(_unquote(rest[space + 1 :])[0])
    middle = len(rest) // 2
    if len(rest) % 2 == 1 and rest[middle : middle + 1] == b" ":
        old, new = rest[:middle], rest[middle + 1 :]
        if old.partition(b"/")[2] == new.partition(b"/")[2]:
            return _strip_prefix(old), _strip_prefix(new)
    if rest.count(b" ") == 1:
        old, new = rest.split(b" ")
        return _strip_prefix(old), _strip_prefix(new)
    return None, None


class _Section:
    """Parses one `diff --git` section, data[start:end)."""

    def __init__(self, data: bytes, start: int, end: int, *, lenient: bool) -> None:
        self.data = data
        self.lenient = lenient
        self.start = start
        self.end = end
        self.headers: dict[bytes, bytes] = {}
        self.minus_name: bytes | None = None
        self.plus_name: bytes | None = None
        self.binary = False
        self.hunks = 0
        self.changed = 0

    def error(self, offset: int, what: str) -> PatchError:
        return PatchError(f"{what} at line {_line_number(self.data, offset)}")

    def next_line(self, position: int) -> tuple[bytes, int]:
        """The line at `position` without its LF (and a CR before it), and where the next starts."""
        newline = self.data.find(b"\n", position, self.end)
        stop = self.end if newline == -1 else newline
        line = self.data[position:stop]
        return line.removesuffix(b"\r"), stop + 1

    def parse(self) -> FileChange:
        first, position = self.next_line(self.start)
        header_old, header_new = _header_names(first[len(GIT_PATCH_MAGIC) :])
        position = self.parse_headers(position)
        try:
            self.parse_body(position)
        except PatchError:
            if not self.lenient:
                raise
        return self.build(header_old, header_new)

    def parse_headers(self, position: int) -> int:
        while position < self.end:
            line, after = self.next_line(position)
            key = next((k for k in _HEADER_KEYS if line.startswith(k)), None)
            if key is None:
                return position
            self.headers[key.strip()] = line[len(key) :]
            position = after
        return position

    def parse_body(self, position: int) -> None:
        if position >= self.end:
            return
        line, after = self.next_line(position)
        if line.startswith((b"GIT binary patch", b"Binary files ")):
            self.binary = True
            return
        if line.startswith(b"--- "):
            plus, after_plus = self.next_line(after)
            if not plus.startswith(b"+++ "):
                raise self.error(after, "expected a +++ line")
            self.minus_name = _file_name(line[4:])
            self.plus_name = _file_name(plus[4:])
            self.parse_hunks(after_plus)
            return
        if not line.startswith(b"@@ "):
            raise self.error(position, "unrecognized line in a diff header")
        self.parse_hunks(position)

    def parse_hunks(self, position: int) -> None:
        data, end = self.data, self.end
        if position >= end or not data.startswith(b"@@ ", position):
            raise self.error(position, "expected a hunk header")
        while position < end and data.startswith(b"@@ ", position):
            header, body = self.next_line(position)
            match = _HUNK_RE.match(header)
            if match is None:
                raise self.error(position, "malformed hunk header")
            old = 1 if match[2] is None else int(match[2])
            new = 1 if match[4] is None else int(match[4])
            following = data.find(b"\n@@ ", body - 1, end)
            stop = end if following == -1 else following + 1
            position = self.count_hunk(body, stop, old, new)
            self.hunks += 1
            if following == -1:
                return
            position = stop

    def count_hunk(self, start: int, stop: int, old: int, new: int) -> int:
        """Count a hunk's changed lines; return where its body ends."""
        data = self.data
        lines = data.count(b"\n", start, stop)
        if stop > start and data[stop - 1] != 0x0A:
            lines += 1
        minus = data.count(b"\n-", start - 1, stop)
        plus = data.count(b"\n+", start - 1, stop)
        context = data.count(b"\n ", start - 1, stop) + data.count(b"\n\n", start - 1, stop)
        markers = data.count(b"\n\\", start - 1, stop)
        regular = minus + plus + context + markers == lines
        if regular and minus + context == old and plus + context == new:
            self.changed += minus + plus
            return stop
        return self.walk_hunk(start, stop, old, new)

    def walk_hunk(self, position: int, stop: int, old: int, new: int) -> int:
        """The exact line walk, for a hunk followed by other lines (a signature, junk)."""
        data = self.data
        while old > 0 or new > 0:
            if position >= stop:
                raise self.error(position, "truncated hunk")
            kind = data[position]
            if kind == 0x2D and old > 0:  # "-"
                old -= 1
                self.changed += 1
            elif kind == 0x2B and new > 0:  # "+"
                new -= 1
                self.changed += 1
            elif kind in (0x20, 0x0A, 0x0D) and old > 0 and new > 0:  # context, maybe emptied
                old -= 1
                new -= 1
            elif kind != 0x5C:  # "\ No newline at end of file"
                raise self.error(position, "corrupt hunk")
            position = self.next_line(position)[1]
        if position < stop and data[position] == 0x5C:
            position = self.next_line(position)[1]
        return position

    def status(self) -> Status:  # noqa: PLR0911 - one return per status reads best
        headers = self.headers
        if b"rename from" in headers or b"rename old" in headers:
            return "renamed"
        if b"copy from" in headers:
            return "copied"
        if b"new file mode" in headers:
            return "added"
        if b"deleted file mode" in headers:
            return "deleted"
        if self.binary:
            return "binary"
        if self.hunks == 0 and b"new mode" in headers:
            return "mode-only"
        return "modified"

    def build(self, header_old: str | None, header_new: str | None) -> FileChange:
        headers = self.headers
        old = header_old
        new = header_new
        if self.minus_name is not None and self.plus_name is not None:
            old = None if self.minus_name == b"/dev/null" else _strip_prefix(self.minus_name)
            new = None if self.plus_name == b"/dev/null" else _strip_prefix(self.plus_name)
        source = headers.get(b"rename from", headers.get(b"rename old", headers.get(b"copy from")))
        target = headers.get(b"rename to", headers.get(b"rename new", headers.get(b"copy to")))
        if source is not None:
            old = _full_name(source)
        if target is not None:
            new = _full_name(target)
        status = self.status()
        if status == "added":
            old = None
        elif status == "deleted":
            new = None
        if old is None and new is None:
            raise self.error(self.start, "cannot tell the file's path from its diff header")
        return FileChange(old, new, status, self.changed, self.binary, self.start, self.end)
