"""What an author command is told, per mode. Pure text building on the `author_task` brief."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from selfbench._author_prompt import render_author_brief
from selfbench.mine.candidate import CandidateModel
from selfbench.repair import MUTABLE_FIELDS

__all__ = ["Mode", "render_agent_prompt"]

Mode = Literal["author", "repair", "coupling-repair"]

_AUTHOR = """\
## Your assignment

The repository is checked out at the base commit in the current directory. Your inputs are in
`{inputs}/`:

* `candidate.json`: the merged change (title, description, files, tiers);
* `draft/definition.json`, `draft/test.patch`, `draft/gold.patch`: a drafted task whose
  selectors and commands were observed by running the tests, and `draft/draft.json` (when
  present) with that evidence.

The draft's `prompt` is only a first draft. Rewrite it into the instruction described above,
keep everything else as drafted unless `check_task` reports a problem, and never change
`taskId`, `sourcePr`, `baseCommit` or `difficulty`: a task that does not match its candidate
is rejected. Then call the `selfbench` MCP server's `check_task` and `submit_task` tools (the
server is configured for this directory; `{inputs}/mcp.json` declares it too). Submit once.
"""

_REPAIR = """\
## Your assignment: one validation repair

The task in `{inputs}/task/` (`definition.json`, `test.patch`, `gold.patch`) was authored, but
its verifier failed. The last 8 KB of the failing verifier log is in `{inputs}/failing-log.txt`.
The repository is checked out at the base commit with both patches applied, so you can run the
tests. Find why the verifier failed and fix it.

You may change only these definition fields: {mutable}; and the contents of the held-out test
files (the paths of `test.patch`). Everything else, the prompt, the ids and the gold patch
included, must stay exactly as it is, or the repair is rejected. Submit the repaired task (same
`taskId`) with the `selfbench` MCP server's `check_task` and `submit_task` tools: the full
definition, the new held-out test patch against the base commit, and the unchanged gold patch.
"""

_COUPLING = """\
## Your assignment: one coupling repair

The held-out tests of the task in `{inputs}/task/` are coupled to private details of the gold
patch: a solution that does what the instruction asks, another reasonable way, would fail them.
The findings (also in `{inputs}/findings.txt`):

{findings}

Rewrite the held-out test files (the paths of `test.patch`) so that they judge the behaviour
the instruction asks for, not these details. Change nothing else: not the definition, not the
gold patch, no other file. Submit the task (same `taskId`, same definition, the new test patch,
the unchanged gold patch) with the `selfbench` MCP server's `check_task` and `submit_task` tools.
"""


def _pull_request(candidate: CandidateModel) -> str:
    if candidate.sourceUrl:
        return candidate.sourceUrl
    if candidate.sourcePr is not None:
        return f"#{candidate.sourcePr}"
    return candidate.id


def render_agent_prompt(
    candidate: CandidateModel, mode: Mode, *, inputs: str, findings: Sequence[str] = ()
) -> str:
    """The brief for one agent run: the `author_task` brief, then the assignment of `mode`."""
    brief = render_author_brief(
        difficulty=candidate.difficulty, pull_request=_pull_request(candidate)
    )
    if mode == "author":
        assignment = _AUTHOR.format(inputs=inputs)
    elif mode == "repair":
        mutable = ", ".join(f"`{name}`" for name in MUTABLE_FIELDS)
        assignment = _REPAIR.format(inputs=inputs, mutable=mutable)
    else:
        listed = "\n".join(f"* {' '.join(finding.split())}" for finding in findings)
        assignment = _COUPLING.format(inputs=inputs, findings=listed or "* (none given)")
    return f"{brief}\n{assignment}"
