#!/usr/bin/env bash
# Set everything up, then run the whole test suite with the project's standing checks:
# ruff (lint and format), mypy --strict, and pytest. Exits non-zero if any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/system-deps.sh
./scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The acceptance suite's small configuration: one real PyPI project, fetched now (tests/acceptance);
# the red team's: every runner but jest and vitest (tests/redteam/test_redteam.py); every benchmark's:
# `--small`, untimed (tests/test_benchmarks.py).
SELFBENCH_ACCEPTANCE="${SELFBENCH_ACCEPTANCE-small}" SELFBENCH_REDTEAM="${SELFBENCH_REDTEAM-small}" \
  .venv/bin/python -m pytest "$@"
