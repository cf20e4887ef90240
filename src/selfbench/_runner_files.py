"""Paths that decide how tests run, are collected or reported: no agent may change them.

One home for the rule: the verifier (`bundle/render_scripts.py`) leaves these paths out of the
agent's patch, and the audit refuses a gold patch that needs to change one, since its change
would be left out too. Patterns are `git apply --exclude` wildmatch patterns without
`FNM_PATHNAME` (`*` also matches `/`), the same semantics as `fnmatch.fnmatchcase`.

The project's own code is never a runner path: a directory or module named like a runner's
package (`pytest/`, `pluggy/`, `py.py`, …) that the base commit tracks is the project's (pytest's
and pluggy's own repositories), and only a new one is left out, as it would shadow the runner.
Installed and cached trees (`site-packages/`, `node_modules/`, a Cargo project's `target/`) and
runner configuration (`conftest.py`, `jest.config.*`) stay protected wherever they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import cache

from selfbench.runners import (
    build_directories,
    builds_in_cache,
    control_directories,
    control_files,
    manifest_keys,
    package_directories,
    package_files,
    project_paths,
    restored_by,
    shared_configuration_files,
)

__all__ = [
    "PACKAGE_DIRECTORIES",
    "PACKAGE_FILES",
    "PACKAGE_JSON_CONTROL_KEYS",
    "RESTORED_MANIFESTS",
    "RUNNER_CONTROL_PATTERNS",
    "SHARED_CONFIGURATION_FILES",
    "changes_build_control",
    "is_build_cache_project",
    "is_runner_control",
    "package_directory_names",
    "package_patterns",
    "runner_control_patterns",
    "runner_project",
    "tracked_prefixes",
]

_FILES = control_files()
"""Files that configure a runner or are loaded by it, at any depth: each runner's `control_files`
(pytest's configuration and plugins, Node runners' configuration and setup files, Cargo's and Go's
toolchain and build configuration), then Go's and Rust's test files (`compiled_tests`).

`pyproject.toml`, `setup.cfg` and `tox.ini` are not among them: they hold much besides pytest's
configuration, so the verifier restores only a changed pytest table or section (`evidence.py`);
nor are `go.mod` and `Cargo.toml`, restored when their replace/toolchain directives or their
targets, profiles, patches, build keys or paths change.
"""

_DIRECTORIES = (*control_directories(), ".git-hooks")
"""Directories that hold installed dependencies or caches, at any depth, tracked or not: each
runner's `control_directories`, and the repository's hooks."""

PACKAGE_DIRECTORIES = package_directories()
"""Directories named like a runner's package (or a virtual environment, or a build's output):
a new one would shadow the runner, while one the base tracks is the project's own code. A Cargo
project's `target` is its build cache, protected like `_DIRECTORIES`."""

PACKAGE_FILES = package_files()
"""Modules named like a runner's, protected unless the base tracks them (pytest's `src/py.py`)."""


SHARED_CONFIGURATION_FILES = shared_configuration_files()
"""Shared configuration files whose pytest part an agent may not change."""


def _at_any_depth(files: tuple[str, ...], directories: tuple[str, ...]) -> tuple[str, ...]:
    patterns: list[str] = []
    for name in files:
        patterns.extend((name, f"*/{name}"))
    for name in directories:
        patterns.extend((f"{name}/*", f"*/{name}/*"))
    return tuple(patterns)


RUNNER_CONTROL_PATTERNS = _at_any_depth(_FILES, _DIRECTORIES)
"""The patterns protected in every project, each file or directory name at the root and at any
depth."""
_BUILD_CACHE_PATTERNS = RUNNER_CONTROL_PATTERNS + _at_any_depth((), build_directories())


def runner_control_patterns(*, build_cache: bool) -> tuple[str, ...]:
    """The patterns protected whether or not the base tracks them (`target/` too in a Cargo
    project)."""
    return _BUILD_CACHE_PATTERNS if build_cache else RUNNER_CONTROL_PATTERNS


def is_build_cache_project(toolchains: Iterable[str]) -> bool:
    """The task builds with Cargo (its toolchains hold `rust`): `target/` is its build cache."""
    return builds_in_cache(toolchains)


def package_directory_names(*, build_cache: bool) -> tuple[str, ...]:
    """The directory names protected unless the base tracks the directory."""
    caches = build_directories() if build_cache else ()
    return tuple(name for name in PACKAGE_DIRECTORIES if name not in caches)


def package_patterns(*, build_cache: bool) -> tuple[str, ...]:
    """The patterns of runner-named packages and modules, protected unless the base tracks the
    directory or module (the verifier puts `--include` patterns for the tracked ones first)."""
    return _at_any_depth(PACKAGE_FILES, package_directory_names(build_cache=build_cache))


