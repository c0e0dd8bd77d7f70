"""ChainClient happy paths with the real SDK on the real devchain (subnet.devchain), in tmp_path.

Registration through bt.BurnedRegister, the registration check, the metagraph, serve_axon
(published once, then unchanged), set_weights (direct and timelocked commit-reveal) and the
too-soon refusal.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import bittensor as bt
import pytest

from subnet.chain import ChainClient, ChainError, NotRegistered, SubnetNotFound, WeightsTooSoon
from subnet.config import (
    ChainRetrySettings,
    DevchainSettings,
    MinerSettings,
    SubtensorSettings,
    WalletSettings,
    user_errors,
)
from subnet.devchain import DevChain
from subnet.wallets import create_dev_wallet, load_wallet

BLOCK_TIME = 0.05
NETUID = 1


@pytest.fixture
def block_time() -> float:
    return BLOCK_TIME


@pytest.fixture
def devchain(tmp_path: Path, block_time: float) -> DevChain:
    return DevChain(tmp_path / "dev.sqlite", block_time=block_time)


@pytest.fixture
def make_client(tmp_path: Path, devchain: DevChain, block_time: float) -> Any:
    """A ChainClient for a fresh funded development wallet, exactly as a neuron's main() builds one."""

    def make(name: str, *, tao: float = 1_000.0) -> ChainClient:
        create_dev_wallet(name, "default", tmp_path / "wallets")
        settings = MinerSettings(
            netuid=NETUID,
            subtensor=SubtensorSettings(network="dev"),
            devchain=DevchainSettings(path=devchain.path, block_time=block_time),
            wallet=WalletSettings(name=name, hotkey="default", path=tmp_path / "wallets"),
            chain=ChainRetrySettings(retries=2, backoff_base=0.05, backoff_max=0.2, timeout=30.0),
        )
        wallet = load_wallet(settings.wallet, require_coldkey=True)
        if tao:
            devchain.fund(wallet.coldkeypub.ss58_address, tao)
        return ChainClient.from_settings(settings, wallet)

    return make


@pytest.fixture
def subnet(devchain: DevChain, tmp_path: Path) -> int:
    create_dev_wallet("owner", "default", tmp_path / "wallets")
    owner = bt.Wallet("owner", "default", path=str(tmp_path / "wallets"))
    return devchain.create_subnet(
        owner.coldkeypub.ss58_address,
        owner.hotkeypub.ss58_address,
        netuid=NETUID,
        weights_rate_limit=0,
        tempo=1_000,
    )


@pytest.mark.usefixtures("subnet")
async def test_register_serve_and_read_the_metagraph(
    make_client: Any, devchain: DevChain, capsys: pytest.CaptureFixture[str]
) -> None:
    async with make_client("miner") as miner:
        assert await miner.own_uid() is None
        with pytest.raises(SystemExit), user_errors("miner"):
            await miner.ensure_registered()
        line = capsys.readouterr().err.strip()
        assert "is not registered on netuid 1 (devchain)" in line
        assert "python -m subnet.chain register --netuid 1 --subtensor.network dev" in line

        uid = await miner.register()
        assert uid == 1  # the owner holds uid 0
        assert await miner.ensure_registered() == uid
        assert await miner.register() == uid  # idempotent, no second burn

        assert await miner.serve_axon("127.0.0.1", 8091) is True
        assert await miner.serve_axon("127.0.0.1", 8091) is False
        assert await miner.serve_axon("127.0.0.1", 8092) is True

        graph = await miner.metagraph()
        assert graph.netuid == NETUID and graph.block > 0 and graph.tempo == 1_000
        me = graph.by_hotkey(miner.hotkey)
        assert me is not None and me.uid == uid
        assert (me.axon_ip, me.axon_port, me.is_serving) == ("127.0.0.1", 8092, True)
        assert me.coldkey == miner.coldkey
        owner = next(neuron for neuron in graph if neuron.uid == 0)
        assert not owner.is_serving

        assert await miner.tempo() == 1_000
        assert 0 <= await miner.blocks_until_next_epoch() <= 1_000
        head = await miner.block()
        assert head >= graph.block
        assert (await miner.block_hash(head)).startswith("0x")


# Blocks far longer than the test, so all of it happens in the chain's first block: a warm CI
# process once got from genesis to serve_axon within one 0.05 s block, the devchain recorded the
# axon at block 0 (which Axons reads as "never served") and the second serve_axon published again.
@pytest.mark.parametrize("block_time", [600.0])
@pytest.mark.usefixtures("subnet")
async def test_serving_and_weights_in_the_chains_first_block_count(
    make_client: Any, devchain: DevChain
) -> None:
    async with make_client("validator") as validator, make_client("miner") as miner:
        first_block = await miner.block()
        await validator.register()
        miner_uid = await miner.register()
        assert await miner.serve_axon("127.0.0.1", 8091) is True
        assert await miner.serve_axon("127.0.0.1", 8091) is False

        devchain.add_stake(validator.coldkey, validator.hotkey, NETUID, 100.0)
        await validator.set_weights({miner_uid: 1.0}, version_key=0)
        devchain.set_hyperparameter(NETUID, "weights_rate_limit", 1_000)
        with pytest.raises(WeightsTooSoon) as raised:  # LastUpdate counts the first block too
            await validator.set_weights({miner_uid: 1.0}, version_key=0)
        assert raised.value.blocks_left == 1_000
        assert await miner.block() == first_block


