"""The verifier's judgement of a runner's report: the jq program of `bundle/evidence.py`, run."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from selfbench.bundle import evidence
from selfbench.bundle.evidence import EVIDENCE_QUERY
from selfbench.bundle.render_scripts import SAFE_GIT, render_test_sh
from selfbench.contract import TaskDefinition
from selfbench.runners import bun, cargo, go
from selfbench.runners import pytest as pytest_runner
from selfbench.runners._log import Run
from selfbench.runners.pytest import parse_pytest

pytestmark = pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed")

_START = {"event": "start", "rootdir": "/app"}
_FINISH = {"event": "finish", "exitstatus": 0}


def _test(nodeid: str, outcome: str = "passed", when: str = "call") -> dict[str, Any]:
    return {"event": "test", "nodeid": nodeid, "when": when, "outcome": outcome}


def _node(event: str, file: str, name: str, kind: str = "test") -> dict[str, Any]:
    return {"event": event, "file": file, "name": name, "type": kind}


def judge(
    runner: str,
    records: list[dict[str, Any]],
    wanted: list[dict[str, str]],
    canaries: tuple[str, ...] = (),
) -> str:
    report = "".join(json.dumps(record) + "\n" for record in records)
    return subprocess.run(
        ["jq", "-rs", "--argjson", "wanted", json.dumps(wanted),
         "--argjson", "canaries", json.dumps(list(canaries)), "--arg", "runner", runner,
         EVIDENCE_QUERY],
        input=report, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


MUL = {"path": "/app/tests/test_mul.py", "file": "tests/test_mul.py", "name": ""}
R = {"path": "/app/test/r.test.js", "file": "test/r.test.js", "name": ""}
CALC = {"path": "/app/calc", "file": "calc", "name": ""}
PKG = "example.com/calc/calc"


def _go(action: str, test: str | None = None, package: str = PKG) -> dict[str, Any]:
    return {"Action": action, "Package": package, **({"Test": test} if test else {})}


def _cargo(name: str, outcome: str = "ok") -> dict[str, Any]:
    return {"event": "test", "name": name, "outcome": outcome}


def _exit(status: int = 0) -> dict[str, Any]:
    return {"event": "exit", "status": status}


MUL_WORKS = {"path": "mul_works", "file": "", "name": "mul_works"}
BUN_R = {"path": "/app/test/r.test.ts", "file": "test/r.test.ts", "name": ""}
_BUN_FINISH = {"event": "finish"}


def _bun(file: str, name: str, outcome: str = "passed") -> dict[str, Any]:
    return {"event": "test", "outcome": outcome, "file": file, "name": name}


CASES = [
    ("all-seen", "pytest", [_START, _test("tests/test_mul.py::test_mul"), _FINISH], [MUL], ""),
    ("no-finish", "pytest", [_START, _test("tests/test_mul.py::test_mul")], [MUL],
     "the run did not finish"),
    ("bad-exit", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     {"event": "finish", "exitstatus": 5}], [MUL], "the run did not finish"),
    ("a-failure", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test("tests/test_mul.py::test_div", "failed"), _FINISH], [MUL],
     "a test failed: tests/test_mul.py::test_div"),
    ("setup-error", "pytest", [_START, _test("tests/test_mul.py::t", "failed", "setup"), _FINISH],
     [MUL], "a test failed: tests/test_mul.py::t"),
    ("collect-error", "pytest", [_START, {"event": "collect-error", "nodeid": "tests/x.py"},
     _FINISH], [MUL], "a test failed: tests/x.py"),
    ("collected-only", "pytest", [_START, _FINISH], [MUL],
     "no test seen passing for /app/tests/test_mul.py"),
    ("skipped-only", "pytest", [_START, _test("tests/test_mul.py::test_mul", "skipped"), _FINISH],
     [MUL], "no test seen passing for /app/tests/test_mul.py"),
    ("other-file", "pytest", [_START, _test("tests/test_core.py::test_add"), _FINISH], [MUL],
     "no test seen passing for /app/tests/test_mul.py"),
    ("named", "pytest", [_START, _test("tests/test_mul.py::test_mul[1]"), _FINISH],
     [{**MUL, "name": "test_mul"}], ""),
    ("other-name", "pytest", [_START, _test("tests/test_mul.py::test_mul"), _FINISH],
     [{**MUL, "name": "test_div"}],
     "no test seen passing for /app/tests/test_mul.py::test_div"),
    ("directory", "pytest", [_START, _test("tests/unit/test_a.py::t"), _FINISH],
     [{"path": "/app/tests", "file": "tests", "name": ""}], ""),
    ("after-cd", "pytest", [{"event": "start", "rootdir": "/app/pkg"},
     _test("tests/test_mul.py::test_mul"), _FINISH], [MUL], ""),
    ("suffix-only", "pytest", [_START, _test("tests/test_mul.py.bak/x.py::t"),
     _test("other/test_mul.py::t"), _FINISH], [MUL],
     "no test seen passing for /app/tests/test_mul.py"),
    ("node-seen", "node", [_node("test:pass", "/app/test/r.test.js", "reverse"),
     {"event": "finish"}], [R], ""),
    ("node-file-wrapper-only", "node", [_node("test:pass", "/app/test/r.test.js",
     "/app/test/r.test.js"), {"event": "finish"}], [R],
     "no test seen passing for /app/test/r.test.js"),
    ("node-suite-only", "node", [_node("test:pass", "/app/test/r.test.js", "s", "suite"),
     {"event": "finish"}], [R],
     "no test seen passing for /app/test/r.test.js"),
    ("node-failure", "node", [_node("test:pass", "/app/test/r.test.js", "a"),
     _node("test:fail", "/app/test/r.test.js", "b"), {"event": "finish"}],
     [R], "a test failed: b"),
    ("node-no-finish", "node", [_node("test:pass", "/app/test/r.test.js", "a")],
     [R], "the run did not finish"),
    ("go-seen", "go", [_go("run", "TestMul"), _go("pass", "TestMul"), _go("pass")],
     [CALC, {**CALC, "name": "TestMul"}], ""),
    ("go-skipped-counts", "go", [_go("skip", "TestMul"), _go("pass")],
     [{**CALC, "name": "TestMul"}], ""),
    ("go-subtest", "go", [_go("pass", "TestMul/zero"), _go("pass")],
     [{**CALC, "name": "TestMul"}], ""),
    ("go-named-not-seen", "go", [_go("pass", "TestMulZero"), _go("pass")],
     [CALC, {**CALC, "name": "TestMul"}], "no test seen passing for /app/calc::TestMul"),
    ("go-other-package", "go", [_go("pass", "TestMul", "example.com/calc/core"),
     _go("pass", package="example.com/calc/core")], [CALC],
     "no test seen passing for /app/calc"),
    ("go-no-package-result", "go", [_go("pass", "TestMul")], [CALC], "the run did not finish"),
    ("go-test-failed", "go", [_go("pass", "TestMul"), _go("fail", "TestMulZero"), _go("fail")],
     [CALC], f"a test failed: {PKG} TestMulZero"),
    ("go-build-failed", "go", [{"Action": "build-fail", "ImportPath": PKG}, _go("pass")],
     [CALC], f"a test failed: {PKG}"),
    ("go-recursive", "go", [_go("pass", "TestMul"), _go("pass")],
     [{"path": "/app/...", "file": "...", "name": ""}], ""),
    ("cargo-seen", "cargo", [_cargo("mul_works"), _exit()], [MUL_WORKS], ""),
    ("cargo-filter-is-a-substring", "cargo", [_cargo("tests::mul_works_big"), _exit()],
     [MUL_WORKS], ""),
    ("cargo-ignored-only", "cargo", [_cargo("mul_works", "ignored"), _exit()], [MUL_WORKS],
     "no test seen passing for mul_works"),
    ("cargo-binary-failed", "cargo", [_cargo("mul_works"), _exit(101)], [MUL_WORKS],
     "a test failed: a test binary exited 101"),
    ("cargo-test-failed", "cargo", [_cargo("mul_works"), _cargo("other", "failed"), _exit(101)],
     [MUL_WORKS], "a test failed: other"),
    ("cargo-no-binary", "cargo", [_cargo("mul_works")], [MUL_WORKS], "the run did not finish"),
    ("bun-seen", "bun", [_bun("test/r.test.ts", "r"), _BUN_FINISH], [BUN_R], ""),
    ("bun-seen-by-absolute-path", "bun", [_bun("/app/test/r.test.ts", "r"), _BUN_FINISH],
     [BUN_R], ""),
    ("bun-failure", "bun", [_bun("test/r.test.ts", "r"), _bun("test/r.test.ts", "s", "failed"),
     _BUN_FINISH], [BUN_R], "a test failed: test/r.test.ts s"),
    ("bun-skipped-only", "bun", [_bun("test/r.test.ts", "r", "skipped"), _BUN_FINISH], [BUN_R],
     "no test seen passing for /app/test/r.test.ts"),
    ("bun-longer-name", "bun", [_bun("test/r.test.tsx", "r"), _BUN_FINISH], [BUN_R],
     "no test seen passing for /app/test/r.test.ts"),
    ("bun-no-finish", "bun", [_bun("test/r.test.ts", "r")], [BUN_R], "the run did not finish"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("runner", "records", "wanted", "problem"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_the_report_is_judged(
    runner: str, records: list[dict[str, Any]], wanted: list[dict[str, str]], problem: str
) -> None:
    assert judge(runner, records, wanted) == problem


# --- the canaries: every one seen failing, none passing, nothing else failing ------------------

A, B = "qa1b2c3d4e5f", "zy9x8w7v6u5t"
"""The names drawn for a run's two canaries."""
_FORGED_PASSED = "forged: the canary test {} passed"
_FORGED_MISSING = "forged: every wanted test is seen passing, but the canary {} is not seen failing"
_EXIT_1 = {"event": "finish", "exitstatus": 1}
_PY_A, _PY_B = f"tests/test_mul.py::test_{A}", f"tests/test_mul.py::test_{B}"
_R_FILE = "/app/test/r.test.js"


