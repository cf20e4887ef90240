"""SWE-bench interop (SPEC §10): SWE-bench instances in as SelfBench tasks, and back out.

An instance file is JSON Lines, one instance object a line. The fields both formats share map
one to one: `instance_id` ↔ `taskId`, `repo`, `base_commit` ↔ `baseCommit`, `patch` ↔
`gold.patch`, `test_patch` ↔ `test.patch`, `FAIL_TO_PASS` ↔ `failToPass`, `PASS_TO_PASS` ↔
`passToPass`, `problem_statement` ↔ `prompt`. Everything else a task needs is derived:
difficulty from the gold patch's size, `testPaths` from the test patch, `sourcePr` from
`pull_number` or the instance id's `-<number>` suffix, the commands from the options or from the
`swebench` package's per-repository specs when that package is installed.

`version` and `created_at` have no place in a definition; an imported task keeps them in a
sidecar, `swebench.json` beside `definition.json` (which audit, compile and collect never read),
and export writes them back, so a round trip keeps the spec a re-import (or SWE-bench's own
harness, which indexes `version`) needs.

Parsing and mapping are pure (`selfbench.swebench.mapping`); this module does the I/O:
`import_swebench` and `export_swebench`, and loading the `swebench` package's specs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from selfbench._fs import read_bytes, read_given, rename_no_replace, staging_directory, write_atomic
from selfbench._json import JsonObject, dumps_pretty, loads_strict
from selfbench.artifacts.task_dir import DEFINITION_FILE, parse_task_files, read_task_files
from selfbench.contract import DIFFICULTIES
from selfbench.errors import (
    DefinitionError,
    PreflightError,
    SelfbenchError,
    SubmitError,
    SwebenchError,
    translating,
)
from selfbench.rules import PLACEHOLDER
from selfbench.submit import submit_files
from selfbench.swebench.mapping import (
    METADATA_FILE,
    METADATA_KEYS,
    Commands,
    ImportedTask,
    ImportReport,
    SkippedInstance,
    SwebenchInstance,
    choose_difficulty,
    instance_commands,
    instance_definition,
    instance_metadata,
    is_spec_selector,
    parse_instance,
    parse_instances,
    parse_test_list,
    render_instance,
    spec_commands,
)

__all__ = [
    "METADATA_FILE",
    "Commands",
    "ImportReport",
    "ImportedTask",
    "SkippedInstance",
    "SwebenchInstance",
    "choose_difficulty",
    "export_swebench",
    "import_swebench",
    "instance_definition",
    "instance_metadata",
    "is_spec_selector",
    "load_swebench_specs",
    "parse_instance",
    "parse_instances",
    "parse_test_list",
    "render_instance",
    "spec_commands",
]


def load_swebench_specs() -> Mapping[str, object] | None:
    """The `swebench` package's per-repository specs, or None when it is not installed.

    Releases before 5.0 publish `swebench.harness.constants.MAP_REPO_VERSION_TO_SPECS`;
    releases without it count as not installed.
    """
    try:
        from swebench.harness import constants  # type: ignore[import-not-found] # noqa: PLC0415 - optional
    except ImportError:
        return None
    specs = getattr(constants, "MAP_REPO_VERSION_TO_SPECS", None)
    return specs if isinstance(specs, Mapping) else None


def _submit_with_sidecar(
    definition: JsonObject, tests: bytes, gold: bytes, sidecar: bytes, out: Path
) -> None:
    """`submit_files` plus the sidecar, still one atomic rename of the whole task directory.

    The task is submitted into a private staging root under `out` (hidden, so collect never
    counts it), the sidecar is added, and the directory is renamed into place without replacing.

    Raises:
        SubmitError: as `submit_files`, including the task already existing at `out`.
        DefinitionError: as `submit_files`.
    """
    task_id = str(definition["taskId"])
    target = out / task_id
    with translating(SubmitError, f"write task {task_id}"), staging_directory(target) as staging:
        submit_files(definition, tests, gold, output_root=staging)
        write_atomic(staging / task_id / METADATA_FILE, sidecar)
        try:
            rename_no_replace(staging / task_id, target)
        except FileExistsError:
            raise SubmitError(f"task {task_id} already exists: {target}") from None


def _write_task(
    instance: SwebenchInstance, commands: Commands, out: Path
) -> ImportedTask | SkippedInstance:
    definition, reasons = instance_definition(instance, commands)
    if definition is None:
        return SkippedInstance(instance.instance_id, reasons)
    gold, tests = instance.patch.encode("utf-8"), instance.test_patch.encode("utf-8")
    metadata = instance_metadata(instance)
    try:
        if metadata:
            sidecar = dumps_pretty(metadata).encode("utf-8")
            _submit_with_sidecar(definition, tests, gold, sidecar, out)
        else:
            submit_files(definition, tests, gold, output_root=out)
    except PreflightError as exc:
        return SkippedInstance(instance.instance_id, exc.blockers)
    except (DefinitionError, SubmitError) as exc:
        return SkippedInstance(instance.instance_id, exc.lines)
    difficulty = next(tier for tier in DIFFICULTIES if tier == definition["difficulty"])
    return ImportedTask(instance.instance_id, difficulty, out / instance.instance_id)


def _check_options(setup_command: str | None, test_command: str | None) -> None:
    for flag, given in (("--setup-command", setup_command), ("--test-command", test_command)):
        if given is not None and not given.strip():
            raise SwebenchError(f"{flag} must not be empty")
    if test_command is not None and PLACEHOLDER not in test_command:
        raise SwebenchError('--test-command must contain "{tests}"')


def import_swebench(
    instances_file: Path,
    *,
    out: Path,
    setup_command: str | None = None,
    test_command: str | None = None,
    specs: Mapping[str, object] | None = None,
) -> ImportReport:
    """Turn each instance of a JSON Lines file into a task directory under `out`.

    Commands: the options when given, else the swebench specs (`load_swebench_specs()` when
    `specs` is None). An instance that meets no difficulty gate, or that submit's preflight
    (which includes the static audit) refuses, is skipped and reported with every reason.

    Raises:
        SwebenchError: the file cannot be read or holds a malformed instance, or no commands
            can be had; nothing is written then.
    """
    if setup_command is None or test_command is None:
        specs = specs if specs is not None else load_swebench_specs()
        if specs is None:
            raise SwebenchError(
                "import-swebench needs --setup-command and --test-command "
                "(the swebench package's per-repository specs are not installed)"
            )
    _check_options(setup_command, test_command)
    data = read_given(instances_file, error=SwebenchError)
    instances = parse_instances(data, source=str(instances_file))
    with translating(SwebenchError, f"create {out}"):
        out.mkdir(parents=True, exist_ok=True)
    imported: list[ImportedTask] = []
    skipped: list[SkippedInstance] = []
    for instance in instances:
        commands = instance_commands(instance, setup_command, test_command, specs)
        if isinstance(commands, str):
            skipped.append(SkippedInstance(instance.instance_id, (commands,)))
            continue
        result = _write_task(instance, commands, out)
        if isinstance(result, ImportedTask):
            imported.append(result)
        else:
            skipped.append(result)
    return ImportReport(tuple(imported), tuple(skipped))


def _read_metadata(task_dir: Path) -> dict[str, str]:
    """The task's `swebench.json` sidecar; empty when the task has none (it was not imported).

    Raises:
        SwebenchError: the sidecar is unreadable or not an object of strings.
        JsonError: it is not well-formed JSON.
    """
    source = task_dir / METADATA_FILE
    if not os.path.lexists(source):
        return {}
    raw = read_bytes(source, error=SwebenchError)
    value = loads_strict(raw, source=str(source))
    if not isinstance(value, dict):
        raise SwebenchError(f"{source}: must be a JSON object")
    known = {key: value[key] for key in METADATA_KEYS if value.get(key) is not None}
    problems = [
        f"{source}: {key}: must be a string"
        for key, field in known.items()
        if not isinstance(field, str)
    ]
    if problems:
        raise SwebenchError("\n".join(problems))
    return known


def _read_task(task_dir: Path) -> JsonObject:
    files = read_task_files(task_dir)
    metadata = _read_metadata(task_dir)
    try:
        task = parse_task_files(files)
        return render_instance(task.definition, task.test_patch, task.gold_patch, metadata)
    except DefinitionError as exc:
        raise SwebenchError(
            "\n".join(f"{task_dir / DEFINITION_FILE}: {line}" for line in exc.lines)
        ) from exc
    except SwebenchError as exc:
        raise SwebenchError(f"{task_dir}: {exc}") from exc


def export_swebench(task_dirs: Sequence[Path], *, out: Path) -> int:
    """Write the tasks as one SWE-bench JSON Lines file, atomically; return how many.

    Raises:
        SwebenchError: a task directory cannot be read or converted, or two share a taskId;
            `out` is not written then.
        JsonError: a definition.json is not well-formed JSON.
    """
    if not task_dirs:
        raise SwebenchError("export-swebench needs at least one task directory")
    lines: list[str] = []
    problems: list[str] = []
    owners: dict[str, Path] = {}
    for task_dir in task_dirs:
        try:
            instance = _read_task(task_dir)
        except SelfbenchError as exc:
            problems.extend(exc.lines)
            continue
        task_id = str(instance["instance_id"])
        first = owners.get(task_id)
        if first is not None:
            problems.append(f"{task_dir}: taskId {task_id} repeats {first}")
        owners.setdefault(task_id, task_dir)
        lines.append(json.dumps(instance, ensure_ascii=False) + "\n")
    if problems:
        raise SwebenchError("\n".join(problems))
    with translating(SwebenchError, f"write {out}"):
        write_atomic(out, "".join(lines).encode("utf-8"))
    return len(lines)
