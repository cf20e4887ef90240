"""Shared fixtures: real git repositories built in temp dirs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from selfbench.environments.local.uids import Users, leased_users

# The validation tests' sample projects run pytest from Debian's python3-pytest through
# `--system-site-packages`, which the image's Python does not have: they validate with the host's
# system directories as they are. tests/test_toolchains.py turns provisioning back on.
os.environ.setdefault("SELFBENCH_TOOLCHAINS", "host")


def _no_sandbox() -> str | None:
    """Why the local sandbox cannot start here, or None when it can."""
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        return "the local environment needs root and bubblewrap (CI runs as root)"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The one skip of the `sandbox` marker's tests, where the sandbox cannot start."""
    reason = _no_sandbox()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("sandbox") is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def sandbox_users() -> Iterator[Users]:
    """Host uids leased for one test's sandbox (as every run leases its own), released after."""
    with leased_users() as users:
        yield users


@pytest.fixture
def other_uid(request: pytest.FixtureRequest) -> int:
    """A uid that is not this process's and belongs to no host account: one leased as a sandbox
    user. Starting a process as it takes root; without root the test is skipped."""
    if os.geteuid() != 0:
        pytest.skip(
            f"no other uid to run as: the tests run as uid {os.geteuid()}, not root, and cannot "
            "start a process as another user"
        )
    users: Users = request.getfixturevalue("sandbox_users")
    return users.agent


@pytest.fixture(autouse=True)
def _no_parked_workspaces() -> Iterator[None]:
    """Each test starts with no prepared workspace parked and no dependency seed kept by an
    earlier one (a test that reuses a preparation makes both within itself), and leaves none on
    disk."""
    from selfbench.environments.local.seeds import seed_store  # noqa: PLC0415 - lazily, as the CLI
    from selfbench.environments.local.workspaces import workspace_pool  # noqa: PLC0415 - as above

    workspace_pool().clear()
    seed_store().clear()
    yield
    workspace_pool().clear()
    seed_store().clear()
