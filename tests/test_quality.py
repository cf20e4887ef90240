"""Quality (SPEC §13): gold variants, scoring them in the real sandbox, the verdict, the command.

The sample tasks live in one real repository (the calc project): each is a merged change on its
own branch from the same base, authored into a task directory (definition, test patch, gold
patch) the way `draft` writes one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projects import git
from selfbench.artifacts.quality_record import (
    Ablation,
    AddedDependency,
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
    UnneededStatement,
    parse_quality,
    read_quality,
    render_quality,
)
from selfbench.cli import main
from selfbench.compiler import compile_home
from selfbench.contract import Difficulty
from selfbench.environments.local.phases import LocalOptions
from selfbench.patches import parse_patch
from selfbench.quality.api import (
    QualityOptions,
    _settled,
    assess_task,
    gold_without_moved,
    moved_out,
    recomputed_difficulty,
    task_mutants,
)
from selfbench.quality.mutants import Mutant, distinct
from selfbench.quality.scoring import score_variants
from selfbench.quality.statements import choose, needed_lines, outermost
from selfbench.quality.variants import (
    Part,
    changed_lines,
    gold_parts,
    gold_texts,
    is_implementation,
    mutant_patch,
    without,
)
from selfbench.quality.verdict import MIN_MUTANTS, judge

SANDBOX = pytest.mark.sandbox

# --- the sample tasks -----------------------------------------------------------------------------

ADD = "def add(a, b):\n    return a + b\n"
FILLER = "\n\n# " + "\n# ".join(f"note {n}" for n in range(10)) + "\n"
SUB = "\n\ndef sub(a, b):\n    return a - b\n"
BASE = {
    ".gitignore": ".venv/\n__pycache__/\n",
    "tox.ini": "[tox]\nenvlist = py311\n",
    "calc/__init__.py": ADD + FILLER + SUB,
    "tests/test_core.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
MUL_DOC = "".join(f"    Line {n} of what mul promises.\n" for n in range(16))
MUL = f'\n\ndef mul(a, b):\n    """Multiply.\n\n{MUL_DOC}    """\n    return a * b\n'
AREA = (
    "\n\ndef area(width, height):\n"
    "    if width < 0 or height < 0:\n"
    '        raise ValueError("negative")\n'
    "    return width * height + 1\n"
)


SLUG = (
    "\n\ndef slug(title):\n"
    "    title = title.casefold()\n"
    "    words = title.split()\n"
    "    for word in words:\n"
    "        assert word.isprintable()\n"
    '    return "-".join(words)\n'
)
POINT = '\n\ndef point(x, y):\n    return {"x": x, "y": y}\n'
ADD_MORE = (
    "def add(a, b, *more):\n    if not more:\n        return a + b\n    return a + b + sum(more)\n"
)


@dataclass(frozen=True)
class Sample:
    """A task of the sample repository."""

    task_id: str
    gold: dict[str, str]
    tests: dict[str, str]
    difficulty: Difficulty = "easy"
    prompt: str = "Make the change the maintainers asked for."


SAMPLES = (
    Sample(
        "unneeded",
        {
            "tox.ini": "[tox]\nenvlist = py311,py312\n",
            "docs/requirements.txt": "furo\n",
            "calc/__init__.py": ADD + MUL + FILLER + SUB.replace("a - b", "a - b if b else a"),
        },
        {
            "tests/test_mul.py": (
                "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
            )
        },
        "medium",
    ),
    Sample(
        "weak",
        {"calc/__init__.py": ADD + AREA + FILLER + SUB},
        {
            "tests/test_area.py": (
                "import calc\n\n\ndef test_area():\n    assert hasattr(calc, 'area')\n"
            )
        },
    ),
    Sample(
        "strong",
        {"calc/__init__.py": ADD + AREA + FILLER + SUB},
        {
            "tests/test_area.py": (
                "import pytest\n\nfrom calc import area\n\n\ndef test_area():\n"
                "    assert area(3, 4) == 13\n    assert area(2, 5) == 11\n"
                "    assert area(0, 5) == 1\n    assert area(5, 0) == 1\n"
                "    assert isinstance(area(3, 4), int)\n"
                '    with pytest.raises(ValueError, match="negative"):\n'
                "        area(-1, 2)\n"
                '    with pytest.raises(ValueError, match="negative"):\n'
                "        area(2, -1)\n"
            )
        },
        prompt=(
            "Add `area(width, height)` to `calc`: the product of the two sides plus one. A "
            'negative side raises ValueError with the message "negative".'
        ),
    ),
    Sample(  # the tests never pass a capital letter, nor a word that does not print
        "needless",
        {"calc/__init__.py": ADD + SLUG + FILLER + SUB},
        {
            "tests/test_slug.py": (
                "from calc import slug\n\n\ndef test_slug():\n"
                '    assert slug("a b") == "a-b"\n    assert slug("a b").count("-") == 1\n'
            )
        },
        prompt="Add `slug(title)` to `calc`: the title's words, lower-cased, joined by hyphens.",
    ),
    Sample(  # the tests compare the point with `==` only
        "equal",
        {"calc/__init__.py": ADD + POINT + FILLER + SUB},
        {
            "tests/test_point.py": (
                "from calc import point\n\n\ndef test_point():\n"
                '    assert point(1, 2) == {"x": 1, "y": 2}\n'
            )
        },
        prompt='Add `point(x, y)` to `calc`: the dict `{"x": x, "y": y}`.',
    ),
    Sample(  # its test takes the new path only; test_core's add(1, 2) takes the old one
        "guarded",
        {"calc/__init__.py": ADD_MORE + FILLER + SUB},
        {
            "tests/test_more.py": (
                "from calc import add\n\n\ndef test_more():\n    assert add(0, 0, 4) == 4\n"
            )
        },
        prompt="`add(a, b, *more)` in `calc` adds the numbers after the first two too.",
    ),
)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def _author(repo: Path, base: str, sample: Sample, out: Path) -> Path:
    """Commit the sample's change on its own branch from `base`; write its task directory."""
    git(repo, "checkout", "-q", "-b", sample.task_id, base)
    _write(repo, {**sample.gold, **sample.tests})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", sample.task_id)
    tests = sorted(sample.tests)
    test_patch = git(repo, "diff", "--binary", base, "HEAD", "--", *tests)
    gold_patch = git(repo, "diff", "--binary", base, "HEAD", "--", ".", *(f":!{t}" for t in tests))
    git(repo, "checkout", "-q", "--detach", base)
    definition = {
        "schemaVersion": 1, "difficulty": sample.difficulty, "taskId": sample.task_id,
        "repo": "example/calc", "baseCommit": base, "workdir": ".",
        "setupCommand": "python3 -m venv --system-site-packages --without-pip .venv",
        "testCommand": ".venv/bin/python -m pytest -q -p no:cacheprovider {tests}",
        "failToPass": tests, "passToPass": ["tests/test_core.py"], "testPaths": tests,
        "toolchains": ["python"], "sourcePr": 7, "sourceUrl": "https://example.com/calc/pull/7",
        "prompt": sample.prompt,
        "timeouts": {"setupSeconds": 300, "agentSeconds": 600, "testsSeconds": 120},
        "resources": {"cpus": 2, "memoryMb": 4096, "storageMb": 10240},
    }  # fmt: skip
    task = out / sample.task_id
    task.mkdir(parents=True)
    (task / "definition.json").write_text(json.dumps(definition, indent=2), encoding="utf-8")
    (task / "test.patch").write_text(test_patch, encoding="utf-8")
    (task / "gold.patch").write_text(gold_patch, encoding="utf-8")
    return task


