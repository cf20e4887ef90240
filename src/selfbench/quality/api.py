"""Assess a task's quality by running it: what `selfbench quality`, `draft` and `run` call.

`assess` compiles the task into a temporary directory (as `draft`'s `observe` does), prepares
it once in the sandbox, and runs every variant of the gold patch there, fail-to-pass only
(`scoring`):

1. the gold itself, once: the baseline (it must pass) and the measure of a variant's time limit;
2. ablation: the gold without each file, then without each hunk of the files some test needs
   (a hunk of a file no test needs is unneeded too, and is not run; the files that are no
   implementation are first reverted together, and run on their own only when some test then
   fails); a part is *needed* when a
   fail-to-pass test fails without it (or its run cannot be judged: a part is never called
   unneeded on no evidence);
3. mutation: mutants of the gold's changed implementation lines (`mutate_python` for `.py`,
   `mutate_js` for JavaScript and TypeScript; two that leave the same text are one), sampled
   down to `QualityOptions.cap` with
   `random.Random(seed)`, each applied on top of the gold; a mutant is *killed* when a
   fail-to-pass test fails. The run stops once the verdict's mutation rows cannot change
   (`stoppedEarly`; `generated` then counts the mutants that ran), whatever pass-to-pass says
   of the survivors: with pass-to-pass tests, only once the score reaches ship. A mutant
   whose run cannot be judged (a timeout, a patch that does not apply) is left out of the
   counts. While the verdict's rows could still change, the survivors then run with
   pass-to-pass too (after the gold, once, the measure of their time limit): one a
   pass-to-pass test fails is `caughtByPassToPass`, which the verdict counts killed;
4. statement ablation (`statements`): each changed statement of the needed implementation
   removed on its own, or judged by the deletion mutant that is the same removal; not run
   (`skipped`) when the verdict is review or reject without it, since its row could only add
   a reason.

Right after the baseline run the gold's *equivalents* (`equivalents`): its changed
implementation files rewritten without changing what they do (comments dropped, reformatted,
locals renamed), one run per way of rewriting. One that fails a fail-to-pass test shows the
tests pin the gold's text, not its behaviour (coupled); one whose run cannot be judged says
nothing.

Then `verdict.judge` gives the verdict. Equivalent mutants are not removed: a survivor may be
a mutant no test could ever tell from the gold.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from posixpath import splitext
from typing import Any

from selfbench._git import patched_texts
from selfbench._scratch import scratch_directory
from selfbench.artifacts.draft_record import DRAFT_FILE, pass_to_pass_basis, read_draft_record
from selfbench.artifacts.quality_record import (
    Ablation,
    Dependencies,
    Equivalents,
    FailedEquivalent,
    GoldPart,
    InstructionCheck,
    Mutation,
    PassToPassBasis,
    QualityRecord,
    StatementAblation,
    SurvivingMutant,
    TestsCheck,
    Verdict,
    write_quality,
)
from selfbench.artifacts.task_dir import read_authored_task, write_task_files
from selfbench.compiler import compile_home
from selfbench.contract import DIFFICULTIES, Difficulty, TaskDefinition
from selfbench.environments.local.phases import LocalOptions
from selfbench.errors import QualityError, TaskFileError
from selfbench.mine.rank import eligible_tiers
from selfbench.patches import is_dependency_manifest, is_lockfile, parse_patch
from selfbench.quality._documentation import documentation_only
from selfbench.quality._js_parser import is_js
from selfbench.quality._types_only import types_only
from selfbench.quality.dependencies import read_dependencies
from selfbench.quality.equivalents import VARIANTS, Equivalent, equivalent_patch, task_equivalents
from selfbench.quality.held_out import check_tests
from selfbench.quality.interface import changed_file_texts, check_instruction, interface_items
from selfbench.quality.mutants import DEFAULT_CAP, DEFAULT_SEED, Mutant, distinct
from selfbench.quality.mutate_js import js_mutants
from selfbench.quality.mutate_python import python_mutants
from selfbench.quality.scoring import VARIANT_TIME_FACTOR, Scorer, VariantRun, open_scorer
from selfbench.quality.statements import ablate_statements
from selfbench.quality.variants import (
    Part,
    changed_lines,
    gold_parts,
    gold_texts,
    is_implementation,
    mutant_patch,
    without,
)
from selfbench.quality.verdict import MIN_MUTANTS, REJECT_SCORE, WEAK_SCORE, judge
from selfbench.runners import detect

Mutator = Callable[[str, str, Collection[int]], list[Mutant]]
"""`(path, text, changed lines) -> mutants`, as `python_mutants` and `js_mutants` are."""

__all__ = [
    "Observed",
    "QualityOptions",
    "assess",
    "assess_task",
    "gold_without_moved",
    "moved_out",
    "recomputed_difficulty",
    "task_mutants",
    "task_observations",
    "unjudged_manifests",
]


@dataclass(frozen=True, slots=True)
class QualityOptions:
    """How quality runs: the local sandbox's options, parallel runs, the mutant cap and seed."""

    local: LocalOptions = field(default_factory=LocalOptions)
    jobs: int = 1
    """Variants run this many at a time."""
    cap: int = DEFAULT_CAP
    seed: int = DEFAULT_SEED


