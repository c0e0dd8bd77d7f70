"""What is plugged in by name: miner backends (``--model.backend``) and phrasing engines
(``--phrasing.engine``). One registry per concept; each entry is data: its class as
``"module:Class"``, imported on first use by :func:`load` (so an openai miner never imports torch),
and what the rest of the code reads about it without importing it: a backend's own ``--model.*``
settings, whether an engine rewrites the text at all.

This module imports no backend and no engine, so that `subnet.config` reads it for the flags'
choices, their help and the one-line errors, below the miner and the validator that build from it.

Adding a backend: its module (a class taking `subnet.miner.ModelOptions`, satisfying
`subnet.miner.Backend`) and one `BACKENDS` entry; own settings besides are `ModelSettings` fields
with their flags. Adding a phrasing engine: its module (a class taking `PhrasingSettings`,
satisfying `tasks.phrasing.PhrasingEngine`) and one `ENGINES` entry. tests/chain/test_registry.py
names a forgotten piece.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class PluginMissing(ImportError):
    """The module of a registered entry cannot be imported here (its extra is not installed)."""


def load(target: str) -> Any:
    """The object that ``"module:name"`` names, its module imported now. PluginMissing (one line)
    when the module is not there: an optional extra not installed."""
    module_name, _, name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PluginMissing(f"{target}: {error}") from error
    return getattr(module, name)


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


@dataclass(frozen=True)
class BackendEntry:
    """A ``--model.backend``: its class (``"module:Class"``, built with the `ModelOptions`), its own
    settings, and the pip extra its module needs (for the one-line error when it is missing)."""

    target: str
    settings: BackendSettings = BackendSettings()
    extra: str = "miner"


@dataclass(frozen=True)
class EngineEntry:
    """A ``--phrasing.engine``: its class (``"module:Class"``, built with the `PhrasingSettings`),
    what it is in a few words (the flag's help), whether it ``rewrites`` the text (False: the
    template's own text, no model; the class says the same), and the pip extra its module needs."""

    target: str
    summary: str
    rewrites: bool = True
    extra: str = "miner"


# In the order --model.backend offers them.
BACKENDS: dict[str, BackendEntry] = {
    "transformers": BackendEntry(
        "subnet.miner.transformers_backend:TransformersBackend",
        BackendSettings(
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
    ),
    "openai": BackendEntry(
        "subnet.miner.openai_backend:OpenAIBackend",
        BackendSettings(
            own=("base_url", "api_key_env"),
            required={"base_url": "the engine's http:// URL"},
            refused_elsewhere={"api_key_env": "the engine's API key"},
        ),
    ),
}

# In the order --phrasing.engine offers them.
ENGINES: dict[str, EngineEntry] = {
    "templates": EngineEntry("tasks.phrasing:TemplateEngine", "no model: localnet, tests", rewrites=False),
    "openai": EngineEntry("subnet.phrasing.model_engine:OpenAIEngine", "any OpenAI-compatible endpoint"),
    "transformers": EngineEntry("subnet.phrasing.model_engine:TransformersEngine", "a local model folder"),
}


def engine_rewrites(name: str) -> bool:
    """Whether engine ``name`` rewrites the requests. A name no longer registered (an old round's
    record) was a model's: it did."""
    entry = ENGINES.get(name)
    return entry is None or entry.rewrites


def engines_help() -> str:
    return ", ".join(f"{name} ({entry.summary})" for name, entry in ENGINES.items())


def settings_of(backend: str) -> BackendSettings:
    """The own settings of ``backend`` (none for a backend that is not registered)."""
    entry = BACKENDS.get(backend)
    return entry.settings if entry is not None else BackendSettings()


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
