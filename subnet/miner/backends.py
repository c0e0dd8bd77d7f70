"""The backend registry: ``--model.backend`` name -> the class serving it, imported on demand."""

from __future__ import annotations

import importlib

from subnet.miner.base import Backend, ModelLoadError, ModelOptions

# name -> "module:Class"; imported only when chosen, so an openai miner never imports torch.
BACKENDS: dict[str, str] = {
    "transformers": "subnet.miner.transformers_backend:TransformersBackend",
    "openai": "subnet.miner.openai_backend:OpenAIBackend",
}


def build_backend(options: ModelOptions) -> Backend:
    """The (not yet started) backend that ``options.backend`` names."""
    try:
        target = BACKENDS[options.backend]
    except KeyError:
        raise ModelLoadError(
            f"unknown model backend {options.backend!r}; choose one of {', '.join(BACKENDS)}"
        ) from None
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ModelLoadError(
            f"the {options.backend} backend needs the [miner] extra (pip install -e '.[miner]'): {error}"
        ) from error
    backend: Backend = getattr(module, class_name)(options)
    return backend
