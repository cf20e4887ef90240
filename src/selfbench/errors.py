"""The one exception family of selfbench, with the CLI exit code each error maps to."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EXIT_INPUT",
    "EXIT_OK",
    "EXIT_REJECTED",
    "BundleError",
    "DefinitionError",
    "Issue",
    "PatchError",
    "PreflightError",
    "SelfbenchError",
    "SubmitError",
]

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_INPUT = 2


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found in a JSON document: where it is and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SelfbenchError(Exception):
    """Base of every error selfbench raises on purpose; anything else is a bug."""

    exit_code: int = EXIT_INPUT

    @property
    def lines(self) -> tuple[str, ...]:
        """The message, one problem per line."""
        return tuple(str(self).splitlines()) or ("",)


class DefinitionError(SelfbenchError):
    """A task definition (or the tool arguments around it) failed validation."""

    def __init__(self, issues: tuple[Issue, ...]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


class PatchError(SelfbenchError):
    """Bytes that are not a well-formed Git patch."""


class BundleError(SelfbenchError):
    """A path that is not a bundle, a malformed bundle manifest, or a definition not its own."""


class SubmitError(SelfbenchError):
    """submit_task could not write the task."""


class PreflightError(SubmitError):
    """submit_task's preflight found blockers; nothing was written."""

    exit_code = EXIT_REJECTED

    def __init__(self, task_id: str, blockers: tuple[str, ...]) -> None:
        self.task_id = task_id
        self.blockers = blockers
        super().__init__("\n".join(blockers))
