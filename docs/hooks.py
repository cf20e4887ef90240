"""MkDocs hooks: the command reference, rendered from the CLI's parser each time the site builds."""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from selfbench.cli import build_parser
from selfbench.cli.reference import REFERENCE_DIR, render_cli_reference

_INDEX = f"{REFERENCE_DIR}/index.md"
GUIDES = {  # each command's guide; a command missing here fails tests/test_docs.py
    "schema": "task-format.md",
    "check": "guide/authoring.md",
    "audit": "guide/authoring.md",
    "submit": "guide/authoring.md",
    "compile": "guide/compile.md",
    "refresh": "guide/compile.md",
    "collect": "guide/compile.md",
    "validate": "guide/validate.md",
    "repair-check": "guide/repair.md",
    "mcp": "guide/mcp.md",
    "import-swebench": "guide/swebench.md",
    "export-swebench": "guide/swebench.md",
    "export": "guide/export.md",
    "verify": "guide/export.md",
    "extract": "guide/export.md",
    "review": "guide/export.md",
    "toolchains": "guide/local-environment.md#the-images-toolchains-locally",
    "mine": "guide/mine.md",
    "draft": "guide/draft.md#drafting-tasks-selfbench-draft",
    "run": "guide/run.md",
    "status": "guide/run.md",
    "eval": "guide/eval.md",
    "report": "guide/eval.md",
    "quality": "guide/quality.md",
    "demo": "getting-started.md",
}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Expand the nav entry of the reference's index into the index and one page per command."""
    pages = list(render_cli_reference(build_parser()))
    config.nav = [_expand(entry, pages) for entry in config.nav or []]
    return config


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    """Add the generated reference pages to the site (nothing generated is committed)."""
    for path, markdown in render_cli_reference(build_parser(), guides=GUIDES).items():
        files.append(File.generated(config, path, content=markdown))
    return files


def _expand(entry: Any, pages: list[str]) -> Any:
    if isinstance(entry, dict):
        return {title: _expand_value(value, pages) for title, value in entry.items()}
    return entry


def _expand_value(value: Any, pages: list[str]) -> Any:
    if value == _INDEX:
        return pages
    if isinstance(value, list):
        return [_expand(item, pages) for item in value]
    return value
