"""The Requirements section of a drafted instruction: one line per behaviour the fail-to-pass
tests pin, worded from what the tests say of themselves, never from their code.

A line comes from one test (a parametrized test's cases are one line):

* its documentation's first sentence, else what its body's comments say (up to three blocks of
  comment lines, pragmas and code set aside left out: w3lib's "a comment inside the <base> tag
  is not stripped: browsers do not parse comments within a tag, so the tag is broken and
  ignored"), else its name in words: a Python test's function name
  without its `test` prefix, led by its class's (`TestParser::test_empty_input` → "Parser: empty
  input"; left out when under three words with no error, message or case of two words or
  more after it: "Mode" restates `test_mode`, and "Style (cases: RANDOM)" says no more); a
  JavaScript test's titles, its `describe` blocks' first (`parse: handles arrays`; a title
  that is an example, `foo-bar => Foo Bar`, or has blank edges, quoted exactly);
  a name an Interface item spells (`to_dict`) stays in code quotes;
* the ids of its cases where the test names them (`ids=[...]`, `pytest.param(..., id=...)`;
  not ids pytest makes up from the values, nor generated ones such as `[x0]`);
* the errors it asserts are raised and the messages it asserts, stated so an instruction holding
  the line holds each message's literal pieces (`selfbench.quality.interface.check_instruction`
  asks for them).

Errors and messages the test patch asserts outside any fail-to-pass test's body (a helper, a
changed pass-to-pass test) close the list in one line. At most `MAX_LINES` lines. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from selfbench.patches import added_lines
from selfbench.quality.usage import (
    TestFunction,
    asserted_errors,
    asserted_messages,
    comments_of_tests,
    read_test_usage,
    split_test_name,
)

__all__ = ["MAX_LINES", "REQUIREMENTS_HEADING", "requirement_lines", "requirements_section"]

REQUIREMENTS_HEADING: Final = "## Requirements"
MAX_LINES: Final = 25
"""At most this many behaviours are listed; a longer list is cut with a count of the rest."""
_MAX_CASES = 6
_MIN_WORDS = 3
"""A Python test's name in fewer words, with nothing else to say, is left out."""
_MIN_SAID = 4
"""A test named in fewer characters (`test_x`) says nothing of its behaviour."""
_GENERATED_ID_RE = re.compile(r"[A-Za-z_]*\d+|[\d.eE+-]+|True|False|None|null|undefined")
"""Case ids a runner makes up (`x0`, `arg1`, `3`, `True`): they say nothing of the case."""
_EXAMPLE_RE = re.compile(r"=>|->|\u2192")
"""A title that is an example (`foo-bar => Foo Bar`), quoted so its edges are its own."""
_CASE_WORDS_RE = re.compile(r"[\s-]+")
"""What parts a case id's words (`trivial list replace`, `two-words`): a case of one word
(`RANDOM`, an enum's `MSWORD_FRIENDLY`) says no more of a short name's behaviour than the name
does."""
_PATH_RE = re.compile(r"/|\.[A-Za-z]{1,4}$")
"""A selector that names a file (`tests/test_wrap.py`, `src/a.test.ts`), not a test."""


@dataclass(slots=True)
class _Behaviour:
    """One test's line being built: its name path, its cases, what its body asserts."""

    path: str
    names: tuple[str, ...]
    cases: list[str] = field(default_factory=list)
    function: TestFunction | None = None
    comments: tuple[str, ...] = ()
    """What the test's body says of it in comments (`comments_of_tests`)."""


def _words(name: str, spelled: Collection[str]) -> str:
    """An identifier in words (`test_parseHTML_input` → "parse HTML input"); a part an
    Interface item spells stays whole, in code quotes."""
    kept: list[str] = []
    for name_part in sorted(spelled, key=len, reverse=True):
        pattern = rf"(?<![A-Za-z0-9]){re.escape(name_part)}(?![A-Za-z0-9])"
        if "_" in name_part and re.search(pattern, name):
            kept.append(name_part)
            name = re.sub(pattern, f" \x00{len(kept) - 1}\x00 ", name)
    name = re.sub(r"^_*[Tt]est_*", "", name)
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    words = []
    for word in name.replace("_", " ").split():
        held = re.fullmatch(r"\x00(\d+)\x00", word)
        if held is not None:
            words.append(f"`{kept[int(held.group(1))]}`")
        elif word.isupper() and len(word) > 1:
            words.append(word)
        else:
            words.append(word.lower())
    return " ".join(words)


def _first_sentence(doc: str) -> str:
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
    return sentence.rstrip(".!?:;, ")


def _said(behaviour: _Behaviour, spelled: Collection[str]) -> str:
    """What the behaviour's test says of itself: its documentation, else its name in words."""
    doc = behaviour.function.doc if behaviour.function is not None else ""
    if doc.strip():
        return _first_sentence(doc)
    if behaviour.comments:
        return "; ".join(behaviour.comments)
    if behaviour.path.endswith(".py") or not behaviour.path:
        *classes, function = behaviour.names or ("",)
        subject = " ".join(_words(name, spelled) for name in classes)
        said = _words(function, spelled)
        if subject and said and said.casefold() != subject.casefold():
            return f"{subject}: {said}"  # `TestStyle::test_style` is said once
        return said or subject
    if not behaviour.names:
        return ""
    title = behaviour.names[-1]
    if _EXAMPLE_RE.search(title) or title != title.strip() or not any(c.isalnum() for c in title):
        title = json.dumps(title, ensure_ascii=False)  # an example: its text exactly
    return f"{behaviour.names[0]}: {title}" if len(behaviour.names) > 1 else title