# --- mutants ------------------------------------------------------------------------------------


def _is_python(path: str) -> bool:
    return splitext(path)[1] == ".py"


_MUTATORS: tuple[tuple[Callable[[str], bool], Mutator], ...] = (
    (_is_python, python_mutants),
    (is_js, js_mutants),
)
"""Which mutator reads a changed file, by its path: the first whose test holds."""


def _mutator(path: str) -> Mutator | None:
    return next((mutator for holds, mutator in _MUTATORS if holds(path)), None)


def task_mutants(
    repo: Path, base: str, gold_patch: bytes, *, cap: int, seed: int
) -> tuple[list[Mutant], int, dict[str, str]]:
    """The mutants of the gold's changed implementation lines (at most `cap`, a fixed-seed
    sample in their own order), how many distinct ones there were in all (`distinct`: two that
    leave the same text are one), and the changed files' texts.

    Raises:
        GitError: the gold patch does not apply at `base`.
    """
    files = {
        path: (mutator, numbers)
        for path, numbers in changed_lines(gold_patch).items()
        if is_implementation(path) and (mutator := _mutator(path)) is not None
    }
    texts = gold_texts(repo, base, gold_patch, sorted(files)) if files else {}
    found = distinct(
        (
            mutant
            for path, (mutator, numbers) in sorted(files.items())
            for mutant in mutator(path, texts[path], numbers)
        ),
        texts,
    )
    if len(found) <= cap:
        return found, len(found), texts
    chosen = sorted(
        random.Random(seed).sample(  # noqa: S311 - a sample, not a secret
            range(len(found)), cap
        )
    )
    return [found[index] for index in chosen], len(found), texts


def _bucket(score: float) -> int:
    return (score >= REJECT_SCORE) + (score >= WEAK_SCORE)


def _settled(total: int, finished: list[bool | None], *, catchable: bool = False) -> bool:
    """Whether the mutation rows of the verdict are the same however the rest turn out;
    `catchable`: a survivor may yet be caught by pass-to-pass (counted killed), so the score
    the rows read may rise as far as every mutant killed."""
    killed = finished.count(False)
    survived = finished.count(True)
    pending = total - len(finished)
    if pending == 0 or killed + survived < MIN_MUTANTS:  # fewer are never judged: run on
        return False
    low = killed / (killed + survived + pending)
    high = 1.0 if catchable else (killed + pending) / (killed + survived + pending)
    return _bucket(low) == _bucket(high)


# --- ablation -----------------------------------------------------------------------------------


def _needed(result: bool | None) -> bool:
    return result is not True


