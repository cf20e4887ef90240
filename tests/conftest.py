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


_FIRST = "test_harbor_containers.py"
"""The module collected first: its Harbor runs in containers take minutes in one fixture, so
started first (by the first worker: `--dist worksteal` hands each worker a contiguous half of the
collection and steals from the end) they overlap the rest of the suite instead of ending it."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`_FIRST`'s tests first (the order is otherwise kept), and the one skip of the `sandbox`
    marker's tests, where the sandbox cannot start."""
    items.sort(key=lambda item: item.path.name != _FIRST)
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


def _clear_setups() -> None:
    """Remove every prepared workspace parked and every dependency seed kept."""
    from selfbench.environments.local.seeds import seed_store  # noqa: PLC0415 - lazily, as the CLI
    from selfbench.environments.local.workspaces import workspace_pool  # noqa: PLC0415 - as above

    workspace_pool().clear()
    seed_store().clear()


@pytest.fixture(autouse=True, scope="module")
def _setups_kept_within_a_module() -> Iterator[None]:
    """Each module starts with no prepared workspace parked and no dependency seed kept by an
    earlier one, and leaves none on disk. Within a module a test may start from what an earlier
    test of it prepared (a skipped setup, a seeded `.venv`), as a run's later candidates do: the
    sandbox tests would otherwise install the same sample's dependencies afresh for each test.
    A test that checks what a fresh setup does is marked `fresh_setup`."""
    _clear_setups()
    yield
    _clear_setups()


@pytest.fixture(autouse=True)
def _fresh_setup(request: pytest.FixtureRequest) -> Iterator[None]:
    """A `fresh_setup` test starts with no prepared workspace and no seed, and leaves none."""
    if request.node.get_closest_marker("fresh_setup") is None:
        yield
        return
    _clear_setups()
    yield
    _clear_setups()
