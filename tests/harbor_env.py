"""A cached virtual environment holding the real Harbor, for the tests that hand it our bundles.

Harbor needs Python 3.12 and is not a project dependency, so it lives in its own venv under the
git-ignored `.cache/harbor-venv` of the repository, installed from `harbor-constraints.txt`
(harbor and every dependency pinned). It is built once and rebuilt only when that file changes;
a file lock keeps concurrent pytest workers from building it twice or using it half-built.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
from pathlib import Path

__all__ = ["HARBOR_REQUIREMENT", "find_python312", "harbor_venv", "run_in_harbor_venv"]

REPO_ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO_ROOT / "harbor-constraints.txt"
CACHE = REPO_ROOT / ".cache"
VENV = CACHE / "harbor-venv"
HARBOR_REQUIREMENT = "harbor==0.25.0"
_STAMP = ".selfbench-harbor-stamp"
_IS_312 = "import sys; sys.exit(sys.version_info[:2] != (3, 12))"


def _works(python: str) -> bool:
    try:
        result = subprocess.run([python, "-c", _IS_312], capture_output=True, check=False)
    except OSError:
        return False
    return result.returncode == 0


def _pyenv_candidates() -> list[str]:
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return []
    result = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return []
    versions = Path(result.stdout.strip()) / "versions"
    return [str(path) for path in sorted(versions.glob("3.12*/bin/python3.12"), reverse=True)]


def find_python312() -> str:
    """A Python 3.12 that really runs: `python3.12` on PATH (maybe a broken shim), then pyenv's."""
    on_path = shutil.which("python3.12")
    candidates = [on_path] if on_path else []
    candidates.extend(_pyenv_candidates())
    for candidate in candidates:
        if _works(candidate):
            return candidate
    raise RuntimeError("Harbor needs Python 3.12; none found on PATH or in pyenv")


def _wanted_stamp() -> str:
    digest = hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()
    return f"{HARBOR_REQUIREMENT} {digest}\n"


def _is_current() -> bool:
    stamp = VENV / _STAMP
    return stamp.is_file() and stamp.read_text() == _wanted_stamp()


def _build() -> None:
    shutil.rmtree(VENV, ignore_errors=True)
    _run_checked([find_python312(), "-m", "venv", str(VENV)])
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    _run_checked([*pip, "install", "--constraint", str(CONSTRAINTS), HARBOR_REQUIREMENT])
    (VENV / _STAMP).write_text(_wanted_stamp())


def _run_checked(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        message = (
            f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
        )
        raise RuntimeError(message)


def harbor_venv() -> Path:
    """The venv's directory, built first if it is missing or stale."""
    CACHE.mkdir(exist_ok=True)
    with (CACHE / "harbor-venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _is_current():
            _build()
    return VENV


def run_in_harbor_venv(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a program of the venv's `bin/` (`python`, `harbor`) with arguments; capture text."""
    program = harbor_venv() / "bin" / args[0]
    return subprocess.run([str(program), *args[1:]], capture_output=True, text=True, check=False)
