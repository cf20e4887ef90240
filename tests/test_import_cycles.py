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
