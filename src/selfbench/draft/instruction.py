"""A draft instruction from every offline source of a candidate, with noise and leaks removed.

The text is the pull request's title and body, then the linked session requests, then the
messages of the commits the change brought in (`baseCommit..completedCommit`, a merge commit's
own message, bots' commits and chore commits such as `Bump version to 2.1` left out), each
cleaned:

* HTML comments (pull-request templates), `Co-authored-by:`-style trailers, `Fixes #N`-style
  closing lines and task-list boilerplate go;
* noise goes: `Merge branch …`/`Merge pull request …` lines, `[skip ci]`, bots' lines
  (dependabot, pre-commit.ci, `…[bot]`), `fixup!` subjects, git's `# Conflicts:` list, a line
  that is only a labelled link (`Refs: https://…`), and chores: a list item or a line
  of its own, of at most six words, that names a chore (changelog, docs, tests, PR, typo, lint,
  format, bump, version, …) and starts with a chore's verb (`Add`, `Update`, `Fix`, …) or says
  nothing else (`Tests`, `Add PR#`, `Update docs`, `Add note about difference`);
* a squash's commit list goes whole: the body GitHub writes for a squash merge, one `* subject`
  paragraph per squashed commit (`* Fix import`, `* once is enough`), is the branch's working
  history, not the request (at least two such paragraphs, after the subject line if any);
* a sentence, list item or line already said (case, spacing, list markers and end punctuation
  aside) goes: a squash body often repeats the commit list, a commit its title;
* a sentence (or list item) that links to the forge (a pull request, issue, commit or
  comparison URL, or the source URL), or names a held-out test file, a fail-to-pass test or a
  selector, goes whole: what is left must still read as prose; but a link in a bracketed aside
  goes with the aside alone when the rest links nowhere and names no pull request or issue
  (`- Don't override the base if it was already specified (the fix for #65, see: https://…);`
  keeps its requirement);
* in what stays, `#N` and `PR N` references, commit-like hex runs, and gold file names (the path,
  or the name alone, which becomes "the relevant file") are replaced.

After the prose comes an Interface section (`selfbench.quality.interface`): the modules, public
names, options and keys, flags and environment variables the gold adds or changes and the tests
use, with their signatures and the first paragraph of their documentation (cleaned as above);
never a body, a test or a file path. Then a Requirements section
(`selfbench.quality.requirements`): one line per behaviour the fail-to-pass tests pin, from
their documentation or names, cases, and the errors and messages they assert; a line that names
a test, a held-out file or a link goes whole.

Then the audit's own prompt check (`selfbench.audit.prompt_warnings`) judges the result against a
definition holding these values; anything it still finds is removed, until it finds nothing. The
instruction is a draft for the author to finish: it never gives away what the audit warns about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from posixpath import basename

from selfbench._git import git
from selfbench.audit import prompt_warnings
from selfbench.contract import TaskDefinition
from selfbench.draft.split import SplitChange
from selfbench.mine.candidate import CandidateModel
from selfbench.mine.chores import matching_rule
from selfbench.mine.prs import is_bot
from selfbench.patches import Patch, parse_patch
from selfbench.quality.interface import (
    changed_file_texts,
    interface_docs,
    interface_items,
    interface_section,
    spelled_names,
)
from selfbench.quality.requirements import requirement_lines, requirements_section
from selfbench.rules import sha_regex

__all__ = ["EMPTY_DRAFT", "draft_instruction", "without_commit_list"]

EMPTY_DRAFT = "Describe the change this task asks for."
"""The draft when nothing of the pull request survives: the author writes it from scratch."""

_COMMENT_RE = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_TRAILER_RE = re.compile(
    r"^(?:co-authored-by|signed-off-by|reviewed-by|reported-by|change-id)\s*:.*$",
    re.IGNORECASE | re.MULTILINE,
)
_URL_RE = re.compile(r"<?\b(?:https?|ftp)://[^\s<>()\[\]]+>?", re.IGNORECASE)
_FORGE_PATH_RE = re.compile(
    r"/(?:pull|pulls|issues|commit|commits|compare|merge_requests|-/merge_requests)(?:/|\b)",
    re.IGNORECASE,
)
_CLOSING_RE = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|refs?|see|part of|related(?: to)?)\s*:?\s*"
    r"(?:[\w.-]+/[\w.-]+)?[#!]\d+\b(?:\s*:)?",
    re.IGNORECASE,
)
_REFERENCE_RE = re.compile(
    r"(?:\b(?:pr|pull request|pull|merge request|mr|issue|gh|bpo)\s*[#!-]?\s*\d+\b"
    r"|(?:\b[\w.-]+/[\w.-]+)?[#!]\d+\b)",
    re.IGNORECASE,
)
_HEX_RE = re.compile(
    r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])" + sha_regex(abbreviated=True)
)
_TASK_ITEM_RE = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_FENCE = "```"
# A test function's own name (`test_parse`, `TestParse`, `it_works`), not a sentence-like title.
_IDENTIFIER_RE = re.compile(r"(?:[Tt]est\w*|\w+_\w+)")
_GOLD_STAND_IN = "the relevant file"
# Brackets a removed reference left empty; a call's own `()` (`units()`) stays.
_EMPTY_BRACKETS_RE = re.compile(r"(?<![\w\])>])(?:\(\s*\)|\[\s*\])")
"""Brackets a removal left empty; not a call's (`f()`, `f()()`, `new Map<K, V>()`), nor an
index's (`a[]`)."""
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r"[ \t]+([.,;:!?])(?![\w/~])")
"""A space a removal left before punctuation; not one before a name that starts with it
(".env", "./run", ":memory:" read as words)."""
_MAX_PASSES = 64
_NOISE_LINE_RE = re.compile(
    r"^[ \t]*(?:merge (?:branch|pull request|remote-tracking branch|tag)\b|(?:fixup|squash|amend)!)"
    r".*$\n?|^.*(?:\[bot\]|pre-commit[-.]ci|\bdependabot\b).*$\n?"
    r"|^# conflicts:[ \t]*$\n?|^#\t.*$\n?"
    r"|^[ \t]*(?:refs?|see|see also|related|links?|discussion)[ \t]*:[ \t]*<?(?:https?|ftp)://\S+"
    r"[ \t]*$\n?",
    re.IGNORECASE | re.MULTILINE,
)
"""Lines that are noise whole: merges, fixups, bots', git's conflict list, a bare labelled link."""
_SKIP_CI_RE = re.compile(
    r"\[(?:skip[ -]ci|ci[ -]skip|no[ -]ci|skip[ -]actions|actions[ -]skip)\]|\*\*\*NO_CI\*\*\*",
    re.IGNORECASE,
)
_CHORE_WORDS = frozenset(
    {
        "changelog", "changes", "news", "history", "whatsnew", "readme", "doc", "docs",
        "documentation", "docstring", "docstrings", "comment", "comments", "note", "notes",
        "test", "tests", "testing", "pr", "typo", "typos", "lint", "linting", "linter", "format",
        "formatting", "formatted", "bump", "bumped", "bumps", "version", "ci", "mypy",
        "pre-commit", "style", "review", "feedback", "nit", "nits", "wip", "black", "blacken",
        "blackened", "isort", "ruff", "prettier", "reformat", "reformatted",
    }
)  # fmt: skip
"""Words that name a chore ("Add not about difference" reads `not` as `note`)."""
_CHORE_VERBS = frozenset(
    {
        "add", "added", "adds", "update", "updated", "updates", "fix", "fixed", "fixes", "bump",
        "bumped", "run", "ran", "address", "addressed", "apply", "applied", "remove", "removed",
        "tweak", "improve", "improved", "write", "wrote", "document", "documented", "format",
        "formatted", "lint", "clean", "cleanup", "more", "blacken", "reformat", "reformatted",
    }
)  # fmt: skip
_CHORE_FILLER = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "to",
        "for",
        "of",
        "some",
        "new",
        "missing",
        "about",
        "again",
        "sorry",
    }
)
_CHORE_MAX_WORDS = 6
_WORD_RE = re.compile(r"[A-Za-z][\w'-]*")
_NO_PR = 10**18


