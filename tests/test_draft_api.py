"""`selfbench draft` end to end on the sample history: every tier drafted, audited and validated
with no edits; the candidates that cannot be drafted rejected with their reason; the CLI, the
API and the MCP tool `draft_task`.

Drafting runs the real tests in the real sandbox (pytest installed by the inferred setup), so the
drafts are made once per module.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from mine_history import untested_candidate
from selfbench._git import git
from selfbench._sample_history import SAMPLE_PULL_REQUESTS, build_sample_history
from selfbench.artifacts.draft_record import DRAFT_FILE
from selfbench.artifacts.quality_record import QUALITY_FILE, read_quality
from selfbench.artifacts.task_dir import read_authored_task
from selfbench.cli import main
from selfbench.compiler import compile_task
from selfbench.contract import TaskDefinition
from selfbench.draft.api import DraftOptions, draft_candidate
from selfbench.mine import mine_repository, write_candidates
from selfbench.mine.candidate import CandidateModel, find_candidate
from selfbench.task import judge_task
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner
from test_mcp import run_with_server, text_of

pytestmark = [
    pytest.mark.network,  # the inferred setup installs pytest from the package index
    pytest.mark.sandbox,
]

DRAFTED = sorted(f"pr-{pull.number}" for pull in SAMPLE_PULL_REQUESTS if pull.drafts)
REMOTE = "https://github.com/example/unitkit.git"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample history with a GitHub remote (so candidates carry URLs) and its candidates."""
    root = tmp_path_factory.mktemp("draft-sample")
    repo = build_sample_history(root)
    git(repo, "remote", "add", "origin", REMOTE)
    candidates = root / "candidates.jsonl"
    write_candidates(mine_repository(repo), candidates)
    # mining excludes #6 (no test file a known runner runs); a hand-written candidate file may
    # still name it, and drafting refuses it itself
    untested = json.dumps(untested_candidate(repo, 6).to_json())
    candidates.write_text(candidates.read_text() + untested + "\n")
    return repo, candidates


@pytest.fixture(scope="module")
def drafted(
    sample: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[dict[str, Any]], int]:
    """Every candidate drafted with the CLI: (tasks dir, --json results, exit code)."""
    repo, candidates = sample
    out = tmp_path_factory.mktemp("tasks")
    ids = [json.loads(line)["id"] for line in candidates.read_text().splitlines()]
    capture = tmp_path_factory.mktemp("capture") / "stdout.json"
    argv = ["draft", *ids, "--repo", str(repo), "--out", str(out), "--candidates"]
    argv += [str(candidates), "-j", "2", "--reruns", "2", "--json"]
    code = _main_to(argv, capture)
    return out, json.loads(capture.read_text()), code


def _main_to(argv: list[str], capture: Path) -> int:
    """`main(argv)` with its stdout written to `capture`."""
    import contextlib  # noqa: PLC0415

    with capture.open("w") as handle, contextlib.redirect_stdout(handle):
        return main(argv)


def test_every_tier_is_drafted_and_the_others_rejected_with_a_reason(
    drafted: tuple[Path, list[dict[str, Any]], int],
) -> None:
    out, results, code = drafted
    assert code == 1  # two candidates cannot be drafted
    status = {result["candidate"]: result["status"] for result in results}
    assert sorted(c for c, s in status.items() if s == "drafted") == DRAFTED
    reasons = {r["candidate"]: r["reason"] for r in results if r["status"] == "rejected"}
    assert reasons["pr-5"].startswith(
        "no fail-to-pass test: every changed test file already passes at the base (log "
    )
    log = Path(reasons["pr-5"].rsplit("(log ", 1)[1].rstrip(")"))
    assert log.name == "agent-1.log"  # the first gold run's, as when every run was made
    # the base and that gold run only: the second gold run and the coverage run were skipped
    assert sorted(path.name for path in log.parent.iterdir()) == [
        "agent-0.log",
        "agent-1.log",
        "prepare.log",
    ]
    assert reasons["pr-6"] == "pr-6: the change has no test files to hold out"
    assert sorted(path.name for path in out.iterdir()) == DRAFTED  # nothing half-written


def test_each_draft_audits_and_validates_without_edits(
    drafted: tuple[Path, list[dict[str, Any]], int], sample: tuple[Path, Path], tmp_path: Path
) -> None:
    out, _, _ = drafted
    repo, _ = sample
    tiers = set()
    for task_id in DRAFTED:
        task = read_authored_task(out / task_id)
        verdict = judge_task(task.loaded, task.test_patch, task.gold_patch)
        assert verdict.blockers == ()
        assert verdict.warnings == ()  # the draft instruction gives nothing away
        tiers.add(task.definition.difficulty)
        compile_task(out / task_id, repo=repo)
    assert tiers == {"easy", "medium", "hard"}
    runner = LocalRunner(LocalOptions(logs=tmp_path / "logs", reruns=2))
    reports = validate([out / task_id for task_id in DRAFTED], runner=runner, jobs=2)
    assert [(r.task_id, r.accepted, r.reason) for r in reports] == [
        (task_id, True, None) for task_id in DRAFTED
    ]


