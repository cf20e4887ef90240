"""The real Harbor runs one exported Python task in Podman containers: oracle earns 1, nop 0.

Opt-in with `SELFBENCH_CONTAINERS=1`: `scripts/base-image.sh` installs Podman and builds the
local images once per machine (a few minutes the first time, cached after); the test is skipped
with the script's reason when no container can start here. Harbor runs with the `podman`
environment through podman-compose, on a private image store (`.cache/containers`).

The bundle is adapted first, as a `--base-image` option of the export would have to: no image
registry is reachable, and the toolchain layers download from hosts other than the package
registries. So each Dockerfile starts from the local toolchain image and its toolchain layers
are dropped, and the agent's network allow-list becomes public (Harbor enforces an allow-list
with a sidecar image pulled from a registry). The verifier and its reward are Harbor's own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from export_helpers import COMMIT, author_collected
from harbor_env import REPO_ROOT, harbor_venv
from selfbench.bundle.render_docker import BASE_IMAGE
from selfbench.cli import main
from selfbench.demo import build_sample_repository
from selfbench.export import RunInfo, export_run

pytestmark = pytest.mark.skipif(
    os.environ.get("SELFBENCH_CONTAINERS") != "1",
    reason="set SELFBENCH_CONTAINERS=1 to run Harbor in Podman containers (builds local images)",
)

TASK = "slug-a"
_NO_ENGINE = 3
_SECONDS = 600
_TOOLCHAIN_LAYERS = re.compile(r"# toolchain: .*?(?=# the toolchains are root's)", re.DOTALL)
_AGENT_ALLOWLIST = re.compile(
    r'(\[agent\][^\[]*?)network_mode = "allowlist"\nallowed_hosts = \[[^\]]*\]\n'
)


@pytest.fixture(scope="module")
def engine() -> dict[str, str]:
    """The environment podman and harbor run with, once the local images are built."""
    script = REPO_ROOT / "scripts" / "base-image.sh"
    result = subprocess.run([str(script)], capture_output=True, text=True, check=False)
    if result.returncode == _NO_ENGINE:
        pytest.skip(result.stderr.strip().splitlines()[-1])
    assert result.returncode == 0, result.stderr[-4000:]
    values = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    env = {**os.environ, **values, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["PATH"] = f"{values['PODMAN_COMPOSE_BIN']}{os.pathsep}{env.get('PATH', '')}"
    return env


def adapt(task: Path, image: str) -> None:
    """Start both Dockerfiles from `image` without toolchain layers; make the agent's network
    public."""
    for dockerfile in (task / "environment" / "Dockerfile", task / "tests" / "Dockerfile"):
        text = dockerfile.read_text().replace(f"FROM {BASE_IMAGE}", f"FROM {image}", 1)
        dockerfile.write_text(_TOOLCHAIN_LAYERS.sub("", text))
    config = task / "task.toml"
    config.write_text(_AGENT_ALLOWLIST.sub(r'\1network_mode = "public"\n', config.read_text()))
    assert tomllib.loads(config.read_text())["agent"]["network_mode"] == "public"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory, engine: dict[str, str]) -> Path:
    root = tmp_path_factory.mktemp("containers")
    (root / "sample").mkdir()
    sample = build_sample_repository(root / "sample")
    collected = author_collected(root, sample, TASK)
    archive = root / "run.tar.gz"
    export_run(
        [collected],
        run=RunInfo("run-1", "https://example.com/acme/slugkit.git", COMMIT),
        out=archive,
    )
    out = root / "tasks"
    assert main(["extract", str(archive), "--out", str(out)]) == 0
    adapt(out / TASK, engine["SELFBENCH_TOOLCHAINS_IMAGE"])
    return out


def harbor_run(tasks: Path, agent: str, env: dict[str, str], jobs: Path) -> dict[str, Any]:
    """`harbor run` of every task with `agent` on Podman; the one trial's verifier rewards."""
    harbor = harbor_venv() / "bin" / "harbor"
    command = [str(harbor), "run", "--path", str(tasks), "--agent", agent, "--env", "podman"]
    command += ["--n-concurrent", "1", "--jobs-dir", str(jobs), "--yes"]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=_SECONDS
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    rewards = sorted(jobs.glob("*/*/verifier/reward.json"))
    assert len(rewards) == 1, f"{agent}: no single reward under {jobs}\n{result.stdout[-4000:]}"
    loaded: dict[str, Any] = json.loads(rewards[0].read_text())
    return loaded


def test_oracle_earns_1_and_nop_0(tasks: Path, engine: dict[str, str], tmp_path: Path) -> None:
    oracle = harbor_run(tasks, "oracle", engine, tmp_path / "oracle")
    assert oracle["reward"] == 1, oracle
    nop = harbor_run(tasks, "nop", engine, tmp_path / "nop")
    assert nop["reward"] == 0, nop
    assert nop["fail_to_pass"] == 0, nop
    assert nop["pass_to_pass"] == 1, nop
