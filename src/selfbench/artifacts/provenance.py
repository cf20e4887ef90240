"""A run's provenance: how `selfbench run` built its export, as `manifest.json` carries it.

The run builds a `RunProvenance`; the export writes its `to_json` into the manifest, the one
place its keys are spelled, and cuts its `tasks` to the ones exported. A manifest read back
keeps the object as it found it (`selfbench.export.manifest`).
"""

from __future__ import annotations

from dataclasses import dataclass

from selfbench._json import JsonObject, JsonValue

__all__ = ["ProvenanceTask", "RunProvenance", "ToolchainUse"]


@dataclass(frozen=True, slots=True)
class ToolchainUse:
    """A toolchain the accepted tasks' validation used, as their reports name it: JSON values
    the reports hold (strings, or None where one says nothing)."""

    name: JsonValue
    wanted: JsonValue
    found: JsonValue


@dataclass(frozen=True, slots=True)
class ProvenanceTask:
    """An exported task: the candidate it came from, its tier, and the stages it went through."""

    task_id: str
    candidate: str
    tier: str
    stages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunProvenance:
    """How a run's export was built: the tool, author, reviewer, environment, per task its
    stages. Commands are reduced to their program; nothing holds a time or a secret."""

    version: str
    author: str | None
    reviewer: str | None
    environment: str
    toolchains: tuple[ToolchainUse, ...]
    budgets: tuple[tuple[str, int], ...]
    """Each tier's budget, in the tiers' order."""
    tasks: tuple[ProvenanceTask, ...]
    """In the order the manifest lists them (by taskId)."""

    def to_json(self) -> JsonObject:
        """The manifest's `provenance` object."""
        return {
            "selfbench": self.version,
            "author": self.author,
            "reviewer": self.reviewer,
            "validation": {
                "environment": self.environment,
                "toolchains": [
                    {"name": use.name, "wanted": use.wanted, "found": use.found}
                    for use in self.toolchains
                ],
            },
            "budgets": dict(self.budgets),
            "tasks": {
                task.task_id: {
                    "candidate": task.candidate,
                    "tier": task.tier,
                    "stages": list(task.stages),
                }
                for task in self.tasks
            },
        }
