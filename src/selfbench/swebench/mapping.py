"""SWE-bench instances and SelfBench tasks, mapped both ways. Pure: values in, values out.

Parsing an instance file's bytes, choosing a difficulty, building a definition, completing the
commands from swebench's per-repository specs (given as a value), and rendering a task as an
instance. `selfbench.swebench` does the reading and writing around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench._json import JsonObject, loads_strict
from selfbench._shell import quote
from selfbench.artifacts.task_dir import GOLD_PATCH_FILE, TEST_PATCH_FILE
from selfbench.contract import AUTHORING_DEFAULTS, DIFFICULTIES, Difficulty, TaskDefinition
from selfbench.errors import JsonError, SwebenchError
from selfbench.patches import parse_patch
from selfbench.rules import TASK_ID_PATTERN, THRESHOLDS, is_full_sha, is_task_id
from selfbench.runners import RUNNERS

__all__ = [
    "METADATA_FILE",
    "METADATA_KEYS",
    "Commands",
    "ImportReport",
    "ImportedTask",
    "SkippedInstance",
    "SwebenchInstance",
    "choose_difficulty",
    "instance_commands",
    "instance_definition",
    "instance_metadata",
    "is_spec_selector",
    "parse_instance",
    "parse_instances",
    "parse_test_list",
    "render_instance",
    "spec_commands",
]

_PR_SUFFIX_RE = re.compile(r"-([1-9][0-9]{0,15})\Z")
_OWNER_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_URL_RE = re.compile(r"https?://[^\s/]+/\S*")
_MAX_PR = 2**53 - 1
_SHOWN_PROBLEMS = 100
_TEST_LIST = "must be a list of strings or a JSON-encoded list of strings"
METADATA_FILE = "swebench.json"
METADATA_KEYS = ("created_at", "version")
_SPEC_RUNNER = next(
    runner for runner in RUNNERS if runner.ecosystem == "python" and runner.reads_as == runner.name
)
"""The runner of SWE-bench specs' test commands (Python projects' own)."""
_NOT_NODE_IDS = (
    f"selectors are not {_SPEC_RUNNER.label} node ids (e.g. {{example!r}}); "
    "pass --test-command for this repository"
)


@dataclass(frozen=True, slots=True)
class SwebenchInstance:
    """One SWE-bench instance, the fields selfbench reads."""

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str
    created_at: str | None = None
    version: str | None = None
    pull_number: int | None = None


@dataclass(frozen=True, slots=True)
class Commands:
    """The setup and test commands of an imported task."""

    setup: str
    test: str


@dataclass(frozen=True, slots=True)
class ImportedTask:
    """An instance written as a task directory."""

    instance_id: str
    difficulty: Difficulty
    path: Path


@dataclass(frozen=True, slots=True)
class SkippedInstance:
    """An instance that did not become a task, and every reason why."""

    instance_id: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What `import_swebench` wrote and what it skipped; complete when nothing was skipped."""

    imported: tuple[ImportedTask, ...]
    skipped: tuple[SkippedInstance, ...]

    def to_json(self) -> JsonObject:
        """The report as the CLI's JSON output shapes it."""
        return {
            "imported": [
                {"instanceId": t.instance_id, "difficulty": t.difficulty, "path": str(t.path)}
                for t in self.imported
            ],
            "skipped": [
                {"instanceId": s.instance_id, "reasons": list(s.reasons)} for s in self.skipped
            ],
        }


# --- parsing -----------------------------------------------------------------------------------


def parse_test_list(value: object) -> tuple[str, ...]:
    """`FAIL_TO_PASS` / `PASS_TO_PASS`: a list of strings, or a string holding one as JSON.

    Raises:
        SwebenchError: the value is neither.
    """
    if isinstance(value, str):
        try:
            value = loads_strict(value.encode("utf-8", "surrogatepass"), source="list")
        except JsonError:
            raise SwebenchError(_TEST_LIST) from None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SwebenchError(_TEST_LIST)
    return tuple(value)


def _string(
    raw: Mapping[str, Any], key: str, problems: list[str], *, optional: bool = False
) -> Any:
    value = raw.get(key)
    if value is None and optional:
        return None
    if key not in raw:
        problems.append(f"{key}: is required")
    elif not isinstance(value, str):
        problems.append(f"{key}: must be a string")
    elif not value.isascii() and not _encodable(value):
        problems.append(f"{key}: must not contain a lone surrogate")
        return None
    return value if isinstance(value, str) else None


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _pull_number(raw: Mapping[str, object], problems: list[str]) -> int | None:
    value = raw.get("pull_number")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_PR:
        problems.append("pull_number: must be a positive integer")
        return None
    return value


def _identity_problems(instance_id: str | None, base_commit: str | None) -> list[str]:
    problems = []
    if instance_id is not None and not is_task_id(instance_id):
        problems.append(f"instance_id: must match {TASK_ID_PATTERN} (it names the task)")
    if base_commit is not None and not is_full_sha(base_commit):
        problems.append("base_commit: expected a full commit SHA")
    return problems


