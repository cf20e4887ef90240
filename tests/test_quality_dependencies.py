"""Dependencies: the packages a gold patch adds to its manifests (SPEC §13), and `--deps agent`.

The rule table commits each manifest before and after in a real repository, takes the gold patch
from `git diff` and reads both sides back through git (`read_dependencies`).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from projects import Project, build, git
from selfbench._git import base_texts, patched_texts
from selfbench._sample_history import build_sample_history
from selfbench.artifacts.compiled import locate_task
from selfbench.artifacts.quality_record import (
    QUALITY_FILE,
    AddedDependency,
    Dependencies,
    read_quality,
)
from selfbench.cli import build_parser, main
from selfbench.contract import canonical_json, check_definition, definition_sha256, parse_definition
from selfbench.environments.local.phases import TaskPhases
from selfbench.environments.local.sandbox import Sandbox, Users, read_status, require_sandbox
from selfbench.errors import DefinitionError, GitError
from selfbench.mine import mine_repository, write_candidates
from selfbench.quality.api import unjudged_manifests
from selfbench.quality.dependencies import (
    added_dependencies,
    dependencies_record,
    manifest_names,
    python_name,
    read_dependencies,
)
from selfbench.run.driver import RunOptions, load_options
from selfbench.validate import validate
from selfbench.validate.local import LocalOptions, LocalRunner

PYPROJECT = """\
[project]
name = "calc"
version = "1.0"
dependencies = [{deps}]

[project.optional-dependencies]
{extras}
"""

POETRY = """\
[tool.poetry]
name = "calc"

[tool.poetry.dependencies]
python = "^3.11"
{deps}

[tool.poetry.group.test.dependencies]
{group}
"""

GO_MOD = """\
module example.com/calc

go 1.22

require example.com/single v1.0.0
{block}
"""

CARGO = """\
[package]
name = "calc"
version = "0.1.0"

[dependencies]
{deps}

[target.'cfg(unix)'.dependencies]
{target}
"""

PACKAGE_JSON = (
    '{{\n  "name": "calc",\n  "dependencies": {{{deps}}},\n  "devDependencies": {{{dev}}}\n}}\n'
)

SETUP_PY = """\
from setuptools import setup

REQUIRES = [{deps}]

setup(name="calc", install_requires=REQUIRES, extras_require={{"test": [{extras}]}})
"""

SETUP_CFG = """\
[metadata]
name = calc

[options]
install_requires =
{deps}

