"""Splitting a candidate's change into held-out tests, gold and the files left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mine_history import History, untested_candidate
from selfbench._git import git
from selfbench._sample_history import build_sample_history
from selfbench.audit import audit
from selfbench.contract import AUTHORING_DEFAULTS, parse_definition
from selfbench.draft.split import SplitChange, is_runnable_test, split_change
from selfbench.errors import DraftError
from selfbench.mine import CandidateModel, mine_repository
from selfbench.patches import parse_patch


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_history(tmp_path_factory.mktemp("history"))


@pytest.fixture(scope="module")
def candidates(sample: Path) -> dict[str, CandidateModel]:
    mined = mine_repository(sample)
    return {c.id: CandidateModel.model_validate(c.to_json()) for c in mined.candidates}


def _git_diff(repo: Path, candidate: CandidateModel, paths: tuple[str, ...]) -> bytes:
    base, completed = candidate.baseCommit, candidate.completedCommit
    return git(repo, "diff", "--binary", "-M", base, completed, "--", *paths)


def _definition(candidate: CandidateModel, split: SplitChange, passing: int) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "difficulty": candidate.difficulty,
        "taskId": candidate.id,
        "repo": "example/unitkit",
        "baseCommit": candidate.baseCommit,
        "workdir": ".",
        "setupCommand": "true",
        "testCommand": "python -m pytest {tests}",
        "failToPass": list(split.test_files),
        "passToPass": [f"tests/test_length.py::test_{n}" for n in range(passing)],
        "testPaths": list(split.test_files),
        "toolchains": ["python"],
        "sourcePr": candidate.sourcePr,
        "sourceUrl": "https://example.com/example/unitkit/pull/1",
        "prompt": "Do it.",
        **AUTHORING_DEFAULTS,
    }


def test_the_hard_change_splits_into_tests_gold_and_a_changelog_left_out(
    sample: Path, candidates: dict[str, CandidateModel]
) -> None:
    split = split_change(sample, candidates["pr-4"])

    assert split.test_files == (
        "tests/test_convert.py",
        "tests/test_formatting.py",
        "tests/test_temperature.py",
    )
    assert split.gold_files == (
        "pyproject.toml",
        "src/unitkit/__init__.py",
        "src/unitkit/convert.py",
        "src/unitkit/formatting.py",
        "src/unitkit/temperature.py",
    )
    assert split.left_out == (("CHANGELOG.md", "changelog"),)
    assert split.support_files == ()


@pytest.mark.parametrize("candidate_id", ["pr-1", "pr-3", "pr-4", "pr-5"])
def test_both_patches_are_byte_exact_git_diffs_that_pass_the_audit(
    sample: Path, candidates: dict[str, CandidateModel], candidate_id: str
) -> None:
    candidate = candidates[candidate_id]
    split = split_change(sample, candidate)

    assert split.test_patch == _git_diff(sample, candidate, split.test_files + split.support_files)
    assert split.gold_patch == _git_diff(sample, candidate, split.gold_files)
    definition = parse_definition(_definition(candidate, split, passing=2)).definition
    gold, tests = parse_patch(split.gold_patch), parse_patch(split.test_patch)
    report = audit(definition, gold, tests)
    assert report.blockers == ()
    assert report.implementation_files == len(split.gold_files)


def test_a_fixture_goes_with_the_tests_but_is_not_run(
    sample: Path, candidates: dict[str, CandidateModel]
) -> None:
    split = split_change(sample, candidates["pr-3"])

    assert split.test_files == ("tests/test_formatting.py", "tests/test_mass.py")
    assert split.support_files == ("tests/conftest.py",)
    assert b"diff --git a/tests/conftest.py b/tests/conftest.py" in split.test_patch


def test_a_change_without_tests_is_refused(
    sample: Path, candidates: dict[str, CandidateModel]
) -> None:
    assert "pr-6" not in candidates  # mining excludes it: no test file a known runner runs
    untested = CandidateModel.model_validate(untested_candidate(sample, 6).to_json())

    with pytest.raises(DraftError) as caught:
        split_change(sample, untested)

    assert str(caught.value) == "pr-6: the change has no test files to hold out"


def test_a_commit_outside_the_repository_is_refused(
    sample: Path, candidates: dict[str, CandidateModel]
) -> None:
    stranger = candidates["pr-1"].model_copy(update={"baseCommit": "ab" * 20})

    with pytest.raises(DraftError) as caught:
        split_change(sample, stranger)

    assert str(caught.value) == f"pr-1: base commit {'ab' * 20} is not in {sample}"


_BEFORE = {
    "src/app.js": "module.exports = () => 1;\n",
    "src/helper.py": "".join(f"HELP_{n} = {n}\n" for n in range(30)),
    "src/a b.py": "x = 1\n",
    "jest.config.js": "module.exports = {};\n",
    "package.json": '{"name": "app"}\n',
    "docs/guide.md": "# Guide\n",
}
_AFTER = {
    "src/app.js": "module.exports = () => 2;\n",
    "src/a b.py": "x = 2\n",
    "src/:(glob)*.py": "y = 1\n",
    "src/helper.py": None,
    "tests/helper_test.py": "".join(f"HELP_{n} = {n}\n" for n in range(30)) + "X = 1\n",
    "__tests__/app.test.js": "test('two', () => expect(require('../src/app')()).toBe(2));\n",
    "__tests__/__snapshots__/app.test.js.snap": "exports[`two 1`] = `2`;\n",
    "tests/data/blob.bin": b"\x00\x01\xff binary \x00",
    "jest.config.js": "module.exports = { testTimeout: 5000 };\n",
    "package.json": '{"name": "app", "version": "2.0.0"}\n',
    "package-lock.json": '{"lockfileVersion": 3}\n',
    "docs/guide.md": "# Guide\n\nMore.\n",
    "vendor/lib.js": "var vendored = 1;\n",
    "node_modules/left/index.js": "module.exports = 1;\n",
    ".github/workflows/ci.yml": "on: push\n",
    "CHANGES.rst": "2.0\n",
    ".gitignore": "dist/\n",  # housekeeping: classed other, but kept in the gold as before
}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, CandidateModel]:
    """A change touching every kind of file, with a rename from source to tests."""
    history = History.create(tmp_path_factory.mktemp("mixed") / "repo")
    base = history.commit("base", dict(_BEFORE))
    completed = history.commit("Everything at once (#7)", dict(_AFTER))
    return history, _candidate("pr-7", base, completed)


def _candidate(identifier: str, base: str, completed: str) -> CandidateModel:
    """A candidate naming two commits; what splitting reads of it is only these."""
    return CandidateModel.model_validate(
        {
            "id": identifier,
            "kind": "squash",
            "repo": "example/app",
            "sourcePr": 7,
            "sourceUrl": None,
            "baseCommit": base,
            "completedCommit": completed,
            "mergedAt": 0,
            "title": "t",
            "body": "",
            "author": "a",
            "headBranch": None,
            "metadata": "git",
            "difficulty": "easy",
            "eligibleTiers": ["easy"],
            "score": 0,
            "scoreParts": {"tests": 0, "size": 0, "recency": 0},
            "testsChanged": True,
            "ecosystems": [],
            "toolchains": [],
            "totals": {},
            "files": [],
            "requests": [],
        }
    )


def test_every_kind_of_file_goes_where_it_belongs(mixed: tuple[History, CandidateModel]) -> None:
    history, candidate = mixed

    split = split_change(history.path, candidate)

    assert split.test_files == ("__tests__/app.test.js", "tests/helper_test.py")
    assert split.support_files == (
        "__tests__/__snapshots__/app.test.js.snap",
        "jest.config.js",
        "tests/data/blob.bin",
    )
    assert split.gold_files == (
        ".gitignore",
        "package-lock.json",
        "package.json",
        "src/:(glob)*.py",
        "src/a b.py",
        "src/app.js",
        "src/helper.py",
    )
    assert split.left_out == (
        (".github/workflows/ci.yml", "ci"),
        ("CHANGES.rst", "changelog"),
        ("docs/guide.md", "docs"),
        ("node_modules/left/index.js", "a cache or installed file"),
        ("vendor/lib.js", "vendored"),
    )


def test_a_rename_across_parts_is_a_deletion_and_an_addition(
    mixed: tuple[History, CandidateModel],
) -> None:
    history, candidate = mixed

    split = split_change(history.path, candidate)

    gold, tests = parse_patch(split.gold_patch), parse_patch(split.test_patch)
    assert not set(gold.paths) & set(tests.paths)
    deletion = next(c for c in gold.files if c.old_path == "src/helper.py")
    assert (deletion.status, deletion.new_path) == ("deleted", None)
    addition = next(c for c in tests.files if c.new_path == "tests/helper_test.py")
    assert (addition.status, addition.old_path) == ("added", None)
    binary = next(c for c in tests.files if c.path == "tests/data/blob.bin")
    assert binary.binary
    assert b"GIT binary patch" in split.test_patch


def test_the_patches_apply_at_the_base_and_rebuild_the_completed_tree(
    mixed: tuple[History, CandidateModel], tmp_path: Path
) -> None:
    history, candidate = mixed
    split = split_change(history.path, candidate)
    checkout = tmp_path / "checkout"
    git(history.path, "worktree", "add", "--quiet", "--detach", str(checkout), candidate.baseCommit)
    try:
        git(checkout, "apply", "--binary", "--index", stdin=split.test_patch)
        git(checkout, "apply", "--binary", "--index", stdin=split.gold_patch)
        changed = git(checkout, "diff", "--name-only", candidate.completedCommit).decode()
    finally:
        git(history.path, "worktree", "remove", "--force", str(checkout))

    left_out = {path for path, _ in split.left_out}
    assert set(changed.splitlines()) == left_out


@pytest.mark.parametrize(
    ("path", "runnable"),
    [
        ("tests/test_x.py", True),
        ("tests/x_test.py", True),
        ("app/tests.py", True),
        ("tests/conftest.py", False),
        ("tests/__init__.py", False),
        ("tests/helpers/test_util.py", False),
        ("tests/fixtures/test_data.py", False),
        ("src/app.test.ts", True),
        ("src/app.spec.mjs", True),
        ("__tests__/app.js", True),
        ("test/app.js", True),
        ("test/index.cjs", True),
        ("__tests__/__snapshots__/app.test.js.snap", False),
        ("pkg/server_test.go", True),
        ("pkg/testdata/case.txt", False),
        ("tests/integration.rs", True),
        ("tests/data/blob.bin", False),
        ("jest.config.js", False),
    ],
)
def test_runnable_test_files(path: str, runnable: bool) -> None:
    assert is_runnable_test(path) is runnable


def test_a_runner_named_package_the_base_tracks_is_the_gold(tmp_path: Path) -> None:
    # pluggy's own repository: src/pluggy/ is its code; a new pytest.py or pytest/ would shadow
    # the runner, so they stay out of the gold patch.
    history = History.create(tmp_path / "repo")
    base = history.commit(
        "base",
        {
            "src/pluggy/__init__.py": "from ._hooks import hook\n",
            "src/pluggy/_hooks.py": "def hook():\n    return 1\n",
            "testing/test_hooks.py": "def test_one():\n    assert True\n",
        },
    )
    completed = history.commit(
        "Hooks return two (#8)",
        {
            "src/pluggy/_hooks.py": "from ._result import TWO\n\ndef hook():\n    return TWO\n",
            "src/pluggy/_result.py": "TWO = 2\n",
            "testing/test_hooks.py": "def test_two():\n    assert True\n",
            "pytest.py": "raise SystemExit(0)\n",
            "pytest/__init__.py": "\n",
        },
    )

    split = split_change(history.path, _candidate("pr-8", base, completed))

    assert split.gold_files == ("src/pluggy/_hooks.py", "src/pluggy/_result.py")
    assert split.test_files == ("testing/test_hooks.py",)
    assert split.support_files == ("pytest.py",)
    assert split.left_out == (("pytest/__init__.py", "a cache or installed file"),)
