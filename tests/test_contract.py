"""SPEC §1, the task definition: every field of the table, both validation modes, exact messages."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from selfbench.artifacts.task_dir import read_definition
from selfbench.contract import (
    AUTHORING_DEFAULTS,
    CheckReport,
    Mode,
    Resources,
    SubmitArguments,
    TaskDefinition,
    Timeouts,
    canonical_json,
    check_definition,
    definition_sha256,
    parse_definition,
    parse_submit_arguments,
)
from selfbench.errors import EXIT_INPUT, DefinitionError, Issue, SelfbenchError
from selfbench.rules import (
    TASK_ID_PATTERN,
    is_full_sha,
    is_sha256_digest,
    is_task_id,
    task_id_problem,
)

MODES: tuple[Mode, ...] = ("submission", "persisted")
MAX_SAFE = 2**53 - 1
TOO_BIG = "must be at most 9007199254740991 (the largest safe JSON integer)"
TOOLCHAIN_ENUM = "must be one of uv, bun, go, node, python, rust"
PATTERN = "must match ^[A-Za-z0-9][A-Za-z0-9._-]*$"
SHA = "expected a full commit SHA"
URL = "must be an absolute URL (scheme and host)"
PLACEHOLDER = 'testCommand must contain "{tests}"'
SURROGATE = "must not contain a lone surrogate"

# SPEC §1's table, in its order: every JSON path of a definition and its JSON type.
FIELDS: tuple[tuple[str, str], ...] = (
    ("schemaVersion", "integer"),
    ("difficulty", "string"),
    ("taskId", "string"),
    ("repo", "string"),
    ("baseCommit", "string"),
    ("workdir", "string"),
    ("setupCommand", "string"),
    ("testCommand", "string"),
    ("failToPass", "array"),
    ("passToPass", "array"),
    ("testPaths", "array"),
    ("toolchains", "array"),
    ("sourcePr", "integer"),
    ("sourceUrl", "string"),
    ("prompt", "string"),
    ("timeouts", "object"),
    ("timeouts.setupSeconds", "integer"),
    ("timeouts.agentSeconds", "integer"),
    ("timeouts.testsSeconds", "integer"),
    ("resources", "object"),
    ("resources.cpus", "number"),
    ("resources.memoryMb", "integer"),
    ("resources.storageMb", "integer"),
)
OPTIONAL_FIELDS = ("agentDependencies",)
"""Beyond SPEC §1's table: optional, left out of a written definition while at their default."""
TOP_LEVEL = tuple(path for path, _ in FIELDS if "." not in path)
# Integer fields whose constraint is ">= 1" (schemaVersion is the literal 1, tested on its own).
COUNTS = tuple(path for path, kind in FIELDS if kind == "integer" and path != "schemaVersion")


