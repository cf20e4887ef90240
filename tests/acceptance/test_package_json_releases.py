"""The audit's `package.json` diff reader against the verifier's own comparison, on real releases.

For consecutive releases of published npm packages (fetched from the registry now, never
committed), `package.json` is committed at the older one and changed to the newer one in a real git
repository; the audit's reading of that `git diff` (`changes_build_control`, which sees the diff's
lines only) must agree with the verifier's `jq -cS '[.jest, .babel, .scripts]'` of the two whole
files. Measured: 12 of 12 pairs agree, 4 changing those keys, 8 not (dependency bumps beside a
`jest` table among them).

Runs when `SELFBENCH_ACCEPTANCE` is set (small or all) and the host has `npm` and `jq`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from published import git, npm_tarball

from selfbench._runner_files import PACKAGE_JSON_CONTROL_KEYS, changes_build_control

RELEASES = [
    ("card-validator", "10.0.0", "10.0.1"),
    ("card-validator", "10.0.1", "10.0.2"),
    ("card-validator", "10.0.2", "10.0.3"),
    ("classnames", "2.5.0", "2.5.1"),
    ("commander", "12.0.0", "12.1.0"),
    ("credit-card-type", "10.0.0", "10.0.1"),
    ("credit-card-type", "10.0.1", "10.0.2"),
    ("dotenv", "16.4.5", "16.4.6"),
    ("dotenv", "16.4.6", "16.4.7"),
    ("ms", "2.1.1", "2.1.2"),
    ("ms", "2.1.2", "2.1.3"),
    ("uuid", "9.0.0", "9.0.1"),
]

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.skipif(
        not os.environ.get("SELFBENCH_ACCEPTANCE"),
        reason="set SELFBENCH_ACCEPTANCE=small|all to run",
    ),
    pytest.mark.skipif(
        shutil.which("npm") is None or shutil.which("jq") is None, reason="needs npm and jq"
    ),
]


def _verifier_view(path: Path) -> str:
    """What the verifier compares (`bundle/evidence.py`'s `runner_control_of`)."""
    keys = ", ".join(f".{key}" for key in PACKAGE_JSON_CONTROL_KEYS)
    return subprocess.run(
        ["jq", "-cS", f"[{keys}]", str(path)], check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize(("package", "old", "new"), RELEASES)
def test_the_audit_reads_a_release_s_package_json_change_as_the_verifier_does(
    tmp_path: Path, package: str, old: str, new: str
) -> None:
    before = npm_tarball(tmp_path, package, old) / "package.json"
    after = npm_tarball(tmp_path, package, new) / "package.json"
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shutil.copyfile(before, repo / "package.json")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", old)
    shutil.copyfile(after, repo / "package.json")
    diff = git(repo, "diff", "--binary").encode()
    assert diff.startswith(b"diff --git a/package.json")

    restored = _verifier_view(before) != _verifier_view(after)

    assert changes_build_control("package.json", diff, "jest") is restored
