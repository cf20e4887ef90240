"""Each artifact stages hand over: written, then read back as the same value; every artifact file
name spelled in one module of the package only."""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import GOLD, TESTS, definition
from selfbench._json import Json, JsonValue
from selfbench.artifacts.compiled import BUNDLE_DIR, locate_task
from selfbench.artifacts.draft_record import (
    DRAFT_FILE,
    DraftCommands,
    DraftEvidence,
    FileRunRecord,
    FlakyTest,
    QualityNote,
    RunRecord,
    TaskInputs,
    TierChange,
    observed_inputs,
    read_draft_record,
    render_draft_record,
)
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.artifacts.task_dir import (
    DEFINITION_FILE,
    GOLD_PATCH_FILE,
    TASK_FILES,
    TEST_PATCH_FILE,
    read_authored_task,
    read_task_files,
    render_task_files,
    write_task_files,
)
from selfbench.artifacts.validation import (
    VALIDATION_FILE,
    ValidationRecord,
    read_validation,
    read_validation_records,
    validation_record,
    write_validation,
)
from selfbench.compiler import compile_home
from selfbench.contract import parse_definition
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.errors import ExportError, RunError
from selfbench.export.manifest import Manifest, TaskEntry, parse_manifest, render_manifest
from selfbench.run.state import Pool, RunDirectory

SOURCE = Path(__file__).parent.parent / "src" / "selfbench"

# --- the authored task directory ---------------------------------------------------------------


def test_a_task_directory_round_trips(tmp_path: Path) -> None:
    value = definition()
    write_task_files(tmp_path, value, TESTS, GOLD)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(TASK_FILES)
    task = read_authored_task(tmp_path)
    assert task.loaded.raw == value
    assert task.definition == parse_definition(value).definition
    assert (task.test_patch, task.gold_patch) == (TESTS, GOLD)
    files = read_task_files(tmp_path)
    assert {
        DEFINITION_FILE: files.definition,
        TEST_PATCH_FILE: files.test_patch,
        GOLD_PATCH_FILE: files.gold_patch,
    } == render_task_files(value, TESTS, GOLD)


def test_the_definition_file_is_pretty_json_with_a_trailing_newline() -> None:
    rendered = render_task_files({"b": 1, "a": "é"}, b"", b"")[DEFINITION_FILE]
    assert rendered == '{\n  "b": 1,\n  "a": "é"\n}\n'.encode()


# --- the compiled task -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def _authored(root: Path, sample: SampleRepository) -> Path:
    arguments = sample_arguments(sample)
    task_dir = root / str(arguments["definition"]["taskId"])
    task_dir.mkdir(parents=True)
    test_patch = arguments["testPatch"].encode()
    gold_patch = arguments["goldPatch"].encode()
    write_task_files(task_dir, arguments["definition"], test_patch, gold_patch)
    return task_dir


def test_a_compiled_home_round_trips(tmp_path: Path, sample: SampleRepository) -> None:
    task_dir = _authored(tmp_path / "tasks", sample)
    home = tmp_path / "home"
    located = compile_home(task_dir, repo=sample.path, home=home)
    assert located.bundle == home / BUNDLE_DIR
    assert located.home == home
    assert (home / DEFINITION_FILE).read_bytes() == (task_dir / DEFINITION_FILE).read_bytes()
    assert locate_task(home) == located
    assert locate_task(home / BUNDLE_DIR) == located


def test_a_task_directory_is_its_own_home(tmp_path: Path, sample: SampleRepository) -> None:
    task_dir = _authored(tmp_path / "tasks", sample)
    before = (task_dir / DEFINITION_FILE).read_bytes()
    located = compile_home(task_dir, repo=sample.path, home=task_dir)
    assert located.home == task_dir
    assert (task_dir / DEFINITION_FILE).read_bytes() == before


def test_a_definition_named_elsewhere_has_no_home(tmp_path: Path, sample: SampleRepository) -> None:
    task_dir = _authored(tmp_path / "tasks", sample)
    compile_home(task_dir, repo=sample.path, home=task_dir)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes((task_dir / DEFINITION_FILE).read_bytes())
    assert locate_task(task_dir / BUNDLE_DIR, definition=elsewhere).home is None


