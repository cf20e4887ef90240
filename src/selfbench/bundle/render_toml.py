"""`task.toml`, Harbor task schema 1.4 (SPEC §5). Pure; every string is escaped by tomli_w."""

from __future__ import annotations

import tomllib

import tomli_w

from selfbench._json import JsonObject
from selfbench.bundle import layout
from selfbench.bundle.render_scripts import collect_command
from selfbench.contract import TaskDefinition

__all__ = [
    "BUILD_TIMEOUT_EXTRA",
    "COLLECT_TIMEOUT_CAP",
    "parse_allowed_hosts",
    "parse_collect_command",
    "render_task_toml",
    "task_config",
]

COLLECT_TIMEOUT_CAP = 300
"""`[[verifier.collect]] timeout_sec` is min(testsSeconds, this)."""
BUILD_TIMEOUT_EXTRA = 600
"""`build_timeout_sec` is setupSeconds plus this."""


def _cpus(value: float) -> int | float:
    """Whole CPU counts as integers (`4`, not `4.0`), fractions as they are."""
    return int(value) if value.is_integer() else value


def _environment(definition: TaskDefinition) -> JsonObject:
    return {
        "network_mode": "public",
        "build_timeout_sec": float(definition.timeouts.setupSeconds + BUILD_TIMEOUT_EXTRA),
        "cpus": _cpus(definition.resources.cpus),
        "memory_mb": definition.resources.memoryMb,
        "storage_mb": definition.resources.storageMb,
    }


def _task(definition: TaskDefinition) -> JsonObject:
    task_id = definition.taskId
    return {
        "name": f"selfbench/{task_id}",
        "version": "1.0.0",
        "description": f"Reproduce {task_id} from its authentic engineer request.",
        "keywords": ["software-engineering", "private-swe", "selfbench", definition.difficulty],
    }


def _metadata(definition: TaskDefinition) -> JsonObject:
    return {
        "selfbench_task_id": definition.taskId,
        "difficulty": definition.difficulty,
        "repo": definition.repo,
        "base_commit": definition.baseCommit,
        "workdir": definition.workdir,
        "source_pr": definition.sourcePr,
        "compiler_revision": layout.COMPILER_REVISION,
    }


def _verifier(definition: TaskDefinition) -> JsonObject:
    timeouts = definition.timeouts
    collect: JsonObject = {
        "service": "main",
        "user": "root",
        "timeout_sec": float(min(timeouts.testsSeconds, COLLECT_TIMEOUT_CAP)),
        "command": collect_command(),
    }
    return {
        "timeout_sec": float(timeouts.setupSeconds + timeouts.testsSeconds),
        "user": "root",
        "environment_mode": "separate",
        "network_mode": "public",
        "collect": [collect],
        "environment": _environment(definition),
    }


def task_config(definition: TaskDefinition, allowed_hosts: tuple[str, ...]) -> JsonObject:
    """The task.toml document as a plain value, keys in the order they are written."""
    return {
        "schema_version": layout.HARBOR_SCHEMA_VERSION,
        "artifacts": [layout.CONTAINER_AGENT_PATCH],
        "task": _task(definition),
        "metadata": _metadata(definition),
        "agent": {
            "timeout_sec": float(definition.timeouts.agentSeconds),
            "user": layout.AGENT_USER,
            "network_mode": "allowlist",
            "allowed_hosts": list(allowed_hosts),
        },
        "verifier": _verifier(definition),
        "environment": _environment(definition),
    }


def render_task_toml(definition: TaskDefinition, allowed_hosts: tuple[str, ...]) -> str:
    """`task.toml`: the Harbor configuration of the task."""
    return tomli_w.dumps(task_config(definition, allowed_hosts))


def parse_allowed_hosts(data: bytes) -> tuple[str, ...] | None:
    """The `[agent] allowed_hosts` of `task.toml` bytes; None unless a list of strings."""
    try:
        hosts = tomllib.loads(data.decode("utf-8"))["agent"]["allowed_hosts"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return None
    if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
        return None
    return tuple(hosts)


def parse_collect_command(data: bytes) -> str | None:
    """The first `[[verifier.collect]] command` of `task.toml` bytes; None unless a string."""
    try:
        command = tomllib.loads(data.decode("utf-8"))["verifier"]["collect"][0]["command"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, LookupError, TypeError):
        return None
    return command if isinstance(command, str) else None