def _forbidden_words(split: SplitChange, test_names: Sequence[str]) -> tuple[str, ...]:
    """Test paths, test names and their function names: a sentence with one goes."""
    words: set[str] = set()
    for path in (*split.test_files, *split.support_files, *_patch(split.test_patch).paths):
        words.update({path, basename(path)})
    for name in test_names:
        words.add(name)
        for part in re.split(r"::| > | \u203a |/", name):
            leaf = part.split("[", 1)[0].strip()
            if _IDENTIFIER_RE.fullmatch(leaf):
                words.add(leaf)
    return tuple(sorted((w for w in words if w), key=len, reverse=True))


def _patch(data: bytes) -> Patch:
    return parse_patch(data, lenient=True)


def _has_word(text: str, word: str) -> bool:
    pattern = rf"(?<![\w.-]){re.escape(word)}(?![\w-])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def _links_to_forge(text: str, source_url: str | None) -> bool:
    """Whether `text` links to a pull request, issue, commit or comparison, or the source URL."""
    return any(
        _FORGE_PATH_RE.search(url) or (source_url and source_url.rstrip("/") in url)
        for url in _URL_RE.findall(text)
    )


def _is_leaky(sentence: str, words: tuple[str, ...], source_url: str | None) -> bool:
    return _links_to_forge(sentence, source_url) or any(_has_word(sentence, word) for word in words)


