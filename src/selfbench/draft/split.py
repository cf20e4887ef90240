"""Split a candidate's change into the held-out tests and the gold patch.

One `git diff --binary -M base completed` of the whole change is cut into its file sections, and
each section goes, byte for byte, to one part, by mining's classifier (`mine.classify`):

* **tests** (`test.patch`): test files and what they need beside them (fixtures, test data,
  `conftest.py`, snapshots under `__snapshots__/`), and any runner configuration the change
  touched (`jest.config.js`, `pytest.ini`, …): the audit refuses such a file in a gold patch,
  since the verifier leaves an agent's change to it out, and the tests are what it configures;
* **gold** (`gold.patch`): implementation files, dependency manifests and the repository's
  housekeeping (`.gitignore`, `.coveragerc` …: mining's tiers leave it out, but the gold is the
  change as merged, and the quality check's ablation moves out what no test needs);
* **left out**, each with its reason: docs, changelogs, CI, vendored or generated files,
  lockfiles outside SPEC §3's list, caches and installed files, and paths `git apply` refuses.

A rename whose two paths fall in different parts is diffed again without rename detection, as
a deletion and an addition, so neither patch names a path of the other. Concatenating a part's
sections gives exactly `git diff --binary -M base completed -- <its paths>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from posixpath import basename
from typing import Literal

from selfbench._git import DIFF_OPTIONS, git
from selfbench._paths import unsafe_patch_path
from selfbench._runner_files import is_runner_control, tracked_prefixes
from selfbench.errors import DraftError, GitError
from selfbench.mine.candidate import CandidateModel
from selfbench.mine.classify import classify_path, is_runnable_test
from selfbench.patches import FileChange, parse_patch
from selfbench.runners import build_cache_manifests

__all__ = ["SplitChange", "is_runnable_test", "split_change"]

Part = Literal["tests", "gold", "left-out"]

_SNAPSHOT_DIRECTORY = "__snapshots__"
_CACHES = (".pyc", ".pyo")


@dataclass(frozen=True, slots=True)
class SplitChange:
    """The candidate's change, split: held-out tests, gold, and what was left out and why."""

    test_patch: bytes
    gold_patch: bytes
    test_files: tuple[str, ...]
    """The test patch's files that hold tests a runner collects (not deleted, not fixtures)."""
    gold_files: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]
    """(path, why it is in neither patch)."""
    support_files: tuple[str, ...] = ()
    """The test patch's other files: fixtures, helpers, configuration, deletions."""


@dataclass(frozen=True, slots=True)
class _Base:
    """What the base commit tracks (`tracked_prefixes`), and whether it is a Cargo project."""

    tracked: frozenset[str]
    build_cache: bool


def _read_base(repo: Path, base: str) -> _Base:
    listed = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", base)
    paths = [path.decode("utf-8", "surrogateescape") for path in listed.split(b"\0") if path]
    cache = any(basename(path) in build_cache_manifests() for path in paths)
    return _Base(tracked_prefixes(paths), cache)


def _runner_control_part(path: str) -> tuple[Part, str]:
    """A runner-control path: configuration goes with the tests, caches and installs nowhere."""
    name = basename(path)
    if name.endswith(_CACHES) or not is_runner_control(name):
        return "left-out", "a cache or installed file"
    return "tests", "runner configuration"


def _part_of(path: str, base: _Base) -> tuple[Part, str]:
    """Which part a path belongs to, and for a left-out path why: a runner-named directory the
    base tracks is the project's own code (pytest's or pluggy's repository)."""
    if unsafe_patch_path(path):
        return "left-out", "a path git apply refuses"
    if is_runner_control(path, base.tracked, build_cache=base.build_cache):
        return _runner_control_part(path)
    file_class, kind = classify_path(path)
    if file_class == "tests" or (
        kind == "generated" and _SNAPSHOT_DIRECTORY in path.split("/")[:-1]
    ):
        return "tests", kind
    if file_class in ("implementation", "dependencies") or kind == "housekeeping":
        return "gold", file_class
    return "left-out", kind


