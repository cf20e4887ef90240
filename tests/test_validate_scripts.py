"""The scripts the local environment runs inside its sandbox are valid bash and shellcheck-clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from selfbench.environments.local import _scripts


@pytest.mark.parametrize("name", _scripts.__all__)
def test_script_passes_bash_n_and_shellcheck(tmp_path: Path, name: str) -> None:
    script = tmp_path / f"{name.lower()}.sh"
    script.write_text("#!/bin/bash" + getattr(_scripts, name), encoding="utf-8")
    syntax = subprocess.run(
        ["bash", "-n", str(script)], capture_output=True, text=True, check=False
    )
    assert (syntax.returncode, syntax.stderr) == (0, "")
    shellcheck = shutil.which("shellcheck")
    assert shellcheck is not None, "shellcheck is required (apt-get install shellcheck)"
    result = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")
