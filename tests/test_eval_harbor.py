"""Harbor agents in `selfbench eval`, against the real Harbor (its own venv) and its job layout.

As in tests/test_validate_harbor.py, `harbor run` is the real one (CLI, Job, Trial, its `oracle`
and `nop` agents, result writing) with a host directory standing in for the container. Each
task is an extracted benchmark task (bundle, manifest and review record) whose `test.sh` writes
a chosen reward.json; "broken-build" never starts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from harbor_env import harbor_venv, run_in_harbor_venv
from helpers import definition
from selfbench.bundle import BundleManifest, render_bundle_manifest
from selfbench.bundle.layout import CONTAINER_AGENT_PATCH
from selfbench.cli import main
from selfbench.contract import definition_sha256, parse_definition
from selfbench.evaluate import EvalError, Usage, build_summary, read_results
from selfbench.evaluate.harbor_trials import harbor_usage, read_harbor_agents
from test_validate_harbor import FAKE_ENV, FAKE_ENVIRONMENT, NOP_OK, ORACLE_OK, reward_script

pytestmark = pytest.mark.harbor

CASES = {"alpha": "easy", "beta": "medium", "broken-build": "easy"}


SOLVE = 'touch "$FAKE_ROOT/app/solved"\n'
"""What `solve.sh` does: the verifier's reward is the oracle's once it did."""


def write_task(
    tasks: Path,
    task_id: str,
    difficulty: str,
    *,
    solve: str = SOLVE,
    verify: str = "",
    verifier_seconds: float = 60.0,
    artifacts: tuple[str, ...] = (),
) -> None:
    """An extracted task: `tasks/<task_id>/` with its manifest and review record; `solve.sh`
    runs `solve`, `test.sh` runs `verify` before it writes its reward, under Harbor's verifier
    time limit `verifier_seconds`; Harbor collects `artifacts` after the agent."""
    bundle = tasks / task_id
    for directory in ("environment", "tests", "solution"):
        (bundle / directory).mkdir(parents=True)
    (bundle / "task.toml").write_text(
        f'schema_version = "1.4"\nartifacts = {json.dumps(list(artifacts))}\n'
        f'[task]\nname = "selfbench/{task_id}"\n'
        f"[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = {verifier_seconds}\n"
    )
    (bundle / "instruction.md").write_text("Make it work.\n")
    (bundle / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\n")
    if task_id == "broken-build":
        (bundle / "environment" / "fail-build").write_text("")
    (bundle / "solution" / "solve.sh").write_text(f"#!/bin/bash\n{solve}")
    (bundle / "tests" / "test.sh").write_text(
        f'#!/bin/bash\nmkdir -p "$FAKE_ROOT/logs/verifier"\n{verify}'
        f'if [ -f "$FAKE_ROOT/app/solved" ]; then\n{reward_script(ORACLE_OK)}\n'
        f"else\n{reward_script(NOP_OK)}\nfi\n"
    )
    value = definition(taskId=task_id, difficulty=difficulty)
    digest = definition_sha256(parse_definition(value).definition)
    patches = {"tests/test.patch": b"", "solution/gold.patch": b""}  # checked by their digests
    for name, content in patches.items():
        (bundle / name).write_bytes(content)
    test_digest, gold_digest = (hashlib.sha256(content).hexdigest() for content in patches.values())
    manifest = BundleManifest(task_id, difficulty, digest, test_digest, gold_digest, "d" * 64)  # type: ignore[arg-type]
    (bundle / ".selfbench-manifest.json").write_bytes(render_bundle_manifest(manifest))
    review = {"definition": value, "validation": None, "audit": {}}
    (bundle / ".selfbench-review.json").write_text(json.dumps(review))


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One `selfbench eval --env harbor` of Harbor's oracle and nop plus a named Harbor agent."""
    root = tmp_path_factory.mktemp("eval-harbor")
    (root / "python").mkdir()
    (root / "python" / "selfbench_fake_env.py").write_text(FAKE_ENVIRONMENT)
    (root / "fake-roots").mkdir()
    for task_id, difficulty in CASES.items():
        write_task(root / "tasks", task_id, difficulty)
    harbor = str(harbor_venv() / "bin" / "harbor")
    argv = ["eval", str(root / "tasks"), "--env", "harbor", "--harbor", harbor, "--results",
            str(root / "results"), "--harbor-env", FAKE_ENV, "-j", "3", "--agent", "oracle",
            "--agent", "nop", "--agent", "solver=harbor:oracle:none/model"]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(root / "python"))
        patch.setenv("FAKE_ROOTS", str(root / "fake-roots"))
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        assert main(argv) == 0
    return root, {"log": read_results(root / "results")}


