"""What the command modules of the `selfbench` command line share: reading, printing, a spinner,
a progress bar."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from selfbench._fs import read_bytes
from selfbench.environments.spec import ENVIRONMENTS, EnvironmentSpec, Kind, unused_option
from selfbench.errors import EXIT_REJECTED, InputError

__all__ = [
    "add_environment_option",
    "add_environment_options",
    "add_harbor_options",
    "add_setup_options",
    "announce_host_network",
    "environment_kind",
    "environment_spec",
    "print_json",
    "progress",
    "read_input",
    "refuse_unused",
    "rejected",
    "setup_options",
    "working",
]

if TYPE_CHECKING:
    from selfbench.validate.host_network import HostNetwork

_T = TypeVar("_T")


def read_input(path: str) -> bytes:
    """The bytes of a file named on the command line; an unreadable one is rejected input."""
    return read_bytes(Path(path), error=InputError)


@contextmanager
def working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs, for a person at a terminal only."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich

    with Console(stderr=True).status(message):
        yield


@contextmanager
def progress(
    total: int,
    doing: str,
    verdicts: tuple[str, str],
    judge: Callable[[_T], tuple[str, bool, str | None]],
) -> Iterator[Callable[[_T], None]]:
    """Live progress on stderr: a bar at a terminal, one line per finished item otherwise.

    Yields the callback for each finished item; `judge` gives the item's name, whether it
    passed and the reason when not; `verdicts` names a pass and a failure (`accepted`,
    `rejected`); `doing` is the bar's label (`validating`).
    """
    passed, failed = verdicts
    if not sys.stderr.isatty():

        def line(item: _T) -> None:
            name, ok, reason = judge(item)
            sys.stderr.write(f"{name}: {passed if ok else f'{failed}: {reason}'}\n")

        yield line
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for rich
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (SpinnerColumn(), TextColumn(doing), BarColumn(), MofNCompleteColumn())
    console = Console(stderr=True)
    with Progress(*columns, TimeElapsedColumn(), console=console, transient=True) as bars:
        bar = bars.add_task(doing, total=total)

        def advance(item: _T) -> None:
            name, ok, _ = judge(item)
            mark = f"[green]{passed}[/]" if ok else f"[red]{failed}[/]"
            bars.console.print(f"{mark} {name}")
            bars.advance(bar)

        yield advance


def rejected(reason: str) -> int:
    """Report a failed check the way an error is reported, with the exit code of a rejection."""
    sys.stderr.write(f"error: {reason}\n")
    return EXIT_REJECTED


def print_json(value: Any) -> None:
    """`value` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# --- setup's environment: one spelling of the options for draft, validate, run and eval ---------

SETUP_ENV_HELP = "pass this variable (its value here) into setup only: a proxy, CA certificates"
NO_HOST_NETWORK_HELP = (
    "do not carry the host's CA bundle and proxy variables (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, "
    "HTTPS_PROXY, ...) into setup"
)


def add_setup_options(parser: Any, *, setup_env_help: str = SETUP_ENV_HELP) -> None:
    """`--setup-env NAME` and `--no-host-network-config` on a command that runs setup."""
    parser.add_argument("--setup-env", action="append", metavar="NAME", help=setup_env_help)
    # default None, not False: `validate` refuses a local-only option given under --env harbor
    parser.add_argument(
        "--no-host-network-config", action="store_true", default=None, help=NO_HOST_NETWORK_HELP
    )


def announce_host_network(enabled: bool) -> HostNetwork:
    """The host's network configuration for setup (none when `enabled` is false); what it
    carries is said once on stderr, when a setup first uses it."""
    from selfbench.validate.host_network import HostNetwork, announce_once  # noqa: PLC0415

    if not enabled:
        return HostNetwork()
    return HostNetwork.detect(on_first_use=announce_once(_say))


def _say(line: str) -> None:
    sys.stderr.write(f"{line}\n")
    sys.stderr.flush()


def setup_options(args: Any) -> tuple[tuple[tuple[str, str], ...], HostNetwork]:
    """`--setup-env`'s (name, value) pairs and the host's network configuration, announced.

    Raises:
        InputError: a `--setup-env` name that is not a variable, or not set.
    """
    from selfbench.validate.phases import setup_env_values  # noqa: PLC0415

    pairs = setup_env_values(args.setup_env or ())
    return pairs, announce_host_network(not args.no_host_network_config)


# --- the environment: one spelling of --env, --harbor-env and --harbor for validate, run, eval --
# Each defaults to None, so that one the chosen `--env` does not use can be refused (exit 2) and
# `run --resume` can tell an option given again from one left out.

ENV_HELP = "local: this machine's sandbox (root); harbor: `harbor run` (default: local)"


def add_environment_option(parser: Any) -> None:
    """`--env local|harbor`."""
    parser.add_argument("--env", choices=ENVIRONMENTS, help=ENV_HELP)


def add_harbor_options(parser: Any) -> None:
    """`--harbor-env NAME` and `--harbor PATH`."""
    parser.add_argument(
        "--harbor-env",
        metavar="NAME",
        help="Harbor's environment: docker, modal, daytona, … (default: docker)",
    )
    parser.add_argument("--harbor", metavar="PATH", help="the harbor executable (default: harbor)")


def add_environment_options(parser: Any) -> None:
    """`--env`, `--harbor-env` and `--harbor`."""
    add_environment_option(parser)
    add_harbor_options(parser)


def environment_kind(args: Any) -> Kind:
    """The environment `--env` chose (local when not given)."""
    kind: Kind = args.env or "local"
    return kind


def refuse_unused(args: Any, kind: str, used: Mapping[str, tuple[str, ...]]) -> None:
    """Refuse the first option given that `kind` does not use; `used` lists each environment's.

    Raises:
        InputError: such an option was given.
    """
    given = {
        flag: getattr(args, flag[2:].replace("-", "_")) is not None
        for flags in used.values()
        for flag in flags
    }
    if (refusal := unused_option(given, kind, used)) is not None:
        raise InputError(refusal)


def environment_spec(args: Any, used: Mapping[str, tuple[str, ...]]) -> EnvironmentSpec:
    """The environment the options chose, refusing an option it does not use; under `local`,
    `--setup-env`'s values and the host's network configuration (announced).

    Raises:
        InputError: an option the environment does not use, or a `--setup-env` variable that is
            not a name or not set.
    """
    kind = environment_kind(args)
    refuse_unused(args, kind, used)
    default = EnvironmentSpec()
    spec = EnvironmentSpec(
        kind=kind,
        harbor_env=default.harbor_env if args.harbor_env is None else args.harbor_env,
        harbor=default.harbor if args.harbor is None else args.harbor,
    )
    if kind != "local":
        return spec
    setup_env, host_network = setup_options(args)
    return EnvironmentSpec(spec.kind, spec.harbor_env, spec.harbor, setup_env, host_network)
