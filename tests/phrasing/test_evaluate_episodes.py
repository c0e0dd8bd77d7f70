"""``python -m subnet.evaluate --episodes N`` honours --phrasing.*: the episodes' user turns are
phrased as a validator's round phrases them before they are played (issue 28 item 6)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from subnet.config import PhrasingSettings
from subnet.evaluate import EvaluateError, EvaluateSettings
from subnet.evaluate.episodes import build_episodes
from tasks.episodes import generate_episodes

ENDPOINT = "http://127.0.0.1:1/v1/chat/completions"


async def test_episodes_are_phrased_with_the_phrasing_flags(
    standin_engine: Callable[..., Awaitable[Any]],
) -> None:
    url = (await standin_engine()).server.url
    phrasing = PhrasingSettings(engine="openai", url=url, model="standin")
    phrased = await build_episodes(EvaluateSettings(endpoint=ENDPOINT, seed=3, phrasing=phrasing), 8)
    templates = {episode.id: episode for episode in generate_episodes(3, 8)}
    assert phrased and len(phrased) <= 8
    for episode in phrased:
        template = templates[episode.id]
        assert [turn.plan for turn in episode.turns] == [turn.plan for turn in template.turns]
        assert all(
            mine.user != theirs.user for mine, theirs in zip(episode.turns, template.turns, strict=True)
        )


async def test_without_an_engine_the_turns_are_the_templates() -> None:
    plain = await build_episodes(EvaluateSettings(endpoint=ENDPOINT, seed=3), 8)
    assert [e.to_dict() for e in plain] == [e.to_dict() for e in generate_episodes(3, 8)]


async def test_an_engine_that_phrases_nothing_is_one_line(
    standin_engine: Callable[..., Awaitable[Any]],
) -> None:
    url = (await standin_engine("garbage")).server.url
    phrasing = PhrasingSettings(engine="openai", url=url, model="standin", timeout=5.0)
    with pytest.raises(EvaluateError, match="no episode could be phrased"):
        await build_episodes(EvaluateSettings(endpoint=ENDPOINT, seed=3, phrasing=phrasing), 3)
