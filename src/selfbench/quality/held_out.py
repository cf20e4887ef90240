"""What a reviewer sees in a task's held-out tests themselves, beside any run: the findings of
`TestsCheck`, each a row of the quality verdict (`selfbench.quality.verdict`).

* **private state**: an attribute chain the test patch's added lines read that ends on a private
  name (`lock._waiters`; not `self._x`, not a dunder) which the gold's changed files use: the
  tests pin an implementation detail an instruction cannot ask for;
* **timing**: a fail-to-pass test whose body (its whole text, where the task's files are
  given) waits on a real clock (a non-zero sleep, a
  wall-clock read, a wait with a timeout, `setTimeout`), in a file that does not fake its timers;
  such a test flips on a loaded machine;
* **seeded**: a fail-to-pass test that seeds a random generator (`random.seed(1234)`) when the
  gold's added lines draw from one: its expected output is the generator's sequence through the
  gold's calls, so a correct solution that draws in another order fails and one that only
  reorders its draws passes;
* **whole files**: a fail-to-pass selector that is a whole file (no test part) holding tests that
  passed at the base in the draft's run: the verdict of the file is not the verdict of the
  change. Only with a draft record beside the task.

Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from selfbench.artifacts.quality_record import TestsCheck
from selfbench.patches import added_lines
from selfbench.quality.usage import (
    TestFunction,
    TestUsage,
    read_test_files,
    read_test_usage,
    split_test_name,
)

__all__ = ["check_tests"]


def _defines(texts: Mapping[str, str], name: str) -> bool:
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return any(pattern.search(text) for text in texts.values())


def _private_state(usage: TestUsage, gold_files: Mapping[str, str]) -> tuple[str, ...]:
    found = []
    for chain in usage.private:
        name = re.split(r"[.\s]", chain.rstrip())[-1]
        if _defines(gold_files, name):
            found.append(chain if len(chain) <= _SHOWN else f"…{chain[-_SHOWN:]}")
    return tuple(dict.fromkeys(found))


_SHOWN = 60
"""A private read is shown by at most its last this many characters."""


def _selected(usage: TestUsage, selector: str) -> Iterator[TestFunction]:
    """The tests a fail-to-pass selector runs that the added lines define."""
    parts = split_test_name(selector)
    if parts is None:  # a whole file
        yield from (f for f in usage.functions if f.path == selector)
        return
    path, names, _ = parts
    yield from (f for f in usage.functions if f.path == path and f.names[-len(names) :] == names)


def _found(
    usage: TestUsage, fail_to_pass: Sequence[str], pattern_of: Callable[[TestFunction], str]
) -> tuple[str, ...]:
    """Each fail-to-pass test whose body holds a pattern (`pattern_of` its first, or ""), with
    that pattern: `tests/t.py > test_a (time.sleep()`."""
    found = {}
    for selector in fail_to_pass:
        for function in _selected(usage, selector):
            if pattern := pattern_of(function):
                found[" > ".join((function.path, *function.names))] = pattern
    return tuple(f"{name} ({pattern})" for name, pattern in found.items())


def _base_passes(evidence: Mapping[str, Any], path: str) -> int:
    """How many tests of `path` passed in the draft's first run at the base."""
    for sample in evidence.get("runs", ()):
        if not str(sample.get("name", "")).startswith("base"):
            continue
        for run in sample.get("files", ()):
            if run.get("file") == path:
                return sum(
                    1 for outcome in dict(run.get("tests", {})).values() if outcome == "passed"
                )
        return 0
    return 0


def _whole_files(
    fail_to_pass: Sequence[str], evidence: Mapping[str, Any] | None
) -> tuple[str, ...]:
    if evidence is None:
        return ()
    found = []
    for selector in fail_to_pass:
        if split_test_name(selector) is not None or "::" in selector:
            continue
        passing = _base_passes(evidence, selector)
        if passing:
            found.append(f"{selector} ({passing} pass at the base)")
    return tuple(found)


def check_tests(
    test_patch: bytes,
    fail_to_pass: Sequence[str],
    gold_patch: bytes,
    gold_files: Mapping[str, str],
    evidence: Mapping[str, Any] | None = None,
    test_files: Mapping[str, str] | None = None,
) -> TestsCheck:
    """The findings of the module for a task's test patch, its fail-to-pass selectors, its gold
    patch and the texts of the gold's changed files (with the gold applied), its draft record's
    content, and the texts of the test patch's files with it applied (the tests' whole bodies;
    without them, the added lines alone)."""
    usage = read_test_usage(test_patch)
    bodies = read_test_files(test_files) if test_files is not None else usage
    return TestsCheck(
        privateState=_private_state(usage, gold_files),
        timing=_found(bodies, fail_to_pass, lambda function: function.timing),
        seeded=_seeded(bodies, fail_to_pass, gold_patch),
        wholeFiles=_whole_files(fail_to_pass, evidence),
    )


def _seeded(usage: TestUsage, fail_to_pass: Sequence[str], gold_patch: bytes) -> tuple[str, ...]:
    """The fail-to-pass tests that seed a random generator, when the gold's added lines draw
    from one: their expected output is the generator's sequence through the gold's calls."""
    if _DRAWS_RE.search(added_lines(gold_patch)) is None:
        return ()
    return _found(usage, fail_to_pass, lambda function: function.seeded)


_DRAWS_RE = re.compile(
    r"\brandom\.\w+\(|\b(?:choice|choices|shuffle|sample|randint|randrange|uniform)\("
    r"|\bMath\.random\(|\brng\.\w+\("
)
"""A draw from a random generator."""