_ASIDE_RE = re.compile(r"[ \t]*\([^()]*\)")


def _without_linked_asides(unit: str, source_url: str | None) -> str:
    """`unit` without the bracketed asides that link to the forge (`Keep the base (the fix for
    #65, see: https://…/issues/65);`), when the rest links to it nowhere and names no pull
    request or issue; else `unit` as it is, for the leak check to drop whole (`Fixes case 2 in
    issue #102 (https://…)` is about the link)."""
    rest = _ASIDE_RE.sub(
        lambda aside: "" if _links_to_forge(aside[0], source_url) else aside[0], unit
    )
    if rest == unit or _links_to_forge(rest, source_url):
        return unit
    if _CLOSING_RE.search(rest) or _REFERENCE_RE.search(rest):
        return unit
    return rest


def _scrub(text: str, gold: tuple[str, ...]) -> str:
    """Replace the references that may stay in a sentence: numbers, hashes, gold file names."""
    text = _CLOSING_RE.sub("", text)
    text = _REFERENCE_RE.sub("", text)
    text = _HEX_RE.sub("", text)
    for path in sorted(gold, key=len, reverse=True):
        for name in dict.fromkeys((path, basename(path))):
            pattern = rf"`?(?<![\w.-]){re.escape(name)}(?![\w/-])(?!\.\w)`?"
            text = re.sub(pattern, _GOLD_STAND_IN, text, flags=re.IGNORECASE)
    return _outside_code(text, _tidy).strip()


def _tidy(prose: str) -> str:
    """Prose tidied after removals: brackets left empty, a space before punctuation (not
    before a dotted name: "reading .env"), runs of spaces."""
    prose = _EMPTY_BRACKETS_RE.sub("", prose)
    prose = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", prose)
    return re.sub(r"[ \t]{2,}", " ", prose)


_CODE_SPAN_RE = re.compile(r"(`[^`\n]*`)")


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to all but its inline code spans (`key !== "a"` stays)."""
    parts = _CODE_SPAN_RE.split(text)
    return "".join(part if index % 2 else change(part) for index, part in enumerate(parts))


def _units(paragraph: str) -> tuple[list[str], str]:
    """A paragraph's sentences (prose, reflowed) or lines (lists, code), and how to rejoin them."""
    lines = paragraph.split("\n")
    if lines[0].lstrip().startswith(_FENCE) or any(_LIST_RE.match(line) for line in lines):
        return lines, "\n"
    if all(line.startswith(("    ", "\t", ">")) for line in lines if line):
        return lines, "\n"
    prose = " ".join(line.strip() for line in lines)
    return _SENTENCE_END_RE.split(prose), " "


def _is_chore(unit: str) -> bool:
    """A short line that names a chore and says nothing else (`* Add PR#`, `Update docs`)."""
    text = re.sub(
        r"\bnot(?= about\b)", "note", _LIST_RE.sub("", unit, count=1), flags=re.IGNORECASE
    )
    found = [word.casefold() for word in _WORD_RE.findall(text)]
    if "`" in text or not found or len(found) > _CHORE_MAX_WORDS:
        return False
    if not _CHORE_WORDS.intersection(found):
        return False
    return found[0] in _CHORE_VERBS or all(
        word in _CHORE_WORDS or word in _CHORE_FILLER or word in _CHORE_VERBS for word in found
    )  # a squashed branch's `doc update`, `blacken again sorry`


