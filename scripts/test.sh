#!/usr/bin/env bash
# The project's one test command: set up, lint, type-check, run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
ruff check .
mypy
# Two workers (the CI machine's two cores), one test file each at a time: the files that share
# a session fixture (the devchain, PostgreSQL, the demo model) keep it within one worker.
python -m pytest -n "${PYTEST_WORKERS:-2}" --dist loadfile --durations=15 "$@"
