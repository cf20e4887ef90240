"""The static audit (SPEC §4): a definition and two patches in, a report out. Pure.

The audit judges whatever patches it is given. Bytes that are not a Git patch simply name no
files, and the blockers that follow from that are reported; refusing input is the job of
loading and of submit's preflight, not of the audit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from posixpath import basename
from typing import NamedTuple

from selfbench._json import JsonObject
from selfbench._runner_files import (
    RESTORED_MANIFESTS,
    changes_build_control,
    is_build_cache_project,
    is_runner_control,
    runner_project,
    tracked_prefixes,
)
from selfbench._shell import Word, split_words
from selfbench.bundle.held_out import held_out_paths
from selfbench.contract import Difficulty, TaskDefinition
from selfbench.patches import Patch, changes_no_files, display_path
from selfbench.rules import PLACEHOLDER, THRESHOLDS, sha_regex
from selfbench.runners import detect_name, runner_named

__all__ = [
    "RUNNER_PROJECT",
    "UNPROTECTED_UNIT_TEST",
    "AuditReport",
    "audit",
    "change_blockers",
]


HARD_CODED = 'test command must not hard-code fail-to-pass or pass-to-pass paths outside "{tests}"'
NOT_ONCE = 'test command must contain "{tests}" exactly once'
QUOTED = 'test command must expand "{tests}" as an unquoted shell argument list'
NO_TEST_FILES = changes_no_files("held-out test patch")
RUNNER_CONTROL = "gold patch changes runner configuration, so the task cannot be graded"
"""The verifier leaves every agent's changes to these paths out, and restores a `go.mod`,
`Cargo.toml` or `package.json` whose runner-control part changed (`_runner_files.py`)."""
RUNNER_PROJECT = (
    "gold patch changes {project}'s own code, which runs inside the test runner's process, so "
    "the verdict relies on the runner's in-process report"
)
"""A warning until a witness outside the runner's process exists: the project is a test runner or
its plugin system (`_runner_files.runner_project`), so the code under test can reach the report
the verdict is read from."""
_PIECE_BOUNDS = "/=:"
_HEX_RUN_RE = re.compile(rf"(?<![0-9A-Za-z]){sha_regex(abbreviated=True)}(?![0-9A-Za-z])")


class AuditReport(NamedTuple):
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

    @property
    def metrics(self) -> dict[str, int]:
        """The sizes the thresholds judge, as the CLI's JSON contract names them."""
        return {
            "implementationFiles": self.implementation_files,
            "implementationChangedLines": self.implementation_changed_lines,
            "testFiles": self.test_files,
        }

    def to_json(self) -> JsonObject:
        """The report as the CLI's JSON contract shapes it."""
        return {
            "accepted": self.accepted,
            "blockers": list(self.blockers),
            "metrics": self.metrics,
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
    gold_paths = gold.paths  # a property that walks every file: read once
    needs_runner = any(basename(path) in RESTORED_MANIFESTS for path in gold_paths) or any(
        _unit_test_module(selector) is not None for selector in definition.selectors
    )
    runner = _runner(definition) if needs_runner else None
    blockers = _change_blockers(
        definition.level, definition.toolchains, gold, gold_paths, tests, runner
    )
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
        warnings=loading_warnings
        + prompt_warnings(definition, gold, tests)
        + unprotected_unit_tests(definition, tests, runner)
        + runner_project_warnings(gold),
    )


def change_blockers(
    difficulty: Difficulty,
    test_command: str,
    toolchains: Sequence[str],
    gold: Patch,
    tests: Patch,
) -> tuple[str, ...]:
    """The audit's blockers the change alone decides, before any test has run: the patches
    overlap, the gold patch changes runner configuration, the tier's size gates, no held-out
    test file; in `audit`'s order. The others (the pass-to-pass count, the test command's use of
    `{tests}`) need the task's selectors."""
    gold_paths = gold.paths
    needs_runner = any(basename(path) in RESTORED_MANIFESTS for path in gold_paths)
    runner = detect_name(test_command) if needs_runner else None
    return tuple(_change_blockers(difficulty, toolchains, gold, gold_paths, tests, runner))


