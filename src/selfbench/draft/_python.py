"""Python: a virtual environment with the project's test dependencies, and pytest.

* `uv.lock` beside (or above) the project: `uv sync --frozen --no-default-groups` with the
  project's test dependency group and test extra; tests run by `uv run --frozen --no-sync`.
* otherwise a venv and pip: the project itself, editable, with its test extra (when it declares
  a build system, a `setup.py` or a `setup.cfg`), `requirements.txt`, the test requirement files
  (`requirements-test.txt`, `test_requirements.txt`, `requirements/tests.txt`, …; the first dev
  one, `requirements-dev.txt` or `requirements/dev.txt`, when there is none; never one naming
  another Python, `-py27`), the test dependency group's requirements (PEP 735, read here so any
  pip installs them), Poetry's test group, and pytest. The extras `tox.ini`'s `[testenv]
  extras` names for the chosen Python are installed with the test extra. `tox.ini`'s `[testenv]
  deps` are read when nothing else names a test requirement: the unconditional lines and the
  factor-conditional ones (`py3: ipython`) that hold for the chosen Python, never one line per
  factor flattened.

A project that takes its version from git tags (setuptools-scm or hatch-vcs in its build
requirements) gets the nearest tag's release as `SETUPTOOLS_SCM_PRETEND_VERSION`: the task's
snapshot has no tags, and version 0.1.dev1 is below what the project's own test dependencies
require of it (pytest's plugins of pytest, pytest of pluggy).

The runner is pytest; `unittest` when nothing mentions pytest and the test files import
unittest (their tests are still run by pytest, which collects `TestCase` classes).

uv resolves what it adds beside `uv sync` (pytest) as of the base commit's date (its committer
date, UTC; not before the runner's `package_floor`, whose pytest runs on the image's Pythons),
which the setup command states: `uv pip install --exclude-newer DATE`; `uv.lock` already pins
the rest.
pip's installs are not dated: its `--uploaded-prior-to` needs pip 26 (a download in every
setup), and it does not filter local indexes and `--find-links` directories. The runner's
package is kept below its first major release published after the base commit's date
(`pytest<8` for a commit of 2023): a newer major turns the deprecations the tests were written
against into errors, which a project's `filterwarnings = error` makes collection errors.

The interpreter (pip projects, `pythons_for`) is the image's default, `python3` (3.12), whenever
`requires-python` admits it and no pinned test dependency is known not to run on it
(`_too_old`); else the newest of the image's Pythons that both allow and the local sandbox has
(`local`: its Python commands and the version each runs); else the default. `Inferred.pythons`
lists it, then the older admitted ones the sandbox has: a draft retries under the next when the
changed test files cannot be collected.
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from posixpath import dirname, join, normpath
from typing import Final

from selfbench._json import iterated, table
from selfbench.draft._inferred import Inferred, in_directory, shell_words
from selfbench.draft._pip_files import requirement_files, tox_lines
from selfbench.draft._tree import TomlDocument, Tree
from selfbench.runners import RUNNERS, Runner, package_ceiling, python_project
from selfbench.toolchains.versions import DEFAULT_PYTHON, PYTHON_VERSIONS

__all__ = [
    "IMAGE_PYTHONS",
    "PYTHON_MANIFESTS",
    "infer_python",
    "python_command",
    "python_for",
    "pythons_for",
    "setup_cfg_requirements",
    "setup_py_requirements",
]

PYTHON_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_TEST_SETS = ("test", "tests", "testing", "dev")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_RUNNERS = tuple(runner for runner in RUNNERS if runner.ecosystem == "python")
_DEFAULT = next(runner for runner in _RUNNERS if runner.reads_as == runner.name)
"""Python's runner unless the tests say otherwise; every Python runner runs through it."""
_PROJECT = python_project(_DEFAULT)
_BY_IMPORT = tuple(
    (re.compile(python_project(runner).import_pattern), runner)
    for runner in _RUNNERS
    if python_project(runner).import_pattern
)
# Extension modules built at setup hold the base's sources: the tests rebuild them first, and run
# whatever the build says (a project with a pure-Python fallback still tests something).
_REBUILD = ".venv/bin/python setup.py --quiet build_ext --inplace"
_EXTRA_KEY_RE = re.compile(r"""['"]([\w.-]+)['"]\s*:""")
_CLAUSE_RE = re.compile(r"\s*(~=|==|!=|<=|>=|<|>)\s*(\d+)(?:\.(\d+))?(\.\*)?[\w.]*\s*")
_PIN_RE = re.compile(r"\s*(==|<=|<|~=)\s*(\d+(?:\.\d+)*)(?:\.\*)?\s*")
_TOO_OLD: Final = tuple(
    dict.fromkeys(
        (project.package, first, python)
        for project in map(python_project, _RUNNERS)
        for first, python in project.package_too_old
    )
)
"""(distribution, its first release that runs on the Python, that Python): each Python runner's
package's (`PythonProject.package_too_old`)."""
_MAX_INCLUDES = 3
IMAGE_PYTHONS: Final = {
    "python3": DEFAULT_PYTHON,
    **{f"python{version}": version for version in PYTHON_VERSIONS},
}
"""The image's Python commands and the version each runs (the Harbor image has them all)."""


