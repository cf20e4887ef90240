"""The draft instruction: the pull request's words, without anything the audit warns about."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfbench._git import git
from selfbench._sample_history import build_sample_history
from selfbench.audit import prompt_warnings
from selfbench.contract import TaskDefinition
from selfbench.draft.instruction import EMPTY_DRAFT, draft_instruction, without_commit_list
from selfbench.draft.split import SplitChange, split_change
from selfbench.mine import CandidateModel, mine_repository
from selfbench.mine.candidate import LinkedRequestModel
from selfbench.patches import parse_patch
from selfbench.quality.interface import changed_file_texts, check_instruction, interface_items

_URL = "https://example.com/example/unitkit/pull/4"
_NAMES = (
    "tests/test_temperature.py::test_conversions[100-C-F-212]",
    "tests/test_convert.py::test_dimensions_must_agree",
)


_COMMIT = "Convert temperatures, and any two units by name"
"""The message of the sample's one commit on the merged branch: a source of the draft too."""
_INTERFACE = """## Interface

- function `dimension_of(unit: str) -> str`
  The dimension a unit measures: length, mass or temperature.
- function `convert(value: float, source: str, target: str) -> float`
  Convert between any two units of the same dimension.
- function `convert_temperature(value: float, source: str, target: str) -> float`
  Convert `value` from the temperature unit `source` to `target` (K, C, F or R).
- function `temperature_units() -> tuple[str, ...]`
  The temperature units this module knows."""
"""The gold's public names the sample's tests use, with their signatures and docstrings."""


class Hard(NamedTuple):
    repo: Path
    candidate: CandidateModel
    split: SplitChange


@pytest.fixture(scope="module")
def hard(tmp_path_factory: pytest.TempPathFactory) -> Hard:
    repo = build_sample_history(tmp_path_factory.mktemp("history"))
    mined = next(c for c in mine_repository(repo).candidates if c.id == "pr-4")
    candidate = CandidateModel.model_validate(mined.to_json()).model_copy(
        update={"sourceUrl": _URL}
    )
    return Hard(repo, candidate, split_change(repo, candidate))


def _warnings(candidate: CandidateModel, split: SplitChange, prompt: str) -> tuple[str, ...]:
    """The audit's prompt warnings for a task built from the candidate and this prompt."""
    definition = TaskDefinition.model_validate(
        {
            "schemaVersion": 1,
            "difficulty": "hard",
            "taskId": "t",
            "repo": "example/unitkit",
            "baseCommit": candidate.baseCommit,
            "workdir": ".",
            "setupCommand": "true",
            "testCommand": "pytest {tests}",
            "failToPass": list(_NAMES),
            "passToPass": ["tests/test_formatting.py::test_precision_rounds"],
            "testPaths": list(split.test_files),
            "toolchains": ["python"],
            "sourcePr": candidate.sourcePr,
            "sourceUrl": _URL,
            "prompt": prompt,
            "timeouts": {"setupSeconds": 1, "agentSeconds": 1, "testsSeconds": 1},
            "resources": {"cpus": 1, "memoryMb": 1, "storageMb": 1},
        }
    )
    gold, tests = parse_patch(split.gold_patch), parse_patch(split.test_patch)
    return prompt_warnings(definition, gold, tests)


def _draft(hard: Hard, title: str, body: str) -> str:
    changed = hard.candidate.model_copy(update={"title": title, "body": body})
    names = (*_NAMES, "tests/test_formatting.py::test_precision_rounds")
    return draft_instruction(changed, hard.split, names, repo=hard.repo)


_PR4_BEFORE = (
    "Convert temperatures, and any two units by name.\n\n"
    "Temperatures differ by an offset as well as a factor, so they get their own module: "
    "`convert_temperature(value, source, target)` and `temperature_units()` "
    "(kelvin, Celsius, Fahrenheit, Rankine; nothing below absolute zero). A new "
    "`convert(value, source, target)` works for any dimension and refuses to mix dimensions; "
    "`dimension_of` names a unit's dimension. Degrees are formatted with the degree sign. "
    "Bumps the version to 0.2.0."
)
"""The sample's hard change as drafted from its title and body alone."""


