"""`--agent` specs, the usage line an agent may print, and the classification of a trial."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench.artifacts.report import Reward
from selfbench.evaluate import (
    AgentSpec,
    BuiltinAgent,
    CommandAgent,
    EvalError,
    HarborAgent,
    HarnessAgent,
    Recheck,
    TrialFacts,
    Usage,
    Verdict,
    classify,
    parse_agent_spec,
    parse_agent_specs,
    parse_usage,
    reclassify,
)
from selfbench.evaluate.classify import Proof
from selfbench.evaluate.results import Classification


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        ("oracle", BuiltinAgent("oracle", "oracle")),
        ("nop", BuiltinAgent("nop", "nop")),
        ("mine=./run.sh --fast", CommandAgent("mine", "./run.sh --fast")),
        ("a=b=c", CommandAgent("a", "b=c")),
        ("mine=harbor", CommandAgent("mine", "harbor")),
        ("mine=codex", CommandAgent("mine", "codex")),  # NAME=HARNESS stays a command
        (
            "cc=harbor:claude-code:anthropic/claude-sonnet-4",
            HarborAgent("cc", "claude-code", "anthropic/claude-sonnet-4"),
        ),
        ("harbor:codex:openai/gpt-5", HarborAgent("codex", "codex", "openai/gpt-5")),
        (
            "mini-swe-agent:openai/gpt-5",
            HarnessAgent("mini-swe-agent", "mini-swe-agent", "openai/gpt-5"),
        ),
        (
            "msa=mini-swe-agent:anthropic/claude-sonnet-4-5",
            HarnessAgent("msa", "mini-swe-agent", "anthropic/claude-sonnet-4-5"),
        ),
        ("x=other-agent:m", CommandAgent("x", "other-agent:m")),
    ],
)
def test_agent_specs(value: str, spec: AgentSpec) -> None:
    assert parse_agent_spec(value) == spec


@pytest.mark.parametrize(
    ("spec", "kind", "described"),
    [
        (BuiltinAgent("oracle", "oracle"), "oracle", "built-in oracle"),
        (BuiltinAgent("nop", "nop"), "nop", "built-in nop"),
        (CommandAgent("mine", "./run.sh --fast"), "command", "./run.sh --fast"),
        (
            HarborAgent("cc", "claude-code", "anthropic/claude-sonnet-4"),
            "harbor",
            "harbor run --agent claude-code --model anthropic/claude-sonnet-4",
        ),
        (HarborAgent("nop", "nop"), "harbor", "harbor run --agent nop --model "),
        (
            HarnessAgent("msa", "mini-swe-agent", "openai/gpt-5"),
            "harness",
            "mini-swe-agent --model openai/gpt-5",
        ),
    ],
)
def test_each_agent_kind_and_description(spec: AgentSpec, kind: str, described: str) -> None:
    assert (spec.kind, spec.describe()) == (kind, described)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("claude", "agent 'claude': expected oracle, nop, NAME=COMMAND or NAME=harbor:…"),
        ("=echo", "agent '=echo': the name must be letters, digits, '.', '_' or '-'"),
        ("a b=echo", "agent 'a b=echo': the name must be letters, digits, '.', '_' or '-'"),
        ("oracle=echo", "agent 'oracle=echo': oracle is a built-in agent's name"),
        ("x=  ", "agent x: empty command"),
        ("x=harbor:codex", "agent x: expected harbor:AGENT:MODEL, not 'harbor:codex'"),
        ("x=harbor:-a:m", "agent x: expected harbor:AGENT:MODEL, not 'harbor:-a:m'"),
        (
            "mini-swe-agent:two words",
            "agent 'mini-swe-agent:two words': expected mini-swe-agent:MODEL with a one-word MODEL",
        ),
    ],
)
def test_bad_agent_specs(value: str, message: str) -> None:
    with pytest.raises(EvalError) as error:
        parse_agent_spec(value)
    assert str(error.value) == message


def test_two_agents_with_one_name_are_refused() -> None:
    with pytest.raises(EvalError) as error:
        parse_agent_specs(["oracle", "a=true", "a=false"])
    assert str(error.value) == "two agents are named a"


SONNET = "anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("value", "model", "spec"),
    [
        (
            "harbor:claude-code",
            SONNET,
            HarborAgent("claude-code", "claude-code", SONNET),
        ),
        (
            "harbor:codex:openai/gpt-5",
            None,
            HarborAgent("codex", "codex", "openai/gpt-5"),
        ),
        (
            "cc=harbor:claude-code",
            SONNET,
            HarborAgent("cc", "claude-code", SONNET),
        ),
        (
            "codex",
            "openai/gpt-5",
            HarnessAgent("codex", "codex", "openai/gpt-5"),
        ),
        (
            "codex:openai/gpt-5-mini",
            "openai/gpt-5",
            HarnessAgent("codex", "codex", "openai/gpt-5-mini"),
        ),
        ("x=codex", "openai/gpt-5", CommandAgent("x", "codex")),
    ],
    ids=["harbor-model", "harbor-own-model", "named-harbor", "harness", "own-model", "command"],
)
def test_model_fills_in_the_agents_given_without_one(
    value: str, model: str | None, spec: AgentSpec
) -> None:
    assert parse_agent_spec(value, model=model) == spec


@pytest.mark.parametrize(
    ("value", "model", "message"),
    [
        (
            "harbor:codex",
            None,
            "agent 'harbor:codex': expected harbor:AGENT:MODEL, not 'harbor:codex'",
        ),
        ("harbor:", "m", "agent 'harbor:': expected harbor:AGENT:MODEL, not 'harbor:'"),
        (
            "harbor:oracle",
            "m",
            "agent 'harbor:oracle': oracle cannot name it: give NAME=harbor:oracle",
        ),
        ("harbor:a@b", "m", "agent 'harbor:a@b': a@b cannot name it: give NAME=harbor:a@b"),
        (
            "harbor:codex",
            "two words",
            "agent 'harbor:codex': expected harbor:AGENT:MODEL, not 'harbor:codex'",
        ),
    ],
)
def test_bad_harbor_agents_by_name(value: str, model: str | None, message: str) -> None:
    with pytest.raises(EvalError) as error:
        parse_agent_spec(value, model=model)
    assert str(error.value) == message


def test_one_model_for_several_agents_and_none_unused() -> None:
    specs = parse_agent_specs(["harbor:codex", "harbor:claude-code", "oracle"], model=SONNET)
    assert specs == (
        HarborAgent("codex", "codex", SONNET),
        HarborAgent("claude-code", "claude-code", SONNET),
        BuiltinAgent("oracle", "oracle"),
    )
    with pytest.raises(EvalError) as error:
        parse_agent_specs(["oracle", "harbor:codex:m", "codex:openai/x"], model=SONNET)
    assert str(error.value) == (
        f"--model {SONNET}: no agent takes it (give HARNESS or harbor:AGENT without a model)"
    )


def test_no_agent_is_refused() -> None:
    with pytest.raises(EvalError) as error:
        parse_agent_specs([])
    assert str(error.value) == "no agent: give --agent at least once"


@pytest.mark.parametrize(
    ("output", "usage"),
    [
        ("", Usage()),
        ("selfbench-usage: tokens=1200 cost_usd=0.031\n", Usage(1200, 0.031)),
        ("  selfbench-usage: cost_usd=2\n", Usage(None, 2.0)),
        ("selfbench-usage: tokens=5\nwork\nselfbench-usage: tokens=7\n", Usage(7, None)),
        ("said selfbench-usage: tokens=9\n", Usage()),
        ("selfbench-usage: tokens=-3 cost_usd=x\n", Usage()),
    ],
)
def test_usage_lines(output: str, usage: Usage) -> None:
    assert parse_usage(output) == usage


@given(st.text())
def test_usage_parsing_never_fails(output: str) -> None:
    usage = parse_usage(output)
    assert usage.tokens is None or usage.tokens >= 0


def _reward(**changes: int) -> Reward:
    fields = {
        "reward": 0, "patch_applied": 1, "fail_to_pass": 0, "pass_to_pass": 1,
        "deterministic": 0, "setup_completed": 1, "fail_to_pass_exit_code": 1,
        "fail_to_pass_repeat_exit_code": -1, "pass_to_pass_exit_code": 0,
    }  # fmt: skip
    return Reward.model_validate({**fields, **changes})


def _fail(classification: Classification, reason: str) -> Verdict:
    return Verdict(passed=False, classification=classification, reason=reason)


PASSED = _reward(reward=1, fail_to_pass=1, deterministic=1)
MEMORY = "the agent's workspace exceeded the task's memory in the collect step"


@pytest.mark.parametrize(
    ("facts", "verdict"),
    [
        (TrialFacts(PASSED), Verdict(passed=True, classification=None, reason=None)),
        (TrialFacts(PASSED, agent_exit=3), Verdict(passed=True, classification=None, reason=None)),
        (TrialFacts(_reward()), _fail("agent", "tests ran and failed: fail-to-pass")),
        (
            TrialFacts(_reward(pass_to_pass=0, fail_to_pass=1)),
            _fail("agent", "tests ran and failed: pass-to-pass (a regression)"),
        ),
        (
            TrialFacts(_reward(fail_to_pass=1, pass_to_pass=1)),
            _fail("agent", "tests ran and failed: fail-to-pass did not pass twice"),
        ),
        (
            TrialFacts(_reward(patch_applied=0), agent_exit=2),
            _fail("agent", "the agent crashed (exit 2); its patch did not apply"),
        ),
        (
            TrialFacts(_reward(), agent_exit=124, agent_seconds_limit=600.0),
            _fail("agent", "the agent timed out after 600 s"),
        ),
        (
            TrialFacts(_reward(), agent_exit=137, agent_seconds=600.4, agent_seconds_limit=600.0),
            _fail("agent", "the agent timed out after 600 s"),
        ),
        (
            TrialFacts(_reward(), agent_exit=137, agent_seconds=2.0, agent_seconds_limit=600.0),
            _fail("agent", "the agent crashed (exit 137); tests ran and failed: fail-to-pass"),
        ),
        (
            TrialFacts(_reward(setup_completed=0)),
            _fail("agent", "the held-out tests could not be prepared"),
        ),
        (
            TrialFacts(None, infrastructure="setup: setupCommand failed (exit 1)"),
            _fail("infrastructure", "setup: setupCommand failed (exit 1)"),
        ),
        (
            TrialFacts(PASSED, infrastructure="out of memory"),
            _fail("infrastructure", "out of memory"),
        ),
        (
            TrialFacts(None),
            _fail("infrastructure", "the verifier wrote no reward.json"),
        ),
        (
            TrialFacts(None, agent_error="the agent timed out (AgentTimeoutError)"),
            _fail("agent", "the agent timed out (AgentTimeoutError)"),
        ),
        # a phase with the agent's code gave no verdict: the oracle's proof decides
        (
            TrialFacts(
                _reward(patch_applied=0),
                stopped="collect failed",
                cause=MEMORY,
                proof=Proof(passed=True, detail="the oracle passed"),
            ),
            _fail("agent", f"{MEMORY}: collect failed; the oracle passed"),
        ),
        (
            TrialFacts(
                None,
                stopped="the verifier wrote no reward.json",
                proof=Proof(passed=True, detail="the oracle passed"),
            ),
            _fail("agent", "the verifier wrote no reward.json; the oracle passed"),
        ),
        (
            TrialFacts(
                None,
                stopped="collect failed",
                cause=MEMORY,
                proof=Proof(passed=False, detail="the oracle failed too: x"),
            ),
            _fail("infrastructure", "collect failed; the oracle failed too: x"),
        ),
        (
            TrialFacts(None, stopped="collect failed", cause=MEMORY),
            _fail("infrastructure", "collect failed"),
        ),
        # a limit struck, and the verifier still gave its verdict: named in the reason
        (
            TrialFacts(
                _reward(), cause="the tests exceeded the task's memory with the agent's code"
            ),
            _fail(
                "agent",
                "tests ran and failed: fail-to-pass (the tests exceeded the task's "
                "memory with the agent's code)",
            ),
        ),
    ],
)
def test_classification(facts: TrialFacts, verdict: Verdict) -> None:
    assert classify(facts) == verdict


def test_an_agent_failure_on_a_broken_task_is_the_tasks() -> None:
    failure = _fail("agent", "tests ran and failed: fail-to-pass")
    holds = Recheck("t", "d", passed=True, reason=None)
    broken = Recheck("t", "d", passed=False, reason="the oracle no longer passes: x")
    assert reclassify(failure, holds) == failure
    assert reclassify(failure, None) == failure
    assert reclassify(failure, broken) == _fail(
        "task",
        "the task is broken: the oracle no longer passes: x (was: tests ran and failed: "
        "fail-to-pass)",
    )
    infra = _fail("infrastructure", "setup")
    assert reclassify(infra, broken) == infra
