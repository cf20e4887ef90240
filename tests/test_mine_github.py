"""`selfbench mine --github` against a stand-in `gh`: a real executable first on PATH.

The stand-in checks its arguments and working directory exactly as `run_gh` must call it, then
prints recorded output in the shape gh prints when piped (one line of compact JSON, keys sorted,
a bot's login as `app/<name>`), or fails as gh fails (exit 4 when not logged in, 1 otherwise).
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from mine_history import History, build_history
from selfbench.cli import main
from selfbench.mine.prs import GH_FIELDS

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("sh") is None, reason="needs git and sh"
)

_ARGS = f"pr list --state merged --limit 10000 --json {GH_FIELDS}"
_NOT_LOGGED_IN = (
    "To get started with GitHub CLI, please run:  gh auth login\n"
    "Alternatively, populate the GH_TOKEN environment variable with a GitHub API authentication "
    "token."
)
_NOT_GITHUB = (
    "none of the git remotes configured for this repository point to a known GitHub host. To tell "
    "gh about a new GitHub host, please use `gh auth login`"
)
_NO_REPOSITORY = "GraphQL: Could not resolve to a Repository with the name 'octo/app'. (repository)"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build_history(tmp_path_factory.mktemp("mine-gh") / "repo")


def _bin_with_git(tmp_path: Path) -> Path:
    """A folder of only `git`, `sh` and `cat`: no `gh` but the stand-in can be found on PATH."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("git", "sh", "cat"):
        found = shutil.which(name)
        assert found is not None
        (folder / name).symlink_to(found)
    return folder


def _stand_in(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    stdout: str | bytes = "",
    stderr: str = "",
    code: int = 0,
) -> Path:
    """Put a `gh` first on PATH; return the log of the calls it answered (args, then cwd)."""
    folder = _bin_with_git(tmp_path)
    (tmp_path / "gh.out").write_bytes(stdout if isinstance(stdout, bytes) else stdout.encode())
    (tmp_path / "gh.err").write_text(stderr)
    log = tmp_path / "gh.log"
    script = f"""#!/bin/sh
printf '%s\\n%s\\n' "$*" "$PWD" >> {shlex.quote(str(log))}
if [ "$*" != {shlex.quote(_ARGS)} ]; then
  echo "unknown command \\"$*\\" for \\"gh\\"" >&2
  exit 1
fi
cat {shlex.quote(str(tmp_path / "gh.err"))} >&2
cat {shlex.quote(str(tmp_path / "gh.out"))}
exit {code}
"""
    gh = folder / "gh"
    gh.write_text(script)
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))
    return log


def _author(login: str, *, bot: bool = False) -> dict[str, object]:
    if bot:
        return {"id": "BOT_kgDOAAAAAA", "is_bot": True, "login": login}
    return {"id": "MDQ6VXNlcjE=", "is_bot": False, "login": login, "name": login.title()}


def _recorded(history: History) -> str:
    """What `gh pr list --json …` prints, piped: compact JSON, one line, keys sorted."""
    prs = [
        {
            "author": _author("ana"),
            "body": "From the PR.",
            "headRefName": "split",
            "isDraft": False,
            "mergeCommit": {"oid": history.shas["pr2"]},
            "mergedAt": "2024-01-02T03:04:05Z",
            "number": 2,
            "title": "Split the helpers",
            "url": "https://github.com/octo/app/pull/2",
        },
        {
            "author": _author("bo"),
            "body": "",
            "headRefName": "draft-work",
            "isDraft": True,
            "mergeCommit": {"oid": history.shas["pr8"]},
            "mergedAt": "2024-01-03T03:04:05Z",
            "number": 8,
            "title": "Draft work",
            "url": "https://github.com/octo/app/pull/8",
        },
        {
            "author": _author("app/renovate", bot=True),
            "body": "Updates x.",
            "headRefName": "renovate/x",
            "isDraft": False,
            "mergeCommit": {"oid": history.shas["pr1"]},
            "mergedAt": "2024-01-01T03:04:05Z",
            "number": 1,
            "title": "Update x",
            "url": "https://github.com/octo/app/pull/1",
        },
    ]
    return json.dumps(prs, separators=(",", ":"), sort_keys=True) + "\n"


