"""Harbor trials that give no verdict after the agent ran are attributed (issue 25), against the
real Harbor (its own venv) and its job layout.

The stand-in environment is the Harbor tests' own (a host directory plays the container), with
its scripts run as subprocesses Harbor's own timeouts cancel, as a container's `exec` is, and the
trial's model in `$FAKE_MODEL`. So Harbor's `oracle` agent with the model `hang/model` plays an
agent whose work hangs the tests that import it, while Harbor's oracle itself (no model), run as
the proof, does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harbor_env import harbor_venv
from selfbench.cli import main
from selfbench.evaluate import build_summary, read_results
from selfbench.evaluate.agents import HarborAgent
from selfbench.evaluate.harbor_trials import _facts
from selfbench.evaluate.results import ResultsLog, TrialRecord
from selfbench.validate.harbor import HarborTrial
from test_eval_harbor import SOLVE, write_task
from test_validate_harbor import FAKE_ENVIRONMENT

pytestmark = pytest.mark.harbor

TIMED_ENVIRONMENT = '''
"""The host-directory stand-in with its scripts run as subprocesses that Harbor's timeouts
cancel (killed with their session), and the trial's model in $FAKE_MODEL."""
import asyncio, json, os, signal
from harbor.environments.base import ExecResult
from selfbench_fake_env import SCRIPT, HostDirEnvironment

