"""Benchmark: a setup with the process's download caches cold, then warm, on a real project.

Clones `--repo` (a git repository of a Node project with a `pnpm-lock.yaml`, or of any project
with `--setup`), then runs its setup as a local setup stage runs it: in a fresh sandbox each
time (as each candidate gets one), root, a network, root's home writable, `--setup` from the
checkout, and one set of the process's download caches (`validate/downloads.py`):

1. cold: the caches empty;
2. warm: the caches the first setup filled (a fresh sandbox, a fresh checkout);
3. offline: as 2, with the network cut, which succeeds only when the caches hold everything the
   package manager downloads; in the warm run's sandbox, whose tool state holds what Corepack
   fetched (the manager itself is each task's own, not a download cache's).

Prints the seconds of each and the package manager's own last summary line.

    .venv/bin/python benchmarks/downloads.py --repo PATH/TO/defu
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selfbench.draft._node import _COREPACK
from selfbench.validate.downloads import Lease, download_caches
from selfbench.validate.host_network import HostNetwork
from selfbench.validate.sandbox import Mounts, Sandbox, leased_users, require_sandbox

_PNPM = f"{_COREPACK} pnpm install --frozen-lockfile --reporter=append-only"
"""What `draft` writes for a project with `pnpm-lock.yaml` (its log made line by line)."""


def _setup(lease: Lease, repo: Path, script: str, *, network: bool, work: Path,
           sandbox: Sandbox | None = None) -> tuple[float, int, str, Sandbox]:  # fmt: skip
    """One setup on a fresh checkout, in a fresh sandbox unless `sandbox` (then with the tool
    state it holds): seconds, exit code, its output, the sandbox."""
    root = Path(tempfile.mkdtemp(prefix="ws-", dir=work))
    app = root / "app-tree"
    subprocess.run(["git", "clone", "-q", "--", str(repo), str(app)], check=True)
    log = root / "setup.log"
    host = HostNetwork.detect()  # the host's CA certificates and proxies, as setup gets them
    variables, ca_binds = host.mounts(host.write_bundle(root))
    with leased_users() as users:
        sandbox = sandbox or Sandbox(root / "ws", users, require_sandbox())
        start = time.monotonic()
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
    return time.monotonic() - start, result.exit_code, log.read_text(errors="replace"), sandbox


def _summary(output: str) -> str:
    lines = [line for line in output.splitlines() if "downloaded" in line or "added" in line]
    return lines[-1].strip() if lines else output.strip().splitlines()[-1:][0] if output else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--setup", default=_PNPM)
    parser.add_argument("--offline-setup", default=f"{_PNPM} --offline")
    args = parser.parse_args()
    work_directory = tempfile.TemporaryDirectory(prefix="selfbench-bench-")
    with work_directory as work, download_caches().lease() as lease:
        warm: Sandbox | None = None
        for name, network, script in (
            ("cold", True, args.setup),
            ("warm", True, args.setup),
            ("offline", False, args.offline_setup),
        ):
            # offline: the warm run's tool state (Corepack's copy of the manager itself)
            seconds, code, output, sandbox = _setup(
                lease, args.repo, script, network=network, work=Path(work),
                sandbox=warm if name == "offline" else None,
            )  # fmt: skip
            warm = sandbox
            print(f"{name}: {seconds:.1f} s, exit {code}: {_summary(output)}", flush=True)
            if code != 0:
                print(output[-3000:], file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
