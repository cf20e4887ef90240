#!/usr/bin/env bash
# Set up Podman for Harbor's `podman` environment on this machine, without a container registry,
# once per machine (each step is skipped when its result is there):
#   - podman, runc and mmdebstrap from Debian's packages (scripts/system-deps.sh);
#   - podman-compose from PyPI into CACHE/compose-venv (Debian's 1.0.3 lacks `--in-pod`, which
#     Harbor passes to podman-compose 1.x);
#   - CACHE/containers.conf and CACHE/storage.conf: a private image store under CACHE, runc (crun
#     refuses a hybrid cgroup v1/v2 host), cgroupfs, the file events log, ulimits the host allows,
#     and the host's network namespace (image builds reach the package registries directly: no
#     bridge, no address of a container is ever a target);
#   - the image `localhost/selfbench-base:SUITE`: a minimal Debian rootfs (mmdebstrap, from the
#     host's own apt sources) imported with `podman import`: an exported bundle builds on it with
#     `selfbench export --base-image localhost/selfbench-base:SUITE` (or `extract`).
# Usage: scripts/base-image.sh [CACHE]   (default: .cache/containers of the repository)
# Prints the environment to run podman and harbor with, one NAME=VALUE a line (with
# PODMAN_COMPOSE_BIN to put first on PATH).
# Exits 3 with a one-line reason when no container can start here.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${1:-$repo/.cache/containers}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

"$repo/scripts/system-deps.sh" podman runc mmdebstrap >&2

# --- configuration -------------------------------------------------------------------------------
mkdir -p "$cache/storage" "$cache/run"
cat >"$cache/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$cache/storage"
runroot = "$cache/run"
EOF
# RLIMIT_NPROC above 32768 is refused to the container's init here even below the hard limit.
nproc="$(ulimit -Hu)"
if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi
nofile="$(ulimit -Hn)"
if [ "$nofile" = unlimited ]; then nofile=1048576; fi
cat >"$cache/containers.conf" <<EOF
[containers]
netns = "host"
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "runc"
EOF
export CONTAINERS_CONF="$cache/containers.conf" CONTAINERS_STORAGE_CONF="$cache/storage.conf"

# A venv cannot be moved (its scripts name their interpreter): it is built in place and counts
# once its podman-compose runs.
if ! "$cache/compose-venv/bin/podman-compose" --version >/dev/null 2>&1; then
  rm -rf "$cache/compose-venv"
  python3 -m venv "$cache/compose-venv"
  "$cache/compose-venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'podman-compose==1.6.0' >&2
fi

# --- the Debian base -----------------------------------------------------------------------------
# shellcheck source=/dev/null
. /etc/os-release
suite="${VERSION_CODENAME:?the host names no Debian suite in /etc/os-release}"
base="localhost/selfbench-base:$suite"
if ! podman image exists "$base"; then
  sources=/etc/apt/sources.list.d/debian.sources
  [ -f "$sources" ] || sources=/etc/apt/sources.list
  rm -f "$cache/rootfs.tar"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates "$suite" "$cache/rootfs.tar" \
    "$sources" >&2
  podman import --quiet --change 'CMD ["/bin/bash"]' "$cache/rootfs.tar" "$base" >&2
  rm -f "$cache/rootfs.tar"
fi
if ! podman run --rm --network none "$base" true >&2; then
  echo "podman cannot start a container here (podman run --rm --network none $base true)" >&2
  exit 3
fi

echo "CONTAINERS_CONF=$CONTAINERS_CONF"
echo "CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF"
echo "PODMAN_COMPOSE_BIN=$cache/compose-venv/bin"
echo "SELFBENCH_BASE_IMAGE=$base"
# Docker's image format: in the OCI one, podman build ignores a Dockerfile's SHELL (the bundles'
# bash with pipefail) and runs RUN lines with /bin/sh.
echo "BUILDAH_FORMAT=docker"
