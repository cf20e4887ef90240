"""`selfbench.draft.coverage`: pass-to-pass chosen by which tests execute the gold's changed lines.

The line mapping, the V8 line reading and the choice are pure tables; the sandbox cases build
real repositories with a real merged change and run `observe` and `decide` on them: a changed
module exercised by one unchanged test file and not by another that sorts first (pytest under
the line trace, `node --test` under V8 coverage), and a test command that drops the environment, so
coverage cannot run and the draft says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from harbor_env import find_python312
from selfbench.artifacts.draft_record import pass_to_pass_basis
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.draft.coverage import (
    LINES,
    V8,
    CoverageRun,
    CoverageSeen,
    changed_base_lines,
    choose_pass_to_pass,
    executed_lines,
    read_coverage,
    surroundings,
)
from selfbench.draft.run import Decision, Observation, Plan, decide, observe
from selfbench.runners import V8_COVERAGE, CoverageParts, runner_named
from selfbench.runners.pytest import is_node_id
from test_draft_run import _commit_change

PYTEST_COVERAGE = runner_named("pytest").coverage  # type: ignore[union-attr]

SANDBOX = pytest.mark.sandbox
TIMEOUTS = {"setupSeconds": 300, "agentSeconds": 600, "testsSeconds": 120}
RESOURCES: dict[str, int | float] = {"cpus": 2, "memoryMb": 4096, "storageMb": 10240}


def _patch(path: str, *hunks: str) -> bytes:
    head = (
        f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
    )
    return (head + "".join(hunks)).encode()


# --- gold hunks to base lines ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("hunk", "lines"),
    [
        # a changed line: the removed base line, and its replacement goes before base line 5
        ("@@ -3,3 +3,3 @@\n a\n-b\n+B\n c\n", (4, 5)),
        # a removed line only
        ("@@ -10,3 +10,2 @@\n a\n-b\n c\n", (11,)),
        # lines added between base lines 5 and 6
        ("@@ -4,2 +4,4 @@\n a\n+x\n+y\n b\n", (4, 5)),
        # an insertion hunk with no base side: after base line 7, before 8
        ("@@ -7,0 +8,2 @@\n+x\n+y\n", (7, 8)),
        # added at the very top of the file: only line 1 follows
        ("@@ -0,0 +1 @@\n+x\n", (1,)),
        # added at the end, after a no-newline marker
        ("@@ -2,1 +2,2 @@\n last\n\\ No newline at end of file\n+x\n", (2, 3)),
        # two hunks, base coordinates each from its own header
        ("@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -20,2 +20,3 @@\n c\n+d\n e\n", (1, 2, 20, 21)),
        # an empty context line counts as context
        ("@@ -1,3 +1,3 @@\n a\n\n-c\n+C\n", (3, 4)),
    ],
)
def test_gold_hunks_map_to_base_lines(hunk: str, lines: tuple[int, ...]) -> None:
    assert changed_base_lines(_patch("pkg/mod.py", hunk)) == {"pkg/mod.py": lines}


def test_new_files_and_renames_map_to_their_base_paths() -> None:
    new = (
        b"diff --git a/n.py b/n.py\nnew file mode 100644\n--- /dev/null\n+++ b/n.py\n"
        b"@@ -0,0 +1 @@\n+x\n"
    )
    renamed = (
        b"diff --git a/old.py b/new.py\nsimilarity index 90%\n"
        b"rename from old.py\nrename to new.py\n"
        b"--- a/old.py\n+++ b/new.py\n@@ -5,1 +5,1 @@\n-a\n+b\n"
    )
    assert changed_base_lines(new + renamed) == {"old.py": (5, 6)}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [((10,), range(7, 14)), ((2,), range(1, 6)), ((1, 9), (*range(1, 5), *range(6, 13)))],
)
def test_surroundings_are_three_lines_either_side(
    lines: tuple[int, ...], expected: tuple[int, ...]
) -> None:
    assert surroundings(lines) == frozenset(expected)


# --- V8 ranges to lines ---------------------------------------------------------------------


JS = "const a = 1;\nfunction f(x) {\n  if (x) {\n    return 1;\n  }\n  return 2;\n}\nf(0);\n"


def _offset(text: str, needle: str) -> int:
    return text.index(needle)


def test_v8_lines_are_those_whose_innermost_range_ran() -> None:
    end = len(JS)
    ranges = [
        (0, end, 1),  # the script
        (_offset(JS, "function"), _offset(JS, "f(0)") - 1, 1),  # f, called once
        (_offset(JS, "{\n    return 1"), _offset(JS, "  return 2"), 0),  # the if's block: never
    ]
    assert executed_lines(JS, ranges) == {1, 2, 3, 6, 7, 8}


def test_an_uncalled_function_runs_only_its_declaration_line_s_start() -> None:
    ranges = [(0, len(JS), 1), (_offset(JS, "function"), _offset(JS, "f(0)") - 1, 0)]
    assert executed_lines(JS, ranges) == {1, 8}


def _v8_run(
    tmp_path: Path, source: str, ranges: list[tuple[int, int, int]], url: str = "src/a.js"
) -> CoverageSeen:
    """V8's report of one test file's run, as Node writes it (the script `url` under `/app`),
    read back against `JS`."""
    run = CoverageRun(V8_COVERAGE, {"src/a.js": surroundings([3])}, tmp_path, {}, {})
    functions = [{"functionName": "", "ranges": [
        {"startOffset": start, "endOffset": end, "count": count} for start, end, count in ranges
    ]}]  # fmt: skip
    report = {"result": [{"scriptId": "1", "url": f"file:///app/{url}", "functions": functions}]}
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "coverage-1-2-0.json").write_text(json.dumps(report), encoding="utf-8")
    return read_coverage(run, ["test/a.test.js"], {"src/a.js": source.encode()}, log="L")


def test_v8_reports_read_per_test_file(tmp_path: Path) -> None:
    seen = _v8_run(tmp_path, JS, [(0, len(JS), 1)])
    assert seen == CoverageSeen(V8, {"test/a.test.js": 6}, lines=6)  # lines 1-6, all run


def test_v8_reports_of_a_transformed_script_are_not_placed_on_lines(tmp_path: Path) -> None:
    seen = _v8_run(tmp_path, JS, [(0, len(JS) + 40, 1)])  # a transform's longer text
    assert seen.scores == {}
    assert seen.problem == (
        "V8 coverage placed none of the changed files' lines: they ran only as transformed "
        "scripts, or not as scripts of their own (log L)"
    )


def test_v8_reports_that_never_name_a_changed_file_are_no_evidence(tmp_path: Path) -> None:
    """jest runs modules through its own registry: V8 then reports only other scripts, and
    "no test executes the change" would be unfounded."""
    seen = _v8_run(tmp_path, JS, [(0, 10, 1)], url="node_modules/jest-runtime/build/index.js")
    assert seen.scores == {}
    assert seen.problem is not None
    assert seen.problem.startswith("V8 coverage placed none of the changed files' lines")


# --- the choice -------------------------------------------------------------------------------

A, B, N = "tests/test_a.py", "tests/test_b.py", "tests/test_n.py"
PASSING = [(f"{f}::{t}", f, f"{f}::{t}") for f, t in [(A, "t1"), (A, "t2"), (B, "t1"), (N, "t1")]]


@pytest.mark.parametrize(
    ("scores", "cap", "chosen", "basis"),
    [
        # covered first by score, then the changed files' rest; the neighbour only when covered
        (
            {f"{B}::t1": 2, f"{N}::t1": 5},
            20,
            (f"{N}::t1", f"{B}::t1", f"{A}::t1", f"{A}::t2"),
            "coverage",
        ),
        ({f"{A}::t2": 1}, 2, (f"{A}::t2", f"{A}::t1"), "coverage"),
        # ties by selector
        ({f"{B}::t1": 3, f"{A}::t2": 3}, 20, (f"{A}::t2", f"{B}::t1", f"{A}::t1"), "coverage"),
        # nothing covered: the changed files' tests, sorted; never the neighbour
        ({}, 20, (f"{A}::t1", f"{A}::t2", f"{B}::t1"), "changed test files"),
    ],
)
def test_pass_to_pass_ranked_by_coverage(
    scores: dict[str, int], cap: int, chosen: tuple[str, ...], basis: str
) -> None:
    seen = CoverageSeen(LINES, scores, lines=12)
    got, why = choose_pass_to_pass(PASSING, neighbours=frozenset({N}), coverage=seen, cap=cap)
    assert (got, why.basis, why.selected) == (chosen, basis, chosen)
    assert why.detail.startswith("the line trace at the base: ")
    assert "the 12 lines around the gold's changed lines" in why.detail


@pytest.mark.parametrize(
    ("seen", "detail"),
    [
        (None, "no coverage measure for this runner"),
        (CoverageSeen(""), "no coverage measure for this runner"),
        (
            CoverageSeen(V8, problem="V8 coverage recorded nothing (log /tmp/run/agent-4.log)"),
            "coverage could not run: V8 coverage recorded nothing",  # no path of this machine
        ),
    ],
)
def test_without_coverage_the_changed_test_files_then_the_neighbours_and_why(
    seen: CoverageSeen | None, detail: str
) -> None:
    got, why = choose_pass_to_pass(PASSING, neighbours=frozenset({N}), coverage=seen, cap=20)
    assert got == (f"{A}::t1", f"{A}::t2", f"{B}::t1", f"{N}::t1")
    assert why == PassToPassBasis(
        basis="neighbours",
        detail=(
            f"{detail}; the changed test files' passing tests, then 1 of unchanged test files "
            "beside them, sorted"
        ),
        selected=got,
    )
    # the changed files first: a cap they fill leaves no place for a neighbour
    got, why = choose_pass_to_pass(PASSING, neighbours=frozenset({N}), coverage=seen, cap=3)
    assert got == (f"{A}::t1", f"{A}::t2", f"{B}::t1")
    assert why == PassToPassBasis(
        basis="changed test files",
        detail=f"{detail}; the changed test files' passing tests, sorted",
        selected=got,
    )


def test_the_basis_reads_back_from_the_evidence() -> None:
    basis = PassToPassBasis(basis="coverage", detail="d", selected=("x",))
    assert pass_to_pass_basis({"passToPassBasis": basis.model_dump(mode="json")}) == basis
    assert pass_to_pass_basis({}).basis == "none"


# --- the line trace: the plugin on the project's Python -----------------------------------------

_TRACED_MODULE = """\
def sign(x):
    if x > 0:
        return 1
    return -1