def _jest(*tests: tuple[str, str]) -> dict[str, Any]:
    """jest's report of one file holding `tests` (full name, status)."""
    failed = any(status == "failed" for _, status in tests)
    results = [{"fullName": name, "status": status} for name, status in tests]
    return {
        "numTotalTests": len(tests),
        "testResults": [
            {"name": _R_FILE, "status": "failed" if failed else "passed",
             "assertionResults": results}
        ],
    }  # fmt: skip


def _cargo_in(name: str, outcome: str = "ok", binary: str = "mul") -> dict[str, Any]:
    return {**_cargo(name, outcome), "binary": binary}


def _exit_of(status: int, binary: str = "mul") -> dict[str, Any]:
    return {**_exit(status), "binary": binary}


CANARY_CASES = [
    ("pytest-only-canaries-fail", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test(_PY_A, "failed"), _test(_PY_B, "failed"), _EXIT_1], [MUL], ""),
    ("pytest-a-canary-passes", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test(_PY_A, "failed"), _test(_PY_B), _FINISH], [MUL], _FORGED_PASSED.format(_PY_B)),
    ("pytest-every-test-recorded-passing", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test(_PY_A), _test(_PY_B), _FINISH], [MUL], _FORGED_PASSED.format(_PY_A)),
    ("pytest-canaries-missing", "pytest", [_START, _test("tests/test_mul.py::test_mul"), _FINISH],
     [MUL], _FORGED_MISSING.format(A)),
    ("pytest-one-canary-missing", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test(_PY_A, "failed"), _EXIT_1], [MUL], _FORGED_MISSING.format(B)),
    ("pytest-canaries-missing-where-the-tests-failed", "pytest", [_START,
     {"event": "collect-error", "nodeid": "tests/test_mul.py"}, _EXIT_1], [MUL],
     "a test failed: tests/test_mul.py"),
    ("pytest-canary-skipped", "pytest", [_START, _test("tests/test_mul.py::test_mul"),
     _test(_PY_A, "failed"), _test(_PY_B, "skipped"), _EXIT_1], [MUL], _FORGED_MISSING.format(B)),
    ("pytest-another-failure-beside-the-canaries", "pytest", [_START,
     _test("tests/test_mul.py::test_mul"), _test("tests/test_mul.py::test_div", "failed"),
     _test(_PY_A, "failed"), _test(_PY_B, "failed"), _EXIT_1], [MUL],
     "a test failed: tests/test_mul.py::test_div"),
    ("node-only-canaries-fail", "node", [_node("test:pass", _R_FILE, "reverse"),
     _node("test:fail", _R_FILE, A), _node("test:fail", _R_FILE, B),
     _node("test:fail", _R_FILE, _R_FILE), {"event": "finish"}], [R], ""),
    ("node-a-canary-passes", "node", [_node("test:pass", _R_FILE, "reverse"),
     _node("test:pass", _R_FILE, A), _node("test:fail", _R_FILE, B), {"event": "finish"}], [R],
     _FORGED_PASSED.format(A)),
    ("node-file-failed-without-its-canaries", "node", [_node("test:pass", _R_FILE, "reverse"),
     _node("test:fail", _R_FILE, _R_FILE), {"event": "finish"}], [R], f"a test failed: {_R_FILE}"),
    ("jest-only-canaries-fail", "jest", [_jest(("reverse", "passed"), (A, "failed"),
     (B, "failed"))], [R], ""),
    ("jest-a-patched-matcher", "jest", [_jest(("reverse", "passed"), (A, "passed"),
     (B, "passed"))], [R], _FORGED_PASSED.format(A)),
    ("jest-another-failure", "jest", [_jest(("reverse", "passed"), ("other", "failed"),
     (A, "failed"), (B, "failed"))], [R], f"a test failed: {_R_FILE}"),
    ("vitest-canaries-missing", "vitest", [_jest(("reverse", "passed"))], [R],
     _FORGED_MISSING.format(A)),
    ("bun-only-canaries-fail", "bun", [_bun("test/r.test.ts", "r"),
     _bun("test/r.test.ts", A, "failed"), _bun("test/r.test.ts", B, "failed"), _BUN_FINISH],
     [BUN_R], ""),
    ("bun-whole-report-written", "bun", [_bun("test/r.test.ts", "r"), _BUN_FINISH], [BUN_R],
     _FORGED_MISSING.format(A)),
    ("go-only-canaries-fail", "go", [_go("pass", "TestMul"), _go("fail", f"Test_{A}"),
     _go("fail", f"Test_{B}"), _go("fail")], [CALC], ""),
    ("go-a-canary-passes", "go", [_go("pass", "TestMul"), _go("pass", f"Test_{A}"),
     _go("fail", f"Test_{B}"), _go("fail")], [CALC], _FORGED_PASSED.format(f"Test_{A}")),
    ("go-package-failed-without-its-canaries", "go", [_go("pass", "TestMul"), _go("fail")],
     [CALC], f"a test failed: {PKG}"),
    ("go-canaries-missing", "go", [_go("pass", "TestMul"), _go("pass")], [CALC],
     _FORGED_MISSING.format(A)),
    ("cargo-only-canaries-fail", "cargo", [_cargo_in("mul_works"), _cargo_in(A, "failed"),
     _cargo_in(B, "failed"), _exit_of(101)], [MUL_WORKS], ""),
    ("cargo-binary-crashed-beside-the-canaries", "cargo", [_cargo_in("mul_works"),
     _cargo_in(A, "failed"), _cargo_in(B, "failed"), _exit_of(134)], [MUL_WORKS],
     "a test failed: a test binary exited 134"),
    ("cargo-another-binary-failed", "cargo", [_cargo_in("mul_works"), _cargo_in(A, "failed"),
     _cargo_in(B, "failed"), _exit_of(101), _exit_of(101, "add")], [MUL_WORKS],
     "a test failed: a test binary exited 101"),
    ("cargo-a-canary-passes", "cargo", [_cargo_in("mul_works"), _cargo_in(A),
     _cargo_in(B, "failed"), _exit_of(101)], [MUL_WORKS], _FORGED_PASSED.format(A)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("runner", "records", "wanted", "problem"),
    [case[1:] for case in CANARY_CASES],
    ids=[case[0] for case in CANARY_CASES],
)
def test_every_canary_must_be_seen_failing(
    runner: str, records: list[dict[str, Any]], wanted: list[dict[str, str]], problem: str
) -> None:
    assert judge(runner, records, wanted, (A, B)) == problem