def test_the_sidecar_records_the_evidence(drafted: tuple[Path, list[dict[str, Any]], int]) -> None:
    out, _, _ = drafted
    definition = json.loads((out / "pr-3" / "definition.json").read_text())
    evidence = json.loads((out / "pr-3" / DRAFT_FILE).read_text())
    assert evidence["draft"] is True
    assert evidence["selectors"] == {
        "failToPass": definition["failToPass"],
        "passToPass": definition["passToPass"],
    }
    assert evidence["commands"]["testCommand"] == definition["testCommand"]
    assert set(evidence["commands"]["sources"]) >= {"setupCommand", "testCommand"}
    names = [run["name"] for run in evidence["runs"]]
    assert names[:2] == ["base", "base #2"]
    assert names.count("gold-1") == 1
    base = {f["file"]: f for f in evidence["runs"][0]["files"]}
    gold = {f["file"]: f for f in evidence["runs"][2]["files"]}
    for selector in definition["failToPass"]:
        file = selector.split("::")[0]
        assert gold[file]["tests"][selector] == "passed"
        assert base[file]["tests"].get(selector) != "passed"
    assert evidence["timings"]["runSeconds"] > 0


def test_an_existing_task_is_not_overwritten(
    drafted: tuple[Path, list[dict[str, Any]], int], sample: tuple[Path, Path]
) -> None:
    out, _, _ = drafted
    repo, candidates = sample
    before = (out / "pr-1" / "definition.json").read_bytes()
    result = draft_candidate(repo, find_candidate(candidates, "pr-1"), out)
    assert result.status == "rejected"
    assert result.reason == f"{out / 'pr-1'} already exists (--replace overwrites it)"
    assert (out / "pr-1" / "definition.json").read_bytes() == before