@dataclass(frozen=True)
class Samples:
    repo: Path
    tasks: dict[str, Path]


def authored_samples(chosen: Iterable[Sample], prefix: str) -> Iterator[Samples]:
    """A repository holding `BASE`, and each sample authored as a task against it."""
    with tempfile.TemporaryDirectory(prefix=prefix) as temp:
        root = Path(temp)
        repo = root / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "--initial-branch=main")
        _write(repo, BASE)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        base = git(repo, "rev-parse", "HEAD").strip()
        tasks = {sample.task_id: _author(repo, base, sample, root / "tasks") for sample in chosen}
        yield Samples(repo, tasks)


@pytest.fixture(scope="module")
def samples() -> Iterator[Samples]:
    yield from authored_samples(SAMPLES, "selfbench-quality-test-")


# --- ablation: an unneeded configuration file, an unneeded implementation hunk --------------------


@SANDBOX
def test_an_unneeded_configuration_file_is_moved_and_the_tier_recomputed(
    samples: Samples, capsys: pytest.CaptureFixture[str]
) -> None:
    task = samples.tasks["unneeded"]
    assert main(["quality", str(task), "--repo", str(samples.repo), "-j", "2"]) == 0  # review
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["unneeded", "review"] in [row[:2] for row in rows]
    record = read_quality(task / "quality.json")
    ablation = record.ablation
    assert ablation is not None
    assert moved_out(record) == ("docs/requirements.txt", "tox.ini")
    # the package the docs' requirements add left the gold with them: no dependency of the task
    assert record.dependencies.added == ()
    gold = (task / "gold.patch").read_bytes()
    after = gold_without_moved(gold, record)
    assert len(after) < len(gold)
    assert parse_patch(after).paths == ("calc/__init__.py",)
    assert recomputed_difficulty(gold, "medium") == "easy"  # tox.ini never counted
    assert recomputed_difficulty(after, "medium") == "easy"
    assert recomputed_difficulty(after, "easy") == "easy"
    assert ablation.difficulty == "easy"
    # the change to `sub` (the file's second hunk) is implementation no test needs
    assert ablation.unneeded == ("calc/__init__.py#1",)
    assert [(p.path, p.hunk, p.implementation, p.needed) for p in ablation.parts] == [
        ("calc/__init__.py", None, True, True),
        ("calc/__init__.py", 0, True, True),
        ("calc/__init__.py", 1, True, False),
        ("docs/requirements.txt", None, False, False),
        ("tox.ini", None, False, False),
    ]
    assert record.verdict == "review"
    # `mul`'s test compares with `==` only: its always-equal mutant survives, and so do those
    # of the change to `sub` no test calls; every mutant runs: the task has pass-to-pass tests,
    # and a survivor they fail would count killed (3 of 7 could rise to 60%)
    assert record.reasons == (
        "weak tests: 4 of 7 mutants survive",
        "implementation no fail-to-pass test needs: calc/__init__.py#1",
        "the instruction does not state: mul",
    )
    # review already: statement ablation could add a reason, not change the verdict
    assert ablation.statements == StatementAblation(skipped=True)