def count(n):
    for _ in range(n):
        pass
    return n


def pair():
    yield 1
    yield 2
"""

_TRACED_TESTS = """\
import threading

from pkg.mod import count, pair, sign


def test_positive():
    assert sign(1) == 1


def test_negative():
    assert sign(-1) == -1


def test_in_a_thread():
    thread = threading.Thread(target=count, args=(3,))
    thread.start()
    thread.join()


def test_generator():
    assert list(pair()) == [1, 2]


def test_nothing_measured():
    assert True
"""


def _pythons() -> list[object]:
    """This Python (`sys.settrace` before 3.12) and a 3.12 (`sys.monitoring`) where one runs."""
    try:
        python312 = find_python312()
    except RuntimeError:
        python312 = ""
    skip = pytest.mark.skipif(not python312, reason="no Python 3.12 on PATH or in pyenv")
    return [
        pytest.param(sys.executable, id=f"python{sys.version_info[0]}.{sys.version_info[1]}"),
        pytest.param(python312, id="python3.12", marks=skip),
    ]


@pytest.mark.parametrize("rootdir_above", [False, True], ids=["rootdir-here", "rootdir-above"])
@pytest.mark.parametrize("python", _pythons())
def test_the_line_trace_records_each_test_s_lines_of_the_measured_files(
    tmp_path: Path, python: str, rootdir_above: bool
) -> None:
    """The plugin the coverage run loads, in a real pytest on the given Python: each test's
    lines of the measured module (a branch each way, a thread, a generator), none of a test
    that does not call it, read back as the draft reads them, each by the id the run prints
    (relative to the working directory, also where pytest's configuration sits above it)."""
    project, lib, data = tmp_path / "app", tmp_path / "lib", tmp_path / "data" / "0"
    for directory in (project / "pkg", project / "tests", lib, data):
        directory.mkdir(parents=True)
    if rootdir_above:
        (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "mod.py").write_text(_TRACED_MODULE)
    (project / "tests" / "test_mod.py").write_text(_TRACED_TESTS)
    assert PYTEST_COVERAGE is not None
    (lib / f"{PYTEST_COVERAGE.plugin_module}.py").write_text(PYTEST_COVERAGE.plugin)
    (lib / "include.json").write_text(json.dumps([str(project / "pkg" / "mod.py")]))
    # pytest itself from this venv (pure Python): the other Python needs nothing installed
    site = Path(pytest.__file__).parent.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(lib), str(project), str(site)]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "SELFBENCH_COVERAGE_DATA": str(data),
        "SELFBENCH_COVERAGE_INCLUDE": str(lib / "include.json"),
    }
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    argv += ["-p", PYTEST_COVERAGE.plugin_module, "tests"]
    result = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (data / "error.txt").exists(), (data / "error.txt").read_text()

    lines = {"pkg/mod.py": frozenset(range(1, 17))}
    run = CoverageRun(PYTEST_COVERAGE, lines, data.parent, {}, {})
    # the sandbox's paths are below /app: read as the draft does, with this project's prefix
    for record in data.glob("lines-*.json"):
        text = record.read_text().replace(str(project), "/app")
        record.write_text(text)
    seen = read_coverage(run, ["tests/test_mod.py"], {}, log="coverage.log")
    assert seen.problem is None
    assert dict(seen.scores) == {
        "tests/test_mod.py::test_positive": 2,  # lines 2, 3
        "tests/test_mod.py::test_negative": 2,  # lines 2, 4
        "tests/test_mod.py::test_in_a_thread": 3,  # lines 8, 9, 10
        "tests/test_mod.py::test_generator": 2,  # lines 14, 15
    }


