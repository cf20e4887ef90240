"""export, verify and extract (SPEC §8) on real collected tasks, and hostile archives refused."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tarfile
import zlib
from dataclasses import replace
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
from selfbench._fs import rename_no_replace
from selfbench.artifacts.compiled import LocatedTask
from selfbench.artifacts.validation import BUNDLE_BINDING
from selfbench.bundle import layout
from selfbench.cli import main
from selfbench.compiler import refresh_bundle
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.errors import ArchiveError, BundleError, ExportError
from selfbench.export import (
    REVIEW_FILE,
    Limits,
    RunInfo,
    export_and_verify,
    export_run,
    extract,
    extract_export,
    reader,
    verify_export,
    write_clean_export,
    writer,
)
from selfbench.export._streams import MemberReader
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


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int, int]]:
    """Every path under `root` (and `root`): its bytes, inode, mode and mtime in nanoseconds."""
    tree: dict[str, tuple[bytes, int, int, int]] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        stat = path.lstat()
        data = path.read_bytes() if path.is_file() else b""
        key = path.relative_to(root).as_posix()
        tree[key] = (data, stat.st_ino, stat.st_mode, stat.st_mtime_ns)
    return tree


def test_export_never_writes_to_its_inputs(tmp_path: Path, sample: SampleRepository) -> None:
    tasks = [author_collected(tmp_path, sample, task_id) for task_id in ("slug-v", "slug-w")]
    before = [_snapshot(task) for task in tasks]
    export_run([tasks[0], tasks[1] / "harbor-task"], run=RUN, out=tmp_path / "run.tar.gz")
    assert [_snapshot(task) for task in tasks] == before


def test_export_refuses_a_stale_bundle_until_it_is_refreshed(
    tmp_path: Path, sample: SampleRepository, capsys: pytest.CaptureFixture[str]
) -> None:
    task = author_collected(tmp_path, sample, "slug-r")
    definition = json.loads((task / "definition.json").read_bytes())
    definition["testCommand"] = "python -m pytest -q -p no:cacheprovider {tests}"
    (task / "definition.json").write_text(json.dumps(definition), encoding="utf-8")
    before = _snapshot(task)
    out = tmp_path / "run.tar.gz"
    args = ["export", str(task), "--run-id", RUN.run_id, "--out", str(out)]
    args += ["--repository-url", RUN.repository_url, "--repository-commit", COMMIT]
    assert main(args) == 2
    assert capsys.readouterr().err == (
        f"error: {task / 'definition.json'}: not the definition bundle slug-r was compiled from"
        " (refresh the bundle after a repair)\n"
    )
    assert _snapshot(task) == before
    assert not out.exists()
    refresh_bundle(task / "harbor-task", definition=task / "definition.json")
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
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "error: task slug-b has no accepted validation report (rejected: nop: x); validate it,"
        " or leave it out with --skip-unvalidated\n"
    )
    assert main([*args, "--skip-unvalidated"]) == 0
    assert capsys.readouterr().out == (
        f"Exported 2 of 3 tasks to {out}\nleft out slug-b: rejected: nop: x\n"
    )
    manifest = verify_export(out).manifest
    assert [task.task_id for task in manifest.tasks] == ["slug-a", "slug-c"]
    assert manifest.candidate_counts == (1, 2, 0)
    members = _members(_task_archive(out, "slug-a"))
    record = json.loads(members[f"harbor-task/{REVIEW_FILE}"])
    bundle = hashlib.sha256(members[f"harbor-task/{layout.MANIFEST}"]).hexdigest()
    # the verdict travels bound to the bundle it speaks of
    assert record["validation"] == {**report("slug-a", accepted=True), BUNDLE_BINDING: bundle}


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
    "duplicate": (BundleError, "task slug-a given twice: {a}, {a}"),
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

    def disk_full_at_slug_b(
        task: LocatedTask, review: bytes, target: Path, *, quality: bytes | None = None
    ) -> str:
        if task.definition.taskId == "slug-b":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(task, review, target, quality=quality)

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


@pytest.mark.harbor
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


def test_extract_json_lists_the_tasks(
    tmp_path: Path, exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tasks"
    assert main(["extract", str(exported), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"extracted": list(IDS), "out": str(out)}
    assert _names(out) == list(IDS)


def test_extract_says_how_many_tasks_it_extracted(
    tmp_path: Path, exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three tasks here; one task, singular, in `test_export_signature`."""
    out = tmp_path / "tasks"
    assert main(["extract", str(exported), "--out", str(out)]) == 0
    assert capsys.readouterr().out == (
        f"Extracted 3 tasks into {out}\n"
        f"Run them with Harbor: harbor run --path {out} --agent oracle\n"
    )


