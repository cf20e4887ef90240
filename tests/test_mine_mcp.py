"""`list_candidates`: mined candidates over the real MCP server, and as a plain function."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcp import ClientSession

from mine_history import build_history
from selfbench.errors import SelfbenchError
from selfbench.mine import mine_repository, write_candidates
from selfbench.mine.mcp_tool import CANDIDATES_ENV, LIST_CANDIDATES_SCHEMA, list_candidates
from test_mcp import run_with_server, text_of

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture(scope="module")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp")
    history = build_history(root / "repo")
    out = root / "candidates.jsonl"
    write_candidates(mine_repository(history.path), out)
    return out


def test_an_agent_lists_candidates_over_mcp(candidates: Path, tmp_path: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["list_candidates"].input_schema == LIST_CANDIDATES_SCHEMA
        result = await session.call_tool(
            "list_candidates", {"path": str(candidates), "difficulty": "easy", "limit": 2}
        )
        assert not result.is_error
        assert text_of(result) == (
            "5 candidates; showing 2:\n"
            "- pr-11 (easy, score 100): GitLab title\n"
            "- pr-10 (easy, score 95): Rename the app module"
        )
        assert result.structured_content is not None
        first = result.structured_content["candidates"][0]
        assert (first["id"], first["sourcePr"], first["testsChanged"]) == ("pr-11", 11, True)
        missing = await session.call_tool("list_candidates", {"path": str(tmp_path / "none")})
        assert missing.is_error
        assert text_of(missing) == (f"cannot read {tmp_path / 'none'}: No such file or directory")

    run_with_server(scenario, output_root=None, tmp_path=tmp_path)


def test_the_default_path_comes_from_the_environment(
    candidates: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CANDIDATES_ENV, raising=False)
    with pytest.raises(SelfbenchError) as err:
        list_candidates({})
    assert str(err.value) == "list_candidates needs a path (or SELFBENCH_CANDIDATES)"
    monkeypatch.setenv(CANDIDATES_ENV, str(candidates))
    listing = list_candidates({})
    assert listing.total == 7
    assert [item.id for item in listing.candidates][:2] == ["pr-3", "pr-2"]
