"""The task definition, schemaVersion 1 (SPEC §1): models, both validation modes, JSON Schema.

Every constraint is stated once, beside its JSON Schema twin, in the `Annotated` types below; the
models only arrange them. Error text is built from pydantic's error `loc` and `type` plus our own
custom error messages, never from pydantic's English wording.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from selfbench._json import MAX_SAFE_INTEGER, loads_strict, normalize_numbers
from selfbench._text import CONTROL_CLASS, has_control
from selfbench.errors import DefinitionError, Issue, JsonError
from selfbench.rules import (
    PLACEHOLDER,
    TASK_ID_PATTERN,
    error_location,
    is_full_sha,
    is_task_id,
    sha_regex,
)

__all__ = [
    "AUTHORING_DEFAULTS",
    "DIFFICULTIES",
    "TOOLCHAINS",
    "CheckReport",
    "Difficulty",
    "LoadedDefinition",
    "Mode",
    "Resources",
    "SubmitArguments",
    "TaskDefinition",
    "Timeouts",
    "canonical_json",
    "check_definition",
    "definition_sha256",
    "parse_definition",
    "parse_submit_arguments",
    "submission_json_schema",
]

Mode = Literal["submission", "persisted"]
Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
TOOLCHAINS = ("uv", "bun", "go", "node", "python", "rust")
_SHA_PATTERN = f"^{sha_regex()}$"
_URL_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")

AUTHORING_DEFAULTS: dict[str, dict[str, int]] = {
    "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
    "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
}


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("selfbench", "{message}", {"message": message})


def _mode(info: ValidationInfo) -> Mode:
    context = info.context or {}
    return cast("Mode", context.get("mode", "persisted"))


# --- JSON scalar types -------------------------------------------------------------------------


def _integer(value: Any) -> int:
    """Accept what JSON calls an integer: any number with an integral value, never a boolean."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail("must be an integer")
    if isinstance(value, float) and not value.is_integer():
        raise _fail("must be an integer")
    # Only the upper end: every integer field is >= 1, so a huge negative value gets that message.
    if value > MAX_SAFE_INTEGER:
        raise _fail(f"must be at most {MAX_SAFE_INTEGER} (the largest safe JSON integer)")
    return int(value)


def _positive_integer(value: int) -> int:
    if value < 1:
        raise _fail("must be at least 1")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail("must be a number")
    # NaN and the infinities are not JSON numbers; a caller's own JSON parser may still make them.
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail("must be a number")
    if value <= 0:
        raise _fail("must be greater than 0")
    if value > MAX_SAFE_INTEGER:
        raise _fail(f"must be at most {MAX_SAFE_INTEGER} (the largest safe JSON integer)")
    return float(value)


def _schema_version(value: int) -> int:
    if value != 1:
        raise _fail("must be 1")
    return value


def _unicode(value: str) -> str:
    # A lone surrogate ("\ud800" decoded by a lenient parser) cannot be written as UTF-8, so it
    # would crash the definition digest and the files submit_task writes.
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _fail("must not contain a lone surrogate") from None
    return value


def _non_empty(value: str) -> str:
    if not value:
        raise _fail("must not be empty")
    return value


def _no_control(value: str) -> str:
    # A name is printed in tables and messages; a control character there is a terminal's
    # instruction (`\x1b]0;...` sets its title), never part of a name.
    if has_control(value):
        raise _fail("must not contain control characters")
    return value


def _task_id(value: str) -> str:
    if not is_task_id(value):
        raise _fail(f"must match {TASK_ID_PATTERN}")
    return value


def _sha(value: str) -> str:
    if not is_full_sha(value):
        raise _fail("expected a full commit SHA")
    return value


def _difficulty(value: str) -> str:
    if value not in DIFFICULTIES:
        raise _fail("must be one of easy, medium, hard")
    return value


def _toolchain(value: str) -> str:
    if value not in TOOLCHAINS:
        raise _fail(f"must be one of {', '.join(TOOLCHAINS)}")
    return value


def _test_command(value: str, info: ValidationInfo) -> str:
    if _mode(info) == "persisted":
        if PLACEHOLDER not in value:
            raise _fail('testCommand must contain "{tests}"')
    elif not value:
        raise _fail("must not be empty")
    return value


def _is_absolute_url(value: str) -> bool:
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(_URL_SCHEME_RE.fullmatch(parts.scheme) and parts.hostname)


def _source_url(value: str, info: ValidationInfo) -> str:
    if _mode(info) == "persisted":
        if not _is_absolute_url(value):
            raise _fail("must be an absolute URL (scheme and host)")
    elif not value:
        raise _fail("must not be empty")
    return value


