"""The task definition, schemaVersion 1 (SPEC §1): models, both validation modes, JSON Schema.

Every constraint is stated once, beside its JSON Schema twin, in the field types below (`_Type`);
the models only arrange them, and both the validator and `submission_json_schema` read them from
there. Plain Python, no validation library: `check`, `audit` and `submit` must start within
the original tool's whole-process time (0.071 s on a small task, issue 27), and pydantic's import,
its plugin scan and these models' build alone took about 45 ms of it; the checks were already
our own functions, so only their arrangement moved here (docs/performance.md). The models keep
the small part of pydantic's model interface the rest of the code uses (`model_validate`,
`model_dump`, `model_copy`, `model_construct`, `model_fields`). For the same reason the models and
records here are not dataclasses: importing `dataclasses` (and the `inspect` it loads) and
building a frozen, slotted dataclass cost `audit` about 20 ms of its start-up; a model's methods
are the base class's own, and the records are NamedTuples.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, NamedTuple, Self, cast, dataclass_transform
from urllib.parse import urlsplit

from selfbench._json import (
    MAX_SAFE_INTEGER,
    Json,
    JsonObject,
    JsonValue,
    loads_strict,
    normalize_numbers,
)
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


class _Invalid(Exception):  # noqa: N818 - a value's problem inside the validator, never raised out
    """One value's problem, worded for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _fail(message: str) -> _Invalid:
    return _Invalid(message)


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


def _test_command(value: str, mode: Mode) -> str:
    if mode == "persisted":
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


def _source_url(value: str, mode: Mode) -> str:
    if mode == "persisted":
        if not _is_absolute_url(value):
            raise _fail("must be an absolute URL (scheme and host)")
    elif not value:
        raise _fail("must not be empty")
    return value


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _fail("must be a string")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail("must be a boolean")
    return value


def _array(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise _fail("must be an array")
    return tuple(value)


def _at_least_one(value: tuple[str, ...]) -> tuple[str, ...]:
    if not value:
        raise _fail("must have at least 1 item")
    return value


# --- field types: each check beside its JSON Schema twin ----------------------------------------

_Check = Callable[[Any, "Mode"], Any]


def _plain(check: Callable[[Any], Any]) -> _Check:
    """A check that reads the same in both modes."""
    return lambda value, _mode: check(value)


class _Type(NamedTuple):
    """A field's type: its checks in order (each returns the value it passes on, or raises
    `_Invalid`), for an array its items' type and the checks after them, and its JSON Schema."""

    schema: Mapping[str, Json]
    checks: tuple[_Check, ...] = ()
    items: _Type | None = None
    after: tuple[_Check, ...] = ()

    def refine(
        self, *checks: Callable[[Any], Any], schema: Mapping[str, Json] | None = None
    ) -> _Type:
        """This type with more checks after its own (and another JSON Schema, when given)."""
        more = tuple(_plain(check) for check in checks)
        return self._replace(
            checks=self.checks + more, schema=self.schema if schema is None else schema
        )


def _array_of(items: _Type, *, at_least_one: bool) -> _Type:
    """A JSON array of `items`, or of at least one."""
    schema: JsonObject = {"type": "array", "items": items.schema}
    if at_least_one:
        schema["minItems"] = 1
    after = (_plain(_at_least_one),) if at_least_one else ()
    return _Type(schema, (_plain(_array),), items, after)


_INTEGER_SCHEMA: JsonObject = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
_STRING_SCHEMA: JsonObject = {"type": "string", "minLength": 1}
_NAME_SCHEMA: JsonObject = {"type": "string", "minLength": 1, "pattern": f"^[^{CONTROL_CLASS}]*$"}

_Str = _Type({"type": "string"}, (_plain(_string),))
PositiveInt = _Type(_INTEGER_SCHEMA, (_plain(_integer), _plain(_positive_integer)))
PositiveNumber = _Type(
    {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SAFE_INTEGER}, (_plain(_number),)
)
Boolean = _Type({"type": "boolean"}, (_plain(_boolean),))
Text = _Str.refine(_unicode)
NonEmptyStr = Text.refine(_non_empty, schema=_STRING_SCHEMA)
NameStr = NonEmptyStr.refine(_no_control, schema=_NAME_SCHEMA)
"""A non-empty string that names something (a repository, a test): no control characters."""
SchemaVersion = _Type({"const": 1}, (_plain(_integer), _plain(_schema_version)))
DifficultyStr = _Str.refine(_difficulty, schema={"enum": list(DIFFICULTIES)})
TaskIdStr = _Str.refine(_task_id, schema={"type": "string", "pattern": TASK_ID_PATTERN})
ShaStr = _Str.refine(_sha, schema={"type": "string", "pattern": _SHA_PATTERN})
TestCommandStr = _Type(_STRING_SCHEMA, (*Text.checks, _test_command))
SourceUrlStr = _Type(_STRING_SCHEMA, (*Text.checks, _source_url))
ToolchainStr = _Str.refine(_toolchain, schema={"enum": list(TOOLCHAINS)})
SelectorList = _array_of(NameStr, at_least_one=True)
PathList = _array_of(NonEmptyStr, at_least_one=True)
"""Repository paths: a file name may hold any character but NUL, so none is refused here."""
OptionalSelectorList = _array_of(NameStr, at_least_one=False)
ToolchainList = _array_of(ToolchainStr, at_least_one=True)


# --- the models --------------------------------------------------------------------------------

_MISSING = object()
_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not allowed (unknown key)",
    "model_type": "must be an object",
}


