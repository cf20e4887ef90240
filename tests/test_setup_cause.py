"""`environments.local.setup_cause`: a failed setup's reason names its failure, in one line of
its output."""

from __future__ import annotations

import pytest

from selfbench.environments.local.setup_cause import known_hint, setup_cause

PNPM_FAILED = (
    'ERR_PNPM_META_FETCH_FAIL GET https://npm.mirror.example/argparse: Value of "this" must be '
    "of type URLSearchParams"
)
PNPM_OLD = (
    " WARN  GET https://npm.mirror.example/argparse/-/argparse-2.0.1.tgz error "
    f"(ERR_INVALID_THIS). Will retry in 10 seconds. 2 retries left.\n {PNPM_FAILED}\n"
)
UV_FAILED = "\u00d7 No solution found when resolving dependencies:"
UV_OUTPUT = f"Resolved 3 packages\n  {UV_FAILED}\n  \u2570\u2500\u25b6 Because x was not found\n"
NPM_OUTPUT = "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://r/x\nselfbench: setup\n"


@pytest.mark.parametrize(
    ("output", "cause"),
    [
        (PNPM_OLD, PNPM_FAILED),
        (NPM_OUTPUT, "npm ERR! 404 Not Found - GET https://r/x"),
        (UV_OUTPUT, UV_FAILED),
        (
            "ERROR: No matching distribution found for pkg==9.9\n",
            "ERROR: No matching distribution found for pkg==9.9",
        ),
        (
            "Traceback (most recent call last):\nModuleNotFoundError: No module named 'sh'\n",
            "ModuleNotFoundError: No module named 'sh'",
        ),
        ("bash: line 1: poetry: command not found\n", "bash: line 1: poetry: command not found"),
        ("fatal: not a git repository\n", "fatal: not a git repository"),
        ("all went well\nselfbench: setup: exit 3\n", None),
        ("", None),
        ("error: " + "x" * 300 + "\n", "error: " + "x" * 192 + "\u2026"),
        ("error: a\x1b[31m red\n", "error: a\\x1b[31m red"),
    ],
    ids=["pnpm", "npm", "uv", "pip", "import", "shell", "git", "ours", "empty", "long", "escape"],
)
def test_the_cause_is_the_last_line_that_reads_as_an_error(output: str, cause: str | None) -> None:
    """selfbench's own lines are never the cause; a long line is cut to 200 characters, and a
    terminal's control codes are escaped."""
    assert setup_cause(output) == cause


@pytest.mark.parametrize(
    ("output", "start"),
    [
        (PNPM_OLD, "a pnpm older than 8 cannot fetch on the image's Node 22"),
        ("ModuleNotFoundError: No module named 'pkg_resources'", "the project imports pkg_re"),
        ("npm ERR! 404", ""),
    ],
)
def test_a_known_failure_says_what_to_do(output: str, start: str) -> None:
    hint = known_hint(output)
    assert (hint or "").startswith(start)
    assert (hint is None) == (not start)
