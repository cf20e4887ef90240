"""The static audit (SPEC §4): a definition and two patches in, a report out. Pure.

The audit judges whatever patches it is given. Bytes that are not a Git patch simply name no
files, and the blockers that follow from that are reported; refusing input is the job of
loading and of submit's preflight, not of the audit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import basename
from typing import Any

from selfbench._runner_files import changes_build_control, is_runner_control
from selfbench._shell import PLACEHOLDER, Word, split_words
from selfbench.bundle.held_out import held_out_paths
from selfbench.contract import Difficulty, TaskDefinition
from selfbench.outcomes._detect import detect_runner
from selfbench.patches import Patch, changes_no_files, display_path

__all__ = ["THRESHOLDS", "AuditReport", "Threshold", "audit"]


@dataclass(frozen=True, slots=True)
class Threshold:
    """The minimum size of a task at one difficulty."""

    files: int
    changed_lines: int
    pass_to_pass: int


THRESHOLDS: dict[Difficulty, Threshold] = {
    "easy": Threshold(files=1, changed_lines=20, pass_to_pass=0),
    "medium": Threshold(files=2, changed_lines=50, pass_to_pass=1),
    "hard": Threshold(files=3, changed_lines=100, pass_to_pass=2),
}

HARD_CODED = 'test command must not hard-code fail-to-pass or pass-to-pass paths outside "{tests}"'
NOT_ONCE = 'test command must contain "{tests}" exactly once'
QUOTED = 'test command must expand "{tests}" as an unquoted shell argument list'
NO_TEST_FILES = changes_no_files("held-out test patch")
RUNNER_CONTROL = "gold patch changes runner configuration, so the task cannot be graded"
"""The verifier leaves every agent's changes to these paths out, and restores a `go.mod`,
`Cargo.toml` or `package.json` whose runner-control part changed (`_runner_files.py`)."""
_PIECE_BOUNDS = "/=:"
_HEX_RUN_RE = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The audit's verdict: accepted exactly when there are no blockers."""

    blockers: tuple[str, ...]
    implementation_files: int
    implementation_changed_lines: int
    test_files: int
    warnings: tuple[str, ...]

    @property
    def accepted(self) -> bool:
        """True when nothing blocks the task."""
        return not self.blockers

    @property
    def reason(self) -> str:
        """The reason given for a rejection: the blockers joined by `; `."""
        return "; ".join(self.blockers)

    def to_json(self) -> dict[str, Any]:
        """The report as the CLI's JSON contract shapes it."""
        return {
            "accepted": self.accepted,
            "blockers": list(self.blockers),
            "metrics": {
                "implementationFiles": self.implementation_files,
                "implementationChangedLines": self.implementation_changed_lines,
                "testFiles": self.test_files,
            },
            "warnings": list(self.warnings),
        }


def audit(
    definition: TaskDefinition,
    gold: Patch,
    tests: Patch,
    *,
    loading_warnings: tuple[str, ...] = (),
) -> AuditReport:
    """Judge a task before anything runs: sizes, overlap and the test command."""
    threshold = THRESHOLDS[definition.level]
    level = definition.difficulty
    blockers: list[str] = []
    test_paths = set(tests.paths)
    overlap = [path for path in gold.paths if path in test_paths]
    if overlap:
        listed = ", ".join(display_path(path) for path in overlap)
        blockers.append(f"gold and held-out test patches overlap: {listed}")
    runner = detect_runner(definition.testCommand)
    runner_control = [path for path in gold.paths if is_runner_control(path)]
    runner_control += [
        change.path
        for change in gold.files
        if change.path not in runner_control
        and changes_build_control(change.path, gold.section(change), runner)
    ]
    if runner_control:
        listed = ", ".join(display_path(path) for path in runner_control)
        blockers.append(f"{RUNNER_CONTROL}: {listed}")
    if len(gold.files) < threshold.files:
        blockers.append(
            f"{level} mode requires at least {threshold.files} implementation files; "
            f"found {len(gold.files)}"
        )
    if gold.changed_lines < threshold.changed_lines:
        blockers.append(
            f"{level} mode requires at least {threshold.changed_lines} changed implementation "
            f"lines; found {gold.changed_lines}"
        )
    if not tests.paths:
        blockers.append(NO_TEST_FILES)
    if len(definition.passToPass) < threshold.pass_to_pass:
        blockers.append(
            f"{level} mode requires at least {threshold.pass_to_pass} pass-to-pass regression tests"
        )
    blockers.extend(command_blockers(definition.testCommand, definition.selectors))
    return AuditReport(
        blockers=tuple(blockers),
        implementation_files=len(gold.files),
        implementation_changed_lines=gold.changed_lines,
        test_files=len(tests.files),
        warnings=loading_warnings + prompt_warnings(definition, gold, tests),
    )