class FieldInfo(NamedTuple):
    """One model field as `model_fields` lists it."""

    kind: _Type | type[_Model]
    description: str
    default: Any = _MISSING

    def is_required(self) -> bool:
        """True when the field has no default."""
        return self.default is _MISSING


def _field(kind: _Type | type[_Model], doc: str = "", *, default: Any = _MISSING) -> Any:
    """A model field of type `kind` (a `_Type` or a nested model) described by `doc`."""
    return FieldInfo(kind, doc, default)


@dataclass_transform(eq_default=True, frozen_default=True, field_specifiers=(_field,))
class _Model:
    """A strict, frozen JSON object: every field required unless it has a default, unknown keys
    refused. A subclass declares its fields with `_field`, in order; it is built, compared,
    hashed and printed as a frozen dataclass would be."""

    __slots__ = ()
    model_fields: ClassVar[dict[str, FieldInfo]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.model_fields = {}
        for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063 - no `inspect`
            info = cls.__dict__[name]
            if not isinstance(info, FieldInfo):
                raise TypeError(f"{cls.__name__}.{name} is not declared with _field")
            cls.model_fields[name] = info
            delattr(cls, name)  # an instance's own value, or none (`model_construct`)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self.model_fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected argument {name!r}")
            values[name] = value
        for name, info in fields.items():
            value = values.get(name, info.default)
            if value is _MISSING:
                raise TypeError(f"{type(self).__name__}() is missing the argument {name!r}")
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.model_fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)
        return f"{type(self).__qualname__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values())

    @classmethod
    def model_validate(cls, value: Any, *, context: Mapping[str, Any] | None = None) -> Self:
        """Validate a decoded JSON object (`context={"mode": ...}`, persisted by default).

        Raises:
            DefinitionError: every problem found, each with its JSON path.
        """
        mode = cast("Mode", (context or {}).get("mode", "persisted"))
        issues: list[tuple[tuple[str | int, ...], str]] = []
        result = _validate_model(cls, value, mode, (), issues)
        if issues:
            raise DefinitionError(tuple(Issue(error_location(loc), text) for loc, text in issues))
        return cast("Self", result)

    @classmethod
    def model_construct(cls, **values: Any) -> Self:
        """An instance of the given fields and the defaults, without validation; a field left
        out has no value at all (reading it raises AttributeError)."""
        instance = object.__new__(cls)
        for name, info in cls.model_fields.items():
            value = values.get(name, info.default)
            if value is not _MISSING:
                object.__setattr__(instance, name, value)
        return instance

    def model_dump(
        self, *, mode: Literal["python", "json"] = "python", exclude_none: bool = False
    ) -> JsonObject:
        """The fields in declaration order, nested models as dicts (arrays as lists in JSON
        mode); an optional field holding its default is left out, and so is a None when
        `exclude_none`."""
        data: JsonObject = {}
        for name, info in self.model_fields.items():
            value = getattr(self, name)
            if (info.default is not _MISSING and value == info.default) or (
                exclude_none and value is None
            ):
                continue  # so a definition written before the field existed dumps as it did
            if isinstance(value, _Model):
                value = value.model_dump(mode=mode, exclude_none=exclude_none)
            elif mode == "json" and isinstance(value, tuple):
                value = list(value)
            data[name] = value
        return data

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with the fields in `update` replaced, without validation."""
        copied = object.__new__(type(self))
        for name in self.model_fields:
            value = (update or {}).get(name, _MISSING)
            if value is _MISSING:
                value = getattr(self, name)
            object.__setattr__(copied, name, value)
        return copied


def _validate_value(
    kind: _Type | type[_Model],
    value: Any,
    mode: Mode,
    loc: tuple[str | int, ...],
    issues: list[tuple[tuple[str | int, ...], str]],
) -> Any:
    """`value` as `kind` accepts it, or `_MISSING` after adding its problems to `issues`."""
    if not isinstance(kind, _Type):
        return _validate_model(kind, value, mode, loc, issues)
    try:
        for check in kind.checks:
            value = check(value, mode)
    except _Invalid as exc:
        issues.append((loc, exc.message))
        return _MISSING
    if kind.items is None:
        return value
    items = tuple(
        _validate_value(kind.items, item, mode, (*loc, index), issues)
        for index, item in enumerate(value)
    )
    if _MISSING in items:
        return _MISSING
    try:
        for check in kind.after:
            items = check(items, mode)
    except _Invalid as exc:
        issues.append((loc, exc.message))
        return _MISSING
    return items


def _validate_model(
    cls: type[_Model],
    value: Any,
    mode: Mode,
    loc: tuple[str | int, ...],
    issues: list[tuple[tuple[str | int, ...], str]],
) -> Any:
    if isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        issues.append((loc, _MESSAGES["model_type"]))
        return _MISSING
    found = len(issues)
    values: dict[str, object] = {}
    for name, info in cls.model_fields.items():
        if name not in value:
            if info.is_required():
                issues.append(((*loc, name), _MESSAGES["missing"]))
            continue
        values[name] = _validate_value(info.kind, value[name], mode, (*loc, name), issues)
    unknown = [key for key in value if key not in cls.model_fields]
    issues.extend(((*loc, key), _MESSAGES["extra_forbidden"]) for key in unknown)
    if len(issues) > found:
        return _MISSING
    return cls(**values)


class Timeouts(_Model):
    """Setup, agent and test time limits, in seconds."""

    setupSeconds: int = _field(PositiveInt)
    agentSeconds: int = _field(PositiveInt)
    testsSeconds: int = _field(PositiveInt)


class Resources(_Model):
    """The container's CPU, memory and storage."""

    cpus: float = _field(PositiveNumber)
    memoryMb: int = _field(PositiveInt)
    storageMb: int = _field(PositiveInt)


