"""SWE-bench interop: import and export through the CLI, on real Git patches of a real repository.

The instances are built from the demo's sample repository (a real merged change, diffed by git),
so every imported task is judged by the real preflight and `selfbench audit`.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import GOLD, TESTS, added_file, implementation_patch
from selfbench import swebench
from selfbench._text import has_control
from selfbench.cli import main
from selfbench.collect import CollectResult, collect_authoring
from selfbench.contract import AUTHORING_DEFAULTS, parse_definition
from selfbench.demo import SampleRepository, build_sample_repository, sample_arguments
from selfbench.errors import SwebenchError
from selfbench.rules import TASK_ID_PATTERN
from selfbench.swebench import (
    Commands,
    choose_difficulty,
    instance_definition,
    instance_metadata,
    is_spec_selector,
    parse_instance,
    parse_test_list,
    render_instance,
    spec_commands,
)

SETUP = "python -m pip install --quiet pytest"
TEST = "python -m pytest -q {tests}"
OPTIONS = ["--setup-command", SETUP, "--test-command", TEST]
SHARED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")
FILES = ["definition.json", "gold.patch", "test.patch"]
IMPORTED = ["definition.json", "gold.patch", "swebench.json", "test.patch"]  # with the sidecar
METADATA = {"created_at": "2024-05-01T12:00:00Z", "version": "0.3"}
LIST_MESSAGE = "must be a list of strings or a JSON-encoded list of strings"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


def sample_instance(sample_repo: SampleRepository, **changes: Any) -> dict[str, Any]:
    """A SWE-bench instance of the sample's pull request, as the published datasets spell it."""
    repo = sample_repo
    authored = sample_arguments(repo)
    definition = authored["definition"]
    instance = {
        "repo": "example/slugkit",
        "instance_id": "example__slugkit-42",
        "base_commit": repo.base,
        "patch": authored["goldPatch"],
        "test_patch": authored["testPatch"],
        "problem_statement": definition["prompt"],
        "hints_text": "",
        "created_at": "2024-05-01T12:00:00Z",
        "version": "0.3",
        "FAIL_TO_PASS": json.dumps(definition["failToPass"]),
        "PASS_TO_PASS": json.dumps(definition["passToPass"]),
        "environment_setup_commit": repo.base,
    }
    return {**instance, **changes}


def small_instance(repo: SampleRepository) -> dict[str, Any]:
    """An instance whose gold patch is too small for any difficulty."""
    return sample_instance(
        repo, instance_id="example__slugkit-9", patch=implementation_patch(1, 5).decode()
    )


def write_jsonl(path: Path, *instances: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in instances), encoding="utf-8")
    return path


def shared_fields(instance: dict[str, Any]) -> dict[str, Any]:
    """The fields both formats share, test lists decoded."""
    fields = {key: instance[key] for key in SHARED}
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        fields[key] = parse_test_list(instance[key])
    return fields


def metadata_fields(instance: dict[str, Any]) -> dict[str, Any]:
    """What the sidecar keeps: `created_at` and `version`, when present."""
    return {key: instance[key] for key in ("created_at", "version") if key in instance}


def tree(directory: Path) -> dict[str, bytes]:
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


# --- import --------------------------------------------------------------------------------------


