"""`selfbench mine` on real git histories built by the tests, through the API and the CLI."""

from __future__ import annotations

import gc
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mine_history import History, build_history, lines
from selfbench.cli import main
from selfbench.cli.mine import render_table
from selfbench.collect import Candidate, read_candidate
from selfbench.contract import Difficulty
from selfbench.demo import build_sample_repository, sample_arguments
from selfbench.mine import (
    MineError,
    MineOptions,
    MineResult,
    candidate_json_schema,
    mine_repository,
    write_candidates,
)
from selfbench.mine.api import _Walk
from selfbench.mine.candidate import parse_candidate_lines
from selfbench.mine.git_history import Commit, find_revision, read_history, start_history
from selfbench.mine.prs import parse_pull_requests
from selfbench.patches import parse_patch
from selfbench.submit import submit_task

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build_history(tmp_path_factory.mktemp("mine") / "repo")


@pytest.fixture(scope="module")
def mined(history: History) -> MineResult:
    return mine_repository(history.path)


def _reasons(result: MineResult, history: History) -> dict[str, str]:
    names = {sha: name for name, sha in history.shas.items()}
    return {names.get(item.commit, item.subject): item.reason for item in result.excluded}


def test_every_kind_of_change_is_told_apart(mined: MineResult, history: History) -> None:
    assert [(c.id, c.kind, c.difficulty) for c in mined.candidates] == [
        ("pr-3", "squash", "hard"),
        ("pr-2", "squash", "medium"),
        ("pr-11", "merge", "easy"),
        ("pr-10", "squash", "easy"),
        ("pr-9", "squash", "easy"),
        ("pr-8", "squash", "easy"),
        ("pr-1", "merge", "easy"),  # all changed tests: the oldest scores least on recency
    ]
    assert _reasons(mined, history) == {
        "pr12": "below the easy gate: 1 implementation files, 5 changed implementation lines",
        "plain": "not a merged pull request (--plain includes plain commits)",
        "bot": "authored by a bot (dependabot[bot])",
        "merge-main": "merges the main branch into a branch",
        "local": "not a merged pull request (--plain includes plain commits)",
        "revert": "reverts an earlier change",
        "pr6": f"reverted later by {history.shas['revert'][:7]}",
        "tests": "no implementation changes (only tests)",
        "sync": "syncs branch stable into main",
        "docs": "changes only documentation",
        "root": "the first commit has no base",
    }
    assert mined.walked == 19
    assert mined.counts() == {"easy": 5, "medium": 1, "hard": 1}
    assert mined.warnings == ()


def test_base_and_completed_commits(mined: MineResult, history: History) -> None:
    by_id = {c.id: c for c in mined.candidates}
    git = history.git
    assert by_id["pr-1"].base_commit == history.shas["root"]
    assert by_id["pr-1"].completed_commit == history.shas["pr1"]
    assert by_id["pr-1"].head_branch == "feature-one"
    assert by_id["pr-2"].base_commit == history.shas["pr1"]
    # a rebase merge: two commits with the same (#3) are one change from before the first
    assert by_id["pr-3"].base_commit == history.shas["pr2"]
    assert by_id["pr-3"].completed_commit == history.shas["pr3"]
    assert by_id["pr-3"].eligible_tiers == ("easy", "medium", "hard")
    assert by_id["pr-11"].base_commit == git("rev-parse", f"{history.shas['pr11']}^1")
    assert (by_id["pr-11"].title, by_id["pr-11"].body) == ("GitLab title", "Body.")
    assert (by_id["pr-1"].title, by_id["pr-1"].body) == ("Add the widget parser", "It parses.")
    assert (by_id["pr-2"].title, by_id["pr-2"].body) == (
        "Split helpers",
        "Moves helpers into two modules.",
    )
    assert by_id["pr-1"].metadata == "git"


