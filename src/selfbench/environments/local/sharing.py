"""The machine the sandbox's test runs share.

Every verifier run holds the machine shared (`MACHINE.shared()`), so one process runs several
candidates' tests at a time (`run -j N`, quality's variants). A run that must see a test alone
holds it whole (`MACHINE.whole()`): it waits until the shared runs going on have ended, and no
new one starts until it is done. Drafting does that before it calls a test of the change flaky
(`draft.run`): a timing test that failed only while another candidate's suite loaded the
machine passes alone.

Hand-written: the standard library has no shared/exclusive lock, and this one needs two things
a plain one lacks: a thread that holds the machine whole runs its own verifier runs inside
(they do not wait for themselves), and a thread waiting for it whole is not starved by shared
runs that keep starting (they wait behind it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MACHINE", "Machine"]


class Machine:
    """A shared/exclusive hold on this machine's test runs, within one process."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._shared = 0
        self._whole = False
        self._waiting = 0
        self._mine = threading.local()

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Run beside other shared runs; wait while the machine is held (or wanted) whole. In
        the thread that holds it whole, at once."""
        if getattr(self._mine, "whole", False):
            yield
            return
        with self._changed:
            self._changed.wait_for(lambda: not self._whole and not self._waiting)
            self._shared += 1
        try:
            yield
        finally:
            with self._changed:
                self._shared -= 1
                self._changed.notify_all()

    @contextmanager
    def whole(self) -> Iterator[None]:
        """Hold the machine alone: wait for the shared runs going on to end, keep new ones
        waiting until this ends."""
        taken = False
        try:
            with self._changed:
                self._waiting += 1
                try:
                    self._changed.wait_for(lambda: not self._whole and self._shared == 0)
                    self._whole = taken = True
                finally:
                    self._waiting -= 1
                    self._changed.notify_all()  # shared runs held off for this one may start
            self._mine.whole = True
            yield
        finally:
            self._mine.whole = False
            if taken:
                with self._changed:
                    self._whole = False
                    self._changed.notify_all()

    @property
    def held(self) -> tuple[int, bool]:
        """The shared runs going on, and whether the machine is held whole (for tests)."""
        with self._changed:
            return self._shared, self._whole


MACHINE = Machine()
"""This process's one machine."""
