"""Start llama-cpp-python's OpenAI-compatible server with its weight repacking off.

    <llama venv>/bin/python scripts/llama_server.py --model F.gguf --chat_format chatml-function-calling \
        --host 127.0.0.1 --port 8080

Every argument goes to ``python -m llama_cpp.server`` unchanged. The one difference: models load
with ``use_extra_bufts=False``. llama-cpp-python 0.3.36's server crashes (a segmentation fault in
ggml's AMX matrix multiply) on the first chat request on CPUs with AMX when weights are repacked
into the extra buffer types; without repacking it serves normally, a little slower on those CPUs.
Run it with the Python of the environment llama-cpp-python is installed in (scripts/llama_server_setup.sh
makes one); it needs nothing of this project.
"""

from __future__ import annotations

import llama_cpp.llama_cpp as native
from llama_cpp.server.__main__ import main

_default_params = native.llama_model_default_params


def _params_without_extra_buffers() -> native.llama_model_params:
    params = _default_params()
    params.use_extra_bufts = False
    return params


if __name__ == "__main__":
    native.llama_model_default_params = _params_without_extra_buffers
    main()
