"""Variants of a gold patch: the gold with parts reverted (ablation) or a file mutated (mutation).

Pure but for the two functions that read the repository (`gold_texts`, `mutant_patch`), which
work in a private index and object directory: the repository is never written.

A gold patch's *parts* are its file sections and, in a section with more than one hunk, each
hunk. Removing a hunk renumbers the new-side line numbers of the hunks after it, so the result
is a patch `git apply` accepts at the base, as the gold itself is.

A part is *implementation* unless its path is configuration, CI, docs, a changelog, an example,
a lockfile, vendored or generated, a dependency manifest or a test file: `classify_path`'s
classes, plus the rows of `_NOT_IMPLEMENTATION` for what it does not know.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from posixpath import basename
from typing import Final

from selfbench._git import DIFF_OPTIONS, git, patched_texts, scratch_index
from selfbench.mine.classify import classify_path
from selfbench.patches import FileChange, Patch, parse_patch

__all__ = [
    "Part",
    "changed_lines",
    "gold_parts",
    "gold_texts",
    "is_implementation",
    "mutant_patch",
    "without",
]

_CONFIGURATION_NAMES: Final = frozenset(
    {
        "tox.ini", "setup.cfg", "makefile", "gnumakefile", ".flake8", ".pylintrc", "pylintrc",
        "mypy.ini", ".mypy.ini", ".pre-commit-hooks.yaml", ".gitattributes", ".readthedocs.yml",
        ".readthedocs.yaml", "renovate.json", ".prettierrc",
        ".prettierignore", ".eslintignore", ".npmignore", ".nvmrc", ".python-version",
        ".ruff.toml", "ruff.toml", ".isort.cfg", ".markdownlint.json", ".yamllint",
        "noxfile.py", "justfile", ".bumpversion.cfg",
    }
)  # fmt: skip
_CONFIGURATION_RE: Final = re.compile(
    r"(?i)\.(eslintrc|prettierrc|stylelintrc|babelrc|swcrc)(\.[a-z]+)?"
    r"|(eslint|prettier|commitlint|lint-staged|stylelint)\.config\.[cm]?[jt]s"
)
_CI_PREFIXES: Final = (".gitlab/", ".azure-pipelines/", ".devcontainer/", ".husky/", ".vscode/")
_EXAMPLE_SEGMENTS: Final = frozenset(
    {"example", "examples", "typing-examples", "typing_examples", "benchmarks"}
)
_EXAMPLE_NAME_RE: Final = re.compile(r"(?i)typing[-_]?examples?(\.[a-z]+)?")


def _configuration(path: str) -> bool:
    name = basename(path)
    return name.lower() in _CONFIGURATION_NAMES or _CONFIGURATION_RE.fullmatch(name) is not None


def _ci(path: str) -> bool:
    return path.startswith(_CI_PREFIXES)


def _example(path: str) -> bool:
    folders = path.lower().split("/")[:-1]
    return bool(_EXAMPLE_SEGMENTS.intersection(folders)) or bool(
        _EXAMPLE_NAME_RE.fullmatch(basename(path))
    )


_NOT_IMPLEMENTATION: Final[tuple[tuple[str, Callable[[str], bool]], ...]] = (
    ("configuration", _configuration),
    ("ci", _ci),
    ("examples", _example),
)
"""What `classify_path` calls implementation but a gold's change to it is not: (kind, rule).
The repository's housekeeping (`.gitignore`, `.coveragerc` …) is its class `other` already."""


def is_implementation(path: str) -> bool:
    """Whether a change to `path` is the project's implementation (not config, docs, tests …)."""
    if classify_path(path)[0] != "implementation":
        return False
    return not any(rule(path) for _, rule in _NOT_IMPLEMENTATION)


# --- hunks ----------------------------------------------------------------------------------------

_HUNK_RE: Final = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@([^\n]*)")


@dataclass(frozen=True, slots=True)
class _Hunk:
    data: bytes
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    rest: bytes

    @property
    def header(self) -> str:
        return self.data.split(b"\n", 1)[0].decode("utf-8", "replace")

    def moved(self, delta: int) -> bytes:
        """The hunk with its new-side start for `delta` more lines before it on the new side."""
        if self.old_count == 0:
            start = self.old_start + delta + 1
        elif self.new_count == 0:
            start = self.old_start + delta - 1
        else:
            start = self.old_start + delta
        head = (
            f"@@ -{self.old_start},{self.old_count} +{start},{self.new_count} @@".encode()
            + self.rest
        )
        return head + self.data[self.data.find(b"\n") :] if b"\n" in self.data else head


def _split_section(section: bytes) -> tuple[bytes, list[_Hunk]]:
    """A file section's header (up to the first hunk) and its hunks."""
    starts = [m.start() for m in re.finditer(rb"(?m)^@@ -", section)]
    if not starts:
        return section, []
    hunks = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(section)
        data = section[start:end]
        match = _HUNK_RE.match(data)
        if match is None:
            return section, []
        old_count = 1 if match[2] is None else int(match[2])
        new_count = 1 if match[4] is None else int(match[4])
        hunks.append(_Hunk(data, int(match[1]), old_count, int(match[3]), new_count, match[5]))
    return section[: starts[0]], hunks


