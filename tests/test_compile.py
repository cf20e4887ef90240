"""compile, refresh, collect and the artifact store (SPEC §5 and §6), on real git repositories."""

from __future__ import annotations

import hashlib
import json
import tarfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selfbench import compiler
from selfbench.bundle import layout
from selfbench.cli import main
from selfbench.collect import (
    MISMATCH,
    Candidate,
    CollectRejection,
    CollectResult,
    StoreTarget,
    collect_authoring,
)
from selfbench.compiler import compile_task, refresh_bundle
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.errors import CompileError, PreflightError, StoreError
from selfbench.store import ArtifactRef, LocalArtifactStore, authoring_key
from selfbench.submit import submit_task

Tree = dict[str, tuple[bytes, int]]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def _author(root: Path, sample: SampleRepository, **changes: Any) -> Path:
    arguments = sample_arguments(sample)
    arguments["definition"].update(changes)
    root.mkdir(parents=True, exist_ok=True)
    submit_task(arguments, output_root=root, preflight=False)
    return root / str(arguments["definition"]["taskId"])


def _write_task(task_dir: Path, definition: dict[str, Any], test: bytes, gold: bytes) -> Path:
    task_dir.mkdir(parents=True)
    (task_dir / "definition.json").write_text(json.dumps(definition), encoding="utf-8")
    (task_dir / "test.patch").write_bytes(test)
    (task_dir / "gold.patch").write_bytes(gold)
    return task_dir


