"""JavaScript and TypeScript: install by the lockfile present, run the project's own runner.

Install (the lockfile nearest the project, walking up to the repository root, decides):
`bun.lock`/`bun.lockb` → `bun install --frozen-lockfile`; `pnpm-lock.yaml` → pnpm through
Corepack, `--frozen-lockfile`; `yarn.lock` → yarn through Corepack, `--immutable` (yarn 2+)
or `--frozen-lockfile` (yarn 1); `package-lock.json`/`npm-shrinkwrap.json` → `npm ci`; none →
`npm install --before=<the base commit's date>`, so the dependencies resolve to what was
published then. A lockfile already pins every version (and `npm ci` ignores `--before`); pnpm,
yarn and bun have no date option, so without a lockfile they install the newest that matches.
An npm lockfile whose registry tarballs name another registry's host (yarn's, a mirror since
gone) is installed with `--replace-registry-host=always`: from the configured one. yarn 1 and
pnpm have no such option: a `yarn.lock` or `pnpm-lock.yaml` naming a host that is neither
npm's nor yarn's own has its registry tarballs pointed at the configured registry for the
install, and the lockfile put back after it.

Package: the nearest one above the test files, or, when neither it nor the test files' imports
name a runner, the nearest above it that does (a workspace root running its packages' tests).

Runner: the first simple command of `scripts.test` (following `npm run x`, `pnpm x`, `yarn x`,
`bun run x`, `run-s x y:*` into other scripts, and through `cross-env`, `dotenv --`, `nyc` and
`c8` to the command they run) that runs jest, vitest, `node --test` or `bun test`; else the
dev dependencies (vitest, then jest); else the test files' imports (`node:test`, `bun:test`).
Each runs in its own form, one file per selector: `jest --ci --json --runTestsByPath`,
`vitest run --reporter=verbose`, `node --test`, `bun test`, keeping the
script's configuration options (`--config FILE`, node's `--import X` and the like).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from posixpath import dirname, join

from selfbench._json import JsonValue
from selfbench._shell import quote
from selfbench.draft._inferred import Inferred, in_directory, shell_words
from selfbench.draft._tree import Tree
from selfbench.draft.config import CONFIGURE
from selfbench.errors import DraftError
from selfbench.runners import RUNNERS, Runner, commands, detect, node_project

__all__ = ["NODE_MANIFESTS", "infer_node", "node_workdir"]

NODE_MANIFESTS = ("package.json",)
_LOCKS = (
    ("bun.lock", "bun"), ("bun.lockb", "bun"), ("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"),
    ("package-lock.json", "npm"), ("npm-shrinkwrap.json", "npm"),
)  # fmt: skip
# Corepack fetches pnpm and yarn from the npm registry npm itself is configured with (yarn 2+ from
# its own host otherwise), without a prompt, and without checking signatures against the keys it
# shipped with: a Corepack older than the package manager's current signing key refuses it.
_COREPACK = (
    "COREPACK_ENABLE_DOWNLOAD_PROMPT=0 COREPACK_INTEGRITY_KEYS=0 "
    "COREPACK_NPM_REGISTRY=\"$(npm config get registry | sed 's:/*$::')\" corepack"
)
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_RUN_ALL = {
    name: frozenset({"--max-parallel", "--npm-path"}) for name in ("npm-run-all", "run-s", "run-p")
}
"""npm-run-all's commands, which run scripts by name or pattern (`test:*`), and their options
that take a separate value."""
_COVERAGE_VALUES = frozenset(
    {"-r", "--reporter", "-n", "--include", "-x", "--exclude", "-e", "--extension", "-i"}
    | {"--require", "--report-dir", "--reports-dir", "-o", "--temp-dir", "--temp-directory"}
    | {"--src", "--cwd"}
)
_WRAPPERS = {
    "cross-env": frozenset[str](),
    "dotenv": frozenset({"-e", "-v", "-c"}),
    "nyc": _COVERAGE_VALUES,
    "c8": _COVERAGE_VALUES,
}
"""Programs a script runs its command through (its environment, its `.env`, its coverage), and
their options that take a separate value."""
_FOREIGN_TARBALL_RE = re.compile(
    r'"resolved":\s*"https?://(?!registry\.npmjs\.org(?::443)?/)[^/"]+/[^"]*/-/[^"/]+\.tgz'
)
"""A registry tarball in `package-lock.json` from another host than npm's own: the one host its
`replace-registry-host` default, `npmjs`, already sends to the configured registry."""
_FOREIGN_LOCK_RE = re.compile(
    r'(?:resolved "|tarball: )https?://(?!registry\.(?:npmjs\.org|yarnpkg\.com)(?::443)?/)'
    r'[^/"\s]+[^"\s]*?/(?:@[^/"\s]+/)?[^/"\s]+/(?:-|download(?:/@[^/"\s]+)?)/[^/"\s]+\.tgz'
)
"""A registry tarball in `yarn.lock` (`resolved "…"`) or `pnpm-lock.yaml` (`tarball: …`) from
another host than the two the managers send to the configured registry themselves, of the
shape `_REHOST_JS` rewrites (`<package>/-/<file>.tgz`; the `/download/` form is an old
mirror's)."""
# Hand-written: neither yarn 1 nor pnpm can be told to fetch a lockfile's tarballs from another
# host. The script keeps the lockfile aside and rewrites each registry tarball whose host is not
# the configured registry's to the configured registry's standard path of the same package
# (`name/-/file.tgz`, a scoped name's too); the integrity the lockfile pins is unchanged.
_REHOST_JS = (
    r'const fs=require("fs");const[f,r]=process.argv.slice(1);const to=r.replace(/\/+$/,"");'
    r'const own=new URL(to).host;const t=fs.readFileSync(f,"utf8");'
    r'fs.writeFileSync(f+".selfbench",t);fs.writeFileSync(f,t.replace('
    r'/(resolved "|tarball: )https?:\/\/([^\/"\s]+)[^"\s]*?\/((?:@[^\/"\s]+\/)?[^\/"\s]+)'
    r'\/(?:-|download(?:\/@[^\/"\s]+)?)\/([^\/"\s]+\.tgz)/g,'
    r'(m,p,h,n,x)=>h===own?m:p+to+"/"+n+"/-/"+x))'
)
_MAX_DEPTH = 3
_RUNNERS = tuple(runner for runner in RUNNERS if runner.node is not None)
"""The runners a Node project's script can run, in the registry's order."""
_KEEP_FLAG_RE = re.compile(
    r"--(?:experimental-[\w-]+|no-warnings|conditions=.*|import=.*|require=.*|loader=.*"
    r"|config=.*|preload=.*|env-file=.*|enable-source-maps|expose-gc|passWithNoTests"
    r"|colors?(?:=.*)?)"
)
_IMPORTS = tuple(
    (re.compile(node_project(runner).import_pattern), runner)
    for runner in _RUNNERS
    if node_project(runner).import_pattern
)


def _manager(tree: Tree, workdir: str) -> tuple[str, str | None, str]:
    """The package manager, the directory of its lockfile (None without one), and why."""
    for directory in _parents(workdir):
        for name, manager in _LOCKS:
            if tree.has(join(directory, name)):
                return manager, directory, join(directory, name).removeprefix("./")
    package = tree.json(join(workdir, "package.json")) or {}
    declared = str(package.get("packageManager") or "").split("@", 1)[0]
    if declared in ("pnpm", "yarn", "bun"):
        return declared, None, "package.json packageManager"
    return "npm", None, "no lockfile: npm install"


def _parents(workdir: str) -> list[str]:
    parts = [] if workdir == "." else workdir.split("/")
    return ["/".join(parts[:end]) or "." for end in range(len(parts), -1, -1)]


def _yarn_berry(tree: Tree, directory: str) -> bool:
    package = tree.json(join(directory, "package.json")) or {}
    declared = str(package.get("packageManager") or "")
    if declared.startswith("yarn@"):
        return not declared.startswith("yarn@1.")
    return tree.has(join(directory, ".yarnrc.yml"))


def _install(tree: Tree, manager: str, lock: str | None) -> str:
    """The install command; npm's without a lockfile is completed with `--before` by the caller."""
    frozen = lock is not None
    if manager == "bun":
        return "bun install --frozen-lockfile" if frozen else "bun install"
    if manager == "pnpm":
        return f"{_COREPACK} pnpm install" + (" --frozen-lockfile" if frozen else "")
    if manager == "yarn":
        if not frozen:
            return f"{_COREPACK} yarn install"
        if _yarn_berry(tree, lock or "."):  # node_modules, not Plug'n'Play: the runner's own bin
            return f"YARN_NODE_LINKER=node-modules {_COREPACK} yarn install --immutable"
        return f"{_COREPACK} yarn install --frozen-lockfile"
    return "npm ci" if frozen else "npm install"


def _dated(
    install: str, manager: str, lock: str | None, lock_source: str, tree: Tree
) -> tuple[str, str]:
    """npm without a lockfile resolves as of the base commit's date, npm with one that names
    another registry's tarballs fetches them from the configured registry; the command and a
    note."""
    if manager in ("yarn", "pnpm") and lock is not None:
        if _FOREIGN_LOCK_RE.search(tree.text(lock_source) or "") is None:
            return install, ""
        name = lock_source.rsplit("/", 1)[-1]  # one of _LOCKS' names: nothing to quote
        rehost = f'node -e {quote(_REHOST_JS)} {name} "$(npm config get registry)"'
        return (
            f"(set -e; {rehost}; trap 'mv -f {name}.selfbench {name}' EXIT; {install})",
            ", its tarballs from another registry fetched from the configured one",
        )
    if manager != "npm":
        return install, ""
    if lock is not None:
        if _FOREIGN_TARBALL_RE.search(tree.text(lock_source) or "") is None:
            return install, ""
        return (
            f"{install} --replace-registry-host=always",
            ", its tarballs from another registry fetched from the configured one",
        )
    date = tree.committed()
    return f"{install} --before={date}", f", as published before the base commit's date {date}"


def _script_commands(
    scripts: Mapping[str, JsonValue], name: str, depth: int = 0, seen: set[str] | None = None
) -> list[list[str]]:
    """The simple commands a script runs, scripts it runs by name followed (each once: a
    manifest whose every script runs `run-p "*"` costs one pass over them, not a power of
    them), wrappers unwrapped."""
    seen = set() if seen is None else seen
    script = scripts.get(name)
    if not isinstance(script, str) or depth > _MAX_DEPTH or name in seen:
        return []
    seen.add(name)
    found: list[list[str]] = []
    for argv in map(_unwrapped, commands(script)):
        target = _script_target(argv, scripts)
        targets = [target] if target is not None else _run_all_targets(argv, scripts)
        if targets is None or target == name:  # `bun test` in `test` is bun's runner
            found.append(argv)
            continue
        for followed in targets:
            if followed != name:
                found.extend(_script_commands(scripts, followed, depth + 1, seen))
    return found


def _unwrapped(argv: list[str]) -> list[str]:
    """The command a wrapper runs (`cross-env CI=1 jest`, `nyc --reporter lcov jest`, `dotenv -e
    .env.test -- jest`, each also through `npx`): `jest`; any other command as it is."""
    for _ in range(_MAX_DEPTH):
        if argv[:1] == ["npx"] and len(argv) > 1 and argv[1] in _WRAPPERS:
            argv = argv[1:]
        if not argv or argv[0] not in _WRAPPERS:
            return argv
        values, at = _WRAPPERS[argv[0]], 1
        while at < len(argv) and argv[at] != "--":
            word = argv[at]
            if word in values:
                at += 2
            elif word.startswith("-") or (argv[0] == "cross-env" and "=" in word):
                at += 1
            else:
                break
        if argv[at : at + 1] == ["--"]:
            at += 1
        argv = argv[at:]
    return argv


def _run_all_targets(argv: list[str], scripts: Mapping[str, JsonValue]) -> list[str] | None:
    """The scripts `npm-run-all`, `run-s` or `run-p` runs, in its order (`test:*` is every
    `test:` script one level down, `test:**` every one below), or None for another command."""
    if not argv or argv[0] not in _RUN_ALL:
        return None
    values, at, patterns = _RUN_ALL[argv[0]], 1, []
    while at < len(argv) and argv[at] != "--":
        word = argv[at]
        at += 2 if word in values else 1
        if not word.startswith("-"):
            patterns.append(word.split(" ", 1)[0])
    found: list[str] = []
    for pattern in patterns:
        glob = re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^:]*")
        found.extend(key for key in scripts if re.fullmatch(glob, key) and key not in found)
    return found


