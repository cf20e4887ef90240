"""Python: a virtual environment with the project's test dependencies, and pytest.

* `uv.lock` beside (or above) the project: `uv sync --frozen --no-default-groups` with the
  project's test dependency group and test extra; tests run by `uv run --frozen --no-sync`.
* otherwise a venv and pip: the project itself, editable, with its test extra (when it declares
  a build system, a `setup.py` or a `setup.cfg`), the test requirement files, the test
  dependency group's requirements (PEP 735, read here so any pip installs them), Poetry's test
  group, and pytest.

The runner is pytest; `unittest` when nothing mentions pytest and the test files import
unittest (their tests are still run by pytest, which collects `TestCase` classes).
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Sequence
from posixpath import join
from typing import Any

from selfbench.draft._inferred import Inferred, in_directory, shell_words
from selfbench.draft._tree import Tree
from selfbench.toolchains.versions import DEFAULT_PYTHON, PYTHON_VERSIONS

__all__ = ["PYTHON_MANIFESTS", "infer_python"]

PYTHON_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_TEST_SETS = ("test", "tests", "testing", "dev")
_TEST_REQUIREMENTS = (
    "requirements-test.txt", "requirements_test.txt", "requirements-tests.txt",
    "test-requirements.txt", "test_requirements.txt", "requirements/test.txt",
    "requirements/tests.txt", "requirements/testing.txt", "tests/requirements.txt",
)  # fmt: skip
_DEV_REQUIREMENTS = (
    "requirements-dev.txt", "requirements_dev.txt", "dev-requirements.txt",
    "requirements/dev.txt",
)  # fmt: skip
"""Read only when no test requirements file exists: they often pull in linters and docs."""
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PYTEST_TEST_COMMAND = "-m pytest -rA {tests}"
# Extension modules built at setup hold the base's sources: the tests rebuild them first, and run
# whatever the build says (a project with a pure-Python fallback still tests something).
_REBUILD = ".venv/bin/python setup.py --quiet build_ext --inplace"
_EXTRA_KEY_RE = re.compile(r"""['"]([\w.-]+)['"]\s*:""")
_FACTOR_RE = re.compile(r"^[\w,{}-]+:\s+")
_CLAUSE_RE = re.compile(r"\s*(~=|==|!=|<=|>=|<|>)\s*(\d+)(?:\.(\d+))?(\.\*)?[\w.]*\s*")
_UNITTEST_RE = re.compile(r"^\s*(?:import unittest|from unittest\b)", re.MULTILINE)


