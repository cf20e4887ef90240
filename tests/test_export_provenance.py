"""A run's export carries its provenance in `manifest.json`; verify, extract, review and the
clean export accept it, and an export without one is byte for byte what it was."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from export_helpers import COMMIT, author_collected
from selfbench.artifacts.provenance import ProvenanceTask, RunProvenance, ToolchainUse
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.errors import ArchiveError
from selfbench.export import RunInfo, export_run, extract_export, verify_export, write_clean_export
from selfbench.export.manifest import parse_manifest
from selfbench.review.data import load_review

RUN = RunInfo("run-7", "https://example.com/acme/slugkit.git", COMMIT)
PROVENANCE = RunProvenance(
    version="0.0.0",
    author="claude",
    reviewer=None,
    environment="local",
    toolchains=(ToolchainUse("uv", None, "0.13.8"),),
    budgets=(("easy", 1), ("medium", 2), ("hard", 0)),
    tasks=tuple(
        ProvenanceTask(task_id, candidate, tier, ("mined", "accepted"))
        for task_id, candidate, tier in (
            ("slug-a", "pr-1", "medium"),
            ("slug-b", "pr-2", "medium"),
            ("slug-gone", "pr-3", "easy"),
        )
    ),
)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> list[Path]:
    root = tmp_path_factory.mktemp("collected")
    return [author_collected(root, sample, "slug-a"), author_collected(root, sample, "slug-b")]


def _manifest_json(export: Path) -> dict[str, Any]:
    with tarfile.open(export) as archive:
        member = archive.extractfile("manifest.json")
        assert member is not None
        return dict(json.loads(member.read()))


def test_provenance_goes_last_cut_to_the_exported_tasks_and_verifies(
    tmp_path: Path, collected: list[Path]
) -> None:
    out = tmp_path / "run.tar.gz"
    export_run(collected, run=RUN, out=out, provenance=PROVENANCE)

    raw = _manifest_json(out)
    assert list(raw)[-1] == "provenance"
    assert raw["provenance"] == {
        "selfbench": "0.0.0",
        "author": "claude",
        "reviewer": None,
        "validation": {
            "environment": "local",
            "toolchains": [{"name": "uv", "wanted": None, "found": "0.13.8"}],
        },
        "budgets": {"easy": 1, "medium": 2, "hard": 0},
        "tasks": {
            "slug-a": {"candidate": "pr-1", "tier": "medium", "stages": ["mined", "accepted"]},
            "slug-b": {"candidate": "pr-2", "tier": "medium", "stages": ["mined", "accepted"]},
        },
    }
    keys = ["selfbench", "author", "reviewer", "validation", "budgets", "tasks"]
    assert list(raw["provenance"]) == keys
    manifest = verify_export(out).manifest
    assert manifest.provenance == raw["provenance"]
    review = load_review(out)
    try:
        summary = json.loads(json.dumps(review.summary()))  # as the page gets it
        assert summary["manifest"]["provenance"]["author"] == "claude"
    finally:
        review.close()
    extracted = extract_export(out, out=tmp_path / "tasks")
    assert extracted is not None
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == ["slug-a", "slug-b"]


def test_a_clean_export_keeps_the_provenance_of_the_kept_tasks(
    tmp_path: Path, collected: list[Path]
) -> None:
    out, clean = tmp_path / "run.tar.gz", tmp_path / "clean.tar.gz"
    export_run(collected, run=RUN, out=out, provenance=PROVENANCE)
    manifest = write_clean_export(out, clean, drop=frozenset({"slug-b"}))

    assert manifest.provenance is not None
    tasks = manifest.provenance["tasks"]
    assert isinstance(tasks, dict)
    assert sorted(tasks) == ["slug-a"]
    assert verify_export(clean).manifest == manifest


def test_an_export_without_provenance_has_no_such_key(
    tmp_path: Path, collected: list[Path]
) -> None:
    out = tmp_path / "run.tar.gz"
    export_run(collected, run=RUN, out=out)
    assert "provenance" not in _manifest_json(out)
    assert verify_export(out).manifest.provenance is None


@pytest.mark.parametrize("value", ["draft", [], {"tasks": []}])
def test_a_provenance_that_is_not_an_object_of_tasks_is_refused(value: Any) -> None:
    manifest = {
        "schemaVersion": 1,
        "runId": "r",
        "candidateCounts": {"easy": 0, "medium": 0, "hard": 0},
        "repository": {"url": "u", "commit": COMMIT},
        "version": "v",
        "acceptedCount": 0,
        "tasks": [],
        "provenance": value,
    }
    with pytest.raises(ArchiveError) as caught:
        parse_manifest(json.dumps(manifest).encode())
    assert str(caught.value) == (
        "manifest.json: provenance must be an object whose tasks is an object"
    )
