"""The coupling check of `selfbench run`: deterministic evidence, the reviewer, one repair.

Every case is a real git repository: a base tree, a merged change split into the gold patch and
the held-out tests (both from `git diff`), and an instruction. The evidence must name what a
reader of the instruction and the base tree could not know, and nothing else: the sample task
and the clean cases must come out with no blockers.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import definition
from projects import git
from run_helpers import SCRIPTED_AUTHOR, SCRIPTED_REVIEWER, candidate_for, sample
from selfbench.artifacts.task_dir import (
    DEFINITION_FILE,
    GOLD_PATCH_FILE,
    TEST_PATCH_FILE,
    read_authored_task,
)
from selfbench.demo import build_sample_history
from selfbench.draft.instruction import draft_instruction
from selfbench.draft.split import split_change
from selfbench.errors import GitError
from selfbench.mine import CandidateModel, MineOptions, mine_repository
from selfbench.run import stages
from selfbench.run._names import asserted_names, js_tokens
from selfbench.run.author import AuthorJob, AuthorResult, author_from_draft
from selfbench.run.coupling import (
    DEFINITION_CHANGED,
    ReviewerError,
    ReviewVerdict,
    coupling_blockers,
    coupling_repair_with_command,
    parse_review,
    review_with_command,
)


@dataclass(frozen=True)
class Case:
    """A merged change: base files, gold files, held-out test files, and the instruction."""

    base: dict[str, str]
    gold: dict[str, str]
    tests: dict[str, str]
    prompt: str
    blockers: list[str] = field(default_factory=list)


def build(case: Case, root: Path) -> tuple[Path, Path]:
    """The case as a repository and an authored task directory of it."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--initial-branch=main")
    for files in (case.base, {**case.gold, **case.tests}):
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "change")
    base = git(repo, "rev-parse", "HEAD~1").strip()
    tests = sorted(case.tests)
    task = root / "task"
    task.mkdir()
    value = definition(baseCommit=base, prompt=case.prompt, testPaths=tests, failToPass=tests)
    (task / "definition.json").write_text(json.dumps(value), encoding="utf-8")
    (task / "test.patch").write_text(git(repo, "diff", base, "HEAD", "--", *tests))
    exclude = [f":!{path}" for path in tests]
    (task / "gold.patch").write_text(git(repo, "diff", base, "HEAD", "--", ".", *exclude))
    return task, repo


def blocker(path: str, what: str) -> str:
    return (
        f"held-out test {path} {what} the gold patch introduces and neither the instruction "
        "nor the base tree mentions"
    )


PY_BASE = {"pkg/__init__.py": "", "pkg/slug.py": "def slugify(text):\n    return text\n"}
PY_GOLD = {
    "pkg/slug.py": (
        "def slugify(text, max_length=None):\n"
        "    if max_length is not None and max_length < 1:\n"
        '        raise ValueError("max_length must be a positive whole number")\n'
        "    return _truncate(text, max_length)\n\n\n"
        "def _truncate(text, limit):\n    return text[:limit] if limit else text\n\n\n"
        "def _words(text):\n"
        "    words = []\n"
        "    for word in text.split():\n"
        "        word = word.strip()\n"
        "        if not word:\n"
        "            continue\n"
        "        words.append(word.lower())\n"
        "    return words\n\n\n"
        "def _joined(words, separator):\n"
        "    return separator.join(words)\n"
    )
}
API_BASE = {"app/__init__.py": "", "app/routes.py": "ROUTES = {}\n"}
API_GOLD = {
    "app/routes.py": (
        'ROUTES = {"/api/v2/widgets/<int:widget_id>": "show_widget"}\n\n\n'
        "def show_widget(widget_id):\n"
        '    return {"widgetId": widget_id, "createdAt": 0}, {"X-Widget-Revision": "1"}\n'
    )
}
API_TEST = """\
from app.routes import ROUTES, show_widget


def test_show_widget(client):
    response = client.get("/api/v2/widgets/7")
    body, headers = show_widget(7)
    assert body["createdAt"] == 0
    assert headers["X-Widget-Revision"] == "1"
"""
JS_BASE = {"src/price.js": "export function formatPrice(cents) {\n  return String(cents);\n}\n"}
JS_GOLD = {
    "src/price.js": (
        "export function formatPrice(cents) {\n"
        '  if (cents === "") throw new Error("empty input is not a price");\n'
        "  return `$${toDollars(cents)}`;\n}\n"
        "function toDollars(cents) {\n  return (cents / 100).toFixed(2);\n}\n"
        "export { toDollars };\n"
        'export const HEADER = "x-price-currency";\n'
    )
}
JS_TEST = """\
import { formatPrice, toDollars } from "../src/price.js";

// toDollars is only mentioned in this comment: /x-price-currency/
const pattern = /toDollars\\/x/g;

test("formats cents", () => {
  const value = formatPrice(300);
  expect(value).toBe("$3.00");
  expect(() => formatPrice("")).toThrow("empty input is not a price");
  expect(response.headers["x-price-currency"]).toBeDefined();
  expect(`${value} ok`).toMatch(pattern);
});
"""