def test_changed_lines_equal_what_the_audit_counts(mined: MineResult, history: History) -> None:
    for candidate in mined.candidates:
        commits = (candidate.base_commit, candidate.completed_commit)
        diff = subprocess.run(
            ["git", "-C", str(history.path), "diff", "-M", "--binary", *commits],
            capture_output=True,
            check=True,
        ).stdout
        patch = parse_patch(diff)
        counted = {change.path: change.changed_lines for change in patch.files}
        assert {f.path: f.changed_lines for f in candidate.files} == counted, candidate.id
        implementation = [f for f in candidate.files if f.file_class == "implementation"]
        gold = parse_patch(
            b"".join(
                patch.section(c) for c in patch.files if c.path in {f.path for f in implementation}
            )
        )
        assert candidate.totals["implementation"].changed_lines == gold.changed_lines
        assert candidate.totals["implementation"].files == len(gold.files)


def test_binary_renamed_and_test_files(mined: MineResult) -> None:
    by_id = {c.id: c for c in mined.candidates}
    logo = next(f for f in by_id["pr-9"].files if f.path == "src/logo.png")
    assert (logo.binary, logo.changed_lines, logo.file_class) == (True, 0, "implementation")
    renamed = next(f for f in by_id["pr-10"].files if f.path == "src/application.py")
    assert (renamed.old_path, renamed.changed_lines) == ("src/app.py", 2)
    assert by_id["pr-1"].tests_changed
    assert by_id["pr-1"].totals["tests"].to_json() == {"files": 1, "changedLines": 5}
    assert all(candidate.tests_changed for candidate in mined.candidates)
    assert by_id["pr-1"].ecosystems == ("python",)
    assert by_id["pr-1"].toolchains == ("python",)
    assert by_id["pr-1"].score.tests == 40


def test_plain_commits_on_request(history: History) -> None:
    result = mine_repository(history.path, MineOptions(plain=True))
    ids = [c.id for c in result.candidates]
    assert f"commit-{history.shas['plain'][:12]}" in ids
    assert f"commit-{history.shas['local'][:12]}" in ids
    plain = next(c for c in result.candidates if c.completed_commit == history.shas["plain"])
    assert (plain.kind, plain.source_pr, plain.title) == ("plain", None, "tweak")


def test_pull_request_metadata_enriches_and_filters(history: History) -> None:
    prs = parse_pull_requests(
        [
            {"number": 8, "isDraft": True},
            {
                "number": 2, "title": "Split the helpers", "body": "From the PR.",
                "url": "https://example.com/pr/2", "author": {"login": "ana", "is_bot": False},
                "headRefName": "split", "mergeCommit": {"oid": history.shas["pr2"].upper()},
                "labels": [],
            },
            {"number": 1, "author": {"login": "renovate[bot]"}},
        ],
        source="prs.json",
    )  # fmt: skip
    result = mine_repository(history.path, MineOptions(pull_requests=prs))
    by_id = {c.id: c for c in result.candidates}
    assert "pr-8" not in by_id
    assert "pr-1" not in by_id
    reasons = _reasons(result, history)
    assert reasons["pr8"] == "pull request #8 is a draft"
    assert reasons["pr1"] == "authored by a bot (renovate[bot])"
    pr2 = by_id["pr-2"]
    assert (pr2.title, pr2.body, pr2.author, pr2.source_url, pr2.head_branch, pr2.metadata) == (
        "Split the helpers", "From the PR.", "ana", "https://example.com/pr/2", "split",
        "pull-request",
    )  # fmt: skip
    # what the change is still comes from git
    assert pr2.base_commit == history.shas["pr1"]


def test_budgets_pick_the_best_per_tier(history: History) -> None:
    budgets: dict[Difficulty, int] = {"easy": 2, "medium": 1, "hard": 1}
    result = mine_repository(history.path, MineOptions(budgets=budgets, over_fetch=1.0))
    assert [(c.id, c.difficulty) for c in result.candidates] == [
        ("pr-3", "hard"),
        ("pr-2", "medium"),
        ("pr-11", "easy"),
        ("pr-10", "easy"),
    ]
    beyond = [e.source_pr for e in result.excluded if e.reason == "beyond the tier budgets"]
    assert beyond == [9, 8, 1]
    fetched = mine_repository(history.path, MineOptions(budgets={"easy": 2}, over_fetch=1.5))
    assert [(c.id, c.difficulty) for c in fetched.candidates] == [
        ("pr-11", "easy"),
        ("pr-10", "easy"),
        ("pr-9", "easy"),
    ]


