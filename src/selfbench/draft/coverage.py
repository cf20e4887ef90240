"""Pass-to-pass that guards the change: which passing tests execute the gold's changed lines.

The gold patch's changed lines are mapped to the base's line numbers through its hunks
(`changed_base_lines`: a removed line is itself; lines added go between two base lines, the
hunk's base anchor, and count as both), and each is widened by `SURROUNDING` lines on either
side (`guarded_lines`). One more verifier run at the base (the test patch applied, no gold) runs
every candidate test file once under the runner's coverage measure (`Runner.coverage`), in the
same sandbox as the draft's other runs (`prepare_coverage`, `CoverageRun.variant`); the host
reads what it recorded (`read_coverage`):

* Python runners (pytest, unittest through pytest): a tiny pytest plugin (the runner's), bound
  read-only into the sandbox, records Python's own line events in the changed files, a set of
  lines per test node id (the test's setup, call and teardown), and writes them as JSON. The id
  is exactly the name the runner's report gives, hence the selector. It runs on the project's
  Python with the standard library alone: `sys.monitoring` from 3.12 (each line's event fires
  once per test, then is disabled until the next test: a run costs little more than a plain
  one), `sys.settrace` before it, tracing only the changed files' frames. coverage.py is not
  used: its C tracer is built for selfbench's Python, not the project's, its pure-Python tracer
  made a real suite ten times slower, and its `sys.monitoring` core has no per-test contexts.
  The plugin writes a failure to its data directory instead of raising.
* Node runners (node --test, jest, vitest): V8's own coverage (`NODE_V8_COVERAGE`), one data
  directory per test file: a file executes a line when the innermost block range holding one of
  its characters ran. A script whose text is not the base file's (a transform) is left out; when
  no changed file's lines can be placed at all, coverage could not run.
* Other runners (go, cargo, bun): none.

`choose_pass_to_pass` (pure) ranks: a test's score is how many guarded lines it executes; tests
scoring above zero first, by score then selector; then the changed test files' other passing
tests, sorted. An unchanged neighbour file's test is chosen only when it executes a guarded line.
When there is no measure (the runner has none, or coverage could not run), the draft goes on
with the changed test files, then the neighbours' passing tests (basis `neighbours`, which the
quality verdict sends to review), and says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

from selfbench._fs import read_beneath, read_bytes
from selfbench._shell import quote
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.bundle import layout
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.render_scripts import render_test_sh
from selfbench.contract import TaskDefinition
from selfbench.draft._linger import LINGER_SECONDS, WATCH, watch_words
from selfbench.environments.local.phases import VerifierVariant
from selfbench.errors import DraftError
from selfbench.patches import parse_patch
from selfbench.rules import PLACEHOLDER
from selfbench.runners import CoverageParts

__all__ = [
    "LINES",
    "SURROUNDING",
    "V8",
    "CoverageRun",
    "CoverageSeen",
    "changed_base_lines",
    "choose_pass_to_pass",
    "coverage_command",
    "executed_lines",
    "guarded_lines",
    "prepare_coverage",
    "read_coverage",
    "surroundings",
]

SURROUNDING: Final = 3
"""A changed line guards this many base lines on either side of it."""
LINES: Final = "lines"
V8: Final = "v8"
_TOOL_NAMES = {LINES: "the line trace", V8: "V8 coverage"}
_ROOT = "/run/selfbench-coverage"
_LIB = f"{_ROOT}/lib"
_DATA = f"{_ROOT}/data"
_INCLUDE = "include.json"
_ERRORS = "error.txt"
_HUNK_RE = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


# --- the lines the change guards (pure) ---------------------------------------------------------


def changed_base_lines(gold_patch: bytes) -> dict[str, tuple[int, ...]]:
    """The base lines the gold patch changes, per file the base has (by its base path).

    A removed line is its own base line; lines added between base lines `n - 1` and `n` (the
    hunk's base anchor) give both. New, deleted-only-by-mode and binary files give none.
    """
    found: dict[str, tuple[int, ...]] = {}
    patch = parse_patch(gold_patch, lenient=True)
    for change in patch.files:
        if change.old_path is None or change.binary or change.new_path is None:
            continue
        section = patch.section(change).decode("utf-8", "surrogateescape")
        lines = _hunk_base_lines(section)
        if lines:
            found[change.old_path] = lines
    return found


def _hunk_base_lines(section: str) -> tuple[int, ...]:
    """The base lines one file section's hunks change (see `changed_base_lines`)."""
    lines: set[int] = set()
    old = old_left = new_left = 0
    for line in section.split("\n"):
        header = _HUNK_RE.match(line)
        if header is not None:
            old_left = int(header[2]) if header[2] is not None else 1
            new_left = int(header[4]) if header[4] is not None else 1
            # an empty base side names the line before the insertion
            old = int(header[1]) + (1 if old_left == 0 else 0)
        elif (old_left <= 0 and new_left <= 0) or line.startswith("\\"):
            continue
        elif line.startswith("-"):
            lines.add(old)
            old, old_left = old + 1, old_left - 1
        elif line.startswith("+"):
            lines.update(n for n in (old - 1, old) if n >= 1)
            new_left -= 1
        else:  # context (an empty line is one)
            old, old_left, new_left = old + 1, old_left - 1, new_left - 1
    return tuple(sorted(lines))


def surroundings(lines: Iterable[int], radius: int = SURROUNDING) -> frozenset[int]:
    """Every line within `radius` of one of `lines` (line numbers start at 1)."""
    return frozenset(n for line in lines for n in range(max(1, line - radius), line + radius + 1))


def guarded_lines(gold_patch: bytes) -> dict[str, frozenset[int]]:
    """Per file the base has, the base lines around the gold's changed lines."""
    return {path: surroundings(lines) for path, lines in changed_base_lines(gold_patch).items()}


# --- the choice (pure) ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CoverageSeen:
    """What the coverage run at the base saw, or why there is nothing to see."""

    tool: str
    """`lines` or `v8`; "" when the runner has none."""
    scores: Mapping[str, int] = field(default_factory=dict)
    """Per test (its runner's name; the test file for runners that select by file), how many
    guarded lines it executes (tests executing none are left out)."""
    lines: int = 0
    """How many guarded lines there are."""
    problem: str | None = None
    """Why coverage could not be used."""


_LOG_RE = re.compile(r" \(log [^()]*\)")
"""A problem's pointer to its log (` (log /…/agent-4.log)`)."""


def choose_pass_to_pass(
    passing: Sequence[tuple[str, str, str]],
    *,
    neighbours: frozenset[str],
    coverage: CoverageSeen | None,
    cap: int,
) -> tuple[tuple[str, ...], PassToPassBasis]:
    """At most `cap` pass-to-pass selectors from `passing` (selector, file, runner name), and
    the basis of the choice (see the module docstring)."""
    score: dict[str, int] = {}
    changed: set[str] = set()
    for selector, file, name in passing:
        seen = coverage.scores.get(name, 0) if coverage is not None else 0
        score[selector] = max(score.get(selector, 0), seen)
        if file not in neighbours:
            changed.add(selector)
    covered = sorted((s for s in score if score[s] > 0), key=lambda s: (-score[s], s))
    rest = sorted(changed.difference(covered))
    chosen = tuple([*covered, *rest][:cap])
    if coverage is None or coverage.problem is not None or not coverage.tool:
        why = "no coverage measure for this runner"
        if coverage is not None and coverage.problem is not None:
            # the basis is exported: the log's path on this machine stays in the draft record
            why = f"coverage could not run: {_LOG_RE.sub('', coverage.problem)}"
        # Nothing tells which unchanged file guards the change: its tests fill the places the
        # changed files leave, after them, and the basis says so (the verdict flags it), so a
        # runner without a measure keeps the tier it had rather than losing the candidate.
        beside = sorted(set(score) - changed)[: max(0, cap - len(chosen))]
        if not beside:
            detail = f"{why}; the changed test files' passing tests, sorted"
            return chosen, PassToPassBasis(
                basis="changed test files", detail=detail, selected=chosen
            )
        chosen = (*chosen, *beside)
        detail = (
            f"{why}; the changed test files' passing tests, then {len(beside)} of unchanged "
            "test files beside them, sorted"
        )
        return chosen, PassToPassBasis(basis="neighbours", detail=detail, selected=chosen)
    tool = _TOOL_NAMES.get(coverage.tool, coverage.tool)
    around = f"the {coverage.lines} lines around the gold's changed lines"
    if not covered:
        detail = (
            f"{tool} at the base: no passing test executes {around}; "
            "the changed test files' passing tests, sorted"
        )
        return chosen, PassToPassBasis(basis="changed test files", detail=detail, selected=chosen)
    kept = [s for s in chosen if score[s] > 0]
    detail = (
        f"{tool} at the base: {len(covered)} passing tests execute some of {around} "
        f"(at most {score[covered[0]]}); {len(kept)} chosen by that count, "
        f"then {len(chosen) - len(kept)} more from the changed test files"
    )
    return chosen, PassToPassBasis(basis="coverage", detail=detail, selected=chosen)


# --- the run ----------------------------------------------------------------------------------


def coverage_command(
    test_command: str,
    files: int,
    parts: CoverageParts,
    *,
    limit: int = 0,
    finished: str = "",
    linger: int = LINGER_SECONDS,
) -> str:
    """The coverage run's test command: each of the first `files` selectors (test files) run
    once on its own, measured by the runner's `parts` into the file's own directory
    (`<data>/<index>`). With `limit` (seconds), each file's run stops there, and with the
    runner's final summary line `finished` too once it printed it and stays quiet for `linger`
    seconds (`_linger`): at the base, a test file may hang.

    It exits 1 whatever the tests do: the verifier repeats a command that passes, and this one
    needs one run.
    """
    inner = test_command.replace(PLACEHOLDER, '"$selfbench_file"')
    watch = watch_words(finished, linger) if limit else ""
    if limit:
        inner = f"export selfbench_file; {watch}timeout -k 5 {int(limit)} bash -c {quote(inner)}"
    return (
        f"{WATCH if watch else ''}selfbench_index=0; "
        f"for selfbench_file in {PLACEHOLDER}; do "
        f'[ "$selfbench_index" -lt {files} ] || break; '
        f'selfbench_data="{_DATA}/$selfbench_index"; mkdir -p "$selfbench_data"; '
        f'( export SELFBENCH_COVERAGE_DATA="$selfbench_data" '
        f"SELFBENCH_COVERAGE_INCLUDE={_LIB}/{_INCLUDE} selfbench_coverage_lib={_LIB}; "
        f"{parts.environment}{inner} ); "
        "selfbench_index=$((selfbench_index + 1)); "
        "done; exit 1"
    )


@dataclass(frozen=True, slots=True)
class CoverageRun:
    """A prepared coverage run: its tool, the guarded lines, the host directory it writes into
    and the mounts that give the sandbox the tool and that directory."""

    parts: CoverageParts
    lines: Mapping[str, frozenset[int]]
    data: Path
    binds: Mapping[str, Path]
    ro_binds: Mapping[str, Path]

    @property
    def tool(self) -> str:
        """`lines` or `v8`."""
        return self.parts.tool

    def variant(
        self,
        definition: TaskDefinition,
        *,
        test_command: str,
        files: int,
        test_patch: bytes,
        gold_patch: bytes,
        limit: int = 0,
        finished: str = "",
    ) -> VerifierVariant:
        """The verifier run of `definition`'s task with the coverage command (built from the
        plain `test_command`, each file's run limited as `coverage_command` says) instead of
        its tests', and this run's mounts."""
        command = coverage_command(test_command, files, self.parts, limit=limit, finished=finished)
        measured = definition.model_copy(update={"testCommand": command})
        protected = held_out_paths(measured, parse_patch(test_patch, lenient=True))
        test_sh = render_test_sh(measured, protected, gold_patch, repeat=False, evidence=False)
        return VerifierVariant(test_sh, binds=self.binds, ro_binds=self.ro_binds)


def prepare_coverage(
    scratch: Path, parts: CoverageParts, lines: Mapping[str, frozenset[int]]
) -> CoverageRun | str:
    """The coverage run's host directories under `scratch` (the data directory, writable by
    the tests' user; for `lines`, the plugin, read-only),
    or why there is nothing to measure."""
    if parts.tool == LINES:
        lines = {path: found for path, found in lines.items() if path.endswith(".py")}
    if not lines:
        return "the gold patch changes no line of a file the base has"
    data = scratch / "coverage-data"
    data.mkdir()
    data.chmod(0o777)  # the sandbox's tests user writes there; nothing else reads it
    ro_binds: dict[str, Path] = {}
    if parts.plugin:
        lib = scratch / "coverage-lib"
        lib.mkdir()
        (lib / f"{parts.plugin_module}.py").write_text(parts.plugin, encoding="utf-8")
        include = [f"{layout.CONTAINER_APP}/{path}" for path in sorted(lines)]
        (lib / _INCLUDE).write_text(json.dumps(include), encoding="utf-8")
        ro_binds = {_LIB: lib}
    return CoverageRun(parts, dict(lines), data, {_DATA: data}, ro_binds)


# --- what it recorded -------------------------------------------------------------------------


def read_coverage(
    run: CoverageRun, files: Sequence[str], sources: Mapping[str, bytes], *, log: str
) -> CoverageSeen:
    """What the run recorded: per test, how many guarded lines it executes.

    `files` are the run's test files in order (V8's data is per file); `sources` the base's
    text of the changed files (to place V8's character offsets on lines).
    """
    total = sum(len(found) for found in run.lines.values())
    errors = sorted({line for path in run.data.glob(f"*/{_ERRORS}") for line in _text(path)})
    if errors:
        return CoverageSeen(run.tool, {}, total, f"{errors[0]} (log {log})")
    recorded: bool | None
    if run.tool == LINES:
        executed, recorded = _read_lines(run)
    else:
        executed, recorded = _read_v8(run, files, sources)
    if recorded is None:
        why = (
            "V8 coverage placed none of the changed files' lines: they ran only as transformed "
            f"scripts, or not as scripts of their own (log {log})"
        )
        return CoverageSeen(run.tool, {}, total, why)
    if not recorded:
        why = f"{_TOOL_NAMES.get(run.tool, run.tool)} recorded nothing (log {log})"
        return CoverageSeen(run.tool, {}, total, why)
    scores = {name: len(found) for name, found in executed.items() if found}
    return CoverageSeen(run.tool, scores, total)


def _text(path: Path) -> list[str]:
    """The first lines of an error file the run wrote (an unreadable one says why)."""
    try:
        data = read_bytes(path, error=DraftError)
    except DraftError as exc:
        return [str(exc)]
    return data.decode("utf-8", "replace").splitlines()[:5]


_Executed = dict[str, set[tuple[str, int]]]


def _repository_path(measured: str) -> str:
    """The repository path of a file measured in the sandbox ("" when outside `/app`)."""
    if measured.startswith("file://"):
        measured = unquote(measured.removeprefix("file://"))
    prefix = f"{layout.CONTAINER_APP}/"
    return measured.removeprefix(prefix) if measured.startswith(prefix) else ""


_LINES_LIMIT = 64 << 20
"""The most a process's line record may hold (it is the tests' writing: hostile)."""


def _read_lines(run: CoverageRun) -> tuple[_Executed, bool]:
    """Per pytest node id, the guarded lines it executes; whether any record was read. A record
    that is not `{node id: {file: [line, …]}}` is not read."""
    executed: _Executed = {}
    recorded = False
    for path in sorted(run.data.glob("*/lines-*.json")):
        try:  # the tests wrote it: no link followed out of the data directory
            data = read_beneath(run.data, path.relative_to(run.data).as_posix(),
                                error=DraftError, limit=_LINES_LIMIT)  # fmt: skip
            value = json.loads(data or b"null")
        except (DraftError, ValueError):
            continue
        if not isinstance(value, dict):
            continue
        recorded = True
        for test, files in value.items():
            if not isinstance(test, str) or not test or not isinstance(files, dict):
                continue
            for name, lines in files.items():
                wanted = run.lines.get(_repository_path(str(name)), frozenset())
                if not isinstance(lines, list):
                    continue
                for line in lines:
                    if type(line) is int and line in wanted:
                        executed.setdefault(test, set()).add((str(name), line))
    return executed, recorded


def _read_v8(
    run: CoverageRun, files: Sequence[str], sources: Mapping[str, bytes]
) -> tuple[_Executed, bool | None]:
    """Per test file, the guarded lines any process of its run executes; whether any data was
    read (None when data was read but no changed file's lines could be placed: the runner ran
    them only as transformed scripts, or not as scripts of their own, as jest's module
    registry does, so "no test executes them" would be unfounded)."""
    executed: _Executed = {}
    recorded = False
    placed = 0
    for index, file in enumerate(files):
        for report in sorted((run.data / str(index)).glob("coverage-*.json")):
            try:
                scripts = json.loads(report.read_text(encoding="utf-8")).get("result", [])
            except (OSError, ValueError, AttributeError):
                continue
            recorded = True
            found = executed.setdefault(file, set())
            for script in scripts if isinstance(scripts, list) else []:
                lines = _script_lines(script, run.lines, sources)
                if lines is None:
                    continue
                placed += _is_changed(script, run.lines)
                found.update(lines)
    return executed, None if recorded and not placed else recorded


def _is_changed(script: Any, lines: Mapping[str, frozenset[int]]) -> bool:
    """The V8 script record is one of the changed files'."""
    return isinstance(script, dict) and _repository_path(str(script.get("url", ""))) in lines


def _script_lines(
    script: Any, lines: Mapping[str, frozenset[int]], sources: Mapping[str, bytes]
) -> set[tuple[str, int]] | None:
    """The guarded lines one V8 script record executes; None when it is a changed file whose
    text is not the base file's (a transformed script's offsets do not fall on its lines)."""
    if not isinstance(script, dict):
        return set()
    path = _repository_path(str(script.get("url", "")))
    if path not in lines or path not in sources:
        return set()
    try:
        ranges = [
            (int(r["startOffset"]), int(r["endOffset"]), int(r["count"]))
            for function in script.get("functions", [])
            for r in function.get("ranges", [])
        ]
    except (AttributeError, KeyError, TypeError, ValueError):  # not what Node writes
        return set()
    text = sources[path].decode("utf-8", "replace")
    length = len(text.encode("utf-16-le")) // 2
    if not ranges or max(end for _, end, _ in ranges) != length:
        return None
    return {(path, line) for line in executed_lines(text, ranges) if line in lines[path]}


def executed_lines(text: str, ranges: Sequence[tuple[int, int, int]]) -> set[int]:
    """The lines (from 1) of `text` with a non-blank character whose innermost V8 range (start
    and end offsets in UTF-16 units, count) ran."""
    found: set[int] = set()
    offset = 0
    for number, line in enumerate(text.split("\n"), start=1):
        width = len(line.encode("utf-16-le")) // 2
        near = [r for r in ranges if r[0] < offset + width and r[1] > offset]
        position = offset
        for char in line:
            if not char.isspace() and _count_at(position, near) > 0:
                found.add(number)
                break
            position += 2 if ord(char) > 0xFFFF else 1
        offset += width + 1
    return found


def _count_at(position: int, ranges: Sequence[tuple[int, int, int]]) -> int:
    """The count of the innermost range holding `position` (0 when none does)."""
    best: tuple[int, int] | None = None
    for start, end, count in ranges:
        if start <= position < end and (best is None or end - start <= best[0]):
            best = (end - start, count)
    return 0 if best is None else best[1]
