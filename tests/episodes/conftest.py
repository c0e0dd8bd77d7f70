"""Test equipment for the episode tests: which drawn scenarios were composed from an environment's parts.

An environment's ``scenario`` (``tasks.episodes.goals.scenario_of``) returns either a scenario
composed from its parts (``compose``) or one of its fixed kinds, and nothing downstream treats the
two apart, so the scenario does not say which it is. The bounds a test holds a plan to differ
(a composition has more turns, and at most ``MAX_TURN_CALLS`` calls a turn): the fixture watches
``compose`` hand its scenarios out, and tells a drawn scenario by being one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from random import Random

import pytest

import tasks.episodes.goals as goals
from tasks.episodes.environment import Environment
from tasks.episodes.scenario import Scenario


@pytest.fixture
def composed_by_parts(monkeypatch: pytest.MonkeyPatch) -> Callable[[Scenario], bool]:
    """``composed(scenario)``: whether ``compose`` made ``scenario`` (while the test runs)."""
    made: dict[int, Scenario] = {}  # by id, each kept alive so that no later object takes its id
    compose = goals.compose

    def watched(env: Environment, rng: Random) -> Scenario | None:
        scenario = compose(env, rng)
        if scenario is not None:
            made[id(scenario)] = scenario
        return scenario

    monkeypatch.setattr(goals, "compose", watched)
    return lambda scenario: made.get(id(scenario)) is scenario
