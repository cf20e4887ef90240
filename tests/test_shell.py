"""The shell lexer and quoting, checked against a real POSIX shell."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfbench._shell import Word, quote, split_argv, split_words, substitute_tests

# (text, index, quoted, assignment, redirect) of each word.
Summary = tuple[str, int, bool, bool, bool]


def summary(source: str) -> list[Summary]:
    return [
        (word.text, word.index, word.quoted, word.assignment, word.redirect)
        for word in split_words(source)
    ]


def texts(source: str) -> list[str]:
    return [word.text for word in split_words(source)]


def shell_words(command: str) -> list[str]:
    """What a real `/bin/sh` passes as arguments: `printf '%s\\0'` each, split on NUL."""
    result = subprocess.run(["/bin/sh", "-c", command], capture_output=True, check=True, timeout=10)
    return result.stdout.decode("utf-8").split("\0")[:-1]


# --- split_words -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("pytest -q tests", ["pytest", "-q", "tests"]),
        ("  a\tb  ", ["a", "b"]),
        ("'a b' \"c d\" e\\ f", ["a b", "c d", "e f"]),
        ("a'b'\"c\"d", ["abcd"]),
        ("'unterminated", ["unterminated"]),
        ('"a \\" \\$ \\\\ \\x"', ['a " $ \\ \\x']),
        ("'single \\ stays'", ["single \\ stays"]),
        ("$'ansi'", ["ansi"]),
        ('echo $(a "b)" c) d', ["echo", '$(a "b)" c)', "d"]),
        ("echo $(a $(b c)) d", ["echo", "$(a $(b c))", "d"]),
        ("echo `a b` c", ["echo", "`a b`", "c"]),
        ('echo "x $(a b) y"', ["echo", "x $(a b) y"]),
        ("a&&b||c;d|e&f", ["a", "b", "c", "d", "e", "f"]),
        ("(a) && { b; }", ["a", "{", "b", "}"]),
        ("a # comment 'b", ["a"]),
        ("a#b c", ["a#b", "c"]),
        ("a # one\nb", ["a", "b"]),
        ("a \\\n b", ["a", "b"]),
        ("a\\\nb", ["ab"]),
        ("x=1 y+=2 cmd z=3", ["x=1", "y+=2", "cmd", "z=3"]),
        ("cat <<EOF\n$(not a word)\nEOF\nnext", ["cat", "EOF", "next"]),
        ("cat <<-END\n\tbody\n\tEND\nnext", ["cat", "END", "next"]),
        ("trailing\\", ["trailing"]),
        ("", []),
    ],
)
def test_split_words(source: str, expected: list[str]) -> None:
    assert texts(source) == expected


def test_words_know_their_place_in_each_command() -> None:
    source = "A=1 B+=2 bun test x && npm test -- y; cd sub | tee log"

    assert summary(source) == [
        ("A=1", -1, False, True, False),
        ("B+=2", -1, False, True, False),
        ("bun", 0, False, False, False),
        ("test", 1, False, False, False),
        ("x", 2, False, False, False),
        ("npm", 0, False, False, False),
        ("test", 1, False, False, False),
        ("--", 2, False, False, False),
        ("y", 3, False, False, False),
        ("cd", 0, False, False, False),
        ("sub", 1, False, False, False),
        ("tee", 0, False, False, False),
        ("log", 1, False, False, False),
    ]


def test_an_assignment_after_the_command_name_is_an_argument() -> None:
    assert summary("export T=x") == [
        ("export", 0, False, False, False),
        ("T=x", 1, False, False, False),
    ]


def test_quoted_words_are_marked() -> None:
    assert summary("a 'b' c\\d \"e\"") == [
        ("a", 0, False, False, False),
        ("b", 1, True, False, False),
        ("cd", 2, True, False, False),
        ("e", 3, True, False, False),
    ]


def test_redirections_are_not_arguments() -> None:
    assert summary("pytest x 2>&1 >log <in y") == [
        ("pytest", 0, False, False, False),
        ("x", 1, False, False, False),
        ("2", -1, False, False, True),
        ("1", -1, False, False, True),
        ("log", -1, False, False, True),
        ("in", -1, False, False, True),
        ("y", 2, False, False, False),
    ]


def test_words_keep_their_source_span() -> None:
    source = "run 'a b'  $(c d)"

    assert [word.raw(source) for word in split_words(source)] == ["run", "'a b'", "$(c d)"]
    assert split_words(source)[1] == Word("a b", 4, 9, 1, quoted=True, assignment=False)


@given(st.text())
def test_split_words_accepts_any_text(source: str) -> None:
    words = split_words(source)

    ends = [0, *(word.end for word in words)]
    assert all(ends[i] <= word.start < word.end for i, word in enumerate(words))
    assert all(word.end <= len(source) for word in words)


# --- quoting, through a real shell -------------------------------------------------------------

# Anything a selector could hold: quotes, blanks, `$`, backticks, newlines, unicode; never NUL
# (no argument can hold one) and never a lone surrogate (no file name can either).
selector_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" \t\n'\"`$\\*?[]{}()<>|&;#~=%!-")),
        st.characters(exclude_categories=["Cs"], exclude_characters="\0"),
    ),
    max_size=20,
)


@settings(deadline=None, max_examples=60)
@given(st.lists(selector_text, min_size=1, max_size=5))
def test_substituted_selectors_reach_the_command_exactly(selectors: list[str]) -> None:
    command = substitute_tests("printf '%s\\0' {tests}", selectors)

    assert shell_words(command) == selectors


@settings(deadline=None, max_examples=40)
@given(selector_text)
def test_quote_round_trips_through_the_shell(value: str) -> None:
    assert shell_words(f"printf '%s\\0' {quote(value)}") == [value]


@given(st.lists(selector_text, max_size=5))
def test_split_words_reads_quoted_words_as_the_shell_does(values: list[str]) -> None:
    command = " ".join(["run", *(quote(value) for value in values)])

    assert texts(command) == ["run", *values]


def test_substitute_tests_matches_the_newline_example() -> None:
    command = substitute_tests("printf '%s\\n' {tests}", ["tests/a b.py", "it's"])

    assert command == "printf '%s\\n' 'tests/a b.py' 'it'\"'\"'s'"
    assert (
        subprocess.run(
            ["/bin/sh", "-c", command], capture_output=True, check=True, timeout=10
        ).stdout
        == b"tests/a b.py\nit's\n"
    )


def test_quote() -> None:
    assert quote("") == "''"
    assert quote("a'b") == "'a'\"'\"'b'"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", []),
        ("  a  b\tc\n", ["a", "b", "c"]),
        ("a'b c'd", ["ab cd"]),
        ("''", [""]),
        ('a"b\\"c"', ['ab"c']),
        ('a"\\x"', ["a\\x"]),
        ("a\\ b", ["a b"]),
        ("a\\\nb", ["a\nb"]),
        ("x && y # z", ["x", "&&", "y", "#", "z"]),
    ],
)
def test_split_argv_reads_words_as_shlex_does(text: str, words: list[str]) -> None:
    assert split_argv(text) == words == shlex.split(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [("a\\", "No escaped character"), ('"a\\', "No escaped character"),
     ("'a", "No closing quotation"), ('"a', "No closing quotation")],
)  # fmt: skip
def test_split_argv_refuses_what_shlex_refuses(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        split_argv(text)


@settings(max_examples=500)
@given(st.text(alphabet=" \t\n\\'\"ab$#&;"))
def test_split_argv_agrees_with_shlex(text: str) -> None:
    try:
        expected: list[str] | str = shlex.split(text)
    except ValueError as exc:
        expected = str(exc)
    try:
        found: list[str] | str = split_argv(text)
    except ValueError as exc:
        found = str(exc)
    assert found == expected
