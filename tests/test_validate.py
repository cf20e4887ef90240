"""`selfbench validate --env local` end to end (SPEC §7): real projects, real runners, real sandbox.

Each case builds a real repository with a real merged change (tests/projects.py), compiles it,
and validates the bundle with its own scripts in the bubblewrap workspace: pytest from Debian's
python3-pytest for the Python project, Node's own test runner for the Node project.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from projects import Project, build
from selfbench import compiler
from selfbench.artifacts.compiled import locate_task
from selfbench.artifacts.report import REWARD_FIELDS, Reward, TaskReport
from selfbench.cli import main
from selfbench.compiler import compile_task
from selfbench.environments.local.disk import remove_workspace
from selfbench.environments.local.scoring import score_patch
from selfbench.errors import CompileError
from selfbench.progress import Reporter
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner

pytestmark = pytest.mark.sandbox

PYTEST = ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}"
PY_SETUP = "python3 -m venv --system-site-packages --without-pip .venv"

PY_BASE = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "calc/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
PY_GOLD: dict[str, str | Path | None] = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
}
PY_TEST_MUL = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def python_project(task_id: str, **changes: Any) -> Project:
    """The calc project: the change adds `mul`; its held-out test fails without it."""
    tests = changes.pop("tests", {"tests/test_mul.py": PY_TEST_MUL})
    definition = {
        "taskId": task_id,
        "setupCommand": PY_SETUP,
        "testCommand": PYTEST,
        "failToPass": sorted(tests),
        "passToPass": ["tests/test_core.py"],
        "toolchains": ["python"],
        **changes.pop("definition", {}),
    }
    return Project(
        base={**PY_BASE, **changes.pop("base", {})},
        gold={**PY_GOLD, **changes.pop("gold", {})},
        tests=tests,
        definition=definition,
    )


NODE_BASE = {
    "package.json": '{\n  "name": "strutil",\n  "version": "1.0.0",\n  "private": true\n}\n',
    "src/index.js": "exports.capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);\n",
    "test/core.test.js": (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        "const { capitalize } = require('../src/index.js');\n\n"
        "test('capitalize', () => assert.strictEqual(capitalize('ab'), 'Ab'));\n"
    ),
}
NODE_GOLD: dict[str, str | Path | None] = {
    "src/index.js": (
        "exports.capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);\n"
        "exports.reverse = (s) => [...s].reverse().join('');\n"
    )
}
NODE_TEST = (
    "const test = require('node:test');\nconst assert = require('node:assert');\n"
    "const { reverse } = require('../src/index.js');\n\n"
    "test('reverse', () => assert.strictEqual(reverse('abc'), 'cba'));\n"
)


def node_project(task_id: str, tests: dict[str, str] | None = None) -> Project:
    """The strutil project: the change adds `reverse`; `node --test` runs the held-out test."""
    tests = tests or {"test/reverse.test.js": NODE_TEST}
    return Project(
        base=NODE_BASE,
        gold=NODE_GOLD,
        tests=tests,
        definition={
            "taskId": task_id,
            "setupCommand": "node --version",
            "testCommand": "node --test {tests}",
            "failToPass": sorted(tests),
            "passToPass": ["test/core.test.js"],
            "toolchains": ["node"],
        },
    )


def run(project: Project, tmp_path: Path, **options: Any) -> TaskReport:
    out = build(project, tmp_path / "build")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs", **options)))
    return report


# --- the verdicts -------------------------------------------------------------------------------


def _two_selectors(task_id: str) -> Project:
    second = PY_TEST_MUL.replace("test_mul(", "test_mul_negative(").replace(
        "(2, 3) == 6", "(-2, 3) == -6"
    )
    return python_project(
        task_id, tests={"tests/test_mul.py": PY_TEST_MUL, "tests/test_neg.py": second}
    )


@pytest.mark.parametrize(
    "make",
    [python_project, node_project, _two_selectors],
    ids=["pytest", "node-test", "pytest-two-selectors"],
)
def test_a_real_change_is_accepted(make: Any, tmp_path: Path) -> None:
    report = run(make("real-change"), tmp_path)
    assert report.reason is None
    assert report.accepted
    nop, oracle = report.nop.reward, report.oracle.reward
    assert nop is not None
    assert oracle is not None
    assert (nop.fail_to_pass, nop.pass_to_pass, nop.patch_applied) == (0, 1, 1)
    assert nop.fail_to_pass_exit_code != 0
    assert (oracle.reward, oracle.deterministic) == (1, 1)
    ran = {check.name: (check.ran, check.passed) for check in report.checks}
    several = len(make("real-change").definition["failToPass"]) > 1
    assert ran == {
        "per selector at the base": (several, several),
        "per selector with the gold patch": (several, several),
        "no flaky test": (True, True),
        "independent rerun": (True, True),
        "suite ran": (True, True),
    }
    assert len(report.reruns) == 1
    assert report.oracle.counts["pass-to-pass"] == {"passed": 1, "failed": 0, "skipped": 0}
    assert Path(report.oracle.log).is_file()


@pytest.mark.parametrize("overlays", [True, False], ids=["overlays", "copies"])
def test_each_run_sees_the_prepared_tree_as_an_overlay_or_as_a_copy_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlays: bool
) -> None:
    """Where this machine cannot mount overlays (`environments/local/overlay.py`), every phase
    copies its trees as before, to the same verdict."""
    from selfbench.environments.local import phases, sandbox  # noqa: PLC0415 - patched below

    if not overlays:
        for module in (phases, sandbox):
            monkeypatch.setattr(module, "supported", lambda *_: False)
    report = run(python_project("overlay-or-copy"), tmp_path)
    assert report.accepted, report.reason
    rewards = [run.reward for run in (report.nop, report.oracle, *report.reruns)]
    assert [reward.reward if reward else None for reward in rewards] == [0, 1, 1]


def test_the_cli_prints_json_reports_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("cli-task"), tmp_path / "build")
    code = main(["validate", str(out), "--json", "--logs", str(tmp_path / "logs")])
    reports = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [item["taskId"] for item in reports] == ["cli-task"]
    assert reports[0]["accepted"] is True
    assert set(reports[0]["nop"]) >= {"reward", "fail_to_pass", "pass_to_pass", "log"}
    assert reports[0]["oracle"]["reward"] == 1


def test_a_flaky_test_is_caught_by_the_determinism_rerun(tmp_path: Path) -> None:
    flaky = (
        "import os\n\nfrom calc import mul\n\n\ndef test_mul():\n"
        "    marker = '/tmp/selfbench-flaky-ran'\n"
        "    first = not os.path.exists(marker)\n"
        "    open(marker, 'w').close()\n"
        "    assert mul(2, 3) == 6 and first\n"
    )
    report = run(python_project("flaky", tests={"tests/test_mul.py": flaky}), tmp_path)
    assert not report.accepted
    assert report.reason == "oracle: fail-to-pass failed on the repeat run (not deterministic)"


FLAKY = """\
from pathlib import Path


