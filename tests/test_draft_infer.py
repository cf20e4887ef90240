"""Inferring the environment from a commit's files, and mapping test names to selectors."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mine_history import History
from selfbench._json import JsonValue
from selfbench._shell import split_words, substitute_tests
from selfbench.audit import command_blockers
from selfbench.draft._node import _script_commands
from selfbench.draft._python import python_for, pythons_for
from selfbench.draft.config import parse_config
from selfbench.draft.infer import Environment, infer_environment, matches_globs, selector_of
from selfbench.errors import DraftError
from selfbench.outcomes import detect_runner

Files = dict[str, str | bytes | None]
_COREPACK = (
    "COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 "
    "COREPACK_NPM_REGISTRY=\"$(npm config get registry | sed 's:/*$::')\" corepack"
)


def _infer(
    tmp_path: Path, files: Files, tests: list[str], config: str | None = None
) -> Environment:
    history = History.create(tmp_path / "repo")
    commit = history.commit("base", files)
    (history.path / "package.json").write_text("{broken")  # the working tree is never read
    parsed = parse_config(config.encode(), source="selfbench.toml") if config else None
    return infer_environment(history.path, commit, tests, parsed)


# --- Python -------------------------------------------------------------------------------------


def test_a_project_without_a_build_system_installs_its_test_extra(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "x"\nversion = "1"\n'
        '[project.optional-dependencies]\ntest = ["pytest>=7", "hypothesis"]\n'
    )
    env = _infer(
        tmp_path, {"pyproject.toml": pyproject, "tests/test_x.py": "x"}, ["tests/test_x.py"]
    )

    assert env.toolchains == ("python",)
    assert env.setup_command == (
        "python3 -m venv .venv && .venv/bin/python -m pip install 'pytest>=7' hypothesis"
    )
    assert env.test_command == ".venv/bin/python -m pytest -rA {tests}"
    assert env.runner == "pytest"
    assert env.workdir == "."
    assert env.sources["setupCommand"] == "pyproject.toml [project.optional-dependencies].test"


def test_an_installable_project_is_installed_editable_with_extras_and_requirements(
    tmp_path: Path,
) -> None:
    files: Files = {
        "setup.py": "from setuptools import setup\nsetup()\n",
        "pyproject.toml": '[project.optional-dependencies]\ntests = ["mock"]\n',
        "requirements-dev.txt": "pytest\n",
        "tests/test_x.py": "import pytest\n",
    }

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.setup_command == (
        "python3 -m venv .venv && .venv/bin/python -m pip install -e '.[tests]' "
        "-r requirements-dev.txt pytest"
    )
    assert env.sources["setupCommand"] == (
        "pyproject.toml [project.optional-dependencies].tests, requirements-dev.txt, pytest"
    )


def test_test_requirements_are_preferred_to_dev_requirements(tmp_path: Path) -> None:
    files: Files = {
        "setup.cfg": "[metadata]\nname = x\n",
        "requirements/tests.txt": "pytest\n",
        "requirements/dev.txt": "-r tests.txt\nsphinx\ntox\n",
        "tests/test_x.py": "",
    }

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.setup_command == (
        "python3 -m venv .venv && .venv/bin/python -m pip install -e . -r requirements/tests.txt "
        "pytest"
    )


@pytest.mark.parametrize(
    ("requires", "python"),
    [
        (">=3.10", "3.12"),
        (">=3.13", "3.13"),
        (">=3.8,<3.12", "3.11"),
        ("==3.11.*", "3.11"),
        ("!=3.12.*,>=3.11", "3.13"),
        (">=4", "3.12"),
        ("garbage", "3.12"),
        (None, "3.12"),
    ],
)
def test_the_image_s_python_that_meets_requires_python(requires: str | None, python: str) -> None:
    assert python_for(requires) == python


IMAGE = {"python3": "3.12", "python3.11": "3.11", "python3.12": "3.12", "python3.13": "3.13"}
HOST_311 = {"python3": "3.11", "python3.11": "3.11"}
"""A host whose sandbox shows only its own Python 3.11, as `python3` and `python3.11`."""
NO_311 = {"python3": "3.12", "python3.12": "3.12", "python3.13": "3.13", "python3.11": "3.12"}
"""Provisioning found no 3.11: its command runs the nearest found, another version."""


@pytest.mark.parametrize(
    ("requires", "requirements", "local", "pythons", "why"),
    [
        (None, (), IMAGE, ("3.12", "3.11"), "no requires-python"),
        (">=3.10", (), HOST_311, ("3.12",), "requires-python >=3.10"),
        (">=3.8,<3.12", (), HOST_311, ("3.11",), "requires-python >=3.8,<3.12"),
        (
            ">=3.8,<3.12",
            (),
            NO_311,
            ("3.12",),
            "requires-python >=3.8,<3.12; the local sandbox has no Python 3.11: the default",
        ),
        (">=3.13", (), IMAGE, ("3.13",), "requires-python >=3.13"),
        (
            None,
            ("pytest>=4,<6.1", "mock"),
            IMAGE,
            ("3.11",),
            "no requires-python; pytest>=4,<6.1 does not run on Python 3.10+",
        ),
        (
            None,
            ("pytest==6.2.4",),
            HOST_311,
            ("3.11",),
            "no requires-python; pytest==6.2.4 does not run on Python 3.10+",
        ),
        (None, ("pytest~=6.2", "pytest>=6.2.5"), IMAGE, ("3.12", "3.11"), "no requires-python"),
    ],
    ids=["default", "host-3.11", "older", "older-absent", "newer", "old-pytest",
         "old-pytest-host", "recent-pytest"],
)  # fmt: skip
def test_the_python_is_the_default_unless_the_project_or_its_pinned_pytest_says_otherwise(
    requires: str | None,
    requirements: tuple[str, ...],
    local: dict[str, str],
    pythons: tuple[str, ...],
    why: str,
) -> None:
    assert pythons_for(requires, requirements=requirements, local=local) == (pythons, why)


def test_a_pinned_pytest_in_a_requirements_file_chooses_an_older_python(tmp_path: Path) -> None:
    files: Files = {
        "setup.py": "from setuptools import setup\nsetup()\n",
        "requirements-test.txt": "-r requirements/base.txt\nmock\n",
        "requirements/base.txt": "pytest==6.1.2  # the last with our plugin\n",
        "tests/test_x.py": "import pytest\n",
    }
    history = History.create(tmp_path / "repo")
    commit = history.commit("base", files)

    env = infer_environment(history.path, commit, ["tests/test_x.py"], None)
    retry = infer_environment(history.path, commit, ["tests/test_x.py"], None, python="3.11")
    host = infer_environment(
        history.path, commit, ["tests/test_x.py"], None, local_pythons={"python3": "3.12"}
    )

    assert env.setup_command == (
        "python3.11 -m venv .venv && .venv/bin/python -m pip install -e . "
        "-r requirements-test.txt pytest"
    )
    assert env.pythons == ("3.11",)
    assert env.sources["toolchains"] == (
        "pyproject.toml / setup.py: Python 3.11 (no requires-python; pytest==6.1.2 does not "
        "run on Python 3.10+)"
    )
    assert retry.setup_command == env.setup_command
    assert host.setup_command.startswith("python3 -m venv .venv && ")


def test_a_retry_names_the_older_python(tmp_path: Path) -> None:
    files: Files = {"setup.py": "from setuptools import setup\nsetup()\n", "tests/test_x.py": ""}
    history = History.create(tmp_path / "repo")
    commit = history.commit("base", files)

    env = infer_environment(history.path, commit, ["tests/test_x.py"], None)
    retry = infer_environment(history.path, commit, ["tests/test_x.py"], None, python="3.11")

    assert env.pythons == ("3.12", "3.11")
    assert retry.pythons == ("3.11",)
    assert retry.setup_command.startswith("python3.11 -m venv .venv && ")
    assert retry.sources["toolchains"] == (
        "pyproject.toml / setup.py: Python 3.11 (a retry: the newer Pythons could not collect "
        "the changed tests)"
    )


def test_a_newer_python_than_the_default_is_named(tmp_path: Path) -> None:
    pyproject = '[project]\nrequires-python = ">=3.13"\n[build-system]\nrequires = ["hatchling"]\n'

    env = _infer(
        tmp_path, {"pyproject.toml": pyproject, "tests/test_x.py": ""}, ["tests/test_x.py"]
    )

    assert env.setup_command == (
        "python3.13 -m venv .venv && .venv/bin/python -m pip install -e . pytest"
    )


def test_extension_modules_are_rebuilt_before_the_tests(tmp_path: Path) -> None:
    setup = (
        "from setuptools import Extension, setup\nsetup(ext_modules=[Extension('x', ['x.c'])])\n"
    )
    files: Files = {"setup.py": setup, "x.c": "", "tests/test_x.py": "import pytest\n"}

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.setup_command == (
        "python3 -m venv .venv && .venv/bin/python -m pip install -e . pytest setuptools"
    )
    assert env.test_command == (
        ".venv/bin/python setup.py --quiet build_ext --inplace; "
        ".venv/bin/python -m pytest -rA {tests}"
    )
    assert detect_runner(env.test_command) == "pytest"
    assert env.sources["testCommand"] == (
        "default for Python; setup.py builds extensions: rebuilt in place first"
    )


@pytest.mark.parametrize(
    ("files", "setup", "source"),
    [
        (
            {"setup.cfg": "[options.extras_require]\ntesting =\n    pytest\n"},
            "-e '.[testing]' pytest",
            "setup.cfg [options.extras_require] testing, pytest",
        ),
        (
            {"setup.py": "setup(extras_require={'docs': ['sphinx'], 'test': ['mock']})\n"},
            "-e '.[test]' pytest",
            "setup.py extras_require test, pytest",
        ),
        (  # the extras in a constant, passed by name after other dicts (marshmallow's setup.py)
            {
                "setup.py": "EXTRAS_REQUIRE = {'tests': ['pytest', 'pytz'], 'docs': ['sphinx']}\n"
                "setup(extras_require=EXTRAS_REQUIRE, project_urls={'Issues': 'x'})\n"
            },
            "-e '.[tests]' pytest",
            "setup.py extras_require tests, pytest",
        ),
        (
            {"setup.py": "setup(extras_require=dict(testing=['pytest'], docs=['sphinx']))\n"},
            "-e '.[testing]' pytest",
            "setup.py extras_require testing, pytest",
        ),
        (  # not Python 3: the quoted keys after extras_require
            {"setup.py": "print 'x'\nsetup(extras_require={'test': ['mock']})\n"},
            "-e '.[test]' pytest",
            "setup.py extras_require test, pytest",
        ),
        (
            {
                "setup.py": "setup()\n",
                "tox.ini": "[tox]\nenvlist = py3\n[testenv]\ndeps =\n    pytest>=7  # runner\n"
                "    py312: mock\n    -r{toxinidir}/requirements/ci.txt\n    {env:EXTRA:}\n"
                "commands = pytest\n",
            },
            "-e . -r requirements/ci.txt 'pytest>=7' mock",
            "the project, tox.ini [testenv] deps (factors of Python 3.12)",
        ),
        (
            {"setup.py": "setup()\n", "tox.ini": "[testenv\nbroken"},
            "-e . pytest",
            "the project, pytest",
        ),
        (  # marshmallow's tox environment adds the extra its tests import simplejson from
            {
                "setup.py": "EXTRAS = {'reco': ['simplejson'], 'tests': ['pytest']}\n"
                "setup(extras_require=EXTRAS)\n",
                "tox.ini": "[testenv]\nextras = tests,reco\n    py27: py2only\n    "
                "py312: $(touch pwned)\n",
            },
            "-e '.[tests,reco]' pytest",
            "setup.py extras_require tests, tox.ini [testenv] extras reco, pytest",
        ),
        (
            {"setup.py": "setup()\n", "tox.ini": "[testenv]\nextras =\n    py3: yaml\n"},
            "-e '.[yaml]' pytest",
            "the project, tox.ini [testenv] extras yaml, pytest",
        ),
    ],
    ids=[
        "setup.cfg",
        "setup.py",
        "setup.py-constant",
        "setup.py-dict-call",
        "setup.py-python2",
        "tox",
        "bad-tox",
        "tox-extras",
        "tox-extras-factored",
    ],
)
def test_older_projects_say_what_their_tests_need_elsewhere(
    tmp_path: Path, files: Files, setup: str, source: str
) -> None:
    env = _infer(tmp_path, {**files, "tests/test_x.py": ""}, ["tests/test_x.py"])

    assert env.setup_command == f"python3 -m venv .venv && .venv/bin/python -m pip install {setup}"
    assert env.sources["setupCommand"] == source


def _tox(*deps: str) -> Files:
    return {"setup.py": "setup()\n", "tox.ini": "[testenv]\ndeps =\n    " + "\n    ".join(deps)}


@pytest.mark.parametrize(
    ("files", "installed"),
    [
        # IPython's tox.ini: one pin a Python, never all of them on one line
        (_tox("py27: ipython<6.0.0", "py35: ipython<7.0.0", "py3: ipython", "nose"),
         "ipython nose"),
        (_tox("py{27,36}: mock", "py{311,312}-django{42,50}: Django", "!py27: attrs"), "attrs"),
        (_tox("py311,py312: six", "py3.12: idna", "python3: certifi", "py: click",
              "py312{-cov,}: coverage", "{,}: nothing"),
         "six idna certifi click coverage"),
        (_tox("pypy3: cffi", "lint: flake8", "cov: pytest-cov", "!lint-!docs: freezegun"),
         "freezegun"),
        (_tox("py312:ipython", "http://x.test/a.tgz"), "py312:ipython http://x.test/a.tgz"),
        (_tox("py312: -r requirements/ci.txt", "py27: -r requirements/py27.txt"),
         "-r requirements/ci.txt"),
        (_tox("py312: x; rm -rf /", "py312: $(touch pwned)", "py27,{}{{: y",
              "{" + "," * 10_000 + "}" + "{a,b}" * 40 + "-py312: z"),
         "'x; rm -rf /' '$(touch pwned)'"),
        (_tox("py27: pytest<4", "py3: pytest>=7"), "'pytest>=7'"),
        ({**_tox("-r{toxinidir}/requirements.txt", "py3: sh"), "requirements.txt": "click\n"},
         "-r requirements.txt sh"),
    ],
    ids=["ipython", "braces-negation", "alternatives", "non-python-factors", "no-space",
         "requirement-files", "hostile", "pytest-pin", "requirements-once"],
)  # fmt: skip
def test_tox_factor_lines_are_those_of_the_chosen_python(
    tmp_path: Path, files: Files, installed: str
) -> None:
    env = _infer(tmp_path, {**files, "tests/test_x.py": ""}, ["tests/test_x.py"])

    assert env.setup_command == (
        f"python3 -m venv .venv && .venv/bin/python -m pip install -e . {installed}"
        + ("" if "pytest" in installed else " pytest")
    )
    assert env.sources["setupCommand"].startswith("the project, tox.ini [testenv] deps")


def test_tox_factor_lines_follow_an_older_python(tmp_path: Path) -> None:
    files: Files = {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
        '[project]\nname = "x"\nrequires-python = ">=3.8,<3.12"\n',
        **_tox("py311: ipython<9", "py312: ipython"),
        "tests/test_x.py": "",
    }

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.setup_command == (
        "python3.11 -m venv .venv && .venv/bin/python -m pip install -e . 'ipython<9' pytest"
    )
    assert env.sources["setupCommand"] == (
        "the project, tox.ini [testenv] deps (factors of Python 3.11), pytest"
    )


@pytest.mark.parametrize(
    ("names", "installed"),
    [
        (["requirements.txt", "requirements-dev.txt"],
         "-r requirements.txt -r requirements-dev.txt"),
        (["requirements_test.txt", "requirements-dev.txt"], "-r requirements_test.txt"),
        (["test-requirements.txt", "requirements.testing.txt"],
         "-r requirements.testing.txt -r test-requirements.txt"),
        (["requirements/test.txt", "requirements/dev.txt", "requirements/docs.txt"],
         "-r requirements/test.txt"),
        (["requirements/dev.txt", "requirements/development.txt"], "-r requirements/dev.txt"),
        # Flask's: the minimal and development versions are other environments' pins
        (["requirements/tests.txt", "requirements/tests-min.txt", "requirements/tests-dev.txt"],
         "-r requirements/tests.txt"),
        (["requirements/tests-unit.txt", "requirements/tests-min.txt", "requirements-dev.txt"],
         "-r requirements/tests-min.txt"),
        (["requirements/dev-docs.txt", "requirements-develop.txt"], "-r requirements-develop.txt"),
        (["requirements-tests-py27.txt", "requirements-tests-py3.txt", "tests/requirements.txt"],
         "-r requirements-tests-py3.txt -r tests/requirements.txt"),
        (["requirements/docs.txt", "docs/requirements-test.txt", "requirements/ci/test.txt",
          "tests.txt", "test-data.txt"], ""),
        (["requirements-$(touch x)-test.txt", "requirements/-test.txt"], ""),
    ],
    ids=["plain-and-dev", "test-over-dev", "spellings", "folder", "first-dev", "flask",
         "first-of-broader", "named-only-dev", "python-named",
         "not-requirements", "hostile-names"],
)  # fmt: skip
def test_requirement_files_by_their_names(tmp_path: Path, names: list[str], installed: str) -> None:
    files: Files = dict.fromkeys(names, "click\n")
    files["setup.py"] = "setup()\n"
    files["tests/test_x.py"] = ""

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    pip = " ".join(["-e", ".", *installed.split(), "pytest"])
    assert env.setup_command == f"python3 -m venv .venv && .venv/bin/python -m pip install {pip}"


def test_a_dependency_group_is_read_with_its_included_groups(tmp_path: Path) -> None:
    pyproject = (
        '[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n'
        '[dependency-groups]\nbase = ["freezegun"]\n'
        'tests = ["pytest", {include-group = "base"}]\n'
        "[tool.pytest.ini_options]\n"
    )

    env = _infer(
        tmp_path, {"pyproject.toml": pyproject, "tests/test_x.py": ""}, ["tests/test_x.py"]
    )

    assert env.setup_command == (
        "python3 -m venv .venv && .venv/bin/python -m pip install -e . pytest freezegun"
    )
    assert env.sources["runner"] == "pyproject.toml [tool.pytest]"


def test_a_project_versioned_by_its_tags_gets_the_nearest_tags_release(tmp_path: Path) -> None:
    # pytest's and pluggy's own repositories: without it the snapshot (no tags) builds version
    # 0.1.dev1, below what the project's own test dependencies require of it.
    pyproject = (
        '[build-system]\nrequires = ["setuptools>=65", "setuptools_scm[toml]>=8"]\n'
        '[project]\nname = "pluggy"\ndynamic = ["version"]\n'
        '[project.optional-dependencies]\ntesting = ["pytest"]\n'
    )
    files: Files = {"pyproject.toml": pyproject, "testing/test_x.py": "import pytest\n"}
    history = History.create(tmp_path / "repo")
    history.commit("release", files)
    history.git("tag", "v1.5.0rc1")
    commit = history.commit("after", {"src/pluggy/__init__.py": "x = 1\n"})

    env = infer_environment(history.path, commit, ["testing/test_x.py"], None)

    assert env.setup_command == (
        "export SETUPTOOLS_SCM_PRETEND_VERSION=1.5.0 && python3 -m venv .venv && "
        ".venv/bin/python -m pip install -e '.[testing]' pytest"
    )
    assert env.sources["setupCommand"].endswith(
        "; version 1.5.0, the nearest tag's (SETUPTOOLS_SCM_PRETEND_VERSION)"
    )
    untagged = _infer(tmp_path / "untagged", files, ["testing/test_x.py"])
    assert not untagged.setup_command.startswith("export")


def test_a_uv_lock_means_uv_sync_of_the_test_group(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "x"\n[dependency-groups]\ntests = ["pytest"]\ndev = ["ruff"]\n'
    files: Files = {"pyproject.toml": pyproject, "uv.lock": "version = 1\n", "tests/test_x.py": ""}

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.toolchains == ("python", "uv")
    assert env.setup_command == "uv sync --frozen --no-default-groups --group tests"
    assert env.test_command == "uv run --frozen --no-sync python -m pytest -rA {tests}"
    assert detect_runner(env.test_command) == "pytest"


def test_uv_without_pytest_declared_adds_it(tmp_path: Path) -> None:
    files: Files = {"pyproject.toml": "[project]\n", "uv.lock": "", "tests/test_x.py": ""}

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.setup_command == (
        "uv sync --frozen --no-default-groups && "
        "uv pip install --exclude-newer 2026-01-01T01:00:00Z pytest"
    )
    assert env.pythons == ()  # uv chooses the interpreter


def test_the_pytest_added_beside_uv_is_never_older_than_one_that_runs_on_the_image(
    tmp_path: Path,
) -> None:
    history = History.create(tmp_path / "repo")
    history.clock = 1_500_000_000  # 2017
    files: Files = {"pyproject.toml": "[project]\n", "uv.lock": "", "tests/test_x.py": ""}
    commit = history.commit("base", files)

    env = infer_environment(history.path, commit, ["tests/test_x.py"], None)

    assert env.setup_command.endswith(
        " && uv pip install --exclude-newer 2021-11-13T00:00:00Z pytest"
    )


@pytest.mark.parametrize(
    ("clock", "ceiling"),
    [
        (1_500_000_000, "'pytest<7'"),  # 2017-07: pytest 6.2.5, the floor, still resolves
        (1_680_000_000, "'pytest<8'"),  # 2023-03
        (1_740_000_000, "'pytest<9'"),  # 2025-02
        (1_767_225_600, None),  # 2026-01: every major known was out
    ],
)
def test_pip_keeps_pytest_below_its_first_major_release_after_the_base_commit(
    tmp_path: Path, clock: int, ceiling: str | None
) -> None:
    """pip's installs are not dated: the newest pytest would turn the deprecations an older
    project's tests were written against into errors (its `filterwarnings = error` then stops
    the collection)."""
    history = History.create(tmp_path / "repo")
    history.clock = clock
    files: Files = {"requirements-dev.txt": "pytest>=4\n", "tests/test_x.py": ""}
    commit = history.commit("base", files)

    env = infer_environment(history.path, commit, ["tests/test_x.py"], None)

    install = "python3 -m venv .venv && .venv/bin/python -m pip install -r requirements-dev.txt"
    # the ceiling names pytest: no bare `pytest` beside it
    assert env.setup_command == f"{install} {'pytest' if ceiling is None else ceiling}"
    named = "the first major release after the base" in env.sources["setupCommand"]
    assert named == (ceiling is not None)


def test_unittest_tests_without_pytest_anywhere_are_run_through_pytest(tmp_path: Path) -> None:
    files: Files = {
        "setup.py": "from setuptools import setup\nsetup()\n",
        "tests/test_x.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n",
    }

    env = _infer(tmp_path, files, ["tests/test_x.py"])

    assert env.runner == "unittest"
    assert env.test_command == ".venv/bin/python -m pytest -rA {tests}"
    assert env.sources["runner"] == "tests/test_x.py imports unittest (run through pytest)"


def test_the_nearest_project_of_the_test_files_is_the_workdir(tmp_path: Path) -> None:
    files: Files = {
        "README.md": "monorepo\n",
        "libs/core/pyproject.toml": "[tool.pytest.ini_options]\n",
        "libs/core/tests/test_a.py": "",
        "libs/core/tests/unit/test_b.py": "",
    }

    env = _infer(tmp_path, files, ["libs/core/tests/test_a.py", "libs/core/tests/unit/test_b.py"])

    assert env.workdir == "libs/core"


# --- JavaScript ---------------------------------------------------------------------------------


def _package(test: str | None, **more: object) -> str:
    scripts = {"lint": "eslint ."} | ({"test": test} if test else {})
    return json.dumps({"name": "app", "scripts": scripts, **more})


@pytest.mark.parametrize(
    ("files", "setup", "test", "runner"),
    [
        (
            {"package.json": _package("jest"), "package-lock.json": "{}"},
            "npm ci",
            "node_modules/.bin/jest --ci --json --runTestsByPath {tests}",
            "jest",
        ),
        (
            {"package.json": _package("pnpm lint && vitest run --typecheck"),
             "pnpm-lock.yaml": ""},
            f"{_COREPACK} pnpm install --frozen-lockfile",
            "node_modules/.bin/vitest run --reporter=verbose {tests}",
            "vitest",
        ),
        (
            {"package.json": _package("jest --config jest.config.json --coverage --color=true",
                                      packageManager="yarn@4.1.0"),
             "yarn.lock": ""},
            f"YARN_NODE_LINKER=node-modules {_COREPACK} yarn install --immutable",
            ("node_modules/.bin/jest --ci --json --runTestsByPath --config jest.config.json "
            "--color=true {tests}"),
            "jest",
        ),
        (
            {"package.json": _package("mocha", devDependencies={"jest": "29"}), "yarn.lock": ""},
            f"{_COREPACK} yarn install --frozen-lockfile",
            "node_modules/.bin/jest --ci --json --runTestsByPath {tests}",
            "jest",
        ),
        (
            {"package.json": _package("node --import tsx --test test/"), "package-lock.json": ""},
            "npm ci",
            "node --import tsx --test {tests}",
            "node-test",
        ),
        (
            {"package.json": '{"scripts": {"test": "npm run lint && npm run test:unit", '
                             '"lint": "eslint .", "test:unit": "node --test"}}',
             "package-lock.json": ""},
            "npm ci",
            "node --test {tests}",
            "node-test",
        ),
        (
            {"package.json": _package("bun test"), "bun.lock": ""},
            "bun install --frozen-lockfile",
            "bun test {tests}",
            "bun",
        ),
        (
            {"package.json": _package(None)},
            "npm install --before=2026-01-01T01:00:00Z",
            "node --test {tests}",
            "node-test",
        ),
    ],
    ids=["npm-jest", "pnpm-vitest", "yarn4-jest-config", "jest-dependency", "node-import",
         "script-indirection", "bun", "node-test-import"],
)  # fmt: skip
def test_javascript_install_and_runner(
    tmp_path: Path, files: Files, setup: str, test: str, runner: str
) -> None:
    files = dict(files)
    files["test/app.test.js"] = "import { test } from 'node:test'\n"

    env = _infer(tmp_path, files, ["test/app.test.js"])

    assert (env.setup_command, env.test_command, env.runner) == (setup, test, runner)
    assert env.toolchains == (("bun",) if runner == "bun" else ("node",))
    assert detect_runner(env.test_command) == {"node-test": "node"}.get(runner, runner)


@pytest.mark.parametrize(
    ("scripts", "test"),
    [
        ({"test": "npm run lint && npm run test-cov", "test-cov": "jest --coverage"},
         "node_modules/.bin/jest --ci --json --runTestsByPath {tests}"),
        ({"test": "eslint . && prettier --check . && tsc --noEmit && jest --coverage"},
         "node_modules/.bin/jest --ci --json --runTestsByPath {tests}"),
        ({"test": "npm run build; vitest run", "build": "tsc"},
         "node_modules/.bin/vitest run --reporter=verbose {tests}"),
        ({"test": "cross-env NODE_ENV=test TZ=UTC nyc --reporter lcov jest --config jest.json"},
         "node_modules/.bin/jest --ci --json --runTestsByPath --config jest.json {tests}"),
        ({"test": "npx c8 -r text --all vitest run && c8 report"},
         "node_modules/.bin/vitest run --reporter=verbose {tests}"),
        ({"test": "dotenv -e .env.test -- node --test test/"}, "node --test {tests}"),
        ({"test": "run-s lint 'test:*'", "test:unit": "yarn test:node", "test:node": "node --test",
          "test:e2e": "playwright test"},
         "node --test {tests}"),
        ({"test": "npm-run-all --max-parallel 2 -p check test:**", "check": "npm run test",
          "test:a:b": "vitest run"},
         "node_modules/.bin/vitest run --reporter=verbose {tests}"),
        ({"test": "npm run a", "a": "yarn b", "b": "pnpm a", "lint": "eslint ."}, None),
    ],
    ids=["followed-coverage", "checks-dropped", "build-first", "env-and-coverage-wrappers",
         "npx-c8", "dotenv", "run-s-pattern", "npm-run-all-deep", "cycle"],
)  # fmt: skip
def test_a_compound_test_script_is_read_to_its_runner(
    tmp_path: Path, scripts: dict[str, str], test: str | None
) -> None:
    files: Files = {
        "package.json": json.dumps({"scripts": scripts}),
        "package-lock.json": "{}",
        "test/app.test.js": "",
    }

    if test is None:
        with pytest.raises(DraftError, match="cannot infer the test runner"):
            _infer(tmp_path, files, ["test/app.test.js"])
        return
    env = _infer(tmp_path, files, ["test/app.test.js"])

    assert env.test_command == test
    assert env.sources["runner"] == "package.json scripts.test"


_JEST = {"package.json": '{"devDependencies": {"jest": "29"}}', "test/a.test.js": ""}


def _lock(*resolved: str) -> str:
    packages = {f"node_modules/p{at}": {"resolved": url} for at, url in enumerate(resolved)}
    return json.dumps({"lockfileVersion": 3, "packages": packages}, indent=2)


@pytest.mark.parametrize(
    ("lock", "setup"),
    [
        (_lock("https://npm.mirror.example/@s/b/-/b-2.0.0.tgz"),
         "npm ci --replace-registry-host=always"),
        (_lock("http://npm.gone-mirror.example/a/-/a-1.0.0.tgz"),
         "npm ci --replace-registry-host=always"),
        (_lock("https://codeload.github.com/o/r/tar.gz/abc", "git+ssh://git@github.com/o/r.git",
               "file:vendor/c-1.0.0.tgz"),
         "npm ci"),
    ],
    ids=["another-registry", "dead-mirror", "not-registry-tarballs"],
)  # fmt: skip
def test_an_npm_lockfile_from_another_registry_installs_from_the_configured_one(
    tmp_path: Path, lock: str, setup: str
) -> None:
    env = _infer(tmp_path, {**_JEST, "package-lock.json": lock}, ["test/a.test.js"])

    assert env.setup_command == setup
    assert env.sources["setupCommand"].startswith("package-lock.json")
    assert ("configured one" in env.sources["setupCommand"]) == ("replace" in setup)


def _npm_default_registry(tmp_path: Path) -> str:
    """npm's built-in registry, asked of npm with empty configuration files."""
    empty = tmp_path / "npmrc"
    empty.write_text("")
    asked = subprocess.run(
        ["npm", "config", "get", "registry", "--userconfig", str(empty), "--globalconfig",
         str(tmp_path / "globalrc")],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, cwd=tmp_path,
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return asked.stdout.strip().rstrip("/")


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
@pytest.mark.parametrize(
    ("host_of", "setup"),
    [
        (lambda host: host, "npm ci"),
        (lambda host: f"{host}.example", "npm ci --replace-registry-host=always"),
        (lambda host: f"{host.rsplit('.', 1)[0]}.example", "npm ci --replace-registry-host=always"),
    ],
    ids=["its-own-host", "a-longer-look-alike", "another-top-level-domain"],
)
def test_an_npm_lockfile_from_npm_s_own_registry_installs_with_plain_npm_ci(
    tmp_path: Path, host_of: Callable[[str], str], setup: str
) -> None:
    """npm itself sends its own registry's tarballs to the configured registry: no flag; a host
    that only looks like it gets the flag. The host is npm's built-in default (asked of npm
    with empty configuration files), so no registry's name is written here."""
    default = urlsplit(_npm_default_registry(tmp_path))
    registry = f"{default.scheme}://{host_of(default.netloc)}"
    lock = _lock(f"{registry}/@s/b/-/b-2.0.0.tgz", f"{registry}/a/-/a-1.0.0.tgz")
    env = _infer(tmp_path / "p", {**_JEST, "package-lock.json": lock}, ["test/a.test.js"])

    assert env.setup_command == setup
    assert ("configured one" in env.sources["setupCommand"]) == ("replace" in setup)


_YARN_1 = '{"packageManager": "yarn@1.22.22", "devDependencies": {"jest": "29"}}'
_YARN_LOCK_HEAD = "# yarn lockfile v1\n\n\n"


def _yarn_lock(*resolved: str) -> str:
    return _YARN_LOCK_HEAD + "".join(
        f'p{at}@1.0.0:\n  version "1.0.0"\n  resolved "{url}"\n\n'
        for at, url in enumerate(resolved)
    )


def _pnpm_lock(tarball: str) -> str:
    return (
        "lockfileVersion: '6.0'\n\npackages:\n\n  /p0@1.0.0:\n"
        f"    resolution: {{integrity: sha512-x, tarball: {tarball}}}\n"
    )


@pytest.mark.parametrize(
    ("lock_name", "lock", "rehosted"),
    [
        ("yarn.lock", _yarn_lock("https://npm.gone-mirror.example/a/-/a-1.0.0.tgz#abc"), True),
        ("yarn.lock", _yarn_lock("http://mirror.example/@s/b/download/@s/b-2.0.0.tgz#abc"), True),
        ("yarn.lock", _yarn_lock("https://codeload.github.com/o/r/tar.gz/abc"), False),
        ("yarn.lock", _yarn_lock("https://github.com/o/r/releases/download/v1/r-1.0.0.tgz"),
         False),
        ("yarn.lock", 'a@npm:1.0.0:\n  resolution: "a@npm:1.0.0"\n', False),
        ("pnpm-lock.yaml", _pnpm_lock("https://npm.mirror.example/a/-/a-1.0.0.tgz"), True),
        ("pnpm-lock.yaml", "packages:\n  /a@1:\n    resolution: {integrity: sha512-x}\n", False),
    ],
    ids=["yarn-dead-mirror", "yarn-old-mirror-download-path", "yarn-not-registry-tarball",
         "yarn-release-asset",
         "yarn-berry-no-urls", "pnpm-mirror-tarball", "pnpm-integrity-only"],
)  # fmt: skip
def test_a_yarn_or_pnpm_lockfile_from_another_registry_installs_from_the_configured_one(
    tmp_path: Path, lock_name: str, lock: str, rehosted: bool
) -> None:
    files: Files = {"package.json": _YARN_1, lock_name: lock, "test/a.test.js": ""}

    env = _infer(tmp_path, files, ["test/a.test.js"])

    install = env.setup_command.rsplit("; ", 1)[-1].removesuffix(")")
    assert install.endswith("--frozen-lockfile")
    assert ("node -e" in env.setup_command) == rehosted
    assert ("configured one" in env.sources["setupCommand"]) == rehosted
    if rehosted:
        assert env.setup_command.startswith("(set -e; node -e ")
        assert f"trap 'mv -f {lock_name}.selfbench {lock_name}' EXIT; " in env.setup_command


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_yarn_lockfile_naming_npm_s_own_registry_installs_as_it_is(tmp_path: Path) -> None:
    """Both managers send npm's own host to the configured registry themselves (its name is
    asked of npm with empty configuration files, so none is written here)."""
    files: Files = {
        "package.json": _YARN_1,
        "yarn.lock": _yarn_lock(f"{_npm_default_registry(tmp_path)}/a/-/a-1.0.0.tgz#abc"),
        "test/a.test.js": "",
    }

    env = _infer(tmp_path / "p", files, ["test/a.test.js"])

    assert "node -e" not in env.setup_command


@pytest.mark.network
@pytest.mark.skipif(shutil.which("corepack") is None, reason="corepack is not installed")
def test_a_yarn_1_lockfile_of_a_dead_mirror_installs_and_is_put_back(tmp_path: Path) -> None:
    """The inferred setup, run for real: yarn 1 through Corepack installs a lockfile whose
    tarball names a host that does not resolve, and the tracked lockfile is unchanged after."""
    lock = _YARN_LOCK_HEAD + (
        'is-number@7.0.0:\n  version "7.0.0"\n'
        '  resolved "https://registry.gone-mirror.example/is-number/download/'
        'is-number-7.0.0.tgz#7535345b896734d5f80c4d06c50955527a14f12b"\n  integrity sha512-'
        "41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==\n"
    )
    package = '{"packageManager": "yarn@1.22.22", "dependencies": {"is-number": "7.0.0"}}'
    test = 'import test from "node:test";\n'
    files: Files = {"package.json": package, "yarn.lock": lock, "test/a.test.js": test}
    env = _infer(tmp_path, files, ["test/a.test.js"])
    project = tmp_path / "repo"
    (project / "package.json").write_text(package)

    done = subprocess.run(
        ["bash", "-c", env.setup_command], cwd=project, capture_output=True, text=True, check=False,
        timeout=300, env={**os.environ, "COREPACK_HOME": str(tmp_path / "corepack")},
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "node_modules" / "is-number" / "package.json").is_file()
    assert (project / "yarn.lock").read_text() == lock
    assert not (project / "yarn.lock.selfbench").exists()


def test_a_workspace_package_installs_at_the_root_and_runs_its_own_jest(tmp_path: Path) -> None:
    files: Files = {
        "package.json": '{"workspaces": ["packages/*"]}',
        "package-lock.json": "{}",
        "packages/app/package.json": _package("jest"),
        "packages/app/src/a.test.ts": "",
    }

    env = _infer(tmp_path, files, ["packages/app/src/a.test.ts"])

    assert env.workdir == "packages/app"
    assert env.setup_command == "(cd ../.. && npm ci)"
    assert env.test_command == "npx --no jest --ci --json --runTestsByPath {tests}"
    assert env.sources["setupCommand"] == "package-lock.json"
    assert detect_runner(env.test_command) == "jest"


def test_a_workspace_package_without_a_runner_runs_under_the_root_s(tmp_path: Path) -> None:
    """jest's own repository: its packages name no runner, its root runs their tests."""
    files: Files = {
        "package.json": '{"private": true, "workspaces": ["packages/*"], '
        '"scripts": {"test": "yarn lint && yarn jest", '
        '"jest": "node ./packages/jest-cli/bin/jest.js"}, '
        '"devDependencies": {"jest": "workspace:*"}, "packageManager": "yarn@4.1.0"}',
        "yarn.lock": "",
        "packages/jest-util/package.json": '{"name": "jest-util", "main": "./build/index.js"}',
        "packages/jest-util/src/__tests__/a.test.ts": "",
        "packages/other/package.json": _package("node --test"),
    }

    env = _infer(tmp_path, files, ["packages/jest-util/src/__tests__/a.test.ts"])

    assert env.workdir == "."
    assert (
        env.setup_command == f"YARN_NODE_LINKER=node-modules {_COREPACK} yarn install --immutable"
    )
    assert env.test_command == "node_modules/.bin/jest --ci --json --runTestsByPath {tests}"
    assert env.sources["runner"] == "package.json devDependencies"


def test_a_package_whose_tests_import_node_test_keeps_its_own_directory(tmp_path: Path) -> None:
    files: Files = {
        "package.json": '{"devDependencies": {"jest": "29"}}',
        "package-lock.json": "{}",
        "packages/app/package.json": '{"name": "app"}',
        "packages/app/a.test.js": "import { test } from 'node:test'\n",
    }

    env = _infer(tmp_path, files, ["packages/app/a.test.js"])

    assert (env.workdir, env.runner) == ("packages/app", "node-test")


def test_an_unreadable_runner_is_one_line_naming_the_script(tmp_path: Path) -> None:
    files: Files = {"package.json": _package("mocha --recursive"), "test/a.spec.js": ""}

    with pytest.raises(DraftError) as caught:
        _infer(tmp_path, files, ["test/a.spec.js"])

    assert str(caught.value) == (
        "cannot infer the test runner of package.json: scripts.test is 'mocha --recursive'; "
        "selfbench reads jest, vitest, node --test and bun test (set runner and testCommand in a "
        "selfbench.toml: the repository's, or one given to draft or run with --config FILE)"
    )


def test_a_symbolic_link_is_not_a_manifest(tmp_path: Path) -> None:
    history = History.create(tmp_path / "repo")
    (history.path / "real.json").write_text(_package("jest"))
    (history.path / "package.json").symlink_to("real.json")
    history.git("add", "real.json", "package.json")
    commit = history.commit("base", {"test/a.test.js": ""})

    with pytest.raises(DraftError, match="it has no test script"):
        infer_environment(history.path, commit, ["test/a.test.js"], None)


# --- Go and Rust --------------------------------------------------------------------------------


def test_go_and_rust(tmp_path: Path) -> None:
    go = _infer(tmp_path / "go", {"go.mod": "module x\n", "pkg/a_test.go": ""}, ["pkg/a_test.go"])
    rust = _infer(tmp_path / "rs", {"Cargo.toml": "", "tests/it.rs": ""}, ["tests/it.rs"])

    assert (go.toolchains, go.setup_command, go.runner) == (("go",), "go mod download", "go")
    assert detect_runner(go.test_command) == "go"
    assert (rust.toolchains, rust.setup_command, rust.runner) == (("rust",), "cargo fetch", "cargo")
    assert detect_runner(rust.test_command) == "cargo"


def _fake(bin_dir: Path, name: str) -> None:
    script = bin_dir / name
    script.write_text('#!/bin/sh\nfor a in "$@"; do printf "[%s]" "$a"; done\necho\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize(
    ("selectors", "argv"),
    [
        (["^TestA$", "^TestB$/^case_1$"], "[test][-v][-run][^TestA$|^TestB$/^case_1$][./...]"),
        (["pkg/a_test.go"], "[test][-v][-run][][./pkg]"),
        (["a_test.go", "^TestA$"], "[test][-v][-run][^TestA$][.]"),
    ],
)
def test_the_go_command_joins_selectors_into_one_pattern(
    tmp_path: Path, selectors: list[str], argv: str
) -> None:
    env = _infer(tmp_path, {"go.mod": "module x\n", "a_test.go": ""}, ["a_test.go"])
    _fake(tmp_path, "go")
    path = f"{tmp_path}{os.pathsep}{os.environ['PATH']}"

    shell = subprocess.run(
        ["bash", "-c", substitute_tests(env.test_command, selectors)],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=True,
    )

    assert shell.stdout.strip() == argv


@pytest.mark.parametrize(
    ("selectors", "argv"),
    [
        (["tests::it_works", "src/lib.rs - add (line 3)"],
         "[test][--][--exact][tests::it_works][src/lib.rs - add (line 3)]"),
        (["tests/parse.rs"], "[test][--test][parse][--][--exact]"),
        (["src/lib.rs", "it's"], "[test][--lib][--][--exact][it's]"),
    ],
)  # fmt: skip
def test_the_cargo_command_runs_files_as_targets_and_names_exactly(
    tmp_path: Path, selectors: list[str], argv: str
) -> None:
    env = _infer(tmp_path, {"Cargo.toml": "", "tests/it.rs": ""}, ["tests/it.rs"])
    _fake(tmp_path, "cargo")
    path = f"{tmp_path}{os.pathsep}{os.environ['PATH']}"

    shell = subprocess.run(
        ["bash", "-c", substitute_tests(env.test_command, selectors)],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=True,
    )

    assert shell.stdout.strip() == argv


# --- selfbench.toml -----------------------------------------------------------------------------


def test_the_configuration_overrides_each_value_it_sets(tmp_path: Path) -> None:
    config = 'setupCommand = "make deps"\ntestCommand = "python -m pytest -x {tests}"\n'
    files: Files = {"pyproject.toml": "[tool.pytest.ini_options]\n", "tests/test_x.py": ""}

    env = _infer(tmp_path, files, ["tests/test_x.py"], config)

    assert (env.setup_command, env.test_command) == ("make deps", "python -m pytest -x {tests}")
    assert env.toolchains == ("python",)
    assert env.sources["setupCommand"] == "selfbench.toml"
    assert env.sources["runner"] == "selfbench.toml testCommand"
    assert (
        env.sources["toolchains"] == "pyproject.toml / setup.py: Python 3.12 (no requires-python)"
    )
    assert env.pythons == ()  # a configured setup command is not the draft's to retry


def test_a_complete_configuration_needs_no_known_ecosystem(tmp_path: Path) -> None:
    config = (
        'toolchains = ["node"]\nsetupCommand = "make"\ntestCommand = "npx mocha {tests}"\n'
        'runner = "node-test"\nworkdir = "web"\n'
    )

    env = _infer(tmp_path, {"web/spec/a.coffee": ""}, ["web/spec/a.coffee"], config)

    assert env == Environment(
        ("node",),
        "make",
        "npx mocha {tests}",
        "node-test",
        {
            "workdir": "selfbench.toml",
            "toolchains": "selfbench.toml",
            "setupCommand": "selfbench.toml",
            "testCommand": "selfbench.toml",
            "runner": "selfbench.toml",
        },
        "web",
    )


def test_a_test_command_whose_runner_is_unknown_needs_the_runner_named(tmp_path: Path) -> None:
    config = 'toolchains = ["node"]\nsetupCommand = "make"\ntestCommand = "npx mocha {tests}"\n'

    with pytest.raises(DraftError) as caught:
        _infer(tmp_path, {"spec/a.coffee": ""}, ["spec/a.coffee"], config)

    assert str(caught.value) == (
        "cannot tell the runner of the test command 'npx mocha {tests}': set runner in "
        "selfbench.toml (one of pytest, unittest, jest, vitest, node-test, go, cargo, bun)"
    )


def test_no_known_test_file_and_no_configuration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DraftError) as caught:
        _infer(tmp_path, {"spec/a.coffee": ""}, ["spec/a.coffee"])

    assert str(caught.value) == (
        "cannot infer how to run the tests: no Python, JavaScript, Go or Rust test file among "
        "spec/a.coffee (set toolchains, setupCommand and testCommand in a selfbench.toml: the "
        "repository's, or one given to draft or run with --config FILE)"
    )


