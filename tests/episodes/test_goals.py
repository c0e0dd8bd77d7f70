"""Composed scenarios (tasks.episodes.goals): every registered part applies and replays, every
condition goes both ways, compositions leave the environment as they found it, are many and
deterministic, never raise, dominate the builtin mix, and their turns verify as phrased text."""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable
from dataclasses import asdict
from random import Random

import pytest

from tasks.episodes import generate_episodes
from tasks.episodes.environment import Environment
from tasks.episodes.environments import drawn_environments, environment_class, scenario_function
from tasks.episodes.goals import (
    GOAL_MODULES,
    MAX_TURN_CALLS,
    Context,
    _attempt,
    compose,
    goals_of,
    plan_shape,
)
from tasks.episodes.scenario import Scenario
from tasks.seeding import rng_from

COMPOSED = sorted(GOAL_MODULES)


def _replay(cls: type[Environment], seed: str, size: int, drawn: Scenario) -> None:
    """The plan on a fresh copy: no refused call, at most MAX_TURN_CALLS a turn, needed values observed."""
    fresh = cls(seed, size)
    for turn in drawn.turns:
        fresh.begin_turn()
        assert 1 <= len(turn.plan) <= MAX_TURN_CALLS or not turn.plan, turn.plan
        seen = []
        for step in turn.plan:
            assert fresh.forbidden(step["name"], step["arguments"]) is None, step
            observation = fresh.dispatch(step["name"], step["arguments"])
            assert not (isinstance(observation, dict) and "error" in observation), (step, observation)
            seen.append(json.dumps(observation).lower())
        for value in turn.needed:
            assert any(str(value).lower() in text for text in seen), (value, turn.text)
        for value in turn.values:
            assert value["said"] in turn.text, (value, turn.text)


@pytest.mark.parametrize("name", COMPOSED)
def test_compositions_replay_and_leave_the_environment_as_it_was(name: str) -> None:
    cls = environment_class(name)
    composed = 0
    for index in range(120):
        seed, size = f"compose-{index}", (1, 2, 4, 25)[index % 4]
        env = cls(seed, size)
        before = env.fingerprint()
        drawn = compose(env, rng_from(f"draw-{index}".encode()))
        assert env.fingerprint() == before and env.__dict__.keys() == cls(seed, size).__dict__.keys()
        if drawn is None:
            continue
        composed += 1
        assert sum(bool(turn.plan) for turn in drawn.turns) + 1 >= 2
        assert {step["name"] for turn in drawn.turns for step in turn.plan} <= set(drawn.tools)
        _replay(cls, seed, size, drawn)
    assert composed >= 90  # the workspace gives up where a held-back tool has a stand-in


@pytest.mark.parametrize("name", COMPOSED)
def test_every_registered_part_applies_and_every_condition_goes_both_ways(name: str) -> None:
    cls = environment_class(name)
    goals, conditions = goals_of(name)
    assert len(goals) >= 7 and len(conditions) >= 3
    for entry in goals:
        applied = 0
        for index in range(60):
            ctx = Context(cls(f"part-{entry.name}-{index}", 1 + index % 3), Random(index))
            for before in range(index % 3):  # some goals need an earlier one (a cart to check out)
                _attempt(ctx, goals[(index + before) % len(goals)].build)
            part = _attempt(ctx, entry.build)
            if part is not None:
                applied += 1
                assert part.plan and part.text and part.text == part.text.strip(), entry.name
                assert len(part.plan) <= entry.longest, (entry.name, part.plan)
        assert applied >= 3, entry.name
    for probe in conditions:
        outcomes = set()
        for index in range(80):
            ctx = Context(cls(f"probe-{probe.name}-{index}", 1 + index % 3), Random(index))
            for before in range(index % 3):  # some conditions test what an earlier goal did
                _attempt(ctx, goals[(index + before) % len(goals)].build)
            ctx.take()
            try:
                found = probe.probe(ctx)
            except Exception as error:  # Abandon only: a probe that does not apply to this state
                assert type(error).__name__ == "Abandon", error
                continue
            if found is not None:
                assert ctx.calls, probe.name  # the condition is observed, not known beforehand
                assert not any(cls.tools()[step["name"]].mutates for step in ctx.calls), probe.name
                outcomes.add(found.holds)
        assert outcomes == {True, False}, probe.name


