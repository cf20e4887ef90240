"""No task, draft or export file is read through a symbolic link (issue 39, the boundaries).

The attack: an author command, run by selfbench as root, replaced a file of the task it
submitted with a symbolic link to a root-only host file; selfbench followed it, and the host
file ended up inside a verified export. Every reader of a task file is now `_fs.read_bytes` (or
`_fs.open_file` beneath it), which refuses a link at the file's name with one line naming it.

Each surface is tested with real files and real links, the link pointing at a root-only copy of
the very file it replaces (outside the directory), so that following it would succeed: the
author's output (`collect_authoring`, and a real author command in the command sandbox), the
MCP tools, export, verify and extract, an extracted export read by `eval`, and the review page's
data. Each refusal leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from mcp import ClientSession

from export_helpers import author_collected, quality_record, report
from run_helpers import Sample, sample
from selfbench import _fs
from selfbench.artifacts.draft_record import DRAFT_FILE, read_draft_record
from selfbench.artifacts.quality_record import QUALITY_FILE, write_quality
from selfbench.artifacts.task_dir import TASK_FILES, read_task_files
from selfbench.artifacts.validation import BUNDLE_BINDING, VALIDATION_FILE
from selfbench.collect import collect_authoring
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.errors import (
    BundleError,
    CompileError,
    EvalError,
    ExportError,
    MineError,
    SelfbenchError,
    TaskFileError,
)
from selfbench.evaluate.bench import read_tasks_dir
from selfbench.export import REVIEW_FILE, RunInfo, export_run, extract_export, verify_export
from selfbench.review import load_review
from selfbench.run.author import AuthorJob, AuthorResult, author_with_command
from selfbench.submit import submit_task
from test_mcp import text_of
from test_mcp_bounds import run_with_server

COMMIT = "c0ffee" + "0" * 34
TASK_ID = "slugkit-pr-42"


def refused(path: Path) -> str:
    return f"{path}: a symbolic link; not read"


def link_out(path: Path, outside: Path) -> None:
    """Move `path` to `outside` (root-only, as a host secret is) and leave a link to it."""
    outside.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(path, outside)
    outside.chmod(0o600)
    path.symlink_to(outside)


# --- the one reader ------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 1 << 20])
def test_read_bytes_refuses_a_symbolic_link_with_and_without_a_limit(
    tmp_path: Path, limit: int | None
) -> None:
    target = tmp_path / "secret"
    target.write_bytes(b"root only\n")
    link = tmp_path / "definition.json"
    link.symlink_to(target)

    with pytest.raises(TaskFileError) as caught:
        _fs.read_bytes(link, error=TaskFileError, limit=limit)
    assert str(caught.value) == refused(link)
    with pytest.raises(TaskFileError) as opened:
        _fs.open_file(link, error=TaskFileError)
    assert str(opened.value) == refused(link)
    assert _fs.read_bytes(target, error=TaskFileError, limit=limit) == b"root only\n"


# --- a task directory's readers (what submit, compile and the MCP draft_task read) ---------------


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return sample(tmp_path_factory.mktemp("sample"))


@pytest.mark.parametrize("name", TASK_FILES)
def test_a_task_directory_with_a_linked_file_is_refused(
    drafted: Sample, tmp_path: Path, name: str
) -> None:
    task = shutil.copytree(drafted.draft, tmp_path / "task")
    link_out(task / name, tmp_path / "host" / name)

    with pytest.raises(TaskFileError) as caught:
        read_task_files(task)
    assert str(caught.value) == refused(task / name)


def test_a_linked_draft_record_is_refused(drafted: Sample, tmp_path: Path) -> None:
    task = shutil.copytree(drafted.draft, tmp_path / "task")
    link_out(task / DRAFT_FILE, tmp_path / "host" / DRAFT_FILE)

    with pytest.raises(TaskFileError) as caught:
        read_draft_record(task)
    assert str(caught.value) == refused(task / DRAFT_FILE)


# --- the author's output: collect ----------------------------------------------------------------


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("repository"))


def _submitted(repository: SampleRepository, root: Path) -> Path:
    """An authoring output root holding one submitted task, with a draft record beside it."""
    root.mkdir()
    submit_task(sample_arguments(repository), output_root=root, preflight=False)
    (task,) = root.iterdir()
    (task / DRAFT_FILE).write_text('{"draft": true}\n')
    return task


@pytest.mark.parametrize(
    ("name", "error"),
    [
        *((name, TaskFileError) for name in TASK_FILES),
        (DRAFT_FILE, CompileError),
    ],
)
def test_collect_refuses_a_task_file_the_author_linked_out(
    repository: SampleRepository, tmp_path: Path, name: str, error: type[SelfbenchError]
) -> None:
    task = _submitted(repository, tmp_path / "authoring")
    link_out(task / name, tmp_path / "host" / name)
    out = tmp_path / "collected"

    with pytest.raises(error) as caught:
        collect_authoring(tmp_path / "authoring", repo=repository.path, out=out)
    assert str(caught.value) == refused(task / name)
    assert type(caught.value) is error
    assert not out.exists()


def test_collect_refuses_a_task_directory_the_author_linked_out(
    repository: SampleRepository, tmp_path: Path
) -> None:
    task = _submitted(repository, tmp_path / "authoring")
    link_out(task, tmp_path / "host" / task.name)
    out = tmp_path / "collected"

    with pytest.raises(CompileError) as caught:
        collect_authoring(tmp_path / "authoring", repo=repository.path, out=out)
    assert str(caught.value) == refused(task)
    assert not out.exists()


# --- the author's output: a real author command in the command sandbox ---------------------------

_LINKING_AUTHOR = (
    'set -e; task="$SELFBENCH_TASK_OUTPUT/$3"; '
    'if [ "$2" = task ]; then ln -s "$1" "$task"; exit 0; fi; '
    'mkdir "$task"; '
    'for name in definition.json test.patch gold.patch; do cp "$SELFBENCH_DRAFT/$name" "$task"; '
    'done; ln -sf "$1" "$task/$2"'
)
"""An author that submits the draft by hand, one file (or the task directory) a link."""


def _job(drafted: Sample, tmp_path: Path, draft: Path | None = None) -> AuthorJob:
    return AuthorJob(
        repo=drafted.repo.path,
        candidate=drafted.candidate,
        draft_dir=draft or drafted.draft,
        out_dir=tmp_path / "out",
        log=tmp_path / "author.log",
        time_limit_sec=120,
        inactivity_sec=60,
        work_root=tmp_path / "work",
    )


@pytest.mark.parametrize("name", [*TASK_FILES, "task"])
def test_an_author_command_linking_its_task_out_is_rejected(
    drafted: Sample, tmp_path: Path, name: str
) -> None:
    """The attack itself: the author, run unprivileged, links to a file only root can read."""
    host = tmp_path / "host"
    shutil.copytree(drafted.draft, host)
    host.chmod(0o700)
    for path in host.iterdir():
        path.chmod(0o600)
    target = host if name == "task" else host / name
    command = shlex.join(["/bin/sh", "-c", _LINKING_AUTHOR, "sh", str(target), name, TASK_ID])
    the_job = _job(drafted, tmp_path)

    result = author_with_command(command, the_job)

    task = the_job.out_dir / TASK_ID
    where = task if name == "task" else task / name
    assert result == AuthorResult(ok=False, task_dir=None, reason=refused(where))
    assert where.is_symlink()


def test_a_linked_draft_file_is_not_copied_into_the_author_s_workspace(
    drafted: Sample, tmp_path: Path
) -> None:
    draft = shutil.copytree(drafted.draft, tmp_path / "draft")
    link_out(draft / DRAFT_FILE, tmp_path / "host" / DRAFT_FILE)

    result = author_with_command("true", _job(drafted, tmp_path, draft))

    reason = f"cannot prepare the author's workspace: {refused(draft / DRAFT_FILE)}"
    assert result == AuthorResult(ok=False, task_dir=None, reason=reason)
    assert list((tmp_path / "work").iterdir()) == []


# --- the MCP tools -------------------------------------------------------------------------------


def test_the_mcp_tools_refuse_a_linked_candidates_file(drafted: Sample, tmp_path: Path) -> None:
    real = tmp_path / "host" / "candidates.jsonl"
    real.parent.mkdir()
    real.write_text(drafted.candidate.model_dump_json() + "\n")
    real.chmod(0o600)
    link = tmp_path / "candidates.jsonl"
    link.symlink_to(real)

    async def scenario(session: ClientSession) -> None:
        listed = await session.call_tool("list_candidates", {"path": str(link)})
        assert listed.is_error
        assert text_of(listed) == refused(link)
        asked = {"candidate": drafted.candidate.id, "path": str(link), "repo": str(tmp_path)}
        drafting = await session.call_tool("draft_task", asked)
        assert drafting.is_error
        assert text_of(drafting) == refused(link)

    run_with_server(scenario, tmp_path=tmp_path, repo=tmp_path)
    with pytest.raises(MineError) as caught:
        _fs.read_bytes(link, error=MineError, limit=1 << 20)
    assert str(caught.value) == refused(link)


# --- export --------------------------------------------------------------------------------------

RUN = RunInfo(
    run_id="links", repository_url="https://example.com/slugkit", repository_commit=COMMIT
)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collected task's home with its quality record and a validation report beside it."""
    root = tmp_path_factory.mktemp("collected")
    home = author_collected(root, build_sample_repository(root), "slug-links")
    write_quality(home, quality_record("slug-links", "ship"))
    manifest = home / "harbor-task" / ".selfbench-manifest.json"
    binding = hashlib.sha256(manifest.read_bytes()).hexdigest()
    entry = {**report("slug-links", accepted=True), BUNDLE_BINDING: binding}
    (home / VALIDATION_FILE).write_text(json.dumps(entry), encoding="utf-8")
    return home