CASES = {
    "python-private-helper": Case(
        PY_BASE,
        PY_GOLD,
        {
            "tests/test_slug.py": (
                "from pkg.slug import _truncate, slugify\n\n\n"
                "def test_cut():\n    assert slugify('abcdef', max_length=3) == 'abc'\n"
                "    assert _truncate('abc', 2) == 'ab'\n"
            )
        },
        "Give slugify a max_length option that cuts the slug to at most that many characters.",
        [blocker("tests/test_slug.py", "uses _truncate, a name")],
    ),
    "python-exact-message": Case(
        PY_BASE,
        PY_GOLD,
        {
            "tests/test_slug.py": (
                "import pytest\n\nfrom pkg.slug import slugify\n\n\n"
                "def test_bad_limit():\n"
                "    with pytest.raises(ValueError) as error:\n"
                "        slugify('x', max_length=0)\n"
                "    assert str(error.value) == 'max_length must be a positive whole number'\n"
            )
        },
        "Give slugify a max_length option; a limit below 1 is a ValueError.",
        [
            blocker(
                "tests/test_slug.py",
                'asserts the string "max_length must be a positive whole number", which',
            )
        ],
    ),
    "python-message-in-the-instruction": Case(
        PY_BASE,
        PY_GOLD,
        {
            "tests/test_slug.py": (
                "import pytest\n\nfrom pkg.slug import slugify\n\n\n"
                "def test_bad_limit():\n"
                "    with pytest.raises(ValueError, match='positive whole number'):\n"
                "        slugify('x', max_length=0)\n"
            )
        },
        "Give slugify a max_length option; below 1, raise ValueError saying it must be a "
        "Positive  whole number.",
    ),
    "python-name-already-in-the-base": Case(
        {**PY_BASE, "pkg/util.py": "def _truncate(text, limit):\n    return text[:limit]\n"},
        PY_GOLD,
        {
            "tests/test_slug.py": (
                "from pkg.slug import _truncate\n\n\n"
                "def test_cut():\n    assert _truncate('abc', 2) == 'ab'\n"
            )
        },
        "Cut slugs to a maximum length.",
    ),
    "python-local-helper-of-the-same-name": Case(
        PY_BASE,
        PY_GOLD,
        {
            "tests/test_slug.py": (
                "from pkg.slug import slugify\n\n\n"
                "def _truncate(text, limit):\n    return text[:limit]\n\n\n"
                "def test_cut():\n"
                "    assert slugify('abcdef', max_length=3) == _truncate('abcdef', 3)\n"
            )
        },
        "Give slugify a max_length option that cuts the slug to at most that many characters.",
    ),
    "python-endpoint-field-and-header": Case(
        API_BASE,
        API_GOLD,
        {"tests/test_api.py": API_TEST},
        "Serve a widget as JSON with its id and creation time, and its revision in a header.",
        [
            blocker("tests/test_api.py", 'asserts the string "X-Widget-Revision", which'),
            blocker("tests/test_api.py", 'asserts the string "createdAt", which'),
            blocker("tests/test_api.py", 'requests the path "/api/v2/widgets/7", which'),
            blocker("tests/test_api.py", "uses show_widget, a name"),
        ],
    ),
    "python-endpoint-named-in-the-instruction": Case(
        API_BASE,
        API_GOLD,
        {"tests/test_api.py": API_TEST},
        "Add `GET /api/v2/widgets/{id}`, handled by `show_widget`, returning JSON with "
        "`widgetId` and `createdAt`, and the revision in an `X-Widget-Revision` header.",
    ),
    "javascript-message-and-header": Case(
        JS_BASE,
        JS_GOLD,
        {"test/price.test.js": JS_TEST},
        "Make formatPrice print dollars with two decimals, as `$3.00`, and refuse empty input.",
        [
            blocker("test/price.test.js", 'asserts the string "empty input is not a price", which'),
            blocker("test/price.test.js", 'asserts the string "x-price-currency", which'),
            blocker("test/price.test.js", "uses toDollars, a name"),
        ],
    ),
    "javascript-named-in-the-instruction": Case(
        JS_BASE,
        JS_GOLD,
        {"test/price.test.js": JS_TEST},
        "Make formatPrice print dollars with two decimals using a new exported toDollars "
        'helper; refuse "" with the error "Empty input is not a price", and name the currency '
        "in an x-price-currency header.",
    ),
    "python-standard-library-names": Case(
        PY_BASE,
        {
            **PY_GOLD,
            "pkg/files.py": (
                "import sys\n\n\ndef depth():\n    return sys.getrecursionlimit()\n\n\n"
                "def load(path):\n    return path.read_bytes()\n"
            ),
        },
        {
            "tests/test_files.py": (
                "import sys\nfrom os.path import basename\n\n"
                "from pkg.files import depth, load\n\n\n"
                "def test_depth(tmp_path):\n"
                "    assert depth() == sys.getrecursionlimit()\n"
                "    (tmp_path / 'f').write_bytes(b'x')\n"
                "    assert load(tmp_path / 'f') == (tmp_path / 'f').read_bytes()\n"
                "    assert basename('a/b') == 'b'\n"
            )
        },
        "Add a module pkg.files with depth(), the recursion limit, and load(path), a file's bytes.",
    ),
    "javascript-ava-assertions": Case(
        JS_BASE,
        JS_GOLD,
        {
            "test.js": (
                "import test from 'ava';\nimport {formatPrice} from './src/price.js';\n\n"
                "test('refuses empty input', t => {\n"
                "  t.throws(() => formatPrice(''), {message: 'empty input is not a price'});\n"
                "  t.is(formatPrice(300), '$3.00');\n});\n"
            )
        },
        "Make formatPrice print dollars with two decimals, as `$3.00`, and refuse empty input.",
        [blocker("test.js", 'asserts the string "empty input is not a price", which')],
    ),
    "examples-in-comments-docstrings-and-docs": Case(
        {**JS_BASE, **PY_BASE, "README.md": "# price\n"},
        {
            "src/price.js": (
                "/**\n * Format cents.\n * @example\n * formatPrice(300, {currency: 'EUR'})\n"
                " * //=> '3.00 in euros'\n */\n"
                "export function formatPrice(cents, {currency} = {}) {\n"
                "  const dollars = (cents / 100).toFixed(2);\n"
                "  return currency ? [dollars, 'in', currency].join(' ') : dollars;\n}\n"
            ),
            "pkg/slug.py": (
                'def slugify(text, max_length=None):\n    """Slugify.\n\n'
                "    >>> slugify('Hello World', max_length=5)\n    'hello'\n"
                '    """\n    return text.lower()[:max_length]\n'
            ),
            "README.md": "# price\n\n`formatPrice(300, {currency: 'EUR'})`: '3.00 in euros'.\n",
        },
        {
            "test/price.test.js": (
                "import { formatPrice } from '../src/price.js';\n"
                "test('euros', () => {\n"
                "  expect(formatPrice(300, { currency: 'EUR' })).toBe('3.00 in euros');\n});\n"
            ),
            "tests/test_slug.py": (
                "from pkg.slug import slugify\n\n\n"
                "def test_cut():\n    assert slugify('Hello World', max_length=5) == 'hello'\n"
            ),
        },
        "Give formatPrice a currency option and slugify a max_length option.",
    ),
    # loguru #1303: the gold wraps an async generator, its methods named as Python names them
    "pythons-own-names-are-known": Case(
        {"pkg/__init__.py": "", "pkg/wrap.py": "def catch(function):\n    return function\n"},
        {
            "pkg/wrap.py": (
                "def catch(function):\n"
                "    class Caught:\n"
                "        def __init__(self, gen):\n            self._gen = gen\n\n"
                "        async def asend(self, value):\n"
                "            return await self._gen.asend(value)\n\n"
                "        async def athrow(self, *args):\n"
                "            return await self._gen.athrow(*args)\n\n"
                "        async def aclose_quietly(self):\n"
                "            return await self._gen.aclose()\n\n"
                "    return lambda *args: Caught(function(*args))\n"
            )
        },
        {
            "tests/test_wrap.py": (
                "import asyncio\nfrom pkg.wrap import catch\n\n\n"
                "def test_asend():\n"
                "    async def gen():\n        yield (yield 1)\n\n"
                "    wrapped = catch(gen)()\n"
                "    asyncio.run(wrapped.asend(None))\n"
                "    asyncio.run(wrapped.athrow(ValueError))\n"
                "    asyncio.run(wrapped.aclose_quietly())\n"
            )
        },
        "Let `catch` wrap async generators.",
        [blocker("tests/test_wrap.py", "uses aclose_quietly, a name")],
    ),
    "other-languages-are-not-read": Case(
        {"go.mod": "module example.com/m\n", "m.go": "package m\n"},
        {"m.go": 'package m\n\nfunc hiddenHelper() string { return "secret wording" }\n'},
        {"m_test.go": "package m\n\nfunc TestX(t *testing.T) { _ = hiddenHelper() }\n"},
        "Add a helper.",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_coupling_blockers(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    task, repo = build(case, tmp_path)
    head, objects = git(repo, "rev-parse", "HEAD"), git(repo, "count-objects")
    assert coupling_blockers(task, repo) == sorted(case.blockers)
    # a draft's proven task is checked by its parts, before its quality runs, alike
    authored = read_authored_task(task)
    early = stages.coupled_draft(repo)(
        authored.definition, authored.test_patch, authored.gold_patch
    )
    assert early == (f"coupled: {'; '.join(sorted(case.blockers))}" if case.blockers else None)
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "count-objects") == objects  # nothing was written into it


def test_the_sample_task_is_clean(tmp_path: Path) -> None:
    drafted = sample(tmp_path)
    job = AuthorJob(
        drafted.repo.path, drafted.candidate, drafted.draft, tmp_path / "out", tmp_path / "l", 1, 1
    )
    result = author_from_draft(job)
    assert result.task_dir is not None
    assert coupling_blockers(result.task_dir, drafted.repo.path) == []


def test_the_sample_historys_drafts_are_clean(tmp_path: Path) -> None:
    """`selfbench demo` runs with `--author draft`: no author rewrites a coupled draft there."""
    repo = build_sample_history(tmp_path)
    mined = mine_repository(repo, MineOptions())
    models = [CandidateModel.model_validate(found.to_json()) for found in mined.candidates]
    drafting = [candidate for candidate in models if candidate.testsChanged]
    assert {candidate.difficulty for candidate in drafting} == {"easy", "medium", "hard"}
    for candidate in drafting:
        split = split_change(repo, candidate)
        task = tmp_path / candidate.id
        task.mkdir()
        (task / TEST_PATCH_FILE).write_bytes(split.test_patch)
        (task / GOLD_PATCH_FILE).write_bytes(split.gold_patch)
        prompt = draft_instruction(candidate, split, [], repo=repo)
        fields = definition(taskId=candidate.id, baseCommit=candidate.baseCommit, prompt=prompt)
        (task / DEFINITION_FILE).write_text(json.dumps(fields))
        assert coupling_blockers(task, repo) == [], candidate.id


def test_a_test_patch_that_does_not_apply_is_an_error(tmp_path: Path) -> None:
    task, repo = build(CASES["python-private-helper"], tmp_path)
    (task / "test.patch").write_text(
        "diff --git a/pkg/slug.py b/pkg/slug.py\n--- a/pkg/slug.py\n+++ b/pkg/slug.py\n"
        "@@ -1,1 +1,1 @@\n-nothing like this\n+x\n"
    )
    with pytest.raises(GitError) as error:
        coupling_blockers(task, repo)
    assert str(error.value) == "git apply failed: error: pkg/slug.py: patch does not apply"


# --- the readers -------------------------------------------------------------------------------


def test_the_javascript_tokenizer_skips_comments_and_regex_literals() -> None:
    source = 'a = b / c; // x\nd = /e"f/g.test(h) /* "i" */ ? `j${k + "l"}m` : \'n\\\'o\';'
    tokens = [(token.kind, token.text) for token in js_tokens(source)]
    assert tokens == [
        ("name", "a"), ("punct", "="), ("name", "b"), ("punct", "/"), ("name", "c"),
        ("punct", ";"), ("name", "d"), ("punct", "="), ("punct", "."), ("name", "test"),
        ("punct", "("), ("name", "h"), ("punct", ")"), ("punct", "?"), ("string", "j"),
        ("string", "m"), ("name", "k"), ("punct", "+"), ("string", "l"), ("punct", ":"),
        ("string", "n'o"), ("punct", ";"),
    ]  # fmt: skip


def test_python_names_are_those_the_code_under_test_answers_to() -> None:
    source = (
        '"""Docstring mentioning hiddenName."""\n'
        "from pkg.mod import api_fn as alias\n\n\n"
        "def test_it(fixture_value):\n"
        '    """Another docstring: secretName."""\n'
        "    local_value = alias(fixture_value, option_kw=1)\n"
        "    assert local_value.field_attr == 'expected text'\n"
        "    not_asserted = 'free text'\n"
    )
    names = asserted_names("tests/test_it.py", source)
    assert sorted(names.identifiers) == ["api_fn", "field_attr", "mod", "option_kw", "pkg"]
    assert sorted(names.strings) == ["expected text"]
    assert asserted_names("tests/test_it.py", "def (:\n").identifiers == set()


_JS_ALPHABET = st.sampled_from([*"ab_$1 .(){}[]/*\\'\"`+-=!?:;,\n", "${", "//", "/*", "*/", "é"])


@given(st.lists(_JS_ALPHABET, max_size=60).map("".join))
def test_the_tokenizer_reads_any_text_and_its_names_come_from_it(source: str) -> None:
    for token in js_tokens(source):
        if token.kind in {"name", "number"}:
            assert token.text in source
    asserted_names("a.test.js", source)
    asserted_names("test_a.py", source)


@given(st.binary(max_size=200))
def test_any_reviewer_output_is_a_verdict_or_a_reviewer_error(output: bytes) -> None:
    try:
        verdict = parse_review(output)
    except ReviewerError:
        return
    assert verdict.verdict in {"clean", "coupled"}


@given(st.sampled_from(["clean", "coupled"]), st.lists(st.text(min_size=1), max_size=3))
def test_a_printed_verdict_reads_back(verdict: str, findings: list[str]) -> None:
    line = json.dumps({"verdict": verdict, "findings": findings})
    if verdict == "coupled" and not findings:
        return
    read = parse_review(b"chatter\n" + line.encode() + b"\n\n")
    assert read == ReviewVerdict(verdict, tuple(" ".join(f.split()) for f in findings))  # type: ignore[arg-type]


# --- the reviewer ------------------------------------------------------------------------------


def reviewer(*arguments: str) -> str:
    return " ".join([SCRIPTED_REVIEWER, *(shlex.quote(argument) for argument in arguments)])


@pytest.mark.parametrize(
    ("arguments", "verdict"),
    [
        (("clean",), ReviewVerdict("clean", ())),
        (
            ("coupled", "asserts the helper  _truncate", "pins the exact message"),
            ReviewVerdict("coupled", ("asserts the helper _truncate", "pins the exact message")),
        ),
    ],
    ids=["clean", "coupled"],
)
def test_reviewer_verdicts(
    tmp_path: Path, arguments: tuple[str, ...], verdict: ReviewVerdict
) -> None:
    task, _ = build(CASES["python-private-helper"], tmp_path)
    log = tmp_path / "review.log"
    assert review_with_command(reviewer(*arguments), task, log, 60) == verdict
    assert "reviewing with a brief of " in log.read_text()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (reviewer("garbage"), "reviewer's last line is not a JSON object"),
        (reviewer("malformed"), 'reviewer verdict must be "clean" or "coupled"'),
        (reviewer("coupled"), "a coupled verdict needs at least one finding"),
        (reviewer("fail"), "reviewer command failed with exit code 3"),
        (reviewer("sleep", "30"), "reviewer command timed out after 2 s"),
        ("/nonexistent/reviewer", ("reviewer command cannot start: /nonexistent/reviewer: "
         "No such file or directory")),
        ("'", "reviewer command cannot be parsed: No closing quotation"),
    ],
    ids=["not-json", "bad-verdict", "no-findings", "exit-3", "timeout", "missing", "unparsable"],
)  # fmt: skip
def test_a_reviewer_without_a_valid_verdict_is_a_one_line_error(
    tmp_path: Path, command: str, message: str
) -> None:
    task, _ = build(CASES["python-private-helper"], tmp_path)
    with pytest.raises(ReviewerError) as error:
        review_with_command(command, task, tmp_path / "review.log", 2)
    assert str(error.value) == message