# --- every inferred command passes the audit ----------------------------------------------------

_SELECTORS = (
    "test", "tests/test_x.py::test_a[one two]", "^TestA$/^b$", "src/a.test.ts", "go", "run",
    "cargo", "-v", "tests/test_x.py", "$arg", "a_test.go",
)  # fmt: skip


@pytest.mark.parametrize(
    ("files", "tests"),
    [
        ({"pyproject.toml": "", "uv.lock": ""}, ["tests/test_x.py"]),
        ({"setup.py": ""}, ["tests/test_x.py"]),
        ({"package.json": _package("jest")}, ["src/a.test.ts"]),
        ({"package.json": _package("vitest")}, ["src/a.test.ts"]),
        ({"package.json": _package("node --test")}, ["test/a.js"]),
        ({"package.json": _package("bun test"), "bun.lockb": b"\0"}, ["a.test.ts"]),
        ({"go.mod": ""}, ["a_test.go"]),
        ({"Cargo.toml": ""}, ["tests/a.rs"]),
    ],
)
def test_every_inferred_test_command_passes_the_audit(
    tmp_path: Path, files: Files, tests: list[str]
) -> None:
    env = _infer(tmp_path, {**files, **dict.fromkeys(tests, "")}, tests)

    assert command_blockers(env.test_command, _SELECTORS) == []
    assert env.test_command.count("{tests}") == 1
    assert all(word.text for word in split_words(env.setup_command))


