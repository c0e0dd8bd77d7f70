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
from subnet.config import RoundSettings, load_wallet
from subnet.db import ResponseRecord, create_engine
from subnet.validator.node import Validator, ValidatorOptions
from subnet.validator.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners
from subnet.validator.state import EPISODE_CATEGORIES

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
    await validator.run(rounds=4)
    weights = validator.weight_attempts[-1]
    assert weights.outcome == "ok", validator.weight_attempts
    by_name = {name: weights.weights.get(uid, 0.0) for name, uid in episode_subnet.uid_of.items()}
    assert by_name["right"] > 0 and by_name["slow"] > 0, by_name
    assert by_name["right"] > by_name["mid_timeout"], by_name
    for cheat in ("unsafe", "relay", "asks", "nocall"):
        assert by_name[cheat] == 0.0, (cheat, by_name)

    report = validator.reports[0]
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
    for row in episodes:
        name = hotkey_of[row.hotkey]
        assert row.transcript is not None
        if name in ("right", "slow"):
            assert row.valid, (name, row.error_type)
        if name == "relay":
            assert not row.valid
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
        await validator.run(rounds=1)
        report = validator.reports[0]
        assert report.n_responses == 2 * (2 + 2)
        right = report.summaries[subnet.miners["right"].hotkey]
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
