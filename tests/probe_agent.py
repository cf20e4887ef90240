"""An agent command that only reports what it was given: its workspace, inputs and wiring.

Run by `selfbench.run.author` as an author command, it prints one line per fact and exits
without submitting, so a test can check the workspace an agent finds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CONFIGS = (
    ".mcp.json",
    ".cursor/mcp.json",
    ".gemini/settings.json",
    ".vscode/mcp.json",
    "opencode.json",
    ".codex/config.toml",
    ".selfbench/mcp.json",
)
ENV = ("AUTHOR_MODE", "CANDIDATE", "DRAFT", "MCP_CONFIG", "PROMPT_FILE", "TASK_OUTPUT", "WORKSPACE")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def main() -> None:
    lines = [f"stdin {sys.stdin.read()[:18]}", f"argv {json.dumps(sys.argv[1:])}"]
    lines.append(f"head {_git('rev-parse', 'HEAD').strip()}")
    lines.append(f"status {_git('status', '--porcelain')!r}")
    lines.extend(f"config {name} {Path(name).is_file()}" for name in CONFIGS)
    servers = json.loads(Path(".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    lines.append(f"server {json.dumps(servers['selfbench']['args'][-2:])}")
    for name in ENV:
        value = os.environ[f"SELFBENCH_{name}"]
        shown = value if name == "AUTHOR_MODE" else os.path.relpath(value)
        lines.append(f"env SELFBENCH_{name} {shown}")
    inputs = sorted(str(path) for path in Path(".selfbench").rglob("*"))
    lines.append(f"inputs {' '.join(inputs)}")
    sys.stdout.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main()
