"""`selfbench.toml`: what a repository (or `--config FILE`) says about drafting its tasks.

Every key is optional and overrides what drafting would infer; unknown keys are refused. The
repository's own file is read from the base commit through git (never from a working tree), so
a draft of an old change uses the configuration that change was made under. `--config FILE`
overlays it key by key (a `[timeouts]` or `[resources]` table key by key too).

```toml
workdir = "."                      # where the commands run, relative to the repository root
toolchains = ["python"]            # SPEC §1 toolchain layers
setupCommand = "uv sync --frozen"  # builds everything the tests need
testCommand = "uv run pytest -rA {tests}"   # `{tests}` once, unquoted
runner = "pytest"                  # pytest, unittest, jest, vitest, node-test, go, cargo, bun
testPaths = ["tests/**"]           # run only changed test files matching one of these globs
exclude = ["tests/slow/**"]        # never run changed test files matching one of these globs
passToPassCap = 20                 # at most this many pass-to-pass selectors
reruns = 3                         # runs with the gold patch (at most 10)

[timeouts]                         # seconds, as in the task definition (at most 21600 each)
setupSeconds = 1800

[resources]
memoryMb = 16384
```
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
)
from pydantic_core import ErrorDetails

from selfbench._fs import read_given
from selfbench._git import git
from selfbench._paths import escapes_repository
from selfbench.audit import NOT_ONCE, QUOTED, placeholder_is_argument_list
from selfbench.contract import TOOLCHAINS
from selfbench.environments.local.ceilings import CONFIG_CAPS
from selfbench.errors import DraftError, GitError
from selfbench.rules import PLACEHOLDER, error_location
from selfbench.runners import settings

__all__ = [
    "CONFIGURE",
    "CONFIG_FILE",
    "RUNNERS",
    "DraftConfig",
    "load_config",
    "merge_configs",
    "parse_config",
    "repo_config",
]

CONFIG_FILE = "selfbench.toml"
CONFIGURE = f"in a {CONFIG_FILE}: the repository's, or one given to draft or run with --config FILE"
"""How a hint says where to set a key (`set runner and testCommand {CONFIGURE}`)."""
RUNNERS = settings()
"""The `runner` key's values: each runner's `selfbench.toml` spelling."""
_ONE_OF = "must be one of " + ", ".join(RUNNERS)
_MAX_BYTES = 1 << 20
_CAPS = CONFIG_CAPS
_STRICT = ConfigDict(extra="forbid", frozen=True)


class TimeoutsConfig(BaseModel):
    """Any of the task definition's timeouts, in seconds."""

    model_config = _STRICT
    setupSeconds: StrictInt | None = Field(default=None, ge=1, le=_CAPS.seconds)  # noqa: N815 - the TOML keys
    agentSeconds: StrictInt | None = Field(default=None, ge=1, le=_CAPS.seconds)  # noqa: N815
    testsSeconds: StrictInt | None = Field(default=None, ge=1, le=_CAPS.seconds)  # noqa: N815


class ResourcesConfig(BaseModel):
    """Any of the task definition's resources."""

    model_config = _STRICT
    cpus: StrictInt | StrictFloat | None = Field(default=None, gt=0, le=_CAPS.cpus)
    memoryMb: StrictInt | None = Field(default=None, ge=1, le=_CAPS.memory_mb)  # noqa: N815
    storageMb: StrictInt | None = Field(default=None, ge=1, le=_CAPS.storage_mb)  # noqa: N815


