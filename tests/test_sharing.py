"""`environments.local.sharing`: verifier runs share the machine; a run that must see a test
alone holds it whole, after the shared runs going on and before any that start later. Real
threads."""

from __future__ import annotations

import threading
from collections.abc import Callable

from selfbench.environments.local.sharing import Machine

WAIT = 10.0


def _in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _eventually(check: Callable[[], bool]) -> bool:
    done = threading.Event()
    for _ in range(200):
        if check():
            return True
        done.wait(0.01)
    return check()


def test_shared_runs_go_on_together() -> None:
    machine = Machine()
    inside = threading.Barrier(3, timeout=WAIT)

    def run() -> None:
        with machine.shared():
            inside.wait()  # all three are inside at once, or this times out

    threads = [_in_thread(run) for _ in range(2)]
    inside.wait()
    for thread in threads:
        thread.join(WAIT)
    assert machine.held == (0, False)


def test_the_whole_machine_waits_for_the_shared_runs_and_holds_off_later_ones() -> None:
    machine = Machine()
    order: list[str] = []
    release_first = threading.Event()
    first_in = threading.Event()

    def first() -> None:
        with machine.shared():
            first_in.set()
            release_first.wait(WAIT)
            order.append("first ends")

    def alone() -> None:
        with machine.whole():
            order.append("alone")

    def later() -> None:
        with machine.shared():
            order.append("later")

    threads = [_in_thread(first)]
    assert first_in.wait(WAIT)
    threads.append(_in_thread(alone))
    assert _eventually(lambda: machine._waiting == 1)  # noqa: SLF001 - the waiter is queued
    threads.append(_in_thread(later))
    assert not _eventually(lambda: bool(order))  # neither goes on while the first runs
    release_first.set()
    for thread in threads:
        thread.join(WAIT)

    assert order == ["first ends", "alone", "later"]
    assert machine.held == (0, False)


def test_the_thread_holding_the_machine_whole_runs_its_own_verifier_runs() -> None:
    machine = Machine()
    with machine.whole():
        assert machine.held == (0, True)
        with machine.shared():  # its own run does not wait for itself
            assert machine.held == (0, True)
    assert machine.held == (0, False)