def test_github_enriches_and_filters(
    tmp_path: Path,
    history: History,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = _stand_in(tmp_path, monkeypatch, stdout=_recorded(history))
    assert main(["mine", str(history.path), "--github", "--no-sessions", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert log.read_text().splitlines() == [_ARGS, str(history.path)]
    printed = json.loads(captured.out)
    by_id = {item["id"]: item for item in printed["candidates"]}
    reasons = {item["sourcePr"]: item["reason"] for item in printed["excluded"]}
    assert "pr-8" not in by_id
    assert "pr-1" not in by_id
    assert reasons[8] == "pull request #8 is a draft"
    assert reasons[1] == "authored by a bot (app/renovate)"
    pr2 = by_id["pr-2"]
    assert {key: pr2[key] for key in ("title", "body", "author", "sourceUrl", "headBranch")} == {
        "title": "Split the helpers",
        "body": "From the PR.",
        "author": "ana",
        "sourceUrl": "https://github.com/octo/app/pull/2",
        "headBranch": "split",
    }
    assert (pr2["metadata"], pr2["baseCommit"]) == ("pull-request", history.shas["pr1"])
    # a change gh did not list keeps what git says
    assert by_id["pr-10"]["metadata"] == "git"


def test_github_and_prs_file_together(
    tmp_path: Path,
    history: History,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stand_in(tmp_path, monkeypatch, stdout="[]\n")
    prs = tmp_path / "prs.json"
    prs.write_text(json.dumps([{"number": 10, "title": "From the file"}]))
    argv = ["mine", str(history.path), "--github", "--prs", str(prs), "--no-sessions", "--json"]
    assert main(argv) == 0
    by_id = {item["id"]: item for item in json.loads(capsys.readouterr().out)["candidates"]}
    assert by_id["pr-10"]["title"] == "From the file"


@pytest.mark.parametrize(
    ("case", "stdout", "stderr", "code", "message"),
    [
        (
            "not-logged-in", "", _NOT_LOGGED_IN, 4,
            "error: --github needs gh to be authenticated: run `gh auth login`\n",
        ),
        (
            "not-github", "",
            _NOT_GITHUB + "\n", 1, f"error: gh pr list failed: {_NOT_GITHUB}\n",
        ),
        (
            "graphql", "", _NO_REPOSITORY + "\n\n", 1,
            f"error: gh pr list failed: {_NO_REPOSITORY}\n",
        ),
        ("silent", "", "", 2, "error: gh pr list failed: exit code 2\n"),
        ("malformed", '[{"number":1,', "", 0, "error: gh pr list: malformed JSON (line 1)\n"),
        ("not-utf8", b'["\xff"]', "", 0, "error: gh pr list: malformed JSON (encoding)\n"),
        (
            "not-array", '{"number":1}\n', "", 0,
            "error: gh pr list: expected a JSON array of pull requests\n",
        ),
        ("bad-number", '[{"number":"1"}]\n', "", 0, "error: gh pr list: [0].number: int type\n"),
    ],
)  # fmt: skip
def test_gh_failures_are_one_line_and_exit_2(
    case: str,
    stdout: str | bytes,
    stderr: str,
    code: int,
    message: str,
    tmp_path: Path,
    history: History,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    del case
    _stand_in(tmp_path, monkeypatch, stdout=stdout, stderr=stderr, code=code)
    out = tmp_path / "candidates.jsonl"
    argv = ["mine", str(history.path), "--github", "--no-sessions", "--out", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.err, captured.out) == (message, "")
    assert not out.exists()


def test_gh_missing_is_one_line_and_exit_2(
    tmp_path: Path,
    history: History,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PATH", str(_bin_with_git(tmp_path)))
    assert main(["mine", str(history.path), "--github", "--no-sessions"]) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: --github needs the gh command, which is not installed\n"
    assert captured.out == ""