def test_import_writes_an_audited_task(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 0
    task_dir = out / "example__slugkit-42"
    assert capsys.readouterr().out == f"imported example__slugkit-42 (medium) into {task_dir}\n"
    assert sorted(p.name for p in out.iterdir()) == ["example__slugkit-42"]  # no staging left
    assert sorted(p.name for p in task_dir.iterdir()) == IMPORTED
    assert json.loads((task_dir / "swebench.json").read_text(encoding="utf-8")) == METADATA

    definition = json.loads((task_dir / "definition.json").read_text(encoding="utf-8"))
    authored = sample_arguments(sample)
    assert definition == {
        "schemaVersion": 1,
        "difficulty": "medium",
        "taskId": "example__slugkit-42",
        "repo": "example/slugkit",
        "baseCommit": sample.base,
        "workdir": ".",
        "setupCommand": SETUP,
        "testCommand": TEST,
        "failToPass": authored["definition"]["failToPass"],
        "passToPass": authored["definition"]["passToPass"],
        "testPaths": ["tests/test_options.py", "tests/test_translit.py"],  # the test patch's order
        "toolchains": ["python"],
        "sourcePr": 42,
        "sourceUrl": "https://github.com/example/slugkit/pull/42",
        "prompt": authored["definition"]["prompt"],
        **AUTHORING_DEFAULTS,
    }
    assert (task_dir / "gold.patch").read_text(encoding="utf-8") == authored["goldPatch"]
    assert (task_dir / "test.patch").read_text(encoding="utf-8") == authored["testPatch"]
    assert main(["audit", str(task_dir)]) == 0


def test_an_instance_meeting_no_gate_is_reported_and_skipped(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", small_instance(sample), sample_instance(sample))
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == [
        {
            "instanceId": "example__slugkit-9",
            "reasons": [
                (
                    "meets no difficulty gate: the gold patch changes 1 files and 5 lines, "
                    "with 1 pass-to-pass tests (easy needs 1 file and 20 changed lines)"
                )
            ],
        }
    ]
    assert [task["instanceId"] for task in report["imported"]] == ["example__slugkit-42"]
    assert sorted(p.name for p in out.iterdir()) == ["example__slugkit-42"]


def test_an_instance_the_audit_refuses_is_reported_with_its_blockers(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    authored = sample_arguments(sample)
    clashing = authored["testPatch"] + added_file("slugkit/__init__.py", 1, tag="clash")
    clash = sample_instance(sample, test_patch=clashing)
    empty = sample_instance(sample, instance_id="example__slugkit-43", problem_statement="")
    source = write_jsonl(tmp_path / "in.jsonl", clash, empty)
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "skipped example__slugkit-42: gold and held-out test patches overlap: slugkit/__init__.py",
        "skipped example__slugkit-43: definition.prompt: must not be empty",
    ]
    assert list(out.iterdir()) == []


def test_every_imported_task_passes_audit(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instances = [
        sample_instance(sample, instance_id=f"example__slugkit-{n}", FAIL_TO_PASS=f)
        for n, f in ((1, '["tests/test_translit.py"]'), (2, ["tests/test_options.py"]))
    ]
    source = write_jsonl(tmp_path / "in.jsonl", *instances, small_instance(sample))
    out = tmp_path / "tasks"
    main(["import-swebench", str(source), "--out", str(out), *OPTIONS, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert len(report["imported"]) == 2
    for task in report["imported"]:
        assert main(["audit", task["path"], "--json"]) == 0
    assert all(entry["reasons"] for entry in report["skipped"])


def test_an_existing_task_is_reported_not_overwritten(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    out = tmp_path / "tasks"
    (out / "example__slugkit-42").mkdir(parents=True)
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 1
    target = out / "example__slugkit-42"
    assert capsys.readouterr().out == (
        f"skipped example__slugkit-42: task example__slugkit-42 already exists: {target}\n"
    )
    assert list(target.iterdir()) == []
    assert [p.name for p in out.iterdir()] == ["example__slugkit-42"]  # no staging left behind


def test_the_sidecar_is_written_only_when_there_is_something_to_keep(
    sample: SampleRepository, tmp_path: Path
) -> None:
    bare = sample_instance(sample)
    del bare["created_at"], bare["version"]
    source = write_jsonl(tmp_path / "in.jsonl", bare)
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 0
    assert sorted(p.name for p in (out / "example__slugkit-42").iterdir()) == FILES


def test_a_task_with_its_sidecar_audits_compiles_and_collects(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 0
    task_dir = out / "example__slugkit-42"
    assert (task_dir / "swebench.json").is_file()
    assert main(["audit", str(task_dir)]) == 0
    bundle = tmp_path / "bundle"
    assert main(["compile", str(task_dir), "--repo", str(sample.path), "--out", str(bundle)]) == 0
    assert not any(path.name == "swebench.json" for path in bundle.rglob("*"))
    collected = collect_authoring(out, repo=sample.path, out=tmp_path / "collected")
    assert isinstance(collected, CollectResult)
    assert collected.definition.read_bytes() == (task_dir / "definition.json").read_bytes()
    capsys.readouterr()


# --- round trip ----------------------------------------------------------------------------------


def test_import_export_import_is_lossless(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = [
        sample_instance(sample),
        sample_instance(
            sample,
            instance_id="example__slugkit-43",
            FAIL_TO_PASS=["tests/test_options.py"],
            problem_statement="Grüße: « non-ASCII » survives.\r\nSecond line\n",
        ),
    ]
    del original[1]["created_at"], original[1]["version"]  # a task with nothing for the sidecar
    first_out, second_out = tmp_path / "first", tmp_path / "second"
    source = write_jsonl(tmp_path / "in.jsonl", *original)
    assert main(["import-swebench", str(source), "--out", str(first_out), *OPTIONS]) == 0
    exported = tmp_path / "out.jsonl"
    dirs = [str(first_out / i["instance_id"]) for i in original]
    assert main(["export-swebench", *dirs, "--out", str(exported)]) == 0
    assert capsys.readouterr().out.endswith(f"Exported 2 instances to {exported}\n")

    lines = exported.read_text(encoding="utf-8").splitlines()
    assert [shared_fields(json.loads(line)) for line in lines] == [
        shared_fields(i) for i in original
    ]
    assert all(isinstance(json.loads(line)["FAIL_TO_PASS"], str) for line in lines)
    assert [metadata_fields(json.loads(line)) for line in lines] == [METADATA, {}]

    assert main(["import-swebench", str(exported), "--out", str(second_out), *OPTIONS]) == 0
    assert tree(second_out) == tree(first_out)


@pytest.mark.usefixtures("fake_swebench")
def test_a_round_trip_through_the_swebench_specs_needs_no_command_options(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = sample_instance(sample)
    first_out, second_out = tmp_path / "first", tmp_path / "second"
    source = write_jsonl(tmp_path / "in.jsonl", original)
    assert main(["import-swebench", str(source), "--out", str(first_out)]) == 0
    task_dir = first_out / "example__slugkit-42"
    definition = json.loads((task_dir / "definition.json").read_text(encoding="utf-8"))
    assert definition["testCommand"] == "pytest -rA {tests}"  # from the spec of version 0.3

    exported = tmp_path / "out.jsonl"
    assert main(["export-swebench", str(task_dir), "--out", str(exported)]) == 0
    (line,) = exported.read_text(encoding="utf-8").splitlines()
    instance = json.loads(line)
    assert shared_fields(instance) == shared_fields(original)
    assert metadata_fields(instance) == METADATA == metadata_fields(original)

    capsys.readouterr()
    assert main(["import-swebench", str(exported), "--out", str(second_out)]) == 0
    assert capsys.readouterr().out.startswith("imported example__slugkit-42 (medium)")
    assert tree(second_out) == tree(first_out)


# --- bad input -----------------------------------------------------------------------------------


def test_malformed_input_is_refused_whole_and_writes_nothing(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.dumps(sample_instance(sample))
    bad = {**sample_instance(sample), "base_commit": "abc", "instance_id": "../escape"}
    del bad["patch"]
    bad["FAIL_TO_PASS"] = "not json"  # noqa: S105 - a test list, not a password
    source = tmp_path / "in.jsonl"
    lines = [good, "{broken", json.dumps(bad), "", good, "[1]"]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *OPTIONS]) == 2
    assert capsys.readouterr().err.splitlines() == [
        (
            f"error: {source}:2: invalid JSON: Expecting property name enclosed in double "
            "quotes at line 1 column 2"
        ),
        f"error: {source}:3: patch: is required",
        f"error: {source}:3: FAIL_TO_PASS: {LIST_MESSAGE}",
        f"error: {source}:3: instance_id: must match {TASK_ID_PATTERN} (it names the task)",
        f"error: {source}:3: base_commit: expected a full commit SHA",
        f"error: {source}:5: instance_id example__slugkit-42 repeats line 1",
        f"error: {source}:6: instance must be a JSON object",
    ]
    assert not out.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--test-command", TEST], "import-swebench needs --setup-command and --test-command"),
        ([*OPTIONS[:2], "--test-command", "pytest"], '--test-command must contain "{tests}"'),
        (["--setup-command", " ", "--test-command", TEST], "--setup-command must not be empty"),
    ],
    ids=["no-setup", "no-placeholder", "blank-setup"],
)
def test_commands_are_required_without_swebench_specs(
    options: list[str],
    message: str,
    sample: SampleRepository,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(swebench, "load_swebench_specs", lambda: None)
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out), *options]) == 2
    assert capsys.readouterr().err.startswith(f"error: {message}")
    assert not out.exists()


def test_a_wrong_file_reports_a_bounded_number_of_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("[]\n" * 150, encoding="utf-8")
    assert main(["import-swebench", str(source), "--out", str(tmp_path / "o"), *OPTIONS]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 101
    assert lines[99] == f"error: {source}:100: instance must be a JSON object"
    assert lines[100] == f"error: {source}: 50 more problems not shown"


def test_missing_and_empty_instance_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.jsonl"
    assert main(["import-swebench", str(missing), "--out", str(tmp_path / "o"), *OPTIONS]) == 2
    assert capsys.readouterr().err == f"error: cannot read {missing}: No such file or directory\n"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n", encoding="utf-8")
    assert main(["import-swebench", str(empty), "--out", str(tmp_path / "o"), *OPTIONS]) == 2
    assert capsys.readouterr().err == f"error: {empty}: no instances\n"


def test_export_refuses_what_swebench_cannot_hold(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    tasks = tmp_path / "tasks"
    main(["import-swebench", str(source), "--out", str(tasks), *OPTIONS])
    task_dir = tasks / "example__slugkit-42"
    binary = tmp_path / "binary"
    binary.mkdir()
    for name in FILES:
        (binary / name).write_bytes((task_dir / name).read_bytes())
    (binary / "gold.patch").write_bytes(b"diff --git a/x b/x\n\xff\n")
    out = tmp_path / "out.jsonl"
    out.write_text("previous\n", encoding="utf-8")
    capsys.readouterr()
    args = ["export-swebench", str(task_dir), str(binary), str(task_dir), str(tmp_path / "nope")]
    assert main([*args, "--out", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {binary}: gold.patch is not UTF-8 text; a SWE-bench patch must be a string",
        f"error: {task_dir}: taskId example__slugkit-42 repeats {task_dir}",
        f"error: cannot read {tmp_path / 'nope' / 'definition.json'}: No such file or directory",
    ]
    assert out.read_text(encoding="utf-8") == "previous\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"version": 3.0, "created_at": null}', "version: must be a string"),
        ('["0.3"]', "must be a JSON object"),
    ],
    ids=["not-a-string", "not-an-object"],
)
def test_export_refuses_a_malformed_sidecar(
    content: str,
    message: str,
    sample: SampleRepository,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample))
    tasks = tmp_path / "tasks"
    main(["import-swebench", str(source), "--out", str(tasks), *OPTIONS])
    sidecar = tasks / "example__slugkit-42" / "swebench.json"
    sidecar.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    assert main(["export-swebench", str(sidecar.parent), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"error: {sidecar}: {message}\n"
    assert not out.exists()


# --- the swebench package's specs ----------------------------------------------------------------

FAKE_CONSTANTS = """\
MAP_REPO_VERSION_TO_SPECS = {
    "example/slugkit": {
        "0.3": {
            "python": "3.12",
            "pre_install": ["echo preparing"],
            "pip_packages": ["pytest==8.3.2", "it's"],
            "install": "python -m pip install -e .",
            "test_cmd": "pytest -rA",
        }
    }
}
"""


def _swebench_modules() -> list[str]:
    return [name for name in sys.modules if name == "swebench" or name.startswith("swebench.")]


@pytest.fixture
def fake_swebench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A stand-in for SWE-bench 4.x's layout (the real package pulls in docker, datasets, modal)."""
    package = tmp_path / "site" / "swebench" / "harness" / "constants"
    package.mkdir(parents=True)
    for directory in (package.parent.parent, package.parent):
        (directory / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text(FAKE_CONSTANTS, encoding="utf-8")
    for name in _swebench_modules():
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    yield
    for name in _swebench_modules():
        del sys.modules[name]


@pytest.mark.usefixtures("fake_swebench")
def test_commands_come_from_the_installed_swebench_specs(
    sample: SampleRepository, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = sample_instance(sample, instance_id="example__slugkit-43", version="9.9")
    source = write_jsonl(tmp_path / "in.jsonl", sample_instance(sample), other)
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out)]) == 1
    assert capsys.readouterr().out.splitlines()[1] == (
        "skipped example__slugkit-43: no swebench spec for example/slugkit version 9.9; "
        "give --setup-command and --test-command"
    )
    definition = json.loads((out / "example__slugkit-42" / "definition.json").read_text())
    assert definition["setupCommand"] == (
        "echo preparing && python -m pip install 'pytest==8.3.2' 'it'\"'\"'s' "
        "&& python -m pip install -e ."
    )
    assert definition["testCommand"] == "pytest -rA {tests}"


DJANGO = ["test_slug (tests.test_options.OptionsTests)"]
SYMPY = ["test_transliterate", "test_options"]


@pytest.mark.usefixtures("fake_swebench")
@pytest.mark.parametrize(
    ("fail_to_pass", "pass_to_pass"),
    [(DJANGO, ["test_core (tests.test_core.CoreTests)"]), (SYMPY, ["tests/test_core.py"])],
    ids=["django", "sympy"],
)
def test_a_spec_test_command_is_refused_for_selectors_that_are_not_node_ids(
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    sample: SampleRepository,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    foreign = sample_instance(sample, FAIL_TO_PASS=fail_to_pass, PASS_TO_PASS=pass_to_pass)
    source = write_jsonl(tmp_path / "in.jsonl", foreign)
    out = tmp_path / "tasks"
    assert main(["import-swebench", str(source), "--out", str(out)]) == 1
    assert capsys.readouterr().out == (
        f"skipped example__slugkit-42: selectors are not pytest node ids (e.g. "
        f"{fail_to_pass[0]!r}); pass --test-command for this repository\n"
    )
    assert list(out.iterdir()) == []

    # With the repository's own runner given, the spec still supplies the setup command.
    runner = "python tests/runtests.py {tests}"
    assert main(["import-swebench", str(source), "--out", str(out), "--test-command", runner]) == 0
    definition = json.loads((out / "example__slugkit-42" / "definition.json").read_text())
    assert definition["testCommand"] == runner
    assert definition["failToPass"] == fail_to_pass
    assert definition["setupCommand"].startswith("echo preparing && ")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("tests/test_x.py", True),
        ("test_requests.py::RequestsTestCase::test_basic", True),
        ("tests/", True),
        ("lib/m/tests/test_axes.py::test_fill[png]", True),
        ("sklearn/t/test_x.py::test_y[float64-a b::c]", True),
        ("tests/test_x.py::TestX::test_y[", False),
        ("tests/test_x.py[1]", False),
        ("tests/test_x.py::", False),
        ("test_x (module.Class)", False),
        ("test_x (module.Class.test_x)\nA docstring line", False),
        ("test_issue_1234", False),
        ("/", False),
        ("", False),
    ],
)
def test_is_spec_selector(selector: str, expected: bool) -> None:
    assert is_spec_selector(selector) is expected


def test_without_the_package_there_are_no_specs() -> None:
    if importlib.util.find_spec("swebench") is not None:  # pragma: no cover
        pytest.skip("the swebench package is installed here")
    assert swebench.load_swebench_specs() is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"install": "make", "test_cmd": ["a", "b"]}, Commands("make", "a && b {tests}")),
        ({"install": "make"}, None),
        ({"install": 3, "test_cmd": "t"}, None),
        ({"test_cmd": "t"}, None),
        ("not a spec", None),
    ],
    ids=["list-test-cmd", "no-test-cmd", "bad-install", "no-setup", "not-a-mapping"],
)
def test_spec_commands(spec: Any, expected: Commands | None) -> None:
    assert spec_commands(spec) == expected


