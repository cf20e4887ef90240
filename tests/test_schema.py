"""SPEC §1 Beyond: the published JSON Schema (draft 2020-12) and the Python validator agree."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from jsonschema.protocols import Validator

from selfbench._json import Json
from selfbench._text import has_control
from selfbench.cli import main
from selfbench.contract import (
    DIFFICULTIES,
    TOOLCHAINS,
    parse_submit_arguments,
    submission_json_schema,
)
from selfbench.errors import DefinitionError
from selfbench.rules import TASK_ID_PATTERN

MAX_SAFE = 2**53 - 1
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
SPEC_FIELDS = [
    "schemaVersion",
    "difficulty",
    "taskId",
    "repo",
    "baseCommit",
    "workdir",
    "setupCommand",
    "testCommand",
    "failToPass",
    "passToPass",
    "testPaths",
    "toolchains",
    "sourcePr",
    "sourceUrl",
    "prompt",
    "timeouts",
    "resources",
]


# --- an ECMA-262 reading of "pattern" -------------------------------------------------------------


def _ecma_regex(pattern: str) -> re.Pattern[str]:
    r"""Compile a JSON Schema pattern so that `$` means what ECMA-262 says: the very end.

    JSON Schema patterns are ECMA-262 regexes, where `$` (without the multiline flag) matches only
    at the end of the input. Python's `$` also matches just before a trailing newline, so the stock
    `jsonschema` validator (which calls `re.search`) accepts "abc\n" for `^[a-z]+$`, where every
    JavaScript-based validator, and our Python validator, rejects it. Our patterns use `$` only as
    the final anchor, so `\Z` is an exact translation.
    """
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _ecma_pattern(
    validator: Validator, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and not _ecma_regex(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# types-jsonschema leaves extend() unannotated; the protocol says what it returns.
EcmaValidator: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, validators={"pattern": _ecma_pattern}
)
SCHEMA = submission_json_schema()
VALIDATOR = EcmaValidator(SCHEMA)


def ours(arguments: Any) -> bool:
    """The Python validator's verdict; anything but a DefinitionError escapes and fails the test."""
    try:
        parse_submit_arguments(arguments)
    except DefinitionError:
        return False
    return True


# --- the schema document --------------------------------------------------------------------------


def test_schema_is_draft_2020_12() -> None:
    assert SCHEMA["$schema"] == DRAFT_2020_12
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert jsonschema.validators.validator_for(SCHEMA) is jsonschema.Draft202012Validator


def _object(value: Json, *keys: str) -> Mapping[str, Json]:
    """The schema object at `keys` below `value`."""
    for key in keys:
        assert isinstance(value, Mapping)
        value = value[key]
    assert isinstance(value, Mapping)
    return value


def test_schema_describes_the_submit_task_arguments() -> None:
    definition = _object(SCHEMA, "$defs", "TaskDefinition")
    assert SCHEMA["type"] == "object"
    assert SCHEMA["required"] == ["definition", "testPatch", "goldPatch"]
    assert list(_object(definition, "properties")) == [*SPEC_FIELDS, "agentDependencies"]
    assert definition["required"] == SPEC_FIELDS
    assert _object(definition, "properties", "agentDependencies")["type"] == "boolean"
    assert _object(SCHEMA, "$defs", "Timeouts")["required"] == [
        "setupSeconds",
        "agentSeconds",
        "testsSeconds",
    ]
    assert _object(SCHEMA, "$defs", "Resources")["required"] == ["cpus", "memoryMb", "storageMb"]
    # Submission mode rejects unknown keys everywhere.
    for node in (SCHEMA, *_object(SCHEMA, "$defs").values()):
        assert _object(node)["additionalProperties"] is False
    assert _object(definition, "properties", "taskId")["pattern"] == TASK_ID_PATTERN


def test_schema_is_plain_json() -> None:
    assert json.loads(json.dumps(SCHEMA)) == SCHEMA
    assert submission_json_schema() == SCHEMA  # a fresh copy each time, same content


def test_cli_schema_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    out, err = capsys.readouterr()
    assert out == json.dumps(submission_json_schema(), ensure_ascii=False, indent=2) + "\n"
    assert json.loads(out) == submission_json_schema()
    assert err == ""


# --- hand-picked cases where the two could drift --------------------------------------------------


def _sample() -> dict[str, Any]:
    return {
        "definition": {
            "schemaVersion": 1,
            "difficulty": "easy",
            "taskId": "t-1",
            "repo": "acme/widgets",
            "baseCommit": "a" * 40,
            "workdir": ".",
            "setupCommand": "true",
            "testCommand": "pytest {tests}",
            "failToPass": ["t.py::a"],
            "passToPass": [],
            "testPaths": ["t.py"],
            "toolchains": ["python"],
            "sourcePr": 1,
            "sourceUrl": "https://example.com/pull/1",
            "prompt": "Do it.",
            "timeouts": {"setupSeconds": 1, "agentSeconds": 1, "testsSeconds": 1},
            "resources": {"cpus": 0.5, "memoryMb": 1, "storageMb": 1},
        },
        "testPatch": "",
        "goldPatch": "",
    }


