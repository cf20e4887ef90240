"""The real Harbor (harbor==0.25.0, its own venv: tests/harbor_env.py) accepts our bundles.

For each toolchain combination that matters, a rendered bundle plus small real snapshots must
load with Harbor's `TaskConfig` holding the values of SPEC §5's table, load as a `Task`, and
pass `harbor lint` with its default rules. With every rule selected, the only finding left is
`unpinned-image`: the spec fixes `FROM ubuntu:24.04`, a tag, not a digest.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from harbor_env import run_in_harbor_venv
from selfbench.bundle import layout, render_bundle
from selfbench.bundle.render_scripts import collect_command
from selfbench.contract import TaskDefinition, parse_definition

pytestmark = pytest.mark.harbor

TOOLCHAIN_CASES = {
    "uv": ["uv"],
    "python": ["python"],
    "node": ["node"],
    "bun": ["bun"],
    "go": ["go"],
    "rust": ["rust"],
    "python-node": ["python", "node"],
    "all": ["uv", "python", "node", "bun", "go", "rust"],
    "node-agent-dependencies": ["node"],
}
AGENT_DEPENDENCY_CASES = frozenset({"node-agent-dependencies"})
"""Cases whose definition sets `agentDependencies` (the gold patch touches a manifest)."""
TEST_PATCH = (
    b"diff --git a/app/tests/test_new.py b/app/tests/test_new.py\n"
    b"new file mode 100644\n--- /dev/null\n+++ b/app/tests/test_new.py\n"
    b"@@ -0,0 +1 @@\n+def test_new(): pass\n"
)
GOLD_PATCH = (
    b"diff --git a/app/package.json b/app/package.json\n--- a/app/package.json\n"
    b'+++ b/app/package.json\n@@ -1 +1 @@\n-{"a": 1}\n+{"a": 2}\n'
)
HOSTS = ("chatgpt.com", "*.chatgpt.com", "openai.com", "*.openai.com")

LOAD = """
import json, sys, warnings
from pathlib import Path
warnings.simplefilter("error")
from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task
result = {}
for bundle in sys.argv[1:]:
    config = TaskConfig.model_validate_toml((Path(bundle) / "task.toml").read_text())
    task = Task(bundle)
    result[bundle] = {
        "config": config.model_dump(mode="json"),
        "task": {"name": task.name, "instruction": task.instruction},
    }
print(json.dumps(result))
"""


def definition(name: str, toolchains: list[str]) -> TaskDefinition:
    """A definition for one case; timeouts and resources differ from the defaults on purpose."""
    return parse_definition(
        {
            "schemaVersion": 1,
            "difficulty": "medium",
            "taskId": f"harbor-{name}",
            "repo": "acme/demo",
            "baseCommit": "b" * 40,
            "workdir": "app",
            "setupCommand": "make setup",
            "testCommand": "make test TESTS='x' && run {tests}",
            "failToPass": ["tests/test_new.py"],
            "passToPass": ["tests/test_old.py"],
            "testPaths": ["tests/test_new.py"],
            "toolchains": toolchains,
            "sourcePr": 12,
            "sourceUrl": "https://github.com/acme/demo/pull/12",
            "prompt": "Make the new behaviour work.\n",
            "timeouts": {"setupSeconds": 600, "agentSeconds": 1800, "testsSeconds": 450},
            "resources": {"cpus": 1.5, "memoryMb": 4096, "storageMb": 10240},
            **({"agentDependencies": True} if name in AGENT_DEPENDENCY_CASES else {}),
        }
    ).definition


def snapshot() -> bytes:
    """A real, small repo.tar.gz."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b"print('hello')\n"
        member = tarfile.TarInfo("app/main.py")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def write_bundle(root: Path, name: str) -> Path:
    """Render one case's bundle, with both snapshots, into `root/<name>`."""
    bundle = root / name
    data = snapshot()
    digest = hashlib.sha256(data).hexdigest()
    task = definition(name, TOOLCHAIN_CASES[name])
    for item in render_bundle(task, TEST_PATCH, GOLD_PATCH, snapshot_sha256=digest):
        path = bundle / item.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item.content)
        path.chmod(item.mode)
    for relative in layout.SNAPSHOT_PATHS:
        (bundle / relative).write_bytes(data)
    return bundle


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every case's bundle on disk."""
    root = tmp_path_factory.mktemp("harbor-bundles")
    return {name: write_bundle(root, name) for name in TOOLCHAIN_CASES}


