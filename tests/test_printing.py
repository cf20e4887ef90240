"""What selfbench prints for a person holds no terminal instruction, whatever the repository or
the archive says: control characters are escaped, rich markup is shown as text, and the fields
that name things refuse control characters outright."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from export_helpers import COMMIT, RawMember, author_collected, gzip_tar, members_of
from helpers import definition
from mine_history import History, lines
from selfbench._text import has_control, markup_text, printable
from selfbench.cli import main
from selfbench.cli.draft import render_draft_table
from selfbench.cli.mine import render_table
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.draft.api import DraftResult
from selfbench.export import RunInfo, export_run
from selfbench.mine import MineOptions, mine_repository
from selfbench.progress import PlainReporter

TITLE = "\x1b]0;pwned\x07"
"""Sets a terminal's window title."""
CLEAR = "\x1b[2J"
"""Clears a terminal's screen."""
HOSTILE = f"Add the parser{TITLE}{CLEAR} [bold red]shout[/]"
_SEQUENCES = ("\x1b", "\x07")


def _clean(text: str) -> bool:
    return not any(sequence in text for sequence in _SEQUENCES)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain ä ✓ text", "plain ä ✓ text"),
        (TITLE, "\\x1b]0;pwned\\x07"),
        ("a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f"),
        ("csi\x9b31m", "csi\\x9b31m"),
        ("rtl\u202eevil", "rtl\\u202eevil"),
        ("byte\udcff", "byte\\xff"),
        ("line\u2028sep", "line\\u2028sep"),
    ],
)
def test_printable_escapes_what_a_terminal_acts_on(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert has_control(text) == (text != shown and not text.startswith("byte"))


def test_markup_text_shows_tags_as_text() -> None:
    console = Console(file=io.StringIO(), color_system=None, width=200)
    console.print(markup_text(HOSTILE))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert out == "Add the parser\\x1b]0;pwned\\x07\\x1b[2J [bold red]shout[/]\n"


# --- mine --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_history(tmp_path_factory: pytest.TempPathFactory) -> History:
    history = History.create(tmp_path_factory.mktemp("hostile") / "repo")
    history.commit("Initial commit", {"src/app.py": lines(10), "tests/test_app.py": lines(3, "t")})
    history.merge(
        "feature",
        f"Merge pull request #1 from octo/feature\n\n{HOSTILE}",
        [{"src/app.py": lines(40), "tests/test_app.py": lines(8, "t")}],
    )
    return history


def test_mine_prints_a_hostile_subject_escaped_when_piped(
    hostile_history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mine", str(hostile_history.path), "--no-sessions"]) == 0
    out = capsys.readouterr().out
    assert _clean(out)
    assert "Add the parser\\x1b]0;pwned\\x07\\x1b[2J [bold red]shout[/]" in out


def test_mine_table_shows_a_hostile_subject_as_text(hostile_history: History) -> None:
    mined = mine_repository(hostile_history.path, MineOptions(), reporter=PlainReporter())
    assert any(TITLE in candidate.title for candidate in mined.candidates)
    console = Console(file=io.StringIO(), color_system=None, width=300)
    render_table(mined, console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert _clean(out)
    assert "[bold red]shout[/]" in out


# --- check -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("failToPass", [f"tests/test_widget.py::test_{TITLE}"], "failToPass[0]"),
        ("passToPass", [f"tests/test_widget.py{CLEAR}"], "passToPass[0]"),
        ("repo", f"acme/widgets{TITLE}", "repo"),
    ],
)
def test_check_refuses_control_characters_in_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: object, path: str
) -> None:
    source = tmp_path / "definition.json"
    source.write_text(json.dumps(definition(**{key: value})), encoding="utf-8")
    assert main(["check", str(source), "--json"]) == 1
    issues = json.loads(capsys.readouterr().out)["issues"]
    assert {"path": path, "message": "must not contain control characters"} in issues
    assert main(["check", str(source)]) == 1
    out = capsys.readouterr().out
    assert _clean(out)
    assert f"{path}: must not contain control characters" in out


# --- verify ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> Path:
    root = tmp_path_factory.mktemp("collected")
    task = author_collected(root, sample, "slug-a")
    out = root / "run.tar.gz"
    export_run(
        [task], run=RunInfo("run-7", "https://example.com/acme/slugkit.git", COMMIT), out=out
    )
    return out


def _with_manifest(export: Path, target: Path, **changes: object) -> Path:
    members = members_of(export.read_bytes())
    manifest = json.loads(members[0].data)
    manifest.update(changes)
    members[0] = RawMember("manifest.json", json.dumps(manifest).encode())
    target.write_bytes(gzip_tar(members))
    return target


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"runId": f"run{TITLE}{CLEAR}"}, "runId"),
        (
            {"repository": {"url": f"https://example.com/x{CLEAR}", "commit": COMMIT}},
            "repository.url",
        ),
    ],
)
def test_verify_refuses_control_characters_and_prints_none(
    tmp_path: Path,
    exported: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, object],
    field: str,
) -> None:
    forged = _with_manifest(exported, tmp_path / "forged.tar.gz", **changes)
    assert main(["verify", str(forged)]) == 1
    captured = capsys.readouterr()
    assert _clean(captured.out + captured.err)
    assert f"{field} must not contain control characters" in captured.err


def test_an_error_naming_hostile_text_prints_it_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / f"nothing{TITLE}"
    assert main(["verify", str(missing)]) == 2
    err = capsys.readouterr().err
    assert _clean(err)
    assert "nothing\\x1b]0;pwned\\x07" in err


# --- draft and run -----------------------------------------------------------------------------


def test_the_draft_table_shows_a_hostile_reason_as_text() -> None:
    result = DraftResult("pr-7", "rejected", reason=f"tests/test_x.py::test_a failed: {HOSTILE}")
    console = Console(file=io.StringIO(), color_system=None, width=300)
    console.print(render_draft_table([result]))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert _clean(out)
    assert "[bold red]shout[/]" in out
