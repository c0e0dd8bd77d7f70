"""Generation never raises (issue 28 item 6): a drawn state no scenario applies to is one more
draw, not a lost round; any seed and any size gives its episodes."""

from __future__ import annotations

from collections.abc import Callable
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tasks.episodes import EPISODE_CATEGORIES, generate_episodes
from tasks.episodes import generate as generate_module


def test_the_seed_whose_shop_had_no_scenario_generates() -> None:
    # "heldout" drew, at episode 263, a shop no scenario applies to: ValueError before the redraw.
    episodes = generate_episodes("heldout", 1000)
    assert len(episodes) == 1000 and episodes[263].turns


def test_a_scenario_refusal_is_redrawn(monkeypatch: pytest.MonkeyPatch) -> None:
    real = generate_module.scenario_function
    refusals = [3]

    def refusing(name: str) -> Callable[[Any, Random], Any]:
        def scenario(env: Any, rng: Random) -> Any:
            if refusals[0]:
                refusals[0] -= 1
                raise ValueError("no scenario applies to this state")
            return real(name)(env, rng)

        return scenario

    monkeypatch.setattr(generate_module, "scenario_function", refusing)
    episode = generate_module._build(b"\x01" * 32, "multi_turn_base")
    assert refusals == [0] and episode.turns and episode.category == "multi_turn_base"


_SEEDS = st.one_of(st.binary(max_size=24), st.integers(min_value=0, max_value=2**63), st.text(max_size=12))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=_SEEDS, n=st.integers(min_value=0, max_value=24))
def test_any_seed_and_size_gives_its_episodes(seed: Any, n: int) -> None:
    episodes = generate_episodes(seed, n)
    assert len(episodes) == n
    for episode in episodes:
        assert episode.category in EPISODE_CATEGORIES and episode.turns
        assert any(turn.plan for turn in episode.turns)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=1, max_size=16), category=st.sampled_from(sorted(EPISODE_CATEGORIES)))
def test_any_seed_gives_every_category_alone(seed: bytes, category: str) -> None:
    episodes = generate_episodes(seed, 12, mix={category: 1.0})
    assert len(episodes) == 12 and {episode.category for episode in episodes} == {category}