def _message(pieces: Sequence[str]) -> str:
    return json.dumps(" … ".join(pieces), ensure_ascii=False)


def _errors(errors: Iterable[str], messages: Iterable[Sequence[str]]) -> str:
    """`raises `X` with a message containing "…"`, for what a test asserts."""
    named = [f"`{error}`" for error in errors]
    stated = [_message(pieces) for pieces in messages]
    raised = f"raises {' or '.join(named)}" if named else "raises an error"
    if not stated:
        return raised if named else ""
    return f"{raised} with a message containing {' or '.join(stated)}"


def _line(behaviour: _Behaviour, spelled: Collection[str]) -> str:
    said = _said(behaviour, spelled)
    if len(said.strip(" `:")) < _MIN_SAID:
        return ""
    first = said.split(" ", 1)[0].rstrip(":")
    plain = first.isalpha() and first.islower() and first not in spelled
    text = said[:1].upper() + said[1:] if plain else said
    named = behaviour.function is None or behaviour.function.named_cases
    cases = [c for c in behaviour.cases if c and named and not _GENERATED_ID_RE.fullmatch(c)]
    if cases:
        shown = ", ".join(cases[:_MAX_CASES])
        more = len(cases) - _MAX_CASES
        text += f" (cases: {shown}{f' and {more} more' if more > 0 else ''})"
    function = behaviour.function
    asserted = function is not None and bool(function.errors or function.messages)
    if asserted and function is not None:
        text += f"; {_errors(function.errors, function.messages)}"
    described = any(len([w for w in _CASE_WORDS_RE.split(case) if w]) > 1 for case in cases)
    if not (described or asserted or _documented(behaviour)) and _says_little(behaviour, said):
        return ""
    return f"- {text}."


def _documented(behaviour: _Behaviour) -> bool:
    function = behaviour.function
    return bool(behaviour.comments) or (function is not None and bool(function.doc.strip()))


def _says_little(behaviour: _Behaviour, said: str) -> bool:
    """A Python test's name in words shorter than `_MIN_WORDS` (`test_mode` → "Mode",
    `TestData::test_valid` → "Data: valid"), or one that only names a function as code
    (`TestRequestEncoding::test_html_body_declared_encoding` → "Request encoding:
    `html_body_declared_encoding`"): a restated name, not a behaviour."""
    python = behaviour.path.endswith(".py") or not behaviour.path
    named_only = re.fullmatch(r"`[^`\s]+`", said.rpartition(": ")[2]) is not None
    return python and (named_only or len(said.replace(":", " ").split()) < _MIN_WORDS)


def _behaviours(
    test_names: Sequence[str],
    functions: Sequence[TestFunction],
    comments: Mapping[tuple[str, str], tuple[str, ...]],
) -> list[_Behaviour]:
    found: dict[tuple[str, tuple[str, ...]], _Behaviour] = {}
    for test_name in test_names:
        parsed = split_test_name(test_name)
        if parsed is None and _PATH_RE.search(test_name):
            continue  # a whole file: its tests are named on their own, or nothing is said
        if parsed is None:
            parsed = ("", (re.split(r"::|\.|/", test_name)[-1],), "")
        path, names, case = parsed
        behaviour = found.setdefault((path, names), _Behaviour(path, names))
        if case:
            behaviour.cases.append(case)
    for behaviour in found.values():
        behaviour.function = next(
            (f for f in functions if f.path == behaviour.path and _same(f.names, behaviour.names)),
            None,
        )
        if behaviour.names:
            behaviour.comments = comments.get((behaviour.path, behaviour.names[-1]), ())
    return list(found.values())


def _same(defined: tuple[str, ...], named: tuple[str, ...]) -> bool:
    """A test the added lines define is the one named: one name path ends with the other (the
    added lines of a method in a class the base has show no class)."""
    shorter = min(len(defined), len(named))
    return shorter > 0 and defined[-shorter:] == named[-shorter:]


def requirement_lines(
    test_patch: bytes, test_names: Sequence[str], spelled: Collection[str] = ()
) -> tuple[str, ...]:
    """The Requirements lines for the fail-to-pass tests `test_names` (see the module), none
    for no names; `spelled` holds the Interface items' names."""
    if not test_names:
        return ()
    usage = read_test_usage(test_patch)
    behaviours = _behaviours(test_names, usage.functions, comments_of_tests(test_patch))
    lines = list(dict.fromkeys(line for b in behaviours if (line := _line(b, spelled))))
    if len(lines) > MAX_LINES:
        more = len(lines) - MAX_LINES + 1
        lines = [*lines[: MAX_LINES - 1], f"- … and {more} more behaviours the tests check."]
    rest = _unattached(test_patch, [b.function for b in behaviours if b.function is not None])
    return (*lines, *rest)


def _unattached(test_patch: bytes, functions: Sequence[TestFunction]) -> Iterator[str]:
    """One line for the errors and messages the test patch asserts outside the listed tests."""
    errors = dict.fromkeys(asserted_errors(added_lines(test_patch)))
    messages = dict.fromkeys(asserted_messages(added_lines(test_patch)))
    for function in functions:
        for error in function.errors:
            errors.pop(error, None)
        for pieces in function.messages:
            messages.pop(pieces, None)
    if errors or messages:
        yield f"- In other cases the code {_errors(errors, messages)}."


def requirements_section(lines: Sequence[str]) -> str:
    """The Markdown section holding `lines`; "" for none."""
    return "\n".join([REQUIREMENTS_HEADING, "", *lines]) if lines else ""
