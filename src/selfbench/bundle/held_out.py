"""The held-out paths of a task: what the verifier protects from the agent's patch. Pure."""

from __future__ import annotations

from selfbench._paths import join_repository_path
from selfbench.contract import TaskDefinition
from selfbench.patches import Patch

__all__ = ["held_out_paths"]


def held_out_paths(definition: TaskDefinition, tests: Patch) -> tuple[str, ...]:
    """The protected paths: each testPath joined to workdir, then every path of the test patch."""
    joined = [join_repository_path(definition.workdir, path) for path in definition.testPaths]
    return tuple(dict.fromkeys([*joined, *tests.paths]))
