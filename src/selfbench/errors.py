"""The one exception family of selfbench, by area, with the CLI exit code each error maps to.

Every error selfbench raises on purpose is a `SelfbenchError`; anything else escaping is a bug and
keeps its traceback. A failed check (an audit, a preflight dry run, a repair check, a candidate
match, a validation) is a returned result, and its exit code 1 is decided by the CLI; the one
raised error with exit code 1 is `PreflightError`, `submit_task` refusing to write.

Foreign errors are translated at the edge where they arise, by `translating` (or `_fs`'s readers
built on it), into the area's class with one message shape: `cannot <doing>: <reason>`. The
foreign error stays the translated one's cause (`raise … from exc`): the CLI prints one line, and
with `SELFBENCH_DEBUG` set, the chain under it.
"""

from __future__ import annotations

from contextlib import contextmanager

# Neither typing nor dataclasses at run time: every command, `--version` too, loads this module,
# and they (with the `inspect` that dataclasses loads) cost its start-up about 10 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "DEBUG_VARIABLE",
    "EXIT_INPUT",
    "EXIT_OK",
    "EXIT_REJECTED",
    "ArchiveError",
    "BundleError",
    "CompileError",
    "DefinitionError",
    "DraftError",
    "EgressError",
    "EvalError",
    "ExportError",
    "GitError",
    "HarborError",
    "InputError",
    "Issue",
    "JsonError",
    "MineError",
    "PackError",
    "PatchError",
    "PreflightError",
    "QualityError",
    "ReviewerError",
    "RewardError",
    "RunError",
    "SandboxError",
    "SelfbenchError",
    "StoreError",
    "SubmitError",
    "SwebenchError",
    "TaskFileError",
    "ToolchainError",
    "ValidateError",
    "os_reason",
    "translating",
]

DEBUG_VARIABLE = "SELFBENCH_DEBUG"
"""Set (to anything but empty) in the environment, the CLI prints an error's whole chain of
causes, with their tracebacks, after its one line."""

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_INPUT = 2


class Issue:
    """One problem found in a JSON document: where it is and what is wrong.

    A frozen record, as the core's dataclasses are, written out (see the imports above).
    """

    __slots__ = ("_message", "_path")
    __match_args__ = ("path", "message")
    _path: str
    _message: str

    def __init__(self, path: str, message: str) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_message", message)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")  # frozen: its hash stays

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    @property
    def path(self) -> str:
        """Where the problem is (`$.timeouts.agentSeconds`, `definition.taskId`)."""
        return self._path

    @property
    def message(self) -> str:
        """What is wrong there."""
        return self._message

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Issue) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self._path, self._message) == (other._path, other._message)

    def __hash__(self) -> int:
        return hash((self._path, self._message))

    def __repr__(self) -> str:
        return f"Issue(path={self._path!r}, message={self._message!r})"

    def __reduce__(self) -> tuple[type[Issue], tuple[str, str]]:
        return Issue, (self._path, self._message)

    def __str__(self) -> str:
        return f"{self._path}: {self._message}"


class SelfbenchError(Exception):
    """Base of every error selfbench raises on purpose; anything else is a bug."""

    exit_code: int = EXIT_INPUT

    @property
    def lines(self) -> tuple[str, ...]:
        """The message, one problem per line."""
        return tuple(str(self).splitlines()) or ("",)


# input: the command line and the files it names ------------------------------------------------


class InputError(SelfbenchError):
    """A file named on the command line cannot be read."""


class JsonError(SelfbenchError):
    """Bytes that are not one well-formed JSON document."""


class GitError(SelfbenchError):
    """A git command failed."""


# contract / definition, patch ------------------------------------------------------------------


