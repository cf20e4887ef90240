"""An export carries each task's `quality.json` (SPEC §13) and `verify` checks its digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from export_helpers import (
    COMMIT,
    RawMember,
    author_collected,
    gzip_tar,
    members_of,
    outer_archive,
    quality_record,
)
from selfbench.artifacts.quality_record import (
    QUALITY_FILE,
    read_quality,
    render_quality,
    write_quality,
)
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.errors import ArchiveError, ExportError
from selfbench.export import RunInfo, export_run, extract_export, verify_export, write_clean_export

RUN = RunInfo("run-q", "https://example.com/acme/slugkit.git", COMMIT)
QUALITY_MEMBER = f"harbor-task/{QUALITY_FILE}"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> list[Path]:
    """Two tasks: `with-q` has a quality record beside its definition, `without-q` (an older
    task) has none."""
    root = tmp_path_factory.mktemp("collected")
    with_quality = author_collected(root, sample, "with-q")
    write_quality(with_quality, quality_record("with-q", seconds=12.5))
    return [with_quality, author_collected(root, sample, "without-q")]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, collected: list[Path]) -> Path:
    out = tmp_path_factory.mktemp("export") / "run.tar.gz"
    export_run(collected, run=RUN, out=out)
    return out


def _inner(export: Path, task_id: str) -> dict[str, bytes]:
    outer = {member.name: member.data for member in members_of(export.read_bytes())}
    return {member.name: member.data for member in members_of(outer[f"tasks/{task_id}.tar.gz"])}


def _manifest(export: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads(members_of(export.read_bytes())[0].data)
    return value


def test_the_export_carries_the_record_without_its_timing_and_lists_its_digest(
    exported: Path,
) -> None:
    carried = _inner(exported, "with-q")[QUALITY_MEMBER]
    assert carried == render_quality(quality_record("with-q", seconds=0.0))
    assert QUALITY_MEMBER not in _inner(exported, "without-q")
    tasks = _manifest(exported)["tasks"]
    assert isinstance(tasks, list)
    assert tasks[0] == {
        "taskId": "with-q",
        "sha256": tasks[0]["sha256"],
        "qualitySha256": hashlib.sha256(carried).hexdigest(),
    }
    assert list(tasks[1]) == ["taskId", "sha256"]  # a task without a record: as before
    verified = verify_export(exported).manifest
    assert [entry.quality_sha256 for entry in verified.tasks] == [
        hashlib.sha256(carried).hexdigest(),
        None,
    ]


def test_extract_and_a_clean_export_keep_the_record(tmp_path: Path, exported: Path) -> None:
    extract_export(exported, out=tmp_path / "tasks")
    record = read_quality(tmp_path / "tasks" / "with-q" / QUALITY_FILE)
    assert record == quality_record("with-q", seconds=0.0)
    assert not (tmp_path / "tasks" / "without-q" / QUALITY_FILE).exists()
    clean = tmp_path / "clean.tar.gz"
    manifest = write_clean_export(exported, clean, drop=frozenset({"without-q"}))
    assert manifest.tasks[0].quality_sha256 is not None
    assert verify_export(clean).manifest == manifest


def _tampered(tmp_path: Path, exported: Path, *, fix_task_digest: bool) -> Path:
    """The export with `with-q`'s verdict changed to `ship` inside its task archive."""
    outer = members_of(exported.read_bytes())
    index = next(i for i, m in enumerate(outer) if m.name == "tasks/with-q.tar.gz")
    inner = members_of(outer[index].data)
    at = next(i for i, m in enumerate(inner) if m.name == QUALITY_MEMBER)
    record = json.loads(inner[at].data)
    record["verdict"], record["reasons"] = "ship", []
    inner[at] = RawMember(QUALITY_MEMBER, json.dumps(record).encode(), mode=inner[at].mode)
    task = gzip_tar(inner)
    outer[index] = RawMember(outer[index].name, task)
    if fix_task_digest:
        manifest = json.loads(outer[0].data)
        manifest["tasks"][0]["sha256"] = hashlib.sha256(task).hexdigest()
        outer[0] = RawMember("manifest.json", json.dumps(manifest).encode())
    path = tmp_path / "tampered.tar.gz"
    path.write_bytes(gzip_tar(outer))
    return path


