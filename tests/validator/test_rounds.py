"""Rounds end to end: devchain, simulated miners behind the real signed transport, scoring, weights."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from sqlalchemy import func, select

from subnet.chain import ChainClient
from subnet.config import (
    DashboardSettings,
    DbSettings,
    MetricsSettings,
    RoundSettings,
    ValidatorSettings,
    WeightsSettings,
)
from subnet.db import ResponseRecord, create_engine, upgrade
from subnet.validator.node import StartupError, Validator, ValidatorOptions
from subnet.validator.store import Store
from subnet.wallets import load_wallet
from tests.support.results import record_results, stored_round
from tests.support.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners


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
    results = record_results(validator)
    await validator.run(rounds=5)
    weights = results.weight_attempts[-1]
    assert weights.outcome == "ok", results.weight_attempts
    by_name = {name: weights.weights.get(uid, 0.0) for name, uid in simulated_subnet.uid_of.items()}
    assert by_name["right"] > by_name["right70"] > by_name["right40"] > 0, by_name
    assert by_name["slow"] > by_name["right70"], by_name
    for cheat in ("timeout", "garbage", "crash", "huge", "relay"):
        assert by_name[cheat] == 0.0, (cheat, by_name)

    report = results.reports[0]
    assert report.n_miners == 9 and report.n_responses == 72
    statuses = (await stored_round(simulated_subnet.settings.db.url, report.round_id)).statuses
    assert statuses["timeout"] >= 8  # the hanging miner, every task
    # The 10 MB answers are cut at the client's cap (or, on a starved machine, run out of time).
    assert statuses["too_large"] + statuses["timeout"] >= 16
    # The chain saw the weights too.
    graph = simulated_subnet.devchain.metagraph(simulated_subnet.netuid)
    assert graph is not None


async def test_every_response_is_stored_once_with_its_verdict(simulated_subnet: SimulatedSubnet) -> None:
    validator = build_validator(simulated_subnet)
    await validator.run(rounds=2)
    store = validator.store
    # The validator closed its engine on the way out; read back through a fresh one.
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
        assert huge is not None and huge.status in {"too_large", "timeout"} and huge.score == 0.0
        assert huge.raw_output is not None and len(huge.raw_output) <= 16 * 1024
        states = await store.score_states()
        right = states[simulated_subnet.miners["right"].hotkey]
        assert right.rounds_scored == 2 and right.responses_total == 16 and right.responses_valid == 16
        accuracy = await store.category_accuracy(simulated_subnet.miners["right"].hotkey)
        assert set(accuracy) >= {"simple", "multiple", "parallel", "parallel_multiple", "irrelevance"}
        assert set(accuracy.values()) == {1.0}
    finally:
        await engine.dispose()


@pytest.mark.postgres
async def test_rounds_on_postgresql(quick_subnet: SimulatedSubnet, pg_url: str) -> None:
    settings = dataclasses.replace(quick_subnet.settings, db=DbSettings(url=pg_url))
    with pytest.raises(StartupError, match=r"run `python -m subnet\.db upgrade"):
        await build_validator(quick_subnet, settings).run(rounds=1)
    await upgrade(pg_url)
    validator = build_validator(quick_subnet, settings)
    results = record_results(validator)
    await validator.run(rounds=2)
    assert [report.n_responses for report in results.reports] == [24, 24]
    engine = create_engine(pg_url)
    try:
        states = await Store(engine).score_states()
        right = states[quick_subnet.miners["right"].hotkey]
        assert right.rounds_scored == 2 and right.responses_valid == 16
    finally:
        await engine.dispose()


async def test_unreachable_database_is_refused_in_one_line(quick_subnet: SimulatedSubnet) -> None:
    settings = dataclasses.replace(
        quick_subnet.settings, db=DbSettings(url="postgresql+asyncpg://nobody@127.0.0.1:1/none")
    )
    validator = build_validator(quick_subnet, settings)
    with pytest.raises(StartupError) as error:
        await validator.run(rounds=1)
    assert "\n" not in str(error.value)


async def test_scheduled_mode_runs_jobs_until_stopped(quick_subnet: SimulatedSubnet) -> None:
    settings = dataclasses.replace(
        quick_subnet.settings, round=RoundSettings(tasks=4, interval=0.5, episodes=0)
    )
    validator = build_validator(quick_subnet, settings)

    run_round = validator.run_round
    reports: list[Any] = []

    async def run_round_then_maybe_stop() -> Any:
        reports.append(await run_round())
        if len(reports) >= 2:
            validator.stop()
        return reports[-1]

    validator.run_round = run_round_then_maybe_stop  # type: ignore[method-assign]
    await asyncio.wait_for(validator.run(rounds=None), timeout=60)
    assert len(reports) >= 2
    assert reports[1].number == reports[0].number + 1
    runs = validator.registry.get_sample_value(
        "subnet_validator_job_runs_total", {"job": "round", "outcome": "ok"}
    )
    assert runs is not None and runs >= 2


async def test_dashboard_and_metrics_are_served_when_asked(quick_subnet: SimulatedSubnet) -> None:
    import socket

    import aiohttp

    def free_port() -> int:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])

    settings = dataclasses.replace(
        quick_subnet.settings,
        dashboard=DashboardSettings(host="127.0.0.1", port=free_port()),
        metrics=MetricsSettings(port=free_port()),
    )
    validator = build_validator(quick_subnet, settings)
    await validator.start()
    try:
        await validator.sync_metagraph()
        await validator.run_round()
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{settings.dashboard.port}/") as page:
                assert page.status == 200
            async with session.get(f"http://127.0.0.1:{settings.metrics.port}/metrics") as metrics:
                text = await metrics.text()
        assert "subnet_validator_rounds_total" in text
    finally:
        await validator.close()


async def test_bad_task_sources_are_refused_in_one_line(quick_subnet: SimulatedSubnet) -> None:
    from subnet.config import TasksSettings

    settings = dataclasses.replace(quick_subnet.settings, tasks=TasksSettings(sources="nowhere=1"))
    wallet = load_wallet(settings.wallet)
    validator = Validator(settings, wallet=wallet, chain=ChainClient.from_settings(settings, wallet))
    with pytest.raises(StartupError, match=r"--tasks\.sources") as error:
        await validator.run(rounds=1)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def test_a_hostile_miners_bytes_cost_nobody_their_round(
    tmp_path, backend: str, request: pytest.FixtureRequest
) -> None:
    """NULs, lone surrogates, invalid UTF-8 and 1 MiB of control characters, in the body, in call
    arguments and in error texts: every round is scored, the honest miner's results are as
    they would be alone, and the hostile miner's answers are stored as it sent them (escaped)."""
    db_url = None
    if backend == "postgres":
        db_url = request.getfixturevalue("pg_url")
        await upgrade(db_url)
    subnet = await start_simulated_subnet(tmp_path, ("right", "hostile_bytes"), db_url=db_url)
    try:
        validator = build_validator(subnet)
        results = record_results(validator)
        await validator.run(rounds=2)
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()
    assert [report.n_responses for report in results.reports] == [16, 16]
    engine = create_engine(subnet.settings.db.url)
    try:
        store = Store(engine)
        states = await store.score_states()
        right = states[subnet.miners["right"].hotkey]
        assert (right.rounds_scored, right.responses_total, right.responses_valid) == (2, 16, 16)
        assert set((await store.category_accuracy(subnet.miners["right"].hotkey)).values()) == {1.0}
        hostile = subnet.miners["hostile_bytes"].hotkey
        assert states[hostile].moving_average < 0.05  # partial credit for a call that decodes, at most
        async with store.sessions() as session:
            rows = (
                await session.scalars(select(ResponseRecord).where(ResponseRecord.hotkey == hostile))
            ).all()
        assert len(rows) == 16
        assert {row.status for row in rows} >= {"ok", "bad_json", "http_error"}, [
            (r.status, r.error) for r in rows
        ]
        stored = "".join((row.raw_output or "") + (row.error or "") for row in rows)
        stored += json.dumps([row.decoded_calls for row in rows])
        assert "\\x00" in stored and "\\ud800" in stored and "\\xff" in stored  # kept, as escapes
        assert "\x00" not in stored
    finally:
        await engine.dispose()


async def test_a_bounded_run_ends_with_weights_even_before_they_are_due(
    quick_subnet: SimulatedSubnet,
) -> None:
    settings = quick_subnet.settings_with(weights=WeightsSettings(interval=100_000))
    validator = build_validator(quick_subnet, settings)
    results = record_results(validator)
    await validator.run(rounds=1)
    assert [attempt.outcome for attempt in results.weight_attempts] == ["ok"]
