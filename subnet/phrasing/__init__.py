"""Phrasing engines for the validator: the models that write the requests miners read.

``ENGINES`` maps ``--phrasing.engine`` names to the class serving it (imported on demand, so a
validator with an endpoint never imports torch); a new engine is one file and one entry here.
Every engine satisfies ``tasks.phrasing.PhrasingEngine``. The model engines reuse the miner's
backends (``subnet.miner``): the same OpenAI client with its timeouts and size caps, the same
batched transformers generation on GPU where present.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

__all__ = ["ENGINES", "PhrasingSetupError", "add_phrasing_arguments", "build_engine", "phrasing_settings"]

ENGINES: dict[str, str] = {
    "templates": "tasks.phrasing:TemplateEngine",
    "openai": "subnet.phrasing.model_engine:OpenAIEngine",
    "transformers": "subnet.phrasing.model_engine:TransformersEngine",
}


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
    for name in ("url", "model", "api_key_env", "path"):
        add_flag(group, f"phrasing.{name}", dest=f"phrasing_{name}")
    for name in ("device", "verify", "timeout", "concurrency"):
        add_flag(group, f"phrasing.{name}", dest=f"phrasing_{name}", default=getattr(defaults, name))


def phrasing_settings(args: argparse.Namespace) -> Any:
    """``subnet.config.PhrasingSettings`` from the flags of ``add_phrasing_arguments`` (None: no engine)."""
    if args.phrasing_engine is None:
        return None
    from subnet.config import PhrasingSettings

    if args.phrasing_timeout <= 0 or args.phrasing_concurrency < 1:
        raise PhrasingSetupError("--phrasing.timeout must be positive and --phrasing.concurrency at least 1")
    return PhrasingSettings(
        engine=args.phrasing_engine,
        url=args.phrasing_url,
        model=args.phrasing_model,
        api_key_env=args.phrasing_api_key_env,
        path=args.phrasing_path,
        device=args.phrasing_device,
        verify=args.phrasing_verify,
        timeout=args.phrasing_timeout,
        concurrency=args.phrasing_concurrency,
    )