def test_flaky():
    # Passes or fails with where it runs: the rerun's tree (a copy, or an overlay's upper
    # directory) is a host directory named for the rerun, as a test reading the clock or a
    # shared counter would differ from one run to the next.
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    [app] = [line for line in mounts if line.split()[4] == "/app"]
    assert "rerun" not in app
"""


def test_a_test_that_changes_outcome_across_runs_is_named(tmp_path: Path) -> None:
    project = python_project("flaky-regression", base={"tests/test_flaky.py": FLAKY})
    project.definition["passToPass"] = ["tests/test_core.py", "tests/test_flaky.py"]
    report = run(project, tmp_path)
    assert not report.accepted
    assert report.reason == "flaky: tests/test_flaky.py::test_flaky passed 2 of 3 runs"
    assert [rerun.reward.reward for rerun in report.reruns if rerun.reward] == [0]


def test_more_reruns_run_from_fresh_copies_and_fewer_than_two_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = run(python_project("four-runs"), tmp_path, reruns=4)
    assert report.accepted
    assert [Path(rerun.log).name for rerun in report.reruns] == ["rerun.log", "rerun-2.log"]
    out = build(python_project("one-run"), tmp_path / "one")
    assert main(["validate", str(out), "--reruns", "1"]) == 2
    expected = "error: --reruns must be at least 2 (the verifier runs fail-to-pass twice)\n"
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize(
    "selectors",
    [
        ["tests/test_mul.py::test_missing"],
        ["tests/test_mul.py::test_mul", "tests/test_mul.py::test_missing"],
    ],
    ids=["alone", "beside-another"],
)
def test_a_selector_naming_no_test_is_named(tmp_path: Path, selectors: list[str]) -> None:
    project = python_project("missing", definition={"failToPass": selectors})
    report = run(project, tmp_path)
    assert not report.accepted
    assert report.reason == "oracle: tests/test_mul.py::test_missing: no such test"


ALREADY_PASSES = "from calc import add\n\n\ndef test_old():\n    assert add(2, 2) == 4\n"


def test_a_selector_that_already_passes_is_caught_per_selector(tmp_path: Path) -> None:
    tests = {"tests/test_mul.py": PY_TEST_MUL, "tests/test_old.py": ALREADY_PASSES}
    project = python_project("hidden-pass", tests=tests)
    report = run(project, tmp_path)
    assert not report.accepted
    assert report.reason == "nop: selector tests/test_old.py already passes without the solution"


def test_parity_misses_the_selector_that_already_passes(tmp_path: Path) -> None:
    tests = {"tests/test_mul.py": PY_TEST_MUL, "tests/test_old.py": ALREADY_PASSES}
    report = run(python_project("hidden-pass", tests=tests), tmp_path, parity=True)
    assert report.accepted
    assert report.checks == ()


def test_a_selector_matching_no_test_is_caught(tmp_path: Path) -> None:
    empty = "// the tests for this module are still to be written\n"
    tests = {"test/reverse.test.js": NODE_TEST, "test/empty.test.js": empty}
    report = run(node_project("no-test", tests), tmp_path)
    assert not report.accepted
    assert report.reason is not None
    # The verifier itself finds no test of test/empty.test.js seen passing in node's own report.
    assert report.reason == "oracle: fail-to-pass failed with the gold patch"
    assert "no test seen passing for /app/test/empty.test.js" in Path(report.oracle.log).read_text()
    assert not run(node_project("no-test", tests), tmp_path / "parity", parity=True).accepted


def test_a_pass_to_pass_selector_that_runs_no_test_is_caught(tmp_path: Path) -> None:
    empty = "// the regression tests for this module are still to be written\n"
    project = node_project("empty-regression")
    project.base["test/legacy.test.js"] = empty
    project.definition["passToPass"] = ["test/legacy.test.js"]
    report = run(project, tmp_path)
    assert not report.accepted
    assert report.reason is not None
    # The verifier itself finds no test of test/legacy.test.js seen passing, at the base and
    # with the gold patch alike.
    assert report.reason == (
        "nop and oracle: pass-to-pass failed without the solution and with the gold patch "
        "(the tests fail here whatever the change: see either log)"
    )
    assert not run(project, tmp_path / "parity", parity=True).accepted


INSTALL = """\
import pathlib
import sysconfig

