"""What each running candidate is doing now, so that a long stage is never silent.

A stage (`drafting pr-3 (easy)`) opens a `Doing` for the thread that runs it (`doing`); the
code below it says where it stands as it goes: the step (`step`: `setting up`, `test run 2 of
5`, `quality variant 4 of 9`), the test files a provisional run goes through (`files`), and the
log a sandbox phase is writing (`phase`). Nothing there prints: a `heartbeat` (one per command)
reads every open `Doing` once a second and writes a line for each that has been quiet for
`every` seconds:

    pr-3 (easy): drafting for 1 min 05 s; test run 2 of 5; tests/test_api.py

The test file comes from the running phase's processes: the sandbox tells the phase's process
id (`process`), and the first of its descendants (through the host's `/proc`, which sees into
the sandbox's PID namespace) whose arguments name one of the stage's test files names the file
running now. The phase's log is no help there: the verifier keeps a command's output aside
until it ends.

The `Doing` rides a context variable: a thread pool that works for a stage (quality's variants,
validation's tasks) runs its work through `carried`, so its steps reach the same `Doing`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ParamSpec, TypeVar

from selfbench import _children

__all__ = [
    "HEARTBEAT_SECONDS",
    "Doing",
    "carried",
    "describe",
    "doing",
    "files",
    "heartbeat",
    "heartbeat_seconds",
    "phase",
    "process",
    "running",
    "step",
]

HEARTBEAT_SECONDS = 15.0
"""The longest a running stage goes without a line (`SELFBENCH_HEARTBEAT_SECONDS` sets
another, a positive number of seconds)."""
_EVERY_VARIABLE = "SELFBENCH_HEARTBEAT_SECONDS"

_PROC = Path("/proc")

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(slots=True, eq=False)
class Doing:
    """One stage of one candidate (or one command's item), as it goes."""

    name: str
    """What is worked on: `pr-3 (easy)`."""
    stage: str
    """The stage's gerund: `drafting`, `validating`, `checking quality`."""
    started: float = field(default_factory=time.monotonic)
    step: str = ""
    files: tuple[str, ...] = ()
    log: Path | None = None
    pids: set[int] = field(default_factory=set)
    """The running sandbox phases' processes (several at once for quality's variants; theirs
    name the test file running)."""
    key: str = ""
    """The candidate's id, where the stage is a candidate's."""
    deadline: float | None = None
    """When (`time.monotonic()`) the stage's time is up: its running phase is killed then, and
    every phase it starts after (`expired`)."""
    expired: bool = False
    said: float = field(default_factory=time.monotonic)
    """When the last line about it was written (or the stage began)."""


_current: contextvars.ContextVar[Doing | None] = contextvars.ContextVar(
    "selfbench_doing", default=None
)
_lock = threading.Lock()
_open: list[Doing] = []
_phase_pid: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "selfbench_phase_pid", default=None
)
"""The process of the phase this thread runs (`phase`, `process`): each thread's own."""


@contextmanager
def doing(name: str, stage: str, key: str = "", deadline: float | None = None) -> Iterator[Doing]:
    """The stage `stage` of `name` runs in this context until the block ends; inside a stage
    already open (validation's tasks within a run's validate stage), the open one goes on."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    entry = Doing(name, stage, key=key, deadline=deadline)
    token = _current.set(entry)
    with _lock:
        _open.append(entry)
    try:
        yield entry
    finally:
        with _lock:
            _open.remove(entry)
        _current.reset(token)


def running() -> list[Doing]:
    """The stages open now, oldest first."""
    with _lock:
        return list(_open)


def step(text: str) -> None:
    """The current stage's step is now `text` (no stage open: nothing)."""
    entry = _current.get()
    if entry is not None:
        entry.step, entry.log = text, None


def files(names: Sequence[str]) -> None:
    """The provisional runs of the current stage go through `names`, in this order."""
    entry = _current.get()
    if entry is not None:
        entry.files = tuple(names)


@contextmanager
def phase(log: Path) -> Iterator[None]:
    """A sandbox phase writes `log` while the block runs (its process, told by `process`, is
    the stage's until the block ends)."""
    entry = _current.get()
    mine: list[int] = []
    token = _phase_pid.set(mine)
    if entry is not None:
        entry.log = log
    try:
        yield
    finally:
        _phase_pid.reset(token)
        if entry is not None:
            with _lock:
                entry.pids.difference_update(mine)
            if entry.log == log:
                entry.log = None