# --- pure mapping, property tests ---------------------------------------------------------------

selectors = st.lists(
    st.text(min_size=1, max_size=30).filter(lambda text: not has_control(text)), max_size=6
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=10,
)


@given(selectors)
def test_a_test_list_reads_the_same_as_a_list_or_as_json(value: list[str]) -> None:
    assert parse_test_list(value) == parse_test_list(json.dumps(value)) == tuple(value)
    assert parse_test_list(json.dumps(value, ensure_ascii=False)) == tuple(value)


@given(json_values | st.text(max_size=40))
def test_anything_else_is_refused_with_our_error(value: Any) -> None:
    try:
        outcome: Any = parse_test_list(value)
    except SwebenchError as exc:
        outcome = exc
    if isinstance(outcome, SwebenchError):
        assert str(outcome) == LIST_MESSAGE
    else:
        assert all(isinstance(item, str) for item in outcome)


@given(st.dictionaries(st.sampled_from([*SHARED, "FAIL_TO_PASS", "x"]), json_values))
def test_parse_instance_raises_only_our_error(value: dict[str, Any]) -> None:
    try:
        parse_instance(value)
    except SwebenchError as exc:
        lines = exc.lines
    else:
        lines = ()
    assert all(": " in line for line in lines)


task_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}-[1-9][0-9]{0,5}", fullmatch=True)
statements = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=80)


