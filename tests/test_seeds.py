"""Dependency seeds (environments/local/seeds.py): a setup of the same manifests starts from what
the last one installed, never from what was built from a candidate's own code, and a seed that
breaks a setup is dropped for that setup."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from projects import build
from selfbench.artifacts.compiled import locate_task
from selfbench.environments.local.scoring import score_patches
from selfbench.environments.local.seeds import (
    SeedRefused,
    SeedStore,
    Snapshot,
    seed_store,
    seeded_directories,
)
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from test_validate import PY_BASE, python_project

# each test checks what its own setups seed, from none kept
pytestmark = pytest.mark.fresh_setup

needs_sandbox = pytest.mark.sandbox


def _snapshot(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return path


def test_a_snapshot_names_its_manifests_by_digest_and_every_path(tmp_path: Path) -> None:
    snapshot = Snapshot.read(
        _snapshot(
            tmp_path / "s.tar.gz",
            {
                "pyproject.toml": b"[project]\n",
                "web/package.json": b'{"dependencies": {"a": "^1"}}',
                "web/.npmrc": b"",
                "src/calc.py": b"",
            },
        )
    )
    assert sorted(snapshot.manifests) == ["pyproject.toml", "web/.npmrc", "web/package.json"]
    assert {"src", "src/calc.py", "web", "pyproject.toml"} <= snapshot.paths
    assert not snapshot.file_dependencies
    local = Snapshot.read(
        _snapshot(tmp_path / "l.tar.gz", {"package.json": b'{"dependencies": {"a": "file:../a"}}'})
    )
    assert local.file_dependencies


def _tree(root: Path, entries: list[str]) -> Path:
    for entry in entries:
        (root / entry).mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize(
    ("made", "tracked", "file_dependencies", "seeded"),
    [
        ([".venv/lib", "node_modules/a"], set(), False, [".venv", "node_modules"]),
        (["web/node_modules/a", "web/src"], {"web", "web/src"}, False, ["web/node_modules"]),
        (["node_modules/a/node_modules/b"], set(), False, ["node_modules"]),  # the outer one
        (["fixtures/node_modules/x"], {"fixtures", "fixtures/node_modules"}, False, []),
        ([".git/node_modules", ".venv"], set(), False, [".venv"]),  # never inside .git
        (["node_modules/a", ".venv"], set(), True, [".venv"]),  # a `file:` dependency
    ],
)
def test_seeded_directories_are_those_setup_made(
    tmp_path: Path,
    made: list[str],
    tracked: set[str],
    file_dependencies: bool,
    seeded: list[str],
) -> None:
    tree = _tree(tmp_path / "app", made)
    snapshot = Snapshot({}, frozenset(tracked), file_dependencies=file_dependencies)
    assert seeded_directories(tree, snapshot) == seeded


def test_a_linked_directory_is_never_seeded(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "app", ["real/node_modules/a"])
    (tree / "node_modules").symlink_to(tree / "real" / "node_modules")
    (tree / "link").symlink_to(tree / "real")
    assert seeded_directories(tree, Snapshot({}, frozenset({"real"}), file_dependencies=False)) == [
        "real/node_modules"
    ]


def _dist(site: Path, name: str, url: str | None, files: list[str]) -> Path:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    if url is not None:
        (info / "direct_url.json").write_text(json.dumps({"url": url}), encoding="utf-8")
    for relative in files:
        path = Path(os.path.normpath(site / relative))
        if path.is_relative_to(site.parents[2]):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x", encoding="utf-8")
    written = [f"{info.name}/direct_url.json"] if url is not None else []
    rows = [_row(site, entry) for entry in [*files, *written]]
    rows.append(f"{info.name}/RECORD,,\n")
    (info / "RECORD").write_text("".join(rows), encoding="utf-8")
    return info


def _row(site: Path, entry: str) -> str:
    """A `RECORD` row as pip writes it: the path, `sha256=` its urlsafe digest, its size."""
    path = Path(os.path.normpath(site / entry))
    content = path.read_bytes() if path.is_file() else b""
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).decode().rstrip("=")
    return f"{entry},sha256={digest},{len(content)}\n"


def test_a_seeded_venv_holds_no_distribution_installed_from_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "app"
    site = tree / ".venv" / "lib" / "python3.12" / "site-packages"
    own = _dist(site, "calc", "file:///app", ["calc/__init__.py", "../../../bin/calc"])
    member = _dist(site, "member", "file:///app/packages/member", ["member.py"])
    editable = _dist(site, "dep", "https://example.com/dep.tar.gz", ["dep/__init__.py"])
    registry = _dist(site, "six", None, ["six.py"])
    elsewhere = _dist(site, "other", "file:///srv/other", ["other.py"])
    outside = tmp_path / "outside.txt"
    outside.write_text("kept", encoding="utf-8")
    hostile = _dist(site, "hostile", "file:///app/x", [str(outside), "../../../../../outside.txt"])
    store = SeedStore(tmp_path / "seeds")

    kept = store.record("k", tree, Snapshot({}, frozenset(), file_dependencies=False))

    assert kept == (".venv",)
    seed = tmp_path / "seeds" / "1" / ".venv" / "lib" / "python3.12" / "site-packages"
    for gone in (own, member, hostile):
        assert not (seed / gone.name).exists()
    assert not (seed / "calc").exists()
    assert not (seed / "member.py").exists()
    assert not (seed.parents[2] / "bin" / "calc").exists()
    for stays in (editable, registry, elsewhere):
        assert (seed / stays.name / "RECORD").is_file()
    assert (seed / "dep" / "__init__.py").is_file()
    assert (seed / "six.py").is_file()
    assert outside.read_text(encoding="utf-8") == "kept"
    assert (site / "calc" / "__init__.py").is_file()  # the tree itself is untouched


def test_tools_caches_in_node_modules_are_not_seeded(tmp_path: Path) -> None:
    tree = _tree(
        tmp_path / "app", ["node_modules/a", "node_modules/.cache/babel", "node_modules/.vite"]
    )
    store = SeedStore(tmp_path / "seeds")
    store.record("k", tree, Snapshot({}, frozenset(), file_dependencies=False))
    seeded = tmp_path / "seeds" / "1" / "node_modules"
    assert sorted(path.name for path in seeded.iterdir()) == ["a"]


def test_seeds_below_the_capacity_all_stay(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "app", [".venv/bin"])
    store = SeedStore(tmp_path / "seeds", capacity=4)
    for key in ("a", "b", "c"):
        store.record(key, tree, Snapshot({}, frozenset(), file_dependencies=False))
    assert store.keys() == ("a", "b", "c")


def test_the_least_recently_used_seed_goes_past_the_capacity(tmp_path: Path) -> None:
    tree = _tree(tmp_path / "app", [".venv/bin"])
    store = SeedStore(tmp_path / "seeds", capacity=2)
    snapshot = Snapshot({}, frozenset(), file_dependencies=False)
    for key in ("a", "b"):
        store.record(key, tree, snapshot)
    with store.use("a") as seed:
        assert seed is not None
        store.record("c", tree, snapshot)  # "b" is the least recently used
        assert store.keys() == ("a", "c")
        store.record("d", tree, snapshot)  # "a" is the oldest now, but in use: "c" goes
        assert store.keys() == ("a", "d")
    assert store.keys() == ("a", "d")
    assert store.record("d", tree, snapshot) == ()  # one seed per key
    with store.use("b") as missing:
        assert missing is None


MARKED = (
    "if [ -d .venv ]; then echo found-a-venv-$((6 * 7)); fi; "
    "python3 -m venv --system-site-packages --without-pip .venv && touch .venv/made-here"
)
"""Setup that says when its tree already had a `.venv` (the product is printed, so the command
line alone never matches)."""


@needs_sandbox
def test_a_setup_of_the_same_manifests_starts_from_the_last_ones_venv(tmp_path: Path) -> None:
    first = python_project("first", definition={"setupCommand": MARKED})
    other_code = {**PY_BASE, "calc/extra.py": "VALUE = 1\n"}  # another base, the same manifests
    second = python_project("second", base=other_code, definition={"setupCommand": MARKED})
    tasks = [
        locate_task(build(project, tmp_path / name))
        for name, project in (("a", first), ("b", second))
    ]

    for located in tasks:
        [scored] = score_patches(
            located, [b""], options=LocalOptions(logs=tmp_path / "logs"), reuse=True
        )
        assert scored.reward is not None

    first_log = (tmp_path / "logs" / "first" / "prepare.log").read_text(encoding="utf-8")
    second_log = (tmp_path / "logs" / "second" / "prepare.log").read_text(encoding="utf-8")
    assert "found-a-venv-42" not in first_log
    assert "selfbench: seed kept for the next setup of the same manifests: .venv" in first_log
    assert "selfbench: seeded .venv from an earlier setup of the same manifests" in second_log
    assert "found-a-venv-42" in second_log
    assert len(seed_store().keys()) == 1


@needs_sandbox
def test_other_manifests_start_from_the_snapshot_alone(tmp_path: Path) -> None:
    first = python_project("first", definition={"setupCommand": MARKED})
    requirements = {**PY_BASE, "requirements.txt": "# none\n"}
    second = python_project("second", base=requirements, definition={"setupCommand": MARKED})
    for project in (first, second):
        out = build(project, tmp_path / str(id(project)))
        [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
        assert report.accepted, report.reason
    second_log = (tmp_path / "logs" / "second" / "prepare.log").read_text(encoding="utf-8")
    assert "found-a-venv-42" not in second_log
    assert len(seed_store().keys()) == 2


@needs_sandbox
def test_a_setup_the_seed_breaks_runs_again_from_the_snapshot(tmp_path: Path) -> None:
    refuses = "mkdir .venv && python3 -m venv --system-site-packages --without-pip .venv"
    outs = [
        build(
            python_project(task_id, base={**PY_BASE, "calc/n.py": f"N = {n}\n"},
                           definition={"setupCommand": refuses}),
            tmp_path / task_id,
        )
        for n, task_id in enumerate(("first", "second"))
    ]  # fmt: skip
    for out in outs:
        [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
        assert report.accepted, report.reason
    log = (tmp_path / "logs" / "second" / "prepare.log").read_text(encoding="utf-8")
    assert "selfbench: seeded .venv from an earlier setup of the same manifests" in log
    assert "selfbench: the seeded setup failed (setup: setupCommand failed (exit 1;" in log
    again = log.index("selfbench: the seeded setup failed")
    assert "selfbench: setup: mkdir .venv" in log[again:]  # set up again, and it succeeded


GUARDED = (
    "if [ -e .venv/made-here ]; then echo found-a-venv-$((6 * 7)); fi; "
    "if [ -e sub/node_modules/pkg ]; then echo found-modules-$((6 * 7)); fi; "
    "python3 -m venv --system-site-packages --without-pip .venv && touch .venv/made-here && "
    "mkdir -p sub/node_modules/pkg"
)


@needs_sandbox
def test_a_seed_never_covers_the_trees_own_files_or_goes_through_its_links(
    tmp_path: Path,
) -> None:
    """The second tree tracks a `.venv` of its own and has `sub` as a link: the seed's `.venv`
    and `sub/node_modules` are laid over neither (the base stage's own checks, in the sandbox)."""
    first = python_project(
        "first", base={"sub/keep.txt": "a\n"}, definition={"setupCommand": GUARDED}
    )
    second = python_project(
        "second",
        base={
            ".gitignore": "__pycache__/\n",
            ".venv/tracked.txt": "the project's own\n",
            "elsewhere/keep.txt": "b\n",
            "sub": Path("elsewhere"),
        },
        definition={"setupCommand": GUARDED},
    )
    for name, project in (("a", first), ("b", second)):
        located = locate_task(build(project, tmp_path / name))
        [scored] = score_patches(
            located, [b""], options=LocalOptions(logs=tmp_path / "logs"), reuse=True
        )
        assert scored.reward is not None

    first_log = (tmp_path / "logs" / "first" / "prepare.log").read_text(encoding="utf-8")
    second_log = (tmp_path / "logs" / "second" / "prepare.log").read_text(encoding="utf-8")
    kept = "selfbench: seed kept for the next setup of the same manifests: .venv, sub/node_modules"
    assert kept in first_log
    assert "selfbench: seeded" not in second_log
    assert "found-a-venv-42" not in second_log
    assert "found-modules-42" not in second_log


@pytest.fixture(scope="module")
def real_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv made by Python's own `venv`, with pip (whose RECORD gives every file's digest)."""
    venv = tmp_path_factory.mktemp("made") / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    return venv


def _site(venv: Path) -> Path:
    [site] = sorted((venv / "lib").glob("python*/site-packages"))
    return site


def _leave_pth(site: Path) -> None:
    (site / "leak.pth").write_text("import os\n", encoding="utf-8")


def _rewrite_recorded(site: Path) -> None:
    with (site / "pip" / "__init__.py").open("a", encoding="utf-8") as handle:
        handle.write("LEAKED = True\n")


def _link_module(site: Path) -> None:
    (site / "linked.py").symlink_to(site / "pip" / "__init__.py")


def _append_record_row(site: Path, row: str) -> None:
    [record] = site.glob("pip-*.dist-info/RECORD")
    with record.open("a", encoding="utf-8") as handle:
        handle.write(row)


def _pipe_recorded(site: Path) -> None:
    os.mkfifo(site / "evil.py")  # opening it to read would wait for a writer
    _append_record_row(site, "evil.py,sha256=abc,3\n")


def _undigested_pth(site: Path) -> None:
    _leave_pth(site)
    _append_record_row(site, "leak.pth,,\n")


def _rewrite_script(site: Path) -> None:
    with (site.parents[2] / "bin" / "pip").open("a", encoding="utf-8") as handle:
        handle.write("# changed\n")


def _legacy_editable(site: Path) -> None:
    """`setup.py develop` of the tree: an egg-link and a line of `easy-install.pth`, no RECORD."""
    (site / "calc.egg-link").write_text("/app\n.", encoding="utf-8")
    (site / "easy-install.pth").write_text("/app\n", encoding="utf-8")


def _legacy_elsewhere(site: Path) -> None:
    (site / "easy-install.pth").write_text("/app\n/srv/other\n", encoding="utf-8")


def _compile_module(site: Path) -> None:
    cache = site / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "stray.cpython-312.pyc").write_bytes(b"\x00" * 16)


def _make_with_uv(site: Path) -> None:
    (site / "_virtualenv.pth").write_text("import _virtualenv\n", encoding="utf-8")
    (site / "_virtualenv.py").write_text("", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        (None, ""),
        (_leave_pth, ".venv/lib/{python}/site-packages/leak.pth is in no distribution's RECORD"),
        (
            _rewrite_recorded,
            (
                ".venv/lib/{python}/site-packages/pip/__init__.py differs from its"
                " distribution's RECORD"
            ),
        ),
        (_link_module, ".venv/lib/{python}/site-packages/linked.py is in no distribution's RECORD"),
        (_pipe_recorded, ".venv/lib/{python}/site-packages/evil.py is not a regular file"),
        (
            _undigested_pth,
            ".venv/lib/{python}/site-packages/leak.pth has no digest in its distribution's RECORD",
        ),
        (_rewrite_script, ".venv/bin/pip differs from its distribution's RECORD"),
        (_legacy_editable, ""),
        (
            _legacy_elsewhere,
            ".venv/lib/{python}/site-packages/easy-install.pth is in no distribution's RECORD",
        ),
        (_compile_module, ""),
        (_make_with_uv, ""),
    ],
    ids=[
        "as-made",
        "a-pth-the-run-wrote",
        "a-module-rewritten",
        "a-link",
        "a-pipe",
        "no-digest",
        "a-script-rewritten",
        "the-trees-legacy-editable-install",
        "another-legacy-editable-install",
        "bytecode",
        "uv-files",
    ],
)
def test_a_seeded_venv_holds_only_what_its_records_list(
    tmp_path: Path, real_venv: Path, change: Callable[[Path], None] | None, refused: str
) -> None:
    tree = tmp_path / "app"
    tree.mkdir()
    shutil.copytree(real_venv, tree / ".venv", symlinks=True)
    site = _site(tree / ".venv")
    if change is not None:
        change(site)
    store = SeedStore(tmp_path / "seeds")
    snapshot = Snapshot({}, frozenset(), file_dependencies=False)

    if refused:
        with pytest.raises(SeedRefused) as caught:
            store.record("k", tree, snapshot)
        assert str(caught.value) == refused.format(python=site.parent.name)
        assert store.keys() == ()
        assert not (tmp_path / "seeds" / "1").exists()
    else:
        assert store.record("k", tree, snapshot) == (".venv",)
        seeded = _site(tmp_path / "seeds" / "1" / ".venv")
        assert not (seeded / "__pycache__" / "stray.cpython-312.pyc").exists()
        assert (seeded / "pip" / "__init__.py").is_file()
