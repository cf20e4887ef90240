"""An agent's workspace: a fresh clone at the base commit, its inputs, and its MCP wiring.

The clone is the agent's working directory. Its inputs (the candidate, the draft or the task to
repair, the prompt) sit in `.selfbench/` inside it, and the `selfbench mcp` server is declared in
the configuration files that common coding agents read from a project, so an agent started
there finds the `submit_task` tool without flags. Every file added is listed in the clone's
`.git/info/exclude`, so the agent's `git status` shows only its own work.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfbench._git import git, scratch_index
from selfbench._json import Json, JsonObject, JsonValue
from selfbench.errors import SelfbenchError
from selfbench.submit import OUTPUT_ENV

__all__ = [
    "INPUTS_DIR",
    "MCP_SERVER_NAME",
    "McpServerEntry",
    "Workspace",
    "changed_paths",
    "mcp_server_entry",
    "open_workspace",
]

INPUTS_DIR = ".selfbench"
MCP_SERVER_NAME = "selfbench"
_EXCLUDE = "info/exclude"


@dataclass(frozen=True, slots=True)
class Workspace:
    """The clone the agent works in, and where its inputs and MCP configuration are."""

    repo: Path
    inputs: Path
    mcp_config: Path
    out_dir: Path

    def write_input(self, name: str, content: bytes) -> Path:
        """Write one input file under `.selfbench/`; its path."""
        path = self.inputs / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return path


@dataclass(frozen=True, slots=True)
class McpServerEntry:
    """How an agent starts the MCP server: the command, its arguments, its environment."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]

    def to_json(self) -> JsonObject:
        """The entry as the agents' MCP configuration files hold it."""
        return {"command": self.command, "args": list(self.args), "env": dict(self.env)}


def mcp_server_entry(out_dir: Path) -> McpServerEntry:
    """How to start `selfbench mcp` writing into `out_dir` (this interpreter, this selfbench)."""
    return McpServerEntry(
        command=sys.executable,
        args=("-m", "selfbench", "mcp", "--output-root", str(out_dir)),
        env=((OUTPUT_ENV, str(out_dir)),),
    )


def open_workspace(repo: Path, commit: str, root: Path, out_dir: Path) -> Workspace:
    """Clone `repo` into `root/repo` at `commit` (detached) and wire the MCP server in.

    Raises:
        GitError: the clone or the checkout failed.
    """
    clone = root / "repo"
    git(root, "clone", "--quiet", "--no-checkout", "--", str(repo.resolve()), str(clone))
    git(clone, "checkout", "--quiet", "--detach", commit)
    inputs = clone / INPUTS_DIR
    inputs.mkdir()
    entry = mcp_server_entry(out_dir)
    config = inputs / "mcp.json"
    config.write_text(_dumps({"mcpServers": {MCP_SERVER_NAME: entry.to_json()}}), encoding="utf-8")
    added = [f"/{INPUTS_DIR}/", *_write_agent_configs(clone, entry)]
    exclude = Path(git(clone, "rev-parse", "--git-common-dir").decode().strip())
    exclude = exclude if exclude.is_absolute() else clone / exclude
    with (exclude / _EXCLUDE).open("a", encoding="utf-8") as handle:
        handle.write("".join(f"{name}\n" for name in added))
    return Workspace(clone, inputs, config, out_dir)


def _dumps(value: Json) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _merged(path: Path, key: str, name: str, entry: JsonObject) -> JsonObject | None:
    """The JSON config at `path` with our server under `key`; None if it cannot be merged."""
    if not path.exists():
        return {key: {name: entry}}
    try:
        value: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # JSON with comments, or not ours to rewrite: leave the project's file
    found = value.get(key, {}) if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(found, dict):
        return None
    servers: JsonObject = dict(found)
    servers[name] = entry
    return {**value, key: servers}


def _codex_toml(entry: McpServerEntry) -> str:
    # JSON strings and arrays of strings are valid TOML basic strings and arrays.
    env = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in entry.env)
    return (
        f"[mcp_servers.{MCP_SERVER_NAME}]\n"
        f"command = {json.dumps(entry.command)}\n"
        f"args = {json.dumps(list(entry.args))}\n"
        f"env = {{ {env} }}\n"
    )


def _write_agent_configs(clone: Path, entry: McpServerEntry) -> list[str]:
    """Declare the server where agents look for a project's MCP servers; the paths written."""
    name = MCP_SERVER_NAME
    server = entry.to_json()
    opencode: JsonObject = {
        "type": "local",
        "command": [entry.command, *entry.args],
        "environment": dict(entry.env),
    }
    configs: list[tuple[str, str, JsonObject]] = [
        (".mcp.json", "mcpServers", server),  # Claude Code
        (".cursor/mcp.json", "mcpServers", server),  # Cursor
        (".gemini/settings.json", "mcpServers", server),  # Gemini CLI
        (".vscode/mcp.json", "servers", {"type": "stdio", **server}),  # VS Code, Copilot
        ("opencode.json", "mcp", opencode),  # opencode
    ]
    written = []
    for relative, key, value in configs:
        path = clone / relative
        merged = _merged(path, key, name, value)
        if merged is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dumps(merged), encoding="utf-8")
        written.append(f"/{relative}")
    codex = clone / ".codex" / "config.toml"
    if not codex.exists():  # Codex, for a trusted project
        codex.parent.mkdir(parents=True, exist_ok=True)
        codex.write_text(_codex_toml(entry), encoding="utf-8")
        written.append("/.codex/config.toml")
    return written


def _tree(clone: Path, base: str, patches: Sequence[bytes]) -> str:
    with scratch_index(clone, base) as env:
        for data in patches:
            if data.strip():
                git(clone, "apply", "--cached", "-", stdin=data, env=env)
        return git(clone, "write-tree", env=env).decode().strip()


def changed_paths(
    clone: Path, base: str, before: Sequence[bytes], after: Sequence[bytes]
) -> tuple[str, ...] | str:
    """The repository paths whose content differs between `base` with the `before` patches
    applied and `base` with the `after` patches applied (what a repair changed); or, when a
    patch does not apply, why not, in one line.

    Uses a private index (`_git.scratch_index`), so neither the clone's work tree nor the user's
    repository is touched.
    """
    try:
        first = _tree(clone, base, before)
        second = _tree(clone, base, after)
        listed = git(clone, "diff", "--name-only", "-z", "--no-renames", first, second)
    except SelfbenchError as exc:
        return f"the repaired task's patches do not apply at its base commit: {exc}"
    return tuple(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p)