def test_harbor_trials_are_read_from_the_job_directories(
    evaluated: tuple[Path, dict[str, Any]],
) -> None:
    log = evaluated[1]["log"]
    verdicts = {
        (r.agent, r.task): (r.passed, r.classification, r.environment, r.attempts)
        for r in log.trials.values()
    }
    assert verdicts == {
        ("oracle", "alpha"): (True, None, "harbor", 1),
        ("oracle", "beta"): (True, None, "harbor", 1),
        ("oracle", "broken-build"): (False, "infrastructure", "harbor", 2),
        ("nop", "alpha"): (False, "agent", "harbor", 1),
        ("nop", "beta"): (False, "agent", "harbor", 1),
        ("nop", "broken-build"): (False, "infrastructure", "harbor", 2),
        ("solver", "alpha"): (True, None, "harbor", 1),
        ("solver", "beta"): (True, None, "harbor", 1),
        ("solver", "broken-build"): (False, "infrastructure", "harbor", 2),
    }
    broken = next(r for r in log.trials.values() if r.task == "broken-build")
    assert broken.reason is not None
    assert broken.reason.startswith("harbor trial ")
    assert "RuntimeError: image build failed: fake-build-error" in broken.reason
    solver = next(r for r in log.trials.values() if r.agent == "solver" and r.task == "alpha")
    assert solver.agent_seconds is not None
    assert solver.verifier_seconds is not None  # Harbor's `verifier` phase
    assert solver.log.endswith("verifier/test-stdout.txt")


def test_the_report_counts_harbor_trials_like_local_ones(
    evaluated: tuple[Path, dict[str, Any]],
) -> None:
    summary = build_summary(evaluated[1]["log"])
    rates = {
        agent.name: (agent.passes, agent.counted, agent.infrastructure) for agent in summary.agents
    }
    assert rates == {"oracle": (2, 2, 1), "nop": (0, 2, 1), "solver": (2, 2, 1)}
    assert {check.task for check in evaluated[1]["log"].rechecks.values()} == {"alpha", "beta"}


def test_one_harbor_job_per_agent_and_trial_and_one_retry(
    evaluated: tuple[Path, dict[str, Any]],
) -> None:
    root = evaluated[0]
    jobs = sorted(path.name.rsplit("-", 1)[0] for path in (root / "results" / "jobs").iterdir())
    assert jobs == sorted(
        ["nop-t1", "nop-t1-retry", "oracle-t1", "oracle-t1-retry", "solver-t1", "solver-t1-retry"]
    )


def test_token_and_cost_counts_are_read_from_harbors_own_agent_context(
    evaluated: tuple[Path, dict[str, Any]],
) -> None:
    """The counts Harbor's `AgentContext` records (its model, serialised by Harbor itself);
    the oracle's real trial records none."""
    script = (
        "from harbor.models.agent.context import AgentContext as C; "
        "print(C(n_input_tokens=1200, n_cache_tokens=800, n_output_tokens=300, cost_usd=0.042)"
        ".model_dump_json())"
    )
    done = run_in_harbor_venv("python", "-c", script)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)
    assert harbor_usage({"agent_result": context}) == Usage(1500, 0.042)
    assert harbor_usage({"agent_result": {**context, "cost_usd": None}}) == Usage(1500, None)
    assert harbor_usage({"agent_result": None}) == Usage()
    results = sorted((evaluated[0] / "results" / "jobs").glob("solver-t1-*/job/*/result.json"))
    assert len(results) == 4  # alpha, beta, broken-build and its retry
    assert {harbor_usage(json.loads(path.read_text())) for path in results} == {Usage()}
    records = [r for r in evaluated[1]["log"].trials.values() if r.agent == "solver"]
    assert {(r.tokens, r.cost_usd) for r in records} == {(None, None)}


SONNET = "anthropic/claude-sonnet-4-5"


def _known_agents() -> list[str]:
    """The names of the real Harbor's `AgentName` enum (its own package, in its venv)."""
    script = (
        "import json; from harbor.models.agent.name import AgentName as A; "
        "print(json.dumps(sorted(A.values())))"
    )
    done = run_in_harbor_venv("python", "-c", script)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_the_agents_harbor_lists_are_its_own_agent_names() -> None:
    listed = read_harbor_agents(str(harbor_venv() / "bin" / "harbor"))
    assert {"claude-code", "codex", "mini-swe-agent", "oracle", "nop"} <= listed
    assert listed <= set(_known_agents())


def test_a_misspelled_harbor_agent_is_refused_naming_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_task(tmp_path / "tasks", "alpha", "easy")
    harbor = str(harbor_venv() / "bin" / "harbor")
    argv = ["eval", str(tmp_path / "tasks"), "--env", "harbor", "--harbor", harbor, "--results",
            str(tmp_path / "results"), "--agent", "harbor:claude-cod", "--model",
            SONNET]  # fmt: skip
    assert main(argv) == 2
    known = ", ".join(sorted(read_harbor_agents(harbor)))
    assert capsys.readouterr().err == (
        f"error: agent claude-cod: harbor has no agent 'claude-cod' (known: {known})\n"
    )
    assert not (tmp_path / "results").exists()  # refused before any trial