def test_the_sample_s_hard_change_drafts_clean(hard: Hard) -> None:
    candidate, split = hard.candidate, hard.split

    prompt = draft_instruction(candidate, split, _NAMES, repo=hard.repo)

    # The branch's commit message repeats the title: said once. The Interface section follows.
    assert prompt == f"{_PR4_BEFORE}\n\n{_INTERFACE}"
    assert _PR4_BEFORE.startswith(f"{_COMMIT}.")
    assert "tests/test_temperature.py" in candidate.body  # the sentence naming them went
    assert _warnings(candidate, split, prompt) == ()


def test_the_interface_section_names_what_the_title_alone_leaves_out(hard: Hard) -> None:
    """Before: the title alone misses every name the tests use; after: only the behaviour the
    tests assert (an error and its message) is still missing, for the author to state."""
    untold = hard.candidate.model_copy(update={"body": ""})
    items = interface_items(
        hard.split.gold_patch, hard.split.test_patch, *_texts(hard.repo, hard.candidate, hard.split)
    )
    errors = (
        "raises ValueError", 'message "cannot convert length to mass"',
        'message "below absolute zero"',
    )  # fmt: skip

    prompt = draft_instruction(untold, hard.split, _NAMES, repo=hard.repo)

    before = check_instruction(_COMMIT, items, hard.split.test_patch)
    assert before.missing == (
        "dimension_of", "convert", "convert_temperature", "temperature_units", *errors,
    )  # fmt: skip
    assert prompt == f"{_COMMIT}.\n\n{_INTERFACE}"
    assert check_instruction(prompt, items, hard.split.test_patch).missing == errors


_BEHAVIOURS = (
    "tests/test_temperature.py::test_conversions[100-C-F-212]",
    "tests/test_temperature.py::test_conversions[32-F-C-0]",
    "tests/test_temperature.py::test_below_absolute_zero_is_refused",
    "tests/test_convert.py::test_converts_any_dimension",
    "tests/test_convert.py::test_dimensions_must_agree",
)
_REQUIREMENTS = """## Requirements

- Below absolute zero is refused; raises `ValueError` with a message containing "below absolute\
 zero".
- Converts any dimension.
- Dimensions must agree; raises `ValueError` with a message containing "cannot convert length to\
 mass"."""
"""One line per fail-to-pass test; `test_conversions`, with made-up case ids, says nothing."""


def test_the_requirements_state_what_the_tests_pin_so_nothing_is_missing(hard: Hard) -> None:
    """Before: the title and Interface leave the asserted errors unstated; with the
    Requirements section the instruction check finds nothing missing."""
    untold = hard.candidate.model_copy(update={"body": ""})
    items = interface_items(
        hard.split.gold_patch, hard.split.test_patch, *_texts(hard.repo, hard.candidate, hard.split)
    )

    prompt = draft_instruction(
        untold, hard.split, (*_NAMES, *_BEHAVIOURS), repo=hard.repo, behaviours=_BEHAVIOURS
    )

    assert prompt == f"{_COMMIT}.\n\n{_INTERFACE}\n\n{_REQUIREMENTS}"
    assert check_instruction(prompt, items, hard.split.test_patch).missing == ()
    assert _warnings(hard.candidate, hard.split, prompt) == ()


def test_a_requirement_says_a_test_s_name_in_words_never_the_name(hard: Hard) -> None:
    named = ("tests/test_convert.py::test_dimensions_must_agree",)

    prompt = draft_instruction(hard.candidate, hard.split, named, repo=hard.repo, behaviours=named)

    assert "Dimensions must agree" in prompt  # the name in words names no test
    assert "test_dimensions_must_agree" not in prompt
    assert _warnings(hard.candidate, hard.split, prompt) == ()


