"""One walk of the host's private entries per run (`sandbox.PrivateEntries.for_run`).

A sandbox covers every host entry an unprivileged user could not read (`PrivateEntries`), found
by a walk of the shown system directories that takes a second or so. One command (`selfbench
run`, `draft`, `quality`, `validate`, `eval`, `demo`) starts dozens of sandboxes; within its
`scope` they all cover what the first walk found, as the local environment's guide says ("found
by one walk when the run starts"). Outside a scope (a library caller, a long-lived server) each
sandbox walks for itself, so an entry made since is covered. The CLI opens the scope for those
commands alone (`cli._SANDBOXED`); this module imports nothing heavy all the same.
"""

from __future__ import annotations

import _thread  # a lock without importing `threading`

TYPE_CHECKING = False  # typing is not loaded at run time: see `selfbench.errors`

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from selfbench.environments.local.sandbox import PrivateEntries

__all__ = ["scope", "shared"]


class _Scopes:
    """The open scopes and their walk (one per process: a run is one command)."""

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.depth = 0
        self.found: PrivateEntries | None = None


_SCOPES = _Scopes()


class scope:  # noqa: N801 - used as a function: `with scope():`
    """Share one walk among the sandboxes started until the outermost scope ends."""

    def __enter__(self) -> None:
        with _SCOPES.lock:
            _SCOPES.depth += 1

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with _SCOPES.lock:
            _SCOPES.depth -= 1
            if _SCOPES.depth == 0:
                _SCOPES.found = None


def shared(walk: Callable[[], PrivateEntries]) -> PrivateEntries:
    """The open scope's walk (made by `walk` the first time), or a fresh walk outside one."""
    with _SCOPES.lock:
        if _SCOPES.depth > 0:
            if _SCOPES.found is None:
                _SCOPES.found = walk()  # under the lock: another sandbox waits for this walk
            return _SCOPES.found
    return walk()