def valid_definition() -> dict[str, Any]:
    """A definition that both modes accept; each test changes one thing in a fresh copy."""
    return {
        "schemaVersion": 1,
        "difficulty": "medium",
        "taskId": "acme-widgets.42",
        "repo": "acme/widgets",
        "baseCommit": "0123456789abcdef0123456789ABCDEF01234567",
        "workdir": ".",
        "setupCommand": "uv sync",
        "testCommand": "uv run pytest {tests}",
        "failToPass": ["tests/test_new.py::test_adds"],
        "passToPass": ["tests/test_old.py::test_keeps"],
        "testPaths": ["tests/test_new.py"],
        "toolchains": ["python"],
        "sourcePr": 42,
        "sourceUrl": "https://github.com/acme/widgets/pull/42",
        "prompt": "Accept «ünïcode» labels ✓.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }


def valid_arguments() -> dict[str, Any]:
    return {"definition": valid_definition(), "testPatch": "diff --git a/x b/x\n", "goldPatch": ""}


def _parent(document: dict[str, Any], path: str) -> tuple[dict[str, Any], str]:
    *parents, leaf = path.split(".")
    node = document
    for key in parents:
        node = node[key]
    return node, leaf


def with_value(path: str, value: Any, document: dict[str, Any] | None = None) -> dict[str, Any]:
    """A copy of the document (default: the valid definition) with `path` set to `value`."""
    result = copy.deepcopy(valid_definition() if document is None else document)
    node, leaf = _parent(result, path)
    node[leaf] = value
    return result


def without(path: str) -> dict[str, Any]:
    result = valid_definition()
    node, leaf = _parent(result, path)
    del node[leaf]
    return result


def issues_of(value: Any, mode: Mode) -> tuple[Issue, ...]:
    """What the validator reports; empty when it accepts."""
    try:
        parse_definition(value, mode=mode)
    except DefinitionError as exc:
        return exc.issues
    return ()


def value_at(definition: TaskDefinition, path: str) -> Any:
    node: Any = definition
    for key in path.split("."):
        node = getattr(node, key)
    return node


def _json_id(value: Any) -> str:
    return json.dumps(value, default=repr)[:40]


# --- the table itself ----------------------------------------------------------------------------


def test_models_have_exactly_the_spec_fields_in_spec_order() -> None:
    nested: dict[str, list[str]] = {
        "timeouts": list(Timeouts.model_fields),
        "resources": list(Resources.model_fields),
    }
    paths: list[str] = []
    for name in TaskDefinition.model_fields:
        paths.append(name)
        paths.extend(f"{name}.{inner}" for inner in nested.get(name, []))
    assert paths == [*(path for path, _ in FIELDS), *OPTIONAL_FIELDS]
    assert all(not TaskDefinition.model_fields[name].is_required() for name in OPTIONAL_FIELDS)
    assert TASK_ID_PATTERN == "^[A-Za-z0-9][A-Za-z0-9._-]*$"
    assert list(SubmitArguments.model_fields) == ["definition", "testPatch", "goldPatch"]


# --- identifiers: the taskId and SHA rules every module shares -----------------------------------

TASK_IDS: dict[str, str | None] = {
    "a": None,
    "acme-widgets.42": None,
    "A_b-c.d": None,
    "9": None,
    "a.b.": None,
    "": "taskId '' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    ".hidden": "taskId '.hidden' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "-flag": "taskId '-flag' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "a/b": "taskId 'a/b' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "a b": "taskId 'a b' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "a\n": "taskId 'a\\n' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "é": "taskId 'é' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$",
    "a..b": "taskId a..b cannot name a Harbor task: it holds '..'",
    "a..": "taskId a.. cannot name a Harbor task: it holds '..'",
}


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_id_rule(task_id: str) -> None:
    assert task_id_problem(task_id) == TASK_IDS[task_id]
    assert is_task_id(task_id) == (task_id_problem(task_id) is None or ".." in task_id)


SHAS: dict[str, tuple[bool, bool]] = {
    "0123456789abcdef0123456789abcdef01234567": (True, False),
    "0123456789ABCDEF0123456789ABCDEF01234567": (True, False),
    "0123456789abcdef0123456789abcdef0123456": (False, False),
    "0123456789abcdef0123456789abcdef012345678": (False, False),
    "g123456789abcdef0123456789abcdef01234567": (False, False),
    "0123456789abcdef0123456789abcdef01234567\n": (False, False),
    "0123456789abcdef" * 4: (False, True),
    "0123456789ABCDEF" * 4: (False, False),
    "0123456789abcdef" * 4 + "0": (False, False),
    "": (False, False),
}


@pytest.mark.parametrize("value", SHAS)
def test_full_sha_and_sha256_digest_rules(value: str) -> None:
    assert (is_full_sha(value), is_sha256_digest(value)) == SHAS[value]


def test_authoring_defaults_are_the_spec_values() -> None:
    assert AUTHORING_DEFAULTS == {
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }
    assert issues_of(with_value("timeouts", AUTHORING_DEFAULTS["timeouts"]), "submission") == ()


@pytest.mark.parametrize("mode", MODES)
def test_the_sample_definition_is_valid(mode: Mode) -> None:
    loaded = parse_definition(valid_definition(), mode=mode)
    assert loaded.warnings == ()
    assert loaded.raw == valid_definition()
    assert loaded.definition.failToPass == ("tests/test_new.py::test_adds",)
    assert loaded.definition.level == "medium"
    assert loaded.definition.selectors == (
        "tests/test_new.py::test_adds",
        "tests/test_old.py::test_keeps",
    )


# --- accepted values ------------------------------------------------------------------------------

ACCEPTED: list[tuple[str, Any]] = [
    ("schemaVersion", 1),
    ("schemaVersion", 1.0),
    *(("difficulty", level) for level in ("easy", "medium", "hard")),
    ("taskId", "a"),
    ("taskId", "0"),
    ("taskId", "Repo_1.fix-42"),
    ("taskId", "a..--__"),
    ("repo", "https://github.com/acme/widgets.git"),
    ("repo", " "),
    ("baseCommit", "0123456789abcdef0123456789abcdef01234567"),
    ("baseCommit", "0123456789ABCDEF0123456789ABCDEF01234567"),
    ("baseCommit", "aBcDeF" + "0" * 34),
    ("workdir", "packages/core"),
    ("setupCommand", "npm ci && npm run build"),
    ("testCommand", "bun test {tests} --bail {tests}"),
    ("failToPass", ["a", "b c", "tests/x.py::T::test[1-2]"]),
    ("passToPass", []),
    ("passToPass", ["a", "a"]),
    ("testPaths", ["tests/a.py", "tests/b/"]),
    *(("toolchains", [name]) for name in ("uv", "bun", "go", "node", "python", "rust")),
    ("toolchains", ["uv", "bun", "go", "node", "python", "rust"]),
    ("toolchains", ["go", "go"]),
    ("sourceUrl", "http://localhost:8080/pull/1"),
    ("sourceUrl", "HTTPS://GITHUB.COM/a/b/pull/1"),
    ("sourceUrl", "http://[::1]/pr/1"),
    ("prompt", "Ünïcode and emoji 😀 and\nnewlines\n"),
    *((path, value) for path in COUNTS for value in (1, 1.0, 1e3, 7, MAX_SAFE, float(MAX_SAFE))),
    *(("resources.cpus", value) for value in (0.5, 1, 4, 4.0, 1e-3, 5e-324, 12.75, MAX_SAFE)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("path", "value"),
    [pytest.param(p, v, id=f"{p}={_json_id(v)}") for p, v in ACCEPTED],
)
def test_accepted_value(mode: Mode, path: str, value: Any) -> None:
    loaded = parse_definition(with_value(path, value), mode=mode)
    parsed = value_at(loaded.definition, path)
    assert parsed == (tuple(value) if isinstance(value, list) else value)


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("schemaVersion", 1.0, 1),
        *((path, value, int(value)) for path in COUNTS for value in (1.0, 1e3, float(MAX_SAFE))),
    ],
)
def test_an_integral_number_is_an_integer(path: str, value: float, expected: int) -> None:
    parsed = value_at(parse_definition(with_value(path, value)).definition, path)
    assert type(parsed) is int
    assert parsed == expected