def process(pid: int) -> None:
    """The running phase (`phase`) is process `pid` (and its descendants, its process group);
    a stage whose time is up has it killed at once."""
    entry, mine = _current.get(), _phase_pid.get()
    if entry is None:
        return
    if mine is not None:
        mine.append(pid)
    with _lock:
        entry.pids.add(pid)
    _expire_if_due(entry, time.monotonic())


def _expire_if_due(entry: Doing, now: float) -> None:
    """Past its deadline, the stage is expired and its running phase's group killed."""
    if entry.deadline is None or now < entry.deadline:
        return
    entry.expired = True
    with _lock:
        pids = sorted(entry.pids)
    for pid in pids:
        _children.kill(pid)  # only while its leader is unreaped: never a reused id


def carried(function: Callable[P, R]) -> Callable[P, R]:
    """`function` run in the caller's context (its `Doing`), from whichever thread runs it."""
    context = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return context.copy().run(function, *args, **kwargs)

    return run


def _descendants(root: int) -> Iterator[int]:
    """The processes below `root`, nearest first (none when /proc cannot be read)."""
    children: dict[int, list[int]] = {}
    for stat in _PROC.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8", errors="replace").rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    pending = list(children.get(root, ()))
    while pending:
        pid = pending.pop(0)
        yield pid
        pending.extend(children.get(pid, ()))


def _arguments(pid: int) -> list[str]:
    try:
        data = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").split("\0")


def _running_file(entry: Doing) -> str | None:
    """The stage's test file a process of its running phase names among its arguments."""
    with _lock:
        roots = sorted(entry.pids)
    if not roots or not entry.files:
        return None
    for pid in (found for root in roots for found in _descendants(root)):
        for argument in _arguments(pid):
            for name in entry.files:
                if argument == name or argument.endswith(f"/{name}"):
                    return name
    return None


def _elapsed(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min {whole % 60:02d} s"


def describe(entry: Doing, now: float | None = None) -> str:
    """The line a heartbeat writes about `entry`."""
    now = time.monotonic() if now is None else now
    parts = [f"{entry.name}: {entry.stage} for {_elapsed(now - entry.started)}"]
    if entry.step:
        parts.append(entry.step)
    running_file = _running_file(entry)
    if running_file is not None:
        parts.append(running_file)
    elif entry.log is not None:
        parts.append(f"log {entry.log.name}")
    return "; ".join(parts)


def heartbeat_seconds() -> float:
    """`SELFBENCH_HEARTBEAT_SECONDS` when it is a positive number, else `HEARTBEAT_SECONDS`."""
    value = os.environ.get(_EVERY_VARIABLE, "")
    try:
        seconds = float(value)
    except ValueError:
        return HEARTBEAT_SECONDS
    return seconds if math.isfinite(seconds) and seconds > 0 else HEARTBEAT_SECONDS


@contextmanager
def heartbeat(
    write: Callable[[str], None],
    every: float | None = None,
    on_line: Callable[[Doing, str], None] | None = None,
) -> Iterator[None]:
    """While the block runs, a line through `write` for each open stage quiet for `every` s
    (default `HEARTBEAT_SECONDS`); `on_line` is told of each line too (the run records it for
    `status`). It also ends the running phase of a stage past its deadline (within a second)."""
    every = heartbeat_seconds() if every is None else every
    stopped = threading.Event()

    poll = min(1.0, every)

    def beat() -> None:
        while not stopped.wait(poll):
            now = time.monotonic()
            for entry in running():
                _expire_if_due(entry, now)
                if now - entry.said + poll < every:
                    continue  # the next wake still comes within `every` of its last line
                entry.said = now
                # a line that cannot be written (a closed pipe, a full disk for the events)
                # must not end the thread: it also ends stages past their deadline
                with contextlib.suppress(Exception):
                    line = describe(entry, now)
                    write(line)
                    if on_line is not None:
                        on_line(entry, line)

    thread = threading.Thread(target=beat, name="selfbench-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()