_GLOB_CHARS = frozenset("*?[")
_FORMS = ("*/{}/*", "{}/*", "*/{}", "*/*{}", "*/{}*", "{}*", "*{}")
"""The forms of a name at any depth that `_Patterns` answers by the path's components."""


def _is_literal(pattern: str) -> bool:
    return _GLOB_CHARS.isdisjoint(pattern)


def _form(pattern: str) -> tuple[str, str] | None:
    """The form of `pattern` among `_FORMS` and its name (no `/`, no glob character), or None."""
    for form in _FORMS:
        before, _, after = form.partition("{}")
        name = pattern[len(before) : len(pattern) - len(after)]
        if (
            len(pattern) > len(before) + len(after)
            and pattern.startswith(before)
            and pattern.endswith(after)
            and _is_literal(name)
            and "/" not in name
        ):
            return form, name
    return None


def _star_match(path: str, pieces: tuple[str, ...]) -> bool:
    """`path` matches the `*`-only pattern split at its stars into `pieces` (two or more), a
    star matching any run of characters, `/` too: the leftmost fit of each middle piece
    between the first and the last decides, as for any such pattern."""
    first, last = pieces[0], pieces[-1]
    end = len(path) - len(last)
    if end < len(first) or not path.startswith(first) or not path.endswith(last):
        return False
    at = len(first)
    for piece in pieces[1:-1]:
        at = path.find(piece, at, end)
        if at < 0:
            return False
        at += len(piece)
    return True


class _Patterns:
    """Whether a path matches any of some patterns, as `fnmatch.fnmatchcase` says, without
    compiling one: the audit asks this of every path of a gold patch, and one compiled
    alternation of the runner-control patterns cost each start-up 5-25 ms to compile.

    A pattern is a name at any depth (`conftest.py`, `*/conftest.py`, `node_modules/*`,
    `*/node_modules/*`, `jest.config.*`, `*/jest.config.*`, `*.pth`, `*/*.pth`), answered by the
    path's components (sets, and one `startswith` or `endswith` of a tuple), or any other
    `*`-only pattern, by its pieces, or one with a `?` or a `[`, by `fnmatchcase` itself. A name
    here holds no `/`, so `*/name` is the path's last component, `*/name*` a later component's
    start, `*/*name` the last component's end; `*` matching `/` too, `name*` and `*name` are the
    whole path's start and end.
    """

    __slots__ = (
        "_ends",
        "_exact",
        "_first",
        "_globs",
        "_inner",
        "_last",
        "_last_ends",
        "_later_starts",
        "_stars",
        "_starts",
    )

    def __init__(self, patterns: Iterable[str]) -> None:
        kinds: dict[str, set[str]] = {form: set() for form in _FORMS}
        exact: set[str] = set()
        stars: list[tuple[str, ...]] = []
        globs: list[str] = []
        for pattern in patterns:
            found = _form(pattern)
            if _is_literal(pattern):
                exact.add(pattern)
            elif found is not None:
                kinds[found[0]].add(found[1])
            elif "?" in pattern or "[" in pattern:
                globs.append(pattern)
            else:
                stars.append(tuple(pattern.split("*")))
        self._exact, self._first = exact, kinds["{}/*"]
        self._inner, self._last = kinds["*/{}/*"], kinds["*/{}"]
        self._starts, self._ends = tuple(kinds["{}*"]), tuple(kinds["*{}"])
        self._later_starts, self._last_ends = tuple(kinds["*/{}*"]), tuple(kinds["*/*{}"])
        self._stars, self._globs = tuple(stars), tuple(globs)

    def match(self, path: str) -> bool:
        """True when `path` matches one of the patterns."""
        if path in self._exact or path.startswith(self._starts) or path.endswith(self._ends):
            return True
        parts = path.split("/")
        if len(parts) > 1 and (
            parts[0] in self._first
            or parts[-1] in self._last
            or parts[-1].endswith(self._last_ends)
            or not self._inner.isdisjoint(parts[1:-1])
            or any(part.startswith(self._later_starts) for part in parts[1:])
        ):
            return True
        return any(_star_match(path, pieces) for pieces in self._stars) or any(
            fnmatchcase(path, pattern) for pattern in self._globs
        )


@cache
def _control(*, build_cache: bool) -> _Patterns:
    return _Patterns(runner_control_patterns(build_cache=build_cache))


@cache
def _packages(*, build_cache: bool) -> _Patterns:
    return _Patterns(package_patterns(build_cache=build_cache))


