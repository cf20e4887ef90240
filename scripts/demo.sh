#!/usr/bin/env bash
# Set everything up, then run the main job: `selfbench demo` on the embedded sample repository.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/system-deps.sh git bwrap slirp4netns
./scripts/setup.sh
.venv/bin/selfbench demo "$@"
