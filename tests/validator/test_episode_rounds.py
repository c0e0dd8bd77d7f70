"""Rounds with multi-turn episodes on the devchain: every miner plays its variants step by step
through the real transport, results and transcripts are stored, and the weights rank miners of
known behaviour right (the unsafe and the relaying ones get nothing)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from subnet.chain import ChainClient
from subnet.config import RoundSettings
from subnet.db import ResponseRecord, create_engine
from subnet.validator.node import Validator, ValidatorOptions
from subnet.validator.state import EPISODE_CATEGORIES
from subnet.wallets import load_wallet
from tests.support.results import record_results, stored_round
from tests.support.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners

PERSONALITIES = ("right", "slow", "asks", "nocall", "unsafe", "mid_timeout", "relay")


@pytest.fixture
async def episode_subnet(tmp_path: Path) -> AsyncIterator[SimulatedSubnet]:
    subnet = await start_simulated_subnet(tmp_path, PERSONALITIES, query_timeout=1.0)
    subnet.settings = dataclasses.replace(
        subnet.settings, round=RoundSettings(tasks=4, interval=1.0, episodes=3, episode_deadline=20.0)
    )
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


def _validator(subnet: SimulatedSubnet) -> Validator:
    wallet = load_wallet(subnet.settings.wallet)
    return Validator(
        subnet.settings,
        wallet=wallet,
        chain=ChainClient.from_settings(subnet.settings, wallet),
        options=ValidatorOptions(observer=subnet.key.observe, install_signal_handlers=False),
    )


@pytest.mark.slow
async def test_weights_rank_episode_players_and_cheats_get_nothing(episode_subnet: SimulatedSubnet) -> None:
    validator = _validator(episode_subnet)
    results = record_results(validator)
    await validator.run(rounds=4)
    weights = results.weight_attempts[-1]
    assert weights.outcome == "ok", results.weight_attempts
    by_name = {name: weights.weights.get(uid, 0.0) for name, uid in episode_subnet.uid_of.items()}
    assert by_name["right"] > 0 and by_name["slow"] > 0, by_name
    assert by_name["right"] > by_name["mid_timeout"], by_name
    for cheat in ("relay", "asks", "nocall"):
        assert by_name[cheat] == 0.0, (cheat, by_name)
    # The unsafe miner tries a forbidden action only where an episode's first turn offers one, and
    # the rounds' seeds come from the devchain's block hashes: each round where it tried one scores
    # 0, whatever it did elsewhere, and it never earns what the right miner earns.
    unsafe_hotkey = episode_subnet.miners["unsafe"].hotkey
    url = episode_subnet.settings.db.url
    rounds = [await stored_round(url, report.round_id) for report in results.reports]
    tried = [stored.summaries[unsafe_hotkey] for stored in rounds if stored.summaries[unsafe_hotkey].unsafe]
    assert tried and all(summary.mean_score == 0.0 for summary in tried)
    assert by_name["unsafe"] < by_name["right"], by_name

    report = results.reports[0]
    assert report.n_responses == len(PERSONALITIES) * (4 + 3)
    engine = create_engine(episode_subnet.settings.db.url)
    try:
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(
                        ResponseRecord.hotkey,
                        ResponseRecord.category,
                        ResponseRecord.valid,
                        ResponseRecord.error_type,
                        ResponseRecord.transcript,
                    )
                )
            ).all()
    finally:
        await engine.dispose()
    hotkey_of = {miner.hotkey: name for name, miner in episode_subnet.miners.items()}
    episodes = [row for row in rows if row.category in EPISODE_CATEGORIES]
    assert len(episodes) == 4 * 3 * len(PERSONALITIES)
    failed: list[tuple[str, str, str | None]] = []
    for row in episodes:
        name = hotkey_of[row.hotkey]
        assert row.transcript is not None
        if name in ("right", "slow") and not row.valid:
            failed.append((name, row.category, row.error_type))
    # Every reference plan passes: the state mismatch once seen in about one run of six was the
    # simulated miner playing another miner's variant (tests/validator/test_answer_key.py).
    assert failed == [], failed
    # A relay copies another miner's right answer to that miner's variant; about 4 in 1,000 such
    # copies still pass (tests/episodes), so of its 12 episodes at most one may.
    relayed = [row for row in episodes if hotkey_of[row.hotkey] == "relay"]
    assert sum(bool(row.valid) for row in relayed) <= 1, [row.error_type for row in relayed]
    unsafe = [row for row in episodes if hotkey_of[row.hotkey] == "unsafe"]
    assert any(row.error_type == "multi_turn:unsafe" for row in unsafe)
    stalled = [
        row for row in episodes if hotkey_of[row.hotkey] == "mid_timeout" and row.category != "agent_step"
    ]
    assert all(not row.valid for row in stalled)


async def test_a_round_with_episodes_stores_transcripts_with_request_digests(tmp_path: Path) -> None:
    subnet = await start_simulated_subnet(tmp_path, ("right", "nocall"), query_timeout=1.0)
    subnet.settings = dataclasses.replace(
        subnet.settings, round=RoundSettings(tasks=2, interval=1.0, episodes=2, episode_deadline=20.0)
    )
    try:
        validator = _validator(subnet)
        results = record_results(validator)
        await validator.run(rounds=1)
        report = results.reports[0]
        assert report.n_responses == 2 * (2 + 2)
        stored = await stored_round(subnet.settings.db.url, report.round_id)
        right = stored.summaries[subnet.miners["right"].hotkey]
        assert right.episode_total == 2 and right.mean_score == 1.0
        engine = create_engine(subnet.settings.db.url)
        try:
            async with engine.connect() as connection:
                transcripts: list[Any] = (
                    (
                        await connection.execute(
                            select(ResponseRecord.transcript).where(ResponseRecord.transcript.is_not(None))
                        )
                    )
                    .scalars()
                    .all()
                )
        finally:
            await engine.dispose()
        assert len(transcripts) == 4
        for transcript in transcripts:
            digests = transcript["request_digests"]
            assert digests and all(len(digest) == 64 for digest in digests)
            assert len(transcript["latencies_s"]) == len(digests)
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


class _StepCounter:
    """Wraps the round's querier; sets ``reached`` when the ``stop_at``-th episode step is asked."""

    def __init__(self, inner: Any, stop_at: int) -> None:
        import asyncio

        self.inner = inner
        self.stop_at = stop_at
        self.steps = 0
        self.reached = asyncio.Event()

    async def query(self, target: Any, request: Any, **kwargs: Any) -> Any:
        if any(message.role == "tool" for message in request.messages) or len(request.messages) > 1:
            self.steps += 1
            if self.steps >= self.stop_at:
                self.reached.set()
        return await self.inner.query(target, request, **kwargs)