def tracked_prefixes(paths: Iterable[str]) -> frozenset[str]:
    """Every path and every directory above it: what `is_runner_control` takes as tracked."""
    prefixes: set[str] = set()
    for path in paths:
        parts = path.split("/")
        prefixes.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
    return frozenset(prefixes)


def _is_tracked_package(path: str, tracked: frozenset[str], *, build_cache: bool) -> bool:
    """`path` is a tracked runner-named module, or lies under a tracked runner-named directory
    (what the verifier's `--include` patterns let through)."""
    parts = path.split("/")
    names = package_directory_names(build_cache=build_cache)
    if parts[-1] in PACKAGE_FILES and path in tracked:
        return True
    return any(
        parts[end - 1] in names and "/".join(parts[:end]) in tracked for end in range(1, len(parts))
    )


def is_runner_control(
    path: str, tracked: frozenset[str] = frozenset(), *, build_cache: bool = False
) -> bool:
    """`path` (repository-relative, `/`-separated) is a runner-control path.

    `tracked` holds what the base commit tracks (`tracked_prefixes`): under a runner-named
    directory or module it tracks, a path is the project's own code. `build_cache`: the project is a
    Cargo project, whose `target/` is its build cache wherever it is.
    """
    if _control(build_cache=build_cache).match(path):
        return True
    if not _packages(build_cache=build_cache).match(path):
        return False
    return not _is_tracked_package(path, tracked, build_cache=build_cache)


# A runner's own package in its repository: pytest's `src/_pytest/`, pluggy's `src/pluggy/`,
# jest's `packages/jest-circus/`, vitest's `packages/vitest/`.
_RUNNER_PROJECT_RE = re.compile(rf"(?:.*/)?(?:{'|'.join(project_paths())})/.*")


def runner_project(paths: Iterable[str]) -> str | None:
    """The runner whose own code the paths change (`pytest`, `pluggy`, `jest`, `vitest`), or
    None: a path in a runner's package directory, not in an installed tree."""
    for path in paths:
        found = _RUNNER_PROJECT_RE.fullmatch(path)
        if found is not None and not _control(build_cache=False).match(path):
            return next(name for name in found.groups() if name)
    return None


# The manifests in the order the verifier has always listed them (its scripts stay as they were).
RESTORED_MANIFESTS: dict[str, tuple[str, ...]] = {
    manifest: restored_by(manifest) for manifest in ("go.mod", "Cargo.toml", "package.json")
}
"""Shared manifests whose runner-control part the verifier restores to the base when an agent
changes it (the whole file, `bundle/evidence.py`), and the runners for which it does."""

PACKAGE_JSON_CONTROL_KEYS = manifest_keys()
"""`package.json`'s keys that decide how jest or vitest run: jest's configuration, babel's (jest's
transform) and the scripts."""


# What the verifier restores in a changed `go.mod` (its replace and toolchain directives) or
# `Cargo.toml` (targets, profiles, patches, workspace, build keys, paths): `bundle/evidence.py`
# reads the files whole; the audit sees only a diff's lines, so it asks whether a changed line
# could be one of them (a section header in the diff's context is not needed to say so).
# The patterns here are compiled on their first use (`re` keeps them): only a gold patch changing
# one of these manifests needs them, and compiling them cost every audit's start-up.
_BUILD_CONTROL_LINES = {
    "go.mod": r"\s*(?:replace|toolchain)\b|.*=>",
    "Cargo.toml": (
        r"\s*\[+\s*(?:lib|test|bin|bench|example|workspace|replace|patch|profile)\b"
        r"|\s*\"?(?:build|autotests|autobins|autoexamples|autobenches|autolib|links|workspace"
        r"|harness|path|test|doctest|proc-macro|crate-type)\"?\s*="
        r"|.*[{,.]\s*\"?path\"?\s*="
    ),
}


def changes_build_control(path: str, section: bytes, runner: str | None) -> bool:
    """A patch's section for `path` changes a part of a `go.mod`, `Cargo.toml` or `package.json`
    that the verifier of a task run by `runner` restores to the base (so a gold patch changing it
    cannot be graded).

    The audit says so rather than have the verifier keep the gold patch's version of that part:
    an agent would then be graded on writing the gold's exact scripts, replace directives or
    targets, which the prompt does not give, and the part would again be the agent's to shape.
    A runner whose verifier does not restore the file (`RESTORED_MANIFESTS`) grades it as is.
    """
    name = path.rsplit("/", 1)[-1]
    if runner is None or runner not in RESTORED_MANIFESTS.get(name, ()):
        return False
    if name == "package.json":
        return _changes_package_json_control(section)
    pattern = _BUILD_CONTROL_LINES[name]
    for line in section.decode("utf-8", "replace").splitlines():
        if line.startswith(("+++", "---")) or not line.startswith(("+", "-")):
            continue
        if re.match(pattern, line[1:]):
            return True
    return False


