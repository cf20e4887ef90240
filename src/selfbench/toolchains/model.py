"""What the local environment provisions for a task's toolchains: the parts the image provides,
their versions, where each was found and how it is mounted. Pure: values in, values out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from selfbench._json import JsonObject
from selfbench.errors import ToolchainError
from selfbench.toolchains import versions
from selfbench.toolchains.versions import expand_toolchains

__all__ = [
    "Candidate",
    "Component",
    "Mount",
    "Provisioned",
    "Source",
    "ToolchainError",
    "ToolchainUse",
    "components",
    "nearest",
    "parse_version",
    "satisfies",
    "strict_refusal",
]

Source = Literal["cache", "host", "registry", "missing"]


@dataclass(frozen=True, slots=True)
class Component:
    """One part of a toolchain's image layer, resolved on its own (`python3.11`, `node`)."""

    kind: str
    """The toolchain it belongs to: uv, python, node, bun, go or rust."""
    name: str
    wanted: str
    """The image's version; a `3.12` is met by any `3.12.x`."""
    default: bool = False
    """The python that `python` and `python3` run."""


def components(toolchains: tuple[str, ...] | list[str]) -> tuple[Component, ...]:
    """The parts the image provides for the declared toolchains (implied ones included)."""
    parts: list[Component] = []
    for kind in expand_toolchains(toolchains):
        if kind == "python":
            ordered = sorted(versions.PYTHON_VERSIONS, key=lambda v: v != versions.DEFAULT_PYTHON)
            parts.extend(
                Component("python", f"python{v}", v, default=v == versions.DEFAULT_PYTHON)
                for v in ordered
            )
        else:
            parts.append(Component(kind, kind, _WANTED[kind]))
    return tuple(parts)


_WANTED = {
    "uv": versions.UV_VERSION,
    "node": versions.NODE_VERSION,
    "bun": versions.BUN_VERSION,
    "go": versions.GO_VERSION,
    "rust": versions.RUST_VERSION,
}

_VERSION = re.compile(r"(\d+(?:\.\d+)+)")


def parse_version(text: str) -> str | None:
    """The first dotted number in a tool's `--version` output (`go version go1.25.0` → 1.25.0).

    Grammar: the leftmost `DIGITS ("." DIGITS)+`; None when there is none.
    """
    match = _VERSION.search(text)
    return match.group(1) if match else None


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def satisfies(wanted: str, found: str) -> bool:
    """`found` is `wanted` or, when `wanted` names fewer parts, one of its releases."""
    want, have = _parts(wanted), _parts(found)
    return have[: len(want)] == want


def nearest(wanted: str, found: tuple[str, ...] | list[str]) -> str | None:
    """The version closest to `wanted`: same major first, then minor, then patch; newer on ties."""
    want = _parts(wanted)

    def distance(version: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        have = _parts(version) + (0,) * len(want)
        gaps = tuple(abs(a - b) for a, b in zip(want, have, strict=False))
        return gaps, tuple(-part for part in _parts(version))

    return min(found, key=distance) if found else None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A copy of a component found on this machine: its version and where it lives."""

    component: Component
    version: str
    source: Source
    home: str
    """The prefix holding `bin/` (uv, bun, python, node), GOROOT (go) or CARGO_HOME (rust)."""
    extra: str | None = None
    """RUSTUP_HOME (rust)."""


@dataclass(frozen=True, slots=True)
class ToolchainUse:
    """What the local environment uses for one component, for the report."""

    name: str
    wanted: str
    found: str | None
    source: Source
    path: str | None

    @property
    def substitution(self) -> str | None:
        """`node 20.20.2 instead of 22.14.0`; None when the image's version is used."""
        if self.found is None:
            return f"{self.name} {self.wanted}: not available"
        if satisfies(self.wanted, self.found):
            return None
        return f"{self.name} {self.found} instead of {self.wanted}"

    def describe(self) -> str:
        """One phrase for the text report: `node 22.14.0 (registry)`."""
        return self.substitution or f"{self.name} {self.found} ({self.source})"

    def to_json(self) -> JsonObject:
        return {
            "name": self.name,
            "wanted": self.wanted,
            "found": self.found,
            "source": self.source,
            "path": self.path,
            "substitution": self.substitution,
        }


def strict_refusal(uses: tuple[ToolchainUse, ...]) -> str | None:
    """The reason `--strict-toolchains` rejects a task; None when every version is the image's."""
    problems = [use.substitution for use in uses if use.substitution is not None]
    if not problems:
        return None
    return "toolchains differ from the image's (--strict-toolchains): " + "; ".join(problems)


@dataclass(frozen=True, slots=True)
class Mount:
    """One entry of the sandbox's toolchain view, at an image path."""

    kind: Literal["bind", "symlink", "state"]
    """bind: `source` read-only at `target`; symlink: `target` → `source`; state: a writable
    directory of the task's own at `target`."""
    target: str
    source: str = ""


@dataclass(frozen=True, slots=True)
class Provisioned:
    """The toolchains of one task: what is used, how it is mounted, and its environment."""

    uses: tuple[ToolchainUse, ...] = ()
    mounts: tuple[Mount, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()

    @property
    def substitutions(self) -> tuple[str, ...]:
        return tuple(use.substitution for use in self.uses if use.substitution is not None)
