"""Render a Harbor bundle from a definition and its two patches (SPEC §5). Pure, deterministic.

Everything except the two repository snapshots, which the compiler writes from git.
"""

from __future__ import annotations

from dataclasses import dataclass

from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.manifest import build_bundle_manifest, render_bundle_manifest
from selfbench.bundle.render_docker import render_agent_dockerfile, render_verifier_dockerfile
from selfbench.bundle.render_scripts import render_solve_sh, render_test_sh
from selfbench.bundle.render_toml import render_task_toml
from selfbench.contract import TaskDefinition
from selfbench.patches import dependency_setup_patch, parse_patch

__all__ = [
    "BundleFile",
    "render_bundle",
    "render_instruction",
    "render_refresh",
]

_FILE_MODE = 0o644
_EXECUTABLE_MODE = 0o755


@dataclass(frozen=True, slots=True)
class BundleFile:
    """One file of a bundle: its bundle-relative path, bytes and mode (0o644 or 0o755)."""

    path: str
    content: bytes
    mode: int


def _file(path: str, content: bytes | str) -> BundleFile:
    data = content if isinstance(content, bytes) else _encode(content)
    mode = _EXECUTABLE_MODE if path in layout.EXECUTABLE_PATHS else _FILE_MODE
    return BundleFile(path, data, mode)


def _encode(text: str) -> bytes:
    # Patch paths that were not UTF-8 come back as surrogate escapes; write their original bytes.
    return text.encode("utf-8", "surrogateescape")


def render_instruction(definition: TaskDefinition) -> str:
    """`instruction.md`: the prompt, trimmed, plus one newline."""
    return definition.prompt.strip() + "\n"


def render_bundle(
    definition: TaskDefinition,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    allowed_hosts: tuple[str, ...] = layout.DEFAULT_ALLOWED_HOSTS,
    snapshot_sha256: str,
) -> tuple[BundleFile, ...]:
    """Every file of the bundle except the two `repo.tar.gz` snapshots, sorted by path.

    `snapshot_sha256` is the digest of the snapshot the compiler wrote, for the manifest.

    `tests/dependency-setup.patch` is present only when the gold patch touches a dependency
    manifest; `environment/dependency-setup.patch` (the same bytes) only when, besides, the
    definition's `agentDependencies` is true. Patches are parsed leniently: checking them is the
    compiler's job, not this one's.
    """
    dependencies = dependency_setup_patch(parse_patch(gold_patch, lenient=True))
    agent_dependencies = definition.agentDependencies and bool(dependencies)
    protected = held_out_paths(definition, parse_patch(test_patch, lenient=True))
    files = [
        _file(layout.TASK_TOML, render_task_toml(definition, allowed_hosts)),
        _file(layout.INSTRUCTION, render_instruction(definition)),
        _file(
            layout.ENV_DOCKERFILE,
            render_agent_dockerfile(definition, dependency_setup=agent_dependencies),
        ),
        _file(
            layout.TESTS_DOCKERFILE,
            render_verifier_dockerfile(definition, dependency_setup=bool(dependencies)),
        ),
        _file(layout.TEST_SH, render_test_sh(definition, protected, gold_patch)),
        _file(layout.TEST_PATCH, test_patch),
        _file(layout.SOLVE_SH, render_solve_sh()),
        _file(layout.GOLD_PATCH, gold_patch),
        _file(
            layout.MANIFEST,
            render_bundle_manifest(
                build_bundle_manifest(
                    definition, test_patch, gold_patch, snapshot_sha256=snapshot_sha256
                )
            ),
        ),
    ]
    if dependencies:
        files.append(_file(layout.DEPENDENCY_PATCH, dependencies))
    if agent_dependencies:
        files.append(_file(layout.ENV_DEPENDENCY_PATCH, dependencies))
    return tuple(sorted(files, key=lambda item: item.path))


def render_refresh(
    definition: TaskDefinition,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    allowed_hosts: tuple[str, ...] = layout.DEFAULT_ALLOWED_HOSTS,
    snapshot_sha256: str,
) -> tuple[BundleFile, ...]:
    """The bundle re-rendered after a repair; the writer rewrites `layout.REFRESH_PATHS` from it.

    The snapshot is not rewritten, so `snapshot_sha256` is the one its manifest records.
    """
    return render_bundle(
        definition,
        test_patch,
        gold_patch,
        allowed_hosts=allowed_hosts,
        snapshot_sha256=snapshot_sha256,
    )
