"""Chores by title: every rule's titles, and the near misses that are work."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from mine_history import History, lines
from selfbench.errors import MineError
from selfbench.mine import mine_repository
from selfbench.mine.chores import (
    AUTOUPDATE,
    DEPENDENCY_BUMP,
    FORMATTING,
    FORMATTING_ONLY,
    RELEASE,
    SUPPORT_MATRIX,
    chore_reason,
    core_title,
    substantial,
)
from selfbench.mine.git_history import (
    Section,
    WhitespaceCheck,
    _Records,
    parse_check,
    parse_substantive,
)
from selfbench.mine.merged import REVERTED_BY, REVERTS

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

CHORES: dict[str, tuple[str, ...]] = {
    AUTOUPDATE: (
        "[pre-commit.ci] pre-commit autoupdate",
        "[pre-commit.ci] pre-commit autoupdate (#2779)",
        "[pre-commit.ci] auto fixes from pre-commit.com hooks",
        "pre-commit autoupdate",
        "chore: pre-commit autoupdate",
        "Update pre-commit hooks",
        "chore(pre-commit): update hooks",
        "Bump pre-commit hooks to latest versions",
        "ci: update actions/checkout",
        "ci: bump actions/setup-python from 4 to 5",
        "chore(deps): bump actions/checkout from 3 to 4 (#12)",
        "Bump the github-actions group with 2 updates",
        "Update actions/checkout action to v4",
        "Update GitHub Actions",
    ),
    RELEASE: (
        "Bump version to 2.1.0",
        "Bump version: 1.0.0 → 1.1.0",
        "Bump version for release",
        "Bump for release",
        "bump for development",
        "Bump release for development",
        "Release 3.0",
        "Release version 8.3.2 (#3302)",
        "release: 1.2.0",
        "chore(main): release 2.3.0",
        "chore(release): v1.4.0",
        "Version 0.21",
        "Version 0.28.0.",
        "v1.2.3",
        "1.2.3",
        "Prepare release 1.2",
        "Prepare 2.0.0 release",
        "start version 8.5.0",
        "Fix dev version 8.4.1 (#3446)",
        "Back to development: 2.1",
        "Version Packages",
        "Bump to 2.0.0",
    ),
    SUPPORT_MATRIX: (
        "Drop Python 3.8",
        "Drop 3.9",
        "Drop Python 2",
        "Add Python 3.13 to CI matrix",
        "Support Python 3.14",
        "Add support for Python 3.12",
        "chore: drop Python 3.9 support (EOL)",
        "feat: drop support for EOL Python 3.9",
        "Fix #291: drop python < 3.6",
        "drop support for python 3.7",
        "Drop support for python 2.7, 3.4, and 3.5",
        "Drop support for deprecated Pythons",
        "Drop testing for 2.6 and 3.3. Add 3.6.",
        "update test env matrix",
        "Test against PyPy 3.10",
        "Require Python >= 3.9",
        "Bump minimum Python version to 3.10",
        "Add 3.13 classifiers",
        "Remove Python 2 compatibility code",
        "Drop py38",
        "Drop Node 16",
        "Add Go 1.22 to the test matrix",
    ),
    DEPENDENCY_BUMP: (
        "chore(deps): bump requests from 2.31 to 2.32",
        "build(deps-dev): bump pytest from 7.4.0 to 8.0.0",
        "Bump requests from 2.31 to 2.32",
        "Bump the python-requirements group in /requirements with 3 updates",
        "Update dependency eslint to v9",
        "fix(deps): update module golang.org/x/net to v0.17.0",
        "Update requests requirement from ~=2.0 to ~=2.1",
        "Lock file maintenance",
        "Update dev requirements",
        "Update lockfile",
        "Upgrade to latest mypy",
        "Update httpcore to 0.10",
        "Bump coverage",
        "Pin dependencies",
        "Bump tox from 3.24.1 to 3.24.3",
    ),
    FORMATTING: (
        "Autoformat with black",
        "Run black",
        "Reformat code with ruff format",
        "Apply black formatting",
        "style: format code with prettier",
        "Blacken the codebase",
    ),
}

PINS = (("requirements.txt", "dependencies", 2),)
WORK = (
    "Add support for Python 3.13 type parameters in parser",
    "Fix debug wheel support for Python 3.8",
    "Add support for proxy tunnels for Python 3.6 + asyncio.",
    "Fix crash when dropping connection",
    "Drop sync",
    "Drop chardet",
    "Drop 'adapters'",
    "Drop `rfc3986` requirement.",
    "Add 2 tests",
    "Add  wait_chain()",
    "Bump the 3.2 cache size",
    "Release the lock on error",
    "Release connections when the pool closes",
    "Add @custom_version_option, freeze @version_option",
    "Fix version comparison with pre-releases",
    "Update version parsing to handle local segments",
    "Bump the recursion limit for deep trees",
    "Update typing",
    "update metadata",
    "Update brotli support to use the brotlicffi package",
    "Graceful upgrade path for 0.28.",
    "Add pre-commit hook for codespell",
    "ci: fix Mergify config",
    "Format dates in the locale's style",
    "Add a --format option",
    "Support async actions",
    "Support Trio out-of-the-box, take 2",
    "Add Tornado support",
    "Deprecate click.get_terminal_size() in favor of stdlib shutil.",
    "Merge stable into main",
    'Revert "Add foo"',
)


@pytest.mark.parametrize(
    ("title", "reason"),
    [(title, reason) for reason, titles in CHORES.items() for title in titles],
)
def test_chore_titles(title: str, reason: str) -> None:
    assert chore_reason(title, PINS) == reason


@pytest.mark.parametrize("title", WORK)
def test_near_misses_are_work(title: str) -> None:
    assert chore_reason(title, PINS) is None


def test_core_title() -> None:
    assert core_title("chore(deps): bump x from 1 to 2 (#12)") == ("bump x from 1 to 2", "deps")
    assert core_title("Fix #291: drop python < 3.6.") == ("drop python < 3.6", None)
    assert core_title("feat!: drop Python 3.8") == ("drop Python 3.8", None)


IMPL = "implementation"
ADAPTED = (("src/pool.py", IMPL, 120), ("src/client.py", IMPL, 40), ("setup.py", IMPL, 2))
TOOLING = (("tox.ini", IMPL, 200), ("setup.cfg", IMPL, 80), ("src/app.py", IMPL, 30))
CODE = (("src/report.py", IMPL, 30), ("tests/test_report.py", "tests", 40))


def test_a_bump_that_adapts_the_code_is_work() -> None:
    assert substantial(ADAPTED)
    assert not substantial(TOOLING)
    assert chore_reason("Update to httpcore 0.10", (*ADAPTED, *PINS)) is None
    assert chore_reason("Update to httpcore 0.10", (*TOOLING, *PINS)) == DEPENDENCY_BUMP
    assert chore_reason("Upgrade to latest mypy", TOOLING) == DEPENDENCY_BUMP  # tox.ini pins
    assert chore_reason("chore(deps): bump httpcore from 0.9 to 0.10", ADAPTED + PINS) is None


def test_a_bump_that_pins_nothing_is_no_bump() -> None:
    assert chore_reason("Bump coverage", CODE) is None
    for pins in ("requirements/dev.txt", "requirements/dev.in", "constraints.txt", "tox.ini"):
        assert chore_reason("Bump coverage", (*CODE, (pins, "docs", 2))) == DEPENDENCY_BUMP


@pytest.mark.parametrize(
    "title", ["[pre-commit.ci] pre-commit autoupdate", "Drop Python 3.8", "Release 3.0"]
)
def test_other_chores_stay_chores_whatever_the_diff(title: str) -> None:
    assert chore_reason(title, ADAPTED) is not None


# --- on a real history --------------------------------------------------------------------------

SPACED = "".join(f"def f_{index}(a, b):\n    return a + b + {index}\n\n" for index in range(12))
RESPACED = SPACED.replace("    return", "        return").replace("\n\n", "\n\n\n")


def _chore_history(path: Path) -> History:
    """Work, chores and reverts, oldest first; `shas` names each change. The work and the
    whitespace-only changes add a test file, as a candidate must."""
    h = History.create(path)
    h.commit("Initial commit", {"src/app.py": SPACED, "requirements.txt": "requests==2.31\n"})
    h.shas["foo"] = h.commit("Add foo (#20)", {"src/foo.py": lines(30, "foo")})
    h.shas["foo-revert"] = h.commit(
        'Revert "Add foo" (#21)\n\nReverts octo/app#20', {"src/foo.py": None}
    )
    h.shas["bar"] = h.merge(
        "bar", "Merge pull request #22 from octo/bar\n\nAdd bar", [{"src/bar.py": lines(30, "b")}]
    )
    h.shas["bar-revert"] = h.merge(
        "revert-bar",
        'Merge pull request #23 from octo/revert-bar\n\nRevert "Add bar"',
        [{"src/bar.py": None}],
    )
    h.shas["autoupdate"] = h.commit(
        "[pre-commit.ci] pre-commit autoupdate (#24)",
        {".pre-commit-config.yaml": "repos: []\n", "src/auto.py": lines(120, "au")},
    )
    h.shas["matrix"] = h.commit("Drop Python 3.8 (#25)", {"src/compat.py": lines(30, "c")})
    h.shas["parser"] = h.commit(
        "Add support for Python 3.13 type parameters in parser (#26)",
        {"src/parser.py": lines(30, "p"), "tests/test_parser.py": lines(3, "t")},
    )
    h.shas["bump"] = h.commit(
        "Bump requests from 2.31 to 2.32 (#27)",
        {"requirements.txt": "requests==2.32\n", "src/http.py": lines(25, "h")},
    )
    h.shas["adapted"] = h.commit(
        "Update to httpcore 0.10 (#28)",
        {
            "requirements.txt": "requests==2.33\n",
            "src/pool.py": lines(60),
            "src/io.py": lines(60),
            "tests/test_pool.py": lines(3, "t"),
        },
    )
    h.shas["release"] = h.commit("Bump version to 2.1.0 (#29)", {"src/version.py": lines(25)})
    h.shas["spacing"] = h.commit(
        "Tidy the helpers (#30)", {"src/app.py": RESPACED, "tests/test_app.py": lines(3, "t")}
    )
    h.shas["fix"] = h.commit(
        "Fix crash when dropping connection (#31)",
        {"src/conn.py": lines(30, "cn"), "tests/test_conn.py": lines(3, "t")},
    )
    h.commit("Indent (#32)", {"src/app.py": SPACED.replace("    return", "\treturn")})
    h.shas["indent"] = h.commit(  # a rebase merge: two commits, one whitespace-only change
        "Indent less (#32)",
        {
            "src/app.py": SPACED.replace("    return", "  return") + "\n\n",
            "tests/test_indent.py": lines(3, "t"),
        },
    )
    return h


@needs_git
def test_chores_and_reverts_on_a_history(tmp_path: Path) -> None:
    h = _chore_history(tmp_path / "repo")
    result = mine_repository(h.path)
    assert sorted(c.id for c in result.candidates) == ["pr-26", "pr-28", "pr-31"]
    names = {sha: name for name, sha in h.shas.items()}
    reasons = {names[e.commit]: e.reason for e in result.excluded if e.commit in names}
    assert reasons == {
        "indent": FORMATTING_ONLY,
        "spacing": FORMATTING_ONLY,
        "release": RELEASE,
        "bump": DEPENDENCY_BUMP,
        "matrix": SUPPORT_MATRIX,
        "autoupdate": AUTOUPDATE,
        "bar-revert": REVERTS,
        "bar": REVERTED_BY.format(sha7=h.shas["bar-revert"][:7]),
        "foo-revert": REVERTS,
        "foo": REVERTED_BY.format(sha7=h.shas["foo-revert"][:7]),
    }


@needs_git
def test_a_revert_matches_one_older_change(tmp_path: Path) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {"src/app.py": lines(3)})
    first = h.commit("Add foo (#1)", {"src/foo.py": lines(30, "a")})
    h.commit('Revert "Add foo (#1)" (#2)', {"src/foo.py": None})
    h.commit(  # landed again: work
        "Add foo (#3)", {"src/foo.py": lines(30, "b"), "tests/test_foo.py": lines(3, "t")}
    )
    result = mine_repository(h.path)
    assert [c.id for c in result.candidates] == ["pr-3"]
    assert {e.commit: e.reason for e in result.excluded}[first].startswith("reverted later by")


def _beyond(_: str, changed: frozenset[str], __: tuple[Section, ...]) -> frozenset[str]:
    return changed


@needs_git
def test_the_whitespace_check_diffs_each_change_against_its_base(tmp_path: Path) -> None:
    h = _chore_history(tmp_path / "repo")
    group_base = h.git("rev-parse", f"{h.shas['indent']}~2")
    with WhitespaceCheck(h.path, _beyond) as check:
        check.add(h.shas["indent"], group_base)  # a rebase group: its code only whitespace
        check.add(h.shas["adapted"], h.git("rev-parse", f"{h.shas['bump']}^"))  # two changes
        check.add(h.shas["fix"], h.git("rev-parse", f"{h.shas['fix']}^"))
        found = check.result()
    assert found == {
        h.shas["indent"]: frozenset({"tests/test_indent.py"}),
        h.shas["adapted"]: frozenset(
            {"requirements.txt", "src/http.py", "src/io.py", "src/pool.py", "tests/test_pool.py"}
        ),
        h.shas["fix"]: frozenset({"src/conn.py", "tests/test_conn.py"}),
    }


@needs_git
def test_the_whitespace_check_judges_each_change_as_git_prints_it(tmp_path: Path) -> None:
    """Each change is judged in the reader thread once git has printed it whole (the next
    change's record has started), before the walk ends: git gets each change as it is added,
    and its output is read as it comes."""
    h = _chore_history(tmp_path / "repo")
    judged = threading.Event()

    def judge(commit: str, changed: frozenset[str], sections: tuple[Section, ...]) -> str:
        assert threading.current_thread() is not threading.main_thread()
        judged.set()
        return f"{sorted(changed)} {[section.path for section in sections]}"

    with WhitespaceCheck(h.path, judge) as check:
        check.add(h.shas["fix"], h.git("rev-parse", f"{h.shas['fix']}^"))
        check.add(h.shas["indent"], h.git("rev-parse", f"{h.shas['indent']}~2"))
        assert judged.wait(timeout=60)  # the check is still open: the walk would go on
        found = check.result()
    assert found == {
        h.shas[
            "fix"
        ]: "['src/conn.py', 'tests/test_conn.py'] ['src/conn.py', 'tests/test_conn.py']",
        h.shas["indent"]: "['tests/test_indent.py'] ['tests/test_indent.py']",
    }


@needs_git
def test_what_a_judge_raises_is_raised_once_git_is_done(tmp_path: Path) -> None:
    h = _chore_history(tmp_path / "repo")
    seen: list[str] = []

    def judge(commit: str, changed: frozenset[str], sections: tuple[Section, ...]) -> None:
        seen.append(commit)
        raise MineError(f"cannot judge {commit[:7]}")

    with WhitespaceCheck(h.path, judge) as check:
        check.add(h.shas["fix"], h.git("rev-parse", f"{h.shas['fix']}^"))
        check.add(h.shas["indent"], h.git("rev-parse", f"{h.shas['indent']}~2"))
        with pytest.raises(MineError) as err:
            check.result()
    assert str(err.value) == f"cannot judge {h.shas['fix'][:7]}"
    assert seen == [h.shas["fix"]]  # the first failure stops the judging, not the reading


@needs_git
def test_the_whitespace_check_reports_a_commit_git_cannot_read(tmp_path: Path) -> None:
    h = _chore_history(tmp_path / "repo")
    missing = "0" * 40
    with WhitespaceCheck(h.path, _beyond) as check:
        check.add(missing, h.shas["fix"])
        with pytest.raises(MineError) as err:
            check.result()
    assert str(err.value) == f"git diff-tree printed nothing for {missing}"


@needs_git
def test_closing_the_whitespace_check_stops_git(tmp_path: Path) -> None:
    h = _chore_history(tmp_path / "repo")
    check = WhitespaceCheck(h.path, _beyond)
    check.add(h.shas["fix"], h.shas["spacing"])
    check.close()  # as when the walk fails
    assert check.result() == {}


def test_a_line_diff_tree_echoes_is_unexpected() -> None:
    with pytest.raises(MineError) as err:
        parse_substantive(b"not a commit\n")
    assert str(err.value) == "unexpected git diff-tree output: 'not a commit\\n'"
    with pytest.raises(MineError) as err:
        parse_substantive(b"echoed\n\x1e" + b"a" * 40 + b"\0")
    assert str(err.value) == "unexpected git diff-tree output: 'echoed\\n'"


_OUTPUT = b"".join(
    [
        b"\x1e" + b"a" * 40 + b"\0",  # a commit that changed nothing
        b"\x1e" + b"b" * 64 + b"\0\ndiff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n",
        b"@@ -1 +1 @@\n-\x1e" + b"c" * 40 + b"\0\n+\x1ex\n",  # an RS in a line: no start
        b"diff --git a/y b/y\nBinary files a/y and b/y differ\n",
        b"\x1e" + b"d" * 40 + b"\0\ndiff --git a/z b/z\n--- a/z\n+++ b/z\n@@ -1 +0,0 @@\n-z\n",
    ]
)


@pytest.mark.parametrize("size", [1, 2, 7, 40, 65, 66, 67, 100, len(_OUTPUT)])
def test_records_read_in_pieces_are_the_records_read_whole(size: int) -> None:
    """The reader thread parses diff-tree's output as it comes, in pieces of any size."""
    whole = parse_check(_OUTPUT)
    assert [(sha[:1], [s.path for s in sections]) for sha, sections in whole.items()] == [
        ("a", []),
        ("b", ["x.py", "y"]),
        ("d", ["z"]),
    ]
    records = _Records()
    pieces = []
    for start in range(0, len(_OUTPUT), size):
        pieces.extend(records.feed(_OUTPUT[start : start + size]))
    assert dict([*pieces, *records.end()]) == whole
