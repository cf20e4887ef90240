"""`mine_repository`: a clone's merged work in, ranked candidates and exclusions out.

The walk (`git_history`) is the only long part; everything after it is pure over what it read.
Exclusion reasons, one each, in the order they are checked:

* `the first commit has no base` / `base commit not in this clone (shallow history)`
* `reverts an earlier change`, `reverted later by <sha7>`
* `merges the main branch into a branch`
* `not a merged pull request (--plain includes plain commits)`
* `syncs branch <source> into <target>` (a request merging a long-lived branch into another)
* `pull request #N is a draft`, `authored by a bot (<name>)`
* a chore's reason (`selfbench.mine.chores`): an autoupdate, a release, a support-matrix change,
  a dependency bump, a formatter run; then `changes only whitespace in its implementation
  files` (one `git diff-tree -w`, fed each change still standing as the walk goes), and last
  the code chores of the changes still standing (`selfbench.mine.code_chores`, read from the
  same diff-tree's patches): only packaging or build configuration, only docstrings and
  comments, only type annotations, only translation wrapping, only identifier renames
* `changes no files`
* `changes only documentation` (besides tests: docs, changelogs, a docs site's configuration,
  perhaps CI files), `changes only CI workflows` (besides tests), whatever the title says
* `no implementation changes (only <kinds>)`
* `below the easy gate: <f> implementation files, <n> changed implementation lines`
* `no test file a known runner runs` (`selfbench.mine.classify.is_runnable_test`; or the
  change removes every one it touches: no held-out test could be cut from it)
* `beyond the tier budgets`
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from selfbench._fs import write_atomic
from selfbench._git import GitStream
from selfbench.contract import Difficulty
from selfbench.errors import MineError
from selfbench.mine.chores import FORMATTING_ONLY, chore_reason
from selfbench.mine.classify import (
    FILE_CLASSES,
    classify_path,
    detect_ecosystems,
    is_runnable_test,
    toolchains_for,
)
from selfbench.mine.code_chores import MAX_TEXT_BYTES as _MAX_TEXT_BYTES
from selfbench.mine.code_chores import (
    ChangeCode,
    ImplementationFile,
    code_chore_reasons,
    file_kind,
)
from selfbench.mine.git_history import (
    Commit,
    FileStat,
    RepositoryInfo,
    Section,
    WhitespaceCheck,
    diff_stats,
    present_paths,
    read_history,
    read_texts,
)
from selfbench.mine.git_history import read_repository as _read_repository
from selfbench.mine.merged import (
    MAIN_BRANCHES,
    REVERTED_BY,
    REVERTS,
    MessageFacts,
    branch_sync,
    is_merge_of_main,
    parse_message,
    reverted_commits,
    reverted_request,
    strip_number,
    title_key,
)
from selfbench.mine.prs import PullRequest, is_bot
from selfbench.mine.rank import DEFAULT_OVER_FETCH, Assignment, Rankable, assign_tiers
from selfbench.mine.rank import eligible_tiers as _eligible
from selfbench.mine.rank import recency_span as _recency_span
from selfbench.mine.records import (
    Candidate,
    ChangedFile,
    ClassTotal,
    Excluded,
    LinkedRequest,
    Score,
)
from selfbench.mine.sessions import Link, LinkTarget, SessionRequest, link_requests
from selfbench.mine.source import RepositorySource, repository_source
from selfbench.progress import Reporter, silent

__all__ = [
    "CI_ONLY",
    "DOCS_ONLY",
    "NO_RUNNABLE_TESTS",
    "MineOptions",
    "MineResult",
    "excluded_path",
    "mine_repository",
    "write_candidates",
]

DOCS_ONLY = "changes only documentation"
CI_ONLY = "changes only CI workflows"
NO_RUNNABLE_TESTS = "no test file a known runner runs"
_DOCS_KINDS = frozenset({"docs", "changelog"})

_GITLAB_FOOTER = "See merge request "
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one, not one per line


@dataclass(frozen=True, slots=True)
class MineOptions:
    """What to walk and how to choose."""

    rev: str = "HEAD"
    since: str | None = None
    max_commits: int | None = None
    plain: bool = False
    pull_requests: tuple[PullRequest, ...] = ()
    requests: tuple[SessionRequest, ...] = ()
    budgets: Mapping[Difficulty, int] | None = None
    over_fetch: float = DEFAULT_OVER_FETCH
    source_url: str | None = None
    """Where pull requests live when the remote is not GitHub's (`<base>/pull/<n>`); it also
    names the repository (see `selfbench.mine.source`)."""


@dataclass(frozen=True, slots=True)
class MineResult:
    """Candidates (hardest tier first, best first), exclusions (newest first), warnings."""

    candidates: tuple[Candidate, ...]
    excluded: tuple[Excluded, ...]
    warnings: tuple[str, ...]
    walked: int

    def counts(self) -> dict[str, int]:
        """Candidates per tier."""
        tiers = ("easy", "medium", "hard")
        return {tier: sum(c.difficulty == tier for c in self.candidates) for tier in tiers}

    def to_json(self) -> dict[str, object]:
        """The whole result as `mine --json` prints it."""
        return {
            "counts": self.counts(),
            "walked": self.walked,
            "candidates": [c.to_json() for c in self.candidates],
            "excluded": [e.to_json() for e in self.excluded],
            "warnings": list(self.warnings),
        }


@dataclass(slots=True)
class _Change:
    """A merged change that passed every filter but the gates and budgets."""

    commits: list[Commit]
    facts: MessageFacts
    pull_request: PullRequest | None
    id: str = ""
    files: tuple[FileStat, ...] = ()
    classes: tuple[tuple[str, str], ...] = ()
    totals: dict[str, tuple[int, int]] = field(default_factory=dict)
    tiers: tuple[Difficulty, ...] = ()

    def __post_init__(self) -> None:
        number = self.facts.number
        self.id = f"pr-{number}" if number is not None else f"commit-{self.newest.sha[:12]}"

    @property
    def newest(self) -> Commit:
        return self.commits[0]

    @property
    def base(self) -> str:
        return self.commits[-1].parents[0]

    def measure(self, files: tuple[FileStat, ...]) -> None:
        """Classify the files and total them per class, once."""
        self.files = files
        self.classes = classes = tuple([classify_path(stat.path) for stat in files])
        counts = dict.fromkeys(FILE_CLASSES, 0)
        lines = dict.fromkeys(FILE_CLASSES, 0)
        for stat, (name, _) in zip(files, classes, strict=True):
            counts[name] += 1
            lines[name] += stat.changed_lines
        totals: dict[str, tuple[int, int]] = {n: (counts[n], lines[n]) for n in FILE_CLASSES}
        self.totals = totals
        self.tiers = _eligible(*totals["implementation"])

    def lines(self, file_class: str) -> tuple[int, int]:
        """Files and changed lines of one class."""
        return self.totals[file_class]


class _Walk:
    """The state of one walk: exclusions so far, pending rebase groups, reverted commits, and
    the changes accepted, checked beside it (`whitespace`)."""

    def __init__(self, info: RepositoryInfo, options: MineOptions) -> None:
        self.info = info
        self.options = options
        self.whitespace = WhitespaceCheck(info.path, self.judge)
        self.checking: dict[str, _Change] = {}  # newest commit -> the change the check judges
        self.excluded: list[Excluded] = []
        self.changes: list[_Change] = []
        self.reverted: dict[str, str] = {}  # commit (as named) -> the revert's commit
        self.reverted_titles: dict[str, str] = {}  # title_key -> the revert's commit
        self.reverted_numbers: dict[int, str] = {}  # request number -> the revert's commit
        self.pending: _Change | None = None
        self.seen: dict[str, str] = {}  # candidate id -> the newer change's commit
        self.span: tuple[int, int] | None = None  # recency's, set before the code chores go
        self.last: dict[str, str] = {}  # candidate id -> why it is ranked last in its tier
        self.typing: dict[str, str] = {}  # newest commit -> the same, from the reader thread
        self.by_commit = {pr.merge_commit: pr for pr in options.pull_requests if pr.merge_commit}
        self.by_number = {pr.number: pr for pr in options.pull_requests}

    def exclude(self, commit: Commit, number: int | None, reason: str) -> None:
        self.excluded.append(Excluded(commit.sha, number, commit.subject, reason))

    def reverted_by(self, sha: str) -> str | None:
        return next((by for short, by in self.reverted.items() if sha.startswith(short)), None)

    def note_revert(self, by: str, title: str, body: str) -> None:
        """Remember what a revert titled `Revert "…"` names (nothing for another title)."""
        named = reverted_request(title, body)
        if named is not None:
            self.reverted_titles.setdefault(named[0], by)
            self.reverted_numbers.update(dict.fromkeys(named[1], by))

    def reverted_request_by(self, change: _Change, title: str) -> str | None:
        """The revert of this change named by its request number, else by its title (once)."""
        number = change.facts.number
        if number is not None and number in self.reverted_numbers:
            return self.reverted_numbers.pop(number)
        return self.reverted_titles.pop(title_key(title), None)

    def visit(self, commit: Commit) -> None:
        merge = len(commit.parents) > 1
        facts = parse_message(commit.subject, commit.body, merge=merge)
        if self.pending is not None:
            same = facts.kind == "squash" and facts.number == self.pending.facts.number
            if same and commit.parents:
                self.pending.commits.append(commit)
                return
            self.flush()
        self.first_checks(commit, facts, merge=merge)

    def first_checks(self, commit: Commit, facts: MessageFacts, *, merge: bool) -> None:
        if not commit.parents:
            shallow = "base commit not in this clone (shallow history)"
            self.exclude(
                commit, None, shallow if self.info.shallow else "the first commit has no base"
            )
            return
        reverted = reverted_commits(commit.subject, commit.body)
        if reverted is not None:
            self.reverted.update(dict.fromkeys(reverted, commit.sha))
            self.note_revert(commit.sha, commit.subject, commit.body)
            self.exclude(commit, facts.number, REVERTS)
            return
        by = self.reverted_by(commit.sha)
        if by is not None:
            self.exclude(commit, facts.number, REVERTED_BY.format(sha7=by[:7]))
            return
        if merge and is_merge_of_main(commit.subject, MAIN_BRANCHES):
            self.exclude(commit, facts.number, "merges the main branch into a branch")
            return
        if facts.number is None and not self.options.plain:
            self.exclude(commit, None, "not a merged pull request (--plain includes plain commits)")
            return
        pr = self.by_commit.get(commit.sha) or (
            self.by_number.get(facts.number) if facts.number is not None else None
        )
        self.pending = _Change([commit], facts, pr)
        if facts.kind != "squash":
            self.flush()

    def flush(self) -> None:
        change, self.pending = self.pending, None
        if change is None:
            return
        newest = change.newest
        title, body, _ = _title_body(change)
        reason = self.revert_reason(change, title, body) or _request_reason(change, title)
        if reason is None:
            many = len(change.commits) > 1
            change.measure(
                diff_stats(self.info.path, change.base, newest.sha) if many else newest.files
            )
            reason = _chore_reason(change, title) or _size_reason(change)
            reason = reason or _tests_reason(change, self.info.path)
        if reason is None:
            later = self.seen.setdefault(change.id, newest.sha)
            if later != newest.sha:  # the walk goes newest first: a number is one candidate's id
                reason = f"pull request #{change.facts.number} is also {later[:12]}, a later change"
        if reason is not None:
            self.exclude(newest, change.facts.number, reason)
            return
        self.changes.append(change)
        self.checking[newest.sha] = change  # before git can print it
        self.whitespace.add(newest.sha, change.base)

    def judge(
        self, commit: str, beyond: frozenset[str], sections: tuple[Section, ...]
    ) -> str | None:
        """A checked change's reason once git printed its patch, whitespace ignored (in the
        check's reader thread, while the walk goes on): `FORMATTING_ONLY` when none of its
        implementation files changed beyond whitespace, else its code chore's, else None."""
        change = self.checking.get(commit)
        if change is None:
            return None
        classes = zip(change.files, change.classes, strict=True)
        code = {stat.path for stat, (name, _) in classes if name == "implementation"}
        if code.isdisjoint(beyond):
            return FORMATTING_ONLY
        patch = {section.path: section.data for section in sections if _readable_path(section.path)}
        reason = code_chore_reasons(
            [_change_code(change)],
            [patch],
            lambda names: read_texts(self.info.path, names, limit=_MAX_TEXT_BYTES),
        )[0]
        if reason is None:
            every = {section.path: section.data for section in sections}
            last = _typing_last(change, every)
            if last is not None:
                self.typing[commit] = last
        return reason

    def revert_reason(self, change: _Change, title: str, body: str) -> str | None:
        """A revert known by its request's title, or a change such a revert named."""
        if reverted_request(title, body) is not None:
            self.note_revert(change.newest.sha, title, body)
            return REVERTS
        by = self.reverted_request_by(change, title)
        return REVERTED_BY.format(sha7=by[:7]) if by is not None else None


