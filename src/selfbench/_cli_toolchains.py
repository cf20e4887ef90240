"""`selfbench toolchains [--install] [--json]`: what the local environment would use."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from selfbench._cli_common import add_json_option
from selfbench.errors import EXIT_OK

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


@contextmanager
def _progress() -> Iterator[Callable[[str], None]]:
    """A spinner naming each install at a terminal; one line per install otherwise."""
    if not sys.stderr.isatty():

        def line(message: str) -> None:
            sys.stderr.write(f"{message}\n")

        yield line
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich

    with Console(stderr=True).status("resolving toolchains") as status:
        yield status.update


def _toolchains(args: argparse.Namespace) -> int:
    from selfbench.toolchains import (  # noqa: PLC0415
        PackageRegistries,
        resolve,
        toolchain_cache,
    )
    from selfbench.toolchains.versions import TOOLCHAIN_ORDER  # noqa: PLC0415

    registry = PackageRegistries() if args.install else None
    with _progress() as on_event:
        resolved = resolve(TOOLCHAIN_ORDER, registry=registry, on_event=on_event)
    uses = [item.use for item in resolved]
    if args.json:
        report = {"cache": str(toolchain_cache()), "toolchains": [u.to_json() for u in uses]}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return EXIT_OK
    from rich.table import Table  # noqa: PLC0415

    from selfbench._report import console  # noqa: PLC0415

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
