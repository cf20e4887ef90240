"""`selfbench.toml`: parsed strictly, read from the base commit, overlaid by `--config`."""

from __future__ import annotations

from pathlib import Path

import pytest

from mine_history import History
from selfbench._git import git
from selfbench.draft.config import (
    DraftConfig,
    load_config,
    merge_configs,
    parse_config,
    repo_config,
)
from selfbench.errors import DraftError

_FULL = b"""\
workdir = "packages/app"
toolchains = ["node", "bun"]
setupCommand = "npm ci"
testCommand = "npx jest --ci {tests}"
runner = "jest"
testPaths = ["src/**/*.test.ts"]
exclude = ["src/slow/**"]
passToPassCap = 5
reruns = 2

[timeouts]
setupSeconds = 1800

[resources]
cpus = 2
memoryMb = 4096
"""


def test_every_key_is_read() -> None:
    config = parse_config(_FULL, source="selfbench.toml")

    assert config.workdir == "packages/app"
    assert config.toolchains == ("node", "bun")
    assert config.setupCommand == "npm ci"
    assert config.testCommand == "npx jest --ci {tests}"
    assert config.runner == "jest"
    assert config.testPaths == ("src/**/*.test.ts",)
    assert config.exclude == ("src/slow/**",)
    assert (config.passToPassCap, config.reruns) == (5, 2)
    assert config.timeouts is not None
    assert config.timeouts.setupSeconds == 1800
    assert config.timeouts.agentSeconds is None
    assert config.resources is not None
    assert config.resources.cpus == 2


def test_an_empty_file_overrides_nothing() -> None:
    assert parse_config(b"", source="selfbench.toml") == DraftConfig()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo = 1", "selfbench.toml: unknown key 'foo'"),
        ("[timeouts]\nbogus = 1", "selfbench.toml: unknown key 'timeouts.bogus'"),
        ('reruns = "3"', "selfbench.toml: reruns: must be an integer"),
        ("reruns = true", "selfbench.toml: reruns: must be an integer"),
        ("reruns = 0", "selfbench.toml: reruns: must be at least 1"),
        ("passToPassCap = -1", "selfbench.toml: passToPassCap: must be at least 0"),
        (
            'runner = "mocha"',
            (
                "selfbench.toml: runner: must be one of pytest, unittest, jest, vitest, node-test, "
                "go, cargo, bun"
            ),
        ),
        (
            'toolchains = ["java"]',
            (
                "selfbench.toml: toolchains: unknown toolchain 'java' "
                "(one of uv, bun, go, node, python, rust)"
            ),
        ),
        ("toolchains = []", "selfbench.toml: toolchains: must name at least one toolchain"),
        ("testPaths = [1]", "selfbench.toml: testPaths[0]: must be a string"),
        ('workdir = ""', "selfbench.toml: workdir: must not be empty"),
        ('workdir = "../elsewhere"', "selfbench.toml: workdir: leaves the repository"),
        ("timeouts = 3", "selfbench.toml: timeouts: must be a table"),
        ("[resources]\ncpus = 0", "selfbench.toml: resources.cpus: must be more than 0"),
        (
            'testCommand = "pytest"',
            'selfbench.toml: testCommand: test command must contain "{tests}" exactly once',
        ),
        (
            "testCommand = 'pytest \"{tests}\"'",
            (
                'selfbench.toml: testCommand: test command must expand "{tests}" as an unquoted '
                "shell argument list"
            ),
        ),
        ("x = ", "selfbench.toml: malformed TOML: Invalid value (at end of document)"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_and_key(text: str, message: str) -> None:
    with pytest.raises(DraftError) as caught:
        parse_config(text.encode(), source="selfbench.toml")

    assert str(caught.value) == message
    assert caught.value.exit_code == 2


def test_several_problems_are_several_sorted_lines() -> None:
    with pytest.raises(DraftError) as caught:
        parse_config(b"zeta = 1\nreruns = 0\nalpha = 2\n", source="x.toml")

    assert caught.value.lines == (
        "x.toml: reruns: must be at least 1",
        "x.toml: unknown key 'alpha'",
        "x.toml: unknown key 'zeta'",
    )


def test_bytes_that_are_not_utf8_are_refused() -> None:
    with pytest.raises(DraftError) as caught:
        parse_config(b'runner = "\xff"', source="selfbench.toml")

    assert str(caught.value) == "selfbench.toml: not UTF-8"


def test_load_config_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "draft.toml"
    path.write_text("reruns = 5\nnope = 1\n")

    with pytest.raises(DraftError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: unknown key 'nope'"
    path.write_text("reruns = 5\n")
    assert load_config(path).reruns == 5
    with pytest.raises(DraftError) as missing:
        load_config(tmp_path / "absent.toml")
    assert str(missing.value) == (
        f"cannot read {tmp_path / 'absent.toml'}: No such file or directory"
    )


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History.create(tmp_path / "repo")


def test_the_repository_file_is_read_at_the_commit_not_the_working_tree(history: History) -> None:
    first = history.commit("one", {"selfbench.toml": "reruns = 2\n"})
    second = history.commit("two", {"selfbench.toml": "reruns = 4\n"})
    (history.path / "selfbench.toml").write_text("bogus = 1\n")

    one, two = repo_config(history.path, first), repo_config(history.path, second)

    assert one is not None
    assert one.reruns == 2
    assert two is not None
    assert two.reruns == 4


def test_a_repository_without_the_file_has_none(history: History) -> None:
    commit = history.commit("one", {"README.md": "hi\n", "sub/selfbench.toml": "bogus = 1\n"})

    assert repo_config(history.path, commit) is None


def test_a_bad_repository_file_names_it(history: History) -> None:
    commit = history.commit("one", {"selfbench.toml": "[draft]\nreruns = 2\n"})

    with pytest.raises(DraftError) as caught:
        repo_config(history.path, commit)
    assert str(caught.value) == "selfbench.toml: unknown key 'draft'"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reruns = 1000000", "selfbench.toml: reruns: must be at most 10"),
        (
            "[timeouts]\nsetupSeconds = 9007199254740992",
            "selfbench.toml: timeouts.setupSeconds: must be at most 21600",
        ),
        (
            "[timeouts]\ntestsSeconds = 21601",
            "selfbench.toml: timeouts.testsSeconds: must be at most 21600",
        ),
        ("[resources]\ncpus = 1e9", "selfbench.toml: resources.cpus: must be at most 1024"),
        (
            "[resources]\nmemoryMb = 4398046511104",
            "selfbench.toml: resources.memoryMb: must be at most 1048576",
        ),
        (
            "[resources]\nstorageMb = 4398046511104",
            "selfbench.toml: resources.storageMb: must be at most 16777216",
        ),
        ("passToPassCap = 1000000", "selfbench.toml: passToPassCap: must be at most 10000"),
    ],
)
def test_a_repository_file_asking_for_unbounded_work_is_refused_with_the_cap(
    history: History, text: str, message: str
) -> None:
    """Red team: `reruns = 1000000` and 2^53-second timeouts kept `draft` running."""
    commit = history.commit("one", {"selfbench.toml": f"{text}\n"})

    with pytest.raises(DraftError) as caught:
        repo_config(history.path, commit)
    assert str(caught.value) == message


