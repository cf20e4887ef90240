"""How resolved toolchains appear in the sandbox: at the image's paths, on the image's PATH.

The image installs into `/usr/local` (bin, lib/node_modules, go, cargo, rustup); the sandbox
covers the host's `/usr/local` and mounts only the task's toolchains there, and each Python
prefix under `/opt/uv-python`, where the image's are. A Python built with a shared `libpython`
(pyenv's) recorded its own prefix to find it: `LD_LIBRARY_PATH` names the mounted one instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from selfbench.toolchains.model import Candidate, Mount, Provisioned
from selfbench.toolchains.resolve import Resolved, python_executable

__all__ = ["HOST_TOOL_NAMES", "build_provisioned", "host_tools_to_hide", "visible_in_sandbox"]

_BIN = "/usr/local/bin"
_PYTHONS = "/opt/uv-python"
"""Where the image keeps its Pythons (uv's UV_PYTHON_INSTALL_DIR)."""
_NODE_LINKS = {
    "npm": "npm/bin/npm-cli.js",
    "npx": "npm/bin/npx-cli.js",
    "corepack": "corepack/dist/corepack.js",
    "yarn": "corepack/dist/yarn.js",
    "yarnpkg": "corepack/dist/yarnpkg.js",
    "pnpm": "corepack/dist/pnpm.js",
    "pnpx": "corepack/dist/pnpx.js",
}
"""What Node's distribution links in `bin/` (npm, npx, corepack) and `corepack enable` adds."""

HOST_TOOL_NAMES = re.compile(
    r"(node|nodejs|npm|npx|corepack|yarn|yarnpkg|pnpm|pnpx|bun|bunx|uv|uvx|go|gofmt|"
    r"rustc|rustdoc|cargo|rustup|python|python[23](\.\d+)?(-config)?|pip|pip[23](\.\d+)?|"
    r"pydoc[23]?(\.\d+)?)"
)
"""Executables of a toolchain the host's `/usr/bin` may hold and the image's does not."""


def _uv(candidate: Candidate) -> Iterator[Mount]:
    home = Path(candidate.home)
    yield Mount("bind", f"{_BIN}/uv", str((home / "bin" / "uv").resolve()))
    if (home / "bin" / "uvx").is_file():
        yield Mount("bind", f"{_BIN}/uvx", str((home / "bin" / "uvx").resolve()))


def visible_in_sandbox(home: Path) -> bool:
    """A host toolchain the sandbox shows where it is: under /usr, but not /usr/local, which the
    sandbox covers with the image's own (a Python there is mounted away like any other)."""
    return home.is_relative_to("/usr") and not home.is_relative_to("/usr/local")


def _python(candidate: Candidate) -> Iterator[Mount]:
    home, name = Path(candidate.home), candidate.component.name
    executable = python_executable(candidate.component, home)
    if not visible_in_sandbox(home):
        shown = Path(_PYTHONS, f"{name}-{candidate.version}")
        yield Mount("bind", str(shown), str(home))
        # A virtual environment's Python looks for its standard library beside the `python3`
        # it was made from (here /usr/local), before the prefix its build recorded.
        stdlib = "python" + ".".join(candidate.version.split(".")[:2])
        for part in ("lib", "include"):
            if (home / part / stdlib).is_dir():
                yield Mount("symlink", f"/usr/local/{part}/{stdlib}", f"{shown}/{part}/{stdlib}")
        executable = shown / "bin" / executable.name
    yield Mount("symlink", f"{_BIN}/{name}", str(executable))
    if candidate.component.default:
        yield Mount("symlink", f"{_BIN}/python3", name)
        yield Mount("symlink", f"{_BIN}/python", "python3")


def _python_libraries(candidate: Candidate) -> tuple[str, ...]:
    """Where a Python built with a shared `libpython` (pyenv's are) finds it once it is mounted
    away from the prefix its build recorded."""
    home = Path(candidate.home)
    if visible_in_sandbox(home) or not any((home / "lib").glob("libpython*.so*")):
        return ()
    return (f"{_PYTHONS}/{candidate.component.name}-{candidate.version}/lib",)


def _node(candidate: Candidate) -> Iterator[Mount]:
    home = Path(candidate.home)
    yield Mount("bind", f"{_BIN}/node", str((home / "bin" / "node").resolve()))
    modules = home / "lib" / "node_modules"
    if modules.is_dir():
        yield Mount("bind", "/usr/local/lib/node_modules", str(modules))
    for name, script in _NODE_LINKS.items():
        if (modules / script).is_file():
            yield Mount("symlink", f"{_BIN}/{name}", f"../lib/node_modules/{script}")
        elif (home / "bin" / name).exists() and visible_in_sandbox(home):
            yield Mount("symlink", f"{_BIN}/{name}", str((home / "bin" / name).resolve()))
    if (home / "include" / "node").is_dir():
        yield Mount("bind", "/usr/local/include/node", str(home / "include" / "node"))


def _bun(candidate: Candidate) -> Iterator[Mount]:
    yield Mount("bind", f"{_BIN}/bun", str((Path(candidate.home) / "bin" / "bun").resolve()))
    yield Mount("symlink", f"{_BIN}/bunx", "bun")


def _go(candidate: Candidate) -> Iterator[Mount]:
    yield Mount("bind", "/usr/local/go", candidate.home)


def _rust(candidate: Candidate) -> Iterator[Mount]:
    yield Mount("bind", "/usr/local/rustup", candidate.extra or "")
    yield Mount("state", "/usr/local/cargo")
    yield Mount("bind", "/usr/local/cargo/bin", str(Path(candidate.home) / "bin"))


_MOUNTS = {"uv": _uv, "python": _python, "node": _node, "bun": _bun, "go": _go, "rust": _rust}
_ENVIRONMENT = {"rust": (("CARGO_HOME", "/usr/local/cargo"), ("RUSTUP_HOME", "/usr/local/rustup"))}


def build_provisioned(resolved: tuple[Resolved, ...]) -> Provisioned:
    """The sandbox's view of the resolved toolchains (reads the copies' layout from disk)."""
    mounts: list[Mount] = []
    environment: list[tuple[str, str]] = []
    libraries: list[str] = []
    for item in resolved:
        if item.candidate is None:
            continue
        kind = item.candidate.component.kind
        mounts.extend(_MOUNTS[kind](item.candidate))
        environment.extend(_ENVIRONMENT.get(kind, ()))
        if kind == "python":
            libraries.extend(_python_libraries(item.candidate))
    if libraries:
        environment.append(("LD_LIBRARY_PATH", ":".join(dict.fromkeys(libraries))))
    unique = {mount.target: mount for mount in reversed(mounts)}  # the first of one target wins
    mounts = [mount for mount in mounts if unique[mount.target] is mount]
    return Provisioned(
        tuple(item.use for item in resolved), tuple(mounts), tuple(sorted(set(environment)))
    )


def host_tools_to_hide(provisioned: Provisioned, directory: Path = Path("/usr/bin")) -> list[Path]:
    """The files the host's toolchain executables in `directory` run, which the sandbox covers:
    all those the image lacks, except the ones a provisioned toolchain itself runs."""
    used = {
        Path(mount.source).resolve()
        for mount in provisioned.mounts
        if mount.kind != "state" and mount.source.startswith("/")
    }
    if not directory.is_dir():
        return []
    hidden = {
        entry.resolve()
        for entry in directory.iterdir()
        if HOST_TOOL_NAMES.fullmatch(entry.name) and entry.resolve().is_file()
    }
    # only files the sandbox shows (a link may lead under a home, which it does not)
    return sorted(path for path in hidden - used if path.is_relative_to(directory.parent))
