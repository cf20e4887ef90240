"""An export proves its own contents: a tampered task is refused even with every digest redone.

Each attack edits one real exported task the way an attacker would (a verifier that always
scores 1, a Dockerfile with one more line, the gold patch in the agent's snapshot, …), then
recomputes whatever digests it can: the snapshot's in the bundle manifest where the attack
replaces the snapshot on purpose, and always the task's in `manifest.json`. `verify`, `extract`
and `review` must each refuse it with the one line naming the member.
"""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from export_helpers import RawMember, author_collected, gzip_tar, members_of, outer_archive, report
from selfbench.artifacts.validation import BUNDLE_BINDING
from selfbench.bundle import layout
from selfbench.bundle.snapshot import build_snapshot_rules, git_blob_id
from selfbench.cli import main
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.export import REVIEW_FILE, RunInfo, export_run, verify_export
from selfbench.export._snapshot import SnapshotScan

TASK = "slug-a"
MEMBER = f"tasks/{TASK}.tar.gz"
UNTOUCHED_README = b"# slugkit\n\nInstall with: curl https://example.com/x | sh\n"
ALWAYS_ONE = (
    b"#!/bin/bash\nmkdir -p /logs/verifier\necho '{\"reward\": 1}' > /logs/verifier/reward.json\n"
)

Members = dict[str, RawMember]
Attack = Callable[[Members, SampleRepository], None]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> Path:
    root = tmp_path_factory.mktemp("proof")
    collected = author_collected(root, sample, TASK)
    out = root / "run.tar.gz"
    run = RunInfo("run-1", "https://example.com/acme/slugkit.git", sample.head)
    export_run([collected], run=run, out=out)
    return out


def _task_members(export: Path) -> Members:
    outer = {member.name: member for member in members_of(export.read_bytes())}
    return {member.name: member for member in members_of(outer[MEMBER].data)}


def _path(relative: str) -> str:
    return f"harbor-task/{relative}"


def _replace(members: Members, relative: str, data: bytes) -> None:
    old = members[_path(relative)]
    members[_path(relative)] = RawMember(old.name, data, old.type, mode=old.mode)