def test_without_canaries_pytest_must_exit_0() -> None:
    passing = [_START, _test("tests/test_mul.py::test_mul")]
    assert judge("pytest", [*passing, _FINISH], [MUL]) == ""
    assert judge("pytest", [*passing, _EXIT_1], [MUL]) == "the run did not finish"


# --- the programs that read go's and cargo's output, and what a verifier command asks for ------


def _jq(program: str, text: str, *options: str) -> str:
    return subprocess.run(
        ["jq", *options, program], input=text, capture_output=True, text=True, check=True
    ).stdout


GO_OUTPUT = (
    '{"Action":"start","Package":"p"}\n'
    '{"Action":"output","Package":"p","Test":"TestMul","Output":"=== RUN   TestMul\\n"}\n'
    '{"Action":"pass","Package":"p","Test":"TestMul"}\n'
    "go: a line of cmd/go's own\n"
    '{"Action":"output","Package":"p","Output":"ok  \\tp\\t0.01s\\n"}\n'
    "[1, 2]\n"
)


def test_go_output_shows_the_text_its_events_carry() -> None:
    shown = _jq(go.GO_TEXT, GO_OUTPUT, "-Rrj")
    assert shown == "=== RUN   TestMul\ngo: a line of cmd/go's own\nok  \tp\t0.01s\n[1, 2]\n"


