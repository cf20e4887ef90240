"""`selfbench toolchains [--install] [--json]`: what the local environment would use."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from selfbench.cli.common import add_json_option
from selfbench.errors import EXIT_OK
from selfbench.progress import choose_reporter, stage

__all__ = ["add_toolchains_command"]


def add_toolchains_command(commands: Any) -> None:
    """Register `toolchains` on the CLI's subcommands."""
    parser = commands.add_parser(
        "toolchains", help="show (and install) the image's toolchains for local validation"
    )
    parser.add_argument(
        "--install", action="store_true", help="install what the package registries publish"
    )
    add_json_option(parser)
    parser.set_defaults(run=_toolchains)


def _toolchains(args: argparse.Namespace) -> int:
    from selfbench.toolchains import (
        PackageRegistries,
        resolve,
        toolchain_cache,
    )
    from selfbench.toolchains.versions import TOOLCHAIN_ORDER

    registry = PackageRegistries() if args.install else None
    reporter = choose_reporter()  # a spinner naming each install, or a line per install
    with stage(reporter, "resolving toolchains"):
        resolved = resolve(TOOLCHAIN_ORDER, registry=registry, reporter=reporter)
    uses = [item.use for item in resolved]
    if args.json:
        report = {"cache": str(toolchain_cache()), "toolchains": [u.to_json() for u in uses]}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return EXIT_OK
    from rich.table import Table

    from selfbench.cli.report import console

    table = Table(box=None, padding=(0, 2))
    for column in ("toolchain", "wanted", "found", "source", "path"):
        table.add_column(column)
    for use in uses:
        table.add_row(use.name, use.wanted, use.found or "-", use.source, use.path or "-")
    console.print(table)
    for use in uses:
        if use.substitution is not None:
            console.print(f"substitution: {use.substitution}")
    console.print(f"cache: {toolchain_cache()}")
    return EXIT_OK