# --- parts ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a gold patch: a whole file section (`hunk` None) or one of its hunks."""

    path: str
    hunk: int | None
    """The hunk's 0-based index in its section; None for the whole file."""
    lines: str | None
    """The hunk's `@@ -a,b +c,d @@` header; None for a whole file."""
    implementation: bool

    @property
    def name(self) -> str:
        """`path` or `path#hunk`, as the quality record lists unneeded parts."""
        return self.path if self.hunk is None else f"{self.path}#{self.hunk}"


def gold_parts(gold_patch: bytes) -> tuple[Part, ...]:
    """Every file section of the gold patch, each followed by its hunks when it has several.

    Raises:
        PatchError: the gold patch does not parse.
    """
    patch = parse_patch(gold_patch)
    parts: list[Part] = []
    for change in patch.files:
        implementation = is_implementation(change.path)
        parts.append(Part(change.path, None, None, implementation))
        _, hunks = _split_section(patch.section(change))
        if len(hunks) > 1:
            parts.extend(
                Part(change.path, index, _header_of(hunk), implementation)
                for index, hunk in enumerate(hunks)
            )
    return tuple(parts)


def _header_of(hunk: _Hunk) -> str:
    match = re.match(r"@@ [^@]* @@", hunk.header)
    return match[0] if match else hunk.header


def without(gold_patch: bytes, parts: Iterable[Part]) -> bytes:
    """The gold patch with `parts` removed: a hunk from its section (the later hunks renumbered),
    a whole section when it is named or all its hunks are.

    Raises:
        PatchError: the gold patch does not parse.
    """
    patch = parse_patch(gold_patch)
    files = {part.path for part in parts if part.hunk is None}
    hunks = {(part.path, part.hunk) for part in parts if part.hunk is not None}
    out: list[bytes] = []
    position = 0
    for change in patch.files:
        out.append(gold_patch[position : change.start])
        position = change.end
        if change.path not in files:
            out.append(_section_without(patch, change, hunks))
    out.append(gold_patch[position:])
    return b"".join(out)


def _section_without(patch: Patch, change: FileChange, hunks: Collection[tuple[str, int]]) -> bytes:
    section = patch.section(change)
    header, parsed = _split_section(section)
    removed = {index for index in range(len(parsed)) if (change.path, index) in hunks}
    if not removed:
        return section
    if len(removed) == len(parsed):
        return b""
    kept, delta = [header], 0
    for index, hunk in enumerate(parsed):
        if index in removed:
            continue
        kept.append(hunk.moved(delta))
        delta += hunk.new_count - hunk.old_count
    return b"".join(kept)


def changed_lines(gold_patch: bytes) -> dict[str, frozenset[int]]:
    """Per file the gold leaves, the 1-based numbers of its added (or changed) lines.

    Raises:
        PatchError: the gold patch does not parse.
    """
    patch = parse_patch(gold_patch)
    found: dict[str, frozenset[int]] = {}
    for change in patch.files:
        if change.new_path is None or change.binary:
            continue
        lines: set[int] = set()
        for hunk in _split_section(patch.section(change))[1]:
            lines.update(_added(hunk))
        if lines:
            found[change.new_path] = frozenset(lines)
    return found


def _added(hunk: _Hunk) -> Iterable[int]:
    number = hunk.new_start
    for line in hunk.data.split(b"\n")[1:]:
        if line.startswith(b"+"):
            yield number
            number += 1
        elif line.startswith(b" ") or line == b"":
            number += 1


# --- the repository ---------------------------------------------------------------------------


def gold_texts(
    repo: Path, base: str, gold_patch: bytes, paths: Sequence[str | None] | None = None
) -> dict[str, str]:
    """The text of the files a patch leaves (`paths` of them, default every one it does not
    delete; a path it leaves absent is left out), read without touching `repo`
    (`_git.patched_texts`).

    Raises:
        GitError: the base commit is missing or the patch does not apply to it.
    """
    if paths is None:
        paths = [
            change.new_path
            for change in parse_patch(gold_patch, lenient=True).files
            if change.status != "deleted"
        ]
    texts = patched_texts(repo, base, gold_patch, [path for path in paths if path])
    return {path: text for path, text in texts.items() if text is not None}


def mutant_patch(repo: Path, base: str, gold_patch: bytes, path: str, mutated_text: str) -> bytes:
    """The gold patch with `path`'s new content replaced by `mutated_text`, as one git patch
    against `base` (the repository's objects read, nothing written to it).

    Raises:
        GitError: the base commit is missing, the gold does not apply, or `path` is not in it.
    """
    with scratch_index(repo, base, private_objects=True) as env:
        git(repo, "apply", "--cached", "-", stdin=gold_patch, env=env)
        entry = git(repo, "ls-files", "-s", "--", f":(literal){path}", env=env).split(b" ", 1)
        blob = git(repo, "hash-object", "-w", "--stdin", stdin=mutated_text.encode(), env=env)
        mode = entry[0].decode() if entry[0] else "100644"
        cacheinfo = f"{mode},{blob.decode().strip()},{path}"
        git(repo, "update-index", "--cacheinfo", cacheinfo, env=env)
        return git(repo, *DIFF_OPTIONS, "--no-renames", "--cached", base, env=env)
