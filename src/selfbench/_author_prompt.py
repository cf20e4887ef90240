"""The `author_task` brief: how a coding agent authors one task well. Pure text building.

The gates are rendered from `rules.THRESHOLDS`, so the brief and the audit cannot drift apart.
"""

from __future__ import annotations

from selfbench.contract import AUTHORING_DEFAULTS, DIFFICULTIES, TOOLCHAINS, Difficulty
from selfbench.rules import THRESHOLDS

__all__ = ["render_author_brief"]

_INTRO = """\
# Authoring one selfbench task

You are turning one merged pull request into a benchmark task for coding agents. Another agent
will later receive only your instruction and the repository as it stood before the change; it
must rebuild the behaviour the pull request added, and held-out tests decide whether it did.

Most of the task is already proven for you. Work in this order:

1. call `draft_task` with your candidate's id. It splits the change into the gold patch and the
   held-out tests, infers the setup and test commands, and runs the tests in the sandbox at the
   base and with the gold patch (several times): `failToPass` and `passToPass` are *observed*,
   not guessed. It returns the arguments for `check_task` and `submit_task` (`definition`,
   `testPatch`, `goldPatch`) and the evidence (every test's outcome in every run, where each
   command came from). When it cannot draft the candidate it says why in one line; report that
   and stop rather than forcing a task;
2. write the instruction: replace `definition.prompt`, a draft assembled from the pull request's
   title and description, with the engineer's request in your own words (the next sections say
   what it must and must not contain). The draft ends with an **Interface** section (the
   modules, names, signatures, options, keys, flags and variables the tests use) and a
   **Requirements** section (one line per behaviour the fail-to-pass tests pin, with the errors
   and messages they assert): that is your checklist. Keep every item, reworded as you like;
   the quality verdict reads an instruction that leaves one out as `review`;
3. call `check_task` with the arguments, fix what it reports, and call `submit_task` once.

Keep the draft's selectors, commands and patches unless the evidence shows a real problem (a
test that pins a private detail the instruction cannot ask for): then edit them as the sections
below describe, and keep `failToPass` to tests the evidence shows failing at the base and
passing with the gold patch.
"""

_BOUNDARY = """\
## The integrity boundary: what the instruction must never reveal

The instruction (`prompt`) is the only thing the solving agent reads. Write it as the engineer
who asked for the change would: the problem, the behaviour wanted, the constraints that matter
to a user of the code. It must stand on its own. It must never contain:

* the pull request's number or URL, or any commit hash (not even a short prefix of `baseCommit`);
* the names or paths of the held-out test files, or any fail-to-pass or pass-to-pass selector;
* the names of the files the reference change edits, its diff, its helper names or its internal
  structure: say what the code should do, not where or how;
* wording copied from the tests' assertions that only makes sense if you have seen the tests.

Public interface names a user would call (a command-line flag, a documented function, an HTTP
route) may be named when the request cannot be stated without them. `check_task` warns when the
prompt mentions the PR, the base commit, a selector, a held-out path or a gold file name; treat
every such warning as something to rewrite.
"""

_SPLIT = """\
## The gold patch and the held-out tests (the draft's split)

* `goldPatch` is the implementation: every non-test file the pull request changed, as a Git
  patch against `baseCommit` (`git diff <base> <merge> -- <implementation paths>`). Dependency
  manifests (`pyproject.toml`, `package.json`, lock files, `go.mod`, `Cargo.toml`, ...) belong
  here; the verifier installs them before the tests run.
* `testPatch` is the held-out tests: only test files, and no path may appear in both patches.
  Keep the tests the pull request added or changed when they exercise public behaviour. Rewrite
  or drop assertions that pin private details the instruction never asked for (an internal
  helper's name, an exact log line, a data layout no caller can observe): an agent that solves
  the problem another reasonable way must still pass.
* `testPaths` lists the held-out test files, relative to `workdir`; the verifier protects them
  from the agent's changes.
* Both patches must be Git patches (they start with `diff --git `) whose paths stay inside the
  repository and outside `.git`.
"""

