"""The runner registry: every runner states each part of `Runner` that applies to it, the
registry's questions agree with its runners, and outside `selfbench.runners` no module names a
runner in code."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from selfbench import runners
from selfbench.bundle import evidence
from selfbench.errors import DraftError
from selfbench.runners import (
    CANARY_NAMES,
    CANARY_VALUES,
    RUNNERS,
    CanaryParts,
    CompiledProject,
    CoverageParts,
    NodeProject,
    Part,
    PythonProject,
    Runner,
    VerifierParts,
    detect,
    runner_named,
)
from selfbench.runners._index import ENTRIES, Entry
from selfbench.runners._log import Result, Run

SOURCE = Path(runners.__file__).resolve().parents[1]
RECORDS: dict[str, type[Any]] = {
    "PythonProject": PythonProject,
    "NodeProject": NodeProject,
    "CompiledProject": CompiledProject,
    "VerifierParts": VerifierParts,
    "CoverageParts": CoverageParts,
    "CanaryParts": CanaryParts,
    "Entry": Entry,
}
PROJECTS = {"python": "python", "node": "node", "go": "compiled", "rust": "compiled"}
"""The drafting sub-record each ecosystem's runners carry (and no other)."""


def _fields(record: type[Any]) -> dict[str, tuple[str, bool]]:
    """Each field's type and whether it is required (has no default)."""
    if issubclass(record, tuple):  # a NamedTuple
        defaults = record._field_defaults  # type: ignore[attr-defined]
        annotations = record.__annotations__
        return {  # NamedTuple keeps a postponed annotation as a ForwardRef
            name: (str(getattr(kind, "__forward_arg__", kind)), name not in defaults)
            for name, kind in annotations.items()
        }
    return {
        field.name: (str(field.type), field.default is dataclasses.MISSING)
        for field in dataclasses.fields(record)
    }


def _check(value: object, name: str, kind: str, required: bool) -> None:
    """The value has its field's type, a sub-record each of its own fields'; a required one is
    set (not empty, besides a flag)."""
    record = RECORDS.get(kind.removesuffix(" | None"))
    if record is None:
        _check_value(value, name, kind)
    elif value is not None or kind in RECORDS:
        assert isinstance(value, record), name
        for inner, (inner_kind, inner_required) in _fields(record).items():
            _check(getattr(value, inner), f"{name}.{inner}", inner_kind, inner_required)
    if required and kind != "bool":
        assert value, f"{name} is required: every runner states it"


