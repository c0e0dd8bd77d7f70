"""Score-state math and the store's exactly-once guarantees (SQLite, and PostgreSQL when present)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select, update
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import ResponseRecord, Round, RoundStatus, create_engine, upgrade
from subnet.db.models import storable_text, utcnow
from subnet.validator.rows import ResponseRow
from subnet.validator.state import (
    ScoredResponse,
    Standing,
    WeightPolicy,
    compute_weights,
    summarise_round,
    update_moving_average,
    why_no_weights,
)
from subnet.validator.store import NewTask, Store
from subnet.validator.writer import UNSTORABLE, ResponseWriter, StageClock
from tests.validator.row_equipment import response_row


@dataclass
class FakeNeuron:
    uid: int
    hotkey: str
    coldkey: str = "cold"
    axon_ip: str = "127.0.0.1"
    axon_port: int = 1
    validator_permit: bool = False


def test_moving_average_starts_from_zero_and_converges() -> None:
    average = 0.0
    for _ in range(60):
        average = update_moving_average(average, 1.0, 0.1)
    assert 0.99 < average <= 1.0
    assert update_moving_average(0.0, 1.0, 0.25) == 0.25
    with pytest.raises(ValueError):
        update_moving_average(0.0, 1.0, 0.0)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.floats(0.01, 1))
def test_moving_average_stays_within_observations(observations: list[float], alpha: float) -> None:
    average = 0.0
    for value in observations:
        average = update_moving_average(average, value, alpha)
        assert 0.0 <= average <= max(observations) + 1e-12


def test_round_summary_per_category() -> None:
    summaries = summarise_round(
        [
            ScoredResponse("a", 1, "simple", True, 1.0),
            ScoredResponse("a", 1, "simple", False, 0.5),
            ScoredResponse("a", 1, "parallel", False, 0.0),
            ScoredResponse("b", 2, "simple", True, 1.0),
        ]
    )
    assert summaries["a"].total == 3 and summaries["a"].valid == 1
    assert summaries["a"].mean_score == pytest.approx(0.5)
    assert summaries["a"].by_category == {"simple": (2, 1, 1.5), "parallel": (1, 0, 0.0)}


def test_weights_mapping_floor_power_samples_and_exclusions() -> None:
    policy = WeightPolicy(floor=0.2, power=2.0, min_samples=8)
    standings = [
        Standing("best", 0.9, 40),
        Standing("fair", 0.6, 40),
        Standing("below-floor", 0.15, 40),
        Standing("too-new", 0.95, 3),
        Standing("validator", 0.9, 40),
        Standing("gone", 0.9, 40),
    ]
    uids = {"best": 1, "fair": 2, "below-floor": 3, "too-new": 4, "validator": 5}
    weights = compute_weights(standings, uids, policy, excluded_hotkeys=frozenset({"validator"}))
    assert set(weights) == {1, 2}
    assert sum(weights.values()) == pytest.approx(1.0)
    expected_ratio = ((0.9 - 0.2) / (0.6 - 0.2)) ** 2
    assert weights[1] / weights[2] == pytest.approx(expected_ratio)
    assert compute_weights([Standing("x", 0.1, 50)], {"x": 0}, policy) == {}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, sqlite_db_url: str) -> AsyncIterator[Store]:
    url = sqlite_db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    await upgrade(url)
    engine = create_engine(url)
    yield Store(engine)
    await engine.dispose()


def _task(key: str, category: str = "simple") -> NewTask:
    return NewTask(key, category, category, "test", {"id": key}, [{"f": {"x": [1]}}])


def _response(round_id: int, task_id: int, hotkey: str, uid: int, score: float, **extra: Any) -> ResponseRow:
    row = {
        "round_id": round_id,
        "task_id": task_id,
        "hotkey": hotkey,
        "uid": uid,
        "category": "simple",
        "status": "ok",
        "latency_s": 0.1,
        "raw_output": "out",
        "raw_truncated": False,
        "decoded_calls": [],
        "valid": score == 1.0,
        "score": score,
        "components": {},
    }
    row.update(extra)
    return response_row(row)


async def _round(store: Store, tasks: int = 2) -> tuple[int, dict[str, int]]:
    number = await store.next_round_number()
    return await store.create_round(
        number=number,
        netuid=1,
        block=100 + number,
        block_hash=f"0x{number:064x}",
        seed_commitment="c" * 64,
        generator_version="t",
        tasks=[_task(f"t{i}") for i in range(tasks)],
    )


async def test_round_applied_exactly_once_and_duplicates_dropped(store: Store) -> None:
    round_id, task_ids = await _round(store)
    rows = [_response(round_id, task_id, "hk-a", 1, 1.0) for task_id in task_ids.values()]
    await store.store_responses(rows)
    await store.store_responses([_response(round_id, task_ids["t0"], "hk-a", 1, 0.0)])  # a replay
    await store.mark_collected(round_id, n_miners=1)
    first = await store.apply_round(round_id, alpha=0.5)
    second = await store.apply_round(round_id, alpha=0.5)
    assert first is not None and first["hk-a"].total == 2 and first["hk-a"].mean_score == 1.0
    assert second is None
    state = (await store.score_states())["hk-a"]
    assert state.moving_average == pytest.approx(0.5)
    assert state.responses_total == 2 and state.rounds_scored == 1
    assert await store.category_accuracy("hk-a") == {"simple": 1.0}

    round_two, task_ids_two = await _round(store)
    await store.store_responses([_response(round_two, t, "hk-a", 1, 1.0) for t in task_ids_two.values()])
    await store.mark_collected(round_two, 1)
    await store.apply_round(round_two, alpha=0.5)
    assert (await store.score_states())["hk-a"].moving_average == pytest.approx(0.75)


async def test_recovery_finishes_collected_and_discards_running(store: Store) -> None:
    collected_id, collected_tasks = await _round(store)
    await store.store_responses(
        [_response(collected_id, t, "hk-a", 1, 1.0) for t in collected_tasks.values()]
    )
    await store.mark_collected(collected_id, 1)
    running_id, running_tasks = await _round(store)
    await store.store_responses([_response(running_id, running_tasks["t0"], "hk-a", 1, 1.0)])

    recoveries = await store.recover_interrupted(alpha=0.5)
    assert [(r.round_id, r.action) for r in recoveries] == [
        (collected_id, "finished"),
        (running_id, "discarded"),
    ]
    statuses = {r.id: r.status for r in await store.rounds()}
    assert statuses == {collected_id: RoundStatus.SCORED.value, running_id: RoundStatus.DISCARDED.value}
    state = (await store.score_states())["hk-a"]
    assert state.responses_total == 2 and state.moving_average == pytest.approx(0.5)
    assert await store.recover_interrupted(alpha=0.5) == []
    assert await store.next_round_number() == 3  # discarded numbers are never reused


async def test_new_hotkey_on_a_uid_starts_from_zero(store: Store) -> None:
    await store.upsert_miners([FakeNeuron(7, "old-owner")])
    round_id, task_ids = await _round(store, tasks=1)
    await store.store_responses([_response(round_id, task_ids["t0"], "old-owner", 7, 1.0)])
    await store.mark_collected(round_id, 1)
    await store.apply_round(round_id, 0.5)
    await store.upsert_miners([FakeNeuron(7, "new-owner")])
    miners = {miner.hotkey: miner.uid for miner in await store.known_miners()}
    assert miners == {"old-owner": 7, "new-owner": 7}
    states = await store.score_states()
    assert "new-owner" not in states
    weights = compute_weights(await store.standings(), {"new-owner": 7}, WeightPolicy(min_samples=1))
    assert weights == {}


async def test_prune_drops_old_raw_outputs_and_keeps_aggregates(store: Store) -> None:
    round_id, task_ids = await _round(store)
    old = utcnow() - timedelta(days=30)
    await store.store_responses(
        [
            _response(round_id, task_ids["t0"], "hk-a", 1, 1.0),
            _response(round_id, task_ids["t1"], "hk-a", 1, 1.0),
        ]
    )
    async with store.sessions.begin() as session:  # the first answer came in a month ago
        await session.execute(
            update(ResponseRecord).where(ResponseRecord.task_id == task_ids["t0"]).values(created_at=old)
        )
    await store.mark_collected(round_id, 1)
    await store.apply_round(round_id, 0.5)
    assert await store.prune_raw_outputs(timedelta(days=7)) == 1
    assert await store.prune_raw_outputs(timedelta(days=7)) == 0
    assert (await store.score_states())["hk-a"].responses_total == 2


async def test_weight_submissions_are_recorded(store: Store) -> None:
    await store.record_weights(
        block=5, weights={1: 0.75, 2: 0.25}, hotkeys=["a", "b"], version_key=3, outcome="ok"
    )
    await store.record_weights(block=None, weights={}, hotkeys=[], version_key=3, outcome="chain_unavailable")
    submissions = await store.weight_submissions()
    assert [(s.outcome, s.uids, s.weights) for s in submissions] == [
        ("ok", [1, 2], [0.75, 0.25]),
        ("chain_unavailable", [], []),
    ]


async def test_standings_of_many_hotkeys_and_categories_fold_in_bulk(store: Store) -> None:
    hotkeys = [f"hk-{index}" for index in range(40)]
    for round_index in range(2):
        round_id, task_ids = await _round(store, tasks=3)
        rows = [
            _response(
                round_id,
                task_id,
                hotkey,
                uid + round_index,  # a uid that moved: the standing follows the hotkey
                1.0 if (uid + position) % 2 == 0 else 0.0,
                category=("simple", "parallel", "multiple")[position],
            )
            for uid, hotkey in enumerate(hotkeys)
            for position, task_id in enumerate(task_ids.values())
        ]
        await store.store_responses(rows)
        await store.mark_collected(round_id, len(hotkeys))
        summaries = await store.apply_round(round_id, alpha=0.5)
        assert summaries is not None and len(summaries) == len(hotkeys)
    states = await store.score_states()
    assert set(states) == set(hotkeys)
    for uid, hotkey in enumerate(hotkeys):
        state = states[hotkey]
        mean = (2 if uid % 2 == 0 else 1) / 3  # right on the positions where uid + position is even
        assert state.moving_average == pytest.approx(0.5 * mean + 0.5 * (0.5 * mean))
        assert (state.rounds_scored, state.responses_total, state.uid) == (2, 6, uid + 1)
        assert state.responses_valid == (4 if uid % 2 == 0 else 2)
        assert state.last_round_id == round_id
        accuracy = await store.category_accuracy(hotkey)
        expected = (
            {"simple": 0.0, "parallel": 1.0, "multiple": 0.0}
            if uid % 2
            else {
                "simple": 1.0,
                "parallel": 0.0,
                "multiple": 1.0,
            }
        )
        assert accuracy == expected


async def test_known_summaries_are_folded_only_when_the_stored_rows_agree(store: Store) -> None:
    from subnet.validator.state import ScoredResponse, summarise_round

    round_id, task_ids = await _round(store)
    rows = [_response(round_id, task_id, "hk-a", 1, 1.0) for task_id in task_ids.values()]
    await store.store_responses(rows)
    await store.mark_collected(round_id, 1)
    # The caller believes a third response went in with score 0: the table says otherwise.
    believed = summarise_round(
        [ScoredResponse("hk-a", 1, "simple", True, 1.0)] * 2
        + [ScoredResponse("hk-a", 1, "simple", False, 0.0)]
    )
    folded = await store.apply_round(round_id, alpha=0.5, known=believed)
    assert folded is not None and folded["hk-a"].total == 2 and folded["hk-a"].mean_score == 1.0
    assert (await store.score_states())["hk-a"].moving_average == pytest.approx(0.5)

    round_two, task_ids_two = await _round(store)
    await store.store_responses([_response(round_two, t, "hk-a", 1, 0.0) for t in task_ids_two.values()])
    await store.mark_collected(round_two, 1)
    agreed = summarise_round([ScoredResponse("hk-a", 1, "simple", False, 0.0)] * 2)
    assert await store.apply_round(round_two, alpha=0.5, known=agreed) is agreed
    assert await store.apply_round(round_two, alpha=0.5, known=agreed) is None  # exactly once
    state = (await store.score_states())["hk-a"]
    assert state.moving_average == pytest.approx(0.25)
    assert (state.rounds_scored, state.responses_total) == (2, 4)


class _RefusingStore(Store):
    """Refuses any statement that holds a row of the hotkey "refused", as a database would
    refuse a value it cannot store."""

    async def store_responses(self, rows: Sequence[ResponseRow]) -> int:
        if any(row.hotkey == "refused" and row.outcome.status != UNSTORABLE for row in rows):
            raise StatementError("refused", None, {}, ValueError("cannot store this value"))
        return await super().store_responses(rows)


async def test_a_row_the_database_refuses_costs_only_its_miner(sqlite_engine: AsyncEngine) -> None:
    store = _RefusingStore(sqlite_engine)
    round_id, task_ids = await _round(store, tasks=2)
    writer = ResponseWriter(store, batch_size=64, clock=StageClock())
    writer.start()
    for task_id in task_ids.values():
        for uid, hotkey in enumerate(("honest", "refused", "other")):
            writer.add(_response(round_id, task_id, hotkey, uid, 1.0, raw_output="x" * 10))
    await writer.close()

    async with store.sessions() as session:
        rows = (await session.scalars(select(ResponseRecord).order_by(ResponseRecord.id))).all()
    assert len(rows) == 6
    by_hotkey = {
        hotkey: [row for row in rows if row.hotkey == hotkey] for hotkey in ("honest", "refused", "other")
    }
    assert all(
        row.score == 1.0 and row.valid and row.status == "ok"
        for row in by_hotkey["honest"] + by_hotkey["other"]
    )
    for row in by_hotkey["refused"]:
        assert (row.status, row.score, row.valid, row.raw_output) == (UNSTORABLE, 0.0, False, None)
        assert row.error == "the answer could not be stored: StatementError"
    # What the round folds into the standings is what was stored.
    assert sorted((s.hotkey, s.score) for s in writer.scored) == sorted(
        [("honest", 1.0)] * 2 + [("other", 1.0)] * 2 + [("refused", 0.0)] * 2
    )


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_miner_text_with_nul_and_surrogates_is_stored_escaped(
    backend: str, request: pytest.FixtureRequest, sqlite_engine: AsyncEngine
) -> None:
    engine = sqlite_engine
    if backend == "postgres":
        url = request.getfixturevalue("pg_url")
        await upgrade(url)
        engine = create_engine(url)
    try:
        store = Store(engine)
        round_id, task_ids = await _round(store, tasks=1)
        (task_id,) = task_ids.values()
        hostile = "a\x00b\ud800c\udfffé" + "\x01\x1f" * 1000
        await store.store_responses(
            [_response(round_id, task_id, "h", 1, 0.0, raw_output=hostile, error=hostile)]
        )
        await store.discard_round(round_id, note="note\x00\ud800")
        async with store.sessions() as session:
            row = (await session.scalars(select(ResponseRecord))).one()
            note = (await session.scalars(select(Round.note))).one()
        expected = "a\\x00b\\ud800c\\udfffé" + "\x01\x1f" * 1000
        assert row.raw_output == expected and row.error == expected
        assert note == "note\\x00\\ud800"
    finally:
        if engine is not sqlite_engine:
            await engine.dispose()


@pytest.mark.parametrize(
    ("text", "stored"),
    [("plain", "plain"), ("é ok", "é ok"), ("\x00", "\\x00"), ("\ud800", "\\ud800"), ("a\\x00", "a\\x00")],
)
def test_storable_text_changes_only_what_no_backend_stores(text: str, stored: str) -> None:
    assert storable_text(text) == stored


def test_why_no_weights_names_the_flag_that_holds_them_back() -> None:
    policy = WeightPolicy(floor=0.4, min_samples=20)
    uids = {"a": 1, "b": 2, "c": 3, "v": 0}
    standings = [
        Standing("a", 0.048, 24),
        Standing("b", 0.02, 30),
        Standing("c", 0.9, 6),
        Standing("v", 0.99, 99),  # a validator: not counted
    ]
    assert compute_weights(standings, uids, policy, frozenset({"v"})) == {}
    assert why_no_weights(standings, uids, policy, frozenset({"v"})) == (
        "1 miner with fewer than 20 answers (--scoring.min_samples; most 6); "
        "2 miners below the floor 0.40 (--weights.floor): best 0.048"
    )
    assert why_no_weights([], uids, policy) == "no miner on the metagraph has been scored yet"
