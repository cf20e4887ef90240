"""Benchmark: a setup with the process's download caches cold, then warm, on a real project.

Clones `--repo` (a git repository of a Node project with a `pnpm-lock.yaml`, or of any project
with `--setup`), then runs its setup as a local setup stage runs it: in a fresh sandbox each
time (as each candidate gets one), root, a network, root's home writable, `--setup` from the
checkout, and one set of the process's download caches (`environments/local/downloads.py`):

1. cold: the caches empty;
2. warm: the caches the first setup filled (a fresh sandbox, a fresh checkout);
3. offline: as 2, with the network cut, which succeeds only when the caches hold everything the
   setup downloads (Corepack's copy of the package manager included);
4. seeded: as 2, the fresh checkout first given the warm setup's `.venv` and `node_modules` as
   a dependency seed (`environments/local/seeds.py`: what a later candidate of the same
   manifests starts from), the copy timed with the setup.

Prints the seconds of each and the package manager's own last summary line. `--small` (the
suite's configuration) needs no `--repo`: one round, cold then warm, of a pip install of one
package into a virtual environment, saying whether pip took it from the cache (pip keeps only
what the index's answers let it cache: on the CI machine's index the warm install downloads
again).

    .venv/bin/python benchmarks/downloads.py --repo PATH/TO/defu
    .venv/bin/python benchmarks/downloads.py --repo PATH/TO/click --toolchains python \
        --setup "uv sync --frozen --no-default-groups --group tests" \
        --offline-setup "uv sync --frozen --offline --no-default-groups --group tests"
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selfbench.draft._node import _COREPACK
from selfbench.environments.local.downloads import Lease, download_caches
from selfbench.environments.local.host_network import HostNetwork
from selfbench.environments.local.sandbox import (
    Mounts,
    Sandbox,
    copy_tree,
    leased_users,
    require_sandbox,
)
from selfbench.environments.local.seeds import SeedStore, Snapshot, seeded_directories
from selfbench.toolchains import provision_task

_PNPM = f"{_COREPACK} pnpm install --frozen-lockfile --reporter=append-only"
"""What `draft` writes for a project with `pnpm-lock.yaml` (its log made line by line)."""
_EVERYTHING = Snapshot({}, frozenset(), file_dependencies=False)
"""A seed's every `.venv` and `node_modules` (the checkout's tracked paths are the repository's:
none is one of those)."""


def _setup(lease: Lease, repo: Path, script: str, *, network: bool, work: Path,
           toolchains: tuple[str, ...],
           seed: Path | None) -> tuple[float, int, str, Path]:  # fmt: skip
    """One setup on a fresh checkout (given the `seed`'s directories first) in a fresh sandbox,
    then the set's tool state copied into the task's, as `TaskPhases.setup` does: seconds (the
    seed's copy and the state's included), exit code, output, and the checkout."""
    root = Path(tempfile.mkdtemp(prefix="ws-", dir=work))
    app = root / "app-tree"
    subprocess.run(["git", "clone", "-q", "--", str(repo), str(app)], check=True)
    log = root / "setup.log"
    host = HostNetwork.detect()  # the host's CA certificates and proxies, as setup gets them
    variables, ca_binds = host.mounts(host.write_bundle(root))
    with leased_users() as users:
        provisioned = provision_task(toolchains, strict=False, logs=root) if toolchains else None
        sandbox = Sandbox(root / "ws", users, require_sandbox(), toolchains=provisioned)
        start = time.monotonic()
        if seed is not None:  # as the base stage lays a seed over the fresh tree
            for directory in seeded_directories(seed, _EVERYTHING):
                (app / directory).mkdir(parents=True)
                copy_tree(seed / directory, app / directory)
        result = sandbox.run(
            'cd /app && exec /bin/bash -lc "$1"',
            (script,),
            log=log,
            timeout=900.0,
            mounts=Mounts(
                binds={"/app": app, **lease.binds},
                ro_binds=ca_binds,
                network=network,
                root_home_writable=True,
                environment={**lease.environment, **variables},
                tool_state="setup",
            ),
        )
        lease.keep(sandbox.tool_state())
    return time.monotonic() - start, result.exit_code, log.read_text(errors="replace"), app


def _summary(output: str) -> str:
    """The package manager's own account of what it fetched (pnpm's progress, uv's "Prepared")."""
    marks = ("downloaded", "Prepared", "Installed", "added")
    lines = [line.strip() for line in output.splitlines() if any(m in line for m in marks)]
    return "; ".join(lines[-2:])


_SMALL_SETUP = (
    "python3 -m venv .venv && .venv/bin/python -m pip install --disable-pip-version-check"
    " six==1.16.0"
)
"""`--small`'s setup: one small package from the registry into a virtual environment."""


def _small_repository(work: Path) -> Path:
    """A repository of one file, for `--small`'s setup (which reads nothing of it)."""
    repo = work / "small"
    repo.mkdir()
    (repo / "README").write_text("a project with one dependency: six\n")
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-qm", "small"], check=True)
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path)
    parser.add_argument("--setup", default=_PNPM)
    parser.add_argument("--offline-setup", default=f"{_PNPM} --offline")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--toolchains", default="", help="comma-separated (default: the host's)")
    parser.add_argument(
        "--small",
        action="store_true",
        help="one round, cold then warm, of a pip install of one package (no --repo needed); "
        "says whether the warm setup took it from the cache",
    )
    args = parser.parse_args()
    if args.repo is None and not args.small:
        parser.error("give --repo (or --small)")
    times: dict[str, list[float]] = {"cold": [], "warm": [], "offline": [], "seeded": []}
    steps = [("cold", True, args.setup), ("warm", True, args.setup)]
    if not args.small:
        steps += [("offline", False, args.offline_setup), ("seeded", True, args.setup)]
    for round_ in range(1 if args.small else args.rounds):  # each round new caches: cold again
        work_directory = tempfile.TemporaryDirectory(prefix="selfbench-bench-")
        with work_directory as work, download_caches().lease(f"bench-{round_}") as lease:
            repo = args.repo
            if repo is None:
                repo = _small_repository(Path(work))
                steps = [(name, network, _SMALL_SETUP) for name, network, _ in steps]
            store, seed = SeedStore(Path(work) / "seeds"), None
            for name, network, script in steps:
                seconds, code, output, app = _setup(
                    lease, repo, script, network=network, work=Path(work),
                    toolchains=tuple(filter(None, args.toolchains.split(","))),
                    seed=seed if name == "seeded" else None,
                )  # fmt: skip
                if name == "warm" and store.record("bench", app, _EVERYTHING):
                    seed = store.root / "1"
                print(f"{name}: {seconds:.1f} s, exit {code}: {_summary(output)}", flush=True)
                if code != 0:
                    print(output[-3000:], file=sys.stderr)
                    return 1
                if args.small and name == "warm":  # pip's own word; a mirror may forbid caching
                    print(f"warm: six from the cache: {'Using cached six' in output}", flush=True)
                times[name].append(seconds)
    medians = {name: statistics.median(values) for name, values in times.items() if values}
    print(" ".join(f"{name} median {value:.1f} s;" for name, value in medians.items()), end=" ")
    print(f"warm / cold = {medians['warm'] / medians['cold']:.2f}x", end="; ")
    if "seeded" in medians:
        print(f"seeded / warm = {medians['seeded'] / medians['warm']:.2f}x", end="; ")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
