#!/usr/bin/env bash
# The miner's GPU benchmark in one short run: random-weight models of the 135M, 1.7B and 8B
# shapes built on the GPU itself, warmed up, then single stream, concurrency 1/8/16/32, guided and
# unguided, validator and episode workloads; one table at the end (bench/gpu.py says what each
# row is). Made to fit a short loan of a GPU: under 8 minutes on one H100 or H200.
#
#   bench/gpu.sh                              # every shape; the demo model's tokenizer
#   bench/gpu.sh --tokenizer DIR --eager      # a tokenizer folder; also the uncaptured steps
#   GPU_BENCH_TIMEOUT=300 bench/gpu.sh --shapes 1.7b
#
# It needs torch with CUDA and transformers (and xgrammar for the guided rows). On a machine that
# reaches no package registry, wheels put in .whl/ are installed first, into a private folder.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/gpu-bench-site .whl/*.whl
    export PYTHONPATH=/tmp/gpu-bench-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
exec timeout "${GPU_BENCH_TIMEOUT:-470}" "$PY" -u bench/gpu.py "$@"