def _request_reason(change: _Change, title: str) -> str | None:
    """A branch sync, a draft or a bot's request: judged before the diff is read."""
    sync = branch_sync(title)
    if sync is not None:
        return f"syncs branch {sync[0]} into {sync[1]}"
    pr = change.pull_request
    if pr is not None and pr.draft:
        return f"pull request #{pr.number} is a draft"
    bot = _bot_name(change.newest, pr)
    return f"authored by a bot ({bot})" if bot is not None else None


def _bot_name(commit: Commit, pr: PullRequest | None) -> str | None:
    if pr is not None and pr.author_is_bot:
        return pr.author or "unknown"
    for name in (commit.author_name, commit.author_email):
        if is_bot(name):
            return commit.author_name
    return None


def _chore_reason(change: _Change, title: str) -> str | None:
    files = zip(change.files, change.classes, strict=True)
    return chore_reason(title, ((stat.path, kind, stat.changed_lines) for stat, (_, kind) in files))


def _without_formatting_only(walk: _Walk, reasons: Mapping[str, str | None]) -> None:
    """Exclude the changes whose implementation files changed only in whitespace."""
    kept = []
    for change in walk.changes:
        if reasons[change.newest.sha] == FORMATTING_ONLY:
            walk.exclude(change.newest, change.facts.number, FORMATTING_ONLY)
        else:
            kept.append(change)
    walk.changes = kept