@given(
    task_id=task_ids,
    statement=statements,
    fail_to_pass=selectors.filter(bool),
    pass_to_pass=selectors,
    encoded=st.booleans(),
    metadata=st.dictionaries(st.sampled_from(["created_at", "version"]), statements),
)
def test_render_and_parse_round_trip_on_shared_fields(
    task_id: str,
    statement: str,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    encoded: bool,
    metadata: dict[str, str],
) -> None:
    lists = (
        [json.dumps(fail_to_pass), json.dumps(pass_to_pass)]
        if encoded
        else [
            fail_to_pass,
            pass_to_pass,
        ]
    )
    raw = {
        "instance_id": task_id,
        "repo": "acme/widgets",
        "base_commit": "ab" * 20,
        "patch": GOLD.decode(),
        "test_patch": TESTS.decode(),
        "problem_statement": statement,
        "FAIL_TO_PASS": lists[0],
        "PASS_TO_PASS": lists[1],
        **metadata,
    }
    instance = parse_instance(raw)
    assert instance_metadata(instance) == metadata
    value, reasons = instance_definition(instance, Commands("make", "pytest {tests}"))
    assert reasons == ()
    assert value is not None
    definition = parse_definition(value).definition
    rendered = render_instance(definition, TESTS, GOLD, instance_metadata(instance))
    reparsed = parse_instance(json.loads(json.dumps(rendered)))
    assert reparsed == replace(instance, pull_number=definition.sourcePr)
    assert shared_fields(rendered) == shared_fields(raw)


