"""The `demo` command of the `selfbench` command line: `selfbench run --author draft` on the
sample history, to a verified export, through the command line's own `main`."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from selfbench._git import git
from selfbench.demo import DEMO_BUDGETS, DEMO_EXPORT, DEMO_SOURCE_URL, build_sample_history
from selfbench.errors import EXIT_INPUT

__all__ = ["run_demo"]


def run_demo(
    main: Callable[[Sequence[str]], int], *, keep: bool = False, out: Path | None = None
) -> int:
    """Build the sample history and run `selfbench run --author draft` on it, to a verified export.

    The export (and, with `keep`, the sample and the run directory) outlive the demo, so the
    commands it prints can be tried. `main` is the command line's (which imports this module).
    Returns `selfbench run`'s exit code (2 when this machine
    cannot run the local sandbox).
    """
    from selfbench.cli.report import console
    from selfbench.environments.local.sandbox import SandboxError, require_sandbox

    workspace = Path(tempfile.mkdtemp(prefix="selfbench-demo-"))
    try:
        repo = build_sample_history(workspace)
        log = git(repo, "log", "--format=%h %s", "--first-parent").decode().strip()
        console.print(f"[bold]1. sample history[/]  {repo}")
        for line in log.splitlines():
            console.print(f"   {line}")
        try:
            require_sandbox()
        except SandboxError as exc:
            console.print(f"[bold]2. selfbench run[/]  skipped: {exc}")
            return EXIT_INPUT
        directory = out or Path(tempfile.mkdtemp(prefix="selfbench-demo-export-"))
        bench = directory / DEMO_EXPORT
        budgets = [item for tier, n in DEMO_BUDGETS.items() for item in (f"--{tier}", str(n))]
        argv = ["run", "--repo", str(repo), *budgets, "--author", "draft"]
        console.print(f"[bold]2. selfbench {' '.join(argv[:1] + argv[3:])}[/]")
        source = ["--source-url", DEMO_SOURCE_URL, "--run-dir", str(workspace / "run")]
        code = main([*argv, "--out", str(bench), *source])
        if bench.is_file():
            verified = main(["verify", str(bench)])
            console.print(f"[bold]3. selfbench verify[/]  {'ok' if verified == 0 else 'FAILED'}")
            code = code if verified == 0 else verified
        if keep:
            console.print(f"kept {workspace}")
        return code
    finally:
        if not keep:
            shutil.rmtree(workspace, ignore_errors=True)