@pytest.fixture(scope="module")
def loaded(bundles: dict[str, Path]) -> dict[str, Any]:
    """What Harbor's TaskConfig and Task make of each bundle, by case."""
    result = run_in_harbor_venv("python", "-c", LOAD, *map(str, bundles.values()))
    assert result.returncode == 0, result.stderr
    by_path = json.loads(result.stdout)
    return {name: by_path[str(path)] for name, path in bundles.items()}


def lint(bundles: dict[str, Path], *options: str) -> list[dict[str, Any]]:
    """`harbor lint --json` over every bundle at once."""
    result = run_in_harbor_venv("harbor", "lint", *map(str, bundles.values()), "--json", *options)
    assert result.returncode in (0, 1), result.stderr
    findings: list[dict[str, Any]] = json.loads(result.stdout or "[]")
    return findings


def expected_environment() -> dict[str, Any]:
    """`[environment]` and `[verifier.environment]` as Harbor reads them back."""
    return {
        "network_mode": "public",
        "build_timeout_sec": 1200.0,
        "cpus": 1.5,
        "memory_mb": 4096,
        "storage_mb": 10240,
    }


@pytest.mark.parametrize("name", TOOLCHAIN_CASES)
def test_task_config_holds_the_spec_values(loaded: dict[str, Any], name: str) -> None:
    config = loaded[name]["config"]
    assert config["schema_version"] == "1.4"
    assert config["artifacts"] == ["/opt/selfbench/agent.patch"]
    assert config["task"] == {
        "name": f"selfbench/harbor-{name}",
        "version": "1.0.0",
        "description": f"Reproduce harbor-{name} from its authentic engineer request.",
        "authors": [],
        "keywords": ["software-engineering", "private-swe", "selfbench", "medium"],
    }
    assert config["metadata"] == {
        "selfbench_task_id": f"harbor-{name}",
        "difficulty": "medium",
        "repo": "acme/demo",
        "base_commit": "b" * 40,
        "workdir": "app",
        "source_pr": 12,
        "compiler_revision": layout.COMPILER_REVISION,
    }
    agent = {key: config["agent"][key] for key in ("timeout_sec", "user", "network_mode")}
    assert agent == {"timeout_sec": 1800.0, "user": "agent", "network_mode": "allowlist"}
    assert config["agent"]["allowed_hosts"] == list(HOSTS)
    verifier = config["verifier"]
    keys = ("timeout_sec", "user", "environment_mode", "network_mode")
    assert {key: verifier[key] for key in keys} == {
        "timeout_sec": 1050.0,
        "user": "root",
        "environment_mode": "separate",
        "network_mode": "public",
    }
    assert verifier["collect"] == [
        {"command": collect_command(), "service": "main", "timeout_sec": 300.0, "user": "root"}
    ]
    for environment in (config["environment"], verifier["environment"]):
        assert {key: environment[key] for key in expected_environment()} == expected_environment()


@pytest.mark.parametrize("name", TOOLCHAIN_CASES)
def test_harbor_loads_the_task(loaded: dict[str, Any], name: str) -> None:
    task = loaded[name]["task"]
    assert task == {
        "name": f"selfbench/harbor-{name}",
        "instruction": "Make the new behaviour work.\n",
    }


def test_harbor_lint_default_rules_find_nothing(bundles: dict[str, Path]) -> None:
    assert lint(bundles) == []


def test_harbor_lint_all_rules_only_flag_the_unpinned_base_image(bundles: dict[str, Path]) -> None:
    findings = lint(bundles, "--select", "ALL")
    assert {(finding["rule"], finding["line"]) for finding in findings} == {("unpinned-image", 1)}
    root = next(iter(bundles.values())).parent
    flagged = {Path(finding["path"]).relative_to(root).as_posix() for finding in findings}
    dockerfiles = (layout.ENV_DOCKERFILE, layout.TESTS_DOCKERFILE)
    assert flagged == {f"{name}/{dockerfile}" for name in bundles for dockerfile in dockerfiles}
