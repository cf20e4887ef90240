"""Git patches parsed from bytes (SPEC §3). Pure: no I/O.

Hand-written on purpose. Library parsers (unidiff, whatthepatch, patch-ng) decode to text first,
lose CRLF and non-UTF-8 bytes, mis-split `diff --git` headers whose unquoted paths hold spaces,
and count a removed line that reads `-- x` or an added `++ y` as a file header. Counting must
follow hunk structure, and must run at C speed on a 50 MB patch, so it works on the buffer: one
regex pass finds the lines that are neither changes nor context (section and hunk headers,
markers), three `bytes.count` calls check and count each hunk, and lines are walked in Python
only when a hunk is irregular.

Grammar (what `git diff --binary` and `git format-patch` emit; `git apply -p1` semantics)::

    patch    := section*                       (strict: the bytes start with "diff --git ")
    section  := "diff --git " NAME " " NAME LF header* body junk
    header   := ("old mode" | "new mode" | "deleted file mode" | "new file mode" | "index"
                 | "similarity index" | "dissimilarity index" | "copy from" | "copy to"
                 | "rename from" | "rename to" | "rename old" | "rename new") ... LF
    body     := (["--- " NAME LF "+++ " NAME LF] hunk+
                 | "GIT binary patch" ... | "Binary files" ... " differ")?
    hunk     := "@@ -" N ["," N] " +" N ["," N] " @@" ... LF line*   (until both counts are used)
    line     := (" " | "+" | "-") TEXT LF | "\\" TEXT LF | LF        (an empty line is context)
    junk     := any lines up to the next section                     (ignored, see below)

A NAME is a C-quoted string (`"a/x\\ty"`, octal escapes for other bytes) or raw bytes; the
first path component (`a/`, `b/`) is stripped. As in `git apply`: hunks follow each other with
nothing between them; lines after the last hunk, or after headers that change metadata (mode,
new, deleted, rename, copy), are junk and ignored, as a mail signature is; a section with no
body and no metadata change is an error, as is junk where a body should start.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from functools import partial
from posixpath import basename
from typing import Literal, NamedTuple, TypeVar

from selfbench._text import printable
from selfbench.errors import PatchError

__all__ = [
    "DEPENDENCY_MANIFESTS",
    "DOCUMENTATION_EXTENSIONS",
    "LOCKFILES",
    "FileChange",
    "Hunk",
    "NewLine",
    "NewSide",
    "Patch",
    "Status",
    "added_lines",
    "changed_hunks",
    "changes_no_files",
    "dependency_setup_patch",
    "display_path",
    "is_comment",
    "is_dependency_manifest",
    "is_git_patch",
    "is_lockfile",
    "new_side_hunks",
    "new_sides",
    "parse_patch",
    "unprefixed_path",
]

_T = TypeVar("_T")
Status = Literal["added", "deleted", "modified", "renamed", "copied", "mode-only", "binary"]

GIT_PATCH_MAGIC = b"diff --git "
DEPENDENCY_MANIFESTS = frozenset(
    {
        "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
        "pnpm-lock.yaml", "bun.lock", "bun.lockb", "deno.lock", "pyproject.toml", "uv.lock",
        "poetry.lock", "Pipfile", "Pipfile.lock", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock",
    }
)  # fmt: skip
DOCUMENTATION_EXTENSIONS = frozenset({".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc"})
"""The extensions of prose files: documentation, whose examples are no code a test runs or pins."""
LOCKFILES = frozenset(
    {
        "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock",
        "bun.lockb", "deno.lock", "uv.lock", "poetry.lock", "Pipfile.lock", "go.sum", "Cargo.lock",
    }
)  # fmt: skip
"""The manifests that record what the others resolve to (each one of `DEPENDENCY_MANIFESTS`)."""
# Counts of up to 18 digits: a longer one is malformed, and int() stays within its digit limit.
_HUNK_RE = re.compile(rb"@@ -\d{1,18}(?:,(\d{1,18}))? \+\d{1,18}(?:,(\d{1,18}))? @@")
# A line that is neither a change nor context (an empty, stripped context line counts here): the
# LF before it. A lookahead, so a run of such lines is found line by line.
_IRREGULAR_RE = re.compile(rb"\n(?=[^-+ ])")
# A hunk header's old count, new start and new count (`new_sides`).
_NEW_SIDE_RE = re.compile(rb"@@ -\d{1,18}(?:,(\d{1,18}))? \+(\d{1,18})(?:,(\d{1,18}))? @@")
_GIT_LINE = b"\n" + GIT_PATCH_MAGIC
_HEADER_KEYS = (
    b"old mode ", b"new mode ", b"deleted file mode ", b"new file mode ", b"index ",
    b"similarity index ", b"dissimilarity index ", b"copy from ", b"copy to ",
    b"rename from ", b"rename to ", b"rename old ", b"rename new ",
)  # fmt: skip
# Headers that name a path, and those that change something without a hunk.
_NAME_KEYS = frozenset(
    {b"rename from", b"rename to", b"rename old", b"rename new", b"copy from", b"copy to"}
)
_METADATA_KEYS = _NAME_KEYS | {b"deleted file mode", b"new file mode"}
_QUOTED_STOP_RE = re.compile(rb'["\\]')
_SHOWN = 200  # characters of a bad name an error message shows
_ESCAPES = {
    ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12,
    ord("r"): 13, ord('"'): 34, ord("\\"): 92,
}  # fmt: skip


class FileChange(NamedTuple):
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


class Patch(NamedTuple):
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


_COMMENT_PREFIXES = (b"//", b"/*", b"*", b"#", b">>>")


def is_comment(text: bytes) -> bool:
    """Whether a line of source is a comment line (or a doctest prompt) in the languages the
    toolchains run: what follows its indentation starts `//`, `/*`, `*`, `#` or `>>>`."""
    return text.lstrip().startswith(_COMMENT_PREFIXES)


def added_lines(data: bytes) -> str:
    """The text of the `+` lines inside the patch's hunks, comment lines left out (a usage
    example in a doc comment, `//=> 'foo-bar'`, is not code a test may pin)."""
    lines, in_hunk = [], False
    for line in data.split(b"\n"):
        if line.startswith(b"diff --git "):
            in_hunk = False
        elif line.startswith(b"@@ "):
            in_hunk = True
        elif in_hunk and line.startswith(b"+") and not is_comment(line[1:]):
            lines.append(line[1:].decode("utf-8", "replace"))
    return "\n".join(lines)


class NewLine(NamedTuple):
    """One line of a hunk's new side: its 1-based number in the file the patch leaves, its text
    (without the leading `+` or space and the line ending), and whether the patch adds it."""

    number: int
    text: bytes
    added: bool


class NewSide(NamedTuple):
    """One hunk's new side: the function context git writes after its header (`@@ -1,2 +1,3 @@
    def main(argv):` gives `def main(argv):`; empty when there is none) and its lines."""

    context: bytes
    lines: tuple[NewLine, ...]


def new_sides(section: bytes) -> tuple[tuple[NewLine, ...], ...]:
    """Each hunk's new side in one file section (`Patch.section`): its context and added
    lines, numbered from the hunk header's new start (`new_side_hunks`, without the headers'
    function context)."""
    return tuple(hunk.lines for hunk in new_side_hunks(section))


def new_side_hunks(section: bytes) -> tuple[NewSide, ...]:
    """Each hunk's new side in one file section (`Patch.section`): the function context of its
    header, and its context and added lines, numbered from the header's new start.

    Lenient, as a scan of hostile bytes needs: a hunk ends when its header's counts are used or
    at a line that is no hunk line, whatever follows up to the next hunk header is skipped, and
    nothing raises.
    """
    hunks: list[NewSide] = []
    current: list[NewLine] = []
    context = b""
    old = new = number = 0
    for raw in section.split(b"\n"):
        line = raw.removesuffix(b"\r")
        header = _NEW_SIDE_RE.match(line) if line.startswith(b"@@ ") else None
        if header is not None:
            if current:
                hunks.append(NewSide(context, tuple(current)))
            current, context = [], line[header.end() :].removeprefix(b" ")
            old = int(header[1] or b"1")
            new, number = int(header[3] or b"1"), int(header[2])
            continue
        if old <= 0 and new <= 0:
            continue
        kind = line[:1]
        if kind == b"+" and new > 0:
            current.append(NewLine(number, line[1:], added=True))
            number, new = number + 1, new - 1
        elif kind == b"-" and old > 0:
            old -= 1
        elif kind in (b" ", b"") and old > 0 and new > 0:
            current.append(NewLine(number, line[1:], added=False))
            number, old, new = number + 1, old - 1, new - 1
        elif kind != b"\\":
            old = new = 0  # no hunk line: the hunk is cut short here
    if current:
        hunks.append(NewSide(context, tuple(current)))
    return tuple(hunks)


class Hunk(NamedTuple):
    """One hunk's removed and added lines, in order, without their `-` or `+` and line ends."""

    removed: tuple[bytes, ...]
    added: tuple[bytes, ...]


def changed_hunks(section: bytes) -> tuple[Hunk, ...]:
    """Each hunk's removed and added lines in one file section (`Patch.section`); context
    lines are left out. Lenient, as `new_side_hunks` is: a hunk ends when its header's counts
    are used or at a line that is no hunk line, and nothing raises."""
    hunks: list[Hunk] = []
    removed: list[bytes] = []
    added: list[bytes] = []
    old = new = 0
    for raw in section.split(b"\n"):
        line = raw.removesuffix(b"\r")
        header = _HUNK_RE.match(line) if line.startswith(b"@@ ") else None
        if header is not None:
            if removed or added:
                hunks.append(Hunk(tuple(removed), tuple(added)))
            removed, added = [], []
            old, new = int(header[1] or b"1"), int(header[2] or b"1")
            continue
        kind = line[:1]
        if kind == b"-" and old > 0:
            removed.append(line[1:])
            old -= 1
        elif kind == b"+" and new > 0:
            added.append(line[1:])
            new -= 1
        elif kind in (b" ", b"") and old > 0 and new > 0:
            old, new = old - 1, new - 1
        elif kind != b"\\":
            old = new = 0  # no hunk line: the hunk is cut short here
    if removed or added:
        hunks.append(Hunk(tuple(removed), tuple(added)))
    return tuple(hunks)


def is_git_patch(data: bytes) -> bool:
    """A Git patch starts with the bytes `diff --git `."""
    return data.startswith(GIT_PATCH_MAGIC)


def display_path(path: str) -> str:
    """A path fit to print on one line: non-UTF-8 bytes and control characters as \\x escapes
    (`_text.printable`)."""
    return printable(path)


def changes_no_files(subject: str) -> str:
    """The one wording for a patch that names no path: `<subject> changes no files`."""
    return f"{subject} changes no files"


def is_dependency_manifest(path: str) -> bool:
    """Whether a path's basename is a dependency manifest or lockfile."""
    name = basename(path)
    return name in DEPENDENCY_MANIFESTS or fnmatchcase(name, "requirements*.txt")


def is_lockfile(path: str) -> bool:
    """Whether a path's basename is a lockfile (`LOCKFILES`)."""
    return basename(path) in LOCKFILES


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
    marks = _irregular_lines(data)
    starts = [mark for mark in marks if data.startswith(GIT_PATCH_MAGIC, mark)]
    files = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(data)
        try:
            files.append(_Section(data, start, end, marks, lenient=lenient).parse())
        except PatchError:
            if not lenient:
                raise
    return Patch(data, tuple(files))


def unprefixed_path(data: bytes, *, parsed: Patch | None = None) -> str | None:
    """The first path of a `diff --git` line that names it twice alike, else None.

    Git's own patches name each side with a prefix of its own (`a/x b/x`); a patch made with
    `--no-prefix` names `x x`, and `git apply -p1` would strip the path's first directory.
    `parsed`: the same bytes parsed strictly, whose sections start at exactly those lines, so
    they are not searched for again.
    """
    starts = _git_lines(data) if parsed is None else (change.start for change in parsed.files)
    for start in starts:
        stop = data.find(b"\n", start)
        rest = data[start + len(GIT_PATCH_MAGIC) : None if stop == -1 else stop].rstrip(b"\r")
        middle = len(rest) // 2
        halves = rest[:middle], rest[middle + 1 :]
        if len(rest) % 2 == 1 and rest[middle : middle + 1] == b" " and halves[0] == halves[1]:
            return _decode(halves[0])
    return None


def _git_lines(data: bytes) -> Iterator[int]:
    """Where each line starts that starts with `diff --git `, in order: found with `bytes.find`,
    which skips through the bytes far faster than a walk over every line."""
    if data.startswith(GIT_PATCH_MAGIC):
        yield 0
    newline = data.find(_GIT_LINE)
    while newline != -1:
        yield newline + 1
        newline = data.find(_GIT_LINE, newline + 1)


def _irregular_lines(data: bytes) -> list[int]:
    """Where each line starts that is not a change, context or empty: one pass at C speed.

    In a hunk region these are hunk headers and `\\ No newline` markers (and junk); elsewhere
    they are the `diff --git` lines and the extended headers.
    """
    first = [0] if data[:1] not in {b"", b"-", b"+", b" "} else []
    return first + [match.start() + 1 for match in _IRREGULAR_RE.finditer(data)]


def _line_number(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _unquote(text: bytes) -> tuple[bytes, bytes]:
    """Decode one C-quoted name at the start of `text`; return it and the rest after it."""
    out = bytearray()
    i = 1
    while (stop := _QUOTED_STOP_RE.search(text, i)) is not None:
        j = stop.start()
        out += text[i:j]
        if text[j] == 0x22:  # the closing quote
            return bytes(out), text[j + 1 :]
        escape = text[j + 1 : j + 2]
        octal = text[j + 1 : j + 4]
        if escape and escape[0] in _ESCAPES:
            out.append(_ESCAPES[escape[0]])
            i = j + 2
        elif len(octal) == 3 and all(48 <= b <= 55 for b in octal) and int(octal, 8) < 256:
            out.append(int(octal, 8))
            i = j + 4
        else:
            raise PatchError(f"bad escape in quoted path {_shown(text[: j + 2])}")
    raise PatchError(f"unterminated quoted path {_shown(text)}")


def _shown(text: bytes) -> str:
    shown = text.decode("utf-8", "backslashreplace")
    return shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "..."


def _decode(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


def _strip_prefix(name: bytes) -> str:
    """Drop the first path component, as `git apply -p1` does."""
    slash = name.find(b"/")
    if slash <= 0 or slash == len(name) - 1:
        raise PatchError(f"path without a/ or b/ prefix: {_decode(name)!r}")
    return _decode(name[slash + 1 :])


def _side_name(value: bytes) -> str | None:
    """The path a ---/+++ line names: None for /dev/null, else without its first component."""
    name = _file_name(value)
    return None if name == b"/dev/null" else _strip_prefix(name)


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

    def __init__(
        self, data: bytes, start: int, end: int, marks: list[int], *, lenient: bool
    ) -> None:
        self.data = data
        self.marks = marks
        self.lenient = lenient
        self.start = start
        self.end = end
        self.headers: dict[bytes, bytes] = {}
        self.names: dict[bytes, str] = {}  # "rename from" and the like, decoded
        self.sides: tuple[str | None, str | None] | None = None  # from the ---/+++ lines
        self.binary = False
        self.hunks = 0
        self.changed = 0

    def error(self, offset: int, what: str) -> PatchError:
        if self.lenient:  # never shown; counting lines for each of many bad sections is quadratic
            return PatchError(what)
        return PatchError(f"{what} at line {_line_number(self.data, offset)}")

    def next_line(self, position: int) -> tuple[bytes, int]:
        """The line at `position` without its LF (and a CR before it), and where the next starts."""
        newline = self.data.find(b"\n", position, self.end)
        stop = self.end if newline == -1 else newline
        line = self.data[position:stop]
        return line.removesuffix(b"\r"), stop + 1

    def parse(self) -> FileChange:
        first, position = self.next_line(self.start)
        rest = first[len(GIT_PATCH_MAGIC) :]
        names = self.decoded(self.start, lambda: _header_names(rest)) or (None, None)
        position = self.parse_headers(position)
        try:
            self.parse_body(position)
        except PatchError:
            if not self.lenient:
                raise
        return self.build(*names)

    def decoded(self, offset: int, decode: Callable[[], _T]) -> _T | None:
        """Names decoded from the line at `offset`; None (lenient only) when they are bad."""
        try:
            return decode()
        except PatchError as exc:
            if not self.lenient:
                raise self.error(offset, str(exc)) from exc
            return None

    def parse_headers(self, position: int) -> int:
        while position < self.end:
            line, after = self.next_line(position)
            key = next((k for k in _HEADER_KEYS if line.startswith(k)), None)
            if key is None:
                return position
            name, value = key.strip(), line[len(key) :]
            self.headers[name] = value
            if name in _NAME_KEYS:
                decoded = self.decoded(position, partial(_full_name, value))
                if decoded is not None:
                    self.names[name] = decoded
            position = after
        return position

    def parse_body(self, position: int) -> None:
        if position >= self.end:
            if not self.changes_metadata():
                raise self.error(self.start, "diff section changes nothing")
            return
        line, after = self.next_line(position)
        if line.startswith((b"GIT binary patch", b"Binary files ")):
            self.binary = True
            return
        if line.startswith(b"--- "):
            plus, after_plus = self.next_line(after)
            if not plus.startswith(b"+++ "):
                raise self.error(after, "expected a +++ line")
            self.sides = self.decoded(
                position, lambda: (_side_name(line[4:]), _side_name(plus[4:]))
            )
            self.parse_hunks(after_plus)
            return
        if line.startswith(b"@@ "):
            self.parse_hunks(position)
        elif not self.changes_metadata():  # else what follows is a signature or junk, ignored
            raise self.error(position, "unrecognized line in a diff header")

    def changes_metadata(self) -> bool:
        """Whether the headers alone change something: `git apply` accepts a section without
        hunks only then."""
        headers = self.headers
        if headers.keys() & _METADATA_KEYS:
            return True
        old_mode, new_mode = headers.get(b"old mode"), headers.get(b"new mode")
        return old_mode is not None and new_mode is not None and old_mode != new_mode

    def parse_hunks(self, position: int) -> None:
        """Count every hunk from the first header, at `position`, to the end of the section.

        The irregular lines split the region into hunks. A hunk holding only changes, context
        and `\\` markers is counted with three `bytes.count` calls; any other is walked.
        """
        data, end, marks = self.data, self.end, self.marks
        if position >= end or not data.startswith(b"@@ ", position):
            raise self.error(position, "expected a hunk header")
        region = marks[bisect_left(marks, position) : bisect_left(marks, end)]
        heads = [mark for mark in region if data.startswith(b"@@ ", mark)]
        if len(heads) == len(region) and self.count_plain_hunks(heads):
            return
        inner = self.inner_lines(region) if len(heads) < len(region) else {}
        stops = heads[1:]
        stops.append(end)
        for header_at, stop in zip(heads, stops, strict=True):
            match = _HUNK_RE.match(data, header_at, stop)
            if match is None:
                raise self.error(header_at, "malformed hunk header")
            old, new = map(int, match.groups(b"1"))
            body = data.find(b"\n", match.end(), stop) + 1 or stop
            self.hunks += 1
            markers = inner.get(header_at, 0)
            finished = self.count_hunk(body, stop, old, new, markers) if markers >= 0 else -1
            if finished == -1:
                finished = self.walk_hunk(body, stop, old, new)
            if finished < stop < end and not self.lenient:
                raise self.error(finished, "unexpected line after a hunk")

    def inner_lines(self, region: list[int]) -> dict[int, int]:
        """Per hunk header, the `\\` marker lines of its hunk, or -1 when it holds other lines."""
        data = self.data
        inner: dict[int, int] = {}
        header_at = region[0]
        for mark in region[1:]:
            if data.startswith(b"@@ ", mark):
                header_at = mark
            elif data[mark] == 0x5C and inner.get(header_at, 0) >= 0:
                inner[header_at] = inner.get(header_at, 0) + 1
            else:
                inner[header_at] = -1
        return inner

    def count_plain_hunks(self, heads: list[int]) -> bool:
        """Count, hunk by hunk, a section whose hunks hold only changes and context.

        The common case, done in a few comprehensions of C calls instead of a Python loop
        per hunk. False (nothing counted) when any hunk is not exactly what its header says;
        the caller then walks the hunks one by one to say which.
        """
        data, end = self.data, self.end
        matches = [_HUNK_RE.match(data, head, end) for head in heads]
        if None in matches:
            return False
        found = [match for match in matches if match is not None]
        olds = [int(match[1] or b"1") for match in found]
        news = [int(match[2] or b"1") for match in found]
        bodies = [data.find(b"\n", match.end(), end) + 1 or end for match in found]
        stops = [*heads[1:], end]
        lines = [data.count(b"\n", body, stop) for body, stop in zip(bodies, stops, strict=True)]
        if data[end - 1] != 0x0A:
            lines[-1] += 1
        contexts = [
            data.count(b"\n ", body - 1, stop) for body, stop in zip(bodies, stops, strict=True)
        ]
        for old, new, count, context in zip(olds, news, lines, contexts, strict=True):
            if context > min(old, new) or count - context != old + new - 2 * context:
                return False
        self.hunks = len(heads)
        self.changed = sum(lines) - sum(contexts)
        return True

    def count_hunk(self, body: int, stop: int, old: int, new: int, markers: int) -> int:
        """Count a regular hunk at C speed; return its end, or -1 when the counts disagree.

        The caller knows every line here starts with `-`, `+`, ` ` or is a `\\` marker (empty
        lines are irregular and walked), so the line count and the context count settle the
        rest: the changes are the other lines, and they must be exactly what the header says.
        """
        data = self.data
        lines = data.count(b"\n", body, stop)
        if body < stop and data[stop - 1] != 0x0A:
            lines += 1
        context = data.count(b"\n ", body - 1, stop)
        changes = lines - context - markers
        if context > min(old, new) or changes != old + new - 2 * context:
            return -1
        self.changed += changes
        return stop

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
        names = self.names
        old, new = (header_old, header_new) if self.sides is None else self.sides
        old = names.get(b"rename from", names.get(b"rename old", names.get(b"copy from", old)))
        new = names.get(b"rename to", names.get(b"rename new", names.get(b"copy to", new)))
        status = self.status()
        if status == "added":
            old = None
        elif status == "deleted":
            new = None
        if old is None and new is None:
            raise self.error(self.start, "cannot tell the file's path from its diff header")
        return FileChange(old, new, status, self.changed, self.binary, self.start, self.end)