def _tree(root: Path) -> Tree:
    return {
        path.relative_to(root).as_posix(): (path.read_bytes(), path.stat().st_mode & 0o777)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _hosts(bundle: Path) -> list[str]:
    config = tomllib.loads((bundle / layout.TASK_TOML).read_text(encoding="utf-8"))
    hosts: list[str] = config["agent"]["allowed_hosts"]
    return hosts


@pytest.fixture
def authored(tmp_path: Path, sample: SampleRepository) -> Path:
    return _author(tmp_path / "tasks", sample)


def test_compile_writes_the_whole_bundle_tree(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    tree = _tree(out)
    assert sorted(tree) == sorted(
        [
            layout.TASK_TOML,
            layout.INSTRUCTION,
            layout.ENV_DOCKERFILE,
            layout.ENV_SNAPSHOT,
            layout.TESTS_DOCKERFILE,
            layout.TESTS_SNAPSHOT,
            layout.TEST_SH,
            layout.TEST_PATCH,
            layout.SOLVE_SH,
            layout.GOLD_PATCH,
            layout.MANIFEST,
            layout.BASE_COMMIT,
        ]
    )
    assert tree[layout.TEST_SH][1] == 0o755
    assert tree[layout.SOLVE_SH][1] == 0o755
    assert tree[layout.TEST_PATCH][0] == (authored / "test.patch").read_bytes()
    assert tree[layout.GOLD_PATCH][0] == (authored / "gold.patch").read_bytes()
    assert "definition.json" not in tree


def test_snapshot_is_the_base_commit_stored_once(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    first, second = out / layout.ENV_SNAPSHOT, out / layout.TESTS_SNAPSHOT
    assert first.stat().st_ino == second.stat().st_ino
    with tarfile.open(first) as archive:
        names = {member.name for member in archive.getmembers() if member.isfile()}
    assert names == {".gitignore", "README.md", "pyproject.toml", "slugkit/__init__.py",
                     "slugkit/core.py", "tests/test_core.py"}  # fmt: skip
    recorded = json.loads((out / layout.MANIFEST).read_bytes())["snapshotSha256"]
    assert recorded == hashlib.sha256(first.read_bytes()).hexdigest()


def test_compile_is_byte_reproducible(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    compile_task(authored, repo=sample.path, out=tmp_path / "one")
    compile_task(authored, repo=sample.path, out=tmp_path / "two")
    assert _tree(tmp_path / "one") == _tree(tmp_path / "two")


def test_recompiling_replaces_the_bundle_and_leaves_no_temp_dir(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "out" / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    (out / "stray.txt").write_text("from an older compile")
    compile_task(authored, repo=sample.path, out=out)
    assert not (out / "stray.txt").exists()
    assert sorted(p.name for p in out.parent.iterdir()) == ["bundle"]


def test_a_failure_mid_compile_keeps_the_previous_bundle(
    tmp_path: Path, sample: SampleRepository, authored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out" / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    before = _tree(out)

    def explode(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compiler, "_write_snapshot", explode)
    with pytest.raises(OSError, match="No space left"):
        compile_task(authored, repo=sample.path, out=out)
    assert _tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["bundle"]


def test_allowed_hosts_override_the_default_list(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out, allowed_hosts=("api.example.com",))
    assert _hosts(out) == ["api.example.com"]


# --- checks, in the spec's order ---------------------------------------------------------------

_GOOD_PATCH = b"diff --git a/tests/t.py b/tests/t.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/t.py\n@@ -0,0 +1 @@\n+x\n"  # noqa: E501


def _definition(sample: SampleRepository, **changes: Any) -> dict[str, Any]:
    definition: dict[str, Any] = sample_arguments(sample)["definition"]
    definition.update(changes)
    return definition


@pytest.mark.parametrize(
    ("changes", "test", "gold", "message"),
    [
        (
            {"taskId": "a..b"},
            _GOOD_PATCH,
            _GOOD_PATCH,
            "taskId a..b cannot name a Harbor task: it holds '..'",
        ),
        ({"workdir": "../x"}, _GOOD_PATCH, _GOOD_PATCH, "task path escapes repository: ../x"),
        ({"workdir": "/app"}, _GOOD_PATCH, _GOOD_PATCH, "task path escapes repository: /app"),
        (
            {"testPaths": ["../../etc/passwd"]},
            _GOOD_PATCH,
            _GOOD_PATCH,
            "task path escapes repository: ../../etc/passwd",
        ),
        (
            {"workdir": "sub", "testPaths": ["/abs.py"]},
            _GOOD_PATCH,
            _GOOD_PATCH,
            "task path escapes repository: /abs.py",
        ),
        ({}, b"--- a/x\n+++ b/x\n", _GOOD_PATCH, "test.patch is not a Git patch"),
        ({}, b"", _GOOD_PATCH, "test.patch is not a Git patch"),
        ({}, b"diff --git \n", _GOOD_PATCH, "test.patch changes no files"),
        (
            {},
            _GOOD_PATCH.replace(b"tests/t.py", b".git/hooks/x"),
            _GOOD_PATCH,
            "test patch path escapes repository: .git/hooks/x",
        ),
        (
            {},
            _GOOD_PATCH.replace(b"tests/t.py", b"../evil"),
            _GOOD_PATCH,
            "test patch path escapes repository: ../evil",
        ),
        ({}, _GOOD_PATCH, b"not a patch", "gold.patch is not a Git patch"),
        (
            {},
            _GOOD_PATCH,
            _GOOD_PATCH.replace(b"tests/t.py", b"a/../../x"),
            "gold patch path escapes repository: a/../../x",
        ),
        (
            {"baseCommit": "0" * 40},
            _GOOD_PATCH,
            _GOOD_PATCH,
            "baseCommit 0000000000000000000000000000000000000000 is not a commit in {repo}",
        ),
    ],
)
def test_compile_checks(
    tmp_path: Path,
    sample: SampleRepository,
    changes: dict[str, Any],
    test: bytes,
    gold: bytes,
    message: str,
) -> None:
    task_dir = _write_task(tmp_path / "task", _definition(sample, **changes), test, gold)
    out = tmp_path / "bundle"
    with pytest.raises(CompileError) as error:
        compile_task(task_dir, repo=sample.path, out=out)
    assert str(error.value) == message.format(repo=sample.path)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["task"]


def test_compile_cli_reports_a_bad_definition_on_stderr(
    tmp_path: Path, sample: SampleRepository, capsys: pytest.CaptureFixture[str]
) -> None:
    definition = _definition(sample, sourceUrl="not a url", testCommand="pytest")
    task_dir = _write_task(tmp_path / "task", definition, _GOOD_PATCH, _GOOD_PATCH)
    code = main(["compile", str(task_dir), "--repo", str(sample.path), "--out", "x"])
    assert code == 2
    assert capsys.readouterr().err == (
        'error: testCommand: testCommand must contain "{tests}"\n'
        "error: sourceUrl: must be an absolute URL (scheme and host)\n"
    )


def test_submit_preflight_refuses_a_task_id_harbor_cannot_name(
    tmp_path: Path, sample: SampleRepository
) -> None:
    arguments = sample_arguments(sample)
    arguments["definition"]["taskId"] = "slugkit..42"
    with pytest.raises(PreflightError) as error:
        submit_task(arguments, output_root=tmp_path)
    assert error.value.blockers == ("taskId slugkit..42 cannot name a Harbor task: it holds '..'",)
    assert list(tmp_path.iterdir()) == []


def test_compile_cli(
    tmp_path: Path, sample: SampleRepository, authored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bundle"
    argv = ["compile", str(authored), "--repo", str(sample.path), "--out", str(out)]
    hosts = ["--agent-allowed-host", "a.example", "--agent-allowed-host", "b.example"]
    assert main([*argv, *hosts]) == 0
    assert capsys.readouterr().out == f"Compiled slugkit-pr-42 into {out}\n"
    assert _hosts(out) == ["a.example", "b.example"]


# --- refresh -----------------------------------------------------------------------------------


def test_refresh_rerenders_from_a_repaired_definition(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out, allowed_hosts=("keep.example",))
    before = _tree(out)
    repaired = _definition(sample, testCommand="python -m pytest -x {tests}", passToPass=[])
    definition_path = tmp_path / "repaired.json"
    definition_path.write_text(json.dumps(repaired), encoding="utf-8")
    refresh_bundle(out, definition=definition_path)
    after = _tree(out)
    assert "python -m pytest -x" in after[layout.TEST_SH][0].decode()
    assert after[layout.TEST_SH] != before[layout.TEST_SH]
    manifest = json.loads(after[layout.MANIFEST][0])
    assert (
        manifest["definitionSha256"] != json.loads(before[layout.MANIFEST][0])["definitionSha256"]
    )
    for unchanged in (
        layout.INSTRUCTION,
        layout.ENV_SNAPSHOT,
        layout.GOLD_PATCH,
        layout.TEST_PATCH,
    ):
        assert after[unchanged] == before[unchanged]
    assert _hosts(out) == ["keep.example"]
    assert manifest["snapshotSha256"] == hashlib.sha256(after[layout.ENV_SNAPSHOT][0]).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "repaired.json", "tasks"]


def test_refresh_refuses_another_task(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_definition(sample, taskId="other-task")), encoding="utf-8")
    with pytest.raises(CompileError) as error:
        refresh_bundle(out, definition=other)
    assert str(error.value) == "bundle task slugkit-pr-42 does not match other-task"


def test_refresh_cli(
    tmp_path: Path, sample: SampleRepository, authored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bundle"
    compile_task(authored, repo=sample.path, out=out)
    same = tmp_path / "same.json"
    same.write_text(json.dumps(_definition(sample)), encoding="utf-8")
    assert main(["refresh", str(out), "--definition", str(same)]) == 0
    assert capsys.readouterr().out == f"Refreshed slugkit-pr-42 in {out}\n"
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_definition(sample, taskId="other-task")), encoding="utf-8")
    assert main(["refresh", str(out), "--definition", str(other)]) == 2
    assert capsys.readouterr().err == "error: bundle task slugkit-pr-42 does not match other-task\n"


def test_refresh_writes_or_removes_the_dependency_patch(
    tmp_path: Path, sample: SampleRepository
) -> None:
    gold = sample_arguments(sample)["goldPatch"].encode()
    manifest_section = (
        b"diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n"
        b"+++ b/pyproject.toml\n@@ -1,2 +1,2 @@\n-[project]\n+[project] \n"
        b' name = "slugkit"\n'
    )  # with its trailing context: compile checks that it applies at the base
    definition = _definition(sample)
    task_dir = _write_task(
        tmp_path / "task",
        definition,
        sample_arguments(sample)["testPatch"].encode(),
        gold + manifest_section,
    )
    out = tmp_path / "bundle"
    compile_task(task_dir, repo=sample.path, out=out)
    assert (out / layout.DEPENDENCY_PATCH).read_bytes() == manifest_section
    (out / layout.GOLD_PATCH).write_bytes(gold)
    path = tmp_path / "definition.json"
    path.write_text(json.dumps(definition), encoding="utf-8")
    refresh_bundle(out, definition=path)
    assert not (out / layout.DEPENDENCY_PATCH).exists()


# --- collect and the store ---------------------------------------------------------------------


def test_collect_compiles_packs_and_copies_the_definition(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    result = collect_authoring(authored.parent, repo=sample.path, out=tmp_path / "out")
    assert isinstance(result, CollectResult)
    assert result.bundle == tmp_path / "out" / "harbor-task"
    assert (tmp_path / "out" / "definition.json").read_bytes() == (
        authored / "definition.json"
    ).read_bytes()
    with tarfile.open(result.archive) as archive:
        members = archive.getmembers()
    names = [member.name for member in members]
    assert names == sorted(names)
    assert names[0] == "harbor-task"
    assert f"harbor-task/{layout.TASK_TOML}" in names
    assert all(member.isfile() or member.isdir() for member in members)
    assert {(m.uid, m.gid, m.mtime, m.uname) for m in members} == {(0, 0, 0, "")}


def test_collect_is_byte_reproducible(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    one = collect_authoring(authored.parent, repo=sample.path, out=tmp_path / "one")
    two = collect_authoring(authored.parent, repo=sample.path, out=tmp_path / "two")
    assert isinstance(one, CollectResult)
    assert isinstance(two, CollectResult)
    assert one.archive.read_bytes() == two.archive.read_bytes()


@pytest.mark.parametrize("count", [0, 2])
def test_collect_needs_exactly_one_task(
    tmp_path: Path, sample: SampleRepository, count: int
) -> None:
    root = tmp_path / "tasks"
    root.mkdir()
    for index in range(count):
        (root / f"task-{index}").mkdir()
    (root / "stray-file.txt").write_text("not a task")
    with pytest.raises(CompileError) as error:
        collect_authoring(root, repo=sample.path, out=tmp_path / "out")
    assert str(error.value) == f"authoring must produce exactly one task; found {count}"


@pytest.mark.parametrize(
    "candidate",
    [
        Candidate(41, "", "medium"),
        Candidate(42, "f" * 40, "medium"),
        Candidate(42, "", "hard"),
    ],
)
def test_collect_rejects_a_task_that_is_not_the_candidate(
    tmp_path: Path, sample: SampleRepository, authored: Path, candidate: Candidate
) -> None:
    assigned = Candidate(
        candidate.source_pr, candidate.base_commit or sample.base, candidate.difficulty
    )
    result = collect_authoring(
        authored.parent, repo=sample.path, out=tmp_path / "out", candidate=assigned
    )
    assert result == CollectRejection(MISMATCH)
    assert not (tmp_path / "out").exists()


def test_collect_stores_accepted_results(
    tmp_path: Path, sample: SampleRepository, authored: Path
) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    result = collect_authoring(
        authored.parent,
        repo=sample.path,
        out=tmp_path / "out",
        candidate=Candidate(42, sample.base.upper(), "medium"),
        store=StoreTarget(store, "run-1", "cand-7"),
    )
    assert isinstance(result, CollectResult)
    definition_ref, archive_ref = result.stored
    assert definition_ref.uri.endswith("/runs/run-1/authoring/cand-7/definition.json")
    assert archive_ref.uri.endswith("/runs/run-1/authoring/cand-7/harbor-task.tar.gz")
    assert archive_ref.content_type == "application/gzip"
    data = result.archive.read_bytes()
    assert archive_ref.sha256 == hashlib.sha256(data).hexdigest()
    assert archive_ref.size == len(data)
    assert store.read_bytes(archive_ref) == data


def test_collect_cli_with_a_store(
    tmp_path: Path, sample: SampleRepository, authored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps({"sourcePr": 42, "baseCommit": sample.base,
                                     "difficulty": "medium"}))  # fmt: skip
    argv = ["collect", str(authored.parent), "--repo", str(sample.path), "--out",
            str(tmp_path / "out"), "--candidate", str(candidate), "--store",
            str(tmp_path / "store"), "--run-id", "r1", "--candidate-id", "c1"]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert [ref["contentType"] for ref in report["stored"]] == [
        "application/json",
        "application/gzip",
    ]
    assert main([*argv[:-4], "--run-id", "r1"]) == 2
    assert capsys.readouterr().err == ("error: --store, --run-id and --candidate-id go together\n")


def test_collect_cli_rejects_another_candidate_with_exit_1(
    tmp_path: Path, sample: SampleRepository, authored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps({"sourcePr": 41, "baseCommit": sample.base,
                                     "difficulty": "medium"}))  # fmt: skip
    argv = ["collect", str(authored.parent), "--repo", str(sample.path), "--out",
            str(tmp_path / "out"), "--candidate", str(candidate)]  # fmt: skip
    assert main(argv) == 1
    assert capsys.readouterr() == ("", f"error: {MISMATCH}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "key",
    ["", "/abs", "a/../b", "..", "a//b", "a/./b", "a\\b", ".hidden/x", "a/b\n", "a/b/"],
)
def test_store_refuses_unsafe_keys(tmp_path: Path, key: str) -> None:
    store = LocalArtifactStore(tmp_path)
    with pytest.raises(StoreError) as error:
        store.put_bytes(key, b"x", content_type="text/plain")
    assert str(error.value) == f"unsafe artifact key: {key!r}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("run_id", "candidate_id"), [("..", "c"), ("r", "../../etc"), ("r/x", "")])
def test_authoring_keys_refuse_hostile_ids(run_id: str, candidate_id: str) -> None:
    with pytest.raises(StoreError):
        authoring_key(run_id, candidate_id, "definition.json")


def test_store_is_write_once(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    first = store.put_bytes("runs/r/a.json", b"{}", content_type="application/json")
    again = store.put_bytes("runs/r/a.json", b"{}", content_type="application/json")
    assert first == again
    with pytest.raises(StoreError) as error:
        store.put_bytes("runs/r/a.json", b"[]", content_type="application/json")
    assert str(error.value) == "artifact runs/r/a.json already exists with different content"
    assert store.read_bytes(first) == b"{}"
    assert sorted(p.name for p in (tmp_path / "runs" / "r").iterdir()) == ["a.json"]


@pytest.mark.parametrize(
    "tamper",
    [
        lambda path: path.write_bytes(b"{ }"),
        lambda path: path.write_bytes(b"{}\n"),
    ],
)
def test_store_reads_verify_the_digest(tmp_path: Path, tamper: Callable[[Path], object]) -> None:
    store = LocalArtifactStore(tmp_path)
    ref = store.put_bytes("runs/r/a.json", b"{}", content_type="application/json")
    path = tmp_path / "runs" / "r" / "a.json"
    path.chmod(0o644)
    tamper(path)
    with pytest.raises(StoreError) as error:
        store.read_bytes(ref)
    assert str(error.value) == f"artifact {ref.uri} does not match its sha256"


def test_store_refuses_a_uri_outside_it(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    outside = tmp_path / "elsewhere"
    outside.write_bytes(b"x")
    ref = ArtifactRef(outside.as_uri(), hashlib.sha256(b"x").hexdigest(), 1, "text/plain")
    with pytest.raises(StoreError) as error:
        store.read_bytes(ref)
    assert str(error.value) == f"artifact {ref.uri} is not in the store at {store.root}"


@pytest.mark.parametrize("kind", ["file", "symlink to a directory"])
def test_compile_refuses_an_output_that_is_not_a_bundle_directory(
    tmp_path: Path,
    sample: SampleRepository,
    authored: Path,
    kind: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    if kind == "file":
        out.write_bytes(b"not a bundle\n")
    else:
        (tmp_path / "elsewhere").mkdir()
        out.symlink_to(tmp_path / "elsewhere")
    code = main(["compile", str(authored), "--repo", str(sample.path), "--out", str(out)])
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: output exists and is not a bundle directory: {out}\n"
    )
    if kind == "file":  # left as it was
        assert out.read_bytes() == b"not a bundle\n"
    else:
        assert out.is_symlink()
        assert list((tmp_path / "elsewhere").iterdir()) == []