class TimedHostDirEnvironment(HostDirEnvironment):
    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None):
        match = SCRIPT.match(command.strip())
        if match is None:
            return ExecResult(stdout="", stderr="", return_code=0)
        config = json.loads(self.trial_paths.config_path.read_text())
        model = (config.get("agent") or {}).get("model_name") or ""
        process = await asyncio.create_subprocess_exec(
            "bash", str(self._host(match.group(1))),
            env={"FAKE_ROOT": str(self._root), "FAKE_MODEL": model, "PATH": "/usr/bin:/bin"},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = await process.communicate()
        except asyncio.CancelledError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            raise
        text = out.decode(errors="replace")
        if match.group(2):
            self._host(match.group(2)).parent.mkdir(parents=True, exist_ok=True)
            self._host(match.group(2)).write_text(text)
        return ExecResult(stdout=text, stderr="", return_code=process.returncode)
'''
TIMED_ENV = "selfbench_timed_env:TimedHostDirEnvironment"

HANGS = 'if [ -f "$FAKE_ROOT/app/hang" ]; then sleep 300; fi\n'
"""`test.sh`: the tests import the agent's module; a hanging one never returns."""
AGENT_HANGS = SOLVE + 'case "$FAKE_MODEL" in hang/*) touch "$FAKE_ROOT/app/hang" ;; esac\n'
"""`solve.sh`: the solution, and, for the agent with the model `hang/model`, a module that
hangs when the tests import it."""
CAUSE = "the tests timed out with the agent's code"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ResultsLog, int]:
    """One `selfbench eval --env harbor` of the hanging agent and `nop` on "hang" (the oracle
    passes) and "dead" (its verifier hangs whatever runs: the oracle fails too); its exit code."""
    root = tmp_path_factory.mktemp("eval-harbor-attribution")
    (root / "python").mkdir()
    (root / "python" / "selfbench_fake_env.py").write_text(FAKE_ENVIRONMENT)
    (root / "python" / "selfbench_timed_env.py").write_text(TIMED_ENVIRONMENT)
    (root / "fake-roots").mkdir()
    tasks = root / "tasks"
    write_task(tasks, "hang", "easy", solve=AGENT_HANGS, verify=HANGS, verifier_seconds=3.0)
    write_task(tasks, "dead", "easy", verify="sleep 300\n", verifier_seconds=3.0)
    harbor = str(harbor_venv() / "bin" / "harbor")
    argv = ["eval", str(tasks), "--env", "harbor", "--harbor", harbor, "--results",
            str(root / "results"), "--harbor-env", TIMED_ENV, "-j", "2", "--agent",
            "hanger=harbor:oracle:hang/model", "--agent", "nop"]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(root / "python"))
        patch.setenv("FAKE_ROOTS", str(root / "fake-roots"))
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        code = main(argv)
    return root, read_results(root / "results"), code


def _trial(log: ResultsLog, agent: str, task: str) -> TrialRecord:
    [found] = [r for r in log.trials.values() if r.agent == agent and r.task == task]
    return found


def test_an_agent_whose_code_hangs_the_verifier_fails_as_the_agent(
    evaluated: tuple[Path, ResultsLog, int],
) -> None:
    log = evaluated[1]
    record = _trial(log, "hanger", "hang")
    assert (record.passed, record.classification, record.attempts) == (False, "agent", 1)
    assert evaluated[2] == 0  # was 1: every trial of the agent failed on the infrastructure
    assert record.cause == CAUSE
    assert record.reason is not None
    assert record.reason.startswith(f"{CAUSE}: harbor trial ")
    assert "VerifierTimeoutError" in record.reason
    assert record.proof is not None
    assert record.proof.startswith("the oracle passed here with the same limits (log ")
    assert record.proof.endswith("verifier/test-stdout.txt)")
    assert "/hanger-t1-proof-" in record.proof
    assert record.reason.endswith(f"; {record.proof}")
    # the passing proof stands for the task's re-check, and no oracle job runs again for it
    assert [(c.task, c.passed) for c in log.rechecks.values()] == [("hang", True)]
    jobs = sorted(p.name.rsplit("-", 1)[0] for p in (evaluated[0] / "results" / "jobs").iterdir())
    assert "recheck" not in jobs


def test_when_the_oracle_fails_too_the_trial_is_the_infrastructures(
    evaluated: tuple[Path, ResultsLog, int],
) -> None:
    log = evaluated[1]
    record = _trial(log, "hanger", "dead")
    assert (record.passed, record.classification, record.attempts) == (False, "infrastructure", 2)
    assert record.proof is not None
    assert record.proof.startswith("the oracle failed too, here with the same limits: harbor ")
    assert "VerifierTimeoutError" in record.proof
    assert record.reason is not None
    assert record.reason.endswith(f"; {record.proof}")
    # Harbor's nop leaves no code of its own: no proof, the infrastructure's as before
    nop = _trial(log, "nop", "dead")
    assert (nop.classification, nop.proof, nop.attempts) == ("infrastructure", None, 2)
    assert (_trial(log, "nop", "hang").classification, _trial(log, "nop", "hang").proof) == (
        "agent",
        None,
    )
    agents = {a.name: a for a in build_summary(log).agents}
    assert (agents["hanger"].passes, agents["hanger"].counted, agents["hanger"].infrastructure) == (
        0,
        1,
        1,
    )
    # a failing proof is not kept: the retry ran the oracle again
    jobs = sorted(p.name.rsplit("-", 1)[0] for p in (evaluated[0] / "results" / "jobs").iterdir())
    assert jobs.count("hanger-t1-proof") == 1
    assert jobs.count("hanger-t1-retry-proof") == 1


RAN = {"started_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T00:00:01"}
NO_REWARD = HarborTrial("t", "t__abc", "oracle", None, "harbor trial t__abc failed: X: m", "log")
SOLVER = HarborAgent("solver", "oracle", "m/m")


@pytest.mark.parametrize(
    ("result", "agent", "expected"),
    [
        (  # the agent's own timeout: its failure, as before
            {"agent_execution": RAN, "exception_info": {"exception_type": "AgentTimeoutError"}},
            SOLVER,
            ("agent_error", None),
        ),
        (  # the type is read, never the message the agent's work may have written into
            {
                "agent_execution": RAN,
                "exception_info": {
                    "exception_type": "RewardFileNotFoundError",
                    "exception_message": "AgentTimeoutError",
                },
            },
            SOLVER,
            ("stopped", "the trial raised RewardFileNotFoundError after the agent ran"),
        ),
        (
            {"agent_execution": RAN, "exception_info": {"exception_type": "VerifierTimeoutError"}},
            SOLVER,
            ("stopped", CAUSE),
        ),
        (  # a type that is not a plain class name is not repeated
            {"agent_execution": RAN, "exception_info": {"exception_type": "X\x1b]0;t\x07"}},
            SOLVER,
            ("stopped", None),
        ),
        ({"agent_execution": RAN}, SOLVER, ("stopped", None)),
        (  # the agent never started: an image that does not build
            {"agent_execution": None, "exception_info": {"exception_type": "RuntimeError"}},
            SOLVER,
            ("infrastructure", None),
        ),
        (  # Harbor's nop leaves no work of its own
            {"agent_execution": RAN, "exception_info": {"exception_type": "VerifierTimeoutError"}},
            HarborAgent("nop", "nop"),
            ("infrastructure", None),
        ),
    ],
)
def test_what_a_trial_without_a_reward_observed(
    result: dict[str, object], agent: HarborAgent, expected: tuple[str, str | None]
) -> None:
    facts = _facts(NO_REWARD, result, agent)
    kinds = [k for k in ("agent_error", "stopped", "infrastructure") if getattr(facts, k)]
    assert (kinds, facts.cause) == ([expected[0]], expected[1])
    assert facts.proof is None