site = pathlib.Path(sysconfig.get_paths()["purelib"])
for name in pathlib.Path("requirements.txt").read_text().split():
    (site / f"{name}.py").write_text(f"NAME = {name!r}\\n")
"""


def test_a_gold_patch_that_changes_a_manifest_gets_its_dependencies(tmp_path: Path) -> None:
    project = python_project(
        "manifest",
        base={"requirements.txt": "leftpadlib\n", "tools/install.py": INSTALL},
        gold={
            "requirements.txt": "leftpadlib\nshoutlib\n",
            "calc/__init__.py": (
                "import shoutlib\n\n\ndef add(a, b):\n    return a + b\n\n\n"
                "def mul(a, b):\n    return a * b\n"
            ),
        },
        definition={"setupCommand": f"{PY_SETUP} && .venv/bin/python tools/install.py"},
    )
    out = build(project, tmp_path / "build")
    assert (out / "harbor-task" / "tests" / "dependency-setup.patch").is_file()
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.reason is None
    assert report.accepted


def test_the_dependency_setup_keeps_a_venv_that_gitignore_does_not_list(tmp_path: Path) -> None:
    # Only what the dependency patch changed goes back to the base; `git clean -fd` here would
    # delete the unignored .venv, and every test would fail with `.venv/bin/python: No such file`.
    project = python_project(
        "unignored-venv",
        base={
            ".gitignore": "__pycache__/\n",
            "requirements.txt": "leftpadlib\n",
            "tools/install.py": INSTALL,
        },
        gold={
            "requirements.txt": "leftpadlib\nshoutlib\n",
            "calc/__init__.py": (
                "import shoutlib\n\n\ndef add(a, b):\n    return a + b\n\n\n"
                "def mul(a, b):\n    return a * b\n"
            ),
        },
        definition={
            "setupCommand": (
                f"{PY_SETUP} && rm -f .venv/.gitignore && .venv/bin/python tools/install.py"
            )
        },
    )
    out = build(project, tmp_path / "build")
    assert (out / "harbor-task" / "tests" / "dependency-setup.patch").is_file()
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.reason is None
    assert report.accepted


NODE_INSTALL = """\
const fs = require('node:fs');
const { dependencies } = JSON.parse(fs.readFileSync('package.json', 'utf8'));
for (const name of Object.keys(dependencies)) {
  fs.mkdirSync(`node_modules/${name}`, { recursive: true });
  fs.writeFileSync(`node_modules/${name}/index.js`, `exports.name = '${name}';\\n`);
}
"""


def test_the_dependency_setup_keeps_node_modules_and_restores_the_manifest(tmp_path: Path) -> None:
    manifest = '{\n  "name": "strutil",\n  "private": true,\n  "dependencies": {%s}\n}\n'
    project = node_project("unignored-node-modules")
    project = replace(project, base=dict(project.base), gold=dict(project.gold))  # not NODE_*'s
    project.base["package.json"] = manifest % '"padlib": "1"'
    project.base["tools/install.js"] = NODE_INSTALL
    project.gold["package.json"] = manifest % '"padlib": "1", "shoutlib": "1"'
    project.gold["src/index.js"] = "require('shoutlib');\n" + str(NODE_GOLD["src/index.js"])
    project.gold["packages/extra/package.json"] = manifest % ""  # added: deleted again
    project.definition["setupCommand"] = "node tools/install.js"
    out = build(project, tmp_path / "build")
    assert (out / "harbor-task" / "tests" / "dependency-setup.patch").is_file()
    # the oracle's gold patch applies in the verifier's tree only if package.json is restored
    # and packages/extra/package.json deleted
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    assert report.reason is None
    assert report.accepted


def test_a_task_whose_tests_need_the_network_is_reported_not_hung(tmp_path: Path) -> None:
    online = (
        "import socket\n\nfrom calc import mul\n\n\ndef test_mul():\n"
        "    socket.create_connection(('example.com', 80), timeout=5).close()\n"
        "    assert mul(2, 3) == 6\n"
    )
    report = run(python_project("online", tests={"tests/test_mul.py": online}), tmp_path)
    assert not report.accepted
    assert report.reason is not None
    assert report.reason.startswith("oracle: fail-to-pass failed with the gold patch; ")
    assert "the tests needed the network" in report.reason


def test_a_failing_setup_command_is_the_reason(tmp_path: Path) -> None:
    project = python_project("bad-setup", definition={"setupCommand": "exit 3"})
    report = run(project, tmp_path)
    assert not report.accepted
    assert report.reason is not None
    assert report.reason.startswith("setup: setupCommand failed (exit 3; log ")


# --- agent patches --------------------------------------------------------------------------


def _agent_patch(out: Path, path: str, text: str) -> bytes:
    """A patch that rewrites `path` of the base snapshot to `text` (as `git diff` writes it)."""
    from projects import git  # noqa: PLC0415

    repo = out.parent.parent / "repo"
    (repo / path).write_text(text, encoding="utf-8")
    patch = git(repo, "diff", "--binary", "--", path).encode()
    git(repo, "checkout", "-q", "--", path)
    return patch


def test_an_agent_patch_that_edits_a_held_out_test_is_neutralised(tmp_path: Path) -> None:
    out = build(python_project("cheat"), tmp_path / "build")
    repo = out.parent.parent / "repo"
    (repo / "tests" / "test_mul.py").write_text("def test_mul():\n    assert True\n")
    from projects import git  # noqa: PLC0415

    git(repo, "add", "-N", "tests/test_mul.py")
    cheat = git(repo, "diff", "--binary").encode()
    options = LocalOptions(logs=tmp_path / "logs")
    report = score_patch(locate_task(out), cheat, options=options)
    assert report.reward is not None
    assert report.reward.patch_applied == 1
    assert report.reward.fail_to_pass == 0
    assert report.reward.reward == 0
    honest = _agent_patch(out, "calc/__init__.py", str(PY_GOLD["calc/__init__.py"]))
    assert score_patch(locate_task(out), honest, options=options).reward.reward == 1  # type: ignore[union-attr]


def test_no_agent_patch_scores_0(tmp_path: Path) -> None:
    out = build(python_project("no-patch"), tmp_path / "build")
    report = score_patch(locate_task(out), None, options=LocalOptions(logs=tmp_path / "logs"))
    assert report.reward is not None
    assert (report.reward.patch_applied, report.reward.reward) == (0, 0)


# --- jobs ------------------------------------------------------------------------------------


class Verdicts(Reporter):
    """The candidates a reporter is told finished, in the order told."""

    def __init__(self) -> None:
        super().__init__()
        self.accepted: list[str] = []
        self.rejected: list[tuple[str, str | None]] = []

    def candidate_accepted(self, name: str, *, tier: str = "") -> None:
        self.accepted.append(name)

    def candidate_rejected(self, name: str, reason: str | None, *, tier: str = "") -> None:
        self.rejected.append((name, reason))


def test_several_tasks_in_parallel_keep_their_order(tmp_path: Path) -> None:
    outs = [
        build(python_project("first"), tmp_path / "a"),
        build(node_project("second"), tmp_path / "b"),
    ]
    told = Verdicts()
    runner = LocalRunner(LocalOptions(logs=tmp_path / "logs"))
    reports = validate(outs, runner=runner, jobs=2, reporter=told)
    assert [report.task_id for report in reports] == ["first", "second"]
    assert sorted(told.accepted) == ["first", "second"]
    assert all(report.accepted for report in reports)


# --- repair, refresh, validate again ----------------------------------------------------------


def test_repair_then_refresh_then_validate_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rejected task is repaired (definition and a held-out test), refreshed, then accepted."""
    from projects import git  # noqa: PLC0415

    wrong = PY_TEST_MUL.replace("== 6", "== 5")
    tests = {"tests/test_mul.py": wrong, "tests/test_old.py": ALREADY_PASSES}
    out = build(python_project("repaired", tests=tests), tmp_path / "build")
    logs = str(tmp_path / "logs")
    assert main(["validate", str(out), "--logs", logs]) == 1
    assert (
        "repaired: rejected: oracle: fail-to-pass failed with the gold patch"
        in capsys.readouterr().err
    )

    repo = out.parent.parent / "repo"
    (repo / "tests").mkdir(exist_ok=True)
    for name, text in {
        "tests/test_mul.py": PY_TEST_MUL,
        "tests/test_old.py": ALREADY_PASSES,
    }.items():
        (repo / name).write_text(text)
    git(repo, "add", "-N", "tests")
    new_patch = tmp_path / "test.patch"
    new_patch.write_text(
        git(repo, "diff", "--binary", "--", "tests/test_mul.py", "tests/test_old.py")
    )
    original = out / "definition.json"
    repaired = tmp_path / "repaired.json"
    definition = json.loads(original.read_text())
    definition["failToPass"] = ["tests/test_mul.py"]
    definition["passToPass"] = ["tests/test_core.py", "tests/test_old.py"]
    repaired.write_text(json.dumps(definition, indent=2))
    bundle = out / "harbor-task"
    check = ["repair-check", str(original), str(repaired), "--test-patch"]
    check += [str(bundle / "tests" / "test.patch"), "--changed", "tests/test_mul.py"]
    assert main(check) == 0

    (bundle / "tests" / "test.patch").write_bytes(new_patch.read_bytes())
    assert main(["refresh", str(bundle), "--definition", str(repaired)]) == 0
    original.write_bytes(repaired.read_bytes())
    capsys.readouterr()
    assert main(["validate", str(out), "--json", "--logs", logs]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["accepted"] is True


def test_a_definition_that_is_not_the_bundles_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("stale"), tmp_path / "build")
    definition = json.loads((out / "definition.json").read_text())
    definition["passToPass"] = []
    (out / "definition.json").write_text(json.dumps(definition))
    assert main(["validate", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ")
    assert "not the definition bundle stale was compiled from" in error


# --- refusals ----------------------------------------------------------------------------------


def test_the_local_environment_refuses_to_run_without_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("unprivileged"), tmp_path / "build")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["validate", str(out)]) == 2
    assert capsys.readouterr().err == (
        "error: the local environment needs root to create its workspace users; "
        "run as root (or use --env harbor)\n"
    )