class DefinitionError(SelfbenchError):
    """A task definition (or the tool arguments around it) failed validation."""

    def __init__(self, issues: tuple[Issue, ...]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


class PatchError(SelfbenchError):
    """Bytes that are not a well-formed Git patch."""


# task / submit ---------------------------------------------------------------------------------


class TaskFileError(SelfbenchError):
    """A file of an authored task (or a definition file) that cannot be read."""


class SubmitError(SelfbenchError):
    """submit_task could not write the task."""


class PreflightError(SubmitError):
    """submit_task's preflight found blockers; nothing was written."""

    exit_code = EXIT_REJECTED

    def __init__(self, task_id: str, blockers: tuple[str, ...]) -> None:
        self.task_id = task_id
        self.blockers = blockers
        super().__init__("\n".join(blockers))


# bundle / compile ------------------------------------------------------------------------------


class BundleError(SelfbenchError):
    """A path that is not a bundle, a malformed bundle manifest, or a definition not its own."""


class CompileError(BundleError):
    """An authored task or a bundle that cannot be compiled or refreshed."""


class PackError(BundleError):
    """A tree that cannot be packed (something other than files and directories)."""


# store / collect -------------------------------------------------------------------------------


class StoreError(SelfbenchError):
    """An unsafe key, a write-once conflict, or an artifact whose bytes no longer match."""


# validate {sandbox, harbor, reward} ------------------------------------------------------------


class ValidateError(SelfbenchError):
    """A validation that could not be run (not one that ran and failed: that is a report).

    Its areas are the local sandbox, the Harbor runner and the reward file each writes.
    """


class SandboxError(ValidateError):
    """The isolated workspace cannot be created on this machine."""


class EgressError(SandboxError):
    """An endpoint a sandbox's allow-list cannot hold (not an http(s) URL with a host, not on
    the list), or the host's proxy for it that the relay cannot use."""


class SetupNetworkError(SandboxError):
    """Setup failed on the machine's network (TLS, DNS, a refused or timed-out connection): no
    candidate or task is to blame, so the command stops instead of rejecting it."""

    def __init__(self, message: str, *, kind: str | None = None, failed: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        """The failure's kind (`tls`, `dns`, `refused`, `timeout`; None: not known)."""
        self.failed = failed
        """What failed, without the fix (the message's first part; None: not known)."""


class HarborError(ValidateError):
    """Harbor could not be run, or left a job directory that cannot be read."""


class RewardError(ValidateError):
    """A `reward.json` that is missing or not what the verifier writes."""


class ToolchainError(ValidateError):
    """A task's toolchains cannot be had as `--strict-toolchains` demands."""


# mine ------------------------------------------------------------------------------------------


class MineError(SelfbenchError):
    """The repository, a revision, a metadata file or an option cannot be mined."""


# draft -----------------------------------------------------------------------------------------


class DraftError(SelfbenchError):
    """A candidate that cannot be drafted (no test changes, say), or a bad `selfbench.toml`."""


# quality ---------------------------------------------------------------------------------------


class QualityError(SelfbenchError):
    """A task or a quality record that cannot be read or assessed."""


# evaluate --------------------------------------------------------------------------------------


class EvalError(SelfbenchError):
    """An evaluation cannot start or go on: bad agents, benchmark or results."""


# run -------------------------------------------------------------------------------------------


class RunError(SelfbenchError):
    """A run that cannot start or go on: bad options, a run directory in use or not a run's."""


class ReviewerError(RunError):
    """A reviewer command that could not run or did not print a verdict."""


# export {archive} ------------------------------------------------------------------------------


class ExportError(SelfbenchError):
    """An export that cannot be written, or inputs that cannot make one."""


class ArchiveError(ExportError):
    """An export archive that fails verification: a digest, a count, or an unsafe member."""


# swebench --------------------------------------------------------------------------------------


class SwebenchError(SelfbenchError):
    """An instance file or a task directory that cannot be converted; nothing was written."""


# the one translation of foreign errors ---------------------------------------------------------


def os_reason(exc: OSError) -> str:
    """What went wrong, in one line: the system's wording, without the path it already names."""
    text = exc.strerror or str(exc)
    return text if text.isprintable() else repr(text)[1:-1]


@contextmanager
def translating(to: type[SelfbenchError], doing: str) -> Iterator[None]:
    """Turn an `OSError` raised in the block into `to("cannot <doing>: <reason>")`.

    Raises:
        SelfbenchError: the `to` class, for an `OSError` the block raised.
    """
    try:
        yield
    except OSError as exc:
        raise to(f"cannot {doing}: {os_reason(exc)}") from exc
