"""The package root's public names are pinned: a change to them is a deliberate API change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import selfbench
from selfbench.demo import build_sample_repository, sample_arguments
from selfbench.submit import submit_task

EXPORTED = {
    "ArtifactRef", "AuditReport", "CompileError", "DefinitionError", "FileChange", "Issue",
    "LocalArtifactStore", "Patch", "PatchError", "PreflightError",
    "SelfbenchError", "SubmitError", "TaskDefinition", "__version__", "audit",
    "check_coupling_repair", "check_definition", "check_validation_repair", "collect_authoring",
    "compile_task", "is_test_only_path", "parse_definition", "parse_patch", "read_definition",
    "refresh_bundle", "submission_json_schema", "submit_files", "submit_task",
    "SwebenchError", "check_task", "export_swebench", "import_swebench",
    "ArchiveError", "ExportError", "RunInfo", "export_run", "extract_export", "open_review",
    "verify_export", "write_clean_export", "BundleError", "TaskReport", "validate_bundles",
    "Runner", "LocalRunner", "LocalOptions", "HarborRunner", "HarborOptions",
    # the whole error tree (errors.py), loaded with the package; a refused repair is a verdict
    "GitError", "InputError", "JsonError", "PackError", "StoreError", "TaskFileError",
    "ValidateError", "RepairVerdict",
}  # fmt: skip


def test_the_exported_names_are_pinned() -> None:
    assert set(selfbench.__all__) == EXPORTED


def test_every_exported_name_resolves() -> None:
    for name in selfbench.__all__:
        assert getattr(selfbench, name) is not None, name


def test_every_error_is_a_selfbench_error() -> None:
    errors = [getattr(selfbench, name) for name in selfbench.__all__ if name.endswith("Error")]
    assert all(issubclass(error, selfbench.SelfbenchError) for error in errors)


def test_importing_the_package_loads_no_heavy_module() -> None:
    probe = "import sys, selfbench; print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'rich', 'selfbench.'))))"  # noqa: E501
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "['selfbench.errors']"


AUDIT_MODULES = [
    "selfbench._fs", "selfbench._json", "selfbench._paths", "selfbench._runner_files",
    "selfbench._shell", "selfbench._text", "selfbench.artifacts", "selfbench.artifacts.task_dir",
    "selfbench.audit",
    "selfbench.bundle", "selfbench.bundle.held_out", "selfbench.cli",
    "selfbench.cli.common", "selfbench.cli.task", "selfbench.contract", "selfbench.errors",
    "selfbench.patches", "selfbench.rules", "selfbench.runners", "selfbench.runners._command",
    "selfbench.runners._index", "selfbench.task",
]  # fmt: skip


def test_audit_imports_only_what_it_needs(tmp_path: Path) -> None:
    sample = build_sample_repository(tmp_path)
    (tmp_path / "tasks").mkdir()
    submit_task(sample_arguments(sample), output_root=tmp_path / "tasks", preflight=False)
    task_dir = next((tmp_path / "tasks").iterdir())
    probe = (
        "import sys; from selfbench.cli import main; main(['audit', '--json', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith(('selfbench.', 'rich', 'mcp', "
        "'anyio', 'httpx', 'starlette', 'jsonschema'))), file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(task_dir)], capture_output=True, text=True, check=True
    )
    assert result.stderr.strip() == repr(AUDIT_MODULES)
