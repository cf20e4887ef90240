#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install selfbench with its pinned dependencies.
# Re-running is cheap: nothing is reinstalled while pyproject.toml and constraints.txt are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

pick_python() {
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo "error: Python >= 3.11 is required" >&2
  exit 2
}

if [ ! -x .venv/bin/python ]; then
  "$(pick_python)" -m venv .venv
fi
stamp=.venv/.selfbench-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt setuptools
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt \
    --no-build-isolation -e '.[dev]'
  echo "$want" >"$stamp"
fi
