"""The `selfbench` command line: check, audit, submit; exit codes and whole outputs."""

from __future__ import annotations

import json
import os
import re
import select
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from helpers import GOLD, TESTS, arguments, definition, write_task_files
from selfbench.cli import main
from selfbench.cli.common import progress
from selfbench.cli.run import _print_summary
from selfbench.run.driver import RunSummary, TierSummary
from selfbench.submit import OUTPUT_ENV

TASK_ID = "widgets-pr-42"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code, out, err = run(capsys, *argv)
    assert err == ""
    return code, json.loads(out)


def write_json(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tasks"
    path.mkdir()
    monkeypatch.setenv(OUTPUT_ENV, str(path))
    return path


# --- check -------------------------------------------------------------------------------------


def test_check_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_json(tmp_path / "definition.json", definition())

    assert run_json(capsys, "check", source, "--json") == (
        0,
        {"valid": True, "issues": [], "warnings": []},
    )


def test_check_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_json(tmp_path / "definition.json", definition(difficulty="x", sourcePr=0))

    assert run_json(capsys, "check", source, "--json") == (
        1,
        {
            "valid": False,
            "issues": [
                {"path": "difficulty", "message": "must be one of easy, medium, hard"},
                {"path": "sourcePr", "message": "must be at least 1"},
            ],
            "warnings": [],
        },
    )


def test_check_reports_dropped_keys_as_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_json(tmp_path / "definition.json", {**definition(), "reviewer": "me"})

    assert run_json(capsys, "check", source, "--json") == (
        0,
        {"valid": True, "issues": [], "warnings": ["dropped unknown key reviewer"]},
    )


def test_check_submission_mode_rejects_unknown_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_json(tmp_path / "definition.json", {**definition(), "reviewer": "me"})

    assert run_json(capsys, "check", source, "--mode", "submission", "--json") == (
        1,
        {
            "valid": False,
            "issues": [{"path": "reviewer", "message": "is not allowed (unknown key)"}],
            "warnings": [],
        },
    )


def test_check_malformed_json_is_an_invalid_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "definition.json"
    source.write_bytes(b'{"taskId": "a", "taskId": "b"}')

    assert run_json(capsys, "check", str(source), "--json") == (
        1,
        {
            "valid": False,
            "issues": [{"path": "$", "message": 'invalid JSON: duplicate key "taskId"'}],
            "warnings": [],
        },
    )


def test_check_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"

    assert run(capsys, "check", str(missing), "--json") == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )


def test_check_human_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    valid = write_json(tmp_path / "valid.json", definition())
    invalid = write_json(tmp_path / "invalid.json", definition(sourcePr=0))

    assert run(capsys, "check", valid) == (0, f"valid  {valid}\n", "")
    assert run(capsys, "check", invalid) == (
        1,
        f"invalid  {invalid}\n  sourcePr: must be at least 1\n",
        "",
    )


# --- check, given the patches or a task directory --------------------------------------------

QUOTED = 'test command must expand "{tests}" as an unquoted shell argument list'
HARD_CODED = 'test command must not hard-code fail-to-pass or pass-to-pass paths outside "{tests}"'


def check_argv(tmp_path: Path, value: dict[str, Any], tests: bytes = TESTS) -> list[str]:
    """`check DEFINITION --test-patch F --gold-patch F` for these inputs."""
    source, test_patch, gold_patch = submit_files(tmp_path, value, tests, GOLD)[1::2]
    return ["check", source, "--test-patch", test_patch, "--gold-patch", gold_patch]


