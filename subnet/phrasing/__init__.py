"""Phrasing engines for the validator: the models that write the requests miners read.

:data:`subnet.registry.ENGINES` maps ``--phrasing.engine`` names to the class serving it (imported
on demand, so a validator with an endpoint never imports torch); a new engine is one file and one
entry there. Every engine satisfies ``tasks.phrasing.PhrasingEngine``. The model engines reuse the miner's
backends (``subnet.miner``): the same OpenAI client with its timeouts and size caps, the same
batched transformers generation on GPU where present.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from subnet.config import PhrasingSettings, add_flag
from subnet.registry import ENGINES, PluginMissing, load

__all__ = ["ENGINES", "PhrasingSetupError", "add_phrasing_arguments", "build_engine", "phrasing_settings"]

# The flags of add_phrasing_arguments beside --phrasing.engine: each only means something with one.
_ENGINE_FLAGS = ("url", "model", "api_key_env", "path", "device", "verify", "timeout", "concurrency")


class PhrasingSetupError(Exception):
    """A phrasing engine that cannot be set up as configured (one line for the user)."""


def build_engine(settings: PhrasingSettings) -> Any:
    """The (not yet started) engine that ``settings.engine`` names."""
    entry = ENGINES.get(settings.engine)
    if entry is None:
        raise PhrasingSetupError(
            f"unknown phrasing engine {settings.engine!r}; choose one of {', '.join(ENGINES)}"
        )
    try:
        engine_class = load(entry.target)
    except PluginMissing as error:
        raise PhrasingSetupError(
            f"the {settings.engine} phrasing engine needs the [{entry.extra}] extra "
            f"(pip install -e '.[{entry.extra}]'): {error.__cause__}"
        ) from error
    return engine_class(settings)


def add_phrasing_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--phrasing.*`` flags of the command-line tools (``tasks``, ``subnet.evaluate``)."""
    group = parser.add_argument_group(
        "phrasing", "rewrite each request with a language model, as validators do (docs/phrasing.md)"
    )
    defaults = PhrasingSettings()
    add_flag(group, "phrasing.engine", dest="phrasing_engine", note="(default: the template text, unphrased)")
    for name in _ENGINE_FLAGS:
        # None when not given: phrasing_settings fills the default in, and can tell that a flag was
        # given without an engine (which would otherwise drop it silently).
        default = getattr(defaults, name)
        add_flag(
            group, f"phrasing.{name}", dest=f"phrasing_{name}", note=f"(default {default})" if default else ""
        )


def phrasing_settings(args: argparse.Namespace) -> PhrasingSettings | None:
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
    settings = dataclasses.replace(PhrasingSettings(engine=args.phrasing_engine), **given)
    if settings.timeout <= 0 or settings.concurrency < 1:
        raise PhrasingSetupError("--phrasing.timeout must be positive and --phrasing.concurrency at least 1")
    return settings