def _test_set(table: Mapping[str, object]) -> str | None:
    """The first of `test`, `tests`, `testing`, `dev` that the table names."""
    return next((name for name in _TEST_SETS if isinstance(table.get(name), list)), None)


def _group(
    groups: Mapping[str, object], name: str, seen: frozenset[str] = frozenset()
) -> list[str]:
    """A PEP 735 group's requirement strings, its `include-group`s expanded (cycles cut)."""
    found: list[str] = []
    for item in iterated(groups.get(name)):
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


def _mentions(
    runner: Runner, tree: Tree, workdir: str, pyproject: TomlDocument | None
) -> str | None:
    """Where the project says it uses the runner, or None."""
    project = python_project(runner)
    if project.tool_table and table(pyproject, "tool", project.tool_table):
        return f"pyproject.toml [tool.{project.tool_table}]"
    for name, marker in project.mentions:
        text = tree.text(join(workdir, name))
        if text is not None and marker in text:
            return name
    for marker_file in project.marker_files:
        if any(path.rsplit("/", 1)[-1] == marker_file for path in tree.files()):
            return marker_file
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


def _pip_plan(tree: Tree, workdir: str, pyproject: TomlDocument | None, version: str) -> _Plan:
    """What pip installs for the tests under Python `version` (`3.12`)."""
    plan = _Plan()
    extra = _project(tree, workdir, pyproject, plan, version)
    _groups(pyproject, plan)
    if not plan.requirements and not extra:
        _tox_deps(tree, workdir, plan, version)
    files = requirement_files(tree.files(), workdir, version)
    if tree.has(join(workdir, "requirements.txt")):
        files.insert(0, "requirements.txt")
    read = {normpath(plan.options[at + 1]) for at, word in enumerate(plan.options) if word == "-r"}
    for name in files:
        if name not in read:
            plan.options.extend(["-r", name])
            plan.sources.append(name)
    return plan


def _project(
    tree: Tree, workdir: str, pyproject: TomlDocument | None, plan: _Plan, version: str
) -> str | None:
    """The project itself (editable, with its test extra and the extras its tox environment
    installs under Python `version`) or its test extra's requirements."""
    plan.installable = bool(table(pyproject, "build-system")) or any(
        tree.has(join(workdir, name)) for name in ("setup.py", "setup.cfg")
    )
    extras = table(pyproject, "project", "optional-dependencies")
    extra = _test_set(extras)
    source = f"pyproject.toml [project.optional-dependencies].{extra}"
    if extra is None and plan.installable:
        extra, source = _legacy_extra(tree, workdir)
    if plan.installable:
        more = [name for name in _tox_extras(tree, workdir, version) if name != extra]
        chosen = ",".join([*([extra] if extra else []), *more])
        plan.options.extend(["-e", f".[{chosen}]" if chosen else "."])
        plan.sources.append(source if extra else "the project")
        if more:
            plan.sources.append(f"tox.ini [testenv] extras {','.join(more)}")
    elif extra:
        plan.requirements.extend(str(r) for r in iterated(extras[extra]) if isinstance(r, str))
        plan.sources.append(source)
    return extra