def _texts(
    repo: Path, candidate: CandidateModel, split: SplitChange
) -> tuple[dict[str, str], dict[str, str]]:
    return changed_file_texts(repo, candidate.baseCommit, split.gold_patch)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Add kelvin.\n\nFixes #12", "Add kelvin."),
        ("fix #12: Add kelvin.", "Add kelvin."),
        ("Add kelvin (see #4).", "Add kelvin."),
        ("Add kelvin, follow-up to PR 4 and pull request #4.", "Add kelvin, follow-up to and."),
        (f"Add kelvin. Discussed in {_URL}.", "Add kelvin."),
        ("Add kelvin. Details: https://example.com/o/r/issues/3", "Add kelvin."),
        ("Add kelvin, see https://en.wikipedia.org/wiki/Kelvin", None),
        (
            (
                "- Keep the scale if given (the fix for #3, see: https://example.com/o/r/issues/3);"
                "\n- Add kelvin (setup for issue #3: https://example.com/o/r/issues/3, in part)."
            ),
            "- Keep the scale if given;\n- Add kelvin.",
        ),
        (f"Add kelvin (ported from {_URL}).", "Add kelvin."),
        ("Add kelvin (see https://en.wikipedia.org/wiki/Kelvin).", None),
        ("Add kelvin. Fixes case 2 in issue #3 (https://example.com/o/r/issues/3).", "Add kelvin."),
        (
            f"Add kelvin. Add it (see https://example.com/o/r/issues/3) as {_URL} did.",
            "Add kelvin.",
        ),
        ("Add kelvin, as {base7} did.", "Add kelvin, as did."),
        ("Add kelvin in src/unitkit/temperature.py.", "Add kelvin in the relevant file."),
        ("Add kelvin in `temperature.py`.", "Add kelvin in the relevant file."),
        ("Add kelvin. Tested by test_conversions.", "Add kelvin."),
        ("Add kelvin. See tests/test_convert.py for cases.", "Add kelvin."),
        ("Add kelvin.\n\n- [x] Tests added\n- [ ] Docs", "Add kelvin."),
        ("Add kelvin.<!-- Describe your change -->\n\nCo-authored-by: A <a@b.c>", "Add kelvin."),
        ("Add kelvin.\n\n```\nconvert(0, 'C', 'K')\n```", None),
        (
            'Keep a key when `key !== "a"  ,` holds (see #4).',
            'Keep a key when `key !== "a"  ,` holds.',
        ),
        (
            "- add kelvin\n- run tests/test_temperature.py\n- add rankine",
            "- add kelvin\n- add rankine",
        ),
    ],
)
def test_what_leaks_is_removed_and_the_audit_finds_nothing(
    hard: Hard, body: str, expected: str | None
) -> None:
    body = body.replace("{base7}", hard.candidate.baseCommit[:9])

    prompt = _draft(hard, "Temperatures", body)

    kept = body if expected is None else expected
    assert prompt == f"Temperatures.\n\n{kept}\n\n{_COMMIT}\n\n{_INTERFACE}"
    assert _warnings(hard.candidate, hard.split, prompt) == ()


_NOISE = [
    "- [ ] Tests added",
    "- [x] Changelog entry",
    "* Add PR#",
    "* Add changelog",
    "* Update docs",
    "* Add note about difference",
    "* Add not about difference",
    "* Tests",
    "- Fix typo",
    "- Run lint and format",
    "- Bump version",
    "Add PR #12",
    "Update CHANGELOG",
    "Merge branch 'main' into temperature",
    "Merge pull request #3 from example/mass-units",
    "Merge remote-tracking branch 'origin/main'",
    "[pre-commit.ci] auto fixes from pre-commit.com hooks",
    "Bumps pytest from 7.0 to 8.0. Signed by dependabot[bot].",
    "fixup! Add kelvin",
    "Address review comments",
    "* blacken again sorry",  # a squashed branch's commit list (parse #165)
    "* doc update",
    "* Reformat with black",
    "# Conflicts:\n#\tsrc/unitkit/convert.py",
    "Refs: https://example.com/example/unitkit/discussions/3",
]


@pytest.mark.parametrize("noise", _NOISE)
def test_noise_is_removed(hard: Hard, noise: str) -> None:
    prompt = _draft(hard, "Temperatures", f"Add kelvin.\n\n{noise}\n\nAdd rankine.")

    assert prompt == f"Temperatures.\n\nAdd kelvin.\n\nAdd rankine.\n\n{_COMMIT}\n\n{_INTERFACE}"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Add kelvin [skip ci]", "Add kelvin"),
        ("Add kelvin. [ci skip]", "Add kelvin."),
        ("- add kelvin\n- Update docs\n- add rankine", "- add kelvin\n- add rankine"),
    ],
)
def test_noise_inside_a_paragraph_is_removed(hard: Hard, body: str, expected: str) -> None:
    prompt = _draft(hard, "Temperatures", body)

    assert prompt == f"Temperatures.\n\n{expected}\n\n{_COMMIT}\n\n{_INTERFACE}"


