"""Strict JSON in and out: the JSON of the spec, not Python's permissive dialect."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from selfbench.errors import JsonError

__all__ = [
    "Json",
    "JsonObject",
    "JsonValue",
    "dumps_pretty",
    "iterated",
    "loads_strict",
    "normalize_numbers",
    "table",
]

# What a parsed document holds: every container is a list or a dict of these. Readers narrow it
# with isinstance, so a field of the wrong type is a checked case, not an AttributeError.
JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
# What may be written as JSON. Read-only container types, so a list[str], a tuple or a
# dict[str, int] already is one without a copy (list and dict are invariant, these are not).
Json: TypeAlias = bool | int | float | str | Sequence["Json"] | Mapping[str, "Json"] | None
# One object to be written: what every to_json returns.
JsonObject: TypeAlias = dict[str, Json]

MAX_SAFE_INTEGER = 2**53 - 1
# Python's own default cap on int(str) (sys.int_info.default_max_str_digits): converting longer
# literals is quadratic. Fixed here so the verdict does not depend on the interpreter's setting.
_MAX_INTEGER_DIGITS = 4300
_SHOWN_NUMBER_CHARS = 32


class _Reject(Exception):  # noqa: N818 - internal signal, never escapes this module
    pass


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON number")


def _shown(text: str) -> str:
    """A number literal short enough to quote in a one-line message."""
    if len(text) <= _SHOWN_NUMBER_CHARS:
        return text
    return f"{text[:_SHOWN_NUMBER_CHARS]}... ({len(text)} characters)"


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {_shown(text)} is out of range")
    return value


def _parse_int(text: str) -> int:
    digits = len(text.removeprefix("-"))
    too_long = _Reject(f"integer with {digits} digits is too long (at most {_MAX_INTEGER_DIGITS})")
    if digits > _MAX_INTEGER_DIGITS:
        raise too_long
    try:
        return int(text)
    except ValueError:  # the interpreter's int_max_str_digits is set lower than ours
        raise too_long from None


def _quoted_key(key: str) -> str:
    """The key as a JSON string; escaped to ASCII if it holds a lone surrogate (not UTF-8)."""
    text = json.dumps(key, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(key)
    return text


def _unique_object(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    obj: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in obj:
            raise _Reject(f"duplicate key {_quoted_key(key)}")
        obj[key] = value
    return obj


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def loads_strict(data: bytes, *, source: str) -> Any:
    """Parse one JSON document from UTF-8 bytes.

    Rejects what JSON does not allow but Python's parser accepts (NaN, Infinity, duplicate keys,
    numbers out of range, integers too long to convert, lone surrogates) and turns every parser
    failure, deep nesting included, into a one-line `JsonError` that starts with the source.

    Raises:
        JsonError: the bytes are not valid UTF-8 or not one valid JSON document.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonError(f"{source}: invalid UTF-8 at byte {exc.start}") from None
    if text.startswith("\ufeff"):
        raise JsonError(f"{source}: invalid JSON: byte order mark before the document")
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
            object_pairs_hook=_unique_object,
        )
    except _Reject as exc:
        raise JsonError(f"{source}: invalid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        # Some of the stdlib's messages end in "at" already ("Invalid control character at").
        reason = exc.msg.removesuffix(" at")
        raise JsonError(
            f"{source}: invalid JSON: {reason} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise JsonError(f"{source}: invalid JSON: nested too deeply") from None
    if _has_lone_surrogate(value):
        raise JsonError(f"{source}: invalid JSON: a string holds a lone surrogate escape")
    return value


def normalize_numbers(value: Any) -> Any:
    """Write integral floats as integers, as JSON (and JavaScript) would print them.

    Returns new containers and leaves the input alone. Iterative, so any document `loads_strict`
    accepts, however deep, can be written back.
    """
    root = [value]
    pending: list[tuple[list[Any] | dict[str, Any], Any]] = [(root, 0)]
    while pending:
        parent, key = pending.pop()
        item = parent[key]
        if isinstance(item, float) and item.is_integer() and abs(item) <= MAX_SAFE_INTEGER:
            parent[key] = int(item)
        elif isinstance(item, dict):
            parent[key] = copied = dict(item)
            pending.extend((copied, inner) for inner in copied)
        elif isinstance(item, list):
            parent[key] = copied_list = list(item)
            pending.extend((copied_list, index) for index in range(len(copied_list)))
    return root[0]


def dumps_pretty(value: Any) -> str:
    """Two-space indented JSON, keys in the given order, non-ASCII kept, trailing newline."""
    return (
        json.dumps(normalize_numbers(value), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )


# --- reading a parsed document (JSON, or TOML as tomllib gives it) -----------------------------


def table(document: object, *keys: str) -> dict[str, object]:
    """The object (TOML table) at `keys` in a parsed document; empty when one is missing or not
    an object."""
    value = document
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def iterated(value: object) -> Iterable[object]:
    """What `value or ()` iterates, for a member of a parsed document: an array's items, an
    object's keys, a string's characters, nothing for a false value; a number (or true) is not
    iterable and raises `TypeError`, as iterating it would."""
    if not value:
        return ()
    if not isinstance(value, Iterable):
        raise TypeError(f"'{type(value).__name__}' object is not iterable")
    return value
