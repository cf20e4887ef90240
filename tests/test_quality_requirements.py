"""The Requirements section: one line per behaviour the fail-to-pass tests pin, worded from what
the tests say of themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import new_files_patch
from selfbench._git import git
from selfbench.quality.requirements import (
    MAX_LINES,
    REQUIREMENTS_HEADING,
    requirement_lines,
    requirements_section,
)
from selfbench.quality.usage import comment_blocks, comments_of_tests

_PARSER_TESTS = '''\
import pytest
from pkg.parser import parse

class TestParser:
    def test_empty_input(self):
        """An empty text parses to an empty list. More is said here."""
        assert parse("") == []

    @pytest.mark.parametrize("text", ["a b", "c"], ids=["two-words", "one-word"])
    def test_to_dict_roundtrip(self, text):
        assert parse(text).to_dict()

@pytest.mark.parametrize(("text", "count"), [("a", 1), ("a b", 2)])
def test_counts_tokens(text, count):
    assert len(parse(text)) == count

def test_rejects_unknown_token():
    with pytest.raises(ValueError, match=r"unexpected token \\d+ at column"):
        parse("@")

def test_x():
    pass

def helper():
    with pytest.raises(KeyError, match="no such rule"):
        parse("?")
'''
_FILE = "tests/test_parser.py"


_OTHERS = (
    "- In other cases the code raises `ValueError` or `KeyError` with a message containing"
    ' "unexpected token … at column" or "no such rule".'
)
"""What the tests assert outside the listed ones: one line closing the list."""
_HELPER = '- In other cases the code raises `KeyError` with a message containing "no such rule".'


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (
            [f"{_FILE}::TestParser::test_empty_input"],
            ["- An empty text parses to an empty list.", _OTHERS],
        ),
        (
            [
                f"{_FILE}::TestParser::test_to_dict_roundtrip[two-words]",
                f"{_FILE}::TestParser::test_to_dict_roundtrip[one-word]",
            ],
            ["- Parser: `to_dict` roundtrip (cases: two-words, one-word).", _OTHERS],
        ),
        (
            [f"{_FILE}::test_counts_tokens[a-1]", f"{_FILE}::test_counts_tokens[a b-2]"],
            [_OTHERS],  # "Counts tokens" restates the name: left out
        ),
        (
            [f"{_FILE}::test_rejects_unknown_token"],
            [
                (
                    "- Rejects unknown token; raises `ValueError` with a message containing"
                    ' "unexpected token … at column".'
                ),
                _HELPER,
            ],
        ),
        ([f"{_FILE}::test_x"], [_OTHERS]),
        ([f"{_FILE}::TestStyle::test_style"], [_OTHERS]),
        ([f"{_FILE}::TestStyle::test_style[RANDOM]"], [_OTHERS]),  # prettytable #327
        ([f"{_FILE}::TestStyle::test_style[MSWORD_FRIENDLY]"], [_OTHERS]),  # an enum's name
        ([f"{_FILE}::TestStyle::test_style[-x]"], [_OTHERS]),
        (
            [f"{_FILE}::TestStyle::test_style[plain text]"],
            ["- Style (cases: plain text).", _OTHERS],
        ),
        ([_FILE], [_OTHERS]),
    ],
    ids=[
        "docstring",
        "named-cases",
        "made-up-cases",
        "error-and-message",
        "says-nothing",
        "said-once",
        "said-once-with-a-word-case",
        "said-once-with-an-enum-case",
        "said-once-with-a-dashed-word",
        "said-once-with-a-described-case",
        "file",
    ],
)
def test_each_behaviour_is_one_line(names: list[str], expected: list[str]) -> None:
    lines = requirement_lines(new_files_patch({_FILE: _PARSER_TESTS}), names, {"to_dict", "parse"})

    assert lines == tuple(expected)


def test_no_fail_to_pass_names_no_requirements() -> None:
    assert requirement_lines(new_files_patch({_FILE: _PARSER_TESTS}), []) == ()


def test_a_javascript_test_is_said_by_its_titles() -> None:
    tests = (
        "describe('camelCase', () => {\n"
        "  it('splits on numbers', () => { expect(camelCase('a1b')).toBe('a1B') })\n"
        "  it('throws on null', () => {\n"
        "    expect(() => camelCase(null)).toThrow(TypeError)\n"
        "    expect(() => camelCase(null)).toThrow('must be a string')\n"
        "  })\n"
        "})\n"
    )
    names = [
        "test/camel.test.ts > camelCase > splits on numbers",
        "test/camel.test.ts > camelCase > throws on null",
    ]

    lines = requirement_lines(new_files_patch({"test/camel.test.ts": tests}), names)

    assert lines == (
        "- camelCase: splits on numbers.",
        (
            '- camelCase: throws on null; raises `TypeError` with a message containing "must be a'
            ' string".'
        ),
    )


def test_a_long_list_is_cut_with_a_count() -> None:
    tests = "".join(f"def test_behaviour_number_{n}():\n    pass\n" for n in range(40))
    names = [f"t.py::test_behaviour_number_{n}" for n in range(40)]

    lines = requirement_lines(new_files_patch({"t.py": tests}), names)

    assert len(lines) == MAX_LINES
    assert lines[0] == "- Behaviour number 0."
    assert lines[-1] == f"- … and {40 - MAX_LINES + 1} more behaviours the tests check."


def test_the_section() -> None:
    assert requirements_section([]) == ""
    assert requirements_section(["- A."]) == f"{REQUIREMENTS_HEADING}\n\n- A."


def test_a_title_that_is_an_example_is_quoted_exactly() -> None:
    """vitest's `it.each` titles (`%s => %s`) are examples: an empty input stays visible."""
    names = [
        "test/scule.test.ts > titleCase >  =>",
        "test/scule.test.ts > titleCase > this-IS-aTitle => This is a Title",
    ]

    lines = requirement_lines(new_files_patch({"test/scule.test.ts": "it.each([])('%s')\n"}), names)

    assert lines == (
        '- titleCase: " =>".',
        '- titleCase: "this-IS-aTitle => This is a Title".',
    )


