"""Chores: merged changes that are upkeep, not work, told apart by title and diff. Pure.

A task needs a change whose title names work an agent can be asked to do. These do not, so
mining excludes them, each with its one-line reason. A rule reads the *core* of a title: the
trailing `(#N)`, a conventional-commit prefix (`chore(deps): `, `ci: `, `feat!: `) and an issue
prefix (`Fix #291: `) removed, a final dot dropped. The rules, in the order they are checked:

1. **autoupdate** (`AUTOUPDATE`): pre-commit.ci's requests (`[pre-commit.ci] pre-commit
   autoupdate`, `… auto fixes from pre-commit.com hooks`), `Update pre-commit hooks`, and updates
   of CI actions (`ci: update actions/checkout`, `Bump the github-actions group …`).
2. **release** (`RELEASE`): `Release 3.0`, `Version 0.28.0`, `v1.2.3`, `Prepare 2.0 release`,
   `Bump version to 2.1.0`, `Bump version: 1.0 → 1.1`, `Bump for development`, `start version
   8.5.0`, `chore(main): release 2.3.0` (release-please), `Version Packages` (changesets). Not
   `Release the lock on error`: a version must follow.
3. **support matrix** (`SUPPORT_MATRIX`): a title made only of support-matrix words — a verb
   (drop, add, support, require, test …), a runtime (Python, PyPy, Node, Go …) or a version
   (`3.9`, `py38`, `< 3.6`) or the matrix itself, and glue (`for`, `on`, `CI`, `EOL`, `support`,
   `classifiers` …): `Drop Python 3.8`, `Drop 3.9`, `Add Python 3.13 to CI matrix`, `chore: drop
   Python 3.9 support (EOL)`. One other word makes it work: `Add support for Python 3.13 type
   parameters in parser`, `Fix debug wheel support for Python 3.8`.
4. **dependency bump** (`DEPENDENCY_BUMP`): a `deps` scope (`chore(deps): …`, `build(deps-dev):
   …`), Dependabot's and Renovate's titles (`Bump requests from 2.31 to 2.32`, `Bump the pip
   group …`, `Update dependency eslint to v9`, `Lock file maintenance`), `Update requirements`,
   `Update httpcore to 0.10`, `Upgrade to latest mypy`, `Bump coverage`. **The diff decides
   here**, as such titles also name work: the change must touch a file where versions are
   pinned (a manifest, a lockfile, `requirements/*.txt`, a tooling file such as
   `.pre-commit-config.yaml` or `tox.ini`), else it is no bump (httpx's `Bump coverage` raised
   the test coverage). And when its implementation part, tooling files left out, meets the
   medium gate (`substantial`), the change adapted the code to the new version and stays a
   candidate (httpx's `Update to httpcore 0.10`: eight modules, 180 lines).
5. **formatting** (`FORMATTING`), by title: a formatter run (`Autoformat with black`, `Run
   black`, `Reformat code with ruff`, `Apply prettier formatting`). Its diff changes quotes,
   commas and line breaks, which no whitespace test sees. By diff, whatever the title: a change
   whose implementation files differ only in whitespace and blank lines (`git diff -w
   --ignore-blank-lines` shows none of them) is `FORMATTING_ONLY` (`selfbench.mine.api`).
6. **documentation** (`DOCUMENTATION`), by title: a conventional commit of type `docs`
   (`docs: restructure the guide`, `docs(api): …`), documentation work whatever files it moved.
   By diff, whatever the title: a change whose files besides tests are all documentation is
   `changes only documentation` (`selfbench.mine.api`).

The other rules need no diff: an autoupdate, a release, a support-matrix change and a `docs:`
change are upkeep whatever code they carry (a bumped hook's reformatting, a release's last-minute
fix named by nothing in its title, the compatibility code a dropped Python leaves behind).

Reverts and the changes they revert are the walk's (`selfbench.mine.merged`, `REVERTS`).

The reasons of the code chores — a change whose implementation files are only packaging or
build configuration, comments and docstrings, type annotations, translation wrapping or
identifier renames, whatever its title — are here too (`PACKAGING_ONLY`, `COMMENTS_ONLY`,
`TYPING_ONLY`, `I18N_ONLY`, `RENAME_ONLY`); `selfbench.mine.code_chores` reads the diffs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from posixpath import basename

from selfbench.mine.rank import eligible_tiers
from selfbench.runners import tooling_files

__all__ = [
    "AUTOUPDATE",
    "COMMENTS_ONLY",
    "DEPENDENCY_BUMP",
    "DOCUMENTATION",
    "FORMATTING",
    "FORMATTING_ONLY",
    "I18N_ONLY",
    "MOSTLY_COMMENTS",
    "MOSTLY_I18N",
    "MOSTLY_LINT",
    "MOSTLY_TYPING",
    "PACKAGING_ONLY",
    "RELEASE",
    "RENAME_ONLY",
    "RULES",
    "SUPPORT_MATRIX",
    "TOOLING_FILES",
    "TYPING_ONLY",
    "ChangedPath",
    "ChoreRule",
    "chore_reason",
    "core_title",
    "is_pinning_path",
    "matching_rule",
    "substantial",
]

AUTOUPDATE = "updates pre-commit hooks or CI actions"
RELEASE = "releases or bumps the version"
SUPPORT_MATRIX = "changes the supported versions (support matrix)"
DEPENDENCY_BUMP = "bumps dependencies or lockfiles"
FORMATTING = "runs a formatter"
FORMATTING_ONLY = "changes only whitespace in its implementation files"
DOCUMENTATION = "changes documentation (a docs: title)"
TYPING_ONLY = "changes only type annotations, stubs or type-checker configuration"
PACKAGING_ONLY = "changes only packaging or build configuration"
I18N_ONLY = "only wraps existing strings for translation"
COMMENTS_ONLY = "changes only comments, docstrings or layout in its code"
RENAME_ONLY = "only renames identifiers"
MOSTLY_TYPING = (
    "mostly type annotations, stubs or type-checker configuration: typing explains {typing} of"
    " {tokens} changed code tokens, {tests} in its tests it does not"
)
"""Why a candidate is ranked last in its tier (`selfbench.mine.typing_share`), not excluded."""
MOSTLY_LINT = (
    "mostly layout and lint fixes: they explain {lint} of {tokens} changed code tokens,"
    " {tests} in its tests they do not"
)
"""Why a candidate is ranked last in its tier (`selfbench.mine.lint_share`), not excluded."""
MOSTLY_COMMENTS = (
    "mostly comments and docstrings: they explain {comments} of {tokens} changed tokens,"
    " {tests} in its tests they do not"
)
"""Why a candidate is ranked last in its tier (`selfbench.mine.comment_share`), not excluded."""
MOSTLY_I18N = (
    "mostly translation wrapping: it explains {i18n} of {tokens} changed code tokens,"
    " {tests} in its tests it does not"
)
"""Why a candidate is ranked last in its tier (`selfbench.mine.i18n_share`), not excluded."""

TOOLING_FILES = frozenset(
    {
        ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", "tox.ini", "noxfile.py", "setup.cfg",
        "Makefile", "MANIFEST.in", ".flake8", "mypy.ini", ".coveragerc", ".editorconfig",
        ".gitignore", ".gitattributes", ".readthedocs.yaml", ".readthedocs.yml", "renovate.json",
        ".pylintrc", ".prettierrc", ".eslintrc.json", "biome.json",
    }
) | tooling_files()  # fmt: skip
"""Implementation by path (`selfbench.mine.classify`), but configuration a bump may touch."""

ChangedPath = tuple[str, str, int]
"""A changed file as the rules read it: path, kind (`selfbench.mine.classify`), changed lines."""

_PINNING_KINDS = frozenset({"dependencies", "lockfile"})
_PINNING_PATH_RE = re.compile(r"(?:^|/)(?:requirements|constraints)[^/]*(?:/[^/]+)?\.(?:txt|in)$")
"""pip-tools' `requirements/dev.in`/`dev.txt`, `constraints.txt`: pins a manifest rule misses."""
_I = re.IGNORECASE
_NUMBER_RE = re.compile(r"\s*\(#\d+\)\s*$")
_CONVENTIONAL_RE = re.compile(r"^(?P<type>[a-z]+)(?:\((?P<scope>[^)]*)\))?!?:\s*", _I)
_ISSUE_PREFIX_RE = re.compile(r"^(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s+#\d+\s*:\s*", _I)
_VERSION = r"v?\d+(?:\.\d+)*(?:[-.+]?[a-z0-9.]+)?"
_FORMATTERS = (
    r"(?:black|ruff(?:\s+format)?|prettier|isort|yapf|autopep8|gofmt|goimports|rustfmt"
    r"|clang-format|biome|dprint|the\s+formatters?|formatters?)"
)


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns), _I)


