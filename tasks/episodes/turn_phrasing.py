"""Episodes' user turns through the phrasing stage (tasks.phrasing), as single-turn requests go.

Every scripted user message is rewritten by the engine and verified against its turn's intent
(the values it states, the value a miss_param turn withholds). An episode any of whose turns
cannot be phrased is dropped whole: a conversation that is half template text would still be
invertible.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tasks.episodes.model import Episode
from tasks.model import Task
from tasks.phrasing import Phrased, PhrasingEngine, PhrasingPolicy, PhrasingStats, phrase

__all__ = ["phrase_episodes"]


def _turn_task(episode: Episode, index: int) -> Task:
    turn = episode.turns[index]
    return Task(
        id=f"{episode.id}-turn{index}",
        category=episode.category,
        messages=[{"role": "user", "content": turn.user}],
        tools=episode.offered(index),
        expected=[],
        seed=episode.seed,
        source=episode.source,
        intent=turn.intent
        or {"asks": [{"values": [], "withheld": [], "example": turn.user}], "example": turn.user},
    )


async def phrase_episodes(
    episodes: Sequence[Episode],
    engine: PhrasingEngine,
    round_seed: bytes | str | int,
    policy: PhrasingPolicy | None = None,
) -> tuple[list[Episode], PhrasingStats]:
    """The episodes whose every user turn was phrased and verified, and what it took."""
    policy = replace(policy or PhrasingPolicy(), replacements=0)
    requests = [_turn_task(episode, index) for episode in episodes for index in range(len(episode.turns))]
    result: Phrased = await phrase(requests, engine, round_seed, policy=policy)
    by_id = {task.id: task for task in result.tasks}
    phrased: list[Episode] = []
    for episode in episodes:
        texts: list[Any] = [by_id.get(f"{episode.id}-turn{index}") for index in range(len(episode.turns))]
        if any(text is None for text in texts):
            continue
        copied = copy.deepcopy(episode)
        for turn, task in zip(copied.turns, texts, strict=True):
            turn.user = task.request
        phrased.append(copied)
    return phrased, result.stats