def _without_code_chores(walk: _Walk, reasons: Mapping[str, str | None]) -> None:
    """Exclude the changes whose implementation files are upkeep (`code_chores`), judged from
    the whitespace check's patches and, for the few its screen leaves, the files' texts; of
    the others, those whose code is mostly typing are ranked last (`typing_share`, judged with
    them in the check's reader thread)."""
    kept = []
    for change in walk.changes:
        reason = reasons[change.newest.sha]
        if reason is None:
            kept.append(change)
        else:
            walk.exclude(change.newest, change.facts.number, reason)
    walk.changes = kept
    walk.last = {
        change.id: walk.typing[change.newest.sha]
        for change in kept
        if change.newest.sha in walk.typing
    }


def _typing_last(change: _Change, patch: Mapping[str, bytes]) -> str | None:
    """Why a change whose code is mostly typing is ranked last (`typing_share`), else None."""
    from selfbench.mine.typing_share import (  # noqa: PLC0415 - only for changes still standing
        MeasuredChange,
        MeasuredFile,
        typing_last_reasons,
    )

    measured = MeasuredChange(
        change.base,
        change.newest.sha,
        tuple(
            MeasuredFile(s.path, s.old_path, s.binary, s.changed_lines, name == "tests")
            for s, (name, _) in zip(change.files, change.classes, strict=True)
            if name in ("implementation", "tests")
        ),
    )
    return typing_last_reasons([measured], [dict(patch)])[0]