def test_the_harbor_environment_names_a_missing_harbor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("no-harbor"), tmp_path / "build")
    missing = tmp_path / "bin" / "harbor"
    command = ["validate", str(out), "--env", "harbor", "--harbor", str(missing)]
    assert main([*command, "--jobs-dir", str(tmp_path / "jobs")]) == 2
    error = capsys.readouterr().err
    assert error == f"error: cannot run harbor: {missing}: No such file or directory\n"


def test_a_path_that_is_not_a_bundle_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: not a bundle (no task.toml) or a collect directory\n"
    )


# --- the Beyond checks' verdicts, from recorded runs ------------------------------------------


NO_REWARD = "oracle rerun from a fresh copy: rerun: the verifier wrote no reward.json (log {log})"


def _reward(**fields: int) -> Reward:
    values = {name: 1 for name in REWARD_FIELDS if not name.endswith("exit_code")}
    values |= {"forged": 0, "fail_to_pass_exit_code": 0, "fail_to_pass_repeat_exit_code": 0}
    values |= {"pass_to_pass_exit_code": 0, **fields}
    return Reward.model_validate(values)


@pytest.mark.parametrize(
    ("rerun", "passed", "detail"),
    [
        (_reward(), True, ""),
        (
            _reward(reward=0, deterministic=0, fail_to_pass_repeat_exit_code=1),
            False,
            "oracle: the rerun from a fresh copy did not score 1 (not deterministic; log {log})",
        ),
        (None, False, NO_REWARD),
    ],
    ids=["scores-again", "fails-again", "no-reward"],
)  # fmt: skip
def test_the_independent_rerun_check(
    tmp_path: Path, rerun: Reward | None, passed: bool, detail: str
) -> None:
    out = build(python_project("rerun-check"), tmp_path / "build")
    from selfbench.environments.local.sandbox import PhaseResult, Sandbox, Users  # noqa: PLC0415
    from selfbench.environments.local.verifier import VerifierRun  # noqa: PLC0415
    from selfbench.validate.local import _Validation  # noqa: PLC0415

    log = tmp_path / "run.log"
    log.write_text("")
    phase = PhaseResult(exit_code=0, timed_out=False, seconds=1.0)
    sandbox = Sandbox(tmp_path / "ws", Users(agent=61000, verifier=61001), "bwrap")
    task = _Validation(locate_task(out), sandbox, tmp_path, LocalOptions(logs=tmp_path))
    nop = VerifierRun("nop", _reward(reward=0, fail_to_pass=0, deterministic=0), log, phase)
    oracle = VerifierRun("oracle", _reward(), log, phase)
    checks = task.beyond_checks(nop, oracle, (VerifierRun("rerun", rerun, log, phase),))
    [check] = [check for check in checks if check.name == "independent rerun"]
    assert (check.passed, check.detail) == (passed, detail.format(log=log))


