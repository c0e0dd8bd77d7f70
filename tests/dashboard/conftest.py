"""Dashboard fixtures: a validator database filled through the real migrations and the real store.

Three miners over four scored rounds, one discarded round and one round still
running; two accepted weight submissions and one failed one. The hostile miner
answers with markup; the running round carries markers that must never be shown.
"""

from __future__ import annotations

import statistics
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import create_engine, sqlite_url, upgrade
from subnet.validator.dashboard import DashboardLimits, DashboardServer, start_dashboard
from subnet.validator.state import update_moving_average
from subnet.validator.store import NewTask, Store

ALPHA = 0.3
GOOD = "5GoodMinerHotkey000000000000000000000000000001"
FAIR = "5FairMinerHotkey000000000000000000000000000002"
HOSTILE = "5HostileMinerHotkey000000000000000000000000003"
UIDS = {GOOD: 1, FAIR: 2, HOSTILE: 3}
HOSTILE_OUTPUT = "<script>alert(1)</script>"
HOSTILE_ERROR_TYPE = '"><img src=x onerror=alert(2)>'
RUNNING_PROMPT = "RUNNING-ROUND-SECRET-PROMPT"
RUNNING_ANSWER = "RUNNING-ROUND-LIVE-ANSWER"
CATEGORIES = ("simple", "parallel", "irrelevance")
SCORED_ROUNDS = 4


@dataclass
class Neuron:
    uid: int
    hotkey: str
    coldkey: str = "5Coldkey"
    axon_ip: str = "127.0.0.1"
    axon_port: int = 8091
    validator_permit: bool = False


@dataclass
class Seeded:
    """What the filled database should show, and the scenario's names (tests cannot import conftest)."""

    url: str
    alpha: float = ALPHA
    good: str = GOOD
    fair: str = FAIR
    hostile: str = HOSTILE
    uids: dict[str, int] = field(default_factory=lambda: dict(UIDS))
    hostile_output: str = HOSTILE_OUTPUT
    hostile_error_type: str = HOSTILE_ERROR_TYPE
    running_prompt: str = RUNNING_PROMPT
    running_answer: str = RUNNING_ANSWER
    moving_averages: dict[str, float] = field(default_factory=dict)
    history: dict[str, list[float]] = field(default_factory=dict)  # after each scored round
    latencies: dict[str, list[float]] = field(default_factory=dict)
    latest_weights: dict[str, float] = field(default_factory=dict)


def _task(number: int, index: int, category: str, prompt: str | None = None) -> NewTask:
    text = prompt or f"What is the weather in Paris? (round {number}, task {index})"
    payload = {
        "id": f"r{number}-t{index}",
        "category": category,
        "messages": [{"role": "system", "content": "Call tools."}, {"role": "user", "content": text}],
        "tools": [
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
        ],
        "expected": [{"get_weather": {"city": ["Paris"]}}],
        "seed": "s",
        "source": "builtin",
        "generator_version": "test",
    }
    return NewTask(
        task_key=f"r{number}-t{index}",
        category=category,
        scoring_category=category,
        source="builtin",
        payload=payload,
        expected=[{"get_weather": {"city": ["Paris"]}}],
    )


def _answer(hotkey: str, number: int, index: int) -> dict[str, Any]:
    """A deterministic verdict per miner personality."""
    if hotkey == GOOD:
        valid, score, raw = True, 1.0, '[get_weather(city="Paris")]'
        error_type = None
    elif hotkey == FAIR:
        valid = (number + index) % 2 == 0
        score = 1.0 if valid else 0.25
        raw, error_type = '[get_weather(city="Lyon")]', None if valid else "value_error:string"
    else:
        valid, score, raw, error_type = False, 0.0, HOSTILE_OUTPUT, HOSTILE_ERROR_TYPE
    return {
        "hotkey": hotkey,
        "uid": UIDS[hotkey],
        "status": "ok",
        "latency_s": 0.1 * UIDS[hotkey] + 0.01 * (number + index),
        "http_status": 200,
        "error": None,
        "raw_output": raw,
        "raw_truncated": False,
        "decoded_calls": None,
        "valid": valid,
        "error_type": error_type,
        "score": score,
        "components": {},
    }