@pytest.mark.parametrize(
    ("files", "lines", "pass_to_pass", "expected"),
    [
        (1, 19, 5, None),
        (1, 20, 0, "easy"),
        (2, 50, 0, "easy"),
        (2, 50, 1, "medium"),
        (3, 100, 1, "medium"),
        (3, 100, 2, "hard"),
        (0, 500, 9, None),
    ],
)
def test_choose_difficulty_picks_the_highest_gate_met(
    files: int, lines: int, pass_to_pass: int, expected: str | None
) -> None:
    assert choose_difficulty(files, lines, pass_to_pass) == expected


def test_the_pull_request_comes_from_pull_number_or_the_id(sample: SampleRepository) -> None:
    commands = Commands("make", "pytest {tests}")
    numbered = parse_instance(sample_instance(sample, instance_id="x", pull_number=7))
    value, _ = instance_definition(numbered, commands)
    assert value is not None
    assert (value["sourcePr"], value["sourceUrl"]) == (
        7,
        "https://github.com/example/slugkit/pull/7",
    )
    url_repo = parse_instance(sample_instance(sample, repo="https://git.example.com/a/b.git"))
    value, _ = instance_definition(url_repo, commands)
    assert value is not None
    assert value["sourceUrl"] == "https://git.example.com/a/b/pull/42"
    anonymous = parse_instance(sample_instance(sample, instance_id="nameless"))
    assert instance_definition(anonymous, commands) == (
        None,
        ("no pull request number: no pull_number, and the id has no -<number>",),
    )
    odd_repo = parse_instance(sample_instance(sample, repo="just words"))
    assert instance_definition(odd_repo, commands)[1] == (
        "cannot build a pull request URL from repo 'just words'",
    )
    with pytest.raises(SwebenchError, match="pull_number: must be a positive integer"):
        parse_instance(sample_instance(sample, pull_number=True))
