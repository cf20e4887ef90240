"""What part of a change a file is: implementation, tests, dependencies or other. Pure.

One rule per class, checked in this order (the first that matches wins):

1. **dependencies**: a dependency manifest or lockfile of SPEC §3 (`selfbench.patches`).
2. **other, vendored or generated**: a `vendor/`, `third_party/`, `node_modules/` … component, or
   a generated name (`*.min.js`, `*_pb2.py`, `*.pb.go`, `*.generated.*`, `dist/`, …). Checked
   before tests, so a vendored library's own tests are not this project's tests.
3. **tests**: SPEC §7's test-only path rule (`selfbench.rules.is_test_only_path`), extended with
   the conventions of pytest and unittest (`testing/`, `*_tests.py`, `tests.py`), jest, vitest
   and mocha (`__snapshots__/`, `*-test.js`, `*_test.ts`), node --test (`test/`), go
   (`testdata/`), cargo (`tests/`, `benches/` are not tests), rspec (`spec/`, `*_spec.rb`) and
   junit (`src/test/`, `*Test.java`, `*Tests.kt`, `*IT.java`).
4. **other, lockfile**: a lockfile outside SPEC §3's list (`Gemfile.lock`, `composer.lock`, …).
5. **other, changelog**: `CHANGELOG`, `CHANGES`, `HISTORY`, `NEWS`, `RELEASE_NOTES` (bare or
   with a prose extension), anything under `changelog.d/`, `releasenotes/`, `.changeset/`,
   `newsfragments/`.
6. **other, docs**: `docs/`, `doc/`, prose extensions (`.md`, `.mdx`, `.rst`, `.adoc`, `.txt`),
   `README`, `LICENSE`, `AUTHORS`, `CONTRIBUTING`, and a documentation site's configuration
   (`mkdocs.yml`, `.readthedocs.yaml`, mdBook's `book.toml`, `docusaurus.config.js`, `Doxyfile`
   …; Sphinx's `conf.py` lives under `docs/`).
7. **other, ci**: `.github/`, `.circleci/`, `.buildkite/`, `.woodpecker/`, `.gitlab-ci.yml`,
   `.travis.yml`, `azure-pipelines.yml`, `appveyor.yml`, `Jenkinsfile`, `.drone.yml`, … .
8. **other, housekeeping**: the repository's own upkeep, wherever it lives: `.gitignore`,
   `.git-blame-ignore-revs`, `.mailmap`, `.editorconfig`, `.pre-commit-config.yaml`,
   `.coveragerc`, `codecov.yml`. None changes what is built or how the tests run; what can
   (`.gitattributes`, `tox.ini`, `pytest.ini`, `setup.cfg`, `Makefile`, `noxfile.py` …) is
   implementation.
9. **implementation**: everything else.

`is_runnable_test` then tells, among the tests, the files a known runner collects tests from
(not fixtures, helpers or data): a change holding none of them is no candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import translate
from functools import lru_cache
from posixpath import basename, splitext
from typing import Literal

from selfbench.patches import DOCUMENTATION_EXTENSIONS, is_dependency_manifest
from selfbench.rules import is_test_only_path

__all__ = [
    "FILE_CLASSES",
    "FileClass",
    "Kind",
    "classify_path",
    "detect_ecosystems",
    "is_runnable_test",
    "toolchains_for",
]

FileClass = Literal["implementation", "tests", "dependencies", "other"]
Kind = Literal[
    "implementation", "tests", "dependencies", "vendored", "generated", "lockfile", "changelog",
    "docs", "ci", "housekeeping",
]  # fmt: skip
FILE_CLASSES: tuple[FileClass, ...] = ("implementation", "tests", "dependencies", "other")

_VENDORED_SEGMENTS = frozenset(
    {"vendor", "vendored", "third_party", "third-party", "thirdparty", "node_modules", "_vendor"}
)
_GENERATED_SEGMENTS = frozenset({"dist", "generated", "__generated__"})
_GENERATED_NAMES = (
    "*.min.js", "*.min.css", "*.map", "*_pb2.py", "*_pb2.pyi", "*_pb2_grpc.py", "*.pb.go",
    "*.generated.*", "*.g.dart", "*.snap",
)  # fmt: skip
_TEST_SEGMENTS = frozenset({"testing", "spec", "specs", "__snapshots__", "testdata", "__mocks__"})
_TEST_NAMES = (
    "*_tests.py", "tests.py", "*-test.js", "*-test.ts", "*_test.js", "*_test.ts", "*_spec.rb",
    "*Test.java", "*Tests.java", "*IT.java", "*Test.kt", "*Tests.kt", "*_test.rs", "*_test.exs",
)  # fmt: skip
_LOCKFILES = frozenset(
    {"Gemfile.lock", "composer.lock", "mix.lock", "packages.lock.json", "gradle.lockfile"}
)
_PROSE = r"(\.(md|rst|txt|adoc|markdown))?"
_CHANGELOG_RE = re.compile(rf"(?i)(changelog|changes|history|news|release[-_]?notes){_PROSE}")
_CHANGELOG_SEGMENTS = frozenset(
    {"changelog.d", "releasenotes", ".changeset", "newsfragments", "changelog"}
)
_DOC_SEGMENTS = frozenset({"docs", "doc", "documentation"})
_DOC_NAME_RE = re.compile(rf"(?i)(readme|license|licence|authors|contributing|copying){_PROSE}")
_DOC_CONFIG_NAMES = frozenset(
    {
        "mkdocs.yml", "mkdocs.yaml", ".readthedocs.yml", ".readthedocs.yaml", "readthedocs.yml",
        "book.toml", "Doxyfile", "typedoc.json", "antora.yml", "docusaurus.config.js",
        "docusaurus.config.ts", "docusaurus.config.mjs",
    }
)  # fmt: skip
"""A documentation site's configuration: part of the docs wherever it lives."""
_CI_PREFIXES = (".github/", ".circleci/", ".buildkite/", ".woodpecker/")
_CI_NAMES = frozenset(
    {
        ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "appveyor.yml", ".appveyor.yml",
        "Jenkinsfile", ".drone.yml", ".cirrus.yml", "bitbucket-pipelines.yml", ".woodpecker.yml",
    }
)  # fmt: skip
_HOUSEKEEPING_NAMES = frozenset(
    {
        ".gitignore", ".git-blame-ignore-revs", ".mailmap", ".editorconfig",
        ".pre-commit-config.yaml", ".coveragerc", "codecov.yml", ".codecov.yml", "codecov.yaml",
        ".codecov.yaml",
    }
)  # fmt: skip
# The names runners collect tests from: pytest's and unittest's defaults, jest's, vitest's and
# bun's (`*.test.ts`, `*.spec.js`, `__tests__/`), node --test's (`test/`), go's, cargo's
# (`tests/*.rs`); `classify_path` says a file belongs to the tests, these that it holds some.
_JS = r"\.(?:[cm]?[jt]sx?)"
_RUNNABLE_RE = re.compile(
    r"(?:test_.*\.py|test.*\.py|.*_tests?\.py"
    rf"|(?:.*[._-])?(?:test|spec){_JS}|test-.*{_JS}"
    r"|.*_test\.go)"
)
_JS_RE = re.compile(rf".*{_JS}")
_SUPPORT_SEGMENTS = frozenset(
    {"fixtures", "fixture", "__fixtures__", "testdata", "__snapshots__", "__mocks__", "helpers"}
)
_SUPPORT_NAMES = frozenset({"conftest.py", "__init__.py", "setup.js", "setup.ts"})


