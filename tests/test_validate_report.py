"""The verdict rule of SPEC §7 (`parity_reason`) and `reward.json` parsing, one row per reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from selfbench.artifacts.report import (
    REWARD_FIELDS,
    Reward,
    RewardError,
    parity_reason,
    read_reward,
)

NOP = {"reward": 0, "fail_to_pass": 0, "deterministic": 0, "fail_to_pass_exit_code": 1}


def reward(**fields: int) -> Reward:
    """A reward.json with every flag 1 and every exit code 0, then `fields`."""
    values: dict[str, Any] = dict.fromkeys(REWARD_FIELDS, 1)
    values |= {name: 0 for name in REWARD_FIELDS if name.endswith("_exit_code")}
    return Reward.model_validate(values | fields)


@pytest.mark.parametrize(
    ("nop", "oracle", "reason"),
    [
        (reward(**NOP), reward(), None),
        (None, reward(), "nop: the verifier wrote no reward.json"),
        (reward(**NOP, patch_applied=0), reward(),
         "nop: the collected (empty) patch did not apply"),
        (reward(**NOP, setup_completed=0), reward(),
         "nop: the held-out tests could not be prepared (test.patch does not apply)"),
        (reward(), reward(), "nop: fail-to-pass passed without the solution"),
        (reward(**NOP, pass_to_pass=0), reward(), "nop: pass-to-pass failed without the solution"),
        (reward(**NOP, pass_to_pass=0), reward(reward=0, pass_to_pass=0),
         ("nop and oracle: pass-to-pass failed without the solution and with the gold patch "
          "(the tests fail here whatever the change: see either log)")),
        # an oracle that never reached its tests says nothing of pass-to-pass
        (reward(**NOP, pass_to_pass=0), reward(reward=0, patch_applied=0, pass_to_pass=0),
         "nop: pass-to-pass failed without the solution"),
        (reward(**NOP, pass_to_pass=0), reward(reward=0, setup_completed=0, pass_to_pass=0),
         "nop: pass-to-pass failed without the solution"),
        (reward(**NOP), None, "oracle: the verifier wrote no reward.json"),
        (reward(**NOP), reward(reward=0, patch_applied=0), "oracle: the gold patch did not apply"),
        (reward(**NOP), reward(reward=0, setup_completed=0),
         "oracle: the held-out tests could not be prepared"),
        (reward(**NOP), reward(reward=0, fail_to_pass=0, deterministic=0),
         "oracle: fail-to-pass failed with the gold patch"),
        (reward(**NOP), reward(reward=0, deterministic=0),
         "oracle: fail-to-pass failed on the repeat run (not deterministic)"),
        (reward(**NOP), reward(reward=0, pass_to_pass=0),
         "oracle: pass-to-pass failed with the gold patch"),
        (reward(**NOP), reward(reward=0), "oracle: reward 0"),
    ],
)  # fmt: skip
def test_the_verdict(nop: Reward | None, oracle: Reward | None, reason: str | None) -> None:
    assert parity_reason(nop, oracle) == reason


def test_a_reward_json_round_trips() -> None:
    data = json.dumps(reward().model_dump()).encode()
    assert read_reward(data, "r.json") == reward()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "r.json: not a selfbench reward.json: invalid JSON: "),
        (b"[]", "r.json: not a selfbench reward.json: (root): "),
        (json.dumps(reward().model_dump() | {"reward": 2}).encode(),
         "r.json: not a selfbench reward.json: reward: "),
        (json.dumps(reward().model_dump() | {"extra": 1}).encode(),
         "r.json: not a selfbench reward.json: extra: "),
    ],
    ids=["not-json", "not-an-object", "reward-2", "unknown-field"],
)  # fmt: skip
def test_a_bad_reward_json_is_one_line_naming_the_file(data: bytes, message: str) -> None:
    with pytest.raises(RewardError) as caught:
        read_reward(data, "r.json")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
