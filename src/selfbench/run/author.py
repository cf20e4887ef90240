"""Authoring one candidate's task: the draft as is, or any coding agent over MCP, and its repair.

`author_from_draft` submits the drafted task unchanged (no model). `author_with_command` runs an
agent command in a fresh clone at the candidate's base commit with the `selfbench mcp` server
configured for it; the agent must call `submit_task`, which writes the task into the job's
`out_dir`. `repair_with_command` runs the same command in repair mode with the tail of the
failing verifier log, and accepts its result only when the validation-repair rules allow it.

A command is split like shell words (`split_argv`) and run as an argument list, never through a
shell, in the command sandbox (`selfbench.run.confine`): the clone and the output root writable,
no host secrets, only the hosts of its allow-list (`job.network`), and every process it starts
ends with it. These placeholders, anywhere inside an argument, are replaced: `{prompt}` (the
prompt text), `{prompt_file}`, `{mcp_config}` (a Claude-style `mcpServers` JSON file),
`{workspace}` (the clone). The prompt is also the command's standard input, and the environment
names every input (`SELFBENCH_*`, see `agent_environment`).

Each job owns its `out_dir`, the authoring output root: it must be absent or empty, and holds
the one submitted task afterwards (`out_dir/<taskId>/`). A rejection is a returned result with a
one-line reason; the command's output, and what became of it, is appended to the job's log.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from selfbench._fs import read_bytes
from selfbench._git import git
from selfbench._json import loads_strict
from selfbench.artifacts.draft_record import DRAFT_FILE
from selfbench.artifacts.task_dir import TASK_FILES, read_authored_task, read_task_files
from selfbench.collect import Candidate, candidate_mismatch, find_authored_task
from selfbench.environments.process import parse_command, run_command
from selfbench.errors import PreflightError, SelfbenchError, TaskFileError
from selfbench.mine.candidate import CandidateModel
from selfbench.repair import check_validation_repair
from selfbench.run._prompts import Mode, render_agent_prompt
from selfbench.run._workspace import INPUTS_DIR, Workspace, changed_paths, open_workspace
from selfbench.run.confine import (
    DEFAULT_NETWORK,
    AuthorNetwork,
    command_network,
    confined,
    handed_over,
    private_home,
)
from selfbench.submit import OUTPUT_ENV, write_submission_files

__all__ = [
    "LOG_TAIL_BYTES",
    "NOT_SUBMITTED",
    "AuthorJob",
    "AuthorResult",
    "agent_environment",
    "author_from_draft",
    "author_with_command",
    "repair_with_command",
    "run_agent",
]

LOG_TAIL_BYTES = 8192
NOT_SUBMITTED = "author did not submit"
_PLACEHOLDER_RE = re.compile(r"\{(prompt|prompt_file|mcp_config|workspace)\}")

Check = Callable[[Workspace, Path], str | None]
"""A check of the submitted task while the workspace still exists: None, or why it fails."""


@dataclass(frozen=True, slots=True)
class AuthorJob:
    """One candidate to author: where from, where to, and the agent's limits."""

    repo: Path
    candidate: CandidateModel
    draft_dir: Path
    out_dir: Path
    log: Path
    time_limit_sec: float
    inactivity_sec: float
    work_root: Path | None = None
    """Where the agent's clone is made (a temporary directory there); None: the system's."""
    env_names: tuple[str, ...] = ()
    """The variables of selfbench's environment the command gets beside the sandbox's own
    (`selfbench.run.confine`): an agent's API key."""
    home: Path | None = None
    """The directory (`run --author-home`) a private copy of which is the command's `HOME`: an
    agent CLI's login; None: an empty `HOME`."""
    network: AuthorNetwork = DEFAULT_NETWORK
    """What the command may reach (`run --author-allow`, `--author-network`); by default the
    model APIs its variables name, nothing else."""


@dataclass(frozen=True, slots=True)
class AuthorResult:
    """The authored task, or why there is none (one line)."""

    ok: bool
    task_dir: Path | None
    reason: str | None

    @classmethod
    def rejected(cls, reason: str) -> AuthorResult:
        """A rejection, its reason kept to one line."""
        return cls(ok=False, task_dir=None, reason=" ".join(reason.split()))


