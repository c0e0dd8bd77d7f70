"""The environments episodes are played in, by name: one module each, imported when first used.

Each module defines one ``Environment`` subclass (its ``name`` is the registry key) and
``scenario(env, rng) -> Scenario``. Adding an environment is adding its module and a line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from random import Random
from types import ModuleType
from typing import Any

from tasks.episodes.environment import Environment
from tasks.episodes.scenario import Scenario

__all__ = ["ENVIRONMENTS", "GENERATED", "environment_class", "scenario_function"]

ENVIRONMENTS: dict[str, str] = {
    "workspace": "tasks.episodes.environments.workspace",
    "mail_calendar": "tasks.episodes.environments.mail_calendar",
    "bank": "tasks.episodes.environments.bank",
    "shop": "tasks.episodes.environments.shop",
    "home": "tasks.episodes.environments.home",
    "bfcl": "tasks.episodes.bfcl",
}
#: The environments the builtin generator draws episodes from (those with a ``scenario``);
#: the others are built from an external episode's configuration (BFCL's classes).
GENERATED: tuple[str, ...] = ("workspace", "mail_calendar", "bank", "shop", "home")


@cache
def _module(name: str) -> ModuleType:
    try:
        target = ENVIRONMENTS[name]
    except KeyError:
        raise KeyError(f"unknown environment {name!r} (known: {', '.join(ENVIRONMENTS)})") from None
    return importlib.import_module(target)


@cache
def environment_class(name: str) -> type[Environment]:
    """The Environment subclass registered as ``name``."""
    module = _module(name)
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Environment) and value.name == name:
            return value
    raise KeyError(f"module {module.__name__} defines no environment named {name!r}")


def scenario_function(name: str) -> Callable[[Any, Random], Scenario]:
    """The scenario generator of environment ``name``."""
    function: Callable[[Any, Random], Scenario] = _module(name).scenario
    return function
