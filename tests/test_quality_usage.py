"""What held-out tests use, read from a test patch's added lines: imports, keys, private reads,
and each test's name, documentation, timer use and asserted errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import new_files_patch
from selfbench.quality.usage import (
    asserted_errors,
    asserted_messages,
    read_test_usage,
    split_test_name,
)


def _new(path: str, text: str) -> bytes:
    return new_files_patch({path: text})


def _changed(path: str, text: str) -> bytes:
    """A patch adding `text` inside an existing `path` (a fragment, not a whole module)."""
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -10,2 +10,{len(lines) + 2} @@ class TestOld:\n     pass\n \n{body}"
    ).encode()


_PYTHON = '''\
import time
import pkg.core
from pkg.parser import parse, Token
from . import helpers

class TestParser:
    def test_empty(self):
        """An empty text parses to nothing."""
        assert parse("", strict=True) == []
        assert self._cache is None

    def test_waits(self):
        time.sleep(0.5)

def test_lock_state():
    lock = pkg.core.Lock()
    assert lock._waiters == []
    assert {"kind": 1}
    with pytest.raises(ValueError, match=r"bad token \\d+"):
        parse("@")
'''


def test_python_imports_keys_private_reads_and_tests() -> None:
    usage = read_test_usage(_new("tests/test_parser.py", _PYTHON))

    assert usage.imports == {
        "tests/test_parser.py": (
            "time", "pkg.core", "pkg.parser", "pkg.parser.parse", "pkg.parser.Token",
        )
    }  # fmt: skip
    assert usage.keys == {"strict", "kind"}  # `match=` is pytest.raises's
    assert usage.private == ("lock._waiters",)  # `self._cache` is the test's own
    assert [(f.names, f.doc, f.timing, f.errors) for f in usage.functions] == [
        (("TestParser", "test_empty"), "An empty text parses to nothing.", "", ()),
        (("TestParser", "test_waits"), "", "time.sleep", ()),
        (("test_lock_state",), "", "", ("ValueError",)),
    ]
    assert usage.functions[2].messages == (("bad token",),)


@pytest.mark.parametrize(
    "call",
    [
        "pytest.param('[x for x in y]', id='listcomp')",
        "pytest.mark.parametrize('s', [], ids=str)",
        "mock.patch.object(pkg, 'f', autospec=True)",
        "patch('pkg.f', new=1)",
        "given(text=st.none())",
    ],
)
def test_keywords_given_to_test_tooling_are_no_keys_of_the_code(call: str) -> None:
    """pyupgrade's task listed "option key `id`" from `pytest.param(..., id=...)`."""
    text = f"import pytest\n\ndef test_a():\n    {call}\n    run(real=1)\n"
    assert read_test_usage(_new("tests/test_a.py", text)).keys == {"real"}


@pytest.mark.parametrize(
    "call",
    [
        "mock.patch.dict(CONFIG, real=3)",
        "patch.dict('os.environ', real='1')",
        "st.builds(Point, real=st.none())",
        "settings.set(real=5)",  # an application's settings object
    ],
)
def test_keywords_tooling_passes_to_the_code_are_its_keys(call: str) -> None:
    text = f"def test_a():\n    {call}\n"
    assert read_test_usage(_new("tests/test_a.py", text)).keys == {"real"}


def test_a_fragment_of_an_existing_python_file_is_read_by_lines() -> None:
    fragment = (
        "    def test_added(self):\n"
        "        from pkg.parser import parse\n"
        "        assert parse(x)._state\n"
        "        asyncio.sleep(1)\n"
    )
    usage = read_test_usage(_changed("tests/test_parser.py", fragment))

    assert usage.imports["tests/test_parser.py"] == ("pkg.parser", "pkg.parser.parse")
    assert [(f.names, f.timing) for f in usage.functions] == [(("test_added",), "asyncio.sleep")]


_JS = """\
import { camel } from '../src/index.ts'
import { parse } from '../src/parser'
const util = require('pkg/util')

describe('camel', () => {
  it('splits numbers', () => {
    expect(camel('a1', { kind: [String], strict })).toBe('a1')
    expect(camel.cache._size).toBe(1)
  })
  it('waits', async () => {
    await new Promise((r) => setTimeout(r, 100))
    expect(() => camel(null)).toThrow(/must be a string/)
  })
})
"""


def test_javascript_imports_keys_private_reads_and_tests() -> None:
    usage = read_test_usage(_new("test/camel.test.ts", _JS))

    assert usage.imports == {"test/camel.test.ts": ("src", "src/parser", "pkg/util")}
    assert usage.keys == {"kind", "strict"}
    assert usage.private == ("camel.cache._size",)
    assert [(f.names, f.timing) for f in usage.functions] == [
        (("camel", "splits numbers"), ""),
        (("camel", "waits"), "setTimeout"),
    ]
    assert usage.functions[1].messages == (("must be a string",),)