@pytest.mark.parametrize(
    ("changes", "blockers"),
    [
        ({"testCommand": 'pytest "{tests}"'}, [QUOTED]),
        ({"testCommand": "pytest tests/test_new.py {tests}"}, [HARD_CODED]),
        (
            {"difficulty": "medium", "passToPass": ["tests/test_old.py"]},
            [
                "medium mode requires at least 2 implementation files; found 1",
                "medium mode requires at least 50 changed implementation lines; found 20",
            ],
        ),
    ],
    ids=["quoted-placeholder", "hard-coded-selector", "too-small"],
)
def test_check_with_patches_refuses_what_submit_refuses(
    tmp_path: Path,
    root: Path,
    changes: dict[str, Any],
    blockers: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = check_argv(tmp_path, definition(**changes))

    assert run_json(capsys, *argv, "--json") == (
        1,
        {"valid": False, "issues": [], "blockers": blockers, "warnings": []},
    )
    code, _, err = run(
        capsys, "submit", *submit_files(tmp_path, definition(**changes), TESTS, GOLD)
    )
    assert (code, err) == (1, "".join(f"error: {blocker}\n" for blocker in blockers))


def test_check_with_patches_shows_the_prompt_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = definition(prompt="Fix #42: src/widgets/module_0.py must accept a trailing comma.")
    argv = check_argv(tmp_path, value)

    assert run_json(capsys, *argv, "--json") == (
        0,
        {
            "valid": True,
            "issues": [],
            "blockers": [],
            "warnings": [
                "prompt mentions the source PR number (42)",
                "prompt mentions a gold file name (src/widgets/module_0.py)",
            ],
        },
    )
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"valid  {argv[1]}",
        "  warning: prompt mentions the source PR number (42)",
        "  warning: prompt mentions a gold file name (src/widgets/module_0.py)",
    ]


def test_check_with_patches_lists_issues_then_blockers_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = check_argv(tmp_path, definition(sourcePr=0), tests=b"")

    assert run_json(capsys, *argv, "--json") == (
        1,
        {
            "valid": False,
            "issues": [{"path": "sourcePr", "message": "must be at least 1"}],
            "blockers": ["test.patch is not a Git patch"],
            "warnings": [],
        },
    )
    code, out, err = run(capsys, *argv)
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"invalid  {argv[1]}",
        "  sourcePr: must be at least 1",
        "  blocker: test.patch is not a Git patch",
    ]


def test_check_a_task_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task_dir = tmp_path / TASK_ID
    value = {**definition(testCommand="pytest {tests} tests/test_new.py"), "reviewer": "me"}
    write_task_files(task_dir, value)

    assert run_json(capsys, "check", str(task_dir), "--json") == (
        1,
        {
            "valid": False,
            "issues": [],
            "blockers": [HARD_CODED],
            "warnings": ["dropped unknown key reviewer"],
        },
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--test-patch", "t.patch"], "{task_dir} is a task directory: it holds its own patches"),
        (None, "--test-patch and --gold-patch go together"),
    ],
)
def test_check_refuses_patches_it_cannot_pair(
    tmp_path: Path, extra: list[str] | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    task_dir = tmp_path / TASK_ID
    write_task_files(task_dir)
    source = str(task_dir / "definition.json")
    argv = [str(task_dir), *extra] if extra else [source, "--gold-patch", source]

    assert run(capsys, "check", *argv) == (2, "", f"error: {message.format(task_dir=task_dir)}\n")


def test_check_an_unreadable_task_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    missing = tmp_path / "empty" / "definition.json"

    assert run(capsys, "check", str(tmp_path / "empty")) == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )


# --- audit -------------------------------------------------------------------------------------


def test_audit_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_task_files(tmp_path / TASK_ID)

    assert run_json(capsys, "audit", str(tmp_path / TASK_ID), "--json") == (
        0,
        {
            "accepted": True,
            "blockers": [],
            "metrics": {"implementationFiles": 1, "implementationChangedLines": 20, "testFiles": 1},
            "warnings": [],
        },
    )


