"""`export --sign KEY` and `verify --key KEY.pub` (and `extract`'s and `review`'s `--key`): SSH
signatures (`ssh-keygen -Y`) over the export's bytes, so an "accepted" forged with every digest and
binding redone is refused."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from export_helpers import RawMember, author_collected, gzip_tar, members_of, report
from selfbench.artifacts.validation import BUNDLE_BINDING
from selfbench.bundle import layout
from selfbench.cli import main
from selfbench.demo import SampleRepository, build_sample_repository
from selfbench.export import (
    REVIEW_FILE,
    RunInfo,
    export_run,
    sign_export,
    signature_path,
    verify_export,
)

TASK = "slug-a"
MEMBER = f"tasks/{TASK}.tar.gz"


def _key(directory: Path, name: str) -> Path:
    key = directory / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("keys")
    return _key(directory, "owner"), _key(directory, "other")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SampleRepository:
    return build_sample_repository(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory, sample: SampleRepository) -> Path:
    return author_collected(tmp_path_factory.mktemp("collected"), sample, TASK)


def _export_args(out: Path, collected: Path, verdicts: Path) -> list[str]:
    args = ["export", str(collected), "--run-id", "run-1", "--out", str(out)]
    args += ["--repository-url", "https://example.com/acme/slugkit.git"]
    return [*args, "--repository-commit", "c0ffee" + "0" * 34, "--validation", str(verdicts)]


def _accepted_forged(export: Path, target: Path) -> None:
    """`export` with its one task's verdict (none) rewritten as "accepted", bound to the right
    bundle, every digest redone, and the owner's signature kept beside it."""
    outer = members_of(export.read_bytes())
    manifest = json.loads(outer[0].data)
    inner = {member.name: member for member in members_of(outer[2].data)}
    review = f"harbor-task/{REVIEW_FILE}"
    record = json.loads(inner[review].data)
    bundle = hashlib.sha256(inner[f"harbor-task/{layout.MANIFEST}"].data).hexdigest()
    record["validation"] = {**report(TASK, accepted=True), BUNDLE_BINDING: bundle}
    inner[review] = RawMember(review, json.dumps(record, indent=2).encode() + b"\n")
    task = gzip_tar(list(inner.values()))
    manifest["tasks"][0]["sha256"] = hashlib.sha256(task).hexdigest()
    outer[0] = RawMember("manifest.json", json.dumps(manifest, indent=2).encode())
    outer[2] = RawMember(MEMBER, task)
    target.write_bytes(gzip_tar(outer))
    signature_path(target).write_bytes(signature_path(export).read_bytes())


