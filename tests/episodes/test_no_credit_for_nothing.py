"""No credit for doing nothing (issue 28 item 5): an episode that needed calls and got none (or
none that went through) scores 0; abstaining passes only a turn whose plan is empty, and only that
turn; a turn that needed calls and asks for no value fails when the miner made none."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scoring.credit import episode_partial_credit
from tasks.episodes import Episode, Turn, generate_episodes, variant
from tasks.episodes.checking import check_episode
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import EpisodeRunner


async def _play(episode: Episode, ask: Any) -> Any:
    return check_episode(await EpisodeRunner(episode, ask).play(), episode)


async def _cannot_help(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    return {"role": "assistant", "content": "I'm sorry, I cannot help with that."}


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    return [
        variant(episode, b"idle")
        for episode in generate_episodes(b"no-credit", 160)
        if episode.category != "agent_step"
    ]


async def test_never_calling_scores_zero_on_every_episode_that_needs_calls(episodes: list[Episode]) -> None:
    scores = []
    for episode in episodes:
        assert any(turn.plan for turn in episode.turns)  # every builtin episode needs calls
        verdict = await _play(episode, _cannot_help)
        assert not verdict.valid and verdict.score == 0.0, (episode.id, verdict)
        assert verdict.components["calls"] == 0.0 and verdict.components["economy"] == 0.0
        scores.append(verdict.score)
    assert sum(scores) / len(scores) <= 0.05


async def test_calls_that_all_fail_earn_nothing(episodes: list[Episode]) -> None:
    episode = next(e for e in episodes if e.category == "multi_turn_base")

    async def broken(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] == "tool":
            return {"role": "assistant", "content": "Done."}
        call = {"id": "b", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}

    verdict = await _play(episode, broken)
    assert not verdict.valid and verdict.score == 0.0


def _abstain_then(episode: Episode, acting_turns: set[int]) -> Any:
    """The reference player in ``acting_turns`` (and in empty-plan turns), text elsewhere."""
    reference = ReferencePlayer(episode)

    async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        turn = sum(1 for message in messages if message["role"] == "user") - 1
        if turn in acting_turns or not episode.turns[turn].plan:
            return await reference.ask(messages, tools)
        return {"role": "assistant", "content": "Done."}

    return ask


async def test_a_right_abstention_counts_for_its_own_turn_only(episodes: list[Episode]) -> None:
    episode = next(e for e in episodes if e.category == "multi_turn_miss_param" and len(e.turns) >= 3)
    assert not episode.turns[0].plan and episode.turns[1].plan
    # Abstaining in the turn that lacks a value passes that turn, but abstaining everywhere is
    # still doing nothing.
    idle = await _play(episode, _abstain_then(episode, set()))
    assert not idle.valid and idle.score == 0.0
    assert idle.components["turns"] >= 1 / len(episode.turns) - 1e-9
    # Acting in the next turn too: both turns count, the rest of the episode fails.
    acting = await _play(episode, _abstain_then(episode, {1}))
    assert not acting.valid and 0.0 < acting.score < 0.5
    assert acting.components["turns"] >= 2 / len(episode.turns) - 1e-9
    assert acting.score == pytest.approx(episode_partial_credit(acting.components))


def _status_episode() -> Episode:
    """One turn whose plan only reads (the home's status) and asks for no value."""
    home = next(e for e in generate_episodes(b"status", 60) if e.environment == "home")
    turn = Turn(
        "Have a look at the house for me.",
        ["get_status", "lock_door"],
        [{"name": "get_status", "arguments": {}}],
    )
    return Episode(
        id="status-only",
        category="multi_turn_base",
        environment="home",
        env_seed=home.env_seed,
        size=home.size,
        turns=[turn],
        seed=home.seed,
    )


async def test_a_turn_that_needed_calls_fails_without_one() -> None:
    episode = _status_episode()
    idle = await _play(episode, _cannot_help)
    assert not idle.valid and idle.error_type == "multi_turn:no_action" and idle.score == 0.0
    acted = await _play(episode, ReferencePlayer(episode).ask)
    assert acted.valid, acted


def _moved_meeting_episode() -> Episode:
    """Move a meeting to 10:00; then "What time does it end now?" (read again by the plan)."""
    from tasks.episodes import environment_class

    seed = bytes(range(32))
    env = environment_class("mail_calendar")(seed, 1)
    event = env.events[0]
    moved = env.move_event(event["id"], event["date"], "10:00")
    move = {
        "name": "move_event",
        "arguments": {"event_id": event["id"], "date": event["date"], "start": "10:00"},
    }
    ask = {"name": "list_events", "arguments": {"date": event["date"]}}
    tools = ["move_event", "list_events"]
    turns = [
        Turn("Move that meeting to 10:00.", tools, [move]),
        Turn("What time does it end now?", tools, [ask], [moved["end"]]),
    ]
    return Episode("moved", "multi_turn_base", "mail_calendar", seed.hex(), 1, turns, seed.hex())


async def test_a_value_told_from_an_earlier_observation_needs_no_new_call() -> None:
    # The move's own observation showed the new end, so answering it in words is understanding,
    # not abstaining: the turn passes with no call.
    episode = _moved_meeting_episode()
    reference = ReferencePlayer(episode)

    async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if sum(1 for message in messages if message["role"] == "user") == 1:
            return await reference.ask(messages, tools)
        return {"role": "assistant", "content": f"It now ends at {episode.turns[1].needed[0]}."}

    verdict = await _play(episode, ask)
    assert verdict.valid, verdict
    assert (await _play(episode, reference.ask)).valid


def test_episode_partial_credit_weights_and_ceiling() -> None:
    assert episode_partial_credit({"turns": 1.0, "calls": 1.0, "economy": 1.0}) == pytest.approx(0.5)
    assert episode_partial_credit({"turns": 0.0, "calls": 0.0, "economy": 0.0}) == 0.0
    assert episode_partial_credit({"turns": 0.5, "calls": 1.0, "economy": 0.5}) == pytest.approx(
        0.5 * (0.3 + 0.3 + 0.05)
    )
    assert json.dumps(episode_partial_credit({"turns": 0.2, "calls": 0.4, "economy": 1.0}))
