"""Infer how to build and test a repository at a commit, from its own files.

`infer_environment` reads the commit's tree through git (never a working tree):

1. **Ecosystem** from the test files: `.py` → Python, JavaScript/TypeScript → Node, `_test.go` →
   Go, `.rs` → Rust (the first test file decides).
2. **workdir**: the directory nearest the test files (their common directory, then its parents)
   holding that ecosystem's manifest (`pyproject.toml`/`setup.py`/`setup.cfg`, `package.json`,
   `go.mod`, `Cargo.toml`); `.` when none does.
3. **toolchains, setupCommand, testCommand, runner** by the ecosystem's rules (`_python`,
   `_node`; Go and Rust below), each with where it came from in `sources`.
4. **selfbench.toml** (or `--config`): every key it sets replaces the inferred value, with the
   source `selfbench.toml`; a test command it sets decides the runner unless it names one.

Go and Rust: the setup and test commands their runner's module gives (`selfbench.runners`).

Every inferred test command holds `{tests}` once, as a whole unquoted word, and names no test:
it passes the audit's rules 6 to 8 whatever the selectors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from posixpath import commonpath, dirname, splitext

from selfbench.draft._inferred import Inferred
from selfbench.draft._node import infer_node, node_workdir
from selfbench.draft._python import IMAGE_PYTHONS, infer_python
from selfbench.draft._tree import Tree
from selfbench.draft.config import CONFIG_FILE, CONFIGURE, RUNNERS, DraftConfig
from selfbench.errors import DraftError
from selfbench.runners import RUNNERS as ALL_RUNNERS
from selfbench.runners import Runner, compiled_project, detect, runner_named

__all__ = [
    "FILE_SELECTOR_RUNNERS",
    "OUTCOME_RUNNERS",
    "Environment",
    "infer_environment",
    "matches_globs",
    "selector_of",
]

OUTCOME_RUNNERS = {runner.setting: runner.reads_as for runner in ALL_RUNNERS}
"""Each runner's name in `selfbench.outcomes` (which parser reads its log)."""
FILE_SELECTOR_RUNNERS = frozenset(
    runner.setting for runner in ALL_RUNNERS if runner.names_carry_file
)
"""Runners whose selectors are test files: their test names carry no file."""

_JS_EXTENSIONS = frozenset({".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"})


@dataclass(frozen=True, slots=True)
class Environment:
    """How to build and test the repository: the task definition's commands and toolchains."""

    toolchains: tuple[str, ...]
    setup_command: str
    test_command: str
    runner: str
    """A runner's `selfbench.toml` spelling (`RUNNERS`)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Where each value came from, by definition key (`setupCommand`, …)."""
    workdir: str = "."
    pythons: tuple[str, ...] = ()
    """The image's Pythons the inferred setup may use, its own first, then the older ones a
    draft retries under (empty when the setup command or toolchains are configured)."""


def _ecosystem(test_files: Sequence[str]) -> str | None:
    for path in test_files:
        extension = splitext(path)[1].lower()
        if extension == ".py":
            return "python"
        if extension in _JS_EXTENSIONS:
            return "node"
        if path.endswith("_test.go"):
            return "go"
        if extension == ".rs":
            return "rust"
    return None


_MANIFESTS = {runner.ecosystem: runner.manifests for runner in ALL_RUNNERS}


def _workdir(tree: Tree, ecosystem: str, test_files: Sequence[str]) -> str:
    common = commonpath([dirname(path) or "." for path in test_files]) if test_files else "."
    nearest = tree.nearest(common or ".", _MANIFESTS[ecosystem]) or "."
    return node_workdir(tree, nearest, test_files) if ecosystem == "node" else nearest


def _compiled(runner: Runner, workdir: str) -> Inferred:
    """A Go or Rust project: the setup and test commands its runner gives, from its manifest."""
    manifest = runner.manifests[0]
    source = manifest if workdir == "." else f"{workdir}/{manifest}"
    project = compiled_project(runner)
    return Inferred(
        runner.toolchains,
        project.setup_command,
        project.test_command,
        runner.setting,
        {
            "toolchains": source,
            "setupCommand": source,
            "testCommand": runner.setting,
            "runner": runner.setting,
        },
    )


def _inferred(
    tree: Tree,
    ecosystem: str,
    workdir: str,
    test_files: Sequence[str],
    pythons: tuple[Mapping[str, str], str | None],
) -> Inferred:
    if ecosystem == "python":
        return infer_python(tree, workdir, test_files, local=pythons[0], python=pythons[1])
    if ecosystem == "node":
        return infer_node(tree, workdir, test_files)
    runner = next(runner for runner in ALL_RUNNERS if runner.ecosystem == ecosystem)
    return _compiled(runner, workdir)