def test_audit_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    value = {**definition(difficulty="medium", prompt="Fix #42."), "reviewer": "me"}
    write_task_files(tmp_path / TASK_ID, value)

    assert run_json(capsys, "audit", str(tmp_path / TASK_ID), "--json") == (
        1,
        {
            "accepted": False,
            "blockers": [
                "medium mode requires at least 2 implementation files; found 1",
                "medium mode requires at least 50 changed implementation lines; found 20",
                "medium mode requires at least 1 pass-to-pass regression tests",
            ],
            "metrics": {"implementationFiles": 1, "implementationChangedLines": 20, "testFiles": 1},
            "warnings": [
                "dropped unknown key reviewer",
                "prompt mentions the source PR number (42)",
            ],
        },
    )


def words_per_line(text: str) -> list[str]:
    """Output lines with runs of blanks collapsed: the table's padding is rich's business."""
    return [" ".join(line.split()) for line in text.splitlines()]


def test_audit_human_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_task_files(tmp_path / "ok")
    write_task_files(tmp_path / "bad", definition(prompt="Fix #42."), tests=b"")

    code, out, err = run(capsys, "audit", str(tmp_path / "ok"))
    assert (code, err) == (0, "")
    assert words_per_line(out) == [
        f"accepted {TASK_ID}",
        "implementation files 1",
        "implementation changed lines 20",
        "held-out test files 1",
    ]

    code, out, err = run(capsys, "audit", str(tmp_path / "bad"))
    assert (code, err) == (1, "")
    assert words_per_line(out) == [
        f"rejected {TASK_ID}",
        "implementation files 1",
        "implementation changed lines 20",
        "held-out test files 0",
        "blocker: held-out test patch changes no files",
        "warning: prompt mentions the source PR number (42)",
    ]


def test_audit_missing_task_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_task_files(tmp_path / TASK_ID)
    (tmp_path / TASK_ID / "gold.patch").unlink()
    missing = tmp_path / TASK_ID / "gold.patch"

    assert run(capsys, "audit", str(tmp_path / TASK_ID), "--json") == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )


def test_audit_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope" / "definition.json"

    assert run(capsys, "audit", str(tmp_path / "nope")) == (
        2,
        "",
        f"error: cannot read {missing}: No such file or directory\n",
    )


def test_audit_invalid_definition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_task_files(tmp_path / TASK_ID, definition(difficulty="x", testCommand="pytest"))

    assert run(capsys, "audit", str(tmp_path / TASK_ID), "--json") == (
        2,
        "",
        (
            "error: difficulty: must be one of easy, medium, hard\n"
            'error: testCommand: testCommand must contain "{tests}"\n'
        ),
    )


# --- submit ------------------------------------------------------------------------------------


def submit_files(tmp_path: Path, value: dict[str, Any], tests: bytes, gold: bytes) -> list[str]:
    """Write the three inputs of `selfbench submit`; return its file options."""
    inputs = tmp_path / "inputs"
    inputs.mkdir(exist_ok=True)
    (inputs / "test.patch").write_bytes(tests)
    (inputs / "gold.patch").write_bytes(gold)
    return [
        "--definition",
        write_json(inputs / "definition.json", value),
        "--test-patch",
        str(inputs / "test.patch"),
        "--gold-patch",
        str(inputs / "gold.patch"),
    ]


