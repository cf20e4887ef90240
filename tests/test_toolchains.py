"""The image's toolchains, locally: versions, resolution order, substitutions, the sandbox's view.

Fake toolchains are real executables: tiny shell scripts in temp dirs that print a version.
"""

from __future__ import annotations

import json
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from projects import Project, build
from selfbench.artifacts.report import RunReport, TaskReport
from selfbench.bundle import layout
from selfbench.cli import main
from selfbench.cli.report import print_validation
from selfbench.environments.local.sandbox import Mounts, Sandbox, Users, require_sandbox
from selfbench.toolchains import PackageRegistries, provision, resolve, strict_refusal
from selfbench.toolchains.model import (
    Component,
    Mount,
    Provisioned,
    ToolchainUse,
    components,
    nearest,
    parse_version,
)
from selfbench.toolchains.model import satisfies as meets
from selfbench.toolchains.provision import build_provisioned, host_tools_to_hide, visible_in_sandbox
from selfbench.toolchains.resolve import Host, host_pythons, resolved_pythons, toolchain_cache
from selfbench.validate import LocalOptions, LocalRunner, validate

# provisioning is checked on setups of its own
pytestmark = pytest.mark.fresh_setup

needs_sandbox = pytest.mark.sandbox


def fake_tool(path: Path, output: str) -> Path:
    """An executable that prints `output`, as `TOOL --version` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{output}'\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class FakeRegistry:
    """A registry that "installs" a fake tool of the wanted version, or fails to."""

    def __init__(self, *, works: bool = True) -> None:
        self.works = works
        self.installed: list[str] = []

    def offers(self, component: Component) -> bool:
        return component.kind in {"node", "uv"}

    def install(self, component: Component, cache: Path) -> Path | None:
        self.installed.append(component.name)
        if not self.works:
            return None
        entry = cache / f"{component.kind}-{component.wanted}"
        fake_tool(entry / "bin" / component.kind, f"v{component.wanted}")
        return entry


@pytest.fixture
def host(tmp_path: Path) -> Host:
    """A host with nothing installed: an empty home and an empty `bin` on its PATH."""
    (tmp_path / "home").mkdir()
    (tmp_path / "bin").mkdir()
    return Host(home=tmp_path / "home", path=str(tmp_path / "bin"))


# --- versions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("v22.14.0", "22.14.0"),
        ("Python 3.12.1", "3.12.1"),
        ("go version go1.25.0 linux/amd64", "1.25.0"),
        ("rustc 1.95.0 (59807616e 2026-04-14)", "1.95.0"),
        ("uv 0.13.8 (x86_64-unknown-linux-gnu)", "0.13.8"),
        ("no version here 7", None),
    ],
)
def test_parse_version(text: str, version: str | None) -> None:
    assert parse_version(text) == version


@given(st.text())
def test_parse_version_finds_a_dotted_number_of_the_text_or_none(text: str) -> None:
    version = parse_version(text)
    assert version is None or (version in text and "." in version)


@pytest.mark.parametrize(
    ("wanted", "found", "expected"),
    [
        ("3.12", "3.12.1", True),
        ("3.12", "3.13.0", False),
        ("22.14.0", "22.14.0", True),
        ("22.14.0", "22.14.1", False),
        ("1.90.0", "1.9.0", False),
    ],
)
def test_satisfies(wanted: str, found: str, expected: bool) -> None:
    assert meets(wanted, found) is expected


@pytest.mark.parametrize(
    ("wanted", "found", "expected"),
    [
        ("22.14.0", ["20.20.2", "18.0.0"], "20.20.2"),
        ("22.14.0", ["22.1.0", "23.14.0"], "22.1.0"),
        ("1.90.0", ["1.95.0", "1.85.0"], "1.95.0"),  # a tie: the newer
        ("1.90.0", ["1.95.0", "1.85.0", "1.91.0"], "1.91.0"),
        ("3.12", [], None),
    ],
)
def test_nearest(wanted: str, found: list[str], expected: str | None) -> None:
    assert nearest(wanted, found) == expected


def test_the_implied_toolchains_and_the_three_pythons() -> None:
    assert [part.name for part in components(["python"])] == [
        "uv", "python3.12", "python3.11", "python3.13",
    ]  # fmt: skip
    assert [part.name for part in components(["bun"])] == ["node", "bun"]


@pytest.mark.parametrize(
    ("use", "substitution", "phrase"),
    [
        (ToolchainUse("node", "22.14.0", "22.14.0", "cache", "/c"), None, "node 22.14.0 (cache)"),
        (
            ToolchainUse("node", "22.14.0", "20.20.2", "host", "/usr"),
            "node 20.20.2 instead of 22.14.0",
            "node 20.20.2 instead of 22.14.0",
        ),
        (
            ToolchainUse("go", "1.25.0", None, "missing", None),
            "go 1.25.0: not available",
            "go 1.25.0: not available",
        ),
    ],
)
def test_a_use_names_its_substitution(
    use: ToolchainUse, substitution: str | None, phrase: str
) -> None:
    assert use.substitution == substitution
    assert use.describe() == phrase
    assert use.to_json()["substitution"] == substitution


def test_strict_refusal_names_every_substitution() -> None:
    uses = (
        ToolchainUse("uv", "0.13.8", "0.13.8", "registry", "/c/uv-0.13.8"),
        ToolchainUse("node", "22.14.0", "20.20.2", "host", "/usr"),
        ToolchainUse("rust", "1.90.0", None, "missing", None),
    )
    assert strict_refusal(uses) == (
        "toolchains differ from the image's (--strict-toolchains): "
        "node 20.20.2 instead of 22.14.0; rust 1.90.0: not available"
    )
    assert strict_refusal(uses[:1]) is None


# --- resolution order ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "cache"),
    [
        ({"SELFBENCH_TOOLCHAINS_DIR": "/t", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/t"),
        ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/selfbench/toolchains"),
        ({"HOME": "/h"}, "/h/.cache/selfbench/toolchains"),
    ],
)
def test_where_the_toolchain_cache_is(environ: dict[str, str], cache: str) -> None:
    assert toolchain_cache(environ) == Path(cache)


def _node(tmp_path: Path, host: Host, registry: FakeRegistry | None) -> ToolchainUse:
    [resolved] = resolve(["node"], cache=tmp_path / "cache", host=host, registry=registry)
    return resolved.use


def test_the_cache_beats_the_host(tmp_path: Path, host: Host) -> None:
    fake_tool(tmp_path / "cache" / "node-22.14.0" / "bin" / "node", "v22.14.0")
    fake_tool(host.home / ".nvm" / "versions" / "node" / "v22.14.0" / "bin" / "node", "v22.14.0")
    registry = FakeRegistry()
    use = _node(tmp_path, host, registry)
    assert (use.source, use.found, use.path) == (
        "cache",
        "22.14.0",
        str(tmp_path / "cache" / "node-22.14.0"),
    )
    assert registry.installed == []


def test_the_host_beats_the_registry(tmp_path: Path, host: Host) -> None:
    nvm = host.home / ".nvm" / "versions" / "node" / "v22.14.0"
    fake_tool(nvm / "bin" / "node", "v22.14.0")
    fake_tool(tmp_path / "cache" / "node-20.1.0" / "bin" / "node", "v20.1.0")
    registry = FakeRegistry()
    assert _node(tmp_path, host, registry) == ToolchainUse(
        "node", "22.14.0", "22.14.0", "host", str(nvm)
    )
    assert registry.installed == []


def test_a_node_on_the_hosts_path_is_found(tmp_path: Path, host: Host) -> None:
    fake_tool(Path(host.path) / "node", "v22.14.0")
    assert _node(tmp_path, host, None).path == str(Path(host.path).parent)


def test_the_registry_installs_what_neither_has(tmp_path: Path, host: Host) -> None:
    fake_tool(host.home / ".nvm" / "versions" / "node" / "v20.20.2" / "bin" / "node", "v20.20.2")
    registry = FakeRegistry()
    use = _node(tmp_path, host, registry)
    assert (use.source, use.found, use.substitution) == ("registry", "22.14.0", None)
    assert registry.installed == ["node"]
    assert _node(tmp_path, host, registry).source == "cache"  # installed once, then cached


@pytest.mark.parametrize("registry", [None, FakeRegistry(works=False)], ids=["none", "failing"])
def test_the_nearest_version_is_used_and_named(
    tmp_path: Path, host: Host, registry: FakeRegistry | None
) -> None:
    nvm = host.home / ".nvm" / "versions" / "node"
    fake_tool(nvm / "v20.20.2" / "bin" / "node", "v20.20.2")
    fake_tool(nvm / "v18.0.0" / "bin" / "node", "v18.0.0")
    use = _node(tmp_path, host, registry)
    assert use == ToolchainUse("node", "22.14.0", "20.20.2", "host", str(nvm / "v20.20.2"))
    assert use.substitution == "node 20.20.2 instead of 22.14.0"


def test_nothing_anywhere_is_missing(tmp_path: Path, host: Host) -> None:
    assert _node(tmp_path, host, None) == ToolchainUse("node", "22.14.0", None, "missing", None)


def test_pyenv_and_uv_managed_pythons_are_found(tmp_path: Path, host: Host) -> None:
    pyenv = host.home / ".pyenv" / "versions" / "3.12.4"
    fake_tool(pyenv / "bin" / "python3.12", "Python 3.12.4")
    managed = host.home / ".local" / "share" / "uv" / "python" / "cpython-3.13.1-linux-x86_64-gnu"
    fake_tool(managed / "bin" / "python3.13", "Python 3.13.1")
    fake_tool(tmp_path / "cache" / "uv-0.13.8" / "bin" / "uv", "uv 0.13.8")
    resolved = resolve(["python"], cache=tmp_path / "cache", host=host)
    assert [(r.use.name, r.use.found, r.use.source, r.use.path) for r in resolved] == [
        ("uv", "0.13.8", "cache", str(tmp_path / "cache" / "uv-0.13.8")),
        ("python3.12", "3.12.4", "host", str(pyenv)),
        ("python3.11", None, "missing", None),
        ("python3.13", "3.13.1", "host", str(managed)),
    ]


def test_another_python_stands_in_for_a_missing_one(tmp_path: Path, host: Host) -> None:
    prefix = host.home / ".pyenv" / "versions" / "3.11.7"
    fake_tool(prefix / "bin" / "python3.11", "Python 3.11.7")
    (prefix / "bin" / "python3").symlink_to("python3.11")
    resolved = resolve(["python"], cache=tmp_path / "cache", host=host)
    assert [r.use.describe() for r in resolved[1:]] == [
        "python3.12 3.11.7 instead of 3.12",
        "python3.11 3.11.7 (host)",
        "python3.13 3.11.7 instead of 3.13",
    ]
    mounts = build_provisioned(resolved[1:2]).mounts
    assert mounts[-3:] == (
        Mount(
            "symlink", "/usr/local/bin/python3.12", "/opt/uv-python/python3.12-3.11.7/bin/python3"
        ),
        Mount("symlink", "/usr/local/bin/python3", "python3.12"),
        Mount("symlink", "/usr/local/bin/python", "python3"),
    )


def test_the_sandboxs_python_commands_and_the_version_each_runs(tmp_path: Path, host: Host) -> None:
    prefix = host.home / ".pyenv" / "versions" / "3.11.7"
    fake_tool(prefix / "bin" / "python3.11", "Python 3.11.7")
    (prefix / "bin" / "python3").symlink_to("python3.11")
    fake_tool(host.home / ".pyenv" / "versions" / "3.13.1" / "bin" / "python3.13", "Python 3.13.1")
    resolved = resolve(["python"], cache=tmp_path / "cache", host=host)
    # no 3.12: its commands (and python3, the default) run the nearest found, 3.11
    assert resolved_pythons(resolved) == {
        "python3": "3.11",
        "python3.11": "3.11",
        "python3.12": "3.11",
        "python3.13": "3.13",
    }


def test_the_hosts_own_pythons_on_a_path_outside_its_home(tmp_path: Path, host: Host) -> None:
    usr = tmp_path / "usr" / "bin"
    fake_tool(usr / "python3", "Python 3.11.2")
    fake_tool(usr / "python3.11", "Python 3.11.2")
    (usr / "python3.12").symlink_to(fake_tool(host.home / "py" / "python3.12", "Python 3.12.1"))
    fake_tool(usr / "python3.13", "no version")
    names = ("python3", "python3.11", "python3.12", "python3.13")
    assert host_pythons(names, str(usr), home=host.home) == {
        "python3": "3.11",
        "python3.11": "3.11",
    }


def test_pyenv_shims_are_not_pythons(tmp_path: Path, host: Host) -> None:
    shims = host.home / ".pyenv" / "shims"
    fake_tool(shims / "python3.12", "Python 3.12.9")
    resolved = resolve(["python"], cache=tmp_path, host=Host(home=host.home, path=str(shims)))
    assert resolved[1].use.source == "missing"


def test_the_cli_shows_what_validate_would_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    fake_tool(cache / "node-22.14.0" / "bin" / "node", "v22.14.0")
    fake_tool(cache / "bun-1.3.0" / "bin" / "bun", "1.3.0")
    monkeypatch.setenv("SELFBENCH_TOOLCHAINS_DIR", str(cache))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["toolchains", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cache"] == str(cache)
    by_name = {entry["name"]: entry for entry in report["toolchains"]}
    assert list(by_name)[:4] == ["uv", "python3.12", "python3.11", "python3.13"]
    assert by_name["node"] == {
        "name": "node", "wanted": "22.14.0", "found": "22.14.0", "source": "cache",
        "path": str(cache / "node-22.14.0"), "substitution": None,
    }  # fmt: skip
    assert by_name["bun"]["substitution"] == "bun 1.3.0 instead of 1.3.14"
    assert main(["toolchains"]) == 0
    text = capsys.readouterr().out
    assert "substitution: bun 1.3.0 instead of 1.3.14\n" in text
    assert f"cache: {cache}\n" in text


# --- how they are mounted -----------------------------------------------------------------------


def test_node_from_the_cache_is_mounted_as_the_image_lays_it_out(
    tmp_path: Path, host: Host
) -> None:
    entry = tmp_path / "cache" / "node-22.14.0"
    fake_tool(entry / "bin" / "node", "v22.14.0")
    for script in ("npm/bin/npm-cli.js", "npm/bin/npx-cli.js", "corepack/dist/corepack.js"):
        fake_tool(entry / "lib" / "node_modules" / script, "")
    provisioned = build_provisioned(resolve(["node"], cache=tmp_path / "cache", host=host))
    assert provisioned.mounts == (
        Mount("bind", "/usr/local/bin/node", str(entry / "bin" / "node")),
        Mount("bind", "/usr/local/lib/node_modules", str(entry / "lib" / "node_modules")),
        Mount("symlink", "/usr/local/bin/npm", "../lib/node_modules/npm/bin/npm-cli.js"),
        Mount("symlink", "/usr/local/bin/npx", "../lib/node_modules/npm/bin/npx-cli.js"),
        Mount(
            "symlink", "/usr/local/bin/corepack", "../lib/node_modules/corepack/dist/corepack.js"
        ),
    )
    assert provisioned.environment == ()


def test_a_shared_libpython_build_is_mounted_under_opt_uv_python(
    tmp_path: Path, host: Host
) -> None:
    prefix = host.home / ".pyenv" / "versions" / "3.12.4"
    fake_tool(prefix / "bin" / "python3.12", "Python 3.12.4")
    (prefix / "lib" / "python3.12").mkdir(parents=True)
    (prefix / "lib" / "libpython3.12.so.1.0").write_bytes(b"")
    resolved = resolve(["python"], cache=tmp_path / "cache", host=host)
    provisioned = build_provisioned(resolved)
    shown = "/opt/uv-python/python3.12-3.12.4"
    assert provisioned.mounts == (
        Mount("bind", shown, str(prefix)),
        Mount("symlink", "/usr/local/lib/python3.12", f"{shown}/lib/python3.12"),
        Mount("symlink", "/usr/local/bin/python3.12", f"{shown}/bin/python3.12"),
        Mount("symlink", "/usr/local/bin/python3", "python3.12"),
        Mount("symlink", "/usr/local/bin/python", "python3"),
    )
    assert provisioned.environment == (("LD_LIBRARY_PATH", f"{shown}/lib"),)
    assert provisioned.substitutions == (
        "uv 0.13.8: not available",
        "python3.11 3.11: not available",
        "python3.13 3.13: not available",
    )


def test_rust_gets_its_homes_and_a_writable_cargo(tmp_path: Path, host: Host) -> None:
    entry = tmp_path / "cache" / "rust-1.90.0"
    fake_tool(entry / "cargo" / "bin" / "rustc", "rustc 1.90.0 (abc 2025-09-14)")
    provisioned = build_provisioned(resolve(["rust"], cache=tmp_path / "cache", host=host))
    assert provisioned.mounts == (
        Mount("bind", "/usr/local/rustup", str(entry / "rustup")),
        Mount("state", "/usr/local/cargo"),
        Mount("bind", "/usr/local/cargo/bin", str(entry / "cargo" / "bin")),
    )
    assert provisioned.environment == (
        ("CARGO_HOME", "/usr/local/cargo"),
        ("RUSTUP_HOME", "/usr/local/rustup"),
    )


def test_the_hosts_toolchain_executables_are_hidden_except_those_used(tmp_path: Path) -> None:
    usr_bin = tmp_path / "usr" / "bin"
    for name in ("node", "python3.11", "pip3", "git", "python3-config", "gofmt"):
        fake_tool(usr_bin / name, "")
    (usr_bin / "python3").symlink_to("python3.11")
    (usr_bin / "nodejs").symlink_to("/nonexistent/nodejs")
    used = Provisioned(
        mounts=(Mount("symlink", "/usr/local/bin/python3.11", str(usr_bin / "python3.11")),)
    )
    hidden = host_tools_to_hide(used, usr_bin)
    assert hidden == [usr_bin / name for name in ("gofmt", "node", "pip3", "python3-config")]


def test_the_text_report_names_the_toolchains(capsys: pytest.CaptureFixture[str]) -> None:
    empty = RunReport(None, "")
    uses = (
        ToolchainUse("node", "22.14.0", "20.20.2", "host", "/usr"),
        ToolchainUse("bun", "1.3.14", "1.3.14", "registry", "/c/bun-1.3.14"),
    )
    print_validation(
        [TaskReport("t", accepted=False, reason="r", nop=empty, oracle=empty, toolchains=uses)]
    )
    assert "t: toolchains: node 20.20.2 instead of 22.14.0, bun 1.3.14 (registry)\n" in (
        capsys.readouterr().out
    )


# --- the sandbox's view -------------------------------------------------------------------------


@pytest.fixture
def provisioned_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toolchain cache holding fake Pythons and uv; no host toolchains; provisioning on."""
    cache = tmp_path / "cache"
    for minor in ("11", "12", "13"):
        fake_tool(
            cache / f"python-3.{minor}.99" / "bin" / f"python3.{minor}", f"Python 3.{minor}.99"
        )
    fake_tool(cache / "uv-0.13.8" / "bin" / "uv", "uv 0.13.8")
    monkeypatch.setenv("SELFBENCH_TOOLCHAINS_DIR", str(cache))
    monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return cache


