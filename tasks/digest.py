"""One SHA-256 over a fixed sample of the generator's output: tasks of every category, a variant
of each, episodes and their variants. Two processes (two machines, or the compiled and the
Python generator modules, ``tasks.compiled``) agree on it exactly when they generate the same.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from tasks.categories import CATEGORIES
from tasks.episodes import generate_episodes
from tasks.episodes import variant as episode_variant
from tasks.task_sets import generate, variant

__all__ = ["output_digest"]

_MINER = b"digest-miner"


def _dump(item: Any) -> bytes:
    data = item.to_dict() if hasattr(item, "to_dict") else asdict(item)
    return json.dumps(data, sort_keys=True, default=str).encode()


def output_digest(tasks_per_seed: int = 600, episodes: int = 60) -> str:
    """Hex SHA-256 over ``tasks_per_seed`` tasks of the default mix and as many of an even mix,
    for two seeds, a variant of each default-mix task, and ``episodes`` episodes with a variant."""
    digest = hashlib.sha256()
    for seed in ("digest-1", "digest-2"):
        for task in generate(seed, tasks_per_seed):
            digest.update(_dump(task))
            digest.update(_dump(variant(task, _MINER)))
        for task in generate(seed + "-even", tasks_per_seed, mix=dict.fromkeys(CATEGORIES, 1.0)):
            digest.update(_dump(task))
    for episode in generate_episodes("digest-episodes", episodes):
        digest.update(_dump(episode))
        digest.update(_dump(episode_variant(episode, _MINER)))
    return digest.hexdigest()
