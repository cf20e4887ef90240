"""Statement ablation: each changed statement of the gold's implementation removed on its own.

Beside the whole-file and whole-hunk ablation, `api.assess` asks of each changed statement
(`python_statements`, `js_statements`) of the implementation parts some fail-to-pass test needs
whether a test needs it: the gold with `pass` (or `;`) in its place runs fail-to-pass, and a
statement is *unneeded* when every test still passes. A part already found unneeded is not
asked again (its own row reports it).

A removal is the very text a `delete` mutant leaves, so a deletion mutant that ran answers for
its statement (`StatementAblation.mutants`) whatever the mutation run's early stop skipped. Of
the others at most `STATEMENT_CAP` run, spread evenly over the file order (`capped` says some
did not); the cap is a count, never a measured time, so a resumed run chooses the same ones. A
run that cannot be judged counts as needed: a statement is never called unneeded on no
evidence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from posixpath import splitext
from typing import Final

from selfbench.artifacts.quality_record import Ablation, StatementAblation, UnneededStatement
from selfbench.quality._js_parser import is_js
from selfbench.quality.mutants import Mutant
from selfbench.quality.mutate_js import js_statements
from selfbench.quality.mutate_python import python_statements
from selfbench.quality.scoring import Scorer
from selfbench.quality.variants import changed_lines, gold_texts, mutant_patch

__all__ = [
    "STATEMENT_CAP",
    "ablate_statements",
    "choose",
    "needed_lines",
    "outermost",
]

STATEMENT_CAP: Final = 16
"""At most this many statements are removed and run per task."""


_Finder = Callable[[str, str, Collection[int]], list[Mutant]]
_FINDERS: Final[tuple[tuple[Callable[[str], bool], _Finder], ...]] = (
    (lambda path: splitext(path)[1] == ".py", python_statements),
    (is_js, js_statements),
)
_NEW_SIDE: Final = re.compile(r"\+(\d+)(?:,(\d+))?")


def needed_lines(gold_patch: bytes, ablation: Ablation) -> dict[str, frozenset[int]]:
    """Per implementation file some test needs, the changed lines of its needed hunks (every
    changed line when the file has one hunk).

    Raises:
        PatchError: the gold patch does not parse.
    """
    changed = changed_lines(gold_patch)
    found: dict[str, frozenset[int]] = {}
    for part in ablation.parts:
        if part.hunk is not None or not (part.implementation and part.needed):
            continue
        hunks = [p for p in ablation.parts if p.path == part.path and p.hunk is not None]
        lines = changed.get(part.path, frozenset())
        if hunks:
            kept = set().union(*(_new_side(p.lines) for p in hunks if p.needed))
            lines = lines.intersection(kept)
        if lines:
            found[part.path] = frozenset(lines)
    return found


def _new_side(header: str | None) -> range:
    """The new side's lines of a hunk's `@@ -a,b +c,d @@` header."""
    match = _NEW_SIDE.search(header or "")
    if match is None:
        return range(0)
    start = int(match[1])
    return range(start, start + (1 if match[2] is None else int(match[2])))


def choose(statements: Sequence[Mutant], cap: int) -> list[Mutant]:
    """At most `cap` of `statements`, spread evenly over their order (all when they fit)."""
    if len(statements) <= cap:
        return list(statements)
    return [statements[index * len(statements) // cap] for index in range(cap)]


def outermost(statements: Iterable[Mutant]) -> list[Mutant]:
    """`statements` without those inside another of them (the same file, within its span)."""
    listed = list(statements)
    return [
        inner
        for inner in listed
        if not any(
            outer is not inner
            and outer.path == inner.path
            and outer.start <= inner.start
            and inner.end <= outer.end
            and (outer.start, outer.end) != (inner.start, inner.end)
            for outer in listed
        )
    ]


def _key(mutant: Mutant, texts: dict[str, str]) -> tuple[str, bytes]:
    result = mutant.apply(texts[mutant.path]).encode("utf-8", "surrogatepass")
    return mutant.path, hashlib.sha256(result).digest()


def ablate_statements(  # noqa: PLR0913 - the task, the ablation so far, the mutants that ran
    scorer: Scorer,
    repo: Path,
    base: str,
    gold_patch: bytes,
    ablation: Ablation,
    mutants: Sequence[tuple[Mutant, bool | None]],
    *,
    jobs: int,
    cap: int = STATEMENT_CAP,
) -> Ablation:
    """`ablation` with its `statements` (see the module); `mutants` are the mutants that ran
    and their results (True: every fail-to-pass test passed).

    Raises:
        GitError: the gold patch does not apply at `base`.
    """
    files = {
        path: (finder, lines)
        for path, lines in needed_lines(gold_patch, ablation).items()
        if (finder := next((f for holds, f in _FINDERS if holds(path)), None)) is not None
    }
    texts = gold_texts(repo, base, gold_patch, sorted(files)) if files else {}
    found = [
        statement
        for path, (finder, lines) in sorted(files.items())
        if path in texts
        for statement in finder(path, texts[path], lines)
    ]
    judged = {_key(m, texts): result for m, result in mutants if m.path in texts}
    keys = {statement: _key(statement, texts) for statement in found}
    results = {s: judged[key] for s, key in keys.items() if key in judged}
    pending = [statement for statement in found if statement not in results]
    chosen = choose(pending, cap)
    patches = [mutant_patch(repo, base, gold_patch, s.path, s.apply(texts[s.path])) for s in chosen]
    runs = scorer.score(patches, jobs=jobs, what="statement")
    for statement, run in zip(chosen, runs, strict=True):
        results[statement] = run.result
    unneeded = outermost(s for s in found if results.get(s) is True)
    record = StatementAblation(
        found=len(found),
        mutants=len(found) - len(pending),
        ran=len(chosen),
        capped=len(chosen) < len(pending),
        unneeded=tuple(
            UnneededStatement(path=s.path, line=s.line, statement=s.description) for s in unneeded
        ),
    )
    return ablation.model_copy(update={"statements": record})
