"""Run, read, decide: the affected test files at the base and with the gold patch, in the sandbox.

`observe` proves nothing by itself: it writes a *provisional* task (the inferred commands, the
affected test files as fail-to-pass), compiles it into a temporary bundle and hands it to the
local environment's own verifier (`environments.local.scoring`): setup once, then one run at
the base (the test patch applied, an empty agent patch) and `reruns` runs with the gold patch,
each on a fresh copy of the prepared tree. The provisional test command runs each affected file
on its own between marker lines, so every test's outcome is read with its file, whatever the
runner prints (jest, vitest and node name tests without their file): twice in a row at the base
and in the first gold run (two samples each, the second in the same tree, as the verifier's own
repeat; with a coverage run the neighbours once, `_run_once`, their first run standing for the
second), once in each later gold run (one sample each, from a fresh copy). The gold runs leave
the verifier's repeat of the whole command out, so each test selection runs as often as the
verdict needs and no more (validation counts these runs, `validate.evidence`). Unchanged test
files beside the changed ones (`Plan.neighbours`) may run too, for pass-to-pass tests only.
When the runner has a coverage measure (`Plan.coverage`), one more run at the base, right after
the first gold run, runs every file once under it (`draft.coverage`): which tests execute the
lines around the gold's changed lines. The gold runs after it leave out the unchanged files none
of whose tests does (`_unreached`): such a test can be neither pass-to-pass nor a flaky test that
rejects, so only the changed files and the neighbours that guard the change run again.

Cheapest first: after each run `observe` asks `settled` (given by the caller) whether the runs
so far already reject the candidate whatever the runs left would show; if so, those are not run
(the setup is never repeated: `score_patches` stops between runs on the same prepared tree).
`rejected_early` is that question for `decide`'s rules: the run at the base alone settles a
rejection when it cannot be read, a test of a changed file is flaky, or, for runners that select
by file, every changed test file passes (a file selector is fail-to-pass only when it fails at
the base); otherwise the first gold run settles any rejection but too few pass-to-pass tests
(which the coverage run may change) and a flaky test of an unchanged file (which the coverage
run, next, may find the change reaching); the coverage run settles those two. A test named only
with the gold patch is fail-to-pass (missing at the base), so for per-test runners even a base
where every test passes needs one gold run to settle.

`decide` is pure: per-test outcomes in, fail-to-pass and pass-to-pass selectors (or the reason
there are none) out.

* fail-to-pass: tests that fail (or are missing, or their file fails) at the base and pass in
  every gold run;
* pass-to-pass: tests that pass at the base and in every gold run: those executing the most of
  the lines around the gold's changed lines first, then the changed test files' others, sorted
  (`coverage.choose_pass_to_pass`), capped at `cap`; fewer than the tier's minimum rejects;
* a test that passes at the base and fails with the gold patch (`regression: <test> ...`)
  rejects the candidate; so does output the runner's parser cannot read;
* a test whose outcome changes between samples at the base or with the gold patch (or a file
  whose exit status does) is flaky. When the change reaches it, it rejects the candidate
  (`flaky: <test> passed N of M runs ...`): it is in a changed test file, or the coverage run
  saw it execute a guarded line. `observe` first runs such a file alone (`settled_alone`):
  passing there every time, those runs stand for its runs and it is no longer flaky. Otherwise
  (a test of an unchanged file beside them) it is left out of pass-to-pass and listed in
  `Decision.dropped_flaky` (the draft record's `droppedFlaky`), with its whole file when its
  runner selects by file or its file's exit status changed; if too few pass-to-pass tests are
  left, the tier's minimum rejects as above.

Tests are matched across runs by `volatile.match_key`: ids that differ only in a timestamp, an
address or a random suffix (`test_x[2026-12-06T07:33:01.123456]`) are one test. Only a name
every run gives alike becomes a selector (the verifier selects by name): a test whose name
changes between runs is never pass-to-pass, nor fail-to-pass (a candidate whose only
fail-to-pass tests are such is rejected, saying so). Runners that select by file are unaffected:
their selector is the file.

Runners that select by file (jest, vitest, node, bun) get file selectors: a file is fail-to-pass
when it fails at the base and passes in every gold run, pass-to-pass when it passes in all runs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

from selfbench import activity
from selfbench._fs import read_bytes
from selfbench._git import git
from selfbench._json import JsonObject
from selfbench._scratch import scratch_directory
from selfbench._shell import quote
from selfbench.artifacts.compiled import LocatedTask
from selfbench.artifacts.draft_record import AloneRerun, FlakyTest
from selfbench.artifacts.quality_record import PassToPassBasis
from selfbench.artifacts.report import RunReport
from selfbench.artifacts.task_dir import write_task_files
from selfbench.bundle.held_out import held_out_paths
from selfbench.bundle.render_scripts import F2P_AGAIN_LABEL, F2P_LABEL, render_test_sh
from selfbench.compiler import compile_home
from selfbench.contract import AUTHORING_DEFAULTS, Difficulty, TaskDefinition
from selfbench.draft._linger import LINGER_SECONDS, WATCH, stopped_by_watch, watch_words
from selfbench.draft.coverage import (
    CoverageRun,
    CoverageSeen,
    choose_pass_to_pass,
    guarded_lines,
    prepare_coverage,
    read_coverage,
)
from selfbench.draft.volatile import is_volatile, match_key
from selfbench.environments.local.phases import DEFAULT_RERUNS, LocalOptions, VerifierVariant
from selfbench.environments.local.scoring import score_patches
from selfbench.environments.local.setup_cause import known_hint, setup_cause
from selfbench.environments.local.verifier import command_segments
from selfbench.errors import DraftError, GitError
from selfbench.outcomes import Outcome, Outcomes, parse_outcomes
from selfbench.patches import parse_patch
from selfbench.rules import PLACEHOLDER, THRESHOLDS
from selfbench.runners import CoverageParts

__all__ = [
    "DEFAULT_P2P_CAP",
    "Decision",
    "FileRun",
    "Observation",
    "Plan",
    "RunSample",
    "Where",
    "collection_error",
    "decide",
    "observe",
    "provisional_command",
    "read_samples",
    "rejected_early",
    "settled_alone",
]

DEFAULT_P2P_CAP: Final = 20
"""At most this many pass-to-pass selectors, the best guards first."""
REPEATS: Final = 2
"""Each file runs this many times in a row at the base and in the first gold run (see
`provisional_command`; with a coverage run the neighbours once, `_run_once`)."""
_MARKER_RE = re.compile(
    r"^selfbench-draft: (begin|end|skip|part) (\d{1,6}) (\d{1,2})"
    r"(?: (-?\d{1,6}))?(?: (\d{9,11}))? ?$",
    re.MULTILINE,
)
"""A file run's marker line: `begin INDEX REPEAT TIME` or `end INDEX REPEAT CODE TIME` (the
time in whole seconds since the epoch, bash's `EPOCHSECONDS`; empty where the shell has none,
and the file's time is then not known); `skip INDEX REPEAT` for a file a later gold run leaves
out (`provisional_command`'s `skipped`) or a later repeat of a file run once (`once`); `part
INDEX REPEAT` before the `begin` of a file's run of some of its tests (`parts`)."""
_TIMED_OUT = 124
"""`timeout`'s exit code when the limit struck (a kill 5 s after, 137, is also what an
out-of-memory kill gives: that one reads as a failed run)."""
FILE_LIMIT_FLOOR: Final = 60
"""The least limit a file's run after the base gets, in seconds."""
FILE_LIMIT_FACTOR: Final = 4
"""A file's limit after the base: this many times its slowest run at the base, plus the
floor (a loaded machine may be that much slower; a hang costs minutes, not the hour)."""
_PROVISIONAL_ID = "draft-provisional"
_LOG_CUT = "\nselfbench: log cut at "
_PROVISIONAL_URL = "https://example.com/selfbench/draft"
_ERROR_LINE_RE = re.compile(
    r"(?:E\s+|ERROR \S+ - )?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)(?:: .{1,200})?)"
)
_USAGE_RE = re.compile(r"(?:UsageError|ERROR): usage: .*")
"""pytest's usage banner: the runner refused its command line (an ini file's `addopts` naming a
plugin's option the environment lacks)."""
_USAGE_CAUSE_RE = re.compile(r"\S+: error: (.{1,200})")
"""The line after the banner that says what was refused (`__main__.py: error: unrecognized
arguments: --cov=parse`), the usage error's cause."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What the draft runs: the inferred environment and the affected test files."""

    base_commit: str
    workdir: str
    setup_command: str
    test_command: str
    toolchains: tuple[str, ...]
    test_files: tuple[str, ...]
    """The test patch's test files, relative to `workdir`, in a stable order; then any
    `neighbours`."""
    timeouts: dict[str, int] = field(default_factory=lambda: dict(AUTHORING_DEFAULTS["timeouts"]))
    resources: dict[str, int | float] = field(
        default_factory=lambda: dict(AUTHORING_DEFAULTS["resources"])
    )
    neighbours: frozenset[str] = frozenset()
    """Unchanged test files beside the changed ones, run only for pass-to-pass candidates."""
    coverage: CoverageParts | None = None
    """The runner's coverage measure (`Runner.coverage`; None runs none)."""
    named_tests: Callable[[str], bool] | None = None
    """Whether a test's name is a selector the command line takes, for a runner that runs given
    tests of one file in one process (`Runner.runs_named_tests`: pytest's node ids); None for
    one that runs whole files. The later gold runs then run only the tests of an unchanged file
    that matter (`partial_runs`)."""
    finished_line: str = ""
    """The runner's final summary line (`Runner.finished_line`; "" for none): a file's run
    that printed it and lingers is stopped (`provisional_command`)."""

    @property
    def held_out(self) -> tuple[str, ...]:
        """The changed test files (the task's `testPaths`)."""
        return tuple(file for file in self.test_files if file not in self.neighbours)


@dataclass(frozen=True, slots=True)
class FileRun:
    """One affected file's run within one sample: its exit status and what its runner said."""

    file: str
    exit_code: int
    outcomes: Outcomes
    error: str | None = None
    """The last exception line of a failed run that reported no test of its own (a collection
    error: `ModuleNotFoundError: No module named 'pkg_resources'`)."""
    carried: bool = False
    """Not run in this sample: another run of the file stands for it, the first gold run's (a
    later gold run left the file out, `_unreached`) or its first run in the same command (a file
    run once, `_run_once`). Flaky tests are counted in the runs made only."""
    alone: bool = False
    """Run again alone (`settled_alone`): the file's tests changed outcome between this place's
    runs while other runs shared the machine, and passed every time it had the machine alone;
    this run stands for the one made beside the others."""
    carried_tests: frozenset[str] = frozenset()
    """The tests of the file this run did not run (a later gold run ran only the file's tests
    that matter, `partial_runs`): the first gold run's outcomes stand for them, and they count
    in no flaky test's runs; the file's exit status then is its part's."""


@dataclass(frozen=True, slots=True)
class RunSample:
    """One run of the affected files: `base`, `gold-1`, `gold-1 again`, …"""

    name: str
    files: tuple[FileRun, ...]
    log: str

    def tests(self) -> dict[str, Outcome]:
        """Per-test outcomes, keyed `<file>\x00<test>` (see `test_key`)."""
        return {
            test_key(run.file, name): outcome
            for run in self.files
            for name, outcome in run.outcomes.tests
        }


@dataclass(frozen=True, slots=True)
class Observation:
    """Everything `observe` saw: the base samples and the gold samples, or why there are none."""

    base: tuple[RunSample, ...]
    gold: tuple[RunSample, ...]
    logs: Path
    seconds: float
    reason: str | None = None
    coverage: CoverageSeen | None = None
    """What the coverage run at the base saw (None: there was none)."""
    alone: tuple[AloneRerun, ...] = ()
    """The tests whose outcome changed between the runs at one place, run again alone."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The selectors derived from the samples, or the one-line reason there are none."""

    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    reason: str | None = None
    tests: tuple[str, ...] = ()
    """The names of the fail-to-pass tests (for the draft instruction's redaction)."""
    basis: PassToPassBasis | None = None
    """How the pass-to-pass tests were chosen (None when the candidate is rejected before)."""
    dropped_flaky: tuple[FlakyTest, ...] = ()
    """Flaky tests the change does not reach, left out of pass-to-pass (`decide`)."""


def test_key(file: str, name: str) -> str:
    """A test's key in the evidence: its file and its runner's name for it."""
    return f"{file}\x00{name}"


def _split_key(key: str) -> tuple[str, str]:
    file, _, name = key.partition("\x00")
    return file, name


# --- the provisional task -------------------------------------------------------------------


def provisional_command(  # noqa: PLR0913 - each a choice of which runs the loop makes
    test_command: str,
    files: int,
    repeats: int = REPEATS,
    limits: Sequence[int] = (),
    skipped: Collection[int] = (),
    once: Collection[int] = (),
    parts: Mapping[int, Sequence[str]] | None = None,
    *,
    finished: str = "",
    linger: int = LINGER_SECONDS,
) -> str:
    """A test command that runs each selector (a file) on its own, `repeats` times in a row,
    between marker lines (each with the time: `file_seconds` reads how long each file took).
    With `limits` (seconds, one per file), each run of a file is stopped at its limit
    (`timeout`: its end marker then says 124). The files at the indexes in `skipped` are not
    among the selectors (the caller leaves them out): the index passes over each, saying so
    with a `skip` marker in its place. The files at the indexes in `once` run in the first
    repeat only, a `skip` marker standing for each later one (its first run is read for it).
    The files at the keys of `parts` run only the tests named there (the runner's selectors,
    given to the real command in the file's place), after a `part` marker. With `limits` and
    `finished` (the runner's final summary line, an extended regular expression), a file's run
    that printed it and then stays quiet for `linger` seconds is stopped (`_linger.WATCH`).

    `{tests}` appears once, unquoted, as the loop's word list; inside, each file replaces the
    placeholder of the real command. The loop stops after the `files` selectors: the verifier
    adds the words that ask jest and vitest for their report after the selectors
    (`REPORT_ARGUMENTS`), and those are no test files. The second run in the same tree is the
    determinism repeat (the verifier repeats a passing command itself only when its runner's
    report shows every file, which one report file per run cannot). The command fails when any
    run fails.
    """
    # with parts, the real command takes its words from the positional parameters, which hold
    # the file or its tests (`_part`); bash -c under `timeout` gets them as its arguments
    inner = test_command.replace(PLACEHOLDER, '"$@"' if parts else '"$selfbench_file"')
    run = f"( {inner} )"
    watch = ""
    if limits:
        watch = watch_words(finished, linger)
        cases = " ".join(f"{index}) selfbench_limit={int(n)};;" for index, n in enumerate(limits))
        run = (
            f'case "$selfbench_index" in {cases} *) selfbench_limit={max(limits)};; esac; '
            f"export selfbench_file; {watch}"
            f'timeout -k 5 "$selfbench_limit" bash -c {quote(inner)}'
            + (' bash "$@"' if parts else "")
        )
    numbers = " ".join(str(n) for n in range(1, repeats + 1))
    skip = ""
    if skipped:
        # the selectors hold only the files that run (the verifier's report is judged against
        # them): the index skips the others, each announced with a `skip` marker in its place
        indexes = " ".join(str(int(index)) for index in sorted(skipped))
        skip = (
            f'while [ "$selfbench_index" -lt {files} ] && case " {indexes} " in '
            '*" $selfbench_index "*) ;; *) false;; esac; do '
            f"for selfbench_repeat in {numbers}; do "
            "printf '\\nselfbench-draft: skip %d %d\\n' "
            '"$selfbench_index" "$selfbench_repeat"; '
            "done; selfbench_index=$((selfbench_index + 1)); done; "
        )
    return (
        f"{WATCH if watch else ''}selfbench_status=0; selfbench_index=0; "
        f"for selfbench_file in {PLACEHOLDER}; do "
        f"{skip}"
        f'[ "$selfbench_index" -lt {files} ] || break; '
        f"for selfbench_repeat in {numbers}; do "
        f"{_once(once)}{_part(parts or {})}"
        'printf \'\\nselfbench-draft: begin %d %d %s\\n\' "$selfbench_index" "$selfbench_repeat" '
        '"${EPOCHSECONDS:-}"; '
        f"{run}; selfbench_code=$?; "
        'printf \'\\nselfbench-draft: end %d %d %d %s\\n\' "$selfbench_index" "$selfbench_repeat" '
        '"$selfbench_code" "${EPOCHSECONDS:-}"; '
        '[ "$selfbench_code" -eq 0 ] || selfbench_status=1; '
        "done; selfbench_index=$((selfbench_index + 1)); "
        f'done; {skip}exit "$selfbench_status"'
    )


def _run_once(plan: Plan, *, coverage: bool, reruns: int) -> list[int]:
    """The files the base and the first gold run run once, not `REPEATS` times: with a coverage
    run and at least two gold runs, the neighbours. Their repeat looks for a flaky test, and one
    of theirs matters only when the coverage run sees it reach the change: the later gold runs
    run those again (`_unreached` leaves out only the others), and any neighbour with a test
    that passed at the base and failed in the first gold run, so a failure once there is told
    from a regression by a second run (`_waits`). Otherwise every file runs `REPEATS` times."""
    if not coverage or reruns < REPEATS:
        return []
    return [index for index, file in enumerate(plan.test_files) if file in plan.neighbours]


def _once(once: Collection[int]) -> str:
    """The loop's words that pass over a later repeat of a file run once, with a `skip`
    marker."""
    if not once:
        return ""
    indexes = " ".join(str(int(index)) for index in sorted(once))
    return (
        f'if [ "$selfbench_repeat" -gt 1 ] && case " {indexes} " in *" $selfbench_index "*) ;; '
        "*) false;; esac; then printf '\\nselfbench-draft: skip %d %d\\n' "
        '"$selfbench_index" "$selfbench_repeat"; continue; fi; '
    )


def _part(parts: Mapping[int, Sequence[str]]) -> str:
    """The loop's words that set the real command's words: the tests of a file at a key of
    `parts` (each quoted), after a `part` marker; otherwise the file."""
    if not parts:
        return ""
    cases = "".join(
        f"{int(index)}) set -- {' '.join(quote(test) for test in tests)}; "
        'printf \'\\nselfbench-draft: part %d %d\\n\' "$selfbench_index" "$selfbench_repeat";; '
        for index, tests in sorted(parts.items())
    )
    return f'case "$selfbench_index" in {cases}*) set -- "$selfbench_file";; esac; '


_MAX_PROVISIONAL_SECONDS = 3600


def _provisional_definition(
    plan: Plan, difficulty: Difficulty, once: Collection[int] = ()
) -> JsonObject:
    """The provisional task: every file runs `REPEATS` times in one command, so its time limit
    is the task's per-command limit for each run (at most an hour in all, unless one run
    already may take longer); each file's run stops at the per-command limit."""
    timeouts = dict(plan.timeouts)
    runs = REPEATS * max(1, len(plan.test_files))
    one = timeouts["testsSeconds"]
    timeouts["testsSeconds"] = max(one, min(one * runs, _MAX_PROVISIONAL_SECONDS))
    return {
        "schemaVersion": 1,
        "difficulty": difficulty,
        "taskId": _PROVISIONAL_ID,
        "repo": "draft",
        "baseCommit": plan.base_commit,
        "workdir": plan.workdir,
        "setupCommand": plan.setup_command,
        "testCommand": provisional_command(
            plan.test_command,
            len(plan.test_files),
            limits=[one] * len(plan.test_files),
            once=once,
            finished=plan.finished_line,
        ),
        "failToPass": list(plan.test_files),
        "passToPass": [],
        "testPaths": list(plan.held_out),
        "toolchains": list(plan.toolchains),
        "sourcePr": 1,
        "sourceUrl": _PROVISIONAL_URL,
        "prompt": "Provisional draft run.",
        "timeouts": timeouts,
        "resources": dict(plan.resources),
    }


def observe(
    repo: Path,
    plan: Plan,
    *,
    test_patch: bytes,
    gold_patch: bytes,
    logs: Path,
    options: LocalOptions | None = None,
    settled: Callable[[Observation], bool] | None = None,
) -> Observation:
    """Run the affected files at the base and `options.reruns` times with the gold patch.

    Logs go under `logs` (kept: a rejection points at them). After each run but the last,
    `settled` (when given) is asked with what the runs so far show; when it says True, the runs
    left (gold reruns, the coverage run) are skipped and the observation holds the runs made.

    Raises:
        SandboxError: this machine cannot create the isolated workspace.
        CompileError: the provisional task does not compile (a patch does not apply).
    """
    started = time.monotonic()
    options = replace(options or LocalOptions(), logs=logs)
    reruns = max(1, options.reruns or DEFAULT_RERUNS)
    activity.files(plan.test_files)  # the heartbeat names the file a run is in
    with scratch_directory("selfbench-draft-") as scratch:
        task = Path(scratch) / "task"
        task.mkdir()
        measure: CoverageRun | str = "the runner has no coverage measure"
        if plan.coverage is not None:
            measure = prepare_coverage(Path(scratch), plan.coverage, guarded_lines(gold_patch))
        once = _run_once(plan, coverage=isinstance(measure, CoverageRun), reruns=reruns)
        definition = _provisional_definition(plan, "easy", once)
        write_task_files(task, definition, test_patch, gold_patch)
        located = compile_home(task, repo=repo, home=task)
        variants = _GoldRuns(located.definition, plan, (test_patch, gold_patch), reruns, once)
        patches: list[bytes | None] = [b"", *([gold_patch] * reruns)]
        if isinstance(measure, CoverageRun):
            # after the first gold run, so a candidate that run rejects costs no coverage run,
            # and before the others, which then leave out what it shows the change not reaching
            patches.insert(COVERAGE_RUN, b"")  # at the base: the test patch applied, no gold
            variants.coverage = measure.variant(
                located.definition,
                test_command=plan.test_command,
                files=len(plan.test_files),
                test_patch=test_patch,
                gold_patch=gold_patch,
                limit=int(plan.timeouts["testsSeconds"]),
                finished=plan.finished_line,
            )
        asking = None if settled is None else _asking(plan, settled, logs / _PROVISIONAL_ID)
        no_run = None
        if variants.coverage is None:
            no_run = _coverage_seen(repo, plan, measure, None)

        def stop(reports: Sequence[RunReport]) -> bool:
            variants.base = variants.base or reports[0]
            runs = list(reports)
            if variants.coverage is not None and len(reports) > COVERAGE_RUN:
                if variants.seen is None:
                    variants.seen = _coverage_seen(repo, plan, measure, reports[COVERAGE_RUN])
                    variants.skipped = _unreached(plan, variants.seen, reports[:2])
                    variants.parts = partial_runs(
                        plan, variants.seen, reports[:2], variants.skipped
                    )
                del runs[COVERAGE_RUN]
            # without a coverage run, what is known of coverage is known from the start
            seen = variants.seen if variants.coverage is not None else no_run
            stopped.append(asking is not None and asking(runs, seen, variants.parts))
            return stopped[-1]

        stopped: list[bool] = []

        reports = score_patches(
            located, patches, options=options, variants=variants, stop=stop, reuse=True
        )
        if variants.coverage is not None and len(reports) > COVERAGE_RUN:
            seen = variants.seen or _coverage_seen(repo, plan, measure, reports[COVERAGE_RUN])
            del reports[COVERAGE_RUN]
        elif variants.coverage is None and len(reports) == len(patches):
            seen = _coverage_seen(repo, plan, measure, None)
        else:
            seen = None  # stopped before the coverage run: a rejection, whatever it would see
        observation = read_samples(plan, reports, logs=logs / _PROVISIONAL_ID, parts=variants.parts)
        observation = replace(observation, coverage=seen)
        if not any(stopped):  # a flaky test never settles early: its runs alone decide
            again = _Alone(located, plan, test_patch, gold_patch, options, variants.base)
            observation = again.settle(observation)
    return replace(observation, seconds=time.monotonic() - started)


COVERAGE_RUN: Final = 2
"""The coverage run's place among `observe`'s runs: after the base and the first gold run."""


def _unreached(plan: Plan, seen: CoverageSeen, first: Sequence[RunReport]) -> frozenset[str]:
    """The unchanged test files the later gold runs leave out: with a coverage measure that
    worked, those none of whose tests (by the first gold run's names) executes a guarded line,
    and none of whose tests passed at the base and failed in the first gold run (`first`: the
    base run and that one). Their tests can be neither pass-to-pass (`coverage.choose_pass_to_pass`
    takes an unchanged file's test only for its coverage), nor flaky in a way that rejects
    (`_reached`), nor a regression, so running them again would decide nothing."""
    if seen.problem is not None or not seen.tool or not plan.neighbours:
        return frozenset()
    touched = _touched(seen)
    base = _report_samples(plan, first[0], "base")
    samples = _report_samples(plan, first[1], "gold-1")
    if isinstance(samples, str) or isinstance(base, str):
        return frozenset()
    names: dict[str, set[str]] = {}
    for run in samples[0].files:
        names.setdefault(run.file, {match_key(run.file)}).update(
            match_key(name) for name, _ in run.outcomes.tests
        )
    regressed = {
        _split_key(key)[0]
        for key, _ in _regressions(base[0], samples[:1], _LeftOut(frozenset(), frozenset()))
    }
    return frozenset(
        file
        for file in plan.neighbours
        if file in names and not names[file] & touched and file not in regressed
    )


PART_NAMES_LIMIT: Final = 65_536
"""The most characters of quoted test names the later gold runs' command gives in all (the
command is one argument of `bash -c`, which Linux holds to 128 KiB): the files whose names
would pass it run whole."""


def partial_runs(
    plan: Plan, seen: CoverageSeen, first: Sequence[RunReport], skipped: Collection[str]
) -> dict[int, tuple[str, ...]]:
    """The tests each unchanged test file the later gold runs keep (not in `skipped`) runs
    there, by the file's index, for a runner that runs given tests (`Plan.named_tests`): with a
    coverage measure that worked, those the coverage run saw execute a guarded line and those
    that passed at the base and failed in the first gold run (`first`: the base run and that
    one). No other test of an unchanged file can be pass-to-pass, a flaky test that rejects or
    a regression (`_unreached`), and the task's verifier runs each selected test as these runs
    do, by its name. A file runs whole when those are all its tests, when one's name holds a
    volatile part (`volatile.is_volatile`: it would name no test in the next run) or is no
    selector of this file the command line takes, or when the names are too long for one
    command."""
    if plan.named_tests is None or not plan.neighbours:
        return {}
    if seen.problem is not None or not seen.tool:
        return {}
    touched = _touched(seen)
    base = _report_samples(plan, first[0], "base")
    samples = _report_samples(plan, first[1], "gold-1")
    if isinstance(samples, str) or isinstance(base, str):
        return {}
    none = _LeftOut(frozenset(), frozenset())
    regressed = {key for key, _ in _regressions(base[0], samples[:1], none)}
    parts: dict[int, tuple[str, ...]] = {}
    room = PART_NAMES_LIMIT
    for index, run in enumerate(samples[0].files):
        if run.file not in plan.neighbours or run.file in skipped or run.error is not None:
            continue
        names = list(dict.fromkeys(name for name, _ in run.outcomes.tests))
        wanted = tuple(
            name
            for name in names
            if match_key(name) in touched or _matching(test_key(run.file, name)) in regressed
        )
        size = sum(len(quote(name)) + 1 for name in wanted)
        if not wanted or len(wanted) == len(names) or size > room:
            continue
        if all(_names_one(plan.named_tests, run.file, name) for name in wanted):
            parts[index] = wanted
            room -= size
    return parts


def _names_one(named_tests: Callable[[str], bool], file: str, name: str) -> bool:
    """Whether a test's name, given to the command line, runs that test of `file`: a selector
    the runner takes, of that file, steady between runs, one printable word that reads as no
    option, with no brace (the verifier puts the selectors in the command's `{tests}`) and no
    `::` among its parameters (pytest before 7.1 cannot select `test[::1]`)."""
    head, bracket, parameters = name.partition("[")
    return (
        named_tests(name)
        and head.partition("::")[0] == file
        and "::" in head
        and not (bracket and "::" in parameters)
        and not is_volatile(name)
        and name.isprintable()
        and not name.startswith("-")
        and not any(brace in name for brace in "{}")
    )


class _GoldRuns(Mapping[int, VerifierVariant]):
    """The verifiers of `observe`'s runs: the base run's (`_base_run`, asked for by its index
    though not listed, as the task's own verifier was before), the gold runs, each made when its run
    comes, once the base run (`base`, set by the caller) has shown how long each file takes
    (every file's limit is `later_limits`), and the coverage run (`coverage`, at
    `COVERAGE_RUN`). The gold runs after the coverage run leave out the files in `skipped`
    (set by the caller from `seen`, what the coverage run saw: `_unreached`) and run only the
    tests in `parts` of the files there (by index: `partial_runs`)."""

    def __init__(
        self,
        definition: TaskDefinition,
        plan: Plan,
        patches: tuple[bytes, bytes],
        reruns: int,
        once: Collection[int],
    ) -> None:
        self.definition, self.plan, self.reruns = definition, plan, reruns
        self.patches, self.once = patches, once
        self.base: RunReport | None = None
        self.coverage: VerifierVariant | None = None
        self.seen: CoverageSeen | None = None
        self.skipped: frozenset[str] = frozenset()
        self.parts: dict[int, tuple[str, ...]] = {}

    def __getitem__(self, index: int) -> VerifierVariant:
        if index == 0:  # the base run: the task's own verifier, without canaries
            return _base_run(self.definition, self.patches)
        if self.coverage is not None and index == COVERAGE_RUN:
            return self.coverage
        number = index - 1 if self.coverage is not None and index > COVERAGE_RUN else index
        if not 1 <= number <= self.reruns:
            raise KeyError(index)
        ceiling = int(self.plan.timeouts["testsSeconds"])  # the per-command limit
        seconds = {} if self.base is None else file_seconds(self.plan, self.base)
        limits = later_limits(self.plan, seconds, ceiling)
        files = self.plan.test_files
        if number == 1:
            command = provisional_command(
                self.plan.test_command,
                len(files),
                REPEATS,
                limits,
                once=self.once,
                finished=self.plan.finished_line,
            )
            return _gold_run(self.definition, self.plan, self.patches, command)
        skipped = [i for i, file in enumerate(files) if file in self.skipped]
        command = provisional_command(
            self.plan.test_command,
            len(files),
            1,
            limits,
            skipped,
            parts=self.parts,
            finished=self.plan.finished_line,
        )
        return _gold_run(self.definition, self.plan, self.patches, command, skipped)

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, len(self) + 1))

    def __len__(self) -> int:
        return self.reruns + (self.coverage is not None)


def _base_run(definition: TaskDefinition, patches: tuple[bytes, bytes]) -> VerifierVariant:
    """The base run's verifier: the task's own, but that it plants no canary, whose failures
    would read as its file's (the draft reads each file's exit from its marker lines)."""
    test_patch, gold_patch = patches
    protected = held_out_paths(definition, parse_patch(test_patch, lenient=True))
    return VerifierVariant(render_test_sh(definition, protected, gold_patch, canaries=False))


def _gold_run(
    definition: TaskDefinition,
    plan: Plan,
    patches: tuple[bytes, bytes],
    command: str,
    skipped: Collection[int] = (),
) -> VerifierVariant:
    """A gold run's verifier (`patches`: the test patch and the gold patch) running `command`
    (a `provisional_command`: each file `REPEATS` times in a row in the first gold run, in the
    same tree as the verifier's own repeat would; once in each later one, each from a fresh
    copy), the files at `skipped` left out of the selectors; the verifier's repeat of the whole
    command left out (`repeat=False`), so a gold run is one run of the selection, as
    validation's evidence counts it (`validate.evidence`)."""
    test_patch, gold_patch = patches
    selected = [file for index, file in enumerate(plan.test_files) if index not in skipped]
    gold = definition.model_copy(update={"testCommand": command, "failToPass": selected})
    protected = held_out_paths(gold, parse_patch(test_patch, lenient=True))
    test_sh = render_test_sh(gold, protected, gold_patch, repeat=False, evidence=False)
    return VerifierVariant(test_sh)


def _asking(
    plan: Plan, settled: Callable[[Observation], bool], logs: Path
) -> Callable[[Sequence[RunReport], CoverageSeen | None, Mapping[int, Sequence[str]]], bool]:
    """`observe`'s question after each run: the runs so far (the base, then gold runs, the
    later ones running the tests in `parts` only) read as samples, with what the coverage run
    saw once it ran, put to `settled`."""

    def stop(
        reports: Sequence[RunReport],
        seen: CoverageSeen | None,
        parts: Mapping[int, Sequence[str]],
    ) -> bool:
        samples = read_samples(plan, reports, logs=logs, parts=parts)
        return settled(replace(samples, coverage=seen))

    return stop


def _coverage_seen(
    repo: Path, plan: Plan, measure: CoverageRun | str, report: RunReport | None
) -> CoverageSeen:
    """What the coverage run recorded, or why there was none."""
    if plan.coverage is None:
        return CoverageSeen("")
    if isinstance(measure, str):
        return CoverageSeen(plan.coverage.tool, problem=measure)
    if report is None or report.reward is None or not report.reward.setup_completed:
        log = report.log if report is not None else "none"
        return CoverageSeen(plan.coverage.tool, problem=f"the run at the base failed (log {log})")
    sources: dict[str, bytes] = {}
    for path in measure.lines:
        try:
            sources[path] = git(repo, "show", f"{plan.base_commit}:{path}")
        except GitError:
            continue
    return read_coverage(measure, plan.test_files, sources, log=report.log)


def read_samples(
    plan: Plan,
    reports: Sequence[RunReport],
    *,
    logs: Path,
    seconds: float = 0.0,
    parts: Mapping[int, Sequence[str]] | None = None,
) -> Observation:
    """The samples in the verifier runs' logs (the first run is the base, the rest gold; the
    gold runs after the first ran only the tests in `parts` of the files there, by index)."""
    if not reports or reports[0].reward is None:
        log = reports[0].log if reports else str(logs)
        return Observation((), (), logs, seconds, _setup_failed(log))
    samples: list[list[RunSample]] = []
    for index, report in enumerate(reports):
        name = "base" if index == 0 else f"gold-{index}"
        carried = samples[1][0] if index > 1 else None
        found = _report_samples(plan, report, name, carried, parts if index > 1 else None)
        if isinstance(found, str):
            return Observation((), (), logs, seconds, found)
        samples.append(found)
    gold = tuple(sample for run in samples[1:] for sample in run)
    return Observation(tuple(samples[0]), gold, logs, seconds, None)


def _setup_failed(log: str) -> str:
    """The reason of a provisional task whose setup failed: the line of its log that names the
    failure, and what to do when that is known (`environments.local.setup_cause`)."""
    try:
        data = read_bytes(Path(log), error=DraftError)
    except DraftError:
        return f"setup failed (log {log})"
    output = data[-(1 << 20) :].decode("utf-8", errors="replace")
    cause, hint = setup_cause(output), known_hint(output)
    said = f": {cause}" if cause else ""
    return f"setup failed{said} (log {log})" + (f"; {hint}" if hint else "")


def _run_log(report: RunReport, name: str) -> str:
    """The verifier run's log text; `_Unusable` when the run cannot be read."""
    reward = report.reward
    if reward is None:
        raise _Unusable(f"{name}: the verifier wrote no reward.json (log {report.log})")
    if not reward.setup_completed:
        raise _Unusable(f"{name}: the test patch could not be applied (log {report.log})")
    try:
        text = read_bytes(Path(report.log), error=DraftError).decode("utf-8", errors="replace")
    except DraftError as exc:
        raise _Unusable(f"{name}: {exc}") from exc
    if _LOG_CUT in text:
        raise _Unusable(f"{name}: the tests printed more than the log keeps (log {report.log})")
    return text


class _Unusable(Exception):  # noqa: N818 - a reason, caught in this module
    """A verifier run whose samples cannot be read."""


def _report_samples(
    plan: Plan,
    report: RunReport,
    name: str,
    carried: RunSample | None = None,
    parts: Mapping[int, Sequence[str]] | None = None,
) -> list[RunSample] | str:
    """The samples of one verifier run: each repeat of its fail-to-pass command, or why none.
    A file the run left out (a `skip` marker) has `carried`'s run of it (the first gold run's),
    and so have the tests a file's run of some of them (`parts`) did not run."""
    try:
        segments = command_segments(_run_log(report, name))
    except _Unusable as exc:
        return str(exc)
    found = []
    for label, suffix in ((F2P_LABEL, ""), (F2P_AGAIN_LABEL, " again")):
        segment = segments.get(label)
        if segment is None:
            continue
        gold = not name.startswith("base")
        repeats = _file_runs(plan, segment, carried, parts or {}, gold=gold)
        if isinstance(repeats, str):
            return f"{name}{suffix}: {repeats} (log {report.log})"
        for repeat, files in enumerate(repeats, start=1):
            shown = f"{name}{suffix}" + (f" #{repeat}" if repeat > 1 else "")
            found.append(RunSample(shown, files, report.log))
    if not found:
        return f"{name}: the tests did not run (log {report.log})"
    return found


def _file_runs(
    plan: Plan,
    segment: str,
    carried: RunSample | None = None,
    parts: Mapping[int, Sequence[str]] | None = None,
    *,
    gold: bool = False,
) -> list[tuple[FileRun, ...]] | str:
    """Each repeat's file runs: every file's output between its marker lines, parsed with the
    real command; a file left out (`skip`) has its own first run of this command in a later
    repeat (a file run once), else `carried`'s run of it; a file that ran only the tests in
    `parts` (after a `part` marker) has `carried`'s outcomes for the others. With the `gold`
    patch, a run the linger watch stopped is no run (`_ended_run`)."""
    begun: dict[tuple[int, int], int] = {}
    partial: set[tuple[int, int]] = set()
    runs: dict[int, list[FileRun]] = {}
    garbled = "the test command's output is garbled"
    for match in _MARKER_RE.finditer(segment):
        index, repeat = int(match[2]), int(match[3])
        if match[1] == "part":
            partial.add((index, repeat))
            continue
        if match[1] == "begin":
            begun[index, repeat] = match.end()
            continue
        found: FileRun | str = garbled
        if match[1] == "skip":
            found = _skipped_run(plan, runs.get(1, []), carried, index, repeat)
        elif (index, repeat) in begun and index < len(plan.test_files) and 1 <= repeat <= REPEATS:
            output = segment[begun.pop((index, repeat)) : match.start()]
            code = int(match[4] or "-1")
            found = _ended_run(plan.test_files[index], plan, code, output, gold=gold)
            if isinstance(found, FileRun) and (index, repeat) in partial:
                tests = (parts or {}).get(index)
                if tests is None or carried is None or index >= len(carried.files):
                    return garbled
                found = _with_carried_tests(found, tests, carried.files[index])
        if isinstance(found, str):
            return found
        runs.setdefault(repeat, []).append(found)
    if not runs or any(len(files) != len(plan.test_files) for files in runs.values()):
        return "the test command did not run every test file (timed out?)"
    return [tuple(runs[repeat]) for repeat in sorted(runs)]


def _skipped_run(
    plan: Plan, first: Sequence[FileRun], carried: RunSample | None, index: int, repeat: int
) -> FileRun | str:
    """The run standing for a file a `skip` marker passed over: its own first run in this
    command (`first`, a file run once), else `carried`'s run of it."""
    own = index < len(first) and first[index].file == plan.test_files[index]
    if 1 < repeat <= REPEATS and own and not first[index].carried:
        return replace(first[index], carried=True)  # a file run once: its first run stands
    if carried is not None and index < len(carried.files) and 1 <= repeat <= REPEATS:
        return replace(carried.files[index], carried=True)
    return "the test command's output is garbled"


def _ended_run(
    file: str, plan: Plan, code: int, output: str, *, gold: bool = False
) -> FileRun | str:
    """A file's run from its output between its markers and its exit code, or why it is
    none: its limit struck, or, with the gold patch, the linger watch stopped it (the
    verifier has no watch: its run would hang too; at the base, a hang is the test failing)."""
    if code == _TIMED_OUT:
        return f"{file} did not finish within its time limit (exit {code})"
    if gold and stopped_by_watch(output):
        return (
            f"{file} printed its summary and did not exit within {LINGER_SECONDS} s "
            "with the gold patch (a thread or handle its tests leave keeps it running)"
        )
    command = plan.test_command.replace(PLACEHOLDER, quote(file))
    outcomes = parse_outcomes(command, output, code)
    return FileRun(file, code, outcomes, _collection_error(file, outcomes, output))


def _with_carried_tests(run: FileRun, tests: Sequence[str], first: FileRun) -> FileRun:
    """A file's run of some of its tests (`tests`, as named in the first gold run `first`),
    with `first`'s outcomes for the others, carried. A test asked for and not reported failed:
    it never passes by what another run said, nor reads as a flaky test (`missing` beside a
    failure in the first gold run would hide a regression)."""
    asked = set(tests)
    rest = tuple((name, outcome) for name, outcome in first.outcomes.tests if name not in asked)
    ran = {name for name, _ in run.outcomes.tests}
    kept = tuple((name, outcome) for name, outcome in rest if name not in ran)
    lost: tuple[tuple[str, Outcome], ...] = tuple(
        (name, "failed") for name in dict.fromkeys(tests) if name not in ran
    )
    outcomes = replace(run.outcomes, tests=run.outcomes.tests + lost + kept)
    return replace(run, outcomes=outcomes, carried_tests=frozenset(name for name, _ in kept))


def file_seconds(plan: Plan, report: RunReport) -> dict[str, float]:
    """How long each file's slowest run took in a provisional run, by its markers' times
    (a file whose markers carry none is left out; nothing when the log cannot be read)."""
    try:
        segment = command_segments(_run_log(report, "base")).get(F2P_LABEL, "")
    except _Unusable:
        return {}
    begun: dict[tuple[int, int], int] = {}
    seconds: dict[str, float] = {}
    for match in _MARKER_RE.finditer(segment):
        index, repeat, moment = int(match[2]), int(match[3]), match[5]
        if moment is None or index >= len(plan.test_files):
            continue
        if match[1] == "begin":
            begun[index, repeat] = int(moment)
        elif (index, repeat) in begun:
            took = float(int(moment) - begun.pop((index, repeat)))
            file = plan.test_files[index]
            seconds[file] = max(seconds.get(file, 0.0), took)
    return seconds


def later_limits(plan: Plan, seconds: Mapping[str, float], ceiling: int) -> tuple[int, ...]:
    """Each file's limit in the runs after the base: for an unchanged file (a neighbour, which
    runs the same code with the gold), `FILE_LIMIT_FACTOR` times its slowest run there plus
    `FILE_LIMIT_FLOOR`, never above `ceiling` (the per-command limit); a changed test file (it
    may fail at once at the base and run long with the gold) or one not measured gets
    `ceiling`."""
    return tuple(
        min(ceiling, int(FILE_LIMIT_FACTOR * seconds[file]) + FILE_LIMIT_FLOOR)
        if file in seconds and file in plan.neighbours
        else ceiling
        for file in plan.test_files
    )


def _collection_error(file: str, outcomes: Outcomes, output: str) -> str | None:
    """A failed run's last exception line when it named no test but the file itself; for
    pytest's usage error, the cause its banner is followed by rather than the banner."""
    if outcomes.exit_code == 0 or any(name != file for name, _ in outcomes.tests):
        return None
    found = None
    usage = False
    for line in output.splitlines():
        usage = usage or _USAGE_RE.fullmatch(line.strip()) is not None
        cause = _USAGE_CAUSE_RE.fullmatch(line.strip()) if usage else None
        match = _ERROR_LINE_RE.fullmatch(line.strip())
        if cause is not None:
            found = f"UsageError: {cause[1]}"
        elif match is not None:
            found = match[1]
    return found or f"exit {outcomes.exit_code}"


def collection_error(observation: Observation) -> tuple[str, str, str] | None:
    """A test file collected at neither the base nor with the gold patch (the environment's
    fault, not the change's): the file, its error and the base log; None when there is none."""
    if observation.reason is not None or not observation.base or not observation.gold:
        return None
    base, gold = observation.base[0], observation.gold[0]
    for at_base, with_gold in zip(base.files, gold.files, strict=False):
        if at_base.error is not None and with_gold.error is not None:
            return at_base.file, at_base.error, base.log
    return None


# --- the decision (pure) --------------------------------------------------------------------

Where = Literal["base", "gold"]
_PLACES: Final[dict[Where, str]] = {"base": "at the base", "gold": "with the gold patch"}


def decide(
    observation: Observation,
    *,
    difficulty: Difficulty,
    selector_of: Callable[[str], str],
    by_file: bool,
    cap: int = DEFAULT_P2P_CAP,
    neighbours: frozenset[str] = frozenset(),
) -> Decision:
    """Fail-to-pass and pass-to-pass from the samples, or the reason the candidate is rejected.

    `selector_of` turns a test's runner name into its selector; `by_file` says the runner's
    selectors are its test files (jest, vitest, node --test, bun), whose names carry no file.
    Tests in `neighbours` (unchanged files) can only be pass-to-pass, and only when the
    coverage run saw them execute the change (`coverage.choose_pass_to_pass`); one of theirs
    that is flaky and executes none of it is left out (`Decision.dropped_flaky`).
    """
    found = _selectors(observation, selector_of=selector_of, by_file=by_file, neighbours=neighbours)
    if isinstance(found, str):
        return Decision(reason=found)
    minimum = THRESHOLDS[difficulty].pass_to_pass
    chosen, basis = choose_pass_to_pass(
        found.passing, neighbours=neighbours, coverage=observation.coverage, cap=max(cap, minimum)
    )
    if len(chosen) < minimum:
        return Decision(
            reason=_too_few_pass_to_pass(difficulty, minimum, len(chosen), by_file=by_file),
            basis=basis,
            dropped_flaky=found.dropped,
        )
    fail = tuple(dict.fromkeys(found.fail))
    return Decision(fail, chosen, None, tuple(found.names), basis, found.dropped)


def _too_few_pass_to_pass(difficulty: str, minimum: int, found: int, *, by_file: bool) -> str:
    """Why a tier's pass-to-pass minimum is not met, in selectors: tests, or whole test files
    for a runner that selects files (a file holding a fail-to-pass test can be none)."""
    if by_file:
        files = "file" if minimum == 1 else "files"
        return (
            f"{difficulty} mode requires at least {minimum} pass-to-pass test {files}: this "
            f"runner selects whole files, and {found} pass entirely at the base and with the "
            "gold patch (a file that holds a fail-to-pass test fails at the base)"
        )
    tests = "test" if minimum == 1 else "tests"
    return (
        f"{difficulty} mode requires at least {minimum} pass-to-pass {tests}; {found} of the "
        "test files' tests pass at the base and with the gold patch"
    )


def rejected_early(
    observation: Observation,
    *,
    selector_of: Callable[[str], str],
    by_file: bool,
    neighbours: frozenset[str] = frozenset(),
    minimum: int = 0,
    cap: int = DEFAULT_P2P_CAP,
) -> bool:
    """Whether the runs so far (the base, and the gold runs made) already reject the candidate
    whatever any further gold run would show, so `observe` need not make them (see the module
    docstring). `decide` on the observation gives the reason. A changed file that is not
    collected at the base settles nothing before a gold run: whether it is collected with the
    gold patch decides whether drafting tries another Python (`collection_error`). A flaky test
    the change may reach settles nothing: once every run is made it is run again alone
    (`_Alone`), which tells whether it is flaky or was slowed by the machine's other runs. A flaky
    test of an unchanged file settles nothing either until the coverage run tells whether it
    executes the change. Fewer pass-to-pass tests than the tier's `minimum` (with `decide`'s `cap`)
    settle once the coverage run has been read (`Observation.coverage`): a further gold run can
    only leave tests out, never add one.
    """
    if observation.reason is not None:
        return True
    if not observation.base or _waits(observation, neighbours):
        return False
    if not observation.gold:
        if any(run.error is not None for run in observation.base[0].files):
            return False
        return _base_reason(observation.base, by_file, neighbours) is not None
    try:
        found = _selectors(
            observation, selector_of=selector_of, by_file=by_file, neighbours=neighbours
        )
    except DraftError:  # a name that says no selector: more gold runs may reject it first
        return False
    return isinstance(found, str) or _too_few_now(found, observation, neighbours, minimum, cap)


def _waits(observation: Observation, neighbours: frozenset[str]) -> bool:
    """Whether what the runs so far show waits for more before it settles anything: a flaky
    test the change may reach (its runs alone come once every run is made), or an unchanged
    file's test that passes at the base and fails with the gold patch while its file has run
    fewer than `REPEATS` times with it (run once in the first gold run, `_run_once`: a later
    gold run tells a failure once from a regression)."""
    if _maybe_reached(observation, neighbours):
        return True
    gold = observation.gold
    if not gold:
        return False
    regressed = _regressions(observation.base[0], gold, _LeftOut(frozenset(), frozenset()))
    files = {_split_key(key)[0] for key, _ in regressed} & neighbours
    return any(sum(_ran(sample, file) for sample in gold) < REPEATS for file in files)


def _too_few_now(
    found: _Found, observation: Observation, neighbours: frozenset[str], minimum: int, cap: int
) -> bool:
    """Whether the pass-to-pass choice already falls short of `minimum`, once the coverage run
    has been read (before it, its scores may still add guards from the neighbours)."""
    if observation.coverage is None or minimum == 0:
        return False
    coverage = observation.coverage
    chosen, _ = choose_pass_to_pass(
        found.passing, neighbours=neighbours, coverage=coverage, cap=max(cap, minimum)
    )
    return len(chosen) < minimum


@dataclass(frozen=True, slots=True)
class _Found:
    """What the samples give before the pass-to-pass choice."""

    fail: list[str]
    """Fail-to-pass selectors."""
    passing: list[tuple[str, str, str]]
    """Pass-to-pass candidates: selector, file and runner name."""
    names: list[str]
    """The fail-to-pass tests' names."""
    dropped: tuple[FlakyTest, ...]
    """Flaky tests the change does not reach, left out."""


def _selectors(
    observation: Observation,
    *,
    selector_of: Callable[[str], str],
    by_file: bool,
    neighbours: frozenset[str],
) -> _Found | str:
    """Fail-to-pass selectors, pass-to-pass candidates, the fail-to-pass tests' names and the
    flaky tests left out, or the reason there are none (every rule of `decide` but the
    pass-to-pass minimum)."""
    if observation.reason is not None or not observation.base or not observation.gold:
        return _unsampled(observation, by_file, neighbours)
    base, gold = observation.base, observation.gold
    flips = [*_flips(base, "base"), *_flips(gold, "gold")]
    touched = _touched(observation.coverage)
    left_out = _LeftOut.of(flips, by_file=by_file)
    problem = _unreadable(base[0], gold) or next(
        (f.reason for f in flips if _reached(f, neighbours, touched, by_file=by_file)), None
    )
    if problem is not None:
        return problem
    regressed = _regressions(base[0], gold, left_out)
    if regressed:
        return _regression_reason(regressed[0][1], gold[0])
    dropped = tuple(flip.record for flip in flips)
    if by_file:
        fail, passing, names = _by_file(base[0], gold, neighbours, left_out)
        unselectable: list[str] = []
    else:
        fail, passing, names, unselectable = _by_test(base, gold, selector_of, neighbours, left_out)
    if not fail:
        return _no_fail_to_pass(base[0], gold, neighbours, unselectable)
    return _Found(fail, passing, names, dropped)


def _unsampled(observation: Observation, by_file: bool, neighbours: frozenset[str]) -> str:
    """The reason an observation with no gold run (or none at all) gives."""
    if observation.reason is not None:
        return observation.reason
    if not observation.base:
        return "the tests did not run"
    # stopped after the base (`rejected_early`)
    return _base_reason(observation.base, by_file, neighbours) or "the tests did not run"


def _base_reason(
    samples: Sequence[RunSample], by_file: bool, neighbours: frozenset[str]
) -> str | None:
    """The rejection the runs at the base settle alone: output no runner reads, a flaky test of
    a changed file, or (file selectors) every changed test file passing, so none can be
    fail-to-pass."""
    base = samples[0]
    problem = _unreadable(base, ())
    if problem is not None:
        return problem
    for flip in _flips(samples, "base"):
        if _reached(flip, neighbours, frozenset(), by_file=by_file):
            return flip.reason
    changed = [run for run in base.files if run.file not in neighbours]
    if by_file and all(run.exit_code == 0 for run in changed):
        return _no_fail_to_pass(base, (), neighbours)
    return None


def _unreadable(base: RunSample, gold: Sequence[RunSample]) -> str | None:
    """Why the runner's output cannot be read: unknown runner, or a file naming no test."""
    for sample in (base, *gold):
        for run in sample.files:
            if run.outcomes.runner is None:
                return (
                    "cannot read the test runner's output (unknown runner in the test command; "
                    f"log {sample.log})"
                )
    for sample in gold:
        for run in sample.files:
            if not run.outcomes.tests and run.outcomes.no_tests is None:
                return (
                    f"cannot read the test runner's output: {sample.name}: {run.file} names no "
                    f"test (exit {run.exit_code}; log {sample.log})"
                )
    return None


# --- matching tests across runs, flaky tests ----------------------------------------------------


def _matching(key: str) -> str:
    """A test's key for matching across runs: its name's volatile parts marked
    (`volatile.match_key`)."""
    file, name = _split_key(key)
    return test_key(file, match_key(name))


def _grouped(sample: RunSample, *, live: bool = False) -> dict[str, dict[str, Outcome]]:
    """The sample's tests by matching key: each key's tests (usually one) and their outcomes;
    with `live`, only those the sample ran itself (none carried)."""
    found: dict[str, dict[str, Outcome]] = {}
    for run in sample.files:
        if live and run.carried:
            continue
        for name, outcome in run.outcomes.tests:
            if not (live and name in run.carried_tests):
                key = test_key(run.file, name)
                found.setdefault(_matching(key), {})[key] = outcome
    return found


def _carried_keys(sample: RunSample) -> frozenset[str]:
    """The matching keys of the tests a file's run of some of its tests carried."""
    return frozenset(
        _matching(test_key(run.file, name))
        for run in sample.files
        if not run.carried
        for name in run.carried_tests
    )


def _outcome(group: Mapping[str, Outcome] | None) -> str:
    """One matching key's outcome in a sample: its tests' one outcome, `mixed`, or `missing`."""
    if not group:
        return "missing"
    outcomes = set(group.values())
    return outcomes.pop() if len(outcomes) == 1 else "mixed"


def _steady(key: str, samples: Sequence[Mapping[str, Mapping[str, Outcome]]]) -> list[str]:
    """The names of the tests matched by `key` that every sample names alike: a test whose name
    changes between runs (a volatile id) is none, since the verifier cannot select it."""
    names: set[str] | None = None
    for sample in samples:
        here = set(sample.get(key, {}))
        names = here if names is None else names & here
    return sorted(_split_key(exact)[1] for exact in names or ())


@dataclass(frozen=True, slots=True)
class _Flip:
    """A test (or a file's exit status: `name` "") whose outcome changed between the samples
    at one place."""

    file: str
    name: str
    """The matching key's name part (`volatile.match_key`)."""
    shown: str
    where: Where
    passed: int
    runs: int
    log: str

    @property
    def key(self) -> str:
        return test_key(self.file, self.name)

    @property
    def reason(self) -> str:
        return (
            f"flaky: {self.shown} passed {self.passed} of {self.runs} runs "
            f"{_PLACES[self.where]} (log {self.log})"
        )

    @property
    def record(self) -> FlakyTest:
        return FlakyTest(test=self.shown, where=self.where, passed=self.passed, runs=self.runs)


def _flips(samples: Sequence[RunSample], where: Where) -> list[_Flip]:
    """Every test whose outcome changes between the samples that ran its file (tests are
    matched by `volatile.match_key`; a carried file run is no sample of its own), sorted, then
    every file whose exit status changes and none of whose tests did."""
    seen = [_grouped(sample, live=True) for sample in samples]
    resting = [_carried_keys(sample) for sample in samples]
    flips: list[_Flip] = []
    for key in sorted({key for groups in seen for key in groups}):
        file, name = _split_key(key)
        outcomes = [
            _outcome(groups.get(key))
            for sample, groups, rest in zip(samples, seen, resting, strict=True)
            if _ran(sample, file) and (key not in rest or key in groups)
        ]
        if len(set(outcomes)) > 1:
            shown = _display(min(next(groups[key] for groups in seen if key in groups)))
            passed = outcomes.count("passed")
            flips.append(_Flip(file, name, shown, where, passed, len(outcomes), samples[0].log))
    flipped = {flip.file for flip in flips}
    for index, run in enumerate(samples[0].files):
        # a run of some of the file's tests says nothing of the whole file's exit status
        made = [
            sample.files[index]
            for sample in samples
            if not (sample.files[index].carried or sample.files[index].carried_tests)
        ]
        passed = sum(each.exit_code == 0 for each in made)
        if 0 < passed < len(made) and run.file not in flipped:
            flips.append(_Flip(run.file, "", run.file, where, passed, len(made), samples[0].log))
    return flips


ALONE_RUNS: Final = 2
"""Runs of a flaky test's file with the machine alone, each from a fresh copy and running the
file `REPEATS` times in a row (as the verifier's own repeat does, so a test that fails when run
twice in one tree still changes): steady in all of them, the changes seen beside other runs
were the machine's, not the test's."""


def _alone_files(observation: Observation, neighbours: frozenset[str], where: Where) -> list[str]:
    """The files whose tests (or exit status) changed between the runs at `where` in a way the
    change may reach (`_reached`, for either kind of selector: this is asked before the runner's
    kind is known), sorted."""
    samples = observation.base if where == "base" else observation.gold
    if len(samples) < 2:
        return []
    touched = _touched(observation.coverage)
    return sorted(
        {
            flip.file
            for flip in _flips(samples, where)
            if _reached(flip, neighbours, touched, by_file=False)
            or _reached(flip, neighbours, touched, by_file=True)
        }
    )


def _maybe_reached(observation: Observation, neighbours: frozenset[str]) -> bool:
    """Whether a test the change may reach changed outcome between the runs at one place."""
    return any(_alone_files(observation, neighbours, where) for where in _PLACES)


@dataclass(frozen=True, slots=True)
class _Alone:
    """`observe`'s last step (`settled_alone`): the files whose tests changed outcome between
    the runs at one place in a way the change may reach run `ALONE_RUNS` times more on the
    parked tree, without the other files, once per place, with the machine held whole
    (`environments.local.sharing`: no other candidate's tests run meanwhile). A file steady in
    all of them (each test one outcome, one exit status) has those runs stand for its runs
    there, marked `alone`; one that still changes is flaky, and `decide` rejects the candidate
    on its runs as they were. Either way each changed test is recorded (`Observation.alone`)."""

    located: LocatedTask
    plan: Plan
    test_patch: bytes
    gold_patch: bytes
    options: LocalOptions
    base: RunReport | None

    def settle(self, observation: Observation) -> Observation:
        """The observation with the changed files' runs alone (`settled_alone`)."""
        return settled_alone(observation, self.plan.neighbours, self._runs)

    def _runs(self, where: Where, files: Sequence[str], first: RunSample) -> list[RunSample] | str:
        """The files' runs alone at `where` (the others carried from `first`), or why they
        cannot be read."""
        plan = self.plan
        ceiling = int(plan.timeouts["testsSeconds"])
        seconds = {} if self.base is None else file_seconds(plan, self.base)
        skipped = [index for index, file in enumerate(plan.test_files) if file not in files]
        limits = later_limits(plan, seconds, ceiling)
        command = provisional_command(
            plan.test_command,
            len(plan.test_files),
            REPEATS,
            limits,
            skipped,
            finished=plan.finished_line,
        )
        patches = (self.test_patch, self.gold_patch)
        variant = _gold_run(self.located.definition, plan, patches, command, skipped)
        patch = b"" if where == "base" else self.gold_patch
        reports = score_patches(
            self.located,
            [patch] * ALONE_RUNS,
            options=self.options,
            variants=dict.fromkeys(range(ALONE_RUNS), variant),
            reuse=True,
            alone=f"alone-{where}",
        )
        samples: list[RunSample] = []
        for number, report in enumerate(reports, start=1):
            found = _report_samples(plan, report, f"{where} alone-{number}", first)
            if isinstance(found, str):
                return found
            samples.extend(found)
        return samples


AloneRuns = Callable[[Where, Sequence[str], RunSample], "list[RunSample] | str"]
"""Runs the files at a place alone (the others carried from the given sample): the samples,
or why they cannot be read."""


def settled_alone(
    observation: Observation, neighbours: frozenset[str], runs: AloneRuns
) -> Observation:
    """The observation once each file whose tests changed outcome at a place in a way the change
    may reach has run alone (`runs`): a file whose changed tests (or exit status) passed in every
    run alone, and none of whose tests changed there, has its runs alone stand for its runs at
    that place (marked `alone`); the others keep theirs, which reject. The machine's load can
    make a test fail, never pass: one that failed alone but passed beside other runs is flaky.
    Every changed test is recorded in `Observation.alone`."""
    if observation.reason is not None or not observation.base or not observation.gold:
        return observation
    records: list[AloneRerun] = []
    for where in _PLACES:
        files = _alone_files(observation, neighbours, where)
        if not files:
            continue
        samples = observation.base if where == "base" else observation.gold
        alone = runs(where, files, samples[0])
        if isinstance(alone, str):
            continue  # unreadable: the changes seen stand, and reject
        changed = [
            (flip.file, _alone_record(flip, alone))
            for flip in _flips(samples, where)
            if flip.file in files
        ]
        records.extend(record for _, record in changed)
        unsteady = {flip.file for flip in _flips(alone, where)}
        unsteady.update(file for file, record in changed if not record.steady)
        fixed = _with_alone(samples, alone, frozenset(files) - unsteady)
        if where == "base":
            observation = replace(observation, base=fixed)
        else:
            observation = replace(observation, gold=fixed)
    return replace(observation, alone=tuple(records))


def _alone_record(flip: _Flip, alone: Sequence[RunSample]) -> AloneRerun:
    """How a changed test (or file) fared in its runs alone."""
    if flip.name:
        outcomes = [_outcome(_grouped(sample).get(flip.key)) for sample in alone]
        passed = outcomes.count("passed")
    else:
        codes = [run.exit_code for sample in alone for run in sample.files if run.file == flip.file]
        passed = codes.count(0)
    return AloneRerun(
        test=flip.shown,
        where=flip.where,
        passed=flip.passed,
        runs=flip.runs,
        alonePassed=passed,
        aloneRuns=len(alone),
    )


def _with_alone(
    samples: Sequence[RunSample], alone: Sequence[RunSample], steady: frozenset[str]
) -> tuple[RunSample, ...]:
    """The samples with each steady file's runs taken from its runs alone, in turn."""
    return tuple(
        replace(
            sample,
            files=tuple(
                replace(alone[number % len(alone)].files[index], alone=True, carried=run.carried)
                if run.file in steady
                else run
                for index, run in enumerate(sample.files)
            ),
        )
        for number, sample in enumerate(samples)
    )


def _ran(sample: RunSample, file: str) -> bool:
    """Whether the sample ran `file` itself (not carried: it names no file it does not hold)."""
    return any(run.file == file and not run.carried for run in sample.files)


def _touched(coverage: CoverageSeen | None) -> frozenset[str]:
    """The tests (by `volatile.match_key`; files, for runners that select by file) the
    coverage run saw execute a guarded line."""
    if coverage is None or coverage.problem is not None:
        return frozenset()
    return frozenset(match_key(name) for name, score in coverage.scores.items() if score > 0)


def _reached(
    flip: _Flip, neighbours: frozenset[str], touched: frozenset[str], *, by_file: bool
) -> bool:
    """Whether the change reaches a flaky test, so its flakiness rejects the candidate: it is
    in a changed test file, or it (for runners that select by file, or a file's exit status:
    its file) executes a guarded line."""
    if flip.file not in neighbours:
        return True
    whole = by_file or not flip.name
    return (match_key(flip.file) if whole else flip.name) in touched


@dataclass(frozen=True, slots=True)
class _LeftOut:
    """The tests flaky tests leave out: their own, and every test of a file that is left out
    whole (its exit status flipped, or its runner selects by file)."""

    keys: frozenset[str]
    files: frozenset[str]

    @classmethod
    def of(cls, flips: Sequence[_Flip], *, by_file: bool) -> _LeftOut:
        files = {flip.file for flip in flips if by_file or not flip.name}
        return cls(frozenset(flip.key for flip in flips), frozenset(files))

    def __call__(self, key: str) -> bool:
        return key in self.keys or _split_key(key)[0] in self.files


def _regressions(
    base: RunSample, gold: Sequence[RunSample], left_out: _LeftOut
) -> list[tuple[str, str]]:
    """The tests that pass at the base and fail in the first gold run: each one's matching key
    and the exact key of its failed test, sorted."""
    at_base, first = _grouped(base), _grouped(gold[0])
    found = []
    for key in sorted(first):
        if left_out(key) or _outcome(at_base.get(key)) != "passed":
            continue
        failed = sorted(exact for exact, outcome in first[key].items() if outcome == "failed")
        if failed:
            found.append((key, failed[0]))
    return found


def _regression_reason(exact: str, first_gold: RunSample) -> str:
    return (
        f"regression: {_display(exact)} passes at the base and fails with the gold patch "
        f"(log {first_gold.log})"
    )


def _display(key: str) -> str:
    file, name = _split_key(key)
    return name if name.startswith(file) else f"{file}: {name}"


def _by_test(
    base: Sequence[RunSample],
    gold: Sequence[RunSample],
    selector_of: Callable[[str], str],
    neighbours: frozenset[str],
    left_out: _LeftOut,
) -> tuple[list[str], list[tuple[str, str, str]], list[str], list[str]]:
    """Per-test selectors: fail-to-pass, pass-to-pass candidates (selector, file, name), the
    fail-to-pass tests' names, and the fail-to-pass tests no selector can name (their names
    change between the gold runs). Tests are matched across runs by `volatile.match_key`; only
    a name every run gives alike becomes a selector."""
    at_base = [_grouped(sample) for sample in base]
    with_gold = [_grouped(sample) for sample in gold]
    fail: list[str] = []
    passing: list[tuple[str, str, str]] = []
    names: list[str] = []
    unselectable: list[str] = []
    for key, group in with_gold[0].items():
        if _outcome(group) != "passed" or left_out(key):
            continue  # stable across the gold runs (checked), so failed or skipped in all
        file, _ = _split_key(key)
        before = _outcome(at_base[0].get(key))
        if before == "passed":
            steady = _steady(key, [*at_base, *with_gold])
            passing.extend((selector_of(name), file, name) for name in steady)
        elif before in {"failed", "missing"} and file not in neighbours:
            steady = _steady(key, with_gold)
            fail.extend(selector_of(name) for name in steady)
            names.extend(_split_key(exact)[1] for exact in sorted(group))
            if not steady:
                unselectable.append(_display(min(group)))
    return fail, passing, names, unselectable


def _by_file(
    base: RunSample, gold: Sequence[RunSample], neighbours: frozenset[str], left_out: _LeftOut
) -> tuple[list[str], list[tuple[str, str, str]], list[str]]:
    """File selectors: a file that passes in every gold run, failing or passing at the base
    (pass-to-pass candidates as selector, file and name: the file thrice)."""
    fail: list[str] = []
    passing: list[tuple[str, str, str]] = []
    names: list[str] = []
    for index, run in enumerate(base.files):
        clean = all(
            sample.files[index].exit_code == 0 and sample.files[index].outcomes.passed > 0
            for sample in gold
        )
        if not clean or run.file in left_out.files:
            continue
        if run.exit_code != 0 and run.file not in neighbours:
            fail.append(run.file)
            names.extend(name for name, _ in gold[0].files[index].outcomes.tests)
        elif run.exit_code == 0 and run.outcomes.passed > 0:
            passing.append((run.file, run.file, run.file))
    return fail, passing, names


def _no_fail_to_pass(
    base: RunSample,
    gold: Sequence[RunSample],
    neighbours: frozenset[str],
    unselectable: Sequence[str] = (),
) -> str:
    """The reason there is no fail-to-pass test; its log is the first gold run's, or the base's
    when no gold run was made (every changed file passes at the base: `_base_reason`)."""
    at_base = [run for run in base.files if run.file not in neighbours]
    with_gold = [run for run in gold[0].files if run.file not in neighbours] if gold else []
    if unselectable:
        why = (
            f"{unselectable[0]} fails at the base and passes with the gold patch, but its name "
            "changes between runs, so no selector names it"
        )
    elif all(run.exit_code == 0 for run in at_base):
        why = "every changed test file already passes at the base"
    elif not any(run.exit_code == 0 for run in with_gold):
        why = "no changed test file passes with the gold patch"
    else:
        why = "none fails at the base and passes with the gold patch"
    return f"no fail-to-pass test: {why} (log {(gold[0] if gold else base).log})"