def test_max_and_since_cap_the_walk(history: History) -> None:
    assert mine_repository(history.path, MineOptions(max_commits=3)).walked == 3
    result = mine_repository(history.path, MineOptions(since="@1767283200"))  # after 16 hours
    assert result.walked < 18
    assert all(c.merged_at >= 1767283200 for c in result.candidates)


def test_the_source_url_comes_from_a_github_origin(tmp_path: Path, history: History) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history.path), str(clone)], check=True)
    subprocess.run(
        ["git", "-C", str(clone), "remote", "set-url", "origin", "git@github.com:octo/app.git"],
        check=True,
    )
    first = {c.id: c for c in mine_repository(clone).candidates}["pr-1"]
    assert (first.repo, first.source_url) == ("octo/app", "https://github.com/octo/app/pull/1")


@pytest.mark.parametrize(
    ("origin", "source_url", "label", "url"),
    [
        (None, None, "clone", None),
        ("/srv/mirrors/genkit.git", None, "genkit", None),
        ("file:///srv/mirrors/genkit", None, "genkit", None),
        ("https://gitlab.com/team/genkit.git", None, "team/genkit", None),
        ("git@gitlab.com:team/genkit.git", None, "team/genkit", None),
        (
            "/srv/mirrors/genkit.git",
            "https://git.example.com/team/genkit/",
            "team/genkit",
            "https://git.example.com/team/genkit/pull/1",
        ),
        ("git@github.com:octo/app.git", None, "octo/app", "https://github.com/octo/app/pull/1"),
    ],
)
def test_the_repository_label_never_names_a_path_on_this_machine(
    tmp_path: Path,
    history: History,
    origin: str | None,
    source_url: str | None,
    label: str,
    url: str | None,
) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(history.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "remove", "origin"], check=True)
    if origin is not None:
        subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", origin], check=True)
    mined = mine_repository(clone, MineOptions(source_url=source_url))
    first = {c.id: c for c in mined.candidates}["pr-1"]
    assert (first.repo, first.source_url) == (label, url)


