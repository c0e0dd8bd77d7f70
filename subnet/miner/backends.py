"""The backend registry: ``--model.backend`` name -> the class serving it, imported on demand, and
the ``--model.*`` settings that are each backend's own.

Both are plain strings, so `subnet.config` reads them (the flag's choices, the help of a backend's
own flags, the one-line error for a flag given to the wrong backend) without importing a backend.
A new backend is one module, one `BACKENDS` entry and, when it has settings of its own, one
`BACKEND_SETTINGS` entry (with its field in `subnet.config.ModelSettings` and its flag there).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from subnet.miner.base import Backend, ModelLoadError, ModelOptions

# name -> "module:Class"; imported only when chosen, so an openai miner never imports torch.
BACKENDS: dict[str, str] = {
    "transformers": "subnet.miner.transformers_backend:TransformersBackend",
    "openai": "subnet.miner.openai_backend:OpenAIBackend",
}


@dataclass(frozen=True)
class BackendSettings:
    """The ``--model.*`` settings (`ModelSettings` fields) that one backend reads and others do not.

    The settings every backend reads (path, format, max_new_tokens, name, timeout) are no backend's
    own. ``required``: own settings the backend cannot start without -> what the value is.
    ``refused_elsewhere``: own settings that, given to another backend, are a mistake rather than
    unused -> what they are for; the one-line errors say so. Other own settings are ignored there.
    """

    own: tuple[str, ...] = ()
    required: Mapping[str, str] = field(default_factory=dict)
    refused_elsewhere: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        strays = (set(self.required) | set(self.refused_elsewhere)) - set(self.own)
        if strays:
            raise ValueError(f"not among the backend's own settings: {', '.join(sorted(strays))}")


# name -> its own settings; a backend missing here has none (it reads only the shared ones).
BACKEND_SETTINGS: dict[str, BackendSettings] = {
    "transformers": BackendSettings(
        own=(
            "device",
            "dtype",
            "trust_remote_code",
            "batch_wait_ms",
            "max_batch",
            "guided",
            "prefix_cache_tokens",
            "cuda_graphs",
            "prefill_chunk",
        ),
        refused_elsewhere={
            "guided": "it guides the decoding of a model the miner runs itself; an engine decodes "
            "by itself, vLLM and SGLang reading tool calls with their --tool-call-parser",
        },
    ),
    "openai": BackendSettings(
        own=("base_url", "api_key_env"),
        required={"base_url": "the engine's http:// URL"},
        refused_elsewhere={"api_key_env": "the engine's API key"},
    ),
}


def settings_of(backend: str) -> BackendSettings:
    """The own settings of ``backend`` (none for a backend without a `BACKEND_SETTINGS` entry)."""
    return BACKEND_SETTINGS.get(backend) or BackendSettings()


def owners_of(setting: str) -> list[str]:
    """The registered backends whose own setting ``setting`` is (empty: a shared setting)."""
    return [name for name in BACKENDS if setting in settings_of(name).own]


def missing_setting(backend: str, setting: str) -> str:
    """The one-line error for a required own setting of ``backend`` that is unset."""
    return f"--model.backend {backend} needs --model.{setting} ({settings_of(backend).required[setting]})"


def settings_mistake(options: Any) -> str | None:
    """The one-line error for model settings the chosen backend cannot run with, else None.

    ``options`` is a `ModelSettings` (or `ModelOptions`). A mistake is a required own setting of
    ``options.backend`` left unset, or another backend's ``refused_elsewhere`` setting given.
    """
    defaults = {spec.name: spec.default for spec in dataclasses.fields(options)}
    chosen = settings_of(options.backend)
    for name in chosen.required:
        if getattr(options, name) == defaults[name]:
            return missing_setting(options.backend, name)
    for name, value in ((spec.name, getattr(options, spec.name)) for spec in dataclasses.fields(options)):
        if name in chosen.own or value == defaults[name]:
            continue
        owners = [owner for owner in owners_of(name) if name in settings_of(owner).refused_elsewhere]
        if owners:
            use = " or ".join(owners)
            return (
                f"--model.{name} {_shown(value)} is for --model.backend {use} "
                f"({settings_of(owners[0]).refused_elsewhere[name]}): "
                f"drop --model.{name} or use --model.backend {use}"
            )
    return None


def _shown(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


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
