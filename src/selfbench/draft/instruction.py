"""A draft instruction from a candidate's pull request and linked requests, with leaks removed.

The text is the pull request's title and body, then the linked session requests, each cleaned:

* HTML comments (pull-request templates), `Co-authored-by:`-style trailers, `Fixes #N`-style
  closing lines and task-list boilerplate go;
* a sentence (or list item) that links to the forge (a pull request, issue, commit or
  comparison URL, or the source URL), or names a held-out test file, a fail-to-pass test or a
  selector, goes whole: what is left must still read as prose;
* in what stays, `#N` and `PR N` references, commit-like hex runs, and gold file names (the path,
  or the name alone, which becomes "the relevant file") are replaced.

Then the audit's own prompt check (`selfbench.audit.prompt_warnings`) judges the result against a
definition holding these values; anything it still finds is removed, until it finds nothing. The
instruction is a draft for the author to finish: it never gives away what the audit warns about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from posixpath import basename

from selfbench.audit import prompt_warnings
from selfbench.contract import TaskDefinition
from selfbench.draft.split import SplitChange
from selfbench.mine.candidate import CandidateModel
from selfbench.patches import Patch, parse_patch
from selfbench.rules import sha_regex

__all__ = ["EMPTY_DRAFT", "draft_instruction"]

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
    r"(?:[\w.-]+/[\w.-]+)?[#!]\d+\b",
    re.IGNORECASE,
)
_REFERENCE_RE = re.compile(
    r"(?:\b(?:pr|pull request|pull|merge request|mr|issue|gh)\s*[#!]?\s*\d+\b"
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
_EMPTY_BRACKETS_RE = re.compile(r"(?<![\w\]])(?:\(\s*\)|\[\s*\])")
_SPACE_BEFORE_PUNCTUATION_RE = re.compile(r"[ \t]+([.,;:!?])")
_MAX_PASSES = 64
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


def _is_leaky(sentence: str, words: tuple[str, ...], source_url: str | None) -> bool:
    for url in _URL_RE.findall(sentence):
        if _FORGE_PATH_RE.search(url) or (source_url and source_url.rstrip("/") in url):
            return True
    return any(_has_word(sentence, word) for word in words)


def _scrub(text: str, gold: tuple[str, ...]) -> str:
    """Replace the references that may stay in a sentence: numbers, hashes, gold file names."""
    text = _CLOSING_RE.sub("", text)
    text = _REFERENCE_RE.sub("", text)
    text = _HEX_RE.sub("", text)
    for path in sorted(gold, key=len, reverse=True):
        for name in dict.fromkeys((path, basename(path))):
            pattern = rf"`?(?<![\w.-]){re.escape(name)}(?![\w/-])(?!\.\w)`?"
            text = re.sub(pattern, _GOLD_STAND_IN, text, flags=re.IGNORECASE)
    text = _EMPTY_BRACKETS_RE.sub("", text)
    text = _SPACE_BEFORE_PUNCTUATION_RE.sub(r"\1", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _units(paragraph: str) -> tuple[list[str], str]:
    """A paragraph's sentences (prose, reflowed) or lines (lists, code), and how to rejoin them."""
    lines = paragraph.split("\n")
    if lines[0].lstrip().startswith(_FENCE) or any(_LIST_RE.match(line) for line in lines):
        return lines, "\n"
    if all(line.startswith(("    ", "\t", ">")) for line in lines if line):
        return lines, "\n"
    prose = " ".join(line.strip() for line in lines)
    return _SENTENCE_END_RE.split(prose), " "


def _clean_block(
    text: str, candidate: CandidateModel, words: tuple[str, ...], gold: tuple[str, ...]
) -> str:
    text = _COMMENT_RE.sub("", text.replace("\r\n", "\n"))
    text = _TRAILER_RE.sub("", text)
    kept_paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip():
            continue
        units, joiner = _units(paragraph.strip("\n"))
        kept = []
        for unit in units:
            if _TASK_ITEM_RE.match(unit) or _is_leaky(unit, words, candidate.sourceUrl):
                continue
            cleaned = _scrub(unit, gold) if unit.strip() else unit
            if cleaned.strip(" -*:.,;"):
                kept.append(
                    cleaned if joiner == " " else unit[: len(unit) - len(unit.lstrip())] + cleaned
                )
        if kept:
            kept_paragraphs.append(joiner.join(kept))
    return "\n\n".join(kept_paragraphs)


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


def draft_instruction(
    candidate: CandidateModel, split: SplitChange, test_names: Sequence[str]
) -> str:
    """A draft instruction for the candidate, clean of everything the audit's prompt check finds.

    `test_names` are the fail-to-pass tests' names and selectors (both are removed).
    """
    words = _forbidden_words(split, test_names)
    gold = split.gold_files
    blocks = [candidate.title, candidate.body, *(request.text for request in candidate.requests)]
    cleaned = [_clean_block(block, candidate, words, gold) for block in blocks if block.strip()]
    if cleaned and cleaned[0] and not cleaned[0].endswith((".", "!", "?", ":")):
        cleaned[0] += "."
    prompt = "\n\n".join(dict.fromkeys(part for part in cleaned if part.strip()))
    prompt = _enforce(prompt, candidate, split, test_names).strip()
    return prompt or EMPTY_DRAFT
