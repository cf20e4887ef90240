"""The one place that reads and quotes POSIX shell text. Pure.

`shlex` is not enough here: it has no notion of `&&`, `$(...)`, comments inside words or which
characters were quoted, and the audit must know where each word came from and whether the
`{tests}` placeholder stood alone, unquoted, as a whole word.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from selfbench.rules import PLACEHOLDER

__all__ = ["Word", "quote", "split_argv", "split_words", "substitute_tests"]

_BLANKS = " \t"
_OPERATOR_CHARS = "&|;()<>\n"
_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'
_ASSIGNMENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class Word(NamedTuple):
    """One shell word: its value after quote removal, its source span, its place in a command.

    `index` counts a command's words from 0 (the command name); leading `NAME=value`
    assignments are marked `assignment` and have index -1. The target of a redirection (`>log`,
    the `2` of `2>&1`, a here-document's delimiter) is marked `redirect`, has index -1 and is
    not an argument of the command.
    """

    text: str
    start: int
    end: int
    index: int  # type: ignore[assignment]  # shadows tuple.index: a Word is never searched
    quoted: bool
    assignment: bool
    redirect: bool = False

    def raw(self, source: str) -> str:
        """The word as written in the source."""
        return source[self.start : self.end]


def quote(value: str) -> str:
    """Single-quote a value for a POSIX shell (`'` becomes `'"'"'`)."""
    return "'" + value.replace("'", "'\"'\"'") + "'"


def substitute_tests(command: str, selectors: tuple[str, ...] | list[str]) -> str:
    """Replace every `{tests}` with the selectors, each single-quoted, joined by spaces."""
    return command.replace(PLACEHOLDER, " ".join(quote(selector) for selector in selectors))


class _Reader:
    """A small POSIX shell lexer: words and operators, quotes, substitutions, comments."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.position = 0
        self.words: list[Word] = []
        self.index = 0
        self.in_prefix = True
        self.redirect_next = False
        self.heredoc_next: bool | None = None  # after `<<` / `<<-`: whether tabs are stripped
        self.heredocs: list[tuple[str, bool]] = []

    def peek(self, offset: int = 0) -> str:
        at = self.position + offset
        return self.source[at] if at < len(self.source) else ""

    def run(self) -> list[Word]:
        while self.position < len(self.source):
            char = self.peek()
            if char in _BLANKS:
                self.position += 1
            elif char == "\\" and self.peek(1) == "\n":  # a line continuation between words
                self.position += 2
            elif char in _OPERATOR_CHARS:
                self.operator()
            elif char == "#":
                self.comment()
            else:
                self.word()
        return self.words

    def operator(self) -> None:
        start = self.position
        char = self.peek()
        self.position += 1
        if char in "<>":
            while self.peek() in ("<", ">", "&", "|", "-"):
                self.position += 1
            op = self.source[start : self.position]
            # A redirection: the next word is its target, still part of this command.
            self.redirect_next = True
            if op.startswith("<<") and not op.startswith("<<<"):
                self.heredoc_next = op == "<<-"
            return
        if char == "\n" and self.heredocs:
            self.here_documents()
        self.index = 0
        self.in_prefix = True
        self.redirect_next = False
        self.heredoc_next = None

    def here_documents(self) -> None:
        """Skip the here-document bodies opened on the line just ended: text, not words."""
        for delimiter, strip_tabs in self.heredocs:
            while self.position < len(self.source):
                newline = self.source.find("\n", self.position)
                stop = len(self.source) if newline == -1 else newline
                line = self.source[self.position : stop]
                self.position = stop + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.position = min(self.position, len(self.source))
        self.heredocs.clear()

    def comment(self) -> None:
        newline = self.source.find("\n", self.position)
        self.position = len(self.source) if newline == -1 else newline

    def word(self) -> None:
        start = self.position
        text: list[str] = []
        quoted = False
        while self.position < len(self.source):
            if self.peek() in _BLANKS or self.peek() in _OPERATOR_CHARS:
                break
            piece, piece_quoted = self.piece()
            text.append(piece)
            quoted = quoted or piece_quoted
        self.position = min(self.position, len(self.source))
        self.finish_word("".join(text), start, quoted=quoted)

    def piece(self) -> tuple[str, bool]:
        """One part of a word: a quoted string, an escape, a substitution or a character."""
        char, following = self.peek(), self.peek(1)
        if char == "\\":
            self.position += 2
            # A backslash-newline is a line continuation: removed, it quotes nothing.
            return ("", False) if following == "\n" else (following, True)
        if char == "'" or (char == "$" and following == "'"):
            self.position += 1 if char == "$" else 0  # `$'...'`: ANSI-C quoting, read as '...'
            return self.single_quoted(), True
        if char == '"':
            return self.double_quoted(), True
        if char == "$" and following == "(":
            return self.substitution(), False
        if char == "`":
            return self.backticks(), False
        self.position += 1
        return char, False

    def finish_word(self, value: str, start: int, *, quoted: bool) -> None:
        io_number = value.isascii() and value.isdigit() and not quoted and self.peek() in ("<", ">")
        if self.redirect_next or io_number:
            self.redirect_target(value, start, quoted=quoted)
            return
        assignment = self.in_prefix and _ASSIGNMENT_RE.match(self.source, start) is not None
        index = -1 if assignment else self.index
        self.words.append(Word(value, start, self.position, index, quoted, assignment))
        if not assignment:
            self.in_prefix = False
            self.index += 1

    def redirect_target(self, value: str, start: int, *, quoted: bool) -> None:
        """Record a redirection's file descriptor or target; it is no argument of the command."""
        if self.redirect_next and self.heredoc_next is not None:
            self.heredocs.append((value, self.heredoc_next))
        if self.redirect_next:
            self.redirect_next = False
            self.heredoc_next = None
        self.words.append(
            Word(value, start, self.position, -1, quoted, assignment=False, redirect=True)
        )

    def single_quoted(self) -> str:
        close = self.source.find("'", self.position + 1)
        end = len(self.source) if close == -1 else close
        value = self.source[self.position + 1 : end]
        self.position = end + 1
        return value

    def double_quoted(self) -> str:
        value: list[str] = []
        self.position += 1
        while self.position < len(self.source):
            char = self.peek()
            if char == '"':
                self.position += 1
                break
            if char == "\\" and self.peek(1) in _DOUBLE_QUOTE_ESCAPES and self.peek(1):
                value.append(self.peek(1) if self.peek(1) != "\n" else "")
                self.position += 2
            elif char == "$" and self.peek(1) == "(":
                value.append(self.substitution())
            elif char == "`":
                value.append(self.backticks())
            else:
                value.append(char)
                self.position += 1
        return "".join(value)

    def substitution(self) -> str:
        """`$( ... )`, nested and quote-aware; kept as written."""
        start = self.position
        depth = 0
        while self.position < len(self.source):
            char = self.peek()
            if char == "\\":
                self.position += 2
                continue
            if char == "'":
                self.single_quoted()
                continue
            if char == '"':
                self.double_quoted()
                continue
            self.position += 1
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    break
        return self.source[start : self.position]

    def backticks(self) -> str:
        start = self.position
        self.position += 1
        while self.position < len(self.source) and self.peek() != "`":
            self.position += 2 if self.peek() == "\\" else 1
        self.position += 1
        self.position = min(self.position, len(self.source))
        return self.source[start : self.position]


def split_words(source: str) -> list[Word]:
    """Split shell text into words; `index` counts words from the start of each command."""
    return _Reader(source).run()


_ARGV_BLANKS = " \t\r\n"
_ESCAPED_IN_DOUBLE = '"\\'


def split_argv(text: str) -> list[str]:
    """An argument list read from `text` as `shlex.split` reads it (POSIX words, quotes and
    backslashes, no operators, expansions or comments): for a command run without a shell.

    Raises:
        ValueError: a quote is not closed (`No closing quotation`) or the text ends in a
            backslash (`No escaped character`).
    """
    words: list[str] = []
    word: list[str] | None = None
    position = 0
    while position < len(text):
        char = text[position]
        if char in _ARGV_BLANKS:
            if word is not None:
                words.append("".join(word))
            word, position = None, position + 1
            continue
        word = [] if word is None else word
        if char == "\\":
            word.append(_escaped(text, position + 1))
            position += 2
        elif char == "'":
            end = text.find("'", position + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            word.append(text[position + 1 : end])
            position = end + 1
        elif char == '"':
            position = _double_quoted(text, position + 1, word)
        else:
            word.append(char)
            position += 1
    if word is not None:
        words.append("".join(word))
    return words


def _escaped(text: str, position: int) -> str:
    if position >= len(text):
        raise ValueError("No escaped character")
    return text[position]


def _double_quoted(text: str, position: int, word: list[str]) -> int:
    """Append the double-quoted text from `position` to `word`; where it ends, after `"`."""
    while position < len(text):
        char = text[position]
        if char == '"':
            return position + 1
        if char == "\\":
            escaped = _escaped(text, position + 1)
            word.append(escaped if escaped in _ESCAPED_IN_DOUBLE else char + escaped)
            position += 2
        else:
            word.append(char)
            position += 1
    raise ValueError("No closing quotation")
