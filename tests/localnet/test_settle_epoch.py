"""After the validator's weights, the localnet advances the devchain to the next epoch and reads the
weights and incentive back (the real SDK sets the weights, as neurons/validator.py does)."""

from __future__ import annotations

from pathlib import Path

import bittensor as bt
import pytest

from subnet.db import WeightSubmission, session_factory, upgrade
from subnet.localnet.run import Localnet
from subnet.localnet.settings import parse_settings


@pytest.mark.parametrize("epoch_already_passed", [False, True])
async def test_settle_epoch_reads_weights_and_incentive_after_the_next_epoch(
    tmp_path: Path, epoch_already_passed: bool
) -> None:
    lines: list[str] = []
    settings = parse_settings(["--state.dir", str(tmp_path / "state"), "--miners", "2", "--tempo", "50"])
    localnet = Localnet(settings, out=lines.append)
    try:
        localnet.prepare_state()
        await localnet.open_devchain()
        await localnet.bootstrap()
        assert [miner.uid for miner in localnet.miners] == [2, 3] and localnet.validator_uid == 1
        devchain = localnet._devchain
        devchain.skip_blocks(10)  # past the weights rate limit counted from registration
        validator = bt.Wallet(name="validator", hotkey="default", path=str(localnet.state.wallets))
        async with bt.Subtensor("local", substrate=devchain) as client:
            result = await client.execute(
                bt.SetWeights(netuid=localnet.netuid, weights={2: 0.75, 3: 0.25}), validator
            )
        assert result.success, result.message
        weights_block = devchain.current_block()
        await upgrade(localnet.db_url)
        async with session_factory(localnet.engine()).begin() as session:
            session.add(
                WeightSubmission(
                    block=weights_block, uids=[2, 3], weights=[0.75, 0.25], hotkeys=[], outcome="ok"
                )
            )

        if epoch_already_passed:  # a slow run: the chain's own epoch came before the localnet looked
            devchain.skip_blocks(60)
        chain = await localnet.settle_epoch(weights_mark=0)

        assert chain is not None
        assert chain.last_epoch_block > weights_block  # an epoch ran after the weights
        assert chain.weights == pytest.approx({2: 0.75, 3: 0.25}, abs=1e-3)
        assert chain.incentives[2] == pytest.approx(0.75, abs=1e-3)
        assert chain.incentives[3] == pytest.approx(0.25, abs=1e-3)
        then = "counted by the epoch" if epoch_already_passed else "advanced the devchain"
        assert any(line.startswith(f"weights set at block {weights_block}; {then}") for line in lines), lines
    finally:
        await localnet.close()


async def test_settle_epoch_without_weights_says_so(tmp_path: Path) -> None:
    lines: list[str] = []
    localnet = Localnet(
        parse_settings(["--state.dir", str(tmp_path / "state"), "--miners", "1"]), out=lines.append
    )
    try:
        localnet.prepare_state()
        await localnet.open_devchain()
        await localnet.bootstrap()
        await upgrade(localnet.db_url)
        async with session_factory(localnet.engine()).begin() as session:
            session.add(
                WeightSubmission(
                    block=5,
                    uids=[],
                    weights=[],
                    hotkeys=[],
                    outcome="no_weights",
                    message="no hotkey qualifies yet",
                )
            )
        chain = await localnet.settle_epoch(weights_mark=0)
        assert chain is not None and chain.weights == {}
        assert lines[-1] == (
            "no weights were set this run (no_weights: no hotkey qualifies yet); incentive stays as it was"
        )
    finally:
        await localnet.close()