def _show(sample: SampleRepository, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(sample.path), "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    ).stdout


def _snapshot(members: Members) -> bytes:
    return members[_path(layout.ENV_SNAPSHOT)].data


def _rewritten_snapshot(
    original: bytes,
    changes: dict[str, bytes],
    *,
    comment: str,
    modes: dict[str, int] | None = None,
    again: dict[str, bytes] | None = None,
) -> bytes:
    """`original` with files replaced or added, their `modes` changed, and the `again` files
    appended after it even where the name is already there; written by tarfile with a pax
    `comment`."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(original), mode="r:gz") as source,
        tarfile.open(
            fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": comment}
        ) as target,
    ):
        for info in source:
            info.mode = (modes or {}).get(info.name, info.mode)
            data = changes.pop(info.name, None)
            if data is None:
                handle = source.extractfile(info) if info.isreg() else None
                target.addfile(info, handle)
                continue
            info.size = len(data)
            target.addfile(info, io.BytesIO(data))
        for name, data in [*changes.items(), *(again or {}).items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            target.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _swap_snapshot(members: Members, snapshot: bytes, *, record: bool = True) -> None:
    """Both copies replaced by `snapshot`; with `record`, the bundle manifest says so too."""
    for relative in layout.SNAPSHOT_PATHS:
        _replace(members, relative, snapshot)
    if record:
        manifest = json.loads(members[_path(layout.MANIFEST)].data)
        manifest["snapshotSha256"] = hashlib.sha256(snapshot).hexdigest()
        _replace(members, layout.MANIFEST, json.dumps(manifest, indent=2).encode() + b"\n")


def _gold_in_snapshot(members: Members, sample: SampleRepository, paths: tuple[str, ...]) -> None:
    changes = {path: _show(sample, sample.head, path) for path in paths}
    _swap_snapshot(members, _rewritten_snapshot(_snapshot(members), changes, comment=sample.base))


def _always_one(members: Members, _: SampleRepository) -> None:
    _replace(members, layout.TEST_SH, ALWAYS_ONE)


def _dockerfile_line(members: Members, _: SampleRepository) -> None:
    data = members[_path(layout.ENV_DOCKERFILE)].data
    _replace(members, layout.ENV_DOCKERFILE, data + b"COPY solution/ /app/\n")


def _gold_applied(members: Members, sample: SampleRepository) -> None:
    paths = ("slugkit/__init__.py", "slugkit/core.py", "slugkit/translit.py")
    _gold_in_snapshot(members, sample, paths)


def _gold_modified_only(members: Members, sample: SampleRepository) -> None:
    _gold_in_snapshot(members, sample, ("slugkit/core.py",))


def _held_out_test(members: Members, sample: SampleRepository) -> None:
    _gold_in_snapshot(members, sample, ("tests/test_options.py",))


def _gold_patch_file(members: Members, sample: SampleRepository) -> None:
    gold = members[_path(layout.GOLD_PATCH)].data
    changes = {"notes/fix.patch": gold}
    _swap_snapshot(members, _rewritten_snapshot(_snapshot(members), changes, comment=sample.base))


def _task_toml(members: Members, _: SampleRepository) -> None:
    data = members[_path(layout.TASK_TOML)].data
    _replace(members, layout.TASK_TOML, data.replace(b"timeout_sec = 2400.0", b"timeout_sec = 9e9"))


def _solve_sh(members: Members, _: SampleRepository) -> None:
    _replace(members, layout.SOLVE_SH, b"#!/bin/bash\ntrue\n")


def _instruction(members: Members, _: SampleRepository) -> None:
    data = members[_path(layout.INSTRUCTION)].data
    _replace(members, layout.INSTRUCTION, data + b"The answer is in slugkit/translit.py.\n")


def _snapshot_replaced(members: Members, sample: SampleRepository) -> None:
    changes = {"README.md": b"another snapshot\n"}
    snapshot = _rewritten_snapshot(_snapshot(members), changes, comment=sample.base)
    _swap_snapshot(members, snapshot, record=False)


def _one_copy_replaced(members: Members, sample: SampleRepository) -> None:
    changes = {"README.md": b"another snapshot\n"}
    snapshot = _rewritten_snapshot(_snapshot(members), changes, comment=sample.base)
    _replace(members, layout.TESTS_SNAPSHOT, snapshot)


def _another_commit(members: Members, sample: SampleRepository) -> None:
    _swap_snapshot(members, _rewritten_snapshot(_snapshot(members), {}, comment=sample.head))


def _no_commit(members: Members, _: SampleRepository) -> None:
    original = _snapshot(members)
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(original), mode="r:gz") as source,
        tarfile.open(fileobj=out, mode="w:gz", format=tarfile.USTAR_FORMAT) as target,
    ):
        for info in source:
            target.addfile(info, source.extractfile(info) if info.isreg() else None)
    _swap_snapshot(members, out.getvalue())


def _not_executable(members: Members, _: SampleRepository) -> None:
    old = members[_path(layout.TEST_SH)]
    members[old.name] = RawMember(old.name, old.data, mode=0o644)


def _dependency_patch(members: Members, _: SampleRepository) -> None:
    name = _path(layout.DEPENDENCY_PATCH)
    members[name] = RawMember(name, members[_path(layout.GOLD_PATCH)].data)


def _gold_patch_changed(members: Members, _: SampleRepository) -> None:
    data = members[_path(layout.GOLD_PATCH)].data
    _replace(members, layout.GOLD_PATCH, data.replace(b"+    kept", b"+    kept "))


def _untouched_file_changed(members: Members, sample: SampleRepository) -> None:
    """A file neither patch touches, changed; every digest recomputed."""
    changes = {"README.md": UNTOUCHED_README}
    _swap_snapshot(members, _rewritten_snapshot(_snapshot(members), changes, comment=sample.base))


def _duplicate_member(members: Members, sample: SampleRepository) -> None:
    """README.md twice: the scan would see the first, `tar -x` and Docker keep the last."""
    again = {"README.md": UNTOUCHED_README}
    _swap_snapshot(
        members, _rewritten_snapshot(_snapshot(members), {}, comment=sample.base, again=again)
    )


def _file_made_executable(members: Members, sample: SampleRepository) -> None:
    modes = {"README.md": 0o775}
    _swap_snapshot(
        members, _rewritten_snapshot(_snapshot(members), {}, comment=sample.base, modes=modes)
    )


def _base_commit_swapped(members: Members, sample: SampleRepository) -> None:
    """The carried commit object replaced by another commit's (the snapshot left as it is)."""
    raw = _git(sample, "cat-file", "commit", sample.head)
    value = {"commitObject": base64.b64encode(raw).decode(), "submodules": {}}
    _replace(members, layout.BASE_COMMIT, json.dumps(value, indent=2).encode() + b"\n")


def _verdict(members: Members, validation: dict[str, object]) -> None:
    record = json.loads(members[_path(REVIEW_FILE)].data)
    record["validation"] = validation
    _replace(members, REVIEW_FILE, json.dumps(record, indent=2).encode() + b"\n")


def _forged_verdict(members: Members, _: SampleRepository) -> None:
    """An "accepted" validation written into an export that had none."""
    _verdict(members, report(TASK, accepted=True))


def _verdict_of_another_build(members: Members, _: SampleRepository) -> None:
    """An "accepted" validation of another build of the bundle, swapped in."""
    _verdict(members, {**report(TASK, accepted=True), BUNDLE_BINDING: "0" * 64})


def _old_revision(members: Members, _: SampleRepository) -> None:
    manifest = json.loads(members[_path(layout.MANIFEST)].data)
    manifest["compilerRevision"] += 1
    _replace(members, layout.MANIFEST, json.dumps(manifest, indent=2).encode() + b"\n")


_NOT_THE_TREE = (
    "is not the tree of baseCommit {base}: its files make tree {made}, the commit names {tree}"
)
_UNBOUND = (
    "validation is not bound to this bundle: its bundleManifestSha256 is not the sha256 of "
    ".selfbench-manifest.json ({bundle})"
)
_DIFFERS = "differs from what the review record's definition and the bundle's patches compile to"
ATTACKS: dict[str, tuple[Attack, str, str]] = {
    "test-sh-always-one": (_always_one, layout.TEST_SH, _DIFFERS),
    "dockerfile-line": (_dockerfile_line, layout.ENV_DOCKERFILE, _DIFFERS),
    "gold-applied-to-snapshot": (
        _gold_applied,
        layout.ENV_SNAPSHOT,
        "holds slugkit/translit.py, a file the gold patch adds",
    ),
    "gold-post-image-in-snapshot": (
        _gold_modified_only,
        layout.ENV_SNAPSHOT,
        "holds the gold patch's new content of slugkit/core.py",
    ),
    "held-out-test-in-snapshot": (
        _held_out_test,
        layout.ENV_SNAPSHOT,
        "holds tests/test_options.py, a file the held-out test patch adds",
    ),
    "gold-patch-file-in-snapshot": (
        _gold_patch_file,
        layout.ENV_SNAPSHOT,
        "holds a copy of solution/gold.patch at notes/fix.patch",
    ),
    "task-toml-changed": (_task_toml, layout.TASK_TOML, _DIFFERS),
    "solve-sh-changed": (_solve_sh, layout.SOLVE_SH, _DIFFERS),
    "instruction-changed": (_instruction, layout.INSTRUCTION, _DIFFERS),
    "snapshot-replaced": (
        _snapshot_replaced,
        layout.ENV_SNAPSHOT,
        "sha256 {snapshot} does not match .selfbench-manifest.json ({recorded})",
    ),
    "one-snapshot-copy-replaced": (
        _one_copy_replaced,
        layout.TESTS_SNAPSHOT,
        "sha256 {tests_snapshot} does not match .selfbench-manifest.json ({recorded})",
    ),
    "snapshot-of-another-commit": (
        _another_commit,
        layout.ENV_SNAPSHOT,
        "the snapshot of commit {head}, not of {base}",
    ),
    "snapshot-without-commit": (
        _no_commit,
        layout.ENV_SNAPSHOT,
        "records no commit; the snapshot of baseCommit {base} does",
    ),
    "test-sh-not-executable": (
        _not_executable,
        layout.TEST_SH,
        "mode 0644 is not the compiled 0755",
    ),
    "dependency-patch-added": (
        _dependency_patch,
        layout.DEPENDENCY_PATCH,
        "not part of the bundle its definition compiles to",
    ),
    "gold-patch-changed": (
        _gold_patch_changed,
        layout.GOLD_PATCH,
        "sha256 {gold} does not match .selfbench-manifest.json ({recorded_gold})",
    ),
    "untouched-file-changed": (_untouched_file_changed, layout.ENV_SNAPSHOT, _NOT_THE_TREE),
    "file-made-executable": (_file_made_executable, layout.ENV_SNAPSHOT, _NOT_THE_TREE),
    "snapshot-member-twice": (_duplicate_member, layout.ENV_SNAPSHOT, "holds README.md twice"),
    "base-commit-object-swapped": (
        _base_commit_swapped,
        layout.BASE_COMMIT,
        "holds commit {head}, not baseCommit {base}",
    ),
    "forged-accepted-validation": (_forged_verdict, REVIEW_FILE, _UNBOUND),
    "validation-of-another-build": (_verdict_of_another_build, REVIEW_FILE, _UNBOUND),
    "another-compiler-revision": (
        _old_revision,
        layout.MANIFEST,
        (
            f"compiled by compiler revision {layout.COMPILER_REVISION + 1}; this selfbench "
            f"proves revision {layout.COMPILER_REVISION} (export it again with this version)"
        ),
    ),
}


def _tampered(exported: Path, attack: Attack, sample: SampleRepository, out: Path) -> Members:
    members = _task_members(exported)
    attack(members, sample)
    task = gzip_tar(list(members.values()))
    out.write_bytes(outer_archive({TASK: task}))
    return members


def _expected(message: str, members: Members, sample: SampleRepository) -> str:
    manifest = json.loads(members[_path(layout.MANIFEST)].data)
    return message.format(
        snapshot=hashlib.sha256(_snapshot(members)).hexdigest(),
        tests_snapshot=hashlib.sha256(members[_path(layout.TESTS_SNAPSHOT)].data).hexdigest(),
        gold=hashlib.sha256(members[_path(layout.GOLD_PATCH)].data).hexdigest(),
        recorded=manifest["snapshotSha256"],
        recorded_gold=manifest["goldPatchSha256"],
        head=sample.head,
        base=sample.base,
        tree=_git(sample, "rev-parse", f"{sample.base}^{{tree}}").decode().strip(),
        made=_made_tree(members, sample),
        bundle=hashlib.sha256(members[_path(layout.MANIFEST)].data).hexdigest(),
    )


def _git(sample: SampleRepository, *args: str, env: dict[str, str] | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(sample.path), *args],
        capture_output=True,
        check=True,
        env={**os.environ, **(env or {})},
    ).stdout


