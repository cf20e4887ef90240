"""Documentation-only changes: an unneeded gold part that only documents is no weakness of the
tests (`selfbench.quality._documentation`)."""

from __future__ import annotations

import pytest

from selfbench.quality._documentation import documentation_only

PY = 'def sub(a, b):\n    """Subtract."""\n    return a - b  # plain\n'
TS = (
    "/** Subtract. */\n"
    "export function sub(a: number, b: number): number {\n  return a - b; // plain\n}\n"
)


@pytest.mark.parametrize(
    ("path", "before", "after", "documentation"),
    [
        ("m.py", PY, PY.replace("Subtract.", "Subtract b from a."), True),
        ("m.py", PY, PY.replace("# plain", "# the difference"), True),
        ("m.py", PY.replace('    """Subtract."""\n', ""), PY, True),  # a docstring added
        ("m.py", PY, PY.replace("a - b", "a + b"), False),
        ("m.py", PY, PY.replace("a - b", "(a - b)"), True),  # the same tree
        ("m.py", PY, PY.replace('"""Subtract."""', '"""Subtract."""\n    x = "doc"'), False),
        ("m.py", PY, PY, False),  # no difference at all
        ("m.py", PY, PY.replace("Subtract.", "Subtract.") + "def (:\n", False),  # no parse
        ("m.ts", TS, TS.replace("Subtract.", "Subtract b from a."), True),
        ("m.ts", TS, TS.replace("// plain", "// the difference"), True),
        ("m.ts", TS, TS.replace("a - b", "a + b"), False),
        ("m.ts", TS, TS.replace("number {", "string {"), False),  # a type is code
        ("m.js", "const s = 'a'; // x\n", "const s = 'b'; // x\n", False),  # a string's text
        ("m.js", "const s = 'a'; // x\n", "const s = 'a'; // y\n", True),
        ("notes.txt", "a\n", "b\n", False),
    ],
    ids=[
        "py-docstring", "py-comment", "py-docstring-added", "py-operator", "py-parentheses",
        "py-statement", "py-same", "py-syntax-error", "ts-jsdoc", "ts-comment", "ts-operator",
        "ts-type", "js-string", "js-comment", "other-kind",
    ],
)  # fmt: skip
def test_documentation_only(path: str, before: str, after: str, documentation: bool) -> None:
    assert documentation_only(path, before, after) is documentation
