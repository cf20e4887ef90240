"""Find each toolchain part: selfbench's cache first, then the host, then the registries.

The cache is `$SELFBENCH_TOOLCHAINS_DIR`, else `$XDG_CACHE_HOME/selfbench/toolchains`, else
`~/.cache/selfbench/toolchains`. Each entry is `<kind>-<version>/`: a prefix holding `bin/`
(uv, python, node, bun), a GOROOT (go), or `cargo/` beside `rustup/` (rust).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from selfbench.progress import Reporter, silent
from selfbench.toolchains.model import (
    Candidate,
    Component,
    Source,
    ToolchainUse,
    components,
    nearest,
    parse_version,
    satisfies,
)

__all__ = [
    "Host",
    "Registry",
    "Resolved",
    "host_pythons",
    "python_executable",
    "resolve",
    "resolved_pythons",
    "toolchain_cache",
]

_PROBE_SECONDS = 20.0
_CACHE_EXECUTABLE = {
    "uv": "bin/uv",
    "node": "bin/node",
    "bun": "bin/bun",
    "go": "bin/go",
    "rust": "bin/rustc",
}


def toolchain_cache(environ: Mapping[str, str] | None = None) -> Path:
    """Where selfbench keeps the toolchains it installed (`environ`: default the process's)."""
    env = os.environ if environ is None else environ
    if env.get("SELFBENCH_TOOLCHAINS_DIR"):
        return Path(env["SELFBENCH_TOOLCHAINS_DIR"])
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else _home(env) / ".cache"
    return base / "selfbench" / "toolchains"


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


@dataclass(frozen=True, slots=True)
class Host:
    """Where the host's own toolchains are looked for: a home directory and a PATH."""

    home: Path = field(default_factory=lambda: _home(os.environ))
    path: str = field(default_factory=lambda: os.environ.get("PATH", ""))

    def which(self, name: str) -> list[Path]:
        """`name` on this PATH, unless it is one of pyenv's shims (scripts, not toolchains)."""
        found = shutil.which(name, path=self.path)
        if found is None or "shims" in Path(found).parts:  # pyenv's shims are scripts
            return []
        return [Path(found)]


class Registry(Protocol):
    """Installs a component's exact version into the cache, where a registry publishes it."""

    def offers(self, component: Component) -> bool: ...

    def install(self, component: Component, cache: Path) -> Path | None:
        """The installed entry, or None when the registry could not be reached."""
        ...


@dataclass(frozen=True, slots=True)
class Resolved:
    """One component: what is used (for the report) and the copy that is mounted."""

    use: ToolchainUse
    candidate: Candidate | None


def _probe(executable: Path, kind: str, extra: str | None = None) -> str | None:
    """The version an executable reports; None when it does not run."""
    argv = [str(executable), "version" if kind == "go" else "--version"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    if kind == "rust" and extra is not None:
        env |= {"RUSTUP_HOME": extra, "CARGO_HOME": str(executable.parent.parent)}
    try:
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_SECONDS, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(result.stdout + result.stderr) if result.returncode == 0 else None


def _executable(component: Component, home: Path) -> Path:
    if component.kind == "python":
        return python_executable(component, home)
    return home / _CACHE_EXECUTABLE[component.kind]


def python_executable(component: Component, home: Path) -> Path:
    """A Python prefix's `python3.X` for the component, else its `python3` (another version,
    the nearest when the image's cannot be had)."""
    own = home / "bin" / component.name
    return own if own.is_file() else home / "bin" / "python3"


def _cached(component: Component, cache: Path) -> Iterator[tuple[Path, str | None]]:
    for entry in sorted(cache.glob(f"{component.kind}-*")):
        extra = str(entry / "rustup") if component.kind == "rust" else None
        yield (entry / "cargo" if component.kind == "rust" else entry), extra


def _python_homes(component: Component, host: Host) -> Iterator[Path]:
    """Prefixes of the wanted version first, then of any other (for the nearest)."""
    for version, name in ((component.wanted, component.name), ("3.", "python3")):
        yield from sorted(host.home.glob(f".pyenv/versions/{version}*"))
        yield from sorted(host.home.glob(f".local/share/uv/python/cpython-{version}*"))
        for exe in host.which(name):
            yield exe.resolve().parent.parent


def _hosted(component: Component, host: Host) -> Iterator[tuple[Path, str | None]]:
    """(home, extra) of each host copy, most specific first."""
    kind = component.kind
    if kind == "python":
        yield from ((home, None) for home in _python_homes(component, host))
    elif kind == "rust":
        yield host.home / ".cargo", str(host.home / ".rustup")
        yield Path("/usr/local/cargo"), "/usr/local/rustup"
    elif kind == "go":
        yield from ((exe.resolve().parent.parent, None) for exe in host.which("go"))
        yield Path("/usr/local/go"), None
        yield from ((home, None) for home in sorted(host.home.glob("sdk/go*")))
        yield from ((home, None) for home in sorted(Path("/usr/lib").glob("go-*")))
    elif kind == "node":
        yield from ((exe.resolve().parent.parent, None) for exe in host.which("node"))
        yield from ((home, None) for home in sorted(host.home.glob(".nvm/versions/node/*")))
    else:  # uv, bun: the executable's directory's parent
        own = {"uv": (".local/bin/uv", ".cargo/bin/uv"), "bun": (".bun/bin/bun",)}[kind]
        exes = [*host.which(kind), *(host.home / path for path in own)]
        yield from ((exe.resolve().parent.parent, None) for exe in exes)


def _found(
    component: Component, places: Iterator[tuple[Path, str | None]], source: Source
) -> list[Candidate]:
    result: list[Candidate] = []
    seen: set[Path] = set()
    for home, extra in places:
        exe = _executable(component, home)
        if home in seen or not exe.is_file():
            continue
        seen.add(home)
        version = _probe(exe, component.kind, extra)
        if version is not None:
            result.append(Candidate(component, version, source, str(home), extra))
    return result


def _use(component: Component, candidate: Candidate | None) -> Resolved:
    if candidate is None:
        return Resolved(ToolchainUse(component.name, component.wanted, None, "missing", None), None)
    use = ToolchainUse(
        component.name, component.wanted, candidate.version, candidate.source, candidate.home
    )
    return Resolved(use, candidate)


def _resolve_one(
    component: Component,
    *,
    cache: Path,
    host: Host,
    registry: Registry | None,
    reporter: Reporter,
) -> Resolved:
    cached = _found(component, _cached(component, cache), "cache")
    hosted = _found(component, _hosted(component, host), "host")
    for candidate in (*cached, *hosted):
        if satisfies(component.wanted, candidate.version):
            return _use(component, candidate)
    if registry is not None and registry.offers(component):
        reporter.download(f"installing {component.name} {component.wanted}")
        entry = registry.install(component, cache)
        if entry is not None:
            installed = _found(component, iter([_entry_home(component, entry)]), "registry")
            if installed:
                return _use(component, installed[0])
        reporter.download(f"{component.name} {component.wanted}: could not be installed")
    others = {candidate.version: candidate for candidate in (*hosted, *cached)}
    best = nearest(component.wanted, list(others))
    return _use(component, others[best] if best is not None else None)


def _entry_home(component: Component, entry: Path) -> tuple[Path, str | None]:
    if component.kind == "rust":
        return entry / "cargo", str(entry / "rustup")
    return entry, None


def resolve(
    toolchains: tuple[str, ...] | list[str],
    *,
    cache: Path | None = None,
    host: Host | None = None,
    registry: Registry | None = None,
    reporter: Reporter = silent,
) -> tuple[Resolved, ...]:
    """Each part of the declared toolchains: from the cache, else the host, else installed from
    `registry` (None: never install; each install told to `reporter`); where none has the
    image's version, the nearest found."""
    where = cache if cache is not None else toolchain_cache()
    return tuple(
        _resolve_one(
            component,
            cache=where,
            host=host or Host(),
            registry=registry,
            reporter=reporter,
        )
        for component in components(toolchains)
    )


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def resolved_pythons(resolved: tuple[Resolved, ...]) -> dict[str, str]:
    """The Python commands resolved toolchains put on the sandbox's PATH (`python3.11`, and
    `python3` for the default), each with the `major.minor` it runs: a missing version's
    command runs the nearest found, so its value names another version."""
    found: dict[str, str] = {}
    for item in resolved:
        candidate = item.candidate
        if candidate is None or candidate.component.kind != "python":
            continue
        found[candidate.component.name] = _minor(candidate.version)
        if candidate.component.default:
            found["python3"] = _minor(candidate.version)
    return dict(sorted(found.items()))


def host_pythons(names: tuple[str, ...], path: str, *, home: Path | None = None) -> dict[str, str]:
    """The Python commands of `names` found on `path` outside `home` (which a sandbox does not
    show), each with the `major.minor` it runs."""
    hidden = home if home is not None else _home(os.environ)
    found: dict[str, str] = {}
    for name in names:
        for executable in Host(home=hidden, path=path).which(name):
            version = _probe(executable, "python")
            if version is not None and not executable.resolve().is_relative_to(hidden):
                found[name] = _minor(version)
    return dict(sorted(found.items()))