def test_workspaces_go_where_asked_and_can_be_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("kept"), tmp_path / "build")
    workspaces, logs = tmp_path / "workspaces", tmp_path / "logs"
    command = ["validate", str(out), "--logs", str(logs), "--workspace", str(workspaces)]
    assert main(command) == 2
    assert capsys.readouterr().err == f"error: --workspace {workspaces}: not a directory\n"
    workspaces.mkdir()
    assert main([*command, "--keep"]) == 0
    [kept] = workspaces.iterdir()
    assert (logs / "kept" / "workspace.txt").read_text() == f"{kept}\n"
    assert (kept / "rerun-app" / "calc" / "__init__.py").is_file()
    remove_workspace(kept)


# --- reasons for what went wrong before the tests ----------------------------------------------


def test_a_setup_that_overruns_its_time_is_the_reason(tmp_path: Path) -> None:
    timeouts = {"setupSeconds": 2, "agentSeconds": 60, "testsSeconds": 60}
    project = python_project(
        "slow-setup", definition={"setupCommand": "sleep 30", "timeouts": timeouts}
    )
    report = run(project, tmp_path)
    assert report.reason == (
        f"setup: setupCommand timed out after 2 s (log {tmp_path / 'logs/slow-setup/prepare.log'})"
    )


def test_tests_that_overrun_their_time_are_the_reason(tmp_path: Path) -> None:
    timeouts = {"setupSeconds": 1, "agentSeconds": 60, "testsSeconds": 2}
    definition = {"setupCommand": "true", "testCommand": f"sleep 30; {PYTEST}"}
    project = python_project("slow-tests", definition={**definition, "timeouts": timeouts})
    report = run(project, tmp_path)
    assert report.reason == (
        f"nop: the verifier timed out (log {tmp_path / 'logs/slow-tests/nop.log'})"
    )