[options.extras_require]
test = {extras}
"""


def _pyproject(deps: str = '"requests>=2"', extras: str = "") -> str:
    return PYPROJECT.format(deps=deps, extras=extras)


# (case, path, base text or None for a file the gold adds, gold text, added names)
CASES: list[tuple[str, str, str | None, str, list[str]]] = [
    (
        "pyproject: a new dependency",
        "pyproject.toml",
        _pyproject(),
        _pyproject('"requests>=2", "Attrs>=23"'),
        ["attrs"],
    ),
    (
        "pyproject: a version change only",
        "pyproject.toml",
        _pyproject(),
        _pyproject('"requests>=3"'),
        [],
    ),
    (
        "pyproject: a removal",
        "pyproject.toml",
        _pyproject('"requests", "attrs"'),
        _pyproject('"requests"'),
        [],
    ),
    (
        "pyproject: an extra on a known name",
        "pyproject.toml",
        _pyproject(),
        _pyproject('"requests[socks]>=2"'),
        [],
    ),
    (
        "pyproject: a marker",
        "pyproject.toml",
        _pyproject(),
        _pyproject('"requests>=2", "tomli; python_version < \'3.11\'"'),
        ["tomli"],
    ),
    (
        "pyproject: PEP 503 names",
        "pyproject.toml",
        _pyproject('"Zope.Interface"'),
        _pyproject('"zope-interface", "Typing_Extensions"'),
        ["typing-extensions"],
    ),
    (
        "pyproject: an optional dependency",
        "pyproject.toml",
        _pyproject(extras='test = ["pytest"]'),
        _pyproject(extras='test = ["pytest", "hypothesis>=6"]'),
        ["hypothesis"],
    ),
    (
        "pyproject: a dependency group",
        "pyproject.toml",
        _pyproject() + '\n[dependency-groups]\ntest = ["pytest"]\n',
        _pyproject()
        + '\n[dependency-groups]\ntest = ["pytest", {include-group = "lint"}, "freezegun"]\n',
        ["freezegun"],
    ),
    (
        "pyproject: a direct reference",
        "pyproject.toml",
        _pyproject(),
        _pyproject('"requests>=2", "helper @ file:///opt/wheels/helper-1.0-py3-none-any.whl"'),
        ["helper"],
    ),
    (
        "pyproject: added with the gold",
        "pyproject.toml",
        None,
        _pyproject('"requests"'),
        ["requests"],
    ),
    (
        "poetry: dependencies and a group",
        "pyproject.toml",
        POETRY.format(deps='requests = "^2"', group='pytest = "*"'),
        POETRY.format(
            deps='requests = "^2"\nPyYAML = "^6"', group='pytest = "*"\npytest-mock = "*"'
        ),
        ["pytest-mock", "pyyaml"],
    ),
    (
        "poetry: a version change only",
        "pyproject.toml",
        POETRY.format(deps='requests = "^2"', group=""),
        POETRY.format(deps='requests = "^3"', group=""),
        [],
    ),
    (
        "requirements: a new line",
        "requirements.txt",
        "requests==2.0\n",
        "requests==2.0\nattrs>=23 ; python_version >= '3.8'  # why\n",
        ["attrs"],
    ),
    (
        "requirements: a version change only",
        "requirements-dev.txt",
        "requests==2.0\n",
        "requests==2.31 --hash=sha256:abc\n",
        [],
    ),
    (
        "requirements: includes, options and comments",
        "requirements-test.txt",
        "pytest\n",
        (
            "-r requirements.txt\n--index-url https://example.com/simple\n# tox\npytest\n"
            "-e ./vendor/tool\n"
        ),
        [],
    ),
    (
        "requirements: a wheel file",
        "requirements.txt",
        "pytest\n",
        "pytest\n./wheels/Shout_Lib-1.0-py3-none-any.whl\n",
        ["shout-lib"],
    ),
    (
        "requirements: a continued line",
        "requirements.txt",
        "pytest\n",
        "pytest\nattrs \\\n  >=23\n",
        ["attrs"],
    ),
    (
        "setup.py: install_requires and extras",
        "setup.py",
        SETUP_PY.format(deps='"requests"', extras='"pytest"'),
        SETUP_PY.format(deps='"requests", "click>=8"', extras='"pytest", "pytest-cov"'),
        ["click", "pytest-cov"],
    ),
    (
        "setup.py: a version change only",
        "setup.py",
        SETUP_PY.format(deps='"requests"', extras=""),
        SETUP_PY.format(deps='"requests>=2.31"', extras=""),
        [],
    ),
    (
        "setup.cfg: install_requires and extras",
        "setup.cfg",
        SETUP_CFG.format(deps="    requests", extras="pytest"),
        SETUP_CFG.format(deps="    requests\n    Click>=8", extras="pytest"),
        ["click"],
    ),
    (
        "package.json: a dependency and a devDependency",
        "package.json",
        PACKAGE_JSON.format(deps='"left-pad": "1"', dev=""),
        PACKAGE_JSON.format(deps='"left-pad": "1", "@scope/util": "^2"', dev='"vitest": "1"'),
        ["@scope/util", "vitest"],
    ),
    (
        "package.json: a version change only",
        "package.json",
        PACKAGE_JSON.format(deps='"left-pad": "1"', dev=""),
        PACKAGE_JSON.format(deps='"left-pad": "2"', dev=""),
        [],
    ),
    (
        "package.json: a removal",
        "web/package.json",
        PACKAGE_JSON.format(deps='"left-pad": "1"', dev='"vitest": "1"'),
        PACKAGE_JSON.format(deps='"left-pad": "1"', dev=""),
        [],
    ),
    (
        "go.mod: a block",
        "go.mod",
        GO_MOD.format(block=""),
        GO_MOD.format(
            block="require (\n\tgolang.org/x/text v0.14.0\n"
            "\tgithub.com/pkg/errors v0.9.1 // indirect\n)"
        ),
        ["github.com/pkg/errors", "golang.org/x/text"],
    ),
    (
        "go.mod: a single line",
        "go.mod",
        GO_MOD.format(block=""),
        GO_MOD.format(block="require golang.org/x/sync v0.5.0"),
        ["golang.org/x/sync"],
    ),
    (
        "go.mod: a version change only",
        "go.mod",
        GO_MOD.format(block=""),
        GO_MOD.format(block="").replace("v1.0.0", "v1.2.0"),
        [],
    ),
    (
        "Cargo.toml: target dependencies and a rename",
        "Cargo.toml",
        CARGO.format(deps='serde = "1"', target=""),
        CARGO.format(
            deps='serde = "1"\njson = { package = "serde_json", version = "1" }',
            target='libc = "0.2"',
        ),
        ["libc", "serde_json"],
    ),
    (
        "Cargo.toml: a version change only",
        "Cargo.toml",
        CARGO.format(deps='serde = "1"', target=""),
        CARGO.format(deps='serde = { version = "1.0.200", features = ["derive"] }', target=""),
        [],
    ),
    (
        "Cargo.toml: dev-dependencies",
        "Cargo.toml",
        CARGO.format(deps="", target="") + "\n[dev-dependencies]\n",
        CARGO.format(deps="", target="") + '\n[dev-dependencies]\nproptest = "1"\n',
        ["proptest"],
    ),
    (
        "pyproject: uv's dev-dependencies",
        "pyproject.toml",
        _pyproject() + '\n[tool.uv]\ndev-dependencies = ["pytest"]\n',
        _pyproject() + '\n[tool.uv]\ndev-dependencies = ["pytest", "respx"]\n',
        ["respx"],
    ),
    (
        "Pipfile: packages and dev-packages",
        "Pipfile",
        '[packages]\nrequests = "*"\n',
        '[packages]\nrequests = "==2.31"\nFlask = "*"\n\n[dev-packages]\npytest = "*"\n',
        ["flask", "pytest"],
    ),
    (
        "requirements: a URL with #egg=",
        "requirements.txt",
        "pytest\n",
        "pytest\ngit+https://example.com/acme/tool.git@v1#egg=Acme_Tool\n",
        ["acme-tool"],
    ),
    (
        "Cargo.toml: workspace dependencies",
        "Cargo.toml",
        '[workspace]\nmembers = ["a"]\n\n[workspace.dependencies]\nserde = "1"\n',
        '[workspace]\nmembers = ["a"]\n\n[workspace.dependencies]\nserde = "1"\ntokio = "1"\n',
        ["tokio"],
    ),
    (
        "a lockfile alone",
        "uv.lock",
        "version = 1\n",
        'version = 1\n\n[[package]]\nname = "attrs"\n',
        [],
    ),
    (
        "package-lock.json alone",
        "package-lock.json",
        '{"packages": {}}\n',
        '{"packages": {"node_modules/vitest": {}}}\n',
        [],
    ),
]


def _repository(tmp_path: Path, path: str, base: str | None, gold: str) -> tuple[Path, str, bytes]:
    """A repository whose base holds `base` at `path` (nothing when None); the gold patch that
    writes `gold` there, from `git diff`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    (repo / "README.md").write_text("calc\n", encoding="utf-8")
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if base is not None:
        target.write_text(base, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    commit = git(repo, "rev-parse", "HEAD").strip()
    target.write_text(gold, encoding="utf-8")
    git(repo, "add", "-A")
    patch = subprocess.run(
        ["git", "-C", str(repo), "diff", "--cached", "--binary", commit],
        capture_output=True,
        check=True,
    ).stdout
    git(repo, "reset", "-q", "--hard", commit)
    return repo, commit, patch


@pytest.mark.parametrize(
    ("path", "base", "gold", "added"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_the_names_a_gold_adds_per_manifest(
    tmp_path: Path, path: str, base: str | None, gold: str, added: list[str]
) -> None:
    repo, commit, patch = _repository(tmp_path, path, base, gold)
    record = read_dependencies(repo, commit, patch, agent=False)
    assert record == Dependencies(
        added=tuple(AddedDependency(manifest=path, name=name) for name in added), agent=False
    )
    assert git(repo, "status", "--porcelain") == ""  # read through a private index


def test_the_agent_flag_is_recorded(tmp_path: Path) -> None:
    repo, commit, patch = _repository(tmp_path, "requirements.txt", "a\n", "a\nb\n")
    assert read_dependencies(repo, commit, patch, agent=True) == Dependencies(
        added=(AddedDependency(manifest="requirements.txt", name="b"),), agent=True
    )


def test_a_gold_without_manifests_reads_nothing(tmp_path: Path) -> None:
    repo, commit, patch = _repository(tmp_path, "calc.py", "x = 1\n", "x = 2\n")
    assert read_dependencies(repo, commit, patch, agent=False) == Dependencies()


def test_renamed_and_deleted_manifests(tmp_path: Path) -> None:
    repo, commit, _ = _repository(tmp_path, "requirements.txt", "a\nb\n", "a\nb\n")
    git(repo, "mv", "requirements.txt", "requirements-base.txt")
    (repo / "requirements-base.txt").write_text("a\nb\nc\n", encoding="utf-8")
    git(repo, "add", "-A")
    renamed = git(repo, "diff", "--cached", "-M", commit).encode()
    git(repo, "reset", "-q", "--hard", commit)
    added = (AddedDependency(manifest="requirements-base.txt", name="c"),)
    assert read_dependencies(repo, commit, renamed, agent=False).added == added
    git(repo, "rm", "-q", "requirements.txt")
    deleted = git(repo, "diff", "--cached", commit).encode()
    git(repo, "reset", "-q", "--hard", commit)
    assert read_dependencies(repo, commit, deleted, agent=False).added == ()


def test_patched_and_base_texts(tmp_path: Path) -> None:
    repo, commit, patch = _repository(tmp_path, "go.mod", None, "module m\n")
    assert base_texts(repo, commit, ["go.mod", "README.md"]) == {
        "go.mod": None,
        "README.md": "calc\n",
    }
    assert patched_texts(repo, commit, patch, ["go.mod", "README.md", "missing"]) == {
        "go.mod": "module m\n",
        "README.md": "calc\n",
        "missing": None,
    }
    with pytest.raises(GitError):
        base_texts(repo, "0" * 40, ["go.mod"])


def test_the_pure_record_reads_the_mappings_it_is_given() -> None:
    patch = b"diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n"
    base = {"package.json": '{"dependencies": {"a": "1"}}'}
    gold = {"package.json": '{"dependencies": {"a": "1", "b": "1"}}'}
    assert added_dependencies(patch, base, gold) == (
        AddedDependency(manifest="package.json", name="b"),
    )
    assert dependencies_record(patch, base, gold, agent=True).agent
    assert added_dependencies(patch, base, {"package.json": "not json"}) == ()


# --- properties --------------------------------------------------------------------------------

_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}([._-][A-Za-z0-9]{1,4})?", fullmatch=True)
_SPECIFIERS = st.sampled_from(
    ["", ">=1", "==2.0.1", "~=1.4", "<3,>=2", "[extra]>=1", " ; os_name == 'posix'"]
)


@given(st.lists(_NAMES, min_size=1, max_size=6), _SPECIFIERS, _SPECIFIERS)
def test_requirements_only_versions_changed_add_nothing(
    names: list[str], before: str, after: str
) -> None:
    base = "".join(f"{name}{before}\n" for name in names)
    gold = "".join(f"{name}{after}\n" for name in reversed(names))
    patch = b"diff --git a/requirements.txt b/requirements.txt\n"
    texts = ({"requirements.txt": base}, {"requirements.txt": gold})
    assert added_dependencies(patch, *texts) == ()


@given(st.lists(_NAMES, min_size=1, max_size=6, unique_by=python_name), _NAMES, _SPECIFIERS)
def test_a_new_name_is_found_whatever_its_spelling(
    names: list[str], new: str, specifier: str
) -> None:
    assume(python_name(new) not in {python_name(name) for name in names})
    base = _pyproject(", ".join(f'"{name}"' for name in names))
    gold = _pyproject(", ".join(f'"{name}"' for name in [*names, new.upper() + specifier]))
    patch = b"diff --git a/pyproject.toml b/pyproject.toml\n"
    assert added_dependencies(patch, {"pyproject.toml": base}, {"pyproject.toml": gold}) == (
        AddedDependency(manifest="pyproject.toml", name=str(python_name(new))),
    )


@given(st.text(max_size=200))
def test_manifest_readers_take_any_text(text: str) -> None:
    for path in (
        "pyproject.toml",
        "Pipfile",
        "requirements.txt",
        "setup.py",
        "setup.cfg",
        "package.json",
        "go.mod",
        "Cargo.toml",
    ):
        names = manifest_names(path, text)
        assert names is not None
        assert all(name for name in names)
    assert manifest_names("uv.lock", text) is None


# --- `agentDependencies`: the agent's tree in the local environment ----------------------------

INSTALL = """\
import pathlib
import sysconfig

site = pathlib.Path(sysconfig.get_paths()["purelib"])
for name in pathlib.Path("requirements.txt").read_text().split():
    (site / f"{name}.py").write_text(f"NAME = {name!r}\\n")
"""
"""An offline stand-in for `pip install -r requirements.txt`: each name becomes a module."""

PROBE = r"""
cd /app
runuser -u agent -- env HOME=/home/agent .venv/bin/python -c 'import leftpadlib'
echo "$?" >/run/selfbench-status/base
runuser -u agent -- env HOME=/home/agent .venv/bin/python -c 'import shoutlib'
echo "$?" >/run/selfbench-status/import
grep -q shoutlib requirements.txt
echo "$?" >/run/selfbench-status/manifest
test -e /tmp/selfbench-dependency-setup.patch
echo "$?" >/run/selfbench-status/patch
"""
"""Run in an agent phase: can the agent import the base's package and the new one; do the
manifest and the dependency-setup patch show the gold's change (0: yes)."""


def _shout_project(agent_dependencies: bool) -> Project:
    definition: dict[str, Any] = {
        "taskId": "shout",
        "setupCommand": (
            "python3 -m venv --system-site-packages --without-pip .venv"
            " && .venv/bin/python tools/install.py"
        ),
        "testCommand": ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}",
        "failToPass": ["tests/test_shout.py"],
        "toolchains": ["python"],
    }
    if agent_dependencies:
        definition["agentDependencies"] = True
    return Project(
        base={
            ".gitignore": ".venv/\n__pycache__/\n",
            "requirements.txt": "leftpadlib\n",
            "tools/install.py": INSTALL,
            "calc/__init__.py": "def add(a, b):\n    return a + b\n",
        },
        gold={
            "requirements.txt": "leftpadlib\nshoutlib\n",
            "calc/__init__.py": (
                "import shoutlib\n\n\ndef add(a, b):\n    return a + b\n\n\n"
                "def shout(text):\n    return text.upper() + shoutlib.NAME[:0]\n"
            ),
        },
        tests={
            "tests/test_shout.py": (
                "from calc import shout\n\n\ndef test_shout():\n    assert shout('a') == 'A'\n"
            )
        },
        definition=definition,
    )


def _agent_sees(out: Path, tmp_path: Path, users: Users) -> dict[str, int]:
    """Prepare the task as validation does and probe its agent's tree."""
    logs, root = tmp_path / "logs", tmp_path / "workspace"
    logs.mkdir()
    root.mkdir()
    sandbox = Sandbox(root, users, require_sandbox())
    phases = TaskPhases(locate_task(out), sandbox, logs, LocalOptions(logs=logs))
    assert phases.prepare() is None
    probe = phases.agent_phase(
        "probe", PROBE, (), timeout=120.0, log=logs / "probe.log", writable_app=False
    )
    names = ("base", "import", "manifest", "patch")
    return {name: read_status(probe.status, name) for name in names}


needs_sandbox = pytest.mark.sandbox


@needs_sandbox
@pytest.mark.parametrize(("agent_dependencies", "imports"), [(False, 1), (True, 0)])
def test_the_agent_gets_the_new_dependency_only_with_agent_dependencies(
    tmp_path: Path, agent_dependencies: bool, imports: int, sandbox_users: Users
) -> None:
    out = build(_shout_project(agent_dependencies), tmp_path / "build")
    assert (out / "harbor-task" / "tests" / "dependency-setup.patch").is_file()
    record = read_dependencies(
        tmp_path / "build" / "repo",
        locate_task(out).definition.baseCommit,
        (out / "harbor-task" / "solution" / "gold.patch").read_bytes(),
        agent=agent_dependencies,
    )
    assert record.added == (AddedDependency(manifest="requirements.txt", name="shoutlib"),)
    # the manifest is the base's and the patch is gone either way: 1 is "not found"
    seen = _agent_sees(out, tmp_path, sandbox_users)
    assert seen == {"base": 0, "import": imports, "manifest": 1, "patch": 1}
    [report] = validate([out], runner=LocalRunner(LocalOptions(logs=tmp_path / "validate")))
    assert report.reason is None


# --- `--deps agent`: the definition field, draft and run ---------------------------------------


def _definition_json(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "schemaVersion": 1,
        "difficulty": "easy",
        "taskId": "demo-1",
        "repo": "acme/demo",
        "baseCommit": "a" * 40,
        "workdir": ".",
        "setupCommand": "true",
        "testCommand": "pytest {tests}",
        "failToPass": ["tests/test_new.py"],
        "passToPass": [],
        "testPaths": ["tests/test_new.py"],
        "toolchains": ["python"],
        "sourcePr": 1,
        "sourceUrl": "https://example.com/acme/demo/pull/1",
        "prompt": "Add the thing.",
        "timeouts": {"setupSeconds": 900, "agentSeconds": 2400, "testsSeconds": 900},
        "resources": {"cpus": 4, "memoryMb": 8192, "storageMb": 20480},
    }
    return {**value, **changes}


def test_a_definition_without_the_field_dumps_and_digests_as_before() -> None:
    raw = _definition_json()
    definition = parse_definition(raw).definition
    assert definition.agentDependencies is False
    assert definition.model_dump(mode="json") == raw
    explicit = parse_definition({**raw, "agentDependencies": False}).definition
    assert canonical_json(explicit) == canonical_json(definition)
    assert (
        definition_sha256(definition)
        == hashlib.sha256(
            json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode()
        ).hexdigest()
    )


def test_the_field_round_trips_when_true_and_is_strict() -> None:
    raw = _definition_json(agentDependencies=True)
    definition = parse_definition(raw).definition
    assert definition.model_dump(mode="json") == raw
    assert parse_definition(definition.model_dump(mode="json")).definition == definition
    assert check_definition(json.dumps(raw).encode()).valid
    for mode in ("submission", "persisted"):
        with pytest.raises(DefinitionError) as error:
            parse_definition({**raw, "agentDependencies": "yes"}, mode=mode)
        assert str(error.value) == "agentDependencies: must be a boolean"


def test_run_options_record_deps_only_when_agent(tmp_path: Path) -> None:
    budgets = {"easy": 1, "medium": 0, "hard": 0}
    options = RunOptions(repo=tmp_path, out=tmp_path / "bench.tar.gz", budgets=budgets)
    assert "agentDependencies" not in options.to_json()
    chosen = replace(options, agent_dependencies=True)
    assert chosen.to_json()["agentDependencies"] is True
    assert load_options(chosen.to_json(), "inputs.json") == chosen
    assert load_options(options.to_json(), "inputs.json") == options


def test_the_deps_flag_is_one_choice_of_two(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    draft = ["draft", "c1", "--repo", ".", "--out", "o"]
    assert parser.parse_args([*draft, "--deps", "agent"]).deps == "agent"
    assert parser.parse_args([*draft, "--deps", "verifier"]).deps == "verifier"
    assert parser.parse_args(draft).deps is None
    run = ["run", "--repo", ".", "--out", "o.tar.gz", "--easy", "1", "--deps", "agent"]
    assert parser.parse_args(run).deps == "agent"
    with pytest.raises(SystemExit):
        parser.parse_args([*draft, "--deps", "both"])
    assert "invalid choice: 'both'" in capsys.readouterr().err


@needs_sandbox
def test_draft_with_deps_agent_writes_the_field(tmp_path: Path) -> None:
    repo = build_sample_history(tmp_path)
    candidates = tmp_path / "candidates.jsonl"
    write_candidates(mine_repository(repo), candidates)
    out = tmp_path / "tasks"
    argv = ["draft", "pr-1", "--repo", str(repo), "--out", str(out), "--candidates"]
    argv += [str(candidates), "--reruns", "2", "--deps", "agent", "--json"]
    argv += ["--source-url", "https://example.com/example/unitkit"]
    assert main(argv) == 0
    written = json.loads((out / "pr-1" / "definition.json").read_text(encoding="utf-8"))
    assert written["agentDependencies"] is True
    assert list(written)[-1] == "agentDependencies"


@needs_sandbox
@pytest.mark.parametrize("agent_dependencies", [False, True])
def test_selfbench_quality_flags_the_added_dependency_unless_the_agent_gets_it(
    tmp_path: Path, agent_dependencies: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    build(_shout_project(agent_dependencies), tmp_path)
    task = tmp_path / "authored" / "shout"
    main(["quality", str(task), "--repo", str(tmp_path / "repo"), "--json"])
    capsys.readouterr()
    record = read_quality(task / QUALITY_FILE)
    added = (AddedDependency(manifest="requirements.txt", name="shoutlib"),)
    assert record.dependencies == Dependencies(added=added, agent=agent_dependencies)
    flagged = (
        "the gold adds a dependency the agent cannot install: shoutlib (requirements.txt)"
        " (--deps agent installs it)"
    )
    assert (flagged in record.reasons) is not agent_dependencies


@pytest.mark.parametrize(
    ("paths", "adding", "unjudged"),
    [
        (["package.json", "pnpm-lock.yaml", "src/a.ts"], {"package.json"},
         {"package.json", "pnpm-lock.yaml"}),  # the lockfile goes with the manifest kept
        (["package.json", "pnpm-lock.yaml"], set(), {"pnpm-lock.yaml"}),  # a version bump
        (["go.mod", "go.sum"], {"go.mod"}, {"go.mod", "go.sum"}),
        (["pyproject.toml", "uv.lock"], set(), {"uv.lock"}),
        (["uv.lock"], set(), set()),  # a lockfile alone is judged by its revert
        (["package.json", "src/a.ts"], set(), set()),  # adds nothing: judged by its revert
        (["docs/requirements.txt", "docs/conf.py"], {"docs/requirements.txt"}, set()),
        (["docs/package.json", "docs/package-lock.json"], {"docs/package.json"}, set()),
        (["tox.ini", "src/a.py"], set(), set()),
    ],
)  # fmt: skip
def test_manifests_no_revert_can_judge(
    paths: list[str], adding: set[str], unjudged: set[str]
) -> None:
    """A manifest the gold adds a package to, and a lockfile changed beside another manifest,
    always count as needed: the verifier installs the gold's manifests whatever the agent's
    patch says, and a lockfile left out of the gold would be out of step with them."""
    assert unjudged_manifests(paths, adding) == unjudged
