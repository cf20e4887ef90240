"""The real Harbor runs an exported Python task and a Node task in Podman containers: oracle earns
1 on each, nop 0; the images keep neither the host's CA bundle nor its proxy settings; and
`selfbench eval --env harbor --harbor-env podman` scores each task and agent as the local sandbox
does on the same export.

Opt-in with `SELFBENCH_CONTAINERS=1`: `scripts/base-image.sh` installs Podman and builds the
local base image once per machine (a few minutes the first time, cached after); the test is
skipped with the script's reason when no container can start here. Harbor runs with the `podman`
environment through podman-compose, on a private image store (`.cache/containers`).

The export is extracted as a user without registry access would: `selfbench extract
--base-image` (the Debian base built offline) `--build-secrets` (the host's CA and proxies reach
the build, not the image); the toolchain layers fetch from the package registries. One change
is made by hand: the agent's network allow-list becomes public, because Harbor enforces an
allow-list with a sidecar whose images (pinned by digest) come from an image registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from export_helpers import COMMIT, author_collected
from harbor_env import REPO_ROOT, harbor_venv
from projects import build
from selfbench.cli import main
from selfbench.demo import build_sample_repository
from selfbench.evaluate import read_results
from selfbench.export import RunInfo, export_run
from test_validate import node_project

pytestmark = pytest.mark.skipif(
    os.environ.get("SELFBENCH_CONTAINERS") != "1",
    reason="set SELFBENCH_CONTAINERS=1 to run Harbor in Podman containers (builds local images)",
)

PYTHON_TASK, NODE_TASK = "slug-a", "node-reverse"
_NO_ENGINE = 3
_SECONDS = 900
_TRIALS_AT_ONCE = "2"
"""Both tasks' trials at once: most of a trial's time is spent waiting on the engine."""
_NO_PROXY_MARK = "selfbench-proxy-mark.invalid"
"""A `NO_PROXY` entry handed to the builds (harmless), looked for in the images afterwards."""
_TRIAL_IMAGE = re.compile(r"__(env|verifier__trial)_main:")
"""The tags podman-compose gives a trial's images (`--no-delete` keeps them; they share layers)."""
_AGENT_ALLOWLIST = re.compile(
    r'(\[agent\][^\[]*?)network_mode = "allowlist"\nallowed_hosts = \[[^\]]*\]\n'
)


@pytest.fixture(scope="module")
def engine() -> dict[str, str]:
    """The environment podman and harbor run with, once the local base image is built."""
    script = REPO_ROOT / "scripts" / "base-image.sh"
    result = subprocess.run([str(script)], capture_output=True, text=True, check=False)
    if result.returncode == _NO_ENGINE:
        pytest.skip(result.stderr.strip().splitlines()[-1])
    assert result.returncode == 0, result.stderr[-4000:]
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    env = {**os.environ, **values, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["PATH"] = f"{values['PODMAN_COMPOSE_BIN']}{os.pathsep}{env.get('PATH', '')}"
    no_proxy = [item for item in env.get("NO_PROXY", "").split(",") if item]
    env["NO_PROXY"] = ",".join([*no_proxy, _NO_PROXY_MARK])
    return env


def public_agent_network(task: Path) -> None:
    """The agent's allow-list made public: the only change a local engine without an image
    registry needs by hand."""
    config = task / "task.toml"
    config.write_text(_AGENT_ALLOWLIST.sub(r'\1network_mode = "public"\n', config.read_text()))
    assert tomllib.loads(config.read_text())["agent"]["network_mode"] == "public"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory, engine: dict[str, str]) -> Path:
    root = tmp_path_factory.mktemp("containers")
    (root / "sample").mkdir()
    sample = build_sample_repository(root / "sample")
    python = author_collected(root, sample, PYTHON_TASK)
    node = build(node_project(NODE_TASK), root / "node")
    archive = root / "run.tar.gz"
    export_run(
        [python, node],
        run=RunInfo("run-1", "https://example.com/acme/slugkit.git", COMMIT),
        out=archive,
    )
    out = root / "tasks"
    base = engine["SELFBENCH_BASE_IMAGE"]
    extract = ["extract", str(archive), "--out", str(out), "--base-image", base]
    assert main([*extract, "--build-secrets"]) == 0
    for task in (PYTHON_TASK, NODE_TASK):
        public_agent_network(out / task)
    return out