@pytest.mark.parametrize(
    "record",
    [
        "[1, 2]",
        '{"t::a": [1]}',
        '{"t::a": {"/app/pkg/mod.py": "2"}}',
        '{"t::a": {"/app/pkg/mod.py": [true, 2.0, "3"]}}',
        '{"": {"/app/pkg/mod.py": [2]}}',
        "not json",
    ],
    ids=["a list", "lines not by file", "lines not a list", "not whole numbers", "no id", "junk"],
)
def test_a_line_record_not_of_its_shape_counts_nothing(tmp_path: Path, record: str) -> None:
    """The record is the tests' own writing: whatever it holds, only `{id: {file: [n]}}` counts."""
    assert PYTEST_COVERAGE is not None
    (tmp_path / "0").mkdir()
    (tmp_path / "0" / "lines-1.json").write_text(record)
    run = CoverageRun(PYTEST_COVERAGE, {"pkg/mod.py": frozenset({2})}, tmp_path, {}, {})
    seen = read_coverage(run, ["tests/test_mod.py"], {}, log="coverage.log")
    assert dict(seen.scores) == {}


# --- in the sandbox: Python -------------------------------------------------------------------

PY_SETUP = "python3 -m venv --system-site-packages --without-pip .venv"
PYTEST = ".venv/bin/python -m pytest -rA -p no:cacheprovider {tests}"
SHAPES = '''\
"""Shapes."""


def area(width, height):
    """The area of a rectangle."""
    if width < 0 or height < 0:
        raise ValueError("negative side")
    return width * height
'''
PERIMETER = '''

def perimeter(width, height):
    """The perimeter of a rectangle."""
    return 2 * (width + height)
'''
PY_BASE = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "calc/__init__.py": "",
    "calc/shapes.py": SHAPES,
    "calc/words.py": "def shout(text):\n    return text.upper() + '!'\n",
    # sorts first, never touches shapes.py
    "tests/test_aaa_words.py": "".join(
        f"from calc.words import shout\n\n\ndef test_shout_{n}():\n"
        "    assert shout('a') == 'A!'\n\n"
        for n in range(3)
    ),
    "tests/test_shapes.py": (
        "import pytest\n\nfrom calc.shapes import area\n\n\n"
        "@pytest.mark.parametrize('w', [1, 2])\ndef test_area(w):\n"
        "    assert area(w, 3) == 3 * w\n\n\n"
        "def test_negative():\n    with pytest.raises(ValueError):\n        area(-1, 1)\n"
    ),
}
PY_TESTS = {
    "tests/test_perimeter.py": (
        "from calc.shapes import perimeter\n\n\ndef test_perimeter():\n"
        "    assert perimeter(2, 3) == 10\n"
    )
}
PY_GOLD = {"calc/shapes.py": SHAPES + PERIMETER}
PY_NEIGHBOURS = ("tests/test_aaa_words.py", "tests/test_shapes.py")


