"""The typed values that cross the validator's rooms: the response row (rounds, episodes, evaluate ->
the store) and the transcript schema (the episode player -> the cap -> the database -> the dashboard)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord
from subnet.transport import MinerTarget
from subnet.validator.dashboard import DashboardLimits, render_episode_page
from subnet.validator.dashboard.reader import DashboardReader, read_episode
from subnet.validator.dashboard.snapshot import EpisodeQuery, EpisodeRecord
from subnet.validator.episodes import TOOL_ERROR, EpisodeLimits, EpisodePlayer
from subnet.validator.rows import Outcome, ResponseRow
from subnet.validator.state import ScoredResponse
from subnet.validator.store import NewTask, Store
from subnet.validator.transcripts import (
    CallEntry,
    EpisodeTranscript,
    StepEntry,
    Trimmed,
    TurnEntry,
    Unreadable,
    bound_transcript,
)
from subnet.validator.writer import UNSTORABLE, unstorable_response
from tasks.episodes import generate_episodes
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import EpisodeRunner

# -- the response row ---------------------------------------------------------------------------


def test_a_row_fills_every_column_of_responses_but_its_id_and_time() -> None:
    row = ResponseRow(1, 2, "hk", 3, Outcome("simple", "ok", 0.5))
    stored = {column.name for column in ResponseRecord.__table__.columns}
    assert set(row.columns()) == stored - {"id", "created_at"}
    assert set(row.columns()) == {"round_id", "task_id", "hotkey", "uid", *Outcome.__dataclass_fields__}
    assert row.columns()["hotkey"] == "hk" and row.columns()["status"] == "ok"
    assert row.scored() == ScoredResponse("hk", 3, "simple", False, 0.0, None)


def test_a_failure_earns_nothing_and_keeps_a_bounded_reason() -> None:
    failed = Outcome.failure("parallel", "timeout", "x" * 5000, "transport:timeout", latency_s=2.0)
    assert (failed.valid, failed.score, failed.components, failed.transcript) == (False, 0.0, {}, None)
    assert len(failed.error or "") == 1000 and failed.latency_s == 2.0
    refused = unstorable_response(
        ResponseRow(1, 2, "hk", 3, Outcome("simple", "ok", 0.4, True, 1.0, raw_output="secret")), ValueError()
    )
    assert (refused.round_id, refused.task_id, refused.hotkey, refused.uid) == (1, 2, "hk", 3)
    outcome = refused.outcome
    assert (outcome.status, outcome.score, outcome.raw_output, outcome.latency_s) == (
        UNSTORABLE,
        0.0,
        None,
        0.4,
    )
    assert outcome.error_type == f"store:{UNSTORABLE}"


async def test_a_row_is_stored_column_for_column(sqlite_engine: AsyncEngine) -> None:
    store = Store(sqlite_engine)
    round_id, task_ids = await store.create_round(
        number=1,
        netuid=1,
        block=1,
        block_hash="0x01",
        seed_commitment="c",
        generator_version="v",
        tasks=[NewTask("t0", "simple", "simple", "x", {}, [])],
    )
    outcome = Outcome(
        "simple",
        "ok",
        0.25,
        valid=True,
        score=1.0,
        components={"calls": 1.0},
        http_status=200,
        raw_output="[f()]",
        decoded_calls=[{"f": {}}],
    )
    row = ResponseRow(round_id, task_ids["t0"], "hk", 7, outcome)
    assert await store.store_responses([row, row]) == 2  # the replay is dropped by the unique key
    async with store.sessions() as session:
        (stored,) = (await session.scalars(select(ResponseRecord))).all()
    assert {name: getattr(stored, name) for name in row.columns()} == row.columns()


async def test_an_episode_plays_without_a_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluation command's path: an outcome with no round id, task id or miner to make up;
    the validator's own failure with the episode is the episode's."""

    async def broken(*_args: Any) -> Outcome:
        raise RuntimeError("the validator's own bug")

    monkeypatch.setattr(EpisodePlayer, "_play", broken)
    (episode,) = [e for e in generate_episodes(b"rows", 8) if e.category == "multi_turn_base"][:1]
    rows: list[ResponseRow] = []
    player = EpisodePlayer(cast(Any, None), EpisodeLimits(deadline_s=5.0), rows.append)
    outcome = await player.play(episode, MinerTarget(hotkey="", ip="", port=0))
    assert rows == []  # nothing keyed, nothing handed on
    assert outcome.status == TOOL_ERROR and not outcome.valid and outcome.score == 0.0
    assert outcome.category == episode.category and "RuntimeError" in (outcome.error or "")
    assert outcome.transcript == {"failed": outcome.error, "turns": []}


