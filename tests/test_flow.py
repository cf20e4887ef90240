"""The one-step flow: authored task directories → compile → validate → export, no extra flags.

The getting-started walk-through (docs/), command for command, on a real repository; and
compile's refusals of a base or patches that cannot make a task (a merge commit, a `--no-prefix`
patch, a patch that does not apply), before anything runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from projects import Project, build, git
from selfbench.cli import main
from selfbench.export import verify_export

PY_SETUP = "python3 -m venv --system-site-packages --without-pip .venv"
ADD = "def add(a, b):\n    return a + b\n"
TEST_ADD = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
PROJECT = Project(
    base={
        ".gitignore": ".venv/\n__pycache__/\n",
        "calc/__init__.py": ADD,
        "tests/test_core.py": TEST_ADD,
    },
    gold={"calc/__init__.py": f"{ADD}\n\ndef mul(a, b):\n    return a * b\n"},
    tests={"tests/test_mul.py": TEST_MUL},
    definition={
        "taskId": "calc-mul",
        "setupCommand": PY_SETUP,
        "testCommand": ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}",
        "failToPass": ["tests/test_mul.py"],
        "passToPass": ["tests/test_core.py"],
        "toolchains": ["python"],
    },
)

needs_sandbox = pytest.mark.sandbox


def _authored(tmp_path: Path) -> tuple[Path, list[Path]]:
    """The repository and two authored task directories (no bundle yet)."""
    collected = build(PROJECT, tmp_path)
    shutil.rmtree(collected)
    first = tmp_path / "authored" / "calc-mul"
    second = tmp_path / "authored" / "calc-mul-again"
    shutil.copytree(first, second)
    definition = json.loads((second / "definition.json").read_text())
    (second / "definition.json").write_text(json.dumps({**definition, "taskId": second.name}))
    return tmp_path / "repo", [first, second]


@needs_sandbox
def test_the_walk_through_goes_from_task_directories_to_one_verified_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, tasks = _authored(tmp_path)
    names = [str(task) for task in tasks]
    commit = git(repo, "rev-parse", "HEAD").strip()
    out = tmp_path / "run.tar.gz"
    export = ["export", *names, "--run-id", "run-1", "--out", str(out)]
    export += ["--repository-url", "https://example.com/calc", "--repository-commit", commit]

    assert main(["compile", *names, "--repo", str(repo)]) == 0
    assert capsys.readouterr().out == "".join(
        f"Compiled {task.name} into {task / 'harbor-task'}\n" for task in tasks
    )
    assert main(export) == 2
    assert capsys.readouterr().err == (
        "error: task calc-mul has no accepted validation report (no validation report);"
        " validate it, or leave it out with --skip-unvalidated\n"
    )
    assert main(["validate", *names]) == 0
    capsys.readouterr()
    assert main(export) == 0
    assert capsys.readouterr().out == f"Exported 2 of 2 tasks to {out}\n"
    assert [task.task_id for task in verify_export(out).manifest.tasks] == [
        "calc-mul",
        "calc-mul-again",
    ]


@needs_sandbox
def test_validate_with_repo_compiles_task_directories_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, tasks = _authored(tmp_path)
    assert main(["validate", str(tasks[0]), "--repo", str(repo), "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["accepted"] is True
    assert not (tasks[0] / "harbor-task").exists()
    written = json.loads((tasks[0] / "validation.json").read_text())
    assert written["accepted"] is True
    # The compiled bundle is the one validate compiled: its report counts for export.
    assert main(["compile", str(tasks[0]), "--repo", str(repo)]) == 0
    out = tmp_path / "one.tar.gz"
    commit = git(repo, "rev-parse", "HEAD").strip()
    export = ["export", str(tasks[0]), "--run-id", "r", "--out", str(out)]
    export += ["--repository-url", "https://example.com/calc", "--repository-commit", commit]
    assert main(export) == 0


def test_export_leaves_out_unvalidated_tasks_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, tasks = _authored(tmp_path)
    names = [str(task) for task in tasks]
    assert main(["compile", *names, "--repo", str(repo)]) == 0
    out = tmp_path / "run.tar.gz"
    commit = git(repo, "rev-parse", "HEAD").strip()
    export = ["export", *names, "--run-id", "r", "--out", str(out), "--skip-unvalidated"]
    export += ["--repository-url", "https://example.com/calc", "--repository-commit", commit]
    capsys.readouterr()
    assert main(export) == 0
    assert capsys.readouterr().out == (
        f"Exported 0 of 2 tasks to {out}\n"
        "left out calc-mul: no validation report\n"
        "left out calc-mul-again: no validation report\n"
    )


def test_messages_name_only_options_the_command_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, tasks = _authored(tmp_path)
    bundle = tmp_path / "bundle"
    assert main(["compile", str(tasks[0]), "--repo", str(repo), "--out", str(bundle)]) == 0
    capsys.readouterr()
    assert main(["export", str(bundle), "--run-id", "r", "--out", str(tmp_path / "x.tar.gz"),
                 "--repository-url", "u", "--repository-commit", "0" * 40]) == 2  # fmt: skip
    assert capsys.readouterr().err == f"error: {bundle}: no definition.json beside the bundle\n"
    assert main(["validate", str(bundle), "--env", "harbor"]) == 2
    assert capsys.readouterr().err == (
        f"error: {bundle}: no definition.json beside the bundle; name it with --definition\n"
    )
    assert main(["validate", str(tasks[0]), "--env", "harbor"]) == 2
    assert capsys.readouterr().err == (
        f"error: {tasks[0]}: a task directory with no harbor-task/ yet; compile it first\n"
    )


def _merge_base(repo: Path, into: str = "main") -> str:
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", into)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "side")
    return git(repo, "rev-parse", "HEAD").strip()


def test_compile_accepts_a_merge_commit_base_where_the_patches_apply(tmp_path: Path) -> None:
    repo, [task, _] = _authored(tmp_path)
    definition = json.loads((task / "definition.json").read_text())
    git(repo, "checkout", "-q", "-b", "before", definition["baseCommit"])
    definition["baseCommit"] = _merge_base(repo, "before")  # a merged pull request's base
    (task / "definition.json").write_text(json.dumps(definition))
    assert main(["compile", str(task), "--repo", str(repo)]) == 0


def _no_prefix(task: Path, repo: Path) -> None:
    base = json.loads((task / "definition.json").read_text())["baseCommit"]
    patch = git(repo, "diff", "--no-prefix", "--binary", base, "main", "--", "tests")
    (task / "test.patch").write_text(patch)


def _not_applying(task: Path, _repo: Path) -> None:
    gold = (task / "gold.patch").read_text().replace(" def add(a, b):", " def add(x, y):")
    (task / "gold.patch").write_text(gold)


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("merge", ("test.patch does not apply at baseCommit {base}: tests/test_mul.py: already"
                   " exists in index; it is a merge commit: name the parent the change was made"
                   " on")),
        ("no-prefix", ("test.patch names tests/test_mul.py without a/ and b/ prefixes"
                      " (made with --no-prefix?); make it with plain git diff")),
        ("not-applying", ("gold.patch does not apply at baseCommit {base}: "
                         "calc/__init__.py: patch does not apply")),
    ],
)  # fmt: skip
def test_compile_refuses_a_base_or_patch_that_cannot_make_a_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, expected: str
) -> None:
    repo, [task, _] = _authored(tmp_path)
    git(repo, "checkout", "-q", "main")
    definition = json.loads((task / "definition.json").read_text())
    if case == "merge":
        definition["baseCommit"] = _merge_base(repo)
        (task / "definition.json").write_text(json.dumps(definition))
    elif case == "no-prefix":
        _no_prefix(task, repo)
    else:
        _not_applying(task, repo)
    before = git(repo, "status", "--porcelain")
    assert main(["compile", str(task), "--repo", str(repo)]) == 2
    base = definition["baseCommit"]
    assert capsys.readouterr().err == f"error: {expected.format(base=base)}\n"
    assert not (task / "harbor-task").exists()
    assert git(repo, "status", "--porcelain") == before
