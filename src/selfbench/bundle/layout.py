"""Every path of a compiled Harbor bundle, and of the containers it runs in, spelled once (SPEC §5).

Bundle paths are relative to the bundle root (`harbor-task/` when packed); container paths are
absolute paths inside the agent or verifier image. Pure constants: no I/O.
"""

from __future__ import annotations

__all__ = [
    "AGENT_USER",
    "BASE_COMMIT",
    "BUNDLE_PATHS",
    "COMPILER_REVISION",
    "CONTAINER_AGENT_PATCH",
    "CONTAINER_APP",
    "CONTAINER_BASE_GIT",
    "CONTAINER_GOLD_PATCH",
    "CONTAINER_PATH",
    "CONTAINER_REWARD",
    "CONTAINER_SELFBENCH",
    "CONTAINER_TESTS",
    "CONTAINER_TEST_PATCH",
    "CONTAINER_UV_CACHE",
    "DEFAULT_ALLOWED_HOSTS",
    "DEPENDENCY_PATCH",
    "ENV_DEPENDENCY_PATCH",
    "ENV_DOCKERFILE",
    "ENV_SNAPSHOT",
    "EXECUTABLE_PATHS",
    "GOLD_PATCH",
    "HARBOR_SCHEMA_VERSION",
    "INSTRUCTION",
    "MANIFEST",
    "OPTIONAL_PATHS",
    "PINNED_ENVIRONMENT",
    "REFRESH_PATHS",
    "SNAPSHOT_PATHS",
    "SOLVE_SH",
    "TASK_TOML",
    "TESTS_DOCKERFILE",
    "TESTS_SNAPSHOT",
    "TEST_PATCH",
    "TEST_SH",
    "VERIFIER_USER",
]

# --- the bundle --------------------------------------------------------------------------------

TASK_TOML = "task.toml"
INSTRUCTION = "instruction.md"
ENV_DOCKERFILE = "environment/Dockerfile"
ENV_SNAPSHOT = "environment/repo.tar.gz"
TESTS_DOCKERFILE = "tests/Dockerfile"
TESTS_SNAPSHOT = "tests/repo.tar.gz"
TEST_SH = "tests/test.sh"
TEST_PATCH = "tests/test.patch"
DEPENDENCY_PATCH = "tests/dependency-setup.patch"
ENV_DEPENDENCY_PATCH = "environment/dependency-setup.patch"
SOLVE_SH = "solution/solve.sh"
GOLD_PATCH = "solution/gold.patch"
MANIFEST = ".selfbench-manifest.json"
BASE_COMMIT = ".selfbench-base-commit.json"

BUNDLE_PATHS = tuple(
    sorted(
        (
            TASK_TOML, INSTRUCTION, ENV_DOCKERFILE, ENV_SNAPSHOT, TESTS_DOCKERFILE,
            TESTS_SNAPSHOT, TEST_SH, TEST_PATCH, DEPENDENCY_PATCH, SOLVE_SH, GOLD_PATCH, MANIFEST,
            ENV_DEPENDENCY_PATCH, BASE_COMMIT,
        )
    )
)  # fmt: skip
"""Every path a bundle may hold, sorted; DEPENDENCY_PATCH only when gold touches a manifest,
ENV_DEPENDENCY_PATCH (the same bytes, for the agent image's build) only when the definition's
`agentDependencies` is true too."""
OPTIONAL_PATHS = frozenset({DEPENDENCY_PATCH, ENV_DEPENDENCY_PATCH})
"""The bundle paths that only some bundles hold."""
SNAPSHOT_PATHS = (ENV_SNAPSHOT, TESTS_SNAPSHOT)
"""The two copies of the repository snapshot: written by the compiler, never rendered."""
# BASE_COMMIT, also written by the compiler and never rendered, proves the snapshot is the base
# commit (`bundle.base_commit`); it sits at the bundle root, where nothing enters a container.
EXECUTABLE_PATHS = frozenset({TEST_SH, SOLVE_SH})
"""Files with mode 0755; every other file is 0644."""
REFRESH_PATHS = frozenset(
    {
        TASK_TOML, ENV_DOCKERFILE, TESTS_DOCKERFILE, TEST_SH, DEPENDENCY_PATCH,
        ENV_DEPENDENCY_PATCH, MANIFEST,
    }
)  # fmt: skip
"""What a refresh rewrites (the OPTIONAL_PATHS are written or removed)."""

COMPILER_REVISION: int = 9
"""Bumped whenever compiled output changes."""
HARBOR_SCHEMA_VERSION = "1.4"
DEFAULT_ALLOWED_HOSTS = ("chatgpt.com", "*.chatgpt.com", "openai.com", "*.openai.com")
"""The model provider's hosts the agent may reach (`[agent] allowed_hosts`)."""

# --- the containers ----------------------------------------------------------------------------

AGENT_USER = "agent"
VERIFIER_USER = "verifier"
CONTAINER_APP = "/app"
CONTAINER_SELFBENCH = "/opt/selfbench"
CONTAINER_BASE_GIT = "/opt/selfbench/base.git"
CONTAINER_AGENT_PATCH = "/opt/selfbench/agent.patch"
CONTAINER_UV_CACHE = "/opt/uv-cache"
CONTAINER_TESTS = "/tests"
CONTAINER_TEST_PATCH = "/tests/test.patch"
CONTAINER_GOLD_PATCH = "/solution/gold.patch"
CONTAINER_REWARD = "/logs/verifier/reward.json"
CONTAINER_PATH = (
    "/usr/local/go/bin:/usr/local/cargo/bin:/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin"
    ":/sbin:/bin"
)
"""The fixed PATH of both images and of every verifier command."""
PINNED_ENVIRONMENT = (("TZ", "UTC"), ("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"))
"""What both images and every local phase pin, so that two runs of one test differ only by the
task's own doing: the time zone (dates rendered or parsed in local time) and the locale (sorting,
number and date formats, the encoding of file names and output)."""
