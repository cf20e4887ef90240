"""Dependency seeds: what one setup installed, the start of the next setup of the same manifests.

Consecutive candidates of one repository usually share their dependency manifests and lockfiles.
After a setup's base stage succeeds, the directories it installed into the tree (`SEEDED`:
`.venv` and `node_modules`, at any depth, that the snapshot does not hold) are copied aside as
that setup's *seed*, under a `seed_key`: the repository, the workdir, `setupCommand`, the
toolchains, the setup environment, and the digest of every manifest and lockfile in the snapshot
(`patches.is_dependency_manifest`, plus the managers' own configuration, `_CONFIGURATION`). The
next setup with that key starts from the seed: the base stage (`render_prepare.py`) copies each
seeded directory into the freshly unpacked tree, after the base commit and before
`setupCommand`, and only where the tree has nothing at that path and its parent is a real
directory of the tree.

Why that is sound: a seed is a starting point, never a result. `setupCommand` still runs on the
candidate's own tree, and the managers bring an existing environment to the lockfile (`uv sync`,
`pnpm install`, `npm ci`, which deletes `node_modules` first; pip installs what is missing). What
was built from a candidate's own code does not carry over: a seeded `.venv` holds no
distribution installed from the tree itself (each whose `direct_url.json` names a `file:` URL in
`/app` is removed with the files its `RECORD` lists, so `pip install .` installs this
candidate's code), in-tree build output is never seeded (only the two directory names), the
caches tools keep in `node_modules` (`.cache`, `.vite`) are dropped, and `node_modules` is not
seeded at all when a manifest names a `file:` dependency (yarn 1 and bun copy those). A seeded
setup that fails is run again from the snapshot alone (`uv venv` refuses an existing `.venv`,
say), so a seed never turns a setup that succeeds into one that fails.

A seed carries nothing the candidate's own code wrote into it either: after those removals (and
a legacy editable install of the tree's, an `*.egg-link` to `/app` and its line of
`easy-install.pth`), a seeded `.venv` is checked against the distributions' records. Every file
of its `site-packages`, and every file a `RECORD` lists elsewhere in it (`bin/` scripts), must be
a regular file a `RECORD` lists with the size and digest it has, or one of the files a venv's
maker writes itself (`VENV_MAKER_FILES`: uv's and virtualenv's `_virtualenv.pth` and `.py`);
bytecode in `__pycache__` is removed (the interpreter writes it again). Anything else (a `.pth`
that importing the project at one base commit wrote, a module it rewrote) means the setup ran
code that wrote into the environment: no seed is kept (`SeedRefused`), and the next setup starts
from the snapshot alone. This guards against an honest setup's accidents: setup runs as root and
could rewrite a record too, and what bounds a hostile one is that its seed serves only later
setups of the same manifests.

Like the download caches (`downloads.py`), seeds are this process's, cross candidates of one
repository only, and are never seen by an agent's or a verifier's phase: only the base stage of
a later setup binds one, read-only. At most `CAPACITY` are kept, the least recently used removed
first; all are removed when the process ends.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import stat
import tarfile
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from selfbench._scratch import process_scoped
from selfbench._text import printable
from selfbench.artifacts.compiled import LocatedTask
from selfbench.bundle import layout
from selfbench.bundle.render_prepare import SEED, prepare_arguments
from selfbench.environments.local.sandbox import copy_tree
from selfbench.patches import is_dependency_manifest
from selfbench.toolchains import Provisioned
from selfbench.toolchains.versions import expand_toolchains

__all__ = [
    "CAPACITY",
    "SEED",
    "SEEDED",
    "VENV_MAKER_FILES",
    "SeedRefused",
    "SeedStore",
    "Snapshot",
    "inputs_digest",
    "seed_key",
    "seed_store",
    "seeded_directories",
    "setup_inputs",
]

SEEDED = (".venv", "node_modules")
"""The directory names a seed carries (the base stage's `find` names them too)."""

CAPACITY = 2
"""At most this many seeds at once (each holds a copy of the installed dependencies)."""

_CONFIGURATION = frozenset(
    {
        ".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml", ".python-version",
        ".nvmrc", ".node-version", "setup.py", "setup.cfg",
    }
)  # fmt: skip
"""Files besides the manifests that decide what a setup installs."""

VENV_MAKER_FILES = frozenset({"_virtualenv.pth", "_virtualenv.py"})
"""Files in `site-packages` that the tool making a venv writes (uv, virtualenv), in no
distribution's `RECORD`."""


class SeedRefused(Exception):  # noqa: N818 - a refusal, said as one
    """A seed that would carry what the setup's own run wrote into its environment."""


_NODE_CACHES = (".cache", ".vite")
"""Tools' caches inside `node_modules`, keyed by the project's own files: never seeded."""

_FILE_DEPENDENCY = b'"file:'
"""A manifest naming a local dependency by path: some managers copy it into `node_modules`."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a snapshot holds that a seed depends on: the digest of each manifest, and every path
    (files and the directories above them), relative, without a leading `./`."""

    manifests: dict[str, str]
    paths: frozenset[str]
    file_dependencies: bool
    """Whether a manifest names a `file:` dependency."""

    @classmethod
    def read(cls, archive: Path) -> Snapshot:
        """Read a snapshot (`git archive`'s tar.gz) once, streaming."""
        manifests: dict[str, str] = {}
        paths: set[str] = set()
        file_dependencies = False
        with tarfile.open(archive, mode="r|gz") as tar:
            for member in tar:
                name = str(PurePosixPath(member.name.removeprefix("./")))
                paths.add(name)
                paths.update(str(parent) for parent in PurePosixPath(name).parents)
                base = PurePosixPath(name).name
                if member.isfile() and (is_dependency_manifest(name) or base in _CONFIGURATION):
                    handle = tar.extractfile(member)
                    content = handle.read() if handle is not None else b""
                    manifests[name] = hashlib.sha256(content).hexdigest()
                    file_dependencies |= _FILE_DEPENDENCY in content
        paths.discard(".")
        return cls(manifests, frozenset(paths), file_dependencies)


def seed_key(
    located: LocatedTask,
    snapshot: Snapshot,
    toolchains: Provisioned | None,
    setup_env: Iterable[tuple[str, str]],
) -> str:
    """The digest of what decides a setup's installed dependencies (see the module docstring)."""
    inputs = setup_inputs(located, toolchains, setup_env)
    return inputs_digest(
        {**inputs, "repo": located.definition.repo, "manifests": snapshot.manifests}
    )


def setup_inputs(
    located: LocatedTask, toolchains: Provisioned | None, setup_env: Iterable[tuple[str, str]]
) -> dict[str, object]:
    """What every setup of a task runs with: the stages' arguments (workdir, `setupCommand`,
    the toolchains whose steps run), the toolchains mounted, the setup environment."""
    definition = located.definition
    declared = definition.toolchains if toolchains is not None else ()
    return {
        "arguments": list(prepare_arguments(definition, expand_toolchains(declared))),
        "toolchains": repr(toolchains) if toolchains is not None else None,
        "setupEnv": sorted(setup_env),
    }


def inputs_digest(inputs: dict[str, object]) -> str:
    """The SHA-256 of inputs as canonical JSON."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode("utf-8")).hexdigest()


def seeded_directories(tree: Path, snapshot: Snapshot) -> list[str]:
    """The `SEEDED` directories below `tree` that setup made (the snapshot holds nothing at their
    path), relative; none inside `.git` or inside another one, no link followed."""
    names = SEEDED if not snapshot.file_dependencies else (".venv",)
    found: list[str] = []
    for directory, dirnames, _ in os.walk(tree):
        relative = Path(directory).relative_to(tree)
        keep = []
        for name in sorted(dirnames):
            path = relative / name
            if name == ".git" or (Path(directory) / name).is_symlink():
                continue
            if name in SEEDED:  # never walked into, seeded or not
                if name in names and path.as_posix() not in snapshot.paths:
                    found.append(path.as_posix())
                continue
            keep.append(name)
        dirnames[:] = keep
    return found


def _inside(root: Path, path: Path) -> bool:
    """Whether `path` is below `root` (both absolute, normalised) with no link on the way."""
    if not path.is_relative_to(root) or path == root:
        return False
    current = path.parent
    while current != root:
        if current.is_symlink():
            return False
        current = current.parent
    return True


def _drop_legacy_links(site: Path) -> None:
    """Remove a legacy editable install of the tree (`setup.py develop`): each `*.egg-link`
    naming a directory in `/app`, and those directories' lines of `easy-install.pth` (the file
    too once no line is left)."""
    app = str(layout.CONTAINER_APP)
    own = (app, f"{app}/")
    for link in sorted(site.glob("*.egg-link")):
        if not link.is_symlink() and link.is_file():
            first = link.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0].strip()
            if first == app or first.startswith(own[1]):
                link.unlink()
    paths = site / "easy-install.pth"
    if paths.is_symlink() or not paths.is_file():
        return
    lines = paths.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    kept = [line for line in lines if not (line.strip() == app or line.startswith(own[1]))]
    if len(kept) == len(lines):
        return
    if any(line.strip() for line in kept):
        paths.write_text("".join(kept), encoding="utf-8")
    else:
        paths.unlink()


def _sites(venv: Path) -> list[Path]:
    """The `site-packages` directories of a seeded `.venv`, reached through no link."""
    lib = venv / "lib"
    if lib.is_symlink() or not lib.is_dir():
        return []
    return [
        site
        for site in sorted(lib.glob("python*/site-packages"))
        if _inside(venv, site) and not site.is_symlink()
    ]


def _drop_own_installs(venv: Path) -> None:
    """Remove from a seeded `.venv` every distribution installed from the tree itself: its
    `direct_url.json` names a `file:` URL in `/app`. The files its `RECORD` lists go too, when
    they are inside the venv (never through a link); and a legacy editable install of the tree
    (`_drop_legacy_links`)."""
    app = f"file://{layout.CONTAINER_APP}"
    for site in _sites(venv):
        _drop_legacy_links(site)
        for info in sorted(site.glob("*.dist-info")):
            if info.is_symlink() or not info.is_dir():
                continue
            url = _direct_url(info / "direct_url.json")
            if url is None or not (url == app or url.startswith(f"{app}/")):
                continue
            for entry in _record(info / "RECORD"):
                path = Path(os.path.normpath(site / entry))
                if _inside(venv, path) and (path.is_symlink() or path.is_file()):
                    path.unlink()
                    _remove_empty(path.parent, site)
            shutil.rmtree(info, ignore_errors=True)


def _check_records(venv: Path) -> None:
    """Hold a seeded `.venv` to its distributions' records (see the module): every file of each
    `site-packages`, and every file the records list elsewhere in the venv (`bin/` scripts), is
    a regular file its `RECORD` lists with the size and digest it has; bytecode is removed.

    Raises:
        SeedRefused: a file no `RECORD` lists, one that is no regular file, or one whose size
            or digest differs from its record (the path printable, on one line).
    """
    for site in _sites(venv):
        recorded = _recorded(site)
        for directory, dirnames, filenames in os.walk(site):
            here = Path(directory)
            linked = [name for name in dirnames if (here / name).is_symlink()]
            dirnames[:] = [name for name in dirnames if name not in linked]
            for name in (*filenames, *linked):  # a link is a file here, never followed
                _check_file(venv, here / name, recorded.get(here / name), maker=here == site)
        for path, rows in recorded.items():
            outside = not path.is_relative_to(site) and _inside(venv, path)
            if outside and (path.is_symlink() or path.exists()):
                _check_file(venv, path, rows, maker=False)


def _check_file(venv: Path, path: Path, rows: set[tuple[str, str]] | None, *, maker: bool) -> None:
    """Check one file of a seeded venv against its `RECORD` rows ((digest, size) of each
    distribution listing it; None for none); `maker`: in `site-packages` itself, where a venv's
    maker writes its own files."""
    shown = printable(path.relative_to(venv.parent).as_posix())
    if path.parent.name == "__pycache__" and path.suffix == ".pyc":
        path.unlink()  # loaded in place of its source when its header matches: never seeded
        return
    if rows is None:
        if maker and path.name in VENV_MAKER_FILES and not path.is_symlink():
            return
        raise SeedRefused(f"{shown} is in no distribution's RECORD")
    status = os.lstat(path)
    if not stat.S_ISREG(status.st_mode):
        raise SeedRefused(f"{shown} is not a regular file")
    if path.name == "RECORD" and path.parent.name.endswith(".dist-info"):
        return  # a record does not hold its own digest
    digests = {digest for digest, _ in rows}
    sizes = {size for _, size in rows}
    if "" in digests:
        raise SeedRefused(f"{shown} has no digest in its distribution's RECORD")
    if "" not in sizes and str(status.st_size) not in sizes:
        raise SeedRefused(f"{shown} differs from its distribution's RECORD")
    if _file_digest(path) not in digests:
        raise SeedRefused(f"{shown} differs from its distribution's RECORD")


def _recorded(site: Path) -> dict[Path, set[tuple[str, str]]]:
    """Each path the `RECORD`s in `site` list (normalised), with the (digest, size) each gives
    it as written (`sha256=…`; "" for none): a path two distributions share has both."""
    found: dict[Path, set[tuple[str, str]]] = {}
    for info in sorted(site.glob("*.dist-info")):
        if info.is_symlink() or not info.is_dir():
            continue
        for entry, digest, size in _record_rows(info / "RECORD"):
            found.setdefault(Path(os.path.normpath(site / entry)), set()).add((digest, size))
    return found


def _file_digest(path: Path) -> str:
    """A regular file's digest as a `RECORD` writes it: `sha256=` and urlsafe base64, unpadded;
    opened without following a link or waiting on a pipe."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as handle:
        raw = hashlib.file_digest(handle, "sha256").digest()
    return "sha256=" + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _remove_empty(directory: Path, site: Path) -> None:
    """Remove `directory` and its parents below `site` while they are empty (as pip does)."""
    while directory != site and directory.is_relative_to(site):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _direct_url(path: Path) -> str | None:
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) else None