def unjudged_manifests(paths: Iterable[str], adding: Collection[str]) -> frozenset[str]:
    """The gold's manifests (of `paths`) whose revert can never show them unneeded, so they count
    as needed: each in which the gold adds a package (`adding`: the verifier installs the gold's
    dependencies whatever the agent's patch says, SPEC §3's dependency-setup patch, so the revert
    never fails a test), and each lockfile when the gold changes a manifest that is no lockfile
    (left out, it would be out of step with the manifests kept, which a frozen install refuses).
    One under a docs directory is the docs' own, and is judged like them; any other manifest (a
    version bump) is judged by its revert."""
    manifests = [path for path in paths if is_dependency_manifest(path)]
    held = {path for path in manifests if path in adding}
    if any(not is_lockfile(path) for path in manifests):
        held.update(path for path in manifests if is_lockfile(path))
    return frozenset(
        path for path in held if not _DOCS_DIRECTORIES.intersection(path.split("/")[:-1])
    )


_DOCS_DIRECTORIES = frozenset({"doc", "docs", "documentation"})


def _run_parts(
    scorer: Scorer, gold: bytes, parts: Sequence[Part], jobs: int, unjudged: Collection[str]
) -> dict[Part, bool]:
    """Each part and whether a fail-to-pass test needs it; the gold without every part is the
    base, where fail-to-pass fails by the task's own validation, so it is not run; a part of a
    file no revert can judge (`unjudged_manifests`) counts as needed."""
    variants = {part: without(gold, [part]) for part in parts}
    to_run = [part for part in parts if variants[part].strip() and part.path not in unjudged]
    runs = scorer.score([variants[part] for part in to_run], jobs=jobs, what="ablated part")
    needed = dict.fromkeys(parts, True)
    for part, run in zip(to_run, runs, strict=True):
        needed[part] = _needed(run.result)
    return needed


def _spared_together(
    scorer: Scorer, gold: bytes, files: Sequence[Part], unjudged: Collection[str]
) -> dict[Part, bool]:
    """The gold's files that are no implementation (documentation, examples, configuration)
    reverted together, once: when fail-to-pass still passes, none is needed, and each is not
    run on its own (commander's #2464 reformatted 45 example files: 45 runs became one);
    otherwise nothing is known, and each runs alone."""
    together = [f for f in files if not f.implementation and f.path not in unjudged]
    variant = without(gold, together)
    if len(together) < 2 or not variant.strip():
        return {}
    [run] = scorer.score([variant], what="run without the files that are no implementation")
    return dict.fromkeys(together, False) if run.result is True else {}


def _ablation(
    scorer: Scorer,
    repo: Path,
    base: str,
    gold: bytes,
    current: Difficulty,
    jobs: int,
    adding: Collection[str] = (),
) -> Ablation:
    """Each gold file, then each hunk of the files some test needs, reverted on its own;
    `adding` names the manifests in which the gold adds a package (`unjudged_manifests`)."""
    parts = gold_parts(gold)
    files = [part for part in parts if part.hunk is None]
    unjudged = unjudged_manifests((part.path for part in files), adding)
    needed = _spared_together(scorer, gold, files, unjudged)
    needed.update(_run_parts(scorer, gold, [f for f in files if f not in needed], jobs, unjudged))
    hunks = [part for part in parts if part.hunk is not None and needed[_file_of(part)]]
    needed.update(_run_parts(scorer, gold, hunks, jobs, unjudged))
    ran = [part for part in parts if part in needed]  # the gold's order: a file, its hunks
    moved = tuple(p.path for p in files if not needed[p] and not p.implementation)
    unneeded = tuple(part.name for part in ran if not needed[part] and part.path not in moved)
    documentation = _documentation(
        repo, base, gold, [p for p in ran if not needed[p] and p.implementation]
    )
    record = Ablation(
        parts=tuple(
            GoldPart(
                path=part.path,
                hunk=part.hunk,
                lines=part.lines,
                implementation=part.implementation and part not in documentation,
                needed=needed[part],
            )
            for part in ran
        ),
        moved=moved,
        unneeded=unneeded,
    )
    if moved:
        after = gold_without_moved(gold, record)
        return record.model_copy(update={"difficulty": recomputed_difficulty(after, current)})
    return record