_AUTOUPDATE_RE = _any(
    r"pre-commit\s+auto-?update.*",
    r"auto-?update\s+(?:the\s+)?pre-commit.*",
    r"(?:update|bump|upgrade|refresh)\s+(?:the\s+|all\s+)*pre-commit(?:\s+(?:hooks?|config"
    r"(?:uration)?|versions?|dependencies|revs?))?(?:\s+(?:to|and)\s+.*)?",
    r"(?:update|bump|upgrade|pin)\s+(?:the\s+|all\s+)*(?:\S+\s+)?(?:github[- ]actions?|ci"
    r"\s+actions|workflow\s+actions|actions/[\w.-]+|[\w.-]+/[\w.-]+\s+action)\b.*",
)
_RELEASE_RE = _any(
    rf"(?:prepare\s+(?:for\s+)?(?:the\s+)?)?(?:release|releasing|version|tag|cut)\s*:?\s*"
    rf"(?:version\s+)?{_VERSION}(?:\s+release)?",
    r"(?:prepare\s+(?:for\s+)?(?:the\s+)?)?v?\d+(?:\.\d+)+(?:[-.+]?[a-z0-9.]+)?(?:\s+release)?",
    rf"(?:bump|update|set|increment|change)\s+(?:the\s+)?(?:package\s+|project\s+)?version"
    rf"(?:\s+number)?(?:\s*(?:to|for|:)?\s*(?:{_VERSION}(?:\s*(?:→|->|to)\s*{_VERSION})?|(?:the"
    rf"\s+)?(?:next\s+)?(?:release|development|dev)(?:\s+\S+)?))?",
    r"bump\s+(?:release\s+|version\s+)?(?:for|to)\s+(?:the\s+)?(?:next\s+)?(?:release|"
    r"development|dev)\b.*",
    r"(?:back\s+to|start|begin|open)\s+(?:development|dev)\b.*",
    rf"start\s+(?:version\s+)?{_VERSION}(?:\s+development)?",
    rf"(?:fix|set)\s+(?:the\s+)?dev\s+version\s*{_VERSION}?",
    r"version\s+packages\b.*",
    r"(?:bump|update)\s+to\s+v?\d+(?:\.\d+)+(?:[-.+]?[a-z0-9.]+)?",
)
_DOCUMENTATION_TYPES = frozenset({"docs", "doc"})
_AUTOUPDATE_SCOPES = frozenset({"pre-commit", "precommit", "github-actions", "actions"})
_UPDATE_RE = re.compile(r"(?:update|bump|upgrade|auto-?update)\b", _I)
_DEPENDENCY_SCOPES = frozenset({"deps", "deps-dev", "dev-deps", "dependencies", "dependency"})
_DEPENDENCY_RE = _any(
    r"(?:bump|update|upgrade|pin|unpin)\s+(?:the\s+)?\S+\s+(?:requirement\s+)?from\s+\S+\s+to"
    r"\s+\S+.*",
    r"bump\s+the\s+\S+\s+group\b.*",
    r"(?:update|upgrade|bump|pin)\s+(?:dependency|module|package|crate|gem)\s+\S+\s+to\s+\S+.*",
    r"(?:update|upgrade|bump|pin|unpin|refresh|regenerate|relock)\s+(?:all\s+)?(?:the\s+)?"
    r"(?:(?:dev|development|test|docs?|build|python|js|npm|pip|rust|go|ci)\s+)?(?:dependencies|"
    r"deps|requirements|lock\s*files?|lockfiles?|pins|pinned\s+versions)\b.*",
    r"lock\s*file\s+maintenance",
    r"(?:update|upgrade|bump)\s+(?:to\s+)?(?:the\s+)?(?:latest\s+)?[\w.\-\[\]/@]+\s+(?:to\s+)?"
    + _VERSION,
    r"(?:update|upgrade|bump)\s+(?:to\s+)?(?:the\s+)?latest\s+\S+(?:\s+versions?)?",
    r"bump\s+[\w.\-/@]+",
)
_FORMATTING_RE = _any(
    r"(?:auto-?format|re-?format|format|blacken)(?:ted|ting|ed)?(?:\s+(?:the\s+|all\s+)*(?:code"
    rf"|codebase|source|sources|files|everything|project|repository|repo))?(?:\s+(?:with|using|"
    rf"by|via)\s+(?:the\s+)?{_FORMATTERS})?(?:\s+(?:formatting|format))?",
    rf"(?:run|ran|apply|applied)\s+(?:the\s+)?{_FORMATTERS}(?:\s+(?:formatting|format|"
    r"formatter|style))?(?:\s+(?:to|on)\s+(?:the\s+|all\s+)*(?:code|codebase|source|files|"
    r"everything|project))?",
)

