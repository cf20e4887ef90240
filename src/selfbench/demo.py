"""`selfbench demo`: author one task from an embedded sample repository, end to end."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench import _sample
from selfbench._git import git
from selfbench._sample_history import build_sample_history
from selfbench.audit import AuditReport
from selfbench.bundle.locate import BUNDLE_DIR
from selfbench.compiler import compile_task
from selfbench.contract import AUTHORING_DEFAULTS
from selfbench.submit import submit_task
from selfbench.task import DEFINITION_FILE, TASK_FILES, judge_task, read_authored_task

__all__ = [
    "SampleRepository",
    "audit_task_dir",
    "build_sample_history",
    "build_sample_repository",
    "bundle_tree",
    "run_demo",
    "sample_arguments",
]

_TESTS_PATHSPEC = "tests"
_PROMPT = """\
Our slugs mangle non-English titles: "Grüße aus Köln" currently becomes "gr-e-aus-k-ln".
Please make `slugify` spell accented Latin text in plain ASCII first, the way a German or
Scandinavian reader would expect (ä becomes ae, ß becomes ss, other accents are dropped), and
expose that conversion on its own as `slugkit.transliterate`.

While you are in there, add two keyword-only options to `slugify`: `separator` (default "-";
it must be one or more non-alphanumeric characters, otherwise raise ValueError) and
`max_length` (default None; when set, cut the slug at a word boundary so it fits, cutting the
first word itself only if it alone is too long; values below 1 raise ValueError).
"""


@dataclass(frozen=True, slots=True)
class SampleRepository:
    """The sample repository on disk and the two commits of its pull request."""

    path: Path
    base: str
    head: str


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def build_sample_repository(parent: Path) -> SampleRepository:
    """Create the sample repository with its base commit and its merged change."""
    path = parent / "slugkit"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch=main")
    _write_tree(path, _sample.BASE)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--message", "Initial slugkit")
    base = git(path, "rev-parse", "HEAD").decode().strip()
    _write_tree(path, _sample.CHANGE)
    git(path, "add", "--all")
    git(path, "commit", "--quiet", "--message", f"{_sample.PR_TITLE} (#{_sample.PR_NUMBER})")
    head = git(path, "rev-parse", "HEAD").decode().strip()
    return SampleRepository(path, base, head)


def sample_arguments(repo: SampleRepository) -> dict[str, Any]:
    """The `submit_task` arguments an author would send for the sample's pull request."""
    diff = ("diff", "--binary", "--no-color", "--no-ext-diff", repo.base, repo.head, "--")
    gold = git(repo.path, *diff, ".", f":(exclude){_TESTS_PATHSPEC}")
    tests = git(repo.path, *diff, _TESTS_PATHSPEC)
    definition = {
        "schemaVersion": 1,
        "difficulty": "medium",
        "taskId": f"slugkit-pr-{_sample.PR_NUMBER}",
        "repo": "example/slugkit",
        "baseCommit": repo.base,
        "workdir": ".",
        "setupCommand": (
            "python3 -m venv --system-site-packages .venv"
            " && .venv/bin/python -m pip install --quiet pytest"
        ),
        "testCommand": ".venv/bin/python -m pytest -q {tests}",
        "failToPass": ["tests/test_translit.py", "tests/test_options.py"],
        "passToPass": ["tests/test_core.py"],
        "testPaths": ["tests/test_translit.py", "tests/test_options.py"],
        "toolchains": ["python"],
        "sourcePr": _sample.PR_NUMBER,
        "sourceUrl": f"https://example.com/example/slugkit/pull/{_sample.PR_NUMBER}",
        "prompt": _PROMPT,
        **AUTHORING_DEFAULTS,
    }
    return {
        "definition": definition,
        "testPatch": tests.decode("utf-8"),
        "goldPatch": gold.decode("utf-8"),
    }


def audit_task_dir(task_dir: Path) -> AuditReport:
    """Audit an authored task directory as `selfbench audit` does."""
    task = read_authored_task(task_dir)
    return judge_task(task.loaded, task.test_patch, task.gold_patch).audit


def bundle_tree(bundle: Path) -> list[str]:
    """The bundle's files, one line each: path, mode, size; a hard-linked copy says so."""
    lines = []
    seen: dict[int, str] = {}
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        relative = path.relative_to(bundle).as_posix()
        status = path.stat()
        size = f"{status.st_size:>9,} bytes"
        twin = seen.setdefault(status.st_ino, relative)
        note = f"  (hard link of {twin})" if twin != relative else ""
        lines.append(f"{relative:<34} {status.st_mode & 0o777:o}  {size}{note}")
    return lines


