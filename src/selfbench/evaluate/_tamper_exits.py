"""The tamper scan's `process-exit` rule (`evaluate.tamper`): which files' exits it judges, the
lines of a hunk that are a program's entry, and why an added line ends the test run.

A file is a *program*, whose exits are how it ends (none is judged): a `__main__.py`, a `main.rs`
or `build.rs`, a file under a `bin/`, `cmd/` or `examples/` directory, a Go file whose package
clause is `package main`, or a file whose first line is a `#!` line (Rust's `#![attribute]` is
none). A file whose name is a test file's (`rules.is_test_only_path` of the name alone:
`test_x.py`, `conftest.py`, `x_test.go`, `x.test.js`) is a *test file*; another file under a test
directory (a fixture, a helper script) is not judged. Any other file is *library code* when its
lines shown say it is no program: a Go file's package clause, wherever a hunk shows it; any other
file's first line, but a Rust file's, which its path says (no Rust library starts `#!`). A file
whose lines shown do not say is not judged: it may be a script.

Library code breaks the rule on a line that exits (`os._exit`, `sys.exit`, `raise SystemExit`,
`process.exit`, `process.reallyExit`; Go's `os.Exit`, `syscall.Exit`, `unix.Exit`; Rust's
`std::process::exit`, `libc::exit`, `libc::_exit`), or that sets the exit status
(`process.exitCode` assigned or defined) to anything but a nonzero number, which cannot turn a
failed run into a pass; a test file, on a line that exits with status 0 (`0`, `None`, `False` or
none given) or sets it (`0`, `null`, `undefined`): an honest `TestMain` exits with `m.Run()`'s
status. Neither, on a line in a program's entry: a function named `main` or `cli` (`def main`,
`export function main`, `const main = async () =>`, `func main`, `fn main`), a top-level
`main().catch(...)`, or the block of `if __name__ == "__main__":`, `require.main === module` or
`import.meta.main` (blocks found by indentation in one pass, within what the hunk shows, the
function context git writes after its header standing above it). A command line's exit is how a
program ends; library code that exits ends the test run with the status it chooses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from posixpath import basename
from typing import Literal

from selfbench.patches import NewLine
from selfbench.rules import is_test_only_path

__all__ = ["Entries", "ExitCheck", "exit_check"]

_EXIT_WORDS = ("exit", "Exit")
_PROGRAM_NAMES = frozenset({"__main__.py", "main.rs", "build.rs"})
_PROGRAM_DIRECTORIES = frozenset({"bin", "cmd", "examples"})
_PACKAGE_RE = re.compile(rb"\s*package\s+(\w+)")
_EXIT_RE = re.compile(
    r"(?<![\w.$])(?:os\._exit|sys\.exit|process\.(?:exit|reallyExit))(?![\w$])"
    r"|\braise\s+SystemExit\b"
    r"|(?<![\w.])(?:os|syscall|unix)\.Exit(?=\s*\()"
    r"|(?<![\w:])(?:(?:::)?(?:std::)?process::exit|libc::_?exit)(?=\s*\()"
)
_EXIT_CODE_RE = re.compile(
    r"(?<![\w.$])process\s*(?:\.\s*exitCode|\[\s*['\"`]exitCode['\"`]\s*\])\s*(?:\?\?|\|\||&&)?="
    r"(?!=)"
    r"|\bObject\s*\.\s*defineProperty\s*\(\s*process\s*,\s*['\"`]exitCode['\"`]"
)
_END = r"\s*(?:[;,)}]|$)"
_FAILURE_RE = re.compile(rf"\s*-?[1-9][0-9]{{0,9}}{_END}")
_SUCCESS_CODE_RE = re.compile(rf"\s*(?:0|null|undefined){_END}")
_SUCCESS_CALL_RE = re.compile(r"\s*\(\s*(?:0|None|False)?\s*\)")
_CALL_RE = re.compile(r"\s*\(")
_ENTRY_RE = re.compile(
    r"""\s*(?:(?:async\s+)?def\s+(?:main|cli)\s*\("""
    r"""|(?:export\s+(?:default\s+)?)?(?:async\s+)?function\s*\*?\s*(?:main|cli)\s*\("""
    r"""|(?:export\s+)?(?:const|let|var)\s+(?:main|cli)\s*=\s*(?:async\b\s*)?"""
    r"""(?:function\b|\(|[\w$]+\s*=>)"""
    r"""|(?:main|cli)\s*\(\s*\)\s*\.\s*(?:catch|then)\s*\("""
    r"""|func\s+main\s*\("""
    r"""|(?:pub\s+)?(?:async\s+)?fn\s+main\s*\("""
    r"""|if\s+__name__\s*==\s*['"]__main__['"]"""
    r"""|if\s*\(\s*require\.main\s*===?\s*module\b"""
    r"""|if\s*\(\s*import\.meta\.main\b)"""
)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _entries(context: str, texts: Sequence[str]) -> list[bool]:
    """Whether each line of a hunk is in a program's entry: it opens one, or a line above it,
    less indented than everything between, does; the function context of the hunk's header
    stands above its first line, unindented. One pass, keeping the open lines' indentation."""
    opened: list[tuple[int, bool]] = (
        [(0, _ENTRY_RE.match(context.lstrip()) is not None)] if context else []
    )
    flags: list[bool] = []
    for text in texts:
        if text.strip():
            level = _indent(text)
            while opened and opened[-1][0] >= level:
                opened.pop()
            # matched without its indentation: `\s*` before each alternative would be tried
            # at every space of a deep one
            inside = bool(opened and opened[-1][1]) or _ENTRY_RE.match(text.lstrip()) is not None
            opened.append((level, inside))
        flags.append(bool(opened and opened[-1][1]))
    return flags


@dataclass(slots=True)
class Entries:
    """A hunk's lines in a program's entry (its header's function context, its lines' texts),
    worked out when a line first asks."""

    context: str
    texts: Sequence[str]
    flags: list[bool] | None = None

    def at(self, index: int) -> bool:
        if self.flags is None:
            self.flags = _entries(self.context, self.texts)
        return self.flags[index]


ExitCheck = Callable[[str, int, Entries], str | None]
"""Why an added line (its text, its index in the hunk, the hunk's entries) breaks the rule."""


def exit_check(path: str, lines: Iterable[NewLine], added: str) -> ExitCheck | None:
    """The check of a file's added lines (`added`, joined), by its path and the lines its hunks
    show; None when none of them can break the rule or the file's exits are not judged."""
    if not any(word in added for word in _EXIT_WORDS):
        return None
    kind = _kind(path, lines)
    if kind == "library":
        return _library_exit
    return _test_exit if kind == "test" else None


def _kind(path: str, lines: Iterable[NewLine]) -> Literal["library", "test"] | None:
    """Whether a file is library code or a test file (see the module); None for a program or a
    file not judged."""
    name = basename(path)
    if name in _PROGRAM_NAMES or _PROGRAM_DIRECTORIES.intersection(path.split("/")[:-1]):
        return None
    if is_test_only_path(path):
        return "test" if is_test_only_path(name) else None
    if path.endswith(".go"):
        clause = next((m for line in lines if (m := _PACKAGE_RE.match(line.text))), None)
        return "library" if clause is not None and clause[1] != b"main" else None
    first = next((line for line in lines if line.number == 1), None)
    if first is not None and first.text.startswith(b"#!") and not first.text.startswith(b"#!["):
        return None
    return "library" if first is not None or path.endswith(".rs") else None


def _library_exit(text: str, index: int, entries: Entries) -> str | None:
    """Why an added line of library code exits the process or sets its exit status, if it does
    outside an entry."""
    found = _EXIT_RE.search(text)
    code = _EXIT_CODE_RE.search(text) if found is None else None
    if found is not None:
        reason = f"exits the process in library code: {found[0].split()[-1]}"
    elif code is not None and not _FAILURE_RE.match(text, code.end()):
        reason = "sets the exit status in library code: process.exitCode"
    else:
        return None
    return None if entries.at(index) else reason


def _test_exit(text: str, index: int, entries: Entries) -> str | None:
    """Why an added line of a test file ends the run with status 0, if it does outside an
    entry."""
    found = next((m for m in _EXIT_RE.finditer(text) if _succeeds(text, m)), None)
    code = _EXIT_CODE_RE.search(text) if found is None else None
    if found is not None:
        reason = f"exits the process with status 0 in a test file: {found[0].split()[-1]}"
    elif code is not None and _SUCCESS_CODE_RE.match(text, code.end()):
        reason = "sets exit status 0 in a test file: process.exitCode"
    else:
        return None
    return None if entries.at(index) else reason


def _succeeds(text: str, found: re.Match[str]) -> bool:
    """Whether an exit gives status 0: called with 0 (`None`, `False`) or nothing, or a bare
    `raise SystemExit`."""
    if found[0].startswith("raise") and not _CALL_RE.match(text, found.end()):
        return True
    return _SUCCESS_CALL_RE.match(text, found.end()) is not None