def test_the_caps_themselves_are_accepted() -> None:
    text = b"reruns = 10\npassToPassCap = 10000\n[timeouts]\nagentSeconds = 21600\n"
    config = parse_config(text, source="selfbench.toml")
    assert (config.reruns, config.passToPassCap) == (10, 10000)


def test_a_symbolic_link_is_not_followed(history: History) -> None:
    (history.path / "elsewhere.toml").write_text("reruns = 2\n")
    (history.path / "selfbench.toml").symlink_to("elsewhere.toml")
    history.git("add", "elsewhere.toml", "selfbench.toml")
    commit = history.commit("link", {})

    with pytest.raises(DraftError) as caught:
        repo_config(history.path, commit)
    assert str(caught.value) == f"selfbench.toml: not a regular file at {commit[:12]}"


def test_a_directory_by_that_name_is_refused(history: History) -> None:
    commit = history.commit("dir", {"selfbench.toml/x": "y\n"})

    with pytest.raises(DraftError) as caught:
        repo_config(history.path, commit)
    assert str(caught.value) == f"selfbench.toml: not a regular file at {commit[:12]}"
    assert git(history.path, "cat-file", "-t", commit) == b"commit\n"


def test_the_command_line_file_overlays_the_repository_s_key_by_key() -> None:
    repo = parse_config(
        b'runner = "pytest"\nreruns = 2\n[timeouts]\nsetupSeconds = 100\ntestsSeconds = 50\n',
        source="selfbench.toml",
    )
    given = parse_config(b"reruns = 5\n[timeouts]\ntestsSeconds = 70\n", source="given.toml")

    merged = merge_configs(repo, given)

    assert merged is not None
    assert (merged.runner, merged.reruns) == ("pytest", 5)
    assert merged.timeouts is not None
    assert (merged.timeouts.setupSeconds, merged.timeouts.testsSeconds) == (100, 70)
    assert merge_configs(None, given) is given
    assert merge_configs(repo, None) is repo
    assert merge_configs(None, None) is None
