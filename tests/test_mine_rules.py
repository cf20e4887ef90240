"""Mining's pure rules: file classes, messages, ranking, gh metadata, and the parsers' inputs."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from selfbench.mine import MineError
from selfbench.mine.candidate import parse_candidate_lines
from selfbench.mine.classify import classify_path, detect_ecosystems, toolchains_for
from selfbench.mine.git_history import FileStat, parse_numstat, parse_record
from selfbench.mine.merged import (
    MessageFacts,
    branch_sync,
    is_merge_of_main,
    parse_message,
    reverted_commits,
    strip_number,
)
from selfbench.mine.prs import parse_pull_requests, source_url_base
from selfbench.mine.rank import Rankable, assign_tiers, eligible_tiers, score
from selfbench.rules import THRESHOLDS, is_test_only_path


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/app.py", ("implementation", "implementation")),
        ("lib/parser.ts", ("implementation", "implementation")),
        ("latest.js", ("implementation", "implementation")),
        ("src/history.py", ("implementation", "implementation")),
        ("tests/test_app.py", ("tests", "tests")),
        ("pkg/test_app.py", ("tests", "tests")),
        ("pkg/app_tests.py", ("tests", "tests")),
        ("pkg/tests.py", ("tests", "tests")),
        ("conftest.py", ("tests", "tests")),
        ("testing/helpers.py", ("tests", "tests")),
        ("web/button.test.tsx", ("tests", "tests")),
        ("web/button.spec.js", ("tests", "tests")),
        ("web/__tests__/button.js", ("tests", "tests")),
        ("web/__snapshots__/button.js.snap", ("other", "generated")),
        ("lib/util-test.js", ("tests", "tests")),
        ("test/util.mjs", ("tests", "tests")),
        ("server/handler_test.go", ("tests", "tests")),
        ("server/testdata/input.json", ("tests", "tests")),
        ("crate/tests/integration.rs", ("tests", "tests")),
        ("spec/models/user_spec.rb", ("tests", "tests")),
        ("app/models/user_spec.rb", ("tests", "tests")),
        ("src/test/java/org/AppTest.java", ("tests", "tests")),
        ("src/main/java/org/AppIT.java", ("tests", "tests")),
        ("src/main/java/org/App.java", ("implementation", "implementation")),
        ("package.json", ("dependencies", "dependencies")),
        ("web/yarn.lock", ("dependencies", "dependencies")),
        ("requirements-dev.txt", ("dependencies", "dependencies")),
        ("go.sum", ("dependencies", "dependencies")),
        ("Gemfile.lock", ("other", "lockfile")),
        ("vendor/lib/tests/test_x.py", ("other", "vendored")),
        ("third_party/zlib/zlib.c", ("other", "vendored")),
        ("web/app.min.js", ("other", "generated")),
        ("proto/api_pb2.py", ("other", "generated")),
        ("dist/bundle.js", ("other", "generated")),
        ("CHANGELOG.md", ("other", "changelog")),
        ("CHANGES", ("other", "changelog")),
        ("changelog.d/123.feature", ("other", "changelog")),
        ("releasenotes/notes/fix-1.yaml", ("other", "changelog")),
        ("docs/guide.md", ("other", "docs")),
        ("docs/conf.py", ("other", "docs")),
        ("README.rst", ("other", "docs")),
        ("LICENSE", ("other", "docs")),
        ("notes.txt", ("other", "docs")),
        (".github/workflows/ci.yml", ("other", "ci")),
        (".github/workflows/test.yml", ("other", "ci")),  # runs the tests, holds none
        (".github/workflows/tests/matrix.yml", ("other", "ci")),
        (".gitlab-ci.yml", ("other", "ci")),
        (".gitignore", ("other", "housekeeping")),
        ("src/pkg/.gitignore", ("other", "housekeeping")),
        (".git-blame-ignore-revs", ("other", "housekeeping")),
        (".mailmap", ("other", "housekeeping")),
        (".editorconfig", ("other", "housekeeping")),
        (".pre-commit-config.yaml", ("other", "housekeeping")),
        (".coveragerc", ("other", "housekeeping")),
        ("codecov.yml", ("other", "housekeeping")),
        (".codecov.yml", ("other", "housekeeping")),
        (".github/codecov.yml", ("other", "ci")),
        ("tests/.gitignore", ("tests", "tests")),
        # what can change the build or how the tests run stays implementation
        (".gitattributes", ("implementation", "implementation")),
        ("tox.ini", ("implementation", "implementation")),
        ("pytest.ini", ("implementation", "implementation")),
        (".pytest.ini", ("implementation", "implementation")),
        ("setup.cfg", ("implementation", "implementation")),
        ("Makefile", ("implementation", "implementation")),
        ("noxfile.py", ("implementation", "implementation")),
    ],
)
def test_file_classes(path: str, expected: tuple[str, str]) -> None:
    assert classify_path(path) == expected


@pytest.mark.parametrize(
    "path", ["tests/a.py", "x/test_a.py", "a.test.ts", "e2e/x.js", "fixtures/x", "a_test.go"]
)
def test_the_spec_test_rule_is_reused(path: str) -> None:
    assert is_test_only_path(path)
    assert classify_path(path)[0] == "tests"


def test_ecosystems_and_toolchains() -> None:
    paths = ("src/a.py", "web/b.ts", "bun.lock", "go.mod", "x.rs", "y.rb", "Z.java", "README.md")
    found = detect_ecosystems(paths)
    assert found == ("python", "node", "bun", "go", "rust", "ruby", "jvm")
    assert toolchains_for(found) == ("bun", "go", "node", "python", "rust")
    assert detect_ecosystems(("README.md",)) == ()


@pytest.mark.parametrize(
    ("subject", "body", "merge", "expected"),
    [
        ("Merge pull request #12 from octo/feat/x", "Title", True,
         MessageFacts("merge", 12, "feat/x")),
        ("Merge branch 'feat' into 'main'", "T\n\nSee merge request g/p!7", True,
         MessageFacts("merge", 7, "feat")),
        ("Merge branch 'feat'", "", True, MessageFacts("merge", None, "feat")),
        ("Merge commit 'abc'", "", True, MessageFacts("merge", None, None)),
        ("Refactor the parser (#3695)", "", True, MessageFacts("merge", 3695, None)),
        ("Merge branch '8.1.x'", "", True, MessageFacts("merge", None, "8.1.x")),
        ("Fix the thing (#345)", "", False, MessageFacts("squash", 345, None)),
        ("Fix the thing (#345) ", "", False, MessageFacts("squash", 345, None)),
        ("Fix (#3) the thing", "", False, MessageFacts("plain", None, None)),
        ("Fix the thing", "", False, MessageFacts("plain", None, None)),
    ],
)  # fmt: skip
def test_messages(subject: str, body: str, merge: bool, expected: MessageFacts) -> None:
    assert parse_message(subject, body, merge=merge) == expected


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("Merge branch 'main' of github.com:o/r", True),
        ("Merge branch 'master' into feature", True),
        ("Merge remote-tracking branch 'origin/main'", True),
        ("Merge remote-tracking branch 'upstream/develop' into x", True),
        ("Merge branch 'feature' into 'main'", False),
        ("Merge pull request #1 from o/main", False),
    ],
)
def test_merges_of_main(subject: str, expected: bool) -> None:
    assert is_merge_of_main(subject) is expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Merge stable into main", ("stable", "main")),
        ("Merge stable into main.  ", ("stable", "main")),
        ("Merge `stable` into `main` after `CHANGES` rST to Markdown", ("stable", "main")),
        ("Merge `stable` into `main`; Release 8.2.0", ("stable", "main")),
        ("merge main into stable to synchronize commits.", ("main", "stable")),
        ("Merge branch '8.1.x' into main", ("8.1.x", "main")),
        ("Merge 2.x into master", ("2.x", "master")),
        ("Merge release-3.0 into develop", ("release-3.0", "develop")),
        ("Merge remote-tracking branch 'upstream/stable' into x", ("upstream/stable", "x")),
        ("Merge dev into main", ("dev", "main")),
        ("Merge branch 'feature' into topic", None),
        ("Merge branch 'feat-gl' into 'main'", None),
        ("Merge the parsers into one module", None),
        ("Merge options into config", None),
        ("Merge duplicate entries into one list", None),
        ("Merge pull request #1 from o/stable", None),
        ("Add a merge of main into the docs", None),
        ("Merge stable", None),
    ],
)  # fmt: skip
def test_branch_syncs(title: str, expected: tuple[str, str] | None) -> None:
    assert branch_sync(title) == expected


def test_strip_number() -> None:
    assert strip_number("Fix the thing (#345) ") == "Fix the thing"
    assert strip_number("Fix (#3) the thing") is None


def test_reverts() -> None:
    assert reverted_commits('Revert "x"', "This reverts commit ABCDEF1234.") == ("abcdef1234",)
    assert reverted_commits('Revert "x"', "") == ()
    assert reverted_commits("Undo", "This reverts commit abcdef1.") == ("abcdef1",)
    assert reverted_commits("Fix", "body") is None


@pytest.mark.parametrize(
    ("files", "lines", "tiers"),
    [
        (0, 500, ()),
        (1, 19, ()),
        (1, 20, ("easy",)),
        (1, 500, ("easy",)),
        (2, 50, ("easy", "medium")),
        (3, 99, ("easy", "medium")),
        (3, 100, ("easy", "medium", "hard")),
    ],
)
def test_tiers_follow_the_audits_thresholds(files: int, lines: int, tiers: tuple[str, ...]) -> None:
    assert eligible_tiers(files, lines) == tiers
    assert THRESHOLDS["easy"].changed_lines == 20  # the one source of truth


@pytest.mark.parametrize(
    ("lines", "tests", "merged", "parts"),
    [
        (20, True, 200, (40, 30, 30)),
        (200, False, 100, (0, 30, 0)),
        (400, False, 150, (0, 15, 15)),
        (4000, True, 199, (40, 1, 29)),
    ],
)
def test_score_terms(lines: int, tests: bool, merged: int, parts: tuple[int, int, int]) -> None:
    found = score(Rankable("x", merged, 1, lines, tests_changed=tests), "easy", (100, 200))
    assert (found.tests, found.size, found.recency) == parts
    assert found.score == sum(parts)


def test_budgets_fill_the_hardest_tier_first() -> None:
    items = (
        Rankable("h1", 10, 3, 150, tests_changed=True),
        Rankable("h2", 9, 3, 120, tests_changed=False),
        Rankable("m1", 8, 2, 60, tests_changed=True),
        Rankable("e1", 7, 1, 30, tests_changed=True),
    )
    assert [(a.id, a.difficulty) for a in assign_tiers(items)] == [
        ("h1", "hard"), ("h2", "hard"), ("m1", "medium"), ("e1", "easy"),
    ]  # fmt: skip
    budget = assign_tiers(items, budgets={"hard": 1, "medium": 1, "easy": 1}, over_fetch=1.0)
    assert [(a.id, a.difficulty) for a in budget] == [
        ("h1", "hard"),
        ("m1", "medium"),
        ("e1", "easy"),
    ]
    spill = assign_tiers(items, budgets={"hard": 1, "medium": 2}, over_fetch=1.0)
    assert [(a.id, a.difficulty) for a in spill] == [
        ("h1", "hard"),
        ("m1", "medium"),
        ("h2", "medium"),
    ]
    assert assign_tiers(()) == ()


def test_numstat_records() -> None:
    data = b"\n3\t1\tsrc/a.py\x00-\t-\tlogo.png\x000\t0\t\x00old name.py\x00new name.py\x00"
    assert parse_numstat(data) == (
        FileStat("src/a.py", None, 4, binary=False, added_lines=3),
        FileStat("logo.png", None, 0, binary=True),
        FileStat("new name.py", "old name.py", 0, binary=False),
    )
    record = (
        b"a" * 40 + b"\x1fp1 p2\x1f1767225600\x1fAna\x1fana@x\x1fSubject\n\nBody\n\x00\n1\t0\tx\x00"
    )
    commit = parse_record(record)
    assert (commit.parents, commit.subject, commit.body, commit.files) == (
        ("p1", "p2"), "Subject", "Body", (FileStat("x", None, 1, binary=False, added_lines=1),),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("data", "rest"),
    [
        (b"1\t0\tx\x00oops", "oops"),
        (b"1\t0\tx\x00\n\nx\t1\ty\x00", "x\t1\ty\x00"),
        (b"1\t0\tx", "1\t0\tx"),
        (b"1234567890123456789\t0\tx\x00", "1234567890123456789\t0\tx\x00"),
    ],
)
def test_a_numstat_block_that_breaks_the_grammar(data: bytes, rest: str) -> None:
    commit = parse_record(b"a" * 40 + b"\x1f\x1f1\x1fA\x1fa@x\x1fS\x00" + data)
    with pytest.raises(MineError) as raised:
        _ = commit.files
    assert str(raised.value) == f"unexpected git log output: {rest!r}"


@given(st.binary(max_size=300))
def test_the_git_log_parsers_raise_only_their_error(data: bytes) -> None:
    with contextlib.suppress(MineError):
        parse_numstat(data)
    with contextlib.suppress(MineError):
        assert isinstance(parse_record(data).files, tuple)


@given(st.binary(max_size=300))
def test_the_candidate_reader_raises_only_its_error(data: bytes) -> None:
    with contextlib.suppress(MineError):
        parse_candidate_lines(data, source="c.jsonl")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({}, "prs.json: expected a JSON array of pull requests"),
        ([1], "prs.json: [0]: model type"),
        ([{"title": "x"}], "prs.json: [0].number: missing"),
        ([{"number": 1.5}], "prs.json: [0].number: int type"),
        ([{"number": 1, "isDraft": "yes"}], "prs.json: [0].isDraft: bool type"),
        ([{"number": 1}, {"number": 2, "author": "ana"}], "prs.json: [1].author: model type"),
    ],
)
def test_malformed_pull_requests(value: Any, message: str) -> None:
    with pytest.raises(MineError) as err:
        parse_pull_requests(value, source="prs.json")
    assert str(err.value) == message


def test_gh_fields_and_bots() -> None:
    (pr,) = parse_pull_requests(
        [{"number": 5, "author": {"login": "dependabot", "is_bot": True}, "extra": 1,
          "mergeCommit": None}],
        source="s",
    )  # fmt: skip
    assert (pr.number, pr.author, pr.author_is_bot, pr.merge_commit, pr.draft) == (
        5, "dependabot", True, None, False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        ("git@github.com:octo/app.git", ("octo/app", "https://github.com/octo/app")),
        ("https://github.com/octo/app", ("octo/app", "https://github.com/octo/app")),
        ("https://x-token:t@github.com/octo/app.git/", ("octo/app", "https://github.com/octo/app")),
        ("ssh://git@github.com/octo/my.app.git", ("octo/my.app", "https://github.com/octo/my.app")),
        ("https://gitlab.com/octo/app.git", (None, None)),
        (None, (None, None)),
    ],
)
def test_source_urls_from_github_remotes(
    origin: str | None, expected: tuple[str | None, str | None]
) -> None:
    assert source_url_base(origin) == expected