def _groups(pyproject: TomlDocument | None, plan: _Plan) -> None:
    """The test dependency group (PEP 735) or Poetry's test group."""
    groups = table(pyproject, "dependency-groups")
    group = _test_set(groups)
    if group:
        plan.requirements.extend(_group(groups, group))
        plan.sources.append(f"pyproject.toml [dependency-groups].{group}")
    poetry = table(pyproject, "tool", "poetry", "group")
    for name in _TEST_SETS:
        dependencies = table(poetry, name, "dependencies")
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
    named = _setup_py_extras(tree.text(join(workdir, "setup.py")) or "")
    extra = next((name for name in _TEST_SETS if name in named), None)
    if extra:
        return extra, f"setup.py extras_require {extra}"
    return None, ""


def _setup_py_extras(text: str) -> set[str]:
    """The extras `setup.py` names: the keys of `extras_require={...}` (or `dict(...)`), or of
    the module-level dict it passes by name (`extras_require=EXTRAS_REQUIRE`). A file Python
    cannot parse is read for the quoted keys after `extras_require`."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        _, found, tail = text.partition("extras_require")
        return set(_EXTRA_KEY_RE.findall(tail)) if found else set()
    value = _setup_keyword(module, "extras_require")
    return _dict_keys(value) if value is not None else set()


def _setup_keyword(module: ast.Module, name: str) -> ast.expr | None:
    """The value of the first `name=` keyword argument in a `setup.py`, a module-level name it
    passes (`extras_require=EXTRAS_REQUIRE`) replaced by what the module assigns it."""
    assigned = {
        target.id: node.value
        for node in module.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(module):
        if isinstance(node, ast.keyword) and node.arg == name:
            value = node.value
            return assigned.get(value.id, value) if isinstance(value, ast.Name) else value
    return None


def _strings(value: ast.expr | None) -> list[str]:
    """The string constants of a list or tuple literal."""
    if not isinstance(value, ast.List | ast.Tuple):
        return []
    return [
        item.value
        for item in value.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]


def setup_py_requirements(text: str) -> tuple[str, ...]:
    """The requirement strings a `setup.py` declares: its `install_requires` list, then each
    `extras_require` list, as literals (or module-level names bound to literals); nothing when
    Python cannot parse the file."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    found = _strings(_setup_keyword(module, "install_requires"))
    extras = _setup_keyword(module, "extras_require")
    if isinstance(extras, ast.Dict):
        for value in extras.values:
            found.extend(_strings(value))
    return tuple(found)


def setup_cfg_requirements(text: str) -> tuple[str, ...]:
    """The requirement strings a `setup.cfg` declares: `[options] install_requires`, then each
    `[options.extras_require]` entry, one a line (comments dropped); nothing when unreadable."""
    config = _ini(text)
    if config is None:
        return ()
    values = [config.get("options", "install_requires", fallback="")]
    if config.has_section("options.extras_require"):
        values.extend(value for _, value in config.items("options.extras_require"))
    lines = (line.split("#", 1)[0].strip() for value in values for line in value.splitlines())
    return tuple(line for line in lines if line)


