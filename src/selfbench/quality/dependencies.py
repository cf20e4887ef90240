"""Dependencies (SPEC §13): the packages a gold patch adds to the project's dependency manifests.

A package is *added* when a manifest the gold patch touches names it with the gold and did not
at the base; a version change, a removal or a lockfile alone adds nothing. The agent's
environment is set up from the base's manifests (and, locally, without a network), so an added
package is one it cannot install: the record names it. `--deps agent` (the definition's
`agentDependencies`) installs it in the agent's tree too; the record says so.

Manifests read (by file name):

* `pyproject.toml`: `[build-system] requires`, `[project] dependencies` and
  `optional-dependencies`, `[dependency-groups]` (PEP 735), `[tool.uv] dev-dependencies`,
  `[tool.poetry] dependencies`, `dev-dependencies` and `group.*.dependencies` (keys, `python`
  left out);
* `Pipfile`: `[packages]` and `[dev-packages]` (keys);
* `requirements*.txt`: one requirement a line; comments, options (`-r`, `-c`, `-e`,
  `--index-url`, ...) and what follows ` --` on a line (`--hash=`) skipped; a wheel or sdist
  file names its distribution, a URL its `#egg=`; any other path or URL is named as written;
* `setup.py` and `setup.cfg`: `install_requires` and `extras_require`, read by
  `selfbench.draft._python` (setup.py by `ast`, never run);
* `package.json`: `dependencies`, `devDependencies`, `peerDependencies`, `optionalDependencies`;
* `go.mod`: `require` lines and blocks (module paths);
* `Cargo.toml`: `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, the same under
  `[target.<cfg>]`, and `[workspace.dependencies]` (a `package = "..."` rename names the real
  crate).

Python names are normalised as PEP 503 says (`Foo_Bar` is `foo-bar`) and read as PEP 508
requirements by `packaging`, so extras and markers do not change a name. Everything is pure but
`read_dependencies`, which reads the manifests from git (`selfbench._git.base_texts`,
`patched_texts`: the repository's index and work tree are left alone).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from posixpath import basename

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from selfbench._git import base_texts, patched_texts
from selfbench._json import table as _table
from selfbench.artifacts.quality_record import AddedDependency, Dependencies
from selfbench.draft._python import setup_cfg_requirements, setup_py_requirements
from selfbench.patches import parse_patch

__all__ = [
    "added_dependencies",
    "dependencies_record",
    "manifest_names",
    "manifest_paths",
    "python_name",
    "read_dependencies",
]

_NPM_TABLES = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
_CARGO_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
_PYTHON_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_EGG_RE = re.compile(r"#egg=([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_GO_REQUIRE_RE = re.compile(r"^require\s+(?:\(\s*$|(\S+)\s)")


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


# --- Python ----------------------------------------------------------------------------------


def python_name(requirement: str) -> str | None:
    """The PEP 503 name a requirement string installs (None when it names none): a PEP 508
    requirement's name, a URL's `#egg=`, a wheel's or sdist's distribution, else a path or URL
    as written."""
    text = requirement.strip()
    if not text:
        return None
    try:
        return canonicalize_name(Requirement(text).name)
    except InvalidRequirement:
        pass
    named = _distribution(text)
    if named is not None:
        return canonicalize_name(named)
    if "/" in text or text.startswith("."):
        return text
    match = _PYTHON_NAME_RE.match(text)
    return canonicalize_name(match.group(0)) if match else None


def _distribution(location: str) -> str | None:
    """The distribution a URL or path names: its `#egg=`, or its wheel's or sdist's file name."""
    egg = _EGG_RE.search(location)
    if egg is not None:
        return egg.group(1)
    file = location.rstrip("/").rsplit("/", 1)[-1].split("#", 1)[0]
    try:
        return str(parse_wheel_filename(file)[0])
    except InvalidWheelFilename:
        pass
    try:
        return str(parse_sdist_filename(file)[0])
    except InvalidSdistFilename:
        return None


def _names(requirements: Iterable[object]) -> set[str]:
    return {
        name
        for item in requirements
        if isinstance(item, str) and (name := python_name(item)) is not None
    }


def _toml(text: str) -> dict[str, object] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _pyproject(text: str) -> set[str]:
    document = _toml(text)
    if document is None:
        return set()
    project = _table(document, "project")
    requirements = [
        *_list(_table(document, "build-system").get("requires")),
        *_list(project.get("dependencies")),
        *(
            item
            for extra in _table(project, "optional-dependencies").values()
            for item in _list(extra)
        ),
        *(
            item
            for group in _table(document, "dependency-groups").values()
            for item in _list(group)
        ),
        *_list(_table(document, "tool", "uv").get("dev-dependencies")),
    ]
    poetry = _table(document, "tool", "poetry")
    tables = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
    tables.extend(_table(group, "dependencies") for group in _table(poetry, "group").values())
    keys = {canonicalize_name(key) for table in tables for key in table}
    return _names(requirements) | (keys - {"python"})


def _pipfile(text: str) -> set[str]:
    document = _toml(text)
    if document is None:
        return set()
    tables = (_table(document, "packages"), _table(document, "dev-packages"))
    return {canonicalize_name(key) for table in tables for key in table}


def _requirements_txt(text: str) -> set[str]:
    logical = re.sub(r"\\\r?\n", " ", text)
    found: set[str] = set()
    for raw in logical.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "-")):
            continue
        line = re.split(r"\s+#|\s--?[A-Za-z]", line, maxsplit=1)[0].strip()
        name = python_name(line)
        if name is not None:
            found.add(name)
    return found


def _setup_py(text: str) -> set[str]:
    return _names(setup_py_requirements(text))


def _setup_cfg(text: str) -> set[str]:
    return _names(setup_cfg_requirements(text))


# --- JavaScript, Go, Rust ----------------------------------------------------------------------


def _package_json(text: str) -> set[str]:
    try:
        document = json.loads(text)
    except ValueError:
        return set()
    return {name for table in _NPM_TABLES for name in _table(document, table)}


def _go_mod(text: str) -> set[str]:
    found: set[str] = set()
    in_block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                found.add(line.split()[0])
            continue
        match = _GO_REQUIRE_RE.match(line + " ")
        if match is None:
            continue
        if match.group(1) is None:
            in_block = True
        else:
            found.add(match.group(1))
    return found


def _crates(table: dict[str, object]) -> Iterator[str]:
    for key, value in table.items():
        package = value.get("package") if isinstance(value, dict) else None
        yield package if isinstance(package, str) else key


def _cargo_toml(text: str) -> set[str]:
    document = _toml(text)
    if document is None:
        return set()
    scopes = [document, _table(document, "workspace"), *_table(document, "target").values()]
    return {
        crate
        for scope in scopes
        for table in _CARGO_TABLES
        for crate in _crates(_table(scope, table))
    }


_READERS: tuple[tuple[str, Callable[[str], set[str]]], ...] = (
    ("pyproject.toml", _pyproject),
    ("Pipfile", _pipfile),
    ("requirements*.txt", _requirements_txt),
    ("setup.py", _setup_py),
    ("setup.cfg", _setup_cfg),
    ("package.json", _package_json),
    ("go.mod", _go_mod),
    ("Cargo.toml", _cargo_toml),
)


def _reader(path: str) -> Callable[[str], set[str]] | None:
    name = basename(path)
    return next((read for pattern, read in _READERS if fnmatchcase(name, pattern)), None)


def manifest_names(path: str, text: str | None) -> frozenset[str] | None:
    """The package names a manifest declares (empty when `text` is None: no file); None when
    `path` is not a manifest this module reads."""
    read = _reader(path)
    if read is None:
        return None
    return frozenset(read(text)) if text is not None else frozenset()


def manifest_paths(gold_patch: bytes) -> tuple[tuple[str | None, str], ...]:
    """The (path at the base, path with the gold) of each manifest the gold patch touches and
    leaves in place, in patch order; the base path is None for a file the gold adds."""
    pairs: list[tuple[str | None, str]] = []
    for change in parse_patch(gold_patch, lenient=True).files:
        path = change.new_path
        if change.status == "deleted" or path is None or _reader(path) is None:
            continue
        pairs.append((change.old_path if change.status != "added" else None, path))
    return tuple(pairs)


def added_dependencies(
    gold_patch: bytes, base_files: Mapping[str, str | None], gold_files: Mapping[str, str | None]
) -> tuple[AddedDependency, ...]:
    """The packages the gold patch adds: per manifest it touches (patch order), the names it
    declares with the gold (`gold_files[path]`) that it did not at the base
    (`base_files[old path]`; a missing entry or None is no file), sorted."""
    added: list[AddedDependency] = []
    for old, new in manifest_paths(gold_patch):
        before = manifest_names(new, base_files.get(old) if old is not None else None)
        after = manifest_names(new, gold_files.get(new))
        if before is None or after is None:
            continue
        added.extend(AddedDependency(manifest=new, name=name) for name in sorted(after - before))
    return tuple(added)


def dependencies_record(
    gold_patch: bytes,
    base_files: Mapping[str, str | None],
    gold_files: Mapping[str, str | None],
    *,
    agent: bool,
) -> Dependencies:
    """The record's `dependencies`: what the gold adds, and whether the agent's tree gets it."""
    return Dependencies(added=added_dependencies(gold_patch, base_files, gold_files), agent=agent)


def read_dependencies(
    repo: Path, base_commit: str, gold_patch: bytes, *, agent: bool
) -> Dependencies:
    """`dependencies_record` with the manifests read from `repo`: at `base`, and with the gold
    patch applied to it.

    Raises:
        GitError: `base` is missing or the gold patch does not apply to it.
    """
    pairs = manifest_paths(gold_patch)
    if not pairs:
        return Dependencies(agent=agent)
    base = base_texts(repo, base_commit, sorted({old for old, _ in pairs if old is not None}))
    gold = patched_texts(repo, base_commit, gold_patch, sorted({new for _, new in pairs}))
    return dependencies_record(gold_patch, base, gold, agent=agent)