def test_a_failed_rename_rolls_back_the_tasks_already_moved(
    tmp_path: Path, exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = rename_no_replace

    def full_at_slug_b(source: Path, target: Path) -> None:
        if target.name == "slug-b":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(source, target)

    monkeypatch.setattr(extract, "rename_no_replace", full_at_slug_b)
    for created in (True, False):
        out = tmp_path / f"out-{created}"
        if not created:
            out.mkdir()
        with pytest.raises(ExportError) as caught:
            extract_export(exported, out=out)
        assert str(caught.value) == f"cannot extract into {out}: No space left on device"
        assert not out.exists() if created else _names(out) == []


def test_a_clean_export_refuses_a_source_swapped_after_loading(
    tmp_path: Path, exported: Path, collected: list[Path]
) -> None:
    source = tmp_path / "run.tar.gz"
    source.write_bytes(exported.read_bytes())
    loaded = verify_export(source).manifest
    other = tmp_path / "other.tar.gz"
    export_run(collected[:2], run=RunInfo("run-8", RUN.repository_url, COMMIT), out=other)
    other.replace(source)  # another sound export, holding tasks nobody reviewed
    clean = tmp_path / "clean.tar.gz"
    with pytest.raises(ArchiveError) as caught:
        write_clean_export(source, clean, drop=frozenset(), expected=loaded)
    assert str(caught.value) == (
        f"{source}: manifest.json: not the export that was loaded for review (the file changed "
        "since); nothing written"
    )
    members = members_of(exported.read_bytes())  # same manifest, a task archive changed
    members[2] = RawMember(members[2].name, members[3].data)
    source.write_bytes(gzip_tar(members))
    with pytest.raises(ArchiveError) as caught:
        write_clean_export(source, clean, drop=frozenset({"slug-c"}), expected=loaded)
    assert "tasks/slug-a.tar.gz: sha256 " in str(caught.value)
    assert _names(tmp_path) == ["run.tar.gz"]


@pytest.mark.parametrize("spelling", ["dotdot", "symlink", "hardlink"])
def test_a_clean_export_must_not_replace_its_source_however_spelled(
    tmp_path: Path, exported: Path, spelling: str
) -> None:
    source = tmp_path / "run.tar.gz"
    source.write_bytes(exported.read_bytes())
    (tmp_path / "sub").mkdir()
    out = tmp_path / "sub" / ".." / "run.tar.gz"
    if spelling != "dotdot":
        out = tmp_path / "sub" / "clean.tar.gz"
        if spelling == "symlink":
            out.symlink_to(source)
        else:
            out.hardlink_to(source)
    with pytest.raises(ExportError) as caught:
        write_clean_export(source, out, drop=frozenset({"slug-b"}))
    assert str(caught.value) == f"a clean export must not replace its source: {out}"
    assert source.read_bytes() == exported.read_bytes()


def test_a_member_reader_never_asks_its_stream_for_everything() -> None:
    class Stream:
        def read(self, size: int = -1, /) -> bytes:
            assert size >= 0, "read(-1) would take the rest of the archive"
            return bytes(size)

    assert MemberReader(Stream(), -1).read() == b""
    assert MemberReader(Stream(), -1).read(10) == b""
    assert MemberReader(Stream(), 3).read() == bytes(3)


def test_refusals_never_quote_more_than_a_line_of_the_archive(
    tmp_path: Path, exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _task_archive(exported, "slug-a")
    manifest = json.loads(_members(outer_archive({"slug-a": good}))["manifest.json"])
    manifest["tasks"][0]["taskId"] = "a\n" + "b" * (1 << 20)
    archive = tmp_path / "long.tar.gz"
    archive.write_bytes(outer_archive({"slug-a": good}, manifest=manifest))
    assert main(["verify", str(archive)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {archive}: manifest.json: tasks[0].taskId: taskId 'a\\nbbb")
    assert err.endswith("...\n")
    assert err.count("\n") == 1
    assert len(err) < len(str(archive)) + 1100
    where = reader._Where(archive)  # noqa: SLF001 - a decompressor's complaint, however long
    with pytest.raises(ArchiveError) as caught, reader._translated(where):  # noqa: SLF001
        raise zlib.error("junk\n" + "\xff" * (16 << 20))
    problem = "not a valid gzip stream (junk\\n"  # and then 300 characters in all
    assert str(caught.value) == f"{archive}: {problem}{'ÿ' * (300 - len(problem))}..."


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
    field = _size_field(case)
    if field is not None and case.startswith(("outer-", "manifest-")):
        members = members_of(outer_archive({"slug-a": good}))
        index = 0 if case.startswith("manifest-") else 2
        members[index] = replace(members[index], size_field=field)
        return gzip_tar(members)
    return outer_archive({"slug-a": good}, extra=cases[case]) if case in cases else None


NEGATIVE_SIZE = b"-0000000001\0"  # octal text that tarfile reads as -1
BASE256_MINUS_ONE = b"\xff" * 12  # GNU base-256: -1, which once made read(-1) take everything
BASE256_SMALL = b"\x80" + (5).to_bytes(11, "big")  # base-256 for 5: harmless, still refused


def _size_field(case: str) -> bytes | None:
    """The raw size field a `*-negative-size`/`*-base256-*` case claims, else None."""
    fields = {
        "negative-size": NEGATIVE_SIZE,
        "base256-minus-one": BASE256_MINUS_ONE,
        "base256-small": BASE256_SMALL,
    }
    return next((field for suffix, field in fields.items() if case.endswith(suffix)), None)


def _forge_record(case: str, record: Any, bundle_manifest: dict[str, Any]) -> Any:
    """The review record `case` makes hostile (the bundle manifest is edited in place)."""
    definition = record["definition"]
    edits: dict[str, Any] = {
        "review-extra-key": lambda: record.update(prompt="<b>not the instruction</b>"),
        "review-missing-key": lambda: record.pop("audit"),
        "review-definition": lambda: definition.update(prompt="a prompt nobody compiled"),
        "review-unknown-key": lambda: definition.update(difficulty_note="shown to a reviewer"),
        "review-invalid-definition": lambda: definition.pop("baseCommit"),
        # the digest still matches; the difficulty does not
        "review-difficulty": lambda: bundle_manifest.update(difficulty="easy"),
        "review-manifest-digest": lambda: bundle_manifest.update(definitionSha256="abc"),
        "review-validation": lambda: record.update(validation=report("slug-z", accepted=True)),
        "review-audit": lambda: record.update(audit="fine"),
    }
    if case == "review-not-object":
        return []
    edits[case]()
    return record


def _review_record(inner: list[RawMember], case: str) -> list[RawMember] | None:
    """The task's members with its review record (or bundle manifest) made hostile."""
    if not case.startswith("review-"):
        return None
    review_name = f"harbor-task/{REVIEW_FILE}"
    manifest_name = f"harbor-task/{layout.MANIFEST}"
    members = {member.name: member for member in inner}
    record = json.loads(members[review_name].data)
    if case == "review-long-key":  # a duplicate key of 100 000 characters and a newline
        key = json.dumps("k" * 100_000 + "\n")
        data = f"{{{key}: 1, {key}: 2, " + json.dumps(record)[1:]
        members[review_name] = RawMember(review_name, data.encode())
        return list(members.values())
    bundle_manifest = json.loads(members[manifest_name].data)
    record = _forge_record(case, record, bundle_manifest)
    members[review_name] = RawMember(review_name, json.dumps(record).encode())
    members[manifest_name] = RawMember(manifest_name, json.dumps(bundle_manifest).encode())
    return list(members.values())


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
    field = _size_field(case)
    if field is not None and case.startswith("inner-"):
        return _with([replace(m, size_field=field) if m.name == gold else m for m in inner])
    record = _review_record(inner, case)
    if record is not None:
        return _with(record)
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


GOLD = "tasks/slug-a.tar.gz: harbor-task/solution/gold.patch"
REVIEW = f"tasks/slug-a.tar.gz: harbor-task/{REVIEW_FILE}"
BASE256 = "size field in base-256 (a GNU extension); exports use plain ustar"
NOT_A_RECORD = "not a review record (an object of exactly definition, validation, audit)"

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
    "outer-negative-size": "tasks/slug-a.tar.gz: member claims a negative size (-1)",
    "outer-base256-minus-one": f"tasks/slug-a.tar.gz: {BASE256}",
    "outer-base256-small": f"tasks/slug-a.tar.gz: {BASE256}",
    "manifest-negative-size": "manifest.json: member claims a negative size (-1)",
    "manifest-base256-minus-one": f"manifest.json: {BASE256}",
    "inner-negative-size": f"{GOLD}: member claims a negative size (-1)",
    "inner-base256-minus-one": f"{GOLD}: {BASE256}",
    "inner-base256-small": f"{GOLD}: {BASE256}",
    "review-not-object": f"{REVIEW}: {NOT_A_RECORD}",
    "review-extra-key": f"{REVIEW}: {NOT_A_RECORD}",
    "review-missing-key": f"{REVIEW}: {NOT_A_RECORD}",
    "review-definition": f"{REVIEW}: its definition is not the bundle's (definitionSha256 of "
    ".selfbench-manifest.json)",
    "review-unknown-key": f"{REVIEW}: invalid definition: unknown key difficulty_note",
    "review-invalid-definition": f"{REVIEW}: invalid definition: definition.baseCommit: is "
    "required",
    "review-difficulty": f"{REVIEW}: difficulty medium does not match .selfbench-manifest.json "
    "(easy)",
    "review-manifest-digest": "tasks/slug-a.tar.gz: harbor-task/.selfbench-manifest.json: "
    "definitionSha256 must be 64 lowercase hex digits",
    "review-validation": f"{REVIEW}: validation is neither null nor a report on task slug-a",
    "review-audit": f"{REVIEW}: audit is not an object",
    "review-long-key": (
        'tasks/slug-a.tar.gz: harbor-task/.selfbench-review.json: invalid JSON: duplicate key "'
        + "k" * 235
        + "..."
    ),
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


def test_a_run_gives_its_candidates_tried_per_tier(tmp_path: Path, collected: list[Path]) -> None:
    """`candidateCounts` counts the candidates a run tried, not only the tasks it exports."""
    out = tmp_path / "tried.tar.gz"
    run = RunInfo("run-9", "acme/slugkit", COMMIT, candidate_counts=(4, 5, 1))
    export_run(collected, run=run, out=out)
    manifest = verify_export(out).manifest
    assert manifest.candidate_counts == (4, 5, 1)
    assert manifest.repository_url == "acme/slugkit"