def _readable_path(path: str) -> bool:
    """Whether the code chores read a file's patch section (`code_chores.file_kind`)."""
    return file_kind(path) is not None


def _change_code(change: _Change) -> ChangeCode:
    classes = zip(change.files, change.classes, strict=True)
    files = tuple(
        ImplementationFile(stat.path, stat.old_path, stat.binary)
        for stat, (name, _) in classes
        if name == "implementation"
    )
    return ChangeCode(change.base, change.newest.sha, files, change.lines("implementation")[1])


def _size_reason(change: _Change) -> str | None:
    if not change.files:
        return "changes no files"
    files, lines = change.lines("implementation")
    if files == 0:
        return _without_code(change)
    if not change.tiers:
        return (
            f"below the easy gate: {files} implementation files, "
            f"{lines} changed implementation lines"
        )
    return None


def _without_code(change: _Change) -> str:
    """Why a change with no implementation file is none: documentation, CI, or what it is."""
    kinds = {kind for _, kind in change.classes}
    beside_tests = kinds - {"tests"}
    if beside_tests and beside_tests <= _DOCS_KINDS | {"ci"}:
        return CI_ONLY if beside_tests == {"ci"} else DOCS_ONLY
    return f"no implementation changes (only {', '.join(sorted(kinds))})"


