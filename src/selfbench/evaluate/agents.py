"""The agents an evaluation compares: `--agent` specs, parsed, and the usage line they may print.

Grammar of one `--agent` value:

    oracle | nop                        the built-in baselines
    [NAME=]harbor:AGENT[:MODEL]         `harbor run --agent AGENT --model MODEL` (NAME: AGENT)
    HARNESS[:MODEL], NAME=HARNESS:MODEL a ready-made harness (`harnesses.HARNESSES`) on MODEL
    NAME=COMMAND                        any shell command, run as the agent user in the workspace

NAME is a task-id-like word (letters, digits, `.`, `_`, `-`); `oracle` and `nop` are reserved.
A MODEL left out is `--model`'s, the same for every agent that leaves it out (an agent's own
MODEL wins); `NAME=HARNESS` stays a command. Which AGENT names Harbor knows is asked of the
installed Harbor when the evaluation starts (`harbor_trials.read_harbor_agents`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from selfbench.errors import EvalError
from selfbench.evaluate.harnesses import HARNESSES
from selfbench.validate.harbor import HARBOR_NAME

__all__ = [
    "BUILTIN_AGENTS",
    "INSTRUCTION_ENV",
    "INSTRUCTION_FILE_ENV",
    "USAGE_PREFIX",
    "AgentSpec",
    "BuiltinAgent",
    "CommandAgent",
    "EvalError",
    "HarborAgent",
    "HarnessAgent",
    "Usage",
    "parse_agent_spec",
    "parse_agent_specs",
    "parse_usage",
]

BUILTIN_AGENTS = ("oracle", "nop")
INSTRUCTION_ENV = "SELFBENCH_INSTRUCTION"
"""The environment variable that holds the task's instruction (`instruction.md`)."""
INSTRUCTION_FILE_ENV = "SELFBENCH_INSTRUCTION_FILE"
"""The environment variable naming a read-only file with the same instruction."""
USAGE_PREFIX = "selfbench-usage:"
"""An agent may print `selfbench-usage: tokens=N cost_usd=X` (either field); the last one wins."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
_USAGE_FIELD = re.compile(r"(tokens|cost_usd)=([0-9]+(?:\.[0-9]+)?)")


@dataclass(frozen=True, slots=True)
class BuiltinAgent:
    """A built-in baseline: `oracle` (the task's solution) or `nop` (nothing)."""

    name: str
    kind: Literal["oracle", "nop"]

    def describe(self) -> str:
        """How the agent runs, in one line."""
        return f"built-in {self.kind}"


@dataclass(frozen=True, slots=True)
class CommandAgent:
    """`NAME=COMMAND`: a shell command, run as the agent user in the workspace."""

    name: str
    command: str
    kind: ClassVar[Literal["command"]] = "command"

    def describe(self) -> str:
        """How the agent runs, in one line."""
        return self.command


@dataclass(frozen=True, slots=True)
class HarborAgent:
    """`[NAME=]harbor:AGENT[:MODEL]`: one of Harbor's agents, `harbor run --agent AGENT`."""

    name: str
    agent: str
    """The agent's name as Harbor knows it."""
    model: str = ""
    """Its model ("": none given, as for Harbor's own `oracle` and `nop`)."""
    kind: ClassVar[Literal["harbor"]] = "harbor"

    def describe(self) -> str:
        """How the agent runs, in one line."""
        return f"harbor run --agent {self.agent} --model {self.model}"


@dataclass(frozen=True, slots=True)
class HarnessAgent:
    """`HARNESS[:MODEL]` or `NAME=HARNESS:MODEL`: a ready-made harness (`harnesses.HARNESSES`)."""

    name: str
    harness: str
    """The ready-made harness's name."""
    model: str
    """The model the harness asks for."""
    kind: ClassVar[Literal["harness"]] = "harness"

    def describe(self) -> str:
        """How the agent runs, in one line."""
        return f"{self.harness} --model {self.model}"


AgentSpec = BuiltinAgent | CommandAgent | HarborAgent | HarnessAgent
"""One agent of an evaluation; its `kind` names which (`oracle`, `nop`, `command`, `harbor`,
`harness`)."""


def parse_agent_spec(value: str, *, model: str | None = None) -> AgentSpec:
    """Parse one `--agent` value; `model` (`--model`) is the MODEL of a `HARNESS` or
    `harbor:AGENT` given without one.

    Raises:
        EvalError: no name, a name that is not a plain word, an empty command, a malformed
            `harbor:AGENT:MODEL`, or a harness or Harbor agent without a model.
    """
    if value in BUILTIN_AGENTS:
        return BuiltinAgent(value, "oracle" if value == "oracle" else "nop")
    if value in HARNESSES and model is not None:
        value = f"{value}:{model}"
    harness = _harness_spec(value)
    if harness is not None:
        return harness
    if value.startswith("harbor:"):
        return _harbor_spec(value, None, model=model)
    name, equals, command = value.partition("=")
    if not equals:
        raise EvalError(f"agent {value!r}: expected oracle, nop, NAME=COMMAND or NAME=harbor:…")
    if not _NAME.fullmatch(name):
        raise EvalError(f"agent {value!r}: the name must be letters, digits, '.', '_' or '-'")
    if name in BUILTIN_AGENTS:
        raise EvalError(f"agent {value!r}: {name} is a built-in agent's name")
    if not command.strip():
        raise EvalError(f"agent {name}: empty command")
    if command.startswith("harbor:"):
        return _harbor_spec(command, name, model=model)
    harness = _harness_spec(command, name=name)
    return harness or CommandAgent(name, command)


def _harbor_spec(command: str, name: str | None, *, model: str | None) -> HarborAgent:
    """`harbor:AGENT:MODEL`, or `harbor:AGENT` on `model`, as the agent `name` (None: AGENT).

    Raises:
        EvalError: no model, an AGENT or MODEL that is not one word, or an AGENT that cannot
            name the agent (a built-in's name, or not a plain word).
    """
    parts = command.split(":", 2)
    if len(parts) == 2 and model is not None:
        parts.append(model)
    if len(parts) != 3 or not all(HARBOR_NAME.fullmatch(part) for part in parts[1:]):
        raise EvalError(
            f"agent {name or repr(command)}: expected harbor:AGENT:MODEL, not {command!r}"
        )
    if name is None and (parts[1] in BUILTIN_AGENTS or not _NAME.fullmatch(parts[1])):
        raise EvalError(f"agent {command!r}: {parts[1]} cannot name it: give NAME={command}")
    return HarborAgent(name or parts[1], parts[1], parts[2])


def _harness_spec(value: str, *, name: str | None = None) -> HarnessAgent | None:
    """`HARNESS:MODEL` for a ready-made harness (named `name`, else the harness's name); None
    when `value` does not start with a known harness's name and a colon.

    Raises:
        EvalError: a model that is not one word.
    """
    harness, colon, model = value.partition(":")
    if not colon or harness not in HARNESSES:
        return None
    if not _MODEL.fullmatch(model):
        raise EvalError(f"agent {value!r}: expected {harness}:MODEL with a one-word MODEL")
    return HarnessAgent(name or harness, harness, model)


def parse_agent_specs(values: Sequence[str], *, model: str | None = None) -> tuple[AgentSpec, ...]:
    """Parse every `--agent`, each `HARNESS` or `harbor:AGENT` without a model on `model`
    (`--model`), refusing two agents with one name.

    Raises:
        EvalError: a bad spec, no agent, a name given twice, or a `model` no agent takes.
    """
    if not values:
        raise EvalError("no agent: give --agent at least once")
    specs = tuple(parse_agent_spec(value, model=model) for value in values)
    if model is not None and not any(_takes_model(value) for value in values):
        raise EvalError(
            f"--model {model}: no agent takes it (give HARNESS or harbor:AGENT without a model)"
        )
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise EvalError(f"two agents are named {spec.name}")
        seen.add(spec.name)
    return specs


def _takes_model(value: str) -> bool:
    """Whether an `--agent` value leaves its model to `--model`."""
    command = value.partition("=")[2] if "=" in value else value
    if command.startswith("harbor:"):
        return command.count(":") == 1
    return "=" not in value and value in HARNESSES


@dataclass(frozen=True, slots=True)
class Usage:
    """Token and cost counts an agent reported (None: not reported)."""

    tokens: int | None = None
    cost_usd: float | None = None


def parse_usage(output: str) -> Usage:
    """The last `selfbench-usage:` line of an agent's output, read leniently (unknown ignored)."""
    tokens: int | None = None
    cost: float | None = None
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped.startswith(USAGE_PREFIX):
            continue
        found = dict(_USAGE_FIELD.findall(stripped[len(USAGE_PREFIX) :]))
        if "tokens" in found and found["tokens"].isdigit():
            tokens = int(found["tokens"])
        if "cost_usd" in found:
            cost = float(found["cost_usd"])
    return Usage(tokens, cost)