@pytest.mark.parametrize(
    ("relative", "error"),
    [
        ("definition.json", BundleError),
        ("harbor-task/solution/gold.patch", BundleError),
        ("harbor-task/tests/test.patch", BundleError),
        ("harbor-task/.selfbench-manifest.json", BundleError),
        (QUALITY_FILE, ExportError),
        (VALIDATION_FILE, ExportError),
    ],
)
def test_export_refuses_a_linked_file_of_a_task_and_writes_nothing(
    collected: Path, tmp_path: Path, relative: str, error: type[SelfbenchError]
) -> None:
    home = shutil.copytree(collected, tmp_path / "home")
    link_out(home / relative, tmp_path / "host" / relative)
    exports = tmp_path / "exports"
    exports.mkdir()

    with pytest.raises(error) as caught:
        export_run([home], run=RUN, out=exports / "run.tar.gz", require_validation=True)
    assert str(caught.value) == refused(home / relative)
    assert list(exports.iterdir()) == []


def test_export_still_packs_the_same_task_unlinked(collected: Path, tmp_path: Path) -> None:
    home = shutil.copytree(collected, tmp_path / "home")
    result = export_run([home], run=RUN, out=tmp_path / "run.tar.gz", require_validation=True)
    assert [entry.task_id for entry in result.manifest.tasks] == ["slug-links"]
    assert verify_export(result.path).manifest == result.manifest


