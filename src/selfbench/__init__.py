"""selfbench: turn merged pull requests into proven benchmark tasks for coding agents.

The public API is re-exported here. Names load on first use, so `selfbench audit` on a large
patch does not pay for the compiler, and `import selfbench` stays cheap.
"""

from __future__ import annotations

from importlib import import_module

from selfbench.errors import (
    ArchiveError,
    BundleError,
    CompileError,
    DefinitionError,
    ExportError,
    GitError,
    InputError,
    Issue,
    JsonError,
    PackError,
    PatchError,
    PreflightError,
    SelfbenchError,
    StoreError,
    SubmitError,
    SwebenchError,
    TaskFileError,
    ValidateError,
)

TYPE_CHECKING = False  # typing is not loaded at run time: see `selfbench.errors`
if TYPE_CHECKING:
    from typing import Any

    from selfbench.artifacts.report import TaskReport
    from selfbench.artifacts.task_dir import read_definition
    from selfbench.audit import AuditReport, audit
    from selfbench.collect import collect_authoring
    from selfbench.compiler import compile_task, refresh_bundle
    from selfbench.contract import (
        TaskDefinition,
        check_definition,
        parse_definition,
        submission_json_schema,
    )
    from selfbench.export import (
        RunInfo,
        export_run,
        extract_export,
        verify_export,
        write_clean_export,
    )
    from selfbench.patches import FileChange, Patch, parse_patch
    from selfbench.repair import RepairVerdict, check_coupling_repair, check_validation_repair
    from selfbench.review import open_review
    from selfbench.rules import is_test_only_path
    from selfbench.store import ArtifactRef, LocalArtifactStore
    from selfbench.submit import check_task, submit_files, submit_task
    from selfbench.swebench import export_swebench, import_swebench
    from selfbench.validate import (
        HarborOptions,
        HarborRunner,
        LocalOptions,
        LocalRunner,
        Runner,
        validate_bundles,
    )

__version__ = "0.1.0"

_LAZY = {
    "ArtifactRef": "selfbench.store",
    "AuditReport": "selfbench.audit",
    "FileChange": "selfbench.patches",
    "HarborOptions": "selfbench.validate",
    "HarborRunner": "selfbench.validate",
    "LocalOptions": "selfbench.validate",
    "LocalRunner": "selfbench.validate",
    "LocalArtifactStore": "selfbench.store",
    "Patch": "selfbench.patches",
    "RepairVerdict": "selfbench.repair",
    "RunInfo": "selfbench.export",
    "Runner": "selfbench.validate",
    "TaskDefinition": "selfbench.contract",
    "TaskReport": "selfbench.artifacts.report",
    "audit": "selfbench.audit",
    "check_coupling_repair": "selfbench.repair",
    "check_definition": "selfbench.contract",
    "check_task": "selfbench.submit",
    "check_validation_repair": "selfbench.repair",
    "collect_authoring": "selfbench.collect",
    "compile_task": "selfbench.compiler",
    "export_run": "selfbench.export",
    "export_swebench": "selfbench.swebench",
    "extract_export": "selfbench.export",
    "import_swebench": "selfbench.swebench",
    "is_test_only_path": "selfbench.rules",
    "open_review": "selfbench.review",
    "parse_definition": "selfbench.contract",
    "parse_patch": "selfbench.patches",
    "read_definition": "selfbench.artifacts.task_dir",
    "refresh_bundle": "selfbench.compiler",
    "submission_json_schema": "selfbench.contract",
    "submit_files": "selfbench.submit",
    "submit_task": "selfbench.submit",
    "validate_bundles": "selfbench.validate",
    "verify_export": "selfbench.export",
    "write_clean_export": "selfbench.export",
}

__all__ = [
    "ArchiveError",
    "ArtifactRef",
    "AuditReport",
    "BundleError",
    "CompileError",
    "DefinitionError",
    "ExportError",
    "FileChange",
    "GitError",
    "HarborOptions",
    "HarborRunner",
    "InputError",
    "Issue",
    "JsonError",
    "LocalArtifactStore",
    "LocalOptions",
    "LocalRunner",
    "PackError",
    "Patch",
    "PatchError",
    "PreflightError",
    "RepairVerdict",
    "RunInfo",
    "Runner",
    "SelfbenchError",
    "StoreError",
    "SubmitError",
    "SwebenchError",
    "TaskDefinition",
    "TaskFileError",
    "TaskReport",
    "ValidateError",
    "__version__",
    "audit",
    "check_coupling_repair",
    "check_definition",
    "check_task",
    "check_validation_repair",
    "collect_authoring",
    "compile_task",
    "export_run",
    "export_swebench",
    "extract_export",
    "import_swebench",
    "is_test_only_path",
    "open_review",
    "parse_definition",
    "parse_patch",
    "read_definition",
    "refresh_bundle",
    "submission_json_schema",
    "submit_files",
    "submit_task",
    "validate_bundles",
    "verify_export",
    "write_clean_export",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfbench' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