@SANDBOX
def test_a_changed_statement_no_test_needs_is_named(samples: Samples) -> None:
    task = samples.tasks["needless"]
    record = assess_task(task, samples.repo, QualityOptions(jobs=2))
    assert record.ablation is not None
    assert record.ablation.unneeded == ()  # every hunk is needed: only statements tell
    statements = record.ablation.statements
    assert statements is not None
    # the normalisation is judged by its deletion mutant (it survives), the loop is removed and
    # run, and the assertion inside it is left out with it; `def` and `return` are needed
    assert [(s.line, s.statement) for s in statements.unneeded] == [
        (6, "title = title.casefold()"),
        (8, "for word in words:"),
    ]
    assert (statements.found, statements.mutants, statements.ran) == (6, 2, 4)
    assert not statements.capped
    assert record.verdict == "review"
    assert record.reasons == (
        (
            "a changed statement no fail-to-pass test needs: calc/__init__.py:6"
            " `title = title.casefold()`, calc/__init__.py:8 `for word in words:`"
        ),
    )


@SANDBOX
def test_an_always_equal_result_survives_tests_that_only_compare_with_eq(
    samples: Samples,
) -> None:
    record = assess_task(samples.tasks["equal"], samples.repo, QualityOptions(jobs=2))
    assert record.mutation is not None
    assert [(m.line, m.operator, m.description) for m in record.mutation.survivors] == [
        (6, "always-equal", "return value → an always-equal object"),
    ]  # the strong sample checks its result's type too: there every mutant is killed


@SANDBOX
def test_a_mutant_pass_to_pass_fails_is_caught_and_the_verdict_counts_it_killed(
    samples: Samples,
) -> None:
    record = assess_task(samples.tasks["guarded"], samples.repo, QualityOptions(jobs=2))
    mutation = record.mutation
    assert mutation is not None

    def rows(found: tuple[SurvivingMutant, ...]) -> list[tuple[int, str]]:
        return [(m.line, m.description) for m in found]

    # line 3, `return a + b`, is the path without `more`: its test never takes it, test_core's
    # add(1, 2) == 3 does; an always-equal result passes both, and so does line 4's `a - b`
    # (its test adds to zeros, and pass-to-pass never passes `more`)
    assert rows(mutation.caught_by_pass_to_pass) == [(3, "return → return None"), (3, "+ → -")]
    assert rows(mutation.survivors) == [
        (3, "return value → an always-equal object"),
        (4, "return value → an always-equal object"),
        (4, "+ → -"),
    ]
    assert (mutation.generated, mutation.killed) == (8, 3)
    assert mutation.score == pytest.approx(3 / 8)  # fail-to-pass's own: "weak tests" alone
    assert mutation.verifier_score == pytest.approx(5 / 8)  # what the verdict reads
    assert not any(reason.startswith("weak tests") for reason in record.reasons)
    assert "caughtByPassToPass" in record.model_dump(mode="json", by_alias=True)["mutation"]