# package.json, read from a diff's hunks, which show a few lines around each change: a line's
# top-level key is the nearest line above it, at the top level's indentation, that opens one.
_HUNK_RE = r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@"
_KEY_RE = r'(\s*)"((?:[^"\\]|\\.)*)"\s*:'
_CLOSING_RE = r"\s*[}\]]"
# `"name": "<range>"`: a package (lower case) and a version range or a protocol's source; no
# script, babel or jest setting reads so (`"dev": "next"`, `"maxWorkers": "50%"` and
# `"testURL": "http://…"` do not).
_VERSION = r"(?:[<>]=?|[~^=])?\s*v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[\w.-]+)?(?:\+[\w.-]+)?"


# Compiled on first use (a gold patch changing a `package.json`): compiling its nested
# repetitions cost every audit's start-up milliseconds.
@cache
def _dependency_re() -> re.Pattern[str]:
    return re.compile(
        rf'\s*"@?[a-z0-9][a-z0-9._~/-]*"\s*:\s*"(?:{_VERSION}(?:\s*(?:\|\||-|\s)\s*{_VERSION})*'
        r'|latest|(?:workspace|npm|file|link|portal|catalog|github|git\+\w+):[^"\s]*)"\s*,?\s*'
    )


_CONTROL_KEY_RE = "|".join(rf'"{key}"\s*:' for key in PACKAGE_JSON_CONTROL_KEYS)


def _hunk_sides(section: str) -> list[tuple[int, list[tuple[str, bool]]]]:
    """Each hunk's old and new side: its first line number and its lines, changed or not."""
    sides: list[tuple[int, list[tuple[str, bool]]]] = []
    old: list[tuple[str, bool]] = []
    new: list[tuple[str, bool]] = []
    in_hunk = False
    for line in section.splitlines():
        header = re.match(_HUNK_RE, line)
        if header is not None:
            old, new = [], []
            sides.extend(((int(header[1]), old), (int(header[2]), new)))
            in_hunk = True
        elif not in_hunk or line.startswith("\\"):
            continue
        elif line.startswith(" ") or line == "":
            old.append((line[1:], False))
            new.append((line[1:], False))
        elif line.startswith("-"):
            old.append((line[1:], True))
        elif line.startswith("+"):
            new.append((line[1:], True))
        else:
            in_hunk = False  # the next file's header, or the end of the hunks
    return sides


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _top_level_indent(sides: list[tuple[int, list[tuple[str, bool]]]]) -> int:
    """How far the root object's keys are indented: seen after the root's `{` when a hunk shows
    the file's first line, else the least of one indentation step (two spaces, one tab) and every
    key line's indentation."""
    keys: list[int] = []
    tabs = False
    for first, lines in sides:
        texts = [text for text, _ in lines if text.strip()]
        if first <= 1 and texts and texts[0].strip() == "{" and len(texts) > 1:
            return _indent(texts[1])
        tabs = tabs or any(text.startswith("\t") for text in texts)
        keys.extend(_indent(text) for text in texts if re.match(_KEY_RE, text))
    return min([1 if tabs else 2, *keys])


def _changes_package_json_control(section: bytes) -> bool:
    """A changed line of a `package.json` could be in one of `PACKAGE_JSON_CONTROL_KEYS`: it is
    unless the hunk shows it under (or as) another top-level key, or it names a version range.

    The audit has the diff, not the file: a line deep inside an object whose key the hunk's few
    lines of context do not show could be a script, so it counts, unless it is a dependency.
    """
    sides = _hunk_sides(section.decode("utf-8", "replace"))
    top = _top_level_indent(sides)
    for _, lines in sides:
        owner: str | None = None  # the top-level key the lines above are under, when seen
        for text, changed in lines:
            indent = _indent(text)
            key = re.match(_KEY_RE, text)
            if indent < top or not text.strip():
                owner = None
                if changed and re.search(_CONTROL_KEY_RE, text):
                    return True  # the root's own line: a one-line package.json
                continue
            if indent == top:
                closing = re.match(_CLOSING_RE, text) is not None
                line_owner = owner if closing else (key[2] if key else None)
                owner = None if closing else line_owner
            else:
                line_owner = owner
            if not changed:
                continue
            if line_owner is not None:
                if line_owner in PACKAGE_JSON_CONTROL_KEYS:
                    return True
            elif indent > top and not _dependency_re().fullmatch(text):
                return True
    return False