def test_a_test_named_after_the_function_it_calls_says_nothing_more() -> None:
    """w3lib #167: `TestUrl::test_url_query_parameter`, a function whose new option the Interface
    lists, was "Url: url query parameter"; its neighbour now names its function as code."""
    tests = (
        "class TestUrl:\n"
        "    def test_url_query_parameter(self):\n        pass\n\n"
        "    def test_add_or_replace_parameter_semicolon(self):\n        pass\n"
    )
    names = [
        "tests/test_url.py::TestUrl::test_url_query_parameter",
        "tests/test_url.py::TestUrl::test_add_or_replace_parameter_semicolon",
    ]
    spelled = {"separator", "url_query_parameter", "add_or_replace_parameter"}

    lines = requirement_lines(new_files_patch({"tests/test_url.py": tests}), names, spelled)

    assert lines == ("- Url: `add_or_replace_parameter` semicolon.",)


def test_a_test_named_after_a_function_of_the_changed_files_names_it_as_code() -> None:
    """w3lib #299: `html_body_declared_encoding`'s signature did not change, so it is no
    Interface item, but the gold's file defines it: the line that only restates it goes, its
    neighbour names it as code."""
    tests = (
        "class TestRequestEncoding:\n"
        "    def test_html_body_declared_encoding(self):\n        pass\n\n"
        "    def test_html_body_declared_encoding_unicode(self):\n        pass\n"
    )
    names = [
        "tests/test_encoding.py::TestRequestEncoding::test_html_body_declared_encoding",
        "tests/test_encoding.py::TestRequestEncoding::test_html_body_declared_encoding_unicode",
    ]
    patch = new_files_patch({"tests/test_encoding.py": tests})

    lines = requirement_lines(patch, names, {"html_body_declared_encoding"})

    assert lines == ("- Request encoding: `html_body_declared_encoding` unicode.",)


_COMMENTED = """\
    def test_base_url_in_script(self):
        # A browser does not parse tags inside <script>/<noscript>, so a <base>
        # written there is ignored.
        assert get_base_url("<script><base href='x'></script>", "https://a") == "https://a"
        # noqa: E501
        # assert old_behaviour() == 1
        # an unterminated <script> swallows the rest of the document
        assert get_base_url("<script><base href='x'>", "https://a") == "https://a"

    def test_base_url_split_by_comment(self):
        # ok
        assert get_base_url("<base h<!--c-->ref='x'>", "https://a") == "https://a"
"""


