"""Builds the ``--model.backend`` a miner is started with, from its registry entry
(:data:`subnet.registry.BACKENDS`: the class, its own settings, the extra it needs)."""

from __future__ import annotations

from subnet.miner.base import Backend, ModelLoadError, ModelOptions
from subnet.registry import BACKENDS, PluginMissing, load


def build_backend(options: ModelOptions) -> Backend:
    """The (not yet started) backend that ``options.backend`` names."""
    entry = BACKENDS.get(options.backend)
    if entry is None:
        raise ModelLoadError(
            f"unknown model backend {options.backend!r}; choose one of {', '.join(BACKENDS)}"
        )
    try:
        backend_class = load(entry.target)
    except PluginMissing as error:
        raise ModelLoadError(
            f"the {options.backend} backend needs the [{entry.extra}] extra "
            f"(pip install -e '.[{entry.extra}]'): {error.__cause__}"
        ) from error
    backend: Backend = backend_class(options)
    return backend