def _python_observed(
    tmp_path: Path,
    *,
    test_command: str = PYTEST,
    coverage: CoverageParts | None = PYTEST_COVERAGE,
    base: Mapping[str, str] = PY_BASE,
    named_tests: Callable[[str], bool] | None = None,
) -> tuple[Observation, Decision, float]:
    repo, sha, test_patch, gold_patch = _commit_change(tmp_path, dict(base), PY_GOLD, PY_TESTS)
    files = (*PY_TESTS, *PY_NEIGHBOURS)
    plan = Plan(sha, ".", PY_SETUP, test_command, ("python",), files, TIMEOUTS, RESOURCES,
                frozenset(PY_NEIGHBOURS), coverage, named_tests)  # fmt: skip
    started = time.monotonic()
    observation = observe(
        repo, plan, test_patch=test_patch, gold_patch=gold_patch, logs=tmp_path / "logs"
    )
    seconds = time.monotonic() - started
    decision = decide(
        observation,
        difficulty="medium",
        selector_of=lambda name: name,
        by_file=False,
        neighbours=plan.neighbours,
    )
    return observation, decision, seconds


@SANDBOX
def test_pass_to_pass_comes_from_the_test_file_that_executes_the_change(tmp_path: Path) -> None:
    observation, decision, _ = _python_observed(tmp_path)
    assert observation.reason is None
    assert decision.reason is None
    assert decision.fail_to_pass == ("tests/test_perimeter.py::test_perimeter",)
    assert decision.pass_to_pass == (
        "tests/test_shapes.py::test_area[1]",
        "tests/test_shapes.py::test_area[2]",
        "tests/test_shapes.py::test_negative",
    )
    assert observation.coverage is not None
    scores = dict(observation.coverage.scores)
    # exact pytest node ids: one context per parametrization
    assert sorted(scores) == list(decision.pass_to_pass)
    assert observation.coverage.lines == 8  # base lines 5-12 around the addition after line 8
    assert decision.basis is not None
    assert decision.basis.basis == "coverage"
    assert decision.basis.selected == decision.pass_to_pass
    assert decision.basis.detail.startswith("the line trace at the base: 3 passing tests execute ")
    _later_gold_runs_leave_out(observation, "tests/test_aaa_words.py", PY_TESTS, PY_NEIGHBOURS)


