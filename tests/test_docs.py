"""The documentation: README is the front door, the MkDocs site under docs/ is the reference.

The site builds with warnings as errors (broken links and anchors included), its command reference
is generated from the parser, and every relative link of README and the pages names a file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from selfbench.cli import build_parser
from selfbench.cli.reference import render_cli_reference

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return dict(action.choices)
    raise AssertionError("the parser has no subcommands")


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    paths = [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    for name in _subcommands():
        assert (tmp_path / "site" / "cli" / name / "index.html").is_file(), name
    for image in ("eval-report.png", "review-page.png", "review-verifier.png"):
        assert (tmp_path / "site" / image).is_file(), image


def test_readme_is_a_front_door_under_300_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 300


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = FENCE.search(text)
    assert first_block is not None
    assert text[: first_block.start()] == "# selfbench\n\n"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["./scripts/demo.sh", "./scripts/test.sh"]


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_names_a_file(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{target} leaves the repository"
        assert path.exists() or _generated(path), f"{target} names no file"


def _generated(path: Path) -> bool:
    """Whether `path` is a page of the command reference, generated when the site builds."""
    relative = path.relative_to(ROOT / "docs").as_posix() if path.is_relative_to(ROOT) else ""
    return relative in render_cli_reference(build_parser())


def test_the_reference_has_a_page_per_command_with_every_option() -> None:
    pages = render_cli_reference(build_parser())
    commands = _subcommands()
    assert list(pages) == ["cli/index.md", *(f"cli/{name}.md" for name in commands)]
    for name, command in commands.items():
        page = pages[f"cli/{name}.md"]
        assert page.startswith(f"# selfbench {name}\n"), name
        assert f"usage: selfbench {name}" in page, name
        for action in command._actions:  # noqa: SLF001
            for option in action.option_strings:
                assert f"`{option}" in page or f", {option}" in page, (name, option)
        assert f"[`selfbench {name}`]({name}.md)" in pages["cli/index.md"], name


def test_the_reference_escapes_markdown_in_help_texts() -> None:
    parser = argparse.ArgumentParser(prog="tool")
    commands = parser.add_subparsers()
    command = commands.add_parser("go", help="run it")
    command.add_argument("--env", metavar="local|harbor", help="a|b <c> *d* `e` [f]")
    page = render_cli_reference(parser)["cli/go.md"]
    assert "| `--env local|harbor` | a\\|b &lt;c&gt; \\*d\\* \\`e\\` \\[f\\] |" in page
    assert page.startswith(
        "# tool go\n\nRun it.\n\n```text\nusage: tool go [-h] [--env local|harbor]"
    )


def test_every_command_has_a_guide() -> None:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None
    assert spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    assert set(hooks.GUIDES) == set(_subcommands())
    for guide in hooks.GUIDES.values():
        assert (ROOT / "docs" / guide.split("#")[0]).is_file(), guide


@pytest.mark.parametrize(
    "page", [README, ROOT / "docs" / "getting-started.md"], ids=["README", "getting-started"]
)
def test_the_walk_through_commands_parse(page: Path) -> None:
    blocks = re.findall(
        r"^```sh\n(.*?)^```", page.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE
    )
    commands = [
        shlex.split(line, comments=True)
        for block in blocks
        for line in block.replace("\\\n", " ").splitlines()
        if line.startswith("selfbench ")
    ]
    assert len(commands) >= 5
    for words in commands:
        build_parser().parse_args(words[1:])  # exits (a test failure) on a command it refuses