# -- the transcript schema ----------------------------------------------------------------------


async def _played() -> tuple[Any, EpisodeTranscript]:
    (episode,) = [e for e in generate_episodes(b"rows", 8) if e.category == "multi_turn_base"][:1]
    transcript = await EpisodeRunner(episode, ReferencePlayer(episode).ask).play()
    return transcript, EpisodeTranscript.played(transcript, ["d" * 64] * transcript.steps, [0.123456])


async def test_a_played_transcript_is_stored_in_the_form_stored_before() -> None:
    transcript, typed = await _played()
    stored = typed.to_json()
    assert _stored_keys(stored) == _stored_keys(OLD_TURNS)  # the keys, in order, stored before
    assert stored["latencies_s"] == [0.1235] and stored["request_digests"] == ["d" * 64] * transcript.steps
    assert len(stored["turns"]) == len(transcript.turns)
    assert EpisodeTranscript.from_json(json.loads(json.dumps(stored))) == typed
    assert typed.stored() == stored  # under the cap: as it was played


def _stored_keys(record: Any) -> Any:
    """The keys of a transcript's JSON form at each level (a turn's, a step's, a call's)."""
    turn = record["turns"][0]
    step = next(step for step in turn["steps"] if step["calls"])
    return list(record), list(turn), list(step), list(step["calls"][0])


#: Transcripts as the validator stored them before the schema (written out, not made by today's code).
OLD_TURNS = {
    "failed": None,
    "turns": [
        {
            "ended": "text",
            "state": '{"files": {}}',
            "steps": [
                {
                    "answer": {"role": "assistant", "tool_calls": []},
                    "text": None,
                    "error": None,
                    "latency_s": 0.05,
                    "calls": [
                        {
                            "name": "list_files",
                            "arguments": {"path": "/"},
                            "env_name": "ls",
                            "env_arguments": {"path": "/"},
                            "observation": {"files": ["notes.txt"]},
                            "unsafe": None,
                            "mutates": False,
                        }
                    ],
                },
                {"answer": "done", "text": "All done.", "error": None, "latency_s": 0.02, "calls": []},
            ],
        }
    ],
    "request_digests": ["a" * 64, "b" * 64],
    "latencies_s": [0.05, 0.02],
}
OLD_AGENT_STEP = {"agent_step": {"answer": None}, "request_digests": ["a" * 64], "latencies_s": [0.5]}
OLD_FAILED = {"failed": "validator: RuntimeError: boom", "turns": []}
OLD_CUT_BLOB = {"truncated": True, "text": '{"turns": [{"steps": [{"answer": "<b>'}


@pytest.mark.parametrize("old", [OLD_TURNS, OLD_AGENT_STEP, OLD_FAILED, OLD_CUT_BLOB])
def test_old_stored_transcripts_load_and_write_back_the_same(old: dict[str, Any]) -> None:
    typed = EpisodeTranscript.from_json(old)
    assert typed is not None and typed.to_json() == old


def test_an_old_transcript_is_read_into_its_parts() -> None:
    typed = EpisodeTranscript.from_json(OLD_TURNS)
    assert typed is not None and typed.request_digests == ("a" * 64, "b" * 64)
    (turn,) = typed.turns
    assert isinstance(turn, TurnEntry) and turn.ended == "text" and len(turn.steps) == 2
    first, second = turn.steps
    assert isinstance(first, StepEntry) and isinstance(second, StepEntry)
    (call,) = first.calls
    assert isinstance(call, CallEntry) and call.name == "list_files" and call.env_name == "ls"
    assert second.text == "All done." and second.latency_s == 0.02
    cut = EpisodeTranscript.from_json(OLD_CUT_BLOB)
    assert cut is not None and cut.truncated_text == OLD_CUT_BLOB["text"]