@pytest.mark.usefixtures("subnet")
async def test_set_weights_then_too_soon(make_client: Any, devchain: DevChain) -> None:
    async with make_client("validator") as validator, make_client("miner") as miner:
        validator_uid = await validator.register()
        miner_uid = await miner.register()
        devchain.add_stake(validator.coldkey, validator.hotkey, NETUID, 100.0)
        graph = await validator.metagraph()
        me = graph.by_hotkey(validator.hotkey)
        assert me is not None and me.uid == validator_uid and me.validator_permit and me.stake > 0

        result = await validator.set_weights({miner_uid: 0.75, validator_uid: 0.25}, version_key=3)
        assert result.path == "direct" and result.reveal_round is None
        assert result.uids == (validator_uid, miner_uid) and result.version_key == 3

        stored = devchain.metagraph(NETUID)
        assert stored is not None
        assert stored["last_update"][validator_uid] >= result.block

        devchain.set_hyperparameter(NETUID, "weights_rate_limit", 1_000)
        with pytest.raises(WeightsTooSoon) as raised:
            await validator.set_weights({miner_uid: 1.0}, version_key=3)
        assert 900 < raised.value.blocks_left <= 1_000
        assert f"{raised.value.blocks_left} blocks left" in str(raised.value)


@pytest.mark.usefixtures("subnet")
async def test_commit_reveal_uses_a_timelocked_commit(make_client: Any, devchain: DevChain) -> None:
    devchain.set_hyperparameter(NETUID, "commit_reveal_weights_enabled", True)
    async with make_client("validator") as validator, make_client("miner") as miner:
        await validator.register()
        miner_uid = await miner.register()
        devchain.add_stake(validator.coldkey, validator.hotkey, NETUID, 100.0)
        assert await validator.commit_reveal_enabled()
        result = await validator.set_weights({miner_uid: 1.0}, version_key=0)
        assert result.path == "commit_reveal"
        assert result.reveal_round is not None and result.reveal_round > 0


@pytest.mark.usefixtures("subnet")
async def test_weights_need_registration(make_client: Any) -> None:
    async with make_client("stranger") as stranger:
        with pytest.raises(NotRegistered):
            await stranger.set_weights({0: 1.0}, version_key=0)


async def test_without_the_subnet_the_answer_is_no_such_subnet(make_client: Any) -> None:
    # No `subnet` fixture: the netuid names nothing on this chain, so registering is no way out.
    async with make_client("stranger") as stranger:
        assert not await stranger.subnet_exists()
        with pytest.raises(SubnetNotFound, match=f"subnet {NETUID} does not exist"):
            await stranger.ensure_registered()


@pytest.mark.usefixtures("subnet")
async def test_with_the_subnet_an_unregistered_hotkey_is_told_to_register(make_client: Any) -> None:
    async with make_client("stranger") as stranger:
        assert await stranger.subnet_exists()
        with pytest.raises(NotRegistered, match="register it with"):
            await stranger.ensure_registered()


def _run_register(tmp_path: Path, devchain: DevChain, name: str) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "subnet.chain",
        "register",
        "--netuid",
        str(NETUID),
        "--subtensor.network",
        "dev",
        "--devchain.path",
        str(devchain.path),
        "--devchain.block_time",
        str(BLOCK_TIME),
        "--wallet.name",
        name,
        "--wallet.path",
        str(tmp_path / "wallets"),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**os.environ})


@pytest.mark.usefixtures("subnet")
def test_register_command(tmp_path: Path, devchain: DevChain) -> None:
    create_dev_wallet("newminer", "default", tmp_path / "wallets")
    coldkey = bt.Wallet("newminer", "default", path=str(tmp_path / "wallets")).coldkeypub.ss58_address
    poor = _run_register(tmp_path, devchain, "newminer")
    assert poor.returncode == 2, poor.stderr
    last = poor.stderr.strip().splitlines()[-1]
    assert f"python -m subnet.devchain fund {coldkey} 10" in last

    devchain.fund(coldkey, 10.0)
    done = _run_register(tmp_path, devchain, "newminer")
    assert done.returncode == 0, done.stderr
    assert "is uid 1 on netuid 1" in done.stdout


async def test_a_file_that_is_not_a_devchain_is_one_clear_error(tmp_path: Path, make_client: Any) -> None:
    chain = make_client("someone", tao=0)
    bogus = tmp_path / "not-a-chain.sqlite"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    chain._substrate_factory = lambda: DevChain(bogus, block_time=BLOCK_TIME)
    with pytest.raises(ChainError, match="devchain"):
        await chain.block()
