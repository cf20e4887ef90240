"""Builders for the run tests: the sample repository, a drafted task of it, and its candidate.

The draft directory is what drafting leaves for an author (`definition.json`, `test.patch`,
`gold.patch`, `draft.json`), built here by hand from the sample's merged pull request.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.mine.candidate import CandidateModel

__all__ = [
    "SCRIPTED_AUTHOR",
    "SCRIPTED_REVIEWER",
    "Sample",
    "candidate_for",
    "sample",
    "write_draft",
]

TESTS = Path(__file__).parent
SCRIPTED_AUTHOR = f"{sys.executable} {TESTS / 'scripted_author.py'}"
SCRIPTED_REVIEWER = f"{sys.executable} {TESTS / 'scripted_reviewer.py'}"


@dataclass(frozen=True, slots=True)
class Sample:
    """The sample repository, its drafted task and its candidate."""

    repo: SampleRepository
    draft: Path
    candidate: CandidateModel
    arguments: dict[str, Any]


def candidate_for(definition: dict[str, Any], head: str, **changes: Any) -> CandidateModel:
    """The mined candidate a definition was drafted from."""
    value: dict[str, Any] = {
        "id": f"pr-{definition['sourcePr']}",
        "kind": "squash",
        "repo": definition["repo"],
        "sourcePr": definition["sourcePr"],
        "sourceUrl": definition["sourceUrl"],
        "baseCommit": definition["baseCommit"],
        "completedCommit": head,
        "mergedAt": 1767225600,
        "title": "Transliterate accented text",
        "body": "",
        "author": "someone",
        "headBranch": None,
        "metadata": "git",
        "difficulty": definition["difficulty"],
        "eligibleTiers": [definition["difficulty"]],
        "score": 1,
        "scoreParts": {"tests": 1, "size": 0, "recency": 0},
        "testsChanged": True,
        "ecosystems": ["python"],
        "toolchains": ["python"],
        "totals": {},
        "files": [],
        "requests": [],
    }
    return CandidateModel.model_validate({**value, **changes})


def write_draft(directory: Path, arguments: dict[str, Any]) -> Path:
    """A drafted task directory holding `arguments`, with a `draft.json` sidecar."""
    directory.mkdir(parents=True)
    definition = arguments["definition"]
    (directory / "definition.json").write_text(json.dumps(definition, indent=2) + "\n")
    (directory / "test.patch").write_text(arguments["testPatch"], encoding="utf-8")
    (directory / "gold.patch").write_text(arguments["goldPatch"], encoding="utf-8")
    sidecar = {"draft": True, "failToPass": definition["failToPass"]}
    (directory / "draft.json").write_text(json.dumps(sidecar) + "\n")
    return directory


def sample(tmp_path: Path, **changes: Any) -> Sample:
    """The sample repository under `tmp_path`, drafted, with definition fields changed."""
    repo = build_sample_repository(tmp_path)
    arguments: dict[str, Any] = json.loads(json.dumps(sample_arguments(repo)))  # as sent
    arguments["definition"].update(changes)
    draft = write_draft(tmp_path / "draft", arguments)
    return Sample(repo, draft, candidate_for(arguments["definition"], repo.head), arguments)