def _made_tree(members: Members, sample: SampleRepository) -> str:
    """The tree Git makes of the base with the tampered snapshot's README.md (its content and
    its executable bit), computed in a private index of the sample repository."""
    with tarfile.open(fileobj=io.BytesIO(_snapshot(members)), mode="r:gz") as snapshot:
        info = snapshot.getmember("README.md")
        handle = snapshot.extractfile(info)
        assert handle is not None
        data = handle.read()
    mode = "100755" if info.mode & 0o100 else "100644"
    with tempfile.TemporaryDirectory() as temp:
        env = {"GIT_INDEX_FILE": f"{temp}/index"}
        _git(sample, "read-tree", sample.base, env=env)
        path = Path(temp) / "README.md"
        path.write_bytes(data)
        blob = _git(sample, "hash-object", "-w", str(path)).decode().strip()
        _git(sample, "update-index", "--cacheinfo", f"{mode},{blob},README.md", env=env)
        return _git(sample, "write-tree", env=env).decode().strip()


def test_the_untouched_task_rebuilt_the_same_way_verifies(
    tmp_path: Path, exported: Path, sample: SampleRepository
) -> None:
    archive = tmp_path / "same.tar.gz"
    _tampered(exported, lambda _members, _sample: None, sample, archive)
    assert [entry.task_id for entry in verify_export(archive).manifest.tasks] == [TASK]