def _recompile(out: Path, edit: str, replacement: str, name: str) -> None:
    """Edit one authored file of a built project and compile it again into `out`."""
    task = out.parent.parent / "authored" / out.name
    path = task / name
    path.write_text(path.read_text().replace(edit, replacement))
    repo = out.parent.parent / "repo"
    compile_task(task, repo=repo, out=out / "harbor-task")
    (out / "definition.json").write_bytes((task / "definition.json").read_bytes())


def test_a_gold_patch_that_does_not_apply_names_solve_sh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = build(python_project("stale-gold"), tmp_path / "build")
    with pytest.raises(CompileError) as error:
        _recompile(out, " def add(a, b):", " def add(x, y):", "gold.patch")
    assert str(error.value).startswith("gold.patch does not apply at baseCommit ")
    # A bundle compiled before compile checked this (or by another tool) still fails at solve.sh.
    monkeypatch.setattr(compiler, "_check_base_applies", lambda *_: None)
    _recompile(out, " def add(a, b):", " def add(x, y):", "gold.patch")
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs")))
    log = tmp_path / "logs" / "stale-gold" / "oracle.log"
    assert report.reason == f"oracle: solution/solve.sh failed (exit 1; log {log})"


def test_a_task_given_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("twice"), tmp_path / "build")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert main(["validate", str(out), str(out / "harbor-task")]) == 2
    bundle = out / "harbor-task"
    assert capsys.readouterr().err == f"error: task twice given twice: {bundle}, {bundle}\n"
    assert list((tmp_path / "tmp").iterdir()) == []  # no logs directory left behind