class TaskDefinition(_Model):
    """One authored task, schemaVersion 1."""

    schemaVersion: int = _field(SchemaVersion, "Always 1.")
    difficulty: str = _field(DifficultyStr, "Gates the gold patch's size: easy, medium or hard.")
    taskId: str = _field(TaskIdStr, "Directory name and Harbor task name selfbench/<taskId>.")
    repo: str = _field(NameStr, "Free-form label: owner/name or a clone URL.")
    baseCommit: str = _field(ShaStr, "Full 40-hex SHA of the commit before the change.")
    workdir: str = _field(NonEmptyStr, "Repository-relative working directory; '.' for the root.")
    setupCommand: str = _field(
        NonEmptyStr, "Shell command run from /app/<workdir> at image build: install dependencies."
    )
    testCommand: str = _field(
        TestCommandStr, "One runner command holding {tests} once, unquoted, for the selectors."
    )
    failToPass: tuple[str, ...] = _field(
        SelectorList, "Selectors that fail before the change and pass after it."
    )
    passToPass: tuple[str, ...] = _field(
        OptionalSelectorList, "Regression selectors that pass before and after."
    )
    testPaths: tuple[str, ...] = _field(PathList, "Held-out test paths, relative to workdir.")
    toolchains: tuple[str, ...] = _field(
        ToolchainList, "Toolchain layers the clean checkout needs."
    )
    sourcePr: int = _field(PositiveInt, "Number of the merged pull request.")
    sourceUrl: str = _field(SourceUrlStr, "URL of the merged pull request.")
    prompt: str = _field(
        NonEmptyStr,
        "Standalone instruction in the engineer's voice; names no PR, commit, test or solution.",
    )
    timeouts: Timeouts = _field(Timeouts, "Defaults: 900 / 2400 / 900 seconds.")
    resources: Resources = _field(Resources, "Defaults: 4 cpus, 8192 MB memory, 20480 MB storage.")
    agentDependencies: bool = _field(
        Boolean,
        "Optional: the agent's environment also gets the dependencies the gold patch adds to its\n"
        "manifests (it reveals the dependency, not its use); default false.",
        default=False,
    )

    @property
    def level(self) -> Difficulty:
        """The difficulty, typed as the closed set it is."""
        return cast("Difficulty", self.difficulty)

    @property
    def selectors(self) -> tuple[str, ...]:
        """Every fail-to-pass and pass-to-pass selector, in order."""
        return self.failToPass + self.passToPass