_PROSE = [
    "- add kelvin",
    "- `convert()` accepts a version string",
    "- Handles version strings like 1.2",
    "- Documentation pages render degrees with the degree sign",
    "Add tests-friendly hooks to `convert` so callers can swap the table of units.",
    "Do not format negative zero as -0.",
    "Bumps the version to 0.2.0 and adds kelvin.",
    "The merge of two unit tables keeps the first unit's name.",
    "- Use black as the default color",
    "- update the docs' example output of `convert`",
]


@pytest.mark.parametrize("prose", _PROSE)
def test_prose_that_mentions_a_chore_word_stays(hard: Hard, prose: str) -> None:
    prompt = _draft(hard, "Temperatures", prose)

    assert prompt == f"Temperatures.\n\n{prose}\n\n{_COMMIT}\n\n{_INTERFACE}"


def test_what_is_said_twice_is_said_once(hard: Hard) -> None:
    body = "Convert temperatures, and any two units by name\n\n* Add kelvin\n* add kelvin."

    prompt = _draft(hard, "Add kelvin", body)

    assert prompt == f"Add kelvin.\n\n{_COMMIT}\n\n{_INTERFACE}"


def test_a_linked_session_request_follows_the_pull_request(hard: Hard) -> None:
    candidate, split = hard.candidate, hard.split
    request = LinkedRequestModel(
        tool="claude-code",
        session="s1",
        timestamp=1,
        text="please make convert() handle temperatures; the failing test is test_conversions",
        secondsBeforeMerge=60,
        branch=None,
        paths=(),
    )
    changed = candidate.model_copy(update={"body": "", "requests": (request,)})
    again = LinkedRequestModel(**{**request.model_dump(), "text": "Handle kelvin too."})
    twice = changed.model_copy(update={"requests": (again, again)})

    assert draft_instruction(changed, split, _NAMES, repo=hard.repo) == (
        f"{_COMMIT}.\n\n{_INTERFACE}"
    )
    assert draft_instruction(twice, split, _NAMES, repo=hard.repo) == (
        f"{_COMMIT}.\n\nHandle kelvin too.\n\n{_INTERFACE}"
    )


# --- the merged branch's own commits -----------------------------------------------------------

_WRAP_BASE = '''"""Wrap text to a width."""


def wrap(text: str, width: int = 70) -> list[str]:
    """Split `text` into lines of at most `width` characters."""
    return [text[i : i + width] for i in range(0, len(text), width)]
'''
_WRAP_GOLD = '''"""Wrap text to a width."""

import re

_ESCAPE = re.compile(r"\\x1b\\[[0-9;]*m")


def visible_width(text: str) -> int:
    """The columns `text` takes on a terminal: escape sequences take none.

    Colour codes are left out.
    """
    return len(_ESCAPE.sub("", text))


def format_width(width: int) -> str:
    """Format a width."""
    return f"{width} columns"


def wrap(text: str, width: int = 70, *, ansi: bool = True) -> list[str]:
    """Split `text` into lines of at most `width` characters."""
    if width < 1:
        raise ValueError("width must be positive")
    return [text[i : i + width] for i in range(0, len(text), width)]
'''
_WRAP_TESTS = """import pytest

from wraptext import format_width, visible_width, wrap


def test_colour_takes_no_columns():
    assert visible_width("\\x1b[31mred\\x1b[0m") == 3


def test_plain_wrapping():
    assert wrap("abcdef", 3, ansi=False) == ["abc", "def"]
    assert format_width(3) == "3 columns"
"""


def _merged(
    parent: Path, messages: tuple[str, str, str], authors: tuple[str, str, str] = ("A", "A", "A")
) -> Path:
    """A repository whose `main` merges (`--no-ff`) a branch of three commits with `messages`
    by `authors`: the code, its tests, its changelog."""
    repo = parent / "wraptext"
    (repo / "src" / "wraptext").mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    steps = (
        {"src/wraptext/__init__.py": _WRAP_GOLD},
        {"tests/test_wrap.py": _WRAP_TESTS},
        {"CHANGELOG.md": "# Changes\n\n- ANSI-aware wrapping\n"},
    )
    (repo / "src/wraptext/__init__.py").write_text(_WRAP_BASE)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "Initial wraptext")
    git(repo, "checkout", "--quiet", "-b", "ansi")
    for files, message, author in zip(steps, messages, authors, strict=True):
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        git(repo, "add", "--all")
        git(repo, "commit", "--quiet", "--message", message, env={"GIT_AUTHOR_NAME": author})
    git(repo, "checkout", "--quiet", "main")
    merge = "Merge pull request #7 from example/ansi\n\nMake `wrap` ANSI-aware"
    git(repo, "merge", "--quiet", "--no-ff", "--message", merge, "ansi")
    return repo