def _key(text: str) -> str:
    """What a unit says, for finding it again: case, spacing, list markers and end marks aside."""
    return " ".join(_LIST_RE.sub("", text, count=1).split()).casefold().rstrip(" .,;:!?")


def _clean_block(
    text: str,
    candidate: CandidateModel,
    words: tuple[str, ...],
    gold: tuple[str, ...],
    *,
    seen: set[str],
    chores: bool = True,
) -> str:
    """The block cleaned of boilerplate, noise, leaks and what `seen` holds (which it extends);
    chores stay when `chores` is false (a title)."""
    text = _COMMENT_RE.sub("", text.replace("\r\n", "\n"))
    text = _TRAILER_RE.sub("", text)
    text = _NOISE_LINE_RE.sub("", _SKIP_CI_RE.sub("", text))
    kept_paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip():
            continue
        units, joiner = _units(paragraph.strip("\n"))
        alone = len(units) == 1 or (joiner == " " and "\n" not in paragraph.strip())
        code = not any(joiner == " " or _LIST_RE.match(unit) for unit in units)
        kept = []
        for given in units:
            unit = _without_linked_asides(given, candidate.sourceUrl)
            if _TASK_ITEM_RE.match(unit) or _is_leaky(unit, words, candidate.sourceUrl):
                continue
            if chores and (alone or _LIST_RE.match(unit)) and _is_chore(unit):
                continue
            cleaned = _scrub(unit, gold) if unit.strip() else unit
            if not cleaned.strip(" -*:.,;") or (not code and _seen(cleaned, seen)):
                continue
            kept.append(
                cleaned if joiner == " " else unit[: len(unit) - len(unit.lstrip())] + cleaned
            )
        if kept and not (code and _seen(joiner.join(kept), seen)):
            kept_paragraphs.append(joiner.join(kept))
    return "\n\n".join(kept_paragraphs)


_COMMIT_ITEM = "* "
"""How GitHub starts each squashed commit's paragraph in a squash merge's body."""


def without_commit_list(text: str) -> str:
    """`text` without a squash's commit list: when every paragraph after the first (a subject,
    or the list's own first item) is a `* ` item and there are at least two items, those go."""
    paragraphs = [part for part in re.split(r"\n\s*\n", text.strip()) if part.strip()]
    items = [part for part in paragraphs if part.startswith(_COMMIT_ITEM)]
    if len(items) < 2 or any(not part.startswith(_COMMIT_ITEM) for part in paragraphs[1:]):
        return text
    return "\n\n".join(part for part in paragraphs if not part.startswith(_COMMIT_ITEM))


def _seen(text: str, seen: set[str]) -> bool:
    """Whether `text` was said already; records it when not."""
    key = _key(text)
    if key in seen:
        return True
    seen.add(key)
    return False


def _definition(
    candidate: CandidateModel, split: SplitChange, names: Sequence[str], prompt: str
) -> TaskDefinition:
    """What the audit's prompt check needs, built without validation (only these fields count)."""
    return TaskDefinition.model_construct(
        prompt=prompt,
        sourcePr=candidate.sourcePr or _NO_PR,
        sourceUrl=candidate.sourceUrl or "",
        baseCommit=candidate.baseCommit,
        failToPass=tuple(names),
        passToPass=(),
        testPaths=tuple(split.test_files),
        workdir=".",
    )


_WARNING_RE = re.compile(r"^prompt mentions (?:a |an |the )?[\w -]+? \((.*)\)$")


def _enforce(
    prompt: str, candidate: CandidateModel, split: SplitChange, names: Sequence[str]
) -> str:
    """Remove whatever the audit's prompt check still finds, until it finds nothing."""
    gold, tests = _patch(split.gold_patch), _patch(split.test_patch)
    for _ in range(_MAX_PASSES):
        warnings = prompt_warnings(_definition(candidate, split, names, prompt), gold, tests)
        if not warnings:
            return prompt
        for warning in warnings:
            if "source PR URL" in warning and candidate.sourceUrl:
                prompt = _remove_all(prompt, candidate.sourceUrl.rstrip("/"))
                continue
            match = _WARNING_RE.match(warning)
            if match is not None:
                prompt = _remove_all(prompt, match.group(1))
    return ""