# What phrasing did per round: template text in round 1, a model engine in round 2, none recorded after.
PHRASING: dict[int, dict[str, Any]] = {
    1: {"engine": "templates", "slots": 6, "phrased": 0},
    2: {"engine": "openai", "slots": 6, "phrased": 5, "retried": 3, "dropped": 2, "unfilled": 1},
}


async def _add_round(store: Store, number: int, tasks: list[NewTask]) -> tuple[int, dict[str, int]]:
    return await store.create_round(
        number=number,
        netuid=1,
        block=100 * number,
        block_hash=f"0x{number:064x}",
        seed_commitment="c" * 64,
        generator_version="test",
        tasks=tasks,
        phrasing=PHRASING.get(number),
    )


async def fill(url: str) -> Seeded:
    """Write the scenario through the validator's store; returns what should be shown."""
    await upgrade(url)
    engine = create_engine(url)
    seeded = Seeded(url=url)
    store = Store(engine)
    try:
        await store.upsert_miners(Neuron(uid, hotkey) for hotkey, uid in UIDS.items())
        averages = dict.fromkeys(UIDS, 0.0)
        for number in range(1, SCORED_ROUNDS + 1):
            tasks = [_task(number, index, category) for index, category in enumerate(CATEGORIES)]
            round_id, task_ids = await _add_round(store, number, tasks)
            rows = []
            for hotkey in UIDS:
                answers = [_answer(hotkey, number, index) for index in range(len(tasks))]
                for task, answer in zip(tasks, answers, strict=True):
                    rows.append(
                        {
                            **answer,
                            "round_id": round_id,
                            "task_id": task_ids[task.task_key],
                            "category": task.category,
                        }
                    )
                    seeded.latencies.setdefault(hotkey, []).append(answer["latency_s"])
                mean = statistics.fmean(answer["score"] for answer in answers)
                averages[hotkey] = update_moving_average(averages[hotkey], mean, ALPHA)
                seeded.history.setdefault(hotkey, []).append(averages[hotkey])
            await store.store_responses(rows)
            await store.mark_collected(round_id, n_miners=len(UIDS))
            assert await store.apply_round(round_id, ALPHA) is not None
        seeded.moving_averages = dict(averages)

        # Round 5: cut off while querying, so discarded (its tasks may be shown, never counted).
        tasks = [_task(5, 0, "simple")]
        round_id, task_ids = await _add_round(store, 5, tasks)
        await store.store_responses(
            [
                {
                    **_answer(GOOD, 5, 0),
                    "round_id": round_id,
                    "task_id": task_ids["r5-t0"],
                    "category": "simple",
                }
            ]
        )
        assert await store.discard_round(round_id, "interrupted while querying; discarded at restart")

        # Round 6: still running. Its task and answers are live and must stay hidden.
        tasks = [_task(6, 0, "simple", prompt=RUNNING_PROMPT)]
        round_id, task_ids = await _add_round(store, 6, tasks)
        await store.store_responses(
            [
                {
                    **_answer(GOOD, 6, 0),
                    "raw_output": RUNNING_ANSWER,
                    "round_id": round_id,
                    "task_id": task_ids["r6-t0"],
                    "category": "simple",
                }
            ]
        )

        await store.record_weights(
            block=150, weights={1: 0.7, 2: 0.3}, hotkeys=[GOOD, FAIR], version_key=1, outcome="ok"
        )
        await store.record_weights(
            block=250, weights={1: 0.8, 2: 0.2}, hotkeys=[GOOD, FAIR], version_key=1, outcome="ok"
        )
        await store.record_weights(
            block=350, weights={}, hotkeys=[], version_key=1, outcome="error", message="chain unreachable"
        )
        seeded.latest_weights = {GOOD: 0.8, FAIR: 0.2}
    finally:
        await engine.dispose()
    return seeded


@pytest.fixture
async def seeded(tmp_path: Path) -> Seeded:
    return await fill(sqlite_url(tmp_path / "validator.sqlite3"))


@pytest.fixture
async def validator_engine(seeded: Seeded) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(seeded.url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def dashboard(validator_engine: AsyncEngine) -> AsyncIterator[DashboardServer]:
    server = await start_dashboard(
        validator_engine, host="127.0.0.1", port=0, alpha=ALPHA, limits=DashboardLimits(cache_seconds=0.0)
    )
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def fill_database() -> Any:
    """``fill`` itself, for tests that bring their own database URL (test modules cannot import conftest)."""
    return fill