_MATRIX_VERBS = frozenset(
    {
        "drop", "dropping", "dropped", "remove", "removing", "removed", "add", "adding", "added",
        "support", "supports", "supporting", "deprecate", "deprecating", "test", "testing",
        "require", "requires", "bump", "raise", "increase", "update", "upgrade", "enable",
        "declare", "officially", "end",
    }
)  # fmt: skip
_BARE_VERSION_VERBS = frozenset({"drop", "add", "support", "test", "testing", "remove"})
_MATRIX_SUBJECTS = frozenset(
    {
        "python", "pythons", "py", "pypy", "cpython", "node", "nodejs", "node.js", "go", "golang",
        "ruby", "jdk", "java", "php", "rust", "msrv", "runtime", "runtimes", "interpreters",
        "matrix", "eol",
    }
)  # fmt: skip
_MATRIX_GLUE = frozenset(
    {
        "the", "for", "on", "in", "to", "from", "with", "and", "or", "a", "of", "as", "it", "its",
        "is", "now", "ci", "support", "supported", "official", "testing", "tests", "tested",
        "life", "end-of-life", "classifiers", "classifier", "wheels", "wheel", "builds", "build",
        "version", "versions", "minimum", "min", "oldest", "older", "old", "legacy", "deprecated",
        "unsupported", "compat", "compatibility", "code", "shims", "env", "envs", "environment",
        "environments", "against", "x", "only", "new", "newer", "latest", "+",
        "<", "<=", ">", ">=", "==", "~=",
    }
)  # fmt: skip
_MATRIX_WORDS = _MATRIX_VERBS | _MATRIX_SUBJECTS | _MATRIX_GLUE
_MATRIX_TOKEN_RE = re.compile(r"[<>=~]=?|[\w.+-]+")
_RUNTIME_VERSION_RE = re.compile(r"(?:py|cp|pypy|python|node|go)?v?\d+(?:\.\d+)*(?:\.x|t|\+)?")


