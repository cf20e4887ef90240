"""Must-fail canaries: where the verifier plants them, and what it adds to the command. Pure.

Every verifier run that reads the runner's report (`bundle/evidence.py`) appends two canary tests
to a held-out test file before the fail-to-pass command runs (`plant_canaries` in `test.sh`):
tests that fail whatever the code under test does, one a plain failing assertion and one a
comparison of two different sentinels through the runner's usual assertion (`CanaryParts` of
each runner). Their names and sentinels are drawn at random for each run of `test.sh`, after the
agent's phase, so nothing the agent wrote can know them; they sit in a file the fail-to-pass
command runs, beside the held-out tests, and the same witness reports them.

The verdict then requires every canary seen failing. A report that shows a canary passing (a
patched matcher or assertion, records forged for every test) or that shows every wanted test
passing but a canary missing (a whole report written by the agent's code) is *forged*: the trial
scores 0, whatever else it shows, and `reward.json` says `forged`. Failing canaries are the
verdict's to expect: the runner's exit status for failed tests counts as 0 when the canaries are
the only tests that failed.

The host file: the first fail-to-pass selector's file when it is held out and of a kind the
runner's canaries fit (`CanaryParts.suffixes`); else, for a runner whose selectors name packages
or tests (go, cargo), the first held-out file those selectors run (`CanaryParts.hosts`). None
found, or the file does not hold what the canaries need (`CanaryParts.requires`, checked when the
verifier runs): no canary, and the log says so. Nor where the test command stops at its first
failure or selects tests by name (pytest's `-x` or `-k`, `--bail`, `-t`, go's `-failfast`): the
canaries would stop it, or never run.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from selfbench._paths import join_repository_path
from selfbench.contract import TaskDefinition
from selfbench.outcomes import detect_runner
from selfbench.runners import CANARY_NAMES, CanaryParts, runner_named

__all__ = ["CanaryPlan", "canary_plan"]


@dataclass(frozen=True, slots=True)
class CanaryPlan:
    """Where the verifier plants a task's canaries and how it selects them."""

    file: str
    """The held-out file they are appended to, from the repository's root."""
    text: str
    """What is appended, with the runner's name and sentinel placeholders."""
    requires: str
    """An extended regular expression the file must match when the verifier runs ("")."""
    selectors: tuple[str, ...]
    """The selectors added beside the fail-to-pass ones, with the name placeholders."""
    refuses: str = ""
    """An extended regular expression the file must not match ("")."""
    first: bool = False
    """They go before the fail-to-pass selectors (else after)."""


def _in_workdir(definition: TaskDefinition, path: str) -> str | None:
    """`path` (from the repository's root) relative to the workdir, or None outside it."""
    workdir = posixpath.normpath(definition.workdir)
    if workdir == ".":
        return path
    if path.startswith(workdir + "/"):
        return path[len(workdir) + 1 :]
    return None


def _host(
    definition: TaskDefinition, canary: CanaryParts, held_out: Sequence[str]
) -> tuple[str, str] | None:
    """(the host file from the repository's root, from the workdir), or None."""
    fits = [path for path in held_out if path.endswith(canary.suffixes)]
    for selector in definition.failToPass:
        file = posixpath.normpath(selector.split("::", 1)[0])
        path = join_repository_path(definition.workdir, file)
        if path in fits:
            return path, file
    if canary.hosts is None:
        return None
    for path in fits:
        inside = _in_workdir(definition, path)
        if inside is not None and canary.hosts(inside, definition.failToPass):
            return path, inside
    return None


_TOKEN = re.compile(r"[^\s'\";&|()]+")
"""A word of a command's text, quotes and shell operators aside: a script given to `sh -c` is
read as words too."""


def _refused(word: str, option: str) -> bool:
    """Whether a word is the option: a long one (`--bail`, go's `-run`) itself or with `=value`;
    a short one (`-x`) itself, with its value attached, or in a group of flags (`-sx`)."""
    if option.startswith("--") or len(option) > 2:
        return word == option or word.startswith(option + "=")
    if word.startswith(option):
        return True
    return re.fullmatch(r"-[A-Za-z]{2,}", word) is not None and option[1] in word[1:]


def _refuses(command: str, programs: Sequence[str], refused: Sequence[str]) -> bool:
    """Whether the words after the runner's program (`pytest`, `.venv/bin/pytest`,
    `-mpytest`) hold an option that stops at the first failure or selects tests by name. A word
    of a later command may count too: the canaries are then left out, never wrongly planted."""
    words = _TOKEN.findall(command)
    names = {*programs, *(f"-m{program}" for program in programs)}
    start = next(
        (at + 1 for at, word in enumerate(words) if posixpath.basename(word) in names), None
    )
    if start is None:
        return False
    return any(_refused(word, option) for word in words[start:] for option in refused)


def canary_plan(definition: TaskDefinition, held_out: Sequence[str]) -> CanaryPlan | None:
    """The task's canaries, planted in one of its held-out files (`held_out`, from the
    repository's root); None when its runner has none, no held-out file can hold them, or its
    command stops at a first failure or selects tests by name (`CanaryParts.refused_options`)."""
    runner = runner_named(detect_runner(definition.testCommand) or "")
    if runner is None or runner.canary is None or not definition.failToPass:
        return None
    canary = runner.canary
    programs = canary.programs or (runner.label.split()[0],)
    if _refuses(definition.testCommand, programs, canary.refused_options):
        return None
    host = _host(definition, canary, held_out)
    if host is None:
        return None
    path, file = host
    selectors: list[str] = []
    if canary.selector is not None:
        for name in CANARY_NAMES:
            selector = canary.selector(file, name, definition.failToPass)
            if selector is not None:
                selectors.append(selector)
    if canary.fits_command is not None and not canary.fits_command(definition.testCommand):
        return None
    selectors.extend(canary.arguments)
    return CanaryPlan(
        file=path,
        text=canary.text,
        requires=canary.requires,
        refuses=canary.refuses,
        selectors=tuple(selectors),
        first=canary.selectors_first,
    )