def test_a_signed_export_verifies_with_its_key_and_not_with_another(
    tmp_path: Path,
    collected: Path,
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner, other = keys
    out = tmp_path / "run.tar.gz"
    verdicts = tmp_path / "validation.json"
    verdicts.write_text(json.dumps([report(TASK, accepted=True)]))
    args = _export_args(out, collected, verdicts)
    assert main([*args, "--sign", str(owner)]) == 0
    assert capsys.readouterr().out.endswith(f"Signed: {out}.sig\n")
    assert main(["verify", str(out), "--key", f"{owner}.pub"]) == 0
    assert capsys.readouterr().out == (
        f"Verified {out}: run run-1, 1 tasks (candidates: easy 0, medium 1, hard 0); "
        f"signed by the key {owner}.pub\n"
    )
    assert main(["verify", str(out), "--key", f"{other}.pub"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out}: run.tar.gz.sig does not verify with {other}.pub (")


def test_a_forged_accepted_verifies_unsigned_but_not_signed(
    tmp_path: Path,
    collected: Path,
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    owner, _ = keys
    out = tmp_path / "run.tar.gz"
    run = RunInfo("run-1", "https://example.com/acme/slugkit.git", "c0ffee" + "0" * 34)
    export_run([collected], run=run, out=out)  # exported with no verdict
    sign_export(out, owner)
    forged = tmp_path / "forged.tar.gz"
    _accepted_forged(out, forged)
    assert verify_export(forged).manifest.accepted_count == 1  # consistent without a signature
    assert main(["verify", str(forged), "--key", f"{owner}.pub"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {forged}: forged.tar.gz.sig does not verify with {owner}.pub (")
    assert main(["verify", str(out), "--key", f"{owner}.pub"]) == 0


def test_verify_with_a_key_wants_a_signature(
    tmp_path: Path, collected: Path, keys: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    owner, _ = keys
    out = tmp_path / "run.tar.gz"
    verdicts = tmp_path / "validation.json"
    verdicts.write_text(json.dumps([report(TASK, accepted=True)]))
    args = _export_args(out, collected, verdicts)
    assert main(args) == 0
    capsys.readouterr()
    assert main(["verify", str(out), "--key", f"{owner}.pub"]) == 1
    assert capsys.readouterr().err == (
        f"error: {out}: no signature (run.tar.gz.sig) to check with {owner}.pub\n"
    )
    assert main(["verify", str(out), "--key", str(owner)]) == 2  # the private key: not public
    assert "not an SSH public key" in capsys.readouterr().err


# --- extract and review take the same --key ------------------------------------------------------


@pytest.fixture(scope="module")
def signed(
    tmp_path_factory: pytest.TempPathFactory, collected: Path, keys: tuple[Path, Path]
) -> tuple[Path, Path]:
    """An export signed by the owner's key, and the same export with its "accepted" forged (the
    owner's signature beside it)."""
    owner, _ = keys
    directory = tmp_path_factory.mktemp("signed")
    out = directory / "run.tar.gz"
    run = RunInfo("run-1", "https://example.com/acme/slugkit.git", "c0ffee" + "0" * 34)
    export_run([collected], run=run, out=out)
    sign_export(out, owner)
    forged = directory / "forged.tar.gz"
    _accepted_forged(out, forged)
    return out, forged


def test_extract_with_a_key_refuses_what_does_not_verify_and_writes_nothing(
    tmp_path: Path,
    signed: tuple[Path, Path],
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Red team: a forged "accepted" beside the owner's signature extracted as a sound task."""
    out, forged = signed
    owner, other = keys
    target = tmp_path / "tasks"
    refusals = [
        (forged, owner, f"{forged}: forged.tar.gz.sig does not verify with {owner}.pub ("),
        (out, other, f"{out}: run.tar.gz.sig does not verify with {other}.pub ("),
    ]
    for export, key, message in refusals:
        assert main(["extract", str(export), "--out", str(target), "--key", f"{key}.pub"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {message}")
        assert err.count("\n") == 1
        assert not target.exists()
    unsigned = tmp_path / "unsigned.tar.gz"
    unsigned.write_bytes(out.read_bytes())
    assert main(["extract", str(unsigned), "--out", str(target), "--key", f"{owner}.pub"]) == 2
    assert capsys.readouterr().err == (
        f"error: {unsigned}: no signature (unsigned.tar.gz.sig) to check with {owner}.pub\n"
    )
    assert not target.exists()

    assert main(["extract", str(out), "--out", str(target), "--key", f"{owner}.pub"]) == 0
    assert capsys.readouterr().out.startswith(f"Extracted 1 task into {target}\n")
    assert (target / TASK / "task.toml").is_file()


def test_review_with_a_key_refuses_what_does_not_verify_and_serves_what_does(
    tmp_path: Path,
    signed: tuple[Path, Path],
    keys: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    out, forged = signed
    owner, other = keys
    clean = tmp_path / "clean.tar.gz"
    for export, key in ((forged, owner), (out, other)):
        argv = ["review", str(export), "--out", str(clean), "--key", f"{key}.pub"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"error: {export}: {export.name}.sig does not verify with {key}.pub ("
        )
        assert err.count("\n") == 1
        assert not clean.exists()

    argv = ["review", str(out), "--out", str(clean), "--key", f"{owner}.pub"]
    command = [sys.executable, "-m", "selfbench", *argv]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            first = server.stdout.readline()
            assert first.startswith(f"Reviewing {out} at http://127.0.0.1:"), first
            with urllib.request.urlopen(first.split(" at ", 1)[1].strip()) as page:  # noqa: S310
                assert page.status == 200
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    assert server.returncode == 0
