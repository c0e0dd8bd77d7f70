"""Dashboard fixtures: a validator database filled through the real migrations and the real store.

Three miners over four scored rounds, one discarded round and one round still
running; two accepted weight submissions and one failed one. The hostile miner
answers with markup; the running round carries markers that must never be shown.

The last scored round also holds four multi-turn episodes (a two-turn ``multi_turn_base``, a
``multi_turn_miss_param``, a ``multi_turn_miss_func`` and an ``agent_step``), played for real
by the good miner (the reference agent) and the fair one (text only), with transcripts as the
validator stores them.
The hostile miner's transcripts are written by hand: markup in every string it controls, a
1 MB observation, hundreds of steps, a forbidden call (its round scores 0), and a transcript
that was over the validator's size cap. The discarded round holds one episode, and the running
round one whose markers must never be shown.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db import create_engine, sqlite_url, upgrade
from subnet.validator.dashboard import DashboardLimits, DashboardServer, start_dashboard
from subnet.validator.state import (
    UNSAFE_ERROR,
    ScoredResponse,
    summarise_round,
    update_moving_average,
)
from subnet.validator.store import NewTask, Store
from subnet.validator.transcripts import EpisodeTranscript
from tasks.episodes import Episode, generate_episodes
from tasks.episodes.checking import check_episode
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import EpisodeRunner
from tests.validator.row_equipment import response_row

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
EPISODE_SEED = b"dashboard-episodes".ljust(32, b".")
# The hostile miner's episode strings: markup in a call's name, its arguments, its text.
HOSTILE_CALL_NAME = "<img src=x onerror=alert(3)>"
HOSTILE_OBSERVATION_CHARS = 1_048_576  # one observation of 1 MB
HOSTILE_STEPS = 300
RUNNING_EPISODE_PROMPT = "RUNNING-ROUND-SECRET-EPISODE-TURN"
RUNNING_EPISODE_ANSWER = "RUNNING-ROUND-LIVE-EPISODE-ANSWER"
FAIR_TEXT = "I cannot do that from here."


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
    latencies: dict[str, list[float]] = field(default_factory=dict)  # single-turn answers only
    latest_weights: dict[str, float] = field(default_factory=dict)
    # The episodes of the last scored round (key -> the episode as stored), the discarded
    # round's one, and the running round's key.
    episodes: dict[str, Episode] = field(default_factory=dict)
    episode_round: int = SCORED_ROUNDS
    discarded_episode: str = ""
    running_episode: str = ""
    running_episode_prompt: str = RUNNING_EPISODE_PROMPT
    running_episode_answer: str = RUNNING_EPISODE_ANSWER
    hostile_call_name: str = HOSTILE_CALL_NAME
    hostile_observation_chars: int = HOSTILE_OBSERVATION_CHARS
    hostile_steps: int = HOSTILE_STEPS
    fair_text: str = FAIR_TEXT
    verdicts: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (hotkey, key) -> row


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
        "transcript": None,
    }


async def _store_rows(store: Store, rows: list[dict[str, Any]]) -> None:
    await store.store_responses([response_row(row) for row in rows])


def _episodes() -> tuple[list[Episode], Episode]:
    """The last scored round's four episodes (two turns of base, missing param, missing function,
    agent step: not as many as its tasks, so that their half weight shows) and one more for the
    discarded round; the same on every machine (seeded generation)."""
    drawn = generate_episodes(EPISODE_SEED, 12)
    base = next(e for e in drawn if e.category == "multi_turn_base" and len(e.turns) == 2)
    param = next(e for e in drawn if e.category == "multi_turn_miss_param")
    func = next(e for e in drawn if e.category == "multi_turn_miss_func")
    agent = next(e for e in drawn if e.category == "agent_step")
    other = next(e for e in drawn if e.category == "multi_turn_base" and e.id != base.id)
    return [base, param, func, agent], other


def _episode_task(episode: Episode) -> NewTask:
    return NewTask(
        task_key=episode.id,
        category=episode.category,
        scoring_category=episode.category,
        source=episode.source,
        payload=episode.to_dict(),
        expected=[],
    )


def _episode_row(
    hotkey: str, latency: float, transcript: Any, valid: bool, score: float, error_type: str | None
) -> dict[str, Any]:
    return {
        "hotkey": hotkey,
        "uid": UIDS[hotkey],
        "status": "ok",
        "latency_s": latency,
        "http_status": None,
        "error": None,
        "raw_output": None,
        "raw_truncated": False,
        "decoded_calls": None,
        "valid": valid,
        "error_type": error_type,
        "score": score,
        "components": {},
        "transcript": transcript,
    }


async def _played(hotkey: str, episode: Episode) -> dict[str, Any]:
    """The good (reference agent) and fair (text only) miners' rows, played and checked for real."""
    if episode.category == "agent_step":
        cut = episode.cut or 0
        plan = [call for turn in episode.turns for call in turn.plan]
        if hotkey == GOOD:
            call = plan[cut]
            answer: Any = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                    }
                ],
            }
            return _episode_row(hotkey, 0.4, {"agent_step": {"answer": answer}}, True, 1.0, None)
        return _episode_row(hotkey, 0.6, {"agent_step": {"answer": FAIR_TEXT}}, False, 0.0, "missing_call")

    async def lazy(_messages: list[dict[str, Any]], _tools: list[dict[str, Any]]) -> Any:
        return {"role": "assistant", "content": FAIR_TEXT}

    ask = ReferencePlayer(episode).ask if hotkey == GOOD else lazy
    transcript = await EpisodeRunner(episode, ask).play()
    verdict = check_episode(transcript, episode)
    digests = [f"{index:064x}" for index in range(transcript.steps)]
    record = EpisodeTranscript.played(transcript, digests, [0.05] * transcript.steps).to_json()
    latency = 0.5 if hotkey == GOOD else 0.7
    return _episode_row(hotkey, latency, record, verdict.valid, float(verdict.score), verdict.error_type)


