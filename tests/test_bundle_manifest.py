"""The bundle manifest (SPEC §5): one renderer, one parser, and every bundle reader using them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import SNAPSHOT_SHA256
from selfbench.artifacts.compiled import locate_task, read_bundle_manifest
from selfbench.artifacts.task_dir import read_definition
from selfbench.bundle import (
    BundleManifest,
    build_bundle_manifest,
    layout,
    parse_bundle_manifest,
    render_bundle,
    render_bundle_manifest,
)
from selfbench.compiler import refresh_bundle
from selfbench.errors import BundleError, CompileError
from selfbench.validate import HarborOptions, HarborRunner, validate

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(path.name for path in GOLDEN.iterdir() if path.is_dir())
SOURCE = "b/.selfbench-manifest.json"
PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]*$"

VALID = BundleManifest(
    task_id="demo-1",
    difficulty="medium",
    definition_sha256="a" * 64,
    test_patch_sha256="b" * 64,
    gold_patch_sha256="0123456789abcdef" * 4,
    snapshot_sha256="c" * 64,
)


def _fields(**changes: Any) -> dict[str, Any]:
    return {**VALID.to_json(), **changes}


def _bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


# --- render → parse ----------------------------------------------------------------------------

ROUND_TRIP = {
    "compiled-now": VALID,
    "easy": replace(VALID, difficulty="easy"),
    "hard": replace(VALID, difficulty="hard"),
    "older-compiler": replace(VALID, compiler_revision=7, harbor_schema_version="1.3"),
    "dotted-id": replace(VALID, task_id="acme.widgets_42-x"),
    "one-character-id": replace(VALID, task_id="Z"),
}


@pytest.mark.parametrize("case", ROUND_TRIP)
def test_a_rendered_manifest_parses_back_to_the_same_value(case: str) -> None:
    manifest = ROUND_TRIP[case]
    assert parse_bundle_manifest(render_bundle_manifest(manifest), source=SOURCE) == manifest


@pytest.mark.parametrize("case", CASES)
def test_golden_manifests_parse_and_render_byte_for_byte(case: str) -> None:
    data = (GOLDEN / case / "expected" / layout.MANIFEST).read_bytes()
    manifest = parse_bundle_manifest(data, source=SOURCE)
    assert render_bundle_manifest(manifest) == data
    definition = read_definition(GOLDEN / case / "definition.json").definition
    test_patch = (GOLDEN / case / "test.patch").read_bytes()
    gold_patch = (GOLDEN / case / "gold.patch").read_bytes()
    assert manifest.snapshot_sha256 == SNAPSHOT_SHA256
    built = build_bundle_manifest(
        definition, test_patch, gold_patch, snapshot_sha256=SNAPSHOT_SHA256
    )
    assert built == manifest


def test_render_is_the_spec_layout() -> None:
    assert render_bundle_manifest(VALID).decode() == (
        "{\n"
        '  "generator": "selfbench",\n'
        '  "harborSchemaVersion": "1.4",\n'
        f'  "compilerRevision": {layout.COMPILER_REVISION},\n'
        '  "taskId": "demo-1",\n'
        '  "difficulty": "medium",\n'
        f'  "definitionSha256": "{"a" * 64}",\n'
        f'  "testPatchSha256": "{"b" * 64}",\n'
        f'  "goldPatchSha256": "{"0123456789abcdef" * 4}",\n'
        f'  "snapshotSha256": "{"c" * 64}"\n'
        "}\n"
    )


_TASK_IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,40}", fullmatch=True).filter(
    lambda task_id: ".." not in task_id
)
_DIGESTS = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
_MANIFESTS = st.builds(
    BundleManifest,
    task_id=_TASK_IDS,
    difficulty=st.sampled_from(["easy", "medium", "hard"]),
    definition_sha256=_DIGESTS,
    test_patch_sha256=_DIGESTS,
    gold_patch_sha256=_DIGESTS,
    snapshot_sha256=_DIGESTS,
    compiler_revision=st.integers(min_value=1, max_value=2**53),
    harbor_schema_version=st.text(min_size=1, max_size=8),
)


@given(_MANIFESTS)
def test_every_manifest_round_trips(manifest: BundleManifest) -> None:
    assert parse_bundle_manifest(render_bundle_manifest(manifest), source=SOURCE) == manifest


# --- refusals ----------------------------------------------------------------------------------

_WITHOUT_DIGEST = {key: value for key, value in _fields().items() if key != "definitionSha256"}

REFUSED: dict[str, tuple[bytes, str]] = {
    "invalid-utf8": (b"\xff{}", "invalid UTF-8 at byte 0"),
    "not-json": (b"{", "invalid JSON: Expecting property name enclosed in double quotes"),
    "not-an-object": (b"[]", "not a selfbench manifest (a JSON object)"),
    "missing-field": (_bytes(_WITHOUT_DIGEST), "lacks definitionSha256"),
    "missing-fields": (
        _bytes({"taskId": "demo-1"}),
        (
            "lacks generator, harborSchemaVersion, compilerRevision, difficulty, "
            "definitionSha256, testPatchSha256, goldPatchSha256, snapshotSha256"
        ),
    ),
    "unknown-key": (_bytes(_fields(extra=1)), 'has unknown key "extra"'),
    "unknown-key-newline": (_bytes(_fields(**{"a\nb": 1})), 'has unknown key "a\\nb"'),
    "generator": (_bytes(_fields(generator="other")), 'generator must be "selfbench"'),
    "schema-version": (
        _bytes(_fields(harborSchemaVersion="")),
        "harborSchemaVersion must be a non-empty string",
    ),
    "revision-zero": (
        _bytes(_fields(compilerRevision=0)),
        "compilerRevision must be a positive integer",
    ),
    "revision-boolean": (
        _bytes(_fields(compilerRevision=True)),
        "compilerRevision must be a positive integer",
    ),
    "revision-float": (
        _bytes(_fields(compilerRevision=1.5)),
        "compilerRevision must be a positive integer",
    ),
    "task-id-number": (_bytes(_fields(taskId=3)), "taskId must be a string"),
    "task-id-escapes": (
        _bytes(_fields(taskId="../x")),
        f"taskId '../x' does not match {PATTERN}",
    ),
    "task-id-newline": (
        _bytes(_fields(taskId="a\nb")),
        f"taskId 'a\\nb' does not match {PATTERN}",
    ),
    "task-id-dot-dot": (
        _bytes(_fields(taskId="a..b")),
        "taskId a..b cannot name a Harbor task: it holds '..'",
    ),
    "difficulty": (
        _bytes(_fields(difficulty="expert")),
        "difficulty must be one of easy, medium, hard",
    ),
    "sha-uppercase": (
        _bytes(_fields(definitionSha256="A" * 64)),
        "definitionSha256 must be 64 lowercase hex digits",
    ),
    "sha-short": (
        _bytes(_fields(testPatchSha256="abc")),
        "testPatchSha256 must be 64 lowercase hex digits",
    ),
    "sha-commit": (
        _bytes(_fields(goldPatchSha256="a" * 40)),
        "goldPatchSha256 must be 64 lowercase hex digits",
    ),
    "sha-null": (
        _bytes(_fields(goldPatchSha256=None)),
        "goldPatchSha256 must be 64 lowercase hex digits",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_malformed_manifest_is_one_line_naming_the_file(case: str) -> None:
    data, message = REFUSED[case]
    with pytest.raises(BundleError) as caught:
        parse_bundle_manifest(data, source=SOURCE)
    assert str(caught.value).startswith(f"{SOURCE}: {message}")
    if case != "not-json":  # the JSON parser's own words follow its position
        assert str(caught.value) == f"{SOURCE}: {message}"


def _is_one_line_error(data: bytes) -> None:
    """Parsing `data` gives a manifest, or one BundleError line naming the file; nothing else."""
    message = None
    try:
        parse_bundle_manifest(data, source=SOURCE)
    except BundleError as exc:
        message = str(exc)
    assert message is None or (message.startswith(f"{SOURCE}: ") and "\n" not in message)


@given(st.binary(max_size=400))
def test_any_bytes_parse_or_raise_only_the_bundle_error(data: bytes) -> None:
    _is_one_line_error(data)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from([*_fields(), "extra"]), _JSON), st.booleans())
def test_any_json_object_parses_or_raises_only_the_bundle_error(
    changes: dict[str, Any], drop: bool
) -> None:
    fields = _fields(**changes)
    if drop and changes:
        del fields[next(iter(changes))]
    _is_one_line_error(json.dumps(fields).encode())


# --- every reader uses the one parser ----------------------------------------------------------


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """A rendered bundle (snapshots left out) with its definition beside it."""
    case = GOLDEN / "python-root"
    definition = read_definition(case / "definition.json").definition
    files = render_bundle(
        definition,
        (case / "test.patch").read_bytes(),
        (case / "gold.patch").read_bytes(),
        snapshot_sha256=SNAPSHOT_SHA256,
    )
    root = tmp_path / "harbor-task"
    for item in files:
        (root / item.path).parent.mkdir(parents=True, exist_ok=True)
        (root / item.path).write_bytes(item.content)
    (tmp_path / "definition.json").write_bytes((case / "definition.json").read_bytes())
    return root


def test_every_reader_gives_the_parsers_message(bundle: Path) -> None:
    manifest = read_bundle_manifest(bundle)
    assert manifest.task_id == "widgets-pr-101"
    assert locate_task(bundle).manifest == manifest
    (bundle / layout.MANIFEST).write_bytes(_bytes(_fields(testPatchSha256="abc")))
    expected = f"{bundle / layout.MANIFEST}: testPatchSha256 must be 64 lowercase hex digits"
    with pytest.raises(BundleError) as located:
        locate_task(bundle)
    with pytest.raises(BundleError) as refreshed:
        refresh_bundle(bundle, definition=bundle.parent / "definition.json")
    with pytest.raises(BundleError) as harbor:
        validate([bundle], runner=HarborRunner(HarborOptions(jobs_dir=bundle.parent / "jobs")))
    assert [str(located.value), str(refreshed.value), str(harbor.value)] == [expected] * 3
    assert not (bundle.parent / "jobs").exists()


def test_a_manifest_of_another_task_is_refused_by_locate_and_refresh(bundle: Path) -> None:
    (bundle / layout.MANIFEST).write_bytes(render_bundle_manifest(VALID))
    definition = bundle.parent / "definition.json"
    with pytest.raises(BundleError) as located:
        locate_task(bundle)
    assert str(located.value) == f"{definition}: task widgets-pr-101 does not match bundle demo-1"
    with pytest.raises(CompileError) as refreshed:
        refresh_bundle(bundle, definition=definition)
    assert str(refreshed.value) == "bundle task demo-1 does not match widgets-pr-101"
