"""Requests from local coding sessions: the three tools' files, redaction, and the linking rule."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mine_history import History, build_history
from selfbench.mine import MineOptions, mine_repository
from selfbench.mine.redact import REDACTIONS, redact
from selfbench.mine.sessions import (
    LINK_WINDOW_SECONDS,
    LinkTarget,
    SessionRequest,
    link_requests,
    parse_session,
    read_sessions,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def _iso(seconds: int) -> str:
    from datetime import UTC, datetime  # noqa: PLC0415

    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _jsonl(path: Path, items: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def claude_session(home: Path, cwd: str, branch: str, when: int, name: str = "a1") -> Path:
    """A Claude Code session: a real request, a tool result, meta and command echoes."""
    common = {"cwd": cwd, "gitBranch": branch, "sessionId": name, "version": "2.0.0"}
    return _jsonl(
        home / ".claude" / "projects" / "-work-app" / f"{name}.jsonl",
        [
            {"type": "summary", "summary": "Widget work"},
            {**common, "type": "user", "timestamp": _iso(when),
             "message": {"role": "user", "content": "Add a widget parser that reads the config "
                         "and rejects   empty widgets."}},
            {**common, "type": "assistant", "timestamp": _iso(when + 5),
             "message": {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}},
            {**common, "type": "user", "timestamp": _iso(when + 9),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "x", "content": "ran the tests: 3 passed"},
             ]}},
            {**common, "type": "user", "isMeta": True, "timestamp": _iso(when + 10),
             "message": {"role": "user", "content": "Caveat: the messages below were generated"}},
            {**common, "type": "user", "timestamp": _iso(when + 11),
             "message": {"role": "user", "content": "<command-name>/clear</command-name>"}},
            {**common, "type": "user", "isSidechain": True, "timestamp": _iso(when + 12),
             "message": {"role": "user", "content": "A subagent's own instructions here"}},
            {**common, "type": "user", "timestamp": _iso(when + 20),
             "message": {"role": "user", "content": [
                 {"type": "text", "text": "Also use token ghp_" + "a" * 36 + " for the API"},
                 {"type": "text", "text": "<system-reminder>internal</system-reminder>"},
             ]}},
        ],
    )  # fmt: skip


def codex_session(home: Path, cwd: str, branch: str, when: int, text: str) -> Path:
    """A Codex rollout: session_meta, injected context, and one user message."""
    day = home / ".codex" / "sessions" / "2026" / "01" / "01"
    return _jsonl(
        day / "rollout-2026-01-01T00-00-00-0001.jsonl",
        [
            {"timestamp": _iso(when), "type": "session_meta",
             "payload": {"id": "c0dex", "timestamp": _iso(when), "cwd": cwd,
                         "git": {"branch": branch, "commit_hash": "0" * 40}}},
            {"timestamp": _iso(when + 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "<environment_context>\n<cwd>/x</cwd>\n"
                                                "</environment_context>"}]}},
            {"timestamp": _iso(when + 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text",
                  "text": "<user_instructions>be brief</user_instructions>"}]}},
            {"timestamp": _iso(when + 2), "type": "response_item",
             "payload": {"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": text}]}},
            {"timestamp": _iso(when + 3), "type": "event_msg",
             "payload": {"type": "user_message", "message": text}},
            {"timestamp": _iso(when + 4), "type": "response_item",
             "payload": {"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": "Done."}]}},
        ],
    )  # fmt: skip


def pi_session(home: Path, cwd: str, when: int, text: str) -> Path:
    """A pi session (format version 3): a header, then message entries."""
    folder = home / ".pi" / "agent" / "sessions" / "--work-app--"
    return _jsonl(
        folder / "2026-01-01T00-00-00-000Z_5f31.jsonl",
        [
            {"type": "session", "version": 3, "id": "5f31", "timestamp": _iso(when), "cwd": cwd},
            {"type": "model_change", "id": "m1", "parentId": None, "timestamp": _iso(when)},
            {"type": "message", "id": "e1", "parentId": "m1", "timestamp": _iso(when + 1),
             "message": {"role": "user", "content": [{"type": "text", "text": text}],
                         "timestamp": (when + 1) * 1000}},
            {"type": "message", "id": "e2", "parentId": "e1", "timestamp": _iso(when + 2),
             "message": {"role": "toolResult", "toolCallId": "t",
                         "content": [{"type": "text", "text": "tool output, not a request"}]}},
        ],
    )  # fmt: skip


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build_history(tmp_path_factory.mktemp("sessions") / "repo")


def test_claude_code_keeps_the_users_own_words_redacted() -> None:
    data = claude_session(Path("/nonexistent-home-never-read"), "/w", "b", T0).read_bytes()
    requests = parse_session(data, name="a1")
    assert [(r.tool, r.session, r.timestamp, r.cwd, r.branch) for r in requests] == [
        ("claude-code", "a1", T0, "/w", "b"),
        ("claude-code", "a1", T0 + 20, "/w", "b"),
    ]
    assert [r.text for r in requests] == [
        "Add a widget parser that reads the config and rejects empty widgets.",
        "Also use token [REDACTED:github-token] for the API",
    ]


@pytest.fixture(autouse=True)
def _fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_codex_drops_injected_context_and_duplicates(tmp_path: Path) -> None:
    path = codex_session(tmp_path, "/w/app", "feat", T0, "Make the engine start faster please")
    requests, skipped = read_sessions([tmp_path / ".codex" / "sessions"], worktrees=("/w/app",))
    assert skipped == ()
    assert [(r.tool, r.session, r.branch, r.text) for r in requests] == [
        ("codex", path.stem, "feat", "Make the engine start faster please")
    ]


def test_pi_reads_user_messages_only(tmp_path: Path) -> None:
    pi_session(tmp_path, "/w/app/src", T0, "Rename the app module to application")
    requests, _ = read_sessions([tmp_path / ".pi"], worktrees=("/w/app",))
    assert [(r.tool, r.branch, r.cwd, r.text, r.timestamp) for r in requests] == [
        ("pi", None, "/w/app/src", "Rename the app module to application", T0 + 1)
    ]


def test_only_sessions_in_a_worktree_are_kept_and_text_is_deduplicated(tmp_path: Path) -> None:
    claude_session(tmp_path, "/elsewhere", "feat", T0, name="other")
    claude_session(tmp_path, "/w/app-2", "feat", T0, name="prefix-is-not-inside")
    claude_session(tmp_path, "/w/app", "feat", T0 + 100, name="later")
    claude_session(tmp_path, "/w/app", "feat", T0, name="first")
    requests, _ = read_sessions([tmp_path / ".claude"], worktrees=("/w/app",))
    assert [(r.session, r.timestamp) for r in requests] == [("first", T0), ("first", T0 + 20)]


def test_missing_folders_are_ignored(tmp_path: Path) -> None:
    assert read_sessions([tmp_path / "none"], worktrees=("/w",)) == ((), ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-ant-api03-" + "x" * 30, "key [REDACTED:anthropic-key]"),
        ("key sk-proj-" + "A1" * 15, "key [REDACTED:openai-key]"),
        ("key sk-" + "b" * 24, "key [REDACTED:openai-key]"),
        ("gh ghp_" + "c" * 36, "gh [REDACTED:github-token]"),
        ("gh github_pat_" + "D_" * 20, "gh [REDACTED:github-token]"),
        ("aws AKIA" + "ABCDEFGHIJKLMNOP", "aws [REDACTED:aws-access-key]"),
        ("slack xoxb-1234567890-abc", "slack [REDACTED:slack-token]"),
        ("g AIza" + "e" * 35, "g [REDACTED:google-api-key]"),
        ("jwt eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeK", "jwt [REDACTED:jwt]"),
        (
            "Authorization: Bearer abcdefghijklmnop123",
            "Authorization: Bearer [REDACTED:bearer-token]",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done",
            "[REDACTED:private-key] done",
        ),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\ncut off", "[REDACTED:private-key]"),
        (
            "clone https://ana:hunter22@git.example.com/r.git",
            "clone https://ana:[REDACTED:url-password]@git.example.com/r.git",
        ),
        ("PASSWORD=hunter22 make", "PASSWORD=[REDACTED:assigned-secret] make"),
        ('api_key: "s3cr3tvalue"', 'api_key: "[REDACTED:assigned-secret]"'),
        ("token=ghp_" + "f" * 36, "token=[REDACTED:github-token]"),
        ("nothing secret in https://example.com/a", "nothing secret in https://example.com/a"),
        ("the token is short: tok", "the token is short: tok"),
    ],
)
def test_every_redaction_pattern(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_the_table_covers_every_pattern() -> None:
    assert [rule.name for rule in REDACTIONS] == [
        "private-key", "anthropic-key", "openai-key", "github-token", "aws-access-key",
        "slack-token", "google-api-key", "jwt", "bearer-token", "url-password", "assigned-secret",
    ]  # fmt: skip


def _request(text: str, when: int, branch: str | None = None) -> SessionRequest:
    return SessionRequest("claude-code", "s", when, "/w", branch, text)


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        # a branch match beats named paths and a nearer merge
        (_request("work on src/b.py", T0, "feat-a"), ("a", "feat-a", ())),
        # more named paths beat a nearer merge
        (_request("touch src/b.py and src/c.py", T0), ("b", None, ("src/b.py", "src/c.py"))),
        # a file name of 5+ characters counts as a word; the nearest merge wins a tie
        (_request("fix common.py", T0), ("a", None, ("src/common.py",))),
        # no evidence at all: not linked
        (_request("do something nice", T0, "main"), None),
        # a main branch is no evidence
        (_request("do something nice", T0, "feat-main"), None),
        # after every merge, or before the window: not linked
        (_request("fix common.py", T0 + 10_000), None),
        (_request("fix common.py", T0 - LINK_WINDOW_SECONDS - 1), None),
    ],
)
def test_the_linking_rule(
    request_: SessionRequest, expected: tuple[str, str | None, tuple[str, ...]] | None
) -> None:
    targets = (
        LinkTarget("a", T0 + 100, "feat-a", ("src/a.py", "src/common.py")),
        LinkTarget("b", T0 + 5000, "feat-b", ("src/b.py", "src/c.py", "src/common.py")),
    )
    links = link_requests((request_,), targets)
    found = [(key, link.branch, link.paths) for key, items in links.items() for link in items]
    assert found == ([] if expected is None else [expected])


def test_sessions_are_linked_to_candidates_with_evidence(tmp_path: Path, history: History) -> None:
    home = tmp_path / "home"
    merged_pr1 = int(history.git("log", "-1", "--format=%ct", history.shas["pr1"]))
    claude_session(home, str(history.path), "feature-one", merged_pr1 - 3600)
    merged_gl = int(history.git("log", "-1", "--format=%ct", history.shas["pr11"]))
    codex_session(home, str(history.path / "src"), "main", merged_gl - 60, "Write src/gl.py")
    requests, _ = read_sessions([home / ".claude", home / ".codex"], worktrees=(str(history.path),))
    result = mine_repository(history.path, MineOptions(requests=requests))
    by_id = {c.id: c for c in result.candidates}
    assert [
        (r.tool, r.branch, r.paths, r.seconds_before_merge) for r in by_id["pr-1"].requests
    ] == [
        ("claude-code", "feature-one", (), 3600),
        ("claude-code", "feature-one", (), 3580),
    ]
    assert by_id["pr-1"].requests[1].text == "Also use token [REDACTED:github-token] for the API"
    assert [(r.tool, r.paths) for r in by_id["pr-11"].requests] == [("codex", ("src/gl.py",))]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=6,
)
_KEYS = st.sampled_from(["type", "cwd", "timestamp", "message", "payload", "gitBranch", "isMeta"])
_OBJECTS = st.dictionaries(_KEYS, _JSON | st.sampled_from(["user", "session_meta", "message"]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_OBJECTS, max_size=4), st.binary(max_size=40))
def test_session_files_of_any_shape_never_raise(objects: list[dict[str, Any]], junk: bytes) -> None:
    data = b"\n".join(json.dumps(item).encode() for item in objects) + b"\n" + junk
    for request in parse_session(data, name="s"):
        assert isinstance(request.text, str)
        assert isinstance(request.cwd, str)
        assert isinstance(request.timestamp, int)