def _documentation(repo: Path, base: str, gold: bytes, parts: Sequence[Part]) -> set[Part]:
    """The parts whose change is documentation only (docstrings, comments) or TypeScript types
    only (erased before any test runs): unneeded, yet no implementation a test fails to pin.
    They stay in the gold, and the verdict ignores them."""
    if not parts:
        return set()
    texts = gold_texts(repo, base, gold, sorted({part.path for part in parts}))
    found = set()
    for part in parts:
        after = texts.get(part.path)
        before = gold_texts(repo, base, without(gold, [part]), [part.path]).get(part.path)
        if after is None or before is None:
            continue
        if documentation_only(part.path, before, after) or types_only(part.path, before, after):
            found.add(part)
    return found


def _file_of(part: Part) -> Part:
    return Part(part.path, None, None, part.implementation)


# --- mutation -----------------------------------------------------------------------------------


def _mutation(
    scorer: Scorer,
    repo: Path,
    definition: TaskDefinition,
    gold: bytes,
    options: QualityOptions,
) -> tuple[Mutation, list[tuple[Mutant, bool | None]]]:
    """The mutation record, and each mutant that ran with its result (`ablate_statements`)."""
    mutants, total, texts = task_mutants(
        repo, definition.baseCommit, gold, cap=options.cap, seed=options.seed
    )
    patches = [
        mutant_patch(repo, definition.baseCommit, gold, m.path, m.apply(texts[m.path]))
        for m in mutants
    ]
    runs = scorer.score(
        patches,
        jobs=options.jobs,
        stop=lambda finished: _settled(len(patches), finished, catchable=scorer.has_pass_to_pass),
        what="mutant",
    )
    ran = [(m, run.result) for m, run in zip(mutants, runs, strict=True) if run.ran]
    surviving = [i for i, run in enumerate(runs) if run.ran and run.result is True]
    killed = sum(run.ran and run.result is False for run in runs)
    caught = _caught_by_pass_to_pass(
        scorer, gold, [patches[i] for i in surviving], killed, options.jobs
    )
    record = _mutation_record(
        mutants,
        runs,
        {i for i, hit in zip(surviving, caught, strict=True) if hit},
        capped=total > len(mutants),
    )
    return record, ran


def _caught_by_pass_to_pass(
    scorer: Scorer, gold: bytes, survivors: Sequence[bytes], killed: int, jobs: int
) -> list[bool]:
    """For each mutant fail-to-pass passed, whether a pass-to-pass test fails it: the verifier
    scores it 0 as surely as a killed one (python-dotenv #586: three of its seven mutants break
    its regular-file branch, which the FIFO test never reaches and its other tests do).

    Run only while the verdict's mutation rows could still change (`killed` of all judged):
    never when the score already ships, or too few mutants ran for any row to read it, and no
    further once the rest cannot move it. Nothing is caught when the task has no pass-to-pass
    tests, or when the gold does not pass them here (then they say nothing of a mutant); a run
    that cannot be judged catches nothing."""
    judged = killed + len(survivors)
    nothing = [False for _ in survivors]
    if not survivors or judged < MIN_MUTANTS or _bucket(killed / judged) == _bucket(1.0):
        return nothing
    if not scorer.has_pass_to_pass:
        return nothing
    [baseline] = scorer.score([gold], pass_to_pass=True, what="the gold's run with pass-to-pass")
    if baseline.result is not True:
        return nothing
    scorer.pass_to_pass_limit = VARIANT_TIME_FACTOR * baseline.seconds

    def settled(finished: list[bool | None]) -> bool:
        low = killed + finished.count(False)
        return _bucket(low / judged) == _bucket((low + len(survivors) - len(finished)) / judged)

    runs = scorer.score(
        survivors,
        jobs=jobs,
        stop=settled,
        pass_to_pass=True,
        what="surviving mutant with pass-to-pass",
    )
    return [run.ran and run.result is False for run in runs]


