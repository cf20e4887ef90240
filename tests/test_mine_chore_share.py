"""Changes whose code is mostly translation wrapping, docstrings and comments, or a small typing
change that sets up a type checker: ranked last in their tier, the reason on the candidate.

Each row commits a module and its tests, an older change of real work, then the row's change
(newer: it would rank first), and says whether the row's change is ranked last (its reason)
or keeps its place (KEPT): the look-alikes change a docstring a test reads, or a doctest, or
a default their tests check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mine_history import Files, History, lines
from selfbench.mine import mine_repository
from selfbench.mine.chores import MOSTLY_COMMENTS, MOSTLY_I18N, MOSTLY_TYPING

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEPT = None
N = 28
MODULE = "src/app/http.py"
TESTS = "tests/test_http.py"
PROSE = (
    '    """Return the value of the header {i} the key names, or the default\n'
    "    when the headers do not hold it: the lookup is exact, and the value\n"
    '    is returned as the client sent it, its spaces kept.\n    """\n'
)
DOCTEST = (
    "\n    >>> get_{i}({{'a': ' b '}}, 'a')\n    ' b '\n    >>> get_{i}({{}}, 'a', 'c')\n    'c'\n"
)
BODY = "    rv = headers.get(key)\n    if rv is None:\n        return default\n    return rv\n\n"
INLINED = "    if key not in headers:\n        return default\n    return headers[key]\n\n"
TYPED = "(headers: dict[str, str], key: str, default: str | None = None) -> str | None:\n"


def getter(i: int, *, doc: str = "", body: str = BODY, head: str = "") -> str:
    docstring = doc.format(i=i) or f'    """Return the header {i}, or the default."""\n'
    return f"def get_{i}" + (head or "(headers, key, default=None):\n") + docstring + body


def module(*, doc: str = "", documented: int = N, inlined: int = 0, typed: int = 0) -> str:
    """`N` getters: the first `documented` with `doc`, the first `inlined` without their
    local, the first `typed` annotated and returning `str(rv)`."""
    parts = []
    for i in range(N):
        body = INLINED if i < inlined else BODY
        if i < typed:
            body = body.replace("    return rv\n", "    return str(rv)\n")
        head = TYPED if i < typed else ""
        parts.append(getter(i, doc=doc if i < documented else "", body=body, head=head))
    return "".join(parts)


def suite(extra: str = "", *, arrow: str = "") -> str:
    return (
        f"from app.http import get_0\n\n\ndef test_get(){arrow}:\n"
        "    assert get_0({'a': 'b'}, 'a') == 'b'\n" + extra
    )


NOTED = suite("\n# The headers are read as the client sent them.\n")


HELP = '"""Read headers."""\n\nHELP = __doc__\n\n'
NEW_HELP = '"""Read the headers of a request, as the client sent them."""\n\nHELP = __doc__\n\n'
HELP_TESTS = "".join(
    f"\n\ndef test_help_{i}():\n    from app import http\n\n"
    f"    assert http.HELP.startswith('Read the headers of a request')\n"
    f"    assert 'as the client sent them' in http.HELP.split(',')[{i % 2}] + http.HELP\n"
    for i in range(5)
)
MYPY = "[metadata]\nname = app\n\n[mypy]\nfiles = src/app\nstrict = True\n"
DEFAULT_TESTS = "".join(
    f"\n\ndef test_default_{i}():\n    assert get_0({{}}, 'missing') == ''\n"
    f"    assert get_0({{'x': '{i}'}}, 'x') == '{i}'\n"
    for i in range(6)
)

CHECKS = "src/app/checks.py"
CHECK_TESTS = "tests/test_checks.py"
GETTEXT = "from gettext import gettext as _\n\n"


def check(i: int, raised: str) -> str:
    return f"def check_{i}(key, value):\n    if not value:\n        raise ValueError({raised})\n\n"


def checks(raised: str, header: str = "") -> str:
    return header + "".join(check(i, raised) for i in range(N))


