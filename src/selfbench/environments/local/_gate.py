"""The gate a sandboxed phase waits at until it is set up from outside (SPEC §7).

bwrap reports the phase's namespaces on `--info-fd` and holds its script at `--block-fd`; the
gate moves the phase into its control group, connects its network namespace through slirp4netns
when it has a network, then lets the script start. The script says that it started on the gate's
`started` pipe, so a phase whose bwrap failed before running it can be told apart.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
from dataclasses import dataclass
from typing import IO

from selfbench.environments.local.cgroup import PhaseCgroup
from selfbench.environments.process import Helper, start_helper

__all__ = ["Gate"]

_SLIRP_READY_SECONDS = 30.0


@dataclass
class Gate:
    """Holds a phase at bwrap's `--block-fd` until it is set up from outside: moved into its
    control group and, when it has a network, given a user-mode one by slirp4netns, which NATs a
    fresh network namespace to the outside with the host's loopback out of reach
    (`--disable-host-loopback`), as a container's bridge does.
    """

    info_read: int
    info_write: int
    block_read: int
    block_write: int
    slirp_wanted: bool
    started_read: int = -1
    started_write: int = -1
    slirp: Helper | None = None

    @classmethod
    def open(cls, *, slirp: bool) -> Gate:
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        started_read, started_write = os.pipe()
        os.set_blocking(started_read, False)
        return cls(
            info_read, info_write, block_read, block_write, slirp, started_read, started_write
        )

    def child_fds(self) -> tuple[int, int, int]:
        return (self.info_write, self.block_read, self.started_write)

    def announce(self) -> str:
        """The script's first line: say it started, and keep the pipe from its children."""
        return f"printf 1 >&{self.started_write}; exec {self.started_write}>&-\n"

    def release(self, output: IO[bytes], *, bwrap: int, cgroup: PhaseCgroup | None) -> None:
        """Set the phase up from outside, then let its script start."""
        for fd in (self.info_write, self.block_read, self.started_write):
            os.close(fd)
        self.info_write = self.block_read = self.started_write = -1
        try:
            pid = self._child_pid()
            if pid is None:
                return  # bwrap failed before making the namespaces; its error is in the log
            if cgroup is not None and (skipped := cgroup.add(bwrap, pid)):
                output.write(f"selfbench: {skipped}\n".encode())
            if self.slirp_wanted:
                self._connect(pid, output)
        finally:
            with contextlib.suppress(OSError):  # bwrap may be gone already
                os.write(self.block_write, b"1")

    def _connect(self, pid: int, output: IO[bytes]) -> None:
        ready_read, ready_write = os.pipe()
        try:
            self.slirp = start_helper(
                [
                    "slirp4netns",
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    f"--ready-fd={ready_write}",
                    str(pid),
                    "tap0",
                ],
                errors=output,
                pass_fds=(ready_write,),
            )
            os.close(ready_write)
            ready_write = -1
            ready, _, _ = select.select([ready_read], [], [], _SLIRP_READY_SECONDS)
            if not ready or not os.read(ready_read, 1):
                output.write(b"selfbench: slirp4netns did not start; no network\n")
        finally:
            os.close(ready_read)
            if ready_write >= 0:
                os.close(ready_write)

    def _child_pid(self) -> int | None:
        data = b""
        while b"}" not in data:
            ready, _, _ = select.select([self.info_read], [], [], _SLIRP_READY_SECONDS)
            chunk = os.read(self.info_read, 4096) if ready else b""
            if not chunk:
                return None
            data += chunk
        match = re.search(rb'"child-pid":\s*(\d+)', data)
        return int(match.group(1)) if match else None

    def script_started(self) -> bool:
        """Whether the phase's script ran (asked once the phase ended); undecided counts as ran."""
        try:
            return os.read(self.started_read, 1) != b""
        except BlockingIOError:  # a process of the phase still holds the pipe
            return True

    def close(self) -> None:
        if self.slirp is not None:
            self.slirp.stop()
        fds = (self.info_read, self.info_write, self.block_read, self.block_write)
        for fd in (*fds, self.started_read, self.started_write):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