def _section_part(change: FileChange, base: _Base) -> tuple[Part, str] | None:
    """The part of a section; None for a rename or copy whose two paths disagree."""
    parts = {_part_of(path, base) for path in change.paths}
    if len({part for part, _ in parts}) > 1:
        return None
    return _part_of(change.path, base)


def _verify_commit(repo: Path, sha: str, what: str, candidate: str) -> None:
    try:
        git(repo, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}")
    except GitError:
        raise DraftError(f"{candidate}: {what} commit {sha} is not in {repo}") from None


def _diff(repo: Path, base: str, completed: str, option: str, paths: Sequence[str] = ()) -> bytes:
    return git(repo, *DIFF_OPTIONS, option, base, completed, "--", *paths)


def _literal(paths: Sequence[str]) -> list[str]:
    return [f":(literal){path}" for path in paths]


def split_change(repo: Path, candidate: CandidateModel) -> SplitChange:
    """Cut the candidate's change into `test.patch`, `gold.patch` and the files left out.

    Raises:
        DraftError: a commit is not in the repository; the change has no test files or no
            implementation files.
        GitError: git failed.
    """
    base, completed = candidate.baseCommit, candidate.completedCommit
    _verify_commit(repo, base, "base", candidate.id)
    _verify_commit(repo, completed, "completed", candidate.id)
    tree = _read_base(repo, base)
    whole = parse_patch(_diff(repo, base, completed, "-M"), lenient=True)
    sections: dict[Part, list[bytes]] = {"tests": [], "gold": [], "left-out": []}
    files: dict[Part, list[str]] = {"tests": [], "gold": [], "left-out": []}
    deleted: set[str] = set()
    left_out: list[tuple[str, str]] = []
    crossing: list[str] = []
    for change in whole.files:
        found = _section_part(change, tree)
        if found is None:
            crossing.extend(change.paths)
            continue
        _place(found, whole.section(change), change, sections, files, left_out, deleted)
    if crossing:
        apart = parse_patch(_diff(repo, base, completed, "--no-renames", _literal(crossing)))
        for change in apart.files:
            found = _part_of(change.path, tree)
            _place(found, apart.section(change), change, sections, files, left_out, deleted)
    return _result(candidate.id, sections, files, left_out, deleted)


def _place(
    found: tuple[Part, str],
    section: bytes,
    change: FileChange,
    sections: dict[Part, list[bytes]],
    files: dict[Part, list[str]],
    left_out: list[tuple[str, str]],
    deleted: set[str],
) -> None:
    part, why = found
    if part == "left-out":
        left_out.append((change.path, why))
        return
    sections[part].append(section)
    files[part].append(change.path)
    if change.new_path is None:
        deleted.add(change.path)


def _key(path: str) -> bytes:
    """git's order of paths in a diff: by their bytes."""
    return path.encode("utf-8", "surrogateescape")


def _ordered(sections: list[bytes], paths: list[str]) -> tuple[bytes, tuple[str, ...]]:
    """Sections in path order, as one `git diff -- <paths>` prints them."""
    pairs = sorted(zip(paths, sections, strict=True), key=lambda pair: _key(pair[0]))
    return b"".join(section for _, section in pairs), tuple(path for path, _ in pairs)


def _result(
    candidate: str,
    sections: dict[Part, list[bytes]],
    files: dict[Part, list[str]],
    left_out: list[tuple[str, str]],
    deleted: set[str],
) -> SplitChange:
    if not files["tests"]:
        raise DraftError(f"{candidate}: the change has no test files to hold out")
    if not files["gold"]:
        raise DraftError(f"{candidate}: the change has no implementation files for a gold patch")
    tests, test_paths = _ordered(sections["tests"], files["tests"])
    gold, gold_paths = _ordered(sections["gold"], files["gold"])
    runnable = tuple(p for p in test_paths if p not in deleted and is_runnable_test(p))
    support = tuple(p for p in test_paths if p not in runnable)
    return SplitChange(
        test_patch=tests,
        gold_patch=gold,
        test_files=runnable,
        gold_files=gold_paths,
        left_out=tuple(sorted(left_out, key=lambda item: _key(item[0]))),
        support_files=support,
    )