# --- selectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runner", "name", "selector"),
    [
        ("pytest", "tests/test_a.py::test_x[a b-None]", "tests/test_a.py::test_x[a b-None]"),
        ("pytest", "tests/test_a.py::TestK::test_y", "tests/test_a.py::TestK::test_y"),
        ("unittest", "tests/test_a.py::Case::test_z", "tests/test_a.py::Case::test_z"),
        ("jest", "src/a.test.ts > math > adds", "src/a.test.ts"),
        ("jest", "src/a.test.ts \u203a math \u203a adds", "src/a.test.ts"),
        ("vitest", "test/base.test.ts > withBase > works [x]", "test/base.test.ts"),
        ("node-test", "test/app.js > app > handles errors", "test/app.js"),
        ("bun", "a.test.ts > sums", "a.test.ts"),
        ("go", "TestParse", "^TestParse$"),
        ("go", "TestParse/empty_input", "^TestParse$/^empty_input$"),
        ("go", "example.com/x/pkg/TestParse/a.b(c)", "^TestParse$/^a\\.b\\(c\\)$"),
        ("cargo", "tests::it_works", "tests::it_works"),
        ("cargo", "src/lib.rs - add (line 3)", "src/lib.rs - add (line 3)"),
    ],
)
def test_selector_of(runner: str, name: str, selector: str) -> None:
    assert selector_of(runner, name) == selector