def test_a_patch_changed_after_compile_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("edited"), tmp_path / "build")
    gold = out / "harbor-task" / "solution" / "gold.patch"
    gold.write_text(gold.read_text().replace("a * b", "b * a"))
    assert main(["validate", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: {gold}: changed since the bundle was compiled "
        "(goldPatchSha256 differs; recompile or refresh it)\n"
    )


def test_a_broken_bundle_rejects_its_task_not_the_batch(tmp_path: Path) -> None:
    broken = build(python_project("no-collect"), tmp_path / "a")
    task_toml = broken / "harbor-task" / "task.toml"
    task_toml.write_text(task_toml.read_text().replace("[[verifier.collect]]", "[verifier.other]"))
    fine = build(python_project("fine"), tmp_path / "b")
    first, second = validate(
        [broken, fine], runner=LocalRunner(LocalOptions(logs=tmp_path / "logs"))
    )
    assert first.reason == f"validation failed: {task_toml}: no [[verifier.collect]] command"
    assert second.accepted


def test_the_local_environment_needs_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = build(python_project("no-bwrap"), tmp_path / "build")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["validate", str(out)]) == 2
    assert capsys.readouterr().err == (
        "error: the local environment needs bubblewrap (bwrap): apt-get install bubblewrap\n"
    )


