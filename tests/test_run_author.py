"""Authoring for `selfbench run`: the draft as is, a real agent process over MCP, and repair.

The author command in these tests is `scripted_author.py`, a real process that starts the
`selfbench mcp` server its workspace declares and speaks MCP to it over stdio; the repositories
are real git repositories (the demo's sample), and the repair rules are `selfbench.repair`'s.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from run_helpers import SCRIPTED_AUTHOR, Sample, sample
from scripted_author import BROKEN_SELECTOR
from selfbench.artifacts.task_dir import read_authored_task
from selfbench.collect import MISMATCH
from selfbench.run.author import (
    LOG_TAIL_BYTES,
    AuthorJob,
    AuthorResult,
    author_from_draft,
    author_with_command,
    repair_with_command,
)
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner

PROMPT = (
    "Titles in German or Scandinavian languages come out of slugify mangled. Spell accented "
    "Latin text in ASCII before slugging it (ä as ae, ß as ss, other accents dropped), expose "
    "that as slugkit.transliterate, and give slugify two keyword-only options: separator "
    '(default "-", non-alphanumeric, else ValueError) and max_length (cut at a word boundary; '
    "below 1 is a ValueError)."
)
TASK_ID = "slugkit-pr-42"


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return sample(tmp_path_factory.mktemp("sample"))


def job(drafted: Sample, tmp_path: Path, name: str = "out", **limits: float) -> AuthorJob:
    return AuthorJob(
        repo=drafted.repo.path,
        candidate=drafted.candidate,
        draft_dir=drafted.draft,
        out_dir=tmp_path / name,
        log=tmp_path / "author.log",
        time_limit_sec=limits.get("time_limit_sec", 120),
        inactivity_sec=limits.get("inactivity_sec", 60),
        work_root=tmp_path / "work",
    )


def scripted(*options: str) -> str:
    return " ".join([SCRIPTED_AUTHOR, *(shlex.quote(option) for option in options)])


def rejected(reason: str) -> AuthorResult:
    return AuthorResult(ok=False, task_dir=None, reason=reason)


# --- the draft as is ---------------------------------------------------------------------------


def test_the_draft_is_submitted_as_it_is(drafted: Sample, tmp_path: Path) -> None:
    the_job = job(drafted, tmp_path)
    result = author_from_draft(the_job)
    assert result == AuthorResult(ok=True, task_dir=the_job.out_dir / TASK_ID, reason=None)
    task = read_authored_task(the_job.out_dir / TASK_ID)
    assert task.loaded.raw == drafted.arguments["definition"]
    assert task.test_patch == (drafted.draft / "test.patch").read_bytes()
    assert task.gold_patch == (drafted.draft / "gold.patch").read_bytes()


def test_a_draft_the_preflight_refuses_is_a_rejection(tmp_path: Path) -> None:
    bad = sample(tmp_path, difficulty="hard")
    result = author_from_draft(job(bad, tmp_path))
    assert result == rejected(
        "hard mode requires at least 100 changed implementation lines; found 72; "
        "hard mode requires at least 2 pass-to-pass regression tests"
    )
    assert list((tmp_path / "out").iterdir()) == []


def test_an_output_root_that_is_not_empty_is_a_bug_of_the_caller(
    drafted: Sample, tmp_path: Path
) -> None:
    (tmp_path / "out" / "stale").mkdir(parents=True)
    with pytest.raises(ValueError, match="is not empty"):
        author_from_draft(job(drafted, tmp_path))


# --- an agent command over MCP -----------------------------------------------------------------


def test_the_scripted_author_rewrites_the_instruction_and_submits_over_mcp(
    drafted: Sample, tmp_path: Path
) -> None:
    the_job = job(drafted, tmp_path)
    result = author_with_command(scripted("--prompt", PROMPT), the_job)
    assert result == AuthorResult(ok=True, task_dir=the_job.out_dir / TASK_ID, reason=None)
    task = read_authored_task(the_job.out_dir / TASK_ID)
    assert task.definition.prompt == PROMPT
    assert list(task.definition.failToPass) == drafted.arguments["definition"]["failToPass"]
    log = the_job.log.read_text().splitlines()
    assert log[1].startswith("scripted author, author mode, prompt of ")
    assert log[2].startswith('check_task: {"taskId": "slugkit-pr-42", "accepted": true')
    assert log[3] == f"submit_task: Submitted {TASK_ID}."
    assert log[-1].startswith("--- exit code 0 after ")
    assert list((tmp_path / "work").iterdir()) == []  # the clone is gone


PROBE = str(Path(__file__).parent / "probe_agent.py")


def test_the_workspace_is_a_clean_clone_at_the_base_with_the_server_configured(
    drafted: Sample, tmp_path: Path
) -> None:
    the_job = job(drafted, tmp_path)
    command = shlex.join(
        [
            sys.executable,
            PROBE,
            "{prompt_file}",
            "{mcp_config}",
            "x{workspace}x",
            "; rm -rf .",
        ]
    )
    result = author_with_command(command, the_job)
    assert result == rejected("author did not submit")
    out = the_job.out_dir
    lines = the_job.log.read_text().splitlines()[1:-1]
    workspace = lines[1].split('"x')[1].split('x"')[0]
    assert lines[:2] == [
        "stdin # Authoring one se",
        "argv "
        + json.dumps(
            [
                f"{workspace}/.selfbench/prompt.md",
                f"{workspace}/.selfbench/mcp.json",
                f"x{workspace}x",
                "; rm -rf .",
            ]
        ),
    ]
    assert lines[2:] == [
        f"head {drafted.repo.base}",
        "status ''",
        "config .mcp.json True",
        "config .cursor/mcp.json True",
        "config .gemini/settings.json True",
        "config .vscode/mcp.json True",
        "config opencode.json True",
        "config .codex/config.toml True",
        "config .selfbench/mcp.json True",
        f'server ["--output-root", "{out}"]',
        "env SELFBENCH_AUTHOR_MODE author",
        "env SELFBENCH_CANDIDATE .selfbench/candidate.json",
        "env SELFBENCH_DRAFT .selfbench/draft",
        "env SELFBENCH_MCP_CONFIG .selfbench/mcp.json",
        "env SELFBENCH_PROMPT_FILE .selfbench/prompt.md",
        f"env SELFBENCH_TASK_OUTPUT {os.path.relpath(out, workspace)}",
        "env SELFBENCH_WORKSPACE .",
        (
            "inputs .selfbench/candidate.json .selfbench/draft .selfbench/draft/definition.json"
            " .selfbench/draft/draft.json .selfbench/draft/gold.patch .selfbench/draft/test.patch"
            " .selfbench/mcp.json .selfbench/prompt.md"
        ),
    ]


def test_an_author_silent_too_long_is_killed(drafted: Sample, tmp_path: Path) -> None:
    started = time.monotonic()
    result = author_with_command(
        scripted("--silent", "60"), job(drafted, tmp_path, inactivity_sec=2)
    )
    assert result == rejected("author command was silent for 2 s and was killed")
    assert time.monotonic() - started < 30
    assert the_last_line(tmp_path).startswith("--- author command was silent for 2 s")


def test_an_author_over_its_time_limit_is_killed(drafted: Sample, tmp_path: Path) -> None:
    started = time.monotonic()
    the_job = job(drafted, tmp_path, time_limit_sec=6, inactivity_sec=4)
    result = author_with_command(scripted("--chatter"), the_job)
    assert result == rejected("author command timed out after 6 s")
    assert time.monotonic() - started < 30
    assert "still thinking" in the_job.log.read_text()


def the_last_line(tmp_path: Path) -> str:
    return (tmp_path / "author.log").read_text().splitlines()[-1]


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (
            "/nonexistent/agent --go",
            "author command cannot start: /nonexistent/agent: No such file or directory",
        ),
        ('agent "unclosed', "author command cannot be parsed: No closing quotation"),
        ("   ", "author command is empty"),
    ],
    ids=["missing", "unparsable", "empty"],
)
def test_a_command_that_cannot_start_is_a_one_line_rejection(
    drafted: Sample, tmp_path: Path, command: str, reason: str
) -> None:
    assert author_with_command(command, job(drafted, tmp_path)) == rejected(reason)


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ((), "author did not submit"),
        (("--exit", "3"), "author did not submit (exit code 3)"),
    ],
    ids=["exit-0", "exit-3"],
)
def test_an_author_that_never_submits_is_rejected(
    drafted: Sample, tmp_path: Path, options: tuple[str, ...], reason: str
) -> None:
    result = author_with_command(scripted("--no-submit", *options), job(drafted, tmp_path))
    assert result == rejected(reason)


def test_a_task_for_another_tier_is_not_the_candidates(drafted: Sample, tmp_path: Path) -> None:
    the_job = job(drafted, tmp_path)
    result = author_with_command(scripted("--set", "difficulty", '"easy"'), the_job)
    assert result == rejected(MISMATCH)


# --- validation repair -------------------------------------------------------------------------


def broken_task(drafted: Sample, tmp_path: Path) -> Path:
    """The scripted author's broken task: a fail-to-pass selector that runs no test."""
    result = author_with_command(scripted("--break"), job(drafted, tmp_path, "authored"))
    assert result.ok
    assert result.task_dir is not None
    assert list(read_authored_task(result.task_dir).definition.failToPass) == [BROKEN_SELECTOR]
    return result.task_dir


