"""A write-once artifact store on the local disk, with digest-verified reads (SPEC §6)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

from selfbench._fs import file_sha256, staging_file
from selfbench._json import JsonObject
from selfbench.errors import StoreError, translating
from selfbench.rules import is_task_id

__all__ = ["ArtifactRef", "LocalArtifactStore", "authoring_key"]

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ArtifactRef:
    """Where a stored artifact is and what its bytes must be."""

    uri: str
    sha256: str
    size: int
    content_type: str

    def to_json(self) -> JsonObject:
        """The reference as JSON."""
        return {
            "uri": self.uri,
            "sha256": self.sha256,
            "size": self.size,
            "contentType": self.content_type,
        }


def check_key(key: str) -> str:
    """A key is `/`-separated segments of letters, digits, `.`, `_`, `-`, none starting with `.`.

    That refuses `..`, a leading `/`, empty segments, backslashes and control characters.

    Raises:
        StoreError: the key is not safe.
    """
    segments = key.split("/")
    if not key or not all(is_task_id(segment) for segment in segments):
        raise StoreError(f"unsafe artifact key: {key!r}")
    return key


def authoring_key(run_id: str, candidate_id: str, name: str) -> str:
    """`runs/<runId>/authoring/<candidateId>/<name>`, checked.

    Raises:
        StoreError: an id makes the key unsafe.
    """
    return check_key(f"runs/{run_id}/authoring/{candidate_id}/{name}")


class LocalArtifactStore:
    """Artifacts as files under a root directory; each key is written once."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*check_key(key).split("/"))

    def put_file(self, key: str, source: Path, *, content_type: str) -> ArtifactRef:
        """Store a file's bytes under `key`; storing identical bytes again is a no-op.

        Raises:
            StoreError: the key is unsafe, or already holds different bytes.
        """
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with staging_file(target) as temp:
            with temp.open("wb") as out, source.open("rb") as src:
                while chunk := src.read(_CHUNK):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            digest, size = file_sha256(temp)
            self._link_once(temp, target, key, digest)
        return ArtifactRef(target.resolve().as_uri(), digest, size, content_type)

    def put_bytes(self, key: str, data: bytes, *, content_type: str) -> ArtifactRef:
        """Store bytes under `key` (see `put_file`).

        Raises:
            StoreError: the key is unsafe, or already holds different bytes.
        """
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with staging_file(target) as temp:
            temp.write_bytes(data)
            return self.put_file(key, temp, content_type=content_type)

    def _link_once(self, temp: Path, target: Path, key: str, digest: str) -> None:
        temp.chmod(0o444)
        try:
            os.link(temp, target)
        except FileExistsError:
            existing, _ = file_sha256(target)
            if existing != digest:
                raise StoreError(f"artifact {key} already exists with different content") from None

    def open_verified(self, ref: ArtifactRef) -> BinaryIO:
        """Open a stored artifact after checking its size and digest.

        Raises:
            StoreError: the uri is not in this store, or the bytes do not match the reference.
        """
        path = self._resolve(ref.uri)
        with translating(StoreError, f"read artifact {ref.uri}"):
            digest, size = file_sha256(path)
        if digest != ref.sha256 or size != ref.size:
            raise StoreError(f"artifact {ref.uri} does not match its sha256")
        return path.open("rb")

    def read_bytes(self, ref: ArtifactRef) -> bytes:
        """A stored artifact's bytes, digest-verified.

        Raises:
            StoreError: as `open_verified`.
        """
        path = self._resolve(ref.uri)
        with translating(StoreError, f"read artifact {ref.uri}"):
            data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != ref.sha256 or len(data) != ref.size:
            raise StoreError(f"artifact {ref.uri} does not match its sha256")
        return data

    def _resolve(self, uri: str) -> Path:
        parts = urlsplit(uri)
        path = Path(unquote(parts.path))
        root = self.root.resolve()
        if parts.scheme != "file" or not path.is_relative_to(root):
            raise StoreError(f"artifact {uri} is not in the store at {self.root}")
        check_key(path.relative_to(root).as_posix())
        return path
