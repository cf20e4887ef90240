"""Builders for the export and review tests: real authored tasks, collected, and raw archives.

Tasks are authored from the demo's sample repository through `submit_task`, compiled and packed
by `collect_authoring` (the layout `export` takes), so every archive under test is real. Hostile
archives are written with `tarfile` directly, member by member, so they can hold anything.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfbench.artifacts.quality_record import (
    Ablation,
    AddedDependency,
    Dependencies,
    GoldPart,
    InstructionCheck,
    InterfaceItem,
    Mutation,
    PassToPassBasis,
    QualityRecord,
    SurvivingMutant,
    Verdict,
)
from selfbench.collect import collect_authoring
from selfbench.demo import SampleRepository, sample_arguments
from selfbench.export.manifest import task_member_name
from selfbench.submit import submit_task

__all__ = [
    "COMMIT",
    "HOSTILE_GOLD",
    "HOSTILE_PROMPT",
    "RawMember",
    "author_collected",
    "gzip_tar",
    "members_of",
    "outer_archive",
    "quality_record",
    "report",
]

COMMIT = "c0ffee" + "0" * 34
HOSTILE_PROMPT = (
    '<script>window.__pwned = "prompt"</script><img src=x onerror="window.__pwned=1">\n'
    "Make `slugify` transliterate accented text </pre><b>now</b>."
)
HOSTILE_GOLD = (
    "diff --git a/src/slugkit/notes.html b/src/slugkit/notes.html\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/src/slugkit/notes.html\n"
    "@@ -0,0 +1,3 @@\n"
    '+<script>window.__pwned = "gold"</script>\n'
    '+</pre></span><img src=x onerror="window.__pwned=2">\n'
    "+&lt;escaped&gt; & <b>bold</b>\n"
)


def author_collected(
    root: Path,
    sample: SampleRepository,
    task_id: str,
    *,
    hostile: bool = False,
    **changes: Any,
) -> Path:
    """Author a task from the sample (`changes` replace definition keys) and collect it."""
    arguments = sample_arguments(sample)
    arguments["definition"].update(taskId=task_id, **changes)
    if hostile:
        arguments["definition"]["prompt"] = HOSTILE_PROMPT
        arguments["goldPatch"] += HOSTILE_GOLD
    authoring = root / f"authoring-{task_id}"
    authoring.mkdir(parents=True)
    submit_task(arguments, output_root=authoring, preflight=False)
    out = root / f"collected-{task_id}"
    collect_authoring(authoring, repo=sample.path, out=out)
    return out


def report(task_id: str, *, accepted: bool, reason: str | None = None) -> dict[str, Any]:
    """A validation report entry as `selfbench validate --json` prints it."""
    run = {"reward": int(accepted), "log": f"/logs/{task_id}.log"}
    return {
        "taskId": task_id,
        "accepted": accepted,
        "reason": reason,
        "environment": "local",
        "nop": run,
        "oracle": run,
        "checks": [],
    }


def quality_record(
    task_id: str, verdict: Verdict = "review", *, seconds: float = 0.0
) -> QualityRecord:
    """A quality record of the sample task with every section filled, as the checks write it."""
    reasons = {
        "ship": (),
        "review": ("weak tests: mutation score 50% (2 of 4 mutants killed)",),
        "reject": ("no fail-to-pass test needs the gold's implementation",),
    }[verdict]
    return QualityRecord(
        taskId=task_id,
        verdict=verdict,
        reasons=reasons,
        ablation=Ablation(
            parts=(
                GoldPart(path="src/slugkit/core.py", implementation=True, needed=True),
                GoldPart(path="CHANGELOG.md", implementation=False, needed=False),
            ),
            moved=("CHANGELOG.md",),
            unneeded=("src/slugkit/core.py#1",),
            difficulty="medium",
        ),
        mutation=Mutation(
            generated=4,
            killed=2,
            score=0.5,
            survivors=(
                SurvivingMutant(
                    path="src/slugkit/core.py",
                    line=7,
                    operator="compare",
                    description="`<` to `<=`",
                ),
            ),
        ),
        passToPass=PassToPassBasis(
            basis="coverage",
            detail="2 tests execute the changed lines",
            selected=("tests/test_core.py::test_plain",),
        ),
        instruction=InstructionCheck(
            interface=(
                InterfaceItem(
                    name="slugify",
                    kind="function",
                    signature="slugify(text: str) -> str",
                    path="src/slugkit/core.py",
                ),
            ),
            missing=("slugify",),
        ),
        dependencies=Dependencies(
            added=(AddedDependency(manifest="pyproject.toml", name="unidecode"),)
        ),
        seconds=seconds,
    )


@dataclass(frozen=True, slots=True)
class RawMember:
    """One member of a hand-made archive: anything tar can say."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    size: int | None = None
    """A size to claim in the header instead of `len(data)` (the data is written as given)."""
    pax: bool = False
    size_field: bytes | None = None
    """Twelve raw bytes for the header's size field (a negative or base-256 size), if any."""
    mode: int | None = None
    """The mode to write; by default 0755 for a directory, else 0644."""