def _script_target(argv: list[str], scripts: Mapping[str, JsonValue]) -> str | None:
    """`npm run x`, `npm test`, `pnpm x`, `yarn x`, `bun run x`: the script named, or None."""
    if not argv or argv[0] not in _SCRIPT_RUNNERS:
        return None
    words = [word for word in argv[1:] if not word.startswith("-")]
    if words[:1] in (["run"], ["run-script"]):
        words = words[1:]
    if not words:
        return None
    return words[0] if words[0] in scripts else None


def _from_scripts(package: Mapping[str, JsonValue]) -> tuple[Runner, list[str]] | None:
    scripts = package.get("scripts")
    if not isinstance(scripts, dict):
        return None
    for argv in _script_commands(scripts, "test"):
        runner = detect(shell_words(argv))
        if runner in _RUNNERS:
            return runner, argv
    return None


def _from_dependencies(package: Mapping[str, JsonValue]) -> Runner | None:
    for key in ("devDependencies", "dependencies"):
        declared = package.get(key)
        if isinstance(declared, dict):
            found = [
                r for r in _RUNNERS if (name := node_project(r).dependency) and name in declared
            ]
            taken = {name for runner in found for name in node_project(runner).preferred_over}
            preferred = [runner for runner in found if runner.name not in taken]
            if preferred:
                return preferred[0]
    return None