@dataclass(frozen=True, slots=True)
class _Ecosystem:
    name: str
    extensions: frozenset[str]
    manifests: frozenset[str]
    toolchain: str | None


_ECOSYSTEMS = (
    _Ecosystem(
        "python",
        frozenset({".py", ".pyi", ".pyx"}),
        frozenset({"pyproject.toml", "setup.py", "setup.cfg", "uv.lock", "poetry.lock"}),
        "python",
    ),
    _Ecosystem(
        "node",
        frozenset({".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue"}),
        frozenset({"package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml"}),
        "node",
    ),
    _Ecosystem("bun", frozenset(), frozenset({"bun.lock", "bun.lockb"}), "bun"),
    _Ecosystem("go", frozenset({".go"}), frozenset({"go.mod", "go.sum"}), "go"),
    _Ecosystem("rust", frozenset({".rs"}), frozenset({"Cargo.toml", "Cargo.lock"}), "rust"),
    _Ecosystem("ruby", frozenset({".rb"}), frozenset({"Gemfile", "Gemfile.lock"}), None),
    _Ecosystem(
        "jvm",
        frozenset({".java", ".kt", ".kts", ".scala"}),
        frozenset({"pom.xml", "build.gradle", "build.gradle.kts"}),
        None,
    ),
    _Ecosystem("c", frozenset({".c", ".h", ".cc", ".cpp", ".hpp"}), frozenset(), None),
)