def _mutation_record(
    mutants: Sequence[Mutant],
    runs: Sequence[VariantRun],
    caught: Collection[int] = frozenset(),
    *,
    capped: bool,
) -> Mutation:
    """The record of the mutants' runs; `caught` holds the indexes of those pass-to-pass fails."""
    judged = [
        (i, m, run.result)
        for i, (m, run) in enumerate(zip(mutants, runs, strict=True))
        if run.ran and run.result is not None
    ]
    killed = sum(result is False for _, _, result in judged)

    def surviving(*, of_caught: bool) -> tuple[SurvivingMutant, ...]:
        return tuple(
            SurvivingMutant(
                path=m.path, line=m.line, operator=m.operator, description=m.description
            )
            for i, m, result in judged
            if result is True and (i in caught) == of_caught
        )

    return Mutation(
        generated=len(judged),
        killed=killed,
        score=killed / len(judged) if judged else None,
        capped=capped,
        stoppedEarly=not all(run.ran for run in runs),
        survivors=surviving(of_caught=False),
        caughtByPassToPass=surviving(of_caught=True),
    )


# --- equivalents --------------------------------------------------------------------------------


def _equivalents(scorer: Scorer, repo: Path, base: str, gold: bytes, jobs: int) -> Equivalents:
    """Run the gold's equivalents, one run per way of rewriting (every file rewritten so); a
    way some test fails runs again file by file, when it rewrote several, to name the files
    (all of them when none fails alone)."""
    found = task_equivalents(repo, base, gold)
    groups = [group for way in VARIANTS if (group := [e for e in found if e.variant == way])]
    patches = [equivalent_patch(repo, base, gold, group) for group in groups]
    runs = scorer.score(patches, jobs=jobs, what="rewritten gold")
    failed: set[Equivalent] = set()
    for group, run in zip(groups, runs, strict=True):
        if run.result is not False:
            continue
        named = group
        if len(group) > 1:
            patches = [equivalent_patch(repo, base, gold, [e]) for e in group]
            alone = zip(group, scorer.score(patches, jobs=jobs, what="rewritten gold"), strict=True)
            named = [e for e, one in alone if one.result is False] or group
        failed.update(named)
    return Equivalents(
        run=len(found),
        unjudged=sum(len(g) for g, run in zip(groups, runs, strict=True) if run.result is None),
        failed=tuple(
            FailedEquivalent(path=e.path, variant=e.variant) for e in found if e in failed
        ),
    )


# --- the task -----------------------------------------------------------------------------------


def _baseline(scorer: Scorer, gold: bytes, task_id: str) -> None:
    """Run the gold once; set the variants' time limit from its time.

    Raises:
        QualityError: the gold does not pass fail-to-pass, so no variant can be judged.
    """
    [run] = scorer.score([gold], what="the gold's run")
    if run.result is not True:
        raise QualityError(
            f"{task_id}: the gold patch does not pass its fail-to-pass tests in the quality run"
        )
    scorer.limit = VARIANT_TIME_FACTOR * run.seconds