def _runner_of(command: str) -> str | None:
    found = detect(command)
    return None if found is None else found.setting


def _complete(config: DraftConfig) -> bool:
    return bool(config.toolchains and config.setupCommand and config.testCommand)


def infer_environment(
    repo: Path,
    commit: str,
    test_files: Sequence[str],
    config: DraftConfig | None,
    *,
    config_source: str = CONFIG_FILE,
    local_pythons: Mapping[str, str] = IMAGE_PYTHONS,
    python: str | None = None,
) -> Environment:
    """The environment the tests need at `commit`, from the repository's files and `config`.

    `test_files` are repository paths (the split's `test_files`); `local_pythons` maps the
    local sandbox's Python commands (`python3.11`) to the `major.minor` each runs (default the
    image's); `python` (`3.11`, one of an earlier result's `pythons`) replaces the inferred
    interpreter.

    Raises:
        DraftError: the ecosystem or runner cannot be inferred and `config` does not say.
        GitError: the commit is unknown or git failed.
    """
    config = config or DraftConfig()
    tree = Tree(repo, commit)
    ecosystem = _ecosystem(test_files)
    if ecosystem is None and not _complete(config):
        listed = ", ".join(test_files) or "none"
        raise DraftError(
            f"cannot infer how to run the tests: no Python, JavaScript, Go or Rust test file "
            f"among {listed} (set toolchains, setupCommand and testCommand {CONFIGURE})"
        )
    workdir = config.workdir or (_workdir(tree, ecosystem, test_files) if ecosystem else ".")
    if _complete(config):
        base = Inferred((), "", "", "", {})
    else:
        assert ecosystem is not None  # noqa: S101 - refused above
        base = _inferred(tree, ecosystem, workdir, test_files, (local_pythons, python))
    return _override(base, workdir, config, config_source)


def _override(base: Inferred, workdir: str, config: DraftConfig, source: str) -> Environment:
    sources = dict(base.sources)
    sources["workdir"] = source if config.workdir else "the test files' nearest project"
    for key in ("toolchains", "setupCommand", "testCommand", "runner"):
        if getattr(config, key) is not None:
            sources[key] = source
    test_command = config.testCommand or base.test_command
    runner = (
        config.runner
        or (_runner_of(config.testCommand) if config.testCommand else None)
        or base.runner
    )
    if not runner:
        raise DraftError(
            f"cannot tell the runner of the test command {test_command!r}: set runner in "
            f"{source} (one of {', '.join(RUNNERS)})"
        )
    if config.testCommand and not config.runner:
        sources["runner"] = f"{source} testCommand"
    return Environment(
        toolchains=config.toolchains or base.toolchains,
        setup_command=config.setupCommand or base.setup_command,
        test_command=test_command,
        runner=runner,
        sources=sources,
        workdir=workdir,
        pythons=() if config.setupCommand or config.toolchains else base.pythons,
    )


def _glob_re(pattern: str) -> re.Pattern[str]:
    """A path glob: `**/` any directories, `**` anything, `*` and `?` within one component."""
    out = []
    at = 0
    while at < len(pattern):
        if pattern.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
        elif pattern.startswith("**", at):
            out.append(".*")
            at += 2
        else:
            char = pattern[at]
            out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
            at += 1
    return re.compile("".join(out), re.DOTALL)


def matches_globs(path: str, patterns: Sequence[str]) -> bool:
    """Whether a path matches one of `selfbench.toml`'s `testPaths` or `exclude` globs."""
    return any(_glob_re(pattern).fullmatch(path) for pattern in patterns)


def selector_of(runner: str, test_name: str) -> str:
    """The selector that runs one test, from the name `selfbench.outcomes` reports for it.

    pytest and unittest: the node id itself. jest, vitest, node-test, bun: the test's file, from
    a name `file > describe > test` (the file part given by whoever ran the file). go: the
    `-run` pattern of the test (`pkg/TestX/case` or `TestX/case` → `^TestX$/^case$`). cargo:
    the test's full name, for `--exact`.

    Raises:
        DraftError: an unknown runner, or a name that does not say what the runner needs.
    """
    known = runner_named(runner)
    if known is None:
        raise DraftError(f"unknown runner {runner!r} (one of {', '.join(RUNNERS)})")
    return known.selector(test_name)
