"""Run one agent command as a subprocess under a total and an inactivity limit, logging all.

The command is an argument list (never shell text). It runs in its own session, so a timeout
ends the whole process group it started (an agent's MCP server, its tools), and nothing it
spawned outlives it. Its standard output and error, interleaved, are appended to the log as
they come; any output counts as activity.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from selfbench import _children
from selfbench.errors import os_reason

__all__ = ["CommandOutcome", "parse_command", "run_command"]

_GRACE_SEC = 3.0
_CHUNK = 65536
_KEPT = 1 << 20

Ending = Literal["exited", "timeout", "silent", "unstartable"]


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """How the command ended: its exit code, or the one-line reason it was stopped."""

    ending: Ending
    exit_code: int | None
    reason: str | None
    elapsed_sec: float
    stdout: bytes = b""
    """Its standard output's last `_KEPT` bytes, when asked to keep it."""


def parse_command(command: str, *, role: str) -> tuple[str, ...] | str:
    """The command's argument list, split as a POSIX shell would split words, or why not."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        return f"{role} command cannot be parsed: {exc}"
    return argv or f"{role} command is empty"


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the process group: SIGTERM, then SIGKILL after a grace period."""
    for sig, wait in ((signal.SIGTERM, _GRACE_SEC), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def _sweep(process: subprocess.Popen[bytes]) -> None:
    """Kill what the command left behind in its group after it exited."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _pump(
    process: subprocess.Popen[bytes],
    log: IO[bytes],
    kept: bytearray | None,
    *,
    time_limit: float,
    inactivity: float,
) -> Ending:
    """Copy output to the log until the process exits or a limit is reached.

    The process may exit while something it spawned still holds its output open; it has ended
    then, and what is already written is copied without waiting for that output to close.
    """
    assert process.stdout is not None  # noqa: S101 - guaranteed by stdout=PIPE
    start = last = time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            if process.poll() is not None:
                _drain(selector, process.stdout, log, kept)
                return "exited"
            now = time.monotonic()
            if now - start >= time_limit:
                return "timeout"
            if now - last >= inactivity:
                return "silent"
            wait = min(time_limit - (now - start), inactivity - (now - last), 0.2)
            if not selector.get_map() or not selector.select(timeout=wait):
                if not selector.get_map():
                    time.sleep(wait)
                continue
            chunk = os.read(process.stdout.fileno(), _CHUNK)
            if not chunk:  # closed its output; it may still be running
                selector.unregister(process.stdout)
                continue
            _keep(chunk, log, kept)
            last = time.monotonic()


def _keep(chunk: bytes, log: IO[bytes], kept: bytearray | None) -> None:
    log.write(chunk)
    log.flush()
    if kept is not None:
        kept.extend(chunk)
        del kept[:-_KEPT]


def _drain(
    selector: selectors.BaseSelector, stream: IO[bytes], log: IO[bytes], kept: bytearray | None
) -> None:
    """Copy what is ready to read now (for half a second at most), without waiting for more."""
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline and selector.get_map() and selector.select(timeout=0.05):
        chunk = os.read(stream.fileno(), _CHUNK)
        if not chunk:
            return
        _keep(chunk, log, kept)


def run_command(  # noqa: PLR0913 - the command, where, and its two limits, all keyword-only
    argv: Sequence[str],
    *,
    role: str,
    cwd: Path,
    env: Mapping[str, str],
    stdin: Path | None,
    log: Path,
    time_limit_sec: float,
    inactivity_sec: float,
    keep_stdout: bool = False,
) -> CommandOutcome:
    """Run `argv` in `cwd`, appending its output to `log`; stop it at either limit.

    With `keep_stdout`, standard error goes to the log alone and standard output to the log
    and to the outcome (its tail), for a command whose answer is what it prints.
    """
    start = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out, stdin.open("rb") if stdin else Path(os.devnull).open("rb") as feed:
        out.write(f"--- {role} command: {Path(argv[0]).name} (in {cwd})\n".encode())
        out.flush()
        try:
            process = subprocess.Popen(  # an argument list, never a shell
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=feed,
                stdout=subprocess.PIPE,
                stderr=out if keep_stdout else subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            reason = f"{role} command cannot start: {argv[0]}: {os_reason(exc)}"
            out.write(f"--- {reason}\n".encode())
            return CommandOutcome("unstartable", None, reason, time.monotonic() - start)
        kept = bytearray() if keep_stdout else None
        with process, _children.tracked(process.pid):
            try:
                ending = _pump(
                    process, out, kept, time_limit=time_limit_sec, inactivity=inactivity_sec
                )
            finally:
                if process.poll() is None:
                    _stop(process)
                _sweep(process)
        outcome = _outcome(ending, process.returncode, role, time_limit_sec, inactivity_sec)
        elapsed = time.monotonic() - start
        out.write(f"--- {outcome[1] or f'exit code {outcome[0]}'} after {elapsed:.1f} s\n".encode())
    return CommandOutcome(ending, outcome[0], outcome[1], elapsed, bytes(kept or b""))


def _outcome(
    ending: Ending, code: int | None, role: str, time_limit: float, inactivity: float
) -> tuple[int | None, str | None]:
    if ending == "timeout":
        return code, f"{role} command timed out after {time_limit:g} s"
    if ending == "silent":
        return code, f"{role} command was silent for {inactivity:g} s and was killed"
    return code, None
