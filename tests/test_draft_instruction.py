"""The draft instruction: the pull request's words, without anything the audit warns about."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfbench._sample_history import build_sample_history
from selfbench.audit import prompt_warnings
from selfbench.contract import TaskDefinition
from selfbench.draft.instruction import EMPTY_DRAFT, draft_instruction
from selfbench.draft.split import SplitChange, split_change
from selfbench.mine import CandidateModel, mine_repository
from selfbench.mine.candidate import LinkedRequestModel
from selfbench.patches import parse_patch

_URL = "https://example.com/example/unitkit/pull/4"
_NAMES = (
    "tests/test_temperature.py::test_conversions[100-C-F-212]",
    "tests/test_convert.py::test_dimensions_must_agree",
)


@pytest.fixture(scope="module")
def hard(tmp_path_factory: pytest.TempPathFactory) -> tuple[CandidateModel, SplitChange]:
    repo = build_sample_history(tmp_path_factory.mktemp("history"))
    mined = next(c for c in mine_repository(repo).candidates if c.id == "pr-4")
    candidate = CandidateModel.model_validate(mined.to_json()).model_copy(
        update={"sourceUrl": _URL}
    )
    return candidate, split_change(repo, candidate)


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


def _draft(candidate: CandidateModel, split: SplitChange, title: str, body: str) -> str:
    changed = candidate.model_copy(update={"title": title, "body": body})
    names = (*_NAMES, "tests/test_formatting.py::test_precision_rounds")
    return draft_instruction(changed, split, names)


def test_the_sample_s_hard_change_drafts_clean(hard: tuple[CandidateModel, SplitChange]) -> None:
    candidate, split = hard

    prompt = draft_instruction(candidate, split, _NAMES)

    assert prompt == (
        "Convert temperatures, and any two units by name.\n\n"
        "Temperatures differ by an offset as well as a factor, so they get their own module: "
        "`convert_temperature(value, source, target)` and `temperature_units()` "
        "(kelvin, Celsius, Fahrenheit, Rankine; nothing below absolute zero). A new "
        "`convert(value, source, target)` works for any dimension and refuses to mix dimensions; "
        "`dimension_of` names a unit's dimension. Degrees are formatted with the degree sign. "
        "Bumps the version to 0.2.0."
    )
    assert "tests/test_temperature.py" in candidate.body  # the sentence naming them went
    assert _warnings(candidate, split, prompt) == ()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Add kelvin.\n\nFixes #12", "Add kelvin."),
        ("Add kelvin (see #4).", "Add kelvin."),
        ("Add kelvin, follow-up to PR 4 and pull request #4.", "Add kelvin, follow-up to and."),
        (f"Add kelvin. Discussed in {_URL}.", "Add kelvin."),
        ("Add kelvin. Details: https://example.com/o/r/issues/3", "Add kelvin."),
        ("Add kelvin, see https://en.wikipedia.org/wiki/Kelvin", None),
        ("Add kelvin, as {base7} did.", "Add kelvin, as did."),
        ("Add kelvin in src/unitkit/temperature.py.", "Add kelvin in the relevant file."),
        ("Add kelvin in `temperature.py`.", "Add kelvin in the relevant file."),
        ("Add kelvin. Tested by test_conversions.", "Add kelvin."),
        ("Add kelvin. See tests/test_convert.py for cases.", "Add kelvin."),
        ("Add kelvin.\n\n- [x] Tests added\n- [ ] Docs", "Add kelvin."),
        ("Add kelvin.<!-- Describe your change -->\n\nCo-authored-by: A <a@b.c>", "Add kelvin."),
        ("Add kelvin.\n\n```\nconvert(0, 'C', 'K')\n```", None),
        (
            "- add kelvin\n- run tests/test_temperature.py\n- add rankine",
            "- add kelvin\n- add rankine",
        ),
    ],
)
def test_what_leaks_is_removed_and_the_audit_finds_nothing(
    hard: tuple[CandidateModel, SplitChange], body: str, expected: str | None
) -> None:
    candidate, split = hard
    body = body.replace("{base7}", candidate.baseCommit[:9])

    prompt = _draft(candidate, split, "Temperatures", body)

    assert prompt == f"Temperatures.\n\n{body if expected is None else expected}"
    assert _warnings(candidate, split, prompt) == ()


def test_a_linked_session_request_follows_the_pull_request(
    hard: tuple[CandidateModel, SplitChange],
) -> None:
    candidate, split = hard
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

    assert draft_instruction(changed, split, _NAMES) == (
        "Convert temperatures, and any two units by name."
    )
    assert draft_instruction(twice, split, _NAMES) == (
        "Convert temperatures, and any two units by name.\n\nHandle kelvin too."
    )


def test_nothing_left_gives_the_empty_draft(hard: tuple[CandidateModel, SplitChange]) -> None:
    candidate, split = hard

    prompt = _draft(candidate, split, "Fix #4", "See tests/test_convert.py")

    assert prompt == EMPTY_DRAFT
    assert _warnings(candidate, split, prompt) == ()


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
    hard: tuple[CandidateModel, SplitChange], title: str, body: str, hexes: int
) -> None:
    candidate, split = hard
    body = body.replace("#4", f"#4 {candidate.baseCommit[:hexes].upper()} ")

    prompt = _draft(candidate, split, title, body)

    assert prompt.strip()
    assert _warnings(candidate, split, prompt) == ()