def _check_value(value: object, name: str, kind: str) -> None:
    if kind == "str":
        assert isinstance(value, str), name
    elif kind == "bool":
        assert isinstance(value, bool), name
    elif kind == "int":
        assert isinstance(value, int), name
        assert not isinstance(value, bool), name
    elif kind.startswith(("tuple", "frozenset")):
        assert isinstance(value, tuple if kind.startswith("tuple") else frozenset), name
        if kind in ("tuple[str, ...]", "frozenset[str]"):
            assert all(isinstance(item, str) and item for item in value), name
        if name.endswith("verifier_functions"):  # (the shared function it follows, its text)
            assert all(len(item) == 2 and all(item) for item in value), name
    elif kind == "Part | None":
        assert value is None or (isinstance(value, Part) and value.text), name
    elif kind.endswith("| None"):
        assert kind.startswith("Callable"), name
        assert value is None or callable(value), name
    else:
        assert kind.startswith("Callable"), name
        assert callable(value), name


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_every_runner_implements_every_part(runner: Runner) -> None:
    for name, (kind, required) in _fields(Runner).items():
        _check(getattr(runner, name), name, kind, required)
    assert runner_named(runner.reads_as) is not None


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_every_runner_whose_report_is_read_has_canaries(runner: Runner) -> None:
    """Canaries in every verifier run: each runner's two tests, their names and sentinels as
    placeholders the verifier replaces, a report branch that names its tests."""
    assert runner.evidence
    canary = runner.canary
    assert canary is not None
    for placeholder in (*CANARY_NAMES, *CANARY_VALUES):
        assert placeholder in canary.text, placeholder
    assert canary.suffixes
    assert runner_named(runner.reads_as).verifier.report_tests is not None  # type: ignore[union-attr]


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_a_runner_carries_its_ecosystems_drafting_parts_only(runner: Runner) -> None:
    """A Python runner has `python`, a Node one `node`, a Go or Rust one `compiled`; none has
    another ecosystem's."""
    assert runner.ecosystem in PROJECTS
    for name in set(PROJECTS.values()):
        has = getattr(runner, name) is not None
        assert has == (PROJECTS[runner.ecosystem] == name), name


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_a_runner_whose_report_is_read_says_how(runner: Runner) -> None:
    """The verifier reads the report of a runner with `evidence` that reads its own log: it has
    its branch of each jq function that reads every report, and an environment that asks for the
    report; a runner whose report is not read has no part of the verifier's evidence."""
    read = runner.evidence and runner.reads_as == runner.name
    parts = runner.verifier
    if read:
        needed = (parts.report_passed, parts.report_failed, parts.report_finished)
        assert all(part is not None for part in (*needed, parts.verifier_env))
    else:
        assert parts == VerifierParts()
    for after, _ in parts.verifier_functions:
        assert after in evidence.SHARED_FUNCTIONS


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_every_runner_parses_an_empty_log(runner: Runner) -> None:
    result = runner.parse(Run([], [], 0))
    assert isinstance(result, Result)
    assert result.tests == {}


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_every_runner_gives_a_selector_or_says_why_not(runner: Runner) -> None:
    try:
        selector = runner.selector("tests/a.test.js > suite > TestX")
    except DraftError:
        selector = "refused"
    assert selector


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_every_runner_is_known_by_its_name_and_setting(runner: Runner) -> None:
    assert runner_named(runner.name) is runner
    assert runner_named(runner.setting) is runner


@pytest.mark.parametrize("runner", RUNNERS, ids=lambda runner: runner.name)
def test_a_runner_detected_from_its_inferred_command(runner: Runner) -> None:
    if runner.compiled is not None:
        found = detect(runner.compiled.test_command)
        assert found is runner


@pytest.mark.parametrize(
    "command",
    [
        "pytest -x {tests}",
        "uv run python -m pytest",
        "npx jest --ci",
        "node node_modules/.bin/vitest run",
        "node --test a.test.js",
        "go test ./...",
        "cargo +nightly test -- --exact",
        "bun test a.test.ts",
        "make test",
    ],
)
def test_at_most_one_runner_matches_a_command(command: str) -> None:
    for argv in runners.commands(command):
        matching = [runner for runner in RUNNERS if runner.matches(argv[0], argv[1:])]
        assert len(matching) <= 1


def test_the_registry_gathers_every_runners_control_files() -> None:
    gathered = set(runners.control_files())
    for runner in RUNNERS:
        assert set(runner.control_files) | set(runner.compiled_tests) <= gathered
        assert set(runner.control_directories) <= set(runners.control_directories())


def test_the_registry_gathers_every_runners_tamper_names_once() -> None:
    gathered = runners.tamper_names()
    assert len(gathered) == len(set(gathered))
    for runner in RUNNERS:
        assert set(runner.tamper_names) <= set(gathered)
    # what the tamper scan takes from the registry: pytest's internals among them
    assert {"_pytest", "pluggy", "TerminalReporter", "runtest"} <= set(gathered)


def test_names_and_settings_are_unique() -> None:
    names = [runner.name for runner in RUNNERS]
    settings = [runner.setting for runner in RUNNERS]
    assert len(set(names)) == len(names)
    assert len(set(settings)) == len(settings)