def _record(path: Path) -> list[str]:
    """The paths a `RECORD` lists (its first column)."""
    return [entry for entry, _, _ in _record_rows(path)]


def _record_rows(path: Path) -> list[tuple[str, str, str]]:
    """(path, digest, size) of each row of a `RECORD` (a path with a comma is quoted CSV; the
    digest or size "" where the row gives none)."""
    if path.is_symlink() or not path.is_file():
        return []
    import csv  # noqa: PLC0415 - only a recorded seed reads a RECORD

    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        rows = [[*row, "", ""] for row in csv.reader(handle) if row and row[0]]
    return [(row[0], row[1], row[2]) for row in rows]


@dataclass
class _Seed:
    directory: Path
    users: int = 0


@dataclass
class SeedStore:
    """Seeds below `root` by key, least recently used first; safe to use from several threads."""

    root: Path
    capacity: int = CAPACITY
    _seeds: OrderedDict[str, _Seed] = field(default_factory=OrderedDict)
    _made: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def use(self, key: str) -> Iterator[Path | None]:
        """The seed with `key` (kept while used), or None when there is none."""
        with self._lock:
            seed = self._seeds.get(key)
            if seed is not None:
                seed.users += 1
                self._seeds.move_to_end(key)
        try:
            yield seed.directory if seed is not None else None
        finally:
            if seed is not None:
                with self._lock:
                    seed.users -= 1
                self._evict()

    def record(self, key: str, tree: Path, snapshot: Snapshot) -> tuple[str, ...]:
        """Copy the seeded directories of a tree just set up (`seeded_directories`) as the seed
        for `key`; what was copied (nothing when a seed with `key` exists).

        Raises:
            CalledProcessError: a copy failed (a full disk, say); nothing is recorded.
            SeedRefused: the `.venv` holds what the setup's own run wrote (`_check_records`);
                nothing is recorded.
        """
        with self._lock:
            if key in self._seeds:
                return ()
            self._made += 1
            directory = self.root / str(self._made)
        directories = tuple(seeded_directories(tree, snapshot))
        if not directories:
            return ()
        try:
            for relative in directories:
                target = directory / relative
                target.mkdir(parents=True)
                copy_tree(tree / relative, target)
                if PurePosixPath(relative).name == ".venv":
                    _drop_own_installs(target)
                    _check_records(target)
                else:
                    for cache in _NODE_CACHES:
                        shutil.rmtree(target / cache, ignore_errors=True)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        with self._lock:
            if key in self._seeds:  # another setup of the same key recorded first
                shutil.rmtree(directory, ignore_errors=True)
                return ()
            self._seeds[key] = _Seed(directory)
        self._evict()
        return directories

    def _evict(self) -> None:
        with self._lock:
            unused = [key for key, seed in self._seeds.items() if seed.users == 0]
            over = max(0, len(self._seeds) - self.capacity)
            evicted = [self._seeds.pop(key) for key in unused[:over]]
        for seed in evicted:
            shutil.rmtree(seed.directory, ignore_errors=True)

    def keys(self) -> tuple[str, ...]:
        """The keys held, least recently used first."""
        with self._lock:
            return tuple(self._seeds)

    def clear(self) -> None:
        """Remove every seed not in use."""
        with self._lock:
            unused = [key for key, seed in self._seeds.items() if seed.users == 0]
            evicted = [self._seeds.pop(key) for key in unused]
        for seed in evicted:
            shutil.rmtree(seed.directory, ignore_errors=True)


def seed_store() -> SeedStore:
    """This process's seeds (made on first use, removed when the process ends)."""
    return process_scoped("selfbench-seeds-", SeedStore)