@pytest.fixture(scope="module")
def export(collected: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run.tar.gz"
    return export_run([collected], run=RUN, out=out, require_validation=True).path


def test_verify_and_extract_refuse_a_linked_export(export: Path, tmp_path: Path) -> None:
    link = tmp_path / "run.tar.gz"
    link.symlink_to(export)
    tasks = tmp_path / "tasks"

    with pytest.raises(ExportError) as verifying:
        verify_export(link)
    assert str(verifying.value) == refused(link)
    with pytest.raises(ExportError) as extracting:
        extract_export(link, out=tasks)
    assert str(extracting.value) == refused(link)
    assert not tasks.exists()


@pytest.mark.parametrize(
    ("relative", "prefix"), [(REVIEW_FILE, ""), (".selfbench-manifest.json", "not a task: ")]
)
def test_an_extracted_task_with_a_linked_file_is_refused_by_eval(
    export: Path, tmp_path: Path, relative: str, prefix: str
) -> None:
    tasks = tmp_path / "tasks"
    extract_export(export, out=tasks)
    path = tasks / "slug-links" / relative
    link_out(path, tmp_path / "host" / relative)

    with pytest.raises(EvalError) as caught:
        read_tasks_dir(tasks)
    assert str(caught.value) == (f"{path.parent}: {prefix}" if prefix else "") + refused(path)


# --- review --------------------------------------------------------------------------------------


def test_review_refuses_a_linked_export(export: Path, tmp_path: Path) -> None:
    link = tmp_path / "run.tar.gz"
    link.symlink_to(export)

    with pytest.raises(ExportError) as caught:
        load_review(link)
    assert str(caught.value) == refused(link)


@pytest.mark.parametrize(
    "relative", [REVIEW_FILE, QUALITY_FILE, "instruction.md", "solution/gold.patch"]
)
def test_review_data_refuses_a_kept_file_replaced_by_a_link(
    export: Path, tmp_path: Path, relative: str
) -> None:
    data = load_review(export)
    try:
        kept = data.root / "slug-links" / relative.replace("/", "__")
        link_out(kept, tmp_path / "host" / kept.name)
        with pytest.raises(ExportError) as caught:
            data.detail("slug-links")
        assert str(caught.value) == refused(kept)
    finally:
        data.close()


def test_a_file_the_user_names_is_read_through_a_link_or_a_pipe(tmp_path: Path) -> None:
    """`--config`, `--prs`, an input file: the user chose the link (a dotfiles manager's) or
    the pipe (`<(gh pr list …)`); only what a task, draft, bundle or export holds is refused."""
    real = tmp_path / "real.toml"
    real.write_bytes(b"runner = 'pytest'\n")
    (tmp_path / "linked.toml").symlink_to(real)
    assert _fs.read_given(tmp_path / "linked.toml", error=MineError) == real.read_bytes()
    with pytest.raises(MineError):
        _fs.read_bytes(tmp_path / "linked.toml", error=MineError)
    read, write = os.pipe()
    with os.fdopen(write, "wb") as writer:
        writer.write(b"[]")
    try:
        assert _fs.read_given(Path(f"/dev/fd/{read}"), error=MineError) == b"[]"
    finally:
        os.close(read)


@pytest.mark.parametrize("linked", ["tests", "solution"])
def test_a_bundle_file_below_a_linked_directory_is_refused(tmp_path: Path, linked: str) -> None:
    """`read_bytes` refuses a link at a file's name; a plain copy of an export's tasks can link
    a whole directory of the bundle: the verifier's files, eval's instruction, the patches whose
    digests are checked are read through no link at any depth."""
    from selfbench.artifacts.compiled import read_bundle_file  # noqa: PLC0415
    from selfbench.bundle import layout  # noqa: PLC0415

    bundle, real = tmp_path / "bundle", tmp_path / "real"
    bundle.mkdir()
    (real / linked).mkdir(parents=True)
    for name in (layout.TEST_SH, layout.TEST_PATCH, layout.GOLD_PATCH):
        if name.startswith(linked):
            (real / name).write_bytes(b"secret")
    (bundle / linked).symlink_to(real / linked)
    name = layout.TEST_SH if linked == "tests" else layout.GOLD_PATCH

    with pytest.raises(BundleError) as caught:
        read_bundle_file(bundle, name)
    assert "link" in str(caught.value)
    assert "\n" not in str(caught.value)
