#!/usr/bin/env bash
# The project's one test command: set up, lint, type-check, run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH"
ruff check .
mypy
python -m pytest "$@"