def command_blockers(command: str, selectors: tuple[str, ...]) -> list[str]:
    """Rules 6 to 8: the test command's use of `{tests}`, in the spec's order."""
    blockers = []
    words = split_words(command.replace(PLACEHOLDER, " "))
    if any(is_hard_coded(selector, words) for selector in selectors):
        blockers.append(HARD_CODED)
    occurrences = command.count(PLACEHOLDER)
    if occurrences != 1:
        blockers.append(NOT_ONCE)
    if occurrences and not placeholder_is_argument_list(command):
        blockers.append(QUOTED)
    return blockers


def _is_placeholder_word(word: Word) -> bool:
    return (
        word.text == PLACEHOLDER and not word.quoted and not word.assignment and not word.redirect
    )


def placeholder_is_argument_list(command: str) -> bool:
    """Every `{tests}` is a whole shell word: unquoted, unassigned, not inside a larger word.

    Nor the target of a redirection or a line of a here-document: neither is an argument list.
    """
    whole = {word.start for word in split_words(command) if _is_placeholder_word(word)}
    starts = [m.start() for m in re.finditer(re.escape(PLACEHOLDER), command)]
    return all(start in whole for start in starts)


def _path_like(selector: str) -> bool:
    return any(mark in selector for mark in "/.:\\")


def _bounded_in(selector: str, text: str) -> bool:
    """`selector` occurs in `text` bounded by `/`, `=`, `:` or the text's ends."""
    start = text.find(selector)
    while start != -1:
        end = start + len(selector)
        left_ok = start == 0 or text[start - 1] in _PIECE_BOUNDS
        right_ok = end == len(text) or text[end] in _PIECE_BOUNDS
        if left_ok and right_ok:
            return True
        start = text.find(selector, start + 1)
    return False


def is_hard_coded(selector: str, words: list[Word]) -> bool:
    """Whether a selector is spelled out in the command besides `{tests}`.

    A selector is hard-coded when it is a word of the command or a piece of a word bounded by
    `/`, `=`, `:` or the word's ends. One exception keeps `bun test {tests}` legal for a
    selector named `test`: a bare name (no `/`, `.`, `:`) that is exactly the command name
    or its subcommand (a command's first two words) is the runner, not a selection.
    """
    for word in words:
        if not _bounded_in(selector, word.text):
            continue
        runner_word = 0 <= word.index <= 1 and word.text == selector
        if runner_word and not _path_like(selector):
            continue
        return True
    return False


def _mentions(prompt: str, text: str, *, after_slash: bool = False) -> bool:
    """`text` appears in the prompt as a whole token, not inside a longer name.

    With `after_slash`, a match may follow a `/`: a file name at the end of a longer path
    (`lib/utils.ts` names `utils.ts`).
    """
    if not text:
        return False
    if text.isascii() and prompt.isascii() and text.lower() not in prompt.lower():
        return False  # the common case, without compiling a pattern per file name
    before = r"[\w.-]" if after_slash else r"[\w/.-]"
    pattern = rf"(?<!{before}){re.escape(text)}(?![\w/-])(?!\.\w)"
    return re.search(pattern, prompt, flags=re.IGNORECASE) is not None


def _gold_file_mention(prompt: str, path: str) -> str | None:
    """How the prompt names a gold file, by its full path or its name; None when it does not."""
    if _mentions(prompt, path):
        return path
    name = basename(path)
    return name if _mentions(prompt, name, after_slash=True) else None


def prompt_warnings(definition: TaskDefinition, gold: Patch, tests: Patch) -> tuple[str, ...]:
    """What the prompt gives away: the PR, the base commit, selectors, held-out or gold files."""
    prompt = definition.prompt
    warnings = []
    number = definition.sourcePr
    pr_pattern = rf"(?:#|\b(?:pr|pull request|pull|merge request)\s*#?\s*){number}(?!\d)"
    if re.search(pr_pattern, prompt, flags=re.IGNORECASE):
        warnings.append(f"prompt mentions the source PR number ({number})")
    url = definition.sourceUrl.rstrip("/")
    # `…/pull/42` inside `…/pull/420` is another pull request, not a mention.
    if url and re.search(rf"{re.escape(url)}(?![\w-])", prompt, flags=re.IGNORECASE):
        warnings.append("prompt mentions the source PR URL")
    base = definition.baseCommit.lower()
    for run in _HEX_RUN_RE.findall(prompt):
        if base.startswith(run.lower()):
            warnings.append(f"prompt mentions a commit hash prefix of baseCommit ({run})")
            break
    warnings.extend(
        f"prompt mentions a selector ({selector})"
        for selector in dict.fromkeys(definition.selectors)
        if _mentions(prompt, selector)
    )
    warnings.extend(
        f"prompt mentions a held-out path ({display_path(path)})"
        for path in held_out_paths(definition, tests)
        if _mentions(prompt, path)
    )
    gold_names = dict.fromkeys(
        named for path in gold.paths if (named := _gold_file_mention(prompt, path)) is not None
    )
    warnings.extend(
        f"prompt mentions a gold file name ({display_path(name)})" for name in gold_names
    )
    return tuple(warnings)