@dataclass(frozen=True, slots=True)
class ChoreRule:
    """One kind of chore: its name, its reason, and whether the diff must confirm it."""

    name: str
    reason: str
    diff_decides: bool


RULES: tuple[ChoreRule, ...] = (
    ChoreRule("autoupdate", AUTOUPDATE, diff_decides=False),
    ChoreRule("release", RELEASE, diff_decides=False),
    ChoreRule("support-matrix", SUPPORT_MATRIX, diff_decides=False),
    ChoreRule("dependency-bump", DEPENDENCY_BUMP, diff_decides=True),
    ChoreRule("formatting", FORMATTING, diff_decides=False),
    ChoreRule("documentation", DOCUMENTATION, diff_decides=False),
)


def core_title(title: str) -> tuple[str, str | None]:
    """The title's core (see the module) and its conventional-commit scope, if any."""
    core = _NUMBER_RE.sub("", title.strip())
    scope = None
    conventional = _CONVENTIONAL_RE.match(core)
    if conventional is not None:
        scope = (conventional.group("scope") or "").strip().lower() or None
        core = core[conventional.end() :]
    core = _ISSUE_PREFIX_RE.sub("", core)
    return core.strip().rstrip(".").strip(), scope


def _is_support_matrix(core: str) -> bool:
    words = [word.strip(".,") for word in _MATRIX_TOKEN_RE.findall(core.lower())]
    words = [word for word in words if word]
    versions = [word for word in words if _RUNTIME_VERSION_RE.fullmatch(word)]
    named = any(word in _MATRIX_SUBJECTS for word in words)
    dotted = any("." in word or not word[0].isdigit() for word in versions)  # 3.9, py38, not 2
    verbs = {word for word in words if word in _MATRIX_VERBS}
    # A bare version names a runtime only after drop/add/support/test: `Bump tox from 3.24.1 to
    # 3.24.3` bumps a dependency
    if not verbs or not (named or (dotted and not verbs.isdisjoint(_BARE_VERSION_VERBS))):
        return False
    return all(word in _MATRIX_WORDS or word in versions for word in words)