@pytest.mark.parametrize("case", ATTACKS)
def test_a_tampered_export_is_refused_by_verify_extract_and_review(
    tmp_path: Path,
    exported: Path,
    sample: SampleRepository,
    case: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    attack, relative, message = ATTACKS[case]
    archive = tmp_path / "tampered.tar.gz"
    members = _tampered(exported, attack, sample, archive)
    line = f"error: {archive}: {MEMBER}: harbor-task/{relative}: "
    line += _expected(message, members, sample) + "\n"
    assert main(["verify", str(archive)]) == 1
    assert capsys.readouterr() == ("", line)
    out = tmp_path / "extracted"
    assert main(["extract", str(archive), "--out", str(out)]) == 2
    assert capsys.readouterr() == ("", line)
    assert not out.exists()
    assert main(["review", str(archive), "--port", "0"]) == 2
    assert capsys.readouterr() == ("", line)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tampered.tar.gz"]


# --- the pieces --------------------------------------------------------------------------------


def test_the_snapshot_scan_indexes_a_real_git_archive_fed_in_small_pieces(
    exported: Path, sample: SampleRepository
) -> None:
    snapshot = _snapshot(_task_members(exported))
    scan = SnapshotScan(unpack_limit=1 << 30)
    for start in range(0, len(snapshot), 7):
        scan.feed(snapshot[start : start + 7])
    scan.finish()
    assert (scan.problem, scan.commit) == (None, sample.base)
    listed = subprocess.run(
        ["git", "-C", str(sample.path), "ls-tree", "-r", sample.base],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    blobs = {line.split("\t")[1]: line.split()[2] for line in listed.splitlines()}
    assert {path: blob for path, blob in scan.files.items() if blob is not None} == blobs


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
BROKEN_SNAPSHOTS = {
    "empty": (b"", "not a valid gzip stream (truncated)"),
    "header-only": (_GZIP_HEADER, "not a valid gzip stream (truncated)"),
    "bad-deflate": (
        _GZIP_HEADER + b"\xff" * 16,
        "not a valid gzip stream (Error -3 while decompressing data: invalid block type)",
    ),
    "no-end-marker": (
        gzip_tar([RawMember("a", b"x")], end=b""),
        "not a tar archive (it ends without an end-of-archive marker)",
    ),
    "malformed-pax": (
        gzip_tar([RawMember("p", b"9 path\n", type=tarfile.XHDTYPE)]),
        "malformed pax header",
    ),
    "pax-size-not-a-number": (
        gzip_tar([RawMember("p", b"12 size=x1\n", type=tarfile.XHDTYPE), RawMember("a")]),
        "malformed pax header",
    ),
}


@pytest.mark.parametrize("case", BROKEN_SNAPSHOTS)
def test_a_broken_snapshot_is_a_problem_not_an_exception(case: str) -> None:
    data, problem = BROKEN_SNAPSHOTS[case]
    scan = SnapshotScan(unpack_limit=1 << 20)
    scan.feed(data)
    scan.finish()
    assert scan.problem == problem


def test_a_snapshot_that_unpacks_beyond_the_limit_is_refused() -> None:
    scan = SnapshotScan(unpack_limit=4096)
    scan.feed(gzip_tar([RawMember("big", bytes(8192))]))
    scan.finish()
    assert scan.problem == "the snapshot unpacks to more than 4096 bytes"


def test_snapshot_rules_name_the_first_broken_rule() -> None:
    gold = (
        b"diff --git a/src/mod.py b/src/mod.py\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/src/mod.py\n+++ b/src/mod.py\n@@ -1 +1 @@\n-old\n+new\n"
    )
    tests = (
        b"diff --git a/tests/a.py b/tests/a.py\nnew file mode 100644\n"
        b"index 0000000..3333333\n--- /dev/null\n+++ b/tests/a.py\n@@ -0,0 +1 @@\n+x\n"
    )
    rules = build_snapshot_rules(tests, gold)
    assert rules.problem({"src/mod.py": "1111111" + "0" * 33}) is None
    assert rules.problem({"src/mod.py": "2222222" + "0" * 33}) == (
        "holds the gold patch's new content of src/mod.py"
    )
    assert rules.problem({"tests/a.py": None}) == (
        "holds tests/a.py, a file the held-out test patch adds"
    )
    assert rules.problem({"x/t.patch": git_blob_id(tests)}) == (
        "holds a copy of tests/test.patch at x/t.patch"
    )


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=2048), cuts=st.lists(st.integers(0, 2048), max_size=6))
def test_the_snapshot_scan_takes_any_bytes_in_any_pieces_without_raising(
    data: bytes, cuts: list[int]
) -> None:
    scan = SnapshotScan(unpack_limit=1 << 20)
    edges = [0, *sorted(cuts), len(data)]
    for start, stop in itertools.pairwise(edges):
        scan.feed(data[start:stop])
    scan.finish()
    assert scan.problem is not None or scan.commit is None