def _segments(path: str) -> list[str]:
    return path.split("/")[:-1]


def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled pattern for a set of shell-style name patterns (case-sensitive)."""
    return re.compile("|".join(f"(?:{translate(pattern)})" for pattern in patterns))


_GENERATED_RE = _any_of(_GENERATED_NAMES)
_TEST_NAME_RE = _any_of(_TEST_NAMES)


def _is_test(path: str, name: str) -> bool:
    if is_test_only_path(path):
        return True
    if any(part.lower() in _TEST_SEGMENTS for part in _segments(path)):
        return True
    return _TEST_NAME_RE.match(name) is not None


def _other_kind(path: str, name: str) -> Kind | None:
    folders = [part.lower() for part in _segments(path)]
    if name in _LOCKFILES:
        return "lockfile"
    if _CHANGELOG_RE.fullmatch(name) or any(part in _CHANGELOG_SEGMENTS for part in folders):
        return "changelog"
    if (
        any(part in _DOC_SEGMENTS for part in folders)
        or _DOC_NAME_RE.fullmatch(name)
        or name in _DOC_CONFIG_NAMES
        or splitext(name)[1].lower() in DOCUMENTATION_EXTENSIONS
    ):
        return "docs"
    if name in _HOUSEKEEPING_NAMES:
        return "housekeeping"
    return None


@lru_cache(maxsize=1 << 16)  # a history touches the same paths again and again
def classify_path(path: str) -> tuple[FileClass, Kind]:
    """The class of a repository path and, for `other`, what kind of other file it is."""
    name = basename(path)
    if is_dependency_manifest(path):
        return "dependencies", "dependencies"
    kind = _not_the_project_s(path, name)
    if kind is not None:
        return "other", kind
    if _is_test(path, name):
        return "tests", "tests"
    kind = _other_kind(path, name)
    if kind is not None:
        return "other", kind
    return "implementation", "implementation"


def _not_the_project_s(path: str, name: str) -> Kind | None:
    """Vendored, generated or CI files, whatever their names say: `.github/workflows/test.yml`
    runs the tests and holds none."""
    folders = [part.lower() for part in _segments(path)]
    if any(part in _VENDORED_SEGMENTS for part in folders):
        return "vendored"
    if any(part in _GENERATED_SEGMENTS for part in folders) or _GENERATED_RE.match(name):
        return "generated"
    if path.startswith(_CI_PREFIXES) or name in _CI_NAMES:
        return "ci"
    return None


def is_runnable_test(path: str) -> bool:
    """Whether a test path is a file a known runner collects tests from, not a fixture, helper
    or data file (the runners of `selfbench.runners`: pytest, unittest, jest, vitest, bun,
    node --test, go, cargo)."""
    parts = path.split("/")
    name = parts[-1]
    if name in _SUPPORT_NAMES or any(part in _SUPPORT_SEGMENTS for part in parts[:-1]):
        return False
    if _RUNNABLE_RE.fullmatch(name):
        return True
    folders = set(parts[:-1])
    if _JS_RE.fullmatch(name) and folders & {"__tests__", "test"}:
        return True  # jest's `__tests__/`, node --test's `test/`
    return name.endswith(".rs") and len(parts) >= 2 and parts[-2] == "tests"  # cargo's tests/


@lru_cache(maxsize=1 << 16)
def _ecosystems_of(path: str) -> frozenset[str]:
    name, extension = basename(path), splitext(path)[1].lower()
    return frozenset(
        ecosystem.name
        for ecosystem in _ECOSYSTEMS
        if extension in ecosystem.extensions or name in ecosystem.manifests
    )


def detect_ecosystems(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The ecosystems whose source extensions or manifests the paths touch, in a fixed order."""
    found = frozenset().union(*(_ecosystems_of(path) for path in paths))
    return tuple(ecosystem.name for ecosystem in _ECOSYSTEMS if ecosystem.name in found)


def toolchains_for(ecosystems: tuple[str, ...]) -> tuple[str, ...]:
    """The SPEC §1 toolchains those ecosystems suggest (an authoring hint, not a decision)."""
    return tuple(sorted({_TOOLCHAINS[name] for name in ecosystems if _TOOLCHAINS.get(name)}))


_TOOLCHAINS = {ecosystem.name: ecosystem.toolchain or "" for ecosystem in _ECOSYSTEMS}