def _array(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise _fail("must be an array")
    return tuple(value)


def _at_least_one(value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:
        raise _fail("must have at least 1 item")
    return value


_INTEGER_SCHEMA = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
_STRING_SCHEMA = {"type": "string", "minLength": 1}

PositiveInt = Annotated[
    int,
    BeforeValidator(_integer),
    AfterValidator(_positive_integer),
    WithJsonSchema(_INTEGER_SCHEMA),
]
PositiveNumber = Annotated[
    float,
    BeforeValidator(_number),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SAFE_INTEGER}),
]
Text = Annotated[str, AfterValidator(_unicode)]
NonEmptyStr = Annotated[Text, AfterValidator(_non_empty), WithJsonSchema(_STRING_SCHEMA)]
_NAME_SCHEMA = {"type": "string", "minLength": 1, "pattern": f"^[^{CONTROL_CLASS}]*$"}
NameStr = Annotated[NonEmptyStr, AfterValidator(_no_control), WithJsonSchema(_NAME_SCHEMA)]
"""A non-empty string that names something (a repository, a test): no control characters."""
SchemaVersion = Annotated[
    int, BeforeValidator(_integer), AfterValidator(_schema_version), WithJsonSchema({"const": 1})
]
DifficultyStr = Annotated[
    str, AfterValidator(_difficulty), WithJsonSchema({"enum": list(DIFFICULTIES)})
]
TaskIdStr = Annotated[
    str, AfterValidator(_task_id), WithJsonSchema({"type": "string", "pattern": TASK_ID_PATTERN})
]
ShaStr = Annotated[
    str, AfterValidator(_sha), WithJsonSchema({"type": "string", "pattern": _SHA_PATTERN})
]
TestCommandStr = Annotated[Text, AfterValidator(_test_command), WithJsonSchema(_STRING_SCHEMA)]
SourceUrlStr = Annotated[Text, AfterValidator(_source_url), WithJsonSchema(_STRING_SCHEMA)]
ToolchainStr = Annotated[
    str, AfterValidator(_toolchain), WithJsonSchema({"enum": list(TOOLCHAINS)})
]
SelectorList = Annotated[
    tuple[NameStr, ...],
    BeforeValidator(_array),
    AfterValidator(_at_least_one),
    WithJsonSchema({"type": "array", "minItems": 1, "items": _NAME_SCHEMA}),
]
PathList = Annotated[
    tuple[NonEmptyStr, ...],
    BeforeValidator(_array),
    AfterValidator(_at_least_one),
    WithJsonSchema({"type": "array", "minItems": 1, "items": _STRING_SCHEMA}),
]
"""Repository paths: a file name may hold any character but NUL, so none is refused here."""
OptionalSelectorList = Annotated[
    tuple[NameStr, ...],
    BeforeValidator(_array),
    WithJsonSchema({"type": "array", "items": _NAME_SCHEMA}),
]
ToolchainList = Annotated[
    tuple[ToolchainStr, ...],
    BeforeValidator(_array),
    AfterValidator(_at_least_one),
    WithJsonSchema({"type": "array", "minItems": 1, "items": {"enum": list(TOOLCHAINS)}}),
]


# --- the models --------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, use_attribute_docstrings=True
    )


class Timeouts(_Strict):
    """Setup, agent and test time limits, in seconds."""

    setupSeconds: PositiveInt
    agentSeconds: PositiveInt
    testsSeconds: PositiveInt


class Resources(_Strict):
    """The container's CPU, memory and storage."""

    cpus: PositiveNumber
    memoryMb: PositiveInt
    storageMb: PositiveInt


class TaskDefinition(_Strict):
    """One authored task, schemaVersion 1."""

    schemaVersion: SchemaVersion
    """Always 1."""
    difficulty: DifficultyStr
    """Gates the gold patch's size: easy, medium or hard."""
    taskId: TaskIdStr
    """Directory name and Harbor task name selfbench/<taskId>."""
    repo: NameStr
    """Free-form label: owner/name or a clone URL."""
    baseCommit: ShaStr
    """Full 40-hex SHA of the commit before the change."""
    workdir: NonEmptyStr
    """Repository-relative working directory; '.' for the root."""
    setupCommand: NonEmptyStr
    """Shell command run from /app/<workdir> at image build: install dependencies."""
    testCommand: TestCommandStr
    """One runner command holding {tests} once, unquoted, for the selectors."""
    failToPass: SelectorList
    """Selectors that fail before the change and pass after it."""
    passToPass: OptionalSelectorList
    """Regression selectors that pass before and after."""
    testPaths: PathList
    """Held-out test paths, relative to workdir."""
    toolchains: ToolchainList
    """Toolchain layers the clean checkout needs."""
    sourcePr: PositiveInt
    """Number of the merged pull request."""
    sourceUrl: SourceUrlStr
    """URL of the merged pull request."""
    prompt: NonEmptyStr
    """Standalone instruction in the engineer's voice; names no PR, commit, test or solution."""
    timeouts: Timeouts
    """Defaults: 900 / 2400 / 900 seconds."""
    resources: Resources
    """Defaults: 4 cpus, 8192 MB memory, 20480 MB storage."""
    agentDependencies: bool = False
    """Optional: the agent's environment also gets the dependencies the gold patch adds to its
    manifests (it reveals the dependency, not its use); default false."""

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Leave the optional fields out while they hold their default, so a definition written
        before they existed dumps, and digests, exactly as it did."""
        data: dict[str, Any] = handler(self)
        if not self.agentDependencies:
            data.pop("agentDependencies", None)
        return data

    @property
    def level(self) -> Difficulty:
        """The difficulty, typed as the closed set it is."""
        return cast("Difficulty", self.difficulty)

    @property
    def selectors(self) -> tuple[str, ...]:
        """Every fail-to-pass and pass-to-pass selector, in order."""
        return self.failToPass + self.passToPass


class SubmitArguments(_Strict):
    """The whole argument object of the `submit_task` tool."""

    definition: TaskDefinition
    testPatch: Text
    goldPatch: Text


# --- error translation -------------------------------------------------------------------------

_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not allowed (unknown key)",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dict_type": "must be an object",
}


def _issues(error: ValidationError, prefix: str = "") -> tuple[Issue, ...]:
    issues = []
    for item in error.errors(include_url=False, include_input=False):
        ctx = item.get("ctx") or {}
        if item["type"] == "selfbench":
            message = str(ctx["message"])
        else:
            message = _MESSAGES.get(item["type"], f"is invalid ({item['type']})")
        issues.append(Issue(error_location(tuple(item["loc"]), prefix=prefix), message))
    return tuple(issues)


# --- loading -----------------------------------------------------------------------------------

_NESTED: dict[str, type[BaseModel]] = {"timeouts": Timeouts, "resources": Resources}


@dataclass(frozen=True, slots=True)
class LoadedDefinition:
    """A validated definition, the raw object it came from, and what loading warned about."""

    definition: TaskDefinition
    raw: dict[str, Any]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CheckReport:
    """The outcome of `selfbench check`."""

    valid: bool
    issues: tuple[Issue, ...]
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The report as the CLI's JSON contract shapes it."""
        return {
            "valid": self.valid,
            "issues": [{"path": i.path, "message": i.message} for i in self.issues],
            "warnings": list(self.warnings),
        }


