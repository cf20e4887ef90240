"""The rules several stages share (`selfbench.rules`): identifiers, commit SHAs, error locations."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from selfbench.errors import RunError, StoreError
from selfbench.rules import (
    TASK_ID_PATTERN,
    describe_error,
    error_location,
    is_full_sha,
    is_task_id,
    sha_regex,
)
from selfbench.run.state import RunDirectory
from selfbench.store import check_key

SHA = "0123456789abcdef" * 2 + "01234567"
_ID_CHARS = string.ascii_letters + string.digits + "._-"

# --- the taskId rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "max_length", "expected"),
    [
        ("a", None, True),
        ("pr-12.fix_b", None, True),
        ("9", None, True),
        ("a..b", None, True),  # the schema's pattern admits it; Harbor's name rule does not
        ("", None, False),
        (".a", None, False),
        ("-a", None, False),
        ("a/b", None, False),
        ("a b", None, False),
        ("a\n", None, False),
        ("é", None, False),
        ("a" * 121, 121, True),
        ("a" * 122, 121, False),
        ("a" * 94, 93, False),
    ],
)
def test_the_task_id_rule(value: str, max_length: int | None, expected: bool) -> None:
    assert is_task_id(value, max_length=max_length) is expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*_ID_CHARS, "/", " ", "\n", "é"]), max_size=12))
def test_the_task_id_rule_is_its_pattern(value: str) -> None:
    expected = bool(value) and value[0] in _ID_CHARS[:62] and all(c in _ID_CHARS for c in value)
    assert is_task_id(value) is expected
    assert (re.fullmatch(TASK_ID_PATTERN.strip("^$"), value) is not None) is expected


@pytest.mark.parametrize("candidate", ["a\n", "a/b", "a" * 122, ""])
def test_a_run_refuses_a_candidate_id_the_rule_refuses(tmp_path: Path, candidate: str) -> None:
    with pytest.raises(RunError) as caught:
        RunDirectory(tmp_path).state_path(candidate)
    assert str(caught.value) == f"candidate id {candidate!r} cannot name a file"


@pytest.mark.parametrize("key", ["runs/a\n/x", "runs/../x", "runs//x", ""])
def test_a_store_key_segment_follows_the_rule(key: str) -> None:
    with pytest.raises(StoreError) as caught:
        check_key(key)
    assert str(caught.value) == f"unsafe artifact key: {key!r}"


# --- the commit SHA rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "lowercase", "expected"),
    [
        (SHA, False, True),
        (SHA.upper(), False, True),
        (SHA, True, True),
        (SHA.upper(), True, False),
        (SHA[:39], False, False),
        (SHA + "0", False, False),
        ("g" + SHA[1:], False, False),
        (SHA + "\n", False, False),
    ],
)
def test_the_full_sha_rule(value: str, lowercase: bool, expected: bool) -> None:
    assert is_full_sha(value, lowercase=lowercase) is expected


@pytest.mark.parametrize(
    ("keywords", "pattern"),
    [
        ({}, "[0-9a-fA-F]{40}"),
        ({"lowercase": True}, "[0-9a-f]{40}"),
        ({"abbreviated": True}, "[0-9a-fA-F]{7,40}"),
        ({"lowercase": True, "abbreviated": True}, "[0-9a-f]{7,40}"),
    ],
)
def test_the_sha_regex(keywords: dict[str, bool], pattern: str) -> None:
    assert sha_regex(**keywords) == pattern


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"0123456789abcdefABCDEFgG", "\n"]), max_size=42))
def test_the_full_sha_rule_is_forty_hex_digits(value: str) -> None:
    hexadecimal = all(c in string.hexdigits for c in value)
    assert is_full_sha(value) is (len(value) == 40 and hexadecimal)
    lower = hexadecimal and value == value.lower()
    assert is_full_sha(value, lowercase=True) is (len(value) == 40 and lower)


# --- validation error messages -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("loc", "prefix", "root", "expected"),
    [
        ((), "", "$", "$"),
        ((), "", "(root)", "(root)"),
        ((), "[3]", "line", "[3]"),
        (("timeouts", "agentSeconds"), "", "$", "timeouts.agentSeconds"),
        (("failToPass", 0), "", "$", "failToPass[0]"),
        (("failToPass", 0), "definition", "$", "definition.failToPass[0]"),
        ((0, "name"), "", "$", "[0].name"),
        (("number",), "[2]", "$", "[2].number"),
        (("a", 1, 2, "b"), "", "$", "a[1][2].b"),
    ],
)
def test_an_error_location_reads_one_way(
    loc: tuple[int | str, ...], prefix: str, root: str, expected: str
) -> None:
    assert error_location(loc, prefix=prefix, root=root) == expected


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    number: int
    names: list[str] = []


@pytest.mark.parametrize(
    ("value", "keywords", "expected"),
    [
        ({}, {"prefix": "[0]"}, "[0].number: missing"),
        ({"number": "x"}, {}, "number: int parsing"),
        ({"number": 1, "names": [1]}, {}, "names[0]: string type"),
        ({"number": 1, "x": 1}, {"root": "line"}, "x: extra forbidden"),
        ([], {"root": "(root)", "what": "invalid"}, "(root): invalid"),
    ],
)
def test_an_error_is_described_from_its_location_and_type(
    value: Any, keywords: dict[str, str], expected: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        _Entry.model_validate(value)
    assert describe_error(caught.value.errors()[0], **keywords) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=3), min_size=1, max_size=4))
def test_a_location_of_keys_is_dotted(keys: list[str]) -> None:
    assert error_location(tuple(keys)) == ".".join(keys)
