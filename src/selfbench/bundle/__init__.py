"""The Harbor bundle: its layout, its files, its manifest (SPEC §5).

Pure, values in and values out: `layout` names every path, `render*` make the files, `manifest`
builds, renders and parses `.selfbench-manifest.json`, `held_out` names the paths the verifier
protects. The one module here that touches the disk is `locate`, the finished-bundle reader.
Names load on first use, so the audit (which needs `held_out`) does not pay for the renderers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selfbench.bundle.layout import COMPILER_REVISION, DEFAULT_ALLOWED_HOSTS
    from selfbench.bundle.manifest import (
        BundleManifest,
        build_bundle_manifest,
        parse_bundle_manifest,
        render_bundle_manifest,
    )
    from selfbench.bundle.render import (
        BundleFile,
        render_bundle,
        render_instruction,
        render_refresh,
    )

__all__ = [
    "COMPILER_REVISION",
    "DEFAULT_ALLOWED_HOSTS",
    "BundleFile",
    "BundleManifest",
    "build_bundle_manifest",
    "parse_bundle_manifest",
    "render_bundle",
    "render_bundle_manifest",
    "render_instruction",
    "render_refresh",
]

_LAZY = {
    "COMPILER_REVISION": "selfbench.bundle.layout",
    "DEFAULT_ALLOWED_HOSTS": "selfbench.bundle.layout",
    "BundleFile": "selfbench.bundle.render",
    "BundleManifest": "selfbench.bundle.manifest",
    "build_bundle_manifest": "selfbench.bundle.manifest",
    "parse_bundle_manifest": "selfbench.bundle.manifest",
    "render_bundle": "selfbench.bundle.render",
    "render_bundle_manifest": "selfbench.bundle.manifest",
    "render_instruction": "selfbench.bundle.render",
    "render_refresh": "selfbench.bundle.render",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfbench.bundle' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