def assess(  # noqa: PLR0913 - the task's parts and the observations others made
    repo: Path,
    definition: TaskDefinition,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    options: QualityOptions,
    pass_to_pass: PassToPassBasis | None = None,
    instruction: InstructionCheck | None = None,
    dependencies: Dependencies = Dependencies(),  # noqa: B008 - frozen
    coverage_supported: bool = False,
    tests: TestsCheck | None = None,
) -> QualityRecord:
    """Run ablation and mutation on one task in the sandbox and judge it (see the module) with
    the observations made elsewhere (`coverage_supported`: the task's runner can report coverage).

    Raises:
        QualityError: setup failed, or the gold does not pass fail-to-pass.
        CompileError: the task does not compile (a patch does not apply).
        SandboxError: this machine cannot create the isolated workspace.
    """
    started = time.monotonic()
    task_id = definition.taskId
    with scratch_directory("selfbench-quality-") as scratch:
        task = Path(scratch) / "task"
        task.mkdir()
        raw = definition.model_dump(mode="json", exclude_none=True)
        write_task_files(task, raw, test_patch, gold_patch)
        located = compile_home(task, repo=repo, home=task)
        with open_scorer(located, test_patch, options=options.local) as scorer:
            if isinstance(scorer, str):
                raise QualityError(f"{task_id}: {scorer}")
            _baseline(scorer, gold_patch, task_id)
            base = definition.baseCommit
            equivalents = _equivalents(scorer, repo, base, gold_patch, options.jobs)
            current = next(tier for tier in DIFFICULTIES if tier == definition.difficulty)
            adding = {item.manifest for item in dependencies.added}
            ablation = _ablation(
                scorer, repo, definition.baseCommit, gold_patch, current, options.jobs, adding
            )
            mutation, ran = _mutation(scorer, repo, definition, gold_patch, options)
            # a manifest no fail-to-pass test needs leaves the gold with the files `draft` moves
            # out (a docs/requirements.txt): what it adds is no dependency of the task
            kept = tuple(i for i in dependencies.added if i.manifest not in ablation.moved)
            dependencies = dependencies.model_copy(update={"added": kept})

            def judged(found: Ablation) -> tuple[Verdict, tuple[str, ...]]:
                return judge(
                    found,
                    mutation,
                    pass_to_pass,
                    instruction,
                    dependencies,
                    coverage_supported=coverage_supported,
                    equivalents=equivalents,
                    tests=tests,
                )

            if judged(ablation)[0] == "ship":
                ablation = ablate_statements(
                    scorer,
                    repo,
                    definition.baseCommit,
                    gold_patch,
                    ablation,
                    ran,
                    jobs=options.jobs,
                )
            else:  # its row can add a reason, not change the verdict: its runs are saved
                skipped = StatementAblation(skipped=True)
                ablation = ablation.model_copy(update={"statements": skipped})
    verdict, reasons = judged(ablation)
    return QualityRecord(
        taskId=task_id,
        verdict=verdict,
        reasons=reasons,
        ablation=ablation,
        mutation=mutation,
        passToPass=pass_to_pass,
        instruction=instruction,
        tests=tests,
        dependencies=dependencies,
        equivalents=equivalents,
        seconds=round(time.monotonic() - started, 3),
    )


def moved_out(record: QualityRecord) -> tuple[str, ...]:
    """The gold files `draft` moves out: unneeded and not implementation."""
    return record.ablation.moved if record.ablation is not None else ()


def gold_without_moved(gold_patch: bytes, record: QualityRecord | Ablation) -> bytes:
    """The gold patch without the files `moved_out` names.

    Raises:
        PatchError: the gold patch does not parse.
    """
    ablation = record if isinstance(record, Ablation) else record.ablation
    moved = set(ablation.moved) if ablation is not None else set()
    parts = [part for part in gold_parts(gold_patch) if part.hunk is None and part.path in moved]
    return without(gold_patch, parts)


def recomputed_difficulty(gold_patch_after: bytes, current: Difficulty) -> Difficulty | None:
    """The highest tier the implementation left in the gold meets, never above `current`;
    None when it meets none (the caller rejects the task).

    Raises:
        PatchError: the gold patch does not parse.
    """
    changes = [c for c in parse_patch(gold_patch_after).files if is_implementation(c.path)]
    tiers = eligible_tiers(len(changes), sum(c.changed_lines for c in changes))
    allowed = [tier for tier in tiers if DIFFICULTIES.index(tier) <= DIFFICULTIES.index(current)]
    return max(allowed, key=DIFFICULTIES.index) if allowed else None