class SubmitArguments(_Model):
    """The whole argument object of the `submit_task` tool."""

    definition: TaskDefinition = _field(TaskDefinition)
    testPatch: str = _field(Text)
    goldPatch: str = _field(Text)


# --- loading -----------------------------------------------------------------------------------

_NESTED: dict[str, type[_Model]] = {"timeouts": Timeouts, "resources": Resources}


class LoadedDefinition(NamedTuple):
    """A validated definition, the raw object it came from, and what loading warned about."""

    definition: TaskDefinition
    raw: JsonObject
    warnings: tuple[str, ...]


class CheckReport(NamedTuple):
    """The outcome of `selfbench check`."""

    valid: bool
    issues: tuple[Issue, ...]
    warnings: tuple[str, ...]

    def to_json(self) -> JsonObject:
        """The report as the CLI's JSON contract shapes it."""
        return {
            "valid": self.valid,
            "issues": [{"path": i.path, "message": i.message} for i in self.issues],
            "warnings": list(self.warnings),
        }


def _drop_unknown(raw: dict[str, JsonValue]) -> tuple[dict[str, JsonValue], tuple[str, ...]]:
    """Drop keys the schema does not know, at every level, and say which (persisted mode)."""
    known = TaskDefinition.model_fields
    kept: dict[str, JsonValue] = {}
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
    issues: list[tuple[tuple[str | int, ...], str]] = []
    definition = _validate_model(TaskDefinition, data, mode, (), issues)
    if issues:
        raise DefinitionError(
            tuple(Issue(error_location(loc, prefix=prefix), text) for loc, text in issues)
        )
    return LoadedDefinition(definition, value, warnings)


def parse_submit_arguments(value: Any) -> SubmitArguments:
    """Validate the whole `submit_task` argument object (submission mode).

    Raises:
        DefinitionError: every problem found, each with its JSON path.
    """
    if not isinstance(value, dict):
        raise DefinitionError((Issue("$", "must be an object"),))
    return SubmitArguments.model_validate(value, context={"mode": "submission"})


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
    import hashlib  # noqa: PLC0415 - start-up: OpenSSL's load is not `check`'s to pay

    return hashlib.sha256(canonical_json(definition)).hexdigest()


def submission_json_schema() -> JsonObject:
    """The JSON Schema (draft 2020-12) of the `submit_task` arguments, submission mode."""
    definitions: JsonObject = {}
    schema = _model_schema(SubmitArguments, definitions)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "submit_task arguments",
        "$defs": dict(sorted(definitions.items())),
        **schema,
    }


def _model_schema(cls: type[_Model], definitions: JsonObject) -> JsonObject:
    """A model's object schema; the models it nests go to `definitions` by name."""
    from inspect import cleandoc  # noqa: PLC0415 - start-up: `inspect` is not `check`'s to pay

    properties: JsonObject = {}
    for name, info in cls.model_fields.items():
        if isinstance(info.kind, _Type):
            field = _sorted_keys(info.kind.schema)
        else:
            definitions[info.kind.__name__] = _model_schema(info.kind, definitions)
            field = {"$ref": f"#/$defs/{info.kind.__name__}"}
        if info.description:
            field["description"] = info.description
        if not info.is_required():
            field["default"] = info.default
        properties[name] = _sorted_keys(field)
    return {
        "additionalProperties": False,
        "description": cleandoc(cls.__doc__ or ""),
        "properties": properties,
        "required": [name for name, info in cls.model_fields.items() if info.is_required()],
        "type": "object",
    }


def _sorted_keys(schema: Mapping[str, Json]) -> JsonObject:
    """The schema with its keys in order, nested objects too, as JSON Schema tools print it."""
    return {
        key: _sorted_keys(value) if isinstance(value, Mapping) else value
        for key, value in sorted(schema.items())
    }