def parse_instance(value: object) -> SwebenchInstance:
    """Validate one decoded instance object; unknown keys are ignored.

    Raises:
        SwebenchError: every problem found, one `field: message` line each.
    """
    if not isinstance(value, dict):
        raise SwebenchError("instance must be a JSON object")
    problems: list[str] = []
    fields = {
        key: _string(value, key, problems)
        for key in ("instance_id", "repo", "base_commit", "patch", "test_patch")
    }
    statement = _string(value, "problem_statement", problems)
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        try:
            lists[key] = parse_test_list(value[key]) if key in value else ()
        except SwebenchError as exc:
            problems.append(f"{key}: {exc}")
        if key not in value:
            problems.append(f"{key}: is required")
    created_at = _string(value, "created_at", problems, optional=True)
    version = _string(value, "version", problems, optional=True)
    pull_number = _pull_number(value, problems)
    problems.extend(_identity_problems(fields["instance_id"], fields["base_commit"]))
    if problems:
        raise SwebenchError("\n".join(problems))
    return SwebenchInstance(
        **fields,
        fail_to_pass=lists["FAIL_TO_PASS"],
        pass_to_pass=lists["PASS_TO_PASS"],
        problem_statement=statement,
        created_at=created_at,
        version=version,
        pull_number=pull_number,
    )


def parse_instances(data: bytes, *, source: str) -> tuple[SwebenchInstance, ...]:
    """Parse a JSON Lines instance file; blank lines are skipped.

    Raises:
        SwebenchError: every problem in the file, each line starting `<source>:<line>: `.
    """
    instances: list[SwebenchInstance] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            instance = parse_instance(loads_strict(line, source=where))
        except JsonError as exc:
            problems.append(str(exc))
            continue
        except SwebenchError as exc:
            problems.extend(f"{where}: {problem}" for problem in exc.lines)
            continue
        seen = first_line.setdefault(instance.instance_id, number)
        if seen != number:
            problems.append(f"{where}: instance_id {instance.instance_id} repeats line {seen}")
        instances.append(instance)
    if not problems and not instances:
        problems.append(f"{source}: no instances")
    if len(problems) > _SHOWN_PROBLEMS:  # a wrong file must not flood the terminal
        hidden = len(problems) - _SHOWN_PROBLEMS
        problems[_SHOWN_PROBLEMS:] = [f"{source}: {hidden} more problems not shown"]
    if problems:
        raise SwebenchError("\n".join(problems))
    return tuple(instances)


# --- mapping an instance to a task -------------------------------------------------------------


def choose_difficulty(files: int, changed_lines: int, pass_to_pass: int) -> Difficulty | None:
    """The highest difficulty whose gates a gold patch of this size meets; None when none."""
    met = [
        level
        for level in DIFFICULTIES
        if files >= THRESHOLDS[level].files
        and changed_lines >= THRESHOLDS[level].changed_lines
        and pass_to_pass >= THRESHOLDS[level].pass_to_pass
    ]
    return met[-1] if met else None


def _source_pr(instance: SwebenchInstance) -> int | None:
    if instance.pull_number is not None:
        return instance.pull_number
    match = _PR_SUFFIX_RE.search(instance.instance_id)
    return int(match.group(1)) if match else None


def _source_url(repo: str, number: int) -> str | None:
    if _OWNER_NAME_RE.fullmatch(repo):
        return f"https://github.com/{repo}/pull/{number}"
    if _URL_RE.fullmatch(repo):
        return f"{repo.rstrip('/').removesuffix('.git')}/pull/{number}"
    return None


def _no_gate(files: int, lines: int, pass_to_pass: int) -> str:
    easy = THRESHOLDS["easy"]
    return (
        f"meets no difficulty gate: the gold patch changes {files} files and {lines} lines, "
        f"with {pass_to_pass} pass-to-pass tests (easy needs {easy.files} file and "
        f"{easy.changed_lines} changed lines)"
    )


def instance_definition(
    instance: SwebenchInstance, commands: Commands
) -> tuple[JsonObject | None, tuple[str, ...]]:
    """The task definition an instance maps to, or None and every reason it cannot."""
    gold = parse_patch(instance.patch.encode("utf-8"), lenient=True)
    tests = parse_patch(instance.test_patch.encode("utf-8"), lenient=True)
    difficulty = choose_difficulty(len(gold.files), gold.changed_lines, len(instance.pass_to_pass))
    reasons = []
    if difficulty is None:
        reasons.append(_no_gate(len(gold.files), gold.changed_lines, len(instance.pass_to_pass)))
    number = _source_pr(instance)
    url = _source_url(instance.repo, number) if number is not None else None
    if number is None:
        reasons.append("no pull request number: no pull_number, and the id has no -<number>")
    elif url is None:
        reasons.append(f"cannot build a pull request URL from repo {instance.repo!r}")
    if difficulty is None or number is None or url is None:
        return None, tuple(reasons)
    return {
        "schemaVersion": 1,
        "difficulty": difficulty,
        "taskId": instance.instance_id,
        "repo": instance.repo,
        "baseCommit": instance.base_commit,
        "workdir": ".",
        "setupCommand": commands.setup,
        "testCommand": commands.test,
        "failToPass": list(instance.fail_to_pass),
        "passToPass": list(instance.pass_to_pass),
        "testPaths": list(tests.paths),
        "toolchains": ["python"],
        "sourcePr": number,
        "sourceUrl": url,
        "prompt": instance.problem_statement,
        **AUTHORING_DEFAULTS,
    }, ()