# --- the validation report ---------------------------------------------------------------------


def test_a_validation_report_round_trips(tmp_path: Path) -> None:
    report: dict[str, JsonValue] = {"taskId": "t-1", "accepted": False, "reason": "nop passed"}
    record = validation_record(report, manifest_sha256="ab" * 32)
    path = write_validation(tmp_path, record)
    assert path == tmp_path / VALIDATION_FILE
    assert read_validation(path) == record
    assert read_validation_records(path, error=ExportError) == (
        ValidationRecord(
            task_id="t-1",
            accepted=False,
            reason="nop passed",
            bundle_manifest_sha256="ab" * 32,
            json={**report, "bundleManifestSha256": "ab" * 32},
        ),
    )


def test_a_list_of_reports_reads_as_records(tmp_path: Path) -> None:
    reports: Json = [
        {"taskId": "a", "accepted": True},
        {"taskId": "b", "accepted": False, "reason": ""},
    ]
    path = write_validation(tmp_path, reports)
    records = read_validation_records(path, error=ExportError)
    assert [(r.task_id, r.accepted, r.reason, r.bundle_manifest_sha256) for r in records] == [
        ("a", True, None, None),
        ("b", False, None, None),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"[1]", "{path}: entry 0 is not a validation report (taskId, accepted)"),
        (b'{"taskId": "a"}', "{path}: entry 0 is not a validation report (taskId, accepted)"),
        (
            b"{",
            (
                "{path}: invalid JSON: Expecting property name enclosed in double quotes"
                " at line 1 column 2"
            ),
        ),
    ],
    ids=["not-an-object", "no-verdict", "not-json"],
)
def test_a_bad_validation_file_is_refused_with_one_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / VALIDATION_FILE
    path.write_bytes(content)
    with pytest.raises(ExportError) as caught:
        read_validation_records(path, error=ExportError)
    assert str(caught.value) == message.format(path=path)


# --- the draft record, the run directory, the export manifest -----------------------------------


def _full_evidence() -> DraftEvidence:
    """A draft's evidence with every member set, the optional ones too."""
    commands = DraftCommands("make", "make test", ("python3.11",), "make", (("testCommand", "x"),))
    tests = (("t.py::a", "passed"),)
    carried = FileRunRecord("t.py", 1, tests, None, carried=True, carried_tests=2)
    alone = FileRunRecord("u.py", 0, (), "no tests ran", alone=True)
    observed = observed_inputs(
        TaskInputs("0" * 40, ".", "make", "make test", ("python3.11",)),
        b"",
        b"diff --git a/x b/x\n",
        gold_runs=2,
    )
    return DraftEvidence(
        "pr-1",
        commands,
        ("t.py::a",),
        (),
        (RunRecord("base", (carried, alone)),),
        None,
        (FlakyTest(test="t.py: b", where="base", passed=1, runs=2),),
        (),
        "logs",
        1.0,
        basis=PassToPassBasis(basis="none", detail="d"),
        python_retries=("under Python 3.12: x",),
        observed=observed,
        quality=QualityNote("ship", ("tox.ini",), TierChange("hard", None)),
        total_seconds=2.5,
        audit_warnings=(),
    )


def test_a_draft_record_keeps_its_keys_in_the_file_s_order(tmp_path: Path) -> None:
    """`draft.json`'s members in the order drafts have always written them; optional ones only
    when set (all are here), `reason` always."""
    evidence = _full_evidence()
    assert list(evidence.to_json()) == [
        "schemaVersion", "draft", "note", "candidate", "commands", "selectors", "runs", "reason",
        "droppedFlaky", "rerunAlone", "logs", "timings", "passToPassBasis", "pythonRetries",
        "observed", "quality", "auditWarnings",
    ]  # fmt: skip
    assert [list(run.to_json()) for run in evidence.runs[0].files] == [
        ["file", "exitCode", "tests", "noTests", "carried", "carriedTests"],
        ["file", "exitCode", "tests", "noTests", "alone"],
    ]
    assert evidence.to_json()["timings"] == {"runSeconds": 1.0, "totalSeconds": 2.5}
    assert evidence.quality is not None
    assert evidence.quality.to_json()["difficulty"] == {"before": "hard", "after": None}
    bare = replace(evidence, basis=None, python_retries=(), observed=None, quality=None)
    bare = replace(bare, total_seconds=None, audit_warnings=None)
    assert list(bare.to_json())[-1] == "timings"
    assert bare.to_json()["timings"] == {"runSeconds": 1.0}
    (tmp_path / DRAFT_FILE).write_bytes(render_draft_record(evidence))
    assert read_draft_record(tmp_path) == evidence.to_json()
    assert render_draft_record(evidence).endswith(b"}\n")