def _wrap_candidate(hard: Hard, repo: Path, title: str, body: str) -> CandidateModel:
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    base = git(repo, "rev-parse", "HEAD^1").decode().strip()
    return hard.candidate.model_copy(
        update={
            "baseCommit": base, "completedCommit": head, "title": title, "body": body,
            "sourcePr": 7, "sourceUrl": "https://example.com/example/wraptext/pull/7",
        }
    )  # fmt: skip


_WRAP_INTERFACE = (
    "## Interface\n\n"
    "- function `visible_width(text: str) -> int`\n"
    "  The columns `text` takes on a terminal: escape sequences take none.\n"
    "- function `format_width(width: int) -> str`\n"
    "  Format a width.\n"
    "- option `ansi`, a new parameter of "
    "`wrap(text: str, width: int = 70, *, ansi: bool = True) -> list[str]`"
)


def test_the_merged_branch_s_commit_messages_are_a_source(hard: Hard, tmp_path: Path) -> None:
    messages = (
        (
            "Make wrap ANSI-aware\n\nEscape sequences take no columns, so `wrap` measures the\n"
            "visible width. Widths under one are refused.\n\n* Add changelog"
        ),
        "Add tests for ANSI widths",
        "Update changelog [skip ci]",
    )
    repo = _merged(tmp_path, messages)
    candidate = _wrap_candidate(hard, repo, "Make wrap ANSI-aware", "")
    split = split_change(repo, candidate)

    prompt = draft_instruction(candidate, split, ["tests/test_wrap.py"], repo=repo)

    assert prompt == (
        "Make wrap ANSI-aware.\n\nEscape sequences take no columns, so `wrap` measures the "
        f"visible width. Widths under one are refused.\n\n{_WRAP_INTERFACE}"
    )


@pytest.mark.parametrize(
    "noise",
    [
        "Bump version to 2.1.0",
        "[pre-commit.ci] auto fixes from pre-commit.com hooks",
        "Merge branch 'main' into ansi",
        "Run black",
        "Fix lint\n\n* Update tests\n* Add PR#",
        "Tests [skip ci]",
    ],
)
def test_a_chore_commit_on_the_branch_says_nothing(hard: Hard, tmp_path: Path, noise: str) -> None:
    messages = ("Make wrap ANSI-aware", noise, "Refresh the example application's screenshots")
    repo = _merged(tmp_path, messages, authors=("A", "A", "dependabot[bot]"))
    candidate = _wrap_candidate(hard, repo, "Make wrap ANSI-aware", "")
    split = split_change(repo, candidate)

    prompt = draft_instruction(candidate, split, ["tests/test_wrap.py"], repo=repo)

    assert prompt == f"Make wrap ANSI-aware.\n\n{_WRAP_INTERFACE}"


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        (
            (
                "Make wrap ANSI-aware",
                "extract visible_width to avoid a second pass\n\nColour codes never count.",
                "parametrize the width tests",
            ),
            "Colour codes never count.\n\n",
        ),
        # the first commit is a chore: the second's subject is a step all the same
        (("Run black", "extract visible_width to avoid a second pass", "Add tests"), ""),
    ],
    ids=["later-subjects", "after-a-first-chore"],
)
def test_a_later_commit_says_its_body_never_its_step(
    hard: Hard, tmp_path: Path, messages: tuple[str, str, str], said: str
) -> None:
    """w3lib #279: the branch's later subjects were the gold's steps ("remove _safe_ParseResult
    and rely on safe_url_string", "parametrize the tab/newline canonicalize_url test")."""
    repo = _merged(tmp_path, messages)
    candidate = _wrap_candidate(hard, repo, "Make wrap ANSI-aware", "")
    split = split_change(repo, candidate)

    prompt = draft_instruction(candidate, split, ["tests/test_wrap.py"], repo=repo)

    assert prompt == f"Make wrap ANSI-aware.\n\n{said}{_WRAP_INTERFACE}"