def test_mine_out_creates_its_folder(
    tmp_path: Path, history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "deeper" / "candidates.jsonl"
    assert main(["mine", str(history.path), "--no-sessions", "--out", str(out)]) == 0
    capsys.readouterr()
    assert out.is_file()
    assert (out.parent / "candidates.excluded.jsonl").is_file()


def test_a_shallow_clone_reports_where_history_ends(tmp_path: Path, history: History) -> None:
    clone = tmp_path / "shallow"
    url = f"file://{history.path}"
    subprocess.run(["git", "clone", "-q", "--depth", "3", url, str(clone)], check=True)
    result = mine_repository(clone)
    assert result.warnings == (
        f"{clone} is a shallow clone: history ends early, older changes are missing",
    )
    assert result.excluded[-1].reason == "base commit not in this clone (shallow history)"
    assert result.walked == 3


def test_a_commit_whose_change_git_cannot_read_is_excluded_and_the_walk_goes_on(
    tmp_path: Path, history: History
) -> None:
    """A damaged clone lacks one blob a commit's change holds: that commit is excluded (and
    said as a warning), and every other commit is walked as in a whole clone."""
    clone = tmp_path / "damaged"
    subprocess.run(["git", "clone", "-q", "--no-local", str(history.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "repack", "-q", "-a", "-d"], check=True)
    whole = mine_repository(clone)
    newest = subprocess.run(
        ["git", "-C", str(clone), "log", "--first-parent", "--format=%H", "-n", "40"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    victim, blob = _commit_adding_a_blob(clone, newest)
    _drop_object(clone, blob)
    result = mine_repository(clone)
    reason = f"git cannot read its change: object {blob} is missing"
    assert next(e for e in result.excluded if e.commit == victim).reason == reason
    assert result.warnings[0].startswith(f"commit {victim[:12]}: {reason} from {clone}; ")
    assert result.walked == whole.walked - 1
    assert {e.commit for e in result.excluded} - {victim} <= {e.commit for e in whole.excluded}
    assert victim not in {c.completed_commit for c in result.candidates}


def test_a_commit_git_dies_on_before_printing_it_is_the_one_excluded(tmp_path: Path) -> None:
    """Rename detection reads a deleting-and-adding commit's blobs before git prints its
    header: the last record git printed is then the commit before, whole, and walked; the one
    git could not read is the one reported, and the walk goes on to its parent."""
    repo = tmp_path / "repo"

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    repo.mkdir()
    run("init", "-q")
    run("config", "user.email", "a@example.com")
    run("config", "user.name", "A")
    shas = []
    steps: list[tuple[str, dict[str, str | None]]] = [
        ("first", {"a.txt": "alpha\n" * 20, "k.txt": "keep\n"}),
        ("second", {"a.txt": None, "c.txt": "gamma, nothing like alpha\n"}),
        ("third", {"k.txt": "kept\n"}),
    ]
    for message, changes in steps:
        for name, text in changes.items():
            if text is None:
                (repo / name).unlink()
            else:
                (repo / name).write_text(text)
        run("add", "-A")
        run("commit", "-q", "-m", message)
        shas.append(run("rev-parse", "HEAD"))
    blob = run("rev-parse", f"{shas[1]}:c.txt")
    run("repack", "-q", "-a", "-d")
    _drop_object(repo, blob)
    told: list[tuple[str, str]] = []
    walked = list(read_history(repo, rev="HEAD", unreadable=lambda c, r: told.append((c.sha, r))))
    assert [commit.sha for commit in walked] == [shas[2], shas[0]]
    assert told == [(shas[1], f"git cannot read its change: object {blob} is missing")]
    with pytest.raises(MineError, match=f"unable to read {blob}"):
        list(read_history(repo, rev="HEAD"))
    assert [c.sha for c in read_history(repo, rev="HEAD", max_commits=2, unreadable=_no)] == [
        shas[2]
    ]


def _no(commit: Commit, reason: str) -> None:
    """An `unreadable` that only takes note (the reason is asserted elsewhere)."""


def _commit_adding_a_blob(clone: Path, commits: list[str]) -> tuple[str, str]:
    """A first-parent commit (with a parent) that adds a file whose content no other commit
    has: the commit and that blob."""
    for sha in commits[1:-1]:
        added = subprocess.run(
            ["git", "-C", str(clone), "diff-tree", "-r", "--no-commit-id", "--diff-filter=A",
             f"{sha}^", sha],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()  # fmt: skip
        for line in added:
            blob = line.split()[3]
            holders = subprocess.run(
                ["git", "-C", str(clone), "log", "--all", "--format=%H", f"--find-object={blob}"],
                capture_output=True, text=True, check=True,
            ).stdout.split()  # fmt: skip
            if holders == [sha]:
                return sha, blob
    raise AssertionError("no commit adds a blob of its own")


def _drop_object(clone: Path, blob: str) -> None:
    """Rewrite the clone's one pack without `blob`."""
    git_dir = clone / ".git"
    objects = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    kept = "".join(f"{name}\n" for name in objects if name != blob)
    packs = list((git_dir / "objects" / "pack").glob("pack-*"))
    subprocess.run(
        ["git", "-C", str(clone), "pack-objects", "-q", str(git_dir / "objects" / "pack" / "pack")],
        input=kept, text=True, check=True, capture_output=True,
    )  # fmt: skip
    for path in packs:
        path.unlink()
    check = subprocess.run(["git", "-C", str(clone), "cat-file", "-e", blob], check=False)
    assert check.returncode != 0, "the blob is still there"


# --- output files, collect and the CLI ---------------------------------------------------------


def test_written_candidates_feed_collect(
    tmp_path: Path, mined: MineResult, history: History
) -> None:
    out = tmp_path / "candidates.jsonl"
    assert write_candidates(mined, out) == (out, tmp_path / "candidates.excluded.jsonl")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["id"] for row in rows] == [c.id for c in mined.candidates]
    excluded = (tmp_path / "candidates.excluded.jsonl").read_text().splitlines()
    assert len(excluded) == len(mined.excluded)
    assert read_candidate(out, "pr-2") == Candidate(2, history.shas["pr1"], "medium")
    single = tmp_path / "one.json"
    single.write_text(out.read_text().splitlines()[0] + "\n")
    assert read_candidate(single) == Candidate(3, history.shas["pr2"], "hard")
    with pytest.raises(MineError) as err:
        read_candidate(out)
    assert str(err.value) == f"{out} holds 7 candidates; name one with --candidate-id"
    with pytest.raises(MineError) as err:
        read_candidate(out, "pr-99")
    assert str(err.value) == f"{out} has no candidate pr-99"


def test_a_candidate_without_a_pull_request_cannot_be_collected(
    tmp_path: Path, history: History
) -> None:
    out = tmp_path / "c.jsonl"
    write_candidates(mine_repository(history.path, MineOptions(plain=True)), out)
    plain = f"commit-{history.shas['plain'][:12]}"
    with pytest.raises(MineError) as err:
        read_candidate(out, plain)
    assert str(err.value) == f"{out}: candidate {plain} has no pull request number to author"


def test_a_walk_started_ahead_is_read_and_another_walk_starts_its_own(history: History) -> None:
    every = [commit.sha for commit in read_history(history.path, rev="HEAD")]
    started = start_history(history.path, rev="HEAD")
    assert [commit.sha for commit in read_history(history.path, rev="HEAD", started=started)] == (
        every
    )
    other = start_history(history.path, rev="HEAD", max_commits=2)  # not the walk read below
    assert [c.sha for c in read_history(history.path, rev="HEAD", started=other)] == every
    assert other.stdout.closed
    started.close()  # a second close is harmless


def test_the_walk_loads_before_the_rest_of_mining() -> None:
    probe = "import sys, selfbench.mine.git_history; print('selfbench.mine.api' in sys.modules)"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert loaded.stdout == "False\n"


def test_the_cli_starts_the_walk_after_one_git_run(
    tmp_path: Path,
    history: History,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before the walk's `git log`, one `rev-parse` checks the repository, finds the revision
    and tells a shallow clone, after the one `config --list` of the whole command
    (`selfbench._git`); origin and worktrees are read while git walks."""
    ran: list[str] = []  # each git's command word (`subprocess.run` starts its own Popen)
    listed = 0
    real_popen = subprocess.Popen

    def popen(argv: list[str], *args: object, **kwargs: object) -> object:
        nonlocal listed
        ran.append(argv[argv.index("-C") + 2])
        listed += "--list" in argv
        return real_popen(argv, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", popen)
    out = tmp_path / "candidates.jsonl"
    assert main(["mine", str(history.path), "--no-sessions", "--out", str(out)]) == 0
    capsys.readouterr()
    before, after = ran[: ran.index("log")], ran[ran.index("log") + 1 :]
    assert before == ["config", "rev-parse"]
    assert "worktree" in after
    assert listed == 1, ran  # not once before each of its git runs


def test_find_revision_tells_a_missing_repository_from_an_unknown_revision(
    tmp_path: Path, history: History
) -> None:
    head = subprocess.run(
        ["git", "-C", str(history.path), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert find_revision(history.path, "HEAD") == (history.path, head, False)
    with pytest.raises(MineError, match=r"^unknown revision: nope$"):
        find_revision(history.path, "nope")
    with pytest.raises(MineError, match=r"^not a git repository: "):
        find_revision(tmp_path, "HEAD")


def test_cli_writes_both_files_and_prints_json(
    tmp_path: Path, history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "candidates.jsonl"
    argv = ["mine", str(history.path), "--no-sessions", "--out", str(out), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed["counts"] == {"easy": 5, "medium": 1, "hard": 1}
    assert captured.err == (
        f"wrote 7 candidates to {out}\nwrote 11 excluded changes to "
        f"{tmp_path / 'candidates.excluded.jsonl'}\n"
    )
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [
        item["id"] for item in printed["candidates"]
    ]


def test_cli_prints_one_line_per_candidate_when_piped(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mine", str(history.path), "--no-sessions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "id\ttier\tscore\timpl files\timpl lines\ttests\trequests\ttitle"
    assert lines[3] == "pr-11\teasy\t100\t1\t22\tyes\t0\tGitLab title"
    assert lines[7] == "pr-1\teasy\t70\t1\t30\tyes\t0\tAdd the widget parser"
    assert len(lines) == 9
    assert lines[-1] == "easy 5, medium 1, hard 1; 11 excluded"


_LOADED = (
    "import sys; from selfbench.cli import main; code = main(sys.argv[1:]); "
    "print(code, *sorted(sys.modules), file=sys.stderr)"
)


def test_mining_without_metadata_loads_no_validation_or_javascript_parser(
    tmp_path: Path, history: History
) -> None:
    """Mining pays for what it uses: pydantic only for `--prs`/`--github`, the JavaScript and
    TypeScript parsers only for such a file read whole, the archive compressor never."""
    argv = ["mine", str(history.path), "--no-sessions", "--out", str(tmp_path / "c.jsonl")]
    result = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv], capture_output=True, text=True, check=False
    )
    code, *modules = result.stderr.split("\n")[-2].split(" ")
    assert code == "0"
    unpaid = ("pydantic", "pydantic_core", "tree_sitter", "selfbench._gzip", "selfbench.quality")
    assert [name for name in modules if name.startswith(unpaid)] == []


def test_a_terminal_gets_a_rich_table(mined: MineResult) -> None:
    console = Console(file=io.StringIO(), width=120)
    render_table(mined, console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "7 candidates from 19 commits" in out
    row = next(line for line in out.splitlines() if "pr-1 " in line)
    cells = [cell.strip() for cell in row.split("│")[1:8]]
    assert cells == ["pr-1", "easy", "70", "1", "30", "yes", "0"]
    assert out.rstrip().endswith("easy 5, medium 1, hard 1; 11 excluded")


def test_schema_candidate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--candidate"]) == 0
    assert json.loads(capsys.readouterr().out) == candidate_json_schema()
    assert main(["schema"]) == 0
    assert "definition" in json.loads(capsys.readouterr().out)["properties"]


def test_the_output_is_deterministic(tmp_path: Path, history: History) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_candidates(mine_repository(history.path), first)
    result = mine_repository(history.path)
    write_candidates(result, second)
    assert first.read_bytes() == second.read_bytes()
    # every line mining writes is a valid candidate of the published schema, read back unchanged
    parsed = parse_candidate_lines(first.read_bytes(), source="a")
    assert [item.model_dump(mode="json", exclude_unset=True) for item in parsed] == [
        candidate.to_json() for candidate in result.candidates
    ]


def _write_prs(tmp_path: Path, text: str) -> str:
    path = tmp_path / "prs.json"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("not-a-repo", "error: not a git repository: {tmp}\n"),
        ("missing", "error: not a git repository: {tmp}/missing\n"),
        ("bad-rev", "error: unknown revision: nope\n"),
        ("bad-json", "error: {tmp}/prs.json: malformed JSON (line 1)\n"),
        ("not-array", "error: {tmp}/prs.json: expected a JSON array of pull requests\n"),
        ("bad-number", "error: {tmp}/prs.json: [0].number: int type\n"),
        ("no-prs-file", "error: cannot read {tmp}/nope.json: No such file or directory\n"),
        ("bad-out", "error: cannot write {tmp}/prs.json/c.jsonl: File exists\n"),
        (
            "bad-source-url",
            "error: --source-url team/app: expected an absolute URL (https://host/owner/name)\n",
        ),
        ("bad-max", "error: --max must be at least 1\n"),
        ("bad-budget", "error: --hard must be at least 0\n"),
        ("zero-over-fetch", "error: --over-fetch must be at least 1\n"),
        ("nan-over-fetch", "error: --over-fetch must be at least 1\n"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    case: str,
    message: str,
    tmp_path: Path,
    history: History,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = str(history.path)
    argv = {
        "not-a-repo": lambda: ["mine", str(tmp_path)],
        "missing": lambda: ["mine", str(tmp_path / "missing")],
        "bad-rev": lambda: ["mine", repo, "--rev", "nope"],
        "bad-json": lambda: ["mine", repo, "--prs", _write_prs(tmp_path, "[{")],
        "not-array": lambda: ["mine", repo, "--prs", _write_prs(tmp_path, '{"number": 1}')],
        "bad-number": lambda: ["mine", repo, "--prs", _write_prs(tmp_path, '[{"number": "1"}]')],
        "no-prs-file": lambda: ["mine", repo, "--prs", str(tmp_path / "nope.json")],
        "bad-out": lambda: ["mine", repo, "--out", f"{_write_prs(tmp_path, '[]')}/c.jsonl"],
        "bad-source-url": lambda: ["mine", repo, "--source-url", "team/app"],
        "bad-max": lambda: ["mine", repo, "--max", "0"],
        "bad-budget": lambda: ["mine", repo, "--hard", "-1"],
        "zero-over-fetch": lambda: ["mine", repo, "--over-fetch", "0"],
        "nan-over-fetch": lambda: ["mine", repo, "--over-fetch", "nan"],
    }[case]()
    assert main([*argv, "--no-sessions"]) == 2
    captured = capsys.readouterr()
    assert captured.err == message.format(tmp=tmp_path)
    assert captured.out == ""
    assert not (tmp_path / "no").exists()


def test_an_unreadable_session_file_is_a_reported_skip(
    tmp_path: Path, history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "broken.jsonl").symlink_to(tmp_path / "gone")
    assert main(["mine", str(history.path), "--sessions", str(sessions), "--json"]) == 0
    assert capsys.readouterr().err == (
        f"warning: skipped session {sessions / 'broken.jsonl'}: No such file or directory\n"
    )


def test_mining_never_reads_the_real_home(
    tmp_path: Path, history: History, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_text(
        json.dumps(
            {
                "type": "user", "cwd": str(history.path), "gitBranch": "feature-one",
                "timestamp": "2026-01-01T01:30:00Z",
                "message": {"role": "user", "content": "Please add the widget parser."},
            }
        )
        + "\n"
    )  # fmt: skip
    monkeypatch.setenv("HOME", str(home))
    assert main(["mine", str(history.path), "--json"]) == 0


def test_a_tiny_repository_with_one_commit(tmp_path: Path) -> None:
    history = History.create(tmp_path / "one")
    history.commit("Initial (#1)", {"src/a.py": lines(30)})
    result = mine_repository(history.path)
    assert result.candidates == ()
    assert [e.reason for e in result.excluded] == ["the first commit has no base"]


def test_a_mined_candidate_feeds_collect_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = build_sample_repository(tmp_path)
    arguments = sample_arguments(sample)
    (tmp_path / "tasks").mkdir()
    submit_task(arguments, output_root=tmp_path / "tasks")
    out = tmp_path / "candidates.jsonl"
    argv = ["mine", str(sample.path), "--no-sessions", "--medium", "1", "--out", str(out)]
    assert main([*argv, "--json"]) == 0
    (mined,) = json.loads(capsys.readouterr().out)["candidates"]
    number = arguments["definition"]["sourcePr"]
    assert (mined["id"], mined["baseCommit"], mined["difficulty"]) == (
        f"pr-{number}",
        sample.base,
        "medium",
    )
    collect = ["collect", str(tmp_path / "tasks"), "--repo", str(sample.path)]
    collect += ["--out", str(tmp_path / "out"), "--candidate", str(out)]
    assert main([*collect, "--candidate-id", f"pr-{number}"]) == 0
    assert (tmp_path / "out" / "harbor-task" / "task.toml").is_file()
    capsys.readouterr()
    write_candidates(mine_repository(sample.path, MineOptions(budgets={"easy": 1})), out)
    assert main([*collect, "--candidate-id", f"pr-{number}"]) == 1
    assert capsys.readouterr().err == (
        "error: authored task does not match its assigned PR, base commit, and difficulty\n"
    )


def test_merges_without_a_request_number_are_plain(tmp_path: Path) -> None:
    history = History.create(tmp_path / "merges")
    history.commit("Initial commit", {"src/a.py": lines(3)})
    release = history.merge(
        "release-1.x",
        "Merge branch 'release-1.x'",
        [{"src/r.py": lines(30), "tests/test_r.py": lines(3, "t")}],
    )
    titled = history.merge(
        "topic",
        "Refactor the parser (#7)",
        [{"src/p.py": lines(30), "tests/test_p.py": lines(3, "t")}],
    )
    result = mine_repository(history.path)
    assert [(c.id, c.kind, c.completed_commit) for c in result.candidates] == [
        ("pr-7", "merge", titled)
    ]
    assert (result.excluded[0].commit, result.excluded[0].reason) == (
        release,
        "not a merged pull request (--plain includes plain commits)",
    )
    assert result.candidates[0].title == "Refactor the parser"
    plain = mine_repository(history.path, MineOptions(plain=True))
    assert [c.id for c in plain.candidates] == ["pr-7", f"commit-{release[:12]}"]


def test_the_cycle_collector_is_left_as_it_was(history: History) -> None:
    assert gc.isenabled()
    mine_repository(history.path)
    assert gc.isenabled()
    gc.disable()
    try:
        mine_repository(history.path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_walk_is_freed_when_mining_returns_without_the_cycle_collector(
    history: History,
) -> None:
    """Nothing the walk read waits for the cycle collector (a full pass over it, at exit)."""
    gc.collect()
    gc.disable()
    try:
        mine_repository(history.path)
        walks = [item for item in gc.get_objects() if isinstance(item, _Walk)]
    finally:
        gc.enable()
    assert walks == []


def test_a_pull_request_number_seen_twice_is_one_candidate(tmp_path: Path) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", {"src/app.py": lines(10), "tests/test_app.py": lines(3, "t")})
    first = h.commit("Add a (#12)", {"src/a.py": lines(30, "a"), "tests/test_a.py": lines(3)})
    h.commit("Unrelated (#13)", {"src/u.py": lines(30, "u"), "tests/test_u.py": lines(3)})
    later = h.commit(
        "Follow up on a (#12)", {"src/b.py": lines(30, "b"), "tests/test_b.py": lines(3)}
    )
    result = mine_repository(h.path)
    assert [c.id for c in result.candidates].count("pr-12") == 1
    assert next(c for c in result.candidates if c.id == "pr-12").completed_commit == later
    [dropped] = [e for e in result.excluded if e.commit == first]
    assert dropped.reason == f"pull request #12 is also {later[:12]}, a later change"


def test_one_mined_candidate_alone_in_its_file_keeps_mining_rules(
    tmp_path: Path, history: History
) -> None:
    written = tmp_path / "c.jsonl"
    write_candidates(mine_repository(history.path, MineOptions(plain=True)), written)
    plain = f"commit-{history.shas['plain'][:12]}"
    line = next(x for x in written.read_text().splitlines() if json.loads(x)["id"] == plain)
    single = tmp_path / "one.jsonl"
    single.write_text(line + "\n")
    with pytest.raises(MineError) as err:
        read_candidate(single)
    assert str(err.value) == f"{single}: candidate {plain} has no pull request number to author"
    with pytest.raises(MineError) as err:
        read_candidate(single, "pr-999")
    assert str(err.value) == f"{single} has no candidate pr-999"