# --- one coupling repair -----------------------------------------------------------------------


def repair_job(tmp_path: Path, task: Path, repo: Path, name: str) -> AuthorJob:
    value = json.loads((task / "definition.json").read_text())
    head = git(repo, "rev-parse", "HEAD").strip()
    return AuthorJob(
        repo=repo,
        candidate=candidate_for(value, head),
        draft_dir=task,
        out_dir=tmp_path / name,
        log=tmp_path / "author.log",
        time_limit_sec=120,
        inactivity_sec=60,
    )


def scripted(*options: str) -> str:
    return " ".join([SCRIPTED_AUTHOR, *(shlex.quote(option) for option in options)])


def test_a_coupled_task_is_repaired_in_its_tests_only(tmp_path: Path) -> None:
    task, repo = build(CASES["python-private-helper"], tmp_path)
    findings = coupling_blockers(task, repo)
    job = repair_job(tmp_path, task, repo, "repaired")
    command = scripted(
        "--replace", "from pkg.slug import _truncate, slugify", "from pkg.slug import slugify",
        "--replace", "assert _truncate('abc', 2) == 'ab'", "assert slugify('abc', max_length=2)",
    )  # fmt: skip
    result = coupling_repair_with_command(command, job, task, findings)
    assert result == AuthorResult(ok=True, task_dir=job.out_dir / "widgets-pr-42", reason=None)
    assert coupling_blockers(job.out_dir / "widgets-pr-42", repo) == []
    assert "scripted author, coupling-repair mode" in job.log.read_text()
    repaired = read_authored_task(job.out_dir / "widgets-pr-42")
    assert repaired.gold_patch == (task / "gold.patch").read_bytes()


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (
            ("--replace-gold", "positive whole number", "number of at least one"),
            "repair changed files outside the held-out tests: pkg/slug.py",
        ),
        (("--set", "testCommand", '"python -m pytest -x {tests}"'), DEFINITION_CHANGED),
    ],
    ids=["gold", "definition"],
)
def test_a_coupling_repair_outside_the_rules_is_rejected(
    tmp_path: Path, options: tuple[str, ...], reason: str
) -> None:
    task, repo = build(CASES["python-private-helper"], tmp_path)
    job = repair_job(tmp_path, task, repo, "repaired")
    result = coupling_repair_with_command(scripted(*options), job, task, ["uses _truncate"])
    assert result == AuthorResult(ok=False, task_dir=None, reason=reason)