def instance_metadata(instance: SwebenchInstance) -> dict[str, str]:
    """What the task's `swebench.json` sidecar keeps: `created_at` and `version`, when given."""
    values = {"created_at": instance.created_at, "version": instance.version}
    return {key: value for key, value in values.items() if value is not None}


# --- commands from the swebench package ---------------------------------------------------------


def _string_list(value: object) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def spec_commands(spec: object) -> Commands | None:
    """Setup and test commands from one swebench spec; None when it does not say enough.

    Setup: the spec's `pre_install` steps, its `pip_packages`, then `install`, joined by `&&`.
    Test: `test_cmd` (a string, or steps joined by `&&`) followed by `{tests}`.
    """
    if not isinstance(spec, Mapping):
        return None
    pre, packages = _string_list(spec.get("pre_install")), _string_list(spec.get("pip_packages"))
    install, test = _string_list(spec.get("install")), _string_list(spec.get("test_cmd"))
    if pre is None or packages is None or install is None or not test:
        return None
    pip = ["python -m pip install " + " ".join(quote(p) for p in packages)] if packages else []
    setup = [*pre, *pip, *install]
    if not setup:
        return None
    return Commands(setup=" && ".join(setup), test=" && ".join(test) + " {tests}")


def is_spec_selector(selector: str) -> bool:
    """Whether a selector is a pytest path or node id (`path.py::Class::test[params]`).

    A spec's test command gets the selectors as arguments, which works only for pytest; Django
    (`test_x (module.Class)`) and SymPy (`test_x`) names are matched against parsed logs by
    SWE-bench and mean nothing on a command line.
    """
    accepts = _SPEC_RUNNER.accepts_selector
    return accepts is None or accepts(selector)


def instance_commands(
    instance: SwebenchInstance,
    setup_command: str | None,
    test_command: str | None,
    specs: Mapping[str, object] | None,
) -> Commands | str:
    """The commands of an instance: the options, completed from its swebench spec.

    A reason (a string) instead when that fails.

    A test command from a spec is refused for selectors that are not pytest node ids.
    """
    if setup_command is not None and test_command is not None:
        return Commands(setup=setup_command, test=test_command)
    versions = specs.get(instance.repo) if specs is not None else None
    spec = versions.get(instance.version) if isinstance(versions, Mapping) else None
    from_spec = spec_commands(spec)
    if from_spec is None:
        return (
            f"no swebench spec for {instance.repo} version {instance.version}; "
            "give --setup-command and --test-command"
        )
    if test_command is None:
        foreign = [
            selector
            for selector in (*instance.fail_to_pass, *instance.pass_to_pass)
            if not is_spec_selector(selector)
        ]
        if foreign:
            return _NOT_NODE_IDS.format(example=foreign[0])
    return Commands(
        setup=setup_command if setup_command is not None else from_spec.setup,
        test=test_command if test_command is not None else from_spec.test,
    )


# --- a task as an instance ------------------------------------------------------------------


def render_instance(
    definition: TaskDefinition,
    test_patch: bytes,
    gold_patch: bytes,
    metadata: Mapping[str, str] | None = None,
) -> JsonObject:
    """A task as a SWE-bench instance (test lists JSON-encoded, as the published datasets do).

    `metadata` is the task's sidecar (`created_at`, `version`); its fields are written when given.

    Raises:
        SwebenchError: a patch is not UTF-8 text (SWE-bench holds patches as strings).
    """
    texts = {}
    for name, data in ((TEST_PATCH_FILE, test_patch), (GOLD_PATCH_FILE, gold_patch)):
        try:
            texts[name] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SwebenchError(
                f"{name} is not UTF-8 text; a SWE-bench patch must be a string"
            ) from None
    return {
        "instance_id": definition.taskId,
        "repo": definition.repo,
        "base_commit": definition.baseCommit,
        "patch": texts[GOLD_PATCH_FILE],
        "test_patch": texts[TEST_PATCH_FILE],
        "problem_statement": definition.prompt,
        "hints_text": "",
        **{key: metadata[key] for key in METADATA_KEYS if metadata and key in metadata},
        "FAIL_TO_PASS": json.dumps(list(definition.failToPass), ensure_ascii=False),
        "PASS_TO_PASS": json.dumps(list(definition.passToPass), ensure_ascii=False),
        "pull_number": definition.sourcePr,
    }
