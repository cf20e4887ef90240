"""Run exports (SPEC §8): write, verify, extract, and write a clean copy for review."""

from __future__ import annotations

from selfbench.export.extract import extract_export
from selfbench.export.guide import VerifiedRunExport, export_and_verify, next_steps
from selfbench.export.manifest import Manifest, TaskEntry
from selfbench.export.reader import (
    REVIEW_FILE,
    Limits,
    VerifiedExport,
    read_export,
    verify_export,
)
from selfbench.export.signature import sign_export, signature_path, verify_signature
from selfbench.export.writer import (
    ExportResult,
    LeftOut,
    RunInfo,
    export_run,
    write_clean_export,
)

__all__ = [
    "REVIEW_FILE",
    "ExportResult",
    "LeftOut",
    "Limits",
    "Manifest",
    "RunInfo",
    "TaskEntry",
    "VerifiedExport",
    "VerifiedRunExport",
    "export_and_verify",
    "export_run",
    "extract_export",
    "next_steps",
    "read_export",
    "sign_export",
    "signature_path",
    "verify_export",
    "verify_signature",
    "write_clean_export",
]
