"""The environment registry: a module and one ``ENVIRONMENTS`` line are all an environment needs
to be drawn, played and checked; a piece left out is named."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path
from typing import Any

import pytest

import tasks.episodes.environments as registry
from tasks.episodes import generate_episodes, variant
from tasks.episodes.checking import check_episode
from tasks.episodes.environment import Environment
from tasks.episodes.environments import ENVIRONMENTS, drawn_environments, environment_class
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import EpisodeRunner


def _defined_environments() -> dict[str, str]:
    """Environment name -> module, for every Environment subclass an environments module defines."""
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(registry.__path__, f"{registry.__name__}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, Environment)
                and value.__module__ == module.__name__
                and value.name
            ):
                found[value.name] = module.__name__
    return found


def test_every_environment_module_is_registered() -> None:
    missing = {name: module for name, module in _defined_environments().items() if name not in ENVIRONMENTS}
    assert not missing, (
        f"{missing}: defined but without a line in tasks.episodes.environments.ENVIRONMENTS, so never drawn "
        "nor played: add one"
    )


def test_every_registered_environment_can_be_drawn_or_built_from_a_configuration() -> None:
    for name, module in ENVIRONMENTS.items():
        cls = environment_class(name)  # names the module when it defines no environment of that name
        drawn = callable(getattr(importlib.import_module(module), "scenario", None))
        built = "from_config" in vars(cls) or any("from_config" in vars(base) for base in cls.__mro__[1:-1])
        assert drawn or built, (
            f"environment {name!r} ({module}) has no scenario(env, rng) and no from_config: "
            "it can be neither drawn nor built from an external episode"
        )
    drawn = drawn_environments()
    assert {"workspace", "mail_calendar", "bank", "shop", "home"} <= set(drawn) and "bfcl" not in drawn


def _scratch_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new environment in a module of its own (the home's state and scenario under another name)."""
    (tmp_path / "scratch_garden.py").write_text(
        "from tasks.episodes.environments.home import SmartHome, scenario as home_scenario\n"
        "class Garden(SmartHome):\n"
        "    name = 'garden'\n"
        "def scenario(env, rng):\n"
        "    return home_scenario(env, rng)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(ENVIRONMENTS, "garden", "scratch_garden")
    return "garden"


def test_a_registered_environment_is_drawn_played_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registering is drawing: no second list (the generator reads the registry)."""
    name = _scratch_environment(tmp_path, monkeypatch)
    try:
        assert name in drawn_environments()
        drawn = [episode for episode in generate_episodes(b"garden", 60) if episode.environment == name]
        assert drawn, "a registered environment with a scenario is drawn with no other edit"
        for episode in drawn[:3]:
            shown = variant(episode, b"miner")
            if shown.single_step:
                continue
            transcript = asyncio.run(EpisodeRunner(shown, ReferencePlayer(shown).ask).play())
            verdict: Any = check_episode(transcript, shown)
            assert verdict.valid, (episode.id, verdict)
    finally:
        sys.modules.pop("scratch_garden", None)
        environment_class.cache_clear()
