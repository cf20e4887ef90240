"""An extracted task adapted to a local Docker or Podman build: `selfbench extract --base-image
IMAGE` and `--build-secrets`. Pure text, applied after the export has verified.

`--base-image` replaces the image both Dockerfiles start from (`render_docker.BASE_IMAGE`), for a
builder that cannot pull it (an image built offline: see the README). `--build-secrets` writes a
`docker-compose.yaml` beside each Dockerfile that hands the build the host's CA bundle as the
build secret the fetching RUN lines mount (`render_docker.BUILD_SECRET`) and the host's proxy
settings as the predefined proxy build args; neither stays in the image's layers or history.
Harbor merges that file into its own compose files for `--env docker` and `--env podman`; cloud
environments run a task that has one through Docker-in-Docker, so it is for local builds.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from selfbench.bundle import layout
from selfbench.bundle.render_docker import BASE_IMAGE, BUILD_SECRET
from selfbench.errors import InputError

__all__ = ["LocalBuild", "check_base_image", "rebase", "render_build_compose"]

_IMAGE = re.compile(r"[a-z0-9][a-z0-9._/:@-]{0,254}", re.ASCII)
_PROXY_ARGS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_CA_SOURCE = "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
_COMPOSE = "docker-compose.yaml"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def check_base_image(image: str) -> str:
    """`image` when it is an image reference (lower-case name, tag, digest).

    Raises:
        InputError: it is not (a space, an upper-case letter, a newline...).
    """
    if not _IMAGE.fullmatch(image):
        raise InputError(f"--base-image {image!r}: not an image reference like name:tag")
    return image


def render_build_compose() -> str:
    """The compose file that gives a local build the host's CA bundle and proxy settings."""
    args = "".join(f"        - {name}\n" for name in _PROXY_ARGS)
    return (
        "# for a local Docker or Podman build (selfbench extract --build-secrets): the host's CA\n"
        f"# bundle as the build secret {BUILD_SECRET} ($SSL_CERT_FILE, else the system's) and its\n"
        "# proxy settings as build args; neither stays in the image\n"
        "services:\n"
        "  main:\n"
        "    build:\n"
        "      secrets:\n"
        f"        - {BUILD_SECRET}\n"
        "      args:\n"
        f"{args}"
        "secrets:\n"
        f"  {BUILD_SECRET}:\n"
        f'    file: "{_CA_SOURCE}"\n'
    )


@dataclass(frozen=True, slots=True)
class LocalBuild:
    """What `extract` changes in each task it unpacks (nothing when both are unset)."""

    base_image: str | None = None
    build_secrets: bool = False

    def apply(self, task: Path) -> None:
        """Adapt the task directory `task` (just unpacked by extract, so its files are ours)."""
        for dockerfile in (layout.ENV_DOCKERFILE, layout.TESTS_DOCKERFILE):
            path = task / dockerfile
            if self.base_image is not None:
                path.write_text(rebase(path.read_text(), self.base_image))
            if self.build_secrets:
                descriptor = os.open(path.with_name(_COMPOSE), _CREATE, 0o644)
                with os.fdopen(descriptor, "w") as compose:
                    compose.write(render_build_compose())


def rebase(dockerfile: str, image: str) -> str:
    """`dockerfile` with every stage that starts from the bundle's base starting from `image`."""
    pattern = re.compile(rf"^FROM {re.escape(BASE_IMAGE)}(?= AS |$)", re.MULTILINE)
    return pattern.sub(lambda _match: f"FROM {image}", dockerfile)