def test_submit_files(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = submit_files(tmp_path, definition(), TESTS, GOLD)

    assert run(capsys, "submit", *options) == (0, f"Submitted {TASK_ID}.\n", "")
    assert (root / TASK_ID / "gold.patch").read_bytes() == GOLD
    assert (root / TASK_ID / "test.patch").read_bytes() == TESTS


def test_submit_prints_the_warnings_it_accepted(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = definition(prompt="Finish #42 in module_0.py.")
    options = submit_files(tmp_path, value, TESTS, GOLD)

    assert run(capsys, "submit", *options) == (
        0,
        f"Submitted {TASK_ID}.\n",
        (
            "warning: prompt mentions the source PR number (42)\n"
            "warning: prompt mentions a gold file name (module_0.py)\n"
        ),
    )
    source = write_json(tmp_path / "args.json", arguments(prompt="Finish #42."))
    other = tmp_path / "other"
    other.mkdir()
    assert run(capsys, "submit", "--args", source, "--output-root", str(other)) == (
        0,
        f"Submitted {TASK_ID}.\n",
        "warning: prompt mentions the source PR number (42)\n",
    )
    again = tmp_path / "again"
    again.mkdir()
    assert run(capsys, "submit", *options, "--output-root", str(again), "--no-preflight") == (
        0,
        f"Submitted {TASK_ID}.\n",
        "",
    )


def test_submit_args(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_json(tmp_path / "args.json", arguments())

    assert run(capsys, "submit", "--args", source) == (0, f"Submitted {TASK_ID}.\n", "")
    assert sorted(entry.name for entry in (root / TASK_ID).iterdir()) == [
        "definition.json",
        "gold.patch",
        "test.patch",
    ]


def test_submit_output_root_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    other.mkdir()
    source = write_json(tmp_path / "args.json", arguments())

    assert run(capsys, "submit", "--args", source, "--output-root", str(other)) == (
        0,
        f"Submitted {TASK_ID}.\n",
        "",
    )
    assert (other / TASK_ID / "gold.patch").read_bytes() == GOLD


def test_submit_refused_by_preflight(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = submit_files(tmp_path, definition(difficulty="medium"), b"", GOLD)

    assert run(capsys, "submit", *options) == (
        1,
        "",
        (
            "error: test.patch is not a Git patch\n"
            "error: medium mode requires at least 2 implementation files; found 1\n"
            "error: medium mode requires at least 50 changed implementation lines; found 20\n"
            "error: held-out test patch changes no files\n"
            "error: medium mode requires at least 1 pass-to-pass regression tests\n"
        ),
    )
    assert list(root.iterdir()) == []


def test_submit_without_preflight(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = submit_files(tmp_path, definition(difficulty="medium"), b"", GOLD)

    assert run(capsys, "submit", *options, "--no-preflight") == (0, f"Submitted {TASK_ID}.\n", "")
    assert (root / TASK_ID / "test.patch").read_bytes() == b""


def test_submit_twice(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_json(tmp_path / "args.json", arguments())
    run(capsys, "submit", "--args", source)

    assert run(capsys, "submit", "--args", source) == (
        2,
        "",
        f"error: task {TASK_ID} already exists: {root / TASK_ID}\n",
    )


def test_submit_invalid_definition(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = submit_files(tmp_path, definition(sourcePr=0, reviewer="me"), TESTS, GOLD)

    assert run(capsys, "submit", *options) == (
        2,
        "",
        (
            "error: definition.sourcePr: must be at least 1\n"
            "error: definition.reviewer: is not allowed (unknown key)\n"
        ),
    )


def test_submit_not_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(OUTPUT_ENV, raising=False)
    source = write_json(tmp_path / "args.json", arguments())

    assert run(capsys, "submit", "--args", source) == (
        2,
        "",
        "error: SELFBENCH_TASK_OUTPUT is not configured\n",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["submit"], "missing --definition, --test-patch, --gold-patch (or give --args)"),
        (
            ["submit", "--definition", "d.json"],
            "missing --test-patch, --gold-patch (or give --args)",
        ),
        (
            ["submit", "--args", "a.json", "--definition", "d.json"],
            "--args replaces --definition, --test-patch and --gold-patch",
        ),
    ],
)
def test_submit_usage_errors(
    argv: list[str], message: str, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, *argv) == (2, "", f"error: {message}\n")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["check"],
        ["audit", "a", "b"],
        ["submit", "--bogus"],
        ["check", "x", "--mode", "lax"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: selfbench")
    assert captured.err.splitlines()[-1].startswith("error: ")


COMMANDS = (
    "schema,check,audit,submit,compile,refresh,collect,validate,repair-check,mcp,import-swebench,"
    "export-swebench,export,verify,extract,review,toolchains,mine,draft,run,status,eval,report,quality,demo"
)


def test_the_commands_are_registered_in_their_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "no-such-command")
    assert code == 2
    assert "{" + COMMANDS + "}" in err  # the usage line, however wide the terminal


def test_each_command_line_module_stays_under_the_module_limit() -> None:
    package = Path(main.__code__.co_filename).parent
    modules = sorted(package.glob("*.py"))
    assert len(modules) == 15  # the commands, their options, the reference and the reports
    long = {
        module.name: n for module in modules if (n := len(module.read_text().splitlines())) >= 600
    }
    assert long == {}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["validate", "x", "--setup-env", "1BAD"],
            "--setup-env 1BAD: not an environment variable name",
        ),
        (
            ["compile", "a", "b", "--repo", "r", "--out", "o"],
            "--out names the bundle of exactly one TASK_DIR",
        ),
        (
            ["validate", "a", "b", "--env", "harbor", "--definition", "d.json"],
            "--definition names the definition of exactly one bundle",
        ),
        (
            ["validate", "a", "--env", "harbor", "--definition", "d.json", "--repo", "r"],
            "--definition names a bundle's definition; --repo takes task dirs",
        ),
    ],
    ids=["setup-env-name", "compile-out", "definition-one", "definition-repo"],
)
def test_option_refusals_are_one_line_and_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = ["--jobs-dir", str(tmp_path / "jobs")] if "harbor" in argv else []
    assert main([*argv, *jobs]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not (tmp_path / "jobs").exists()


# --- progress of draft and validate (one helper, cli.common.progress) ---------------------------


def _verdict(item: tuple[str, bool, str | None]) -> tuple[str, bool, str | None]:
    return item


def test_progress_writes_a_line_per_item_when_stderr_is_no_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with progress(2, "validating", ("accepted", "rejected"), _verdict) as on_done:
        on_done(("task-a", True, None))
        on_done(("task-b", False, "oracle: fail-to-pass failed"))
    assert capsys.readouterr().err == (
        "task-a: accepted\ntask-b: rejected: oracle: fail-to-pass failed\n"
    )


def test_progress_draws_a_bar_at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = os.openpty()
    with open(follower, "w", encoding="utf-8") as terminal:  # noqa: PTH123 - a pty's descriptor
        monkeypatch.setattr(sys, "stderr", terminal)
        with progress(2, "drafting", ("drafted", "rejected"), _verdict) as on_done:
            on_done(("cand-1", True, None))
            on_done(("cand-2", False, "no test"))
        terminal.flush()
    shown = b""
    while select.select([leader], [], [], 0.2)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))
    assert "drafted cand-1" in text
    assert "rejected cand-2" in text
    assert "drafting" in text  # the bar's label
    assert "cand-1: drafted" not in text  # not the plain lines


@pytest.mark.parametrize(
    ("accepted", "said", "unsaid"),
    [
        (1, ["export  x.tar.gz  (verified)", "selfbench review x.tar.gz"], ["holds no task"]),
        (
            0,
            [
                "export  x.tar.gz  holds no task: no candidate was accepted",
                "selfbench status x.run    # why each candidate was rejected",
            ],
            ["(verified)", "selfbench review", "selfbench eval"],
        ),
    ],
    ids=["a-benchmark", "no-task"],
)
def test_a_run_s_ending_says_what_its_export_holds(
    accepted: int, said: list[str], unsaid: list[str]
) -> None:
    """An export of no task is not announced as a benchmark to review and evaluate."""
    console = Console(record=True, width=200)
    tier = TierSummary("easy", budget=2, accepted=accepted, rejected=3, pool=5)
    summary = RunSummary(Path("x.run"), (tier,), Path("x.tar.gz"))

    _print_summary(console, summary)

    printed = console.export_text()
    assert all(line in printed for line in said), printed
    assert not any(line in printed for line in unsaid), printed
