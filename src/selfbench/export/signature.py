"""SSH signatures of an export: `FILE.sig` beside `FILE`, made and checked by `ssh-keygen -Y`.

The signature covers the export's bytes, so whoever holds the public key can tell an export
its owner wrote from one changed since (a validation record turned "accepted", with every
digest redone, verifies as an archive but not as signed). The namespace is `selfbench`, so a
signature made for another purpose (git commits use `git`, files `file`) does not count; the
signer is checked against an allowed-signers file made from the one public key given.
"""

from __future__ import annotations

from pathlib import Path

from selfbench._fs import open_file, write_atomic
from selfbench._scratch import scratch_directory
from selfbench.environments.process import Completed, run_captured
from selfbench.errors import ArchiveError, ExportError, translating

__all__ = ["NAMESPACE", "sign_export", "signature_path", "verify_signature"]

NAMESPACE = "selfbench"
_SIGNER = "selfbench-export"
"""The principal the allowed-signers file names for the key given to verify."""


def signature_path(export: Path) -> Path:
    """Where an export's signature is: `FILE.sig` beside `FILE`."""
    return export.with_name(f"{export.name}.sig")


def _last_line(output: bytes) -> str:
    lines = output.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no message"


def _ssh_keygen(arguments: list[str], data: Path) -> Completed[bytes]:
    """Run `ssh-keygen -Y` on the export's bytes (never read through a link)."""
    with open_file(data, error=ExportError) as stdin, translating(ExportError, "run ssh-keygen"):
        return run_captured(["ssh-keygen", "-Y", *arguments], stdin=stdin)


def sign_export(export: Path, key: Path) -> Path:
    """Sign `export` with the SSH private key at `key`; write `FILE.sig` atomically; return it.

    Raises:
        ExportError: ssh-keygen cannot be run, or cannot sign with `key`.
    """
    result = _ssh_keygen(["sign", "-q", "-f", str(key), "-n", NAMESPACE], export)
    if result.returncode != 0 or not result.stdout:
        raise ExportError(f"cannot sign {export} with {key}: {_last_line(result.stderr)}")
    target = signature_path(export)
    with translating(ExportError, f"write {target}"):
        write_atomic(target, result.stdout)
    return target


def _public_key(key: Path) -> str:
    with translating(ExportError, f"read {key}"):
        text = key.read_text(encoding="utf-8", errors="replace").strip()
    fields = text.split()
    if len(fields) < 2 or "\n" in text or not fields[0].startswith(("ssh-", "ecdsa-", "sk-")):
        raise ExportError(f"{key}: not an SSH public key (one line: TYPE BASE64 [COMMENT])")
    return f"{fields[0]} {fields[1]}"


def verify_signature(export: Path, key: Path) -> None:
    """Check `FILE.sig` against `export` and the SSH public key at `key`.

    Raises:
        ArchiveError: there is no signature, or it does not verify with `key`.
        ExportError: `key` is not a public key, or ssh-keygen cannot be run.
    """
    public = _public_key(key)
    signature = signature_path(export)
    if not signature.is_file():
        raise ArchiveError(f"{export}: no signature ({signature.name}) to check with {key}")
    with scratch_directory("selfbench-signers-") as scratch:
        signers = scratch / "allowed_signers"
        signers.write_text(f'{_SIGNER} namespaces="{NAMESPACE}" {public}\n', encoding="utf-8")
        arguments = ["verify", "-f", str(signers), "-I", _SIGNER, "-n", NAMESPACE]
        result = _ssh_keygen([*arguments, "-s", str(signature)], export)
    if result.returncode != 0:
        why = _last_line(result.stderr or result.stdout)
        raise ArchiveError(f"{export}: {signature.name} does not verify with {key} ({why})")