@pytest.mark.parametrize("fix_task_digest", [False, True], ids=["as-is", "task-digest-fixed"])
def test_a_tampered_record_fails_verification_naming_the_task_and_the_file(
    tmp_path: Path, exported: Path, fix_task_digest: bool
) -> None:
    tampered = _tampered(tmp_path, exported, fix_task_digest=fix_task_digest)
    with pytest.raises(ArchiveError) as caught:
        verify_export(tampered)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{tampered}: tasks/with-q.tar.gz: {QUALITY_MEMBER}: sha256 ")
    assert "does not match manifest.json qualitySha256" in message


def _archive_of(exported: Path, task_id: str) -> list[RawMember]:
    outer = {member.name: member.data for member in members_of(exported.read_bytes())}
    return members_of(outer[f"tasks/{task_id}.tar.gz"])


def test_a_record_the_manifest_does_not_list_is_refused(tmp_path: Path, exported: Path) -> None:
    """A record slipped into a task that had none (its archive digest made to match)."""
    inner = _archive_of(exported, "without-q")
    data = render_quality(quality_record("without-q", "ship"))
    inner.append(RawMember(QUALITY_MEMBER, data))
    path = tmp_path / "slipped.tar.gz"
    path.write_bytes(outer_archive({"without-q": gzip_tar(inner)}))
    with pytest.raises(ArchiveError) as caught:
        verify_export(path)
    assert str(caught.value) == (
        f"{path}: tasks/without-q.tar.gz: {QUALITY_MEMBER}: not listed in manifest.json "
        "(no qualitySha256)"
    )


def test_a_record_the_manifest_lists_must_be_there(tmp_path: Path, exported: Path) -> None:
    inner = [m for m in _archive_of(exported, "with-q") if m.name != QUALITY_MEMBER]
    task = gzip_tar(inner)
    manifest = _manifest(exported)
    tasks = manifest["tasks"]
    assert isinstance(tasks, list)
    manifest.update(
        tasks=[{**tasks[0], "sha256": hashlib.sha256(task).hexdigest()}],
        acceptedCount=1,
    )
    path = tmp_path / "dropped.tar.gz"
    path.write_bytes(outer_archive({"with-q": task}, manifest=manifest))
    with pytest.raises(ArchiveError) as caught:
        verify_export(path)
    assert str(caught.value) == (
        f"{path}: tasks/with-q.tar.gz: lacks {QUALITY_MEMBER} "
        "(manifest.json lists its qualitySha256)"
    )


def test_a_record_of_another_task_is_refused_at_export(
    tmp_path: Path, sample: SampleRepository
) -> None:
    task = author_collected(tmp_path, sample, "mine")
    write_quality(task, quality_record("theirs"))
    out = tmp_path / "run.tar.gz"
    with pytest.raises(ExportError) as caught:
        export_run([task], run=RUN, out=out)
    assert str(caught.value) == (
        f"{task / QUALITY_FILE}: the quality record of task theirs, not mine"
    )
    assert not out.exists()


def test_a_record_given_by_task_id_is_the_one_carried(
    tmp_path: Path, collected: list[Path]
) -> None:
    """`selfbench run` hands the export the records its quality stage wrote."""
    given = tmp_path / "q" / QUALITY_FILE
    given.parent.mkdir()
    write_quality(given.parent, quality_record("without-q", "ship"))
    out = tmp_path / "run.tar.gz"
    export_run(collected, run=RUN, out=out, quality={"without-q": given})
    carried = _inner(out, "without-q")[QUALITY_MEMBER]
    assert json.loads(carried)["verdict"] == "ship"
    assert QUALITY_MEMBER in _inner(out, "with-q")  # the others' beside their definitions
    verify_export(out)
