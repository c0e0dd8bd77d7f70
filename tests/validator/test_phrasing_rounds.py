"""Rounds with a phrasing engine: miners read phrased requests only, the next round is phrased
while this one runs, a dead engine costs one discarded round, and public networks refuse templates."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sqlalchemy import select

from subnet.chain import ChainClient
from subnet.config import PhrasingSettings, SubtensorSettings
from subnet.db import create_engine
from subnet.db.models import Round, TaskRecord
from subnet.validator.node import StartupError, Validator, ValidatorOptions, _phraser
from subnet.validator.task_source import LibraryTasks
from subnet.wallets import load_wallet
from tasks.phrasing import intent_of, verify
from tests.support.results import stored_round
from tests.support.simulation import SimulatedSubnet, start_simulated_subnet, stop_simulated_miners


@pytest.fixture
async def two_miners(tmp_path: Path) -> AsyncIterator[SimulatedSubnet]:
    subnet = await start_simulated_subnet(tmp_path, ("right", "right40"))
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


@pytest.fixture
async def standin_url(load_bench: Callable[[str], ModuleType]) -> AsyncIterator[str]:
    server = await load_bench("phrasing_standin").StandinServer().start()
    yield server.url
    await server.stop()


def _validator(subnet: SimulatedSubnet, phrasing: PhrasingSettings, seen: list[Any]) -> Validator:
    settings = subnet.settings_with(phrasing=phrasing)
    wallet = load_wallet(settings.wallet)

    def observe(hotkey: str, task: Any, variant: Any, request: Any) -> None:
        subnet.key.observe(hotkey, task, variant, request)
        seen.append((task, request))

    return Validator(
        settings,
        wallet=wallet,
        chain=ChainClient.from_settings(settings, wallet),
        options=ValidatorOptions(observer=observe, install_signal_handlers=False),
    )


async def test_miners_read_phrased_requests_and_the_next_round_is_phrased_ahead(
    two_miners: SimulatedSubnet, standin_url: str
) -> None:
    seen: list[Any] = []
    validator = _validator(two_miners, PhrasingSettings(engine="openai", url=standin_url), seen)
    await validator.start()
    try:
        await validator.sync_metagraph()
        first = await validator.run_round()
        await validator.sync_metagraph()
        second = await validator.run_round()
    finally:
        await validator.close()
    for report in (first, second):
        assert report.phrasing is not None
        assert report.phrasing.engine == "openai" and report.phrasing.phrased == report.phrasing.slots == 8

    assert len(seen) == 2 * 2 * 8
    for task, request in seen:
        text = request.messages[-1].content
        assert task.phrasing["engine"] == "openai" and text == task.request
        assert text != task.phrasing["template"]
        assert verify(text, intent_of(task)).reason is None
    right = two_miners.miners["right"].hotkey
    summary = (await stored_round(two_miners.settings.db.url, second.round_id)).summaries[right]
    assert summary.valid == summary.total == 8  # the honest miner lost nothing to phrasing

    engine = create_engine(two_miners.settings.db.url)
    try:
        async with engine.connect() as connection:
            stored = (await connection.execute(select(Round.number, Round.phrasing, Round.block))).all()
            payloads = (await connection.execute(select(TaskRecord.payload))).scalars().all()
    finally:
        await engine.dispose()
    assert [number for number, _, _ in stored] == [1, 2]
    assert all(phrasing["engine"] == "openai" and phrasing["phrased"] == 8 for _, phrasing, _ in stored)
    # Round 2 was drawn and phrased while round 1 ran: its seed came from round 1's block.
    assert stored[1][2] == stored[0][2] == first.block and second.block > first.block
    assert all(payload["phrasing"]["template"] and payload["intent"]["asks"] for payload in payloads)
    metrics = validator.registry.get_sample_value(
        "subnet_validator_phrasing_tasks_total", {"outcome": "phrased"}
    )
    assert metrics == 16


async def test_a_dead_phrasing_engine_discards_the_round_and_the_validator_goes_on(
    two_miners: SimulatedSubnet,
) -> None:
    seen: list[Any] = []
    phrasing = PhrasingSettings(engine="openai", url="http://127.0.0.1:9/v1", timeout=0.5, attempts=2)
    validator = _validator(two_miners, phrasing, seen)
    await validator.run(rounds=2)
    assert seen == []  # no unverified text reached a miner
    engine = create_engine(two_miners.settings.db.url)
    try:
        async with engine.connect() as connection:
            rounds = (await connection.execute(select(Round.status, Round.note))).all()
    finally:
        await engine.dispose()
    assert len(rounds) == 2
    for status, note in rounds:
        assert status == "discarded" and "could be phrased" in note and "engine_error" in note


def test_template_text_is_refused_on_public_networks(two_miners: SimulatedSubnet) -> None:
    for network in ("finney", "test"):
        settings = two_miners.settings_with(subtensor=SubtensorSettings(network=network))
        with pytest.raises(StartupError) as error:
            _phraser(settings, LibraryTasks())
        message = str(error.value)
        assert "\n" not in message and "phrasing" in message and "--phrasing.allow_templates" in message
        allowed = dataclasses.replace(settings, phrasing=PhrasingSettings(allow_templates=True))
        assert _phraser(allowed, LibraryTasks()) is not None
        endpoint = dataclasses.replace(
            settings, phrasing=PhrasingSettings(engine="openai", url="http://x:1/v1")
        )
        assert _phraser(endpoint, LibraryTasks()) is not None
    assert _phraser(two_miners.settings, LibraryTasks()) is not None  # dev: templates are fine
    with pytest.raises(StartupError, match=r"needs --phrasing\.url"):
        _phraser(
            dataclasses.replace(two_miners.settings, phrasing=PhrasingSettings(engine="openai")),
            LibraryTasks(),
        )


def test_the_neuron_refuses_template_text_on_test_before_touching_the_chain(tmp_path: Path) -> None:
    import subprocess
    import sys

    neuron = Path(__file__).resolve().parents[2] / "neurons" / "validator.py"
    result = subprocess.run(
        [
            sys.executable,
            str(neuron),
            "--subtensor.network",
            "test",
            "--netuid",
            "3",
            "--wallet.name",
            "absent",
            "--wallet.path",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a phrasing engine" in lines[0], result.stderr
    assert "unreachable" not in result.stderr  # refused before any chain connection was tried