def test_go_events_are_the_json_objects_with_an_action() -> None:
    events = [json.loads(line) for line in _jq(go.GO_EVENTS, GO_OUTPUT, "-Rc").splitlines()]
    assert [event["Action"] for event in events] == ["start", "output", "pass", "output"]


def test_each_test_function_of_a_selected_package_is_wanted() -> None:
    wanted = [
        {"path": "/app/calc", "file": "calc", "name": ""},
        {"path": "/app/lib/...", "file": "lib/...", "name": ""},
    ]
    found = "calc\tTestMul\ncalc/inner\tTestInner\nlib/a\tTestA\nlibx\tTestX\n.\tTestRoot\n"
    result = subprocess.run(
        ["jq", "-Rnc", "--argjson", "wanted", json.dumps(wanted), go.GO_TEST_NAMES],
        input=found, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    names = [(entry["file"], entry["name"]) for entry in json.loads(result)[2:]]
    assert names == [("calc", "TestMul"), ("lib/a", "TestA")]


@pytest.mark.parametrize(
    ("manifest", "control"),
    [
        ('[package]\nname = "x"\nversion = "1"  # a comment\n\n[dependencies]\nserde = "1"\n', ""),
        ('[package]\nname = "x"\nautotests = false\n', "[package]autotests=false\n"),
        ("[lib]\nharness = false\n", "[lib]\n[lib]harness=false\n"),
        ('[[test]]\nname = "mul"\npath = "f.rs"\n',
         '[[test]]\n[[test]]name="mul"\n[[test]]path="f.rs"\n'),
        ('[dependencies]\nc = { path = "../c" }\n', '[dependencies]c={path="../c"}\n'),
        ('[dependencies.c]\npath = "../c"\n', '[dependencies.c]path="../c"\n'),
        ('[patch.crates-io]\nc = "2"\n', '[patch.crates-io]\n[patch.crates-io]c="2"\n'),
        ("[profile.test]\noverflow-checks = false\n",
         "[profile.test]\n[profile.test]overflow-checks=false\n"),
    ],
)  # fmt: skip
def test_cargo_manifest_control_part(manifest: str, control: str) -> None:
    assert (
        subprocess.run(
            ["awk", cargo.CARGO_CONTROL],
            input=manifest,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == control
    )


def _header_command(test_command: str) -> str:
    raw = json.loads(Path("tests/golden/node-subdir/definition.json").read_text(encoding="utf-8"))
    definition = TaskDefinition.model_validate({**raw, "testCommand": test_command})
    script = render_test_sh(definition, tuple(definition.testPaths))
    prefix = "readonly fail_to_pass_command="
    [line] = [line for line in script.splitlines() if line.startswith(prefix)]
    return line


@pytest.mark.parametrize(
    ("command", "line"),
    [
        ("npx jest {tests} --ci",
         ("readonly fail_to_pass_command='npx jest '\"'\"'test/format.test.js'\"'\"' "
          "--reporters=default --reporters=\"$SELFBENCH_REPORTER\" --ci'")),
        ("npx vitest run {tests}",
         ("readonly fail_to_pass_command='npx vitest run '\"'\"'test/format.test.js'\"'\"' "
          "--reporter=default --reporter=\"$SELFBENCH_REPORTER\"'")),
        ("bun test {tests}",
         ("readonly fail_to_pass_command='bun test '\"'\"'test/format.test.js'\"'\"' "
          "--reporter=junit --reporter-outfile=/dev/fd/9'")),
        ("node --test {tests}",
         "readonly fail_to_pass_command='node --test '\"'\"'test/format.test.js'\"'\"''"),
    ],
)  # fmt: skip
def test_jest_vitest_and_bun_are_asked_for_their_report_after_the_selectors(
    command: str, line: str
) -> None:
    assert _header_command(command) == line


def _names_line(gold_patch: bytes) -> str:
    raw = json.loads(Path("tests/golden/go/definition.json").read_text(encoding="utf-8"))
    definition = TaskDefinition.model_validate(raw)
    script = render_test_sh(definition, tuple(definition.testPaths), gold_patch)
    [line] = [line for line in script.splitlines() if line.startswith("readonly verifier_names=")]
    return line


def test_an_agent_may_not_add_a_name_of_the_verifier_unless_the_gold_patch_adds_it() -> None:
    every = _names_line(b"")
    for name in ("'=== RUN'", "'SELFBENCH_EVIDENCE'", "'\\x16'", "'/environ'"):
        assert name in every
    gold = (
        b"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1,2 @@\n package x\n"
        b'+const header = "=== RUN   "\n-// the old line names test2json\n'
    )
    allowed = _names_line(gold)
    assert "'=== RUN'" not in allowed
    assert "'test2json'" in allowed  # a removed line does not count
    assert evidence.refused_names(gold) == tuple(
        name for name in evidence.VERIFIER_NAMES if name != "=== RUN"
    )


def test_the_names_check_reads_added_lines_and_new_text_files(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "kept.go").write_text('package x\n\nconst old = "=== RUN"\n', encoding="utf-8")
    (app / "changed.go").write_text("package x\n", encoding="utf-8")
    for argv in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
    ):
        subprocess.run(["git", *argv], cwd=app, check=True)
    (app / "kept.go").write_text('package x\n\nconst old = "=== RUN"\n// more\n', encoding="utf-8")
    (app / "changed.go").write_text('package x\n\nconst m = "\\x16"\n', encoding="utf-8")
    (app / "new.py").write_text("import os\nos.environ['SELFBENCH_EVIDENCE']\n", encoding="utf-8")
    (app / "blob.bin").write_bytes(b"\0\1test2json\0")
    (app / "link.txt").symlink_to("new.py")
    script = (
        f'app={shlex.quote(str(app))}\napp_git() {{ safe_git -C "$app" "$@"; }}\n'
        + SAFE_GIT
        + evidence.EVIDENCE_BODY
        + "\nverifier_names=('=== RUN' 'SELFBENCH_EVIDENCE' '\\x16' 'test2json')\n"
        + "agent_names_verifier\n"
    )
    found = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert sorted(found) == ["changed.go: \\x16", "new.py: SELFBENCH_EVIDENCE"]


# --- pytest's summary line, read by root beside the report ---------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "==================== 1 failed, 3 passed in 0.12s ====================",
        "3 passed, 1 warning in 0.01s",
        "== 2 passed, 1 xpassed, 1 xfailed in 61.00s (0:01:01) ==",
        "=== 1 passed, 2 errors, 1 deselected in 1.50s ===",
        "1 passed, 2 subtests passed in 0.02s",
        "========================= no tests ran in 0.01s =========================",
    ],
)
def test_the_summary_program_reads_the_line_as_the_log_parser_does(
    line: str, tmp_path: Path
) -> None:
    """The verifier's summary program and `parse_pytest` count a summary line alike: a report
    with the parser's passed and failed counts agrees with the line, one more pass does not."""
    counts = parse_pytest(Run([line], [], 0)).counts
    assert counts is not None
    passed, failed, _ = counts
    output = tmp_path / "output.log"
    output.write_text(f"tests/test_a.py ...\n{line}\n", encoding="utf-8")
    records = [{"event": "start", "rootdir": "/app", "summary": True}]
    records += [_test(f"tests/test_a.py::p{at}") for at in range(passed)]
    records += [_test(f"tests/test_a.py::f{at}", "failed") for at in range(failed)]
    for extra, expected in (([], ""), ([_test("tests/test_a.py::x")], "disagrees")):
        report = tmp_path / "report.jsonl"
        report.write_text("".join(json.dumps(r) + "\n" for r in [*records, *extra]))
        said = subprocess.run(
            ["python3", "-I", "-c", pytest_runner.SUMMARY_AGREES, str(report), str(output)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert (expected in said) if expected else said == ""


def test_a_record_the_reporter_did_not_write_is_named_before_the_unfinished_run() -> None:
    reason = "the report holds a record its reporter did not write (line 3)"
    forged = {"event": "forged", "reason": reason}
    records = [_START, _test("tests/test_mul.py::test_mul"), forged]
    assert judge("pytest", records, [MUL]) == f"a test failed: {reason}"


# --- bun's JUnit report, and each runner's summary line against its report -------------------

BUN_JUNIT = """\
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="4" assertions="3" failures="1" skipped="1" time="0.01">
  <testsuite name="test/a.test.ts" file="test/a.test.ts" tests="3" failures="1" skipped="1">
    <testsuite name="grp &lt;&amp;&quot;&apos;&gt;" file="test/a.test.ts" line="2" tests="1">
      <testcase name="ok one" classname="grp" time="0.00" file="test/a.test.ts" line="2" />
    </testsuite>
    <testcase name="bad" classname="" time="0.00" file="test/a.test.ts" line="3" assertions="1">
      <failure type="AssertionError" />
    </testcase>
    <testcase name="a &lt;b&gt; &amp;c" classname="" time="0" file="test/a.test.ts" line="4">
      <skipped message="TODO" />
    </testcase>
  </testsuite>
  <testsuite name="test/b.test.ts" file="test/b.test.ts" tests="1" failures="0" skipped="0">
    <testcase name="b ok" classname="" time="0.00" file="test/b.test.ts" line="2" />
  </testsuite>
</testsuites>
"""
"""bun 1.3's JUnit report of two files: a passing test in a describe block, a failing one, a
todo, and a passing one in the second file (the element-a-line layout bun writes)."""


def _bun_records(junit: str) -> list[dict[str, Any]]:
    lines = subprocess.run(
        ["awk", bun.BUN_JUNIT], input=junit, capture_output=True, text=True, check=True
    ).stdout
    return [json.loads(line) for line in _jq(bun.BUN_RECORDS, lines, "-Rc").splitlines()]


def test_bun_junit_report_becomes_one_record_per_test_case() -> None:
    assert _bun_records(BUN_JUNIT) == [
        _bun("test/a.test.ts", "ok one"),
        _bun("test/a.test.ts", "bad", "failed"),
        _bun("test/a.test.ts", "a <b> &c", "skipped"),
        _bun("test/b.test.ts", "b ok"),
        _BUN_FINISH,
    ]


def test_a_cut_bun_report_does_not_finish() -> None:
    cut = BUN_JUNIT[: BUN_JUNIT.index("  </testsuite>\n  <testsuite")]
    assert _BUN_FINISH not in _bun_records(cut)


def _cross_check(tmp_path: Path, runner: str, output: str, records: list[Any]) -> str:
    (tmp_path / "output").write_text(output, encoding="utf-8")
    (tmp_path / "report.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in records), encoding="utf-8"
    )
    script = (
        f"runner={runner}\n"
        + evidence.EVIDENCE_BODY
        + f"\ncross_check_report {shlex.quote(str(tmp_path / 'report.jsonl'))}"
        + f" {shlex.quote(str(tmp_path / 'output'))}\n"
    )
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()


def _jest_report(passed: int, failed: int) -> dict[str, Any]:
    tests = [{"fullName": f"p{at}", "status": "passed"} for at in range(passed)]
    tests += [{"fullName": f"f{at}", "status": "failed"} for at in range(failed)]
    return {"numTotalTests": passed + failed, "testResults": [{"assertionResults": tests}]}


_BUN_SUMMARY = "(pass) r [0.1ms]\n\n 2 pass\n 1 skip\n 0 fail\nRan 3 tests across 1 file.\n"
_CARGO_OUTPUT = (
    "     Running tests/mul.rs (target/debug/deps/mul-1)\n\nrunning 1 test\n"
    "test mul_works ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured;"
    " 0 filtered out; finished in 0.00s\n\n   Doc-tests calc\n\nrunning 3 tests\n"
    "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
)
_GO_RUN = [
    {"Action": "run", "Package": PKG, "Test": "TestMul"},
    {"Action": "output", "Package": PKG, "Test": "TestMul", "Output": "--- PASS: TestMul\n"},
    {"Action": "pass", "Package": PKG, "Test": "TestMul"},
    {"Action": "output", "Package": PKG, "Output": f"ok  \t{PKG}\t0.01s\n"},
    {"Action": "pass", "Package": PKG},
]
_GO_PRINTS_OK = {
    "Action": "output",
    "Package": PKG,
    "Test": "TestMul",
    "Output": "ok  \tother\t0.01s\n",
}
_NODE_TAP = (
    "TAP version 13\n# Subtest: r\nok 1 - r\n# Subtest: s\n    # Subtest: t\n"
    "    not ok 1 - t # TODO\n    1..1\nok 2 - s\n1..2\n# tests 2\n# suites 1\n# pass 1\n"
    "# fail 0\n# cancelled 0\n# skipped 0\n# todo 1\n# duration_ms 12.5\n"
)
_NODE_RECORDS = [
    _node("test:pass", "/app/test/r.test.js", "r"),
    {**_node("test:fail", "/app/test/r.test.js", "t"), "todo": True},
    _node("test:pass", "/app/test/r.test.js", "s", "suite"),
    {"event": "finish"},
]
_NODE_SPEC = "\u2714 r (0.5ms)\n\u2139 tests 1\n\u2139 pass 1\n\u2139 fail 0\n"
CROSS_CHECKS = [
    ("bun-agrees", "bun", _BUN_SUMMARY, [_bun("t", "r"), _bun("t", "s"), _bun("t", "k", "skipped")],
     ""),
    ("bun-fewer-passed", "bun", _BUN_SUMMARY, [_bun("t", "r")],
     "bun test's summary (2 pass, 0 fail) disagrees with its report (1 passed, 0 failed)"),
    ("bun-no-summary", "bun", "(pass) r\n", [_bun("t", "r")],
     "bun test printed no summary line"),
    ("bun-nul-in-a-name", "bun", "(pass) '\x00'\n" + _BUN_SUMMARY,
     [_bun("t", "r"), _bun("t", "s"), _bun("t", "k", "skipped")], ""),
    ("jest-agrees", "jest", "Tests:       1 failed, 2 passed, 3 total\n", [_jest_report(2, 1)],
     ""),
    ("jest-forged", "jest", "Tests:       1 failed, 1 total\n", [_jest_report(1, 0)],
     ("jest's summary line (Tests:       1 failed, 1 total) disagrees with its report"
      " (1 passed, 0 failed)")),
    ("vitest-agrees", "vitest", "\x1b[2m      Tests \x1b[22m 2 passed (2)\n",
     [_jest_report(2, 0)], ""),
    ("vitest-no-summary", "vitest", "", [_jest_report(2, 0)], "vitest printed no summary line"),
    # a test's name may hold a NUL (mlly's sanitizeFilePath): grep must still read the text
    ("vitest-nul-in-a-name", "vitest", " \u2713 sanitizes '\x00a_b'\n      Tests  2 passed (2)\n",
     [_jest_report(2, 0)], ""),
    ("jest-nul-in-a-name", "jest", "  \u2713 '\x00'\nTests:       2 passed, 2 total\n",
     [_jest_report(2, 0)], ""),
    ("vitest-expected-fail", "vitest", "      Tests  2 passed | 1 expected fail | 1 skipped (4)\n",
     [_jest_report(3, 0)], ""),
    ("vitest-padded", "vitest", "      Tests  1 passed | 1 expected fail (2)\n",
     [_jest_report(3, 0)],
     ("vitest's summary line (Tests  1 passed | 1 expected fail (2)) disagrees with its report"
      " (3 passed, 0 failed)")),
    ("go-agrees", "go", "".join(json.dumps(event) + "\n" for event in _GO_RUN), _GO_RUN, ""),
    ("go-printed-ok", "go",
     "".join(json.dumps(event) + "\n" for event in [_GO_PRINTS_OK, *_GO_RUN]), _GO_RUN,
     "go test's package lines (2 ok, 0 FAIL) disagree with its events (1 passed, 0 failed)"),
    ("node-agrees", "node", _NODE_TAP, _NODE_RECORDS, ""),
    ("node-spec-agrees", "node", _NODE_SPEC, [_NODE_RECORDS[0], _NODE_RECORDS[-1]], ""),
    ("node-forged-passes", "node", _NODE_TAP,
     [*_NODE_RECORDS, _node("test:pass", "/app/test/r.test.js", "x"), {"event": "finish"}],
     "node --test's summary (2 tests, 0 failed) disagrees with its report (3 tests, 0 failed)"),
    ("node-hidden-failure", "node", _NODE_TAP.replace("# fail 0", "# fail 1"), _NODE_RECORDS,
     "node --test's summary (2 tests, 1 failed) disagrees with its report (2 tests, 0 failed)"),
    ("node-indented-summary", "node", "  # tests 1\n  # fail 0\n", _NODE_RECORDS[:1],
     "node --test printed no summary line"),
    ("cargo-agrees", "cargo", _CARGO_OUTPUT, [_cargo("mul_works"), _exit()], ""),
    ("cargo-forged", "cargo", _CARGO_OUTPUT, [_cargo("mul_works"), _cargo("add_works"), _exit()],
     ("cargo test's result lines (1 passed, 0 failed) disagree with its report"
      " (2 passed, 0 failed)")),
    ("cargo-no-result", "cargo", "running 1 test\n", [_cargo("mul_works"), _exit()],
     "cargo test printed no test result line"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("runner", "output", "records", "problem"),
    [case[1:] for case in CROSS_CHECKS],
    ids=[case[0] for case in CROSS_CHECKS],
)
def test_the_summary_line_is_checked_against_the_report(
    tmp_path: Path, runner: str, output: str, records: list[Any], problem: str
) -> None:
    assert _cross_check(tmp_path, runner, output, records) == problem


@pytest.mark.skipif(os.geteuid() != 0, reason="the channel is made root's (CI runs as root)")
@pytest.mark.parametrize(
    ("runner", "owner"),
    [("bun", "daemon"), ("node", "daemon"), ("jest", "daemon"), ("vitest", "daemon"),
     ("cargo", "root"), ("pytest", "root")],
)  # fmt: skip
def test_the_report_channel_is_named_by_no_variable_and_sits_in_a_directory_of_roots(
    tmp_path: Path, runner: str, owner: str
) -> None:
    report = tmp_path / "report"
    report.mkdir()
    script = (
        f"set -u\nrunner={runner}\nverifier_user=daemon\nevidence_tools=/tools\n"
        + evidence.EVIDENCE_BODY
        + f"\nset_evidence_env {shlex.quote(str(report))}\n"
        + 'printf "%s\\n" "$report_channel" "$key_channel" "${evidence_env[@]}"\n'
    )
    channel, key, *environment = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert Path(channel).parent == report
    assert (report.stat().st_uid, report.stat().st_mode & 0o777) == (0, 0o700)
    assert Path(channel).owner() == owner
    assert Path(channel).stat().st_mode & 0o777 == 0o600
    if owner == "root" and runner != "cargo":  # pytest's reporter signs its records
        assert (Path(key).parent, Path(key).owner()) == (report, "root")
        assert Path(key).stat().st_mode & 0o777 == 0o400
    else:
        assert key == "/dev/null"
    assert not any(str(report) in value or "EVIDENCE" in value for value in environment)


_MUL_RUN = [_START, _test("tests/test_mul.py::test_mul"), _FINISH]
_MUL_FAILED = [_START, _test("tests/test_mul.py::test_mul", "failed"), _FINISH]
SIGNALS = [
    ("agree-pass", _MUL_RUN, 0, "", ""),
    ("agree-fail", _MUL_FAILED, 1, "a test failed: tests/test_mul.py::test_mul", ""),
    ("summary", _MUL_RUN, 0, "its summary disagrees",
     "the report and the runner's own output disagree: its summary disagrees"),
    ("exit", _MUL_RUN, 1, "",
     "the report shows every wanted test passing but the command exited 1"),
    ("exit-0", _MUL_FAILED, 0, "a test failed: tests/test_mul.py::test_mul",
     ("the command exited 0 but its report does not agree: a test failed:"
      " tests/test_mul.py::test_mul")),
    ("no-report", [], 0, "the runner wrote no report",
     "the command exited 0 but its report does not agree: the runner wrote no report"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("records", "status", "problem", "disagreement"),
    [case[1:] for case in SIGNALS],
    ids=[case[0] for case in SIGNALS],
)
def test_a_rerun_is_asked_for_only_where_the_report_and_the_signals_beside_it_disagree(
    tmp_path: Path, records: list[Any], status: int, problem: str, disagreement: str
) -> None:
    report = tmp_path / "records.jsonl"
    report.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    script = (
        "runner=pytest\n"
        + evidence.EVIDENCE_BODY
        + f"\nevidence_problem={shlex.quote(problem)}\n"
        + f"signals_disagree {shlex.quote(str(report))} {shlex.quote(json.dumps([MUL]))} {status}\n"
        + f"tests_failed {shlex.quote(str(report))}\n"
    )
    *said, failed = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert said == ([disagreement] if disagreement else [])
    assert failed == ("1" if records is _MUL_FAILED else "0")
