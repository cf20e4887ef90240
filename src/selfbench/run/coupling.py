"""The coupling check: do the held-out tests pin private details of the gold patch?

First the deterministic evidence, `coupling_blockers`: the names the held-out tests assert
(identifiers; strings such as error messages, field and header names; endpoint paths) that the
gold patch introduces and that appear neither in the instruction nor anywhere in the base tree.
An agent that reads only the instruction and the repository cannot know such a name, so a test
that asserts it judges one implementation, not the behaviour asked for.

A name counts as introduced when the gold patch's added lines of code (documentation files
left out: their examples are not code) hold it: an identifier as a token (or the stem of a file
the patch adds), a string inside a string literal (case-insensitively; a route template such as
`/users/{id}` introduces `/users/42`). It is known when the base tree
holds it anywhere (`git grep`, case-insensitively for strings) or the instruction does (an
identifier as written; a string case-insensitively, whitespace-normalized, or a path by a
template the instruction spells). Short names (under three characters) and strings without a
letter or spanning lines are never evidence. Test files are read as `_names` reads them.

Then, with a reviewer command, `review_with_command`: any program that prints a verdict as one
JSON object on the last line of its standard output::

    {"verdict": "clean" | "coupled", "findings": ["one line per finding", ...]}

And `coupling_repair_with_command`: the author command rewrites the held-out tests once, checked
by the coupling-repair rules of `selfbench.repair` (and it may not rewrite the definition).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from posixpath import basename, splitext
from typing import Literal

from selfbench._git import git
from selfbench._scratch import scratch_directory
from selfbench.artifacts.task_dir import read_authored_task
from selfbench.environments.process import parse_command, run_command
from selfbench.errors import ReviewerError, SelfbenchError
from selfbench.patches import DOCUMENTATION_EXTENSIONS, added_lines, parse_patch
from selfbench.quality.variants import gold_texts
from selfbench.repair import check_coupling_repair
from selfbench.run._names import AssertedNames, asserted_names, code_names
from selfbench.run._workspace import Workspace, changed_paths
from selfbench.run.author import AuthorJob, AuthorResult, run_agent
from selfbench.run.confine import (
    DEFAULT_NETWORK,
    AuthorNetwork,
    command_network,
    confined,
    private_home,
)

__all__ = [
    "DEFINITION_CHANGED",
    "ReviewVerdict",
    "ReviewerError",
    "blockers_of",
    "coupling_blockers",
    "coupling_repair_with_command",
    "parse_review",
    "review_with_command",
]

DEFINITION_CHANGED = "coupling repair changed the definition"
_MIN_NAME = 3
_MAX_STRING = 200
_IDENTIFIER_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_LITERAL_RE = re.compile(r""""((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'|`([^`]*)`""")
_PARAMETER_RE = re.compile(r"\{[^/{}]*\}|<[^/<>]*>|:[A-Za-z_][A-Za-z0-9_]*")
_PATH_RE = re.compile(r"/[\w{}<>:.~%-]+(?:/[\w{}<>:.~%-]*)*")


# --- the deterministic evidence ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Gold:
    """What the gold patch introduces: identifier tokens and string-literal contents."""

    identifiers: frozenset[str]
    literals: tuple[str, ...]

    def introduces(self, text: str) -> bool:
        folded = text.casefold()
        if any(folded in literal.casefold() for literal in self.literals):
            return True
        return text.startswith("/") and any(
            _route(literal).fullmatch(text) for literal in self.literals if literal[:1] == "/"
        )


def _route(template: str) -> re.Pattern[str]:
    """A path template (`/users/{id}`, `/users/<int:id>`, `/users/:id`) as a pattern."""
    parts = _PARAMETER_RE.split(template)
    return re.compile("[^/]+".join(re.escape(part) for part in parts))


def _is_prose(path: str | None) -> bool:
    """Documentation: its examples (expected outputs, sample calls) are not code the tests pin."""
    return path is not None and splitext(path)[1].lower() in DOCUMENTATION_EXTENSIONS


def _gold(repo: Path, base: str, data: bytes) -> _Gold:
    """What the gold patch's code holds: its files as the patch leaves them, read as code where
    the language is known (comments and docstrings left out), else its added lines."""
    patch = parse_patch(data, lenient=True)
    code = [change for change in patch.files if not _is_prose(change.new_path or change.old_path)]
    images = gold_texts(repo, base, data, [c.new_path for c in code if c.status != "deleted"])
    identifiers: set[str] = set()
    literals: list[str] = []
    for change in code:
        names = (
            code_names(change.new_path, images[change.new_path])
            if change.new_path in images
            else None
        )
        if names is None:
            added = added_lines(patch.section(change))
            names = AssertedNames(set(_IDENTIFIER_RE.findall(added)), set(_literals(added)))
        identifiers |= names.identifiers
        literals.extend(sorted(names.strings))
        if change.status == "added" and change.new_path:
            identifiers.add(splitext(basename(change.new_path))[0])
    return _Gold(frozenset(identifiers), tuple(literals))


def _literals(text: str) -> list[str]:
    return ["".join(groups) for groups in _LITERAL_RE.findall(text)]


def _in_base(repo: Path, base: str, names: Iterable[str]) -> set[str]:
    """The names that occur somewhere in the base tree (strings: in any case)."""
    wanted = sorted(set(names))
    if not wanted:
        return set()
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".patterns") as patterns:
        patterns.write("".join(f"{name}\n" for name in wanted))
        patterns.flush()
        found = git(
            repo, "grep", "-h", "-I", "-i", "-F", "--no-color", "-f", patterns.name, base, "--",
            ok=(0, 1),
        ).decode("utf-8", "replace")  # fmt: skip
    folded = found.casefold()
    return {name for name in wanted if name in found or name.casefold() in folded}


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _in_prompt(prompt: str, kind: str, name: str) -> bool:
    if kind == "identifier":
        return name in prompt
    if _normal(name) in _normal(prompt):
        return True
    return name.startswith("/") and any(
        _route(path).fullmatch(name) for path in _PATH_RE.findall(prompt)
    )


def _meaningful(kind: str, name: str) -> bool:
    if len(name) < _MIN_NAME:
        return False
    if kind == "identifier":
        return True
    return len(name) <= _MAX_STRING and "\n" not in name and any(c.isalpha() for c in name)


_KIND_TEXT = {
    "identifier": "uses {name}, a name",
    "string": "asserts the string {name}, which",
    "path": "requests the path {name}, which",
}


def _blocker(path: str, kind: str, name: str) -> str:
    shown = name if kind == "identifier" else json.dumps(name, ensure_ascii=False)
    what = _KIND_TEXT[kind].format(name=shown)
    return (
        f"held-out test {path} {what} the gold patch introduces and neither the instruction "
        "nor the base tree mentions"
    )


def coupling_blockers(task_dir: Path, repo: Path) -> list[str]:
    """The deterministic coupling evidence of an authored task, one line per name, sorted.

    Raises:
        TaskFileError, JsonError, DefinitionError: the task directory cannot be read.
        GitError: the base commit is not in `repo`, or the test patch does not apply to it.
    """
    task = read_authored_task(task_dir)
    definition = task.definition
    return blockers_of(
        repo, definition.baseCommit, definition.prompt, task.test_patch, task.gold_patch
    )


def blockers_of(
    repo: Path, base_commit: str, prompt: str, test_patch: bytes, gold_patch: bytes
) -> list[str]:
    """`coupling_blockers` of a task given by its parts (a draft's, before it is written).

    Raises:
        GitError: the base commit is not in `repo`, or the test patch does not apply to it.
    """
    gold = _gold(repo, base_commit, gold_patch)
    found: dict[tuple[str, str], str] = {}  # (kind, name) -> the first test file asserting it
    tests = gold_texts(repo, base_commit, test_patch)
    for path, source in sorted(tests.items()):
        names = asserted_names(path, source)
        for name in names.identifiers:
            if name in gold.identifiers:
                found.setdefault(("identifier", name), path)
        for text in names.strings:
            value = text.strip()
            if gold.introduces(value):
                found.setdefault(("path" if value.startswith("/") else "string", value), path)
    suspects = {
        key: path
        for key, path in found.items()
        if _meaningful(*key) and not _in_prompt(prompt, *key)
    }
    known = _in_base(repo, base_commit, (name for _, name in suspects))
    return sorted(
        _blocker(path, kind, name) for (kind, name), path in suspects.items() if name not in known
    )


# --- the reviewer ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """A reviewer's verdict on one task, and its findings (one line each)."""

    verdict: Literal["clean", "coupled"]
    findings: tuple[str, ...]


_REVIEW_PROMPT = """\
# Review one selfbench task for coupling

The task in `{task}` (`definition.json`, `test.patch`, `gold.patch`) will be given to coding
agents as its `prompt` and the repository at `baseCommit`; `test.patch` holds the held-out tests
that judge their work, and `gold.patch` the reference solution. Decide whether the held-out tests
are coupled to private details of the gold patch that the prompt never asks for (a helper's name,
a module layout, an exact message or response layout), so that a correct solution written another
reasonable way would fail them.

Print, as the last line of your output, one JSON object:
{{"verdict": "clean" or "coupled", "findings": ["one line per coupled detail", ...]}}
"""


def parse_review(output: bytes) -> ReviewVerdict:
    """The verdict printed as the last non-empty line of a reviewer's standard output.

    Raises:
        ReviewerError: the line is not the documented JSON object.
    """
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        raise ReviewerError("reviewer printed no verdict")
    try:
        value = json.loads(lines[-1])
    except ValueError:
        raise ReviewerError("reviewer's last line is not a JSON object") from None
    if not isinstance(value, dict) or value.get("verdict") not in {"clean", "coupled"}:
        raise ReviewerError('reviewer verdict must be "clean" or "coupled"')
    findings = value.get("findings", [])
    if not isinstance(findings, list) or not all(isinstance(f, str) for f in findings):
        raise ReviewerError("reviewer findings must be a list of strings")
    if value["verdict"] == "coupled" and not findings:
        raise ReviewerError("a coupled verdict needs at least one finding")
    return ReviewVerdict(value["verdict"], tuple(" ".join(f.split()) for f in findings))


def review_with_command(
    command: str,
    task_dir: Path,
    log: Path,
    time_limit_sec: float,
    env_names: tuple[str, ...] = (),
    home: Path | None = None,
    network: AuthorNetwork = DEFAULT_NETWORK,
) -> ReviewVerdict:
    """Run the reviewer command on an authored task and read its verdict.

    The command runs in `task_dir` with the review brief on its standard input (and in
    `{prompt}`; `{task_dir}` is replaced too), `SELFBENCH_TASK` naming the task; its standard
    error and output are appended to `log`. It runs in the command sandbox
    (`selfbench.run.confine`), the task read-only, with the variables `env_names` names,
    when `home` is given (`run --author-home`) a private copy of it as its `HOME`, and the
    `network` author commands have.

    Raises:
        ReviewerError: it could not start, timed out, failed, or printed no valid verdict.
        SandboxError: `home` cannot be copied, or the network's relays cannot be opened.
    """
    argv = parse_command(command, role="reviewer")
    if isinstance(argv, str):
        raise ReviewerError(argv)
    prompt = _REVIEW_PROMPT.format(task=task_dir)
    values = {"{prompt}": prompt, "{task_dir}": str(task_dir)}
    expanded = [re.sub(r"\{prompt\}|\{task_dir\}", lambda m: values[m.group()], a) for a in argv]
    with scratch_directory("selfbench-review-") as temp, contextlib.ExitStack() as stack:
        brief = Path(temp) / "review.md"
        brief.write_text(prompt, encoding="utf-8")
        private = stack.enter_context(private_home(home))  # unreadable: stops the run
        reached = stack.enter_context(command_network(network, env_names, log=log))
        try:
            sandboxed, env = confined(
                expanded,
                cwd=task_dir,
                env={**os.environ, "SELFBENCH_TASK": str(task_dir)},
                writable=(),
                readable=(task_dir, Path(temp)),
                env_names=env_names,
                home=private,
                network=reached,
            )
        except SelfbenchError as exc:
            raise ReviewerError(f"reviewer command cannot start: {exc}") from exc
        outcome = run_command(
            sandboxed,
            role="reviewer",
            cwd=task_dir,
            env=env,
            stdin=brief,
            program=expanded[0],
            log=log,
            time_limit_sec=time_limit_sec,
            inactivity_sec=time_limit_sec,
            keep_stdout=True,
        )
    if outcome.reason is not None:
        raise ReviewerError(outcome.reason)
    if outcome.exit_code:
        raise ReviewerError(f"reviewer command failed with exit code {outcome.exit_code}")
    return parse_review(outcome.stdout)


# --- one coupling repair -----------------------------------------------------------------------


def coupling_repair_with_command(
    command: str, job: AuthorJob, task_dir: Path, findings: Sequence[str]
) -> AuthorResult:
    """One coupling repair of `task_dir` by the author command, given the findings.

    Returned ok only when it rewrote held-out test files and nothing else (the coupling-repair
    rules of `selfbench.repair`) and left the definition as it was.

    Raises:
        ValueError: `job.out_dir` is not empty.
    """
    listed = tuple(" ".join(finding.split()) for finding in findings)

    def check(workspace: Workspace, repaired_dir: Path) -> str | None:
        original = read_authored_task(task_dir)
        repaired = read_authored_task(repaired_dir)
        changed = changed_paths(
            workspace.repo,
            original.definition.baseCommit,
            (original.test_patch, original.gold_patch),
            (repaired.test_patch, repaired.gold_patch),
        )
        if isinstance(changed, str):
            return changed
        verdict = check_coupling_repair(original.test_patch, changed)
        if verdict.reason is None and original.definition != repaired.definition:
            return DEFINITION_CHANGED
        return verdict.reason

    findings_file = "".join(f"{finding}\n" for finding in listed).encode("utf-8")
    return run_agent(
        command,
        job,
        "coupling-repair",
        task_dir=task_dir,
        extra={"findings.txt": findings_file},
        findings=listed,
        check=check,
    )