def test_nothing_left_gives_the_empty_draft(hard: Hard, tmp_path: Path) -> None:
    repo = _merged(tmp_path, ("Fix #7", "Add tests", "Update changelog"))
    candidate = _wrap_candidate(hard, repo, "Fix #7", "See tests/test_wrap.py")
    split = split_change(repo, candidate)

    prompt = draft_instruction(candidate, split, ["tests/test_wrap.py"], repo=repo)

    assert prompt == f"{EMPTY_DRAFT}\n\n{_WRAP_INTERFACE}"


_LEAKS = st.sampled_from(
    [
        "#4", "PR 4", "pull request 4", _URL, "temperature.py", "src/unitkit/convert.py",
        "tests/test_convert.py", "test_convert.py", "tests/test_temperature.py::test_conversions",
        _NAMES[0], _NAMES[1], "__init__.py", "pyproject.toml", "conftest.py", "\n\n", ". ",
        "`", "<!--", "-->", "- [x] ", "```", "Fixes ", "https://", "/", "::", "[", "]",
    ]
)  # fmt: skip
_TEXT = st.lists(st.one_of(st.text(max_size=12), _LEAKS), max_size=12).map("".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(title=_TEXT, body=_TEXT, hexes=st.integers(min_value=7, max_value=12))
def test_no_title_or_body_gets_a_warning_through(
    hard: Hard, title: str, body: str, hexes: int
) -> None:
    body = body.replace("#4", f"#4 {hard.candidate.baseCommit[:hexes].upper()} ")

    prompt = _draft(hard, title, body)

    assert prompt.strip()
    assert _warnings(hard.candidate, hard.split, prompt) == ()


_SQUASH_LIST = "* Fix import\n\n* Add versionadded\n\n* Invert logic and add example\n\n* endash"


@pytest.mark.parametrize(
    ("text", "left"),
    [
        (_SQUASH_LIST, ""),
        (f"Add kelvin (#4)\n\n{_SQUASH_LIST}", "Add kelvin (#4)"),  # the commit's own message
        ("* Fix import\n  with its body line\n\n* once is enough", ""),
        ("* Fix import", "* Fix import"),  # one item: a list of one says what it says
        ("Add kelvin.\n\n* Fix import\n\nAnd rankine.\n\n* once", None),  # prose between
        ("- add kelvin\n- add rankine", None),  # a list the author wrote
        ("Why:\n\n* kelvin\n* rankine", None),
    ],
)
def test_a_squash_s_commit_list_goes_whole(text: str, left: str | None) -> None:
    assert without_commit_list(text) == (text if left is None else left)


def test_a_squash_body_drafts_as_its_title(hard: Hard) -> None:
    squash = hard.candidate.model_copy(
        update={"kind": "squash", "title": "Temperatures", "body": _SQUASH_LIST}
    )

    prompt = draft_instruction(squash, hard.split, _NAMES, repo=hard.repo)

    bodiless = squash.model_copy(update={"body": ""})
    assert prompt == draft_instruction(bodiless, hard.split, _NAMES, repo=hard.repo)
    assert "import" not in prompt
    assert "endash" not in prompt


@pytest.mark.parametrize(
    ("prose", "tidied"),
    [
        ("fixes the parser (): it now reads", "fixes the parser: it now reads"),
        ("see [] below", "see below"),
        ("calls convert() first", "calls convert() first"),
        ("export const a = new Set<string>(), b = 1", "export const a = new Set<string>(), b = 1"),
        ("a factory's call make()()", "a factory's call make()()"),
        ("an index x[0][]", "an index x[0][]"),
        ("fixes the parser () .", "fixes the parser."),
        ("Support reading .env from FIFOs (Unix)", "Support reading .env from FIFOs (Unix)"),
        ("runs ./build first , then :memory:", "runs ./build first, then :memory:"),
    ],
)
def test_only_brackets_a_removal_left_empty_are_tidied_away(prose: str, tidied: str) -> None:
    from selfbench.draft.instruction import _tidy  # noqa: PLC0415 - the rule itself

    assert _tidy(prose) == tidied