@needs_sandbox
def test_a_python_task_sees_the_provisioned_python_and_no_node(
    provisioned_env: Path, sandbox_users: Users
) -> None:
    toolchains = provision(["python"], install=False)
    root = Path(tempfile.mkdtemp(prefix="selfbench-test-"))
    try:
        sandbox = Sandbox(root, sandbox_users, require_sandbox(), None, toolchains)
        script = (
            "runuser -u verifier -- python --version\n"
            "python3 --version; python3.11 --version; uv --version\n"
            "node --version >/dev/null 2>&1 || echo 'no runnable node'\n"
            "which node npm go cargo || echo 'none on PATH'\n"
            "bash -lc 'echo $PATH'\n"
        )
        log = root / "phase.log"
        result = sandbox.run(script, (), mounts=Mounts(), log=log, timeout=60)
        assert result.exit_code == 0
        assert log.read_text() == (
            "Python 3.12.99\nPython 3.12.99\nPython 3.11.99\nuv 0.13.8\n"
            f"no runnable node\nnone on PATH\n{layout.CONTAINER_PATH}\n"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def shell_project(task_id: str, toolchains: list[str], setup: str, check: str = "true") -> Project:
    """A task whose tests are shell scripts; `check` is its pass-to-pass test."""
    return Project(
        base={".gitignore": ".venv/\n", "a.txt": "a\n", "tests/test_a.sh": f"{check}\n"},
        gold={"a.txt": "b\n"},
        tests={"tests/test_b.sh": 'test "$(cat a.txt)" = b\n'},
        definition={
            "taskId": task_id,
            "toolchains": toolchains,
            "setupCommand": setup,
            "testCommand": "for t in {tests}; do bash $t || exit 1; done",
            "failToPass": ["tests/test_b.sh"],
            "passToPass": ["tests/test_a.sh"],
        },
    )


@needs_sandbox
def test_strict_toolchains_rejects_a_substitution(
    tmp_path: Path, provisioned_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_tool(provisioned_env / "rust-1.89.0" / "cargo" / "bin" / "rustc", "rustc 1.89.0")
    out = build(shell_project("strict-rust", ["rust"], "true"), tmp_path / "build")
    assert main(["validate", str(out), "--strict-toolchains", "--logs", str(tmp_path / "l")]) == 1
    assert capsys.readouterr().err.endswith(
        "strict-rust: rejected: validation failed: toolchains differ from the image's "
        "(--strict-toolchains): rust 1.89.0 instead of 1.90.0\n"
    )


@needs_sandbox
def test_the_report_names_the_toolchains_used(tmp_path: Path, provisioned_env: Path) -> None:
    project = shell_project("python-versions", ["python"], "python --version && uv --version")
    [report] = validate(
        [build(project, tmp_path / "build")],
        runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")),
    )
    assert report.accepted
    assert [use.describe() for use in report.toolchains] == [
        "uv 0.13.8 (cache)",
        "python3.12 3.12.99 (cache)",
        "python3.11 3.11.99 (cache)",
        "python3.13 3.13.99 (cache)",
    ]
    assert report.toolchains[1].found == "3.12.99"
    prepare = (tmp_path / "logs" / "python-versions" / "prepare.log").read_text()
    assert "Python 3.12.99\nuv 0.13.8\n" in prepare


# --- the registries, for real -------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One toolchain cache for the tests that install from the registries."""
    return tmp_path_factory.mktemp("registry-cache")


@pytest.mark.network
def test_node_is_installed_from_npm_at_the_images_version(
    tmp_path: Path, host: Host, registry_cache: Path
) -> None:
    [resolved] = resolve(["node"], cache=registry_cache, host=host, registry=PackageRegistries())
    assert (resolved.use.found, resolved.use.source) == ("22.14.0", "registry")
    entry = registry_cache / "node-22.14.0"
    assert (entry / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js").is_file()
    assert (entry / "lib" / "node_modules" / "corepack" / "dist" / "corepack.js").is_file()


@pytest.mark.network
@needs_sandbox
def test_a_node_task_runs_on_the_images_node_npm_and_corepack(
    tmp_path: Path, registry_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SELFBENCH_TOOLCHAINS_DIR", str(registry_cache))
    monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)
    setup = "node --version && npm --version && corepack --version && ! python3 -V 2>/dev/null"
    project = shell_project("node-versions", ["node"], setup, "node -e 'process.exit(0)'")
    [report] = validate(
        [build(project, tmp_path / "build")],
        runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")),
    )
    assert (report.accepted, report.reason) == (True, None)
    assert [use.describe() for use in report.toolchains] in (
        ["node 22.14.0 (cache)"],
        ["node 22.14.0 (registry)"],  # when this test runs alone
    )
    prepare = (tmp_path / "logs" / "node-versions" / "prepare.log").read_text()
    assert "v22.14.0\n10.9.2\n0.31.0\n" in prepare


@pytest.mark.network
@needs_sandbox
def test_a_venv_gets_setuptools_and_wheel_after_setup_as_in_the_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if resolve(["python"], cache=tmp_path / "none")[1].candidate is None:
        pytest.skip("no Python 3.12 on this machine")
    monkeypatch.setenv("SELFBENCH_TOOLCHAINS_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SELFBENCH_TOOLCHAINS", raising=False)
    check = ".venv/bin/python -c 'import setuptools, wheel'"
    project = shell_project("venv-step", ["python"], "python -m venv --without-pip .venv", check)
    [report] = validate(
        [build(project, tmp_path / "build")],
        runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")),
    )
    assert (report.accepted, report.reason) == (True, None)
    assert report.toolchains[0] == ToolchainUse(
        "uv", "0.13.8", "0.13.8", "registry", str(tmp_path / "cache" / "uv-0.13.8")
    )


@pytest.mark.parametrize(
    ("home", "visible"),
    [
        ("/usr", True),  # Debian's python3: the sandbox shows /usr read-only
        ("/usr/lib/go-1.25", True),
        ("/usr/local", False),  # the sandbox covers /usr/local with the image's own
        ("/usr/local/go", False),
        ("/root/.pyenv/versions/3.12.1", False),
    ],
)
def test_only_toolchains_under_usr_but_not_usr_local_are_shown_in_place(
    home: str, visible: bool
) -> None:
    assert visible_in_sandbox(Path(home)) is visible


@needs_sandbox
def test_a_later_setup_finds_what_an_earlier_one_left_in_cargos_caches(
    tmp_path: Path, provisioned_env: Path
) -> None:
    """Cargo's registry and git caches are the process's download caches too (bound over the
    task's cargo home in setup, copied into it after): a second candidate's setup finds the
    crate the first fetched, and so do its tests."""
    fake_tool(provisioned_env / "rust-1.90.0" / "cargo" / "bin" / "rustc", "rustc 1.90.0")
    (provisioned_env / "rust-1.90.0" / "rustup").mkdir()
    fetch = (
        'mkdir -p "$CARGO_HOME/registry/cache" "$CARGO_HOME/git/db" && '
        'echo crate > "$CARGO_HOME/registry/cache/one.crate" && echo db > "$CARGO_HOME/git/db/x"'
    )
    finds = 'test -f "$CARGO_HOME/registry/cache/one.crate" && echo found-the-crate-$((6 * 7))'
    check = "test -f /usr/local/cargo/registry/cache/one.crate && test -f /usr/local/cargo/git/db/x"
    first = shell_project("fetches", ["rust"], fetch)
    second = shell_project("finds", ["rust"], finds, check)
    for project in (first, second):
        project.definition["repo"] = "example/cargo-caches"
        out = build(project, tmp_path / project.definition["taskId"])
        [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
        assert report.accepted, report.reason
    prepare = (tmp_path / "logs" / "finds" / "prepare.log").read_text(encoding="utf-8")
    assert "found-the-crate-42" in prepare
    assert not (provisioned_env / "rust-1.90.0" / "cargo" / "registry").exists()
