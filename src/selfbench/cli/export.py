"""The `export`, `verify`, `extract` and `review` commands of the `selfbench` command line.

`verify` is a checker: exit 0 verified, 1 refused (the one-line reason on stderr), 2 when the
file cannot be read at all. `extract` and `review` need a sound export: a refused archive is
rejected input for them, exit 2. Each of the three takes `--key KEY.pub` to require the export's
SSH signature by that key, checked before anything else (`export/signature.py`).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from selfbench._text import printable
from selfbench.cli.common import add_json_option, print_json, rejected
from selfbench.errors import EXIT_OK
from selfbench.progress import choose_reporter

__all__ = ["add_export_commands"]


def _export(args: argparse.Namespace) -> int:
    from selfbench.export import RunInfo, export_run, sign_export

    run = RunInfo(args.run_id, args.repository_url, args.repository_commit)
    result = export_run(
        [Path(item) for item in args.inputs],
        run=run,
        out=Path(args.out),
        validation=[Path(item) for item in args.validation] if args.validation else None,
        reporter=choose_reporter(),
        require_validation=True,
        skip_unvalidated=args.skip_unvalidated,
    )
    left_out = [{"taskId": item.task_id, "reason": item.reason} for item in result.left_out]
    signature = sign_export(result.path, Path(args.sign)) if args.sign else None
    if args.json:
        print_json(
            {
                "export": str(result.path),
                "manifest": result.manifest.to_json(),
                "leftOut": left_out,
                **({"signature": str(signature)} if signature else {}),
            }
        )
        return EXIT_OK
    total = result.manifest.accepted_count + len(left_out)
    sys.stdout.write(
        f"Exported {result.manifest.accepted_count} of {total} tasks to {result.path}\n"
    )
    for item in result.left_out:
        sys.stdout.write(printable(f"left out {item.task_id}: {item.reason}") + "\n")
    if signature is not None:
        sys.stdout.write(printable(f"Signed: {signature}") + "\n")
    return EXIT_OK


def _add_key_option(parser: Any, *, before: str | None = None) -> None:
    """`--key KEY.pub`: FILE.sig must be this public key's signature of FILE, checked before
    what the command does (`before` says what, in its help)."""
    shown = "also require FILE.sig, an SSH signature of FILE by this public key"
    parser.add_argument(
        "--key", metavar="KEY.pub", help=shown + (f" (checked before {before})" if before else "")
    )


def _check_signature(args: argparse.Namespace) -> None:
    """With `--key`, refuse FILE unless FILE.sig is that key's signature of it.

    Raises:
        ArchiveError: no signature, or one that does not verify with the key.
        ExportError: the key is not a public key, or ssh-keygen cannot be run.
    """
    if args.key:
        from selfbench.export import verify_signature

        verify_signature(Path(args.file), Path(args.key))


def _verify(args: argparse.Namespace) -> int:
    from selfbench.errors import ArchiveError
    from selfbench.export import verify_export

    try:
        _check_signature(args)
        verified = verify_export(Path(args.file))
    except ArchiveError as exc:
        if args.json:
            print_json({"verified": False, "problem": str(exc)})
        return rejected(str(exc))
    manifest = verified.manifest
    if args.json:
        signed = {"signedBy": args.key} if args.key else {}
        print_json({"verified": True, "manifest": manifest.to_json(), **signed})
        return EXIT_OK
    easy, medium, hard = manifest.candidate_counts
    line = (
        f"Verified {args.file}: run {manifest.run_id}, {manifest.accepted_count} tasks "
        f"(candidates: easy {easy}, medium {medium}, hard {hard})"
    )
    if args.key:
        line += f"; signed by the key {args.key}"
    sys.stdout.write(f"{printable(line)}\n")
    return EXIT_OK


def _extract(args: argparse.Namespace) -> int:
    from selfbench.bundle.local_build import LocalBuild, check_base_image
    from selfbench.export import extract_export

    out = Path(args.out)
    base_image = None if args.base_image is None else check_base_image(args.base_image)
    local = LocalBuild(base_image=base_image, build_secrets=args.build_secrets)
    _check_signature(args)  # before `out` is made: a refused export writes nothing
    verified = extract_export(Path(args.file), out=out, local=local)
    if args.json:
        extracted = [entry.task_id for entry in verified.manifest.tasks]
        print_json({"extracted": extracted, "out": str(out)})
        return EXIT_OK
    count = verified.manifest.accepted_count
    sys.stdout.write(f"Extracted {count} task{'s' if count != 1 else ''} into {out}\n")
    sys.stdout.write(f"Run them with Harbor: harbor run --path {out} --agent oracle\n")
    return EXIT_OK


def _interrupt(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM stops the server like Ctrl-C does, so its temporary files are removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _review(args: argparse.Namespace) -> int:
    from selfbench.review import open_review

    clean_out = Path(args.out) if args.out else None
    _check_signature(args)  # before anything is read into the page or served
    with (
        _stopped_by_sigterm(),
        open_review(Path(args.file), clean_out=clean_out, port=args.port) as server,
    ):
        sys.stdout.write(f"Reviewing {args.file} at {server.url}\n")
        sys.stdout.write(f"A clean export is written to {server.clean_out}; Ctrl-C stops.\n")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    return EXIT_OK


def add_export_commands(commands: Any) -> None:
    """Register the four commands on the CLI's subparsers."""
    export = commands.add_parser("export", help="pack bundles into one verified run export")
    export.add_argument("inputs", nargs="+", metavar="BUNDLE_OR_TASK_DIR")
    export.add_argument("--run-id", required=True, metavar="ID")
    export.add_argument("--repository-url", required=True, metavar="URL")
    export.add_argument("--repository-commit", required=True, metavar="SHA")
    export.add_argument("--out", required=True, metavar="FILE")
    export.add_argument(
        "--validation",
        action="append",
        metavar="REPORT.json",
        help="`selfbench validate --json` output (repeatable; a later report on a task wins;"
        " default: the validation.json validate wrote beside each task)",
    )
    export.add_argument(
        "--skip-unvalidated",
        action="store_true",
        help="leave out tasks with no accepted validation report (default: refuse them)",
    )
    export.add_argument(
        "--sign",
        metavar="KEY",
        help="sign the export with this SSH private key (ssh-keygen -Y, namespace selfbench):"
        " FILE.sig beside it",
    )
    add_json_option(export)
    export.set_defaults(run=_export)

    verify = commands.add_parser("verify", help="check an export's digests, counts and members")
    verify.add_argument("file", metavar="FILE")
    _add_key_option(verify)
    add_json_option(verify)
    verify.set_defaults(run=_verify)

    extract = commands.add_parser("extract", help="unpack an export into a Harbor tasks dir")
    extract.add_argument("file", metavar="FILE")
    extract.add_argument("--out", required=True, metavar="DIR")
    _add_key_option(extract, before="anything is written")
    extract.add_argument(
        "--base-image",
        metavar="IMAGE",
        help="start both Dockerfiles of each task from IMAGE instead of the bundle's base"
        " (an image built offline; see the README)",
    )
    extract.add_argument(
        "--build-secrets",
        action="store_true",
        help="write a docker-compose.yaml beside each Dockerfile that hands a local Docker or"
        " Podman build the host's CA bundle and proxy settings (kept in no layer)",
    )
    add_json_option(extract)
    extract.set_defaults(run=_extract)

    review = commands.add_parser("review", help="review an export in a local web page")
    review.add_argument("file", metavar="FILE")
    review.add_argument(
        "--out", metavar="FILE", help="the clean export (default NAME.clean.tar.gz)"
    )
    review.add_argument("--port", type=int, default=0, help="default 0: a free port")
    _add_key_option(review, before="anything is served")
    review.set_defaults(run=_review)
