"""The runner protocol: `validate` locates and checks each task once, then hands it to a runner.

A recording runner (a fake at the protocol's seam, not a mock) stands in for the environments;
the bundles are real compiled ones. The CLI refuses a runner option the chosen `--env` does not
use, before anything is located or written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from projects import build
from selfbench.artifacts.compiled import LocatedTask
from selfbench.artifacts.report import RunReport, TaskReport
from selfbench.cli import main
from selfbench.environments.runner import Runner
from selfbench.errors import BundleError, SelfbenchError
from selfbench.progress import Reporter
from selfbench.validate import HarborOptions, HarborRunner, LocalOptions, LocalRunner, validate
from test_validate import Verdicts, python_project


class RecordingRunner:
    """A runner that records what it is handed and accepts every task."""

    def __init__(self, *, refuse: str | None = None) -> None:
        self.refuse = refuse
        self.checked = 0
        self.handed: list[list[LocatedTask]] = []

    @property
    def environment(self) -> str:
        return "recording"

    def check(self) -> None:
        self.checked += 1
        if self.refuse is not None:
            raise SelfbenchError(self.refuse)

    def run(
        self, tasks: Sequence[LocatedTask], *, jobs: int, reporter: Reporter
    ) -> list[TaskReport]:
        self.handed.append(list(tasks))
        empty = RunReport(reward=None, log="")
        reports = [
            TaskReport(
                task.definition.taskId,
                accepted=True,
                reason=None,
                nop=empty,
                oracle=empty,
                environment=self.environment,
            )
            for task in tasks
        ]
        for report in reports:
            reporter.candidate_accepted(report.task_id)
        return reports


def test_both_runners_satisfy_the_protocol() -> None:
    runners: list[Runner] = [LocalRunner(), HarborRunner(), RecordingRunner()]
    assert [runner.environment for runner in runners] == ["local", "harbor", "recording"]
    assert LocalRunner().options == LocalOptions()
    assert HarborRunner().options == HarborOptions(
        environment="docker", jobs_dir=Path("jobs"), harbor="harbor", logs=None
    )


def test_the_runner_receives_each_task_located_once(tmp_path: Path) -> None:
    first = build(python_project("first"), tmp_path / "a")
    second = build(python_project("second"), tmp_path / "b")
    runner = RecordingRunner()
    told = Verdicts()
    reports = validate([first, second / "harbor-task"], runner=runner, reporter=told)
    assert [report.task_id for report in reports] == told.accepted == ["first", "second"]
    assert runner.checked == 1
    [handed] = runner.handed
    assert [(task.bundle, task.definition_path, task.definition.taskId) for task in handed] == [
        (first / "harbor-task", first / "definition.json", "first"),
        (second / "harbor-task", second / "definition.json", "second"),
    ]


def test_a_definition_whose_digest_differs_never_reaches_the_runner(tmp_path: Path) -> None:
    out = build(python_project("changed"), tmp_path / "build")
    path = out / "definition.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**value, "prompt": "Something else."}), encoding="utf-8")
    runner = RecordingRunner()
    with pytest.raises(BundleError) as error:
        validate([out], runner=runner)
    assert str(error.value) == (
        f"{path}: not the definition bundle changed was compiled from"
        " (refresh the bundle after a repair)"
    )
    assert runner.handed == []


def test_a_task_given_twice_never_reaches_the_runner(tmp_path: Path) -> None:
    out = build(python_project("twice"), tmp_path / "build")
    runner = RecordingRunner()
    with pytest.raises(BundleError) as error:
        validate([out, out / "harbor-task"], runner=runner)
    assert (
        str(error.value) == f"task twice given twice: {out / 'harbor-task'}, {out / 'harbor-task'}"
    )
    assert runner.handed == []


def test_the_runner_refuses_before_any_task_is_located(tmp_path: Path) -> None:
    runner = RecordingRunner(refuse="this environment cannot run here")
    with pytest.raises(SelfbenchError) as error:
        validate([tmp_path / "not-a-bundle"], runner=runner)
    assert str(error.value) == "this environment cannot run here"
    assert runner.handed == []


# --- the CLI refuses an option the chosen runner does not use -----------------------------------


@pytest.mark.parametrize(
    ("env", "option", "message"),
    [
        ("harbor", ["--parity"], "--parity is not used by --env harbor"),
        ("harbor", ["--network"], "--network is not used by --env harbor"),
        ("harbor", ["--keep"], "--keep is not used by --env harbor"),
        ("harbor", ["--workspace", "ws"], "--workspace is not used by --env harbor"),
        ("local", ["--harbor-env", "modal"], "--harbor-env is not used by --env local"),
        ("local", ["--jobs-dir", "jobs"], "--jobs-dir is not used by --env local"),
        ("local", ["--harbor", "harbor"], "--harbor is not used by --env local"),
    ],
)
def test_an_option_the_runner_does_not_use_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    env: str,
    option: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["validate", "nowhere", "--env", env, *option, "--logs", "logs", "--definition", "d"]
    assert main(argv) == 2
    assert capsys.readouterr() == ("", f"error: {message}\n")
    assert list(tmp_path.iterdir()) == []


def test_the_first_unused_option_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "x", "--env", "harbor", "--workspace", "w", "--keep"]) == 2
    assert capsys.readouterr().err == "error: --keep is not used by --env harbor\n"