def _later_gold_runs_leave_out(
    observation: Observation, unreached: str, changed: Mapping[str, str], neighbours: Sequence[str]
) -> None:
    """The gold runs after the coverage run run the changed files and the neighbour that
    guards the change, not the neighbour none of whose tests executes it (a `skip` marker
    instead: the decision reads the first gold run's outcomes for it)."""
    files = [*changed, *neighbours]
    for log in {sample.log for sample in observation.gold}:
        # the draft asks the runner's report for nothing: a report its per-file loop leaves
        # partial (node's holds the last file's run) sends no run to a fresh rerun
        assert "rerun" not in Path(log).read_text(), log
    later = [sample for sample in observation.gold if sample.name in {"gold-2", "gold-3"}]
    assert [sample.name for sample in later] == ["gold-2", "gold-3"]
    for sample in later:
        log = Path(sample.log).read_text()
        for index, file in enumerate(files):
            ran = f"selfbench-draft: begin {index} 1" in log
            skipped = f"selfbench-draft: skip {index} 1" in log
            assert (ran, skipped) == ((False, True) if file == unreached else (True, False)), file


@SANDBOX
def test_the_later_gold_runs_run_only_the_neighbour_s_tests_that_execute_the_change(
    tmp_path: Path,
) -> None:
    """With a runner that runs tests by name, the neighbour that guards the change runs its
    three guarding tests in the later gold runs, not its test that never executes the change
    (the first gold run's outcome stands for that one); the decision is the same."""
    unrelated = (
        "\n\nfrom calc.words import shout\n\n\ndef test_unrelated():\n    assert shout('b')\n"
    )
    base = {**PY_BASE, "tests/test_shapes.py": PY_BASE["tests/test_shapes.py"] + unrelated}
    observation, decision, _ = _python_observed(tmp_path, base=base, named_tests=is_node_id)
    assert (observation.reason, decision.reason) == (None, None)
    assert decision.pass_to_pass == (
        "tests/test_shapes.py::test_area[1]",
        "tests/test_shapes.py::test_area[2]",
        "tests/test_shapes.py::test_negative",
    )
    later = [sample for sample in observation.gold if sample.name in {"gold-2", "gold-3"}]
    assert [sample.name for sample in later] == ["gold-2", "gold-3"]
    for sample in later:
        log = Path(sample.log).read_text()
        assert "selfbench-draft: part 2 1" in log
        assert "PASSED tests/test_shapes.py::test_negative" in log
        assert "test_unrelated" not in log
        shapes = sample.files[2]
        assert shapes.carried_tests == frozenset({"tests/test_shapes.py::test_unrelated"})
        assert dict(shapes.outcomes.tests)["tests/test_shapes.py::test_unrelated"] == "passed"