def test_a_run_pool_round_trips(tmp_path: Path) -> None:
    run = RunDirectory(tmp_path / "run")
    pool = Pool(head="0" * 40, repository="owner/name", candidates=({"id": "pr-1"},))
    run.write_pool(pool)
    assert run.read_pool() == pool
    value = run.read_json(run.pool_path)
    assert isinstance(value, dict)
    assert list(value) == ["head", "repository", "candidates"]


@pytest.mark.parametrize(
    "value",
    [[], {"head": "h", "repository": "r"}, {"head": 1, "repository": "r", "candidates": []}],
)
def test_a_pool_that_is_not_one_is_refused(tmp_path: Path, value: Json) -> None:
    run = RunDirectory(tmp_path / "run")
    run.write_json(run.pool_path, value)
    with pytest.raises(RunError) as caught:
        run.read_pool()
    assert str(caught.value) == f"{run.pool_path}: not a run's mined pool"


def test_an_export_manifest_round_trips() -> None:
    manifest = Manifest(
        run_id="run-1",
        candidate_counts=(1, 0, 0),
        repository_url="https://example.invalid/r",
        repository_commit="a" * 40,
        version="selfbench 0",
        tasks=(TaskEntry("t-1", "b" * 64),),
    )
    assert parse_manifest(render_manifest(manifest)) == manifest


# --- every artifact file name once -------------------------------------------------------------

OWNERS = {
    "definition.json": "artifacts/task_dir.py",
    "test.patch": "artifacts/task_dir.py",
    "gold.patch": "artifacts/task_dir.py",
    "harbor-task": "artifacts/compiled.py",
    "validation.json": "artifacts/validation.py",
    "draft.json": "artifacts/draft_record.py",
    "task.toml": "bundle/layout.py",
    "instruction.md": "bundle/layout.py",
    ".selfbench-manifest.json": "bundle/layout.py",
    "inputs.json": "run/state.py",
    "pool.json": "run/state.py",
    "events.jsonl": "run/state.py",
    "manifest.json": "export/manifest.py",
    ".selfbench-review.json": "export/reader.py",
    "results.jsonl": "evaluate/results.py",
}
"""Each artifact file name and the one module under src/selfbench that spells it."""


def _code_strings(source: str) -> list[str]:
    """The string literals of a module's code: not comments, not docstrings or bare strings."""
    found = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    starts = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT}
    for index, token in enumerate(tokens):
        if token.type != tokenize.STRING:
            continue
        before = tokens[index - 1].type if index else tokenize.NEWLINE
        after = tokens[index + 1].type if index + 1 < len(tokens) else tokenize.NEWLINE
        if before in starts and after in {tokenize.NEWLINE, tokenize.ENDMARKER}:
            continue  # a docstring or another bare string statement
        try:
            value = ast.literal_eval(token.string)
        except ValueError:
            continue  # an f-string: its literal parts are not file names
        if isinstance(value, str):
            found.append(value)
    return found


def test_the_scanner_skips_comments_and_docstrings() -> None:
    source = (
        '"""draft.json"""\n# "draft.json"\ndef f():\n    """draft.json"""\n    return "a.json"\n'
    )
    assert _code_strings(source) == ["a.json"]


def test_each_artifact_file_name_is_spelled_in_one_module() -> None:
    spelled: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SOURCE.rglob("*.py")):
        for value in _code_strings(path.read_text(encoding="utf-8")):
            if value in OWNERS:
                spelled[value].add(path.relative_to(SOURCE).as_posix())
    assert dict(spelled) == {name: {owner} for name, owner in OWNERS.items()}


def test_each_owner_is_a_module_of_the_package() -> None:
    assert all((SOURCE / owner).is_file() for owner in OWNERS.values())