FSTRING = 'f"bad value {value!r} for the key {key}"'
WRAPPED = '_("bad value {value!r} for the key {key}").format(value=value, key=key)'
REWORDED = '_("Invalid value {value!r}: the key {key} needs one.").format(value=value, key=key)'
CHECKED = "from app.checks import check_0\n\n\ndef test_check():\n    check_0('a', 'b')\n"
REWORDED_TESTS = "".join(
    f"\n\ndef test_message_{i}():\n    import pytest\n\n"
    f"    with pytest.raises(ValueError, match='Invalid value None: the key k{i} needs one'):\n"
    f"        check_{i}('k{i}', None)\n"
    for i in range(N)
)
CHECKED_NOTED = CHECKED + "\n# The messages are translated.\n"
OLD_MESSAGE = "the value for key {i} is empty and it cannot be used by the header reader at all"
NEW_MESSAGE = "Header number {i} needs a value: an empty one is refused by the reader of headers"


def messages(message: str) -> str:
    """`N` checks, each raising its message on a line of its own."""
    return "".join(
        f"def check_{i}(key, value):\n    if not value:\n        raise ValueError(\n"
        f'            "{message.format(i=i)}"\n        )\n\n\n'
        for i in range(N)
    )


def message_tests(message: str) -> str:
    """A table of each check's exact message, as a test that checks them holds it."""
    rows = "".join(f'        ({i}, "{message.format(i=i)}"),\n' for i in range(N))
    return (
        "import re\n\nimport pytest\n\nfrom app import checks\n\n\n"
        '@pytest.mark.parametrize(\n    ("index", "message"),\n    [\n' + rows + "    ],\n)\n"
        "def test_message(index, message):\n"
        "    with pytest.raises(ValueError, match=re.escape(message)):\n"
        '        getattr(checks, f"check_{index}")("k", "")\n'
    )


HELP_EXPECTED = NEW_HELP.replace("HELP = __doc__", "EXPECTED = HELP").split('"""')[1]