@pytest.mark.parametrize("stop_at", [1, 2, 4, 7])
async def test_a_round_stopped_at_any_episode_step_counts_nothing_twice(tmp_path: Path, stop_at: int) -> None:
    import asyncio

    from subnet.db import Round
    from subnet.validator.store import Store

    subnet = await start_simulated_subnet(tmp_path, ("right", "slow"), query_timeout=1.0)
    subnet.settings = dataclasses.replace(
        subnet.settings, round=RoundSettings(tasks=2, interval=1.0, episodes=3, episode_deadline=20.0)
    )
    try:
        first = _validator(subnet)
        await first.start()
        await first.sync_metagraph()
        assert first._runner is not None
        counter = _StepCounter(first._runner.querier, stop_at)
        first._runner.querier = counter
        round_task = asyncio.create_task(first.run_round())
        await asyncio.wait(
            {round_task, asyncio.create_task(counter.reached.wait())},
            timeout=30,
            return_when=asyncio.FIRST_COMPLETED,
        )
        assert counter.reached.is_set(), "the round never reached that step"
        round_task.cancel()  # the process stops mid-episode
        with pytest.raises(asyncio.CancelledError):
            await round_task
        await first.close()

        second = _validator(subnet)
        await second.run(rounds=1)
        engine = create_engine(subnet.settings.db.url)
        try:
            async with engine.connect() as connection:
                statuses = (await connection.execute(select(Round.number, Round.status))).all()
            states = await Store(engine).score_states()
        finally:
            await engine.dispose()
        assert sorted(statuses) == [(1, "discarded"), (2, "scored")]
        for miner in subnet.miners.values():
            state = states[miner.hotkey]
            assert state.rounds_scored == 1 and state.responses_total == 2 + 3  # round 2 only
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()
