"""Phrasing engines for the validator: the models that write the requests miners read.

``ENGINES`` maps ``--phrasing.engine`` names to the class serving it (imported on demand, so a
validator with an endpoint never imports torch); a new engine is one file and one entry here.
Every engine satisfies ``tasks.phrasing.PhrasingEngine``. The model engines reuse the miner's
backends (``subnet.miner``): the same OpenAI client with its timeouts and size caps, the same
batched transformers generation on GPU where present.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from typing import Any

__all__ = ["ENGINES", "PhrasingSetupError", "add_phrasing_arguments", "build_engine", "phrasing_settings"]

ENGINES: dict[str, str] = {
    "templates": "tasks.phrasing:TemplateEngine",
    "openai": "subnet.phrasing.model_engine:OpenAIEngine",
    "transformers": "subnet.phrasing.model_engine:TransformersEngine",
}

# The flags of add_phrasing_arguments beside --phrasing.engine: each only means something with one.
_ENGINE_FLAGS = ("url", "model", "api_key_env", "path", "device", "verify", "timeout", "concurrency")


class PhrasingSetupError(Exception):
    """A phrasing engine that cannot be set up as configured (one line for the user)."""


def build_engine(settings: Any) -> Any:
    """The (not yet started) engine that ``settings.engine`` names (``subnet.config.PhrasingSettings``)."""
    try:
        target = ENGINES[settings.engine]
    except KeyError:
        raise PhrasingSetupError(
            f"unknown phrasing engine {settings.engine!r}; choose one of {', '.join(ENGINES)}"
        ) from None
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise PhrasingSetupError(
            f"the {settings.engine} phrasing engine needs the [miner] extra "
            f"(pip install -e '.[miner]'): {error}"
        ) from error
    cls = getattr(module, class_name)
    return cls() if settings.engine == "templates" else cls(settings)


def add_phrasing_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--phrasing.*`` flags of the command-line tools (``tasks``, ``subnet.evaluate``)."""
    group = parser.add_argument_group(
        "phrasing", "rewrite each request with a language model, as validators do (docs/phrasing.md)"
    )
    from subnet.config import PhrasingSettings, add_flag

    defaults = PhrasingSettings()
    add_flag(group, "phrasing.engine", dest="phrasing_engine", note="(default: the template text, unphrased)")
    for name in _ENGINE_FLAGS:
        # None when not given: phrasing_settings fills the default in, and can tell that a flag was
        # given without an engine (which would otherwise drop it silently).
        default = getattr(defaults, name)
        add_flag(
            group, f"phrasing.{name}", dest=f"phrasing_{name}", note=f"(default {default})" if default else ""
        )


def phrasing_settings(args: argparse.Namespace) -> Any:
    """``subnet.config.PhrasingSettings`` from the flags of ``add_phrasing_arguments`` (None: no engine)."""
    given = {name: getattr(args, f"phrasing_{name}") for name in _ENGINE_FLAGS}
    given = {name: value for name, value in given.items() if value is not None}
    if args.phrasing_engine is None:
        if given:
            flags = ", ".join(f"--phrasing.{name}" for name in given)
            raise PhrasingSetupError(
                f"{flags} {'has' if len(given) == 1 else 'have'} no effect without --phrasing.engine "
                f"(one of {', '.join(ENGINES)}): add it, or drop {'it' if len(given) == 1 else 'them'}"
            )
        return None
    from subnet.config import PhrasingSettings

    settings = dataclasses.replace(PhrasingSettings(engine=args.phrasing_engine), **given)
    if settings.timeout <= 0 or settings.concurrency < 1:
        raise PhrasingSetupError("--phrasing.timeout must be positive and --phrasing.concurrency at least 1")
    return settings