ROWS: list[tuple[str, Files, Files, str | None]] = [
    ("f-strings-wrapped-for-translation-and-a-few-checks-changed",
     {CHECKS: checks(FSTRING), CHECK_TESTS: CHECKED},
     {CHECKS: checks(WRAPPED, GETTEXT).replace("if not value:", "if value is None:", 6),
      CHECK_TESTS: CHECKED_NOTED},
     MOSTLY_I18N.format(i18n=420, tokens=438, tests=0)),
    ("f-strings-turned-into-format-calls-without-translation-stay",
     {CHECKS: checks(FSTRING), CHECK_TESTS: CHECKED},
     {CHECKS: checks(WRAPPED.replace("_(", "(")), CHECK_TESTS: CHECKED_NOTED}, KEPT),
    ("f-strings-wrapped-and-reworded-as-tests-check-stays",
     {CHECKS: checks(FSTRING), CHECK_TESTS: CHECKED},
     {CHECKS: checks(REWORDED, GETTEXT), CHECK_TESTS: CHECKED + REWORDED_TESTS}, KEPT),
    ("docstrings-rewritten-and-a-few-locals-inlined",
     {MODULE: module(), TESTS: suite()},
     {MODULE: module(doc=PROSE, inlined=6), TESTS: NOTED},
     MOSTLY_COMMENTS.format(comments=1764, tokens=1920, tests=0)),
    ("docstrings-and-much-code-stays",
     {MODULE: module(), TESTS: suite()},
     {MODULE: module(doc=PROSE, documented=12, inlined=N), TESTS: NOTED}, KEPT),
    ("a-docstring-read-as-help-its-tests-changed-stays",
     {MODULE: HELP + module(), TESTS: suite()},
     {MODULE: NEW_HELP + module(doc=PROSE, inlined=6), TESTS: suite(HELP_TESTS)}, KEPT),
    ("messages-reworded-as-a-table-of-tests-checks-them-stay",
     {CHECKS: messages(OLD_MESSAGE), CHECK_TESTS: message_tests(OLD_MESSAGE)},
     {CHECKS: messages(NEW_MESSAGE), CHECK_TESTS: message_tests(NEW_MESSAGE)}, KEPT),
    ("a-docstring-read-as-help-checked-whole-by-a-test-stays",
     {MODULE: HELP + module(), TESTS: suite()},
     {MODULE: NEW_HELP + module(doc=PROSE, inlined=6),
      TESTS: suite(f'\n\ndef test_help():\n    from app import http\n\n'
                   f'    assert http.HELP == """{HELP_EXPECTED}"""\n')}, KEPT),
    ("doctests-added-to-docstrings-stay",
     {MODULE: module(), TESTS: suite()},
     {MODULE: module(doc=PROSE.replace('    """\n', DOCTEST + '    """\n'), inlined=6),
      TESTS: NOTED}, KEPT),
    ("a-type-checker-set-up-with-a-few-hints",
     {MODULE: module(), TESTS: suite(), "setup.cfg": "[metadata]\nname = app\n"},
     {MODULE: module(typed=8), "setup.cfg": MYPY, TESTS: suite(arrow=" -> None")},
     MOSTLY_TYPING.format(typing=144, tokens=168, tests=0)),
    ("a-line-added-to-an-existing-mypy-configuration-is-no-set-up",
     {MODULE: module(), TESTS: suite(), "mypy.ini": "[mypy]\nfiles = src/app\n"},
     {MODULE: module(typed=8), "mypy.ini": "[mypy]\nfiles = src/app\nstrict = True\n",
      TESTS: suite(arrow=" -> None")}, KEPT),
    ("a-module-s-own-mypy-section-is-no-set-up",
     {MODULE: module(), TESTS: suite(), "setup.cfg": MYPY},
     {MODULE: module(typed=8),
      "setup.cfg": MYPY + "\n[mypy-requests.*]\nignore_missing_imports = True\n",
      TESTS: suite(arrow=" -> None")}, KEPT),
    ("a-test-fixture-s-mypy-section-is-no-set-up",
     {MODULE: module(), TESTS: suite(), "setup.cfg": "[metadata]\nname = app\n"},
     {MODULE: module(typed=8), "tests/fixtures/setup.cfg": "[mypy]\nstrict = True\n",
      TESTS: suite(arrow=" -> None")}, KEPT),
    ("a-few-hints-without-a-type-checker-stay",
     {MODULE: module(), TESTS: suite(), "setup.cfg": "[metadata]\nname = app\n"},
     {MODULE: module(typed=8), TESTS: suite(arrow=" -> None")}, KEPT),
    ("a-type-checker-set-up-and-a-tested-default-stays",
     {MODULE: module(), TESTS: suite(), "setup.cfg": "[metadata]\nname = app\n"},
     {MODULE: module(typed=8).replace("default: str | None = None", 'default: str = ""', 1),
      "setup.cfg": MYPY, TESTS: suite(DEFAULT_TESTS, arrow=" -> None")}, KEPT),
]  # fmt: skip


@needs_git
@pytest.mark.parametrize(
    ("before", "after", "reason"),
    [pytest.param(before, after, reason, id=name) for name, before, after, reason in ROWS],
)
def test_mostly_a_chore_is_ranked_last(
    tmp_path: Path, before: Files, after: Files, reason: str | None
) -> None:
    h = History.create(tmp_path / "repo")
    h.commit("Initial commit", before)
    work = h.commit(
        "Parse dates (#1)", {"src/app/dates.py": lines(40, "d"), "tests/test_dates.py": lines(4)}
    )
    change = h.commit("Improve the headers module (#2)", after)
    found = {c.completed_commit: c for c in mine_repository(h.path).candidates}
    assert change in found
    order = [c for c in found if found[c].difficulty == found[change].difficulty]
    assert found[change].ranked_last == reason
    assert order == ([work, change] if reason is not None else [change, work])
