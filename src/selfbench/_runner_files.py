"""Paths that decide how tests run, are collected or reported: no agent may change them.

One home for the rule: the verifier (`bundle/render_scripts.py`) leaves these paths out of the
agent's patch, and the audit refuses a gold patch that needs to change one, since its change
would be left out too. Patterns are `git apply --exclude` wildmatch patterns without
`FNM_PATHNAME` (`*` also matches `/`), the same semantics as `fnmatch.fnmatchcase`.
"""

from __future__ import annotations

import re
from fnmatch import translate

__all__ = [
    "PYTEST_CONFIGURATION_FILES",
    "RUNNER_CONTROL_PATTERNS",
    "changes_build_control",
    "is_runner_control",
]

_FILES = (
    # pytest: configuration, plugins by conftest, shadowing modules, bytecode caches.
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.py", "py.py",
    "sitecustomize.py", "usercustomize.py", "*.pth", "*.pyc", "*.pyo",
    "_selfbench_evidence.py",  # the verifier's own pytest reporter (bundle/evidence.py)
    # Node runners: configuration and setup files, package-manager configuration.
    "jest.config.*", "jest.setup.*", "vitest.config.*", "vitest.setup.*", "vitest.workspace.*",
    "vite.config.*", "babel.config.*", ".babelrc", ".babelrc.*", ".mocharc*", ".npmrc",
    ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".node-options",
    # Cargo and Go: toolchain and build configuration, build scripts, vendored modules, and Go's
    # and Rust's test files (a package's tests are the base's and the held-out ones).
    "rust-toolchain", "rust-toolchain.toml", "build.rs", "go.work", "go.work.sum", "go.env",
    "vendor/modules.txt", "*_test.go", "tests/*.rs",
)  # fmt: skip
"""Files that configure a runner or are loaded by it, at any depth.

`pyproject.toml`, `setup.cfg` and `tox.ini` are not among them: they hold much besides pytest's
configuration, so the verifier restores only a changed pytest table or section (`evidence.py`);
nor are `go.mod` and `Cargo.toml`, restored when their replace/toolchain directives or their
targets, profiles, patches, build keys or paths change.
"""

_DIRECTORIES = (
    "pytest", "_pytest", "pluggy", "_selfbench_evidence", "__pycache__", ".pytest_cache",
    ".venv", "venv", "site-packages", "node_modules", ".cargo", "target", ".git-hooks",
)  # fmt: skip
"""Directories that hold a runner, installed dependencies or build caches, at any depth."""


PYTEST_CONFIGURATION_FILES = ("pyproject.toml", "setup.cfg", "tox.ini")
"""Shared configuration files whose pytest part an agent may not change."""


def _patterns() -> tuple[str, ...]:
    patterns: list[str] = []
    for name in _FILES:
        patterns.extend((name, f"*/{name}"))
    for name in _DIRECTORIES:
        patterns.extend((f"{name}/*", f"*/{name}/*"))
    return tuple(patterns)


RUNNER_CONTROL_PATTERNS = _patterns()
"""Every runner-control pattern, each file or directory name at the root and at any depth."""


# One alternation of every pattern, as `fnmatch.translate` spells each: the audit asks this of every
# path of a large gold patch, where matching ~90 patterns one by one dominated its time.
_RUNNER_CONTROL_RE = re.compile("|".join(f"(?:{translate(p)})" for p in RUNNER_CONTROL_PATTERNS))


def is_runner_control(path: str) -> bool:
    """`path` (repository-relative, `/`-separated) is a runner-control path."""
    return _RUNNER_CONTROL_RE.match(path) is not None


# What the verifier restores in a changed `go.mod` (its replace and toolchain directives) or
# `Cargo.toml` (targets, profiles, patches, workspace, build keys, paths): `bundle/evidence.py`
# reads the files whole; the audit sees only a diff's lines, so it asks whether a changed line
# could be one of them (a section header in the diff's context is not needed to say so).
_BUILD_CONTROL_LINES = {
    "go.mod": re.compile(r"\s*(?:replace|toolchain)\b|.*=>"),
    "Cargo.toml": re.compile(
        r"\s*\[+\s*(?:lib|test|bin|bench|example|workspace|replace|patch|profile)\b"
        r"|\s*\"?(?:build|autotests|autobins|autoexamples|autobenches|autolib|links|workspace"
        r"|harness|path|test|doctest|proc-macro|crate-type)\"?\s*="
        r"|.*[{,.]\s*\"?path\"?\s*="
    ),
}


def changes_build_control(path: str, section: bytes) -> bool:
    """A patch's section for `path` adds or removes a line of a `go.mod` or `Cargo.toml` that the
    verifier restores to the base (so a gold patch changing one cannot be graded)."""
    pattern = _BUILD_CONTROL_LINES.get(path.rsplit("/", 1)[-1])
    if pattern is None:
        return False
    for line in section.decode("utf-8", "replace").splitlines():
        if line.startswith(("+++", "---")) or not line.startswith(("+", "-")):
            continue
        if pattern.match(line[1:]):
            return True
    return False
