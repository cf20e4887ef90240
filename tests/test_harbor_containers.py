"""The real Harbor runs an exported Python task and a Node task in Podman containers: oracle earns
1 on each, nop 0; the images keep neither the host's CA bundle nor its proxy settings; and
`selfbench eval --env harbor --harbor-env podman` scores each task and agent as the local sandbox
does on the same export.

Runs in the whole suite (`./scripts/test.sh`, so in CI), first of all (`conftest.py`) so that it
overlaps the rest; `SELFBENCH_CONTAINERS=0` turns it off, and `./scripts/test.sh --quick` leaves
it out (marker `harbor`). `scripts/base-image.sh` installs Podman and builds the local base image
once per machine (cached after); the test is skipped with the script's reason when no container
can start here. Harbor runs with the `podman` environment through podman-compose, on a private
image store (`.cache/containers`).

The export is extracted as a user without registry access would: `selfbench extract
--base-image` (the Debian base built offline) `--build-secrets` (the host's CA and proxies reach
the build, not the image); the toolchain layers fetch from the package registries. One change
is made by hand: the agent's network allow-list becomes public, because Harbor enforces an
allow-list with a sidecar whose images (pinned by digest) come from an image registry.

Harbor's trials run once: the `harbor run` jobs that `selfbench eval --env harbor` launches are
read twice, through `eval`'s results (compared with the local sandbox's) and through Harbor's
own `reward.json` files in their job directories (oracle 1, nop 0).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
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

pytestmark = [
    pytest.mark.harbor,
    pytest.mark.sandbox,  # the local sandbox's evaluation, compared with Harbor's
    pytest.mark.network,  # the image builds fetch the toolchains from the package registries
    pytest.mark.skipif(
        os.environ.get("SELFBENCH_CONTAINERS") == "0",
        reason="SELFBENCH_CONTAINERS=0: Harbor's runs in Podman containers turned off",
    ),
]

PYTHON_TASK, NODE_TASK = "slug-a", "node-reverse"
_NO_ENGINE = 3
_SECONDS = 900
_TRIALS_AT_ONCE = "2"
"""Both tasks' trials at once: most of a trial's time is spent waiting on the engine."""
_NO_PROXY_MARK = "selfbench-proxy-mark.invalid"
"""A `NO_PROXY` entry handed to the builds (harmless), looked for in the images afterwards."""
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


def podman(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(["podman", *args], env=env, capture_output=True, text=True, check=True)
    return result.stdout


Verdicts = dict[tuple[str, str], tuple[int | None, bool, str | None]]
"""Each trial's reward, verdict and classification by task and agent."""


def selfbench_eval(tasks: Path, results: Path, env: dict[str, str], *options: str) -> Verdicts:
    """`selfbench eval` of oracle and nop on every task, as a user runs it, read back from its
    results."""
    command = [sys.executable, "-m", "selfbench", "eval", str(tasks), "--agent", "oracle"]
    command += ["--agent", "nop", "--results", str(results), "-j", _TRIALS_AT_ONCE, *options]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=_SECONDS
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    trials = read_results(results).trials.values()
    return {(t.task, t.agent): (t.reward, t.passed, t.classification) for t in trials}


def harbor_keeping_images(directory: Path) -> Path:
    """The real `harbor`, each run with `--no-delete`, as the `--harbor` that eval launches: the
    images stay (not the containers), so the nop job builds on the oracle job's layers, the
    images test reads them, and the next session reuses them."""
    script = directory / "harbor"
    harbor = shlex.quote(str(harbor_venv() / "bin" / "harbor"))
    script.write_text(f'#!/bin/sh\nexec {harbor} "$@" --no-delete\n')
    script.chmod(0o755)
    return script


@dataclass(frozen=True)
class Evaluations:
    """The same export evaluated in the local sandbox and through Harbor."""

    local: Verdicts
    harbor: Verdicts
    jobs: Path
    """Where eval's `harbor run` jobs are: `<agent>-t1-<hex>/job/<trial>/`, Harbor's own files."""