def test_harbor_agents_by_name_build_the_harbor_run_command_line(tmp_path: Path) -> None:
    """The real Harbor lists its agents; `harbor run` itself (which needs Docker) is recorded by
    a wrapper in front of it and fails, so the trials are the infrastructure's."""
    write_task(tmp_path / "tasks", "alpha", "easy")
    recorded = tmp_path / "argv.txt"
    wrapper = tmp_path / "harbor"
    wrapper.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = agent ]; then exec {harbor_venv() / "bin" / "harbor"} "$@"; fi\n'
        f"printf '%s\\n' \"$@\" -- >> {recorded}\nexit 3\n"
    )
    wrapper.chmod(0o755)
    results = tmp_path / "results"
    argv = ["eval", str(tmp_path / "tasks"), "--env", "harbor", "--harbor", str(wrapper),
            "--results", str(results), "--agent", "harbor:claude-code", "--agent",
            "gpt=harbor:codex:openai/gpt-5", "--model", SONNET]  # fmt: skip
    assert main(argv) == 1  # every trial failed on the infrastructure: nothing was measured
    runs = [run.strip("\n").split("\n") for run in recorded.read_text().split("--\n") if run]
    jobs = results / "jobs"
    for run in runs:
        assert run[0] == "run"
        assert run[1] == f"--path={jobs.resolve()}/{run[5].split('/')[-1]}/tasks"
        assert run[5].startswith(f"--jobs-dir={jobs.resolve()}/")
    chosen = [(run[2], run[3], run[5].split("/")[-1].rsplit("-", 1)[0]) for run in runs]
    assert chosen == [
        ("--agent=claude-code", f"--model={SONNET}", "claude-code-t1"),
        ("--agent=claude-code", f"--model={SONNET}", "claude-code-t1-retry"),
        ("--agent=codex", "--model=openai/gpt-5", "gpt-t1"),
        ("--agent=codex", "--model=openai/gpt-5", "gpt-t1-retry"),
    ]
    assert {tuple(run[4:5] + run[6:]) for run in runs} == {
        ("--env=docker", "--job-name=job", "--n-concurrent=1", "--n-attempts=1",
         "--max-retries=0", "--yes", "--quiet"),
    }  # fmt: skip
    records = read_results(results).trials.values()
    assert {(r.agent, r.classification) for r in records} == {
        ("claude-code", "infrastructure"), ("gpt", "infrastructure"),
    }  # fmt: skip


def test_a_harbor_that_lists_no_agents_is_refused(tmp_path: Path) -> None:
    silent = tmp_path / "harbor"
    silent.write_text("#!/bin/bash\necho 'No such command agent' >&2\nexit 2\n")
    silent.chmod(0o755)
    with pytest.raises(EvalError) as error:
        read_harbor_agents(str(silent))
    assert str(error.value) == "cannot list harbor's agents (exit 2): No such command agent"
    with pytest.raises(EvalError) as error:
        read_harbor_agents(str(tmp_path / "missing"))
    assert str(error.value).startswith("cannot list harbor's agents: ")


SUSPECT_PATCH = """diff --git a/calc/core.py b/calc/core.py
index 1111111..2222222 100644
--- a/calc/core.py
+++ b/calc/core.py
@@ -1 +1,2 @@
 import os
+os._exit(0)
"""


FILE_AWARE = """

class FileAwareEnvironment(HostDirEnvironment):
    \"\"\"Answers Harbor's `test -d` for an existing file as a container does: no directory.\"\"\"

    async def is_dir(self, path, user=None):
        return not self._host(path).is_file()
"""


def test_the_patch_harbor_collects_is_scanned_and_its_reward_stands(tmp_path: Path) -> None:
    """Harbor collects the agent's patch as the task's artifact (here what `solve.sh` wrote);
    the trial is marked suspect and keeps the reward its verifier wrote."""
    root = tmp_path
    (root / "python").mkdir()
    (root / "python" / "selfbench_fake_env.py").write_text(FAKE_ENVIRONMENT + FILE_AWARE)
    (root / "fake-roots").mkdir()
    solve = (
        'mkdir -p "$FAKE_ROOT/opt/selfbench"\n'
        f"cat > \"$FAKE_ROOT{CONTAINER_AGENT_PATCH}\" <<'END'\n{SUSPECT_PATCH}END\n{SOLVE}"
    )
    write_task(root / "tasks", "gamma", "easy", solve=solve, artifacts=(CONTAINER_AGENT_PATCH,))
    harbor = str(harbor_venv() / "bin" / "harbor")
    argv = ["eval", str(root / "tasks"), "--env", "harbor", "--harbor", harbor, "--results",
            str(root / "results"), "--harbor-env", "selfbench_fake_env:FileAwareEnvironment",
            "--agent", "oracle"]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(root / "python"))
        patch.setenv("FAKE_ROOTS", str(root / "fake-roots"))
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        assert main(argv) == 0
    [trial] = read_results(root / "results").trials.values()
    assert (trial.passed, trial.reward) == (True, 1)
    assert [finding.mark for finding in trial.suspect] == ["calc/core.py:2 process-exit"]