def _with_size_field(header: bytes, field: bytes) -> bytes:
    """`header` with its size field replaced and its checksum made right again."""
    assert len(field) == 12
    block = bytearray(header)
    block[124:136] = field
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block[:512])
    return bytes(block)


def _header(member: RawMember) -> bytes:
    info = tarfile.TarInfo(member.name)
    info.type = member.type
    info.linkname = member.linkname
    info.mode = 0o755 if member.type == tarfile.DIRTYPE else 0o644
    if member.mode is not None:
        info.mode = member.mode
    info.size = len(member.data) if member.size is None else member.size
    if member.type in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    if member.pax:
        return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape")
    header = info.tobuf(format=tarfile.USTAR_FORMAT, encoding="utf-8", errors="surrogateescape")
    return header if member.size_field is None else _with_size_field(header, member.size_field)


def gzip_tar(members: list[RawMember], *, end: bytes = bytes(1024)) -> bytes:
    """A gzip tar of `members` exactly as given, then `end` (the end-of-archive marker)."""
    raw = io.BytesIO()
    for member in members:
        raw.write(_header(member))
        raw.write(member.data)
        raw.write(bytes(-len(member.data) % 512))
    raw.write(end)
    return gzip.compress(raw.getvalue(), mtime=0)


def members_of(archive: bytes) -> list[RawMember]:
    """The members of a real gzip tar, as RawMembers to edit."""
    found = []
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for info in tar:
            handle = tar.extractfile(info) if info.isreg() else None
            data = handle.read() if handle is not None else b""
            found.append(RawMember(info.name, data, info.type, mode=info.mode))
    return found


def outer_archive(
    tasks: dict[str, bytes],
    *,
    manifest: dict[str, Any] | None = None,
    extra: list[RawMember] | None = None,
) -> bytes:
    """An export holding `tasks` (taskId → archive bytes), listed in a correct manifest."""
    value = manifest or {
        "schemaVersion": 1,
        "runId": "run-1",
        "candidateCounts": {"easy": 0, "medium": len(tasks), "hard": 0},
        "repository": {"url": "https://example.com/acme/slugkit.git", "commit": COMMIT},
        "version": "test",
        "acceptedCount": len(tasks),
        "tasks": [
            {"taskId": task_id, "sha256": hashlib.sha256(data).hexdigest()}
            for task_id, data in sorted(tasks.items())
        ],
    }
    members = [RawMember("manifest.json", json.dumps(value).encode())]
    members.append(RawMember("tasks", type=tarfile.DIRTYPE))
    members += [RawMember(task_member_name(t), data) for t, data in sorted(tasks.items())]
    return gzip_tar(members + (extra or []))