@pytest.mark.parametrize("mode", MODES)
def test_cpus_is_a_number_with_fractions(mode: Mode) -> None:
    assert parse_definition(with_value("resources.cpus", 0.25), mode=mode).definition.resources == (
        Resources(cpus=0.25, memoryMb=8192, storageMb=20480)
    )


# --- rejected values ------------------------------------------------------------------------------

WRONG_TYPES: dict[str, tuple[str, tuple[Any, ...]]] = {
    # JSON typing follows JSON: true is not a number, "4" is not a number, 1.5 is not an integer.
    "integer": ("must be an integer", (True, False, None, "4", "1", 1.5, 0.5, 1e-300, [], [1], {})),
    "number": ("must be a number", (True, False, None, "4", "0.5", [], [4], {})),
    "string": ("must be a string", (True, None, 4, 1.0, [], ["x"], {})),
    "array": ("must be an array", (True, None, 4, "x", "", {}, {"0": "x"})),
    "object": ("must be an object", (True, None, 4, "x", "", [], [{}])),
}

REJECTED: list[tuple[str, Any, str]] = [
    *(
        (path, value, WRONG_TYPES[kind][0])
        for path, kind in FIELDS
        for value in WRONG_TYPES[kind][1]
    ),
    # schemaVersion: the literal 1
    *(("schemaVersion", value, "must be 1") for value in (0, 2, -1, 1e3, 2.0, -(2**60))),
    ("schemaVersion", 2**53, TOO_BIG),
    # difficulty: the enum, case-sensitive
    *(
        ("difficulty", value, "must be one of easy, medium, hard")
        for value in ("", "Easy", "HARD", "trivial", " easy", "easy\n")
    ),
    # taskId: the pattern, anchored at both ends (no trailing newline)
    *(
        ("taskId", value, PATTERN)
        for value in ("", "-a", ".a", "_a", "a b", "a/b", "a:b", "ä", "a\n", "\na", "a\u0000")
    ),
    # baseCommit: 40 hex digits
    *(
        ("baseCommit", value, SHA)
        for value in (
            "",
            "a" * 39,
            "a" * 41,
            "g" * 40,
            "a" * 40 + "\n",
            " " + "a" * 39,
            "0123456",
            "\uff10" * 40,  # fullwidth digit zero is not hex
        )
    ),
    # non-empty strings
    *((path, "", "must not be empty") for path in ("repo", "workdir", "setupCommand", "prompt")),
    # lone surrogates cannot be written as UTF-8
    *(
        (path, "a\ud800b", SURROGATE)
        for path in ("repo", "workdir", "setupCommand", "prompt", "sourceUrl")
    ),
    ("testCommand", "pytest {tests} \udfff", SURROGATE),
    # arrays
    *(
        (path, [], "must have at least 1 item")
        for path in ("failToPass", "testPaths", "toolchains")
    ),
    # integers >= 1 and within JSON's safe range
    *((path, value, "must be at least 1") for path in COUNTS for value in (0, -1, 0.0, -(2**60))),
    *((path, value, TOO_BIG) for path in COUNTS for value in (2**53, 2.0**53, 1e300, 10**400)),
    *(
        (path, value, "must be an integer")
        for path in COUNTS
        for value in (float("nan"), float("inf"), float("-inf"))
    ),
    # cpus: a number > 0, fractions allowed, within the safe range
    *(
        ("resources.cpus", value, "must be greater than 0")
        for value in (0, 0.0, -0.0, -0.5, -1, -(2**60), -1e300)
    ),
    *(("resources.cpus", value, TOO_BIG) for value in (2**53, 2.0**53, 1e300, 10**400)),
    *(("resources.cpus", value, "must be a number") for value in (float("nan"), float("inf"))),
    ("resources.cpus", float("-inf"), "must be a number"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("path", "value", "message"),
    [pytest.param(p, v, m, id=f"{p}={_json_id(v)}") for p, v, m in REJECTED],
)
def test_rejected_value(mode: Mode, path: str, value: Any, message: str) -> None:
    assert issues_of(with_value(path, value), mode) == (Issue(path, message),)


ITEM_CASES: list[tuple[str, list[Any], tuple[Issue, ...]]] = [
    *(
        (path, [""], (Issue(f"{path}[0]", "must not be empty"),))
        for path in ("failToPass", "passToPass", "testPaths")
    ),
    *(
        (path, ["a", ""], (Issue(f"{path}[1]", "must not be empty"),))
        for path in ("failToPass", "passToPass", "testPaths")
    ),
    *(
        (
            path,
            ["go", 1, None],
            (Issue(f"{path}[1]", "must be a string"), Issue(f"{path}[2]", "must be a string")),
        )
        for path in ("failToPass", "passToPass", "testPaths", "toolchains")
    ),
    (
        "passToPass",
        ["", "ok", ""],
        (Issue("passToPass[0]", "must not be empty"), Issue("passToPass[2]", "must not be empty")),
    ),
    *(
        ("toolchains", [value], (Issue("toolchains[0]", TOOLCHAIN_ENUM),))
        for value in ("java", "Python", "", "python3", " go")
    ),
    ("toolchains", ["uv", "deno"], (Issue("toolchains[1]", TOOLCHAIN_ENUM),)),
    ("failToPass", ["ok", "\ud800"], (Issue("failToPass[1]", SURROGATE),)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [pytest.param(p, v, e, id=f"{p}={_json_id(v)}") for p, v, e in ITEM_CASES],
)
def test_rejected_array_items(
    mode: Mode, path: str, value: list[Any], expected: tuple[Issue, ...]
) -> None:
    assert issues_of(with_value(path, value), mode) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", [path for path, _ in FIELDS])
def test_missing_field_is_required(mode: Mode, path: str) -> None:
    assert issues_of(without(path), mode) == (Issue(path, "is required"),)


@pytest.mark.parametrize("mode", MODES)
def test_empty_object_reports_every_field_as_required(mode: Mode) -> None:
    assert issues_of({}, mode) == tuple(Issue(path, "is required") for path in TOP_LEVEL)
    assert issues_of(with_value("timeouts", {}), mode) == (
        Issue("timeouts.setupSeconds", "is required"),
        Issue("timeouts.agentSeconds", "is required"),
        Issue("timeouts.testsSeconds", "is required"),
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [None, [], "definition", 1, True, [valid_definition()]])
def test_a_definition_must_be_an_object(mode: Mode, value: Any) -> None:
    assert issues_of(value, mode) == (Issue("$", "must be an object"),)
    with pytest.raises(DefinitionError) as caught:
        parse_definition(value, mode=mode, prefix="definition")
    assert caught.value.issues == (Issue("definition", "must be an object"),)


# --- the two modes --------------------------------------------------------------------------------

MODE_CASES: list[tuple[str, Any, str | None, str | None]] = [
    # (path, value, submission message, persisted message); None means accepted
    ("testCommand", "pytest", None, PLACEHOLDER),
    ("testCommand", "pytest {test}", None, PLACEHOLDER),
    ("testCommand", "pytest {TESTS}", None, PLACEHOLDER),
    ("testCommand", "pytest { tests }", None, PLACEHOLDER),
    ("testCommand", "{tests}", None, None),
    ("testCommand", "", "must not be empty", PLACEHOLDER),
    ("sourceUrl", "github.com/acme/widgets/pull/42", None, URL),
    ("sourceUrl", "//github.com/acme/widgets/pull/42", None, URL),
    ("sourceUrl", "/acme/widgets/pull/42", None, URL),
    ("sourceUrl", "https://", None, URL),
    ("sourceUrl", "https:///acme/widgets", None, URL),
    ("sourceUrl", "http://:80/x", None, URL),
    ("sourceUrl", "mailto:dev@example.com", None, URL),
    ("sourceUrl", "file:///pr.html", None, URL),
    ("sourceUrl", "https://exa mple.com/pr/1", None, URL),
    ("sourceUrl", "https://example.com/pr/1\n", None, URL),
    ("sourceUrl", "1http://example.com", None, URL),
    ("sourceUrl", "http://[::1", None, URL),
    ("sourceUrl", "42", None, URL),
    ("sourceUrl", "", "must not be empty", URL),
]


@pytest.mark.parametrize(
    ("path", "value", "submission", "persisted"),
    [pytest.param(*case, id=f"{case[0]}={_json_id(case[1])}") for case in MODE_CASES],
)
def test_mode_specific_rule(
    path: str, value: Any, submission: str | None, persisted: str | None
) -> None:
    document = with_value(path, value)
    assert issues_of(document, "submission") == (
        () if submission is None else (Issue(path, submission),)
    )
    assert issues_of(document, "persisted") == (
        () if persisted is None else (Issue(path, persisted),)
    )


def test_persisted_is_the_default_mode() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition(with_value("testCommand", "pytest"))
    assert caught.value.issues == (Issue("testCommand", PLACEHOLDER),)


UNKNOWN_KEYS = [
    pytest.param("extra", id="root"),
    pytest.param("timeouts.extra", id="timeouts"),
    pytest.param("resources.extra", id="resources"),
    pytest.param("TaskId", id="root-case-variant"),
    pytest.param("timeouts.setup_seconds", id="timeouts-snake-case"),
    pytest.param("resources.cpu", id="resources-near-miss"),
]


@pytest.mark.parametrize("path", UNKNOWN_KEYS)
def test_submission_rejects_unknown_keys(path: str) -> None:
    assert issues_of(with_value(path, 1), "submission") == (
        Issue(path, "is not allowed (unknown key)"),
    )


@pytest.mark.parametrize("path", UNKNOWN_KEYS)
def test_persisted_drops_unknown_keys_with_a_warning(path: str) -> None:
    document = with_value(path, {"any": ["json"]})
    loaded = parse_definition(document, mode="persisted")
    assert loaded.warnings == (f"dropped unknown key {path}",)
    assert loaded.definition == parse_definition(valid_definition()).definition
    assert loaded.raw is document


def test_persisted_reports_every_dropped_key_in_document_order() -> None:
    document = {"z": 1, **valid_definition(), "a": 2}
    document["timeouts"]["later"] = 3
    document["resources"] = {"gpu": 1, **document["resources"]}
    before = copy.deepcopy(document)
    loaded = parse_definition(document, mode="persisted")
    assert loaded.warnings == (
        "dropped unknown key z",
        "dropped unknown key timeouts.later",
        "dropped unknown key resources.gpu",
        "dropped unknown key a",
    )
    assert document == before  # validation never mutates its input


def test_persisted_dropping_does_not_hide_a_nested_type_error() -> None:
    document = with_value("extra", 1, with_value("timeouts", ["not", "an", "object"]))
    assert issues_of(document, "persisted") == (Issue("timeouts", "must be an object"),)


# --- every problem at once ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_field_wrong_gives_every_issue_in_field_order(mode: Mode) -> None:
    document = dict.fromkeys(TOP_LEVEL)
    expected = tuple(Issue(path, WRONG_TYPES[kind][0]) for path, kind in FIELDS if "." not in path)
    assert issues_of(document, mode) == expected


def test_many_problems_at_every_level_are_reported_together() -> None:
    document = {"zz": 1, **valid_definition()}
    del document["prompt"]
    document.update(
        schemaVersion=2,
        taskId="-bad",
        baseCommit="abc",
        failToPass=[],
        passToPass=["", "ok"],
        toolchains=["java"],
        sourcePr=True,
        timeouts={"setupSeconds": 0, "testsSeconds": 1.5, "q": 1},
        resources={"cpus": "4", "memoryMb": 2**53, "storageMb": 1},
        aa=2,
    )
    expected = (
        Issue("schemaVersion", "must be 1"),
        Issue("taskId", PATTERN),
        Issue("baseCommit", SHA),
        Issue("failToPass", "must have at least 1 item"),
        Issue("passToPass[0]", "must not be empty"),
        Issue("toolchains[0]", TOOLCHAIN_ENUM),
        Issue("sourcePr", "must be an integer"),
        Issue("prompt", "is required"),
        Issue("timeouts.setupSeconds", "must be at least 1"),
        Issue("timeouts.agentSeconds", "is required"),
        Issue("timeouts.testsSeconds", "must be an integer"),
        Issue("resources.cpus", "must be a number"),
        Issue("resources.memoryMb", TOO_BIG),
    )
    # Known fields come in schema order; in submission mode unknown keys follow, each object's
    # after its own fields, the root's last, in document order.
    assert issues_of(document, "persisted") == expected
    assert issues_of(document, "submission") == (
        *expected[:-2],
        Issue("timeouts.q", "is not allowed (unknown key)"),
        *expected[-2:],
        Issue("zz", "is not allowed (unknown key)"),
        Issue("aa", "is not allowed (unknown key)"),
    )


def test_definition_error_is_one_line_per_issue() -> None:
    with pytest.raises(DefinitionError) as caught:
        parse_definition(with_value("repo", "", with_value("timeouts.agentSeconds", 0)))
    error = caught.value
    assert isinstance(error, SelfbenchError)
    assert error.exit_code == EXIT_INPUT
    assert str(error) == "repo: must not be empty\ntimeouts.agentSeconds: must be at least 1"
    assert error.lines == ("repo: must not be empty", "timeouts.agentSeconds: must be at least 1")


# --- submit_task arguments ------------------------------------------------------------------------


def test_submit_arguments_accept_a_valid_object() -> None:
    arguments = parse_submit_arguments(valid_arguments())
    assert arguments.definition == parse_definition(valid_definition()).definition
    assert arguments.testPatch == "diff --git a/x b/x\n"
    assert arguments.goldPatch == ""


def test_submit_arguments_use_submission_mode() -> None:
    arguments = valid_arguments()
    arguments["definition"]["testCommand"] = "pytest"
    arguments["definition"]["sourceUrl"] = "PR 42"
    assert parse_submit_arguments(arguments).definition.testCommand == "pytest"


def _submit_issues(value: Any) -> tuple[Issue, ...]:
    try:
        parse_submit_arguments(value)
    except DefinitionError as exc:
        return exc.issues
    return ()


SUBMIT_REJECTED: list[tuple[str, Any, Issue]] = [
    ("extra", 1, Issue("extra", "is not allowed (unknown key)")),
    ("testPatch", 1, Issue("testPatch", "must be a string")),
    ("goldPatch", None, Issue("goldPatch", "must be a string")),
    ("goldPatch", b"diff", Issue("goldPatch", "must be a string")),
    ("testPatch", "\ud800", Issue("testPatch", SURROGATE)),
    ("definition", [], Issue("definition", "must be an object")),
    ("definition", "{}", Issue("definition", "must be an object")),
    (
        "definition.timeouts.setupSeconds",
        0,
        Issue("definition.timeouts.setupSeconds", "must be at least 1"),
    ),
    ("definition.resources.cpus", True, Issue("definition.resources.cpus", "must be a number")),
    ("definition.toolchains", ["x"], Issue("definition.toolchains[0]", TOOLCHAIN_ENUM)),
    ("definition.extra", 1, Issue("definition.extra", "is not allowed (unknown key)")),
    (
        "definition.timeouts.extra",
        1,
        Issue("definition.timeouts.extra", "is not allowed (unknown key)"),
    ),
    (
        "definition.resources.extra",
        1,
        Issue("definition.resources.extra", "is not allowed (unknown key)"),
    ),
    ("definition.testCommand", "", Issue("definition.testCommand", "must not be empty")),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [pytest.param(p, v, e, id=f"{p}={_json_id(v)}") for p, v, e in SUBMIT_REJECTED],
)
def test_submit_arguments_reject(path: str, value: Any, expected: Issue) -> None:
    assert _submit_issues(with_value(path, value, valid_arguments())) == (expected,)


@pytest.mark.parametrize("key", ["definition", "testPatch", "goldPatch"])
def test_submit_arguments_require_every_key(key: str) -> None:
    arguments = valid_arguments()
    del arguments[key]
    assert _submit_issues(arguments) == (Issue(key, "is required"),)


@pytest.mark.parametrize("value", [None, [], "{}", 0])
def test_submit_arguments_must_be_an_object(value: Any) -> None:
    assert _submit_issues(value) == (Issue("$", "must be an object"),)


def test_submit_arguments_report_everything_at_once() -> None:
    definition = without("taskId")
    definition["resources"]["cpus"] = 0
    arguments = {"definition": definition, "testPatch": 3, "model": "x"}
    assert _submit_issues(arguments) == (
        Issue("definition.taskId", "is required"),
        Issue("definition.resources.cpus", "must be greater than 0"),
        Issue("testPatch", "must be a string"),
        Issue("goldPatch", "is required"),
        Issue("model", "is not allowed (unknown key)"),
    )


# --- check ----------------------------------------------------------------------------------------


def _bytes(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8")


def test_check_a_valid_definition() -> None:
    report = check_definition(_bytes(valid_definition()))
    assert report == CheckReport(valid=True, issues=(), warnings=())
    assert report.to_json() == {"valid": True, "issues": [], "warnings": []}
    assert list(report.to_json()) == ["valid", "issues", "warnings"]


def test_check_reports_dropped_keys_as_warnings() -> None:
    report = check_definition(_bytes(with_value("timeouts.x", 1, with_value("note", "hi"))))
    assert report.to_json() == {
        "valid": True,
        "issues": [],
        "warnings": ["dropped unknown key timeouts.x", "dropped unknown key note"],
    }


def test_check_reports_every_issue() -> None:
    document = with_value("sourceUrl", "x", with_value("testCommand", "pytest"))
    assert check_definition(_bytes(document)).to_json() == {
        "valid": False,
        "issues": [
            {"path": "testCommand", "message": PLACEHOLDER},
            {"path": "sourceUrl", "message": URL},
        ],
        "warnings": [],
    }
    assert check_definition(_bytes(document), mode="submission").valid


def test_check_in_submission_mode_rejects_unknown_keys() -> None:
    report = check_definition(_bytes(with_value("extra", 1)), mode="submission")
    assert report == CheckReport(
        valid=False, issues=(Issue("extra", "is not allowed (unknown key)"),), warnings=()
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"a": 1, "a": 2}', 'invalid JSON: duplicate key "a"'),
        (
            b"{",
            "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
        ),
        (b"\xff", "invalid UTF-8 at byte 0"),
        (b"[NaN]", "invalid JSON: NaN is not a JSON number"),
        (b"[]", "must be an object"),
    ],
)
def test_check_reports_malformed_json_as_an_issue_at_the_root(data: bytes, message: str) -> None:
    report = check_definition(data, source="task/definition.json")
    assert report.to_json() == {
        "valid": False,
        "issues": [{"path": "$", "message": message}],
        "warnings": [],
    }


def test_read_definition_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "definition.json"
    path.write_bytes(_bytes(with_value("extra", 1)))
    loaded = read_definition(path)
    assert loaded.warnings == ("dropped unknown key extra",)
    with pytest.raises(DefinitionError) as caught:
        read_definition(path, mode="submission")
    assert caught.value.issues == (Issue("extra", "is not allowed (unknown key)"),)


# --- canonical form -------------------------------------------------------------------------------

CANONICAL = (
    '{"schemaVersion":1,"difficulty":"medium","taskId":"acme-widgets.42","repo":"acme/widgets",'
    '"baseCommit":"0123456789abcdef0123456789ABCDEF01234567","workdir":".",'
    '"setupCommand":"uv sync","testCommand":"uv run pytest {tests}",'
    '"failToPass":["tests/test_new.py::test_adds"],"passToPass":["tests/test_old.py::test_keeps"],'
    '"testPaths":["tests/test_new.py"],"toolchains":["python"],"sourcePr":42,'
    '"sourceUrl":"https://github.com/acme/widgets/pull/42","prompt":"Accept «ünïcode» labels ✓.",'
    '"timeouts":{"setupSeconds":900,"agentSeconds":2400,"testsSeconds":900},'
    '"resources":{"cpus":4,"memoryMb":8192,"storageMb":20480}}'
)
CANONICAL_SHA256 = "a47266c09dd3cda0131057c772d22766e119f84cecc4e44f24c032bdfe8f79e8"


def _canonical(document: dict[str, Any]) -> bytes:
    return canonical_json(parse_definition(document).definition)


def test_canonical_json_is_compact_schema_ordered_utf8() -> None:
    assert _canonical(valid_definition()) == CANONICAL.encode("utf-8")


def test_definition_sha256_is_the_digest_of_the_canonical_json() -> None:
    definition = parse_definition(valid_definition()).definition
    assert definition_sha256(definition) == CANONICAL_SHA256
    assert hashlib.sha256(CANONICAL.encode("utf-8")).hexdigest() == CANONICAL_SHA256


def test_canonical_json_ignores_input_key_order() -> None:
    document = valid_definition()
    reordered = {key: document[key] for key in reversed(document)}
    reordered["timeouts"] = {"testsSeconds": 900, "agentSeconds": 2400, "setupSeconds": 900}
    reordered["resources"] = {"storageMb": 20480, "cpus": 4, "memoryMb": 8192}
    assert list(reordered) != list(document)
    assert _canonical(reordered) == CANONICAL.encode("utf-8")


@pytest.mark.parametrize(
    ("path", "value", "written"),
    [
        ("resources.cpus", 4.0, '"cpus":4,'),
        ("resources.cpus", 0.5, '"cpus":0.5,'),
        ("resources.cpus", 1e-3, '"cpus":0.001,'),
        ("resources.cpus", 2.5, '"cpus":2.5,'),
        ("resources.cpus", MAX_SAFE, f'"cpus":{MAX_SAFE},'),
        ("timeouts.setupSeconds", 1e3, '"setupSeconds":1000,'),
        ("timeouts.testsSeconds", 60.0, '"testsSeconds":60}'),
        ("sourcePr", 7.0, '"sourcePr":7,'),
        ("schemaVersion", 1.0, '{"schemaVersion":1,'),
    ],
)
def test_canonical_json_writes_integral_numbers_without_a_fraction(
    path: str, value: float, written: str
) -> None:
    assert written in _canonical(with_value(path, value)).decode("utf-8")


def test_canonical_json_equal_definitions_have_equal_digests() -> None:
    same = with_value("timeouts.setupSeconds", 900.0, with_value("resources.cpus", 4.0))
    unknown = with_value("extra", 1)
    digest = definition_sha256(parse_definition(valid_definition()).definition)
    assert definition_sha256(parse_definition(same).definition) == digest
    assert definition_sha256(parse_definition(unknown).definition) == digest
    other = parse_definition(with_value("prompt", "Accept unicode labels.")).definition
    assert definition_sha256(other) != digest


def test_canonical_json_keeps_non_ascii_and_escapes_only_what_json_requires() -> None:
    prompt = 'Say "héllo" ✓ 😀\n\ttab \\ \u007f'
    text = _canonical(with_value("prompt", prompt)).decode("utf-8")
    assert '"prompt":"Say \\"héllo\\" ✓ 😀\\n\\ttab \\\\ \u007f",' in text
    assert "\\u" not in text
    assert json.loads(text)["prompt"] == prompt


def test_canonical_json_parses_back_to_the_same_definition() -> None:
    document = with_value("resources.cpus", 0.1, with_value("passToPass", []))
    definition = parse_definition(document).definition
    again = parse_definition(json.loads(canonical_json(definition)), mode="submission")
    assert again.definition == definition
    assert again.raw == json.loads(canonical_json(definition))


@pytest.mark.parametrize(
    ("literal", "issues"),
    [
        (b"42", []),
        (b"42.0", []),
        (b"1e3", []),
        (b"1E+3", []),
        (b"4200e-2", []),
        (b"9007199254740991", []),
        (b"10.5e-1", [{"path": "sourcePr", "message": "must be an integer"}]),
        (b"true", [{"path": "sourcePr", "message": "must be an integer"}]),
        (b'"42"', [{"path": "sourcePr", "message": "must be an integer"}]),
        (b"null", [{"path": "sourcePr", "message": "must be an integer"}]),
        (b"9007199254740992", [{"path": "sourcePr", "message": TOO_BIG}]),
        (b"1e16", [{"path": "sourcePr", "message": TOO_BIG}]),
    ],
)
def test_json_text_is_typed_as_json(literal: bytes, issues: list[dict[str, str]]) -> None:
    data = _bytes(valid_definition()).replace(b'"sourcePr": 42', b'"sourcePr": ' + literal)
    assert literal in data
    assert check_definition(data).to_json()["issues"] == issues


# --- a model behaves as the frozen dataclass it replaces -------------------------------------


def test_a_model_is_built_by_position_or_by_name_and_holds_its_defaults() -> None:
    assert Timeouts(1, 2, 3) == Timeouts(setupSeconds=1, agentSeconds=2, testsSeconds=3)
    assert Timeouts(1, 2, testsSeconds=3).testsSeconds == 3
    definition = TaskDefinition.model_validate(valid_definition())
    assert definition.agentDependencies is False
    assert repr(Timeouts(1, 2, 3)) == "Timeouts(setupSeconds=1, agentSeconds=2, testsSeconds=3)"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1, 2), {}, "Timeouts() is missing the argument 'testsSeconds'"),
        ((1, 2, 3, 4), {}, "Timeouts() takes 3 arguments"),
        ((1, 2, 3), {"setupSeconds": 1}, "Timeouts() got an unexpected argument 'setupSeconds'"),
        ((1, 2, 3), {"minutes": 1}, "Timeouts() got an unexpected argument 'minutes'"),
    ],
)
def test_a_model_built_wrong_raises_type_error(
    args: tuple[int, ...], kwargs: dict[str, int], message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        Timeouts(*args, **kwargs)
    assert str(raised.value) == message


def test_a_model_is_frozen_hashable_and_equal_only_to_its_own_kind() -> None:
    timeouts = Timeouts(1, 2, 3)
    with pytest.raises(AttributeError):
        timeouts.setupSeconds = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del timeouts.setupSeconds
    assert hash(timeouts) == hash(Timeouts(1, 2, 3))
    assert len({timeouts, Timeouts(1, 2, 3), Timeouts(1, 2, 4)}) == 2
    assert timeouts != (1, 2, 3)
    assert Resources(1, 2, 3) != Timeouts(1, 2, 3)


def test_a_model_copies_and_pickles_as_itself() -> None:
    import pickle  # noqa: PLC0415 - this test's alone

    definition = TaskDefinition.model_validate(valid_definition())
    for copied in (copy.copy(definition), copy.deepcopy(definition)):
        assert copied == definition
        assert type(copied) is TaskDefinition
    assert pickle.loads(pickle.dumps(definition)) == definition  # noqa: S301 - our own bytes
    changed = definition.model_copy(update={"sourcePr": 7})
    assert (changed.sourcePr, changed.taskId) == (7, definition.taskId)
    assert definition.sourcePr != 7


def test_a_model_field_not_declared_with_field_is_refused_when_the_class_is_made() -> None:
    from selfbench.contract import _Model  # noqa: PLC0415 - the base alone

    with pytest.raises(TypeError) as raised:

        class Broken(_Model):  # the base reads the class body
            seconds: int = 5

    assert str(raised.value) == "Broken.seconds is not declared with _field"
