"""The environment a command chose, parsed once: `local` or `harbor`, and what each needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the host's network is detected only by a command that runs setup
    from selfbench.environments.local.host_network import HostNetwork

__all__ = ["ENVIRONMENTS", "EnvironmentSpec", "Kind", "unused_option"]

Kind = Literal["local", "harbor"]
ENVIRONMENTS: tuple[Kind, ...] = ("local", "harbor")
"""The environments, in the order the command line lists them."""


@dataclass(frozen=True, slots=True)
class EnvironmentSpec:
    """Where a task's stages run and with what: one value for validate, run and eval."""

    kind: Kind = "local"
    harbor_env: str = "docker"
    """Harbor's environment (`docker`, `modal`, … or `package.module:ClassName`)."""
    harbor: str = "harbor"
    """The Harbor executable (a path, or a name on PATH)."""
    setup_env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs passed into the local sandbox's setup only (`--setup-env`)."""
    host_network: HostNetwork | None = None
    """The host's CA certificates and proxies for the local sandbox's setup (None: none)."""


def unused_option(
    given: Mapping[str, bool], kind: str, used: Mapping[str, tuple[str, ...]]
) -> str | None:
    """The refusal of the first option given (`given[flag]`) that the environment `kind` does
    not use, in the order of `used` (each environment's options); None when all apply."""
    for flags in used.values():
        for flag in flags:
            if flag not in used[kind] and given.get(flag, False):
                return f"{flag} is not used by --env {kind}"
    return None
