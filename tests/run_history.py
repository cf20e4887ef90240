"""A generated history for `selfbench run`: N squash-merged pull requests, each one easy task.

`generate(parent, n)` writes a Python project (pytest, `src/` layout) whose pull request #i adds
`src/genkit/step_i.py` (about 25 lines) and `tests/test_step_i.py`, which fails before the change
and passes after it. Each request names the functions its tests call, so the coupling check finds
nothing to hold against the drafted instruction. The benchmark and the run tests share it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["generate"]

_GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
    "GIT_AUTHOR_DATE": "1767571200 +0000",
    "GIT_COMMITTER_DATE": "1767571200 +0000",
}


def git(repo: Path, *args: str) -> bytes:
    """Run git in `repo` with a fixed identity and date; its stdout."""
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=_GIT_ENV, check=True, capture_output=True
    ).stdout


_PYPROJECT = """\
[project]
name = "genkit"
version = "0.1.0"
requires-python = ">=3.10"

[project.optional-dependencies]
test = ["pytest"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""


def _module(index: int) -> str:
    lines = [f'"""Step function number {index}."""', "", ""]
    lines.append(f"def step_{index}(values: list[int]) -> list[int]:")
    lines.append(f'    """Scale each value by {index + 2}, then keep those not divisible by 3."""')
    lines.append("    result = []")
    lines.append("    for value in values:")
    lines.append(f"        scaled = value * {index + 2}")
    lines.append("        if scaled % 3 == 0:")
    lines.append("            continue")
    lines.append("        result.append(scaled)")
    lines.append("    return result")
    lines += ["", ""]
    lines.append(f"def total_{index}(values: list[int]) -> int:")
    lines.append(f'    """The sum of step_{index} over the values, zero when empty."""')
    lines.append("    if not values:")
    lines.append("        return 0")
    lines.append(f"    return sum(step_{index}(values))")
    lines += ["", ""]
    lines.append(f"def describe_{index}(values: list[int]) -> str:")
    lines.append('    """A one-line summary."""')
    lines.append(f"    kept = step_{index}(values)")
    lines.append('    return f"{len(kept)} of {len(values)} kept"')
    return "\n".join(lines) + "\n"


def _test(index: int) -> str:
    factor = index + 2
    kept = [v * factor for v in (1, 2, 3, 4) if (v * factor) % 3]
    return (
        f"from genkit.step_{index} import describe_{index}, step_{index}, total_{index}\n\n\n"
        f"def test_step_{index}():\n    assert step_{index}([1, 2, 3, 4]) == {kept}\n\n\n"
        f"def test_total_{index}():\n    assert total_{index}([]) == 0\n"
        f"    assert total_{index}([1, 2, 3, 4]) == {sum(kept)}\n\n\n"
        f"def test_describe_{index}():\n"
        f'    assert describe_{index}([1, 2, 3, 4]) == "{len(kept)} of 4 kept"\n'
    )


def generate(parent: Path, candidates: int, *, config: str | None = None) -> Path:
    """The repository: a base commit, then one squash-merged pull request per candidate.

    `config`, when given, is the base commit's `selfbench.toml`.
    """
    repo = parent / "genkit"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    (repo / "pyproject.toml").write_text(_PYPROJECT)
    if config is not None:
        (repo / "selfbench.toml").write_text(config)
    (repo / "src/genkit").mkdir(parents=True)
    (repo / "src/genkit/__init__.py").write_text('"""Generated steps."""\n')
    (repo / "tests").mkdir()
    (repo / "tests/test_base.py").write_text(
        "import genkit\n\n\ndef test_imports():\n    assert genkit\n"
    )
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "Initial genkit")
    for index in range(1, candidates + 1):
        (repo / f"src/genkit/step_{index}.py").write_text(_module(index))
        (repo / f"tests/test_step_{index}.py").write_text(_test(index))
        git(repo, "add", "--all")
        body = (
            f"Add `step_{index}(values)`: scale each value by {index + 2} and drop the results"
            f" divisible by three; `total_{index}(values)`, their sum (0 when empty); and"
            f' `describe_{index}(values)`, "<kept> of <given> kept".'
        )
        git(repo, "commit", "--quiet", "-m", f"Add step {index} (#{index})\n\n{body}")
    return repo
