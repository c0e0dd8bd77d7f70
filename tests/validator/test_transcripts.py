"""Stored transcripts are bounded by design (issue 26): state fingerprints and observations are
trimmed first (with markers saying what was trimmed), the calls and answers are kept, the record
is always under the cap, and no transcript is ever stored as a cut blob of text: not an honest
episode's of any environment, not a hostile miner's."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord
from subnet.protocol import ChatCompletionResponse
from subnet.transport import MinerTarget, QueryResult, QueryStatus
from subnet.validator.dashboard import DashboardLimits, render_episode_page
from subnet.validator.dashboard.snapshot import EpisodeRecord
from subnet.validator.episodes import EpisodeLimits, EpisodePlayer
from subnet.validator.rows import ResponseRow
from subnet.validator.store import NewTask, Store
from subnet.validator.transcripts import (
    TRANSCRIPT_CAP,
    EpisodeTranscript,
    bound_transcript,
    transcript_chars,
)
from tasks.episodes import ENVIRONMENTS, EPISODE_CATEGORIES, Episode, agent_step, generate_episodes, variant
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import CallRecord, StepRecord, Transcript, TurnRecord

# -- honest episodes, stored --------------------------------------------------------------------


class _Reference:
    """A miner playing the current episode's reference plan (the tests' honest player), at once."""

    def __init__(self) -> None:
        self.episode: Episode | None = None

    async def query(self, target: Any, request: Any, **_options: Any) -> QueryResult:
        episode = self.episode
        assert episode is not None
        if episode.category == "agent_step":
            ((name, arguments),) = agent_step(episode).expected[0].items()
            function = {
                "name": name,
                "arguments": json.dumps({key: values[0] for key, values in arguments.items()}),
            }
            message: Any = {
                "role": "assistant",
                "tool_calls": [{"id": "c0", "type": "function", "function": function}],
            }
        else:
            messages = [item.model_dump(mode="json", exclude_none=True) for item in request.messages]
            tools = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools or ()]
            message = await ReferencePlayer(episode).ask(messages, tools)
        completion = ChatCompletionResponse.model_validate(
            {"id": "ref", "model": "reference", "choices": [{"index": 0, "message": message}]}
        )
        return QueryResult(status=QueryStatus.OK, latency_s=0.001, completion=completion, http_status=200)


def _honest_episodes() -> list[Episode]:
    episodes = generate_episodes(b"transcripts", 160)
    try:
        from tasks.episodes.bfcl import load_bfcl_multi_turn

        episodes += list(load_bfcl_multi_turn())[:12]
    except Exception:  # bfcl-eval's data is not installed: the generated environments only
        pass
    return episodes


async def _play_and_store(store: Store, episodes: list[Episode]) -> list[tuple[Episode, dict[str, Any], Any]]:
    """Each episode played honestly through the validator's episode player, its row stored;
    (episode, row as the player made it, transcript as the database gives it back)."""
    round_id, task_ids = await store.create_round(
        number=1,
        netuid=1,
        block=1,
        block_hash="0x01",
        seed_commitment="c",
        generator_version="v",
        tasks=[
            NewTask(episode.id, episode.category, episode.category, episode.source, episode.to_dict(), [])
            for episode in episodes
        ],
    )
    querier = _Reference()
    rows: list[ResponseRow] = []
    player = EpisodePlayer(querier, EpisodeLimits(deadline_s=60.0), rows.append)
    miner = SimpleNamespace(hotkey="honest", uid=1)
    target = MinerTarget(hotkey="honest", ip="127.0.0.1", port=1, uid=1)
    for episode in episodes:
        shown = variant(episode, b"honest")
        querier.episode = shown
        await player.play_miner(round_id, task_ids, miner, target, [(episode, shown)])
    assert await store.store_responses(rows) == len(rows)
    async with store.engine.connect() as connection:
        found = await connection.execute(select(ResponseRecord.task_id, ResponseRecord.transcript))
        stored = {task_id: transcript for task_id, transcript in found}
    return [
        (episode, row.columns(), stored[row.task_id]) for episode, row in zip(episodes, rows, strict=True)
    ]


async def test_honest_transcripts_of_every_environment_are_stored_whole_but_for_fingerprints(
    sqlite_engine: AsyncEngine,
) -> None:
    episodes = _honest_episodes()
    played = await _play_and_store(Store(sqlite_engine), episodes)
    environments = {episode.environment for episode, _, _ in played}
    assert environments >= set(ENVIRONMENTS) - {"bfcl"} and "workspace" in environments
    assert {episode.category for episode, _, _ in played} == set(EPISODE_CATEGORIES)
    trimmed: Counter[str] = Counter()
    for episode, row, stored in played:
        assert row["valid"], (episode.id, row["error_type"])
        assert isinstance(stored, dict) and "truncated" not in stored, episode.id
        assert transcript_chars(stored) <= TRANSCRIPT_CAP, episode.id
        if "trimmed" in stored:
            trimmed[episode.environment] += 1
            # Only the fingerprints were trimmed: every call, observation and answer is whole.
            assert set(stored["trimmed"]) == {"states", "chars", "cap"}, (episode.id, stored["trimmed"])
            for turn in stored["turns"]:
                assert turn["state"]["trimmed"] == "state" and len(turn["state"]["sha256"]) == 64
                for step in turn["steps"]:
                    for call in step["calls"]:
                        assert not (
                            isinstance(call["observation"], dict) and "trimmed" in call["observation"]
                        )
    # The long-context episodes are over the cap with their fingerprints (before issue 26 they
    # were stored as a cut blob of text); at least the workspace's.
    assert trimmed["workspace"] > 0, trimmed


async def test_a_transcript_under_the_cap_is_stored_as_it_was_played(sqlite_engine: AsyncEngine) -> None:
    small = [episode for episode in generate_episodes(b"small", 20) if episode.category == "multi_turn_base"][
        :3
    ]
    for _, row, stored in await _play_and_store(Store(sqlite_engine), small):
        assert "trimmed" not in stored and stored["turns"] == row["transcript"]["turns"]
        assert all(isinstance(turn["state"], str) for turn in stored["turns"])


# -- hostile transcripts ------------------------------------------------------------------------

HUGE = 100_000


def _hostile_record(turns: int = 3, steps: int = 8, calls: int = 4, text: int = HUGE) -> dict[str, Any]:
    """A transcript as a hostile miner makes it: huge answers, calls whose observations and
    arguments are huge, huge states; the shape ``EpisodePlayer`` stores."""
    transcript = Transcript(failed="deadline: " + "x" * text)
    for turn_index in range(turns):
        record = TurnRecord(ended="step_limit", state=json.dumps({"files": {"f": "s" * text}}))
        for step_index in range(steps):
            step = StepRecord({"role": "assistant", "content": "A" * text}, latency_s=0.5)
            for call_index in range(calls):
                name = f"tool_{turn_index}_{step_index}_{call_index}"
                step.calls.append(
                    CallRecord(
                        name, {"path": "p" * text}, name, {"path": "p" * text}, {"content": "O" * text}
                    )
                )
            record.steps.append(step)
        transcript.turns.append(record)
    return EpisodeTranscript.played(
        transcript, ["d" * 64] * (turns * steps), [0.5] * (turns * steps)
    ).to_json()


def _call_names(record: dict[str, Any]) -> list[list[list[str]]]:
    return [[[call["name"] for call in step["calls"]] for step in turn["steps"]] for turn in record["turns"]]


def test_a_hostile_transcript_is_under_the_cap_and_keeps_its_calls() -> None:
    record = _hostile_record()
    original = copy.deepcopy(record)
    assert transcript_chars(record) > 50 * TRANSCRIPT_CAP
    bounded = bound_transcript(record)
    assert record == original  # the played record is not changed
    assert transcript_chars(bounded) <= TRANSCRIPT_CAP
    assert "truncated" not in bounded
    assert _call_names(bounded) == _call_names(record)  # every call, by name, in order
    assert bounded["request_digests"] == record["request_digests"]
    marks = bounded["trimmed"]
    # Every state, observation and answer (and why play stopped) is trimmed, each once.
    assert marks["states"] == 3 and marks["observations"] == 3 * 8 * 4 and marks["answers"] == 3 * 8 + 1
    assert marks["chars"] == transcript_chars(record) and marks["cap"] == TRANSCRIPT_CAP
    observation = bounded["turns"][0]["steps"][0]["calls"][0]["observation"]
    assert observation["trimmed"] == "observations" and observation["chars"] > HUGE


def test_a_transcript_with_more_calls_than_the_cap_holds_keeps_its_first_steps() -> None:
    record = _hostile_record(turns=6, steps=12, calls=16, text=5_000)
    bounded = bound_transcript(record)
    assert transcript_chars(bounded) <= TRANSCRIPT_CAP and "truncated" not in bounded
    assert bounded["trimmed"]["steps"] > 0
    for turn, kept in zip(record["turns"], bounded["turns"], strict=True):
        shown = [[call["name"] for call in step["calls"]] for step in kept["steps"]]
        assert shown == [[call["name"] for call in step["calls"]] for step in turn["steps"][: len(shown)]]
        assert kept["steps_trimmed"] == len(turn["steps"]) - len(shown)


def test_an_agent_step_with_a_huge_answer_is_under_the_cap() -> None:
    record = {"agent_step": {"answer": {"content": "z" * HUGE}}, "request_digests": ["d" * 64]}
    bounded = bound_transcript(record)
    assert transcript_chars(bounded) <= TRANSCRIPT_CAP
    assert bounded["agent_step"]["answer"]["trimmed"] == "answers"


_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.integers(0, 8),
    steps=st.integers(0, 20),
    calls=st.integers(0, 16),
    text=st.integers(0, 20_000),
    extra=_junk,
)
def test_any_transcript_is_bounded(turns: int, steps: int, calls: int, text: int, extra: Any) -> None:
    record = _hostile_record(turns, steps, calls, text)
    record["turns"].append(extra)  # a malformed turn too
    bounded = bound_transcript(record)
    assert transcript_chars(bounded) <= TRANSCRIPT_CAP
    assert isinstance(bounded, dict) and "truncated" not in bounded


# -- the dashboard shows trimmed transcripts ----------------------------------------------------


@pytest.mark.parametrize("shape", ["honest", "hostile"])
async def test_the_dashboard_renders_a_trimmed_transcript(
    shape: str, sqlite_engine: AsyncEngine, tmp_path: Path
) -> None:
    if shape == "honest":
        long = [episode for episode in generate_episodes(b"long", 80) if episode.environment == "workspace"]
        episode = next(item for item in long if item.category == "multi_turn_long_context")
        ((_, _row, stored),) = await _play_and_store(Store(sqlite_engine), [episode])
        payload, transcript = episode.to_dict(), stored
        assert "trimmed" in transcript
        name = transcript["turns"][0]["steps"][0]["calls"][0]["name"]
    else:
        payload = generate_episodes(b"long", 1)[0].to_dict()
        transcript = bound_transcript(_hostile_record())
        name = "tool_2_7_3"
    record = EpisodeRecord(
        round_number=1,
        round_status="scored",
        task_key=str(payload["id"]),
        category=str(payload["category"]),
        payload=payload,
        hotkey="hk",
        uid=1,
        status="ok",
        valid=shape == "honest",
        score=1.0,
        error_type="",
        error="",
        latency_s=1.0,
        transcript=EpisodeTranscript.from_json(transcript),
    )
    page = render_episode_page(record, DashboardLimits())
    assert name in page
    assert "over the validator's size cap" not in page  # not shown as a cut blob
    assert "trimmed" in page  # the markers say what was trimmed
