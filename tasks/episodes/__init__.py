"""Multi-turn episodes: agents acting on simulated, stateful tools (docs/episodes.md).

Public API::

    generate_episodes(seed, n, mix=None, sources=None) -> list[Episode]
    load_episode_sources({"builtin": 0.8, "bfcl_multi_turn": 0.2}, bfcl_path=None)
    variant(episode, seed) -> Episode              # tool_shuffle; the runner maps names back
    agent_step(episode, cut=None) -> Task          # a trajectory prefix as a single-step task
    await EpisodeRunner(episode, ask).play() -> Transcript
    scoring.check_episode(transcript, episode) -> Verdict
    EPISODE_CATEGORIES, ENVIRONMENTS, Episode, Turn
"""

from __future__ import annotations

from tasks.episodes.environments import ENVIRONMENTS, environment_class
from tasks.episodes.generate import (
    EPISODE_CATEGORIES,
    EPISODE_SOURCES,
    EpisodeSource,
    agent_step,
    generate_episodes,
    load_episode_sources,
    variant,
)
from tasks.episodes.model import Episode, Turn
from tasks.episodes.runner import EpisodeRunner, Transcript

__all__ = [
    "ENVIRONMENTS",
    "EPISODE_CATEGORIES",
    "EPISODE_SOURCES",
    "Episode",
    "EpisodeRunner",
    "EpisodeSource",
    "Transcript",
    "Turn",
    "agent_step",
    "environment_class",
    "generate_episodes",
    "load_episode_sources",
    "variant",
]