def _dict_keys(value: ast.expr) -> set[str]:
    """The string keys of a dict literal or a `dict(name=...)` call."""
    if isinstance(value, ast.Dict):
        return {
            key.value
            for key in value.keys
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        return {keyword.arg for keyword in value.keywords if keyword.arg is not None}
    return set()


def _ini(text: str | None) -> configparser.ConfigParser | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _tox_extras(tree: Tree, workdir: str, version: str) -> list[str]:
    """The extras `tox.ini`'s `[testenv]` installs under Python `version` (`extras =
    tests,reco`: marshmallow's tests import simplejson from its `reco` extra)."""
    config = _ini(tree.text(join(workdir, "tox.ini")))
    if config is None or not config.has_option("testenv", "extras"):
        return []
    lines, _ = tox_lines(config.get("testenv", "extras"), version)
    names = (name.strip() for line in lines for name in line.split(","))
    return list(dict.fromkeys(name for name in names if _NAME_RE.fullmatch(name)))


def _tox_deps(tree: Tree, workdir: str, plan: _Plan, version: str) -> None:
    """`tox.ini`'s `[testenv] deps`, for a project that says nowhere else what its tests need:
    the lines that hold under Python `version` (`tox_lines`)."""
    config = _ini(tree.text(join(workdir, "tox.ini")))
    if config is None or not config.has_option("testenv", "deps"):
        return
    lines, factored = tox_lines(config.get("testenv", "deps"), version)
    found = False
    for line in (line.replace("{toxinidir}/", "") for line in lines):
        if line.startswith("-r") and "{" not in line:
            plan.options.extend(["-r", line[2:].strip()])
            found = True
        elif line and not line.startswith("-") and "{" not in line:
            plan.requirements.append(line)
            found = True
    if found:
        note = f" (factors of Python {version})" if factored else ""
        plan.sources.append(f"tox.ini [testenv] deps{note}")


def _uv_setup(pyproject: TomlDocument | None) -> tuple[list[str], list[str], bool]:
    """`uv sync` words, their sources, and whether pytest is among what they install."""
    words = ["uv", "sync", "--frozen", "--no-default-groups"]
    sources = ["uv.lock"]
    installed = list(iterated(table(pyproject, "project").get("dependencies")))
    groups = table(pyproject, "dependency-groups")
    group = _test_set(groups)
    if group:
        words.extend(["--group", group])
        sources.append(f"pyproject.toml [dependency-groups].{group}")
        installed.extend(_group(groups, group))
    extras = table(pyproject, "project", "optional-dependencies")
    extra = _test_set(extras)
    if extra:
        words.extend(["--extra", extra])
        sources.append(f"pyproject.toml [project.optional-dependencies].{extra}")
        installed.extend(r for r in iterated(extras[extra]) if isinstance(r, str))
    has_runner = _PROJECT.package in {_requirement_name(str(r)) for r in installed}
    return words, sources, has_runner


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


def _admitted(requires: object) -> list[str]:
    """The image's Pythons `requires-python` admits (all of them when it admits none)."""
    if not isinstance(requires, str):
        return list(PYTHON_VERSIONS)
    clauses = [clause for clause in requires.split(",") if clause.strip()]
    fitting = [v for v in PYTHON_VERSIONS if all(_allows(c, _minor(v)) for c in clauses)]
    return fitting or list(PYTHON_VERSIONS)


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _below(clause: str, first: tuple[int, ...]) -> bool:
    """Whether a specifier clause admits only releases older than `first`."""
    match = _PIN_RE.fullmatch(clause)
    if match is None:
        return False
    op, version = match[1], _release(match[2])
    if op == "~=" and len(version) > 1:
        return (*version[:-2], version[-2] + 1) <= first
    return version <= first if op == "<" else version < first


def python_ceiling(requirements: Sequence[str]) -> tuple[tuple[int, int], str] | None:
    """The oldest Python a pinned requirement does not run on (`_TOO_OLD`), and that
    requirement; None when none is known."""
    found: list[tuple[tuple[int, int], str]] = []
    for requirement in requirements:
        name = _requirement_name(requirement)
        specifier = requirement.strip()[len(name) :].split(";", 1)[0]
        for distribution, first, python in _TOO_OLD:
            if name == distribution and any(_below(c, first) for c in specifier.split(",")):
                found.append((python, " ".join(requirement.split())))
    return min(found) if found else None


def python_command(version: str) -> str:
    """The command that runs one of the image's Pythons: `python3` for the default."""
    return "python3" if version == DEFAULT_PYTHON else f"python{version}"


def pythons_for(
    requires: object,
    *,
    requirements: Sequence[str] = (),
    local: Mapping[str, str] = IMAGE_PYTHONS,
) -> tuple[tuple[str, ...], str]:
    """The image's Pythons to try, the chosen one first, and why it (see the module docstring).

    `local` maps the sandbox's Python commands (`python3.11`) to the `major.minor` each runs.
    """
    admitted = _admitted(requires)
    why = f"requires-python {requires}" if isinstance(requires, str) else "no requires-python"
    ceiling = python_ceiling(requirements)
    fitting = admitted
    if ceiling is not None:
        # none runs the pinned dependency: the oldest admitted comes nearest
        fitting = [v for v in admitted if _minor(v) < ceiling[0]] or admitted[:1]
        why += f"; {ceiling[1]} does not run on Python {'.'.join(map(str, ceiling[0]))}+"
    here = [v for v in PYTHON_VERSIONS if local.get(f"python{v}") == v]
    first = DEFAULT_PYTHON
    if DEFAULT_PYTHON not in fitting:
        present = [v for v in fitting if v in here]
        if present:
            first = present[-1]
        else:
            why += f"; the local sandbox has no Python {' or '.join(fitting)}: the default"
    tried = {local.get(python_command(first))}
    chosen = [first]
    for version in reversed(admitted):
        if _minor(version) < _minor(first) and version in here and version not in tried:
            chosen.append(version)
            tried.add(version)
    return tuple(chosen), why


def python_for(requires: object, *, requirements: Sequence[str] = ()) -> str:
    """The image's Python (`3.12`) to create the venv with in the image: `pythons_for`'s first."""
    return pythons_for(requires, requirements=requirements)[0][0]


def _builds_extensions(tree: Tree, workdir: str) -> bool:
    """Whether `setup.py` compiles extension modules (a gold patch may change their sources)."""
    text = tree.text(join(workdir, "setup.py")) or ""
    return "ext_modules" in text or "Extension(" in text


def _runner(
    tree: Tree, workdir: str, pyproject: TomlDocument | None, test_files: Sequence[str]
) -> tuple[Runner, str]:
    said = _mentions(_DEFAULT, tree, workdir, pyproject)
    if said is not None:
        return _DEFAULT, said
    for path in test_files:
        text = tree.text(path)
        for pattern, runner in _BY_IMPORT:
            if text is not None and pattern.search(text):
                return runner, f"{path} imports {runner.name} (run through {runner.reads_as})"
    return _DEFAULT, "default for Python"


def _requirement_lines(
    tree: Tree, workdir: str, plan: _Plan, pyproject: TomlDocument | None
) -> list[str]:
    """The plan's requirements, the test extra's and those of its requirement files (their
    `-r` and `-c` too, a few levels deep)."""
    lines = list(plan.requirements)
    extras = table(pyproject, "project", "optional-dependencies")
    extra = _test_set(extras)
    if extra is not None:
        lines.extend(str(r) for r in iterated(extras[extra]) if isinstance(r, str))
    pending = [plan.options[at + 1] for at, word in enumerate(plan.options[:-1]) if word == "-r"]
    seen: set[str] = set()
    for _ in range(_MAX_INCLUDES):
        included: list[str] = []
        for name in pending:
            path = normpath(join(workdir, name))
            if path in seen:
                continue
            seen.add(path)
            for raw in (tree.text(path) or "").splitlines():
                line = raw.split(" #", 1)[0].strip()
                if line.startswith(("-r", "-c")):
                    included.append(join(dirname(name), line[2:].strip()))
                elif line and not line.startswith(("-", "#")):
                    lines.append(line)
        pending = included
    return lines


def _uv(tree: Tree, workdir: str, lock: str, pyproject: TomlDocument | None) -> Inferred:
    words, sources, has_runner = _uv_setup(pyproject)
    setup = in_directory(shell_words(words), lock, workdir)
    if not has_runner:
        package = _PROJECT.package
        date = max(tree.committed(), _PROJECT.package_floor)
        setup += f" && uv pip install --exclude-newer {date} {package}"
        sources.append(f"{package} (uploaded before {date}, the base commit's date or later)")
    test = f"uv run --frozen --no-sync python {_PROJECT.python_arguments}"
    return Inferred(
        ("python", "uv"),
        setup,
        test,
        "",
        {"toolchains": "uv.lock", "setupCommand": ", ".join(dict.fromkeys(sources))},
    )


def _pip(
    tree: Tree,
    workdir: str,
    pyproject: TomlDocument | None,
    local: Mapping[str, str],
    python: str | None,
) -> tuple[Inferred, bool]:
    """The venv and pip setup, and whether setup.py builds extension modules.

    The Python is chosen with what the default's (or the retry's) plan installs; the files and
    tox lines that name a Python are then those of the one chosen."""
    compiled = _builds_extensions(tree, workdir)
    version = python or DEFAULT_PYTHON
    plan = _pip_plan(tree, workdir, pyproject, version)
    requires = table(pyproject, "project").get("requires-python")
    requirements = _requirement_lines(tree, workdir, plan, pyproject)
    pythons, why = pythons_for(requires, requirements=requirements, local=local)
    if python is not None:
        pythons = pythons[pythons.index(python) :] if python in pythons else (python,)
        why = "a retry: the newer Pythons could not collect the changed tests"
    elif pythons[0] != version:
        plan = _pip_plan(tree, workdir, pyproject, pythons[0])
    date = tree.committed()
    ceiling = package_ceiling(_PROJECT, date)
    if _PROJECT.package not in plan.names() and ceiling is None:
        plan.requirements.append(_PROJECT.package)
        plan.sources.append(_PROJECT.package)
    if ceiling is not None:  # pip's installs are not dated: the newest major would come
        # (the ceiling names the package: a bare requirement beside it would say it twice)
        plan.requirements.append(ceiling)
        after = f"the first major release after the base, {date[:10]}, left out"
        plan.sources.append(f"{ceiling} ({after})")
    if compiled:
        plan.requirements.append("setuptools")  # to rebuild offline, when the tests run
    pip = [".venv/bin/python", "-m", "pip", "install", *plan.options, *plan.requirements]
    setup = f"{python_command(pythons[0])} -m venv .venv && {shell_words(pip)}"
    sources = {
        "toolchains": f"pyproject.toml / setup.py: Python {pythons[0]} ({why})",
        "setupCommand": ", ".join(dict.fromkeys(plan.sources)),
    }
    return Inferred(("python",), setup, "", "", sources, pythons), compiled


def infer_python(
    tree: Tree,
    workdir: str,
    test_files: Sequence[str],
    *,
    local: Mapping[str, str] = IMAGE_PYTHONS,
    python: str | None = None,
) -> Inferred:
    """The Python environment of the project at `workdir`.

    `local` maps the sandbox's Python commands to the versions they run (default the image's);
    `python` (`3.11`, one of an earlier result's `pythons`) replaces the chosen interpreter.
    """
    pyproject = tree.toml(join(workdir, "pyproject.toml"))
    runner, runner_source = _runner(tree, workdir, pyproject, test_files)
    test_source = (
        runner_source if runner is _DEFAULT else f"{runner.setting} through {runner.reads_as}"
    )
    lock = tree.nearest(workdir, ("uv.lock",))
    if lock is not None:
        found = _uv(tree, workdir, lock, pyproject)
        test = found.test_command
    else:
        found, compiled = _pip(tree, workdir, pyproject, local, python)
        test = f".venv/bin/python {_PROJECT.python_arguments}"
        if compiled:
            test = f"{_REBUILD}; {test}"
            test_source += "; setup.py builds extensions: rebuilt in place first"
    sources = {**found.sources, "testCommand": test_source, "runner": runner_source}
    setup, release = found.setup_command, _tag_release(tree, pyproject)
    if release is not None:
        setup = f"export {_SCM_VERSION}={release} && {setup}"
        sources["setupCommand"] += f"; version {release}, the nearest tag's ({_SCM_VERSION})"
    return replace(
        found, setup_command=setup, test_command=test, runner=runner.setting, sources=sources
    )


_SCM_BACKENDS = frozenset({"setuptools-scm", "hatch-vcs"})
_SCM_VERSION = "SETUPTOOLS_SCM_PRETEND_VERSION"


def _tag_release(tree: Tree, pyproject: TomlDocument | None) -> str | None:
    """The version a project that takes it from git tags gets in setup: the nearest tag's
    release, as the task's snapshot holds the base commit without its tags (setuptools-scm would
    say 0.1.dev1, below what the project's own dependencies require of it); None otherwise."""
    requires = table(pyproject, "build-system").get("requires")
    if not isinstance(requires, list):
        return None
    if not _SCM_BACKENDS.intersection(_requirement_name(str(r)) for r in requires):
        return None
    return tree.release()
