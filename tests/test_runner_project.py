"""A project whose own package is named like a runner's (`src/pluggy/`, as in pluggy's own
repository) is drafted, validated and graded like any other: its code is the project's, not
runner control. A new `pytest.py` or `conftest.py` beside it stays out of an agent's patch.

Real git, the real draft, the real sandbox; pytest comes from the host, as in test_validate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mine_history import History
from projects import git
from selfbench.artifacts.compiled import locate_task
from selfbench.artifacts.task_dir import read_authored_task
from selfbench.audit import RUNNER_PROJECT
from selfbench.compiler import compile_task
from selfbench.draft.api import DraftOptions, draft_candidate
from selfbench.environments.local.scoring import score_patch
from selfbench.mine import mine_repository
from selfbench.mine.candidate import CandidateModel
from selfbench.task import judge_task
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner

pytestmark = pytest.mark.sandbox

# pytest itself imports the installed pluggy first, so the tests load the project's module by
# its path rather than as `pluggy._calc`.
LOADER = (
    "import importlib.util\nfrom pathlib import Path\n\n"
    '_PATH = Path(__file__).resolve().parents[1] / "src" / "pluggy" / "_calc.py"\n'
    '_SPEC = importlib.util.spec_from_file_location("project_calc", _PATH)\n'
    "calc = importlib.util.module_from_spec(_SPEC)\n_SPEC.loader.exec_module(calc)\n\n\n"
)
CONFIG = (
    'toolchains = ["python"]\n'
    'setupCommand = "python3 -m venv --system-site-packages --without-pip .venv"\n'
    'testCommand = ".venv/bin/python -m pytest -rA -p no:cacheprovider {tests}"\n'
    'runner = "pytest"\n'
)
BASE = {
    "selfbench.toml": CONFIG,
    ".gitignore": ".venv/\n__pycache__/\n",
    "src/pluggy/__init__.py": '"""A package named like pluggy, which it is not."""\n',
    "src/pluggy/_calc.py": "def add(a, b):\n    return a + b\n",
    "testing/test_add.py": LOADER + "def test_add():\n    assert calc.add(1, 2) == 3\n",
}
MUL = (
    "def add(a, b):\n    return a + b\n\n\n"
    + "".join(f"def _step_{n}(value):\n    return value\n\n\n" for n in range(6))
    + "def mul(a, b):\n    return _step_0(_step_1(_step_2(_step_3(_step_4(_step_5(a * b))))))\n"
)
TEST_MUL = LOADER + "def test_mul():\n    assert calc.mul(2, 3) == 6\n"
SOURCE = "https://github.com/example/calc"
BREAKS = "raise SystemExit('loaded')\n"
"""A `conftest.py` or `pytest.py` that fails every run that loads it."""


def _history(root: Path) -> tuple[History, CandidateModel]:
    history = History.create(root / "repo")
    history.commit("base", dict(BASE))
    history.commit(
        "Multiply in the calculator (#3)",
        {"src/pluggy/_calc.py": MUL, "testing/test_mul.py": TEST_MUL},
    )
    mined = mine_repository(history.path)
    [candidate] = [c for c in mined.candidates if c.source_pr == 3]
    return history, CandidateModel.model_validate(candidate.to_json())


def _agent_patch(repo: Path, base: str, files: dict[str, str]) -> bytes:
    """The agent's work as the collect step writes it: a binary diff against the base."""
    work = repo.parent / "agent"
    git(repo, "worktree", "add", "-q", "--detach", str(work), base)
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    git(work, "add", "-A")
    return git(work, "diff", "--cached", "--binary", "HEAD").encode("utf-8")


def test_a_project_named_like_pluggy_is_drafted_validated_and_graded(tmp_path: Path) -> None:
    history, candidate = _history(tmp_path)
    out = tmp_path / "tasks"
    local = LocalOptions(logs=tmp_path / "logs")

    result = draft_candidate(
        history.path, candidate, out, DraftOptions(reruns=2, local=local, source_url_base=SOURCE)
    )

    assert (result.status, result.reason) == ("drafted", None), result.reason
    task = read_authored_task(out / candidate.id)
    assert task.definition.failToPass == ("testing/test_mul.py::test_mul",)
    verdict = judge_task(task.loaded, task.test_patch, task.gold_patch)
    assert verdict.blockers == ()
    assert verdict.warnings == (RUNNER_PROJECT.format(project="pluggy"),)

    compile_task(out / candidate.id, repo=history.path)
    [report] = validate([out / candidate.id], runner=LocalRunner(local))
    assert (report.accepted, report.reason) == (True, None)
    assert report.nop.reward is not None
    assert (report.nop.reward.fail_to_pass, report.nop.reward.patch_applied) == (0, 1)
    assert report.oracle.reward is not None
    assert report.oracle.reward.reward == 1

    fix = {"src/pluggy/_calc.py": MUL}
    runner_files = {"conftest.py": BREAKS, "pytest.py": BREAKS, "testing/conftest.py": BREAKS}
    located = locate_task(out / candidate.id)
    for files, reward in (({**fix, **runner_files}, 1), (runner_files, 0)):
        patch = _agent_patch(history.path, candidate.baseCommit, files)
        scored = score_patch(located, patch, options=local)
        assert scored.reward is not None, files
        assert (scored.reward.reward, scored.reward.patch_applied) == (reward, 1), files
        git(history.path, "worktree", "remove", "--force", str(tmp_path / "agent"))
