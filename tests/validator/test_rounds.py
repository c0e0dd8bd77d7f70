"""Rounds end to end: devchain, simulated miners behind the real signed transport, scoring, weights."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from subnet.chain import ChainClient
from subnet.config import ValidatorSettings, load_wallet
from subnet.db import ResponseRecord
from subnet.validator.node import Validator, ValidatorOptions
from subnet.validator.simulation import SimulatedSubnet


def build_validator(
    subnet: SimulatedSubnet, settings: ValidatorSettings | None = None, **options: Any
) -> Validator:
    settings = settings or subnet.settings
    wallet = load_wallet(settings.wallet)
    chain = ChainClient.from_settings(settings, wallet)
    return Validator(
        settings,
        wallet=wallet,
        chain=chain,
        options=ValidatorOptions(observer=subnet.key.observe, install_signal_handlers=False, **options),
    )


async def test_weights_rank_the_personalities_and_cheats_get_nothing(
    simulated_subnet: SimulatedSubnet,
) -> None:
    validator = build_validator(simulated_subnet)
    await validator.run(rounds=5)
    weights = validator.weight_attempts[-1]
    assert weights.outcome == "ok", validator.weight_attempts
    by_name = {name: weights.weights.get(uid, 0.0) for name, uid in simulated_subnet.uid_of.items()}
    assert by_name["right"] > by_name["right70"] > by_name["right40"] > 0
    assert by_name["slow"] > by_name["right70"]
    for cheat in ("timeout", "garbage", "crash", "huge", "relay"):
        assert by_name[cheat] == 0.0, (cheat, by_name)

    report = validator.reports[0]
    assert report.n_miners == 9 and report.n_responses == 72
    assert report.statuses["timeout"] >= 8  # the hanging miner, every task
    assert report.statuses["too_large"] == 8
    # The chain saw the weights too.
    graph = simulated_subnet.devchain.metagraph(simulated_subnet.netuid)
    assert graph is not None


async def test_every_response_is_stored_once_with_its_verdict(simulated_subnet: SimulatedSubnet) -> None:
    validator = build_validator(simulated_subnet)
    await validator.run(rounds=2)
    store = validator.store
    # The store is closed with the validator; reopen through a fresh one.
    from subnet.db import create_engine
    from subnet.validator.store import Store

    engine = create_engine(simulated_subnet.settings.db.url)
    try:
        store = Store(engine)
        async with store.sessions() as session:
            count = await session.scalar(select(func.count()).select_from(ResponseRecord))
            huge = (
                await session.scalars(
                    select(ResponseRecord).where(
                        ResponseRecord.hotkey == simulated_subnet.miners["huge"].hotkey
                    )
                )
            ).first()
        assert count == 2 * 9 * 8
        assert huge is not None and huge.status == "too_large" and huge.score == 0.0
        assert huge.raw_output is not None and len(huge.raw_output) <= 16 * 1024
        states = await store.score_states()
        right = states[simulated_subnet.miners["right"].hotkey]
        assert right.rounds_scored == 2 and right.responses_total == 16 and right.responses_valid == 16
        accuracy = await store.category_accuracy(simulated_subnet.miners["right"].hotkey)
        assert set(accuracy) >= {"simple", "multiple", "parallel", "parallel_multiple", "irrelevance"}
        assert set(accuracy.values()) == {1.0}
    finally:
        await engine.dispose()
