"""The real bittensor SDK (bt.Subtensor(..., substrate=DevChain)) against the devchain."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bittensor as bt
import pytest
from bittensor.intents.weights import normalize

from subnet.devchain import DevChain

U16_MAX = 65535


def _ss58(wallet: Any) -> tuple[str, str]:
    return wallet.coldkeypub.ss58_address, wallet.hotkey.ss58_address


@pytest.fixture
def subnet(chain: DevChain, make_wallet: Callable[..., Any]) -> tuple[int, Any]:
    owner = make_wallet("owner")
    netuid = chain.create_subnet(*_ss58(owner), weights_rate_limit=4, immunity_period=0)
    return netuid, owner


async def test_register_stake_serve_weights_and_incentive(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, _owner = subnet
    validator, miner_a, miner_b = (make_wallet(n) for n in ("validator", "miner_a", "miner_b"))
    async with bt.Subtensor("local", substrate=chain) as client:
        uids = {}
        for wallet in (validator, miner_a, miner_b):
            # BurnedRegister is MEV-shield-only in the SDK: this exercises the shielded path too.
            result = await client.execute(bt.BurnedRegister(netuid=netuid), wallet)
            assert result.success, result.message
            uids[wallet.name] = await client.read(
                "uid", hotkey_ss58=wallet.hotkey.ss58_address, netuid=netuid
            )
        assert sorted(uids.values()) == [1, 2, 3]  # uid 0 is the owner hotkey, as on subtensor
        balance = await client.balances.get(validator.coldkeypub.ss58_address)
        assert balance.tao == pytest.approx(999.0)  # 1 TAO burned

        staked = await client.execute(
            bt.AddStake(hotkey_ss58=validator.hotkey.ss58_address, netuid=netuid, amount_tao=100), validator
        )
        assert staked.success, staked.message
        for port, wallet in ((8091, miner_a), (8092, miner_b)):
            served = await client.execute(bt.ServeAxon(netuid=netuid, ip="127.0.0.1", port=port), wallet)
            assert served.success, served.message

        graph = await client.subnets.metagraph(netuid)
        assert graph is not None
        by_hotkey = {n.hotkey: n for n in graph.neurons}
        v = by_hotkey[validator.hotkey.ss58_address]
        a = by_hotkey[miner_a.hotkey.ss58_address]
        assert v.coldkey == validator.coldkeypub.ss58_address
        assert v.validator_permit and v.total_stake.alpha == pytest.approx(100)
        assert not a.validator_permit and a.axon == "127.0.0.1:8091"
        assert by_hotkey[miner_b.hotkey.ss58_address].axon == "127.0.0.1:8092"

        chain.skip_blocks(4)  # past the weights rate limit counted from registration
        weights = {uids["miner_a"]: 0.3, uids["miner_b"]: 0.7}
        result = await client.execute(bt.SetWeights(netuid=netuid, weights=weights), validator)
        assert result.success, result.message
        stored = await client.query(("SubtensorModule", "Weights"), [netuid, uids["validator"]])
        expected_uids, expected_values = normalize(list(weights), list(weights.values()))
        assert stored == list(zip(expected_uids, expected_values, strict=True))
        assert max(value for _, value in stored) == U16_MAX

        chain.skip_blocks(60)  # one tempo: the next read runs the epoch
        graph = await client.subnets.metagraph(netuid)
        assert graph is not None
        total = sum(expected_values)
        incentive = {n.uid: n.incentive for n in graph.neurons}
        assert incentive[uids["miner_a"]] == pytest.approx(expected_values[0] / total, abs=1e-4)
        assert incentive[uids["miner_b"]] == pytest.approx(expected_values[1] / total, abs=1e-4)
        assert incentive[uids["validator"]] == 0.0
        assert graph.neurons[uids["validator"]].dividends == pytest.approx(1.0)
        assert graph.neurons[uids["miner_b"]].emission.rao > graph.neurons[uids["miner_a"]].emission.rao > 0
        assert graph.neurons[uids["validator"]].last_update > 0


async def test_incentive_is_stake_weighted_across_validators(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, _owner = subnet
    big, small, miner_a, miner_b = (make_wallet(n) for n in ("big", "small", "miner_a", "miner_b"))
    uid = {}
    for wallet in (big, small, miner_a, miner_b):
        uid[wallet.name] = chain.register(netuid, wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
    chain.add_stake(big.coldkeypub.ss58_address, big.hotkey.ss58_address, netuid, 300)
    chain.add_stake(small.coldkeypub.ss58_address, small.hotkey.ss58_address, netuid, 100)
    chain.skip_blocks(4)
    async with bt.Subtensor("local", substrate=chain) as client:
        for wallet, target in ((big, "miner_a"), (small, "miner_b")):
            result = await client.execute(bt.SetWeights(netuid=netuid, weights={uid[target]: 1.0}), wallet)
            assert result.success, result.message
        chain.skip_blocks(60)
        neurons = (await client.subnets.metagraph(netuid)).neurons  # type: ignore[union-attr]
    assert neurons[uid["miner_a"]].incentive == pytest.approx(0.75, abs=1e-4)
    assert neurons[uid["miner_b"]].incentive == pytest.approx(0.25, abs=1e-4)
    # Dividends follow stake x the incentive a validator's weights point at: 0.75² vs 0.25², normalised.
    assert neurons[uid["big"]].dividends == pytest.approx(0.9, abs=1e-4)
    assert neurons[uid["small"]].dividends == pytest.approx(0.1, abs=1e-4)


async def test_weights_too_soon_are_refused_cleanly(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, _owner = subnet
    validator, miner = make_wallet("validator"), make_wallet("miner")
    for wallet in (validator, miner):
        chain.register(netuid, wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
    chain.add_stake(validator.coldkeypub.ss58_address, validator.hotkey.ss58_address, netuid, 10)
    # A long limit (50 s of 0.05 s blocks) so a slow, contended machine still calls "too soon".
    chain.set_hyperparameter(netuid, "weights_rate_limit", 1_000)
    chain.skip_blocks(1_000)
    async with bt.Subtensor("local", substrate=chain) as client:
        first = await client.execute(bt.SetWeights(netuid=netuid, weights={2: 1.0}), validator)
        assert first.success, first.message
        # The SDK's own preflight reads LastUpdate/WeightsSetRateLimit and refuses before signing.
        with pytest.raises(bt.ChainError) as refused:
            await client.execute(bt.SetWeights(netuid=netuid, weights={2: 1.0}), validator)
        assert refused.value.code == bt.ErrorCode.RATE_LIMITED
        # Bypassing the preflight, the chain itself refuses with subtensor's error name.
        raw = await client.submit_call(
            bt.calls.SubtensorModule.set_mechanism_weights(
                netuid=netuid, mecid=0, dests=[2], weights=[U16_MAX], version_key=0
            ),
            validator,
            signer="hotkey",
        )
        assert not raw.success
        assert raw.error is not None and raw.error.name == "SettingWeightsTooFast"
        assert raw.error.code == bt.ErrorCode.RATE_LIMITED


async def test_chain_errors_come_back_typed(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, owner = subnet
    stranger, pauper, miner = make_wallet("stranger"), make_wallet("pauper", tao=0.5), make_wallet("miner")
    chain.register(netuid, miner.hotkey.ss58_address, miner.coldkeypub.ss58_address)
    chain.skip_blocks(4)  # past the weights rate limit, so the permit check is what refuses
    async with bt.Subtensor("local", substrate=chain) as client:
        with pytest.raises(bt.ChainError) as unregistered:
            await client.execute(bt.SetWeights(netuid=netuid, weights={0: 1.0}), stranger)
        assert unregistered.value.code == bt.ErrorCode.NOT_REGISTERED

        served = await client.execute(bt.ServeAxon(netuid=netuid, ip="10.0.0.1", port=1), stranger)
        assert not served.success and served.error is not None
        assert served.error.name == "HotKeyNotRegisteredInSubNet"
        assert served.error.code == bt.ErrorCode.NOT_REGISTERED

        broke = await client.execute(bt.BurnedRegister(netuid=netuid), pauper)
        assert not broke.success and broke.error is not None
        assert broke.error.name == "NotEnoughBalanceToStake"
        assert broke.error.code == bt.ErrorCode.INSUFFICIENT_BALANCE

        again = await client.execute(bt.BurnedRegister(netuid=netuid), miner)
        assert not again.success and again.error is not None
        assert again.error.name == "HotKeyAlreadyRegisteredInSubNet"

        no_permit = await client.execute(bt.SetWeights(netuid=netuid, weights={0: 1.0}), miner)
        assert not no_permit.success and no_permit.error is not None
        assert no_permit.error.name == "NeuronNoValidatorPermit"

        not_owner = await client.execute(
            bt.SetHyperparameter(netuid=netuid, name="immunity_period", value=7), stranger
        )
        assert not not_owner.success and not_owner.error is not None
        assert not_owner.error.code == bt.ErrorCode.NOT_AUTHORIZED
        assert (
            await client.execute(bt.SetHyperparameter(netuid=netuid, name="immunity_period", value=7), owner)
        ).success
        assert await client.read("immunity_period", netuid=netuid) == 7


async def test_commit_reveal_produces_a_timelocked_commit(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, owner = subnet
    validator, miner = make_wallet("validator"), make_wallet("miner")
    for wallet in (validator, miner):
        chain.register(netuid, wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
    chain.add_stake(validator.coldkeypub.ss58_address, validator.hotkey.ss58_address, netuid, 10)
    chain.skip_blocks(4)
    async with bt.Subtensor("local", substrate=chain) as client:
        enabled = await client.execute(
            bt.SetHyperparameter(netuid=netuid, name="commit_reveal_weights_enabled", value=True), owner
        )
        assert enabled.success, enabled.message
        assert await client.subnets.commit_reveal_enabled(netuid)
        result = await client.execute(bt.SetWeights(netuid=netuid, weights={2: 1.0}), validator)
        assert result.success, result.message
        commits = await client.read("timelocked_weight_commits", netuid=netuid)
    entries = [entry for epoch in commits.values() for entry in epoch]
    assert len(entries) == 1
    assert entries[0]["hotkey"] == validator.hotkey.ss58_address
    assert entries[0]["reveal_round"] == result.data["reveal_round"] > 0
    assert entries[0]["ciphertext"].startswith("0x") and len(entries[0]["ciphertext"]) > 100
    # The commit is recorded, not applied: no plaintext row exists until a reveal (never, offline).
    assert await client.read("weights", netuid=netuid) == {}


async def test_full_subnet_replaces_the_lowest_incentive_unprotected_uid(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, _owner = subnet
    chain.set_hyperparameter(netuid, "max_allowed_uids", 3)
    validator, strong, weak, newcomer = (make_wallet(n) for n in ("validator", "strong", "weak", "newcomer"))
    uid = {}
    for wallet in (validator, strong):
        uid[wallet.name] = chain.register(netuid, wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
    chain.add_stake(validator.coldkeypub.ss58_address, validator.hotkey.ss58_address, netuid, 10)
    chain.skip_blocks(4)
    async with bt.Subtensor("local", substrate=chain) as client:
        assert (
            await client.execute(bt.SetWeights(netuid=netuid, weights={uid["strong"]: 1.0}), validator)
        ).success
        chain.skip_blocks(60)
        await client.subnets.metagraph(netuid)  # runs the epoch: strong earns incentive
        # Full (owner + 2): weak takes... nothing free, so it replaces the weakest past immunity.
        weak_uid = chain.register(netuid, weak.hotkey.ss58_address, weak.coldkeypub.ss58_address)
        assert weak_uid == uid["validator"]  # validator has 0 incentive, the owner hotkey is protected
        graph = await client.subnets.metagraph(netuid)
        assert graph is not None
        fresh = graph.neurons[weak_uid]
        assert fresh.hotkey == weak.hotkey.ss58_address
        assert fresh.incentive == 0.0 and fresh.axon is None and not fresh.validator_permit
        assert await client.read("weights", netuid=netuid) == {}  # the old occupant's row went with it
        chain.set_hyperparameter(netuid, "immunity_period", 1_000)
        result = await client.execute(bt.BurnedRegister(netuid=netuid), newcomer)
        assert not result.success and result.error is not None
        assert result.error.name == "NoNeuronIdAvailable"


async def test_validator_permits_follow_the_top_stake(
    chain: DevChain, make_wallet: Callable[..., Any], subnet: tuple[int, Any]
) -> None:
    netuid, _owner = subnet
    chain.set_hyperparameter(netuid, "max_validators", 1)
    first, second = make_wallet("first"), make_wallet("second")
    for wallet in (first, second):
        chain.register(netuid, wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
    chain.add_stake(first.coldkeypub.ss58_address, first.hotkey.ss58_address, netuid, 10)
    async with bt.Subtensor("local", substrate=chain) as client:
        permits = await client.query(("SubtensorModule", "ValidatorPermit"), [netuid])
        assert permits == [False, True, False]
        staked = await client.execute(
            bt.AddStake(hotkey_ss58=second.hotkey.ss58_address, netuid=netuid, amount_tao=20), second
        )
        assert staked.success, staked.message
        assert await client.query(("SubtensorModule", "ValidatorPermit"), [netuid]) == [False, False, True]
