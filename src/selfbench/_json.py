"""Strict JSON in and out: the JSON of the spec, not Python's permissive dialect."""

from __future__ import annotations

import json
import math
from typing import Any

from selfbench.errors import SelfbenchError

__all__ = ["JsonError", "dumps_pretty", "loads_strict", "normalize_numbers"]

MAX_SAFE_INTEGER = 2**53 - 1


class JsonError(SelfbenchError):
    """Bytes that are not one well-formed JSON document."""


class _Reject(Exception):  # noqa: N818 - internal signal, never escapes this module
    pass


def _reject_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a JSON number")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text} is out of range")
    return value


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Reject(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
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
    numbers out of range, lone surrogates) and turns every parser failure into a `JsonError` that
    names the source.

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
            object_pairs_hook=_unique_object,
        )
    except _Reject as exc:
        raise JsonError(f"{source}: invalid JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise JsonError(
            f"{source}: invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise JsonError(f"{source}: invalid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise JsonError(f"{source}: invalid JSON: {exc}") from None
    if _has_lone_surrogate(value):
        raise JsonError(f"{source}: invalid JSON: a string holds a lone surrogate escape")
    return value


def normalize_numbers(value: Any) -> Any:
    """Write integral floats as integers, as JSON (and JavaScript) would print them."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    if isinstance(value, dict):
        return {key: normalize_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize_numbers(item) for item in value]
    return value


def dumps_pretty(value: Any) -> str:
    """Two-space indented JSON, keys in the given order, non-ASCII kept, trailing newline."""
    return json.dumps(normalize_numbers(value), indent=2, ensure_ascii=False) + "\n"