def _table(document: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    value: Any = document or {}
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _test_set(table: dict[str, Any]) -> str | None:
    """The first of `test`, `tests`, `testing`, `dev` that the table names."""
    return next((name for name in _TEST_SETS if isinstance(table.get(name), list)), None)


def _group(groups: dict[str, Any], name: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """A PEP 735 group's requirement strings, its `include-group`s expanded (cycles cut)."""
    found: list[str] = []
    for item in groups.get(name) or ():
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            included = item["include-group"]
            if included not in seen:
                found.extend(_group(groups, included, seen | {name}))
    return found


def _requirement_name(requirement: str) -> str:
    match = _NAME_RE.match(requirement.strip())
    return match.group(0).lower().replace("_", "-") if match else ""


def _mentions_pytest(tree: Tree, workdir: str, pyproject: dict[str, Any] | None) -> str | None:
    """Where the project says it uses pytest, or None."""
    if _table(pyproject, "tool", "pytest"):
        return "pyproject.toml [tool.pytest]"
    for name, marker in (
        ("pytest.ini", ""),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
    ):
        text = tree.text(join(workdir, name))
        if text is not None and marker in text:
            return name
    if any(path.rsplit("/", 1)[-1] == "conftest.py" for path in tree.files()):
        return "conftest.py"
    return None


class _Plan:
    """The pip or uv arguments gathered so far, and where each came from."""

    def __init__(self) -> None:
        self.requirements: list[str] = []
        self.options: list[str] = []
        self.sources: list[str] = []
        self.installable = False

    def names(self) -> set[str]:
        return {_requirement_name(r) for r in self.requirements}


def _pip_plan(tree: Tree, workdir: str, pyproject: dict[str, Any] | None) -> _Plan:
    plan = _Plan()
    extra = _project(tree, workdir, pyproject, plan)
    _groups(pyproject, plan)
    if not plan.requirements and not extra:
        _tox_deps(tree, workdir, plan)
    files = [name for name in _TEST_REQUIREMENTS if tree.has(join(workdir, name))]
    if not files:
        files = [name for name in _DEV_REQUIREMENTS if tree.has(join(workdir, name))][:1]
    if not plan.installable and tree.has(join(workdir, "requirements.txt")):
        files.insert(0, "requirements.txt")
    for name in files:
        plan.options.extend(["-r", name])
        plan.sources.append(name)
    return plan


def _project(tree: Tree, workdir: str, pyproject: dict[str, Any] | None, plan: _Plan) -> str | None:
    """The project itself (editable, with its test extra) or its test extra's requirements."""
    plan.installable = bool(_table(pyproject, "build-system")) or any(
        tree.has(join(workdir, name)) for name in ("setup.py", "setup.cfg")
    )
    extras = _table(pyproject, "project", "optional-dependencies")
    extra = _test_set(extras)
    source = f"pyproject.toml [project.optional-dependencies].{extra}"
    if extra is None and plan.installable:
        extra, source = _legacy_extra(tree, workdir)
    if plan.installable:
        plan.options.extend(["-e", f".[{extra}]" if extra else "."])
        plan.sources.append(source if extra else "the project")
    elif extra:
        plan.requirements.extend(str(r) for r in extras[extra] if isinstance(r, str))
        plan.sources.append(source)
    return extra


def _groups(pyproject: dict[str, Any] | None, plan: _Plan) -> None:
    """The test dependency group (PEP 735) or Poetry's test group."""
    groups = _table(pyproject, "dependency-groups")
    group = _test_set(groups)
    if group:
        plan.requirements.extend(_group(groups, group))
        plan.sources.append(f"pyproject.toml [dependency-groups].{group}")
    poetry = _table(pyproject, "tool", "poetry", "group")
    for name in _TEST_SETS:
        dependencies = _table(poetry, name, "dependencies")
        if dependencies:
            plan.requirements.extend(sorted(k for k in dependencies if k != "python"))
            plan.sources.append(f"pyproject.toml [tool.poetry.group.{name}.dependencies]")
            return


def _legacy_extra(tree: Tree, workdir: str) -> tuple[str | None, str]:
    """The test extra in `setup.cfg` (`[options.extras_require]`) or `setup.py`."""
    config = _ini(tree.text(join(workdir, "setup.cfg")))
    if config is not None and config.has_section("options.extras_require"):
        extra = _test_set({key: [] for key in config.options("options.extras_require")})
        if extra:
            return extra, f"setup.cfg [options.extras_require] {extra}"
    text = tree.text(join(workdir, "setup.py")) or ""
    if "extras_require" in text:
        named = set(_EXTRA_KEY_RE.findall(text.split("extras_require", 1)[1]))
        extra = next((name for name in _TEST_SETS if name in named), None)
        if extra:
            return extra, f"setup.py extras_require {extra}"
    return None, ""


def _ini(text: str | None) -> configparser.ConfigParser | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _tox_deps(tree: Tree, workdir: str, plan: _Plan) -> None:
    """`tox.ini`'s `[testenv] deps`, for a project that says nowhere else what its tests need."""
    config = _ini(tree.text(join(workdir, "tox.ini")))
    if config is None or not config.has_option("testenv", "deps"):
        return
    found = False
    for raw in config.get("testenv", "deps").splitlines():
        line = raw.split("#", 1)[0].strip()
        line = _FACTOR_RE.sub("", line).replace("{toxinidir}/", "")
        if line.startswith("-r") and "{" not in line:
            plan.options.extend(["-r", line[2:].strip()])
            found = True
        elif line and not line.startswith("-") and "{" not in line:
            plan.requirements.append(line)
            found = True
    if found:
        plan.sources.append("tox.ini [testenv] deps")


def _uv_setup(pyproject: dict[str, Any] | None) -> tuple[list[str], list[str], bool]:
    """`uv sync` words, their sources, and whether pytest is among what they install."""
    words = ["uv", "sync", "--frozen", "--no-default-groups"]
    sources = ["uv.lock"]
    installed: list[str] = list(_table(pyproject, "project").get("dependencies") or ())
    groups = _table(pyproject, "dependency-groups")
    group = _test_set(groups)
    if group:
        words.extend(["--group", group])
        sources.append(f"pyproject.toml [dependency-groups].{group}")
        installed.extend(_group(groups, group))
    extras = _table(pyproject, "project", "optional-dependencies")
    extra = _test_set(extras)
    if extra:
        words.extend(["--extra", extra])
        sources.append(f"pyproject.toml [project.optional-dependencies].{extra}")
        installed.extend(r for r in extras[extra] if isinstance(r, str))
    has_pytest = "pytest" in {_requirement_name(str(r)) for r in installed}
    return words, sources, has_pytest


def _allows(clause: str, version: tuple[int, int]) -> bool:
    """Whether a `requires-python` clause admits a Python `major.minor` (patch releases aside)."""
    match = _CLAUSE_RE.fullmatch(clause)
    if match is None:
        return True  # a clause this reader does not know restricts nothing it can tell
    op, bound = match[1], (int(match[2]), int(match[3] or 0))
    checks = {
        "~=": version >= bound,
        ">=": version >= bound,
        ">": version > bound,
        "<=": version <= bound,
        "<": version < bound,
        "==": version == bound,
        "!=": version != bound or match[4] is None,  # only `!=3.11.*` excludes a whole minor
    }
    return checks[op]


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


def python_for(requires: object) -> str:
    """The image's Python (`3.12`) that meets `requires-python`: the default when it does."""
    if not isinstance(requires, str):
        return DEFAULT_PYTHON
    clauses = [clause for clause in requires.split(",") if clause.strip()]
    fitting = [v for v in PYTHON_VERSIONS if all(_allows(c, _minor(v)) for c in clauses)]
    if not fitting or DEFAULT_PYTHON in fitting:
        return DEFAULT_PYTHON
    return fitting[-1]


def _builds_extensions(tree: Tree, workdir: str) -> bool:
    """Whether `setup.py` compiles extension modules (a gold patch may change their sources)."""
    text = tree.text(join(workdir, "setup.py")) or ""
    return "ext_modules" in text or "Extension(" in text


def _runner(
    tree: Tree, workdir: str, pyproject: dict[str, Any] | None, test_files: Sequence[str]
) -> tuple[str, str]:
    said = _mentions_pytest(tree, workdir, pyproject)
    if said is not None:
        return "pytest", said
    for path in test_files:
        text = tree.text(path)
        if text is not None and _UNITTEST_RE.search(text):
            return "unittest", f"{path} imports unittest (run through pytest)"
    return "pytest", "default for Python"


def infer_python(tree: Tree, workdir: str, test_files: Sequence[str]) -> Inferred:
    """The Python environment of the project at `workdir`."""
    pyproject = tree.toml(join(workdir, "pyproject.toml"))
    runner, runner_source = _runner(tree, workdir, pyproject, test_files)
    test_source = runner_source if runner == "pytest" else f"{runner} through pytest"
    lock = tree.nearest(workdir, ("uv.lock",))
    if lock is not None:
        words, sources, has_pytest = _uv_setup(pyproject)
        setup = in_directory(shell_words(words), lock, workdir)
        if not has_pytest:
            setup += " && uv pip install pytest"
            sources.append("pytest")
        test = f"uv run --frozen --no-sync python {_PYTEST_TEST_COMMAND}"
        toolchains: tuple[str, ...] = ("python", "uv")
    else:
        plan = _pip_plan(tree, workdir, pyproject)
        if "pytest" not in plan.names():
            plan.requirements.append("pytest")
            plan.sources.append("pytest")
        compiled = _builds_extensions(tree, workdir)
        if compiled:
            plan.requirements.append("setuptools")  # to rebuild offline, when the tests run
        pip = [".venv/bin/python", "-m", "pip", "install", *plan.options, *plan.requirements]
        version = python_for(_table(pyproject, "project").get("requires-python"))
        python = "python3" if version == DEFAULT_PYTHON else f"python{version}"
        setup = f"{python} -m venv .venv && {shell_words(pip)}"
        sources = plan.sources
        test = f".venv/bin/python {_PYTEST_TEST_COMMAND}"
        if compiled:
            test = f"{_REBUILD}; {test}"
            test_source += "; setup.py builds extensions: rebuilt in place first"
        toolchains = ("python",)
    return Inferred(
        toolchains=toolchains,
        setup_command=setup,
        test_command=test,
        runner=runner,
        sources={
            "toolchains": "uv.lock" if lock is not None else "pyproject.toml / setup.py",
            "setupCommand": ", ".join(dict.fromkeys(sources)),
            "testCommand": test_source,
            "runner": runner_source,
        },
    )
