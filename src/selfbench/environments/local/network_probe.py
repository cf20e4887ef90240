"""Whether setup can reach the registries a repository needs, asked in seconds before any work.

One small request per ecosystem whose manifest the repository's root holds, made the way setup
makes its own: in the local sandbox, through its network (slirp4netns), with the host's CA bundle
and proxy variables and `--setup-env`'s (`host_network`), by the ecosystem's own client reading
its own configuration (pip's index, npm's registry), so no registry is named here. A request the
network fails raises `SetupNetworkError` with the failing line and the fix, as a setup would; one
that fails otherwise (a client missing on this machine) is not the network's and is let pass:
setup itself will say.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from selfbench._git import git
from selfbench.environments.local.host_network import HostNetwork, describe_failure, network_failure
from selfbench.environments.local.sandbox import Mounts, Sandbox, leased_users, require_sandbox
from selfbench.errors import SetupNetworkError

__all__ = ["PROBES", "Probe", "ecosystems", "probe_registries"]


@dataclass(frozen=True, slots=True)
class Probe:
    """One ecosystem's request: the root files that say the repository needs it, the command."""

    name: str
    manifests: tuple[str, ...]
    command: str


PROBES = (
    Probe(
        "Python",
        ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "uv.lock"),
        "python3 -m pip index versions pip --retries 0 --timeout 20 --disable-pip-version-check",
    ),
    Probe("npm", ("package.json",), "npm ping --fetch-retries=0 --fetch-timeout=20000"),
    Probe("Go", ("go.mod",), "go list -m -versions golang.org/x/mod"),
    Probe("Cargo", ("Cargo.toml",), "cargo search --limit 1 serde"),
)
"""The ecosystems probed: pip's `index versions` reads one index page, `npm ping` one URL, `go
list -m -versions` one module's list from the module proxy, `cargo search` one query of the
registry. A client the sandbox does not have (the image's Go and Cargo come with a task's
toolchains) exits 127, which is not the network's failure: that ecosystem goes unprobed."""

_SECONDS = 60.0


def ecosystems(repo: Path, revision: str) -> tuple[Probe, ...]:
    """The probes whose manifests the repository's root holds at `revision`.

    Raises:
        GitError: the revision cannot be listed.
    """
    listing = git(repo, "ls-tree", "-z", "--name-only", revision)
    names = {raw.decode("utf-8", "replace") for raw in listing.split(b"\0") if raw}
    return tuple(probe for probe in PROBES if names & set(probe.manifests))


def probe_registries(
    probes: tuple[Probe, ...],
    *,
    host_network: HostNetwork,
    setup_env: tuple[tuple[str, str], ...] = (),
) -> None:
    """Make each probe's request in the sandbox.

    Raises:
        SetupNetworkError: the network failed a request (its line and the fix).
        SandboxError: this machine cannot create the isolated workspace.
    """
    if not probes:
        return
    bwrap = require_sandbox()
    host_network.used()
    root = Path(tempfile.mkdtemp(prefix="selfbench-probe-"))
    try:
        with leased_users() as users:
            sandbox = Sandbox(root / "ws", users, bwrap)
            variables, binds = host_network.mounts(host_network.write_bundle(root))
            mounts = Mounts(
                network=True, environment={**variables, **dict(setup_env)}, ro_binds=binds
            )
            for probe in probes:
                log = root / f"{probe.name}.log"
                result = sandbox.run(probe.command, (), mounts=mounts, log=log, timeout=_SECONDS)
                if result.exit_code == 0:
                    continue
                failure = network_failure(log.read_text(encoding="utf-8", errors="replace"))
                if failure is not None:
                    label = f"the {probe.name} registry check ({probe.command.split(' --')[0]})"
                    raise SetupNetworkError(describe_failure(failure, label, None))
    finally:
        shutil.rmtree(root, ignore_errors=True)