class DraftConfig(BaseModel):
    """What a `selfbench.toml` overrides; None (or absent) leaves a value to inference."""

    model_config = _STRICT
    workdir: StrictStr | None = Field(default=None, min_length=1)
    toolchains: tuple[StrictStr, ...] | None = None
    setupCommand: StrictStr | None = Field(default=None, min_length=1)  # noqa: N815
    testCommand: StrictStr | None = None  # noqa: N815
    runner: str | None = None
    testPaths: tuple[StrictStr, ...] | None = None  # noqa: N815
    exclude: tuple[StrictStr, ...] | None = None
    passToPassCap: StrictInt | None = Field(default=None, ge=0, le=_CAPS.pass_to_pass)  # noqa: N815
    reruns: StrictInt | None = Field(default=None, ge=1, le=_CAPS.reruns)
    timeouts: TimeoutsConfig | None = None
    resources: ResourcesConfig | None = None

    @field_validator("workdir", mode="after")
    @classmethod
    def _workdir(cls, value: str | None) -> str | None:
        if value is not None and escapes_repository(value):
            raise ValueError("leaves the repository")
        return value

    @field_validator("runner", mode="before")
    @classmethod
    def _runner(cls, value: object) -> object:
        if value is not None and value not in RUNNERS:
            raise ValueError(_ONE_OF)
        return value

    @field_validator("toolchains", mode="after")
    @classmethod
    def _toolchains(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one toolchain")
        unknown = [name for name in value if name not in TOOLCHAINS]
        if unknown:
            raise ValueError(f"unknown toolchain {unknown[0]!r} (one of {', '.join(TOOLCHAINS)})")
        return value

    @field_validator("testCommand", mode="after")
    @classmethod
    def _test_command(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.count(PLACEHOLDER) != 1:
            raise ValueError(NOT_ONCE)
        if not placeholder_is_argument_list(value):
            raise ValueError(QUOTED)
        return value


_MESSAGES = {
    "missing": "is required",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "tuple_type": "must be an array",
    "model_type": "must be a table",
    "greater_than_equal": "is too small",
    "greater_than": "must be more than 0",
    "string_too_short": "must not be empty",
}


def _problem(error: ErrorDetails) -> str:
    where = error_location(tuple(error["loc"]), root="table")
    if error["type"] == "extra_forbidden":
        return f"unknown key {where!r}"
    if error["type"] == "value_error":
        return f"{where}: {error['ctx']['error']}"
    if error["type"] == "less_than_equal":
        return f"{where}: must be at most {error['ctx']['le']}"
    if error["type"] in ("greater_than_equal", "greater_than"):
        bound = error["ctx"].get("ge", error["ctx"].get("gt"))
        relation = "at least" if error["type"] == "greater_than_equal" else "more than"
        return f"{where}: must be {relation} {bound}"
    return f"{where}: {_MESSAGES.get(error['type'], 'is invalid')}"


def parse_config(data: bytes, *, source: str) -> DraftConfig:
    """A `selfbench.toml` from its bytes; `source` names it in errors.

    Raises:
        DraftError: not UTF-8 TOML, or a key unknown or invalid; every problem, one a line.
    """
    if len(data) > _MAX_BYTES:
        raise DraftError(f"{source}: larger than {_MAX_BYTES} bytes")
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise DraftError(f"{source}: not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise DraftError(f"{source}: malformed TOML: {exc}") from exc
    try:
        return DraftConfig.model_validate(document)
    except ValidationError as exc:
        problems = sorted({_problem(error) for error in exc.errors(include_url=False)})
        raise DraftError("\n".join(f"{source}: {problem}" for problem in problems)) from exc


def load_config(path: Path) -> DraftConfig:
    """The configuration in a file (`--config FILE`).

    Raises:
        DraftError: unreadable or invalid (see `parse_config`).
    """
    return parse_config(read_given(path, error=DraftError), source=str(path))


def repo_config(repo: Path, commit: str) -> DraftConfig | None:
    """The repository's own `selfbench.toml` at `commit`, or None when it has none.

    Read from git's objects: a symbolic link or a directory by that name is refused.

    Raises:
        DraftError: the file is not a regular file, or it is invalid (see `parse_config`).
        GitError: the commit is unknown or git failed.
    """
    listing = git(repo, "ls-tree", "-z", "--full-tree", commit, "--", CONFIG_FILE)
    if not listing:
        return None
    mode, kind, rest = listing.split(b" ", 2)
    oid = rest.split(b"\t", 1)[0].decode("ascii")
    if kind != b"blob" or mode not in (b"100644", b"100755"):
        raise DraftError(f"{CONFIG_FILE}: not a regular file at {commit[:12]}")
    size = int(git(repo, "cat-file", "-s", oid))
    if size > _MAX_BYTES:
        raise DraftError(f"{CONFIG_FILE}: larger than {_MAX_BYTES} bytes")
    try:
        data = git(repo, "cat-file", "blob", oid)
    except GitError as exc:  # pragma: no cover - the object was just listed
        raise DraftError(f"{CONFIG_FILE}: {exc}") from exc
    return parse_config(data, source=CONFIG_FILE)


def _overlay(base: BaseModel | None, top: BaseModel) -> dict[str, object]:
    merged: dict[str, object] = (
        dict(base.model_dump(exclude_unset=True)) if base is not None else {}
    )
    for name in top.model_fields_set:
        value = getattr(top, name)
        below = getattr(base, name, None) if base is not None else None
        if isinstance(value, BaseModel) and isinstance(below, BaseModel):
            merged[name] = _overlay(below, value)
        else:
            merged[name] = (
                value.model_dump(exclude_unset=True) if isinstance(value, BaseModel) else value
            )
    return merged


def merge_configs(base: DraftConfig | None, top: DraftConfig | None) -> DraftConfig | None:
    """`top`'s keys over `base`'s (tables key by key); None when both are None."""
    if top is None:
        return base
    if base is None:
        return top
    return DraftConfig.model_validate(_overlay(base, top))