def _with(path: str, value: Any) -> dict[str, Any]:
    arguments = _sample()
    *parents, leaf = path.split(".")
    node = arguments
    for key in parents:
        node = node[key]
    node[leaf] = value
    return arguments


@pytest.mark.parametrize(
    ("path", "value", "valid"),
    [
        ("definition.taskId", "abc\n", False),
        ("definition.baseCommit", "a" * 40 + "\n", False),
        ("definition.schemaVersion", 1.0, True),
        ("definition.schemaVersion", True, False),
        ("definition.sourcePr", 1e3, True),
        ("definition.sourcePr", 1.5, False),
        ("definition.sourcePr", MAX_SAFE, True),
        ("definition.sourcePr", MAX_SAFE + 1, False),
        ("definition.sourcePr", "4", False),
        ("definition.resources.cpus", 5e-324, True),
        ("definition.resources.cpus", 0, False),
        ("definition.resources.cpus", -0.0, False),
        ("definition.resources.cpus", False, False),
        ("definition.resources.cpus", float(MAX_SAFE + 1), False),
        ("definition.testCommand", "pytest", True),
        ("definition.sourceUrl", "not a url", True),
        ("definition.passToPass", [""], False),
        ("definition.toolchains", [], False),
        ("definition.extra", 1, False),
        ("definition.timeouts.extra", 1, False),
        ("definition.resources.extra", 1, False),
        ("extra", 1, False),
    ],
)
def test_hand_picked_cases_agree(path: str, value: Any, valid: bool) -> None:
    arguments = _with(path, value)
    assert ours(arguments) is valid
    assert VALIDATOR.is_valid(arguments) is valid


def test_stock_jsonschema_reads_dollar_the_python_way() -> None:
    # Why the validator above overrides "pattern": without it this corpus would "disagree".
    stock = jsonschema.Draft202012Validator(SCHEMA)
    arguments = _with("definition.taskId", "abc\n")
    assert stock.is_valid(arguments)
    assert not VALIDATOR.is_valid(arguments)
    assert not ours(arguments)


def test_lone_surrogates_are_the_one_known_difference() -> None:
    # A JSON Schema cannot say "valid Unicode", but a lone surrogate cannot be written as UTF-8,
    # so the validator refuses it (a lenient JSON parser upstream could have produced one). The
    # generated corpus below never holds one: hypothesis' text() excludes surrogates.
    arguments = _with("definition.prompt", "\ud800")
    assert VALIDATOR.is_valid(arguments)
    assert not ours(arguments)


# --- the generated corpus -------------------------------------------------------------------------

SHORT_TEXT = st.text(max_size=8)
NON_EMPTY = st.text(min_size=1, max_size=8)
NAMES = NON_EMPTY.filter(lambda text: not has_control(text))
"""Strings fit to name a repository or a test: no control characters."""
SELECTORS = st.lists(NAMES, min_size=1, max_size=3)
POSITIVE_INTEGERS = st.one_of(
    st.integers(1, MAX_SAFE),
    st.integers(1, 2**40).map(float),
    st.sampled_from([1, 1.0, 1e3, MAX_SAFE, float(MAX_SAFE)]),
)
CPUS = st.one_of(
    st.floats(min_value=0, max_value=MAX_SAFE, exclude_min=True),
    st.integers(1, MAX_SAFE),
    st.sampled_from([0.5, 4, 4.0, 5e-324, MAX_SAFE]),
)

VALID_DEFINITIONS = st.fixed_dictionaries(
    {
        "schemaVersion": st.sampled_from([1, 1.0]),
        "difficulty": st.sampled_from(DIFFICULTIES),
        "taskId": st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,8}", fullmatch=True),
        "repo": NAMES,
        "baseCommit": st.text(alphabet="0123456789abcdefABCDEF", min_size=40, max_size=40),
        "workdir": NON_EMPTY,
        "setupCommand": NON_EMPTY,
        "testCommand": NON_EMPTY,
        "failToPass": SELECTORS,
        "passToPass": st.lists(NAMES, max_size=3),
        "testPaths": SELECTORS,
        "toolchains": st.lists(st.sampled_from(TOOLCHAINS), min_size=1, max_size=4),
        "sourcePr": POSITIVE_INTEGERS,
        "sourceUrl": NON_EMPTY,
        "prompt": NON_EMPTY,
        "timeouts": st.fixed_dictionaries(
            {
                "setupSeconds": POSITIVE_INTEGERS,
                "agentSeconds": POSITIVE_INTEGERS,
                "testsSeconds": POSITIVE_INTEGERS,
            }
        ),
        "resources": st.fixed_dictionaries(
            {"cpus": CPUS, "memoryMb": POSITIVE_INTEGERS, "storageMb": POSITIVE_INTEGERS}
        ),
    }
)
VALID_ARGUMENTS = st.fixed_dictionaries(
    {"definition": VALID_DEFINITIONS, "testPatch": SHORT_TEXT, "goldPatch": SHORT_TEXT}
)