@SANDBOX
def test_coverage_that_cannot_run_falls_back_to_the_neighbours_and_says_so(
    tmp_path: Path,
) -> None:
    """A test command that clears the environment: the plugin never loads, nothing is
    recorded; the neighbours' passing tests fill pass-to-pass after the changed files' (none
    pass here), so the medium tier keeps its candidate, and the basis says why (the quality
    verdict sends a `neighbours` basis to review)."""
    command = f"env -i PATH=/usr/local/bin:/usr/bin:/bin {PYTEST}"
    observation, decision, _ = _python_observed(tmp_path, test_command=command)
    assert observation.reason is None
    assert observation.coverage is not None
    problem = observation.coverage.problem
    assert problem is not None
    assert problem.startswith("the line trace recorded nothing (log ")
    assert decision.reason is None
    assert decision.pass_to_pass == tuple(sorted(decision.pass_to_pass))
    assert decision.basis == PassToPassBasis(
        basis="neighbours",
        detail=(
            "coverage could not run: the line trace recorded nothing; the changed test files' "
            "passing tests, then "
            f"{len(decision.pass_to_pass)} of unchanged test files beside them, sorted"
        ),
        selected=decision.pass_to_pass,
    )


# --- in the sandbox: node --test ----------------------------------------------------------------

NODE_HEAD = "const test = require('node:test');\nconst assert = require('node:assert');\n"
INDEX = (
    "function capitalize(s) {\n"
    "  if (!s) {\n"
    "    return s;\n"
    "  }\n"
    "  return s.charAt(0).toUpperCase() + s.slice(1);\n"
    "}\n"
    "\n"
    "module.exports = { capitalize };\n"
)
REVERSED = INDEX.replace(
    "\nmodule.exports = { capitalize };\n",
    "\nfunction reverse(s) {\n  return [...s].reverse().join('');\n}\n\n"
    "module.exports = { capitalize, reverse };\n",
)
NODE_BASE = {
    "package.json": '{\n  "name": "strutil",\n  "version": "1.0.0",\n  "private": true\n}\n',
    "src/index.js": INDEX,
    "src/words.js": "exports.shout = (s) => s.toUpperCase() + '!';\n",
    # sorts first, never loads src/index.js
    "test/aaa_words.test.js": (
        f"{NODE_HEAD}const {{ shout }} = require('../src/words.js');\n\n"
        "test('shout', () => assert.strictEqual(shout('a'), 'A!'));\n"
    ),
    "test/core.test.js": (
        f"{NODE_HEAD}const {{ capitalize }} = require('../src/index.js');\n\n"
        "test('capitalize', () => assert.strictEqual(capitalize('ab'), 'Ab'));\n"
    ),
}
NODE_TESTS = {
    "test/reverse.test.js": (
        f"{NODE_HEAD}const {{ reverse }} = require('../src/index.js');\n\n"
        "test('reverse', () => assert.strictEqual(reverse('abc'), 'cba'));\n"
    )
}
NODE_NEIGHBOURS = ("test/aaa_words.test.js", "test/core.test.js")


