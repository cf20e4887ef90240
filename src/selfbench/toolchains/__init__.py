"""The image's toolchains, locally: find, install and mount what a task's image would have.

`provision` resolves a task's declared toolchains (implied ones included) — selfbench's cache,
else the host, else installed from the package registries — and says how the sandbox mounts them.
Setting `SELFBENCH_TOOLCHAINS=host` turns provisioning off: the sandbox then shows the host's
system directories as they are (the behaviour before toolchains were provisioned).
"""

from __future__ import annotations

import os
from pathlib import Path

from selfbench.bundle.layout import CONTAINER_PATH
from selfbench.progress import Reporter, silent
from selfbench.toolchains.install import PackageRegistries
from selfbench.toolchains.model import Provisioned, ToolchainError, ToolchainUse, strict_refusal
from selfbench.toolchains.provision import build_provisioned
from selfbench.toolchains.resolve import (
    Host,
    Resolved,
    host_pythons,
    resolve,
    resolved_pythons,
    toolchain_cache,
)
from selfbench.toolchains.versions import PYTHON_VERSIONS

__all__ = [
    "Host",
    "PackageRegistries",
    "Provisioned",
    "Resolved",
    "ToolchainError",
    "ToolchainUse",
    "provision",
    "provision_task",
    "provisioning_enabled",
    "resolve",
    "sandbox_pythons",
    "strict_refusal",
    "toolchain_cache",
]


def provisioning_enabled() -> bool:
    """False when `SELFBENCH_TOOLCHAINS=host` asks for the host's system directories as they are."""
    return os.environ.get("SELFBENCH_TOOLCHAINS", "") != "host"


def provision(
    toolchains: tuple[str, ...] | list[str],
    *,
    install: bool = True,
    reporter: Reporter = silent,
) -> Provisioned:
    """What the sandbox mounts for these toolchains, installing missing ones when `install`
    (each install told to `reporter`)."""
    registry = PackageRegistries() if install else None
    return build_provisioned(resolve(toolchains, registry=registry, reporter=reporter))


def sandbox_pythons() -> dict[str, str]:
    """The Python commands the local sandbox will run (`python3`, `python3.11` …), each with the
    `major.minor` it runs: the image's Pythons as provisioning finds them in selfbench's cache
    or on the host (never installed: no registry publishes Python builds), or with provisioning
    off the host's own on the image's PATH."""
    if provisioning_enabled():
        return resolved_pythons(resolve(("python",)))
    names = ("python3", *(f"python{version}" for version in PYTHON_VERSIONS))
    return host_pythons(names, CONTAINER_PATH)


def provision_task(
    toolchains: tuple[str, ...] | list[str], strict: bool, logs: Path
) -> Provisioned | None:
    """A task's toolchains for the local sandbox; None when provisioning is off. What is
    installed on first use is noted in `logs/prepare.log`.

    Raises:
        ToolchainError: `strict` and a part is not at the image's version.
    """
    if not provisioning_enabled():
        return None
    provisioned = provision(toolchains, reporter=_PrepareLog(logs))
    if strict and (refusal := strict_refusal(provisioned.uses)) is not None:
        raise ToolchainError(refusal)
    return provisioned


class _PrepareLog(Reporter):
    """A task's toolchain downloads, as lines of its `prepare.log`."""

    def __init__(self, logs: Path) -> None:
        super().__init__()
        self._log = logs / "prepare.log"

    def download(self, line: str) -> None:
        with self._log.open("a", encoding="utf-8") as handle:
            handle.write(f"selfbench: toolchains: {line}\n")
