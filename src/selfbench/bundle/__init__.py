"""The Harbor bundle compiler: `layout` names every path, `render` makes the files (pure)."""

from selfbench.bundle.layout import COMPILER_REVISION, DEFAULT_ALLOWED_HOSTS
from selfbench.bundle.render import (
    BundleFile,
    render_bundle,
    render_instruction,
    render_manifest,
    render_refresh,
)

__all__ = [
    "COMPILER_REVISION",
    "DEFAULT_ALLOWED_HOSTS",
    "BundleFile",
    "render_bundle",
    "render_instruction",
    "render_manifest",
    "render_refresh",
]