def test_adding_a_runner_is_one_module_and_its_entry() -> None:
    """Every runner module of the package has its entry in the registry's table, named as the
    module, and its runner is built from that entry; nothing else is listed."""
    modules = sorted(
        path.stem
        for path in Path(runners.__file__).parent.glob("*.py")
        if not path.stem.startswith("_")
    )
    assert sorted(entry.name for entry in ENTRIES) == modules
    for entry in ENTRIES:
        assert import_module(f"selfbench.runners.{entry.name}").RUNNER.entry is entry
    found = [import_module(f"selfbench.runners.{name}").RUNNER for name in modules]
    assert sorted(found, key=lambda runner: runner.name) == sorted(
        RUNNERS, key=lambda runner: runner.name
    )


# The grep guard. A runner is named by a string literal holding one of these names as a word (a
# path component such as `/usr/local/cargo` is a toolchain's directory, not the runner), by a
# runner's test command as a whole literal, or by an identifier with one of these names
# as a part (`parse_pytest`, `PYTEST_PLUGIN`). go, node and bun alone are also SPEC §1 toolchain
# layers, and cargo also the Rust toolchain's build tool and home (`cargo fetch`, `CARGO_HOME`,
# `<home>/cargo`): for them only their test commands count. Docstrings and comments are prose.
_WORD_RE = re.compile(r"(?<![\w./-])(?:pytest|unittest|jest|vitest|mocha|node-test)(?![\w-])")
_WHOLE = frozenset({"cargo test", "go test", "bun test", "node --test"})
_IDENTIFIER_PARTS = frozenset({"pytest", "unittest", "jest", "vitest", "mocha"})

# Modules whose runner names are data or prose, not rules: files of the sample repositories the
# demo and the tests build (`import pytest` in a test file), and the author's prompt, whose
# examples of test commands and selectors are its text.
_DATA_AND_PROSE = frozenset({"_sample.py", "_sample_history.py", "demo.py", "_author_prompt.py"})


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.add(id(node.value))  # a module's, class's or function's, or an attribute's
    return found


def _identifiers(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.arg, ast.keyword)):
        yield node.arg or ""
    elif isinstance(node, ast.alias):
        yield node.asname or node.name


def _names_a_runner(text: str) -> bool:
    return text in _WHOLE or _WORD_RE.search(text) is not None


def runner_names(source: str) -> list[str]:
    """Where a module's code (not its docstrings or comments) names a runner."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in prose
            and _names_a_runner(node.value)
        ):
            found.append(f"{node.lineno}: {node.value[:60]!r}")
        found.extend(
            f"{getattr(node, 'lineno', 0)}: {name}"
            for name in _identifiers(node)
            if {part.lower() for part in re.split(r"[_.]", name)} & _IDENTIFIER_PARTS
        )
    return found


def _modules() -> Iterator[str]:
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        if not relative.startswith("runners/"):
            yield relative


@pytest.mark.parametrize("relative", list(_modules()))
def test_no_module_outside_runners_names_a_runner(relative: str) -> None:
    found = runner_names((SOURCE / relative).read_text(encoding="utf-8"))
    if relative in _DATA_AND_PROSE:
        return
    assert not found, f"{relative} names a runner outside selfbench.runners: {found}"


@pytest.mark.parametrize(
    ("source", "named"),
    [
        ('x = "pytest"\n', True),
        ("parse_jest = 1\n", True),
        ('"""A docstring about pytest."""\n', False),
        ("# a comment about cargo\nx = 1\n", False),
        ('x = "/usr/local/cargo/bin"\n', False),
        ('x = "go"\n', False),
        ('x = "cargo fetch"\n', False),
        ('x = "cargo test"\n', True),
        ("CARGO_HOME = 1\n", False),
        ('x = "go test"\n', True),
        ('x = f"{y} jest"\n', True),
    ],
)
def test_the_guard_reads_only_code(source: str, named: bool) -> None:
    assert bool(runner_names(source)) is named
