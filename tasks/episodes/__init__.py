"""Multi-turn episodes: agents acting on simulated, stateful tools (docs/episodes.md).

Public API::

    generate_episodes(seed, n, mix=None, sources=None) -> list[Episode]
    tasks.sources.load_episode_sources({"builtin": 0.8, "bfcl_multi_turn": 0.2}, paths=None)
    variant(episode, seed) -> Episode              # tool_shuffle; the runner maps names back
    agent_step(episode, cut=None) -> Task          # a trajectory prefix as a single-step task
    await tasks.episodes.runner.EpisodeRunner(episode, ask).play() -> Transcript
    tasks.episodes.checking.check_episode(transcript, episode) -> Verdict
    EPISODE_CATEGORIES, ENVIRONMENTS, Episode, Turn

The runner (``EpisodeRunner``, ``Transcript``) and ``check_episode`` are imported from their
modules: they load the scorer's decoder and checker, which ``import tasks.episodes`` does not (the
validator's score state reads the category registry through this package).
"""

from __future__ import annotations

from tasks.episodes.environments import ENVIRONMENTS, environment_class
from tasks.episodes.generate import (
    EPISODE_CATEGORIES,
    EpisodeSource,
    agent_step,
    generate_episodes,
    variant,
)
from tasks.episodes.model import Episode, Turn

__all__ = [
    "ENVIRONMENTS",
    "EPISODE_CATEGORIES",
    "Episode",
    "EpisodeSource",
    "Turn",
    "agent_step",
    "environment_class",
    "generate_episodes",
    "variant",
]
