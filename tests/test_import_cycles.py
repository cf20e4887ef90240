"""No import cycles among selfbench's modules: module-level imports and imports inside functions
both count as edges; imports under `if TYPE_CHECKING:` do not (they never run)."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "selfbench"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from (child for item in node.orelse for child in _imports_in(item))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    yield from _imports(node)


def _targets(node: ast.Import | ast.ImportFrom, modules: set[str], here: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = here.split(".")[: len(here.split(".")) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in modules else base


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges = {
            target
            for node in _imports(tree)
            for target in _targets(node, modules, name)
            if target in modules and target != name
        }
        graph[name] = edges
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle (its modules, the first repeated at the end), or none."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return list(error.args[1])
    return []


def test_the_graph_sees_function_level_imports() -> None:
    graph = _graph()
    assert "selfbench.mcp_server" in graph["selfbench.cli"]  # imported inside `_mcp`
    assert "selfbench.run.export" in graph["selfbench.run.driver"]


def test_no_import_cycles() -> None:
    assert _cycle(_graph()) == []


STAGES = ("mine", "draft", "quality", "validate", "export", "evaluate", "review", "run", "cli")
"""The pipeline's stages and its command line: what the environment serves, never imports."""
USE_THE_ENVIRONMENT = ("draft", "quality", "evaluate")
"""Stages that run in the environment and so import it, never validation."""
STAGE_IMPORTS_ALLOWED = {
    ("selfbench.evaluate.agents", "selfbench.validate.harbor"): (
        "Harbor's name pattern: with Harbor's job layout, to `environments/harbor.py`"
    ),
    ("selfbench.evaluate.harbor_trials", "selfbench.validate.harbor"): (
        "Harbor's job layout and `harbor run` arguments: to `environments/harbor.py`"
    ),
}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def test_the_environment_imports_no_stage() -> None:
    found = sorted(
        f"{module} -> {target}"
        for module, targets in _graph().items()
        if _within(module, "selfbench.environments")
        for target in targets
        if any(_within(target, f"selfbench.{stage}") for stage in STAGES)
    )
    assert found == []


def test_the_stages_that_run_tasks_import_the_environment_not_validation() -> None:
    found = sorted(
        (module, target)
        for module, targets in _graph().items()
        if any(_within(module, f"selfbench.{stage}") for stage in USE_THE_ENVIRONMENT)
        for target in targets
        if _within(target, "selfbench.validate")
    )
    assert found == sorted(STAGE_IMPORTS_ALLOWED)
