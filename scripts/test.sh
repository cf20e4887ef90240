#!/usr/bin/env bash
# Set everything up, then run the whole test suite with the project's standing checks:
# ruff (lint and format), mypy --strict, and pytest on two workers. Exits non-zero if any fails.
#
# `--quick`: set up, then only the tests that start no sandbox, reach no registry and build
# no real project (pytest's `-m` below): the inner loop's tier, in a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1-}" = "--quick" ]; then
  quick=1
  shift
fi
./scripts/system-deps.sh
./scripts/setup.sh
if [ "$quick" = 1 ]; then
  exec .venv/bin/python -m pytest -n 2 -m "not sandbox and not harbor and not network and not acceptance and not benchmark" "$@"
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The acceptance suite's small configuration: one real PyPI project, fetched now (tests/acceptance);
# the red team's: every runner but jest and vitest (tests/redteam/test_redteam.py); every benchmark's:
# `--small`, untimed (tests/test_benchmarks.py). Two workers share the tests out one at a time
# (`worksteal`); the slowest 25 are listed at the end.
SELFBENCH_ACCEPTANCE="${SELFBENCH_ACCEPTANCE-small}" SELFBENCH_REDTEAM="${SELFBENCH_REDTEAM-small}" \
  .venv/bin/python -m pytest -n 2 --dist worksteal --durations=25 "$@"
