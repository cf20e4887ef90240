"""The command reference in Markdown, rendered from the CLI's own argparse parser.

The documentation site builds these pages at build time (`docs/hooks.py`), so the reference is
never written by hand and cannot drift from the parser. argparse has no public API to walk a
parser's commands and arguments, so this module reads its documented-by-convention attributes
(`_actions`, `_action_groups`, `_choices_actions`) in one place.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

__all__ = ["REFERENCE_DIR", "render_cli_reference"]

REFERENCE_DIR = "cli"
_WIDTH = 100  # a fixed width, so the usage lines do not depend on the terminal that builds
_ESCAPED = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "|": "\\|",
        "\\": "\\\\",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
    }
)


def render_cli_reference(
    parser: argparse.ArgumentParser, *, guides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Render one page per subcommand of `parser` and an index: {path in the docs: Markdown}.

    `guides` maps a command to the docs page (relative to the docs root) that explains it; each
    command's page links there.
    """
    commands = _commands(parser)
    pages = {f"{REFERENCE_DIR}/index.md": _render_index(parser, commands)}
    for name, (summary, command) in commands.items():
        guide = (guides or {}).get(name)
        pages[f"{REFERENCE_DIR}/{name}.md"] = _render_command(command, summary, guide)
    return pages


def _commands(
    parser: argparse.ArgumentParser,
) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Each subcommand's name, its one-line help and its parser, in the parser's order."""
    commands: dict[str, tuple[str, argparse.ArgumentParser]] = {}
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}  # noqa: SLF001
            for name, command in action.choices.items():
                commands[name] = (helps.get(name, ""), command)
    return commands


def _render_index(
    parser: argparse.ArgumentParser, commands: dict[str, tuple[str, argparse.ArgumentParser]]
) -> str:
    rows = [
        f"| [`{command.prog}`]({name}.md) | {_cell(summary)} |"
        for name, (summary, command) in commands.items()
    ]
    return "\n".join(
        [
            "# Command reference",
            "",
            "Every page of this reference is generated from the command line's own parser when the",
            "site is built. The [guides](../commands.md) explain what each command does and why.",
            "",
            _usage_block(parser),
            "",
            "| Command | What it does |",
            "| --- | --- |",
            *rows,
            "",
            *_render_groups(parser, skip_commands=True),
        ]
    )


def _render_command(command: argparse.ArgumentParser, summary: str, guide: str | None) -> str:
    lines = [f"# {command.prog}", ""]
    if summary:
        lines += [_text(_sentence(summary)), ""]
    if command.description:
        lines += [_text(command.description), ""]
    if guide:
        lines += [f"What it does and why: [the guide](../{guide}).", ""]
    lines += [_usage_block(command), "", *_render_groups(command, skip_commands=False)]
    if command.epilog:
        lines += [_text(command.epilog), ""]
    return "\n".join(lines)


def _usage_block(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)  # noqa: SLF001
    return f"```text\n{formatter.format_help().strip()}\n```"


def _render_groups(parser: argparse.ArgumentParser, *, skip_commands: bool) -> list[str]:
    lines: list[str] = []
    for group in parser._action_groups:  # noqa: SLF001
        rows = [
            _row(action)
            for action in group._group_actions  # noqa: SLF001
            if action.help != argparse.SUPPRESS
            and not (skip_commands and isinstance(action, argparse._SubParsersAction))  # noqa: SLF001
        ]
        if not rows:
            continue
        lines += [f"## {(group.title or 'arguments').capitalize()}", ""]
        if group.description:
            lines += [_text(group.description), ""]
        lines += ["| Argument | Description |", "| --- | --- |", *rows, ""]
    return lines


def _row(action: argparse.Action) -> str:
    formatter = argparse.HelpFormatter("selfbench", width=_WIDTH)
    invocation = formatter._format_action_invocation(action)  # noqa: SLF001
    notes = []
    if action.option_strings and action.required:
        notes.append("required")
    if (
        action.nargs != 0
        and action.default not in (None, argparse.SUPPRESS, [], ())
        and "default" not in (action.help or "")
    ):
        notes.append(f"default: {action.default}")
    help_text = _cell(action.help or "")
    if notes:
        note = _cell(", ".join(notes))
        help_text = f"{help_text} ({note})" if help_text else note
    return f"| `{invocation}` | {help_text} |"


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def _text(text: str) -> str:
    return text.translate(_ESCAPED)


def _cell(text: str) -> str:
    return " ".join(_text(text).split())