def task_observations(
    repo: Path,
    definition: TaskDefinition,
    test_patch: bytes,
    gold_patch: bytes,
    *,
    evidence: Mapping[str, Any] | None = None,
) -> Observed:
    """What `assess` is told of a task beside its runs: the pass-to-pass basis, the instruction
    check, the dependencies the gold adds and whether the task's runner reports coverage.

    The basis is the draft's (`evidence`, `draft.json`'s content) while the task keeps the
    draft's pass-to-pass selectors (`none` from a draft that recorded none); `authored` once an
    author chose others, or without a draft record (a task written by hand).

    Raises:
        GitError: the base commit is missing, or the gold patch does not apply to it.
    """
    basis = PassToPassBasis(
        basis="authored",
        detail="no draft record beside the task: its author chose them",
        selected=tuple(definition.passToPass),
    )
    if evidence is not None:
        drafted = tuple(evidence.get("selectors", {}).get("passToPass", ()))
        if drafted == tuple(definition.passToPass):
            basis = pass_to_pass_basis(evidence)
        else:
            basis = PassToPassBasis(
                basis="authored",
                detail="the author changed the drafted pass-to-pass selectors",
                selected=tuple(definition.passToPass),
            )
    base_files, gold_files = changed_file_texts(repo, definition.baseCommit, gold_patch)
    items = interface_items(gold_patch, test_patch, base_files, gold_files)
    runner = detect(definition.testCommand)
    test_files = _test_texts(repo, definition.baseCommit, test_patch)
    return Observed(
        pass_to_pass=basis,
        instruction=check_instruction(
            definition.prompt, items, test_patch, (base_files, gold_files), test_files
        ),
        tests=check_tests(
            test_patch,
            definition.failToPass,
            gold_patch,
            gold_files,
            evidence,
            test_files=test_files,
        ),
        dependencies=read_dependencies(
            repo, definition.baseCommit, gold_patch, agent=definition.agentDependencies
        ),
        coverage_supported=runner is not None and runner.coverage is not None,
    )


def _test_texts(repo: Path, base: str, test_patch: bytes) -> dict[str, str]:
    """The text of each file the test patch leaves, with it applied at `base`.

    Raises:
        GitError: the base commit is missing, or the test patch does not apply to it.
    """
    paths = [c.new_path for c in parse_patch(test_patch, lenient=True).files if c.new_path]
    texts = patched_texts(repo, base, test_patch, paths) if paths else {}
    return {path: text for path, text in texts.items() if text is not None}


@dataclass(frozen=True, slots=True)
class Observed:
    """The observations `assess` judges beside its own runs (`task_observations`)."""

    pass_to_pass: PassToPassBasis
    instruction: InstructionCheck
    tests: TestsCheck
    dependencies: Dependencies
    coverage_supported: bool


def assess_task(task_dir: Path, repo: Path, options: QualityOptions) -> QualityRecord:
    """Assess the authored task in `task_dir` and write `quality.json` beside its definition,
    with the observations `task_observations` makes (its draft record, when it has one).

    Raises:
        QualityError: see `assess`; or `quality.json` cannot be written, or its draft record
            cannot be read.
        TaskFileError, JsonError, DefinitionError: the task directory cannot be read.
        GitError: the base commit is missing, or the gold patch does not apply to it.
    """
    task = read_authored_task(task_dir)
    definition = task.definition
    evidence = None
    if (task_dir / DRAFT_FILE).is_file():
        try:
            evidence = read_draft_record(task_dir)
        except TaskFileError as exc:
            raise QualityError(str(exc)) from exc
        except ValueError as exc:
            raise QualityError(f"{task_dir / DRAFT_FILE}: {exc}") from exc
    seen = task_observations(repo, definition, task.test_patch, task.gold_patch, evidence=evidence)
    record = assess(
        repo,
        definition,
        task.test_patch,
        task.gold_patch,
        options=options,
        pass_to_pass=seen.pass_to_pass,
        instruction=seen.instruction,
        tests=seen.tests,
        dependencies=seen.dependencies,
        coverage_supported=seen.coverage_supported,
    )
    write_quality(task_dir, record)
    return record
