"""Export, verify, and say what to do next: the last steps of a run, as the demo shows them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench.artifacts.provenance import RunProvenance
from selfbench.export.reader import VerifiedExport, verify_export
from selfbench.export.writer import ExportResult, RunInfo, export_run

__all__ = ["VerifiedRunExport", "export_and_verify", "next_steps"]


@dataclass(frozen=True, slots=True)
class VerifiedRunExport:
    """An export written and then verified from disk, with the commands that come next."""

    result: ExportResult
    verified: VerifiedExport
    next_steps: tuple[str, ...]


def next_steps(export: Path, *, tasks_dir: Path | None = None) -> tuple[str, ...]:
    """The commands that take an export to a review and to Harbor runs against models."""
    tasks = tasks_dir or export.with_name(export.name.removesuffix(".tar.gz") + "-tasks")
    clean = export.with_name(export.name.removesuffix(".tar.gz") + ".clean.tar.gz")
    return (
        f"selfbench review {export}    # read each task, drop any, write {clean.name}",
        f"selfbench verify {clean}",
        f"selfbench extract {clean} --out {tasks}",
        f"harbor run --path {tasks} --agent oracle    # the reference solutions score 1",
        f"harbor run --path {tasks} --agent codex --model openai/gpt-5 -n 4    # a model",
    )


def export_and_verify(
    inputs: Sequence[Path],
    *,
    run: RunInfo,
    out: Path,
    validation: Sequence[Path] | None = None,
    provenance: RunProvenance | None = None,
    quality: Mapping[str, Path] | None = None,
) -> VerifiedRunExport:
    """Export `inputs` to `out`, verify what was written, and list the next commands.

    Raises:
        ExportError: the export could not be written.
        ArchiveError: what was written does not verify (a bug, or the disk changed it).
        BundleError: an input is not a bundle with its definition, or a stale one.
    """
    result = export_run(
        inputs, run=run, out=out, validation=validation, provenance=provenance, quality=quality
    )
    verified = verify_export(result.path)
    return VerifiedRunExport(result, verified, next_steps(result.path))