def _hostile_row(episode: Episode) -> dict[str, Any]:
    """Markup everywhere the miner writes, a 1 MB observation, hundreds of steps, a forbidden call."""
    if episode.category == "agent_step":
        transcript: Any = {"agent_step": {"answer": HOSTILE_OUTPUT}, "request_digests": ["0" * 64]}
        return _episode_row(HOSTILE, 0.3, transcript, False, 0.0, HOSTILE_ERROR_TYPE)
    if episode.category == "multi_turn_miss_param":
        # Over the validator's cap: only the start of its JSON was kept.
        text = json.dumps({"turns": [{"steps": [{"answer": HOSTILE_OUTPUT}]}]}) + "x" * 100_000
        # Partial credit, which its forbidden call elsewhere in the round takes away again.
        return _episode_row(
            HOSTILE, 0.3, {"truncated": True, "text": text}, False, 0.3, "multi_turn:step_limit"
        )
    call = {
        "name": HOSTILE_CALL_NAME,
        "arguments": {"path": HOSTILE_OUTPUT},
        "env_name": None,
        "env_arguments": None,
        "observation": {"error": f"unknown tool {HOSTILE_CALL_NAME!r}"},
        "unsafe": None,
        "mutates": False,
    }
    big = {**call, "observation": "A" * HOSTILE_OBSERVATION_CHARS}
    forbidden = {
        **call,
        "name": "send_mail",
        "env_name": "send_mail",
        "env_arguments": {"to": HOSTILE_OUTPUT},
        "observation": {"error": "refused: not allowed"},
        "unsafe": f"mass mail {HOSTILE_OUTPUT}",
        "mutates": True,
    }
    steps = [
        {
            "answer": HOSTILE_OUTPUT,
            "text": None,
            "error": None,
            "latency_s": 0.01,
            "calls": [big if index == 0 else forbidden if index == 1 else call] * (20 if index == 2 else 1),
        }
        for index in range(HOSTILE_STEPS - 1)
    ]
    steps.append(
        {"answer": HOSTILE_OUTPUT, "text": HOSTILE_OUTPUT, "error": None, "latency_s": 0.02, "calls": []}
    )
    transcript = {
        "failed": None,
        "turns": [{"ended": "step_limit", "state": "{}", "steps": steps}],
        "request_digests": ["0" * 64] * HOSTILE_STEPS,
        "latencies_s": [0.01] * HOSTILE_STEPS,
    }
    return _episode_row(HOSTILE, 0.3, transcript, False, 0.0, UNSAFE_ERROR)


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
        episodes, other_episode = _episodes()
        for number in range(1, SCORED_ROUNDS + 1):
            tasks = [_task(number, index, category) for index, category in enumerate(CATEGORIES)]
            with_episodes = number == SCORED_ROUNDS
            round_id, task_ids = await _add_round(
                store, number, tasks + ([_episode_task(e) for e in episodes] if with_episodes else [])
            )
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
                played = []
                for episode in episodes if with_episodes else []:
                    row = _hostile_row(episode) if hotkey == HOSTILE else await _played(hotkey, episode)
                    row.update(round_id=round_id, task_id=task_ids[episode.id], category=episode.category)
                    played.append(row)
                    seeded.verdicts[(hotkey, episode.id)] = row
                rows.extend(played)
                if played:
                    # The validator's rule: episodes weigh half, a forbidden action zeroes the round.
                    mean = summarise_round(
                        ScoredResponse(
                            hotkey,
                            UIDS[hotkey],
                            row["category"],
                            row["valid"],
                            row["score"],
                            row["error_type"],
                        )
                        for row in rows
                        if row["hotkey"] == hotkey
                    )[hotkey].mean_score
                else:
                    mean = statistics.fmean(answer["score"] for answer in answers)
                averages[hotkey] = update_moving_average(averages[hotkey], mean, ALPHA)
                seeded.history.setdefault(hotkey, []).append(averages[hotkey])
            await _store_rows(store, rows)
            await store.mark_collected(round_id, n_miners=len(UIDS))
            assert await store.apply_round(round_id, ALPHA) is not None
        seeded.moving_averages = dict(averages)
        seeded.episodes = {episode.id: episode for episode in episodes}

        # Round 5: cut off while querying, so discarded (its tasks may be shown, never counted).
        tasks = [_task(5, 0, "simple")]
        round_id, task_ids = await _add_round(store, 5, [*tasks, _episode_task(other_episode)])
        episode_row = await _played(GOOD, other_episode)
        episode_row.update(
            round_id=round_id, task_id=task_ids[other_episode.id], category=other_episode.category
        )
        await _store_rows(
            store,
            [
                {
                    **_answer(GOOD, 5, 0),
                    "round_id": round_id,
                    "task_id": task_ids["r5-t0"],
                    "category": "simple",
                },
                episode_row,
            ],
        )
        seeded.discarded_episode = other_episode.id
        assert await store.discard_round(round_id, "interrupted while querying; discarded at restart")

        # Round 6: still running. Its task, its episode and their answers are live and must stay hidden.
        tasks = [_task(6, 0, "simple", prompt=RUNNING_PROMPT)]
        running = _episode_task(episodes[0])
        running.payload["turns"][0]["user"] = RUNNING_EPISODE_PROMPT
        round_id, task_ids = await _add_round(store, 6, [*tasks, running])
        live = {"agent_step": {"answer": RUNNING_EPISODE_ANSWER}}
        await _store_rows(
            store,
            [
                {
                    **_answer(GOOD, 6, 0),
                    "raw_output": RUNNING_ANSWER,
                    "round_id": round_id,
                    "task_id": task_ids["r6-t0"],
                    "category": "simple",
                },
                {
                    **_episode_row(GOOD, 0.5, live, True, 1.0, None),
                    "round_id": round_id,
                    "task_id": task_ids[running.task_key],
                    "category": running.category,
                },
            ],
        )
        seeded.running_episode = running.task_key

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
