"""`draft_task` drafts only from the server's repository: a model cannot point it elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfbench.draft.mcp_tool import REPO_ENV, draft_task
from selfbench.errors import SelfbenchError


def test_a_repository_other_than_the_servers_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "theirs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv(REPO_ENV, str(tmp_path / "theirs"))
    arguments = {"candidate": "pr-1", "path": str(tmp_path / "c.jsonl")}
    with pytest.raises(SelfbenchError, match=r"draft_task drafts only from .*theirs"):
        draft_task({**arguments, "repo": str(tmp_path / "elsewhere")})
    with pytest.raises(SelfbenchError, match=r"draft_task drafts only from"):
        draft_task({**arguments, "repo": str(tmp_path / "theirs" / ".." / "elsewhere")})


def test_without_a_server_repository_only_one_inside_the_working_directory_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REPO_ENV, raising=False)
    (tmp_path / "here" / "repo").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "here")
    arguments = {"candidate": "pr-1", "path": str(tmp_path / "c.jsonl")}
    with pytest.raises(SelfbenchError, match=r"draft_task drafts only from a repository inside"):
        draft_task({**arguments, "repo": "/etc"})
    with pytest.raises(SelfbenchError) as inside:  # taken: it fails later, on the candidates
        draft_task({**arguments, "repo": "repo"})
    assert "drafts only" not in str(inside.value)