def _is_autoupdate(title: str, core: str, scope: str | None) -> bool:
    if "pre-commit.ci" in title.lower() or _AUTOUPDATE_RE.fullmatch(core):
        return True
    return scope in _AUTOUPDATE_SCOPES and _UPDATE_RE.match(core) is not None


def _is_documentation(title: str) -> bool:
    conventional = _CONVENTIONAL_RE.match(title.strip())
    return conventional is not None and conventional.group("type").lower() in _DOCUMENTATION_TYPES


def _is_dependency_bump(core: str, scope: str | None) -> bool:
    return scope in _DEPENDENCY_SCOPES or _DEPENDENCY_RE.fullmatch(core) is not None


_TESTS: dict[str, Callable[[str, str, str | None], bool]] = {
    "autoupdate": _is_autoupdate,
    "release": lambda _, core, __: _RELEASE_RE.fullmatch(core) is not None,
    "support-matrix": lambda _, core, __: _is_support_matrix(core),
    "dependency-bump": lambda _, core, scope: _is_dependency_bump(core, scope),
    "formatting": lambda _, core, __: _FORMATTING_RE.fullmatch(core) is not None,
    "documentation": lambda title, _, __: _is_documentation(title),
}
"""Each rule's title test: (title, core, scope) -> whether it matches."""


def matching_rule(title: str) -> ChoreRule | None:
    """The first rule whose title test the title passes (the diff not consulted)."""
    core, scope = core_title(title)
    return next((rule for rule in RULES if _TESTS[rule.name](title, core, scope)), None)


def substantial(files: Iterable[ChangedPath]) -> bool:
    """Whether the implementation files, tooling left out, meet the medium gate: enough code
    changed that a bump's title does not tell the whole change."""
    code = [
        lines
        for path, kind, lines in files
        if kind == "implementation" and basename(path) not in TOOLING_FILES
    ]
    return "medium" in eligible_tiers(len(code), sum(code))


def is_pinning_path(path: str) -> bool:
    """Whether a path pins versions outside the manifests: pip-tools' `requirements/dev.in`,
    `constraints.txt` …"""
    return _PINNING_PATH_RE.search(path) is not None


def _pins_versions(files: Iterable[ChangedPath]) -> bool:
    return any(
        kind in _PINNING_KINDS or basename(path) in TOOLING_FILES or is_pinning_path(path)
        for path, kind, _ in files
    )


def chore_reason(title: str, files: Iterable[ChangedPath]) -> str | None:
    """Why a change titled `title` that changed `files` is a chore, or None when it is work."""
    rule = matching_rule(title)
    if rule is None:
        return None
    if rule.diff_decides:
        files = tuple(files)
        if not _pins_versions(files) or substantial(files):
            return None
    return rule.reason