def test_no_tier_when_the_implementation_left_is_too_small() -> None:
    small = (
        b"diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n"
        b"@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    )
    assert recomputed_difficulty(small, "hard") is None


# --- mutation: weak and strong tests, through the command ---------------------------------------


@SANDBOX
def test_the_command_judges_weak_and_strong_tests(
    samples: Samples, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = [str(samples.tasks["weak"]), str(samples.tasks["strong"])]
    code = main(["quality", *tasks, "--repo", str(samples.repo), "-j", "1", "--json"])
    output = json.loads(capsys.readouterr().out)
    assert code == 1  # weak is rejected
    assert [item["taskId"] for item in output] == ["weak", "strong"]
    for item, task in zip(output, tasks, strict=True):
        assert QualityRecord.model_validate_json(json.dumps(item)) == read_quality(
            Path(task) / "quality.json"
        )
    weak, strong = (read_quality(Path(task) / "quality.json") for task in tasks)
    assert weak.mutation is not None
    assert weak.mutation.score is not None
    assert weak.mutation.score < 0.6
    assert weak.verdict in {"review", "reject"}
    assert weak.reasons[0].startswith("weak tests: ")
    assert strong.mutation is not None
    assert strong.mutation.score is not None
    assert strong.mutation.score > 0.8
    assert (strong.verdict, strong.reasons) == ("ship", ())
    # the early stop: every mutant killed, so once 60% of them are the score cannot fall under
    # 60% (and at least MIN_MUTANTS ran)
    assert strong.mutation.stopped_early
    assert strong.mutation.killed == strong.mutation.generated >= MIN_MUTANTS
    assert "stoppedEarly" in output[1]["mutation"]


@SANDBOX
def test_scoring_judges_each_variant_and_stops_when_asked(samples: Samples, tmp_path: Path) -> None:
    task = samples.tasks["strong"]
    home = tmp_path / "home"
    home.mkdir()
    located = compile_home(task, repo=samples.repo, home=home)
    gold = (task / "gold.patch").read_bytes()
    stale = (  # its context is not in the base
        b"diff --git a/calc/__init__.py b/calc/__init__.py\n"
        b"--- a/calc/__init__.py\n+++ b/calc/__init__.py\n"
        b"@@ -1,2 +1,2 @@\n-def nothing():\n+def something():\n     pass\n"
    )
    options = LocalOptions(logs=tmp_path / "logs")
    assert score_variants(located, [gold, b"", stale], options=options, jobs=2) == [
        True,
        False,
        None,
    ]
    logs = sorted((tmp_path / "logs" / "strong").glob("variant-*.log"))
    assert len(logs) == 3
    for log in logs:  # fail-to-pass once, no determinism repeat, no pass-to-pass selectors
        text = log.read_text(encoding="utf-8")
        assert "selfbench: fail-to-pass again" not in text
        assert "selfbench: pass-to-pass: true" in text or "patch does not apply" in text
    seen: list[list[bool | None]] = []

    def stop(results: list[bool | None]) -> bool:
        seen.append(results)
        return True

    assert score_variants(located, [gold, gold, gold], options=options, stop=stop) == [
        True,
        None,
        None,
    ]
    assert seen == [[True]]


def test_mutants_are_sampled_down_to_the_cap_with_a_fixed_seed(samples: Samples) -> None:
    task = samples.tasks["strong"]
    gold = (task / "gold.patch").read_bytes()
    base = json.loads((task / "definition.json").read_text())["baseCommit"]
    every, total, texts = task_mutants(samples.repo, base, gold, cap=24, seed=1)
    assert total == len(every) == 13
    assert {m.path for m in every} == {"calc/__init__.py"}
    assert set(texts) == {"calc/__init__.py"}
    some, total, _ = task_mutants(samples.repo, base, gold, cap=3, seed=1)
    assert total == 13
    assert len(some) == 3
    assert [m for m in every if m in some] == some  # a sample, in the mutants' own order
    assert task_mutants(samples.repo, base, gold, cap=3, seed=1)[0] == some


def _mutant(path: str, start: int, end: int, new: str, operator: str = "constant") -> Mutant:
    return Mutant(path, 1, operator, f"{start}:{end} → {new}", start, end, new)


_TEXTS = {"a.py": "x = 1\n", "b.py": "x = 1\n"}


@pytest.mark.parametrize(
    ("mutants", "kept"),
    [
        ([_mutant("a.py", 4, 5, "2"), _mutant("a.py", 4, 5, "3")], [0, 1]),
        ([_mutant("a.py", 4, 5, "2"), _mutant("a.py", 0, 5, "x = 2", "delete")], [0]),
        ([_mutant("a.py", 0, 1, "y"), _mutant("a.py", 0, 5, "y = 1"), _mutant("a.py", 0, 1, "y")],
         [0]),
        ([_mutant("a.py", 4, 5, "2"), _mutant("b.py", 4, 5, "2")], [0, 1]),
        ([_mutant("a.py", 4, 5, "1")], [0]),  # no change is still a text of its own
        ([], []),
    ],
    ids=["different-texts", "same-text", "three-to-one", "other-path", "one", "none"],
)  # fmt: skip
def test_mutants_that_leave_the_same_text_count_once(
    mutants: list[Mutant], kept: list[int]
) -> None:
    assert distinct(mutants, _TEXTS) == [mutants[index] for index in kept]


def _statement(path: str, start: int, end: int) -> Mutant:
    return Mutant(path, 1, "statement", f"{start}:{end}", start, end, "pass")


@pytest.mark.parametrize(
    ("count", "cap", "chosen"),
    [(3, 16, [0, 1, 2]), (16, 16, list(range(16))), (8, 4, [0, 2, 4, 6]), (5, 2, [0, 2]),
     (0, 16, [])],
)  # fmt: skip
def test_statements_beyond_the_cap_are_chosen_evenly(
    count: int, cap: int, chosen: list[int]
) -> None:
    statements = [_statement("a.py", n, n + 1) for n in range(count)]
    assert choose(statements, cap) == [statements[n] for n in chosen]


@pytest.mark.parametrize(
    ("spans", "kept"),
    [
        ([("a.py", 0, 10), ("a.py", 2, 5)], [0]),
        ([("a.py", 0, 10), ("b.py", 2, 5)], [0, 1]),
        ([("a.py", 0, 4), ("a.py", 2, 6)], [0, 1]),
        ([("a.py", 2, 5), ("a.py", 0, 10), ("a.py", 12, 14)], [1, 2]),
    ],
    ids=["nested", "other-file", "overlapping", "in-any-order"],
)
def test_an_unneeded_statement_inside_another_is_left_out(
    spans: list[tuple[str, int, int]], kept: list[int]
) -> None:
    statements = [_statement(*span) for span in spans]
    assert outermost(statements) == [statements[n] for n in kept]


_TWO_HUNKS = (
    b"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
    b"@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
    b"@@ -20,1 +20,2 @@\n y = 1\n+z = 3\n"
    b"diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n"
    b"@@ -1 +1 @@\n-a\n+b\n"
)


@pytest.mark.parametrize(
    ("needed", "lines"),
    [
        ([("a.py", None, True), ("a.py", 0, True), ("a.py", 1, True), ("b.py", None, True)],
         {"a.py": {1, 21}, "b.py": {1}}),
        ([("a.py", None, True), ("a.py", 0, False), ("a.py", 1, True), ("b.py", None, False)],
         {"a.py": {21}}),
        ([("a.py", None, False), ("a.py", 0, False), ("a.py", 1, False), ("b.py", None, True)],
         {"b.py": {1}}),
    ],
    ids=["all-needed", "an-unneeded-hunk-and-file", "an-unneeded-file"],
)  # fmt: skip
def test_statements_are_asked_of_the_needed_parts_only(
    needed: list[tuple[str, int | None, bool]], lines: dict[str, set[int]]
) -> None:
    headers: dict[tuple[str, int | None], str] = {
        ("a.py", 0): "@@ -1,1 +1,1 @@",
        ("a.py", 1): "@@ -20,1 +20,2 @@",
    }
    ablation = Ablation(
        parts=tuple(
            GoldPart(
                path=path,
                hunk=hunk,
                lines=headers.get((path, hunk)),
                implementation=True,
                needed=need,
            )
            for path, hunk, need in needed
        )
    )
    assert needed_lines(_TWO_HUNKS, ablation) == lines


def test_a_record_written_before_statement_ablation_still_reads() -> None:
    record = QualityRecord(taskId="t1", verdict="ship", ablation=_NEEDED)
    data = json.loads(render_quality(record))
    del data["ablation"]["statements"]
    assert parse_quality(json.dumps(data).encode(), source="quality.json") == record


@pytest.mark.parametrize(
    ("total", "finished", "settled"),
    [
        (10, [False] * 6, True),  # 6/10 at worst: 60%
        (10, [False] * 5, False),
        (10, [True] * 8, True),  # 2/10 at best: 20%
        (10, [True] * 7, False),
        (5, [False, False, False], False),  # 3/5 at worst, but fewer than MIN_MUTANTS judged
        (5, [True] * 4, False),
        (5, [None], False),
        (2, [False, False], False),  # nothing left to stop
        (10, [False, True, False, True], False),
    ],
)
def test_the_mutation_run_stops_once_the_verdict_cannot_change(
    total: int, finished: list[bool | None], settled: bool
) -> None:
    assert _settled(total, finished) is settled


@pytest.mark.parametrize(
    ("total", "finished", "settled"),
    [
        (10, [False] * 6, True),  # 6/10 at worst: pass-to-pass can only add to it
        (10, [True] * 8, False),  # 2/10 by fail-to-pass, 100% if pass-to-pass fails them all
        (10, [False, False, True, True, True, True, True, True], False),
    ],
)
def test_the_mutation_run_stops_only_at_the_top_when_pass_to_pass_may_catch_survivors(
    total: int, finished: list[bool | None], settled: bool
) -> None:
    # a survivor pass-to-pass fails counts killed in the verdict: the mutants left unrun could
    # have been such survivors, so no bound under 60% settles the rows
    assert _settled(total, finished, catchable=True) is settled


# --- the command's input -------------------------------------------------------------------


def test_bad_input_exits_2_before_anything_runs(
    samples: Samples, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "weak"
    shutil.copytree(samples.tasks["weak"], good, ignore=shutil.ignore_patterns("quality.json"))
    missing = tmp_path / "missing"
    assert main(["quality", str(good), str(missing), "--repo", str(samples.repo)]) == 2
    assert capsys.readouterr().err == f"error: {missing}: not a task directory\n"
    assert not (good / "quality.json").exists()
    assert main(["quality", str(good), "--repo", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == f"error: --repo {tmp_path / 'nowhere'}: not a directory\n"
    assert main(["quality", str(good), "--repo", str(samples.repo), "-j", "0"]) == 2
    assert capsys.readouterr().err == "error: -j must be at least 1\n"


# --- the verdict, row by row ---------------------------------------------------------------------


def _parts(*needed: tuple[str, int | None, bool, bool]) -> Ablation:
    return Ablation(
        parts=tuple(
            GoldPart(path=path, hunk=hunk, implementation=implementation, needed=need)
            for path, hunk, implementation, need in needed
        )
    )


_NEEDED = _parts(("a.py", None, True, True))


class _Statement(NamedTuple):
    path: str
    line: int
    statement: str


_STATEMENT = _Statement("a.py", 3, "x = 1")


def _with_statements(*unneeded: _Statement) -> Ablation:
    found = StatementAblation(
        found=8, ran=8, unneeded=tuple(UnneededStatement(**s._asdict()) for s in unneeded)
    )
    return _NEEDED.model_copy(update={"statements": found})


_STRONG = Mutation(generated=10, killed=9, score=0.9)
_CAUGHT = tuple(
    SurvivingMutant(path="a.py", line=n, operator="arithmetic", description="+ → -") for n in (1, 2)
)
_CAUGHT4 = _CAUGHT * 2
_ATTRS = AddedDependency(manifest="pyproject.toml", name="attrs")


@pytest.mark.parametrize(
    ("observed", "verdict", "reasons"),
    [
        ({}, "ship", ()),
        (
            {"mutation": Mutation(generated=10, killed=2, score=0.2)},
            "reject",
            ("weak tests: 8 of 10 mutants survive (a score under 30%)",),
        ),
        (
            {"ablation": _parts(("a.py", None, True, False), ("tox.ini", None, False, True))},
            "reject",
            (
                "no implementation part of the gold patch is needed by a fail-to-pass test",
                "implementation no fail-to-pass test needs: a.py",
            ),
        ),
        (
            {
                "equivalents": Equivalents(
                    run=4,
                    failed=(
                        FailedEquivalent(path="a.py", variant="comments"),
                        FailedEquivalent(path="b.js", variant="reformatted"),
                    ),
                )
            },
            "reject",
            (
                ("coupled: the tests fail the gold with its comments dropped (a.py),"
                " reformatted (b.js)"),
            ),
        ),
        ({"equivalents": Equivalents(run=3, unjudged=1)}, "ship", ()),
        (
            {"mutation": Mutation(generated=10, killed=5, score=0.5)},
            "review",
            ("weak tests: 5 of 10 mutants survive",),
        ),
        ({"mutation": Mutation(generated=10, killed=6, score=0.6)}, "ship", ()),
        (
            {"mutation": Mutation(generated=10, killed=2, score=0.2, caughtByPassToPass=_CAUGHT)},
            "review",
            ("weak tests: 6 of 10 mutants survive (2 more caught by pass-to-pass only)",),
        ),
        (
            {"mutation": Mutation(generated=10, killed=2, score=0.2, caughtByPassToPass=_CAUGHT4)},
            "ship",
            (),
        ),
        ({"mutation": Mutation(generated=0, killed=0, score=None)}, "ship", ()),
        ({"mutation": Mutation(generated=4, killed=0, score=0.0)}, "ship", ()),
        (
            {"ablation": _parts(("a.py", None, True, True), ("a.py", 1, True, False))},
            "review",
            ("implementation no fail-to-pass test needs: a.py#1",),
        ),
        (
            {"ablation": _parts(("a.py", None, True, True), ("tox.ini", None, False, False))},
            "ship",
            (),
        ),
        (
            {"ablation": _with_statements(_STATEMENT, _STATEMENT._replace(line=9))},
            "review",
            ("a changed statement no fail-to-pass test needs: a.py:3 `x = 1`, a.py:9 `x = 1`",),
        ),
        (
            {"ablation": _with_statements(*[_STATEMENT._replace(line=n) for n in range(1, 8)])},
            "review",
            (
                (
                    "a changed statement no fail-to-pass test needs: a.py:1 `x = 1`, a.py:2"
                    " `x = 1`, a.py:3 `x = 1`, a.py:4 `x = 1`, a.py:5 `x = 1` and 2 more"
                ),
            ),
        ),
        ({"ablation": _with_statements()}, "ship", ()),
        (
            {"instruction": InstructionCheck(missing=("mul", "area"))},
            "review",
            ("the instruction does not state: mul, area",),
        ),
        (
            {"instruction": InstructionCheck(strays=("trainCase",))},
            "review",
            ("the instruction's first line names what the change leaves as it was: trainCase",),
        ),
        (
            {"dependencies": Dependencies(added=(_ATTRS,))},
            "review",
            (
                (
                    "the gold adds a dependency the agent cannot install: attrs (pyproject.toml)"
                    " (--deps agent installs it)"
                ),
            ),
        ),
        (
            {
                "dependencies": Dependencies(
                    added=(_ATTRS,), agent=True
                )
            },
            "ship",
            (),
        ),
        (
            {"pass_to_pass": PassToPassBasis(basis="neighbours"), "coverage_supported": True},
            "review",
            ("pass-to-pass holds tests of unchanged files no coverage measure tied to the change",),
        ),
        (
            {"pass_to_pass": PassToPassBasis(basis="none"), "coverage_supported": True},
            "review",
            ("pass-to-pass was not chosen by coverage (no record says how it was chosen)",),
        ),
        (
            {
                "pass_to_pass": PassToPassBasis(basis="changed test files"),
                "coverage_supported": True,
            },
            "ship",
            (),
        ),
        ({"pass_to_pass": PassToPassBasis(basis="neighbours")}, "ship", ()),
        (
            {"pass_to_pass": PassToPassBasis(basis="coverage"), "coverage_supported": True},
            "ship",
            (),
        ),
    ],
    ids=[
        "nothing-observed", "score-under-30", "nothing-needed", "coupled", "not-coupled",
        "score-under-60", "score-60", "caught-by-pass-to-pass-under-60",
        "caught-by-pass-to-pass-60",
        "no-mutants", "too-few-mutants", "unneeded-hunk", "unneeded-config",
        "unneeded-statements", "many-unneeded-statements", "every-statement-needed", "instruction",
        "stray-title",
        "dependency", "dependency-installed", "no-coverage-basis", "no-basis", "coverage-fallback",
        "no-coverage-runner", "coverage",
    ],
)  # fmt: skip
def test_the_verdict_rule(observed: dict[str, Any], verdict: str, reasons: tuple[str, ...]) -> None:
    arguments: dict[str, Any] = {
        "ablation": _NEEDED,
        "mutation": _STRONG,
        "pass_to_pass": None,
        "instruction": None,
        "dependencies": Dependencies(),
        **observed,
    }
    coverage = bool(arguments.pop("coverage_supported", False))
    assert judge(**arguments, coverage_supported=coverage) == (verdict, reasons)


# --- variants of a patch: parts, `without`, changed lines, mutant patches -----------------------


@pytest.mark.parametrize(
    ("path", "implementation"),
    [
        ("src/calc.py", True),
        ("lib/index.ts", True),
        ("tox.ini", False),
        ("setup.cfg", False),
        (".editorconfig", False),
        (".coveragerc", False),
        ("src/.gitignore", False),
        (".git-blame-ignore-revs", False),  # housekeeping (`classify_path`)
        ("Makefile", False),
        (".github/workflows/ci.yml", False),
        (".gitlab/ci.yml", False),
        (".eslintrc.json", False),
        ("docs/usage.rst", False),
        ("CHANGELOG.md", False),
        ("examples/demo.py", False),
        ("typing_examples.py", False),
        ("tests/typing-examples/api.py", False),
        ("tests/test_calc.py", False),
        ("pyproject.toml", False),
    ],
)
def test_what_is_implementation(path: str, implementation: bool) -> None:
    assert is_implementation(path) is implementation


@pytest.fixture(scope="module")
def scratch_repo() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="selfbench-variants-") as temp:
        repo = Path(temp)
        git(repo, "init", "-q", "--initial-branch=main")
        yield repo


def _diff(repo: Path, before: list[str], after: list[str]) -> tuple[str, bytes]:
    """Commit `before` as f.txt; the git patch from it to `after` (the work tree put back)."""
    (repo / "f.txt").write_text("".join(before), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "f.txt").write_text("".join(after), encoding="utf-8")
    patch = subprocess.run(
        ["git", "diff", "--binary"], cwd=repo, check=True, capture_output=True
    ).stdout
    git(repo, "checkout", "-q", "--", "f.txt")
    return base, patch


_LINES = st.lists(st.sampled_from([f"line {n}\n" for n in range(6)]), min_size=1, max_size=40)


@st.composite
def _edits(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    before = draw(_LINES)
    after = list(before)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(after)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        new = draw(st.lists(st.sampled_from(["new a\n", "new b\n"]), min_size=1, max_size=3))
        if kind == "insert" or not after or at == len(after):
            after[at:at] = new
        elif kind == "delete":
            del after[at]
        else:
            after[at] = new[0]
    return before, after


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_edits(), st.data())
def test_a_gold_without_any_parts_still_applies_and_its_changed_lines_are_its_added_lines(
    scratch_repo: Path, edit: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    before, after = edit
    base, gold = _diff(scratch_repo, before, after)
    if not gold:
        return
    parts = gold_parts(gold)
    assert without(gold, []) == gold
    assert without(gold, [parts[0]]) == b""
    chosen = data.draw(st.lists(st.sampled_from(parts), unique=True))
    variant = without(gold, chosen)
    if not variant:
        return
    [text] = gold_texts(scratch_repo, base, variant).values()  # GitError if it did not apply
    lines = text.splitlines(keepends=True)
    added = [
        line[1:]
        for line in variant.decode().splitlines(keepends=True)
        if line.startswith("+") and not line.startswith("+++")
    ]
    numbers = sorted(changed_lines(variant).get("f.txt", frozenset()))
    assert [lines[n - 1] for n in numbers] == added
    kept = [p for p in parts if p.hunk is not None and p not in chosen]
    if len(parts) > 1 and not kept:
        assert variant == b""


def test_a_mutant_patch_is_the_gold_with_one_file_replaced(scratch_repo: Path) -> None:
    before = ["def f(a):\n", "    return a\n"]
    base, gold = _diff(scratch_repo, before, [*before, "\n", "def g(a):\n", "    return a + 1\n"])
    texts = gold_texts(scratch_repo, base, gold)
    mutated = texts["f.txt"].replace("a + 1", "a - 1")
    patch = mutant_patch(scratch_repo, base, gold, "f.txt", mutated)
    assert gold_texts(scratch_repo, base, patch) == {"f.txt": mutated}
    assert b"+    return a - 1\n" in patch
    assert git(scratch_repo, "status", "--porcelain") == ""  # nothing written to the repository


def test_parts_are_files_and_the_hunks_of_files_with_several() -> None:
    gold = (
        b"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        b"@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
        b"@@ -20,1 +20,2 @@\n y = 1\n+z = 3\n"
        b"diff --git a/tox.ini b/tox.ini\n--- a/tox.ini\n+++ b/tox.ini\n"
        b"@@ -1 +1 @@\n-a\n+b\n"
    )
    assert gold_parts(gold) == (
        Part("a.py", None, None, implementation=True),
        Part("a.py", 0, "@@ -1,1 +1,1 @@", implementation=True),
        Part("a.py", 1, "@@ -20,1 +20,2 @@", implementation=True),
        Part("tox.ini", None, None, implementation=False),
    )
    assert without(gold, [Part("a.py", 0, None, implementation=True)]) == (
        b"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        b"@@ -20,1 +20,2 @@\n y = 1\n+z = 3\n"
        b"diff --git a/tox.ini b/tox.ini\n--- a/tox.ini\n+++ b/tox.ini\n"
        b"@@ -1 +1 @@\n-a\n+b\n"
    )
    assert changed_lines(gold) == {"a.py": frozenset({1, 21}), "tox.ini": frozenset({1})}


@pytest.fixture
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's console, 200 columns wide whatever the terminal: one line a row."""
    from rich.console import Console  # noqa: PLC0415 - only the printing tests need it

    from selfbench.cli import report  # noqa: PLC0415 - the console the printers use

    monkeypatch.setattr(report, "_console", lambda: Console(width=200, highlight=False))


@pytest.mark.usefixtures("wide_console")
def test_the_table_has_one_row_per_task(capsys: pytest.CaptureFixture[str]) -> None:
    from selfbench.cli.quality import _print_table  # noqa: PLC0415 - the printer under test

    record = QualityRecord(
        taskId="t1",
        verdict="review",
        reasons=("weak tests: 5 of 10 mutants survive",),
        ablation=Ablation(moved=("tox.ini",), unneeded=("calc.py#1",)),
        mutation=Mutation(generated=10, killed=5, score=0.5),
    )
    _print_table([record, QualityRecord(taskId="t2", verdict="ship")])
    words = " ".join(capsys.readouterr().out.split())  # however the terminal wraps the cells
    assert words == (
        "task verdict mutation score unneeded moved reasons "
        "t1 review 50% (5/10) calc.py#1 tox.ini weak tests: 5 of 10 mutants survive "
        "t2 ship - - - -"
    )


@pytest.mark.usefixtures("wide_console")
def test_the_score_cell_counts_what_pass_to_pass_caught(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from selfbench.cli.quality import _print_table  # noqa: PLC0415 - the printer under test

    mutation = Mutation(generated=10, killed=2, score=0.2, caughtByPassToPass=_CAUGHT)
    _print_table([QualityRecord(taskId="t1", verdict="ship", mutation=mutation)])
    words = " ".join(capsys.readouterr().out.split())
    assert words.endswith("t1 ship 20% (2/10) +2 by pass-to-pass - - -")


@SANDBOX
def test_the_files_that_are_no_implementation_are_reverted_together_first(
    samples: Samples, tmp_path: Path
) -> None:
    """`docs/requirements.txt` and `tox.ini` reverted together, fail-to-pass still passes: one
    run tells neither is needed, and neither runs on its own."""
    options = QualityOptions(local=LocalOptions(logs=tmp_path / "logs"), jobs=2)
    record = assess_task(samples.tasks["unneeded"], samples.repo, options)
    assert record.ablation is not None
    assert moved_out(record) == ("docs/requirements.txt", "tox.ini")
    assert record.mutation is not None
    assert (record.mutation.killed, len(record.mutation.survivors)) == (3, 4)
    assert record.mutation.caught_by_pass_to_pass == ()  # test_core adds: it calls neither
    # 16 when each of the three files ran on its own: the two reverted together are one run;
    # every mutant ran (pass-to-pass could catch the survivors), then four with pass-to-pass
    # (a score of 3/7 could rise to 60%): the gold, 3 of the 4 survivors (none caught, the last
    # could not lift 3/7 to 60%)
    assert len(list((tmp_path / "logs").rglob("variant-*.log"))) == 15 + 4