def test_a_bad_selfbench_toml_is_a_rejection(sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, candidates = sample
    candidate = find_candidate(candidates, "pr-1")
    broken = tmp_path / "repo"
    git(repo, "worktree", "add", "--quiet", "--detach", str(broken), candidate.baseCommit)
    (broken / "selfbench.toml").write_text("unknown_key = 1\n", encoding="utf-8")
    git(broken, "add", "selfbench.toml")
    git(broken, "commit", "--quiet", "-m", "config")
    base = git(broken, "rev-parse", "HEAD").decode().strip()
    git(broken, "cherry-pick", "--quiet", candidate.completedCommit)
    completed = git(broken, "rev-parse", "HEAD").decode().strip()
    moved = CandidateModel.model_validate(
        {**candidate.model_dump(), "baseCommit": base, "completedCommit": completed}
    )
    result = draft_candidate(repo, moved, tmp_path / "tasks", DraftOptions())
    assert result.status == "rejected"
    assert result.reason is not None
    assert "selfbench.toml" in result.reason
    assert "unknown_key" in result.reason
    assert not (tmp_path / "tasks" / "pr-1").exists()


def test_an_author_drafts_over_mcp(sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, candidates = sample
    root = tmp_path / "submitted"
    root.mkdir()
    where = {"path": str(candidates), "repo": str(repo), "reruns": 2}

    async def scenario(session: ClientSession) -> None:
        brief = await session.get_prompt("author_task")
        assert "draft_task" in str(brief.messages[0].content)
        result = await session.call_tool("draft_task", {"candidate": "pr-1", **where})
        assert not result.is_error, text_of(result)
        draft = result.structured_content
        assert draft is not None
        assert draft["drafted"] is True
        assert text_of(result).startswith("Drafted pr-1 (easy): selectors observed")
        arguments = draft["arguments"]
        arguments["definition"]["prompt"] = (
            "Let people write length units by name, such as kilometres or feet, as well "
            "as by symbol, in either singular or plural."
        )
        checked = await session.call_tool("check_task", arguments)
        assert checked.structured_content is not None
        assert checked.structured_content["accepted"] is True
        submitted = await session.call_tool("submit_task", arguments)
        assert text_of(submitted) == "Submitted pr-1."
        unknown = await session.call_tool("draft_task", {"candidate": "pr-99", **where})
        assert unknown.is_error
        assert text_of(unknown) == f"{candidates} has no candidate pr-99"
        untested = await session.call_tool("draft_task", {"candidate": "pr-6", **where})
        assert untested.is_error
        assert text_of(untested) == (
            "pr-6 cannot be drafted: pr-6: the change has no test files to hold out"
        )

    run_with_server(scenario, output_root=root, tmp_path=tmp_path, args=("--repo", str(repo)))
    assert sorted(path.name for path in (root / "pr-1").iterdir()) == [
        "definition.json",
        "gold.patch",
        "test.patch",
    ]


def test_cli_bad_input_is_one_line_and_exit_2(
    sample: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, candidates = sample
    out = tmp_path / "tasks"
    assert main(["draft", "pr-1", "--repo", str(repo), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        "error: pr-1: not a candidate file (name --candidates for ids)\n"
    )
    argv = ["draft", "pr-1", "--repo", str(repo), "--out", str(out), "--candidates"]
    assert main([*argv, str(candidates), "--reruns", "1"]) == 2
    assert capsys.readouterr().err == "error: --reruns must be at least 2\n"
    assert main([*argv, str(candidates), "--config", str(tmp_path / "none.toml")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert not out.exists()


def test_a_rejection_before_any_log_leaves_no_empty_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `logs`, each candidate's logs go to a temporary folder, kept only if written."""
    from run_helpers import sample  # noqa: PLC0415 - the run tests' builders

    built = sample(tmp_path)
    candidate = built.candidate.model_copy(update={"sourcePr": None, "sourceUrl": None})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    result = draft_candidate(built.repo.path, candidate, tmp_path / "out")
    assert (result.status, result.logs) == ("rejected", None)
    assert result.reason == "the candidate names no pull request (sourcePr), which a task records"
    assert list(scratch.iterdir()) == []


def test_each_draft_carries_its_quality_record(
    drafted: tuple[Path, list[dict[str, Any]], int],
) -> None:
    """`quality.json` is written with the task; the evidence says which files were moved."""
    out, _, _ = drafted
    for task_id in DRAFTED:
        record = read_quality(out / task_id / QUALITY_FILE)
        assert record.taskId == task_id
        assert record.verdict in ("ship", "review", "reject")
        assert record.mutation is not None
        assert record.mutation.generated > 0
        evidence = json.loads((out / task_id / DRAFT_FILE).read_text())
        assert evidence["quality"]["verdict"] == record.verdict
        moved = record.ablation.moved if record.ablation is not None else ()
        assert evidence["quality"]["moved"] == list(moved)


def test_an_unneeded_configuration_file_is_moved_out_of_the_gold(
    drafted: tuple[Path, list[dict[str, Any]], int], sample: tuple[Path, Path]
) -> None:
    """#4 bumps the version in `pyproject.toml`: no test needs it, so the draft's gold leaves
    it out, and the tier is recomputed from the implementation left (still hard)."""
    out, _, _ = drafted
    repo, candidates = sample
    task = read_authored_task(out / "pr-4")
    assert b"pyproject.toml" not in task.gold_patch
    mined = find_candidate(candidates, "pr-4")
    whole = git(repo, "diff", mined.baseCommit, mined.completedCommit, "--", "pyproject.toml")
    assert b"version" in whole  # the pull request did change it
    evidence = json.loads((out / "pr-4" / DRAFT_FILE).read_text())
    assert evidence["quality"]["moved"] == ["pyproject.toml"]
    assert evidence["quality"]["difficulty"] == {"before": "hard", "after": "hard"}
    record = read_quality(out / "pr-4" / QUALITY_FILE)
    assert record.ablation is not None
    assert record.ablation.moved == ("pyproject.toml",)
    assert task.definition.difficulty == "hard"


def test_no_quality_drafts_without_a_record(sample: tuple[Path, Path], tmp_path: Path) -> None:
    repo, candidates = sample
    candidate = find_candidate(candidates, "pr-1")
    options = DraftOptions(reruns=2, quality=False, logs=tmp_path / "logs")
    result = draft_candidate(repo, candidate, tmp_path / "tasks", options)
    assert result.drafted, result.reason
    assert result.task_dir is not None
    assert sorted(path.name for path in result.task_dir.iterdir()) == sorted(
        ["definition.json", "test.patch", "gold.patch", DRAFT_FILE]
    )
    assert result.evidence is not None
    assert result.evidence.quality is None


def test_a_proven_check_s_rejection_comes_before_any_quality_run(
    sample: tuple[Path, Path], tmp_path: Path
) -> None:
    """`run`'s coupling check, when no author can repair a coupled task, settles the proven
    task before its quality is checked: the check's reason rejects it, nothing is written."""
    repo, candidates = sample
    candidate = find_candidate(candidates, "pr-1")
    given: list[tuple[TaskDefinition, bytes, bytes]] = []

    def coupled(definition: TaskDefinition, test_patch: bytes, gold_patch: bytes) -> str:
        given.append((definition, test_patch, gold_patch))
        return "coupled: tests/test_x.py asserts hidden_name"

    options = DraftOptions(reruns=2, logs=tmp_path / "logs", proven_check=coupled)
    result = draft_candidate(repo, candidate, tmp_path / "tasks", options)

    assert not result.drafted
    assert result.reason == "coupled: tests/test_x.py asserts hidden_name"
    assert result.evidence is not None
    assert result.evidence.quality is None
    assert not (tmp_path / "tasks" / "pr-1").exists()
    [(definition, test_patch, gold_patch)] = given
    assert definition.baseCommit == candidate.baseCommit
    assert definition.prompt
    assert b"+++ b/tests/" in test_patch
    assert gold_patch
    assert b"+++ b/tests/" not in gold_patch


def _checks(report: Any) -> dict[str, Any]:
    return {check.name: check for check in report.checks}


_NOT_THIS_TASKS: list[tuple[Callable[[dict[str, Any]], object], str]] = [
    (lambda record: record.pop("observed"), "a record from before the inputs were kept"),
    (
        lambda record: record["observed"].update(testCommand="pytest -x {tests}"),
        "another test command",
    ),
    (lambda record: record["observed"].update(goldRuns=1), "fewer runs than --reruns 3 asks"),
    (
        lambda record: record["selectors"].update(failToPass=[]),
        "a selector the draft did not choose",
    ),
    (
        lambda record: record["observed"]["goldFiles"].update(
            dict.fromkeys(record["observed"]["goldFiles"], "0" * 64)
        ),
        "gold files other than the ones the draft ran",
    ),
    (
        lambda record: record["runs"][-1]["files"][0].update(alone=True),
        "a file's runs alone standing for runs that changed",
    ),
]
"""Changes to a draft's record that make it another task's: each validates, running its own
rerun."""


def _validate_copy(
    out: Path, repo: Path, task: Path, logs: Path, reruns: int, change: Any = None
) -> Any:
    """pr-3's draft copied to `task` (its draft record changed by `change`), compiled and
    validated locally: its report."""
    shutil.copytree(out / "pr-3", task)
    if change is not None:
        record = json.loads((task / DRAFT_FILE).read_text())
        change(record)
        (task / DRAFT_FILE).write_text(json.dumps(record))
    compile_task(task, repo=repo)
    options = LocalOptions(logs=logs) if reruns == 0 else LocalOptions(logs=logs, reruns=reruns)
    [report] = validate([task], runner=LocalRunner(options))
    return report


def test_validation_counts_the_drafts_runs_and_a_record_not_of_this_task_is_not_evidence(
    drafted: tuple[Path, list[dict[str, Any]], int], sample: tuple[Path, Path], tmp_path: Path
) -> None:
    """Validating the draft runs only the bundle's test.sh and counts the draft's runs; then each
    of `_NOT_THIS_TASKS`, validated in turn (on the workspace the first validation prepared, as
    one process validating the same task again takes it), runs its own rerun instead."""
    out, _, _ = drafted
    repo, _ = sample
    report = _validate_copy(out, repo, tmp_path / "task", tmp_path / "logs", reruns=0)
    assert report.accepted, report.reason
    checks = _checks(report)
    seen = "in its file's own run, as the draft saw it (draft.json)"
    # drafted with --reruns 2: the base twice, the first gold run twice, the second once
    assert {name: (check.passed, check.detail) for name, check in checks.items()} == {
        "per selector at the base": (
            True,
            f"each selector's test failed in 2 of 2 samples at the base {seen}",
        ),
        "per selector with the gold patch": (
            True,
            f"each selector's test passed in 3 of 3 samples with the gold patch {seen}",
        ),
        "no flaky test": (True, "and no outcome changed in the draft's 5 samples (draft.json)"),
        "independent rerun": (
            True,
            (
                "the draft's 2 runs with the gold patch, each from a fresh copy of the prepared "
                "tree (draft.json)"
            ),
        ),
        "suite ran": (True, ""),
    }
    assert report.reruns == ()
    logs = sorted(path.name for path in (tmp_path / "logs" / "pr-3").iterdir())
    assert logs == ["nop.log", "oracle.log", "prepare.log"]  # the bundle's test.sh, twice

    for index, (change, why) in enumerate(_NOT_THIS_TASKS):
        where = tmp_path / f"changed-{index}"
        report = _validate_copy(out, repo, where / "task", where / "logs", 3, change)
        assert report.accepted, (why, report.reason)
        assert not _checks(report)["independent rerun"].detail, why  # run here, not taken
        assert len(report.reruns) == 1, why