def _from_imports(tree: Tree, test_files: Sequence[str]) -> Runner | None:
    for path in test_files:
        text = tree.text(path) or ""
        for pattern, runner in _IMPORTS:
            if pattern.search(text):
                return runner
    return None


def _names_runner(tree: Tree, directory: str) -> bool:
    """The package at `directory` names a runner: its test script runs one, or it depends on one."""
    package = tree.json(join(directory, "package.json").removeprefix("./")) or {}
    return _from_scripts(package) is not None or _from_dependencies(package) is not None


def node_workdir(tree: Tree, nearest: str, test_files: Sequence[str]) -> str:
    """The package whose runner runs the test files: `nearest`, the package holding them, unless
    neither it (its test script, its dependencies) nor the files' imports name a runner and a
    package above it does: a workspace whose root runs every package's tests (jest's own
    repository runs its packages' tests with its root's jest)."""
    if _names_runner(tree, nearest):
        return nearest
    if _from_imports(tree, test_files) is not None:
        return nearest
    directory = nearest
    while directory != ".":
        found = tree.nearest(dirname(directory) or ".", NODE_MANIFESTS)
        if found is None:
            break
        if _names_runner(tree, found):
            return found
        directory = found
    return nearest


def _kept(runner: Runner, argv: list[str]) -> list[str]:
    """The script's options that configure the runner (see `NodeProject.kept_options`)."""
    kept: list[str] = []
    values = node_project(runner).kept_options
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in values and at + 1 < len(argv):
            kept.extend(argv[at : at + 2])
            at += 2
            continue
        if _KEEP_FLAG_RE.fullmatch(word):
            kept.append(word)
        at += 1
    return kept