def harbor_run(tasks: Path, agent: str, env: dict[str, str], jobs: Path) -> dict[str, Any]:
    """`harbor run` of every task with `agent` on Podman; each task's verifier reward."""
    harbor = harbor_venv() / "bin" / "harbor"
    command = [str(harbor), "run", "--path", str(tasks), "--agent", agent, "--env", "podman"]
    # --no-delete keeps the images (not the containers): the next run and the next session
    # reuse them, and the images test reads them
    command += ["--n-concurrent", _TRIALS_AT_ONCE, "--jobs-dir", str(jobs), "--no-delete", "--yes"]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=_SECONDS
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    rewards: dict[str, Any] = {}
    for path in sorted(jobs.glob("*/*/verifier/reward.json")):
        task = path.parents[1].name.split("__")[0]
        rewards[task] = json.loads(path.read_text())
    assert sorted(rewards) == sorted((NODE_TASK, PYTHON_TASK)), result.stdout[-4000:]
    return rewards


def podman(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(["podman", *args], env=env, capture_output=True, text=True, check=True)
    return result.stdout


@pytest.fixture(scope="module")
def rewards(
    tasks: Path, engine: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """Each agent's rewards per task: oracle, then nop (which reuses oracle's images)."""
    jobs = tmp_path_factory.mktemp("jobs")
    return {agent: harbor_run(tasks, agent, engine, jobs / agent) for agent in ("oracle", "nop")}


def test_oracle_earns_1_and_nop_0(rewards: dict[str, dict[str, Any]]) -> None:
    oracle = {task: reward["reward"] for task, reward in rewards["oracle"].items()}
    assert oracle == {PYTHON_TASK: 1, NODE_TASK: 1}, rewards["oracle"]
    for task, reward in rewards["nop"].items():
        assert (reward["reward"], reward["fail_to_pass"], reward["pass_to_pass"]) == (0, 0, 1), task


def test_the_images_keep_neither_the_host_ca_nor_its_proxies(
    rewards: dict[str, dict[str, Any]], engine: dict[str, str]
) -> None:
    names = podman(engine, "images", "--format", "{{.Repository}}:{{.Tag}}").split()
    built = [name for name in names if _TRIAL_IMAGE.search(name)]
    assert len(built) >= 4, names  # each task's agent and verifier images, tagged per trial
    host_ca = Path(os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt")
    host_digest = hashlib.sha256(host_ca.read_bytes()).hexdigest()
    for image in built:
        described = podman(engine, "history", "--no-trunc", image)
        described += podman(engine, "image", "inspect", image)
        assert _NO_PROXY_MARK not in described, image
        assert "BEGIN CERTIFICATE" not in described, image
        probe = "test ! -e /run/secrets/host-ca && sha256sum /etc/ssl/certs/ca-certificates.crt"
        inside = podman(
            engine, "run", "--rm", "--network", "none", "--user", "root", image, "sh", "-c", probe
        )
        assert inside.split()[0] != host_digest, image


def selfbench_eval(
    tasks: Path, results: Path, env: dict[str, str], *options: str
) -> dict[tuple[str, str], tuple[int | None, bool, str | None]]:
    """`selfbench eval` of oracle and nop on every task, as a user runs it: each trial's reward,
    verdict and classification by task and agent, read back from its results."""
    command = [sys.executable, "-m", "selfbench", "eval", str(tasks), "--agent", "oracle"]
    command += ["--agent", "nop", "--results", str(results), "-j", _TRIALS_AT_ONCE, *options]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=_SECONDS
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    trials = read_results(results).trials.values()
    return {(t.task, t.agent): (t.reward, t.passed, t.classification) for t in trials}


def test_eval_through_harbor_equals_the_local_sandbox(
    tasks: Path,
    engine: dict[str, str],
    rewards: dict[str, dict[str, Any]],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`selfbench eval --env harbor --harbor-env podman` gives each task and agent the reward
    and verdict the local sandbox gives on the same export (after `rewards`' Harbor runs, so on
    their cached layers)."""
    results = tmp_path_factory.mktemp("eval")
    local = selfbench_eval(tasks, results / "local", engine, "--env", "local")
    harbor = str(harbor_venv() / "bin" / "harbor")
    options = ("--env", "harbor", "--harbor-env", "podman", "--harbor", harbor)
    through_harbor = selfbench_eval(tasks, results / "harbor", engine, *options)
    expected = {
        (task, agent): (1, True, None) if agent == "oracle" else (0, False, "agent")
        for task in (PYTHON_TASK, NODE_TASK)
        for agent in ("oracle", "nop")
    }
    assert local == expected, local
    assert through_harbor == local