@pytest.fixture(scope="module")
def evaluations(
    tasks: Path, engine: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Evaluations:
    """`selfbench eval` through Harbor in Podman (`--harbor-env podman`), then in the local
    sandbox, on the same export."""
    results = tmp_path_factory.mktemp("eval")
    harbor = harbor_keeping_images(tmp_path_factory.mktemp("bin"))
    options = ("--env", "harbor", "--harbor-env", "podman", "--harbor", str(harbor))
    through_harbor = selfbench_eval(tasks, results / "harbor", engine, *options)
    local = selfbench_eval(tasks, results / "local", engine, "--env", "local")
    return Evaluations(local, through_harbor, results / "harbor" / "jobs")


def harbor_job(evaluations: Evaluations, agent: str) -> Path:
    """The one `harbor run` job eval ran for `agent` (a retry or a proof would be another)."""
    jobs = sorted(path.name for path in evaluations.jobs.iterdir())
    assert [name.rsplit("-", 1)[0] for name in jobs] == ["nop-t1", "oracle-t1"], jobs
    [name] = [name for name in jobs if name.startswith(f"{agent}-")]
    return evaluations.jobs / name / "job"


def harbor_rewards(evaluations: Evaluations, agent: str) -> dict[str, Any]:
    """Each task's `reward.json`, as Harbor's verifier wrote it in `agent`'s job."""
    rewards: dict[str, Any] = {}
    for path in sorted(harbor_job(evaluations, agent).glob("*/verifier/reward.json")):
        task = path.parents[1].name.split("__")[0]
        rewards[task] = json.loads(path.read_text())
    assert sorted(rewards) == sorted((NODE_TASK, PYTHON_TASK)), rewards
    return rewards


def check_oracle_earns_1_and_nop_0(evaluations: Evaluations) -> None:
    """Harbor's own verdicts, as its verifier wrote them."""
    oracle = harbor_rewards(evaluations, "oracle")
    assert {task: reward["reward"] for task, reward in oracle.items()} == {
        PYTHON_TASK: 1,
        NODE_TASK: 1,
    }, oracle
    for task, reward in harbor_rewards(evaluations, "nop").items():
        assert (reward["reward"], reward["fail_to_pass"], reward["pass_to_pass"]) == (0, 0, 1), task


def check_the_images_keep_neither_the_host_ca_nor_its_proxies(
    evaluations: Evaluations, engine: dict[str, str]
) -> None:
    """Every image this run's trials started from (each trial's agent and verifier image)."""
    trials = [
        path.name.lower()
        for agent in ("oracle", "nop")
        for path in harbor_job(evaluations, agent).iterdir()
        if path.is_dir()
    ]
    assert len(trials) == 4, trials
    names = set(podman(engine, "images", "--format", "{{.Repository}}:{{.Tag}}").split())
    built = [
        f"localhost/{trial}__{kind}_main:latest"
        for trial in trials
        for kind in ("env", "verifier__trial")
    ]
    assert set(built) <= names, sorted(names)
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


def check_eval_through_harbor_equals_the_local_sandbox(evaluations: Evaluations) -> None:
    """`selfbench eval --env harbor --harbor-env podman` gives each task and agent the reward
    and verdict the local sandbox gives on the same export."""
    expected = {
        (task, agent): (1, True, None) if agent == "oracle" else (0, False, "agent")
        for task in (PYTHON_TASK, NODE_TASK)
        for agent in ("oracle", "nop")
    }
    assert evaluations.local == expected, evaluations.local
    assert evaluations.harbor == evaluations.local


def test_harbor_runs_the_export_in_podman_and_grades_it_as_the_local_sandbox_does(
    evaluations: Evaluations, engine: dict[str, str]
) -> None:
    """One test rather than one per check: `--dist worksteal` may hand a module's later tests to
    the other worker, which would set the fixtures up again there and run every build and trial
    twice at once."""
    check_eval_through_harbor_equals_the_local_sandbox(evaluations)
    check_oracle_earns_1_and_nop_0(evaluations)
    check_the_images_keep_neither_the_host_ca_nor_its_proxies(evaluations, engine)