def test_a_trimmed_transcript_reads_its_markers() -> None:
    big = json.loads(json.dumps(OLD_TURNS))
    big["turns"][0]["state"] = "s" * 100_000
    big["turns"][0]["steps"][0]["calls"][0]["observation"] = "o" * 100_000
    typed = EpisodeTranscript.from_json(bound_transcript(big, cap=4096))
    assert typed is not None and typed.trimmed is not None and typed.trimmed["cap"] == 4096
    (turn,) = typed.turns
    assert isinstance(turn, TurnEntry)
    state = Trimmed.read(turn.state)
    assert state is not None and state.what == "state" and state.chars == 100_000 and state.sha256
    step = turn.steps[0]
    assert isinstance(step, StepEntry) and isinstance(step.calls[0], CallEntry)
    observation = Trimmed.read(step.calls[0].observation)
    assert observation is not None and observation.what == "observations"
    assert Trimmed.read({"files": []}) is None


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "text",
        3,
        [],
        {},
        {"turns": "x"},
        {"turns": [1, {"steps": [2, {"calls": [3]}]}]},
        {"agent_step": 4},
    ],
)
def test_a_stored_value_of_any_shape_loads_without_raising(stored: Any) -> None:
    typed = EpisodeTranscript.from_json(stored)
    if not isinstance(stored, dict):
        assert typed is None
        return
    assert typed is not None
    for turn in typed.turns:
        assert isinstance(turn, TurnEntry | Unreadable)


def _page(transcript: Any) -> str:
    payload = generate_episodes(b"rows", 1)[0].to_dict()
    record = EpisodeRecord(
        round_number=1,
        round_status="scored",
        task_key=str(payload["id"]),
        category=str(payload["category"]),
        payload=payload,
        hotkey="hk",
        uid=1,
        status="ok",
        valid=True,
        score=1.0,
        error_type="",
        error="",
        latency_s=1.0,
        transcript=EpisodeTranscript.from_json(transcript),
    )
    return render_episode_page(record, DashboardLimits())


def test_the_dashboard_shows_old_stored_transcripts() -> None:
    page = _page(OLD_TURNS)
    assert "list_files" in page and "notes.txt" in page and "All done." in page
    assert "size cap" in _page(OLD_CUT_BLOB) and "size cap" not in page
    assert "boom" in _page(OLD_FAILED)
    assert "No transcript was stored" in _page(None)


async def test_an_old_transcript_stored_in_the_database_is_read_typed_and_shown(
    sqlite_engine: AsyncEngine,
) -> None:
    episode = next(e for e in generate_episodes(b"rows", 8) if e.category == "multi_turn_base")
    store = Store(sqlite_engine)
    round_id, task_ids = await store.create_round(
        number=1,
        netuid=1,
        block=1,
        block_hash="0x01",
        seed_commitment="c",
        generator_version="v",
        tasks=[
            NewTask(episode.id, episode.category, episode.category, episode.source, episode.to_dict(), [])
        ],
    )
    # Written as the validator wrote its rows before the typed ones: the columns, by hand.
    async with sqlite_engine.begin() as connection:
        await connection.execute(
            ResponseRecord.__table__.insert(),
            [
                {
                    "round_id": round_id,
                    "task_id": task_ids[episode.id],
                    "hotkey": "hk",
                    "uid": 1,
                    "category": episode.category,
                    "status": "ok",
                    "latency_s": 0.07,
                    "valid": True,
                    "score": 1.0,
                    "components": {},
                    "transcript": OLD_TURNS,
                }
            ],
        )
    await store.mark_collected(round_id, 1)
    assert await store.apply_round(round_id, 0.5) is not None
    record = await read_episode(DashboardReader(sqlite_engine, alpha=0.5), EpisodeQuery(1, episode.id, "hk"))
    assert record is not None and record.transcript == EpisodeTranscript.from_json(OLD_TURNS)
    page = render_episode_page(record, DashboardLimits())
    assert "list_files" in page and "notes.txt" in page and "All done." in page


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)
_keys = st.sampled_from(
    [
        "turns",
        "steps",
        "calls",
        "agent_step",
        "answer",
        "failed",
        "truncated",
        "text",
        "state",
        "name",
        "request_digests",
        "latencies_s",
        "trimmed",
        "unsafe",
        "observation",
        "ended",
        "latency_s",
    ]
)
_shaped = st.recursive(
    _json,
    lambda inner: st.dictionaries(_keys, inner, max_size=6) | st.lists(inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=40, deadline=None)
@given(stored=st.dictionaries(_keys, _shaped, max_size=6))
def test_any_stored_json_loads_and_shows(stored: dict[str, Any]) -> None:
    """Whatever a row's transcript column holds (a hostile miner's text in any place, a form to
    come), it loads and its page renders: never a traceback."""
    typed = EpisodeTranscript.from_json(stored)
    assert typed is not None
    assert "<html" in _page(stored).lower()