def _change_blockers(
    level: Difficulty,
    toolchains: Sequence[str],
    gold: Patch,
    gold_paths: Sequence[str],
    tests: Patch,
    runner: str | None,
) -> list[str]:
    threshold = THRESHOLDS[level]
    blockers: list[str] = []
    test_paths = set(tests.paths)
    overlap = [path for path in gold_paths if path in test_paths]
    if overlap:
        listed = ", ".join(display_path(path) for path in overlap)
        blockers.append(f"gold and held-out test patches overlap: {listed}")
    tracked = tracked_prefixes(
        change.old_path for change in (*gold.files, *tests.files) if change.old_path is not None
    )
    cache = is_build_cache_project(toolchains)
    runner_control = [
        path for path in gold_paths if is_runner_control(path, tracked, build_cache=cache)
    ]
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
    return blockers


def runner_project_warnings(gold: Patch) -> tuple[str, ...]:
    """A warning when the gold patch changes a test runner's own code (`RUNNER_PROJECT`)."""
    project = runner_project(gold.paths)
    return () if project is None else (RUNNER_PROJECT.format(project=project),)


def _runner(definition: TaskDefinition) -> str | None:
    """The task's runner, read only when a rule needs it."""
    return detect_name(definition.testCommand)


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


UNPROTECTED_UNIT_TEST = (
    "{kind} selector {selector} names a Rust unit test inside src/, in a file the agent may "
    "change, so the agent can rewrite it"
)


def _unit_test_module(selector: str) -> list[str] | None:
    """The module path of the file a libtest filter's unit tests live in, by the `mod tests`
    convention (`parser::tests::parses` and `parser::tests` → `parser`); None for a filter without
    a `tests` module."""
    parts = selector.split("::")
    if "tests" not in parts:
        return None
    return parts[: parts.index("tests")]


def _in_module_file(path: str, module: list[str]) -> bool:
    """`path` is a crate's source file holding `module`, or its `tests` module's own file."""
    parts = path.split("/")
    if "src" not in parts[:-1]:
        return False
    inside = "/".join(parts[len(parts) - parts[::-1].index("src") :])
    stem = "/".join(module)
    roots = (f"{stem}.rs", f"{stem}/mod.rs") if module else ("lib.rs", "main.rs")
    tests = (f"{stem}/tests.rs", f"{stem}/tests/mod.rs") if module else ("tests.rs", "tests/mod.rs")
    return inside in roots + tests


def unprotected_unit_tests(
    definition: TaskDefinition, tests: Patch, runner: str | None
) -> tuple[str, ...]:
    """Warnings: a cargo selector naming a Rust unit test the verifier does not protect.

    A unit test (`#[cfg(test)] mod tests` inside an implementation file under `src/`) lives in a
    file that is the agent's to change, unless it is a held-out file: the agent could rewrite a
    fail-to-pass test to pass, or a pass-to-pass one to hide a regression. The verifier protects
    held-out files whole, but it cannot protect a test module inside a file the agent must
    change (restoring that module would need a Rust parser in the verifier image, and an
    agent's own new tests beside it would be lost). So the audit says so, naming the selector; a
    warning, not a blocker, because a libtest filter names no file: the audit goes by the
    `mod tests` convention (`parser::tests::parses` is in `src/parser.rs`, `src/parser/mod.rs`
    or `src/parser/tests.rs`; `tests::x` in `src/lib.rs` or `src/main.rs`), and a name without a
    `tests` module (`add_works`, `tests/add.rs`) is taken for an integration test, which is a
    runner-control path (`tests/*.rs`) and so protected.
    """
    known = None if runner is None else runner_named(runner)
    if known is None or not known.selects_by_name:
        return ()
    held_out = held_out_paths(definition, tests)
    warnings = []
    for kind, selectors in (
        ("fail-to-pass", definition.failToPass),
        ("pass-to-pass", definition.passToPass),
    ):
        for selector in dict.fromkeys(selectors):
            module = _unit_test_module(selector)
            if module is None or any(_in_module_file(path, module) for path in held_out):
                continue
            warnings.append(UNPROTECTED_UNIT_TEST.format(kind=kind, selector=selector))
    return tuple(warnings)
