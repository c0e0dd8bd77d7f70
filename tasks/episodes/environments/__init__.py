"""The environments episodes are played in, by name: one module each, imported when first used.

Each module defines one ``Environment`` subclass (its ``name`` is the registry key). A module that
also defines ``scenario(env, rng) -> Scenario`` is drawn by the builtin generator; one without is
built only from an external episode's configuration (BFCL's classes: ``from_config``). Adding an
environment is adding its module and a line here, nothing else: registered is drawn
(tests/episodes/test_environment_registry.py names a module left out, or a piece it lacks).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from random import Random
from types import ModuleType
from typing import Any

from tasks.episodes.environment import Environment
from tasks.episodes.scenario import Scenario
from tasks.registry import registered_class, registered_module

__all__ = ["ENVIRONMENTS", "drawn_environments", "environment_class", "scenario_function"]

#: Environment name -> its module. Imported when first used: a simulation costs its imports only
#: where episodes are generated or played (never in the validator's score state).
ENVIRONMENTS: dict[str, str] = {
    "workspace": "tasks.episodes.environments.workspace",
    "mail_calendar": "tasks.episodes.environments.mail_calendar",
    "bank": "tasks.episodes.environments.bank",
    "shop": "tasks.episodes.environments.shop",
    "home": "tasks.episodes.environments.home",
    "bfcl": "tasks.episodes.bfcl",
}


@cache
def environment_class(name: str) -> type[Environment]:
    """The Environment subclass registered as ``name``."""
    return registered_class(ENVIRONMENTS, name, Environment, "environment")


def _module(name: str) -> ModuleType:
    return registered_module(ENVIRONMENTS, name, "environment")


def drawn_environments() -> tuple[str, ...]:
    """The environments the builtin generator draws episodes from, in registry order: every
    registered one whose module has a ``scenario`` (the others are built from an external
    episode's configuration). Read afresh per call: registering is drawing."""
    return tuple(name for name in ENVIRONMENTS if callable(getattr(_module(name), "scenario", None)))


def scenario_function(name: str) -> Callable[[Any, Random], Scenario]:
    """The scenario generator of environment ``name``."""
    function: Callable[[Any, Random], Scenario] = _module(name).scenario
    return function