@SANDBOX
def test_node_pass_to_pass_comes_from_the_file_that_executes_the_change(tmp_path: Path) -> None:
    gold = {"src/index.js": REVERSED}
    repo, sha, test_patch, gold_patch = _commit_change(tmp_path, NODE_BASE, gold, NODE_TESTS)
    files = (*NODE_TESTS, *NODE_NEIGHBOURS)
    plan = Plan(sha, ".", "node --version", "node --test {tests}", ("node",), files, TIMEOUTS,
                RESOURCES, frozenset(NODE_NEIGHBOURS), V8_COVERAGE)  # fmt: skip
    observation = observe(
        repo, plan, test_patch=test_patch, gold_patch=gold_patch, logs=tmp_path / "logs"
    )
    decision = decide(
        observation,
        difficulty="medium",
        selector_of=lambda name: name,
        by_file=True,
        neighbours=plan.neighbours,
    )
    assert decision.reason is None
    assert decision.fail_to_pass == ("test/reverse.test.js",)
    assert decision.pass_to_pass == ("test/core.test.js",)
    assert observation.coverage is not None
    # base lines 4-12 around line 8 (replaced) and the insertion before it: capitalize('ab')
    # runs 5, 6 and 8 (not line 4, the end of the branch it skips); the new test file, failing
    # at the base, only loads the module (8); the other file never does
    assert dict(observation.coverage.scores) == {"test/core.test.js": 3, "test/reverse.test.js": 1}
    assert decision.basis is not None
    assert decision.basis.basis == "coverage"
    assert decision.basis.detail.startswith("V8 coverage at the base: 1 passing tests execute ")
    _later_gold_runs_leave_out(observation, "test/aaa_words.test.js", NODE_TESTS, NODE_NEIGHBOURS)


def test_neighbours_named_after_a_changed_module_come_first_then_those_beside(
    tmp_path: Path,
) -> None:
    from selfbench.draft.api import _neighbours  # noqa: PLC0415 - the plan's own rule

    files = {
        "src/pkg/wrap.py": "",
        "src/pkg/__init__.py": "",
        "tests/test_changed.py": "",
        "tests/test_aaa.py": "",
        "tests/test___init__.py": "",
        "tests/unit/test_wrap_width.py": "",
        "tests/unit/test_other.py": "",
        "tests/conftest.py": "",
    }
    repo, sha, _, _ = _commit_change(tmp_path, files, {"src/pkg/wrap.py": "x = 1\n"}, {})
    found = _neighbours(
        Path(repo), sha, ["tests/test_changed.py"], {"tests/test_changed.py"},
        ["src/pkg/wrap.py", "src/pkg/__init__.py"],
    )  # fmt: skip
    assert found == [
        "tests/unit/test_wrap_width.py",  # named after wrap.py (not after __init__.py)
        "tests/test___init__.py",
        "tests/test_aaa.py",
    ]


def test_a_test_file_the_test_patch_moves_away_is_no_neighbour() -> None:
    """A change that moves `dateutil/test/test_parser.py` to `tests/test_parser.py`: the old
    path exists at the base but not once the test patch applies, so it cannot run beside."""
    from selfbench.draft.api import test_patch_paths  # noqa: PLC0415 - the plan's own rule
    from selfbench.draft.split import SplitChange  # noqa: PLC0415

    moved = (
        b"diff --git a/pkg/test/test_parser.py b/tests/test_parser.py\n"
        b"similarity index 90%\n"
        b"rename from pkg/test/test_parser.py\n"
        b"rename to tests/test_parser.py\n"
        b"--- a/pkg/test/test_parser.py\n+++ b/tests/test_parser.py\n"
        b"@@ -1 +1 @@\n-from pkg.test import x\n+from tests import x\n"
    )
    split = SplitChange(moved, b"", ("tests/test_parser.py",), ("pkg/parser.py",), ())
    assert test_patch_paths(split) == {"pkg/test/test_parser.py", "tests/test_parser.py"}


def test_a_line_record_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    """The tests write the data directory: a record linked to a file elsewhere (one that would
    read as a record) is not read."""
    assert PYTEST_COVERAGE is not None
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"t::a": {"/app/pkg/mod.py": [2]}}')
    data = tmp_path / "data"
    (data / "0").mkdir(parents=True)
    (data / "0" / "lines-1.json").symlink_to(elsewhere)
    run = CoverageRun(PYTEST_COVERAGE, {"pkg/mod.py": frozenset({2})}, data, {}, {})
    seen = read_coverage(run, ["tests/test_mod.py"], {}, log="coverage.log")
    assert dict(seen.scores) == {}
    (data / "0" / "lines-2.json").write_text(elsewhere.read_text())  # the same, written there
    seen = read_coverage(run, ["tests/test_mod.py"], {}, log="coverage.log")
    assert dict(seen.scores) == {"t::a": 1}
