"""The MCP tool `draft_task`: a candidate drafted by running its tests, for the author to finish.

Arguments: `candidate` (an id in the candidates file), `path` (a candidates.jsonl; default
`$SELFBENCH_CANDIDATES`), `repo` (the repository; default `$SELFBENCH_REPO`), `reruns`. A
model chooses `repo`, so it must be the server's repository (`$SELFBENCH_REPO`, `selfbench mcp
--repo`), or, when the server has none, a directory inside its working directory. The
result, when drafted, holds `arguments`: exactly what `check_task` and `submit_task` take
(`definition`, `testPatch`, `goldPatch`), with observed selectors and a draft instruction, and
`evidence` (the sidecar `draft.json`). The author rewrites `definition.prompt` and submits.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from selfbench._json import JsonObject
from selfbench.artifacts.draft_record import read_draft_record
from selfbench.artifacts.task_dir import read_task_files
from selfbench.draft.api import DraftOptions, draft_candidate
from selfbench.environments.local.ceilings import MAX_RERUNS
from selfbench.environments.local.phases import DEFAULT_RERUNS, MIN_RERUNS
from selfbench.errors import SelfbenchError
from selfbench.mine.candidate import find_candidate
from selfbench.mine.mcp_tool import CANDIDATES_ENV, TOOL_FILE_LIMIT

__all__ = [
    "DRAFT_TASK",
    "DRAFT_TASK_DESCRIPTION",
    "DRAFT_TASK_SCHEMA",
    "REPO_ENV",
    "draft_task",
    "draft_task_text",
]

DRAFT_TASK = "draft_task"
REPO_ENV = "SELFBENCH_REPO"
DRAFT_TASK_DESCRIPTION = (
    "Draft a task from one mined candidate by running its tests in the local sandbox: the "
    "change split into testPatch and goldPatch, the setup and test commands, and failToPass "
    "and passToPass observed at the base and with the gold patch. Returns the arguments for "
    "check_task and submit_task (definition, testPatch, goldPatch) with a draft instruction "
    "to rewrite, and the evidence; or the reason the candidate cannot be drafted. Takes "
    "minutes."
)
DRAFT_TASK_SCHEMA: JsonObject = {
    "type": "object",
    "properties": {
        "candidate": {"type": "string", "description": "the candidate's id (pr-<N>)"},
        "path": {"type": "string", "description": f"candidates.jsonl (default ${CANDIDATES_ENV})"},
        "repo": {"type": "string", "description": f"the repository (default ${REPO_ENV})"},
        "reruns": {"type": "integer", "minimum": MIN_RERUNS, "maximum": MAX_RERUNS},
    },
    "required": ["candidate"],
    "additionalProperties": False,
}


def _argument(arguments: Mapping[str, Any], name: str, environment: str) -> str:
    value = arguments.get(name) or os.environ.get(environment)
    if not isinstance(value, str) or not value:
        raise SelfbenchError(f"draft_task needs {name} (or {environment})")
    return value


def _repository(given: str) -> Path:
    """The repository `given` names, if the server may draft from it.

    Raises:
        SelfbenchError: it is not the server's repository (or, without one, not inside the
            server's working directory).
    """
    fixed = os.environ.get(REPO_ENV)
    path = Path(given).resolve()
    if fixed:
        if path != Path(fixed).resolve():
            raise SelfbenchError(f"draft_task drafts only from {fixed} (${REPO_ENV}), not {given}")
        return path
    here = Path.cwd().resolve()
    if not path.is_relative_to(here):
        raise SelfbenchError(
            f"draft_task drafts only from a repository inside {here} (or ${REPO_ENV}), not {given}"
        )
    return path


def draft_task(arguments: Mapping[str, Any]) -> JsonObject:
    """Draft the candidate a `draft_task` call names; the submit arguments and the evidence.

    Raises:
        SelfbenchError: a missing argument, a repository the server may not draft from, an
            unreadable candidates file, an unknown id, or no sandbox on this machine.
    """

    candidate_id = arguments.get("candidate")
    if not isinstance(candidate_id, str) or not candidate_id:
        raise SelfbenchError("draft_task needs a candidate id")
    path = Path(_argument(arguments, "path", CANDIDATES_ENV))
    repo = _repository(_argument(arguments, "repo", REPO_ENV))
    reruns = arguments.get("reruns", DEFAULT_RERUNS)
    if not isinstance(reruns, int) or reruns < MIN_RERUNS:
        raise SelfbenchError(f"reruns must be an integer of at least {MIN_RERUNS}")
    if reruns > MAX_RERUNS:
        raise SelfbenchError(f"reruns must be at most {MAX_RERUNS}")
    candidate = find_candidate(path, candidate_id, limit=TOOL_FILE_LIMIT)
    with tempfile.TemporaryDirectory(prefix="selfbench-draft-task-") as scratch:
        result = draft_candidate(repo, candidate, Path(scratch), DraftOptions(reruns=reruns))
        if not result.drafted or result.task_dir is None:
            return {
                "drafted": False,
                "candidate": candidate.id,
                "reason": result.reason,
                "logs": None if result.logs is None else str(result.logs),
                "evidence": {} if result.evidence is None else result.evidence.to_json(),
            }
        files = read_task_files(result.task_dir)
        evidence = read_draft_record(result.task_dir)
    return {
        "drafted": True,
        "candidate": candidate.id,
        "arguments": {
            "definition": json.loads(files.definition),
            "testPatch": files.test_patch.decode("utf-8", "replace"),
            "goldPatch": files.gold_patch.decode("utf-8", "replace"),
        },
        "evidence": evidence,
    }


def draft_task_text(draft: Mapping[str, Any]) -> str:
    """What an agent reads: the verdict, the selectors, and what to do next."""
    if not draft["drafted"]:
        return f"{draft['candidate']} cannot be drafted: {draft['reason']}"
    definition = draft["arguments"]["definition"]
    lines = [
        (
            f"Drafted {draft['candidate']} ({definition['difficulty']}): selectors observed by "
            "running the tests."
        ),
        f"failToPass: {', '.join(definition['failToPass'])}",
        f"passToPass: {', '.join(definition['passToPass']) or '(none)'}",
        f"setupCommand: {definition['setupCommand']}",
        f"testCommand: {definition['testCommand']}",
        (
            "The structured result holds the arguments for check_task and submit_task. Rewrite "
            "definition.prompt (a draft) as the engineer's request, call check_task, then "
            "submit_task with the same arguments."
        ),
        "",
        "Draft instruction:",
        definition["prompt"],
    ]
    return "\n".join(lines)
