"""The command line's shared option groups: each shared flag is declared once in the source, and
means one thing in every command that takes it (`cli/common.py`)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from selfbench.cli import build_parser, main
from selfbench.cli.eval import _results

SRC = Path(__file__).resolve().parents[1] / "src" / "selfbench"
SHARED = (
    "--json", "-j", "--jobs", "--setup-env", "--no-host-network-config", "--resume", "--repo",
    "--source-url", "--env", "--harbor-env", "--harbor", "--deps", "--key", "--model",
)  # fmt: skip


def _declared() -> Counter[str]:
    """How many `add_argument` calls in src/selfbench name each option string."""
    found: Counter[str] = Counter()
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ):
                found.update(
                    arg.value
                    for arg in node.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                )
    return found


@pytest.mark.parametrize("flag", SHARED)
def test_a_shared_flag_is_declared_once(flag: str) -> None:
    assert _declared()[flag] == 1


def _subcommands() -> dict[str, object]:
    parser = build_parser()
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict):
            return choices
    raise AssertionError("no subcommands")


def test_every_command_declares_json_the_same_way() -> None:
    helps = set()
    for parser in _subcommands().values():
        for action in parser._actions:  # type: ignore[attr-defined]  # noqa: SLF001
            if "--json" in action.option_strings:
                helps.add((action.help, action.nargs, action.const))
            if "-j" in action.option_strings:
                assert action.metavar == "N"
    assert len(helps) == 1


def test_minus_j_below_one_is_one_message_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["validate", str(tmp_path), "-j", "0"],
        ["draft", "c1", "--repo", str(tmp_path), "--out", str(tmp_path / "o"), "-j", "0"],
        ["eval", str(tmp_path), "--agent", "nop", "-j", "0"],
    ):
        assert main(argv) == 2
        assert capsys.readouterr().err == "error: -j must be at least 1\n"


def test_schema_candidate_and_its_former_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "candidate"]) == 0
    new = capsys.readouterr().out
    assert main(["schema", "--candidate"]) == 0
    assert capsys.readouterr().out == new
    assert main(["schema"]) == 0
    assert capsys.readouterr().out != new


def test_eval_resume_dir_and_results_name_one_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", str(tmp_path), "--agent", "nop", "--resume", str(tmp_path / "a")]
    assert main([*argv, "--results", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err == "error: --resume DIR names the results directory: give no other --results\n"


@pytest.mark.parametrize(
    ("argv", "results", "resume"),
    [
        ([], "results", False),
        (["--results", "r"], "r", False),
        (["--resume"], "results", True),
        (["--results", "r", "--resume"], "r", True),
        (["--resume", "r"], "r", True),
        (["--resume", "r", "--results", "r"], "r", True),
    ],
)
def test_eval_resume_names_the_results_directory(
    argv: list[str], results: str, resume: bool
) -> None:
    args = build_parser().parse_args(["eval", "BENCH", *argv])
    assert _results(args) == (Path(results), resume)