def _tests_reason(change: _Change, repo: Path) -> str | None:
    """A change none of whose test files a runner collects tests from, or that removes every
    one of those it changes (commander's "Remove jest esm examples"): nothing to hold out. A
    file that only loses lines may stay (a removed `xfail` marker makes a fail-to-pass test):
    git is asked only then."""
    classes = zip(change.files, change.classes, strict=True)
    runnable = [
        stat for stat, (name, _) in classes if name == "tests" and is_runnable_test(stat.path)
    ]
    if any(stat.added_lines for stat in runnable):
        return None
    try:
        if runnable and present_paths(repo, change.newest.sha, (stat.path for stat in runnable)):
            return None
    except MineError:
        return None  # unreadable here: drafting tells
    return NO_RUNNABLE_TESTS


def _title_body(change: _Change) -> tuple[str, str, str]:
    """Title, body and where they came from: the pull request's, else the message's."""
    pr = change.pull_request
    if pr is not None and pr.title:
        return pr.title, pr.body or "", "pull-request"
    commit = change.newest
    titled = strip_number(commit.subject)
    if titled is not None:  # a squash, or a merge whose title was edited
        return titled, commit.body, "git"
    if change.facts.kind == "merge" and commit.body:  # GitHub and GitLab put the title here
        lines = [line for line in commit.body.split("\n") if not line.startswith(_GITLAB_FOOTER)]
        title, _, body = "\n".join(lines).strip().partition("\n")
        return title.strip(), body.strip(), "git"
    return commit.subject, commit.body, "git"


def _files(change: _Change) -> tuple[ChangedFile, ...]:
    return tuple(
        ChangedFile(stat.path, stat.old_path, file_class, kind, stat.changed_lines, stat.binary)
        for stat, (file_class, kind) in zip(change.files, change.classes, strict=True)
    )


def _requests(links: tuple[Link, ...]) -> tuple[LinkedRequest, ...]:
    return tuple(
        LinkedRequest(
            tool=link.request.tool,
            session=link.request.session,
            timestamp=link.request.timestamp,
            text=link.request.text,
            seconds_before_merge=link.seconds_before_merge,
            branch=link.branch,
            paths=link.paths,
        )
        for link in links
    )


def _build(
    change: _Change,
    assignment: Assignment,
    source: RepositorySource,
    links: tuple[Link, ...],
    ranked_last: str | None,
) -> Candidate:
    number, pr = change.facts.number, change.pull_request
    url = pr.url if pr is not None and pr.url else None
    if url is None and source.url_base is not None and number is not None:
        url = f"{source.url_base}/pull/{number}"
    title, body, metadata = _title_body(change)
    ecosystems = detect_ecosystems(tuple(stat.path for stat in change.files))
    return Candidate(
        id=change.id,
        kind=change.facts.kind,
        repo=source.label,
        source_pr=number,
        source_url=url,
        base_commit=change.base,
        completed_commit=change.newest.sha,
        merged_at=change.newest.committed,
        title=title,
        body=body,
        author=(pr.author if pr is not None and pr.author else change.newest.author_name),
        head_branch=_head_branch(change),
        metadata=metadata,
        difficulty=assignment.difficulty,
        eligible_tiers=change.tiers,
        score=Score(assignment.tests, assignment.size, assignment.recency),
        tests_changed=change.lines("tests")[0] > 0,
        ecosystems=ecosystems,
        toolchains=toolchains_for(ecosystems),
        totals={name: ClassTotal(*change.lines(name)) for name in FILE_CLASSES},
        files=_files(change),
        requests=_requests(links),
        ranked_last=ranked_last,
    )


def _head_branch(change: _Change) -> str | None:
    pr = change.pull_request
    return pr.head_branch if pr is not None and pr.head_branch else change.facts.branch


def _rankable(change: _Change, last: Mapping[str, str]) -> Rankable:
    files, lines = change.lines("implementation")
    tests = change.lines("tests")[0] > 0
    return Rankable(change.id, change.newest.committed, files, lines, tests, change.id in last)