_SELECTORS = """\
## Selectors and the one test command (observed by the draft)

* `failToPass`: selectors that fail at `baseCommit` with the held-out tests applied and pass with
  the gold patch. Each must fail on its own before the change: do not list a test that already
  passes, and do not lean on one broken selector to carry others.
* `passToPass`: regression selectors that pass both before and after; they show that a solution
  did not break neighbouring behaviour.
* `testCommand`: one command, run from `/app/<workdir>`, that contains `{tests}` exactly once as
  a whole, unquoted shell word (`python -m pytest -q {tests}`, `bun test {tests}`,
  `go test ./... -run {tests}`). The selectors are substituted there, each single-quoted. Never
  quote the placeholder, never assign it to a variable, and never spell a selector anywhere
  else in the command.
* `setupCommand`: installs dependencies from a clean checkout at `baseCommit`, run once while
  the image is built (for example `uv sync` or `npm ci`).
* `toolchains`: the layers the checkout needs, from: {toolchains}.
* Prefer selectors your runner accepts on its command line (file paths or node ids for pytest,
  file paths for bun and node, package patterns for go) and check that each one really runs a
  test: a selector that matches nothing is a failure, not a pass.
"""

_FIELDS = """\
## The rest of the definition

`schemaVersion` is 1. `taskId` is a short name (letters, digits, `.`, `_`, `-`; it must start
with a letter or digit). `repo` is a label such as `owner/name`. `baseCommit` is the full 40-hex
commit before the change. `workdir` is the repository-relative directory the commands run in
(`.` for the root). `sourcePr` and `sourceUrl` name the merged pull request (they are recorded,
never shown to the solving agent). Unless the task needs more, use the defaults: timeouts
{setup} / {agent} / {tests} seconds (setup, agent, tests) and resources {cpus} cpus,
{memory} MB memory, {storage} MB storage.

Call `check_task` with exactly the arguments you will submit: it validates the schema, runs the
preflight and the static audit, lists every blocker and warning, and writes nothing. When it
reports `accepted`, call `submit_task` with the same arguments. A task id can be submitted only
once; a refused submission writes nothing, so fix the blockers and call again.
"""


def _gates_section(difficulty: Difficulty | None) -> str:
    rows = []
    for level in DIFFICULTIES:
        gate = THRESHOLDS[level]
        marker = " (this task)" if level == difficulty else ""
        rows.append(
            f"| {level}{marker} | {gate.files} | {gate.changed_lines} | {gate.pass_to_pass} |"
        )
    table = "\n".join(rows)
    return f"""\
## Difficulty gates

The difficulty is decided by the size of the gold patch and the number of regression selectors.
The audit refuses a task below its tier's gate; choose the highest tier the change really meets,
and never pad the gold patch to reach one.

| difficulty | gold files at least | changed gold lines at least | passToPass at least |
| --- | --- | --- | --- |
{table}

Changed lines are the added and removed lines inside the patch's hunks; binary files count as
files with no changed lines.
"""


def render_author_brief(
    *, difficulty: Difficulty | None = None, pull_request: str | None = None
) -> str:
    """The `author_task` prompt, optionally naming the assigned difficulty and pull request."""
    assignment = []
    if pull_request and pull_request.strip():
        shown = " ".join(pull_request.split())  # one line, whatever the caller sent
        assignment.append(f"Your assigned pull request: {shown}.")
    if difficulty:
        assignment.append(f"Your assigned difficulty: {difficulty}.")
    defaults = AUTHORING_DEFAULTS
    fields = _FIELDS.format(
        setup=defaults["timeouts"]["setupSeconds"],
        agent=defaults["timeouts"]["agentSeconds"],
        tests=defaults["timeouts"]["testsSeconds"],
        cpus=defaults["resources"]["cpus"],
        memory=defaults["resources"]["memoryMb"],
        storage=defaults["resources"]["storageMb"],
    )
    selectors = _SELECTORS.replace("{toolchains}", ", ".join(f"`{t}`" for t in TOOLCHAINS))
    parts = [
        _INTRO,
        *([" ".join(assignment) + "\n"] if assignment else []),
        _BOUNDARY,
        _gates_section(difficulty),
        _SPLIT,
        selectors,
        fields,
    ]
    return "\n".join(parts)