@settings(max_examples=60, deadline=None)
@given(position=st.integers(min_value=0), flip=st.integers(min_value=1, max_value=255))
def test_a_flipped_byte_of_a_gzip_tar_is_a_problem_or_a_readable_index(
    position: int, flip: int
) -> None:
    members = [RawMember("a/x.py", b"print(1)\n" * 50), RawMember("b", type=tarfile.DIRTYPE)]
    data = bytearray(gzip_tar(members))
    data[position % len(data)] ^= flip
    scan = SnapshotScan(unpack_limit=1 << 20)
    scan.feed(bytes(data))
    scan.finish()
    assert scan.problem is not None or all(isinstance(path, str) for path in scan.files)


def test_export_refuses_a_bundle_whose_snapshot_changed_on_disk(
    tmp_path: Path, sample: SampleRepository, capsys: pytest.CaptureFixture[str]
) -> None:
    collected = author_collected(tmp_path, sample, "slug-s")
    snapshot = collected / "harbor-task" / layout.ENV_SNAPSHOT
    snapshot.write_bytes(_rewritten_snapshot(snapshot.read_bytes(), {}, comment=sample.base))
    out = tmp_path / "run.tar.gz"
    reports = tmp_path / "validation.json"
    reports.write_text(json.dumps([report("slug-s", accepted=True)]))
    args = ["export", str(collected), "--run-id", "run-1", "--out", str(out)]
    args += ["--repository-url", "https://example.com/acme/slugkit.git"]
    args += ["--validation", str(reports)]
    assert main([*args, "--repository-commit", sample.head]) == 2
    line = f"error: {snapshot}: changed since the bundle was compiled"
    assert capsys.readouterr() == ("", f"{line} (snapshotSha256 differs; recompile it)\n")
    assert not out.exists()
    assert sorted(path.name for path in out.parent.iterdir() if path.name.startswith(".")) == []


def test_a_base_commit_given_in_capitals_verifies(tmp_path: Path, sample: SampleRepository) -> None:
    # SPEC §1 allows either case; git archive records the commit id in lowercase.
    collected = author_collected(tmp_path, sample, "slug-upper", baseCommit=sample.base.upper())
    out = tmp_path / "run.tar.gz"
    run = RunInfo("run-1", "https://example.com/acme/slugkit.git", sample.head)
    export_run([collected], run=run, out=out)
    assert [entry.task_id for entry in verify_export(out).manifest.tasks] == ["slug-upper"]