def test_a_test_s_comments_say_its_behaviour() -> None:
    """w3lib #303: the tests say in comments what a careful issue writer would; their names
    ("base url in script") say little. The added lines of methods in a class the base has."""
    names = [
        "tests/test_html.py::TestGetBaseUrl::test_base_url_in_script",
        "tests/test_html.py::TestGetBaseUrl::test_base_url_split_by_comment",
    ]
    patch = new_files_patch({"tests/test_html.py": _COMMENTED})

    lines = requirement_lines(patch, names, {"get_base_url"})

    assert lines == (
        (
            "- A browser does not parse tags inside <script>/<noscript>, so a <base> written"
            " there is ignored; an unterminated <script> swallows the rest of the document."
        ),
        "- Get base url: base url split by comment.",  # "ok" says nothing: the name stands
    )


@pytest.mark.parametrize(
    ("body", "blocks"),
    [
        (
            "# one two three four\n# five\nx = 1\n# six seven eight nine\n",
            ("one two three four five", "six seven eight nine"),
        ),
        ("# TODO fix\n", ()),
        ("# type: ignore[attr-defined]\n# noqa: E501 line too long here\n", ()),
        ("# assert parse(x) == [1, 2]\n", ()),
        ("#!/usr/bin/env python one two three\n", ()),
        (
            "".join(f"# block number {n} says this\nx = {n}\n" for n in range(5)),
            tuple(f"block number {n} says this" for n in range(3)),
        ),
        ("# " + "word " * 80 + "\n", ("word " * 47 + "word …",)),
        (
            (
                "# if url is not None:\n# for item in items:\n# self.x = y + z\n"
                "# x = [1, 2, 3]\n# url = 'http://example.com/a'\n"
            ),
            (),
        ),
        ("# TODO: remove once upstream fixes the bug\n", ()),
        (
            "# see RFC 3986 (section 3.4) for the query\n",
            ("see RFC 3986 (section 3.4) for the query",),
        ),
        ('x = """\n# Title of the document here\n"""\n', ()),  # a string, no comment
    ],
    ids=[
        "two-blocks",
        "too-short",
        "pragmas",
        "code-set-aside",
        "shebang",
        "at-most-three",
        "cut",
        "more-code-set-aside",
        "a-note",
        "prose-with-brackets",
        "inside-a-string",
    ],
)
def test_comment_blocks(body: str, blocks: tuple[str, ...]) -> None:
    assert comment_blocks(body) == blocks


_NEIGHBOURS = """\
class TestParser:
    def test_alpha(self):
        assert parse("[]") == []

    # The parser must reject trailing commas in arrays.
    def test_beta(self):
        # a trailing comma is refused with its column
        assert fails("[1,]")

# --- a section of the module, said to no test ---------------------------------

class TestOther:
    def test_alpha(self):
        # this alpha is another class's, with a name of its own
        assert True
\tdef test_tabbed(self):
\t\tassert one()
\t\t# a comment after the first line of a tab-indented body
"""


def test_each_test_is_said_by_its_own_comments_only() -> None:
    """A comment above the next test, or at the module's level, is no earlier test's; two tests
    of one name (in two classes) are said by neither; tabs count as written."""
    blocks = comments_of_tests(new_files_patch({"tests/test_p.py": _NEIGHBOURS}))

    assert blocks == {
        ("tests/test_p.py", "test_beta"): ("a trailing comma is refused with its column",),
        ("tests/test_p.py", "test_tabbed"): (
            "a comment after the first line of a tab-indented body",
        ),
    }


def test_a_comment_a_later_hunk_adds_is_no_earlier_hunk_s_test(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "--initial-branch=main")
    old = "def test_old():\n    value = parse('')\n" + "    assert value is not None\n" * 12
    (repo / "test_x.py").write_text(old)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    new = "def test_new():\n    assert parse('a') == 'a'\n\n\n" + old.replace(
        "    assert value is not None\n" * 12,
        "    assert value is not None\n" * 11
        + "    # the old code crashed here when the value was empty\n"
        + "    assert value is not None\n",
    )
    (repo / "test_x.py").write_text(new)
    patch = git(repo, "diff")

    assert comments_of_tests(patch) == {}
