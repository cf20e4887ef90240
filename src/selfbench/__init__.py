"""selfbench: turn merged pull requests into proven benchmark tasks for coding agents.

The public API is re-exported here. Names load on first use, so `selfbench audit` on a large
patch does not pay for the compiler, and `import selfbench` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from selfbench.errors import (
    DefinitionError,
    Issue,
    PatchError,
    PreflightError,
    SelfbenchError,
    SubmitError,
)

if TYPE_CHECKING:
    from selfbench.audit import AuditReport, audit
    from selfbench.collect import collect_authoring
    from selfbench.compiler import CompileError, compile_task, refresh_bundle
    from selfbench.contract import (
        TaskDefinition,
        check_definition,
        parse_definition,
        read_definition,
        submission_json_schema,
    )
    from selfbench.patches import FileChange, Patch, parse_patch
    from selfbench.store import ArtifactRef, LocalArtifactStore
    from selfbench.submit import submit_files, submit_task

__version__ = "0.1.0"

_LAZY = {
    "ArtifactRef": "selfbench.store",
    "AuditReport": "selfbench.audit",
    "CompileError": "selfbench.compiler",
    "FileChange": "selfbench.patches",
    "LocalArtifactStore": "selfbench.store",
    "Patch": "selfbench.patches",
    "TaskDefinition": "selfbench.contract",
    "audit": "selfbench.audit",
    "check_definition": "selfbench.contract",
    "collect_authoring": "selfbench.collect",
    "compile_task": "selfbench.compiler",
    "parse_definition": "selfbench.contract",
    "parse_patch": "selfbench.patches",
    "read_definition": "selfbench.contract",
    "refresh_bundle": "selfbench.compiler",
    "submission_json_schema": "selfbench.contract",
    "submit_files": "selfbench.submit",
    "submit_task": "selfbench.submit",
}

__all__ = [
    "ArtifactRef",
    "AuditReport",
    "CompileError",
    "DefinitionError",
    "FileChange",
    "Issue",
    "LocalArtifactStore",
    "Patch",
    "PatchError",
    "PreflightError",
    "SelfbenchError",
    "SubmitError",
    "TaskDefinition",
    "__version__",
    "audit",
    "check_definition",
    "collect_authoring",
    "compile_task",
    "parse_definition",
    "parse_patch",
    "read_definition",
    "refresh_bundle",
    "submission_json_schema",
    "submit_files",
    "submit_task",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfbench' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
