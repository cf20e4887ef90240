"""Every child process selfbench starts for a task: the sandbox's phases, Harbor, an author or
reviewer agent, and the short commands around them (`cp -a`, `find`, `gh`).

A long-running child runs in its own session, so a terminal's Ctrl-C does not reach it, a limit
ends its whole process group (an agent's MCP server, its tools) and nothing it spawned outlives
it; while it runs its group is in the registry an interrupted run ends (`selfbench._children`).
Its output goes to a log, capped or copied as it comes (any output counts as activity), and an
argument list is run as it is, never through a shell. Git runs in `selfbench._git`, toolchain
probes and installs in `selfbench.toolchains`.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from selfbench import _children
from selfbench._shell import split_argv
from selfbench.errors import os_reason

__all__ = [
    "CalledProcessError",
    "CommandOutcome",
    "Completed",
    "Helper",
    "parse_command",
    "run_captured",
    "run_command",
    "run_logged",
    "run_phase",
    "start_helper",
]

CalledProcessError = subprocess.CalledProcessError
"""What `run_captured(..., check=True)` raises for a command that failed."""
Completed = subprocess.CompletedProcess

# --- an author or reviewer agent, under a total and an inactivity limit -------------------------

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
        argv = tuple(split_argv(command))
    except ValueError as exc:
        return f"{role} command cannot be parsed: {exc}"
    return argv or f"{role} command is empty"


def _stop(process: subprocess.Popen[bytes], grace: float = _GRACE_SEC) -> None:
    """End the process group: SIGTERM, then SIGKILL after `grace` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
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
    program: str | None = None,
) -> CommandOutcome:
    """Run `argv` in `cwd`, appending its output to `log`; stop it at either limit.

    With `keep_stdout`, standard error goes to the log alone and standard output to the log
    and to the outcome (its tail), for a command whose answer is what it prints. `program` is
    the command the log names when `argv` wraps it (a sandbox), `argv[0]` otherwise.
    """
    start = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out, stdin.open("rb") if stdin else Path(os.devnull).open("rb") as feed:
        shown = Path(program or argv[0]).name
        out.write(f"--- {role} command: {shown} (in {cwd})\n".encode())
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


# --- short commands -----------------------------------------------------------------------------


def run_captured(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    check: bool = False,
    stdin: IO[bytes] | None = None,
) -> Completed[bytes]:
    """Run a short command to its end, its output and errors captured; its input is `stdin`
    (an open file), or none.

    Raises:
        OSError: the command cannot start.
        CalledProcessError: with `check`, it exited non-zero.
    """
    source = subprocess.DEVNULL if stdin is None else stdin
    return subprocess.run(list(argv), cwd=cwd, stdin=source, capture_output=True, check=check)


# --- a sandbox's phase --------------------------------------------------------------------------


def run_phase(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    output: IO[bytes],
    timeout: float,
    log_limit: int,
    pass_fds: Sequence[int] = (),
    started: Callable[[int], None] | None = None,
) -> tuple[int, bool]:
    """Run `argv` in its own session, its output copied to `output` (at most `log_limit` bytes);
    kill its whole group after `timeout` seconds or when interrupted.

    `started` is told the process id once it runs (the sandbox's gate lets the phase go on).
    Returns its exit code and whether it timed out.

    Raises:
        OSError: the command cannot start.
    """
    process = subprocess.Popen(  # an argument list, never a shell
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env),
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    assert process.stdout is not None  # noqa: S101 - stdout=PIPE above
    copier = threading.Thread(target=_copy_capped, args=(process.stdout, output, log_limit))
    copier.start()
    timed_out = False
    with _children.tracked(process.pid):  # an interrupted run ends it
        try:
            if started is not None:
                started(process.pid)
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            code = process.wait()
        except BaseException:  # an interrupt: the phase must not outlive selfbench
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        finally:
            copier.join()
            process.stdout.close()
    return code, timed_out


def _copy_capped(source: IO[bytes], target: IO[bytes], limit: int) -> None:
    """Copy a phase's output to its log, at most `limit` bytes; drain (and drop) the rest.

    A test that prints without end must fill neither the disk nor, when the log is parsed, the
    memory. Each piece is flushed as it comes: the log is live (`tail -f`, and the heartbeat
    reads it to name the test file running, `selfbench.activity`).
    """
    written = 0
    while chunk := os.read(source.fileno(), 1 << 16):
        if written < limit:
            kept = chunk[: limit - written]
            target.write(kept)
            written += len(kept)
            if written >= limit:
                target.write(f"\nselfbench: log cut at {limit:,} bytes\n".encode())
            target.flush()
    target.flush()


# --- commands logged to a file (Harbor) ---------------------------------------------------------


def run_logged(commands: Sequence[tuple[Sequence[str], Path]], *, grace: float) -> list[int]:
    """Run every `(argv, log)` at once, each in its own session with its output written to its
    log; wait for them all and return their exit codes, in order.

    When interrupted (or when one cannot start), those still running are sent SIGTERM, and
    SIGKILL after `grace` seconds.

    Raises:
        OSError: a log cannot be written or a command cannot start.
    """
    processes: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as registered:
        try:
            for argv, log in commands:
                processes.append(_start_logged(argv, log))
                registered.enter_context(_children.tracked(processes[-1].pid))
            return [process.wait() for process in processes]
        finally:
            for process in processes:
                if process.poll() is None:
                    _stop(process, grace)


def _start_logged(argv: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as output:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


# --- a helper beside a phase (slirp4netns) ------------------------------------------------------


class Helper:
    """A process that runs beside another until told to stop (slirp4netns beside a phase)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    def stop(self) -> None:
        """Kill it and wait for it."""
        self._process.kill()
        self._process.wait()


def start_helper(argv: Sequence[str], *, errors: IO[bytes], pass_fds: Sequence[int]) -> Helper:
    """Start `argv` with no input or output, its errors written to `errors`.

    Raises:
        OSError: it cannot start.
    """
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        pass_fds=tuple(pass_fds),
    )
    return Helper(process)
