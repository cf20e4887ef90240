"""What a killed `export` leaves beside its output is removed by the next one, never output.

An export publishes through `selfbench._fs` (staging beside the output, renamed over it). A run
killed mid-publish leaves its staging entry; the next export into that directory removes it, and
`extract` never takes one for a task.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from export_helpers import COMMIT, author_collected
from selfbench import _fs
from selfbench.demo import build_sample_repository
from selfbench.export import RunInfo, export_run, extract_export

RUN = RunInfo("run-9", "https://example.com/acme/slugkit.git", COMMIT)

_KILLED_MID_EXPORT = """
import sys, time
from pathlib import Path
from selfbench._fs import atomic_file
with atomic_file(Path(sys.argv[1])) as raw:
    raw.write(b"half an archive")
    raw.flush()
    print("staged", flush=True)
    time.sleep(60)
"""


def _killed_export(out: Path) -> list[str]:
    """Run a publish of `out` and kill it mid-way; the names it left beside `out`."""
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_EXPORT, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "staged"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    return sorted(p.name for p in out.parent.iterdir())


def test_a_killed_export_is_cleaned_up_by_the_next_and_never_extracted(tmp_path: Path) -> None:
    (tmp_path / "sample").mkdir()
    sample = build_sample_repository(tmp_path / "sample")
    task = author_collected(tmp_path / "tasks", sample, "slug-k")
    out = tmp_path / "exports" / "run.tar.gz"
    out.parent.mkdir()
    [left] = _killed_export(out)
    assert left.startswith(_fs.STAGING_PREFIX)
    assert left.endswith("-run.tar.gz")
    assert not out.exists()

    export_run([task], run=RUN, out=out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.tar.gz"]

    extracted = tmp_path / "extracted"
    extracted.mkdir()
    _killed_export(extracted / "slug-k")  # a staging entry where extract writes its tasks
    verified = extract_export(out, out=extracted)
    assert sorted(p.name for p in extracted.iterdir()) == ["slug-k"]
    assert (extracted / "slug-k" / "tests" / "test.sh").is_file()
    assert sorted(verified.difficulties) == ["slug-k"]