@pytest.mark.parametrize("name", COMPOSED)
def test_compositions_are_deterministic_and_many(name: str) -> None:
    cls = environment_class(name)
    one = compose(cls("same", 2), rng_from(b"same"))
    two = compose(cls("same", 2), rng_from(b"same"))
    assert one is not None and json.dumps(asdict(one)) == json.dumps(asdict(two))
    shapes = set()
    drawn = 0
    for index in range(300):
        scenario = compose(cls(f"shape-{index}", 1), rng_from(f"shape-{index}".encode()))
        if scenario is not None:
            drawn += 1
            shapes.add(plan_shape(scenario))
    # A table of plans cannot cover them: almost every composition has a plan shape of its own
    # (bench/episodes.py --shapes counts > 10,000 per environment over 30,000).
    assert len(shapes) >= 0.7 * drawn


@pytest.mark.parametrize("name", COMPOSED)
@pytest.mark.parametrize("size", [1, 3, 20, 40])
def test_composing_never_raises(name: str, size: int) -> None:
    cls = environment_class(name)
    for index in range(12 if size >= 20 else 40):
        compose(cls(f"raise-{size}-{index}", size), rng_from(f"raise-{index}".encode()))


def test_composed_scenarios_dominate_the_builtin_mix(composed_by_parts: Callable[[Scenario], bool]) -> None:
    composed = total = 0
    for index in range(400):
        name = drawn_environments()[index % len(drawn_environments())]
        drawn = scenario_function(name)(
            environment_class(name)(f"mix-{index}", 1), rng_from(f"mix-{index}".encode())
        )
        composed += composed_by_parts(drawn)
        total += 1
    assert composed / total >= 0.6, composed / total


def test_corrections_and_relative_days_say_what_the_plan_does() -> None:
    from tasks.episodes.environments.mail_calendar import _EPOCH

    weekdays = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    numbers = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
    cls = environment_class("mail_calendar")
    corrected = relative = 0
    for index in range(200):
        env = cls(f"days-{index}", 1)
        today = _EPOCH + _dt.timedelta(days=env.today)
        drawn = compose(env, rng_from(f"days-{index}".encode()))
        assert drawn is not None
        for turn in drawn.turns:
            corrected += turn.text.startswith("Actually")
            for step in turn.plan:
                if step["name"] != "create_event" or "Talk about" in step["arguments"]["title"]:
                    continue
                title = step["arguments"]["title"]
                clause = turn.text[turn.text.find(f'"{title}" on my calendar ') :]
                if not clause.startswith(f'"{title}" on my calendar '):
                    continue  # booked at the first free slot of a stated day
                words = clause.removeprefix(f'"{title}" on my calendar ')
                if words.startswith("tomorrow"):
                    days = 1
                elif words.startswith("the day after tomorrow"):
                    days = 2
                elif words.startswith("a week from today"):
                    days = 7
                elif words.startswith("in "):
                    days = numbers[words.split()[1]]
                else:
                    named = words.split()[2]
                    days = (weekdays.index(named) - today.weekday() - 1) % 7 + 1
                assert step["arguments"]["date"] == (today + _dt.timedelta(days=days)).isoformat(), words
                relative += 1
    assert corrected >= 10 and relative >= 30


def test_composed_turns_verify_as_phrased_text() -> None:
    from tasks.episodes.turn_phrasing import _turn_task
    from tasks.phrasing.verification import verify

    checked = 0
    for episode in generate_episodes(b"composed-verify", 300):
        if episode.category == "agent_step" or episode.environment not in GOAL_MODULES:
            continue
        for index, turn in enumerate(episode.turns):
            assert verify(turn.user, _turn_task(episode, index).intent).reason is None, turn.user
            checked += 1
    assert checked >= 300
