"""Strict JSON (SPEC §1, "JSON typing follows JSON"): what loads_strict refuses; dumps_pretty."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfbench._json import dumps_pretty, iterated, loads_strict, normalize_numbers, table
from selfbench.contract import parse_definition
from selfbench.errors import EXIT_INPUT, DefinitionError, Issue, JsonError, SelfbenchError

SOURCE = "task/definition.json"

MALFORMED: list[tuple[str, bytes, str]] = [
    # Python's parser accepts these; JSON does not.
    ("nan", b"[NaN]", "invalid JSON: NaN is not a JSON number"),
    ("infinity", b'{"cpus": Infinity}', "invalid JSON: Infinity is not a JSON number"),
    ("minus-infinity", b"[1, -Infinity]", "invalid JSON: -Infinity is not a JSON number"),
    ("duplicate-key", b'{"a": 1, "a": 2}', 'invalid JSON: duplicate key "a"'),
    ("duplicate-key-same-value", b'{"a": 1, "b": 0, "a": 1}', 'invalid JSON: duplicate key "a"'),
    (
        "duplicate-key-nested",
        b'{"x": [{"ok": 1}, {"b": {"c": 1, "c": 2}}]}',
        'invalid JSON: duplicate key "c"',
    ),
    ("duplicate-key-non-ascii", '{"é": 1, "é": 2}'.encode(), 'invalid JSON: duplicate key "é"'),
    (
        "duplicate-key-escaped-equal",
        b'{"a": 1, "\\u0061": 2}',
        'invalid JSON: duplicate key "a"',
    ),
    (
        "duplicate-key-control-character",
        b'{"a\\nb": 1, "a\\nb": 2}',
        'invalid JSON: duplicate key "a\\nb"',
    ),
    (
        "duplicate-key-lone-surrogate",
        b'{"\\ud800": 1, "\\ud800": 2}',
        'invalid JSON: duplicate key "\\ud800"',
    ),
    ("out-of-range", b"1e400", "invalid JSON: number 1e400 is out of range"),
    ("out-of-range-negative", b"[-1E400]", "invalid JSON: number -1E400 is out of range"),
    (
        "out-of-range-long",
        b"1" * 400 + b".5",
        "invalid JSON: number 11111111111111111111111111111111... (402 characters) is out of range",
    ),
    (
        "integer-5000-digits",
        b"1" * 5000,
        "invalid JSON: integer with 5000 digits is too long (at most 4300)",
    ),
    (
        "negative-integer-4301-digits",
        b'{"a": -' + b"9" * 4301 + b"}",
        "invalid JSON: integer with 4301 digits is too long (at most 4300)",
    ),
    ("lone-surrogate", b'"\\ud800"', "invalid JSON: a string holds a lone surrogate escape"),
    ("lone-low-surrogate", b'["\\udc00x"]', "invalid JSON: a string holds a lone surrogate escape"),
    (
        "lone-surrogate-nested-key",
        b'{"a": [{"\\udfff": 1}]}',
        "invalid JSON: a string holds a lone surrogate escape",
    ),
    (
        "reversed-surrogate-pair",
        b'"\\ude00\\ud83d"',
        "invalid JSON: a string holds a lone surrogate escape",
    ),
    # Bytes that are not UTF-8: the message names the offset of the first bad byte.
    ("invalid-utf8", b'{"a": "\xff"}', "invalid UTF-8 at byte 7"),
    ("invalid-utf8-first-byte", b"\x80", "invalid UTF-8 at byte 0"),
    ("truncated-utf8", b'"\xc3', "invalid UTF-8 at byte 1"),
    ("overlong-utf8", b'"\xc0\xaf"', "invalid UTF-8 at byte 1"),
    ("utf8-encoded-surrogate", b'"\xed\xa0\x80"', "invalid UTF-8 at byte 1"),
    ("latin-1", '{"prompt": "café"}'.encode("latin-1"), "invalid UTF-8 at byte 15"),
    ("utf-16", '{"a": 1}'.encode("utf-16"), "invalid UTF-8 at byte 0"),
    ("bom", b"\xef\xbb\xbf{}", "invalid JSON: byte order mark before the document"),
    # Deep enough to overflow a recursive parser: a clean error, not a RecursionError.
    ("deep-unclosed-arrays", b"[" * 100_000, "invalid JSON: nested too deeply"),
    ("deep-closed-arrays", b"[" * 100_000 + b"]" * 100_000, "invalid JSON: nested too deeply"),
    ("deep-objects", b'{"a":' * 100_000, "invalid JSON: nested too deeply"),
    # Not one document.
    ("empty", b"", "invalid JSON: Expecting value at line 1 column 1"),
    ("whitespace", b" \n\t", "invalid JSON: Expecting value at line 2 column 2"),
    ("truncated-object", b'{"a": ', "invalid JSON: Expecting value at line 1 column 7"),
    (
        "truncated-array",
        b'{"a": [1, 2',
        "invalid JSON: Expecting ',' delimiter at line 1 column 12",
    ),
    (
        "truncated-string",
        b'{"a": "b',
        "invalid JSON: Unterminated string starting at line 1 column 7",
    ),
    (
        "truncated-key",
        b"{",
        "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
    ),
    ("trailing-comma", b"[1, ]", "invalid JSON: Expecting value at line 1 column 5"),
    ("two-documents", b"[1] [2]", "invalid JSON: Extra data at line 1 column 5"),
    (
        "single-quotes",
        b"{'a': 1}",
        ("invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
    ),
    ("control-character", b'"a\x01"', "invalid JSON: Invalid control character at line 1 column 3"),
    ("bad-escape", b'"\\x41"', "invalid JSON: Invalid \\escape at line 1 column 2"),
    ("leading-zero", b"01", "invalid JSON: Extra data at line 1 column 2"),
    ("python-true", b"True", "invalid JSON: Expecting value at line 1 column 1"),
]


def _assert_clean(error: JsonError) -> None:
    """The shape every JSON error has: ours, one line, named after its source, printable."""
    message = str(error)
    assert isinstance(error, SelfbenchError)
    assert error.exit_code == EXIT_INPUT
    assert message.startswith(f"{SOURCE}: ")
    assert "\n" not in message
    assert "\r" not in message
    message.encode("utf-8")  # printable: no lone surrogate copied from the input
    assert error.__cause__ is None  # the parser's own exception is not chained into the report
    assert error.__context__ is None or error.__suppress_context__


@pytest.mark.parametrize(
    ("data", "message"), [pytest.param(data, message, id=name) for name, data, message in MALFORMED]
)
def test_malformed_json_is_one_clean_error(data: bytes, message: str) -> None:
    with pytest.raises(JsonError) as caught:
        loads_strict(data, source=SOURCE)
    _assert_clean(caught.value)
    assert str(caught.value) == f"{SOURCE}: {message}"


@pytest.mark.parametrize(
    ("data", "value"),
    [
        pytest.param(b"{}", {}, id="empty-object"),
        pytest.param(b' \t\r\n{"a": 1}\n ', {"a": 1}, id="json-whitespace"),
        pytest.param(
            b'{"a": [1, 2.5, -0, "x", true, false, null], "b": {}}',
            {"a": [1, 2.5, 0, "x", True, False, None], "b": {}},
            id="every-type",
        ),
        pytest.param('{"é": "✓"}'.encode(), {"é": "✓"}, id="utf-8"),
        pytest.param(b'"\\ud83d\\ude00"', "😀", id="surrogate-pair"),
        pytest.param(b'"\\u00e9\\u0000"', "é\x00", id="escapes"),
        pytest.param(b"1e308", 1e308, id="largest-exponent"),
        pytest.param(b"1e-400", 0.0, id="underflow-is-zero"),
        pytest.param(b"9" * 4300, int("9" * 4300), id="integer-4300-digits"),
        pytest.param(b"[[[[[[[[[[1]]]]]]]]]]", [[[[[[[[[[1]]]]]]]]]], id="some-nesting"),
        pytest.param(b'{"a": 1, "A": 2}', {"a": 1, "A": 2}, id="keys-are-case-sensitive"),
    ],
)
def test_well_formed_json_parses(data: bytes, value: Any) -> None:
    assert loads_strict(data, source=SOURCE) == value


def test_numbers_keep_their_json_type() -> None:
    value = loads_strict(b"[1, 1.0, 1e3, -2]", source=SOURCE)
    assert [type(item) for item in value] == [int, float, float, int]


def test_object_key_order_is_kept() -> None:
    assert list(loads_strict(b'{"b": 1, "a": 2, "c": 3}', source=SOURCE)) == ["b", "a", "c"]


@pytest.mark.parametrize(
    "data", [b"[]", b'"definition"', b"1", b"null", b"true", b'[{"schemaVersion": 1}]']
)
def test_a_document_that_is_not_an_object_is_not_a_definition(data: bytes) -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition(loads_strict(data, source=SOURCE))
    assert caught.value.issues == (Issue("$", "must be an object"),)


# --- arbitrary input ------------------------------------------------------------------------------

# Pieces that steer random bytes into the parser's corners instead of failing at byte 0.
JSON_PIECES = st.sampled_from(
    [
        b"{",
        b"}",
        b"[",
        b"]",
        b'"',
        b":",
        b",",
        b" ",
        b"\n",
        b'"a"',
        b'"a":',
        b"\\",
        b"\\u",
        b"d800",
        b"dc00",
        b"00e9",
        b"0",
        b"1",
        b"-",
        b".",
        b"e",
        b"E+",
        b"e400",
        b"9" * 4301,
        b"NaN",
        b"Infinity",
        b"true",
        b"null",
        b"\x00",
        b"\x1f",
        b"\xff",
        b"\xc3",
        b"\xc3\xa9",
        b"\xed\xa0\x80",
        b"\xef\xbb\xbf",
    ]
)
JSONISH = st.lists(JSON_PIECES, max_size=40).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | JSONISH)
def test_arbitrary_bytes_raise_nothing_but_json_error(data: bytes) -> None:
    try:
        loads_strict(data, source=SOURCE)
    except JsonError as exc:
        _assert_clean(exc)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(JSON_VALUES)
def test_dumps_pretty_round_trips_through_loads_strict(value: Any) -> None:
    assert loads_strict(dumps_pretty(value).encode("utf-8"), source=SOURCE) == value


# --- dumps_pretty ---------------------------------------------------------------------------------


def test_dumps_pretty_layout() -> None:
    value = {"b": 1.0, "a": ["é", {"z": 0.5, "y": None}], "c": {}, "d": [], "e": '✓ "q"\n'}
    assert dumps_pretty(value) == (
        "{\n"
        '  "b": 1,\n'
        '  "a": [\n'
        '    "é",\n'
        "    {\n"
        '      "z": 0.5,\n'
        '      "y": null\n'
        "    }\n"
        "  ],\n"
        '  "c": {},\n'
        '  "d": [],\n'
        '  "e": "✓ \\"q\\"\\n"\n'
        "}\n"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1\n"),
        (-3.0, "-3\n"),
        (-0.0, "0\n"),
        (1e3, "1000\n"),
        (0.5, "0.5\n"),
        (True, "true\n"),
        ("non-ASCII ✓ 😀", '"non-ASCII ✓ 😀"\n'),
        ([1.0, [2.0]], "[\n  1,\n  [\n    2\n  ]\n]\n"),
    ],
)
def test_dumps_pretty_scalars(value: Any, text: str) -> None:
    assert dumps_pretty(value) == text


def test_normalize_numbers_only_touches_integral_floats() -> None:
    value = normalize_numbers({"a": [1.0, 0.5, True, 2, "1.0", None], "b": {"c": 4.0}})
    assert value == {"a": [1, 0.5, True, 2, "1.0", None], "b": {"c": 4}}
    assert [type(item) for item in value["a"]] == [int, float, bool, int, str, type(None)]
    assert type(value["b"]["c"]) is int


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"1.0" + b"]" * depth


def test_the_deepest_document_loads_strict_accepts_can_be_written_back() -> None:
    accepted, refused = 1, 100_000  # the depth limit is the interpreter's, so find it
    while refused - accepted > 1:
        middle = (accepted + refused) // 2
        try:
            loads_strict(_nested(middle), source=SOURCE)
        except JsonError:
            refused = middle
        else:
            accepted = middle
    value = loads_strict(_nested(accepted), source=SOURCE)
    assert loads_strict(dumps_pretty(value).encode("utf-8"), source=SOURCE) == value


def test_normalize_numbers_leaves_its_input_alone() -> None:
    value = {"a": [1.0, {"b": 2.0}]}
    assert normalize_numbers(value) == {"a": [1, {"b": 2}]}
    assert type(value["a"][0]) is float


def test_table_walks_objects_and_gives_an_empty_one_for_anything_else() -> None:
    document = {"tool": {"poetry": {"group": {"test": {}}}, "uv": []}}
    assert table(document, "tool", "poetry") == {"group": {"test": {}}}
    assert table(document, "tool", "uv") == {}  # an array, not a table
    assert table(document, "tool", "missing", "deeper") == {}
    assert table(None, "tool") == {}
    assert table(document) == document


@pytest.mark.parametrize(
    ("value", "items"),
    [(None, []), (0, []), ("", []), ([1, "a"], [1, "a"]), ({"k": 1}, ["k"]), ("ab", ["a", "b"])],
)
def test_iterated_is_what_value_or_nothing_iterates(value: object, items: list[object]) -> None:
    assert list(iterated(value)) == items


@pytest.mark.parametrize("value", [1, 2.5, True])
def test_iterating_a_number_raises_as_python_would(value: object) -> None:
    with pytest.raises(TypeError, match="is not iterable"):
        iter(iterated(value))