# Values of every JSON type, boundary numbers, and strings near each field's rule. NaN and the
# infinities are left out: they are not JSON, and JSON Schema's comparisons say nothing of them.
REPLACEMENTS = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            False,
            0,
            1,
            -1,
            0.0,
            -0.0,
            1.0,
            1.5,
            0.5,
            1e3,
            1e300,
            MAX_SAFE,
            MAX_SAFE + 1,
            float(MAX_SAFE + 1),
            -(2**60),
            "",
            " ",
            "1",
            "4",
            "easy",
            "Easy",
            "python",
            "java",
            "{tests}",
            "a" * 40,
            "A" * 40,
            "g" * 40,
            "a" * 39,
            "a" * 40 + "\n",
            "abc\n",
            "-abc",
            "https://example.com/pull/1",
            [],
            [""],
            ["x"],
            ["python"],
            [1],
            {},
            {"cpus": 1},
        ]
    ),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    SHORT_TEXT,
    st.lists(SHORT_TEXT, max_size=2),
)
UNKNOWN_KEYS = st.sampled_from(["extra", "TaskId", "schema_version", "cpu", "", "$schema"])
# Each edit keeps or breaks a field's rule: a trailing newline against a `$` anchor, one hex
# digit too few or too many, an enum in the wrong case, an empty string.
STRING_EDITS: st.SearchStrategy[Callable[[str], str]] = st.sampled_from(
    [
        lambda s: s + "\n",
        lambda s: "\n" + s,
        lambda s: s + " ",
        lambda s: s[:-1],
        lambda s: s + "0",
        str.upper,
        lambda _: "",
    ]
)

Slot = tuple[dict[str, Any] | list[Any], Any]


def _slots(value: Any) -> list[Slot]:
    """Every (container, key-or-index) pair below `value`, depth first."""
    slots: list[Slot] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, item in items:
        slots.append((value, key))
        slots.extend(_slots(item))
    return slots


def _objects(value: Any) -> list[dict[str, Any]]:
    """The object itself and every object below it."""
    below = [container[key] for container, key in _slots(value)]
    return [item for item in [value, *below] if isinstance(item, dict)]


def _mutate(draw: st.DrawFn, arguments: dict[str, Any]) -> None:
    kind = draw(st.sampled_from(["drop", "unknown key", "replace", "edit string"]))
    event(f"mutation: {kind}")
    slots = _slots(arguments)
    if kind == "drop":
        container, key = draw(st.sampled_from(slots))
        del container[key]
    elif kind == "unknown key":
        target = draw(st.sampled_from(_objects(arguments)))
        target[draw(UNKNOWN_KEYS)] = copy.deepcopy(draw(REPLACEMENTS))
    elif kind == "replace":
        container, key = draw(st.sampled_from(slots))
        # Deep-copied: sampled_from hands out the same list object every time.
        container[key] = copy.deepcopy(draw(REPLACEMENTS))
    else:
        strings = [(c, k) for c, k in slots if isinstance(c[k], str)]
        if strings:
            container, key = draw(st.sampled_from(strings))
            container[key] = draw(STRING_EDITS)(container[key])


@st.composite
def argument_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A valid argument object with zero to three random mutations: valid and invalid cases."""
    arguments = draw(VALID_ARGUMENTS)
    # Hypothesis favours drawing 0; a second draw keeps the unmutated share near a third.
    mutations = draw(st.integers(0, 3)) or draw(st.integers(0, 1))
    for _ in range(mutations):
        _mutate(draw, arguments)
    return arguments


@settings(max_examples=300, deadline=None)
@given(argument_objects())
def test_json_schema_and_validator_agree(arguments: dict[str, Any]) -> None:
    verdict = ours(arguments)
    event("valid" if verdict else "invalid")
    assert verdict == VALIDATOR.is_valid(arguments)


def test_generated_corpus_holds_valid_and_invalid_cases() -> None:
    verdicts: list[bool] = []

    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(argument_objects())
    def collect(arguments: dict[str, Any]) -> None:
        verdicts.append(ours(arguments))

    collect()
    assert len(verdicts) >= 150
    assert verdicts.count(True) >= len(verdicts) // 5
    assert verdicts.count(False) >= len(verdicts) // 5