@pytest.mark.parametrize(
    ("runner", "name", "message"),
    [
        ("jest", "math > adds", "jest test 'math > adds' does not name its file"),
        ("go", "pkg/helper", "go test 'pkg/helper' names no Test, Example or Fuzz function"),
        (
            "mocha",
            "x",
            (
                "unknown runner 'mocha' (one of pytest, unittest, jest, vitest, node-test, go, "
                "cargo, bun)"
            ),
        ),
    ],
)
def test_selector_of_refuses_what_it_cannot_map(runner: str, name: str, message: str) -> None:
    with pytest.raises(DraftError) as caught:
        selector_of(runner, name)

    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("path", "patterns", "matched"),
    [
        ("tests/unit/test_a.py", ["tests/**"], True),
        ("tests/test_a.py", ["tests/**/*.py"], True),
        ("src/tests/test_a.py", ["tests/**"], False),
        ("tests/slow/test_a.py", ["tests/slow/*"], True),
        ("tests/slow/deep/test_a.py", ["tests/slow/*"], False),
        ("a.test.ts", ["*.test.?s"], True),
        ("tests/test_a.py", [], False),
    ],
)
def test_globs(path: str, patterns: list[str], matched: bool) -> None:
    assert matches_globs(path, patterns) is matched


def test_scripts_that_all_run_every_script_are_followed_once_each() -> None:
    """A hostile manifest: 200 scripts, each `run-p "*"`. Each script is expanded once (before,
    the depth-3 walk took about N⁴ steps: hours here); nothing they run is a test runner."""
    scripts: dict[str, JsonValue] = {f"s{index}": 'run-p "*"' for index in range(200)}
    scripts["test"] = 'run-p "*"'
    assert _script_commands(scripts, "test") == []