def mine_repository(
    repo: Path,
    options: MineOptions | None = None,
    *,
    reporter: Reporter = silent,
    info: RepositoryInfo | None = None,
    started: GitStream | None = None,
) -> MineResult:
    """Find the merged changes of `repo` worth authoring, ranked, with the excluded ones; the
    commits walked so far are told to `reporter` as the walk goes. `info`: `repo` as
    `read_repository` read it for `options.rev` (read here when None; a caller that has read
    it already saves git five runs). `started`: the walk's `git log` as `start_history`
    started it for `info.head` and the options (the caller closes it), else started here.

    Raises:
        MineError: not a git repository, an unknown revision, or git failed.
    """
    options = options or MineOptions()
    info = info if info is not None else _read_repository(repo, options.rev)
    warnings = []
    if info.shallow:
        warnings.append(f"{repo} is a shallow clone: history ends early, older changes are missing")
    walked = 0
    walk = _Walk(info, options)
    with _without_cycle_collection(), walk.whitespace:
        for commit in read_history(
            repo,
            rev=info.head,
            since=options.since,
            max_commits=options.max_commits,
            progress=lambda count: reporter.stage_progress(f"walking history: {count:,} commits"),
            unreadable=lambda commit, reason: _unreadable(walk, warnings, commit, reason),
            started=started,
        ):
            walked += 1
            walk.visit(commit)
        walk.flush()
        reasons = walk.whitespace.result()
        _without_formatting_only(walk, reasons)
        walk.span = _recency_span(change.newest.committed for change in walk.changes)
        # after the span: a chore taken out moves no other's score
        _without_code_chores(walk, reasons)
        return _result(walk, info, options, warnings, walked)


def _unreadable(walk: _Walk, warnings: list[str], commit: Commit, reason: str) -> None:
    """A commit whose change git cannot read: excluded, and said as a warning."""
    warnings.append(
        f"commit {commit.sha[:12]}: {reason} from {walk.info.path}; the walk went on past it "
        "(`git fsck` lists what is missing; a fresh clone mends it)"
    )
    walk.exclude(commit, None, reason)


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Pause the cycle collector: the walk makes no cycles, only many small tuples.

    Reference counting still frees every commit once it is visited; the collector would only
    rescan the growing lists of records again and again (a fifth of the walk's own CPU time).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _result(
    walk: _Walk, info: RepositoryInfo, options: MineOptions, warnings: list[str], walked: int
) -> MineResult:
    changes = {change.id: change for change in walk.changes}
    assignments = assign_tiers(
        tuple(_rankable(change, walk.last) for change in walk.changes),
        budgets=options.budgets,
        over_fetch=options.over_fetch,
        span=walk.span,
    )
    chosen = {assignment.id for assignment in assignments}
    excluded = list(walk.excluded)
    excluded.extend(
        Excluded(
            change.newest.sha, change.facts.number, change.newest.subject, "beyond the tier budgets"
        )
        for change in walk.changes
        if change.id not in chosen
    )
    links = _links(walk.changes, options.requests) if options.requests else {}
    source = repository_source(info.origin, info.path, options.source_url)
    candidates = tuple(
        _build(changes[a.id], a, source, links.get(a.id, ()), walk.last.get(a.id))
        for a in assignments
    )
    return MineResult(candidates, tuple(excluded), tuple(warnings), walked)


def _links(
    changes: list[_Change], requests: tuple[SessionRequest, ...]
) -> dict[str, tuple[Link, ...]]:
    targets = tuple(
        LinkTarget(c.id, c.newest.committed, _head_branch(c), tuple(f.path for f in c.files))
        for c in changes
    )
    return link_requests(requests, targets)


def excluded_path(out: Path) -> Path:
    """Where the excluded changes go: `candidates.jsonl` gives `candidates.excluded.jsonl`."""
    return out.with_name(f"{out.stem}.excluded{out.suffix or '.jsonl'}")


def _jsonl(items: Iterable[Candidate | Excluded]) -> bytes:
    encode = _ENCODER.encode
    lines = (encode(item.to_json()) for item in items)
    return "".join(f"{line}\n" for line in lines).encode()


def write_candidates(result: MineResult, out: Path) -> tuple[Path, Path]:
    """Write `out` (one candidate a line) and the excluded file beside it, each atomically,
    creating `out`'s folder if needed."""
    with _without_cycle_collection():  # thousands of short-lived dicts, none in a cycle
        candidates, excluded = _jsonl(result.candidates), _jsonl(result.excluded)
    second = excluded_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(second, excluded)
    write_atomic(out, candidates)
    return out, second
