"""Which of a Python project's files and lines say what its tests need under one Python. Pure.

* requirements files, by their names: `requirements-test.txt`, `test_requirements.txt`,
  `requirements/tests.txt`, `tests/requirements.txt` (every one named only for the tests), else
  one named for them and more (`requirements/tests-min.txt`), else one for development
  (`requirements-dev.txt`, `requirements/dev.txt`); never one naming another Python (`-py27`);
* `tox.ini`'s `[testenv] deps` lines: the unconditional ones, and the factor-conditional ones
  (`py27: ipython<6`, `py{27,36}-django22: x`, `!py27: y`) whose condition holds in an
  environment of that Python alone, never every factor's pin flattened onto one line.

A file name or a line is the repository's, hostile as any: these only choose among them; the
caller quotes what it passes to a shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["python_factor", "requirement_files", "tox_lines"]

_REQUIREMENTS_DIR = "requirements"
_REQUIREMENTS_WORDS = frozenset({"requirements", "requirement", "reqs"})
_TEST_WORDS = frozenset({"test", "tests", "testing"})
_DEV_WORDS = frozenset({"dev", "develop", "development"})
_FILE_RE = re.compile(r"\w[\w.-]*\.txt")
_FACTOR_RE = re.compile(r"([\w{}.!,-]+):\s+(\S.*)")
_PYTHON_FACTOR_RE = re.compile(r"py(?:thon)?(?:(\d)\.?(\d+)?)?")
_BRACES_RE = re.compile(r"\{([^{}]*)\}")
_MAX_FACTORS = 64
"""The most alternatives one tox condition expands to (`py{27,36}-django{22,32}` is four)."""


def requirement_files(paths: Iterable[str], workdir: str, version: str) -> list[str]:
    """Of a commit's `paths`, the test requirement files at `workdir` (relative to it), for
    Python `version` (`3.12`): every one named only for the tests, else the first of the best
    rank found (`_requirements_rank`)."""
    prefix = "" if workdir == "." else f"{workdir}/"
    ranked: dict[int, list[str]] = {}
    for path in paths:
        name = path.removeprefix(prefix) if path.startswith(prefix) else ""
        rank = _requirements_rank(name, version)
        if rank is not None:
            ranked.setdefault(rank, []).append(name)
    if not ranked:
        return []
    best = min(ranked)
    return ranked[best] if best == 0 else ranked[best][:1]


def _requirements_rank(name: str, version: str) -> int | None:
    """A requirements file's rank by its name (relative to the workdir): 0 named only for the
    tests (`requirements-test.txt`, `test_requirements.txt`, `requirements/tests.txt`,
    `tests/requirements.txt`, `requirements-tests-py3.txt`), 1 for them and more (`tests-min`),
    2 only for development (`requirements-dev.txt`, `requirements/dev.txt`: they often pull in
    linters and docs), 3 for it and more; None for any other file or one naming another Python."""
    if name == "tests/requirements.txt":
        return 0
    folder, _, base = name.rpartition("/")
    if folder not in ("", _REQUIREMENTS_DIR) or not _FILE_RE.fullmatch(base):
        return None
    words = set(re.split(r"[-_.]+", base.removesuffix(".txt").lower()))
    if not folder and not words & _REQUIREMENTS_WORDS:
        return None
    pythons = {word for word in words if python_factor(word, version) is not None}
    if not all(python_factor(word, version) for word in pythons):
        return None
    rest = words - _REQUIREMENTS_WORDS - pythons
    for rank, kind in enumerate((_TEST_WORDS, _DEV_WORDS)):
        if rest & kind:
            return 2 * rank + (not rest <= kind)
    return None


def tox_lines(deps: str, version: str) -> tuple[list[str], bool]:
    """The lines of a tox `deps` value that hold under Python `version`, comments and factor
    conditions removed, and whether any line had a condition."""
    found: list[str] = []
    factored = False
    for raw in deps.splitlines():
        line = raw.split("#", 1)[0].strip()
        conditional = _FACTOR_RE.fullmatch(line)
        if conditional is not None:
            factored = True
            line = conditional[2] if _factors_hold(conditional[1], version) else ""
        if line:
            found.append(line)
    return found, factored


def python_factor(factor: str, version: str) -> bool | None:
    """Whether a tox factor (`py27`, `py3`, `py312`, `py3.12`) names Python `version`; None for
    a factor naming no CPython (`django22`, `lint`, `pypy3`)."""
    match = _PYTHON_FACTOR_RE.fullmatch(factor)
    if match is None:
        return None
    major, minor = version.split(".")
    return match[1] in (None, major) and match[2] in (None, minor)


def _factors_hold(condition: str, version: str) -> bool:
    """Whether a tox condition (`py27,py36`, `py{27,36}-django22`, `!py27`) holds in the
    environment the tests run in: some alternative whose every factor does, a Python factor when it
    names `version`, any other factor never (that environment is one of Python's alone), a negated
    factor when the factor does not."""
    for alternative in _alternatives(condition):
        factors = [factor for factor in alternative.split("-") if factor]  # `py3{-cov,}`
        held = bool(factors)
        for factor in factors:
            negated = factor.startswith("!")
            named = python_factor(factor.removeprefix("!"), version)
            held = held and bool(named) != negated
        if held:
            return True
    return False


def _alternatives(condition: str) -> list[str]:
    """A tox condition's alternatives: its commas outside braces, then each brace expanded
    (`py{27,36}` is `py27` or `py36`), at most `_MAX_FACTORS` of them."""
    parts: list[str] = []
    depth = start = 0
    for at, char in enumerate(condition):
        if char in "{}":
            depth = depth + 1 if char == "{" else max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(condition[start:at])
            start = at + 1
    parts.append(condition[start:])
    pending = parts[:_MAX_FACTORS][::-1]
    found: list[str] = []
    while pending and len(found) < _MAX_FACTORS:
        part = pending.pop()
        brace = _BRACES_RE.search(part)
        if brace is None:
            found.append(part)
            continue
        head, tail = part[: brace.start()], part[brace.end() :]
        choices = brace[1].split(",")[:_MAX_FACTORS]
        pending.extend(head + choice + tail for choice in reversed(choices))
    return found
