#!/usr/bin/env bash
# A virtualenv with llama-cpp-python's OpenAI-compatible server, for the real-engine tests and for
# trying the miner in front of an engine on a machine without vLLM. It compiles llama.cpp (4-25
# minutes: 4 measured on an idle 2-core machine, 22 on a loaded one); run again and it returns at
# once. Prints the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SUBNET_LLAMA_VENV:-.cache/llama-server}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if ! "$VENV/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
    echo "llama-server: building llama-cpp-python[server]==0.3.36 into $VENV (4-25 minutes)" >&2
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip --disable-pip-version-check -q install "llama-cpp-python[server]==0.3.36"
fi
echo "$VENV/bin/python"