def run_demo(*, keep: bool = False, out: Path | None = None) -> int:
    """Build the sample, author its task, audit and compile it, and say what happened."""
    from selfbench._report import console  # noqa: PLC0415 - only the demo prints this way

    workspace = Path(tempfile.mkdtemp(prefix="selfbench-demo-"))
    try:
        repo = build_sample_repository(workspace)
        console.print(f"[bold]1. sample repository[/]  {repo.path}")
        console.print(
            f"   base {repo.base[:12]}  →  merged PR #{_sample.PR_NUMBER} {repo.head[:12]}"
        )
        arguments = sample_arguments(repo)
        output = workspace / "tasks"
        output.mkdir()
        result = submit_task(arguments, output_root=output)
        task_dir = output / arguments["definition"]["taskId"]
        console.print(f"[bold]2. submit_task[/]  {result}")
        for name in TASK_FILES:
            size = (task_dir / name).stat().st_size
            console.print(f"   {task_dir.name}/{name}  {size:,} bytes")
        report = audit_task_dir(task_dir)
        verdict = "[green]accepted[/]" if report.accepted else f"[red]rejected[/]: {report.reason}"
        console.print(f"[bold]3. static audit[/]  {verdict}")
        console.print(
            f"   {report.implementation_files} implementation files, "
            f"{report.implementation_changed_lines} changed lines, "
            f"{report.test_files} held-out test files"
        )
        for warning in report.warnings:
            console.print(f"   [yellow]warning:[/] {warning}")
        collected = workspace / "out" / task_dir.name
        bundle = collected / BUNDLE_DIR
        compile_task(task_dir, repo=repo.path, out=bundle)
        shutil.copyfile(task_dir / DEFINITION_FILE, collected / DEFINITION_FILE)
        console.print(f"[bold]4. compile[/]  Harbor task at {bundle}")
        for line in bundle_tree(bundle):
            console.print(f"   {line}")
        validation = workspace / "validation.json"
        accepted = _demo_validate(collected, workspace / "logs", validation)
        export_dir = out or Path(tempfile.mkdtemp(prefix="selfbench-demo-export-"))
        _demo_export(repo, collected, validation if validation.is_file() else None, export_dir)
        if keep:
            console.print(f"kept {workspace}")
        return 0 if report.accepted and accepted is not False else 1
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)


def _demo_validate(collected: Path, logs: Path, report: Path) -> bool | None:
    """Step 5: prove the task locally and write the report; None when this machine cannot."""
    from selfbench._report import console  # noqa: PLC0415
    from selfbench.validate import validate  # noqa: PLC0415
    from selfbench.validate.local import LocalOptions, LocalRunner  # noqa: PLC0415
    from selfbench.validate.sandbox import SandboxError, require_sandbox  # noqa: PLC0415

    try:
        require_sandbox()
    except SandboxError as exc:
        console.print(f"[bold]5. validate[/]  skipped: {exc}")
        return None
    console.print("[bold]5. validate[/]  nop, oracle, per selector, rerun (local sandbox)")
    with console.status("   running the bundle's own scripts…"):
        [result] = validate([collected], runner=LocalRunner(LocalOptions(logs=logs)))
    verdict = "[green]accepted[/]" if result.accepted else f"[red]rejected[/]: {result.reason}"
    console.print(f"   {verdict}")
    nop, oracle = result.nop.reward, result.oracle.reward
    if nop is not None and oracle is not None:
        console.print(
            f"   nop: fail-to-pass {'passed' if nop.fail_to_pass else 'failed'}, "
            f"pass-to-pass {'passed' if nop.pass_to_pass else 'failed'};  "
            f"oracle: reward {oracle.reward}"
        )
    for check in result.checks:
        mark = "[green]ok[/]" if check.passed else "[red]failed[/]"
        if not check.ran:
            mark = "[dim]not run[/]"
        console.print(f"   {mark} {check.name}")
    report.write_text(json.dumps([result.to_json()], indent=2) + "\n", encoding="utf-8")
    return result.accepted


def _demo_export(
    repo: SampleRepository, collected: Path, validation: Path | None, directory: Path
) -> None:
    """Step 6: export the run, verify the archive, and say how to review it and run Harbor.

    The export outlives the demo's workspace, in `directory`, so the commands printed can be
    tried.
    """
    from selfbench._report import console  # noqa: PLC0415
    from selfbench.export import RunInfo, export_and_verify  # noqa: PLC0415

    directory.mkdir(parents=True, exist_ok=True)
    out = directory / "slugkit-demo.tar.gz"
    run = RunInfo(
        run_id="demo",
        repository_url="https://example.com/example/slugkit",
        repository_commit=repo.head,
    )
    done = export_and_verify(
        [collected], run=run, out=out, validation=[validation] if validation else None
    )
    manifest = done.verified.manifest
    console.print(f"[bold]6. export[/]  {out}  ({out.stat().st_size:,} bytes)")
    console.print(f"   verified: {manifest.accepted_count} task, every digest and member checked")
    console.print("[bold]next[/]")
    for command in done.next_steps:
        console.print(f"   {command}")