def _remove_all(text: str, token: str) -> str:
    return re.sub(re.escape(token), "", text, flags=re.IGNORECASE) if token else text


def _commit_messages(repo: Path, candidate: CandidateModel) -> list[str]:
    """The messages of the commits the change brought in, oldest first: a merge commit's own
    message, bots' commits and chores by their subject (`selfbench.mine.chores`) left out, and
    of each commit after the first only its body. A later commit's subject is a step of the
    work (w3lib #279's "remove _safe_ParseResult and rely on safe_url_string", "parametrize the
    tab/newline canonicalize_url test"), which tells how the gold did it, not what is asked."""
    log = git(
        repo, "log", "--reverse", "--no-color", "--format=%H%x00%an%x00%B%x1e",
        f"{candidate.baseCommit}..{candidate.completedCommit}",
    ).decode("utf-8", "replace")  # fmt: skip
    messages: list[str] = []
    first = True
    for record in log.split("\x1e"):
        fields = record.strip("\n").split("\x00")
        if len(fields) != 3:
            continue
        sha, author, message = fields
        if candidate.kind == "merge" and sha == candidate.completedCommit:
            continue
        chore = matching_rule(message.strip().split("\n", 1)[0]) is not None
        if not (chore or is_bot(author)):
            messages.append(message if first else message.strip().partition("\n")[2])
        first = False  # the first commit, kept or not: any later subject is a step
    return messages


def _specification(
    repo: Path,
    candidate: CandidateModel,
    split: SplitChange,
    words: tuple[str, ...],
    test_names: Sequence[str],
) -> str:
    """The Interface section of what the gold adds that the tests use, then the Requirements
    section of what the fail-to-pass tests pin; "" for neither."""
    base_files, gold_files = changed_file_texts(repo, candidate.baseCommit, split.gold_patch)
    items = tuple(
        item
        for item in interface_items(split.gold_patch, split.test_patch, base_files, gold_files)
        if not _is_leaky(f"{item.name} {item.signature}", words, candidate.sourceUrl)
    )
    docs = {
        name: _clean_block(doc, candidate, words, split.gold_files, seen=set(), chores=False)
        for name, doc in interface_docs(items, gold_files).items()
    }
    spelled = spelled_names(items, gold_files)
    lines = [
        _scrub(line, split.gold_files)
        for line in requirement_lines(split.test_patch, test_names, spelled)
        if not _is_leaky(line, words, candidate.sourceUrl)
    ]
    sections = (
        interface_section(items, {name: doc for name, doc in docs.items() if doc}),
        requirements_section(lines),
    )
    return "\n\n".join(section for section in sections if section)


def draft_instruction(
    candidate: CandidateModel,
    split: SplitChange,
    test_names: Sequence[str],
    *,
    repo: Path,
    behaviours: Sequence[str] = (),
) -> str:
    """A draft instruction for the candidate, clean of everything the audit's prompt check finds.

    `test_names` are the tests' names and selectors (both are removed). `repo` holds the
    candidate's commits (their messages are a source; the gold's files, read without touching
    it, give the Interface section). `behaviours` are the fail-to-pass tests' names: the
    Requirements section says what each pins (none without them).

    Raises:
        GitError: `repo` lacks the candidate's commits, or the gold patch does not apply.
    """
    words = _forbidden_words(split, test_names)
    gold = split.gold_files
    requests = (request.text for request in candidate.requests)
    blocks = [candidate.body, *requests, *_commit_messages(repo, candidate)]
    if candidate.kind == "squash":
        blocks = [without_commit_list(block) for block in blocks]
    seen: set[str] = set()
    title = _clean_block(candidate.title, candidate, words, gold, seen=seen, chores=False)
    if title and not title.endswith((".", "!", "?", ":")):
        title += "."
    cleaned = [title, *(_clean_block(b, candidate, words, gold, seen=seen) for b in blocks)]
    prose = "\n\n".join(part for part in cleaned if part.strip())
    prose = _enforce(prose, candidate, split, test_names).strip() or EMPTY_DRAFT
    section = _specification(repo, candidate, split, words, behaviours)
    prompt = _enforce("\n\n".join(p for p in (prose, section) if p), candidate, split, test_names)
    return prompt.strip() or EMPTY_DRAFT