@pytest.mark.parametrize(
    ("line", "faked"),
    [
        ("vi.useFakeTimers()", True),
        ("jest.useFakeTimers()", True),
        ("// no fake timers", False),
    ],
)
def test_a_file_that_fakes_its_clock_has_no_timing_tests(line: str, faked: bool) -> None:
    text = f"{line}\nit('waits', () => {{ setTimeout(() => 1, 10) }})\n"

    [function] = read_test_usage(_new("a.test.js", text)).functions

    assert function.timing == ("" if faked else "setTimeout")


@pytest.mark.parametrize(
    ("body", "timing"),
    [
        ("time.sleep(0)", ""),
        ("time.sleep(0.0)", ""),
        ("time.sleep(0.01)", "time.sleep"),
        ("asyncio.sleep(1)", "asyncio.sleep"),
        ("started = time.monotonic()", "time.monotonic()"),
        ("event.wait(timeout=1)", ".wait(timeout=1"),
        ("x = 1", ""),
    ],
)
def test_a_python_test_that_waits_on_a_real_clock(body: str, timing: str) -> None:
    [function] = read_test_usage(_new("t.py", f"def test_a():\n    {body}\n")).functions

    assert function.timing == timing


@pytest.mark.parametrize(
    ("decorator", "named"),
    [
        ("", True),
        ("@pytest.mark.parametrize('x', [1, 2])", False),
        ("@pytest.mark.parametrize('x', [1, 2], ids=['one', 'two'])", True),
        ("@pytest.mark.parametrize('x', [pytest.param(1, id='one')])", True),
    ],
)
def test_case_ids_are_named_only_when_the_test_writes_them(decorator: str, named: bool) -> None:
    [function] = read_test_usage(_new("t.py", f"{decorator}\ndef test_a(x):\n    pass\n")).functions

    assert function.named_cases is named


@pytest.mark.parametrize(
    ("text", "errors", "messages"),
    [
        ("pytest.raises(ValueError)", ["ValueError"], []),
        ("pytest.raises((KeyError, errors.Missing))", ["KeyError", "Missing"], []),
        ('pytest.raises(ValueError, match="no")', ["ValueError"], []),
        ('pytest.raises(ValueError, match="must be positive")', ["ValueError"], [("must be positive",)]),  # noqa: E501
        ('self.assertRaisesRegex(TypeError, r"bad \\w+ here")', ["TypeError"], [("bad", "here")]),
        ("expect(f).toThrow(RangeError)", ["RangeError"], []),
        ("expect(f).toThrow('no such unit')", [], [("no such unit",)]),
        ("expect(f).toThrow(/x/)", [], []),
    ],
)  # fmt: skip
def test_asserted_errors_and_messages(
    text: str, errors: list[str], messages: list[tuple[str, ...]]
) -> None:
    assert asserted_errors(text) == errors
    assert asserted_messages(text) == messages


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("tests/t.py::test_a", ("tests/t.py", ("test_a",), "")),
        ("tests/t.py::TestA::test_b[x-1]", ("tests/t.py", ("TestA", "test_b"), "x-1")),
        ("t.py::test_a[a[b]]", ("t.py", ("test_a",), "a[b]")),
        ("test/a.test.ts > camel > splits", ("test/a.test.ts", ("camel", "splits"), "")),
        ("test/a.test.ts \u203a splits", ("test/a.test.ts", ("splits",), "")),
        ("tests/test_wrap.py", None),
        ("TestParse", None),
    ],
)
def test_split_test_name(name: str, parts: tuple[str, tuple[str, ...], str] | None) -> None:
    assert split_test_name(name) == parts


_SEGMENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@given(
    path=st.from_regex(r"[a-z]{1,8}/test_[a-z]{1,8}\.py", fullmatch=True),
    names=st.lists(_SEGMENT, min_size=1, max_size=3),
    case=st.one_of(st.just(""), st.from_regex(r"[a-z0-9-]{1,10}", fullmatch=True)),
)
def test_a_pytest_id_reads_back_as_its_parts(path: str, names: list[str], case: str) -> None:
    written = f"{path}::{'::'.join(names)}" + (f"[{case}]" if case else "")

    assert split_test_name(written) == (path, tuple(names), case)


@given(st.text(max_size=200))
def test_any_added_text_reads_without_error(text: str) -> None:
    for path in ("t.py", "t.test.ts", "t.test.js"):
        read_test_usage(_new(path, text.replace("\r", "")))