def test_setup_env_passes_a_host_variable_into_setup_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = 'test "${#SELFBENCH_PROBE}" = 9'
    project = python_project("setup-env", definition={"setupCommand": f"{PY_SETUP} && {probe}"})
    out = build(project, tmp_path / "build")
    command = ["validate", str(out), "--logs", str(tmp_path / "logs")]
    assert main([*command, "--setup-env", "SELFBENCH_PROBE"]) == 2
    assert capsys.readouterr().err == (
        "error: --setup-env SELFBENCH_PROBE: not set in this environment\n"
    )
    monkeypatch.setenv("SELFBENCH_PROBE", "secret-42")
    assert main(command) == 1
    assert "setup: setupCommand failed (exit 1" in capsys.readouterr().err
    assert main([*command, "--setup-env", "SELFBENCH_PROBE"]) == 0
    written = [*out.rglob("*"), *(tmp_path / "logs").rglob("*")]
    assert not [path for path in written if path.is_file() and b"secret-42" in path.read_bytes()]


PINNED_TEST = """\
import os
import time

from calc import mul


def test_mul():
    pinned = tuple(os.environ.get(name) for name in ("TZ", "LANG", "LC_ALL"))
    assert pinned == ("UTC", "C.UTF-8", "C.UTF-8")
    assert time.strftime("%Z", time.localtime(0)) == "UTC"
    assert mul(2, 3) == 6
"""


def test_time_zone_and_locale_are_pinned_in_setup_and_the_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TZ=UTC, LANG and LC_ALL=C.UTF-8 whatever selfbench's own environment says (README:
    what is pinned and why): in setup, as root, and in the tests, as the verifier user."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    monkeypatch.setenv("LC_ALL", "fr_FR.UTF-8")
    probe = 'test "$TZ/$LANG/$LC_ALL/$(date +%Z)" = UTC/C.UTF-8/C.UTF-8/UTC'
    project = python_project(
        "pinned",
        tests={"tests/test_mul.py": PINNED_TEST},
        definition={"setupCommand": f"{PY_SETUP} && {probe}"},
    )
    report = run(project, tmp_path)
    assert (report.accepted, report.reason) == (True, None)
