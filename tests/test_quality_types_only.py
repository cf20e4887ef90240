"""A change to a TypeScript file's types alone leaves the code that runs as it was."""

from __future__ import annotations

import pytest

from selfbench.quality._types_only import types_only

_BASE = (
    "import { a } from './a'\n"
    "export interface Options {\n  name?: string\n}\n"
    "export function f(o: Options): number {\n  return a(o.name)\n}\n"
)


@pytest.mark.parametrize(
    ("gold", "only"),
    [
        (_BASE.replace("name?: string\n", "name?: string\n  kind?: string[]\n"), True),
        (_BASE + "export type Kind = 'a' | 'b'\n", True),
        ("import type { X } from './x'\n" + _BASE, True),
        (_BASE.replace("import { a }", "import { a, type B }"), True),
        (_BASE.replace("function f(", "function f<T>("), True),
        (_BASE.replace("): number", "): number | undefined"), True),
        (_BASE.replace("return a(o.name)", "return a(o.name as string)"), True),
        (_BASE + "declare global {\n  interface Window { x: number }\n}\n", True),
        (_BASE.replace("return a(o.name)", "return a(o.name) + 1"), False),
        (_BASE.replace("(o: Options)", "(o: Options, p?: number)"), False),
        (_BASE + "export enum Kind { A, B }\n", False),
        (_BASE.replace("import { a }", "import { a, b }"), False),
        (_BASE + "export function (\n", False),  # does not parse: nothing can be said
    ],
    ids=[
        "interface-property", "type-alias", "import-type", "type-specifier", "type-parameter",
        "return-type", "as-cast", "declare", "body", "parameter", "enum", "value-import",
        "syntax-error",
    ],
)  # fmt: skip
def test_what_is_a_change_to_types_alone(gold: str, only: bool) -> None:
    assert types_only("src/index.ts", _BASE, gold) is only


@pytest.mark.parametrize(
    ("path", "base", "gold", "only"),
    [
        ("src/types.ts", None, "export interface X {\n  a: string\n}\n", True),
        ("src/types.ts", "export interface X {\n  a: string\n}\n", None, True),
        ("src/index.d.ts", None, "export declare const x: number\n", True),
        ("src/index.js", "", "// only a comment\n", False),
        ("pkg/a.py", "", "x: int\n", False),
    ],
)
def test_added_and_deleted_files_and_other_languages(
    path: str, base: str | None, gold: str | None, only: bool
) -> None:
    assert types_only(path, base, gold) is only
