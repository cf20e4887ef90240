"""The parallel gzip behind the bundle snapshot: valid, deterministic, and honest on failure."""

from __future__ import annotations

import gzip
import io
import random
import subprocess
import tarfile
from pathlib import Path

import pytest

from selfbench import _gzip
from selfbench._gzip import compress_stream


def _payload(size: int) -> bytes:
    rng = random.Random(7)
    words = [b"alpha", b"beta", b"gamma", b"\x00\xff", b"\n"]
    return b" ".join(rng.choice(words) for _ in range(size // 5))[:size]


@pytest.mark.parametrize("size", [0, 1, 1000, 3 * (1 << 16) + 17])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_output_is_one_valid_gzip_stream(
    size: int, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_gzip, "_BLOCK", 1 << 16)  # many members even for small inputs
    data = _payload(size)
    out = io.BytesIO()
    compress_stream(io.BytesIO(data), out, workers=workers)
    assert gzip.decompress(out.getvalue()) == data


def test_the_same_input_gives_the_same_bytes_whatever_the_thread_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_gzip, "_BLOCK", 1 << 16)
    data = _payload(500_000)
    outputs = set()
    for workers in (1, 2, 4):
        out = io.BytesIO()
        compress_stream(io.BytesIO(data), out, workers=workers)
        outputs.add(out.getvalue())
    assert len(outputs) == 1


def test_system_gzip_and_tar_read_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gzip, "_BLOCK", 1 << 12)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for index in range(20):
            content = _payload(3000 + index)
            info = tarfile.TarInfo(f"dir/file{index}.txt")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    archive = tmp_path / "repo.tar.gz"
    with archive.open("wb") as out:
        compress_stream(io.BytesIO(buffer.getvalue()), out)
    subprocess.run(["gzip", "-t", str(archive)], check=True)
    listing = subprocess.run(
        ["tar", "-tzf", str(archive)], check=True, capture_output=True, text=True
    ).stdout.split()
    assert listing == [f"dir/file{index}.txt" for index in range(20)]


class _FailingWriter(io.BytesIO):
    def write(self, data: object) -> int:
        raise OSError(28, "No space left on device")


def test_a_write_failure_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gzip, "_BLOCK", 1 << 10)
    with pytest.raises(OSError, match="No space left on device"):
        compress_stream(io.BytesIO(_payload(100_000)), _FailingWriter())
