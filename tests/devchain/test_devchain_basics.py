"""Devchain clock, reads, scoring rule, and the two command lines (devchain status/reset, wallets create)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import bittensor as bt
import pytest

from subnet.devchain import DevChain, dev_keypair
from subnet.devchain.__main__ import main as devchain_main
from subnet.devchain.rules import compute_scores
from subnet.wallets import create_dev_wallet
from subnet.wallets import main as wallets_main


async def test_blocks_advance_with_wall_time_and_hashes_round_trip(chain: DevChain) -> None:
    await chain.connect()
    start = await chain.block_number()
    await asyncio.sleep(0.3)  # six 0.05 s blocks
    assert await chain.block_number() >= start + 3
    head = chain.skip_blocks(100)
    assert head >= start + 100
    block_hash = await chain.block_hash(head)
    assert (await chain.get_block(block_hash=block_hash))["header"]["number"] == head  # type: ignore[index]
    with pytest.raises(bt.ChainError):
        await chain.block_hash(head + 10_000)
    assert await chain.constant("Aura", "SlotDuration") == 50
    async with bt.Subtensor("local", substrate=chain) as client:
        assert await client.block_time() == pytest.approx(0.05)
        header = await client.wait_for_block(timeout=5)
        assert header.number > head


async def test_a_fresh_chain_opens_after_its_empty_genesis_block(chain_path: Path, tmp_path: Path) -> None:
    """Storage reads block 0 as "never" (Axons, LastUpdate), so nothing may be recorded in it."""
    chain = DevChain(chain_path, block_time=600)  # one block outlasts the test
    assert chain.current_block() == 1
    create_dev_wallet("miner", "default", tmp_path / "wallets")
    miner = bt.Wallet("miner", "default", path=str(tmp_path / "wallets"))
    coldkey, hotkey = miner.coldkeypub.ss58_address, miner.hotkey.ss58_address
    chain.fund(coldkey, 10)
    netuid = chain.create_subnet(dev_keypair("//Alice").ss58_address, dev_keypair("//Bob").ss58_address)
    uid = chain.register(netuid, hotkey, coldkey)
    async with bt.Subtensor("local", substrate=chain) as client:
        served = await client.execute(bt.ServeAxon(netuid=netuid, ip="127.0.0.1", port=8091), miner)
        assert served.success, served.message
        axon = await client.query(("SubtensorModule", "Axons"), [netuid, hotkey])
        assert axon is not None and (axon["block"], axon["port"]) == (1, 8091)
        assert (await client.query(("SubtensorModule", "LastUpdate"), [netuid]))[uid] == 1
    genesis = await chain.get_block(0)
    assert genesis is not None and len(genesis["extrinsics"]) == 1  # the timestamp inherent only
    assert chain.current_block() == 1


async def test_dev_accounts_are_funded_and_unknown_items_fail_loudly(chain: DevChain) -> None:
    alice = dev_keypair("//Alice").ss58_address
    async with bt.Subtensor("local", substrate=chain) as client:
        assert (await client.balances.get(alice)).tao == pytest.approx(1_000_000)
        with pytest.raises(bt.ChainError, match="does not model"):
            await client.query(("SubtensorModule", "NoSuchItem"), [1])
        with pytest.raises(bt.ChainError, match="does not implement"):
            await client.runtime(("NoSuchApi", "nothing"), [])


async def test_two_handles_on_one_file_see_each_others_writes(chain: DevChain, chain_path: Path) -> None:
    other = DevChain(chain_path)
    alice, bob = dev_keypair("//Alice").ss58_address, dev_keypair("//Bob").ss58_address
    netuid = chain.create_subnet(alice, bob, tempo=10)
    assert other.netuids() == [netuid]
    other.skip_blocks(25)  # two epochs due on the next access, from either handle
    async with bt.Subtensor("local", substrate=chain) as client:
        assert await client.query(("SubtensorModule", "SubnetEpochIndex"), [netuid]) >= 2
        left = await client.epochs.blocks_until_next_epoch(netuid)
        assert left is not None and 0 <= left <= 10


def test_scores_are_stake_weighted_and_mask_self_weights() -> None:
    stakes = {0: 300, 1: 100, 2: 0, 3: 0}
    rows = {0: {0: 65535, 2: 65535}, 1: {3: 65535}}  # validator 0 also weights itself: masked
    incentive, dividends = compute_scores(stakes, permits={0, 1}, rows=rows, uids=[0, 1, 2, 3])
    assert incentive == pytest.approx({0: 0.0, 1: 0.0, 2: 0.75, 3: 0.25})
    assert dividends == pytest.approx({0: 0.9, 1: 0.1, 2: 0.0, 3: 0.0})
    silent, _ = compute_scores(stakes, permits=set(), rows=rows, uids=[0, 1, 2, 3])
    assert sum(silent.values()) == 0.0  # no permit holders, no incentive


def test_status_and_reset_command_lines(chain_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert devchain_main(["status", "--devchain.path", str(chain_path)]) == 2
    assert "no devchain at" in capsys.readouterr().err
    assert devchain_main(["reset", "--devchain.path", str(chain_path), "--devchain.block_time", "0.5"]) == 0
    chain = DevChain(chain_path)
    alice, bob = dev_keypair("//Alice").ss58_address, dev_keypair("//Bob").ss58_address
    netuid = chain.create_subnet(alice, bob)
    chain.add_stake(alice, bob, netuid, 12)
    capsys.readouterr()
    assert devchain_main(["status", "--devchain.path", str(chain_path), "--netuid", str(netuid)]) == 0
    out = capsys.readouterr().out
    assert "netuid 1" in out and "12.000" in out and bob[:10] in out
    assert devchain_main(["status", "--devchain.path", str(chain_path), "--netuid", "7"]) == 2
    assert devchain_main(["reset", "--devchain.path", str(chain_path)]) == 0
    assert DevChain(chain_path).netuids() == []
    assert devchain_main(["status", "--netuid", "x"]) == 2
    assert devchain_main(["reset", "--devchain.block_time", "-1"]) == 2
    (chain_path.parent / "junk.sqlite").write_text("not a database")
    assert devchain_main(["status", "--devchain.path", str(chain_path.parent / "junk.sqlite")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("devchain: ") for line in errors) and "Traceback" not in "".join(errors)


def test_wallets_create_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "wallets"
    assert wallets_main(["create", "--wallet.name", "dev", "--wallet.path", str(root)]) == 0
    created = capsys.readouterr().out
    wallet = bt.Wallet("dev", "default", path=str(root))
    assert wallet.coldkeypub.ss58_address in created and wallet.hotkey.ss58_address in created
    assert wallet.coldkey.ss58_address == wallet.coldkeypub.ss58_address  # unencrypted: no prompt
    assert wallets_main(["create", "--wallet.name", "dev", "--wallet.path", str(root)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (
        wallets_main(
            ["create", "--wallet.name", "dev", "--wallet.hotkey", "second", "--wallet.path", str(root)]
        )
        == 0
    )
    assert (
        bt.Wallet("dev", "second", path=str(root)).coldkeypub.ss58_address == wallet.coldkeypub.ss58_address
    )
    assert wallets_main(["create", "--wallet.name", "dev", "--wallet.path", str(root), "--force"]) == 0
    assert (
        bt.Wallet("dev", "default", path=str(root)).coldkeypub.ss58_address != wallet.coldkeypub.ss58_address
    )
    assert wallets_main(["create", "--wallet.name", "../escape", "--wallet.path", str(root)]) == 2
    assert wallets_main(["create"]) == 2


async def test_transfers_move_free_balance_and_refuse_overdrafts(chain: DevChain) -> None:
    alice, bob = dev_keypair("//Alice"), dev_keypair("//Bob")
    newcomer = dev_keypair("//Newcomer").ss58_address
    async with bt.Subtensor("local", substrate=chain) as client:
        sent = await client.submit_call(
            bt.calls.Balances.transfer_keep_alive(dest=newcomer, value=5 * 10**9), alice
        )
        assert sent.success, sent.message
        assert (await client.balances.get(newcomer)).tao == pytest.approx(5)
        poor = dev_keypair("//Newcomer")
        overdraft = await client.submit_call(
            bt.calls.Balances.transfer_keep_alive(dest=bob.ss58_address, value=6 * 10**9), poor
        )
        assert not overdraft.success and overdraft.error is not None
        assert overdraft.error.code == bt.ErrorCode.INSUFFICIENT_BALANCE
        assert (await client.balances.get(newcomer)).tao == pytest.approx(5)  # rolled back
        assert await chain.account_next_index(newcomer) == 1  # the failed call still used its nonce


async def test_start_call_is_recorded_once(chain: DevChain, chain_path: Path) -> None:
    alice, bob = dev_keypair("//Alice"), dev_keypair("//Bob")
    netuid = chain.create_subnet(alice.ss58_address, bob.ss58_address)
    async with bt.Subtensor("local", substrate=chain) as client:
        first = ("SubtensorModule", "FirstEmissionBlockNumber")
        assert await client.query(first, [netuid]) is None
        started = await client.execute(bt.StartCall(netuid=netuid), alice)
        assert started.success, started.message
        assert await client.query(first, [netuid]) > 0
        again = await client.execute(bt.StartCall(netuid=netuid), alice)
        assert not again.success and again.error is not None
        assert again.error.code == bt.ErrorCode.ALREADY_EXISTS
    await chain.close()
    # A file from before the column existed is upgraded in place on open.
    with sqlite3.connect(chain_path) as raw:
        raw.execute("ALTER TABLE subnets DROP COLUMN first_emission_block")
    reopened = DevChain(chain_path)
    assert await reopened.query("SubtensorModule", "FirstEmissionBlockNumber", [netuid]) is None


async def test_calls_the_devchain_does_not_implement_are_refused_before_signing(chain: DevChain) -> None:
    alice = dev_keypair("//Alice")
    unknown = bt.calls.SubtensorModule.swap_hotkey(
        hotkey=alice.ss58_address, new_hotkey=dev_keypair("//Bob").ss58_address, netuid=None
    )
    with pytest.raises(bt.ChainError, match=r"does not implement SubtensorModule\.swap_hotkey"):
        await chain.submit(unknown, alice)
    async with bt.Subtensor("local", substrate=chain) as client:
        with pytest.raises(bt.ChainError, match="does not implement"):
            await client.submit_call(unknown, alice)
    assert await chain.account_next_index(alice.ss58_address) == 0