def _test_command(runner: Runner, argv: list[str], local: bool) -> str:
    words = node_project(runner).script_command(_kept(runner, argv[1:]), local)
    return f"{shell_words(words)} {{tests}}"


_READ = ", ".join(runner.label for runner in _RUNNERS[:-1]) + f" and {_RUNNERS[-1].label}"


def infer_node(tree: Tree, workdir: str, test_files: Sequence[str]) -> Inferred:
    """The JavaScript environment of the package at `workdir`.

    Raises:
        DraftError: no runner selfbench can read (mocha, ava, tap…) is found.
    """
    package_path = join(workdir, "package.json").removeprefix("./")
    package = tree.json(package_path) or {}
    manager, lock, lock_source = _manager(tree, workdir)
    found = _from_scripts(package)
    runner, argv, source = (
        (found[0], found[1], f"{package_path} scripts.test") if found else (None, [], "")
    )
    if runner is None:
        runner = _from_dependencies(package)
        source = f"{package_path} devDependencies"
    if runner is None:
        runner = _from_imports(tree, test_files)
        source = "the test files' imports"
    if runner is None:
        scripts = package.get("scripts")
        script = scripts.get("test") if isinstance(scripts, dict) else None
        what = f"scripts.test is {quote(str(script))}" if script else "it has no test script"
        raise DraftError(
            f"cannot infer the test runner of {package_path}: {what}; selfbench reads {_READ} "
            f"(set runner and testCommand {CONFIGURE})"
        )
    install, note = _dated(_install(tree, manager, lock), manager, lock, lock_source, tree)
    install = in_directory(install, lock or workdir, workdir)
    local = (lock or workdir) == workdir
    return Inferred(
        toolchains=("bun",) if manager == "bun" else runner.toolchains,
        setup_command=install,
        test_command=_test_command(runner, argv or [runner.name], local),
        runner=runner.setting,
        sources={
            "toolchains": lock_source if manager == "bun" else package_path,
            "setupCommand": lock_source + note,
            "testCommand": source,
            "runner": source,
        },
    )
