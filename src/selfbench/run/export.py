"""The run's export: the accepted bundles, their validation reports, their quality records
(what each one's quality stage recorded) and the run's provenance.

Everything that goes in is made independent of where the run directory is and of when each
stage ran, so a run killed and resumed exports the same bytes as one that never stopped: the
reports' log paths are made relative to the run directory, their toolchains keep only names and
versions, and the provenance holds names, versions and stage histories, never times or secrets
(commands are reduced to their program).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from selfbench import __version__
from selfbench._fs import read_bytes
from selfbench._json import JsonValue, loads_strict
from selfbench.artifacts.provenance import ProvenanceTask, RunProvenance, ToolchainUse
from selfbench.artifacts.task_dir import DEFINITION_FILE
from selfbench.artifacts.validation import VALIDATION_FILE, read_validation
from selfbench.contract import DIFFICULTIES
from selfbench.errors import RunError
from selfbench.export import RunInfo, export_and_verify
from selfbench.run import stages
from selfbench.run.state import CandidateState, Pool, RunDirectory

__all__ = ["EXPORT_DIR", "ExportOptions", "export_accepted", "provenance", "tried"]


class ExportOptions(Protocol):
    """What the export reads of a run's options (`run.driver.RunOptions`, which imports this
    module: the export names no options class of its own)."""

    @property
    def out(self) -> Path: ...
    @property
    def budgets(self) -> Mapping[str, int]: ...
    @property
    def author(self) -> str: ...
    @property
    def reviewer(self) -> str | None: ...
    @property
    def env(self) -> str: ...
    @property
    def harbor_env(self) -> str: ...


EXPORT_DIR = "export"
"""The folder in the run directory that holds what the export is built from (its validation
reports)."""


def _relative_logs(value: JsonValue, root: str) -> JsonValue:
    """The report with every string under the run directory made relative to it."""
    if isinstance(value, dict):
        return {key: _relative_logs(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [_relative_logs(item, root) for item in value]
    if isinstance(value, str) and value.startswith(root + "/"):
        return value[len(root) + 1 :]
    return value


def _home(run: RunDirectory, state: CandidateState) -> Path:
    if state.bundle_home is None:
        raise RunError(f"{run.state_path(state.id)}: an accepted candidate without a bundle")
    return run.resolve(state.bundle_home)


_TOOLCHAIN_KEYS = ("name", "wanted", "found", "substitution")
"""What an exported report says of each toolchain: its versions, not where this machine keeps
it or whether it was in the cache yet (which differs between a first run and a resumed one)."""


def _report(run: RunDirectory, state: CandidateState) -> dict[str, JsonValue]:
    path = _home(run, state) / VALIDATION_FILE
    found = _relative_logs(read_validation(path), str(run.path))
    if not isinstance(found, dict):
        raise RunError(f"{path}: not a validation report")
    report = dict(found)
    uses = report.get("toolchains")
    if isinstance(uses, list):
        kept: list[JsonValue] = [
            {key: use.get(key) for key in _TOOLCHAIN_KEYS} for use in uses if isinstance(use, dict)
        ]
        report["toolchains"] = kept
    return report


def _task_id(run: RunDirectory, state: CandidateState) -> str:
    path = _home(run, state) / DEFINITION_FILE
    task_id = loads_strict(read_bytes(path, error=RunError), source=str(path))["taskId"]
    return str(task_id)


def _toolchains(reports: list[dict[str, JsonValue]]) -> tuple[ToolchainUse, ...]:
    seen: dict[tuple[str, str], ToolchainUse] = {}
    for report in reports:
        uses = report.get("toolchains", [])
        for use in uses if isinstance(uses, list) else []:
            if not isinstance(use, dict):
                continue  # `_report` keeps only objects
            key = (str(use.get("name")), str(use.get("found")))
            seen[key] = ToolchainUse(use.get("name"), use.get("wanted"), use.get("found"))
    return tuple(seen[key] for key in sorted(seen))


def tried(states: tuple[CandidateState, ...]) -> tuple[int, int, int]:
    """The candidates tried per tier (easy, medium, hard): accepted or rejected."""
    easy, medium, hard = (
        sum(state.finished and state.tier == tier for state in states) for tier in DIFFICULTIES
    )
    return easy, medium, hard


def provenance(
    options: ExportOptions,
    accepted: list[CandidateState],
    task_ids: list[str],
    reports: list[dict[str, JsonValue]],
) -> RunProvenance:
    """How the export was built: the tool, author, reviewer, environment, per task its stages."""

    environment = options.env if options.env == "local" else f"harbor ({options.harbor_env})"
    return RunProvenance(
        version=__version__,
        author=stages.command_name(options.author),
        reviewer=stages.command_name(options.reviewer),
        environment=environment,
        toolchains=_toolchains(reports),
        budgets=tuple((tier, options.budgets.get(tier, 0)) for tier in DIFFICULTIES),
        tasks=tuple(
            ProvenanceTask(task_id, state.id, state.tier, tuple(state.history))
            for task_id, state in sorted(zip(task_ids, accepted, strict=True))
        ),
    )


def export_accepted(
    run: RunDirectory,
    options: ExportOptions,
    pool: Pool,
    run_id: str,
    states: tuple[CandidateState, ...],
) -> Path:
    """Export the accepted candidates' bundles to `options.out`, verified; return its path.

    Raises:
        ExportError: the export cannot be written.
        ArchiveError: what was written does not verify.
    """
    accepted = [state for state in states if state.status == "accepted"]
    reports = [_report(run, state) for state in accepted]
    task_ids = [_task_id(run, state) for state in accepted]
    folder = run.path / EXPORT_DIR
    reports_path = folder / VALIDATION_FILE
    run.write_json(reports_path, reports)
    homes = [_home(run, state) for state in accepted]
    quality = {
        task_id: run.resolve(state.quality)
        for task_id, state in zip(task_ids, accepted, strict=True)
        if state.quality is not None
    }
    info = RunInfo(
        run_id=run_id,
        repository_url=pool.repository,
        repository_commit=pool.head,
        candidate_counts=tried(states),
    )
    done = export_and_verify(
        homes,
        run=info,
        out=options.out.absolute(),
        validation=[reports_path],
        provenance=provenance(options, accepted, task_ids, reports),
        quality=quality,
    )
    return done.result.path