def _prepare_out_dir(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise ValueError(f"authoring output {out_dir} is not empty")


def author_from_draft(job: AuthorJob) -> AuthorResult:
    """Submit the drafted task as it is into `job.out_dir` (no model).

    Raises:
        ValueError: `job.out_dir` is not empty.
    """
    _prepare_out_dir(job.out_dir)
    try:
        files = read_task_files(job.draft_dir)
        definition = loads_strict(files.definition, source=str(files.definition_path))
        written = write_submission_files(
            definition, files.test_patch, files.gold_patch, output_root=job.out_dir
        )
    except PreflightError as exc:
        return AuthorResult.rejected("; ".join(exc.blockers))
    except SelfbenchError as exc:
        return AuthorResult.rejected("; ".join(exc.lines))
    return _matched(job, job.out_dir / written.task_id)


def _matched(job: AuthorJob, task_dir: Path) -> AuthorResult:
    """The task, unless it is not the job's candidate's."""
    candidate = job.candidate
    try:
        definition = read_authored_task(task_dir).definition
    except SelfbenchError as exc:
        return AuthorResult.rejected("; ".join(exc.lines))
    # A candidate mined without a pull request number is matched on its commit and tier.
    source_pr = candidate.sourcePr if candidate.sourcePr is not None else definition.sourcePr
    assigned = Candidate(source_pr, candidate.baseCommit, candidate.difficulty)
    mismatch = candidate_mismatch(assigned, task_dir)
    if mismatch is not None:
        return AuthorResult.rejected(mismatch.reason)
    return AuthorResult(ok=True, task_dir=task_dir, reason=None)


def agent_environment(
    workspace: Workspace, inputs: Mapping[str, Path], mode: Mode
) -> dict[str, str]:
    """The agent's environment: this process's, plus where the server and every input are.

    `SELFBENCH_TASK_OUTPUT` (the output root), `SELFBENCH_MCP_CONFIG`, `SELFBENCH_WORKSPACE`,
    `SELFBENCH_AUTHOR_MODE` (`author`, `repair` or `coupling-repair`), and one
    `SELFBENCH_<INPUT>` per input file or directory (`CANDIDATE`, `DRAFT`, `PROMPT_FILE`, and in
    repair modes `TASK`, `FAILING_LOG` or `FINDINGS`).
    """
    env = dict(os.environ)
    env.update(
        {
            OUTPUT_ENV: str(workspace.out_dir),
            "SELFBENCH_MCP_CONFIG": str(workspace.mcp_config),
            "SELFBENCH_WORKSPACE": str(workspace.repo),
            "SELFBENCH_AUTHOR_MODE": mode,
        }
    )
    env.update({f"SELFBENCH_{name}": str(path) for name, path in inputs.items()})
    return env


def _expand(argv: tuple[str, ...], values: Mapping[str, str]) -> list[str]:
    return [_PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], token) for token in argv]


def _copy_task(source: Path, target: Path, *, sidecar: bool) -> None:
    """Copy the task's files that exist into `target`, each read as a task file is read: a
    symbolic link in place of one is refused (TaskFileError), never copied or followed."""
    target.mkdir(parents=True)
    for name in (*TASK_FILES, *((DRAFT_FILE,) if sidecar else ())):
        path = source / name
        if path.is_file() or path.is_symlink():
            (target / name).write_bytes(read_bytes(path, error=TaskFileError))


def _submitted(job: AuthorJob, outcome_reason: str | None, exit_code: int | None) -> Path | str:
    """The one submitted task directory, or why there is none."""
    if not any(not p.name.startswith(".") for p in job.out_dir.iterdir()):
        if outcome_reason is not None:
            return outcome_reason
        return NOT_SUBMITTED + (f" (exit code {exit_code})" if exit_code else "")
    try:
        return find_authored_task(job.out_dir)
    except SelfbenchError as exc:
        return str(exc)


def run_agent(
    command: str,
    job: AuthorJob,
    mode: Mode,
    *,
    task_dir: Path | None = None,
    extra: Mapping[str, bytes] | None = None,
    findings: tuple[str, ...] = (),
    check: Check | None = None,
) -> AuthorResult:
    """Run the author command once in `mode` in a fresh workspace; the checked submission.

    `task_dir` is the task to repair (copied to `.selfbench/task/` and applied to the clone),
    `extra` more input files (name → bytes, each also named in the environment), and `check`
    judges the submission while the clone exists.

    Raises:
        ValueError: `job.out_dir` is not empty.
        SandboxError: `job.home` cannot be copied, or the network's relays cannot be opened
            (an `EgressError`: an allowed URL, or the host's proxy, that cannot be used): the
            machine's fault, the run stops.
    """
    argv = parse_command(command, role="author")
    if isinstance(argv, str):
        return AuthorResult.rejected(argv)
    _prepare_out_dir(job.out_dir)
    if job.work_root is not None:
        job.work_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="selfbench-author-", dir=job.work_root) as temp:
        try:
            workspace = open_workspace(job.repo, job.candidate.baseCommit, Path(temp), job.out_dir)
            inputs = _write_inputs(workspace, job, mode, task_dir, extra or {}, findings)
        except SelfbenchError as exc:
            return AuthorResult.rejected(f"cannot prepare the author's workspace: {exc}")
        values = {
            "prompt": inputs["PROMPT_FILE"].read_text(encoding="utf-8"),
            "prompt_file": str(inputs["PROMPT_FILE"]),
            "mcp_config": str(workspace.mcp_config),
            "workspace": str(workspace.repo),
        }
        writable = (Path(temp), job.out_dir)
        with contextlib.ExitStack() as stack:
            home = stack.enter_context(private_home(job.home))  # unreadable: stops the run
            network = stack.enter_context(  # relays that cannot open: stops the run
                command_network(job.network, job.env_names, log=job.log)
            )
            try:
                sandboxed, env = confined(
                    _expand(argv, values),
                    cwd=workspace.repo,
                    env=agent_environment(workspace, inputs, mode),
                    writable=writable,
                    env_names=job.env_names,
                    home=home,
                    network=network,
                )
            except SelfbenchError as exc:
                return AuthorResult.rejected(f"author command cannot start: {exc}")
            stack.enter_context(handed_over(writable))
            outcome = run_command(
                sandboxed,
                role="author",
                cwd=workspace.repo,
                env=env,
                stdin=inputs["PROMPT_FILE"],
                log=job.log,
                time_limit_sec=job.time_limit_sec,
                inactivity_sec=job.inactivity_sec,
                program=argv[0],
            )
        found = _submitted(job, outcome.reason, outcome.exit_code)
        if isinstance(found, str):
            return AuthorResult.rejected(found)
        result = _matched(job, found)
        problem = check(workspace, found) if result.ok and check is not None else None
    return AuthorResult.rejected(problem) if problem else result


def _write_inputs(
    workspace: Workspace,
    job: AuthorJob,
    mode: Mode,
    task_dir: Path | None,
    extra: Mapping[str, bytes],
    findings: tuple[str, ...],
) -> dict[str, Path]:
    """Write the agent's input files into `.selfbench/`; their paths by environment name.

    Raises:
        GitError: the task to repair does not apply to the clone.
    """
    inputs = {
        "CANDIDATE": workspace.write_input(
            "candidate.json", job.candidate.model_dump_json(indent=2).encode() + b"\n"
        )
    }
    if job.draft_dir.is_dir():
        _copy_task(job.draft_dir, workspace.inputs / "draft", sidecar=True)
        inputs["DRAFT"] = workspace.inputs / "draft"
    if task_dir is not None:
        _copy_task(task_dir, workspace.inputs / "task", sidecar=False)
        inputs["TASK"] = workspace.inputs / "task"
        _apply_task(workspace, task_dir)
    for name, content in extra.items():
        key = name.rsplit(".", 1)[0].replace("-", "_").upper()
        inputs[key] = workspace.write_input(name, content)
    prompt = render_agent_prompt(job.candidate, mode, inputs=INPUTS_DIR, findings=findings)
    inputs["PROMPT_FILE"] = workspace.write_input("prompt.md", prompt.encode("utf-8"))
    return inputs


def _apply_task(workspace: Workspace, task_dir: Path) -> None:
    """Apply the task's test and gold patches to the clone's work tree, so tests can run."""

    files = read_task_files(task_dir)
    for data in (files.test_patch, files.gold_patch):
        if data.strip():
            git(workspace.repo, "apply", "-", stdin=data)


def author_with_command(command: str, job: AuthorJob) -> AuthorResult:
    """Author the candidate's task with an agent command over MCP, from its draft.

    The command runs in a fresh clone at the base commit under the job's time and inactivity
    limits; the task is what it submitted with `submit_task`, if it is the candidate's.

    Raises:
        ValueError: `job.out_dir` is not empty.
    """
    return run_agent(command, job, "author")


def repair_with_command(
    command: str, job: AuthorJob, task_dir: Path, failing_log_tail: bytes
) -> AuthorResult:
    """One validation repair of `task_dir` by the author command, given the failing log's tail.

    The result is returned ok only when the validation-repair rules (`selfbench.repair`, as
    `repair-check` applies them) allow what it changed.

    Raises:
        ValueError: `job.out_dir` is not empty.
    """
    tail = failing_log_tail[-LOG_TAIL_BYTES:]

    def check(workspace: Workspace, repaired_dir: Path) -> str | None:
        original = read_authored_task(task_dir)
        repaired = read_authored_task(repaired_dir)
        base = original.definition.baseCommit
        changed = changed_paths(
            workspace.repo,
            base,
            (original.test_patch, original.gold_patch),
            (repaired.test_patch, repaired.gold_patch),
        )
        if isinstance(changed, str):
            return changed
        verdict = check_validation_repair(
            original.definition, repaired.definition, original.test_patch, changed
        )
        return verdict.reason

    return run_agent(
        command,
        job,
        "repair",
        task_dir=task_dir,
        extra={"failing-log.txt": tail},
        check=check,
    )