def test_a_broken_task_is_repaired_within_the_rules(drafted: Sample, tmp_path: Path) -> None:
    task_dir = broken_task(drafted, tmp_path)
    the_job = job(drafted, tmp_path, "repaired")
    log = b"x" * 10_000 + b"\nERROR: file or directory not found: " + BROKEN_SELECTOR.encode()
    result = repair_with_command(scripted(), the_job, task_dir, log)
    assert result == AuthorResult(ok=True, task_dir=the_job.out_dir / TASK_ID, reason=None)
    repaired = read_authored_task(the_job.out_dir / TASK_ID)
    assert list(repaired.definition.failToPass) == drafted.arguments["definition"]["failToPass"]
    lines = the_job.log.read_text().split("--- author command: ")[-1].splitlines()
    assert lines[1].startswith("scripted author, repair mode, prompt of ")
    assert lines[2] == f"failing log: 8192 bytes, ending {log.splitlines()[-1].decode()!r}"
    assert LOG_TAIL_BYTES == 8192


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (
            ("--set", "prompt", json.dumps(PROMPT)),
            "validation repair changed immutable definition field prompt",
        ),
        (
            ("--replace-gold", "max_length must be at least 1", "max_length must be positive"),
            "validation repair changed files outside held-out tests: slugkit/core.py",
        ),
    ],
    ids=["prompt", "gold"],
)
def test_a_repair_outside_the_rules_is_rejected(
    drafted: Sample, tmp_path: Path, options: tuple[str, ...], reason: str
) -> None:
    task_dir = broken_task(drafted, tmp_path)
    result = repair_with_command(scripted(*options), job(drafted, tmp_path, "r"), task_dir, b"")
    assert result == rejected(reason)


needs_sandbox = pytest.mark.sandbox


@needs_sandbox
def test_a_broken_task_fails_validation_and_its_repair_passes_it(
    drafted: Sample, tmp_path: Path
) -> None:
    """The whole path with the real verifier: broken task, failing log, repair, validation."""
    task_dir = broken_task(drafted, tmp_path)
    runner = LocalRunner(LocalOptions(logs=tmp_path / "logs"))
    [failed] = validate([task_dir], runner=runner, repo=drafted.repo.path)
    assert failed.reason == "oracle: fail-to-pass ran no test: pytest ran no test (no tests ran)"
    tail = Path(failed.oracle.log).read_bytes()[-LOG_TAIL_BYTES:]
    the_job = job(drafted, tmp_path, "repaired")
    result = repair_with_command(scripted(), the_job, task_dir, tail)
    assert result.ok
    assert result.task_dir is not None
    runner = LocalRunner(LocalOptions(logs=tmp_path / "logs-repaired"))
    [passed] = validate([result.task_dir], runner=runner, repo=drafted.repo.path)
    assert (passed.accepted, passed.reason) == (True, None)
