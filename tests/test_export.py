"""export, verify and extract (SPEC §8) on real collected tasks, and hostile archives refused."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from export_helpers import (
    COMMIT,
    RawMember,
    author_collected,
    gzip_tar,
    members_of,
    outer_archive,
    report,
)
from harbor_env import run_in_harbor_venv
from selfbench.bundle import layout
from selfbench.bundle.locate import BundleError, LocatedTask
from selfbench.cli import main
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.export import (
    REVIEW_FILE,
    ArchiveError,
    ExportError,
    Limits,
    RunInfo,
    export_and_verify,
    export_run,
    extract_export,
    verify_export,
    write_clean_export,
    writer,
)
from selfbench.export.manifest import task_id_problem

RUN = RunInfo("run-7", "https://example.com/acme/slugkit.git", COMMIT)
IDS = ("slug-a", "slug-b", "slug-c")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> list[Path]:
    """Three collected tasks: two medium, one easy."""
    root = tmp_path_factory.mktemp("collected")
    return [
        author_collected(root, sample, "slug-a"),
        author_collected(root, sample, "slug-b"),
        author_collected(root, sample, "slug-c", difficulty="easy"),
    ]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, collected: list[Path]) -> Path:
    out = tmp_path_factory.mktemp("export") / "run.tar.gz"
    export_run(collected, run=RUN, out=out)
    return out


def _members(archive: Path | bytes) -> dict[str, bytes]:
    data = archive.read_bytes() if isinstance(archive, Path) else archive
    return {member.name: member.data for member in members_of(data)}


def _names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def _task_archive(export: Path, task_id: str) -> bytes:
    return _members(export)[f"tasks/{task_id}.tar.gz"]


# --- export ------------------------------------------------------------------------------------


def test_export_lists_every_task_with_its_digest(exported: Path) -> None:
    members = members_of(exported.read_bytes())
    names = [member.name for member in members]
    assert names == ["manifest.json", "tasks", *(f"tasks/{task_id}.tar.gz" for task_id in IDS)]
    manifest = json.loads(members[0].data)
    assert list(manifest) == [
        "schemaVersion", "runId", "candidateCounts", "repository", "version", "acceptedCount",
        "tasks",
    ]  # fmt: skip
    assert manifest["candidateCounts"] == {"easy": 1, "medium": 2, "hard": 0}
    assert manifest["repository"] == {"url": RUN.repository_url, "commit": COMMIT}
    assert manifest["acceptedCount"] == 3
    assert manifest["version"] == f"selfbench 0.1.0 (compiler revision {layout.COMPILER_REVISION})"
    digests = {member.name: hashlib.sha256(member.data).hexdigest() for member in members[2:]}
    assert manifest["tasks"] == [
        {"taskId": task_id, "sha256": digests[f"tasks/{task_id}.tar.gz"]} for task_id in IDS
    ]


def test_each_task_archive_holds_the_bundle_and_its_review_record(
    exported: Path, collected: list[Path]
) -> None:
    inner = members_of(_task_archive(exported, "slug-a"))
    bundle = collected[0] / "harbor-task"
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    regular = {m.name: m.data for m in inner if m.type == tarfile.REGTYPE}
    assert sorted(regular) == sorted(f"harbor-task/{name}" for name in [*files, REVIEW_FILE])
    for name in files:
        assert regular[f"harbor-task/{name}"] == (bundle / name).read_bytes(), name
    record = json.loads(regular[f"harbor-task/{REVIEW_FILE}"])
    definition = json.loads((collected[0] / "definition.json").read_bytes())
    assert record["definition"] == definition
    assert record["validation"] is None
    assert record["audit"]["metrics"] == {
        "implementationFiles": 3,
        "implementationChangedLines": 72,
        "testFiles": 2,
    }


def test_export_is_byte_reproducible(tmp_path: Path, exported: Path, collected: list[Path]) -> None:
    for path in collected[0].rglob("*"):
        os.utime(path, (1, 1))  # times, owners and input order must not matter
    again = tmp_path / "again.tar.gz"
    export_run(list(reversed(collected)), run=RUN, out=again)
    assert again.read_bytes() == exported.read_bytes()


def test_export_refreshes_each_task_from_its_definition(
    tmp_path: Path, sample: SampleRepository
) -> None:
    task = author_collected(tmp_path, sample, "slug-r")
    definition = json.loads((task / "definition.json").read_bytes())
    definition["testCommand"] = "python -m pytest -q -p no:cacheprovider {tests}"
    (task / "definition.json").write_text(json.dumps(definition), encoding="utf-8")
    out = tmp_path / "run.tar.gz"
    export_run([task], run=RUN, out=out)
    inner = _members(_task_archive(out, "slug-r"))
    assert b"-p no:cacheprovider" in inner["harbor-task/tests/test.sh"]
    record = json.loads(inner[f"harbor-task/{REVIEW_FILE}"])
    assert record["definition"]["testCommand"] == definition["testCommand"]


def test_validation_reports_leave_out_rejected_tasks(
    tmp_path: Path, collected: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first.json"
    first.write_text(json.dumps([report(t, accepted=False, reason="nop: x") for t in IDS]))
    second = tmp_path / "second.json"  # a later report on a task replaces an earlier one
    second.write_text(
        json.dumps([report("slug-a", accepted=True), report("slug-c", accepted=True)])
    )
    out = tmp_path / "run.tar.gz"
    args = ["export", *map(str, collected), "--run-id", RUN.run_id, "--out", str(out)]
    args += ["--repository-url", RUN.repository_url, "--repository-commit", COMMIT]
    args += ["--validation", str(first), "--validation", str(second)]
    assert main(args) == 0
    assert capsys.readouterr().out == (f"Exported 2 of 3 tasks to {out}\nleft out slug-b: nop: x\n")
    manifest = verify_export(out).manifest
    assert [task.task_id for task in manifest.tasks] == ["slug-a", "slug-c"]
    assert manifest.candidate_counts == (1, 2, 0)
    record = json.loads(_members(_task_archive(out, "slug-a"))[f"harbor-task/{REVIEW_FILE}"])
    assert record["validation"] == report("slug-a", accepted=True)


def _error_case(tmp_path: Path, collected: list[Path], case: str) -> tuple[Any, str]:
    run, inputs, validation = RUN, list(collected), None
    if case == "commit":
        run = RunInfo(RUN.run_id, RUN.repository_url, "abc")
    elif case == "duplicate":
        inputs.append(collected[0] / "harbor-task")
    elif case == "unreported":
        validation = tmp_path / "report.json"
        validation.write_text(json.dumps([report("slug-a", accepted=True)]))
    elif case == "not-a-report":
        validation = tmp_path / "report.json"
        validation.write_text(json.dumps([{"taskId": "slug-a"}]))
    elif case == "not-a-bundle":
        inputs.append(tmp_path)
    reports = [validation] if validation is not None else None
    return (inputs, run, reports), case


EXPORT_ERRORS = {
    "commit": (ExportError, "--repository-commit abc: expected a full commit SHA"),
    "duplicate": (ExportError, "task slug-a given twice: {a}, {a}"),
    "unreported": (ExportError, "no validation report names task slug-b"),
    "not-a-report": (
        ExportError,
        "{tmp}/report.json: entry 0 is not a validation report (taskId, accepted)",
    ),
    "not-a-bundle": (BundleError, "{tmp}: not a bundle (no task.toml) or a collect directory"),
}


@pytest.mark.parametrize("case", EXPORT_ERRORS)
def test_export_refuses_bad_inputs_and_writes_nothing(
    tmp_path: Path, collected: list[Path], case: str
) -> None:
    (inputs, run, reports), _ = _error_case(tmp_path, collected, case)
    out = tmp_path / "out" / "run.tar.gz"
    out.parent.mkdir()
    out.write_bytes(b"previous")
    error, message = EXPORT_ERRORS[case]
    with pytest.raises(error) as caught:
        export_run(inputs, run=run, out=out, validation=reports)
    bundle = collected[0] / "harbor-task"
    assert str(caught.value) == message.format(tmp=tmp_path, a=bundle)
    assert out.read_bytes() == b"previous"
    assert _names(out.parent) == ["run.tar.gz"]


def test_a_failure_while_packing_leaves_the_old_export(
    tmp_path: Path, collected: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = writer._pack_task  # noqa: SLF001 - fault injection at the packing seam

    def disk_full_at_slug_b(task: LocatedTask, review: bytes, target: Path) -> str:
        if task.definition.taskId == "slug-b":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(task, review, target)

    monkeypatch.setattr(writer, "_pack_task", disk_full_at_slug_b)
    out = tmp_path / "run.tar.gz"
    out.write_bytes(b"previous")
    with pytest.raises(ExportError) as caught:
        export_run(collected, run=RUN, out=out)
    assert str(caught.value) == f"cannot write {out}: No space left on device"
    assert out.read_bytes() == b"previous"
    assert _names(tmp_path) == ["run.tar.gz"]


def test_export_refuses_a_file_that_is_not_a_bundle_path(
    tmp_path: Path, sample: SampleRepository
) -> None:
    task = author_collected(tmp_path, sample, "slug-n")
    (task / "harbor-task" / "notes.txt").write_text("stray")
    with pytest.raises(ExportError) as caught:
        export_run([task], run=RUN, out=tmp_path / "run.tar.gz")
    assert str(caught.value) == (
        f"{task / 'harbor-task'}: cannot pack notes.txt: not a path of a bundle"
    )


def test_a_task_id_too_long_for_ustar_is_refused() -> None:
    assert task_id_problem("a" * 93) is None
    assert task_id_problem("a" * 94) == (
        f"taskId {'a' * 94} is longer than 93 characters, an export's limit"
    )


def test_export_and_verify_lists_the_next_steps(tmp_path: Path, collected: list[Path]) -> None:
    out = tmp_path / "run.tar.gz"
    done = export_and_verify(collected[:1], run=RUN, out=out)
    assert done.verified.manifest == done.result.manifest
    assert done.next_steps == (
        f"selfbench review {out}    # read each task, drop any, write run.clean.tar.gz",
        f"selfbench verify {tmp_path / 'run.clean.tar.gz'}",
        f"selfbench extract {tmp_path / 'run.clean.tar.gz'} --out {tmp_path / 'run-tasks'}",
        (
            f"harbor run --path {tmp_path / 'run-tasks'} --agent oracle"
            "    # the reference solutions score 1"
        ),
        (
            f"harbor run --path {tmp_path / 'run-tasks'} --agent codex --model openai/gpt-5 -n 4"
            "    # a model"
        ),
    )


# --- verify and extract ------------------------------------------------------------------------


def test_verify_accepts_a_fresh_export(exported: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(exported)]) == 0
    assert capsys.readouterr().out == (
        f"Verified {exported}: run run-7, 3 tasks (candidates: easy 1, medium 2, hard 0)\n"
    )
    assert main(["verify", str(exported), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verified"] is True
    assert result["manifest"]["acceptedCount"] == 3


def test_extract_gives_a_harbor_tasks_directory(tmp_path: Path, exported: Path) -> None:
    out = tmp_path / "tasks"
    assert main(["extract", str(exported), "--out", str(out)]) == 0
    assert _names(out) == list(IDS)
    bundle = out / "slug-a"
    assert (bundle / layout.TEST_SH).stat().st_mode & 0o777 == 0o755
    assert (bundle / layout.TASK_TOML).stat().st_mode & 0o777 == 0o644
    probe = (
        "import json, sys, warnings; warnings.simplefilter('error')\n"
        "from pathlib import Path\nfrom harbor.models.task.task import Task\n"
        "root = Path(sys.argv[1])\n"
        "print(json.dumps({d.name: [Task.is_valid_dir(d), Task(d).name]"
        " for d in sorted(root.iterdir())}))\n"
    )
    loaded = run_in_harbor_venv("python", "-c", probe, str(out))
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(loaded.stdout) == {t: [True, f"selfbench/{t}"] for t in IDS}
    lint = run_in_harbor_venv("harbor", "lint", *(str(out / t) for t in IDS), "--json")
    assert (lint.returncode, json.loads(lint.stdout)) == (0, [])


def test_extract_refuses_a_directory_that_is_not_empty(tmp_path: Path, exported: Path) -> None:
    (tmp_path / "keep").write_text("x")
    with pytest.raises(ExportError) as caught:
        extract_export(exported, out=tmp_path)
    assert str(caught.value) == f"{tmp_path}: directory is not empty"


def test_clean_export_drops_tasks_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path, exported: Path
) -> None:
    clean = tmp_path / "clean.tar.gz"
    manifest = write_clean_export(exported, clean, drop=frozenset({"slug-b"}))
    assert manifest.accepted_count == 2
    verified = verify_export(clean)
    assert verified.manifest == manifest
    assert verified.manifest.candidate_counts == (1, 2, 0)
    for task_id in ("slug-a", "slug-c"):
        assert _task_archive(clean, task_id) == _task_archive(exported, task_id)
    with pytest.raises(ExportError) as caught:
        write_clean_export(exported, clean, drop=frozenset({"nope"}))
    assert str(caught.value) == f"cannot drop nope: not a task of {exported}"


# --- hostile archives --------------------------------------------------------------------------


def _valid_inner(exported: Path) -> list[RawMember]:
    return members_of(_task_archive(exported, "slug-a"))


def _with(members: list[RawMember], *extra: RawMember) -> bytes:
    return gzip_tar([*members, *extra])


def _outer_hostile(good: bytes, case: str, evil: Path) -> bytes | None:
    """A hostile member beside a sound task, or None when `case` is not an outer one."""
    cases: dict[str, list[RawMember]] = {
        "outer-absolute": [RawMember(str(evil), b"x")],
        "outer-dotdot": [RawMember("tasks/../../evil", b"x")],
        "outer-symlink": [
            RawMember("tasks/slug-x.tar.gz", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        ],
        "outer-hardlink": [RawMember("tasks/x", type=tarfile.LNKTYPE, linkname="manifest.json")],
        "outer-device": [RawMember("tasks/null", type=tarfile.CHRTYPE)],
        "outer-fifo": [RawMember("tasks/fifo", type=tarfile.FIFOTYPE)],
        "outer-duplicate": [RawMember("tasks/slug-a.tar.gz", good)],
        "outer-stray": [RawMember("notes.txt", b"hello")],
        "outer-pax": [RawMember("tasks/" + "x" * 120, b"x", pax=True)],
        "outer-unlisted": [RawMember("tasks/slug-q.tar.gz", good)],
    }
    if case == "outer-gigabytes":
        listed = members_of(outer_archive({"slug-a": good}))[:2]
        return gzip_tar([*listed, RawMember("tasks/slug-a.tar.gz", size=5 << 30)])
    return outer_archive({"slug-a": good}, extra=cases[case]) if case in cases else None


def _inner_hostile(inner: list[RawMember], case: str, evil: Path) -> bytes | None:
    """A task archive with a hostile member, or None when `case` is not an inner one."""
    cases: dict[str, RawMember] = {
        "inner-dotdot": RawMember("harbor-task/../../evil", b"x"),
        "inner-absolute": RawMember(str(evil), b"x"),
        "inner-symlink": RawMember("harbor-task/x", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
        "inner-hardlink": RawMember(
            "harbor-task/y", type=tarfile.LNKTYPE, linkname="harbor-task/task.toml"
        ),
        "inner-device": RawMember("harbor-task/dev", type=tarfile.BLKTYPE),
        "inner-outside": RawMember("other/file", b"x"),
        "inner-layout": RawMember("harbor-task/environment/extra.sh", b"x"),
        "inner-duplicate": RawMember("harbor-task/task.toml", b"x"),
    }
    gold = "harbor-task/solution/gold.patch"
    if case == "inner-gigabytes":
        kept = [member for member in inner if member.name != gold]
        return _with(kept, RawMember(gold, size=6 << 30))
    if case == "inner-missing":
        return _with([member for member in inner if member.name != "harbor-task/task.toml"])
    return _with(inner, cases[case]) if case in cases else None


def _manifest_hostile(good: bytes, case: str) -> bytes:
    """A sound task under a manifest that disagrees, or a broken stream."""
    if case == "inner-task-id":
        return outer_archive({"slug-b": good})
    if case == "truncated":
        return outer_archive({"slug-a": good})[:-300]
    if case == "trailing":
        return gzip_tar(members_of(outer_archive({"slug-a": good})), end=bytes(1024) + b"junk")
    manifest = json.loads(_members(outer_archive({"slug-a": good}))["manifest.json"])
    if case == "digest":
        manifest["tasks"][0]["sha256"] = "0" * 64
    elif case == "count":
        manifest["acceptedCount"] = 2
    else:
        manifest["tasks"].append({"taskId": "slug-q", "sha256": "1" * 64})
        manifest["acceptedCount"] = 2
        manifest["candidateCounts"]["medium"] = 2
    return outer_archive({"slug-a": good}, manifest=manifest)


def _hostile(exported: Path, case: str, target: Path) -> bytes:
    good = _task_archive(exported, "slug-a")
    evil = target / "evil"
    outer = _outer_hostile(good, case, evil)
    if outer is not None:
        return outer
    inner = _inner_hostile(_valid_inner(exported), case, evil)
    if inner is not None:
        return outer_archive({"slug-a": inner})
    return _manifest_hostile(good, case)


HOSTILE = {
    "outer-absolute": "{evil}: absolute member name",
    "outer-dotdot": "tasks/../../evil: member name escapes the archive (..)",
    "outer-symlink": "tasks/slug-x.tar.gz: link member (to /etc/passwd); links are refused",
    "outer-hardlink": "tasks/x: link member (to manifest.json); links are refused",
    "outer-device": "tasks/null: device or FIFO member",
    "outer-fifo": "tasks/fifo: device or FIFO member",
    "outer-duplicate": "tasks/slug-a.tar.gz: duplicate member",
    "outer-stray": "notes.txt: member outside the export layout (manifest.json, "
    "tasks/<taskId>.tar.gz)",
    "outer-pax": "././@PaxHeader: extended (pax or GNU) header; exports use plain ustar",
    "outer-unlisted": "tasks/slug-q.tar.gz: task slug-q is not listed in manifest.json",
    "outer-gigabytes": "tasks/slug-a.tar.gz: member claims 5368709120 bytes (limit 4294967296)",
    "inner-dotdot": "tasks/slug-a.tar.gz: harbor-task/../../evil: member name escapes the "
    "archive (..)",
    "inner-absolute": "tasks/slug-a.tar.gz: {evil}: absolute member name",
    "inner-symlink": "tasks/slug-a.tar.gz: harbor-task/x: link member (to /etc/passwd); links "
    "are refused",
    "inner-hardlink": "tasks/slug-a.tar.gz: harbor-task/y: link member (to "
    "harbor-task/task.toml); links are refused",
    "inner-device": "tasks/slug-a.tar.gz: harbor-task/dev: device or FIFO member",
    "inner-outside": "tasks/slug-a.tar.gz: other/file: member outside harbor-task/",
    "inner-layout": "tasks/slug-a.tar.gz: harbor-task/environment/extra.sh: member outside the "
    "bundle layout",
    "inner-duplicate": "tasks/slug-a.tar.gz: harbor-task/task.toml: duplicate member",
    "inner-gigabytes": "tasks/slug-a.tar.gz: harbor-task/solution/gold.patch: member claims "
    "6442450944 bytes (limit 4294967296)",
    "inner-missing": "tasks/slug-a.tar.gz: lacks harbor-task/task.toml",
    "inner-task-id": "tasks/slug-b.tar.gz: harbor-task/.selfbench-manifest.json: does not "
    "describe task slug-b",
    "digest": "tasks/slug-a.tar.gz: sha256 {sha} does not match manifest.json ({zeros})",
    "count": "manifest.json: acceptedCount 2 does not match 1 tasks",
    "missing-task": "tasks/slug-q.tar.gz: listed in manifest.json but missing",
    "truncated": "tasks/slug-a.tar.gz: not a valid gzip stream (Compressed file ended before "
    "the end-of-stream marker was reached)",
    "trailing": "data after the end of the archive",
}


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_archives_are_refused_and_nothing_is_written(
    tmp_path: Path, exported: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "hostile.tar.gz"
    archive.write_bytes(_hostile(exported, case, tmp_path))
    good = hashlib.sha256(_task_archive(exported, "slug-a")).hexdigest()
    expected = HOSTILE[case].format(evil=tmp_path / "evil", sha=good, zeros="0" * 64)
    assert main(["verify", str(archive)]) == 1
    assert capsys.readouterr().err == f"error: {archive}: {expected}\n"
    out = tmp_path / "extracted"
    with pytest.raises(ArchiveError) as caught:
        extract_export(archive, out=out)
    assert str(caught.value) == f"{archive}: {expected}"
    assert not out.exists()
    assert _names(tmp_path) == ["hostile.tar.gz"]
    assert main(["extract", str(archive), "--out", str(out)]) == 2


def test_extract_of_a_bad_second_task_leaves_nothing(tmp_path: Path, exported: Path) -> None:
    members = members_of(exported.read_bytes())
    manifest = json.loads(members[0].data)
    manifest["tasks"][1]["sha256"] = "f" * 64
    members[0] = RawMember("manifest.json", json.dumps(manifest).encode())
    archive = tmp_path / "bad.tar.gz"
    archive.write_bytes(gzip_tar(members))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ArchiveError):
        extract_export(archive, out=out)
    assert _names(out) == []


def test_unreadable_export_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.tar.gz"
    assert main(["verify", str(missing)]) == 2
    assert capsys.readouterr().err == (f"error: cannot read {missing}: No such file or directory\n")


def test_a_plain_file_is_not_an_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "plain.tar.gz"
    archive.write_bytes(b"not gzip at all")
    assert main(["verify", str(archive)]) == 1
    assert capsys.readouterr().err == (
        f"error: {archive}: not a valid gzip stream (Not a gzipped file (b'no'))\n"
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(position=st.integers(min_value=0), flip=st.integers(min_value=1, max_value=255))
def test_any_flipped_byte_of_a_task_archive_is_refused_naming_it(
    tmp_path: Path, exported: Path, position: int, flip: int
) -> None:
    members = members_of(exported.read_bytes())
    index = next(i for i, m in enumerate(members) if m.name == "tasks/slug-b.tar.gz")
    data = bytearray(members[index].data)
    data[position % len(data)] ^= flip
    members[index] = RawMember(members[index].name, bytes(data))
    archive = tmp_path / "flipped.tar.gz"
    archive.write_bytes(gzip_tar(members))
    with pytest.raises(ArchiveError) as caught:
        verify_export(archive)
    assert str(caught.value).startswith(f"{archive}: tasks/slug-b.tar.gz: ")


def test_limits_bound_what_an_export_may_unpack_to(tmp_path: Path, exported: Path) -> None:
    with pytest.raises(ArchiveError) as caught:
        extract_export(exported, out=tmp_path / "out", limits=Limits(total_bytes=4000))
    message = str(caught.value)
    assert message.startswith(f"{exported}: tasks/slug-a.tar.gz: harbor-task/")
    assert message.endswith(": the export unpacks to more than 4000 bytes")
    assert _names(tmp_path) == []