def _drop_unknown(raw: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Drop keys the schema does not know, at every level, and say which (persisted mode)."""
    known = TaskDefinition.model_fields
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in raw.items():
        if key not in known:
            dropped.append(key)
            continue
        nested = _NESTED.get(key)
        if nested is not None and isinstance(value, dict):
            inner = {k: v for k, v in value.items() if k in nested.model_fields}
            dropped.extend(f"{key}.{k}" for k in value if k not in nested.model_fields)
            value = inner  # noqa: PLW2901 - the cleaned copy replaces the original
        kept[key] = value
    return kept, tuple(f"dropped unknown key {path}" for path in dropped)


def parse_definition(value: Any, *, mode: Mode = "persisted", prefix: str = "") -> LoadedDefinition:
    """Validate a decoded JSON value as a task definition.

    `prefix` names where the definition sits in a larger document (`definition`).

    Raises:
        DefinitionError: every problem found, each with its JSON path.
    """
    if not isinstance(value, dict):
        raise DefinitionError((Issue(prefix or "$", "must be an object"),))
    warnings: tuple[str, ...] = ()
    data = value
    if mode == "persisted":
        data, warnings = _drop_unknown(value)
    try:
        definition = TaskDefinition.model_validate(data, context={"mode": mode})
    except ValidationError as exc:
        raise DefinitionError(_issues(exc, prefix)) from None
    return LoadedDefinition(definition, value, warnings)


def parse_submit_arguments(value: Any) -> SubmitArguments:
    """Validate the whole `submit_task` argument object (submission mode).

    Raises:
        DefinitionError: every problem found, each with its JSON path.
    """
    if not isinstance(value, dict):
        raise DefinitionError((Issue("$", "must be an object"),))
    try:
        return SubmitArguments.model_validate(value, context={"mode": "submission"})
    except ValidationError as exc:
        raise DefinitionError(_issues(exc)) from None


def check_definition(data: bytes, *, mode: Mode = "persisted", source: str = "$") -> CheckReport:
    """Judge bytes as a definition, reporting every problem instead of raising."""
    try:
        loaded = parse_definition(loads_strict(data, source=source), mode=mode)
    except JsonError as exc:
        message = str(exc).removeprefix(f"{source}: ")
        return CheckReport(valid=False, issues=(Issue("$", message),), warnings=())
    except DefinitionError as exc:
        return CheckReport(valid=False, issues=exc.issues, warnings=())
    return CheckReport(valid=True, issues=(), warnings=loaded.warnings)


# --- canonical form and schema -----------------------------------------------------------------


def canonical_json(definition: TaskDefinition) -> bytes:
    """Compact JSON in schema field order, integral numbers without a fraction, non-ASCII kept."""
    value = normalize_numbers(definition.model_dump(mode="json"))
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


def definition_sha256(definition: TaskDefinition) -> str:
    """The digest the bundle manifest records for a definition."""
    return hashlib.sha256(canonical_json(definition)).hexdigest()


def submission_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the `submit_task` arguments, submission mode."""
    schema = _without_titles(SubmitArguments.model_json_schema(mode="validation"))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "submit_task arguments",
        **schema,
    }


def _without_titles(schema: Any) -> Any:
    """Drop pydantic's generated titles ("Failtopass"); the property names say it better."""
    if isinstance(schema, dict):
        return {
            key: _without_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema
