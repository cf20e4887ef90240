"""What a change's files make of it: documentation, CI, or code with a test a runner runs.

One rule table, each row a change (its title and files) mined from a real repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mine_history import Files, History, lines
from selfbench.mine import mine_repository
from selfbench.mine.api import CI_ONLY, DOCS_ONLY, NO_RUNNABLE_TESTS
from selfbench.mine.chores import DOCUMENTATION
from selfbench.mine.classify import classify_path, is_runnable_test

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEPT = None
TITLE = "Restructure the guide"

RULES: list[tuple[str, str, tuple[str, ...], str | None]] = [
    # kept: code and a test file a known runner runs
    ("pytest", TITLE, ("src/app.py", "tests/test_app.py"), KEPT),
    ("unittest", TITLE, ("pkg/core.py", "pkg/app_tests.py"), KEPT),
    ("jest", TITLE, ("web/button.tsx", "web/button.test.tsx"), KEPT),
    ("jest-folder", TITLE, ("web/button.js", "web/__tests__/button.js"), KEPT),
    ("vitest", TITLE, ("web/menu.ts", "web/menu.spec.ts"), KEPT),
    ("node-test", TITLE, ("lib/parse.mjs", "test/parse.mjs"), KEPT),
    ("go", TITLE, ("server/handler.go", "server/handler_test.go"), KEPT),
    ("cargo", TITLE, ("src/lib.rs", "tests/integration.rs"), KEPT),
    ("code-with-docs", TITLE, ("src/app.py", "tests/test_app.py", "docs/guide.md"), KEPT),
    ("code-with-ci", TITLE, ("src/app.py", "tests/test_app.py", ".github/workflows/ci.yml"), KEPT),
    # documentation, whatever the title says
    ("docs", TITLE, ("docs/guide.md",), DOCS_ONLY),
    ("readme-and-changelog", TITLE, ("README.md", "CHANGELOG.md"), DOCS_ONLY),
    ("mkdocs", TITLE, ("mkdocs.yml", "docs/index.md"), DOCS_ONLY),
    ("mkdocs-config-alone", TITLE, ("mkdocs.yml",), DOCS_ONLY),
    ("sphinx", TITLE, ("docs/conf.py", "docs/index.rst"), DOCS_ONLY),
    ("readthedocs", TITLE, (".readthedocs.yaml", "docs/api.rst"), DOCS_ONLY),
    ("mdx", TITLE, ("guide/intro.mdx", "guide/setup.mdx"), DOCS_ONLY),
    ("docs-with-tests", TITLE, ("docs/guide.md", "tests/test_docs.py"), DOCS_ONLY),
    ("docs-with-ci", TITLE, ("docs/guide.md", ".github/workflows/docs.yml"), DOCS_ONLY),
    ("docs-title", "docs: restructure the guide", ("src/app.py", "tests/test_app.py"),
     DOCUMENTATION),
    # CI workflows
    ("github-actions", TITLE, (".github/workflows/ci.yml",), CI_ONLY),
    ("circleci", TITLE, (".circleci/config.yml",), CI_ONLY),
    ("gitlab-with-tests", TITLE, (".gitlab-ci.yml", "tests/test_app.py"), CI_ONLY),
    ("jenkins", TITLE, ("Jenkinsfile", ".github/dependabot.yml"), CI_ONLY),
    # code without a test file a known runner runs
    ("no-tests", TITLE, ("src/app.py",), NO_RUNNABLE_TESTS),
    ("a-fixture-only", TITLE, ("src/app.py", "tests/conftest.py"), NO_RUNNABLE_TESTS),
    ("test-data-only", TITLE, ("src/app.py", "tests/fixtures/data.json"), NO_RUNNABLE_TESTS),
    ("rspec", TITLE, ("app/user.rb", "spec/models/user_spec.rb"), NO_RUNNABLE_TESTS),
    ("junit", TITLE, ("src/main/java/App.java", "src/test/java/AppTest.java"),
     NO_RUNNABLE_TESTS),
    ("vendored-tests", TITLE, ("src/app.py", "vendor/lib/tests/test_x.py"), NO_RUNNABLE_TESTS),
    # no implementation, and nothing but documentation or CI
    ("tests-only", TITLE, ("tests/test_more.py",), "no implementation changes (only tests)"),
    ("lockfile-and-docs", TITLE, ("Gemfile.lock", "docs/guide.md"),
     "no implementation changes (only docs, lockfile)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("title", "files", "reason"), [pytest.param(*row[1:], id=row[0]) for row in RULES]
)
def test_a_change_is_kept_or_excluded_by_its_files(
    tmp_path: Path, title: str, files: tuple[str, ...], reason: str | None
) -> None:
    h = History.create(tmp_path / "repo")
    root = h.commit(
        "Initial commit", {"src/base.py": lines(3), "tests/test_base.py": lines(3, "t")}
    )
    change = h.commit(f"{title} (#1)", {path: lines(30, f"f{at}") for at, path in enumerate(files)})
    result = mine_repository(h.path)
    if reason is None:
        assert [(c.id, c.completed_commit) for c in result.candidates] == [("pr-1", change)]
        assert all(c.tests_changed for c in result.candidates)
    else:
        assert result.candidates == ()
        assert [(e.commit, e.reason) for e in result.excluded] == [
            (change, reason),
            (root, "the first commit has no base"),
        ]


@pytest.mark.parametrize(
    ("path", "runnable"),
    [
        ("tests/test_app.py", True),
        ("pkg/app_tests.py", True),
        ("web/button.test.tsx", True),
        ("web/__tests__/button.js", True),
        ("test/parse.mjs", True),
        ("server/handler_test.go", True),
        ("tests/integration.rs", True),
        ("tests/conftest.py", False),
        ("tests/__init__.py", False),
        ("tests/fixtures/test_data.py", False),
        ("tests/helpers/util.js", False),
        ("spec/models/user_spec.rb", False),
        ("src/test/java/AppTest.java", False),
        ("crate/src/parser_test.rs", False),
    ],
)
def test_the_runnable_test_files(path: str, runnable: bool) -> None:
    assert classify_path(path)[0] == "tests"
    assert is_runnable_test(path) is runnable


def test_drafting_reads_runnable_test_files_by_mining_s_rule() -> None:
    """One rule, in mining: a candidate mining keeps has a test file drafting runs."""
    from selfbench.draft.split import is_runnable_test as drafted  # noqa: PLC0415

    assert drafted is is_runnable_test


UNCHANGED = lines(30, "t")
"""The test file as the base holds it."""


@pytest.mark.parametrize(
    ("case", "before", "test_file", "reason"),
    [
        ("removes the test file", "", None, NO_RUNNABLE_TESTS),
        ("only removes a test's marker", "", lines(20, "t"), KEPT),  # an xfail gone: fail-to-pass
        ("adds to the test file", "", lines(40, "t"), KEPT),
        # parse's "modern packaging": its one test change was test_parse.py's mode
        ("only changes the test file's mode", "chmod", UNCHANGED, NO_RUNNABLE_TESTS),
        ("only renames the test file", "rename", None, NO_RUNNABLE_TESTS),
        ("changes the test file's mode and adds to it", "chmod", lines(40, "t"), KEPT),
        ("renames the test file and adds to it", "rename", lines(40, "t"), KEPT),
        ("makes the test file binary", "", b"\0" + UNCHANGED.encode(), KEPT),  # numstat's `-`
    ],
)  # fmt: skip
def test_a_change_that_removes_its_test_files_has_none_to_hold_out(
    tmp_path: Path,
    case: str,
    before: str,
    test_file: str | bytes | None,
    reason: str | None,
) -> None:
    """commander's "Remove jest esm examples" removed its two spec files with the code, and
    reached drafting with no test file to run; a test file whose lines are all as they were
    holds no test either."""
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {"src/app.py": lines(30), "tests/test_app.py": UNCHANGED})
    test_path = "tests/test_app.py"
    if before == "chmod":
        (h.path / test_path).chmod(0o755)
    elif before == "rename":
        h.git("mv", test_path, "tests/test_core.py")
        test_path = "tests/test_core.py"
    files: Files = {"src/app.py": lines(30, "changed")}
    if test_file is not None or not before:
        files[test_path] = test_file
    change = h.commit(f"{TITLE} (#1)", files)
    result = mine_repository(h.path)
    excluded = [e.reason for e in result.excluded if e.commit == change]
    assert excluded == ([] if reason is None else [reason]), case
